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

    from rt.operator import add_parsers as _operator
    _operator(sub)
    _sim_stand_parsers(sub)
    c = sub.add_parser("compare", help="fidelity of a HIL log against an all-digital log")
    c.add_argument("hil_log")
    c.add_argument("digital_log")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--as-logged", action="store_true",
                   help="compare the digital wrench as logged, not seen through the HIL run's sensing filter")
    c.set_defaults(func=_cmd_compare)
    return p


def _sim_stand_parsers(sub) -> None:
    """emulate / simulate / demo live in sim_stand and are imported only when run."""
    def lazy(name):
        def f(args):
            import sim_stand.cli as S
            return getattr(S, name)(args)
        return f

    e = sub.add_parser("emulate", help="run the stand emulator on the stand config's endpoints")
    e.add_argument("--stand", default="config/stand.toml")
    e.add_argument("--emulator", default=None, help="emulator config (default config/emulator/default.toml)")
    e.add_argument("--case", help="a case whose contact model the emulated hardware should carry")
    e.add_argument("--lockstep", action="store_true", help="advance one period per platform frame")
    e.add_argument("--fault", action="append", metavar="NAME@T",
                   help="inject a fault at emulator time T s: sensor_dropout, garbage, sensor_frozen, "
                        "platform_fault, platform_lag, link_loss (repeatable)")
    e.add_argument("--sensor-endpoint", help="override the sensor link's zmq endpoint")
    e.add_argument("--platform-endpoint", help="override the platform link's zmq endpoint")
    e.add_argument("--duration", type=float, help="stop after this much emulated time (s)")
    e.add_argument("--summary", help="write a JSON summary here on exit")
    e.add_argument("--seed", type=int, default=1)
    e.add_argument("--world", choices=["stand", "free"], default="stand",
                   help="stand: mechanism and contacts (default); free: the platform alone, nothing in contact")
    e.set_defaults(func=lazy("cmd_emulate"))

    s = sub.add_parser("simulate", help="all-digital reference run of a case (same kernels, same log format)")
    s.add_argument("--case", default=None, help="default config/cases/nominal.toml")
    s.add_argument("--stand", default=None, help="default config/stand.toml")
    s.add_argument("--emulator", default=None)
    s.add_argument("--log", help="run-log path (default runs/<time>-<case>-digital.dslog)")
    s.add_argument("--stand-conditions", action="store_true",
                   help="as on the stand: the mechanism in 1 g, its weight and inertia carried by the platform "
                        "(the vehicles feel the contact wrench only); default: orbit, 0 g, mechanism inertia coupled")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=lazy("cmd_simulate"))

    d = sub.add_parser("demo", help="closed-loop docking: emulator (lockstep) + controller, with a summary")
    d.add_argument("--case", default=None, help="default config/cases/nominal.toml")
    d.add_argument("--stand", default=None, help="default config/stand.toml")
    d.add_argument("--emulator", default=None)
    d.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    d.add_argument("--no-compensation", action="store_true")
    d.add_argument("--no-filter", action="store_true", help="sensing without the low-pass (and its delay)")
    d.add_argument("--fault", action="append", metavar="NAME@T", help="inject an emulator fault (see emulate)")
    d.add_argument("--log-dir", default=None, help="where the run logs go (default: the stand's runlog dir)")
    d.set_defaults(func=lazy("cmd_demo"))


def _cmd_compare(args: argparse.Namespace) -> int:
    from rt.compare import compare_logs, format_report

    rep = compare_logs(args.hil_log, args.digital_log, observe=not args.as_logged)
    print(json.dumps(rep) if args.json else format_report(rep))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
