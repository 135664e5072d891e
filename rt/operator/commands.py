"""``dockstand run`` (the controller in the foreground) and ``dockstand ctl`` (a small command
client), docs/cli.md.

``run``: loads the stand, opens the drivers and the telemetry/command endpoints, applies the
real-time options (each refusal reported, none fatal; gc is paused by the controller while
RUNNING only), compiles every kernel, tells systemd
READY=1 (when started by it) and runs the loop until SIGTERM/SIGINT, which trigger a safe stop
(the platform decelerates within its limits and is frozen) before the log closes. Optionally
``--case`` loads a case at start-up (the operator still arms and starts). The watchdog is fed
from the loop thread every ~half WatchdogSec.

``run`` refuses to ARM when its pre-flight timing check fails, unless the stand says
``[realtime] allow_failed_preflight = true`` (the refusal names the check's figures).

``ctl``: ``status``, ``load CASE``, ``arm``, ``start``, ``stop``, ``abort``, ``tare``, ``reset``,
``reset-fault``, ``retract``, ``park``; it acquires the control lease for the commands that need
it and prints the reply as JSON. ``start`` and ``retract`` then hold the lease (heartbeats)
while the motion lasts and print how it ends; Ctrl-C aborts (``--detach``: return at once).
"""
from __future__ import annotations

import argparse

import json
import logging
import signal
import sys
import time
from pathlib import Path

log = logging.getLogger("dockstand.run")


def cmd_run(args) -> int:
    from rt import realtime as RT
    from rt.operator import sdnotify
    from rt.config import ConfigError
    from rt.config.stand import load_stand
    from rt.control.controller import Controller
    from rt.control.supervisor import State

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        stand = load_stand(_stand_path(args, "run"))
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pre = None
    if not args.no_preflight:   # a second of the stand's wait, before the loop exists (docs/deploy.md)
        from rt.operator.preflight import check_timing
        pre = check_timing(stand, 1.0, apply_realtime=True)
        print(f"dockstand run: pre-flight {pre.line()}", file=sys.stderr, flush=True)
        for a in pre.advice:
            print(f"dockstand run:   advice: {a}", file=sys.stderr)
        if pre.verdict == "fails":
            print("dockstand run: ARM will be refused while this stands: the loop cannot hold its rate here"
                  + (" ([realtime] allow_failed_preflight = true: armed anyway)"
                     if stand.realtime.allow_failed_preflight else
                     " (fix it, or set [realtime] allow_failed_preflight = true)"), file=sys.stderr, flush=True)
    from rt.analysis.audit import run_audit
    ctl = Controller(stand, compensate=not args.no_compensation, auditor=run_audit)
    if pre is not None and pre.verdict == "fails":
        ctl.preflight_failure = pre.line()
    notifier = sdnotify.Notifier()
    try:
        ctl.open()
    except Exception as e:  # noqa: BLE001 - say why and stop
        print(f"error: cannot open the drivers or endpoints: {e}", file=sys.stderr)
        ctl.close()
        return 2
    for r in RT.apply_process(stand.realtime):
        log.info("realtime: %s", r)
    for r in RT.run_warm_up([ctl.warm_up]):
        log.info("warm-up: %s", r)
    if args.case:
        r = ctl.command("load_case", case=args.case)
        if not r.ok:
            print(f"error: {r.reason}", file=sys.stderr)
    stop = {"n": 0}

    def on_signal(signum, frame):
        stop["n"] += 1
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    curve = ctl.telemetry.curve if ctl.telemetry is not None else None

    def on_hangup(signum, frame):    # systemctl reload: the CURVE keys (an event set; the reader thread reads)
        if curve is not None:
            curve.request_reload()
    signal.signal(signal.SIGHUP, on_hangup)
    wd = sdnotify.watchdog_interval_s()
    wd_every = max(1, int((wd / 2 if wd else 1.0) * stand.rate_hz))
    notifier.ready()
    notifier.status(f"IDLE; telemetry {stand.telemetry['pub_endpoint']}, commands {stand.telemetry['cmd_endpoint']}")
    print(f"dockstand run: {stand.file} at {stand.rate_hz:g} Hz; commands on {stand.telemetry['cmd_endpoint']}, "
          f"telemetry on {stand.telemetry['pub_endpoint']}", flush=True)
    loop = ctl.make_loop()
    state = {"stopping": False}
    applied = {"thread": False}

    def each_cycle(c) -> bool:
        if not applied["thread"]:
            applied["thread"] = True
            for r in RT.apply_thread(stand.realtime):
                log.info("realtime: %s", r)
        if c.loop.cycles % wd_every == 0:
            notifier.watchdog()
        if stop["n"] and not state["stopping"]:
            state["stopping"] = True
            notifier.stopping()
            c.command("abort", client="signal", reason="SIGTERM/SIGINT")
        if state["stopping"]:
            return c.phase.name in ("FROZEN", "IDLE") or stop["n"] > 1
        return False

    try:
        # gc: the controller collects, freezes and disables it from ARM to the end of the run
        # ([realtime] gc_freeze) and re-enables it then; IDLE/CONFIGURED collect normally
        ctl.run_until(each_cycle, None)
    finally:
        s = ctl.summary()
        ctl.close()
        notifier.close()
    print(json.dumps(s), flush=True)
    return 0 if ctl.supervisor.state is not State.SAFE else 1


