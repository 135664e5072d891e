"""The controller's procedures: what it does when a command is accepted, and each phase's
work per cycle outside the compiled DYNAMICS call (docs/controller.md, "Controller"; the
phase table: rt.control.phases).

* :func:`after_command` — an accepted command's part of the controller (load, arm, start,
  stop, abort, tare, reset; the ways back through rt.control.recovery);
* arming — :func:`begin_arm` (adopt the run log prepared before the arm, a fresh flight
  model, the delay estimator anew), ENGAGE, TARE, then :func:`begin_move`: the quintic move to
  the run-up's start pose (after a run that touched, a creep first: ARMING_CONTACT within a
  fraction of a millimetre, :func:`arming_contact`), READY;
* the run — :func:`begin_run`, the run-up (:func:`runup_target`, :func:`step_runup`: uniform
  acceleration into the case's initial relative state), then DYNAMICS;
* stopping — :func:`begin_stop` and :func:`stop_step` (``rt.stand.safety.SafeStop`` from the
  last command sent, then FREEZE);
* the mechanism's signals (:func:`inputs_changed`: their edges as events, the run's capture).

Each function takes the controller (``ctl``) and works on its parts; the step functions
return whether the phase commands a set-point this cycle. Real time: the ``step_*`` functions
and :func:`stop_step` run every cycle in the loop thread (no I/O; the arming move's set-up
allocates once per move); the others run once per command or phase change, in the loop thread.
"""
from __future__ import annotations

import logging
import math
import time
import uuid

import numpy as np

from drivers.motion_platform import Command, PlatformState
from rt.control import cycle_store as CS
from rt.control import end_criteria as EC
from rt.control.cycle_store import pack_cycle
from rt.control import kernels as CK
from rt.control import mechanism_inputs as MI
from rt.control import recovery as RC
from rt.control import supervision as SV
from rt.control.recorder import closed_sink
from rt.control.phases import ENGAGED_PHASES, Phase, arm_envelope
from rt.control.supervisor import Event, State
from rt.dynamics import coupling as CP
from rt.dynamics import spacecraft as SCM
from rt.dynamics.berthing_flight import flight_from_case
from rt.stand import contact_gate as CG
from rt.stand import delay_id as DY
from rt.stand import wire_kernels as WK
from rt.stand.safety import Reason

# the cycle's fixed indices into ``ins`` (rt.control.kernels IN_*), read as module globals per cycle
_IN_LK_ERR, _IN_TXLEN, _IN_INPUTS_CHG = CK.IN_LK_ERR, CK.IN_TXLEN, CK.IN_INPUTS_CHG
_S_ACC, _P_ACC = CK.IN_LK_S + WK.LK_ACC, CK.IN_LK_P + WK.LK_ACC

log = logging.getLogger("dockstand.controller")


def after_command(ctl, name: str, args: dict) -> None:
    st = ctl.supervisor.state
    if name == "load_case":
        ctl.case = args["case"]
        ctl.case_path = args.get("path")
        ctl.sc = flight_from_case(ctl.case)
        ctl._hil_pack = None
        if 2 * ctl.sc.ns != ctl.fields["x"]:
            CS.allocate(ctl, ctl.sensing.n_raw, ctl.sc.ns)
            if ctl.telemetry is not None:
                ctl.telemetry.fields = dict(ctl.fields)
                ctl.telemetry.width = ctl.row.size
    elif name == "arm":
        begin_arm(ctl, args.get("_log"), args.get("_flight"))
    elif name == "start":
        begin_run(ctl)
    elif name == "stop":
        if st is State.DONE:
            ctl.finish_reason = "operator stop"
            begin_stop(ctl)
        elif st is State.CONFIGURED:  # disarm
            begin_stop(ctl)
    elif name == "abort":
        if ctl.phase in ENGAGED_PHASES or ctl.phase is Phase.ENGAGE:
            begin_stop(ctl)
    elif name == "tare":
        ctl.sensing.begin_tare()
    elif name == "reset":
        clear_trip(ctl)
        if ctl.failsafe is not None:
            ctl._leave_failsafe()
    elif name == "reset_fault":
        RC.begin_reset_fault(ctl)
    elif name == "retract":
        RC.begin_retract(ctl)
    elif name == "park":
        RC.begin_park(ctl)
    elif name == "undock":
        RC.begin_undock(ctl)


