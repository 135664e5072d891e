"""``dockstand emulate``, ``simulate`` and ``demo`` (docs/cli.md). Registered by sim_stand/commands.py.

``demo`` is the product's main job on any machine: it starts the emulator as its own process
(lockstep, on private ipc endpoints in a temporary directory), runs the controller in this
process on a lockstep clock through the whole operator sequence (load_case, arm — engage, tare,
move to the initial pose — start, run to the end criteria, safe stop, freeze), stops the
emulator by PID, and prints the summary. Measured quantities (peak force and moment, platform
excursion, cycles, overruns) come from the controller; what only the docking hardware knows
(capture, penetration, energy absorbed by the mechanism) comes from the emulated hardware's
own summary.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_STAND = REPO / "config" / "stand.toml"
DEFAULT_CASE = REPO / "config" / "cases" / "nominal.toml"
#: How long (wall-clock s) a lockstep controller waits for the emulator's answer to a frame
#: before it counts the answer missing (then 10 ms per cycle while the emulator stays silent).
#: The emulator always answers, unless a fault is injected, so this only has to outlast a
#: stall: a process descheduled on a loaded machine, a Dask worker's thread waiting for the GIL.
#: At 0.5 s a heavily loaded machine (load 5 on 2 cores) missed two answers of a probe-cone run
#: that an unloaded one received -- the same case gave other rows; lockstep runs must not
#: depend on the machine. A silent emulator (an injected link loss) costs this once.
LOCKSTEP_TIMEOUT_S = 2.0
DEFAULT_EMULATOR = REPO / "config" / "emulator" / "default.toml"


def _endpoint_override(link: dict, endpoint: str | None) -> dict:
    if endpoint is None:
        return link
    if endpoint.startswith("udp://"):      # a robot's link: this computer listens on HOST:PORT
        host, _, port = endpoint[len("udp://"):].rpartition(":")
        return {"transport": "udp", "local_host": host, "local_port": int(port), "framing": "raw"}
    return {**link, "transport": "zmq", "endpoint": endpoint, "role": link.get("role", "connect"),
            "pattern": link.get("pattern", "pair")}


def default_emulator(stand=None) -> Path:
    """The emulator config a stand gets when none is named: an industrial robot's twin for a
    robot stand (config/emulator/<protocol>.toml: the robot's delay and lag), else the
    hexapod's (config/emulator/default.toml)."""
    if stand is not None:
        p = REPO / "config" / "emulator" / f"{stand.platform_protocol}.toml"
        if stand.platform_protocol != "dockstand" and p.is_file():
            return p
    return DEFAULT_EMULATOR


def free_udp_port(host: str = "127.0.0.1") -> int:
    """A UDP port nobody uses now on ``host`` (the demo's private robot link)."""
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def load_world(stand, emulator_path=None, case_path=None, kind: str = "stand"):
    """The emulated world for a stand (and optionally a case that selects its contact model);
    ``kind = "free"``: the platform alone, no docking hardware in contact (sim_stand/free_world.py)."""
    if kind == "free":
        from sim_stand.free_world import FreeSpaceWorld
        return FreeSpaceWorld(stand), None
    from sim_stand.world import StandWorld
    from sim_stand.world_config import load_emulator
    emu = load_emulator(emulator_path or default_emulator(stand))
    if case_path:
        from rt.config.case import load_case
        emu = emu.for_case(load_case(case_path))
    return StandWorld(stand, emu), emu


def _emulator_config(emulator_path=None, case_path=None, stand=None):
    from sim_stand.world_config import load_emulator
    emu = load_emulator(emulator_path or default_emulator(stand))
    if case_path:
        from rt.config.case import load_case
        emu = emu.for_case(load_case(case_path))
    return emu


def with_mechanism_port(stand, port: int | None):
    """The stand with its mechanism's control unit ([mechanism_io]) on loopback ``port`` (the
    demo's and the tests' private port); unchanged without one or without [mechanism_io]."""
    from dataclasses import replace
    if port is None or stand.mechanism_io is None:
        return stand
    return replace(stand, mechanism_io=replace(stand.mechanism_io, host="127.0.0.1", port=int(port)))


def free_tcp_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cmd_emulate(args) -> int:
    from rt.config import ConfigError
    from rt.config.stand import load_stand, resolve_stand_path
    from sim_stand.emulator import Emulator, Faults, install_signal_stop

    try:
        stand = load_stand(resolve_stand_path(args.stand, "emulate"))
        from dataclasses import replace
        stand = replace(stand, sensor_link=_endpoint_override(stand.sensor_link, args.sensor_endpoint),
                        platform_link=_endpoint_override(stand.platform_link, args.platform_endpoint))
        stand = with_mechanism_port(stand, getattr(args, "mechanism_port", None))
        faults = Faults.parse(args.fault)
        world, emu = load_world(stand, args.emulator, args.case, args.world)
    except (ConfigError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    stop = install_signal_stop()
    # --seed overrides the emulator config's [sensor] seed (which was parsed and then ignored)
    seed = args.seed if args.seed is not None else (emu.sensor_seed if emu is not None else 1)
    from sim_stand.robot_twin import RobotTwin, is_robot
    if is_robot(stand):          # an industrial robot as the platform: the robot is the clock master
        em = RobotTwin(stand, world, emu=emu, faults=faults, seed=seed)
    else:
        em = Emulator(stand, world, emu=emu, faults=faults, seed=seed)
    notes = list(em.notes)
    if args.sched_fifo:
        # the emulator stands for devices with CPUs of their own: on a shared, busy computer it
        # may ask not to be starved by other processes (a refusal is reported, not fatal)
        from rt import realtime as RT
        notes.append(f"realtime: {RT.set_fifo(args.sched_fifo)}")
        notes.append(f"realtime: {RT.set_fifo_io_threads(args.sched_fifo)}")
    info = {"ready": True, "pid": os.getpid(), "mode": "lockstep" if args.lockstep else "realtime",
            "sensor": stand.sensor_link.get("endpoint") or stand.sensor_link.get("port"),
            "platform": stand.platform_link.get("endpoint") or stand.platform_link.get("port"),
            "notes": notes, "faults": faults.at}
    print(json.dumps(info), flush=True)
    try:
        if args.lockstep:
            em.run_lockstep(stop=lambda: stop[0] or (args.duration is not None and em.t >= args.duration))
        else:
            em.run_realtime(stop=lambda: stop[0], duration_s=args.duration)
    finally:
        summary = em.summary()
        em.close()
        if args.summary:
            Path(args.summary).write_text(json.dumps(summary, default=float))
    print(json.dumps({"done": True, **summary}, default=float), flush=True)
    return 0


def cmd_simulate(args) -> int:
    from rt.config import ConfigError
    from rt.config.case import load_case
    from rt.config.stand import load_stand, resolve_stand_path
    from sim_stand import digital
    from sim_stand.world_config import load_emulator

    try:
        case = load_case(args.case or DEFAULT_CASE)
        stand = load_stand(resolve_stand_path(args.stand, "simulate"))
        emu = load_emulator(args.emulator or DEFAULT_EMULATOR).for_case(case)
    except (ConfigError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    kw = {}
    if getattr(args, "stand_conditions", False):
        kw.update(digital.stand_conditions(stand, emu))
    if getattr(args, "mechanism_from", None):
        from sim_stand.prehistory import PrehistoryError, mechanism_state_from_run
        if not kw:
            print("error: --mechanism-from compares with a HIL run: it needs --stand-conditions", file=sys.stderr)
            return 2
        try:
            kw["mechanism_state"] = mechanism_state_from_run(args.mechanism_from, stand, emu, case=case)
        except (OSError, PrehistoryError) as e:
            print(f"error: --mechanism-from: {e}", file=sys.stderr)
            return 2
    if getattr(args, "integrator", None):
        kw["integrator"] = args.integrator
    log = args.log
    if log is None:
        d = stand.runlog_dir
        d.mkdir(parents=True, exist_ok=True)
        log = d / f"{time.strftime('%Y%m%d-%H%M%S')}-{case.name}-digital.dslog"
    if getattr(args, "mechanism_from", None):
        kw["header"] = {"mechanism_from": str(Path(args.mechanism_from).resolve())}
    try:
        res = digital.simulate(case, stand=stand, emu=emu, log_path=log, log_rate_hz=args.log_rate, **kw)
    except ValueError as e:          # e.g. a log rate that is not a whole number of physics steps
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = _result_dict(res)
    print(json.dumps(out, default=float) if args.json else _format(out))
    return 0


def _result_dict(res) -> dict:
    if isinstance(res, dict):
        return dict(res)
    if hasattr(res, "as_dict"):
        return res.as_dict()
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(res).items()}


def _format(d: dict) -> str:
    w = max(len(k) for k in d)
    lines = []
    for k, v in d.items():
        if isinstance(v, float):
            v = f"{v:.6g}"
        lines.append(f"{k:<{w}}  {v}")
    return "\n".join(lines)


def servo_lag_s(emu, rate_hz: float = 1000.0) -> float:
    """The emulated platform's low-frequency servo lag, 2 zeta / wn, plus half a cycle of the
    loop at ``rate_hz`` when it interpolates its set-points (the ramp from the last one)."""
    pp = emu.platform
    lag = 2.0 * pp.damping_ratio / (2.0 * math.pi * pp.bandwidth_hz)
    if pp.interpolation == "linear":
        lag += 0.5 / rate_hz
    return lag


def sensor_chain_delay_s(stand, emu) -> float:
    """The emulated sensor's own chain's mean delay (s) at the stand's frame: the age of its
    output sample plus its low-pass's group delay (``sim_stand.ft_sensor_model.chain_delay_s``;
    0 at the defaults: no filter, the output sample at the frame). 0 without an emulator config."""
    from sim_stand.ft_sensor_model import chain_delay_s
    chain = getattr(emu, "sensor_chain", None)
    return 0.0 if chain is None else chain_delay_s(chain, stand.period_ns * 1e-9)


def lockstep_stand(stand, emu, sensor_filter: bool | None = None):
    """The stand as the controller must see it in lockstep with this emulator: no compute
    latency exists there (the emulator answers each frame at once), the sensor's is its own
    chain's mean delay (:func:`sensor_chain_delay_s`: the age of the sample it delivers at the
    frame and its low-pass's group delay; 0 at the emulator's defaults), the platform delay is
    the emulator's own (transport + servo lag 2 zeta / wn, + half a cycle when it interpolates
    its set-points);
    ``sensor_filter`` False removes the controller's low-pass (and its group delay)."""
    from dataclasses import replace

    sensing = stand.sensing
    filter_s = stand.delays.filter_s
    if sensor_filter is False:
        sensing = replace(sensing, filter_cutoff_hz=None)
        filter_s = 0.0
    servo = 0.0
    transport = stand.delays.transport_s
    if emu is not None and stand.platform_protocol != "dockstand":
        # an industrial robot: the stand file chooses how much of the robot's delay the controller
        # leads by ([delays] transport_s + servo_s; docs/platforms.md, "The lead at a robot's delay")
        servo = stand.delays.servo_s
    elif emu is not None:
        servo = servo_lag_s(emu, stand.rate_hz)
        transport = emu.platform.transport_delay_s
    return replace(stand, sensing=sensing,
                   delays=replace(stand.delays, sensor_s=sensor_chain_delay_s(stand, emu), filter_s=filter_s,
                                  compute_s=0.0, transport_s=transport, servo_s=servo))


def _wait_for_peers(ctl, timeout_s: float = 10.0) -> None:
    """Block (before the loop starts) until both zmq PAIR/DEALER links to the emulator are connected,
    so that the first frame of the first cycle reaches it: the lockstep run then begins at the
    same emulator tick every time (bit-identical runs), instead of after however many frames a
    still-connecting socket dropped. A connecting PAIR with ZMQ_IMMEDIATE is writable only
    once its peer is there."""
    import zmq
    end = time.monotonic() + timeout_s
    for tr in (ctl.sensor.transport, ctl.platform.transport):
        sock = getattr(tr, "_sock", None)
        if sock is None or getattr(tr, "pattern", None) not in ("pair", "dealer"):
            continue
        while not sock.poll(20, zmq.POLLOUT):
            if time.monotonic() > end:
                raise RuntimeError(f"the emulator's {tr.describe()} did not connect within {timeout_s:g} s")
        if tr.pattern == "dealer":
            tr.hello()      # the emulator's ROUTER learns its controller before the first sample


def die_with_parent(parent_pid: int):
    """A ``preexec_fn`` for a child that must not outlive the process that started it (the
    demo's emulator after a ``kill -9`` of the demo): Linux's ``PR_SET_PDEATHSIG`` sends it
    SIGTERM when its parent exits; if the parent is already gone, it exits at once."""
    def setup() -> None:
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGTERM, 0, 0, 0)      # PR_SET_PDEATHSIG
        except (OSError, AttributeError):               # not Linux: the child is reaped by the demo's finally
            return
        if os.getppid() != parent_pid:
            os._exit(1)
    return setup


def stop_child(proc, timeout_s: float = 30.0) -> int:
    """Stop a child process the caller started: SIGTERM (its safe stop), then SIGKILL after
    ``timeout_s``; returns its exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def start_lockstep(ctl, links_cycles: int = 200) -> None:
    """Bring a lockstep controller whose emulator is up to its first cycles: open its links,
    compile its kernels (``warm_up``), wait until the emulator's sockets are connected
    (:func:`_wait_for_peers`), build its loop and step it until both links have been heard
    (zmq connects asynchronously; at most ``links_cycles`` cycles)."""
    ctl.open()
    ctl.warm_up()
    _wait_for_peers(ctl)
    ctl.make_loop()
    ctl.run_until(lambda c: c.links_seen(), links_cycles)


def drive_docking(ctl, case, case_arg, client: str = "demo") -> dict:
    """The operator's sequence on an opened, lockstep controller whose emulator is up: links
    seen, ``load_case`` (``case_arg``: a path or a Case), ``arm``, ``start``, the run to its end
    and the platform frozen; returns ``ctl.summary()`` with ``run_end_s``, the run clock when the
    run ended (an end criterion, a trip or an abort; None when it never started). RuntimeError
    when a command is refused."""
    from rt.control.controller import Phase
    from rt.control.supervisor import State

    stand = ctl.stand
    start_lockstep(ctl)
    r = ctl.command("load_case", client=client, case=case_arg)
    if not r.ok:
        raise RuntimeError(f"load_case refused: {r.reason}")
    r = ctl.command("arm", client=client)
    if not r.ok:
        raise RuntimeError(f"arm refused: {r.reason}")
    n_arm = int(stand.limits.arm_timeout_s * stand.rate_hz) + 10
    ctl.run_until(lambda c: c.phase is Phase.READY or c.supervisor.safe, n_arm)
    run_end_s = None
    if ctl.phase is Phase.READY:
        ctl.command("start", client=client)
        n_run = int((case.duration_s + 5.0) * stand.rate_hz)
        ctl.run_until(lambda c: c.supervisor.state is not State.RUNNING, n_run)
        run_end_s = float(ctl.t_run)
    ctl.run_until(lambda c: c.phase in (Phase.FROZEN, Phase.IDLE), int(10 * stand.rate_hz))
    return {**ctl.summary(), "run_end_s": run_end_s}


def run_demo(case_path=None, stand_path=None, emulator_path=None, compensate=True, faults=None,
             log_dir=None, world: str = "stand", sensor_filter: bool | None = None, delay_error: float = 0.0,
             identify: str | None = None, contact_gate: bool | None = None, predictor: str | None = None) -> dict:
    """The demo as a function (tests call it): returns the summary dict. The controller's
    compensated delay is the lockstep loop's true one (:func:`lockstep_stand`), or that times
    ``1 + delay_error`` (a stand configured with the wrong platform delay); ``identify``
    overrides the stand's ``[delays] identify`` mode, ``contact_gate`` its
    ``[sensor.contact_gate] enabled``, ``predictor`` its ``[delays] predictor``."""
    from dataclasses import replace

    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from rt.analysis.audit import run_audit
    from rt.control.controller import Controller
    from sim_stand.model_clock import capture_on_model_clock, stand_event_on_model_clock

    case_path = Path(case_path or DEFAULT_CASE).resolve()
    stand = load_stand(stand_path or DEFAULT_STAND)
    case = load_case(case_path)
    tmp = Path(tempfile.mkdtemp(prefix="dockstand-demo-"))
    s_ep, p_ep = f"ipc://{tmp}/sensor", f"ipc://{tmp}/platform"
    if stand.platform_protocol != "dockstand":      # a robot's UDP link on a private port
        p_ep = f"udp://127.0.0.1:{free_udp_port()}"
    if stand.sensor_link.get("transport") == "udp":
        s_ep = None
    stand = replace(stand, sensor_link=_endpoint_override(stand.sensor_link, s_ep),
                    platform_link=_endpoint_override(stand.platform_link, p_ep))
    m_port = free_tcp_port() if stand.mechanism_io is not None else None     # the unit on a private port
    stand = with_mechanism_port(stand, m_port)
    if emulator_path is None and world == "stand":
        emulator_path = default_emulator(stand)
    emu_cfg = _emulator_config(emulator_path, case_path, stand) if world == "stand" else None
    stand = lockstep_stand(stand, emu_cfg, sensor_filter)
    if delay_error or identify:
        d = stand.delays
        stand = replace(stand, delays=replace(d, transport_s=d.transport_s * (1.0 + delay_error),
                                              servo_s=d.servo_s * (1.0 + delay_error),
                                              identify=identify or d.identify))
    if contact_gate is not None:
        stand = replace(stand, contact_gate=replace(stand.contact_gate, enabled=bool(contact_gate)))
    if predictor is not None:
        stand = replace(stand, delays=replace(stand.delays, predictor=predictor))
    summary_path = tmp / "emulator.json"
    cmd = [sys.executable, "-m", "rt.cli", "emulate", "--stand", str(stand.file), "--lockstep",
           "--platform-endpoint", p_ep, "--summary", str(summary_path),
           "--case", str(case_path), "--world", world]
    if s_ep is not None:
        cmd += ["--sensor-endpoint", s_ep]
    if m_port is not None:
        cmd += ["--mechanism-port", str(m_port)]
    if emulator_path:
        cmd += ["--emulator", str(emulator_path)]
    for f in faults or []:
        cmd += ["--fault", f]
    t_wall = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO),
                            preexec_fn=die_with_parent(os.getpid()))
    ctl = None
    try:
        line = proc.stdout.readline()
        if not line:
            err = proc.stderr.read()
            raise RuntimeError(f"the emulator did not start: {err.strip()[-2000:]}")
        ctl = Controller(stand, compensate=compensate, lockstep=True, telemetry=False,
                         log_dir=log_dir if log_dir is not None else stand.runlog_dir,
                         lockstep_timeout_s=LOCKSTEP_TIMEOUT_S,
                         auditor=run_audit)
        cs = drive_docking(ctl, case, case_path)
    finally:
        if ctl is not None:
            ctl.close()
        stop_child(proc)
        emu = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        shutil.rmtree(tmp, ignore_errors=True)     # the endpoints' sockets and the summary: nothing left behind
    # the emulator's clock counts every period since it started, as the controller's does
    # (one frame per cycle in lockstep): capture time relative to the case's initial state
    time_to_capture = capture_on_model_clock(
        cs["log"], emu.get("capture_position_m"),
        stand_event_on_model_clock(emu.get("time_to_capture_s"), cs.get("t_dynamics_start_s"), stand, compensate))
    out = {
        "case": str(case_path), "captured": bool(emu.get("captured", False)),
        "time_to_capture_s": time_to_capture,
        "peak_contact_force_n": cs["peak_force_n"], "peak_contact_moment_nm": cs["peak_moment_nm"],
        "max_penetration_m": emu.get("max_penetration_m"),
        "energy_absorbed_j": emu.get("energy_absorbed_j"),
        "max_platform_excursion_m": cs["max_platform_excursion_m"],
        "cycles": cs["cycles"], "overruns": cs["overruns"], "missed_deadlines": cs["missed_deadlines"],
        "final_state": cs["state"], "finish_reason": cs["finish_reason"], "run_end_s": cs["run_end_s"],
        "trip_reason": cs["trip_reason"],
        "trip": cs["trip"], "first_contact_s": cs["first_contact_s"], "capture_signal_s": cs["capture_signal_s"],
        "compensation": compensate,
        "log": cs["log"], "emulator_events": emu.get("events"), "wall_s": time.perf_counter() - t_wall,
        "energy_audit": cs["energy_audit"], "fidelity": cs.get("fidelity"),
    }
    return out


def cmd_demo(args) -> int:
    from rt.config import ConfigError
    from rt.config.stand import resolve_stand_path
    try:
        out = run_demo(args.case, resolve_stand_path(args.stand, "demo"), args.emulator, compensate=not args.no_compensation,
                       faults=args.fault, log_dir=args.log_dir, sensor_filter=False if args.no_filter else None)
    except ConfigError as e:      # the user's file: its own one-line reason
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - the operator gets the reason
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(out, default=float))
    else:
        from rt.analysis.audit import format_verdict
        from rt.analysis.fidelity import format_fidelity
        show = {k: v for k, v in out.items() if k not in ("emulator_events", "energy_audit", "fidelity")}
        if out["energy_audit"] is not None:
            show["energy_audit"] = format_verdict(out["energy_audit"])
        if out.get("fidelity") is not None:
            show["fidelity"] = format_fidelity(out["fidelity"])
        if out.get("emulator_events"):
            show["emulator_events"] = "; ".join(f"{name} {t:.3f} s" for t, name in out["emulator_events"]) \
                + " (emulator clock, from its start)"
        print(_format(show))
    return 0 if out["final_state"] == "DONE" else 1

