"""The real-time controller: a small orchestrator over its parts on one fixed-step loop
(docs/controller.md, "Controller"):

* :class:`rt.control.links.Links` — sensor and platform I/O with their counters;
* :mod:`rt.control.phases` — the phase sequence and the command guards, as tables;
* :class:`rt.control.supervisor.Supervisor` — the operator-facing state machine;
* :class:`rt.control.recorder.Recorder` — the run log and the events;
* :class:`rt.control.session.RealtimeSession` — gc frozen while running;
* the compiled kernels (:mod:`rt.control.kernels`): one compiled call per DYNAMICS cycle.

Every cycle (:class:`Controller` is the loop's work object):

* **read** — newest F/T sample (its raw counts), newest platform STATUS, link counters, and
  pending operator requests (telemetry ROUTER);
* **update** — the phase of the current supervisor state produces the platform-top command
  (the phase table and its transitions: :mod:`rt.control.phases`),
  then the command's rates (backward differences) and the safety checks
  (``rt.control.kernels.supervise``) whenever the platform is engaged; a trip stops the
  integration, starts the safe stop and logs/publishes the named reason;
* **write** — exactly one platform frame per cycle (the state command when one is due, else
  the POSE/LENGTHS set-point, else a HEARTBEAT: the device's watchdog sees the loop's pulse,
  and the lockstep emulator advances one period per frame), the run-log record, telemetry.

Real time: :meth:`Controller.read`, :meth:`Controller.update` and :meth:`Controller.write` are
the loop's work (called once per cycle by the loop thread, allocation-free in DYNAMICS);
:meth:`Controller.command` runs in the loop thread between cycles (operator requests are polled
at the end of write). Construction, :meth:`open`, :meth:`close`, :meth:`warm_up`,
:meth:`make_loop`, :meth:`status` and :meth:`summary` are not real-time.

Time: the controller's clock is the loop's slot time; a skipped slot (overrun) advances the
dynamics by the time that really passed. In lockstep (``StepClock`` with :meth:`lockstep_gate`)
each cycle first waits for the emulator's answer to the previous frame.
"""
from __future__ import annotations

import logging
import dataclasses
import uuid
import math
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np

from drivers.framing import MAX_FRAME, OVERHEAD
from drivers.ft_sensor import FtSensor
from drivers.motion_platform import Command, MotionPlatform, PlatformState
from rt.record import arraypack as AP
from rt.control import kernels as CK
from rt.control import mechanism_inputs as MI
from rt.dynamics import coupling as CP
from rt.stand import contact_gate as CG
from rt.stand import delay_id as DY
from rt.stand import hexapod as HX
from rt.dynamics import spacecraft as SCM
from rt.dynamics.berthing_flight import flight_from_case
from rt.dynamics import spatial as SP
from rt.stand import wire_kernels as WK
from rt.control.clock import StepClock, WallClock
from rt.config._schema import ConfigError
from rt.config.case import Case, load_case
from rt.config.stand import Stand
from rt.control.links import Links
from rt.control.loop import FixedStepLoop
from rt.control.phases import ENGAGED_PHASES, GUARDS, Phase, check_transition
from rt.control.recorder import Recorder, closed_sink, record_fields
from rt.control.session import RealtimeSession
from rt.control.warmup import warm_up
from rt.record.runlog import git_describe
from rt.stand.safety import Reason, SafeStop, SafetyMonitor
from rt.stand.sensing import Sensing
from rt.control.supervisor import Event, State, Supervisor

# the cycle's fixed indices into ``ins`` (rt.control.kernels IN_*), as module constants: the
# shell's per-cycle Python reads them as globals
_IN_LK_ERR, _IN_TXLEN, _IN_INPUTS_CHG = CK.IN_LK_ERR, CK.IN_TXLEN, CK.IN_INPUTS_CHG
_S_ACC, _P_ACC = CK.IN_LK_S + WK.LK_ACC, CK.IN_LK_P + WK.LK_ACC

log = logging.getLogger("dockstand.controller")


def _inv_pose(p, R):
    """Inverse of a frame pose (child in parent) -> parent in child: (p', R')."""
    return -R.T @ p, R.T


def _q(R) -> np.ndarray:
    q = np.zeros(4)
    SP.dcm_to_quat(np.ascontiguousarray(R), q)
    return q


def stand_geometry(stand: Stand) -> np.ndarray:
    """``rt.dynamics.coupling.pack_geometry`` from the stand: P in B (B and P both placed in W) and T in A."""
    pB, RB = stand.platform_base.p, stand.platform_base.R      # B in W
    pP, RP = stand.passive_mount.p, stand.passive_mount.R      # P in W
    p_BP_B = RB.T @ (pP - pB)
    R_BP = RB.T @ RP
    p_AT_A, R_AT = _inv_pose(stand.active_mount.p, stand.active_mount.R)
    return CP.pack_geometry(p_BP_B, _q(R_BP), p_AT_A, _q(R_AT))