def begin_arm(ctl, log_writer=None, flight=None) -> None:
    """The supervisor armed: adopt the run log prepared for it (``log_writer``), then the
    arming phases. Nothing here can fail for want of a file: the log was opened before
    the arm was accepted (ARM is atomic)."""
    # the log first: the events from here on belong to this run
    adopt_log(ctl, log_writer)
    # an expiry seen before this arm belongs to a lease that is gone (a console that
    # wants to be watched acquires the lease; a later expiry trips again)
    ctl._heartbeat_lost = False
    ctl.sc = flight if flight is not None else flight_from_case(ctl.case)   # fresh state at every arm
    ctl._hil_pack = None
    ctl.t_run = 0.0
    ctl.finish_reason = None
    ctl.safety.reset()
    ctl.xctr[:] = 0
    ctl.xctr[CK.XC_MISS_PREV] = -1
    ctl.xlim[CK.XL_TRACK_ON] = 0.0
    DY.delay_reset(ctl.dly)           # identified anew from this run's motion (the arming move first)
    ctl.delay_rec[:] = math.nan
    env = arm_envelope(ctl)           # the case's stiffest contact at this lead (refused before, if asked)
    ctl._event(env.as_event())
    if env.inside is False:
        log.warning("armed outside the stand's envelope: %s", env.reason)
    ctl._arm_t0 = ctl.t
    ctl._engage_sent = False
    ctl._set_phase(Phase.ENGAGE)


def run_predictor(ctl) -> tuple[int, str, str]:
    """The run's predictor (``rt.dynamics.coupling`` ``MODE_*``), its name and why: the case's
    ``[loop] predictor`` with its reason where the case names one, else the stand's ``[delays]
    predictor``; ``MODE_OFF`` without compensation."""
    own = ctl.case.loop.predictor if ctl.case is not None else None
    name = own or ctl.stand.delays.predictor
    why = ctl.case.loop.predictor_reason if own else "the stand's [delays] predictor"
    return (CP.PREDICTORS[name] if ctl.compensate else CP.MODE_OFF), name, why


def runup_target(ctl) -> float:
    """Set up the run-up from the spacecraft's initial relative state; returns its length."""
    out = ctl.out
    ctl.w_in[:] = 0.0
    w = ctl.sc.ws
    CP.relative_rates_kernel(ctl.sc.env)(ctl.sc.par, ctl.sc.env, ctl.sc.x, 0.0, ctl.w_in, 1e-4, out,
                                          CP.O_REL, w.k[0], w.xt, w.ws, w.rel)
    r = out[CP.O_REL + SCM.REL_R:CP.O_REL + SCM.REL_R + 3]
    q = out[CP.O_REL + SCM.REL_Q:CP.O_REL + SCM.REL_Q + 4]
    v = out[CP.O_REL + SCM.REL_V:CP.O_REL + SCM.REL_V + 3]
    wv = out[CP.O_REL + SCM.REL_W:CP.O_REL + SCM.REL_W + 3]
    lim = ctl.stand.limits
    T = max(np.linalg.norm(v) / (0.5 * lim.a_max_m_s2), np.linalg.norm(wv) / (0.5 * lim.alpha_max_rad_s2))
    # the run-up plus the prediction lead is a whole number of periods, so that the last
    # run-up command and the first dynamics command are one period apart on one path
    # the configured delay: set before the arming move, where the identification starts
    # (rt.stand.delay_id; the dynamics move the lead to the identified one smoothly)
    ctl.delay_rec[DY.DR_USED] = ctl.tau
    CP.reset_memory(ctl.out)
    lead = ctl.tau if ctl.compensate else 0.0
    dt = ctl.period_s
    T = math.ceil((T + lead) / dt - 1e-9) * dt - lead if T > 0.0 else 0.0
    ctl.runup_lead = lead
    ctl.ru[CK.RU_R0:CK.RU_R0 + 3] = r
    ctl.ru[CK.RU_Q0:CK.RU_Q0 + 4] = q
    ctl.ru[CK.RU_V0:CK.RU_V0 + 3] = v
    ctl.ru[CK.RU_W0:CK.RU_W0 + 3] = wv
    ctl.ru[CK.RU_T] = T
    return T


