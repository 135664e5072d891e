"""The emulated industrial robot: the stand's world (sim_stand.world: the same mechanism,
contacts and sensor models) carried by a robot that speaks KUKA RSI or ABB EGM byte for byte
as the real controllers do, and is the clock master (docs/platforms.md, "The emulated robots").

Every robot cycle (``[platform.robot] cycle_ms``, 4 ms) the robot sends its state -- the TCP
pose it measures (the world's platform top seen through the stand file's calibration), its
set-point, its late-answer count -- and takes the answer that arrives within that cycle: RSI's
``<RKorr>`` correction relative to its start pose (with the echoed IPOC: an answer with another
IPOC is late), EGM's absolute target. From the next robot cycle on, the set-point ramps to the
new target over one cycle (the robot's fine interpolation) and the TCP follows it through the
emulator config's ``[platform]`` servo: a transport delay and a second-order lag (the robot's
published delay and lag, config/emulator/kuka_rsi.toml and abb_egm.toml). The robot's own
supervision: a correction beyond its limits (``[platform.robot]`` translation / rotation
limits) stops the interface (RSI's POSCORRMON); RSI stops after ``robot_late_limit`` late
answers in all (the ETHERNET object's Timeout), EGM after that many cycles in a row without
an answer (its CommTimeout); a stopped robot holds its pose and sends nothing more.

The world advances one controller period per tick (1 ms), the robot's cycle every n ticks; the
F/T sensor samples every tick. ``lockstep``: one tick per datagram from the controller -- its
answer to the robot's state, or its lockstep tick (drivers.robot_platform.LOCKSTEP_TICK) in a
cycle that answered nothing -- so a run is deterministic; before its clock starts the robot
offers its first state until the controller is there to take it. ``realtime``: ticks on the
wall clock.
"""
from __future__ import annotations

import time

import numpy as np

from drivers import kuka_rsi as RSI
from drivers import robot_pose as RP
from drivers.robot_platform import LOCKSTEP_TICK
from drivers.transport import make_transport
from rt.config.stand import Stand
from sim_stand.emulator import Emulator, Faults

ROBOT_PROTOCOLS = ("kuka_rsi", "abb_egm")
IPOC0 = 3_600_000          # the robot's clock at the twin's start (ms): an hour after power-on


def is_robot(stand: Stand) -> bool:
    return stand.platform_protocol in ROBOT_PROTOCOLS


def interpolation_delay_s(stand: Stand) -> float:
    """The delay the robot's cycle adds to a set-point stream as a pure delay, relative to a
    platform that ramps each controller set-point over the next controller period: the answer
    to the state sent at the end of tick m carries the command of cycle m + 1; the robot ramps
    to it over the cycle after the one it arrived in, reaching it at the end of tick m + 2n.
    So (2 n - 1) controller periods (7 ms at 4 ms and 1 kHz)."""
    n = int(stand.platform_options["cycle_controller_cycles"])
    return (2 * n - 1) / stand.rate_hz


class _RsiWire:
    """The robot's end of RSI (drivers.kuka_rsi)."""

    consecutive = False          # RSI stops after Timeout late answers in all

    def __init__(self, opts: dict):
        self.ipoc_per_cycle = int(opts["ipoc_per_cycle"])

    def state(self, k: int, actual, commanded, start, late: int, running: bool) -> tuple[bytes, int]:
        ipoc = IPOC0 + k * self.ipoc_per_cycle
        korr = RSI.korr_from_poses(start, commanded)
        return (RSI.encode_robot_state(RSI.xyzabc_from_pose(actual), RSI.xyzabc_from_pose(commanded), late, ipoc,
                                       korr), ipoc)

    def answer(self, data: bytes, outstanding, start):
        """-> (target TCP pose or None, refusal or None, matched the outstanding state)."""
        r = RSI.decode_correction(data)
        if r.__class__ is str:
            return None, r, False
        _, korr, ipoc = r
        if ipoc != outstanding:
            return None, "IPOC does not match the state of this cycle", False
        return RSI.apply_korr(start, korr), None, True


