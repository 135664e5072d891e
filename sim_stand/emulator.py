"""The stand emulator: the emulated world (sim_stand/world.py) behind the real protocols
(issue 7 items 1, 3, 4; docs/emulator.md).

* :class:`PlatformDevice` — the motion base's controller as a real one behaves: states IDLE,
  ENGAGED, FROZEN, FAULT, E_STOPPED; ENGAGE holds the present lengths; POSE set-points go
  through ``rt.stand.hexapod`` inverse kinematics (an unreachable pose is a POSE_LIMIT fault, never
  a motion); LENGTHS set-points are range-checked (LENGTH_LIMIT); FREEZE and E_STOP hold the
  present lengths; RESET_FAULT returns to IDLE; a command watchdog (no frame for
  ``watchdog_s`` while ENGAGED) is a WATCHDOG fault; a stroke hit in the physics is a
  LENGTH_LIMIT fault. Set-points outside ENGAGED are ignored and counted.
* :class:`SensorDevice` — ``sim_stand.ft_sensor_model`` (the sensor's own chain: the physics
  sampled at its internal rate, its low-pass, the decimation to the frame; noise, drift,
  saturation, inverse calibration, quantisation) feeding the framed serial protocol or ATI RDT
  over UDP.
* :class:`Emulator` — one :meth:`tick` is one controller period: take the platform frames,
  advance the world, answer with one sensor sample and one STATUS (its digital inputs carry
  the emulated mechanism's capture and latch signals on the bits ``[platform.inputs]`` wires,
  as the mechanism's control unit would). ``lockstep`` mode ticks
  once per received platform frame (deterministic, faster than real time); ``realtime`` mode
  ticks on absolute deadlines of the wall clock, sleeping in between (it never spins, so it
  does not starve a controller on the same machine).
* Fault injection (:class:`Faults`, from ``dockstand emulate --fault NAME@T``): sensor
  dropout, garbage bytes on the sensor line, frozen sensor values, platform FAULT, platform
  lag beyond spec, link loss.

The emulator is the device end of each link: where the stand config says ``connect`` it binds
(zmq), on a serial link it creates a PTY pair and puts a symlink at the configured port path,
on UDP it listens on the configured port.
"""
from __future__ import annotations

import json
import sys

import logging
import os
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from drivers.framing import encode_frame
from drivers.ft_sensor import RdtDevice, SerialSensorDevice
from drivers.motion_platform import Command, FaultCode, Mode, MotionPlatformDevice, PlatformState
from drivers.transport import make_transport
from rt.stand import hexapod as HX
from rt.stand.frames import gravity_in_P
from rt.config.stand import Stand
from rt.config import ConfigError
from sim_stand.ft_sensor_model import STATUS_SATURATED, FtSensorModel, SensorChain, SensorNoise
from sim_stand.ft_sensor_model import seed as ft_seed

log = logging.getLogger("dockstand.emulator")

FAULT_NAMES = ("sensor_dropout", "garbage", "sensor_frozen", "sensor_saturated", "platform_fault", "platform_lag",
               "platform_slower", "link_loss", "status_loss", "load_spike",
               # an emulated industrial robot (sim_stand.robot_twin): it stops sending its state; its
               # external-motion interface stops (RSI off, EGM stopped)
               "robot_silent", "robot_stop",
               # the mechanism's control unit (a stand with [mechanism_io]): it reports a fault code
               # (sim_stand.mechanism_unit.FAULT_CODE) on its fault register; its latch and capture
               # inputs stuck open (a cut wire: the latches close, the unit never says so)
               "mechanism_fault", "latch_inputs_stuck")


