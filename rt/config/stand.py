"""Stand config (``config/stand.toml``): endpoints, rates, geometry, calibration, limits,
delays, real-time options, telemetry. ``load_stand(path) -> Stand`` (kind ``"stand"``).

Transport tables (``[sensor.link]``, ``[platform.link]``) stay plain dicts
``{"transport": kind, **options}`` in :class:`Stand`; they are validated through
``drivers.transport.validate_options`` (which raises a ``ValueError`` naming the bad key), and
that error becomes ``ConfigError(file, key, reason)``; the kinds are its registry's.
Opening happens later, in the controller (``drivers.transport.open_transport(kind, **options)``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from drivers.transport import KINDS as TRANSPORT_KINDS, validate_options
from rt.stand import hexapod as HX
from rt.config._common import read_pose
from rt.config._schema import ConfigError, Table, expect_kind
from rt.stand.envelope import ENVELOPE_ACTIONS
from rt.stand.safety import SafetyLimits
from rt.stand.sensing import SensingParams, lowpass_group_delay_s


@dataclass(frozen=True)
class Pose:
    """A child frame in its parent: ``p`` (child origin, parent components), ``R`` = R_parent_child."""

    p: np.ndarray
    R: np.ndarray


@dataclass(frozen=True)
class RealtimeOptions:
    gc_freeze: bool = True
    sched_fifo_priority: int = 0
    cpu_affinity: tuple[int, ...] = ()
    mlockall: bool = False
    switch_interval_us: float = 500.0
    timer_slack_ns: int = 1            # PR_SET_TIMERSLACK for the loop thread (0 = leave as is)
    allow_failed_preflight: bool = False   # dockstand run arms even when its pre-flight timing check failed


@dataclass(frozen=True)
class Delays:
    sensor_s: float
    filter_s: float          # computed from the sensing filter (0 without it)
    compute_s: float
    transport_s: float
    servo_s: float
    # online identification of the platform's delay (rt.stand.delay_id): "off", "monitor" (logged,
    # published, band-checked) or "feed" (also replaces transport_s + servo_s in the prediction)
    identify: str = "feed"
    identify_band_s: tuple | None = None      # (low, high) s: a valid estimate outside trips; None: no check
    identify_time_constant_s: float = 0.2
    identify_min_speed_m_s: float = 1e-3
    identify_settle_s: float = 0.2
    status_latency_s: float = 0.0
    # the pose predictor (rt.dynamics.coupling.predict_pose): "acceleration" (constant
    # acceleration over the lead) or "jerk" (constant jerk: docs/validation.md §3.3)
    predictor: str = "jerk"
    # the stand's envelope (rt.stand.envelope): a case whose stiffest declared contact lies beyond
    # what any causal compensator reproduces within envelope_cor_error_pct of the CoR is flagged at
    # ARM ("warn": armed, the run's verdict says why) or refused ("refuse")
    envelope: str = "warn"
    envelope_cor_error_pct: float = 1.0
    # the largest acceleration the lead itself may add to the command, a share of the command's
    # trip level (rt.dynamics.coupling.shape_lead): a step of the contact force steps the lead by
    # a tau^2 / 2
    lead_acceleration_share: float = 0.75

    @property
    def total_s(self) -> float:
        """tau: the loop delay the coupling compensates by prediction."""
        return self.sensor_s + self.filter_s + self.compute_s + self.transport_s + self.servo_s

    @property
    def platform_s(self) -> float:
        """The platform's part of tau (what the delay identification measures)."""
        return self.transport_s + self.servo_s

    @property
    def measurement_s(self) -> float:
        """The measurement's part of tau (sensing, filter, compute). The compensated platform
        runs this much ahead of the model's state, so that the force it meets reaches the model
        at the state it belongs to: an event on the stand's clock (a capture) is this much early
        on the model's."""
        return self.sensor_s + self.filter_s + self.compute_s



@dataclass(frozen=True)
class ContactGate:
    """[sensor.contact_gate] (rt.stand.contact_gate): the measured wrench reaches the dynamics
    only in contact."""
    enabled: bool = True
    on_n: float = 40.0
    off_n: float = 25.0
    persist: int = 2
    release_s: float = 0.05


@dataclass(frozen=True)
class MechanismInputs:
    """[platform.inputs]: which bit of the STATUS frame's digital-input word carries which of
    the docking mechanism's status signals (docs/controller.md, "Mechanism inputs"); -1 / empty:
    not wired. ``capture``: soft capture (every capture latch closed; a berthing snare closed on
    the fixture); ``latches``: each capture latch closed, in the mechanism's latch order."""
    capture: int = -1
    latches: tuple[int, ...] = ()

    @property
    def wired(self) -> bool:
        return self.capture >= 0 or bool(self.latches)

    def word(self, captured: bool, latches_closed=()) -> int:
        """The input word a mechanism in this state sets (the emulator's device end)."""
        w = (1 << self.capture) if captured and self.capture >= 0 else 0
        for bit, closed in zip(self.latches, latches_closed):
            if closed:
                w |= 1 << bit
        return w


