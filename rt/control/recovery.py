"""The ways back after a trip, and what a trip tells the operator to do next
(docs/controller.md, "Ways back").

Three operator commands bring a stopped stand back without restarting anything; none changes
the supervisor's state (a SAFE stand stays SAFE until ``reset``), each is refused with the
step that is missing:

* ``reset_fault`` — the platform reports FAULT or E_STOPPED: send it RESET_FAULT (the device
  goes back to IDLE, servos off). The controller's phase becomes IDLE: the next ``arm``
  engages it again.
* ``retract`` — the platform stands still (FROZEN or IDLE) with the units in contact or close:
  engage it where it is and move the active unit away from the passive one along the active
  unit's docking axis (``-x_A``, in the platform base frame from the measured top pose), by
  ``[limits] retract_distance_m`` at ``retract_speed_m_s``, rest to rest. The safety envelope
  watches it as it watches a run (pose box, speeds, force and torque ratings, links), and
  RETRACT_LOAD stops it when the load on the passive unit grows by more than
  ``retract_force_margin_n`` over its value at the start: the units are held together (still
  latched), and pulling on would damage the mechanism. At the end the platform is frozen.
  Refused while the mechanism reports capture ("release it first").
* ``park`` — the platform is engaged or frozen and the units are apart: send PARK (the device
  moves to its park pose and switches the servos off); phase IDLE.

:func:`next_step` is the sentence every trip ends with: the command the operator can give now,
from the platform's state and the load on the passive unit at the trip.

Real time: the guards and :func:`begin_retract` / :func:`step_retract` run in the loop thread
(commands are carried out there; the step once per cycle in the RETRACT phase); they do no
I/O and allocate only when a command is accepted or refused.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from drivers.motion_platform import Command, PlatformState
from rt.control import kernels as CK
from rt.control import mechanism_inputs as MI
from rt.control import mechanism_link as ML
from rt.control.phases import HOW, Phase, loaded
from rt.dynamics import spatial as SP
from rt.stand import wire_kernels as WK
from rt.stand.safety import Reason

#: trips whose cause is outside the controller: fix it before anything else
_CAUSE = {
    Reason.SENSOR_LINK_LOST: "bring the F/T sensor's link back (cable, power, its address)",
    Reason.PLATFORM_LINK_LOST: "bring the motion platform's link back",
    Reason.CRC_BURST: "check the sensor link's cabling and its noise",
    Reason.SEQUENCE_GAP_BURST: "check the sensor link (frames lost on the way)",
    Reason.SENSOR_FROZEN: "check the F/T sensor (its values stopped changing)",
    Reason.SENSOR_STATUS: "check the F/T sensor's status (saturated: unload it)",
    Reason.OVERLOAD: "free the controller's computer of other load (dockstand check-host)",
    Reason.OVERRUN_STREAK: "free the controller's computer of other load (dockstand check-host)",
    Reason.RUNLOG_FAILED: "free disk space where the run logs go",
    Reason.HEARTBEAT_LOST: "attach a console and take the control lease",
    Reason.DELAY_OUT_OF_BAND: "check the platform's servo (its delay left the band)",
    Reason.TRACKING_ERROR: "check the platform's servo (it did not follow)",
    Reason.ROBOT_CYCLE_MISSED: "check the robot's link (its program runs, the cable, this computer's load)",
    Reason.CYCLE_FAILURE: "report the failure (the run log's cycle_failure event has it)",
}


def next_step(ctl, code: int) -> str:
    """The sentence a trip's text ends with: what the operator can do now (allocates: trips only)."""
    steps = []
    cause = _CAUSE.get(Reason(int(code)) if int(code) in Reason._value2member_map_ else None)
    if cause:
        steps.append(cause)
    pst = ctl.platform_state()
    if pst in (PlatformState.FAULT, PlatformState.E_STOPPED) or int(code) in (Reason.PLATFORM_FAULT,
                                                                                Reason.PLATFORM_ESTOP,
                                                                                Reason.ROBOT_CYCLE_MISSED):
        steps.append(HOW["reset_fault"])
    cfg = ctl.stand.mechanism_inputs
    if ML.latched(ctl):
        steps.append(ML.HOW_UNDOCK + " once the platform is frozen")
    elif MI.captured(cfg, int(ctl.meas[WK.ST_INPUTS])):
        steps.append("release the mechanism (undock) — it reports capture")
    elif (ctl.sensing.tared and loaded(ctl)[0]) or ctl.stats[CK.ST_FIRST_CONTACT] >= 0.0:
        steps.append(HOW["retract"] + " once the platform is frozen")
    steps += [HOW["reset"], HOW["arm"]]
    return "Next: " + ", then ".join(steps) + "."


