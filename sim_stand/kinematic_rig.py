"""A kinematic rig for the controller over real memory transports (tests, benchmarks): the
device ends speak the real protocols (drivers.MotionPlatformDevice, drivers.SerialSensorDevice); the stand behind them
is kinematic (the platform reaches each POSE set-point after ``lag_cycles``; the sensor
reports ``w_S`` plus a deterministic +-1 count dither, as real gauges never repeat exactly).
Faults are injected from the device side by flags. The physics of a real stand is the
emulator's (sim_stand); this rig tests the controller's logic cycle by cycle."""
from __future__ import annotations

import itertools
from collections import deque
from pathlib import Path

import numpy as np

from drivers.framing import encode_frame
from drivers.ft_sensor import FtSensor, SerialSensorDevice
from drivers.motion_platform import Command, MotionPlatform, MotionPlatformDevice, PlatformState
from drivers.transport import memory_pair
from rt.clock import StepClock
from rt.config.stand import load_stand
from rt.controller import Controller, Phase

REPO = Path(__file__).resolve().parents[1]
STAND = REPO / "config" / "stand.toml"
NOMINAL = REPO / "config" / "cases" / "nominal.toml"
_names = itertools.count()


class Rig:
    def __init__(self, log_dir, *, compensate=True, lag_cycles=0, telemetry=False, stand=None, **ctl_kw):
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
                              telemetry=telemetry, log_dir=log_dir, **ctl_kw)
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
        self.clock = StepClock(gate=self.gate)
        self.loop = self.ctl.make_loop(self.clock)

    def gate(self, deadline_ns):
        """One device period: take the commands, move, answer with STATUS and one sample."""
        self.k += 1
        for c in self.pdev.poll():
            self.commands.append((self.ctl.loop.cycles, c.command, c.values))
            self.last_seq = c.seq
            if c.command is Command.ENGAGE and self.state in (PlatformState.IDLE, PlatformState.FROZEN):
                self.state = PlatformState.ENGAGED
            elif c.command is Command.FREEZE and self.state is PlatformState.ENGAGED:
                self.state = PlatformState.FROZEN
            elif c.command is Command.POSE and self.state is PlatformState.ENGAGED:
                self.lag.append(np.array(c.values))
        if self.state is PlatformState.ENGAGED:
            self.pose = self.lag[0].copy()
            self.ctl.hexapod.inverse(self.pose, self.lengths)
        if not self.platform_silent:
            self.pdev.send_status(self.state, self.fault, self.last_seq, self.pose, self.lengths,
                                  device_time=self.k * 1e-3)
        if not self.sensor_silent:
            dither = 0 if self.sensor_frozen else (1 if self.k % 2 else -1)
            counts = np.round(self.w_S * self.cpu).astype(np.int64) + dither
            self.sdev.send_sample(counts.tolist(), device_time=self.k * 1e-3)
        for _ in range(self.corrupt):
            f = bytearray(encode_frame(0x20, self.sdev.seq, 0, b"\0" * 24))
            f[-1] ^= 0xFF
            self.s_dev_tr.send(bytes(f))

    def run(self, n):
        return self.loop.run(n)

    def run_until(self, pred, max_cycles):
        return self.ctl.run_until(pred, max_cycles)

    def arm_and_start(self, case=NOMINAL, max_cycles=20000):
        c = self.ctl
        self.run(3)
        r = c.command("load_case", case=str(case))
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
