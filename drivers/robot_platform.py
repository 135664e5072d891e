"""An industrial robot as the stand's motion platform: the adapter between a robot's own
external-motion interface (KUKA RSI: drivers.kuka_rsi; ABB EGM: drivers.abb_egm) and the
controller's canonical frames (docs/platforms.md).

**The robot is the clock master.** The robot sends its state every interpolation cycle (4 ms,
250 Hz; RSI also 12 ms) and expects one answer within that cycle. The controller keeps its own
1 kHz clock for the dynamics; this adapter synchronises the exchange to the robot's packets:

* :meth:`RobotPlatform.read` (every controller cycle) takes the robot's datagrams, decodes the
  newest state into a canonical STATUS frame (the top pose in the stand's frames, from the
  calibration) and keeps it to be answered;
* :meth:`RobotPlatform.write` (every controller cycle) takes the canonical command frame the
  controller encoded (POSE, or a state command) and, when a robot state is waiting, answers it
  at once with the pose target of that same cycle's command, turned into the robot's
  correction (RSI: the Cartesian correction relative to the pose where the robot started
  correcting; EGM: the absolute pose target). The POSE the controller computes leads the
  vehicles' state by the stand's compensated delay (``[delays]``, identified online by
  rt.stand.delay_id), so a robot answered at its packets receives the pose predicted for its
  next interpolation instant plus its own delay: the lead is the robot's delay.

**Missed cycles.** A robot cycle without an exchange (no state from the robot for a cycle, two
states in one controller cycle of which only the newest can be answered, a gap in the robot's
cycle stamp) is counted; ``missed_cycles_trip`` of them in a row -- or the robot's own
late-packet count (RSI's ``Delay``) within that many of the robot's limit -- put the adapter in
FAULT with ``FaultCode.ROBOT_CYCLE_MISSED``: the controller trips ROBOT_CYCLE_MISSED and stops,
before the robot's own limit stops the robot on its own. The fault holds until RESET_FAULT.

**States** (the canonical ones, docs/protocols.md): IDLE until ENGAGE (the robot holds where it
is: the correction it has), ENGAGED (set-points are answered), FROZEN, FAULT, E_STOPPED (the
correction is held: the robot's own E-stop chain is hardware); RESET_FAULT to IDLE. A robot
that reports its interface stopped is FAULT ``ROBOT_STOPPED``; a set-point beyond the robot's
configured correction limits is FAULT ``CORRECTION_LIMIT`` (the correction is held: the robot
would clamp it or stop). LENGTHS set-points are refused (a robot has no legs): FAULT
``BAD_COMMAND``. The STATUS lengths are zero.

**Bad input** (a truncated datagram, a non-XML packet, a protobuf of another type, a wrong or
stale cycle stamp, a sender that is not the robot) is counted by name in :attr:`refused` (and
the link's ``malformed``), never raised into the loop.

**Lockstep** (the emulated robot, sim_stand.robot_twin): the robot answers only every n-th
controller cycle, so the lockstep gate (rt.control.links) asks :meth:`lockstep_handshake`
after each cycle: a cycle that sent the robot nothing sends a lockstep tick (one datagram,
never sent outside lockstep), so the emulated robot advances one controller period per
datagram; the gate then waits for the sensor's sample and, every n-th cycle, the robot's state.

Real time: :meth:`read`, :meth:`write` (the loop thread). :meth:`parse_options` (the stand
file), :meth:`configure`, :meth:`activate`, :meth:`deactivate`: not real-time.
"""
from __future__ import annotations

import math
import struct

from drivers import robot_pose as RP
from drivers.framing import SEQ_STATE_LEN
from drivers.hardware import PlatformInterface
from drivers.motion_platform import (Command, FaultCode, Mode, PlatformState, decode_command, encode_status)
from drivers.transport import TransportConfigError, UdpTransport, validate_options

__all__ = ["RobotPlatform", "RobotState", "RobotUdpLink", "LOCKSTEP_TICK", "parse_robot_options"]

#: the lockstep tick (sim_stand.robot_twin): one datagram per controller cycle that sent the
#: emulated robot nothing else; never sent outside lockstep, and no robot protocol's message
LOCKSTEP_TICK = b"DOCKSTAND-LOCKSTEP-TICK"

_ZERO6 = (0.0,) * 6
_PREFIX = struct.Struct("<H")