# ---------------------------------------------------------------------- guards
def guard_reset_fault(ctl, **_: Any) -> str | None:
    st = ctl.platform_state()
    if st is None:
        return "no STATUS from the motion platform yet: nothing to reset"
    if st not in (PlatformState.FAULT, PlatformState.E_STOPPED):
        return f"the platform reports {st.name}: there is no fault to reset"
    if ctl.phase.name not in ("FROZEN", "IDLE"):
        return f"the controller is in phase {ctl.phase.name}: reset the fault once it has stopped"
    return None


def guard_retract(ctl, undock: bool = False, **_: Any) -> str | None:
    ph = ctl.phase.name
    if ph == "RETRACT":
        return "a retract is already under way"
    if ph not in ("FROZEN", "IDLE"):
        return (f"the platform is in phase {ph}: retract is for a stopped platform (after a trip, an abort or the "
                "end of a run)" + ("; wait until it is frozen" if ph == "STOP" else ""))
    st = ctl.platform_state()
    if st is None:
        return "no STATUS from the motion platform yet"
    if st in (PlatformState.FAULT, PlatformState.E_STOPPED):
        return f"the platform reports {st.name}: {HOW['reset_fault']} first"
    links = ctl.links
    if not links.samples or ctl.stale_sensor():
        return f"the F/T sensor is not streaming ({links.silence(links.s_tr)}): a retract watches the load"
    if not ctl.sensing.tared:
        return "the F/T sensor has not been tared since the controller started: a retract watches the load"
    cfg = ctl.stand.mechanism_inputs
    if MI.captured(cfg, int(ctl.meas[WK.ST_INPUTS])) and not undock:
        return (f"release the mechanism (undock) first: it reports capture (platform input bit {cfg.capture}); a "
                "retract would pull the latched units apart")
    if not undock and ML.latched(ctl):
        return "the mechanism reports its latches closed: undock instead (it opens them, then retracts)"
    return None


def guard_park(ctl, **_: Any) -> str | None:
    ph = ctl.phase.name
    if ph not in ("FROZEN", "IDLE"):
        return f"the platform is in phase {ph}: park a stopped platform" + (
            "; wait until it is frozen" if ph == "STOP" else "")
    st = ctl.platform_state()
    if st is None:
        return "no STATUS from the motion platform yet"
    if st is PlatformState.IDLE:
        return "the platform is parked already (IDLE)"
    if st in (PlatformState.FAULT, PlatformState.E_STOPPED):
        return f"the platform reports {st.name}: {HOW['reset_fault']} first"
    cfg = ctl.stand.mechanism_inputs
    if MI.captured(cfg, int(ctl.meas[WK.ST_INPUTS])):
        return "release the mechanism (undock) first: it reports capture"
    hit, f, m = loaded(ctl)
    if hit:
        return (f"the units are in contact (|f| = {f:.0f} N, |m| = {m:.0f} N·m on the passive unit): "
                f"{HOW['retract']} first")
    return None


def guard_undock(ctl, **_) -> str | None:
    io = ctl.mechanism_io
    if io is None:
        return ("this stand has no mechanism link ([mechanism_io]): open the latches at the mechanism's own control "
                "unit, then retract")
    if ctl.stand.mechanism_io.release_coil is None:
        return ("the mechanism map has no release output ([mechanism_io] release_coil): open the latches at the "
                "mechanism's control unit, then retract")
    st = io.state
    if not st.ok:
        return f"the mechanism's I/O link is silent ({st.error})"
    if st.fault:
        return f"the docking mechanism reports a fault: {st.fault_name} (code {st.fault})"
    return guard_retract(ctl, undock=True)


def begin_undock(ctl) -> None:
    """UNDOCK: the release output on, then (recovery.step_retract) the retreat once every latch
    reports open."""
    ctl.mechanism_io.release(True)
    begin_retract(ctl)
    ctl._retract.update(undock=True, released=False, t_release=ctl.phase_t)
    ctl._event({"kind": "undock_start", "release": True})


GUARDS = {"reset_fault": guard_reset_fault, "retract": guard_retract, "park": guard_park, "undock": guard_undock}


# ---------------------------------------------------------------------- procedures (loop thread)
def begin_reset_fault(ctl) -> None:
    ctl._pending_cmd = Command.RESET_FAULT
    ctl._have_cmd = False
    ctl._set_phase_idle()