def _mechanism_inputs(pf: Table) -> MechanismInputs:
    it = pf.table("inputs", {})
    cap = it.int("capture", -1, ge=-1, le=31)
    raw = it._get("latches", [])
    if not isinstance(raw, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in raw):
        raise it.error("latches", f"expected an array of bit numbers (0..31), got {raw!r}")
    bad = [b for b in raw if not 0 <= b <= 31]
    if bad:
        raise it.error("latches", f"bit {bad[0]} is outside the 32-bit input word (0..31)")
    used = ([cap] if cap >= 0 else []) + list(raw)
    dup = sorted({b for b in used if used.count(b) > 1})
    if dup:
        raise it.error("latches" if raw else "capture", f"bit {dup[0]} carries two signals")
    it.done()
    return MechanismInputs(cap, tuple(raw))


def _mechanism_io(t: Table):
    """``[mechanism_io]``: the docking mechanism's control unit over Modbus TCP
    (drivers.mechanism_io; docs/platforms.md, "Mechanism I/O"), or None (not configured)."""
    from drivers.mechanism_io import MechanismMap
    if not t.has("mechanism_io"):
        return None
    mt = t.table("mechanism_io")
    host = mt.str("host", "127.0.0.1")
    if not host or any(c.isspace() for c in host):
        raise mt.error("host", f"a host name or address, got {host!r}")
    port = mt.int("port", 502, ge=1, le=65535)

    def address(key: str) -> int | None:
        return mt.int(key, None, ge=0, le=65535) if mt.has(key) else None

    def addresses(key: str) -> tuple[int, ...]:
        raw = mt._get(key, [])
        if not isinstance(raw, list) or not all(isinstance(a, int) and not isinstance(a, bool) for a in raw):
            raise mt.error(key, f"expected an array of Modbus data addresses (0..65535), got {raw!r}")
        bad = [a for a in raw if not 0 <= a <= 65535]
        if bad:
            raise mt.error(key, f"address {bad[0]} is outside 0..65535")
        return tuple(raw)
    caps, latches, hooks = address("capture"), addresses("latches"), addresses("hooks")
    ring = address("ring_in_position")
    used = [a for a in ((caps,) + latches + hooks + (ring,)) if a is not None]
    dup = sorted({a for a in used if used.count(a) > 1})
    if dup:
        raise mt.error("latches", f"discrete input {dup[0]} carries two signals")
    if not used:
        raise mt.error("", "maps no signal: give capture, latches, hooks or ring_in_position (discrete inputs)")
    faults = {}
    ft = mt.table("faults", {})
    for k in list(ft.data):
        if not k.isdigit() or not 1 <= int(k) <= 65535:
            raise ft.error(k, "a fault code (1..65535) naming the fault")
        faults[int(k)] = ft.str(k)
    ft.done()
    mp = MechanismMap(host=host, port=port, device_id=mt.int("device_id", 1, ge=0, le=255),
                      poll_hz=mt.float("poll_hz", 200.0, ge=1.0, le=1000.0),
                      timeout_s=mt.float("timeout_s", 0.05, gt=0.0, le=5.0), capture=caps, latches=latches,
                      hooks=hooks, ring_in_position=ring, fault_register=address("fault_register"), faults=faults,
                      release_coil=address("release_coil"))
    release_s = mt.float("release_timeout_s", 10.0, gt=0.0, le=120.0)
    undock_m = mt.float("undock_distance_m", 0.15, gt=0.0, le=0.5)
    mt.done()
    return mp, release_s, undock_m


