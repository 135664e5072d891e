"""The controller's two device links: the F/T sensor and the motion platform (drivers), with
their counters and the lockstep gate (docs/controller.md, "Links").

A :class:`Links` owns both hardware interfaces (drivers.hardware: the stand's ``[platform]``
and ``[sensor]`` protocols from the registries, or given ones) and the cycle's received bytes. The framed links' checks
(CRC, framing, sequence) are delegated to the compiled scan (``rt.stand.wire_kernels``): the
scan's state lives in the controller's ``ins`` array (``rt.control.kernels`` ``IN_LK_*``)
and what it accepted and refused goes back to each transport's ``Counters`` here. An RDT
sensor (UDP, its own record format) is decoded and sequence-checked by its driver.

Real time: :meth:`Links.read`, :meth:`Links.add_counts`, :meth:`Links.count_refused` and
:meth:`Links.platform_state` are called by the loop thread every cycle; construction,
:meth:`Links.open`, :meth:`Links.close` and :meth:`Links.gate` (lockstep only, it waits) are
not real-time.
"""
from __future__ import annotations

import math
import time

import numpy as np

from drivers.framing import SEQ_STATE_LEN
from drivers.hardware import PlatformInterface, SensorInterface, platform_class, sensor_class
from drivers.motion_platform import PlatformState
from rt.config.stand import Stand
from rt.control import kernels as CK
from rt.stand import wire_kernels as WK