class RobotState:
    """One robot message, decoded: ``stamp_ms`` (the robot's cycle stamp: RSI's IPOC, EGM's
    header tm), ``seq`` (EGM's seqno; RSI: the IPOC), ``actual`` (the TCP pose the robot
    measures, in its base frame R: ``(p m, q)``), ``commanded`` (its set-point, or None),
    ``late`` (the robot's own late-packet count, RSI ``Delay``; -1 unknown), ``running`` (the
    robot's interface is correcting), ``correction`` (RSI: the correction the robot applies,
    ``(p m, q)`` relative to its start pose, when its context sends it; else None), ``echo``
    (what the answer must carry: RSI's IPOC text)."""

    __slots__ = ("stamp_ms", "seq", "actual", "commanded", "late", "running", "correction", "echo")

    def __init__(self, stamp_ms, seq, actual, commanded=None, late=-1, running=True, correction=None, echo=None):
        self.stamp_ms = stamp_ms
        self.seq = seq
        self.actual = actual
        self.commanded = commanded
        self.late = late
        self.running = running
        self.correction = correction
        self.echo = echo


class RobotUdpLink(UdpTransport):
    """The robot's UDP link as the controller's Links see it: raw datagrams from the robot
    (this computer listens on ``local_port``; the robot sends to it and is answered at the
    address it sent from), and the canonical STATUS frames the adapter builds from them, whose
    sequence the controller's compiled scan checks (:meth:`delegate_checks`)."""

    def delegate_checks(self, seq_state) -> None:
        """The controller checks the canonical frames the adapter builds (their sequence
        restarts at 0 whenever the adapter opens the link, which zeroes ``seq_state``)."""
        if len(seq_state) != SEQ_STATE_LEN:
            raise ValueError(f"seq_state must have {SEQ_STATE_LEN} slots, not {len(seq_state)}")
        self._seq_state = seq_state
        self.tracker = None
        self._reset_seq()

    def receive(self, out: list) -> None:
        """Every datagram waiting, appended to ``out`` as ``(bytes, address)`` (oversize
        datagrams counted and dropped; never raises, never blocks)."""
        if self._sock is None:
            return
        for _ in range(64):
            got = self.receive_datagram()
            if got is None:
                return
            if got[0] is not None:
                out.append(got)

    def _send_failed(self, e: OSError) -> None:
        """Every answer the socket refuses is kept in ``last_error`` (a full buffer too: the
        robot counts the lost answer late)."""
        self.last_error = f"{self.describe()}: send: {e}"


def _pose_option(rt, prefix: str, what: str) -> tuple:
    """``{prefix}_position_m`` and ``{prefix}_rotation_deg`` (A, B, C about z, y', x'': the
    robot's Z-Y-X convention) -> a pose (p, q)."""
    p = rt.vector(f"{prefix}_position_m", 3, (0.0, 0.0, 0.0), ge=-20.0, le=20.0)
    r = rt.vector(f"{prefix}_rotation_deg", 3, (0.0, 0.0, 0.0), ge=-360.0, le=360.0)
    return (tuple(float(x) for x in p), RP.zyx_deg_to_quat(*(float(x) for x in r)))


def parse_robot_options(pf, rate_hz: float, cycles_ms: tuple, vendor=None) -> dict:
    """``[platform.robot]`` of a stand file (``pf`` the ``[platform]`` table, an
    rt.config Table: every error names file, key, reason and range). ``cycles_ms``: the robot
    cycles the interface has; ``vendor(rt, opts)`` reads the vendor's own keys."""
    rt = pf.table("robot", {})
    cyc = rt.int("cycle_ms", cycles_ms[0], ge=1, le=100)
    if cyc not in cycles_ms:
        raise rt.error("cycle_ms", f"the robot's interface cycles every {' or '.join(map(str, cycles_ms))} ms, "
                                   f"not {cyc}")
    n = cyc * 1e-3 * rate_hz
    if abs(n - round(n)) > 1e-9 or round(n) < 1:
        raise rt.error("cycle_ms", f"must be a whole number of the loop's periods ({1e3 / rate_hz:g} ms): "
                                   f"the adapter answers the robot at a controller cycle")
    missed = rt.int("missed_cycles_trip", 3, ge=1, le=1000)
    late_limit = rt.int("robot_late_limit", 100, ge=2, le=100000)
    if missed >= late_limit:
        raise rt.error("missed_cycles_trip", f"must be below robot_late_limit ({late_limit}): the controller must "
                                             f"stop before the robot's own limit stops the robot")
    opts = {
        "cycle_ms": cyc, "cycle_controller_cycles": int(round(n)), "missed_cycles_trip": missed,
        "robot_late_limit": late_limit,
        "base_in_stand": _pose_option(rt, "base", "the robot base R in the platform base B"),
        "top_on_tcp": _pose_option(rt, "tcp_to_top", "the stand's top T in the robot's TCP frame"),
        "translation_limit_m": rt.float("translation_limit_mm", 100.0, gt=0.0, le=5000.0) * 1e-3,
        "rotation_limit_deg": rt.float("rotation_limit_deg", 10.0, gt=0.0, le=180.0),
    }
    if vendor is not None:
        vendor(rt, opts)
    rt.done()
    return opts