class Controller:
    """See the module docstring. Build with drivers from the stand config (default) or given
    ones (tests: memory transports); ``open()``, then drive with :meth:`run` (own loop) or
    :meth:`command` + :meth:`run_until`. ``auditor(path, bound_pct)`` audits each closed run
    log (the shells pass :func:`rt.analysis.audit.energy_verdict`; the control layer does not
    import the tools layer); with the stand's ``[runlog] energy_audit`` on, its verdict goes
    into the log and :meth:`summary`."""

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
        self.supervisor = Supervisor(guards={name: partial(g, self) for name, g in GUARDS.items()},
                                     listeners=[self._on_event])
        self.runup_lead = 0.0
        self.t_dynamics_start: float | None = None   # controller time (s) when the dynamics began
        self.recorder = Recorder(runlog, Path(log_dir) if log_dir is not None else stand.runlog_dir,
                                 stand.runlog_flush_interval_s,
                                 clock=lambda: (self.t, self.loop.cycles if self.loop else 0),
                                 auditor=(partial(auditor, bound_pct=stand.energy_audit_bound_pct)
                                          if auditor is not None and stand.energy_audit else None))
        self.git = git_describe()   # once, at start-up: arming never starts a subprocess
        self.session = RealtimeSession(stand.realtime.gc_freeze)   # gc frozen while RUNNING
        self.telemetry_enabled = bool(telemetry)
        self.telemetry = None
        self.loop: FixedStepLoop | None = None
        self.stop_when: Callable[["Controller"], bool] | None = None
        # numeric state (allocated once; resized only when a case with other mode count loads)
        n_raw = self.sensing.n_raw
        self._alloc(n_raw, SCM.N_RIGID)
        self.case: Case | None = None
        self.case_path: Path | None = None
        self.sc: SCM.Spacecraft | None = None
        self.phase = Phase.IDLE
        self.phase_t = 0.0
        self.t_run = 0.0           # dynamics time (s) since the start of the case
        self.capture_t_run = None  # t_run when the mechanism's capture signal rose in this run (None: not yet)
        self.log_extra: dict = {}  # more run-log header entries (a campaign's sample: its values)
        self.instance = uuid.uuid4().hex[:12]   # this controller object (its events are numbered within it)
        self.t = 0.0               # controller time (s) since the loop started
        self._prev_tns = -1
        self.dt = self.period_s    # the last cycle's length (read)
        self.trip_code = 0
        self.trip_text: str | None = None
        self.finish_reason: str | None = None
        self._pending_cmd: Command | None = None
        self._engage_sent = False
        self._have_cmd = False
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
        self._heartbeat_lost = False
        self._move_start = np.zeros(7)           # the arming move: its start, the pose after the creep, its clock
        self._move_rest: np.ndarray | None = None
        self._move_t0 = 0.0
        self.contact_threshold_n = lim.contact_force_n   # |f| above this (N, filtered) counts as contact
        self._home = stand.hexapod.home.copy()
        # the phase's work per cycle outside DYNAMICS (DYNAMICS itself is one compiled call)
        self._phase_step = {Phase.IDLE: self._step_none, Phase.ENGAGE: self._step_engage, Phase.TARE: self._step_tare,
                            Phase.MOVE: self._step_move, Phase.READY: self._step_ready, Phase.RUNUP: self._step_runup,
                            Phase.DYNAMICS: self._step_none, Phase.STOP: self._step_stop,
                            Phase.FROZEN: self._step_none}

    # the parts' state, under the names the controller has always shown
    sensor = property(lambda self: self.links.sensor, doc="the F/T sensor driver")
    platform = property(lambda self: self.links.platform, doc="the motion-platform driver")
    writer = property(lambda self: self.recorder.writer, doc="the open run log's writer, or None")
    log_path = property(lambda self: self.recorder.log_path, doc="the newest run log's path")
    log_dir = property(lambda self: self.recorder.log_dir, doc="where run logs go")
    events = property(lambda self: self.recorder.events, doc="the newest events (bounded history)")
    gc_reports = property(lambda self: self.session.reports, doc="what the real-time session did")

    # ------------------------------------------------------------------ allocation
    def _alloc(self, n_raw: int, ns: int) -> None:
        if self.recorder.writer is not None:
            self.recorder.close(block=False)    # its records are rows of the old layout
        self.ns = ns
        self.fields = record_fields(n_raw, ns)
        self.row = np.zeros(sum(self.fields.values()))
        off = 0
        self.v: dict[str, np.ndarray] = {}
        for name, size in self.fields.items():
            self.v[name] = self.row[off:off + size]
            off += size
        v = self.v
        self.cmd_pose = v["cmd_pose"]
        self.cmd_twist = v["cmd_twist"]
        self.cmd_acc = v["cmd_acc"]
        self.cmd_lengths = v["cmd_lengths"]
        starts = np.cumsum([0] + list(self.fields.values()))
        self._ix = {name: int(starts[k]) for k, name in enumerate(self.fields)}
        # rel_pose, rel_twist, rel_acc are contiguous in the row and in rt.dynamics.coupling's out record
        a, b = self._ix["rel_pose"], self._ix["rel_acc"] + 6
        assert b - a == CP.O_ACC + 6 - CP.O_REL
        # meas_pose and meas_lengths are contiguous, as rt.control.kernels.ingest writes them
        assert self._ix["meas_lengths"] == self._ix["meas_pose"] + 7
        v["rel"] = self.row[a:b]
        self.prev_pose = np.zeros(7)
        self.sent_pose = np.zeros(7)      # the last set-point sent (a stop continues from it)
        self.sent_twist = np.zeros(6)
        self.run_start_pose = np.zeros(7)
        self.prev_vel = np.zeros(7)      # the last command's twist and, at CK.PV_DT, its step
        self.out = np.zeros(CP.OUT_LEN)
        CP.set_measurement_dispersion(self.out, *self.sensing.dispersion)   # the low-pass beyond its delay
        self.w_in = np.zeros((2, 6))
        self._no_wrench = np.zeros((2, 6))
        self.mv = np.zeros(CK.MV_LEN)
        self.ru = np.zeros(CK.RU_LEN)
        self.scr = np.zeros(16)
        self.raw_prev = np.full(n_raw, np.nan)
        self.meas_pose = v["meas_pose"]
        self.meas_pose[3] = 1.0
        self.rix = np.array([self._ix[name] for name in CK.ROW_FIELDS], dtype=np.int64)
        self._x0 = np.zeros((2, ns))             # the record's vehicle states before a case is loaded
        # where the kernels commit the row (rt.record.runlog RunLogWriter.ring / .cursor): the open
        # writer's, else a closed stand-in
        self._log_ring, self._log_cursor = closed_sink(self.row.shape[0])
        self._hil_pack = None
        self.xlim = np.zeros(CK.XL_LEN)
        lim = self.stand.limits
        d = self.stand.delays
        delay_cycles = max(1, int(round((d.transport_s + d.servo_s) / self.period_s)) + 1)
        self.xlim[:] = (lim.tracking_error_max_m, lim.platform_stale_cycles, lim.sensor_frozen_samples,
                        delay_cycles, 0.0, lim.miss_budget, lim.miss_window_s)
        self.xctr = np.zeros(CK.XC_LEN, dtype=np.int64)
        self.dly = DY.pack_delay_id(d.identify, d.identify_time_constant_s, d.identify_min_speed_m_s,
                                    d.identify_settle_s, d.identify_band_s, d.platform_s, d.status_latency_s, self.period_s)
        cg = self.stand.contact_gate
        self.gate = CG.pack_gate(cg.enabled, cg.on_n, cg.off_n, cg.persist, cg.release_s, self.period_s)
        self.delay_rec = v["delay"]
        self.delay_rec[:] = math.nan
        self.trk_ring = np.zeros((max(delay_cycles + 2, DY.ring_rows(self.dly)), 3))
        self._empty = np.zeros(0)
        self.stats = np.zeros(CK.ST_LEN)
        self.stats[CK.ST_FIRST_CONTACT] = -1.0
        self.endp = np.zeros(CK.EP_LEN)
        self._mode = CP.PREDICTORS[d.predictor] if self.compensate else CP.MODE_OFF

    # ------------------------------------------------------------------ lifecycle
    def open(self) -> None:
        self.links.open()
        if self.telemetry_enabled and self.telemetry is None:
            from rt.record.telemetry import TelemetryServer
            from rt.control.supervisor import COMMANDS
            tc = self.stand.telemetry
            curve = None
            if tc.get("curve"):
                from rt.record.curve import CurveServer
                curve = CurveServer(tc["curve"]["secret_file"], tc["curve"]["authorized_dir"])
            self.telemetry = TelemetryServer(self.fields, pub_endpoint=tc["pub_endpoint"],
                                             curve=curve, commands=(*COMMANDS, "status", "events"),
                                             on_auth_denied=self._event,
                                             cmd_endpoint=tc["cmd_endpoint"], decimation=tc["decimation"],
                                             sndhwm=tc["sndhwm"], lease_timeout_s=tc["lease_timeout_s"],
                                             handler=self._handle_request, on_lease_lost=self._lease_lost,
                                             on_lease_acquired=self._lease_acquired,
                                             identity={"stand": self.stand.name, "stand_file": str(self.stand.file)})
            self.recorder.publish = self.telemetry.publish_event

    def close(self) -> None:
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

    # ------------------------------------------------------------------ commands
    def command(self, name: str, client: str | None = "local", **args: Any):
        """Apply an operator command now (from the loop thread); returns the supervisor Reply."""
        if name == "load_case" and "case" in args and not isinstance(args["case"], Case):
            if not isinstance(args["case"], (str, Path)) or not str(args["case"]):
                return self.supervisor._refuse("load_case", client, "case must be the path of a case file (a string), "
                                                                    f"got {type(args['case']).__name__}")
            path = Path(args["case"])
            try:
                case = load_case(path)
            except ConfigError as e:
                return self.supervisor._refuse("load_case", client, str(e))
            except Exception as e:  # noqa: BLE001 - the reason goes back to the operator
                return self.supervisor._refuse("load_case", client, f"{type(e).__name__}: {e}")
            args = {**args, "case": case, "path": path}
        reply = self.supervisor.command(name, client, **args)
        if reply.ok:
            self._after_command(name, args)
        return reply

    def _handle_request(self, cmd: str, args: dict, client: str) -> dict:
        if cmd == "status":
            return {"ok": True, "reason": None, **self.status()}
        if cmd == "events":         # a console's lost events (its subscription dropped some): not leased
            since = args.get("since", 0)
            if isinstance(since, bool) or not isinstance(since, int):
                return {"ok": False, "reason": f"events needs since = an integer event number, got {since!r}"}
            return {"ok": True, "reason": None, "events": self.recorder.events_since(since),
                    "event_seq": self.recorder.event_seq}
        r = self.command(cmd, client, **args)
        out = r.as_dict()
        out.update(phase=self.phase.name)
        return out

    @property
    def run_id(self) -> str | None:
        """The current (or last) run: its log's name without the extension, e.g.
        ``20261125-021335-nominal`` (None before the first arm or without a log)."""
        return Path(self.log_path).stem if self.log_path else None

    def status(self) -> dict:
        s = self.supervisor
        return {"state": s.state.name, "phase": self.phase.name, "t": self.t, "t_run": self.t_run,
                "trip_reason": s.trip_reason, "trip": self.trip_text, "case": str(self.case_path) if self.case_path else None,
                "allowed": s.allowed(), "cycles": self.loop.cycles if self.loop else 0,
                "missed": self.loop.missed if self.loop else 0, "log": str(self.log_path) if self.log_path else None,
                "sensor_link": self.sensor.transport.status, "platform_link": self.platform.transport.status,
                "links": {"sensor": self.links.link_report(self.sensor.transport),
                          "platform": self.links.link_report(self.platform.transport)},
                "platform_state": self.platform_state().name if self.platform_state() is not None else None,
                "ready": self.phase is Phase.READY, "finish_reason": self.finish_reason, "wait": self._wait_report(),
                "run_id": self.run_id, "limits": self._console_limits(), "mechanism": self.mechanism(),
                "tared": self.sensing.tared, "taring": self.sensing.taring, "event_seq": self.recorder.event_seq,
                "instance": self.instance}

    def mechanism(self) -> dict:
        """The mechanism's wired signals in the newest STATUS (``rt.control.mechanism_inputs``)
        and the run's capture time. Not real-time (allocates)."""
        cfg = self.stand.mechanism_inputs
        d = MI.describe(cfg, int(self.ins[CK.IN_INPUTS]))
        d.update(wired=cfg.wired, capture_bit=cfg.capture, latch_bits=list(cfg.latches),
                 capture_t_run=self.capture_t_run)
        return d

    def _console_limits(self) -> dict:
        from rt.config.stand import console_limits
        return console_limits(self.stand)

    def _wait_report(self) -> dict | None:
        """The wall clock's wait (margin now, late sleeps); None in lockstep or before the loop."""
        report = getattr(self.loop.clock, "report", None) if self.loop else None
        return report() if report else None

    def _after_command(self, name: str, args: dict) -> None:
        st = self.supervisor.state
        if name == "load_case":
            self.case = args["case"]
            self.case_path = args.get("path")
            self.sc = flight_from_case(self.case)
            self._hil_pack = None
            if 2 * self.sc.ns != self.fields["x"]:
                self._alloc(self.sensing.n_raw, self.sc.ns)
                if self.telemetry is not None:
                    self.telemetry.fields = dict(self.fields)
                    self.telemetry.width = self.row.size
        elif name == "arm":
            self._begin_arm()
        elif name == "start":
            self._begin_run()
        elif name == "stop":
            if st is State.DONE:
                self.finish_reason = "operator stop"
                self._begin_stop()
            elif st is State.CONFIGURED:  # disarm
                self._begin_stop()
        elif name == "abort":
            if self.phase in ENGAGED_PHASES or self.phase is Phase.ENGAGE:
                self._begin_stop()
        elif name == "tare":
            self.sensing.begin_tare()
        elif name == "reset":
            self._heartbeat_lost = False
            self.trip_code = 0
            self.ins[CK.IN_TRIP] = 0
            self.trip_text = None
            self.safety.reset()
            self.xctr[:] = 0

    # ------------------------------------------------------------------ phases
    def _set_phase(self, ph: Phase) -> None:
        if ph is not self.phase:
            check_transition(self.phase, ph)
            self.phase = ph
            self.ins[CK.IN_PHASE] = ph
            self.phase_t = 0.0
            self._event({"kind": "phase", "phase": ph.name})

    def _begin_arm(self) -> None:
        # an expiry seen before this arm belongs to a lease that is gone (a console that
        # wants to be watched acquires the lease; a later expiry trips again)
        self._heartbeat_lost = False
        self.sc = flight_from_case(self.case)   # fresh state at every arm
        self._hil_pack = None
        self.t_run = 0.0
        self.finish_reason = None
        self.safety.reset()
        self.xctr[:] = 0
        self.xctr[CK.XC_MISS_PREV] = -1
        self.xlim[CK.XL_TRACK_ON] = 0.0
        env = self.loop_envelope_now()      # the loop envelope at ARM (rt.stand.loop_envelope): said, and logged
        self.loop_envelope = env.as_dict()
        self._event({"kind": "loop_envelope", "inside": env.inside, "text": env.sentence(), "reasons": list(env.reasons)})
        DY.delay_reset(self.dly)           # identified anew from this run's motion (the arming move first)
        self.delay_rec[:] = math.nan
        self._arm_t0 = self.t
        self._engage_sent = False
        self._set_phase(Phase.ENGAGE)
        self._open_log()

    def loop_envelope_now(self):
        """The loaded case's loop envelope (rt.stand.loop_envelope) with the platform delay identified
        so far (the last run's, until this run's arming move identifies it), else the configured one."""
        from rt.stand.loop_envelope import Envelope, envelope_of_case
        if self.case is None:
            return Envelope(None)
        ident = float(self.dly[DY.DY_EST]) if DY.delay_valid(self.dly) else None
        return envelope_of_case(self.case, self.stand, ident)

    def _runup_target(self) -> float:
        """Set up the run-up from the spacecraft's initial relative state; returns its length."""
        out = self.out
        self.w_in[:] = 0.0
        w = self.sc.ws
        CP.relative_rates_kernel(self.sc.env)(self.sc.par, self.sc.env, self.sc.x, 0.0, self.w_in, 1e-4, out,
                                              CP.O_REL, w.k[0], w.xt, w.ws, w.rel)
        r = out[CP.O_REL + SCM.REL_R:CP.O_REL + SCM.REL_R + 3]
        q = out[CP.O_REL + SCM.REL_Q:CP.O_REL + SCM.REL_Q + 4]
        v = out[CP.O_REL + SCM.REL_V:CP.O_REL + SCM.REL_V + 3]
        wv = out[CP.O_REL + SCM.REL_W:CP.O_REL + SCM.REL_W + 3]
        lim = self.stand.limits
        T = max(np.linalg.norm(v) / (0.5 * lim.a_max_m_s2), np.linalg.norm(wv) / (0.5 * lim.alpha_max_rad_s2))
        # the run-up plus the prediction lead is a whole number of periods, so that the last
        # run-up command and the first dynamics command are one period apart on one path
        # the configured delay: set before the arming move, where the identification starts
        # (rt.stand.delay_id; the dynamics move the lead to the identified one smoothly)
        self.delay_rec[DY.DR_USED] = self.tau
        CP.reset_memory(self.out)
        lead = self.tau if self.compensate else 0.0
        dt = self.period_s
        T = math.ceil((T + lead) / dt - 1e-9) * dt - lead if T > 0.0 else 0.0
        self.runup_lead = lead
        self.ru[CK.RU_R0:CK.RU_R0 + 3] = r
        self.ru[CK.RU_Q0:CK.RU_Q0 + 4] = q
        self.ru[CK.RU_V0:CK.RU_V0 + 3] = v
        self.ru[CK.RU_W0:CK.RU_W0 + 3] = wv
        self.ru[CK.RU_T] = T
        return T

    def runup_start_pose(self) -> np.ndarray:
        T = self._runup_target()
        out = np.zeros(CP.OUT_LEN)
        CK.runup_eval(self.ru, self.geo, -T, out, self.scr)
        return out[CP.O_PCMD:CP.O_PCMD + 7].copy()

    def _begin_move(self) -> None:
        """The arming move to the run-up's start pose at half the run's limits. After a run that
        touched (the units may be latched), in two rest-to-rest legs on one straight path: a
        creep over its first ``arming_creep_m`` / ``arming_creep_deg`` (``arming_*`` speeds: a
        load there trips ARMING_CONTACT within a fraction of a millimetre), then the rest."""
        target = self.runup_start_pose()
        lim = self.stand.limits
        start = self.cmd_pose.copy() if self._have_cmd else self.meas_pose.copy()
        self._move_start = start
        way = target.copy()
        touched = self.stats[CK.ST_FIRST_CONTACT] >= 0.0      # the last run's (reset at the next start)
        f = CK.move_waypoint(start, target, lim.arming_creep_m, lim.arming_creep_rad, way, np.zeros(11)) \
            if touched else 1.0
        self._move_rest = target if f < 1.0 else None
        self._move_t0 = 0.0
        CK.move_setup(self.mv, start, way, *self._arming_limits(creep=touched))
        self.xlim[CK.XL_TRACK_ON] = 1.0
        self._set_phase(Phase.MOVE)

    def _arming_limits(self, creep: bool) -> tuple[float, float, float, float]:
        """The arming move's speed, acceleration, angular rate and angular acceleration: half
        the run's limits, or the creep's ``arming_*`` ones if lower."""
        lim = self.stand.limits
        half = (0.5 * lim.v_max_m_s, 0.5 * lim.a_max_m_s2, 0.5 * lim.omega_max_rad_s, 0.5 * lim.alpha_max_rad_s2)
        if not creep:
            return half
        return tuple(min(h, c) for h, c in zip(half, (lim.arming_speed_m_s, lim.arming_accel_m_s2,
                                                      lim.arming_rate_rad_s, lim.arming_angular_accel_rad_s2)))

    def _begin_run(self) -> None:
        self.sc = flight_from_case(self.case)
        self._hil_pack = self._pack(self._hil_arrays(self.sc))   # now, not in the loop's first DYNAMICS cycle
        self._runup_target()
        self.t_run = -(self.ru[CK.RU_T] + self.runup_lead) if self.ru[CK.RU_T] > 0.0 else 0.0
        self.sensing.reset_filter()
        CG.gate_reset(self.gate)
        self.run_start_pose[:] = self.sent_pose
        self.stats[:] = 0.0
        self.stats[CK.ST_FIRST_CONTACT] = -1.0
        self.capture_t_run = None
        r0 = float(np.linalg.norm(self.ru[CK.RU_R0:CK.RU_R0 + 3]))
        lim = self.stand.limits
        self.endp[:] = (self.case.duration_s, r0 + self.case.end.separation_m, self.contact_threshold_n,
                        *self.sent_pose[:3], self.case.end.capture_settle_s, lim.capture_speed_max_m_s,
                        lim.capture_rate_max_rad_s)
        self.t_dynamics_start = self.t if self.t_run >= 0.0 else None
        # what the cycle's kernels start from that the records do not carry (dockstand recompute)
        self._event({"kind": "run_start", "sensing_bias": [float(b) for b in self.sensing.bias],
                     "t_run": self.t_run, "tau_s": self.tau, "mode": int(self._mode)})
        self._set_phase(Phase.RUNUP if self.t_run < 0.0 else Phase.DYNAMICS)

    def _begin_stop(self) -> None:
        if self._have_cmd and self.phase in ENGAGED_PHASES:
            self.safe_stop.start(self.sent_pose, self.sent_twist)
            self._set_phase(Phase.STOP)
        else:
            self._pending_cmd = Command.FREEZE if self.phase is not Phase.IDLE else None
            self._set_phase(Phase.FROZEN if self.phase is not Phase.IDLE else Phase.IDLE)

    def _device_fault(self) -> str:
        """The platform's fault code from its last STATUS, by name when the protocol knows it."""
        from drivers.motion_platform import FaultCode
        v = int(self.meas[WK.ST_FAULT])
        try:
            return f"fault code {v} {FaultCode(v).name}"
        except ValueError:
            return f"fault code {v} (not in the protocol's list)"

    def _trip_context(self, code: int) -> str:
        """What the kernels' detail cannot carry (on a trip only: formats): the device's own
        fault code, the lost link's endpoint and last frame, the loop's measured overload."""
        if code in (Reason.PLATFORM_FAULT, Reason.PLATFORM_ESTOP):
            return f" ({self._device_fault()})"      # the device's own code, as it sent it
        if code in (Reason.SENSOR_LINK_LOST, Reason.PLATFORM_LINK_LOST):
            tr = self.links.s_tr if code == Reason.SENSOR_LINK_LOST else self.links.p_tr
            return f"; {self.links.last_frame(tr, self.t)}"
        if code == Reason.DELAY_OUT_OF_BAND:
            lo, hi = self.stand.delays.identify_band_s
            return (f" [{1e3 * lo:g}, {1e3 * hi:g}] ms (stand [delays] identify_band_s; configured "
                    f"{1e3 * self.stand.delays.platform_s:g} ms)")
        if code == Reason.OVERRUN_STREAK and self.loop is not None:
            st = self.loop.timing.stats()
            return (f" (the cycle's budget is its period, {1e6 * self.period_s:.0f} µs; cycle work p99 "
                    f"{st.get('cycle_us_p99', 0.0):.0f} µs, max {st.get('cycle_us_max', 0.0):.0f} µs)")
        if code == Reason.OVERLOAD:
            lp = self.loop
            lim = self.stand.limits
            out = f" (budget {lim.miss_budget} per {lim.miss_window_s:g} s)"
            if lp is not None:
                st = lp.timing.stats()
                out += (f"; {lp.missed} missed in total over {lp.cycles} cycles, longest overrun streak "
                        f"{lp.max_overrun_streak}, wake-up lateness p99 {st.get('lateness_us_p99', 0.0):.0f} us, "
                        f"max {st.get('lateness_us_max', 0.0):.0f} us")
            quiet = [(name, tr) for name, tr, n in (("sensor", self.links.s_tr, self.safety.ctr[0]),
                                                    ("platform", self.links.p_tr, self.xctr[CK.XC_PSTALE]))
                     if n >= 2]          # quiet for 2 cycles already: a peer gone shows here first
            for name, tr in quiet:
                out += f"; meanwhile the {name} link went quiet ({self.links.last_frame(tr, self.t)})"
            return out + ": this computer cannot hold the loop's rate now (dockstand check-host; docs/deploy.md)"
        return ""

    def _arming_contact(self, ph: Phase) -> bool:
        """ARMING_CONTACT: the tared, filtered wrench on the passive unit above the contact levels
        during the arming move or at READY, where the units are apart by construction — they are
        still latched from the last run (the move would pull the mechanism apart) or something
        is in the way. Trips and returns True. Loop thread (Python, outside the dynamics)."""
        w = self.sensing.w_P
        f, m = math.sqrt(w[0] ** 2 + w[1] ** 2 + w[2] ** 2), math.sqrt(w[3] ** 2 + w[4] ** 2 + w[5] ** 2)
        lim = self.stand.limits
        if f <= lim.contact_force_n and m <= lim.contact_moment_nm:
            return False
        what = (f"|f| = {f:.0f} N (contact_force_n {lim.contact_force_n:g} N)" if f > lim.contact_force_n
                else f"|m| = {m:.0f} N·m (contact_moment_nm {lim.contact_moment_nm:g} N·m)")
        where = (f"{1e3 * float(np.linalg.norm(self.cmd_pose[:3] - self._move_start[:3])):.0f} mm into "
                 f"the arming move" if ph is Phase.MOVE else "at READY")
        self._trip(Reason.ARMING_CONTACT,
                   f"the passive unit is loaded while arming: {what}, {where}. The units are still latched from "
                   f"the last run or something is in the way: release the mechanism (undock) and arm again")
        return True

    def _inputs_changed(self, first_status: bool = False) -> None:
        """The STATUS digital-input word changed this cycle: its wired edges as events (capture,
        capture_released, latch_closed/opened; ``rt.control.mechanism_inputs``) with the run
        clock and phase; the first capture of a run is its capture time. ``first_status``: the
        controller's first STATUS (the signals were so before it started: ``at_start``). Loop
        thread, only on the cycle of a change."""
        ins = self.ins
        running = self.phase in (Phase.RUNUP, Phase.DYNAMICS)
        for ev in MI.edges(self.stand.mechanism_inputs, int(ins[CK.IN_INPUTS_OLD]), int(ins[CK.IN_INPUTS])):
            ev["phase"] = self.phase.name
            if first_status:
                ev["at_start"] = True
            if running:
                ev["t_run"] = self.t_run
                if ev["kind"] == "capture" and self.capture_t_run is None:
                    self.capture_t_run = self.t_run
            self._event(ev)

    def _trip(self, code: int, text: str | None = None) -> None:
        self.trip_code = int(code)
        self.ins[CK.IN_TRIP] = self.trip_code
        self.trip_text = text or self.safety.describe(code)
        if text is None:
            self.trip_text += self._trip_context(code)
        name = Reason(int(code)).name
        self.supervisor.trip(name, self.trip_text)
        if self.phase in ENGAGED_PHASES and self.phase is not Phase.STOP:
            self._begin_stop()
        elif self.phase is Phase.ENGAGE:
            self._pending_cmd = Command.FREEZE
            self._set_phase(Phase.FROZEN)

    def _lease_lost(self, holder: str, why: str = "silent") -> None:
        """The lease holder went silent, or its CURVE key was revoked (rt.record.telemetry)."""
        self._heartbeat_lost = True
        self._event({"kind": "lease_lost", "holder": holder, "why": why})

    def _lease_acquired(self, client: str) -> None:
        """A console took the lease: an earlier expiry no longer means anything."""
        self._heartbeat_lost = False

    # ------------------------------------------------------------------ events and log
    def _event(self, ev: dict) -> None:
        self.recorder.event(ev)

    def _on_event(self, e: Event) -> None:
        self.ins[CK.IN_STATE] = self.supervisor.state
        d = e.as_dict()
        d["kind"] = "supervisor_" + d["kind"]
        self._event(d)
        if e.kind == "trip":
            log.warning("safety trip: %s (%s)", e.reason, e.detail)
        elif e.kind == "transition":
            log.info("state %s -> %s (%s)", e.previous, e.state, e.reason or e.command)
            self.session.on_transition(e.previous, e.state)

    def _open_log(self) -> None:
        hdr = {"config": self.stand.raw, "case": str(self.case_path) if self.case_path else None,
               "case_digest": self.case.digest if self.case else None,
               "kind": "hil", "compensate": self.compensate, "tau_s": self.tau, "lockstep": self.lockstep,
               "rate_hz": self.stand.rate_hz,
               # the sensing low-pass in effect (the config snapshot may be overridden, e.g. by the demo)
               "sensing_filter": {"cutoff_hz": self.stand.sensing.filter_cutoff_hz,
                                  "damping": self.stand.sensing.filter_damping},
               # likewise the contact gate and the delay identification in effect
               "contact_gate": dataclasses.asdict(self.stand.contact_gate),
               "delay_identify": self.stand.delays.identify, "delay_predictor": self.stand.delays.predictor,
               # the delays in effect (the lead's parts) and the loop envelope judged at ARM (rt.stand.loop_envelope)
               "delays": dataclasses.asdict(self.stand.delays), "loop_envelope": getattr(self, "loop_envelope", None),
               # the state x's layout: two spacecraft, or the berthing arm (row 0) and its payload
               "flight": "berthing" if self.sc is not None and self.sc.env[SCM.E_FLIGHT] != 0.0 else "spacecraft",
               **self.log_extra}
        w = self.recorder.open(self.case.name if self.case else "run", self.fields, self.row, hdr)
        if w is not None:
            self._log_ring, self._log_cursor = w.ring, w.cursor    # the kernels commit the row (emit)
            self._hil_pack = None
        if self.telemetry is not None:       # describe names the run a console or ctl talks to
            self.telemetry.identity["run_id"] = self.run_id

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
        prev = self._prev_tns
        dt = self.period_s if prev < 0 or t_ns <= prev else (t_ns - prev) * 1e-9
        self._prev_tns = t_ns
        self.dt = dt
        self.t += dt
        self.links.read(self.sensing.raw)
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
        if self.phase is Phase.DYNAMICS and self.trip_code == 0:
            self._dynamics(cycle)
            return
        ins = self.ins
        CK.set_link_inputs(ins, *self._link_inputs(cycle))
        links = self.links
        status_seen = ins[CK.IN_STATUS_SEEN] != 0.0
        CK.ingest(links.sbuf, links.pbuf, self.sensing.raw, self.meas, ins, self.row, self.rix)
        links.add_counts(int(ins[_S_ACC]) if links.framed_sensor else 0, int(ins[_P_ACC]), ins[_IN_LK_ERR],
                         time.monotonic())
        links.count_refused()
        if ins[_IN_INPUTS_CHG]:
            self._inputs_changed(first_status=not status_seen)
        dt = self.dt
        ph = self.phase
        self.phase_t += dt
        sv = self.supervisor
        pstate = self.platform_state()
        self.sensing.step()
        command = self._phase_step[ph](dt, pstate)
        self._command = command or ph is Phase.STOP
        if command:
            CK.command_rates(self.cmd_pose, self.prev_pose, self.prev_vel, self.cmd_twist, self.cmd_acc, dt,
                             not self._have_cmd, self.scr)
            self._have_cmd = True
        # safety: whenever the platform is (being) engaged and no trip is active
        armed_or_running = sv.state in (State.ARMED, State.RUNNING)
        if armed_or_running and self.trip_code == 0:
            if ph is Phase.ENGAGE and self.phase_t > self.stand.limits.arm_timeout_s:
                self._trip(Reason.ARM_TIMEOUT, f"arming did not finish within {self.stand.limits.arm_timeout_s:g} s "
                                               f"(platform {pstate.name if pstate is not None else 'silent'})")
            elif sv.state is State.ARMED and self.t - self._arm_t0 > self.stand.limits.arm_timeout_s \
                    and self.phase is not Phase.READY:
                self._trip(Reason.ARM_TIMEOUT, f"arming did not finish within {self.stand.limits.arm_timeout_s:g} s "
                                               f"(phase {self.phase.name})")
            elif sv.state is State.ARMED and ph in (Phase.MOVE, Phase.READY) and self._arming_contact(ph):
                pass                     # tripped ARMING_CONTACT (the units are apart by construction here)
            else:
                pose = self.cmd_pose if self._have_cmd else self.meas_pose
                code = CK.supervise(*self._supervise_args(
                    pose, pstate is PlatformState.FAULT or (pstate is PlatformState.IDLE and self.phase in ENGAGED_PHASES),
                    pstate is PlatformState.E_STOPPED))
                if code:
                    self._trip(code)
        elif command:
            self.hexapod.inverse(self.cmd_pose, self.cmd_lengths)
        if self.phase is Phase.STOP and ph is not Phase.STOP:
            # a stop began this cycle (trip, finish, operator): its first step replaces the
            # command computed above, continuing from the last command actually sent
            self._stop_step()
            self._command = True

    # the phase's work outside DYNAMICS (rt.control.phases): each returns whether it commands
    # a set-point this cycle
    def _step_none(self, dt: float, pstate) -> bool:
        return False

    def _step_engage(self, dt: float, pstate) -> bool:
        if not self._engage_sent:
            self._pending_cmd = Command.ENGAGE
            self._engage_sent = True
        elif pstate is PlatformState.ENGAGED:
            self.cmd_pose[:] = self.meas_pose
            self.sent_pose[:] = self.meas_pose
            self.sent_twist[:] = 0.0
            self._have_cmd = True
            self.prev_pose[:] = self.cmd_pose
            self.prev_vel[:] = 0.0
            self.sensing.begin_tare()
            self._set_phase(Phase.TARE)
            return True
        return False

    def _step_tare(self, dt: float, pstate) -> bool:
        if self.sensing.tared:
            self._begin_move()
        return True

    def _step_move(self, dt: float, pstate) -> bool:
        if CK.move_eval(self.mv, self.phase_t - self._move_t0, self.cmd_pose, self.scr):
            if self._move_rest is None:
                self._set_phase(Phase.READY)
            else:                        # the creep is done: the rest of the path at half the run's limits
                CK.move_setup(self.mv, self.cmd_pose.copy(), self._move_rest, *self._arming_limits(creep=False))
                self._move_rest = None
                self._move_t0 = self.phase_t
        return True

    def _step_ready(self, dt: float, pstate) -> bool:
        return True

    def _step_runup(self, dt: float, pstate) -> bool:
        """The run-up at the time that really passed. It ends within half a period of t_run = 0;
        a cycle that overshoots it (deadlines skipped) commands the run-up's constant-velocity
        extension at its true time, and the dynamics start from the case's state carried free
        over that overshoot (``Spacecraft.step`` with no wrench: no contact before the case's
        initial state), so that neither path jumps."""
        self.t_run += dt
        CK.runup_eval(self.ru, self.geo, self.t_run + self.runup_lead, self.out, self.scr)
        self.cmd_pose[:] = self.out[CP.O_PCMD:CP.O_PCMD + 7]
        if self.t_run >= -0.5 * self.period_s:
            over = self.t_run
            if over > 0.5 * self.period_s:
                self.sc.step(0.0, over, self._no_wrench)
                self._event({"kind": "runup_overshoot", "t_run": over})
            else:
                self.t_run = 0.0
            self.t_dynamics_start = self.t
            self._set_phase(Phase.DYNAMICS)
        return True

    def _step_stop(self, dt: float, pstate) -> bool:
        self._stop_step()
        return False

    def _supervise_args(self, pose, platform_fault: bool = False, platform_estop: bool = False) -> tuple:
        """rt.control.kernels.supervise's arguments outside DYNAMICS (command ``pose``)."""
        s = self.sensing
        sm = self.safety
        g = sm.g
        ins = self.ins
        return (sm.lim, g.base, g.top, sm.leg_lim, g.box, sm.ctr, sm.crc_ring, sm.gap_ring, pose, self.cmd_twist,
                self.cmd_acc, s.w_S, s.w_P, self.out, ins[CK.IN_NEW_SAMPLE] != 0.0, int(ins[CK.IN_CRC_NEW]),
                int(ins[CK.IN_GAP_NEW]), platform_fault, platform_estop, int(ins[CK.IN_STREAK]),
                ins[CK.IN_HB] != 0.0, self.cmd_lengths, sm.detail, self.xlim, self.xctr, self.trk_ring, self.dly,
                self.delay_rec, s.raw,
                self.raw_prev, ins[CK.IN_STATUS_NEW] != 0.0, self.meas_pose, int(ins[CK.IN_MISSED]), self.dt,
                int(ins[CK.IN_SENSOR_STATUS]))

    def _dynamics(self, cycle: int) -> None:
        """RUNNING/DYNAMICS: one compiled call (rt.control.kernels.hil_cycle_packed: the link
        inputs and frames in, the dynamics, the set-point frame and the log row out), the
        frames it accepted into the links' counters, then, if it flags one, the outcome: frames
        refused, the first contact, a trip, an end criterion. A trip or an end replaces the
        frame (write encodes the stop's)."""
        pk = self._hil_pack
        if pk is None:
            pk = self._hil_pack = self._pack(self._hil_arrays(self.sc))
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
            self._dynamics_outcome(code, flags)

    def _dynamics_outcome(self, code: int, flags: int) -> None:
        if flags & CK.F_REFUSED:
            self.links.count_refused()
        st = self.stats
        if flags & CK.F_FIRST_CONTACT:
            self._event({"kind": "first_contact", "t_run": float(st[CK.ST_FIRST_CONTACT])})
        if flags & CK.F_INPUTS:
            self._inputs_changed()
        if code:
            self._tx_ready = False
            self._trip(code)
        elif flags & CK.F_END:
            self._tx_ready = False
            why = CK.END_REASONS[int(st[CK.ST_END])]
            self.finish_reason = why
            self.supervisor.finish(why)
            self._begin_stop()
        if self.phase is Phase.STOP:
            self._stop_step()

    def _hil_arrays(self, sc) -> tuple:
        """rt.control.kernels.hil_cycle_packed's arrays (CK.HIL_ARRAYS order) for the vehicles ``sc``:
        fixed while a run lasts; packed again whenever one of them is rebound (load, arm,
        start, a new loop)."""
        s = self.sensing
        w = sc.ws
        sm = self.safety
        g = sm.g
        return (self.ins, self.meas, self.tx, self.row, self.rix, self._timing, self.sent_pose, self.sent_twist,
                s.C_eff, s.R_PS, s.p_PS_P, s.raw, s.bias, s.acc, s.ctr, s.coef, s.fstate, s.w_S, s.w_P_raw, s.w_P,
                sc.par, sc.env, sc.x, self.w_in, self.geo, self.out,
                w.k, w.xt, w.ws, w.rel, self.cmd_pose, self.prev_pose, self.prev_vel, self.cmd_twist, self.cmd_acc,
                self.cmd_lengths, self.scr, sm.lim, g.base, g.top, sm.leg_lim, g.box, sm.ctr, sm.crc_ring,
                sm.gap_ring, sm.detail, self.xlim, self.xctr, self.trk_ring, self.dly, self.delay_rec, self.gate, self.raw_prev,
                self.meas_pose, self.stats, self.endp, self._log_ring, self._log_cursor)

    @staticmethod
    def _pack(arrays: tuple) -> AP.Packed:
        return AP.pack(arrays, [kind for _, kind in CK.HIL_ARRAYS])

    def _stop_step(self) -> None:
        if self.safe_stop.step(self.dt):    # the time that really passed (overruns skip slots)
            self._pending_cmd = Command.FREEZE
            self._set_phase(Phase.FROZEN)
        self.cmd_pose[:] = self.safe_stop.pose
        self.cmd_acc[:] = (self.safe_stop.twist - self.sent_twist) / self.dt
        self.cmd_twist[:] = self.safe_stop.twist
        self.prev_pose[:] = self.cmd_pose
        self.prev_vel[:6] = self.cmd_twist
        self.prev_vel[CK.PV_DT] = self.dt
        self.hexapod.inverse(self.cmd_pose, self.cmd_lengths)

    def write(self, cycle: int, t_ns: int) -> None:
        """Exactly one platform frame (encoded by the compiled kernels with the driver's next
        seq), the run-log record, telemetry."""
        if self._tx_ready:
            self._send(self._set_point_frame)
        else:
            self._write_frame()
        self.links.outstanding = 1
        if self.writer is not None:       # (the row went to the log with the frame: emit)
            # the run is over once the platform is frozen (or never engaged) after DONE, SAFE,
            # ABORTED or a disarm: the writer thread closes the file, the loop does not wait
            ph = self.phase
            if (ph is Phase.FROZEN or ph is Phase.IDLE) and \
                    self.supervisor.state is not State.ARMED and self.supervisor.state is not State.RUNNING:
                self.recorder.close(block=False)
        tm = self.telemetry
        if tm is not None:
            tm.publish(cycle, t_ns, int(self.supervisor.state), self.row)
            tm.poll()          # operator requests (read's docstring)
        if self.stop_when is not None and self.loop is not None and self.stop_when(self):
            self.loop.stop()

    def _write_frame(self) -> None:
        """The frame of a cycle whose frame the DYNAMICS kernel did not encode: a pending
        state command, else the set-point, else a HEARTBEAT; encoded with the run-log row."""
        p = self.links.platform
        pc = self._pending_cmd
        vals, n = self.cmd_pose, 0
        if pc is not None:
            self._pending_cmd = None
            ftype = int(pc)
        elif self._command and self.phase is not Phase.FROZEN and self.supervisor.state in (
                State.ARMED, State.RUNNING, State.DONE, State.SAFE, State.ABORTED, State.CONFIGURED):
            ftype, n = self._ftype, self._set_point_n
            if ftype == WK.LENGTHS:
                vals = self.cmd_lengths
            self.sent_pose[:] = self.cmd_pose
            self.sent_twist[:] = self.cmd_twist
        else:
            ftype = WK.HEARTBEAT
        ph = self.phase
        t_row = self.t_run if ph is Phase.RUNUP or ph is Phase.DYNAMICS else math.nan
        CK.emit(ftype, p.seq, time.monotonic_ns(), vals, n, t_row, self.ins, self.tx, self.row, self.rix,
                self.sensing.w_S, self.sensing.w_P, self.sc.x if self.sc is not None else self._x0, self.out,
                self._timing, self._log_ring, self._log_cursor, True)
        self._send(self._txmv[:int(self.ins[_IN_TXLEN])])

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

    def summary(self) -> dict:
        """The last run's figures; its energy audit (rt.analysis.audit) once its log is closed
        (waits for the writer thread to close it). Not real-time."""
        lp = self.loop
        audit = None
        if self.log_path is not None and self.recorder.writer is None:
            self.recorder.wait_closed()
            audit = self.recorder.audit_of(self.log_path)
        return {"energy_audit": audit, "state": self.supervisor.state.name, "finish_reason": self.finish_reason,
                "trip_reason": self.supervisor.trip_reason, "trip": self.trip_text,
                "first_contact_s": (float(self.stats[CK.ST_FIRST_CONTACT]) if self.stats[CK.ST_FIRST_CONTACT] >= 0
                                    else None),
                "capture_signal_s": self.capture_t_run,
                "peak_force_n": float(self.stats[CK.ST_PEAK_F]), "peak_moment_nm": float(self.stats[CK.ST_PEAK_M]),
                "max_platform_excursion_m": float(self.stats[CK.ST_MAX_EXC]),
                "cycles": lp.cycles if lp else 0, "overruns": lp.overruns if lp else 0,
                "missed_deadlines": lp.missed if lp else 0, "wait": self._wait_report(),
                "timing": lp.timing.stats() if lp else {},
                "log": str(self.log_path) if self.log_path else None, "t_run_s": self.t_run, "t_dynamics_start_s": self.t_dynamics_start}


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