class Links:
    """Sensor and platform drivers built from the stand (default) or given (tests: memory
    transports); ``ins`` is the controller's cycle-input array, which holds the delegated
    checks' state and the samples / STATUS flags."""

    def __init__(self, stand: Stand, ins: np.ndarray, n_raw: int, *, sensor: SensorInterface | None = None,
                 platform: PlatformInterface | None = None, lockstep_timeout_s: float = 2.0):
        if sensor is None:          # the stand's [sensor] protocol, from the registry (drivers.hardware)
            sensor = sensor_class(stand.sensor_protocol)()
            sensor.configure(stand.sensor_link, stand)
        if platform is None:        # its [platform] protocol
            platform = platform_class(stand.platform_protocol)()
            platform.configure(stand.platform_link, stand)
        self.sensor: SensorInterface = sensor
        self.platform: PlatformInterface = platform
        if hasattr(platform, "heartbeat_s"):
            platform.heartbeat_s = 0.0  # the controller sends one frame every cycle itself
        self.ins = ins
        self.s_tr = self.sensor.transport
        self.p_tr = self.platform.transport
        self.framed_sensor = bool(self.sensor.framed)
        ins[CK.IN_NCH] = n_raw if self.framed_sensor else 0
        # the framed links' checks (CRC, framing, sequence) are the compiled scan's
        # (rt.stand.wire_kernels._walk); their counts go back to the links' Counters (add_counts)
        links = ((self.s_tr, CK.IN_LK_S), (self.p_tr, CK.IN_LK_P))
        self.checked = links if self.framed_sensor else links[1:]
        for tr, b in self.checked:
            tr.delegate_checks(ins[b + WK.LK_TRACK:b + WK.LK_TRACK + SEQ_STATE_LEN])
            ins[b + WK.LK_SEQ_ON] = tr.seq_check
            ins[b + WK.LK_RESTART_AFTER] = WK.RESTART_AFTER
        # the cycle's calls into the interfaces, bound once; an interface whose read is its
        # transport's poll says so (``fast_read``), and the loop calls that directly (one call
        # fewer per cycle on the hot path)
        self._s_read = getattr(self.sensor, "fast_read", None) or self.sensor.read
        self._p_read = getattr(self.platform, "fast_read", None) or self.platform.read
        self.s_counters = self.s_tr.counters
        self.send = getattr(self.platform, "fast_write", None) or self.platform.write
        self.sbuf = b""                         # this cycle's sensor frames, concatenated
        self.pbuf = b""                         # this cycle's platform frames, concatenated
        self.outstanding = 0                    # lockstep: frames sent whose answer has not been awaited
        self.lockstep_timeout_s = float(lockstep_timeout_s)
        self.cycle_time = time.monotonic()      # time.monotonic() at the last cycle's link accounting
        self._gate_misses = 0
        # a platform that answers only every n-th cycle (an industrial robot: drivers.robot_platform)
        # says after each lockstep cycle which answers are due (and sends its lockstep tick)
        self._handshake = getattr(platform, "lockstep_handshake", None)

    # ------------------------------------------------------------------ lifecycle (not real-time)
    def open(self) -> None:
        self.sensor.activate()
        self.platform.activate()

    def close(self) -> None:
        for d in (self.platform, self.sensor):
            try:
                d.deactivate()
            except Exception:  # noqa: BLE001 - closing must go on
                pass

    @property
    def is_open(self) -> bool:
        return self.s_tr.is_open and self.p_tr.is_open

    # ------------------------------------------------------------------ the cycle (real-time)
    def read(self, raw: np.ndarray) -> None:
        """Every frame of both links since the last cycle, as received (the compiled kernels
        decode them). RDT: the driver decodes the records and the newest sample's counts go
        to ``raw``."""
        if self.framed_sensor:
            self.sbuf = self._s_read()
        else:   # RDT: the driver decodes and sequence-checks the records
            samples = self._s_read()
            ins = self.ins
            ins[CK.IN_NEW_SAMPLE] = 1.0 if samples else 0.0
            if samples:
                raw[:] = samples[-1].counts
                ins[CK.IN_SENSOR_STATUS] = samples[-1].status
                ins[CK.IN_SAMPLES] += len(samples)
        self.pbuf = self._p_read()

    def add_counts(self, s_acc: int, p_acc: int, refused, now: float) -> None:
        """What the compiled scan accepted (``s_acc``, ``p_acc`` frames, received by
        ``time.monotonic()`` = ``now``) and, if ``refused``, refused this cycle into the links'
        Counters, as the transports' own checks would have counted it."""
        self.cycle_time = now
        if p_acc or s_acc:
            if p_acc:
                self.p_tr.accepted(p_acc, now)
            if s_acc:
                self.s_tr.accepted(s_acc, now)
        if refused:
            for tr, b in self.checked:
                WK.add_link_errors(tr.counters, self.ins, b)

    def count_refused(self) -> None:
        """Frames the compiled scan refused go to their link's ``malformed`` counter (as the
        drivers' own decoders count them)."""
        ins = self.ins
        if ins[CK.IN_S_BAD]:
            self.s_tr.counters.malformed += int(ins[CK.IN_S_BAD])   # ingest counted them in IN_BAD_PREV
            ins[CK.IN_S_BAD] = 0.0
        if ins[CK.IN_P_BAD]:
            self.p_tr.counters.malformed += int(ins[CK.IN_P_BAD])
            ins[CK.IN_P_BAD] = 0.0

    def platform_state(self, meas: np.ndarray) -> PlatformState | None:
        """The state of the newest valid STATUS ``meas`` (None before the first)."""
        return PlatformState(int(meas[WK.ST_STATE])) if self.ins[CK.IN_STATUS_SEEN] else None

    @property
    def samples(self) -> int:
        """Sensor samples received since the links were built."""
        return int(self.ins[CK.IN_SAMPLES])

    @staticmethod
    def frame_age_s(tr) -> float:
        """Wall-clock seconds since the link's last accepted frame (inf: never heard). Not for
        the cycle's hot path (reads the clock)."""
        t = tr.counters.last_rx_time
        return math.inf if t is None else time.monotonic() - t

    @staticmethod
    def link_report(tr) -> dict:
        """One link for ``status``: where it goes, whether its device was ever heard, and how
        long ago (not real-time: reads the clock and formats)."""
        age = Links.frame_age_s(tr)
        seen = math.isfinite(age)
        return {"device": tr.describe(), "status": tr.status, "seen": seen,
                "last_frame_age_s": round(age, 6) if seen else None}

    def silence(self, tr) -> str:
        """Why a link is silent, in words: never heard, or for how long, and where it goes."""
        age = self.frame_age_s(tr)
        when = f"nothing for {age:.3f} s" if math.isfinite(age) else "never heard"
        return f"{tr.describe()}: {when}; {tr.status}"

    @staticmethod
    def last_frame(tr, t_now: float) -> str:
        """A lost link in words: where it goes and when its last frame came, as controller time
        (``t_now`` is the controller's clock now) and as an age (not real-time: formats)."""
        age = Links.frame_age_s(tr)
        if not math.isfinite(age):
            return f"{tr.describe()}: never heard"
        return f"{tr.describe()}: last frame at t = {t_now - age:.3f} s ({age:.3f} s ago)"

    def platform_age_s(self) -> float:
        """How old the newest valid STATUS was at the last cycle, s (inf before the first): a
        command judged between cycles (the arm guard) sees the link as the loop last saw it,
        however long its own preparation took."""
        t = self.p_tr.counters.last_rx_time
        return math.inf if t is None else max(0.0, self.cycle_time - t)

    def seen(self) -> bool:
        """Both devices have been heard: a sensor sample and a platform STATUS."""
        return bool(self.ins[CK.IN_SAMPLES]) and bool(self.ins[CK.IN_STATUS_SEEN])

    # ------------------------------------------------------------------ lockstep (waits)
    def gate(self) -> None:
        """StepClock gate: wait (wall time, bounded) for the emulator's answer to the last frame."""
        if not self.outstanding:
            return
        self.outstanding = 0
        if self._handshake is not None:
            return self._gate_robot()
        # the STATUS is the emulator's answer to the frame; the sensor sample was sent just
        # before it. A silent emulator costs the full timeout once, then only a short wait per
        # cycle (so a safe stop is not slowed down by a dead link).
        wait = self.lockstep_timeout_s if self._gate_misses == 0 else 0.01
        got = wait_readable(self.p_tr, time.monotonic() + wait)
        self._gate_misses = 0 if got else self._gate_misses + 1
        wait_readable(self.s_tr, time.monotonic() + (0.05 if got else 0.0))


    def _gate_robot(self) -> None:
        """Lockstep with a robot that is the clock master (drivers.robot_platform): the sensor's
        sample answers every cycle, the robot's state every n-th (the platform says which are
        due); a silent device costs the full timeout once, then a short wait per cycle."""
        sensor_due, robot_due = self._handshake()
        wait = self.lockstep_timeout_s if self._gate_misses == 0 else 0.01
        got = True
        if sensor_due:
            got = wait_readable(self.s_tr, time.monotonic() + wait)
        if robot_due:
            got = wait_readable(self.p_tr, time.monotonic() + (wait if got else 0.01)) and got
        self._gate_misses = 0 if got else self._gate_misses + 1


def wait_readable(transport, t_end: float) -> bool:
    """Block (bounded by the wall-clock instant ``t_end``) until ``transport`` has something to
    read, in waits of at most 50 ms on what the backend owns (its ``wait_readable``: a
    descriptor, a socket's poll, a queue). Not real-time: the lockstep gate and the emulator
    use it."""
    while True:
        left = t_end - time.monotonic()
        if left <= 0:
            return False
        if transport.wait_readable(min(left, 0.05)):
            return True
    return None