def runup_start_pose(ctl) -> np.ndarray:
    T = runup_target(ctl)
    out = np.zeros(CP.OUT_LEN)
    CK.runup_eval(ctl.ru, ctl.geo, -T, out, ctl.scr)
    return out[CP.O_PCMD:CP.O_PCMD + 7].copy()


def begin_move(ctl) -> None:
    """The arming move to the run-up's start pose at half the run's limits. After a run that
    touched (the units may be latched), in two rest-to-rest legs on one straight path: a
    creep over its first ``arming_creep_m`` / ``arming_creep_deg`` (``arming_*`` speeds: a
    load there trips ARMING_CONTACT within a fraction of a millimetre), then the rest."""
    target = runup_start_pose(ctl)
    lim = ctl.stand.limits
    start = ctl.cmd_pose.copy() if ctl._have_cmd else ctl.meas_pose.copy()
    ctl._move_start = start
    way = target.copy()
    touched = ctl.stats[CK.ST_FIRST_CONTACT] >= 0.0      # the last run's (reset at the next start)
    f = CK.move_waypoint(start, target, lim.arming_creep_m, lim.arming_creep_rad, way, np.zeros(11)) \
        if touched else 1.0
    ctl._move_rest = target if f < 1.0 else None
    ctl._move_t0 = 0.0
    CK.move_setup(ctl.mv, start, way, *arming_limits(ctl, creep=touched))
    ctl.xlim[CK.XL_TRACK_ON] = 1.0
    ctl._set_phase(Phase.MOVE)


def arming_limits(ctl, creep: bool) -> tuple[float, float, float, float]:
    """The arming move's speed, acceleration, angular rate and angular acceleration: half
    the run's limits, or the creep's ``arming_*`` ones if lower."""
    lim = ctl.stand.limits
    half = (0.5 * lim.v_max_m_s, 0.5 * lim.a_max_m_s2, 0.5 * lim.omega_max_rad_s, 0.5 * lim.alpha_max_rad_s2)
    if not creep:
        return half
    return tuple(min(h, c) for h, c in zip(half, (lim.arming_speed_m_s, lim.arming_accel_m_s2,
                                                  lim.arming_rate_rad_s, lim.arming_angular_accel_rad_s2)))


def begin_run(ctl) -> None:
    ctl.sc = flight_from_case(ctl.case)
    ctl._mode, predictor, why = run_predictor(ctl)
    ctl._hil_pack = pack_cycle(ctl)   # now, not in the loop's first DYNAMICS cycle
    runup_target(ctl)                 # (its reset_memory clears the jerk's memory, not its limits)
    lim = ctl.stand.limits
    jerk_limits = CP.set_jerk_limits(ctl.out, lim.accel_margin * lim.a_max_m_s2,
                                     lim.accel_margin * lim.alpha_max_rad_s2, ctl.tau, ctl.period_s)
    lead_limits = CP.set_lead_limits(ctl.out, lim.accel_margin * lim.a_max_m_s2,
                                     lim.accel_margin * lim.alpha_max_rad_s2, ctl.stand.delays.lead_acceleration_share)
    ctl.t_run = -(ctl.ru[CK.RU_T] + ctl.runup_lead) if ctl.ru[CK.RU_T] > 0.0 else 0.0
    ctl.sensing.reset_filter()
    CG.gate_reset(ctl.gate)
    ctl.run_start_pose[:] = ctl.sent_pose
    ctl.stats[:] = 0.0
    ctl.stats[CK.ST_FIRST_CONTACT] = -1.0
    ctl.capture_t_run = None
    ctl.capture_held_since = None
    r0 = float(np.linalg.norm(ctl.ru[CK.RU_R0:CK.RU_R0 + 3]))
    lim = ctl.stand.limits
    ctl.endp[:] = (ctl.case.duration_s, r0 + ctl.case.end.separation_m, ctl.contact_threshold_n,
                    *ctl.sent_pose[:3], ctl.case.end.capture_settle_s, lim.capture_speed_max_m_s,
                    lim.capture_rate_max_rad_s)
    ctl.t_dynamics_start = ctl.t if ctl.t_run >= 0.0 else None
    # what the cycle's kernels start from that the records do not carry (dockstand recompute)
    ctl._event({"kind": "run_start", "sensing_bias": [float(b) for b in ctl.sensing.bias],
                 "t_run": ctl.t_run, "tau_s": ctl.tau, "mode": int(ctl._mode), "predictor": predictor,
                 "predictor_reason": why, "jerk_limits": list(jerk_limits),
                 "lead_limits": list(lead_limits)})
    ctl._set_phase(Phase.RUNUP if ctl.t_run < 0.0 else Phase.DYNAMICS)


