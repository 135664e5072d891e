"""A kinematic rig for the controller over real memory transports (tests, benchmarks): the
device ends speak the real protocols (drivers.MotionPlatformDevice, drivers.SerialSensorDevice); the stand behind them
is kinematic (the platform reaches each POSE set-point after ``lag_cycles``, a LENGTHS
set-point through the hexapod's forward kinematics; the sensor reports ``w_S`` plus a
deterministic +-1 count dither, as real gauges never repeat exactly). Faults are injected from
the device side by flags. The physics of a real stand is the emulator's (sim_stand); this rig
tests the controller's logic cycle by cycle.

``contact=(x_m, damping_n_s_per_m)``: a latching damper between the docking units. Once A's
origin reaches ``x_m`` along x_P (A in P, from the platform's pose through the stand geometry),
the units are "captured": the sensor also reports the force ``c v_rel`` on the passive unit (v_rel
= rate of A's origin in P, from consecutive platform poses), applied at P's origin, for good —
the relative motion dies out and the units stay together (capture and settling)."""
from __future__ import annotations

import itertools
from collections import deque
from pathlib import Path

import numpy as np

from drivers.framing import encode_frame
from drivers.ft_sensor import FtSensor, SerialSensorDevice
from drivers.motion_platform import Command, MotionPlatform, MotionPlatformDevice, PlatformState
from drivers.transport import memory_pair
from rt.control.clock import StepClock
from rt.dynamics import spatial as SP
from rt.config.case import Case
from rt.config.stand import load_stand
from rt.analysis.audit import run_audit
from rt.control.controller import Controller, Phase, stand_geometry

REPO = Path(__file__).resolve().parents[1]
STAND = REPO / "config" / "stand.toml"
NOMINAL = REPO / "config" / "cases" / "nominal.toml"
_names = itertools.count()


def _dcm(q) -> np.ndarray:
    """R (parent <- child) of a unit quaternion [w, x, y, z] (``spatial.quat_to_dcm``), a new array."""
    R = np.empty((3, 3))
    SP.quat_to_dcm(np.ascontiguousarray(q, dtype=np.float64), R)
    return R


