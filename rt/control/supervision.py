"""Supervision outside the compiled DYNAMICS call (docs/controller.md, "Safety"): while the
platform is armed, running or retracting, every cycle runs the arming time limit, the arming
contact check (rt.control.procedures.arming_contact) and ``rt.control.kernels.supervise`` (the
safety envelope, then the controller-level checks) on the command of this cycle; a trip is the
controller's ``_trip`` with the reason's name. (In DYNAMICS the same checks run inside
``hil_cycle_packed``.) Real time: the loop thread, every such cycle; no allocation but the
argument tuple.
"""
from __future__ import annotations

import numpy as np

from drivers.motion_platform import PlatformState
from rt.control import kernels as CK
from rt.control import mechanism_inputs as MI
from rt.control import recovery as RC
from rt.stand import wire_kernels as WK
from rt.control.phases import ENGAGED_PHASES, Phase
from rt.control.supervisor import State
from rt.stand.safety import Reason


def supervise_outside_dynamics(ctl, ph: Phase, pstate) -> None:
    """This cycle's checks for phase ``ph`` (the phase the cycle began in) and the platform's
    reported state ``pstate``."""
    sv = ctl.supervisor
    lim = ctl.stand.limits
    if ph is Phase.ENGAGE and ctl.phase_t > lim.arm_timeout_s:
        ctl._trip(Reason.ARM_TIMEOUT, f"arming did not finish within {lim.arm_timeout_s:g} s "
                                      f"(platform {pstate.name if pstate is not None else 'silent'})")
    elif sv.state is State.ARMED and ctl.t - ctl._arm_t0 > lim.arm_timeout_s and ctl.phase is not Phase.READY:
        ctl._trip(Reason.ARM_TIMEOUT, f"arming did not finish within {lim.arm_timeout_s:g} s (phase {ctl.phase.name})")
    elif sv.state is State.ARMED and ph in (Phase.MOVE, Phase.READY) and arming_contact(ctl, ph):
        pass                     # tripped ARMING_CONTACT (the units are apart by construction here)
    else:
        pose = ctl.cmd_pose if ctl._have_cmd else ctl.meas_pose
        fault = pstate is PlatformState.FAULT or (pstate is PlatformState.IDLE and ctl.phase in ENGAGED_PHASES)
        code = CK.supervise(*supervise_args(ctl, pose, fault, pstate is PlatformState.E_STOPPED))
        if code:
            ctl._trip(code)


def supervise_args(ctl, pose, platform_fault: bool = False, platform_estop: bool = False) -> tuple:
    """rt.control.kernels.supervise's arguments outside DYNAMICS (command ``pose``)."""
    s = ctl.sensing
    sm = ctl.safety
    g = sm.g
    ins = ctl.ins
    return (sm.lim, g.base, g.top, sm.leg_lim, g.box, sm.ctr, sm.crc_ring, sm.gap_ring, pose, ctl.cmd_twist,
            ctl.cmd_acc, s.w_S, s.w_P, ctl.out, ins[CK.IN_NEW_SAMPLE] != 0.0, int(ins[CK.IN_CRC_NEW]),
            int(ins[CK.IN_GAP_NEW]), platform_fault, platform_estop, int(ins[CK.IN_STREAK]),
            ins[CK.IN_HB] != 0.0, ctl.cmd_lengths, sm.detail, ctl.xlim, ctl.xctr, ctl.trk_ring, ctl.dly,
            ctl.delay_rec, s.raw, ctl.raw_prev, ins[CK.IN_STATUS_NEW] != 0.0, ctl.meas_pose, int(ins[CK.IN_MISSED]),
            ctl.dt, int(ins[CK.IN_SENSOR_STATUS]))


def arming_contact(ctl, ph: Phase) -> bool:
    """ARMING_CONTACT: the tared, filtered wrench on the passive unit above the contact levels
    during the arming move or at READY, where the units are apart by construction — they are
    still latched from the last run (the move would pull the mechanism apart) or something
    is in the way. Trips and returns True. Loop thread (Python, outside the dynamics)."""
    hit, f, m = RC.loaded(ctl)
    lim = ctl.stand.limits
    if not hit:
        return False
    what = (f"|f| = {f:.0f} N (contact_force_n {lim.contact_force_n:g} N)" if f > lim.contact_force_n
            else f"|m| = {m:.0f} N·m (contact_moment_nm {lim.contact_moment_nm:g} N·m)")
    where = (f"{1e3 * float(np.linalg.norm(ctl.cmd_pose[:3] - ctl._move_start[:3])):.0f} mm into "
             f"the arming move" if ph is Phase.MOVE else "at READY")
    cfg = ctl.stand.mechanism_inputs
    if cfg.wired and not MI.captured(cfg, int(ctl.meas[WK.ST_INPUTS])):
        why = ("The mechanism reports no capture (its latches are open): the units touch, or something is in the "
               "way")
    elif cfg.wired:
        why = "The mechanism reports capture: the units are latched together"
    else:
        why = "The units are still latched from the last run, or something is in the way"
    ctl._trip(Reason.ARMING_CONTACT, f"the passive unit is loaded while arming: {what}, {where}. {why}")
    return True