def begin_stop(ctl) -> None:
    if ctl._have_cmd and ctl.phase in ENGAGED_PHASES:
        ctl.safe_stop.start(ctl.sent_pose, ctl.sent_twist)
        ctl._set_phase(Phase.STOP)
    else:
        ctl._pending_cmd = Command.FREEZE if ctl.phase is not Phase.IDLE else None
        ctl._set_phase(Phase.FROZEN if ctl.phase is not Phase.IDLE else Phase.IDLE)


def inputs_changed(ctl, first_status: bool = False) -> None:
    """The STATUS digital-input word changed this cycle: its wired edges as events (capture,
    capture_released, latch_closed/opened; ``rt.control.mechanism_inputs``) with the run
    clock and phase; the first capture of a run is its capture time. ``first_status``: the
    controller's first STATUS (the signals were so before it started: ``at_start``). Loop
    thread, only on the cycle of a change."""
    ins = ctl.ins
    running = ctl.phase in (Phase.RUNUP, Phase.DYNAMICS)
    for ev in MI.edges(ctl.stand.mechanism_inputs, int(ins[CK.IN_INPUTS_OLD]), int(ins[CK.IN_INPUTS])):
        ev["phase"] = ctl.phase.name
        if first_status:
            ev["at_start"] = True
        if ctl.mechanism_io is not None:       # the mechanism's own link is the authority on capture
            ev["source"] = "platform_inputs"
        if running:
            ev["t_run"] = ctl.t_run
            if ctl.mechanism_io is None:
                MI.capture_signal_edge(ctl, ev["kind"])
        ctl._event(ev)


def capture_signal_check(ctl) -> None:
    """While the capture signal is held in DYNAMICS: the run ends "capture settled" once it has
    held for the case's ``end.capture_settle_s`` (``rt.control.end_criteria``, criterion 1),
    as the digital reference ends on its mechanism's soft capture. The cycle's frame goes out
    as computed; the stop begins from it. Loop thread, every DYNAMICS cycle while the signal
    is held (two comparisons)."""
    if ctl.phase is Phase.DYNAMICS and ctl.trip_code == 0 and \
            EC.capture_signal_settled(ctl.t_run, ctl.capture_held_since, ctl.case.end.capture_settle_s):
        ctl.stats[CK.ST_END] = EC.END_CAPTURE_SETTLED
        why = EC.ENDS[EC.END_CAPTURE_SETTLED].words
        ctl.finish_reason = why
        ctl.supervisor.finish(why)
        begin_stop(ctl)


def step_none(ctl, dt: float, pstate) -> bool:
    return False


def step_engage(ctl, dt: float, pstate) -> bool:
    if not ctl._engage_sent:
        ctl._pending_cmd = Command.ENGAGE
        ctl._engage_sent = True
    elif pstate is PlatformState.ENGAGED:
        ctl.cmd_pose[:] = ctl.meas_pose
        ctl.sent_pose[:] = ctl.meas_pose
        ctl.sent_twist[:] = 0.0
        ctl._have_cmd = True
        ctl.prev_pose[:] = ctl.cmd_pose
        ctl.prev_vel[:] = 0.0
        ctl.sensing.begin_tare()
        ctl._set_phase(Phase.TARE)
        return True
    return False


def step_tare(ctl, dt: float, pstate) -> bool:
    if ctl.sensing.tared:
        begin_move(ctl)
    return True


def step_move(ctl, dt: float, pstate) -> bool:
    if CK.move_eval(ctl.mv, ctl.phase_t - ctl._move_t0, ctl.cmd_pose, ctl.scr):
        if ctl._move_rest is None:
            ctl._set_phase(Phase.READY)
        else:                        # the creep is done: the rest of the path at half the run's limits
            CK.move_setup(ctl.mv, ctl.cmd_pose.copy(), ctl._move_rest, *arming_limits(ctl, creep=False))
            ctl._move_rest = None
            ctl._move_t0 = ctl.phase_t
    return True