class Rig:
    def __init__(self, log_dir, *, compensate=True, lag_cycles=0, telemetry=False, stand=None, contact=None,
                 **ctl_kw):
        self.stand = stand or load_stand(STAND)
        n = next(_names)
        s_host, s_dev = memory_pair(f"rig-sensor-{n}", capacity=100000)
        p_host, p_dev = memory_pair(f"rig-platform-{n}", capacity=100000)
        cpu = self.stand.sensing.counts_per_unit
        self.cpu = cpu
        sensor = FtSensor(s_host, "serial", channels=6, counts_per_force=float(cpu[0]),
                          counts_per_torque=float(cpu[3]))
        platform = MotionPlatform(p_host, heartbeat_s=0.0)
        self.ctl = Controller(self.stand, sensor=sensor, platform=platform, compensate=compensate,
                              telemetry=telemetry, log_dir=log_dir, auditor=run_audit, **ctl_kw)
        self.ctl.open()
        self.sdev = SerialSensorDevice(s_dev, 6)
        self.pdev = MotionPlatformDevice(p_dev)
        self.p_dev_tr, self.s_dev_tr = p_dev, s_dev
        self.state = PlatformState.IDLE
        self.fault = 0
        self.pose = self.stand.hexapod.home.copy()
        self.lengths = np.zeros(6)
        self.ctl.hexapod.inverse(self.pose, self.lengths)
        self.lag = deque([self.pose.copy() for _ in range(lag_cycles + 1)], maxlen=lag_cycles + 1)
        self.last_seq = 0
        self.w_S = np.zeros(6)
        self.k = 0
        # fault flags
        self.sensor_silent = False
        self.platform_silent = False
        self.sensor_frozen = False
        self.corrupt = 0              # corrupt frames to send per cycle
        self.commands: list = []      # every command the device received: (cycle, Command, values)
        self.command_t: list = []     # controller time (s) of the cycle that sent each of them
        self.contact = contact
        self.captured_at: int | None = None   # device period of the capture (contact model)
        self.w_contact = np.zeros(6)
        self._r_prev: np.ndarray | None = None
        if contact is not None:
            g = stand_geometry(self.stand)
            self._p_BP, self._R_BP = g[0:3].copy(), _dcm(g[3:7])
            self._p_TA, self._R_TA = self.stand.active_mount.p.copy(), self.stand.active_mount.R.copy()
            self._R_PS, self._p_PS = self.stand.sensor_mount.R.copy(), self.stand.sensor_mount.p.copy()
        self.clock = StepClock(gate=self.gate)
        self.loop = self.ctl.make_loop(self.clock)

    def gate(self, deadline_ns):
        """One device period: take the commands, move, answer with STATUS and one sample."""
        self.k += 1
        for c in self.pdev.poll():
            self.commands.append((self.ctl.loop.cycles, c.command, c.values))
            self.command_t.append(self.ctl.t)   # the frame was sent by the last cycle
            self.last_seq = c.seq
            if c.command is Command.ENGAGE and self.state in (PlatformState.IDLE, PlatformState.FROZEN):
                self.state = PlatformState.ENGAGED
            elif c.command is Command.FREEZE and self.state is PlatformState.ENGAGED:
                self.state = PlatformState.FROZEN
            elif c.command is Command.E_STOP:
                self.state = PlatformState.E_STOPPED
            elif c.command is Command.RESET_FAULT and self.state in (PlatformState.FAULT, PlatformState.E_STOPPED):
                self.state, self.fault = PlatformState.IDLE, 0
            elif c.command is Command.PARK and self.state in (PlatformState.ENGAGED, PlatformState.FROZEN):
                self.state = PlatformState.IDLE
            elif c.command is Command.POSE and self.state is PlatformState.ENGAGED:
                self.lag.append(np.array(c.values))
            elif c.command is Command.LENGTHS and self.state is PlatformState.ENGAGED:
                pose = np.empty(7)
                st, _ = self.ctl.hexapod.forward(np.array(c.values), pose, self.lag[-1])
                assert st == 0, f"forward kinematics failed for {c.values}"
                self.lag.append(pose)
        if self.state is PlatformState.ENGAGED:
            self.pose = self.lag[0].copy()
            self.ctl.hexapod.inverse(self.pose, self.lengths)
        if not self.platform_silent:
            self.pdev.send_status(self.state, self.fault, self.last_seq, self.pose, self.lengths,
                                  device_time=self.k * 1e-3)
        if self.contact is not None:
            self._contact()
        if not self.sensor_silent:
            dither = 0 if self.sensor_frozen else (1 if self.k % 2 else -1)
            counts = np.round((self.w_S + self.w_contact) * self.cpu).astype(np.int64) + dither
            self.sdev.send_sample(counts.tolist(), device_time=self.k * 1e-3)
        for _ in range(self.corrupt):
            f = bytearray(encode_frame(0x20, self.sdev.seq, 0, b"\0" * 24))
            f[-1] ^= 0xFF
            self.s_dev_tr.send(bytes(f))

    def rel_position(self) -> np.ndarray:
        """A's origin in P (P components) for the platform's present pose."""
        p_BT, R_BT = self.pose[:3], _dcm(self.pose[3:7])
        p_BA = p_BT + R_BT @ self._p_TA
        return self._R_BP.T @ (p_BA - self._p_BP)

    def _contact(self):
        x_m, c = self.contact
        r = self.rel_position()
        if self.captured_at is None and r[0] >= x_m:
            self.captured_at = self.k
        if self.captured_at is not None and self._r_prev is not None:
            f_P = c * (r - self._r_prev) / (self.stand.period_ns * 1e-9)
            self.w_contact[:3] = self._R_PS.T @ f_P
            self.w_contact[3:] = self._R_PS.T @ (-np.cross(self._p_PS, f_P))
        self._r_prev = r

    def run(self, n):
        return self.loop.run(n)

    def run_until(self, pred, max_cycles):
        return self.ctl.run_until(pred, max_cycles)

    def arm_and_start(self, case=NOMINAL, max_cycles=20000):
        c = self.ctl
        self.run(3)
        r = c.command("load_case", case=case if isinstance(case, Case) else str(case))
        assert r.ok, r.reason
        r = c.command("arm")
        assert r.ok, r.reason
        self.run_until(lambda k: k.phase is Phase.READY or k.supervisor.safe, max_cycles)
        assert c.phase is Phase.READY, (c.phase, c.trip_text)
        r = c.command("start")
        assert r.ok, r.reason

    def sent_poses(self):
        return np.array([v for _, cmd, v in self.commands if cmd is Command.POSE])

    def close(self):
        self.ctl.close()
        for t in (self.p_dev_tr, self.s_dev_tr):
            t.close()