@dataclass(frozen=True)
class Stand:
    file: Path
    name: str
    rate_hz: float
    wait_policy: str
    spin_margin_ns: int
    adaptive_margin: bool             # widen the margin to the OS's recent oversleep (rt.control.clock.WallClock)
    margin_half_life_ns: int
    overrun_warn_interval_s: float
    realtime: RealtimeOptions
    sensing: SensingParams
    sensor_rate_hz: float
    sensor_internal_rate_hz: float    # the Net F/T's internal sample rate, which its RDT ft_sequence counts
    contact_gate: ContactGate
    sensor_protocol: str              # "serial" (framed SENSOR_SAMPLE) | "rdt" (ATI Net F/T over UDP)
    sensor_link: dict
    platform_link: dict
    command_mode: str                 # "pose" | "lengths"
    mechanism_inputs: MechanismInputs  # [platform.inputs]: the mechanism's signals in the STATUS input word
    hexapod: HX.HexapodGeometry
    platform_base: Pose               # B in W
    active_mount: Pose                # A in T
    passive_mount: Pose               # P in W
    sensor_mount: Pose                # S in P
    limits: SafetyLimits
    lease_timeout_s: float
    delays: Delays
    telemetry: dict
    runlog_dir: Path
    runlog_flush_interval_s: float
    raw: dict = field(repr=False)     # the parsed TOML (run-log header snapshot)
    # the energy audit at the end of each run (rt.analysis.audit): on/off, and the bound on the
    # loop's injected energy, % of the approach energy, of its verdict
    energy_audit: bool = True
    energy_audit_bound_pct: float = 1.0
    # a run log that cannot be written (a full disk): "trip" (RUNLOG_FAILED while a run is armed or
    # running: the stand stops) or "continue" (an event; the run goes on unrecorded)
    runlog_on_failure: str = "trip"
    platform_protocol: str = "dockstand"   # [platform] protocol: the interface (drivers.hardware registry)
    # [mechanism_io]: the docking mechanism's control unit over Modbus TCP (drivers.mechanism_io
    # MechanismMap), None: not configured; and how long UNDOCK waits for the latches to open
    mechanism_io: object = None
    undock_release_timeout_s: float = 10.0
    # how far UNDOCK backs the units apart with the latches held open: clear of the latches' reach
    # (a retract's retract_distance_m may leave a released latch inside its catch's zone)
    undock_distance_m: float = 0.15
    # the interface's own keys, as its parse_options read them (a robot's [platform.robot]:
    # calibration, cycle, limits; drivers.robot_platform); {} for the stand's own protocol
    platform_options: dict = field(default_factory=dict)
    fifo_spin_fraction: float = 0.5   # [loop]: the adaptive margin's cap under SCHED_FIFO with RT throttling on

    @property
    def period_ns(self) -> int:
        return int(round(1e9 / self.rate_hz))


def _installed(kind: str) -> tuple[str, ...]:
    """The protocols of the installed ``dockstand.platforms`` / ``dockstand.sensors`` interfaces."""
    from drivers.hardware import platform_protocols, sensor_protocols
    return tuple(platform_protocols() if kind == "platform" else sensor_protocols())


def _platform_class(protocol: str):
    """The installed platform interface registered as ``protocol`` (drivers.hardware)."""
    from drivers.hardware import platform_class
    return platform_class(protocol)


def _transport(t: Table, name: str, framing: str | None = None, why: str = "") -> dict:
    """The link table ``name`` of ``t``, validated; ``framing`` given: the link's framing
    (after the kind's default) must be that one (``why`` says which protocol needs it)."""
    lt = t.table(name)
    kind = lt.str("transport", choices=TRANSPORT_KINDS)
    opts = {k: v for k, v in lt.data.items() if k != "transport"}
    lt._used.update(opts)
    try:
        full = validate_options(kind, dict(opts))
    except ValueError as e:
        key = getattr(e, "key", None) or _first_key(str(e), opts) or "transport"
        reason = getattr(e, "reason", None) or str(e)
        raise ConfigError(t.file, lt.key(key), reason) from None
    if framing is not None and full["framing"] != framing:
        raise ConfigError(t.file, lt.key("framing"), f"{why} needs framing = '{framing}' (the {kind} link's is "
                                                     f"'{full['framing']}')")
    lt.done()
    return {"transport": kind, **opts}


def _first_key(msg: str, opts: dict) -> str | None:
    head = msg.split(":", 1)[0].strip()
    return head if head in opts or head == "transport" else None


def endpoint_is_local(endpoint: str) -> bool:
    """Whether a ZeroMQ endpoint listens on this computer only: ``ipc://``, ``inproc://``, or
    ``tcp://`` on a loopback address (127.0.0.0/8, ::1, ``localhost``). ``tcp://*``, a named
    interface or any other address reaches beyond it."""
    import ipaddress
    if not endpoint.startswith("tcp://"):
        return endpoint.startswith(("ipc://", "inproc://"))
    host = endpoint[len("tcp://"):].rsplit(":", 1)[0]
    if ";" in host:                       # tcp://source;dest
        host = host.split(";", 1)[1]
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def console_limits(stand: "Stand") -> dict:
    """The limits a console draws its margins against (leg travel, force/torque trip levels,
    command speeds) and the wiring of the mechanism's signals it reads from the platform's input
    word: from a live controller's ``status`` or a run log's config snapshot."""
    lim, g = stand.limits, stand.hexapod
    frac = lim.rating_fraction
    return {"length_min_m": g.length_min_m, "length_max_m": g.length_max_m,
            "force_trip_n": [frac * r for r in lim.sensor_rating[:3]],
            "torque_trip_nm": [frac * r for r in lim.sensor_rating[3:]],
            "v_max_m_s": lim.v_max_m_s, "omega_max_rad_s": lim.omega_max_rad_s,
            "capture_bit": stand.mechanism_inputs.capture, "latch_bits": list(stand.mechanism_inputs.latches)}