def step_ready(ctl, dt: float, pstate) -> bool:
    return True


def step_runup(ctl, dt: float, pstate) -> bool:
    """The run-up at the time that really passed. It ends within half a period of t_run = 0;
    a cycle that overshoots it (deadlines skipped) commands the run-up's constant-velocity
    extension at its true time, and the dynamics start from the case's state carried free
    over that overshoot (``Spacecraft.step`` with no wrench: no contact before the case's
    initial state), so that neither path jumps."""
    ctl.t_run += dt
    CK.runup_eval(ctl.ru, ctl.geo, ctl.t_run + ctl.runup_lead, ctl.out, ctl.scr)
    ctl.cmd_pose[:] = ctl.out[CP.O_PCMD:CP.O_PCMD + 7]
    if ctl.t_run >= -0.5 * ctl.period_s:
        over = ctl.t_run
        if over > 0.5 * ctl.period_s:
            ctl.sc.step(0.0, over, ctl._no_wrench)
            ctl._event({"kind": "runup_overshoot", "t_run": over})
        else:
            ctl.t_run = 0.0
        ctl.t_dynamics_start = ctl.t
        ctl._set_phase(Phase.DYNAMICS)
    return True


def step_stop(ctl, dt: float, pstate) -> bool:
    stop_step(ctl)
    return False


def stop_step(ctl) -> None:
    if ctl.safe_stop.step(ctl.dt):    # the time that really passed (overruns skip slots)
        ctl._pending_cmd = Command.FREEZE
        ctl._set_phase(Phase.FROZEN)
    ctl.cmd_pose[:] = ctl.safe_stop.pose
    ctl.cmd_acc[:] = (ctl.safe_stop.twist - ctl.sent_twist) / ctl.dt
    ctl.cmd_twist[:] = ctl.safe_stop.twist
    ctl.prev_pose[:] = ctl.cmd_pose
    ctl.prev_vel[:6] = ctl.cmd_twist
    ctl.prev_vel[CK.PV_DT] = ctl.dt
    ctl.hexapod.inverse(ctl.cmd_pose, ctl.cmd_lengths)


def adopt_log(ctl, writer) -> None:
    """Make ``writer`` (opened off the loop by :meth:`prepare_arm_log`) the run's log: the
    kernels commit their rows into its ring from now on (no I/O)."""
    if writer is None:
        ctl.recorder.close(block=False)
        return
    ctl.recorder.adopt(writer)
    ctl._log_ring, ctl._log_cursor = writer.ring, writer.cursor    # the kernels commit the row (emit)
    ctl._hil_pack = None
    if ctl.telemetry is not None:       # describe names the run a console or ctl talks to
        ctl.telemetry.identity["run_id"] = ctl.run_id


def set_phase_idle(ctl) -> None:
    """The platform was told to go IDLE (RESET_FAULT, PARK): the controller commands nothing."""
    ctl._set_phase(Phase.IDLE)


def clear_trip(ctl) -> None:
    """Forget the present trip (the supervisor keeps its state): ``reset``, ``retract``."""
    ctl._heartbeat_lost = False
    ctl.trip_code = 0
    ctl.ins[CK.IN_TRIP] = 0
    ctl.trip_text = None
    ctl.safety.reset()
    ctl.xctr[:] = 0


def dynamics_outcome(ctl, code: int, flags: int) -> None:
    """What the DYNAMICS call flagged: frames refused, the first contact, the mechanism's
    signals, a trip, an end criterion (the run finishes and the stop begins)."""
    if flags & CK.F_REFUSED:
        ctl.links.count_refused()
    st = ctl.stats
    if flags & CK.F_FIRST_CONTACT:
        ctl._event({"kind": "first_contact", "t_run": float(st[CK.ST_FIRST_CONTACT])})
    if flags & CK.F_INPUTS:
        inputs_changed(ctl)
    if code:
        ctl._tx_ready = False
        ctl._trip(code)
    elif flags & CK.F_END:
        ctl._tx_ready = False
        why = EC.ENDS[int(st[CK.ST_END])].words
        ctl.finish_reason = why
        ctl.supervisor.finish(why)
        begin_stop(ctl)
    if ctl.phase is Phase.STOP:
        stop_step(ctl)