@dataclass
class Faults:
    """Injected faults: name -> start time (s of emulator time), and optionally name -> end
    time (``until``: the fault is over from then on; ``--fault NAME@T0:T1``). ``platform_lag_s``
    is the extra command delay of the ``platform_lag`` fault (beyond spec),
    ``platform_slower_s`` that of ``platform_slower`` (within spec: a platform whose delay grows
    mid-run); ``status_loss`` silences the platform's STATUS only (the sensor streams on);
    ``load_spike`` adds ``load_spike_n`` along the passive unit's y axis to what the sensor
    measures (a blow on the stand). A running emulator's faults may be switched by another
    thread (:meth:`start`, :meth:`end`: one dict assignment each; the recovery drills)."""

    at: dict[str, float] = field(default_factory=dict)
    until: dict[str, float] = field(default_factory=dict)
    platform_lag_s: float = 0.2
    platform_slower_s: float = 0.001
    garbage_bytes: int = 64
    load_spike_n: float = 8000.0

    @classmethod
    def parse(cls, specs: list[str] | None) -> "Faults":
        f = cls()
        for spec in specs or []:
            name, _, t = spec.partition("@")
            if name not in FAULT_NAMES:
                raise ValueError(f"--fault {spec!r}: unknown fault {name!r}; known: {', '.join(FAULT_NAMES)}")
            t0, _, t1 = t.partition(":")
            try:
                f.at[name] = float(t0) if t0 else 0.0
                if t1:
                    f.until[name] = float(t1)
            except ValueError:
                raise ValueError(f"--fault {spec!r}: the times after @ must be seconds (T0 or T0:T1)") from None
            if name in f.until and not f.until[name] > f.at[name]:
                raise ValueError(f"--fault {spec!r}: the end must come after the start")
        return f

    def active(self, name: str, t: float) -> bool:
        t0 = self.at.get(name)
        if t0 is None or t < t0:
            return False
        t1 = self.until.get(name)
        return t1 is None or t < t1

    def start(self, name: str, t: float, duration_s: float | None = None) -> None:
        """Switch ``name`` on from ``t`` (for ``duration_s``, or until :meth:`end`)."""
        if name not in FAULT_NAMES:
            raise ValueError(f"unknown fault {name!r}; known: {', '.join(FAULT_NAMES)}")
        if duration_s is None:
            self.until.pop(name, None)
        else:
            self.until[name] = t + duration_s
        self.at[name] = t

    def end(self, name: str) -> None:
        self.at.pop(name, None)
        self.until.pop(name, None)


class PlatformDevice:
    """The emulated motion base's controller (module docstring)."""

    def __init__(self, hexapod: HX.Hexapod, watchdog_s: float = 0.1):
        self.hex = hexapod
        self.state = PlatformState.IDLE
        self.fault = FaultCode.NONE
        self.mode = Mode.NONE
        self.watchdog_s = watchdog_s
        self.target = np.zeros(6)       # actuator length set-point handed to the physics
        self.last_seq = 0
        self.last_frame_t = 0.0
        self.ignored = 0
        self._L = np.zeros(6)
        self._detail = np.zeros(2)

    def hold(self, lengths: np.ndarray) -> None:
        self.target[:] = lengths

    def apply(self, cmd, t: float, lengths_now: np.ndarray) -> None:
        self.last_seq = cmd.seq
        self.last_frame_t = t
        c = cmd.command
        s = self.state
        if c is Command.HEARTBEAT:
            return
        if c is Command.E_STOP:
            self.state, self.fault = PlatformState.E_STOPPED, FaultCode.NONE
            self.hold(lengths_now)
        elif c is Command.RESET_FAULT:
            if s in (PlatformState.FAULT, PlatformState.E_STOPPED):
                self.state, self.fault = PlatformState.IDLE, FaultCode.NONE
        elif c is Command.ENGAGE:
            if s in (PlatformState.IDLE, PlatformState.FROZEN):
                self.state = PlatformState.ENGAGED
                self.hold(lengths_now)
            else:
                self.ignored += 1
        elif c is Command.FREEZE:
            if s is PlatformState.ENGAGED:
                self.state = PlatformState.FROZEN
                self.hold(lengths_now)
        elif c is Command.PARK:
            if s in (PlatformState.ENGAGED, PlatformState.FROZEN):
                self.state = PlatformState.IDLE
                self.hold(lengths_now)
        elif c is Command.POSE or c is Command.LENGTHS:
            if s is not PlatformState.ENGAGED:
                self.ignored += 1
                return
            v = np.asarray(cmd.values, dtype=np.float64)
            if c is Command.POSE:
                code = HX.check_pose(self.hex.g.base, self.hex.g.top, self.hex.g.limits, self.hex.g.box, v,
                                     self._L, self._detail)
                if code != 0:
                    self._fault(FaultCode.POSE_LIMIT, lengths_now)
                    return
                self.target[:] = self._L
                self.mode = Mode.POSE
            else:
                code = HX.check_lengths(self.hex.g.limits, v, self._detail)
                if code != 0:
                    self._fault(FaultCode.LENGTH_LIMIT, lengths_now)
                    return
                self.target[:] = v
                self.mode = Mode.LENGTHS

    def _fault(self, code: FaultCode, lengths_now) -> None:
        self.state, self.fault = PlatformState.FAULT, code
        self.hold(lengths_now)

    def check(self, t: float, physics_fault: int, lengths_now: np.ndarray) -> None:
        if self.state is PlatformState.ENGAGED:
            if physics_fault:
                self._fault(FaultCode.LENGTH_LIMIT, lengths_now)
            elif self.watchdog_s and t - self.last_frame_t > self.watchdog_s:
                self._fault(FaultCode.WATCHDOG, lengths_now)


