"""Compiled per-cycle pieces of the controller (rt/control/controller.py; docs/controller.md, "Cycle").

Command generators, each writing the platform-top pose ``[p_BT_B, q_BT]`` (7):

* :func:`move_eval` — the arming move: straight line and single-axis rotation from a start pose
  to a target pose with the quintic time law ``s(u) = 10u^3 - 15u^4 + 6u^5`` (rest to rest;
  peak speed 1.875 D/T, peak acceleration 5.7735 D/T^2).
* :func:`runup_eval` — the run-up before the dynamics start: the relative pose of A in P
  accelerates uniformly from rest to the case's initial relative velocity so that at s = 0 it
  *is* the case's initial state (position, attitude, velocity): for s in [-T, 0]
  ``r(s) = r0 + v0 (s + s^2 / 2T)``, ``q_PA(s) = exp(w0 (s + s^2 / 2T)) (x) q0`` (w0 in P);
  beyond 0 the constant-velocity extension. Mapped to the top through the stand geometry
  (``rt.dynamics.coupling.platform_pose``).

:func:`command_rates` differentiates the command (backward differences over the time that
really passed; the angular rate is the rotation vector of ``q_k (x) q_{k-1}^*`` over dt, B
components) — what the safety checks judge and what the platform is asked to do. A velocity
``(p_k - p_{k-1}) / h_k`` is that of the middle of its step, so the acceleration divides the
velocity change by the distance of the two middles, ``(h_k + h_{k-1}) / 2``: equal to ``h`` on
a steady loop, and still the true acceleration after skipped deadlines (a 31 ms step followed by
a 1 ms one divided by 1 ms would read a smooth move as 16x its acceleration).

:func:`supervise` runs ``rt.stand.safety.check`` and then the controller-level checks:
OVERLOAD (the loop missed more than ``miss_budget`` deadlines within ``miss_window_s``: a
leaky bucket — each missed deadline adds one, the bucket drains ``miss_budget`` per window;
named before any consequence: a link that went silent, a stale sample while the loop itself
was missing deadlines), PLATFORM_LINK_LOST (no STATUS for N cycles), SENSOR_FROZEN (N
identical raw samples in a row) and TRACKING_ERROR (measured top position against the
command sent ``delay`` cycles earlier).

:func:`run_statistics` also judges the end criteria (``stats[ST_END]``) with
``rt.control.end_criteria.end_of_run``, in its order: END_CAPTURE_SETTLED, END_SEPARATED
(``|r_DPA| > endp[EP_SEPARATION]``), END_TIME_LIMIT (``t >= duration``). Capture settled: after
the first contact (``|f_P| > endp[EP_CONTACT_N]``), the relative
speed of A in P stays below ``endp[EP_SETTLE_V]`` and its relative angular rate below
``endp[EP_SETTLE_W]`` while the units stay in contact, continuously for
``endp[EP_SETTLE_S]`` and at least one cycle (``capture_settle_s = 0``: the first cycle that
meets them; a rebounding rod passes through relative rest for ~8 ms at full compression, so
the rod cases keep the default 2 s and end on separation). "In
contact" is judged from what the controller measures: the contact force is above the contact
threshold, or the units are no farther apart than at the first contact (``|r_DPA| <=
stats[ST_CONTACT_D]``). The second alternative is needed because two free-floating bodies at
relative rest exchange no net force: a captured, settled pair shows
a vanishing force, while a pair that bounced off moves apart.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from drivers.motion_platform import PlatformState
from rt.record import arraypack as AP
from rt.dynamics import coupling as CP
from rt.stand import contact_gate as CG
from rt.stand import delay_id as DY
from rt.stand import safety as SF
from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from rt.stand import wire_kernels as WK
from rt.jit import KERNEL
from rt.control.cycle_data import CYCLE_ARRAYS, HIL
from rt.control import end_criteria as EC
from rt.record.runlog import CUR_CLOSED, CUR_DROPPED, CUR_HEAD, CUR_TAIL
from rt.stand.sensing import sense

# move parameters: p0 (3), q0 (4), dp (3), rotvec (3), T
MV_P0, MV_Q0, MV_DP, MV_RV, MV_T = 0, 3, 7, 10, 13
MV_LEN = 14
# run-up parameters: r0 (3), q0 (4), v0 (3), w0 (3), T
RU_R0, RU_Q0, RU_V0, RU_W0, RU_T = 0, 3, 7, 10, 13
RU_LEN = 14
# extra limits / counters of supervise()
XL_TRACK, XL_PSTALE, XL_FROZEN, XL_DELAY, XL_TRACK_ON, XL_MISS_BUDGET, XL_MISS_WINDOW = 0, 1, 2, 3, 4, 5, 6
XL_LEN = 7
# XC_MISS_LEVEL: the OVERLOAD bucket in ns-deadlines (a missed deadline adds the window's ns, each
# cycle drains dt_ns x budget); XC_MISS_PREV: the loop's missed total at the last cycle (-1: armed
# just now, start counting at the next cycle)
XC_PSTALE, XC_FROZEN, XC_HEAD, XC_FILLED, XC_MISS_LEVEL, XC_MISS_PREV = 0, 1, 2, 3, 4, 5
XC_LEN = 6
PV_DT = 6    # prev_vel[PV_DT]: the previous command's step (s); 0 = none
# run statistics / end criteria (run_statistics)
ST_PEAK_F, ST_PEAK_M, ST_FIRST_CONTACT, ST_MAX_EXC, ST_END = 0, 1, 2, 3, 4
ST_SETTLE, ST_CONTACT_D = 5, 6   # time the capture-settled conditions have held (s); |r| at first contact
ST_LEN = 7
EP_DURATION, EP_SEPARATION, EP_CONTACT_N, EP_START = 0, 1, 2, 3   # start pose position (3)
EP_SETTLE_S, EP_SETTLE_V, EP_SETTLE_W = 6, 7, 8   # capture_settle_s, speed (m/s) and rate (rad/s) bounds
EP_LEN = 9
# the end criteria's codes and names: rt.control.end_criteria (one table for every kind of run)
# the cycle's link state (ingest / emit / hil_cycle_packed), one float64 array the shell and the kernels share.
# Set every cycle from the shell's arguments (set_link_inputs): IN_DT, IN_BAD_TOTAL (sensor link: CRC errors + malformed frames so far),
# IN_GAPS (its sequence gaps so far), IN_CRC_ERRORS (its CRC errors alone, for the log), IN_STREAK
# (overrun streak), IN_HB (console heartbeat lost),
# IN_CYCLE, IN_TIMING_I (loop timing ring index of the last cycle, -1 = none), IN_MISSED;
# on change: IN_STATE, IN_PHASE, IN_TRIP; at configuration: IN_NCH (framed sensor channels, 0 = the
# driver decodes, e.g. RDT, and the shell sets IN_NEW_SAMPLE and the raw counts itself).
# Written by the kernels: the rest. From IN_LK_S and IN_LK_P: the sensor's and the platform's
# link slots (rt.stand.wire_kernels LK_*: the transports' checks, delegated to the scan); IN_LK_ERR:
# the last scan refused a frame of either link (CRC, framing or sequence). IN_INPUTS: the STATUS
# digital-input word the controller has seen last; IN_INPUTS_OLD: the word before its last change;
# IN_INPUTS_CHG: this cycle's STATUS changed it (the shell names the edges: the mechanism's signals).
# IN_SENSOR_STATUS: the status word of the newest accepted sensor sample (0 = healthy; the RDT
# driver's shell sets it from the record).
(IN_DT, IN_BAD_TOTAL, IN_GAPS, IN_STREAK, IN_HB, IN_CYCLE, IN_TIMING_I, IN_MISSED, IN_STATE, IN_PHASE, IN_TRIP,
 IN_NCH, IN_NEW_SAMPLE, IN_STATUS_NEW, IN_STATUS_SEEN, IN_SAMPLES, IN_S_BAD, IN_P_BAD, IN_CRC_NEW, IN_GAP_NEW,
 IN_BAD_PREV, IN_GAPS_PREV, IN_TXLEN, IN_CRC_ERRORS, IN_LK_ERR, IN_INPUTS, IN_INPUTS_OLD, IN_INPUTS_CHG,
 IN_SENSOR_STATUS) = range(29)
IN_LK_S = 29
IN_LK_P = IN_LK_S + WK.LK_LEN
IN_LEN = IN_LK_P + WK.LK_LEN
# run-log row fields the kernels write (their offsets, in this order, are the ``rix`` argument)
ROW_FIELDS = ("t", "cycle", "state", "phase", "trip", "timing_ns", "new_sample", "raw", "w_S", "w_P", "x", "rel_pose",
              "meas_pose", "meas_lengths", "platform_state", "platform_fault", "platform_last_seq", "crc_errors",
              "seq_gaps", "missed", "platform_inputs")
(RX_T, RX_CYCLE, RX_STATE, RX_PHASE, RX_TRIP, RX_TIMING, RX_NEW, RX_RAW, RX_WS, RX_WP, RX_X, RX_REL, RX_MPOSE,
 RX_MLEN, RX_PSTATE, RX_PFAULT, RX_PSEQ, RX_CRC, RX_GAPS, RX_MISSED, RX_PIN) = range(21)
PLATFORM_IDLE, PLATFORM_FAULT, PLATFORM_E_STOPPED = (int(PlatformState.IDLE), int(PlatformState.FAULT),
                                                     int(PlatformState.E_STOPPED))


@njit(**KERNEL)
def quintic(u):
    """The quintic time law ``s(u) = 10u^3 - 15u^4 + 6u^5``, 0 before u = 0 and 1 after u = 1.

    Parameters
    ----------
    u : float
        Normalised time t / T.
    """
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return 1.0
    return u * u * u * (10.0 + u * (-15.0 + 6.0 * u))


@njit(**KERNEL)
def rotation_between(q0, q1, qc, dq, rv):
    """``rv`` (3): the rotation vector of ``dq`` with q1 = dq (x) q0 (dq in B), the short way
    round; ``qc``, ``dq`` (4) scratch (``dq`` holds it as a quaternion).

    Parameters
    ----------
    q0 : float64[4]
        The start attitude q_BT, scalar first.
    q1 : float64[4]
        The end attitude q_BT, scalar first.
    qc : float64[4]
        Scratch.
    dq : float64[4]
        Written: dq with q1 = dq (x) q0 (dq in B), scalar part >= 0.
    rv : float64[3]
        Written: its rotation vector, rad, B.
    """
    SP.quat_conj(q0, qc)
    SP.quat_mul(q1, qc, dq)
    if dq[0] < 0.0:
        for i in range(4):
            dq[i] = -dq[i]
    SP.quat_to_rotvec(dq, rv)


@njit(cache=True)
def move_setup(mv, start, target, v_max, a_max, w_max, alpha_max):
    """Fill ``mv`` for a rest-to-rest move start -> target (poses, 7) within the speed and
    acceleration limits given (m/s, m/s^2, rad/s, rad/s^2); returns the duration T (s).

    Parameters
    ----------
    mv : float64[MV_LEN]
        Written: the move's parameters (``MV_*``).
    start : float64[7]
        The start pose of the top ``[p_BT_B (m), q_BT]``.
    target : float64[7]
        The target pose, likewise.
    v_max : float
        Speed limit, m/s.
    a_max : float
        Acceleration limit, m/s^2.
    w_max : float
        Angular speed limit, rad/s.
    alpha_max : float
        Angular acceleration limit, rad/s^2.
    """
    dq = np.zeros(4)
    qc = np.zeros(4)
    rv = np.zeros(3)
    for i in range(3):
        mv[MV_P0 + i] = start[i]
        mv[MV_DP + i] = target[i] - start[i]
    for i in range(4):
        mv[MV_Q0 + i] = start[3 + i]
    rotation_between(start[3:7], target[3:7], qc, dq, rv)          # target = dq (x) start, dq in B
    for i in range(3):
        mv[MV_RV + i] = rv[i]
    D = math.sqrt(mv[MV_DP] ** 2 + mv[MV_DP + 1] ** 2 + mv[MV_DP + 2] ** 2)
    A = math.sqrt(rv[0] ** 2 + rv[1] ** 2 + rv[2] ** 2)
    T = max(1.875 * D / v_max, math.sqrt(5.7735 * D / a_max), 1.875 * A / w_max, math.sqrt(5.7735 * A / alpha_max))
    mv[MV_T] = T
    return T


@njit(**KERNEL)
def move_waypoint(start, target, creep_m, creep_rad, way, scr):
    """The pose ``way`` (7) a fraction f of the way along the straight path start -> target
    (position linearly, orientation about the fixed axis of target = dq (x) start, dq in B), f
    the smallest that moves at least ``creep_m`` and turns at least ``creep_rad`` (at most 1:
    the whole path). Returns f. ``scr`` (11) scratch. The arming move's creep (rt.control.controller).

    Parameters
    ----------
    start : float64[7]
        The start pose of the top ``[p_BT_B (m), q_BT]``.
    target : float64[7]
        The target pose, likewise.
    creep_m : float
        The least distance to move, m.
    creep_rad : float
        The least angle to turn, rad.
    way : float64[7]
        Written: the waypoint pose ``[p_BT_B (m), q_BT]``.
    scr : float64[11]
        Scratch.
    """
    qc, dq, rv = scr[0:4], scr[4:8], scr[8:11]
    rotation_between(start[3:7], target[3:7], qc, dq, rv)
    D = math.sqrt((target[0] - start[0]) ** 2 + (target[1] - start[1]) ** 2 + (target[2] - start[2]) ** 2)
    A = math.sqrt(rv[0] ** 2 + rv[1] ** 2 + rv[2] ** 2)
    f = 0.0
    if D > 0.0:
        f = creep_m / D
    if A > 0.0 and creep_rad / A > f:
        f = creep_rad / A
    if f > 1.0 or (D == 0.0 and A == 0.0):
        f = 1.0
    for i in range(3):
        way[i] = start[i] + f * (target[i] - start[i])
        rv[i] *= f
    SP.quat_from_rotvec(rv, dq)
    SP.quat_mul(dq, start[3:7], way[3:7])
    return f


@njit(**KERNEL)
def move_eval(mv, t, pose, scr):
    """Pose of the move at time t into ``pose``; ``scr`` (10) scratch. True when finished.

    Parameters
    ----------
    mv : float64[MV_LEN]
        The move's parameters (:func:`move_setup`).
    t : float
        Time since the move's start, s.
    pose : float64[7]
        Written: the pose of the top ``[p_BT_B (m), q_BT]``.
    scr : float64[10]
        Scratch (its first 7 entries are used).
    """
    T = mv[MV_T]
    s = 1.0 if T <= 0.0 else quintic(t / T)
    rv = scr[0:3]
    dq = scr[3:7]
    for i in range(3):
        pose[i] = mv[MV_P0 + i] + s * mv[MV_DP + i]
        rv[i] = s * mv[MV_RV + i]
    SP.quat_from_rotvec(rv, dq)
    SP.quat_mul(dq, mv[MV_Q0:MV_Q0 + 4], pose[3:7])
    SP.quat_normalize(pose[3:7])
    return t >= T


@njit(**KERNEL)
def runup_eval(ru, geo, s, out, scr):
    """Relative pose at run-up time s (<= 0 during the run-up) into out[O_RPRED..], and the
    platform-top pose into out[O_PCMD..]; ``scr`` (10) scratch.

    Parameters
    ----------
    ru : float64[RU_LEN]
        The run-up's parameters (``RU_*``): the case's initial r_DPA (m), q_PA, velocity (m/s) and
        angular velocity (rad/s) of A in P, P components, and its duration T (s).
    geo : float64[14]
        The stand's frame chain (``rt.dynamics.coupling.pack_geometry``).
    s : float
        Run-up time, s: from -T to 0 (the case's initial state); the constant-velocity extension after.
    out : float64[OUT_LEN]
        The coupling's record (``rt.dynamics.coupling`` ``O_*``): the relative pose written at
        ``O_RPRED``, ``O_QPRED``, the top's pose at ``O_PCMD``, ``O_QCMD``.
    scr : float64[10]
        Scratch (its first 7 entries are used).
    """
    T = ru[RU_T]
    f = s
    if s < 0.0 and T > 0.0:
        if s < -T:
            s = -T
        f = s + 0.5 * s * s / T
    rv = scr[0:3]
    dq = scr[3:7]
    for i in range(3):
        out[CP.O_RPRED + i] = ru[RU_R0 + i] + ru[RU_V0 + i] * f
        rv[i] = ru[RU_W0 + i] * f
    SP.quat_from_rotvec(rv, dq)
    SP.quat_mul(dq, ru[RU_Q0:RU_Q0 + 4], out[CP.O_QPRED:CP.O_QPRED + 4])
    SP.quat_normalize(out[CP.O_QPRED:CP.O_QPRED + 4])
    CP.platform_pose(geo, out)


@njit(**KERNEL)
def command_rates(pose, prev_pose, prev_vel, vel, acc, dt, first, scr):
    """Backward-difference velocity and acceleration of the command (B components); ``first``
    = no previous command (rates 0). Updates prev_pose / prev_vel (7: the velocity and, at
    ``PV_DT``, its step); ``scr`` (11) scratch. The acceleration divides by the distance of the
    two velocities' middles (module docstring).

    Parameters
    ----------
    pose : float64[7]
        This cycle's command ``[p_BT_B (m), q_BT]``.
    prev_pose : float64[7]
        The last cycle's command; set to pose.
    prev_vel : float64[7]
        The last cycle's twist (m/s, rad/s; B) and, at ``PV_DT``, its step (s); set to this cycle's.
    vel : float64[6]
        Written: the command's twist ``[v (m/s); omega (rad/s)]``, B.
    acc : float64[6]
        Written: its acceleration ``[a (m/s^2); alpha (rad/s^2)]``, B.
    dt : float
        The time since the last command, s.
    first : bool
        No previous command: rates 0.
    scr : float64[11]
        Scratch.
    """
    if first:
        for i in range(6):
            vel[i] = 0.0
            acc[i] = 0.0
    else:
        qc = scr[0:4]
        dq = scr[4:8]
        rv = scr[8:11]
        rotation_between(prev_pose[3:7], pose[3:7], qc, dq, rv)
        for i in range(3):
            vel[i] = (pose[i] - prev_pose[i]) / dt
            vel[3 + i] = rv[i] / dt
        h = dt if prev_vel[PV_DT] <= 0.0 else 0.5 * (dt + prev_vel[PV_DT])
        for i in range(6):
            acc[i] = (vel[i] - prev_vel[i]) / h
    for i in range(7):
        prev_pose[i] = pose[i]
    for i in range(6):
        prev_vel[i] = vel[i]
    prev_vel[PV_DT] = dt


@njit(**KERNEL)
def supervise(lim, base, top, leg_lim, box, ctr, crc_ring, gap_ring, pose, vel, acc, w_S, w_P, extra,
              new_sample, crc_new, gap_new, platform_fault, platform_estop, overrun_streak, heartbeat_lost,
              lengths, detail, xlim, xctr, trk_ring, dly, drec, raw, raw_prev, status_new, status_pos, missed_total,
              dt, sensor_status):
    """``rt.stand.safety.check`` then the controller-level checks (module docstring); returns a
    ``rt.stand.safety.Reason`` code. ``missed_total``: the loop's missed deadlines so far; ``dt``:
    the cycle's step (s); ``dly`` the delay estimator (``rt.stand.delay_id``, updated from the
    command ring and this cycle's STATUS), its estimate written to ``drec``; ``sensor_status``
    the newest sensor sample's status word (SENSOR_STATUS when not 0, after the safety checks:
    a saturated axis beyond the force trip level is named FORCE_LIMIT with its axis). All
    counters are updated before any check returns.

    Parameters
    ----------
    lim : float64[N_LIMITS]
        The safety limits; this and the arguments down to ``detail`` as for
        :func:`rt.stand.safety.check` (``pose``, ``vel``, ``acc``, ``lengths`` are its
        ``pose_cmd``, ``vel_cmd``, ``acc_cmd``, ``lengths_out``).
    base, top : float64[6, 3]
        The hexapod's base and top joints.
    leg_lim : float64[2]
        Actuator length range, m.
    box : float64[12]
        The pose box.
    ctr, crc_ring, gap_ring : int64 arrays
        The safety checks' counters and burst-window rings; updated.
    pose, vel, acc, w_S, w_P, extra : float64 arrays
        The command's pose, twist and acceleration, the wrenches, and further values checked
        finite (the coupling's output ``out``).
    new_sample : bool
        A new sensor sample arrived this cycle.
    crc_new, gap_new : int
        Corrupt sensor frames and sequence gaps this cycle.
    platform_fault : bool
        The platform reports FAULT (the DYNAMICS cycle passes IDLE as a fault too).
    platform_estop : bool
        The platform reports E_STOPPED.
    overrun_streak : int
        Consecutive loop overruns.
    heartbeat_lost : bool
        The controlling console's lease expired.
    lengths, detail : float64 arrays
        Written: the command's actuator lengths, and what tripped.
    xlim : float64[XL_LEN]
        The controller-level limits (``XL_*``).
    xctr : int64[XC_LEN]
        The controller-level counters (``XC_*``); updated.
    trk_ring : float64[n_trk, 3]
        The command positions sent, one row per cycle, m, B; this cycle's written.
    dly : float64[:]
        The delay estimator (``rt.stand.delay_id``); updated on a new STATUS.
    drec : float64[DR_LEN]
        The delay record (``rt.stand.delay_id`` ``DR_*``): identified delay and kappa written.
    raw : float64[n_raw]
        The newest raw sensor sample, counts.
    raw_prev : float64[n_raw]
        The previous raw sample (a frozen sensor); set to raw on a new sample.
    status_new : bool
        A new STATUS arrived this cycle.
    status_pos : float64[7]
        The platform's measured top pose ``[p_BT_B (m), q_BT]`` (its position is read).
    missed_total : int
        The loop's missed deadlines so far.
    dt : float
        The cycle's step, s.
    sensor_status : int
        The newest sensor sample's status word (0: healthy).
    """
    # controller-level counters first
    if xctr[XC_MISS_PREV] < 0:      # armed this cycle: count from here (the arm's own work, e.g.
        xctr[XC_MISS_PREV] = missed_total    # its gc collection, falls before the platform moves)
    new_missed = missed_total - xctr[XC_MISS_PREV]
    xctr[XC_MISS_PREV] = missed_total
    window_ns = int(xlim[XL_MISS_WINDOW] * 1e9)
    level = xctr[XC_MISS_LEVEL] + new_missed * window_ns - int(dt * 1e9) * int(xlim[XL_MISS_BUDGET])
    xctr[XC_MISS_LEVEL] = level if level > 0 else 0
    if status_new:
        xctr[XC_PSTALE] = 0
    else:
        xctr[XC_PSTALE] += 1
    if new_sample:
        same = True
        for i in range(raw.shape[0]):
            if raw[i] != raw_prev[i]:
                same = False
            raw_prev[i] = raw[i]
        if same:
            xctr[XC_FROZEN] += 1
        else:
            xctr[XC_FROZEN] = 0
    n = trk_ring.shape[0]
    h = xctr[XC_HEAD]
    for i in range(3):
        trk_ring[h, i] = pose[i]
    xctr[XC_HEAD] = (h + 1) % n
    if new_missed > 0:
        # the ring holds one command per period of the loop's clock: deadlines missed since the
        # last cycle put a stall between its rows, which the tracking check and the delay's
        # identification would read as the platform's lag (a 49 ms stall identified as a 47 ms
        # delay and, fed, moved the lead there). Both wait until the ring is refilled.
        xctr[XC_FILLED] = 0
    if xctr[XC_FILLED] < n:
        xctr[XC_FILLED] += 1
    if status_new:
        DY.delay_update(dly, trk_ring, h, xctr[XC_FILLED], status_pos, dt)
    drec[DY.DR_ID] = dly[DY.DY_EST]
    drec[DY.DR_KAPPA] = dly[DY.DY_KAPPA]
    code = SF.check(lim, base, top, leg_lim, box, ctr, crc_ring, gap_ring, pose, vel, acc, w_S, w_P, extra,
                    new_sample, crc_new, gap_new, platform_fault, platform_estop, overrun_streak, heartbeat_lost,
                    lengths, detail)
    if window_ns > 0 and (code == 0 or code == SF.R_SENSOR_LINK_LOST
                          or SF.R_COMMAND_VELOCITY <= code <= SF.R_OVERRUN_STREAK):
        # over budget, or a link went quiet for N cycles while the loop itself missed as many
        # deadlines: the computer is overloaded and the silence is its consequence. Only the
        # checks an overload can set off give way (a stale link, the command's rates, the
        # overrun streak); a force, a pose, a device fault are named as they are.
        missed_recent = xctr[XC_MISS_LEVEL] / window_ns     # deadlines in the bucket
        stale = code == SF.R_SENSOR_LINK_LOST or (code == 0 and xctr[XC_PSTALE] >= xlim[XL_PSTALE])
        if missed_recent > xlim[XL_MISS_BUDGET] or (stale and missed_recent >= lim[SF.L_STALE]):
            detail[0] = -1.0
            detail[1] = missed_recent
            return SF.R_OVERLOAD
    if code != 0:
        return code
    if sensor_status != 0:
        detail[0] = -1.0
        detail[1] = sensor_status
        return SF.R_SENSOR_STATUS
    if xctr[XC_PSTALE] >= xlim[XL_PSTALE]:
        detail[1] = xctr[XC_PSTALE]
        return SF.R_PLATFORM_LINK_LOST
    if xlim[XL_FROZEN] > 0.0 and xctr[XC_FROZEN] >= xlim[XL_FROZEN]:
        detail[1] = xctr[XC_FROZEN]
        return SF.R_SENSOR_FROZEN
    d = int(xlim[XL_DELAY])
    if xlim[XL_TRACK_ON] != 0.0 and status_new and xctr[XC_FILLED] > d:
        j = (h - d) % n
        e = math.sqrt((status_pos[0] - trk_ring[j, 0]) ** 2 + (status_pos[1] - trk_ring[j, 1]) ** 2
                      + (status_pos[2] - trk_ring[j, 2]) ** 2)
        if e > xlim[XL_TRACK]:
            detail[1] = e
            return SF.R_TRACKING_ERROR
    if DY.delay_out_of_band(dly):
        detail[0] = 0.0
        detail[1] = dly[DY.DY_EST]
        return SF.R_DELAY_OUT_OF_BAND
    return 0




@njit(**KERNEL)
def run_statistics(w_P, out, cmd_pose, t, dt, stats, endp):
    """The run statistics (peak force and moment on the passive unit, first contact, platform
    excursion) and the end criteria (``stats[ST_END]``; module docstring) after a DYNAMICS
    step to ``t + dt``: ``w_P`` the measured wrench, ``out`` the coupling's output (relative
    state), ``cmd_pose`` the platform command.

    Parameters
    ----------
    w_P : float64[6]
        The measured contact wrench on the passive unit, P, N and N·m.
    out : float64[OUT_LEN]
        The coupling's record (``rt.dynamics.coupling`` ``O_*``): its relative state is read.
    cmd_pose : float64[7]
        The platform-top command ``[p_BT_B (m), q_BT]``.
    t : float
        Case time at the step's start, s.
    dt : float
        The step, s.
    stats : float64[ST_LEN]
        The run's statistics and end (``ST_*``); updated.
    endp : float64[EP_LEN]
        The end criteria's parameters (``EP_*``): duration (s), separation (m), contact force (N),
        start position (m, B), settle time (s), speed (m/s) and rate (rad/s) bounds.
    """
    f = math.sqrt(w_P[0] ** 2 + w_P[1] ** 2 + w_P[2] ** 2)
    m = math.sqrt(w_P[3] ** 2 + w_P[4] ** 2 + w_P[5] ** 2)
    if f > stats[ST_PEAK_F]:
        stats[ST_PEAK_F] = f
    if m > stats[ST_PEAK_M]:
        stats[ST_PEAK_M] = m
    r = CP.O_REL
    d = math.sqrt(out[r] ** 2 + out[r + 1] ** 2 + out[r + 2] ** 2)
    if stats[ST_FIRST_CONTACT] < 0.0 and f > endp[EP_CONTACT_N]:
        stats[ST_FIRST_CONTACT] = t + dt
        stats[ST_CONTACT_D] = d
    e = math.sqrt((cmd_pose[0] - endp[EP_START]) ** 2 + (cmd_pose[1] - endp[EP_START + 1]) ** 2
                  + (cmd_pose[2] - endp[EP_START + 2]) ** 2)
    if e > stats[ST_MAX_EXC]:
        stats[ST_MAX_EXC] = e
    if stats[ST_FIRST_CONTACT] >= 0.0:
        v = CP.O_REL + S.REL_V
        w = CP.O_REL + S.REL_W
        speed = math.sqrt(out[v] ** 2 + out[v + 1] ** 2 + out[v + 2] ** 2)
        rate = math.sqrt(out[w] ** 2 + out[w + 1] ** 2 + out[w + 2] ** 2)
        contact = f > endp[EP_CONTACT_N] or d <= stats[ST_CONTACT_D]
        if speed < endp[EP_SETTLE_V] and rate < endp[EP_SETTLE_W] and contact:
            stats[ST_SETTLE] += dt
        else:
            stats[ST_SETTLE] = 0.0
    settled = stats[ST_FIRST_CONTACT] >= 0.0 and stats[ST_SETTLE] > 0.0 and stats[ST_SETTLE] >= endp[EP_SETTLE_S] - 1e-9
    stats[ST_END] = EC.end_of_run(t + dt, endp[EP_DURATION], d, endp[EP_SEPARATION], settled)


@njit(**KERNEL)
def ingest(sbuf, pbuf, raw, meas, ins, row, rix):
    """The frames of this cycle's polls (each poll's frames concatenated; empty: none) ->
    the newest raw counts (``raw``, framed sensor only: ``ins[IN_NCH] > 0``), the newest
    STATUS (``meas``, rt.stand.wire_kernels ST_*), the link flags and counters in ``ins``, and the
    measured fields of the run-log row. Corrupt sensor frames this cycle (``IN_CRC_NEW``)
    are the CRC errors and malformed frames (the link's, counted until the last cycle, plus
    this scan's) and the frames refused by content; the scan's sequence gaps join the link's.
    The scans check the links' frames (``IN_LK_S``, ``IN_LK_P``; rt.stand.wire_kernels._walk).

    Parameters
    ----------
    sbuf : uint8[:] or bytes
        The sensor link's poll: its messages, each preceded by its length (u16 LE); empty: none.
    pbuf : uint8[:] or bytes
        The platform link's poll, likewise.
    raw : float64[n_raw]
        Written (framed sensor only): the newest valid sample's counts.
    meas : float64[ST_LEN]
        Written on a valid STATUS: the newest one (``rt.stand.wire_kernels`` ``ST_*``).
    ins : float64[IN_LEN]
        The cycle's link state (``IN_*``): the link slots and flags, counters updated.
    row : float64[W]
        The cycle's run-log row; the fields this kernel owns are written.
    rix : int64[N_ROW_FIELDS]
        Offset in row of each field, ``RX_*`` order.
    """
    err = 0.0
    if ins[IN_NCH] > 0.0:
        good, bad, status = WK.scan_sensor(sbuf, raw, ins, IN_LK_S)
        ins[IN_NEW_SAMPLE] = 1.0 if good else 0.0
        if good:
            ins[IN_SENSOR_STATUS] = status
        ins[IN_S_BAD] = bad
        ins[IN_SAMPLES] += good
        crc = ins[IN_LK_S + WK.LK_CRC]
        ins[IN_BAD_TOTAL] += crc + ins[IN_LK_S + WK.LK_MAL]
        ins[IN_CRC_ERRORS] += crc
        ins[IN_GAPS] += ins[IN_LK_S + WK.LK_GAPS]
        for i in range(WK.LK_CRC, WK.LK_LEN):
            err += ins[IN_LK_S + i]
    good, bad = WK.scan_status(pbuf, meas, ins, IN_LK_P)
    for i in range(WK.LK_CRC, WK.LK_LEN):
        err += ins[IN_LK_P + i]
    ins[IN_LK_ERR] = err
    ins[IN_STATUS_NEW] = 1.0 if good else 0.0
    ins[IN_P_BAD] = bad
    bad_total = ins[IN_BAD_TOTAL] + ins[IN_S_BAD]
    ins[IN_CRC_NEW] = bad_total - ins[IN_BAD_PREV]
    ins[IN_BAD_PREV] = bad_total
    ins[IN_GAP_NEW] = ins[IN_GAPS] - ins[IN_GAPS_PREV]
    ins[IN_GAPS_PREV] = ins[IN_GAPS]
    ins[IN_INPUTS_CHG] = 0.0
    if good and meas[WK.ST_INPUTS] != ins[IN_INPUTS]:
        ins[IN_INPUTS_OLD] = ins[IN_INPUTS]
        ins[IN_INPUTS] = meas[WK.ST_INPUTS]
        ins[IN_INPUTS_CHG] = 1.0
    r = int(rix[RX_NEW])
    row[r] = ins[IN_NEW_SAMPLE]
    r = int(rix[RX_RAW])
    for i in range(raw.shape[0]):
        row[r + i] = raw[i]
    if good:
        ins[IN_STATUS_SEEN] = 1.0
        r = int(rix[RX_MPOSE])
        for i in range(13):
            row[r + i] = meas[WK.ST_POSE + i]      # meas_pose (7) and meas_lengths (6) are adjacent
        row[int(rix[RX_PSTATE])] = meas[WK.ST_STATE]
        row[int(rix[RX_PFAULT])] = meas[WK.ST_FAULT]
        row[int(rix[RX_PSEQ])] = meas[WK.ST_LAST_SEQ]
        row[int(rix[RX_PIN])] = meas[WK.ST_INPUTS]


@njit(**KERNEL)
def commit_row(row, ring, cur):
    """rt.record.runlog.RunLogWriter.commit in compiled code: the row into the writer's ring
    (``ring``, ``cur`` = its ``cursor``); dropped and counted if the ring is full; nothing
    once the writer is closed. The row is written before the head moves.

    Parameters
    ----------
    row : float64[W]
        The complete run-log row.
    ring : float64[log_cap, W]
        The run log's ring.
    cur : int64[4]
        Its cursor (``rt.record.runlog`` ``CUR_*``): head advanced, or dropped counted.
    """
    if cur[CUR_CLOSED] != 0:
        return
    h = cur[CUR_HEAD]
    cap = ring.shape[0]
    if h - cur[CUR_TAIL] >= cap:
        cur[CUR_DROPPED] += 1
        return
    r = h % cap
    for i in range(row.shape[0]):
        ring[r, i] = row[i]
    cur[CUR_HEAD] = h + 1


@njit(**KERNEL)
def emit(ftype, seq, t_ns, values, n, t_row, ins, tx, row, rix, w_S, w_P, x, out, timing, ring, cur, commit):
    """The cycle's platform frame (type ``ftype``, payload values[:n]) into ``tx``
    (``ins[IN_TXLEN]`` its length) and the computed fields of the run-log row: ``t_row``
    (the case time, NaN outside the run), cycle, supervisor state, phase, trip, the last
    cycle's timing from the loop's ring (``timing`` rows 2..5, column ``ins[IN_TIMING_I]``),
    the wrench, both vehicles' states ``x``, the relative state (``out``), the link counters.
    ``commit``: the row, now complete, goes to the run log (:func:`commit_row`).

    Parameters
    ----------
    ftype : int
        Frame type (``rt.stand.wire_kernels``: POSE, LENGTHS, ...).
    seq : int
        The frame's sequence number.
    t_ns : int
        Host time, ns.
    values : float64[:]
        The payload (POSE: m and -, T in B; LENGTHS: m).
    n : int
        How many of values to send.
    t_row : float
        The row's case time, s (NaN outside the run).
    ins : float64[IN_LEN]
        The cycle's link state (``IN_*``); ``IN_TXLEN`` written.
    tx : uint8[MAX_FRAME]
        Written: the encoded frame.
    row : float64[W]
        The cycle's run-log row; the fields this kernel owns are written.
    rix : int64[N_ROW_FIELDS]
        Offset in row of each field, ``RX_*`` order.
    w_S : float64[6]
        The wrench in the sensor frame S (untared), N and N·m.
    w_P : float64[6]
        The contact wrench on the passive unit, P, N and N·m.
    x : float64[2, ns]
        The flight state (both rows copied into the row).
    out : float64[OUT_LEN]
        The coupling's record: relative pose, twist and acceleration copied.
    timing : int64[8, t_cap]
        The loop's timing ring, ns.
    ring : float64[log_cap, W]
        The run log's ring.
    cur : int64[4]
        Its cursor (``rt.record.runlog`` ``CUR_*``).
    commit : bool
        The row goes to the run log.
    """
    ins[IN_TXLEN] = WK.encode_frame(tx, ftype, seq, t_ns, values, n)
    row[int(rix[RX_T])] = t_row
    row[int(rix[RX_CYCLE])] = ins[IN_CYCLE]
    row[int(rix[RX_STATE])] = ins[IN_STATE]
    row[int(rix[RX_PHASE])] = ins[IN_PHASE]
    row[int(rix[RX_TRIP])] = ins[IN_TRIP]
    ti = int(ins[IN_TIMING_I])
    if 0 <= ti < timing.shape[1]:
        r = int(rix[RX_TIMING])
        for i in range(4):
            row[r + i] = timing[2 + i, ti]
    r = int(rix[RX_WS])
    for i in range(6):
        row[r + i] = w_S[i]
    r = int(rix[RX_WP])
    for i in range(6):
        row[r + i] = w_P[i]
    r = int(rix[RX_X])
    k = 0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            row[r + k] = x[i, j]
            k += 1
    r = int(rix[RX_REL])
    for i in range(CP.O_ACC + 6 - CP.O_REL):       # rel_pose, rel_twist, rel_acc (adjacent)
        row[r + i] = out[CP.O_REL + i]
    row[int(rix[RX_CRC])] = ins[IN_CRC_ERRORS]
    row[int(rix[RX_GAPS])] = ins[IN_GAPS]
    row[int(rix[RX_MISSED])] = ins[IN_MISSED]
    if commit:
        commit_row(row, ring, cur)


# hil_cycle_packed's arrays: declared once in rt.control.cycle_data (name, kind, source, unit,
# meaning); the table's rows by name (HIL) and this derived (name, kind) list for the tests
HIL_ARRAYS = tuple((a.name, a.kind) for a in CYCLE_ARRAYS)


@njit(**KERNEL, inline="always")
def set_link_inputs(ins, dt, cycle, streak, missed, timing_i, bad_total, crc_total, gaps_total, hb_lost):
    """The shell's per-cycle inputs into ``ins``: cycle period, cycle number, overrun streak,
    missed slots, timing-ring index of the last cycle (-1: none), the sensor link's corrupt
    frames (CRC + malformed), CRC errors and sequence gaps so far, console heartbeat lost.

    Parameters
    ----------
    ins : float64[IN_LEN]
        The cycle's link state; ``IN_DT`` .. ``IN_HB`` written.
    dt : float
        The cycle's period, s.
    cycle : int
        The cycle number.
    streak : int
        The loop's overrun streak.
    missed : int
        The loop's missed deadlines so far.
    timing_i : int
        Column of the last cycle in the loop's timing ring (-1: none).
    bad_total : int
        The sensor link's corrupt frames so far (CRC errors + malformed).
    crc_total : int
        The sensor link's CRC errors so far.
    gaps_total : int
        The sensor link's sequence gaps so far.
    hb_lost : bool
        The controlling console's heartbeat was lost.
    """
    ins[IN_DT] = dt
    ins[IN_CYCLE] = cycle
    ins[IN_STREAK] = streak
    ins[IN_MISSED] = missed
    ins[IN_TIMING_I] = timing_i
    ins[IN_BAD_TOTAL] = bad_total
    ins[IN_CRC_ERRORS] = crc_total
    ins[IN_GAPS] = gaps_total
    ins[IN_HB] = 1.0 if hb_lost else 0.0


# hil_cycle_packed's outcome flags (the shell's rare paths)
F_LK_ERR, F_REFUSED, F_FIRST_CONTACT, F_END, F_TRIP, F_INPUTS = 1, 2, 4, 8, 16, 32


@njit(cache=True)      # with reference counting: rt.record.arraypack's views need it (NULL owners)
def hil_cycle_packed(sbuf, pbuf, seq, t_ns, t, ftype, tau, mode, tbl, dt, cycle, streak, missed, timing_i,
                     bad_total, crc_total, gaps_total, hb_lost):
    """The controller's RUNNING/DYNAMICS cycle in one compiled call, at case time ``t`` over
    ``dt``: :func:`ingest` (this cycle's frames in), ``rt.stand.sensing.sense``, the coupling step
    with the measured wrench (``rt.dynamics.coupling.coupling_update``, or ``berthing_update`` for a
    berthing flight: state at t + dt, prediction at
    t + dt + tau, platform pose), :func:`command_rates`, :func:`supervise`,
    :func:`run_statistics` (statistics, end criteria) and :func:`emit` (the set-point frame of
    type ``ftype`` carrying ``seq`` and the host time ``t_ns``: POSE from ``cmd_pose`` or
    LENGTHS from ``cmd_lengths``; the run-log row).

    The arrays come packed in one table (rt.record.arraypack; each read by its name in
    rt.control.cycle_data's declaration, ``HIL.<name>``: one argument instead of 58, and no array
    crosses a call into the steps above in a bundle of exploded structs), the shell's link inputs
    as arguments
    (:func:`set_link_inputs`). Only when neither a trip nor an end criterion holds (the frame
    will be sent as encoded) does the command become ``sent_pose`` / ``sent_twist`` and the
    row go to the run log (:func:`commit_row`); otherwise the shell starts the safe stop from
    the last command actually sent and writes that cycle's frame and row.

    Returns (safety ``Reason`` code (0 = clear), sensor frames accepted (0 unless the scan
    reads the sensor), platform frames accepted, flags F_*: the scan refused frames
    (F_LK_ERR: CRC, framing, sequence; F_REFUSED: by content), the first contact happened,
    an end criterion holds (``stats[ST_END]``), a trip, the STATUS digital inputs changed
    (F_INPUTS: the mechanism's capture or latch signals)).

    Parameters
    ----------
    sbuf, pbuf : uint8[:] or bytes
        The sensor and the platform link's polls, as for :func:`ingest`.
    seq : int
        The set-point frame's sequence number.
    t_ns : int
        Host time, ns.
    t : float
        Case time at the cycle's start, s.
    ftype : int
        The set-point frame's type: POSE or LENGTHS (``rt.stand.wire_kernels``).
    tau : float
        The configured delay the prediction leads by, s.
    mode : int
        The predictor (``rt.dynamics.coupling`` ``MODE_*``).
    tbl : int64[n_arrays, 4]
        The cycle's arrays packed (``rt.record.arraypack``), in ``rt.control.cycle_data`` order.
    dt : float
        The cycle's period, s.
    cycle, streak, missed, timing_i, bad_total, crc_total, gaps_total : int
        The cycle number and the loop's and the sensor link's counters, as for
        :func:`set_link_inputs`.
    hb_lost : bool
        The controlling console's heartbeat was lost.
    """
    ins = AP.f8_1(tbl, HIL.ins)
    set_link_inputs(ins, dt, cycle, streak, missed, timing_i, bad_total, crc_total, gaps_total, hb_lost)
    meas = AP.f8_1(tbl, HIL.meas)
    tx = AP.u1_1(tbl, HIL.tx)
    row = AP.f8_1(tbl, HIL.row)
    rix = AP.i8_1(tbl, HIL.rix)
    timing = AP.i8_2(tbl, HIL.timing)
    sent_pose = AP.f8_1(tbl, HIL.sent_pose)
    sent_twist = AP.f8_1(tbl, HIL.sent_twist)
    C_eff = AP.f8_2(tbl, HIL.C_eff)
    R_PS = AP.f8_2(tbl, HIL.R_PS)
    p_PS_P = AP.f8_1(tbl, HIL.p_PS_P)
    raw = AP.f8_1(tbl, HIL.raw)
    bias = AP.f8_1(tbl, HIL.bias)
    acc_t = AP.f8_1(tbl, HIL.acc_t)
    sctr = AP.i8_1(tbl, HIL.sctr)
    coef = AP.f8_1(tbl, HIL.coef)
    fstate = AP.f8_2(tbl, HIL.fstate)
    w_S = AP.f8_1(tbl, HIL.w_S)
    w_P_raw = AP.f8_1(tbl, HIL.w_P_raw)
    w_P = AP.f8_1(tbl, HIL.w_P)
    par = AP.f8_2(tbl, HIL.par)
    env = AP.f8_1(tbl, HIL.env)
    x = AP.f8_2(tbl, HIL.x)
    w_in = AP.f8_2(tbl, HIL.w_in)
    geo = AP.f8_1(tbl, HIL.geo)
    out = AP.f8_1(tbl, HIL.out)
    k = AP.f8_3(tbl, HIL.k)
    xt = AP.f8_2(tbl, HIL.xt)
    ws = AP.f8_2(tbl, HIL.ws)
    rel = AP.f8_1(tbl, HIL.rel)
    cmd_pose = AP.f8_1(tbl, HIL.cmd_pose)
    prev_pose = AP.f8_1(tbl, HIL.prev_pose)
    prev_vel = AP.f8_1(tbl, HIL.prev_vel)
    cmd_twist = AP.f8_1(tbl, HIL.cmd_twist)
    cmd_acc = AP.f8_1(tbl, HIL.cmd_acc)
    cmd_lengths = AP.f8_1(tbl, HIL.cmd_lengths)
    scr = AP.f8_1(tbl, HIL.scr)
    lim = AP.f8_1(tbl, HIL.lim)
    base = AP.f8_2(tbl, HIL.base)
    top = AP.f8_2(tbl, HIL.top)
    leg_lim = AP.f8_1(tbl, HIL.leg_lim)
    box = AP.f8_1(tbl, HIL.box)
    ctr = AP.i8_1(tbl, HIL.ctr)
    crc_ring = AP.i8_1(tbl, HIL.crc_ring)
    gap_ring = AP.i8_1(tbl, HIL.gap_ring)
    detail = AP.f8_1(tbl, HIL.detail)
    xlim = AP.f8_1(tbl, HIL.xlim)
    xctr = AP.i8_1(tbl, HIL.xctr)
    trk_ring = AP.f8_2(tbl, HIL.trk_ring)
    dly = AP.f8_1(tbl, HIL.dly)
    drec = AP.f8_1(tbl, HIL.drec)
    gate = AP.f8_1(tbl, HIL.gate)
    raw_prev = AP.f8_1(tbl, HIL.raw_prev)
    meas_pose = AP.f8_1(tbl, HIL.meas_pose)
    stats = AP.f8_1(tbl, HIL.stats)
    endp = AP.f8_1(tbl, HIL.endp)
    ring = AP.f8_2(tbl, HIL.ring)
    cursor = AP.i8_1(tbl, HIL.cursor)
    had_contact = stats[ST_FIRST_CONTACT] >= 0.0
    ingest(sbuf, pbuf, raw, meas, ins, row, rix)
    seen = ins[IN_STATUS_SEEN] != 0.0
    pstate = meas[WK.ST_STATE]
    sense(C_eff, R_PS, p_PS_P, raw, bias, acc_t, sctr, coef, fstate, w_S, w_P_raw, w_P)
    CG.gate(gate, w_P, w_in[0], ins[IN_NEW_SAMPLE] != 0.0)
    model_ok = True
    tau_u = DY.compensated_delay(dly, tau, drec[DY.DR_USED], dt)
    drec[DY.DR_USED] = tau_u
    if env[S.E_FLIGHT] == 0.0:
        CP.coupling_update(par, env, x, t, dt, w_in, tau_u, mode, geo, out, k, xt, ws, rel)
    else:
        model_ok = CP.berthing_update(par, env, x, t, dt, w_in, tau_u, mode, geo, out, k, xt, ws, rel)
    for i in range(7):
        cmd_pose[i] = out[CP.O_PCMD + i]
    command_rates(cmd_pose, prev_pose, prev_vel, cmd_twist, cmd_acc, dt, False, scr)
    p_fault = seen and (pstate == PLATFORM_FAULT or pstate == PLATFORM_IDLE)
    p_estop = seen and pstate == PLATFORM_E_STOPPED
    code = supervise(lim, base, top, leg_lim, box, ctr, crc_ring, gap_ring, cmd_pose, cmd_twist, cmd_acc, w_S,
                     w_P, out, ins[IN_NEW_SAMPLE] != 0.0, int(ins[IN_CRC_NEW]), int(ins[IN_GAP_NEW]), p_fault,
                     p_estop, int(ins[IN_STREAK]), ins[IN_HB] != 0.0, cmd_lengths, detail, xlim, xctr, trk_ring, dly, drec, raw,
                     raw_prev, ins[IN_STATUS_NEW] != 0.0, meas_pose, int(ins[IN_MISSED]), dt,
                     int(ins[IN_SENSOR_STATUS]))
    if not model_ok:        # named before its consequences (a command computed from the held state)
        code = SF.R_MODEL_FAILURE
        detail[0] = 0.0
        detail[1] = 0.0
    run_statistics(w_P, out, cmd_pose, t, dt, stats, endp)
    final = code == 0 and stats[ST_END] == 0.0
    values = cmd_lengths if ftype == WK.LENGTHS else cmd_pose
    emit(ftype, seq, t_ns, values, values.shape[0], t + dt, ins, tx, row, rix, w_S, w_P, x, out, timing, ring,
         cursor, final)
    if final:
        for i in range(7):
            sent_pose[i] = cmd_pose[i]
        for i in range(6):
            sent_twist[i] = cmd_twist[i]
    flags = 0
    if ins[IN_LK_ERR] != 0.0:
        flags |= F_LK_ERR
    if ins[IN_S_BAD] != 0.0 or ins[IN_P_BAD] != 0.0:
        flags |= F_REFUSED
    if not had_contact and stats[ST_FIRST_CONTACT] >= 0.0:
        flags |= F_FIRST_CONTACT
    if stats[ST_END] != 0.0:
        flags |= F_END
    if ins[IN_INPUTS_CHG] != 0.0:
        flags |= F_INPUTS
    if code != 0:
        flags |= F_TRIP
    s_acc = int(ins[IN_LK_S + WK.LK_ACC]) if ins[IN_NCH] > 0.0 else 0
    return code, s_acc, int(ins[IN_LK_P + WK.LK_ACC]), flags
