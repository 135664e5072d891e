"""``dockstand compare`` (docs/cli.md, docs/validation.md): registered with the CLI through
the ``dockstand.commands`` entry points; the analysis is imported only when it runs."""
from __future__ import annotations

import argparse
import json


def cmd_compare(args: argparse.Namespace) -> int:
    from rt.analysis.compare import compare_logs, format_report

    rep = compare_logs(args.hil_log, args.digital_log, observe=not args.as_logged)
    print(json.dumps(rep) if args.json else format_report(rep))
    return 0


def add_parsers(sub) -> None:
    c = sub.add_parser("compare", help="fidelity of a HIL log against an all-digital log")
    c.add_argument("hil_log")
    c.add_argument("digital_log")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--as-logged", action="store_true",
                   help="compare the digital wrench as logged, not seen through the HIL run's sensing filter")
    c.set_defaults(func=cmd_compare)
