"""``dockstand`` command line (docs/cli.md).

Subcommands register themselves in :func:`build_parser`; heavy imports happen inside the
command functions so ``dockstand --version`` stays instant.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import rt

REPO_ROOT = Path(__file__).resolve().parent.parent


def _cmd_check_config(args: argparse.Namespace) -> int:
    from rt.config import ConfigError, load_any

    bad = 0
    for f in args.files:
        try:
            load_any(f, args.kind)
        except ConfigError as e:
            print(f"error: {e}", file=sys.stderr)
            bad += 1
        except ValueError as e:
            print(f"error: {f}: {e}", file=sys.stderr)
            bad += 1
        else:
            if not args.quiet:
                print(f"ok: {f}")
    return 1 if bad else 0


def _cmd_bench(args: argparse.Namespace) -> int:
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dockstand", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"dockstand {rt.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser("check-config", help="validate config files (exit 1 if any is wrong)")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("--kind", help="config kind when it cannot be told from the folder")
    c.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    c.set_defaults(func=_cmd_check_config)

    b = sub.add_parser("bench", help="run the benchmarks and print their figures")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--compact", action="store_true", help="with --json: one line")
    b.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    b.add_argument("--only", action="append", metavar="AREA",
                   help="run only this bench module (repeatable), e.g. spacecraft")
    b.set_defaults(func=_cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
