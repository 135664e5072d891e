"""``dockstand`` command line (docs/cli.md): dispatch only.

``check-config`` is built in; every other subcommand is registered by the package that owns
it through the ``dockstand.commands`` entry-point group (pyproject.toml): each entry is a
function ``add_parsers(subparsers)`` that adds its parsers and imports its heavy parts only
when a command runs, so ``dockstand --version`` stays instant. This registry is the one way
``rt`` reaches ``sim_stand`` and ``bench`` (docs/architecture.md, "Layers").
"""
from __future__ import annotations

import argparse
import sys
from importlib.metadata import entry_points

import rt

COMMANDS_GROUP = "dockstand.commands"


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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dockstand", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"dockstand {rt.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

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