LEASED = {"load", "arm", "start", "stop", "tare", "reset", "reset-fault", "retract", "park", "undock"}
#: ctl's action -> the controller's command
_COMMAND = {"load": "load_case", "reload-keys": "reload_keys", "reset-fault": "reset_fault"}


def _stand_path(args, cmd: str) -> Path:
    """``--stand``, or the default stand file named on stderr (rt.config.stand.resolve_stand_path)."""
    from rt.config.stand import resolve_stand_path
    return resolve_stand_path(args.stand, cmd)


def cmd_check_host(args) -> int:
    """``dockstand check-host``: the pre-flight timing check (rt.operator.preflight)."""
    from rt.config import ConfigError
    from rt.config.stand import load_stand
    from rt.operator.preflight import check_timing
    try:
        stand = load_stand(_stand_path(args, "check-host"))
    except ConfigError as e:
        print(f"dockstand check-host: {e}", file=sys.stderr)
        return 2
    r = check_timing(stand, args.seconds, apply_realtime=not args.no_realtime)
    if args.json:
        print(json.dumps(vars(r)))
    else:
        print(r.line())
        for line in r.realtime:
            print(f"  realtime: {line}")
        if r.rt_throttling:
            print(f"  RT throttling: {r.rt_throttling}")
        for a in r.advice:
            print(f"  advice: {a}")
    return 1 if r.verdict == "fails" else 0


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not (v > 0.0 and v < 1e6):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return v


