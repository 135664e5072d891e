"""The real-time controller: the composition of its parts and the loop's work,
``read -> update -> write`` once per cycle (docs/controller.md, "Controller").

The parts: :class:`~rt.control.links.Links` (sensor and platform I/O), the
:class:`~rt.control.supervisor.Supervisor` (operator states) with the phase table and guards
(rt.control.phases, rt.control.recovery), the :class:`~rt.control.recorder.Recorder` (run log,
events), the :class:`~rt.control.operator_port.OperatorPort` (requests prepared off the loop),
the cycle's data (rt.control.cycle_data) and its compiled kernels (rt.control.kernels). What the
controller does on a command or in a phase is rt.control.procedures; what it answers,
rt.control.operator_api; supervision outside DYNAMICS, rt.control.supervision; a failing cycle,
rt.control.failsafe.

* **read** — every frame of both links since the last cycle;
* **update** — DYNAMICS: one compiled call (``hil_cycle_packed``: frames in, the dynamics, the
  safety checks, the set-point frame and the log row out); otherwise the phase's step, the
  command's rates and the supervision; a trip starts the safe stop with its named reason;
* **write** — exactly one platform frame (a state command, else the set-point, else a
  HEARTBEAT), the run-log record, telemetry, then the operator's prepared commands.

Real time: :meth:`read`, :meth:`update`, :meth:`write` (the loop thread, allocation-free in
DYNAMICS); construction, :meth:`open`, :meth:`close`, :meth:`warm_up`, :meth:`make_loop` and the
operator API (but ``execute``) are not. Time is the loop's slot time: a skipped slot advances the
dynamics by the time that really passed; in lockstep each cycle first waits for the emulator's
answer to the previous frame (:meth:`lockstep_gate`).
"""
from __future__ import annotations

import logging
import time
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np

from drivers.framing import MAX_FRAME, OVERHEAD
from drivers.ft_sensor import FtSensor
from drivers.motion_platform import Command, MotionPlatform, PlatformState
from rt.config.stand import Stand, with_endpoints
from rt.control import cycle_store as CS
from rt.control import failsafe as FS
from rt.control import kernels as CK
from rt.control import mechanism_link as ML
from rt.control import operator_api as OA
from rt.control import procedures as PR
from rt.control import recovery as RC
from rt.control import trip_texts as TT
from rt.control.clock import StepClock, WallClock
from rt.control.cycle_store import pack_cycle
from rt.control.links import Links
from rt.control.loop import FixedStepLoop
from rt.control.operator_port import OperatorPort, start_telemetry
from rt.control.phases import ENGAGED_PHASES, GUARDS, Phase, check_transition
from rt.control.recorder import Recorder
from rt.control.session import RealtimeSession
from rt.control.supervisor import State, Supervisor
from rt.control.warmup import warm_up
from rt.dynamics import spacecraft as SCM
from rt.record import arraypack as AP
from rt.record.runlog import git_describe
from rt.stand import hexapod as HX
from rt.stand import wire_kernels as WK
from rt.stand.frames import stand_geometry
from rt.stand.safety import Reason, SafeStop, SafetyMonitor, platform_fault_reason
from rt.stand.sensing import Sensing

log = logging.getLogger("dockstand.controller")


