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
    if any(k.endswith("server.key_secret") for k in out["kept"]) and out["made"]:
        print(f"\n# {RELOAD_HINT}")
    print(f"\n# each console: --key {Path(args.directory) / 'consoles' / 'NAME.key_secret'} "
          f"--server-key {out['server_public_key']}")
    return 0


RELOAD_HINT = ("the running controller still admits the old set until it reloads: "
               "`systemctl reload dockstand-controller` (SIGHUP) or `dockstand ctl reload-keys`")


def cmd_keys_revoke(args) -> int:
    """``dockstand keys revoke DIR NAME``: remove the console's authorised key."""
    from rt.record.curve import revoke_key
    try:
        f, retired = revoke_key(args.directory, args.name)
    except (OSError, ValueError) as e:
        print(f"dockstand keys: {e}", file=sys.stderr)
        return 2
    print(f"removed {f}")
    for r in retired:
        print(f"retired {r} (a new 'keys init --console {args.name}' makes a new pair)")
    print(RELOAD_HINT)
    return 0


def cmd_keys_list(args) -> int:
    """``dockstand keys list DIR``: the authorised consoles (file name and public key)."""
    from rt.record.curve import read_authorized
    d = Path(args.directory) / "authorized"
    if not d.is_dir():
        print(f"dockstand keys: {d}: no such directory (dockstand keys init {args.directory})", file=sys.stderr)
        return 2
    keys, bad = read_authorized(d)
    for k, name in sorted(keys.items(), key=lambda kv: kv[1]):
        print(f"{name:<24} {k.decode('ascii')}")
    for b in bad:
        print(f"unreadable: {b}", file=sys.stderr)
    return 0


def open_source(args):
    """The console's source from its arguments: a replay, or a live controller (endpoint from
    ``--endpoint`` or the stand file; CURVE keys from ``--key``/``--server-key`` or, when the
    stand runs CURVE, ``~/.config/dockstand/console.key_secret`` and the server.key beside the
    stand's server_secret_key). Raises SystemExit(2/3) with the reason on stderr."""
    from rt.console.source import LiveSource, ReplaySource
    if args.replay:
        from rt.analysis.progress import Stages
        bar = None

        def progress(done, total):        # a bar on stderr while a long log loads (shown after 0.5 s)
            nonlocal bar
            if bar is None:
                bar = Stages("console").bar(total, f"reading {Path(args.replay).name}", unit="records", delay_s=0.5)
            bar.update(done)
        try:
            return ReplaySource(args.replay, progress=progress)
        except (OSError, ValueError, KeyError) as e:
            print(f"dockstand console: --replay {args.replay}: {e}", file=sys.stderr)
            raise SystemExit(2)
        finally:
            if bar is not None:
                bar.close()
    from rt.config import ConfigError
    from rt.config.stand import load_stand
    from rt.operator.commands import _stand_path
    endpoint, curve = args.endpoint, None
    if endpoint is None or args.stand:
        try:
            stand = load_stand(_stand_path(args, "console"))
        except ConfigError as e:
            print(f"dockstand console: {e}", file=sys.stderr)
            raise SystemExit(2)
        endpoint = endpoint or stand.telemetry["cmd_endpoint"]
        curve = stand.telemetry.get("curve")
    from rt.record.curve import keys_for_client
    try:
        keys = keys_for_client(args.key, args.server_key, curve)
    except ValueError as e:
        print(f"dockstand console: {e}", file=sys.stderr)
        raise SystemExit(2)
    try:
        return LiveSource(endpoint, name=args.name, watch=args.watch, keys=keys, timeout_s=args.timeout)
    except TimeoutError as e:
        print(f"dockstand console: no answer from {endpoint}: {e} (is `dockstand run` running there? "
              "an unauthorised CURVE key gets no answer either)", file=sys.stderr)
        raise SystemExit(3)


def cmd_console(args) -> int:
    import getpass
    import socket

    import rt
    from rt.console.app import ConsoleApp
    if args.name is None:
        args.name = f"{getpass.getuser()}@{socket.gethostname()}"
    try:
        source = open_source(args)
    except SystemExit as e:
        return int(e.code or 2)
    try:
        ConsoleApp(source, cases_dir=Path(rt.SOURCE_ROOT) / "config" / "cases").run()
    finally:
        source.close()
    return 0


def add_parsers(sub) -> None:
    c = sub.add_parser("console", help="the operator console: live stand view and commands (or --replay LOG)")
    c.add_argument("--stand", help="the stand file naming the endpoints (default: $DOCKSTAND_STAND, "
                                   "./config/stand.toml, the installed one)")
    c.add_argument("--endpoint", help="command endpoint tcp://HOST:PORT (overrides the stand's)")
    c.add_argument("--watch", action="store_true", help="watch only: never send a command that needs the lease")
    c.add_argument("--replay", metavar="LOG", help="play a run log through the same panels")
    c.add_argument("--key", help="this console's CURVE secret key (.key_secret)")
    c.add_argument("--server-key", help="the controller's CURVE public key (server.key)")
    c.add_argument("--name", default=None, help="shown as the lease holder (default user@host)")
    c.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for the controller's first answer")
    c.set_defaults(func=cmd_console)

    k = sub.add_parser("keys", help="CURVE keys for remote consoles (dockstand keys init DIR)")
    ks = k.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    i = ks.add_parser("init", help="make the controller's and the consoles' key pairs in DIR")
    i.add_argument("directory", metavar="DIR")
    i.add_argument("--console", action="append", metavar="NAME",
                   help="a console's name (repeatable; default: one named 'console')")
    i.set_defaults(func=cmd_keys)
    r = ks.add_parser("revoke", help="remove a console from the authorised ones (then reload the keys)")
    r.add_argument("directory", metavar="DIR")
    r.add_argument("name", metavar="NAME", help="the console's name (its authorized/NAME.key)")
    r.set_defaults(func=cmd_keys_revoke)
    ls = ks.add_parser("list", help="the authorised consoles in DIR and their public keys")
    ls.add_argument("directory", metavar="DIR")
    ls.set_defaults(func=cmd_keys_list)