class _EgmWire:
    """The robot's end of EGM (drivers.abb_egm)."""

    consecutive = True           # EGM stops after its CommTimeout without a message

    def __init__(self, opts: dict):
        from drivers import abb_egm as EGM
        self.EGM = EGM
        self.cycle_ms = int(opts["cycle_ms"])
        self._tx = EGM.egm_pb2.EgmRobot()
        self._rx = EGM.egm_pb2.EgmSensor()

    def state(self, k: int, actual, commanded, start, late: int, running: bool) -> tuple[bytes, int]:
        tm = IPOC0 + k * self.cycle_ms
        return self.EGM.encode_robot(k + 1, tm, actual, commanded, running, self._tx), tm

    def answer(self, data: bytes, outstanding, start):
        r = self.EGM.decode_sensor(data, self._rx)
        if r.__class__ is str:
            return None, r, False
        return r[2], None, True


WIRES = {"kuka_rsi": _RsiWire, "abb_egm": _EgmWire}


def robot_link(stand: Stand, port: int | None = None) -> dict:
    """The robot's end of ``[platform.link]``: a UDP socket that sends to the address the
    controller listens on (``local_host`` / ``local_port``)."""
    link = stand.platform_link
    host = link.get("local_host") or "127.0.0.1"
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    return {"transport": "udp", "host": host, "port": int(port or link.get("local_port") or 49152),
            "framing": "raw"}