class SensorDevice:
    """The emulated F/T sensor: model + its chain + the configured protocol's device end.
    ``chain``: the sensor's own chain (emulator ``[sensor]``; default a Net F/T's without a
    filter), run over frames of the stand's period on a physics of step ``physics_dt_s``;
    ``emu_file`` names the emulator file in a ConfigError when the chain does not fit the stand."""

    def __init__(self, stand: Stand, transport, noise: SensorNoise, seed: int = 1, chain: SensorChain | None = None,
                 physics_dt_s: float = 1e-4, emu_file=None):
        sp = stand.sensing
        chain = chain or SensorChain()
        period = stand.period_ns * 1e-9
        self.model = FtSensorModel(sp.calibration, sp.counts_per_unit, sp.p_PS_P, sp.R_PS, noise,
                                   stand.sensor_rate_hz, rng_seed=seed)
        try:
            self.model.set_chain(chain, period, physics_dt_s)
        except ValueError as e:
            raise ConfigError(emu_file or "emulator config", "sensor.internal_rate_hz",
                              f"{e} (the stand's [loop] rate_hz = {1.0 / period:g} Hz)") from None
        self.seed = int(seed)
        self.protocol = stand.sensor_protocol
        if self.protocol == "rdt":
            # ft_sequence counts the emulated sensor's own internal samples
            self.dev = RdtDevice(transport, records_per_packet=1, internal_rate_hz=chain.internal_rate_hz,
                                 output_rate_hz=stand.sensor_rate_hz)
        else:
            self.dev = SerialSensorDevice(transport, sp.calibration.shape[1])
        self.transport = transport
        self.counts = np.zeros(sp.calibration.shape[1], dtype=np.int64)
        self.frozen_counts: np.ndarray | None = None
        self._model_args = (sp.calibration, sp.counts_per_unit, sp.p_PS_P, sp.R_PS, noise, stand.sensor_rate_hz)
        self._chain_args = (chain, period, physics_dt_s)

    def warm_up(self) -> None:
        """Compile the sensor model's kernels on a throwaway copy (the real one's noise and
        drift state stay untouched, so runs stay deterministic)."""
        m = FtSensorModel(*self._model_args, rng_seed=0)
        m.sample(np.zeros(6))
        m.set_chain(*self._chain_args)
        m.reset_chain(np.zeros(6))
        n = int(round(self._chain_args[1] / self._chain_args[2]))
        m.sample_frame(np.zeros((n + 1, 6)), n, np.zeros(6))
        # numba's generator is one per process: the throwaway's seed replaced ours (every run
        # drew the seed-0 stream, whatever [sensor] seed said) -- seed it again
        ft_seed(self.seed)

    def reset(self, w_P: np.ndarray) -> None:
        """The chain at rest under the wrench ``w_P`` on the passive unit (P) at t = 0."""
        self.model.reset_chain(w_P)

    def sample(self, w_hist: np.ndarray, nsteps: int, offset_P: np.ndarray, t: float, frozen: bool = False,
               saturated: bool = False) -> None:
        """The sample of the frame ending at ``t``: the chain over the world's wrench at the
        frame's physics steps (``w_hist``, ``nsteps``; ``StandWorld.wrench_hist``) plus
        ``offset_P``, then the faults and the protocol."""
        status = self.model.sample_frame(w_hist, nsteps, offset_P)
        if saturated:                       # the device flags an overload (a gauge at full scale)
            status |= STATUS_SATURATED
        if frozen:
            if self.frozen_counts is None:
                self.frozen_counts = self.model.raw.astype(np.int64)
            self.counts[:] = self.frozen_counts
        else:
            self.frozen_counts = None        # a later freeze holds the values of its own start
            self.counts[:] = self.model.raw
        if self.protocol == "rdt":
            self.dev.poll()
            self.dev.publish(self.counts, status)
        else:
            self.dev.poll()
            self.dev.send_sample(self.counts, status, device_time=t)

    def garbage(self, n: int, rng: np.random.Generator) -> None:
        """Line noise: random bytes and a frame with a broken CRC."""
        junk = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        self.transport.send(junk)
        f = bytearray(encode_frame(0x20, 0, 0, b"\0" * 24))
        f[-1] ^= 0x5A
        self.transport.send(bytes(f))


