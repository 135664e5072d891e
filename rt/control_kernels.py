"""Compiled per-cycle pieces of the controller (rt/controller.py; docs/controller.md, "Cycle").

Command generators, each writing the platform-top pose ``[p_BT_B, q_BT]`` (7):

* :func:`move_eval` — the arming move: straight line and single-axis rotation from a start pose
  to a target pose with the quintic time law ``s(u) = 10u^3 - 15u^4 + 6u^5`` (rest to rest;
  peak speed 1.875 D/T, peak acceleration 5.7735 D/T^2).
* :func:`runup_eval` — the run-up before the dynamics start: the relative pose of A in P
  accelerates uniformly from rest to the case's initial relative velocity so that at s = 0 it
  *is* the case's initial state (position, attitude, velocity): for s in [-T, 0]
  ``r(s) = r0 + v0 (s + s^2 / 2T)``, ``q_PA(s) = exp(w0 (s + s^2 / 2T)) (x) q0`` (w0 in P);
  beyond 0 the constant-velocity extension. Mapped to the top through the stand geometry
  (``rt.coupling.platform_pose``).

:func:`command_rates` differentiates the command (backward differences; the angular rate is
the rotation vector of ``q_k (x) q_{k-1}^*`` over dt, B components) — what the safety checks
judge and what the platform is asked to do.

:func:`supervise` runs ``rt.safety.check`` and then the controller-level checks:
PLATFORM_STALE (no STATUS for N cycles), SENSOR_FROZEN (N identical raw samples in a row) and
TRACKING_ERROR (measured top position against the command sent ``delay`` cycles earlier).

:func:`dynamics_cycle` also judges the end criteria (``stats[ST_END]``), in this order:
END_TIME_LIMIT (``t >= duration``), END_SEPARATED (``|r_DPA| > endp[EP_SEPARATION]``) and
END_CAPTURE_SETTLED: after the first contact (``|f_P| > endp[EP_CONTACT_N]``), the relative
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

from rt import coupling as CP
from rt import safety as SF
from rt import spacecraft as S
from rt import spatial as SP
from rt.sensing import sense

# move parameters: p0 (3), q0 (4), dp (3), rotvec (3), T
MV_P0, MV_Q0, MV_DP, MV_RV, MV_T = 0, 3, 7, 10, 13
MV_LEN = 14
# run-up parameters: r0 (3), q0 (4), v0 (3), w0 (3), T
RU_R0, RU_Q0, RU_V0, RU_W0, RU_T = 0, 3, 7, 10, 13
RU_LEN = 14
# extra limits / counters of supervise()
XL_TRACK, XL_PSTALE, XL_FROZEN, XL_DELAY, XL_TRACK_ON = 0, 1, 2, 3, 4
XL_LEN = 5
XC_PSTALE, XC_FROZEN, XC_HEAD, XC_FILLED = 0, 1, 2, 3
XC_LEN = 4
# run statistics / end criteria of dynamics_cycle()
ST_PEAK_F, ST_PEAK_M, ST_FIRST_CONTACT, ST_MAX_EXC, ST_END = 0, 1, 2, 3, 4
ST_SETTLE, ST_CONTACT_D = 5, 6   # time the capture-settled conditions have held (s); |r| at first contact
ST_LEN = 7
EP_DURATION, EP_SEPARATION, EP_CONTACT_N, EP_START = 0, 1, 2, 3   # start pose position (3)
EP_SETTLE_S, EP_SETTLE_V, EP_SETTLE_W = 6, 7, 8   # capture_settle_s, speed (m/s) and rate (rad/s) bounds
EP_LEN = 9
END_TIME_LIMIT, END_SEPARATED, END_CAPTURE_SETTLED = 1, 2, 3
END_REASONS = {END_TIME_LIMIT: "time limit", END_SEPARATED: "separated", END_CAPTURE_SETTLED: "capture settled"}


@njit(cache=True)
def quintic(u):
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return 1.0
    return u * u * u * (10.0 + u * (-15.0 + 6.0 * u))


@njit(cache=True)
def move_setup(mv, start, target, v_max, a_max, w_max, alpha_max):
    """Fill ``mv`` for a rest-to-rest move start -> target (poses, 7) within the speed and
    acceleration limits given (m/s, m/s^2, rad/s, rad/s^2); returns the duration T (s)."""
    dq = np.zeros(4)
    qc = np.zeros(4)
    rv = np.zeros(3)
    for i in range(3):
        mv[MV_P0 + i] = start[i]
        mv[MV_DP + i] = target[i] - start[i]
    for i in range(4):
        mv[MV_Q0 + i] = start[3 + i]
    SP.quat_conj(start[3:7], qc)
    SP.quat_mul(target[3:7], qc, dq)          # target = dq (x) start, dq in B
    if dq[0] < 0.0:
        for i in range(4):
            dq[i] = -dq[i]
    SP.quat_to_rotvec(dq, rv)
    for i in range(3):
        mv[MV_RV + i] = rv[i]
    D = math.sqrt(mv[MV_DP] ** 2 + mv[MV_DP + 1] ** 2 + mv[MV_DP + 2] ** 2)
    A = math.sqrt(rv[0] ** 2 + rv[1] ** 2 + rv[2] ** 2)
    T = max(1.875 * D / v_max, math.sqrt(5.7735 * D / a_max), 1.875 * A / w_max, math.sqrt(5.7735 * A / alpha_max))
    mv[MV_T] = T
    return T


@njit(cache=True)
def move_eval(mv, t, pose, scr):
    """Pose of the move at time t into ``pose``; ``scr`` (10) scratch. True when finished."""
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


@njit(cache=True)
def runup_eval(ru, geo, s, out, scr):
    """Relative pose at run-up time s (<= 0 during the run-up) into out[O_RPRED..], and the
    platform-top pose into out[O_PCMD..]; ``scr`` (10) scratch."""
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


@njit(cache=True)
def command_rates(pose, prev_pose, prev_vel, vel, acc, dt, first, scr):
    """Backward-difference velocity and acceleration of the command (B components); ``first``
    = no previous command (rates 0). Updates prev_pose / prev_vel; ``scr`` (11) scratch."""
    if first:
        for i in range(6):
            vel[i] = 0.0
            acc[i] = 0.0
    else:
        qc = scr[0:4]
        dq = scr[4:8]
        rv = scr[8:11]
        SP.quat_conj(prev_pose[3:7], qc)
        SP.quat_mul(pose[3:7], qc, dq)
        if dq[0] < 0.0:
            for i in range(4):
                dq[i] = -dq[i]
        SP.quat_to_rotvec(dq, rv)
        for i in range(3):
            vel[i] = (pose[i] - prev_pose[i]) / dt
            vel[3 + i] = rv[i] / dt
        for i in range(6):
            acc[i] = (vel[i] - prev_vel[i]) / dt
    for i in range(7):
        prev_pose[i] = pose[i]
    for i in range(6):
        prev_vel[i] = vel[i]


@njit(cache=True)
def supervise(lim, base, top, leg_lim, box, ctr, crc_ring, gap_ring, pose, vel, acc, w_S, w_P, extra,
              new_sample, crc_new, gap_new, platform_fault, platform_estop, overrun_streak, heartbeat_lost,
              lengths, detail, xlim, xctr, trk_ring, raw, raw_prev, status_new, status_pos):
    """``rt.safety.check`` then the controller-level checks (module docstring); returns a
    ``rt.safety.Reason`` code. All counters are updated before any check returns."""
    # controller-level counters first
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
    if xctr[XC_FILLED] < n:
        xctr[XC_FILLED] += 1
    code = SF.check(lim, base, top, leg_lim, box, ctr, crc_ring, gap_ring, pose, vel, acc, w_S, w_P, extra,
                    new_sample, crc_new, gap_new, platform_fault, platform_estop, overrun_streak, heartbeat_lost,
                    lengths, detail)
    if code != 0:
        return code
    if xctr[XC_PSTALE] >= xlim[XL_PSTALE]:
        detail[1] = xctr[XC_PSTALE]
        return 19
    if xlim[XL_FROZEN] > 0.0 and xctr[XC_FROZEN] >= xlim[XL_FROZEN]:
        detail[1] = xctr[XC_FROZEN]
        return 21
    d = int(xlim[XL_DELAY])
    if xlim[XL_TRACK_ON] != 0.0 and status_new and xctr[XC_FILLED] > d:
        j = (h - d) % n
        e = math.sqrt((status_pos[0] - trk_ring[j, 0]) ** 2 + (status_pos[1] - trk_ring[j, 1]) ** 2
                      + (status_pos[2] - trk_ring[j, 2]) ** 2)
        if e > xlim[XL_TRACK]:
            detail[1] = e
            return 20
    return 0




@njit(cache=True)
def dynamics_cycle(C_eff, R_PS, p_PS_P, raw, bias, acc_t, sctr, coef, fstate, w_S, w_P_raw, w_P,
                   par, env, x, t, dt, w_in, tau, mode, geo, out, k, xt, ws, rel,
                   cmd_pose, prev_pose, prev_vel, cmd_twist, cmd_acc, scr,
                   lim, base, top, leg_lim, box, ctr, crc_ring, gap_ring, new_sample, crc_new, gap_new,
                   platform_fault, platform_estop, overrun_streak, heartbeat_lost, lengths, detail,
                   xlim, xctr, trk_ring, raw_prev, status_new, status_pos, stats, endp):
    """RUNNING, DYNAMICS phase, in one compiled call: sensing, the coupling step with the wrench
    (state at t + dt, prediction at t + dt + tau, platform pose), the command's rates, the
    safety checks, the run statistics and the end criteria (``stats[ST_END]``). Returns the
    safety ``Reason`` code (0 = clear)."""
    sense(C_eff, R_PS, p_PS_P, raw, bias, acc_t, sctr, coef, fstate, w_S, w_P_raw, w_P)
    for i in range(6):
        w_in[0, i] = w_P[i]
    CP.coupling_update(par, env, x, t, dt, w_in, tau, mode, geo, out, k, xt, ws, rel)
    for i in range(7):
        cmd_pose[i] = out[CP.O_PCMD + i]
    command_rates(cmd_pose, prev_pose, prev_vel, cmd_twist, cmd_acc, dt, False, scr)
    code = supervise(lim, base, top, leg_lim, box, ctr, crc_ring, gap_ring, cmd_pose, cmd_twist, cmd_acc, w_S,
                     w_P, out, new_sample, crc_new, gap_new, platform_fault, platform_estop, overrun_streak,
                     heartbeat_lost, lengths, detail, xlim, xctr, trk_ring, raw, raw_prev, status_new, status_pos)
    # statistics
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
    # end criteria
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
    if t + dt >= endp[EP_DURATION] - 1e-9:
        stats[ST_END] = END_TIME_LIMIT
    elif d > endp[EP_SEPARATION]:
        stats[ST_END] = END_SEPARATED
    elif stats[ST_FIRST_CONTACT] >= 0.0 and stats[ST_SETTLE] > 0.0 and stats[ST_SETTLE] >= endp[EP_SETTLE_S] - 1e-9:
        stats[ST_END] = END_CAPTURE_SETTLED
    return code