class RobotTwin(Emulator):
    """The stand with an emulated industrial robot as its platform (module docstring)."""

    def __init__(self, stand: Stand, world, *, emu=None, sensor_transport=None, robot_transport=None,
                 faults: Faults | None = None, seed: int = 1):
        if not is_robot(stand):
            raise ValueError(f"the stand's platform protocol {stand.platform_protocol!r} is not a robot's "
                             f"({', '.join(ROBOT_PROTOCOLS)})")
        opts = stand.platform_options
        if robot_transport is None:
            link = robot_link(stand)
            robot_transport = make_transport(link.pop("transport"), **link)
            robot_transport.open()
        super().__init__(stand, world, emu=emu, sensor_transport=sensor_transport,
                         platform_transport=robot_transport, faults=faults, seed=seed)
        self.wire = WIRES[stand.platform_protocol](opts)
        self.protocol = stand.platform_protocol
        self.n = int(opts["cycle_controller_cycles"])
        self.calibration = RP.Calibration(opts["base_in_stand"], opts["top_on_tcp"])
        self.trans_lim = float(opts["translation_limit_m"])
        self.rot_lim = float(opts["rotation_limit_deg"])
        self.late_limit = int(opts["robot_late_limit"])
        self.start_tcp = self.tcp_now()
        self.cmd_prev = self.cmd_next = self.start_tcp     # the robot's set-point ramps between these
        self.k = 0                      # robot cycles sent
        self.outstanding = None         # the stamp of the state awaiting its answer
        self.answer = None              # the target its answer brought
        self.late = 0                   # late answers (RSI: in all; EGM: in a row)
        self.stopped: str | None = None  # why the robot's interface stopped
        self.answers = 0
        self.states_sent = 0
        self.refused: dict[str, int] = {}
        self._pose = np.zeros(7)
        self._lengths = np.zeros(6)

    # ------------------------------------------------------------------ kinematics
    def tcp_now(self) -> tuple:
        """The robot's measured TCP pose in its base R (the world's platform top through the
        calibration)."""
        p = self.world.top_pose
        top = ((float(p[0]), float(p[1]), float(p[2])), (float(p[3]), float(p[4]), float(p[5]), float(p[6])))
        return self.calibration.tcp_of(top)

    def _lengths_of(self, tcp) -> np.ndarray:
        (x, y, z), q = self.calibration.top_of(tcp)
        self._pose[:] = (x, y, z, *q)
        self.hex.inverse(self._pose, self._lengths)
        return self._lengths

    def _setpoint(self) -> tuple:
        """The set-point within the robot's cycle: the ramp from the last target to the new."""
        f = ((self.ticks % self.n) + 1) / self.n
        (p0, q0), (p1, q1) = self.cmd_prev, self.cmd_next
        p = tuple(a + f * (b - a) for a, b in zip(p0, p1))
        if sum(a * b for a, b in zip(q0, q1)) < 0.0:
            q1 = tuple(-v for v in q1)
        q = RP.normalize(tuple(a + f * (b - a) for a, b in zip(q0, q1)))
        return p, q

    # ------------------------------------------------------------------ one tick
    def tick(self, msgs=None) -> None:
        """One controller period: the controller's datagrams of this period, the world, the
        robot's cycle when one ends, the sensor's sample."""
        if msgs is None:
            msgs = [m for m in self.p_tr.poll()]
        for data in msgs:
            self._receive(data)
        self.world.advance(self._lengths_of(self._setpoint()).copy(), self.period)
        self.t += self.period
        self.ticks += 1
        if self.world.platform_fault and self.stopped is None:
            self.stopped = "the robot hit its motion limits (the stand's virtual legs)"
        if self.ticks % self.n == 0:
            self._robot_cycle()
        self.sample_sensor(self.t)

    def _receive(self, data: bytes) -> None:
        if data == LOCKSTEP_TICK:
            return
        target, why, matched = self.wire.answer(data, self.outstanding, self.start_tcp)
        if why is not None:
            self.refused[why] = self.refused.get(why, 0) + 1
            return
        self.answers += 1
        if matched and target is not None:
            self.answer = target

    def _within_limits(self, tcp) -> str:
        p, q = tcp
        p0, q0 = self.start_tcp
        for k in range(3):
            if abs(p[k] - p0[k]) > self.trans_lim + 1e-9:
                return f"correction beyond {1e3 * self.trans_lim:g} mm"
        if RP.rotation_angle_deg(RP.quat_mul(q, RP.quat_conj(q0))) > self.rot_lim + 1e-9:
            return f"correction beyond {self.rot_lim:g} deg"
        return ""

    def _robot_cycle(self) -> None:
        """The end of a robot cycle: take the answer of the state sent a cycle ago (or count it
        late), start the ramp to its target, send the next state."""
        if self.stopped is not None:
            self.cmd_prev = self.cmd_next
            return
        if self.outstanding is not None:
            if self.answer is not None:
                why = self._within_limits(self.answer)
                if why:
                    self.stopped = f"the robot's correction monitor stopped the interface: {why}"
                else:
                    self.cmd_prev, self.cmd_next = self.cmd_next, self.answer
                if self.wire.consecutive:
                    self.late = 0
            else:
                self.late += 1
                self.cmd_prev = self.cmd_next
                if self.late >= self.late_limit:
                    self.stopped = f"{self.late} late answers: the robot's limit ({self.late_limit}) stopped the interface"
        else:
            self.cmd_prev = self.cmd_next
        self.answer = None
        F = self.faults
        if F.active("robot_stop", self.t) and self.stopped is None:
            self.stopped = "the robot's external-motion interface was stopped (fault robot_stop)"
        if self.stopped is not None or F.active("robot_silent", self.t) or F.active("link_loss", self.t):
            self.outstanding = None
            return
        self._send_state()

    def _send_state(self) -> None:
        data, stamp = self.wire.state(self.k, self.tcp_now(), self.cmd_next, self.start_tcp, self.late,
                                      self.stopped is None)
        self.k += 1
        self.outstanding = stamp
        self.p_tr.send(data)
        self.states_sent += 1

    # ------------------------------------------------------------------ modes
    def run_lockstep(self, stop=lambda: False, idle_timeout_s: float | None = None) -> int:
        """One tick per datagram from the controller. Before its clock starts the robot offers
        its first state, again only while the controller's port refuses it (not yet open)."""
        from rt.control.links import wait_readable
        tr = self.p_tr
        self._send_state()
        last = time.monotonic()
        started = False
        while not stop():
            if not wait_readable(tr, time.monotonic() + 0.05):
                if not started and not tr._peer_ok:      # ICMP port unreachable: nobody listens yet
                    tr._peer_ok = True
                    tr.last_error = None
                    self.k -= 1
                    self.states_sent -= 1
                    self._send_state()
                if idle_timeout_s is not None and time.monotonic() - last > idle_timeout_s:
                    break
                continue
            last = time.monotonic()
            msgs = tr.poll()
            if not msgs and not started and not tr._peer_ok:
                tr._peer_ok = True
                self.k -= 1
                self.states_sent -= 1
                self._send_state()
                continue
            for m in msgs:
                started = True
                self.tick([m])
        return self.ticks

    def realtime_tick(self) -> None:
        """The emulator's wall-clock period; the robot sends its state every n ticks to the
        controller's address whether or not a controller listens yet."""
        self.p_tr._peer_ok = True       # a controller not yet listening is no reason to stop sending
        self.tick()

    def summary(self) -> dict:
        out = super().summary()
        out.update({"robot_protocol": self.protocol, "robot_states_sent": self.states_sent,
                    "robot_answers": self.answers, "robot_late": self.late, "robot_stopped": self.stopped,
                    "robot_refused": dict(self.refused)})
        return out