def runlog_failed(ctl, w) -> None:
    """The run log's writer could not write (a full disk): an event, the log closed (its
    writer finishes what it can), and by ``[runlog] on_failure`` a trip while a run is
    armed or running. Loop thread, once per failure."""
    rec = ctl.recorder
    rec.last_failure = w.failure
    ctl._event({"kind": "runlog_failed", "reason": w.failure, "records_written": w.tail, "log": str(w.path),
                 "policy": ctl.stand.runlog_on_failure})
    rec.close(block=False)
    ctl._log_ring, ctl._log_cursor = closed_sink(ctl.row.shape[0])
    ctl._hil_pack = None
    if ctl.stand.runlog_on_failure == "trip" and ctl.supervisor.state in (State.ARMED, State.RUNNING):
        ctl._trip(Reason.RUNLOG_FAILED,
                   f"the run log could not be written: {w.failure}; {w.tail} records were kept (the file reads as "
                   "truncated). The run is stopped because it is no longer recorded ([runlog] on_failure = "
                   "\"trip\")")


def init_state(ctl) -> None:
    """The controller's run state at construction: what the phases, the clocks, a trip and the
    pending platform command start from (each attribute documented here)."""
    ctl.case = None                # the loaded case (rt.config.case.Case)
    ctl.case_path = None           # its file
    ctl.sc = None                  # its flight model (rt.dynamics.spacecraft / berthing_flight)
    ctl.phase = Phase.IDLE         # what the platform is told now (rt.control.phases)
    ctl.phase_t = 0.0              # s in this phase
    ctl.t = 0.0                    # controller time (s) since the loop started
    ctl.t_run = 0.0                # dynamics time (s) since the start of the case
    ctl.t_dynamics_start = None    # controller time (s) when the dynamics began
    ctl.runup_lead = 0.0           # the prediction lead the run-up was set up with (s)
    ctl.capture_t_run = None       # t_run when the mechanism's capture signal rose in this run
    ctl.capture_held_since = None  # t_run of the capture signal's last rise while it stays high (None: low)
    ctl.log_extra = {}             # more run-log header entries (a campaign's sample: its values)
    ctl.instance = uuid.uuid4().hex[:12]   # this controller object (its events are numbered within it)
    ctl._prev_tns = -1             # the last cycle's slot time (ns)
    ctl.dt = ctl.period_s          # the last cycle's length (read)
    ctl.trip_code = 0              # the present trip's Reason (0: none)
    ctl.trip_text = None           # its sentence, ending with the next step
    ctl.finish_reason = None       # how the last run ended (rt.control.end_criteria words)
    ctl._pending_cmd = None        # a state command for the next frame (drivers.motion_platform.Command)
    ctl._engage_sent = False
    ctl._have_cmd = False          # a set-point was commanded since the platform engaged
    ctl._heartbeat_lost = False    # the console's lease lapsed (HEARTBEAT_LOST while armed)
    ctl._move_start = np.zeros(7)  # the arming move: its start, the pose after the creep, its clock
    ctl._move_rest = None
    ctl._move_t0 = 0.0
    ctl._retract = {}              # the retract's progress (rt.control.recovery)
    ctl.cycle_failures = 0         # cycles whose work raised (rt.control.failsafe): each a safe stop
    ctl._failing = 0               # consecutive ones (3: the fail-safe hold)
    ctl.failsafe = None            # why the fail-safe hold is on (None: the normal cycle)
    ctl.mechanism_io = None        # the mechanism's Modbus link (rt.control.mechanism_link), when configured
    ctl._mio_seq = 0               # its last poll seen by the loop
    from drivers.mechanism_io import MechanismState
    ctl._mio_state = MechanismState()


def lease_lost(ctl, holder: str, why: str = "silent") -> None:
    """The lease holder went silent, or its CURVE key was revoked (rt.record.telemetry)."""
    ctl._heartbeat_lost = True
    ctl._event({"kind": "lease_lost", "holder": holder, "why": why})

def lease_acquired(ctl, client: str) -> None:
    """A console took the lease: an earlier expiry no longer means anything."""
    ctl._heartbeat_lost = False


