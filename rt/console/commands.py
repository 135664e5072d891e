"""``dockstand console`` and ``dockstand keys init`` (docs/console.md), registered through the
``dockstand.commands`` entry points. Textual is imported only when the console runs."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def cmd_keys(args) -> int:
    """``dockstand keys init DIR [--console NAME]...``: the controller's and the consoles' CURVE
    key pairs (rt.record.curve.init_keys) and the stand config lines that use them."""
    from rt.record.curve import init_keys
    try:
        out = init_keys(args.directory, args.console or ["console"])
    except (OSError, ValueError) as e:
        print(f"dockstand keys: {e}", file=sys.stderr)
        return 2
    for f in out["made"]:
        print(f"made {f}")
    for f in out["kept"]:
        print(f"kept {f} (exists)")
    print("\n# in the stand file's [telemetry] (paths may be made relative to the stand file):")
    print(f'server_secret_key = "{out["server_secret_key"]}"')
    print(f'authorized_consoles_dir = "{out["authorized_consoles_dir"]}"')
    print(f"\n# each console: --key {Path(args.directory) / 'consoles' / 'NAME.key_secret'} "
          f"--server-key {out['server_public_key']}")
    return 0


def add_parsers(sub) -> None:
    k = sub.add_parser("keys", help="CURVE keys for remote consoles (dockstand keys init DIR)")
    ks = k.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    i = ks.add_parser("init", help="make the controller's and the consoles' key pairs in DIR")
    i.add_argument("directory", metavar="DIR")
    i.add_argument("--console", action="append", metavar="NAME",
                   help="a console's name (repeatable; default: one named 'console')")
    i.set_defaults(func=cmd_keys)