def cmd_ctl(args) -> int:
    """One command to a running controller. It first asks the controller who it is
    (``describe``: stand, host, pid) and says so on stderr; a leased command to a controller
    of another stand than the one named with ``--stand`` is refused here, before the lease."""
    import zmq

    from rt.config import ConfigError
    from rt.config.stand import load_stand
    from rt.record.telemetry import CommandClient

    from rt.record.curve import keys_for_client

    endpoint = args.endpoint
    named = None
    curve = None
    if endpoint is None or args.stand:
        try:
            stand = load_stand(_stand_path(args, "ctl"))
        except ConfigError as e:
            print(f"dockstand ctl: {e}", file=sys.stderr)
            return 2
        named = stand.name if args.stand else None
        endpoint = endpoint or stand.telemetry["cmd_endpoint"]
        curve = stand.telemetry.get("curve")
    if args.action == "load" and not args.case:
        print("dockstand ctl: load needs CASE (a case file)", file=sys.stderr)
        return 2
    try:
        keys = keys_for_client(args.key, args.server_key, curve)
    except ValueError as e:
        print(f"dockstand ctl: {e}", file=sys.stderr)
        return 2
    try:
        cli = CommandClient(endpoint, name=args.name, timeout_s=args.timeout, keys=keys)
    except zmq.ZMQError as e:
        print(f"dockstand ctl: --endpoint {endpoint}: not a usable ZeroMQ endpoint ({e.strerror}); "
              "expected e.g. tcp://127.0.0.1:5556 or ipc:///run/dockstand/cmd", file=sys.stderr)
        return 2

    def ask(cmd: str, **kw):
        try:
            return cli.request(cmd, **kw)
        except TimeoutError as e:
            print(f"dockstand ctl: no answer from {endpoint}: {e} (is `dockstand run` running there? "
                  "with CURVE, an unauthorised or revoked key gets no answer either)", file=sys.stderr)
            return None

    leased = False
    try:
        d = ask("describe")
        if d is None:
            return 3
        who = d.get("identity") or {}
        run = f", run {who['run_id']}" if who.get("run_id") else ", no run yet"
        print(f"dockstand ctl: controller of stand '{who.get('stand', '?')}' ({who.get('stand_file', '?')}) on "
              f"{who.get('host', '?')}, pid {who.get('pid', '?')}{run}, at {endpoint}", file=sys.stderr)
        if args.action in LEASED and named is not None and who.get("stand") != named:
            print(f"dockstand ctl: refusing {args.action}: the controller at {endpoint} runs stand "
                  f"'{who.get('stand')}', not '{named}' named by --stand", file=sys.stderr)
            return 2
        if args.action in LEASED:
            r = ask("acquire", **({"takeover": True} if args.takeover else {}))
            if r is None:
                return 3
            if not r.get("ok"):
                print(json.dumps(r), flush=True)
                if r.get("takeover_needed"):
                    print("dockstand ctl: add --takeover to take the lapsed lease over", file=sys.stderr)
                return 1
            leased = True
        cmd = _COMMAND.get(args.action, args.action)
        kw = {"case": str(Path(args.case).resolve())} if args.action == "load" else {}
        r = ask(cmd, **kw)
        if r is None:
            return 3
        print(json.dumps(r, default=str), flush=True)
        if not r.get("ok"):
            return 1
        if args.action in ("start", "retract", "undock") and not args.detach:
            return _attend(cli, args.action, ask)
        return 0
    finally:
        if leased:  # a one-shot client hands the lease back (a console holds it and heartbeats)
            try:
                cli.request("release")
            except TimeoutError:
                pass
        cli.close()


def _attend(cli, action: str, ask) -> int:
    """After ``start`` (or ``retract``): hold the control lease while the motion lasts, with a
    heartbeat a quarter of the lease timeout apart, and say how it ends (a line per state or
    phase change on stderr; the end as JSON on stdout). Ctrl-C aborts. Without this a free lease
    during a run could be taken by any local process that then goes silent (HEARTBEAT_LOST)."""
    import signal as _signal
    d = ask("describe") or {}
    beat = max(0.1, float(d.get("lease_timeout_s", 2.0)) / 4.0)
    stop = {"n": 0}
    old = _signal.signal(_signal.SIGINT, lambda s, f: stop.__setitem__("n", stop["n"] + 1))
    seen = None
    try:
        print(f"dockstand ctl: holding the control lease while the {action} lasts (Ctrl-C aborts it; "
              "--detach does not wait)", file=sys.stderr, flush=True)
        while True:
            if stop["n"]:
                r = ask("abort", reason=f"ctl {action} interrupted (Ctrl-C)")
                print(json.dumps(r, default=str), flush=True)
                return 1
            h = ask("heartbeat")
            if h is None:
                return 3
            st = ask("status")
            if st is None:
                return 3
            if not st.get("ok", True) and "rate limited" in str(st.get("reason")):
                time.sleep(beat)
                continue
            now = (st.get("state"), st.get("phase"))
            if now != seen:
                print(f"dockstand ctl: {now[0]} / {now[1]}", file=sys.stderr, flush=True)
                seen = now
            moving = (now[0] in ("ARMED", "RUNNING") if action == "start" else now[1] == "RETRACT") or \
                now[1] in ("STOP", "ENGAGE", "RUNUP", "DYNAMICS")
            if not moving:
                out = {k: st.get(k) for k in ("state", "phase", "finish_reason", "trip_reason", "trip", "log")}
                print(json.dumps(out, default=str), flush=True)
                return 0 if st.get("state") not in ("SAFE", "ABORTED") else 1
            time.sleep(beat)
    finally:
        _signal.signal(_signal.SIGINT, old)