def begin_park(ctl) -> None:
    ctl._pending_cmd = Command.PARK
    ctl._have_cmd = False
    ctl._set_phase_idle()


def begin_retract(ctl) -> None:
    """RETRACT: clear the trip so that the envelope watches the move, engage the platform
    where it stands (ENGAGE is sent by the first step), then the move."""
    ctl.clear_trip()
    ctl._have_cmd = False        # no set-point of this retract yet: a stop before it engages is a FREEZE
    ctl.xlim[CK.XL_TRACK_ON] = 0.0
    ctl._retract = {"engaged": False, "sent": False, "f0": 0.0, "t0": 0.0}
    ctl._set_phase(Phase.RETRACT)


def retract_target(pose: np.ndarray, R_TA: np.ndarray, distance: float) -> np.ndarray:
    """The top pose ``distance`` (m) further along ``-x_A`` (the active unit's docking axis,
    pointing away from the passive unit) from ``pose`` (top in B): orientation kept."""
    q = np.ascontiguousarray(pose[3:7])
    R_BT = np.zeros((3, 3))
    SP.quat_to_dcm(q, R_BT)
    away = -(R_BT @ R_TA[:, 0])
    out = pose.copy()
    out[:3] += distance * away / np.linalg.norm(away)
    return out


def step_retract(ctl, dt: float, pstate) -> bool:
    """One cycle of the retract; returns whether it commands a set-point this cycle."""
    r = ctl._retract
    lim = ctl.stand.limits
    if not r["engaged"] and r.get("undock"):
        got = ML.undock_released(ctl)
        if got is None:
            ML.undock_finished(ctl)
            ctl._event({"kind": "undock_failed", "why": f"the latches did not report open within "
                                                        f"{ctl.stand.undock_release_timeout_s:g} s of the release"})
            ctl._set_phase(Phase.FROZEN if ctl.platform_state() is not None and
                           ctl.platform_state().name in ("FROZEN", "ENGAGED") else Phase.IDLE)
            return False
        if not got:
            return False
    if not r["engaged"]:
        if not r["sent"]:
            ctl._pending_cmd = Command.ENGAGE
            r["sent"] = True
            return False
        if pstate is not PlatformState.ENGAGED:
            if ctl.phase_t > lim.arm_timeout_s:
                ctl._trip(Reason.ARM_TIMEOUT, f"retract: the platform did not engage within {lim.arm_timeout_s:g} s "
                                              f"(it reports {pstate.name if pstate is not None else 'nothing'})")
            return False
        start = ctl.meas_pose.copy()
        ctl.cmd_pose[:] = start
        ctl.sent_pose[:] = start
        ctl.sent_twist[:] = 0.0
        ctl.prev_pose[:] = start
        ctl.prev_vel[:] = 0.0
        ctl._have_cmd = True
        dist = ctl.stand.undock_distance_m if r.get("undock") else lim.retract_distance_m
        r["distance"] = dist
        target = retract_target(start, ctl.stand.active_mount.R, dist)
        CK.move_setup(ctl.mv, start, target, lim.retract_speed_m_s, lim.retract_accel_m_s2,
                      lim.arming_rate_rad_s, lim.arming_angular_accel_rad_s2)
        r.update(engaged=True, f0=loaded(ctl)[1], t0=ctl.phase_t)
        ctl.xlim[CK.XL_TRACK_ON] = 1.0
        ctl._event({"kind": "retract_start", "distance_m": dist, "f0_n": r["f0"]})
        return True
    f = loaded(ctl)[1]
    if f > r["f0"] + lim.retract_force_margin_n:
        ctl._trip(Reason.RETRACT_LOAD,
                  f"the load on the passive unit grew to |f| = {f:.0f} N during the retract (from {r['f0']:.0f} N, "
                  f"margin {lim.retract_force_margin_n:g} N): the units are held together. Release the mechanism "
                  "(undock) before retracting")
        return True
    if CK.move_eval(ctl.mv, ctl.phase_t - r["t0"], ctl.cmd_pose, ctl.scr):
        ctl._pending_cmd = Command.FREEZE
        ctl.xlim[CK.XL_TRACK_ON] = 0.0
        ctl._event({"kind": "retract_done", "distance_m": r["distance"], "f_n": f})
        if r.get("undock"):
            ML.undock_finished(ctl)
        ctl._set_phase(Phase.FROZEN)
    return True