class Controller:
    """See the module docstring. Build with drivers from the stand config (default) or given
    ones (tests: memory transports); ``open()``, then drive with :meth:`run` (own loop) or
    :meth:`command` + :meth:`run_until`. ``auditor(path, bound_pct)`` audits each closed run
    log (the shells pass :func:`rt.analysis.audit.run_audit`: the energy audit and the run's
    fidelity verdict; the control layer does not import the tools layer); with the stand's
    ``[runlog] energy_audit`` on, its verdicts go into the log and :meth:`summary`."""

    def __init__(self, stand: Stand, *, sensor: FtSensor | None = None, platform: MotionPlatform | None = None,
                 compensate: bool = True, lockstep: bool = False, telemetry: bool = True,
                 runlog: bool = True, log_dir: str | Path | None = None, lockstep_timeout_s: float = 2.0,
                 auditor: Callable[[Path, float], dict] | None = None):
        self.stand = stand
        self.period_s = stand.period_ns * 1e-9
        self.compensate = bool(compensate)
        self.lockstep = bool(lockstep)
        self.sensing = Sensing(stand.sensing)
        self.hexapod = HX.Hexapod(stand.hexapod)
        self.safety = SafetyMonitor(stand.limits, stand.hexapod)
        lim = stand.limits
        self.safe_stop = SafeStop(self.period_s, lim.a_max_m_s2, lim.alpha_max_rad_s2)
        self.geo = stand_geometry(stand)
        self.tau = stand.delays.total_s
        self.supervisor = Supervisor(guards={name: partial(g, self) for name, g in {**GUARDS, **RC.GUARDS}.items()},
                                     listeners=[partial(PR.on_supervisor_event, self)])
        self.recorder = Recorder(runlog, Path(log_dir) if log_dir is not None else stand.runlog_dir,
                                 stand.runlog_flush_interval_s,
                                 clock=lambda: (self.t, self.loop.cycles if self.loop else 0),
                                 auditor=(partial(auditor, bound_pct=stand.energy_audit_bound_pct)
                                          if auditor is not None and stand.energy_audit else None))
        self.git = git_describe()   # once, at start-up: arming never starts a subprocess
        self.session = RealtimeSession(stand.realtime.gc_freeze)   # gc frozen while RUNNING
        self.telemetry_enabled = bool(telemetry)
        self.telemetry = None
        # operator requests: decoded and prepared off the loop, carried out by drain() in write
        self.port = OperatorPort(self, budget_us=stand.telemetry.get("command_budget_us", 200.0))
        # health gates (rt.control.phases.guard_arm): the pre-flight timing check's failure, if
        # dockstand run's check failed and the stand does not allow it
        self.preflight_failure: str | None = None
        self.loop: FixedStepLoop | None = None
        self.stop_when: Callable[["Controller"], bool] | None = None
        # numeric state (allocated once; resized only when a case with other mode count loads)
        n_raw = self.sensing.n_raw
        CS.allocate(self, n_raw, SCM.N_RIGID)
        PR.init_state(self)       # the phase, clocks, trip, pending command (rt.control.procedures)
        # the cycle's link state, shared with the compiled kernels (rt.control.kernels IN_*);
        # allocated once: its counters' previous values outlive a reallocation of the record
        self.ins = np.zeros(CK.IN_LEN)
        self.meas = np.zeros(WK.ST_LEN)          # the newest valid STATUS (rt.stand.wire_kernels ST_*)
        self.links = Links(stand, self.ins, n_raw, sensor=sensor, platform=platform,
                           lockstep_timeout_s=lockstep_timeout_s)
        self._send = self.links.send
        self.tx = np.zeros(MAX_FRAME, dtype=np.uint8)   # the cycle's platform frame
        self._txmv = memoryview(self.tx)
        self._tx_ready = False                   # the DYNAMICS kernel has encoded this cycle's frame
        self._timing = np.zeros((8, 1), dtype=np.int64)   # the loop's timing ring (make_loop)
        self._hil_pack: AP.Packed | None = None   # hil_cycle_packed's table (rt.record.arraypack)
        self._ftype = WK.LENGTHS if stand.command_mode == "lengths" else WK.POSE   # the set-point frame
        self._set_point_n = 6 if self._ftype == WK.LENGTHS else 7   # its values: leg lengths or the top pose
        # the DYNAMICS kernel's frame in tx: its length is fixed by the type
        self._set_point_frame = self._txmv[:OVERHEAD + 8 * self._set_point_n]
        self.contact_threshold_n = lim.contact_force_n   # |f| above this (N, filtered) counts as contact
        # the phase's work per cycle outside DYNAMICS (DYNAMICS itself is one compiled call)
        steps = {Phase.IDLE: PR.step_none, Phase.ENGAGE: PR.step_engage, Phase.TARE: PR.step_tare,
                 Phase.MOVE: PR.step_move, Phase.READY: PR.step_ready, Phase.RUNUP: PR.step_runup,
                 Phase.DYNAMICS: PR.step_none, Phase.STOP: PR.step_stop, Phase.FROZEN: PR.step_none,
                 Phase.RETRACT: RC.step_retract}
        self._phase_step = {ph: partial(f, self) for ph, f in steps.items()}

    # the parts' state, under the names the controller has always shown
    sensor = property(lambda self: self.links.sensor, doc="the F/T sensor driver")
    platform = property(lambda self: self.links.platform, doc="the motion-platform driver")
    writer = property(lambda self: self.recorder.writer, doc="the open run log's writer, or None")
    log_path = property(lambda self: self.recorder.log_path, doc="the newest run log's path")
    log_dir = property(lambda self: self.recorder.log_dir, doc="where run logs go")
    events = property(lambda self: self.recorder.events, doc="the newest events (bounded history)")
    gc_reports = property(lambda self: self.session.reports, doc="what the real-time session did")

    # the operator API (rt.control.operator_api): not real-time, except execute and reply_dict
    command = OA.command
    execute = OA.execute
    reply_dict = OA.reply_dict
    status = OA.status
    summary = OA.summary
    health = OA.health
    recorder_health = OA.recorder_health
    mechanism = OA.mechanism
    health_refusal = OA.health_refusal
    mechanism_refusal = ML.arm_refusal
    load_allowed = OA.load_allowed
    arm_allowed = OA.arm_allowed
    prepare_arm_log = OA.prepare_arm_log
    log_header = OA.log_header
    expected_log_bytes = OA.expected_log_bytes
    log_error_text = staticmethod(OA.log_error_text)
    discard_log = OA.discard_log
    stats_first_contact = OA.stats_first_contact
    run_id = property(OA.run_id, doc="the current (or last) run: its log's name without the extension")
    # the procedures a way back uses (rt.control.recovery)
    clear_trip = PR.clear_trip
    # the loop's hook when a cycle's read, update or write raised (rt.control.failsafe): never raises
    cycle_failed = FS.cycle_failed
    _leave_failsafe = FS.leave
    _lease_lost = PR.lease_lost
    _lease_acquired = PR.lease_acquired
    _set_phase_idle = PR.set_phase_idle
    runup_start_pose = PR.runup_start_pose

    # ------------------------------------------------------------------ lifecycle
    def open(self) -> None:
        """The device links, then the command and telemetry endpoints with their command thread
        (rt.control.operator_port.start_telemetry). Not real-time."""
        self.links.open()
        if self.mechanism_io is None:
            self.mechanism_io = ML.start(self)
        if self.telemetry_enabled and self.telemetry is None:
            self.telemetry = start_telemetry(self)
            self.recorder.publish = self.telemetry.publish_event

    def close(self) -> None:
        self.port.close()
        if self.mechanism_io is not None:
            self.mechanism_io.close()
        self.recorder.close(block=True)
        self.session.leave()
        if self.telemetry is not None:
            self.recorder.publish = None
            self.telemetry.close()
            self.telemetry = None
        self.links.close()

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    def warm_up(self) -> None:
        """Compile (or load from the cache) every kernel the loop calls, before real time
        (:func:`rt.control.warmup.warm_up`). Not real-time."""
        warm_up(self)

    # ------------------------------------------------------------------ phases
    def _set_phase(self, ph: Phase) -> None:
        if ph is not self.phase:
            check_transition(self.phase, ph)
            self.phase = ph
            self.ins[CK.IN_PHASE] = ph
            self.phase_t = 0.0
            self._event({"kind": "phase", "phase": ph.name})

    def _trip(self, code: int, text: str | None = None) -> None:
        code = platform_fault_reason(code, int(self.meas[WK.ST_FAULT]))   # a robot's missed cycles by name
        self.trip_code = int(code)
        self.ins[CK.IN_TRIP] = self.trip_code
        self.trip_text = text or self.safety.describe(code)
        if text is None:
            self.trip_text += TT.trip_context(self, code)
        try:       # what the operator can do now (rt.control.recovery)
            self.trip_text = self.trip_text.rstrip(". ") + ". " + RC.next_step(self, code)
        except Exception:  # noqa: BLE001 - the trip goes on without its hint
            pass
        name = Reason(int(code)).name
        self.supervisor.trip(name, self.trip_text)
        if self.phase in ENGAGED_PHASES and self.phase is not Phase.STOP:
            PR.begin_stop(self)
        elif self.phase is Phase.ENGAGE:
            self._pending_cmd = Command.FREEZE
            self._set_phase(Phase.FROZEN)

    # ------------------------------------------------------------------ events and log
    def _event(self, ev: dict) -> None:
        self.recorder.event(ev)

    def wait_log_closed(self) -> bool:
        """Join the run logs whose close was requested; True when every file is closed."""
        return self.recorder.wait_closed()

    # ------------------------------------------------------------------ loop work
    def stale_sensor(self) -> bool:
        return self.safety.ctr[0] >= self.stand.limits.stale_cycles

    def read(self, cycle: int, t_ns: int) -> None:
        """The cycle's input, as received: every frame of both links since the last cycle
        (decoded by the compiled kernels in update). Operator requests are taken at the end of
        write, after this cycle's frames are decoded: a guard judges the newest link state,
        and the command acts from the next cycle on."""
        if self.failsafe is not None:
            return FS.hold_read(self, cycle, t_ns)
        prev = self._prev_tns
        dt = self.period_s if prev < 0 or t_ns <= prev else (t_ns - prev) * 1e-9
        self._prev_tns = t_ns
        self.dt = dt
        self.t += dt
        self.links.read(self.sensing.raw)
        if self.mechanism_io is not None:
            ML.cycle(self)
        sv = self.supervisor
        sv.cycle = cycle
        sv.t_ns = t_ns

    def _link_inputs(self, cycle: int) -> tuple:
        """The shell's per-cycle inputs of the kernels (rt.control.kernels.set_link_inputs'
        arguments after ``ins``)."""
        c = self.links.s_counters
        crc = c.crc_errors
        lp = self.loop
        if lp is not None:
            tm = lp.timing
            n = tm.count
            streak, missed, ti = lp.overrun_streak, lp.missed, (n - 1) % tm.capacity if n else -1
        else:
            streak, missed, ti = 0, 0, -1
        return (self.dt, cycle, streak, missed, ti, crc + c.malformed, crc, c.seq_gaps,
                self._heartbeat_lost and self.telemetry is not None)

    def platform_state(self) -> PlatformState | None:
        """The state of the newest valid STATUS (None before the first)."""
        return self.links.platform_state(self.meas)

    def links_seen(self) -> bool:
        """Both devices have been heard: a sensor sample and a platform STATUS."""
        return self.links.seen()

    @property
    def samples(self) -> int:
        return self.links.samples

    def update(self, cycle: int, t_ns: int) -> None:
        self._tx_ready = False
        if self.failsafe is not None:
            return
        if self.phase is Phase.DYNAMICS and self.trip_code == 0:
            self._dynamics(cycle)
            return
        PR.update_outside_dynamics(self, cycle)

    def _dynamics(self, cycle: int) -> None:
        """RUNNING/DYNAMICS: one compiled call (rt.control.kernels.hil_cycle_packed: the link
        inputs and frames in, the dynamics, the set-point frame and the log row out), the
        frames it accepted into the links' counters, then, if it flags one, the outcome: frames
        refused, the first contact, a trip, an end criterion. A trip or an end replaces the
        frame (write encodes the stop's)."""
        pk = self._hil_pack
        if pk is None:
            pk = self._hil_pack = pack_cycle(self)
        links = self.links
        now_ns = time.monotonic_ns()
        code, s_acc, p_acc, flags = CK.hil_cycle_packed(
            links.sbuf, links.pbuf, links.platform.seq, now_ns, self.t_run, self._ftype, self.tau,
            self._mode, pk.table, *self._link_inputs(cycle))
        dt = self.dt
        self.phase_t += dt
        self.t_run += dt
        self._command = True
        self._tx_ready = True
        links.add_counts(s_acc, p_acc, flags & CK.F_LK_ERR, now_ns * 1e-9)
        if flags:
            PR.dynamics_outcome(self, code, flags)
        if self.capture_held_since is not None:
            PR.capture_signal_check(self)

    def write(self, cycle: int, t_ns: int) -> None:
        """Exactly one platform frame (encoded by the compiled kernels with the driver's next
        seq), the run-log record, telemetry."""
        if self.failsafe is not None:
            return FS.hold_write(self, cycle, t_ns)
        if self._tx_ready:
            self._send(self._set_point_frame)
        else:
            PR.write_frame(self)
        self.links.outstanding = 1
        w = self.writer
        if w is not None:       # (the row went to the log with the frame: emit)
            if w.failure is not None:
                PR.runlog_failed(self, w)
            else:
                # the run is over once the platform is frozen (or never engaged) after DONE, SAFE,
                # ABORTED or a disarm: the writer thread closes the file, the loop does not wait
                ph = self.phase
                if (ph is Phase.FROZEN or ph is Phase.IDLE) and \
                        self.supervisor.state is not State.ARMED and self.supervisor.state is not State.RUNNING:
                    self.recorder.close(block=False)
        tm = self.telemetry
        if tm is not None:
            tm.publish(cycle, t_ns, int(self.supervisor.state), self.row)
        self.port.drain()      # operator requests, prepared off the loop (read's docstring)
        self._failing = 0
        if self.stop_when is not None and self.loop is not None and self.stop_when(self):
            self.loop.stop()

    # ------------------------------------------------------------------ lockstep
    def lockstep_gate(self, deadline_ns: int) -> None:
        """StepClock gate: wait (wall time, bounded) for the emulator's answer to the last frame."""
        self.links.gate()

    # ------------------------------------------------------------------ running
    def make_loop(self, clock=None) -> FixedStepLoop:
        """The loop: ``clock`` given, or a StepClock gated by the emulator (lockstep), or the
        stand's WallClock."""
        st = self.stand
        if clock is None and self.lockstep:
            clock = StepClock(gate=self.lockstep_gate)
        elif clock is None:
            clock = WallClock.from_stand(st)
        self.loop = FixedStepLoop(clock, st.period_ns, self, warn_interval_s=st.overrun_warn_interval_s)
        self._timing = self.loop.timing.data
        self._hil_pack = None
        return self.loop

    def run_until(self, pred: Callable[["Controller"], bool], max_cycles: int) -> int:
        """Run the loop until ``pred(self)`` holds (checked after every cycle) or max_cycles."""
        if self.loop is None:
            self.make_loop()
        self.stop_when = pred
        try:
            return self.loop.run(max_cycles)
        finally:
            self.stop_when = None


__all__ = ["Controller", "Phase", "State", "with_endpoints", "stand_geometry"]