def on_supervisor_event(ctl, e: Event) -> None:
    ctl.ins[CK.IN_STATE] = ctl.supervisor.state
    d = e.as_dict()
    d["kind"] = "supervisor_" + d["kind"]
    ctl._event(d)
    if e.kind == "trip":
        log.warning("safety trip: %s (%s)", e.reason, e.detail)
    elif e.kind == "transition":
        log.info("state %s -> %s (%s)", e.previous, e.state, e.reason or e.command)
        ctl.session.on_transition(e.previous, e.state)


def update_outside_dynamics(ctl, cycle: int) -> None:
    """update outside DYNAMICS: this cycle's frames decoded (rt.control.kernels.ingest), the
    mechanism's signals, the sensing, the phase's step, the command's rates, the supervision
    (rt.control.supervision), the stop's first step when a stop began this cycle."""
    ins = ctl.ins
    CK.set_link_inputs(ins, *ctl._link_inputs(cycle))
    links = ctl.links
    status_seen = ins[CK.IN_STATUS_SEEN] != 0.0
    CK.ingest(links.sbuf, links.pbuf, ctl.sensing.raw, ctl.meas, ins, ctl.row, ctl.rix)
    links.add_counts(int(ins[_S_ACC]) if links.framed_sensor else 0, int(ins[_P_ACC]), ins[_IN_LK_ERR],
                     time.monotonic())
    links.count_refused()
    if ins[_IN_INPUTS_CHG]:
        inputs_changed(ctl, first_status=not status_seen)
    dt = ctl.dt
    ph = ctl.phase
    ctl.phase_t += dt
    sv = ctl.supervisor
    pstate = ctl.platform_state()
    ctl.sensing.step()
    command = ctl._phase_step[ph](dt, pstate)
    ctl._command = command or ph is Phase.STOP
    if command:
        CK.command_rates(ctl.cmd_pose, ctl.prev_pose, ctl.prev_vel, ctl.cmd_twist, ctl.cmd_acc, dt,
                         not ctl._have_cmd, ctl.scr)
        ctl._have_cmd = True
    # safety: whenever the platform is (being) engaged and no trip is active
    if (sv.state in (State.ARMED, State.RUNNING) or (ph is Phase.RETRACT and ctl._retract.get("engaged"))) \
            and ctl.trip_code == 0:
        SV.supervise_outside_dynamics(ctl, ph, pstate)
    elif command:
        ctl.hexapod.inverse(ctl.cmd_pose, ctl.cmd_lengths)
    if ctl.phase is Phase.STOP and ph is not Phase.STOP:
        # a stop began this cycle (trip, finish, operator): its first step replaces the
        # command computed above, continuing from the last command actually sent
        stop_step(ctl)
        ctl._command = True


def write_frame(ctl) -> None:
    """The frame of a cycle whose frame the DYNAMICS kernel did not encode: a pending
    state command, else the set-point, else a HEARTBEAT; encoded with the run-log row."""
    p = ctl.links.platform
    pc = ctl._pending_cmd
    vals, n = ctl.cmd_pose, 0
    if pc is not None:
        ctl._pending_cmd = None
        ftype = int(pc)
    elif ctl._command and ctl.phase is not Phase.FROZEN and ctl.supervisor.state in (
            State.ARMED, State.RUNNING, State.DONE, State.SAFE, State.ABORTED, State.CONFIGURED):
        ftype, n = ctl._ftype, ctl._set_point_n
        if ftype == WK.LENGTHS:
            vals = ctl.cmd_lengths
        ctl.sent_pose[:] = ctl.cmd_pose
        ctl.sent_twist[:] = ctl.cmd_twist
    else:
        ftype = WK.HEARTBEAT
    ph = ctl.phase
    t_row = ctl.t_run if ph is Phase.RUNUP or ph is Phase.DYNAMICS else math.nan
    CK.emit(ftype, p.seq, time.monotonic_ns(), vals, n, t_row, ctl.ins, ctl.tx, ctl.row, ctl.rix,
            ctl.sensing.w_S, ctl.sensing.w_P, ctl.sc.x if ctl.sc is not None else ctl._x0, ctl.out,
            ctl._timing, ctl._log_ring, ctl._log_cursor, True)
    ctl._send(ctl._txmv[:int(ctl.ins[_IN_TXLEN])])