STAND_ENV = "DOCKSTAND_STAND"
DATA_ENV = "DOCKSTAND_DATA"


def default_runlog_dir() -> Path:
    """Where run logs go when the stand file names no ``[runlog] directory``: ``runs/`` under
    ``$DOCKSTAND_DATA``, else under the user's data directory (``$XDG_DATA_HOME/dockstand``,
    ``~/.local/share/dockstand``) — not inside the source tree."""
    import os
    base = os.environ.get(DATA_ENV)
    if not base:
        xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
        base = os.path.join(xdg, "dockstand")
    return Path(base) / "runs"


def default_stand_path() -> tuple[Path, str]:
    """The stand file a command uses when none is named, and why: ``$DOCKSTAND_STAND``, else
    ``config/stand.toml`` in the working directory, else the one beside the installed package
    (the source tree's)."""
    import os

    import rt
    env = os.environ.get(STAND_ENV)
    if env:
        return Path(env), f"${STAND_ENV}"
    here = Path("config") / "stand.toml"
    if here.is_file():
        return here.resolve(), "config/stand.toml in the working directory"
    return Path(rt.SOURCE_ROOT) / "config" / "stand.toml", "the installed default"


def resolve_stand_path(given: str | Path | None, cmd: str) -> Path:
    """The stand file of command ``cmd``: ``given`` (its ``--stand``), else the default
    (:func:`default_stand_path`), then named on stderr so the operator sees which stand a
    command uses. Not for the real-time loop."""
    if given:
        return Path(given)
    import sys
    path, why = default_stand_path()
    print(f"dockstand {cmd}: stand {path} ({why}; --stand or ${STAND_ENV} to choose)", file=sys.stderr)
    return path


def load_stand(path: str | Path) -> Stand:
    """Load and validate a stand file (docs/cli.md); ConfigError names file, key and reason."""
    t = Table.load(path)
    expect_kind(t, "stand")
    return parse_stand(t)


def stand_from_snapshot(raw: dict, origin: str | Path) -> Stand:
    """The stand of a configuration snapshot (the ``config`` of a run-log header); ``origin``
    names it in errors (e.g. ``"run.dslog: header.config"``)."""
    return parse_stand(Table(raw, origin), check_files=False)