def device_link(link: dict, tmp_dir: Path | None = None) -> tuple[dict, str | None]:
    """The device end of a controller link: zmq connect -> bind (and vice versa), a DEALER's
    device a ROUTER that serves one controller (and vice versa; drivers.transport.ZmqTransport:
    a second controller is refused and named on both sides); serial -> a new PTY pair whose
    slave is symlinked at the configured port (returns the PTY master fd path as the device
    port); udp -> listen on the configured port."""
    link = dict(link)
    kind = link.pop("transport")
    note = None
    if kind == "zmq":
        link["role"] = "bind" if link.get("role", "connect") == "connect" else "connect"
        link["pattern"] = {"dealer": "router", "router": "dealer"}.get(link.get("pattern", "pair"),
                                                                     link.get("pattern", "pair"))
    elif kind == "serial":
        relay = PtyRelay(Path(link["port"]))
        link["port"] = relay.device_path
        link["_keep"] = relay
        note = f"PTY pair: controller side {relay.host_path} (linked at {link_path(relay)}), device side {relay.device_path}"
    elif kind == "udp":
        port = link.pop("port", None) or 49152
        link.pop("host", None)
        link["local_port"] = port
        link["local_host"] = "127.0.0.1"
    return {"transport": kind, **link}, note


def link_path(relay) -> str:
    return str(relay.link)


class PtyRelay:
    """Two PTY pairs joined back to back by a relay thread (what ``socat pty pty`` does): the
    controller opens one slave through the symlink at the stand's configured port, the
    emulator opens the other slave with its own serial transport. Both ends are real
    serial devices (termios, raw mode)."""

    def __init__(self, link: Path):
        import threading
        import tty
        self.m1, s1 = os.openpty()
        self.m2, s2 = os.openpty()
        for fd in (self.m1, s1, self.m2, s2):
            tty.setraw(fd)
        self.host_path, self.device_path = os.ttyname(s1), os.ttyname(s2)
        self._slaves = (s1, s2)      # kept open so the masters never see EOF/EIO
        self.link = link
        if link.is_symlink():
            link.unlink()
        elif link.exists():
            raise FileExistsError(f"{link}: exists and is not a symlink the emulator may replace")
        link.symlink_to(self.host_path)
        self._stop = False
        self._t = threading.Thread(target=self._run, name="pty-relay", daemon=True)
        self._t.start()

    def _run(self) -> None:
        import select
        pair = {self.m1: self.m2, self.m2: self.m1}
        while not self._stop:
            r, _, _ = select.select(list(pair), [], [], 0.05)
            for fd in r:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    continue
                if data:
                    os.write(pair[fd], data)

    def close(self) -> None:
        self._stop = True
        self._t.join(timeout=1.0)
        for fd in (self.m1, self.m2, *self._slaves):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            if self.link.is_symlink():
                self.link.unlink()
        except OSError:
            pass


def _open(link: dict):
    link = dict(link)
    keep = link.pop("_keep", None)
    t = make_transport(link.pop("transport"), **link)
    t._keep = keep
    t.open()
    return t


