"""``dockstand`` command line (docs/cli.md): dispatch only.

``check-config`` is built in; every other subcommand is registered by the package that owns
it through the ``dockstand.commands`` entry-point group (pyproject.toml): each entry is a
function ``add_parsers(subparsers)`` that adds its parsers and imports its heavy parts only
when a command runs, so ``dockstand --version`` stays instant. This registry is the one way
``rt`` reaches ``sim_stand`` and ``bench`` (docs/architecture.md, "Layers").

``dockstand --help`` lists the commands by who uses them (:data:`GROUPS`: the operator at the
stand, the analyst after a run, the integrator who configures and checks the stand); a command
registered but in no group is listed last, so none is ever hidden.
"""
from __future__ import annotations

import argparse
import sys
from importlib.metadata import entry_points

import rt

COMMANDS_GROUP = "dockstand.commands"
DESCRIPTION = ("dockstand: the real-time controller of a hardware-in-the-loop docking test stand, its emulator, "
               "and the tools to analyse its runs (docs/cli.md). 'dockstand COMMAND --help' for a command's options.")
#: the commands by who uses them, in the order they meet them
GROUPS = (
    ("for the operator, at the stand", ("console", "run", "ctl", "check-host", "install-units", "keys")),
    ("for the analyst, after a run", ("report", "compare", "export", "recompute", "campaign", "reconstruct")),
    ("for the integrator: configuration, emulator, models, performance",
     ("check-config", "demo", "emulate", "simulate", "calibrate-loop", "bench")),
)


def _cmd_check_config(args: argparse.Namespace) -> int:
    """Every error of each file: all its unknown keys (each with a "did you mean" when one is
    close) and the first wrong value, each naming file, key and reason."""
    from rt.config import ConfigError, load_any
    from rt.config._schema import COLLECT

    from pathlib import Path
    files = []
    for f in args.files:      # a directory: every .toml below it
        files += sorted(str(p) for p in Path(f).rglob("*.toml")) if Path(f).is_dir() else [f]
    bad = 0
    for f in files:
        errors: list = []
        token = COLLECT.set(errors)
        try:
            load_any(f, args.kind)
        except ConfigError as e:
            errors.append(e)
        except ValueError as e:
            errors.append(f"{f}: {e}")
        finally:
            COLLECT.reset(token)
        for e in errors:
            print(f"error: {e}", file=sys.stderr)
        if errors:
            bad += 1
        elif not args.quiet:
            print(f"ok: {f}")
    return 1 if bad else 0


def grouped_commands(sub) -> str:
    """The subcommands' one-line helps under the headings of :data:`GROUPS` (a registered
    command in no group under "other"), for ``dockstand --help``."""
    import textwrap
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    width = 2 + max(len(n) for n in helps) + 2
    listed: set[str] = set()
    out = []
    groups = [(h, [n for n in names if n in helps]) for h, names in GROUPS]
    rest = [n for n in helps if not any(n in names for _, names in GROUPS)]
    if rest:
        groups.append(("other", rest))
    for heading, names in groups:
        if not names:
            continue
        out.append(f"{heading}:")
        for n in names:
            listed.add(n)
            lines = textwrap.wrap(helps[n], 100 - width) or [""]
            out.append(f"  {n:<{width - 2}}{lines[0]}")
            out += [" " * width + ln for ln in lines[1:]]
        out.append("")
    return "\n".join(out).rstrip()


def build_parser() -> argparse.ArgumentParser:
    import textwrap
    p = argparse.ArgumentParser(prog="dockstand", usage="dockstand [-h] [--version] COMMAND ...",
                                description=textwrap.fill(DESCRIPTION, 100),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"dockstand {rt.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS, prog="dockstand")

    c = sub.add_parser("check-config", help="validate config files (exit 1 if any is wrong)")
    c.add_argument("files", nargs="+", metavar="FILE", help="config files, or directories (every .toml below)")
    c.add_argument("--kind", help="config kind when it cannot be told from the folder")
    c.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    c.set_defaults(func=_cmd_check_config)

    registered = sorted(entry_points(group=COMMANDS_GROUP), key=lambda ep: ep.name)
    if not registered:
        p.epilog = ("no other subcommand is registered: install the package (pip install -e .) so that "
                    f"the '{COMMANDS_GROUP}' entry points exist")
    for ep in registered:
        ep.load()(sub)
    p.epilog = grouped_commands(sub) + ("\n\n" + p.epilog if p.epilog else "")
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