def _curve_keys(te: Table, pub: str, cmd: str, check_files: bool = True) -> dict | None:
    """``[telemetry] server_secret_key`` (the controller's ``.key_secret``) and
    ``authorized_consoles_dir`` (the consoles' public keys), both relative to the stand file
    (``dockstand keys init DIR`` makes them): both or neither. Without them the endpoints must
    stay on loopback (or ipc)."""
    has_s, has_d = te.has("server_secret_key"), te.has("authorized_consoles_dir")
    if not (has_s or has_d):
        for key, ep in (("pub_endpoint", pub), ("cmd_endpoint", cmd)):
            if not endpoint_is_local(ep):
                raise te.error("server_secret_key", f"required: {key} = {ep!r} listens beyond loopback, and "
                                                    "nothing may without CURVE keys (set server_secret_key and "
                                                    "authorized_consoles_dir; dockstand keys init DIR)")
        return None
    if not has_s:
        raise te.error("server_secret_key", "required with authorized_consoles_dir (the controller's "
                                            ".key_secret file; dockstand keys init DIR)")
    if not has_d:
        raise te.error("authorized_consoles_dir", "required with server_secret_key (the directory of the "
                                                  "consoles' public .key files; dockstand keys init DIR)")
    secret = te.relative(te.str("server_secret_key"))
    folder = te.relative(te.str("authorized_consoles_dir"))
    if not check_files:
        return {"secret_file": secret, "authorized_dir": folder}
    import zmq.auth
    try:
        _, sec = zmq.auth.load_certificate(str(secret))
    except OSError as e:
        raise te.error("server_secret_key", f"cannot read {secret}: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 - zmq.auth's parse errors
        raise te.error("server_secret_key", f"{secret} is not a ZeroMQ certificate ({e})") from None
    if not sec:
        raise te.error("server_secret_key", f"{secret} holds no secret key (name the .key_secret file, "
                                            "not the public .key)")
    if not folder.is_dir():
        raise te.error("authorized_consoles_dir", f"{folder} is not a directory")
    if not any(folder.glob("*.key")):
        raise te.error("authorized_consoles_dir", f"{folder} holds no console public key (*.key): no console "
                                                  "could attach")
    return {"secret_file": secret, "authorized_dir": folder}


def parse_stand(t: Table, check_files: bool = True) -> Stand:
    """``check_files`` False (a run log's snapshot, read on another computer): the CURVE key
    files named by ``[telemetry]`` are not opened."""
    name = t.str("name", "stand")

    lp = t.table("loop")
    rate = lp.float("rate_hz", 1000.0, gt=0.0, le=20000.0)
    policy = lp.str("wait_policy", "hybrid", choices=("hybrid", "spin"))
    margin_us = lp.float("spin_margin_us", 200.0, ge=0.0)
    if margin_us * 1e-6 >= 1.0 / rate:
        raise lp.error("spin_margin_us", f"must be shorter than the period ({1e6 / rate:g} us)")
    adaptive = lp.bool("adaptive_margin", True)
    half_life_s = lp.float("adaptive_margin_half_life_s", 1.0, ge=1e-3, le=3600.0)
    warn_s = lp.float("overrun_warn_interval_s", 1.0, gt=0.0, le=3600.0)
    # under SCHED_FIFO with the kernel's RT throttling on, the adaptive margin spins at most this
    # fraction of the period (rt.control.clock.fifo_margin_cap_ns; docs/deploy.md)
    fifo_frac = lp.float("fifo_spin_fraction", 0.5, gt=0.0, le=0.9)
    lp.done()

    rt_t = t.table("realtime", {})
    aff = rt_t.array("cpu_affinity", None, [], ge=0, le=4095)
    if aff is None or not np.all(aff == np.round(aff)):
        raise rt_t.error("cpu_affinity", "CPU numbers must be integers")
    rto = RealtimeOptions(gc_freeze=rt_t.bool("gc_freeze", True),
                          sched_fifo_priority=rt_t.int("sched_fifo_priority", 0, ge=0, le=99),
                          cpu_affinity=tuple(int(c) for c in aff.ravel()),
                          mlockall=rt_t.bool("mlockall", False),
                          switch_interval_us=rt_t.float("switch_interval_us", 500.0, gt=0.0),
                          timer_slack_ns=rt_t.int("timer_slack_ns", 1, ge=0, le=1_000_000),
                          allow_failed_preflight=rt_t.bool("allow_failed_preflight", False))
    rt_t.done()

    # ---- sensor
    st = t.table("sensor")
    s_rate = st.float("rate_hz", rate, gt=0.0)
    # ATI Net F/T (RDT): ft_sequence "increments at the internal sample rate" (7000 Hz) whatever
    # the RDT output rate, so it converts to device time with this rate, not the output's
    s_internal = st.float("internal_rate_hz", 7000.0, gt=0.0)
    if s_internal < s_rate:
        raise st.error("internal_rate_hz", f"the sensor's internal sample rate ({s_internal:g} Hz) cannot be below "
                                           f"its output rate rate_hz ({s_rate:g} Hz)")
    cpf = st.float("counts_per_force", gt=0.0, le=1e9)
    cpt = st.float("counts_per_torque", gt=0.0, le=1e9)
    C = st.array("calibration", (6, -1), ge=-1e6, le=1e6)
    if C.shape[1] not in (6, 8):
        raise st.error("calibration", f"must be 6x6 or 6x8, got 6x{C.shape[1]}")
    rating = np.concatenate([st.vector("rating_n", 3, gt=0.0), st.vector("rating_nm", 3, gt=0.0)])
    for key, cpu, r in (("counts_per_force", cpf, rating[:3].max()), ("counts_per_torque", cpt, rating[3:].max())):
        if cpu * r * 1.5 >= 2.0 ** 31:
            raise st.error(key, f"{cpu:g} counts per unit x 1.5 x the rating ({r:g}) overflows the int32 counts")
    tare_s = st.float("tare_window_s", 0.5, gt=0.0)
    stale = st.int("stale_cycles", 5, ge=1)
    ft = st.table("filter", {"enabled": False})
    f_on = ft.bool("enabled", False)
    cutoff = ft.float("cutoff_hz", 100.0, gt=0.0)
    damping = ft.float("damping", 1 / math.sqrt(2), gt=0.0, le=10.0)
    if f_on and not cutoff < rate / 2:
        raise ft.error("cutoff_hz", f"must be below half the loop rate ({rate / 2:g} Hz)")
    ft.done()
    cg_t = st.table("contact_gate", {"enabled": True})
    cg = ContactGate(enabled=cg_t.bool("enabled", True), on_n=cg_t.float("on_n", 40.0, gt=0.0),
                     off_n=cg_t.float("off_n", 25.0, gt=0.0), persist=cg_t.int("persist", 2, ge=1, le=100),
                     release_s=cg_t.float("release_s", 0.05, gt=0.0, le=10.0))
    if not cg.off_n <= cg.on_n:
        raise cg_t.error("off_n", f"must not exceed on_n ({cg.on_n:g} N), got {cg.off_n:g} N")
    cg_t.done()
    kind = st.table("link").str("transport", choices=TRANSPORT_KINDS)
    protocol = st.str("protocol", "rdt" if kind == "udp" else "serial", choices=_installed("sensor"))
    sensor_link = _transport(st, "link", "raw" if protocol == "rdt" else "frame",
                             "ATI RDT (datagrams of records)" if protocol == "rdt"
                             else "the serial sensor protocol (whole CRC-checked frames)")
    if protocol == "rdt" and C.shape[1] != 6:
        raise st.error("protocol", "RDT streams 6 channels; the calibration must be 6x6")
    st.done()

    pf = t.table("platform")
    # the platform's interface (drivers.hardware): the stand's own framed protocol, or a vendor's;
    # the interface says which framing its link needs, which command modes it takes and reads
    # its own keys (a robot's calibration, cycle and limits: drivers.robot_platform)
    pprot = pf.str("protocol", "dockstand", choices=_installed("platform"))
    pcls = _platform_class(pprot)
    modes = tuple(getattr(pcls, "command_modes", ("pose", "lengths")))
    mode = pf.str("command_mode", "pose", choices=("pose", "lengths"))
    if mode not in modes:
        raise pf.error("command_mode", f"the {pprot!r} platform takes {' or '.join(repr(m) for m in modes)} "
                                       f"set-points, not {mode!r}")
    framing = getattr(pcls, "link_framing", "frame")
    platform_link = _transport(pf, "link", framing, getattr(pcls, "link_why", "the motion-platform protocol "
                                                                              "(whole CRC-checked frames)"))
    parse_opts = getattr(pcls, "parse_options", None)
    platform_options = parse_opts(pf, rate_hz=rate) if parse_opts is not None else {}
    mech_inputs = _mechanism_inputs(pf)
    pf.done()

    # ---- hexapod
    hx = t.table("hexapod")
    box_t = hx.table("box")
    pos_lo, pos_hi = box_t.vector("position_min_m", 3), box_t.vector("position_max_m", 3)
    rot_lo, rot_hi = box_t.vector("rotation_min_deg", 3), box_t.vector("rotation_max_deg", 3)
    for lo, hi, key in ((pos_lo, pos_hi, "position_max_m"), (rot_lo, rot_hi, "rotation_max_deg")):
        if np.any(hi <= lo):
            raise box_t.error(key, "each maximum must exceed its minimum")
    box_t.done()
    lmin = hx.float("length_min_m", gt=0.0)
    lmax = hx.float("length_max_m", gt=0.0)
    if lmax <= lmin:
        raise hx.error("length_max_m", f"must exceed length_min_m ({lmin})")
    geom = HX.HexapodGeometry.from_circles(
        hx.float("base_radius_m", gt=0.0), hx.float("base_pair_separation_deg", gt=0.0, lt=120.0),
        hx.float("top_radius_m", gt=0.0), hx.float("top_pair_separation_deg", gt=0.0, lt=120.0),
        hx.float("home_height_m", gt=0.0), lmin, lmax,
        np.concatenate([pos_lo, pos_hi, np.radians(rot_lo), np.radians(rot_hi)]))
    code, why = HX.Hexapod(geom).check_pose(geom.home)
    if code != HX.Workspace.OK:
        raise hx.error("home_height_m", f"the home pose is not reachable: {why}")
    hx.done()

    # ---- stand geometry
    g = t.table("geometry")
    poses = {k: Pose(*read_pose(g, k)) for k in ("platform_base", "active_mount", "passive_mount", "sensor_mount")}
    g.done()

    # ---- limits
    li = t.table("limits")
    limits = SafetyLimits(
        v_max_m_s=li.float("v_max_m_s", gt=0.0), omega_max_rad_s=math.radians(li.float("omega_max_deg_s", gt=0.0)),
        a_max_m_s2=li.float("a_max_m_s2", gt=0.0), alpha_max_rad_s2=math.radians(li.float("alpha_max_deg_s2", gt=0.0)),
        accel_margin=li.float("accel_margin", 1.5, ge=1.0, le=100.0),
        sensor_rating=tuple(float(x) for x in rating), rating_fraction=li.float("rating_fraction", 0.9, gt=0.0, le=1.0),
        stale_cycles=stale, burst_window=li.int("burst_window_cycles", 100, ge=1), crc_max=li.int("crc_max", 3, ge=0),
        gap_max=li.int("gap_max", 3, ge=0), overrun_streak_max=li.int("overrun_streak_max", 5, ge=1),
        miss_budget=li.int("miss_budget", 50, ge=0), miss_window_s=li.float("miss_window_s", 1.0, gt=0.0),
        heartbeat_enabled=li.bool("heartbeat_trip", True),
        tracking_error_max_m=li.float("tracking_error_max_m", 0.01, gt=0.0),
        platform_stale_cycles=li.int("platform_stale_cycles", 20, ge=1),
        sensor_frozen_samples=li.int("sensor_frozen_samples", 50, ge=0),
        arm_timeout_s=li.float("arm_timeout_s", 30.0, gt=0.0),
        arming_creep_m=li.float("arming_creep_m", 0.03, ge=0.0),
        arming_creep_rad=math.radians(li.float("arming_creep_deg", 3.0, ge=0.0)),
        arming_speed_m_s=li.float("arming_speed_m_s", 0.05, gt=0.0),
        arming_accel_m_s2=li.float("arming_accel_m_s2", 0.25, gt=0.0),
        arming_rate_rad_s=math.radians(li.float("arming_rate_deg_s", 2.0, gt=0.0)),
        arming_angular_accel_rad_s2=math.radians(li.float("arming_angular_accel_deg_s2", 10.0, gt=0.0)),
        contact_force_n=li.float("contact_force_n", 50.0, gt=0.0),
        contact_moment_nm=li.float("contact_moment_nm", 20.0, gt=0.0),
        capture_speed_max_m_s=li.float("capture_speed_max_m_s", 0.005, gt=0.0),
        capture_rate_max_rad_s=math.radians(li.float("capture_rate_max_deg_s", 0.2, gt=0.0)),
        retract_distance_m=li.float("retract_distance_m", 0.05, gt=0.0, le=0.5),
        retract_speed_m_s=li.float("retract_speed_m_s", 0.005, gt=0.0, le=0.1),
        retract_accel_m_s2=li.float("retract_accel_m_s2", 0.05, gt=0.0, le=1.0),
        retract_force_margin_n=li.float("retract_force_margin_n", 100.0, gt=0.0, le=10000.0),
        arm_health_window_s=li.float("arm_health_window_s", 5.0, gt=0.0, le=60.0),
        failsafe_action=li.str("failsafe_action", "freeze", choices=("freeze", "e_stop")))
    if limits.contact_force_n >= min(limits.sensor_rating[:3]) * limits.rating_fraction:
        raise li.error("contact_force_n", "must be below the force trip level (rating_fraction x rating_n)")
    if limits.contact_moment_nm >= min(limits.sensor_rating[3:]) * limits.rating_fraction:
        raise li.error("contact_moment_nm", "must be below the torque trip level (rating_fraction x rating_nm)")
    if limits.capture_speed_max_m_s >= limits.v_max_m_s:
        raise li.error("capture_speed_max_m_s", f"must be below v_max_m_s ({limits.v_max_m_s:g})")
    li.done()

    sensing = SensingParams(calibration=C, counts_per_unit=np.array([cpf] * 3 + [cpt] * 3),
                            p_PS_P=poses["sensor_mount"].p, R_PS=poses["sensor_mount"].R, rate_hz=rate,
                            tare_samples=max(1, int(round(tare_s * rate))),
                            filter_cutoff_hz=cutoff if f_on else None, filter_damping=damping)
    filter_s = lowpass_group_delay_s(cutoff, damping, rate) if f_on else 0.0

    d = t.table("delays")
    delays = Delays(d.float("sensor_s", 0.0, ge=0.0), filter_s, d.float("compute_s", 0.0, ge=0.0),
                    d.float("transport_s", 0.0, ge=0.0), d.float("servo_s", 0.0, ge=0.0),
                    identify=d.str("identify", "feed", choices=("off", "monitor", "feed")),
                    identify_time_constant_s=d.float("identify_time_constant_s", 0.2, gt=0.0),
                    identify_min_speed_m_s=d.float("identify_min_speed_m_s", 1e-3, gt=0.0),
                    identify_settle_s=d.float("identify_settle_s", 0.2, gt=0.0),
                    status_latency_s=d.float("status_latency_s", 0.0, ge=0.0),
                    predictor=d.str("predictor", "jerk", choices=("acceleration", "jerk")),
                    envelope=d.str("envelope", "warn", choices=ENVELOPE_ACTIONS),
                    envelope_cor_error_pct=d.float("envelope_cor_error_pct", 1.0, gt=0.0, le=10.0),
                    lead_acceleration_share=d.float("lead_acceleration_share", 0.75, gt=0.0, le=1.0))
    if d.has("identify_band_s"):
        band = d.vector("identify_band_s", 2, ge=0.0)
        if not band[0] < band[1]:
            raise d.error("identify_band_s", f"must be [low, high] with low < high, got {band.tolist()}")
        if band[1] > 0.1:
            raise d.error("identify_band_s", f"the high end {band[1]:g} s is beyond any platform's delay (<= 0.1 s)")
        delays = replace(delays, identify_band_s=(float(band[0]), float(band[1])))
    d.done()

    te = t.table("telemetry", {})
    pub = te.str("pub_endpoint", "tcp://127.0.0.1:5561")
    cmd = te.str("cmd_endpoint", "tcp://127.0.0.1:5560")
    for key, ep in (("pub_endpoint", pub), ("cmd_endpoint", cmd)):
        if not ep.startswith(("tcp://", "ipc://", "inproc://")):
            raise te.error(key, f"must be a tcp://, ipc:// or inproc:// endpoint, got {ep!r}")
    tel_rate = te.float("rate_hz", 50.0, gt=0.0)
    if tel_rate > rate:
        raise te.error("rate_hz", f"cannot exceed the loop rate ({rate:g} Hz)")
    telemetry = {"pub_endpoint": pub, "cmd_endpoint": cmd, "decimation": max(1, int(round(rate / tel_rate))),
                 "sndhwm": te.int("sndhwm", 4, ge=1), "lease_timeout_s": te.float("lease_timeout_s", 2.0, gt=0.0),
                 "curve": _curve_keys(te, pub, cmd, check_files),
                 # the request path's limits (rt.record.telemetry, rt.control.operator_port)
                 "command_budget_us": te.float("command_budget_us", 200.0, ge=10.0, le=900.0),
                 "max_requests_per_s": te.float("max_requests_per_s", 2000.0, ge=10.0, le=100000.0),
                 "query_rate_hz": te.float("query_rate_hz", 50.0, ge=1.0, le=1000.0)}
    te.done()

    mio = _mechanism_io(t)

    rl = t.table("runlog", {})
    rdir = t.relative(rl.str("directory")) if rl.has("directory") else default_runlog_dir()
    flush = rl.float("flush_interval_s", 0.05, gt=0.0, le=0.1)
    audit_on = rl.bool("energy_audit", True)
    audit_bound = rl.float("energy_audit_bound_pct", 1.0, gt=0.0, le=100.0)
    on_failure = rl.str("on_failure", "trip", choices=("trip", "continue"))
    rl.done()
    t.done()

    return Stand(file=t.file, name=name, rate_hz=rate, wait_policy=policy, spin_margin_ns=int(margin_us * 1000),
                 adaptive_margin=adaptive, margin_half_life_ns=int(half_life_s * 1e9),
                 overrun_warn_interval_s=warn_s, realtime=rto, sensing=sensing, sensor_rate_hz=s_rate, sensor_internal_rate_hz=s_internal, contact_gate=cg,
                 sensor_protocol=protocol, sensor_link=sensor_link, platform_link=platform_link, command_mode=mode, hexapod=geom,
                 platform_protocol=pprot, mechanism_io=mio[0] if mio else None,
                 undock_release_timeout_s=mio[1] if mio else 10.0, undock_distance_m=mio[2] if mio else 0.15,
                 platform_options=platform_options,
                 mechanism_inputs=mech_inputs,
                 platform_base=poses["platform_base"], active_mount=poses["active_mount"],
                 passive_mount=poses["passive_mount"], sensor_mount=poses["sensor_mount"], limits=limits,
                 lease_timeout_s=telemetry["lease_timeout_s"], delays=delays, telemetry=telemetry,
                 runlog_dir=rdir, runlog_flush_interval_s=flush, raw=t.data, energy_audit=audit_on,
                 energy_audit_bound_pct=audit_bound, runlog_on_failure=on_failure, fifo_spin_fraction=fifo_frac)


def with_endpoints(stand: Stand, sensor_link: dict | None = None, platform_link: dict | None = None,
                   telemetry: dict | None = None) -> Stand:
    """A copy of the stand with other links (demo/tests: private ipc endpoints)."""
    kw = {}
    if sensor_link is not None:
        kw["sensor_link"] = sensor_link
    if platform_link is not None:
        kw["platform_link"] = platform_link
    if telemetry is not None:
        kw["telemetry"] = {**stand.telemetry, **telemetry}
    return replace(stand, **kw)
