"""``dockstand bench`` (docs/bench.md): registered with the CLI through the
``dockstand.commands`` entry points; the bench modules are imported only when it runs."""
from __future__ import annotations

import argparse
import json
import sys


def cmd_bench(args: argparse.Namespace) -> int:
    from bench.runner import run_all

    figures = run_all(quick=args.quick, only=args.only, progress=None if args.json else sys.stderr)
    if args.json:
        print(json.dumps(figures, indent=None if args.compact else 2, sort_keys=True))
    else:
        width = max((len(k) for k in figures), default=0)
        for k in sorted(figures):
            v = figures[k]
            print(f"{k:<{width}}  {v:.6g}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    return 0


def add_parsers(sub) -> None:
    b = sub.add_parser("bench", help="run the benchmarks and print their figures")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--compact", action="store_true", help="with --json: one line")
    b.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    b.add_argument("--only", action="append", metavar="AREA",
                   help="run only this bench module (repeatable), e.g. spacecraft")
    b.set_defaults(func=cmd_bench)