class Emulator:
    """The whole stand in software (module docstring)."""

    def __init__(self, stand: Stand, world, *, emu=None, sensor_transport=None, platform_transport=None,
                 faults: Faults | None = None, seed: int = 1, start_pose: np.ndarray | None = None):
        self.stand = stand
        self.world = world
        self.emu = emu
        self.period = stand.period_ns * 1e-9
        self.faults = faults or Faults()
        self.notes: list[str] = []
        if sensor_transport is None:
            link, note = device_link(stand.sensor_link)
            sensor_transport = _open(link)
            if note:
                self.notes.append(f"sensor: {note}")
        if platform_transport is None:
            link, note = device_link(stand.platform_link)
            platform_transport = _open(link)
            if note:
                self.notes.append(f"platform: {note}")
        self.s_tr, self.p_tr = sensor_transport, platform_transport
        for name, tr in (("sensor", sensor_transport), ("platform", platform_transport)):
            if getattr(tr, "pattern", None) == "router":
                tr.on_refused = self._refused_reporter(name)
        noise = getattr(emu, "sensor_noise", None) or SensorNoise()
        self.sensor = SensorDevice(stand, sensor_transport, noise, seed, chain=getattr(emu, "sensor_chain", None),
                                   physics_dt_s=world.dt, emu_file=getattr(emu, "file", None))
        self.pdev = MotionPlatformDevice(platform_transport)
        self.hex = HX.Hexapod(stand.hexapod)
        self.platform = PlatformDevice(self.hex, watchdog_s=getattr(emu, "watchdog_s", 0.1))
        self._start_pose = stand.hexapod.home.copy() if start_pose is None else np.array(start_pose, dtype=np.float64)
        self.warm_up()
        self.world.reset(self._start_pose.copy())
        self.platform.hold(self.world.lengths)
        self.t = 0.0
        self.ticks = 0
        self._lag: deque = deque()
        self._rng = np.random.default_rng(seed)
        # the passive unit's weight, as the sensor feels it (removed by the controller's tare)
        m = float(getattr(emu, "passive_mass_kg", 0.0) or 0.0)
        c = np.asarray(getattr(emu, "passive_com_m", (0.1, 0.0, 0.0)), dtype=np.float64)
        g_P = gravity_in_P(stand, 9.80665)
        self.weight_P = np.concatenate([m * g_P, np.cross(c, m * g_P)])
        self.w_true = np.zeros(6)
        self.w_offset = np.zeros(6)      # added to the world's wrench (the weight, a blow), P
        self.sensor.reset(self.world.wrench_P + self.weight_P)
        self.status_sent = 0
        # the mechanism's control unit on Modbus TCP (a stand with [mechanism_io]; docs/platforms.md):
        # pymodbus's server in its own thread, its data store updated once per period
        self.unit = None
        if getattr(stand, "mechanism_io", None) is not None:
            from sim_stand.mechanism_unit import MechanismUnit
            self.unit = MechanismUnit(stand.mechanism_io)
            self.unit.start()
            self._update_unit(0.0)

    @staticmethod
    def _refused_reporter(link: str):
        """A second controller on a device link: said once per peer on stderr, as one JSON line
        (the first controller's session goes on untouched)."""
        def report(text: str) -> None:
            print(json.dumps({"event": "peer_refused", "link": link, "reason": text}), file=sys.stderr, flush=True)
        return report

    def warm_up(self) -> None:
        """Compile every kernel of a period before the first frame can arrive (a cold numba
        cache would otherwise stall the first lockstep period past the controller's patience):
        one world period from the start pose, then the world is reset."""
        self.world.reset(self._start_pose.copy())
        self.world.advance(self.world.lengths.copy(), self.period)
        self.sensor.warm_up()

    # ------------------------------------------------------------------ one period
    def tick(self, commands=None) -> None:
        """One controller period; ``commands`` = the platform commands of this period (default:
        whatever the link has)."""
        t = self.t
        F = self.faults
        for cmd in (self.pdev.poll() if commands is None else commands):
            self.platform.last_frame_t = t   # the watchdog sees every frame, even one applied late
            if cmd.command in (Command.POSE, Command.LENGTHS) and (F.active("platform_lag", t)
                                                                 or F.active("platform_slower", t)):
                extra = F.platform_lag_s if F.active("platform_lag", t) else F.platform_slower_s
                self._lag.append((t + extra, cmd))
                continue
            self.platform.apply(cmd, t, self.world.lengths)
        while self._lag and self._lag[0][0] <= t + 1e-9:
            self.platform.apply(self._lag.popleft()[1], t, self.world.lengths)
        if F.active("platform_fault", t) and self.platform.state is PlatformState.ENGAGED:
            self.platform._fault(FaultCode.DRIVE_FAULT, self.world.lengths)
        if self.unit is not None:          # the release output as the unit last read it
            self.world.release_mechanism(self.unit.release_on)
        self.world.advance(self.platform.target, self.period)
        self.t = t = t + self.period
        self.ticks += 1
        if self.unit is not None:
            self._update_unit(t)
        self.platform.check(t, self.world.platform_fault, self.world.lengths)
        silent = self.sample_sensor(t)
        if not silent and not F.active("status_loss", t):
            p = self.platform
            self.pdev.send_status(p.state, int(p.fault), p.last_seq, self.world.top_pose, self.world.lengths,
                                  p.mode, device_time=t, inputs=self.world.input_word(self.stand.mechanism_inputs))
            self.status_sent += 1

    def _update_unit(self, t: float) -> None:
        """The emulated mechanism's signals into its control unit's data store (soft capture, each
        capture latch; the emulated mechanism has no structural hooks or ring-position switch, so
        those inputs stay open) and the ``mechanism_fault`` fault's code."""
        from sim_stand.mechanism_unit import FAULT_CODE
        self.unit.fault = FAULT_CODE if self.faults.active("mechanism_fault", t) else 0
        closed = self.world.latches_closed()
        if self.faults.active("latch_inputs_stuck", t):
            self.unit.update(False, (False,) * len(closed))
        else:
            self.unit.update(self.world.captured, closed)

    def sample_sensor(self, t: float) -> bool:
        """The F/T sensor's sample of the period ending at ``t`` (the world's wrench on the passive
        unit over the period through the sensor's chain, its weight, the sensor faults); True
        when the faults silence every link. ``w_true``: the true wrench at ``t``."""
        F = self.faults
        self.w_offset[:] = self.weight_P
        if F.active("load_spike", t):
            self.w_offset[1] += F.load_spike_n
        self.w_true[:] = self.world.wrench_P
        self.w_true += self.w_offset
        silent = F.active("link_loss", t)
        if not silent and not F.active("sensor_dropout", t):
            w = self.world
            self.sensor.sample(w.wrench_hist, w.hist_steps, self.w_offset, t, frozen=F.active("sensor_frozen", t),
                               saturated=F.active("sensor_saturated", t))
        if not silent and F.active("garbage", t):
            self.sensor.garbage(F.garbage_bytes, self._rng)
        return silent

    # ------------------------------------------------------------------ modes
    def run_lockstep(self, stop=lambda: False, idle_timeout_s: float | None = None) -> int:
        """Tick once per platform frame received (each frame is one controller period)."""
        from rt.control.links import wait_readable
        last = time.monotonic()
        while not stop():
            if not wait_readable(self.p_tr, time.monotonic() + 0.05):
                if idle_timeout_s is not None and time.monotonic() - last > idle_timeout_s:
                    break
                continue
            last = time.monotonic()
            cmds = self.pdev.poll()
            for c in cmds:          # each frame is one controller period
                self.tick([c])
        return self.ticks

    def run_realtime(self, stop=lambda: False, duration_s: float | None = None) -> int:
        """Tick on absolute wall-clock deadlines, sleeping in between (never spinning)."""
        t0 = time.monotonic()
        k = 0
        while not stop() and (duration_s is None or self.t < duration_s):
            k += 1
            deadline = t0 + k * self.period
            rest = deadline - time.monotonic()
            if rest > 0:
                time.sleep(rest)
            elif rest < -0.1:  # far behind (suspended, overloaded): re-anchor instead of bursting
                t0 = time.monotonic() - k * self.period
            self.realtime_tick()
        return self.ticks

    def realtime_tick(self) -> None:
        """One period of :meth:`run_realtime` (a twin adds what its wall-clock mode needs)."""
        self.tick()

    def summary(self) -> dict:
        w = self.world
        out = {"t": self.t, "ticks": self.ticks, "captured": bool(w.captured), "events": list(w.events),
               "platform_state": self.platform.state.name, "platform_fault": self.platform.fault.name,
               "ignored_commands": self.platform.ignored}
        out.update(w.stats)
        return out

    def close(self) -> None:
        if self.unit is not None:
            self.unit.close()
        for t in (self.s_tr, self.p_tr):
            try:
                t.close()
            except Exception:  # noqa: BLE001
                pass
            keep = getattr(t, "_keep", None)
            if keep is not None:
                keep.close()


def install_signal_stop() -> list:
    """SIGTERM/SIGINT set a flag (returned as a one-element list) instead of killing."""
    flag = [False]

    def h(signum, frame):
        flag[0] = True
    signal.signal(signal.SIGTERM, h)
    signal.signal(signal.SIGINT, h)
    return flag