class RobotPlatform(PlatformInterface):
    """The common adapter (module docstring); a vendor supplies :meth:`decode_state` (one
    datagram -> :class:`RobotState`, or a str naming why it is refused) and
    :meth:`encode_answer` (the answer to a state, given the target TCP pose or None to hold)."""

    link_framing = "raw"
    link_why = "a robot's datagrams (framing 'raw')"
    command_modes = ("pose",)
    cycles_ms = (4,)
    default_local_port = 49152

    @classmethod
    def parse_options(cls, pf, rate_hz: float) -> dict:
        return parse_robot_options(pf, rate_hz, cls.cycles_ms, cls.parse_vendor_options)

    @classmethod
    def parse_vendor_options(cls, rt, opts: dict) -> None:
        """A vendor's own keys of ``[platform.robot]`` into ``opts``."""

    # ------------------------------------------------------------------ lifecycle (not real-time)
    def configure(self, link: dict, stand) -> None:
        o = dict(link)
        kind = o.pop("transport")
        if kind != "udp":
            raise TransportConfigError("transport", f"the {self.protocol} robot speaks UDP, not {kind!r}")
        o.setdefault("framing", "raw")
        self.transport = RobotUdpLink(validate_options("udp", o))
        self.transport.seq_check = True      # the canonical STATUS frames it delivers are numbered
        if not stand.platform_options:
            raise ValueError(f"the {self.protocol} platform needs the stand's [platform.robot] options "
                             f"(rt.config.stand reads them with the interface's parse_options)")
        self.configure_options(stand.platform_options)

    def configure_options(self, opts: dict) -> None:
        self.options = opts
        self.n = int(opts["cycle_controller_cycles"])          # controller cycles per robot cycle
        self.cycle_ms = int(opts["cycle_ms"])
        self.missed_trip = int(opts["missed_cycles_trip"])
        self.late_limit = int(opts["robot_late_limit"])
        self.calibration = RP.Calibration(opts["base_in_stand"], opts["top_on_tcp"])
        self.trans_lim = float(opts["translation_limit_m"])
        self.rot_lim = float(opts["rotation_limit_deg"])
        self.seq = 0                     # the next canonical command's seq (the controller's encoder reads it)
        self.reset_state()

    def reset_state(self) -> None:
        self.state = PlatformState.IDLE
        self.fault = FaultCode.NONE
        self.mode = Mode.NONE
        self.last_cmd_seq = 0
        self.status_seq = 0              # the canonical STATUS frames' sequence (checked by the compiled scan)
        self.robot_addr = None           # where the robot's state came from (the answer goes there)
        self.pending = None              # the robot state this cycle must answer
        self.target = None               # the TCP target (pose in R) the answers carry; None: hold
        self.start = None                # RSI: the TCP pose where the robot started correcting (in R)
        self.held = None                 # the TCP target last sent (held in IDLE/FROZEN/FAULT)
        self.last_stamp = None
        self.cycles_quiet = 0            # controller cycles since the robot's last state
        self.quiet_windows = 0           # robot cycles the silence since then counted as missed
        self.run = 0                     # robot cycles in a row without an exchange
        self.missed = 0                  # robot cycles without an exchange, in total
        self.answers = 0
        self.states_rx = 0
        self.robot_late = -1
        self.refused: dict[str, int] = {}
        self.fault_text = ""
        self.last_pose = None            # the newest measured top pose (p, q) in B
        self._sent = False               # this controller cycle sent the robot a datagram
        self._lockstep_msgs = 0
        self._pending_fault_status = False

    def activate(self) -> None:
        self.open()
        self.reset_state()

    # ------------------------------------------------------------------ vendor hooks
    def decode_state(self, data: bytes):
        raise NotImplementedError

    def encode_answer(self, st: RobotState, target) -> bytes:
        raise NotImplementedError

    # ------------------------------------------------------------------ the cycle (real-time)
    def read(self) -> bytes:
        """Canonical STATUS frames (length-prefixed, as the links deliver them) built from the
        robot's datagrams since the last cycle. Real-time."""
        got: list = []
        self.transport.receive(got)
        newest = None
        for data, addr in got:
            if self.robot_addr is not None and addr != self.robot_addr:
                self._refuse("sender is not the robot")
                continue
            st = self.decode_state(data)
            if st.__class__ is str:
                self._refuse(st)
                continue
            if self.last_stamp is not None and st.stamp_ms <= self.last_stamp:
                self._refuse("stale cycle stamp")
                continue
            if newest is not None:       # two states in one cycle: the older cannot be answered
                self._missed(1)
            newest = st
            self.robot_addr = addr
            if self.last_stamp is not None:
                # robot cycles that never reached us, less those the silence already counted
                gap = int(round((st.stamp_ms - self.last_stamp) / self.cycle_ms)) - 1 - self.quiet_windows
                if gap > 0:
                    self._missed(gap)
            self.last_stamp = st.stamp_ms
            self.quiet_windows = 0
            self.cycles_quiet = 0
        out = b""
        if newest is not None:
            self.states_rx += 1
            self.pending = newest
            self._take_state(newest)
            out = self._status_frame(int(round(newest.stamp_ms * 1e6)))
        elif self.robot_addr is not None:
            # a robot cycle is missed once its state is half a cycle overdue (jitter is not a miss)
            self.cycles_quiet += 1
            w = (self.cycles_quiet - self.n // 2) // self.n
            if w > self.quiet_windows:
                self._missed(w - self.quiet_windows)
                self.quiet_windows = w
        if self.run >= self.missed_trip and self.state is not PlatformState.FAULT:
            self._fault(FaultCode.ROBOT_CYCLE_MISSED,
                        f"{self.run} robot cycles in a row without an exchange (the adapter trips at "
                        f"{self.missed_trip}; the robot stops after {self.late_limit} late answers)")
        if self._pending_fault_status and not out:
            stamp = self.last_stamp or 0.0
            out = self._status_frame(int(round(stamp * 1e6)) + self.cycles_quiet * self.cycle_ms * 1_000_000 // self.n)
        self._pending_fault_status = False
        return out

    def write(self, frame) -> None:
        """One canonical command frame (encoded by the controller with :attr:`seq`); answers the
        robot's waiting state with the target it gives. Real-time."""
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        cmd = decode_command(frame, checked=True)
        if cmd is not None:
            self._apply(cmd)
        st = self.pending
        if st is not None:
            self.pending = None
            target = self.target if self.state is PlatformState.ENGAGED else self.held
            data = self.encode_answer(st, target)
            if self.transport.send_to(data, self.robot_addr):
                self.answers += 1
                self._sent = True
                self.run = 0                 # the newest state is answered: the exchange goes on
                if target is not None:
                    self.held = target

    # ------------------------------------------------------------------ lockstep (the gate, not real-time)
    def lockstep_handshake(self) -> tuple[bool, bool]:
        """After a lockstep cycle: a lockstep tick to the emulated robot when the cycle sent it
        nothing (so it advances one controller period per datagram); returns (a sensor sample
        is due, the robot's state is due). Before the robot's clock starts (no state heard yet)
        only the robot's first state is awaited."""
        if self.robot_addr is None:
            return False, True
        if not self._sent:
            self.transport.send_to(LOCKSTEP_TICK, self.robot_addr)
        self._sent = False
        self._lockstep_msgs += 1
        return True, self._lockstep_msgs % self.n == 0

    # ------------------------------------------------------------------ pieces
    def _refuse(self, why: str) -> None:
        self.refused[why] = self.refused.get(why, 0) + 1
        self.transport.counters.malformed += 1

    def _missed(self, k: int) -> None:
        self.missed += k
        self.run += k

    def _fault(self, code: FaultCode, text: str) -> None:
        self.state = PlatformState.FAULT
        self.fault = code
        self.fault_text = text
        self._pending_fault_status = True

    def _take_state(self, st: RobotState) -> None:
        p, q = self.calibration.top_of(st.actual)
        if q[0] < 0.0:                   # the STATUS carries the hemisphere w >= 0 (one quaternion per pose)
            q = (-q[0], -q[1], -q[2], -q[3])
        self.last_pose = (p, q)
        if self.start is None:
            self.start = self.robot_start(st)
        if st.late >= 0:
            self.robot_late = st.late
            if st.late >= self.late_limit - self.missed_trip and self.state is not PlatformState.FAULT:
                self._fault(FaultCode.ROBOT_CYCLE_MISSED,
                            f"the robot counts {st.late} late answers of its limit {self.late_limit}")
        if not st.running and self.state is not PlatformState.FAULT:
            self._fault(FaultCode.ROBOT_STOPPED, "the robot reports its external-motion interface stopped")
        if self.held is None:            # nothing sent yet: hold where the robot is
            self.held = self.hold_target(st)

    def robot_start(self, st: RobotState):
        """The pose the robot's corrections are relative to (RSI: where it started
        correcting); None for an interface that takes absolute targets."""
        return None

    def hold_target(self, st: RobotState):
        """The target that holds the robot where it is now."""
        return st.commanded if st.commanded is not None else st.actual

    def _apply(self, cmd) -> None:
        c = cmd.command
        s = self.state
        if c is Command.HEARTBEAT:
            return
        if c is Command.POSE:
            if s is not PlatformState.ENGAGED:
                return
            v = cmd.values
            top = ((v[0], v[1], v[2]), RP.normalize((v[3], v[4], v[5], v[6])))
            tcp = self.calibration.tcp_of(top)
            why = self.beyond_limits(tcp)
            if why:
                self.target = None
                self._fault(FaultCode.CORRECTION_LIMIT, why)
                return
            self.target = tcp
            self.mode = Mode.POSE
            self.last_cmd_seq = cmd.seq
        elif c is Command.LENGTHS:
            self._fault(FaultCode.BAD_COMMAND, "a robot takes pose set-points, not actuator lengths")
        elif c is Command.ENGAGE:
            if s in (PlatformState.IDLE, PlatformState.FROZEN) and self.robot_addr is not None \
                    and self.held is not None:
                self.state = PlatformState.ENGAGED
                self.target = self.held              # hold the present target until the first POSE
                self.last_cmd_seq = cmd.seq
        elif c is Command.FREEZE:
            if s is PlatformState.ENGAGED:
                self.state = PlatformState.FROZEN
                self.last_cmd_seq = cmd.seq
        elif c is Command.PARK:
            if s in (PlatformState.ENGAGED, PlatformState.FROZEN):
                self.state = PlatformState.IDLE
                self.last_cmd_seq = cmd.seq
        elif c is Command.E_STOP:
            self.state = PlatformState.E_STOPPED
            self.fault = FaultCode.NONE
            self.last_cmd_seq = cmd.seq
        elif c is Command.RESET_FAULT:
            if s in (PlatformState.FAULT, PlatformState.E_STOPPED):
                self.state = PlatformState.IDLE
                self.fault = FaultCode.NONE
                self.fault_text = ""
                self.run = 0
                self.last_cmd_seq = cmd.seq

    def beyond_limits(self, tcp) -> str:
        """Why the TCP target ``tcp`` (pose in R) is beyond the robot's configured correction
        limits about its start pose ('' when within)."""
        ref = self.start
        if ref is None:
            return ""
        p, q = tcp
        p0, q0 = ref
        lim = self.trans_lim
        for k, axis in enumerate("XYZ"):
            d = p[k] - p0[k]
            if not -lim <= d <= lim:
                return (f"the set-point needs a {axis} correction of {1e3 * d:.1f} mm, beyond the robot's "
                        f"+-{1e3 * lim:g} mm")
        ang = RP.rotation_angle_deg(RP.quat_mul(q, RP.quat_conj(q0)))
        if ang > self.rot_lim:
            return f"the set-point needs a rotation of {ang:.2f} deg, beyond the robot's {self.rot_lim:g} deg"
        return ""

    def _status_frame(self, time_ns: int) -> bytes:
        pose = self.last_pose
        if pose is None:
            p, q = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)
        else:
            p, q = pose
        f = encode_status(self.status_seq, time_ns, self.state, int(self.fault), self.last_cmd_seq,
                          (p[0], p[1], p[2], q[0], q[1], q[2], q[3]), _ZERO6, self.mode)
        self.status_seq = (self.status_seq + 1) & 0xFFFFFFFF
        return _PREFIX.pack(len(f)) + f

    # ------------------------------------------------------------------ for status and tests
    def describe_link(self) -> dict:
        """What the adapter knows of the exchange (not real-time: builds a dict)."""
        return {"protocol": self.protocol, "robot": None if self.robot_addr is None else
                f"{self.robot_addr[0]}:{self.robot_addr[1]}", "cycle_ms": self.cycle_ms,
                "states_received": self.states_rx, "answers_sent": self.answers, "missed_cycles": self.missed,
                "missed_in_a_row": self.run, "robot_late_count": self.robot_late, "refused": dict(self.refused),
                "state": self.state.name, "fault": FaultCode(self.fault).name if self.fault in
                FaultCode._value2member_map_ else int(self.fault), "fault_text": self.fault_text}


def finite(*xs) -> bool:
    for x in xs:
        if not math.isfinite(x):
            return False
    return True