def add_parsers(sub) -> None:
    r = sub.add_parser("run", help="run the controller in the foreground (SIGTERM/SIGINT: safe stop)")
    r.add_argument("--stand", help="stand file (default: $DOCKSTAND_STAND, ./config/stand.toml, the installed one)")
    r.add_argument("--case", help="load this case at start-up (the operator still arms and starts)")
    r.add_argument("--no-compensation", action="store_true", help="command the current pose (no prediction)")
    r.add_argument("--no-preflight", action="store_true", help="skip the one-second timing check at start")
    r.set_defaults(func=cmd_run)

    h = sub.add_parser("check-host", help="is this computer fast enough for the stand's rate? (timing check)")
    h.add_argument("--stand", help="default: $DOCKSTAND_STAND, ./config/stand.toml, the installed one")
    h.add_argument("--seconds", type=_positive, default=3.0, help="how long to measure (default 3)")
    h.add_argument("--json", action="store_true")
    h.add_argument("--no-realtime", action="store_true",
                   help="measure without the stand's [realtime] settings (default: applied as the loop would)")
    h.set_defaults(func=cmd_check_host)

    i = sub.add_parser("install-units", help="write the systemd units with this installation's real paths")
    i.add_argument("--prefix", default="/etc/systemd/system", help="where the units go (default /etc/systemd/system)")
    i.add_argument("--stand", help="the stand file the units run (default: $DOCKSTAND_STAND, ./config/stand.toml, "
                                   "the installed one)")
    i.add_argument("--user", help="the service user and group (default: dockstand)")
    i.set_defaults(func=lambda a: __import__("rt.operator.install", fromlist=["x"]).cmd_install_units(a))

    c = sub.add_parser("ctl", help="send one command to a running controller")
    c.add_argument("action", choices=["status", "load", "arm", "start", "stop", "abort", "tare", "reset",
                                      "reset-fault", "retract", "park", "undock", "reload-keys"],
                   help="reset-fault: clear the platform's FAULT/E_STOPPED; retract: move the active unit away from "
                        "the passive one along the docking axis (after a trip in contact); park: the platform to "
                        "its park pose, servos off; undock: open the mechanism's latches over its Modbus link, "
                        "then retract (docs/controller.md, 'Ways back')")
    c.add_argument("case", nargs="?", help="with load: the case file")
    c.add_argument("--stand", help="where the command endpoint is configured (default: $DOCKSTAND_STAND, "
                                   "./config/stand.toml, the installed one)")
    c.add_argument("--endpoint", help="command endpoint (overrides the stand's)")
    c.add_argument("--name", default="ctl", help="client name shown as the lease holder")
    c.add_argument("--takeover", action="store_true",
                   help="take over a lease whose holder went silent (it lapsed); never a live holder's")
    c.add_argument("--timeout", type=_positive, default=2.0, help="seconds to wait for the answer (> 0)")
    c.add_argument("--detach", action="store_true",
                   help="start/retract: return at once instead of holding the lease while it lasts")
    c.add_argument("--key", help="CURVE: this client's secret key (default with a CURVE stand: "
                                 "~/.config/dockstand/console.key_secret)")
    c.add_argument("--server-key", help="CURVE: the controller's public key (default: server.key beside the "
                                        "stand's server_secret_key)")
    c.set_defaults(func=cmd_ctl)

