"""The all-digital reference's coupled model (docs/models/world.md §6; the run and its shell are
:mod:`sim_stand.digital`): the packed parameters, states and end reasons, one evaluation of both
vehicles, the mechanism and the contacts (:func:`digital_eval`), the semi-implicit Euler's update
of the vehicles, the log rows and the end criteria. All ``@njit`` kernels, allocation-free."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from rt.jit import KERNEL
from sim_stand.contact import kernel as K
from sim_stand.contact import geometry as G
from sim_stand.dock_mechanism import base_wrench_offset, mech_contact, mech_derivatives
from sim_stand.mechanism_kinds import KIND_TREE
from sim_stand.mechanism import layout as LAY
from sim_stand.kin import K_A, K_E, K_G, kin_from_ports
from rt.control import end_criteria as EC
from rt.control.end_criteria import (END_DIVERGED, END_MECHANISM, END_NONE, END_PENETRATION,  # noqa: F401
                                      END_SEPARATED)
from sim_stand.world import ST_MAXEXC, ST_T, ST_TCAP, dock_base_motion

# allocation-free kernels: no NRT reference counting (rt/jit.py; ~15 % of the digital case's time)
_JIT = dict(KERNEL, error_model="numpy")

# how a run ends: the codes, keys and order of every kind of run (rt.control.end_criteria)
END_NAMES = {code: e.key for code, e in EC.ENDS.items()}

# digital parameters (float64)
D_DT = 0          # physics step
D_DTC = 1         # coarse step (before first contact)
D_SPR = 2         # physics steps per log row
D_INTEG = 3       # INTEG_*: 0 semi-implicit Euler, 1 RK4, 2 adaptive Bogacki-Shampine 3(2)
D_TEND = 4        # duration
D_SETTLE = 5      # capture settle time
D_SEPR = 6        # separation distance: |r_DPA| beyond which the run ends
D_GAPM = 7        # gap margin for leaving the coarse phase
D_PMIN = 8        # min over passive features of (bounding centre x - radius), P
D_COARSE = 9      # 1: coarse phase allowed
D_COM = 10        # ring centre of mass in the ring frame (3)
D_GA = 13         # gravity on the mechanism in P (3): zero in orbit; the stand's 1 g for HIL comparisons
D_HILC = 16       # 1: HIL coupling (the vehicles feel the contact wrench only, as the controller applies it)
D_R0 = 17         # initial r_DPA (3)
D_KIND = 20       # mechanism slot code (sim_stand.mechanism_kinds KIND_*)
D_TOL = 21        # adaptive integrator: local error tolerance, m (positions; angles per m of lever)
D_TTOL = 22       # adaptive integrator: time scale turning the tolerance into velocities' (s)
D_H = 23          # adaptive integrator: the next step's size (state, s; 0 before the first step)
D_HMAX = 24       # adaptive integrator: the largest step (s)
D_HMIN = 25       # adaptive integrator: the smallest step (s): accepted whatever its error
D_RWT = 26        # rosw: the last accepted step's start (state, s)
D_RWH = 27        # rosw: its length (s); 0 before the first
D_RWPEN = 28      # rosw: 1 when that step ended on a penetration beyond its limit (state)
D_LEN = 32

# integrators (D_INTEG)
INTEG_SIE, INTEG_RK4, INTEG_RK23, INTEG_ROSW = 0, 1, 2, 3
INTEGRATOR_CODES = {"semi_implicit_euler": INTEG_SIE, "rk4": INTEG_RK4, "rk23": INTEG_RK23, "rosw": INTEG_ROSW}

# integer state
J_PHASE = 0       # 0 coarse (mechanism carried rigidly), 1 fine
J_STEPS = 1       # physics-step-equivalents since start (the clock, in units of dt)
J_END = 2
J_STATUS = 3
J_NEV = 4         # mirrors world I_NEV for record_events (events share the world's helpers)
J_FINE_STEPS = 5  # coupled steps taken (accepted ones for rk23)
J_EVALS = 6       # evaluations of the coupled system
J_REJECTED = 7    # rk23: steps rejected by the error test
J_LEN = 8
ST_FIRST = 9      # stats: first contact time (rod runs), -1 before

# log field sets (name -> size); x and stroke sizes are filled in per run
LOG_FIELDS_MECH = ("t", "w_P", "rel_pose", "rel_twist", "x", "captured", "penetration", "contacts",
                   "ring_state", "stroke", "base_wrench", "energy_absorbed", "phase")
# a tree mechanism (probe-cone): its joint state [p, pd] and each joint's device force instead
LOG_FIELDS_TREE = ("t", "w_P", "rel_pose", "rel_twist", "x", "captured", "penetration", "contacts",
                   "joint_state", "joint_force", "base_wrench", "energy_absorbed", "phase")
LOG_FIELDS_GRAPPLE = ("t", "w_P", "rel_pose", "rel_twist", "x", "captured", "penetration", "snare_force",
                      "energy_absorbed")
LOG_FIELDS_ROD = ("t", "w_P", "rel_pose", "rel_twist", "x", "captured", "penetration", "rod_force", "rod_rate",
                  "energy_absorbed")


# ====================================================================== kernels
@njit(**_JIT)
def port_accel(par, x, xdot, ws, s, kin):
    """Absolute acceleration of port s's origin and its angular acceleration, from the state
    derivative (module docstring), into kin[K_A], kin[K_E] in P components (ws row 1 = P).

    Parameters
    ----------
    par : float64[2, L]
        Both vehicles' packed parameters (``rt.dynamics.spacecraft`` module docstring, "The
        kernels' arguments", as for ``x`` and ``xdot``).
    x : float64[2, NS]
        Both vehicles' state. Read only.
    xdot : float64[2, NS]
        Their state derivative (``rt.dynamics.spacecraft.derivatives``). Read only.
    ws : float64[2, WS_LEN]
        The two vehicles' port states at ``x`` (``rt.dynamics.spacecraft`` ``W_*``): R_IC, the
        body rate, the deflected port position and mount angles of vehicle ``s``, R_ID of row 1.
    s : int
        Vehicle whose port is meant (0: the active vehicle, A).
    kin : float64[KIN_LEN]
        Output: the port's absolute acceleration ``K_A`` (m/s^2) and angular acceleration
        ``K_E`` (rad/s^2), P components; the rest of the record is untouched.
    """
    nm = (x.shape[1] - S.N_RIGID) // 2
    wx, wy, wz = ws[s, S.W_WREL], ws[s, S.W_WREL + 1], ws[s, S.W_WREL + 2]
    dx, dy, dz = ws[s, S.W_RCD], ws[s, S.W_RCD + 1], ws[s, S.W_RCD + 2]
    tx, ty, tz = ws[s, S.W_TH], ws[s, S.W_TH + 1], ws[s, S.W_TH + 2]
    # d' = Phi_r eta', theta' = Phi_theta eta'; d'' = Phi_r eta'', theta'' = Phi_theta eta''
    vfx, vfy, vfz, tdx, tdy, tdz = S.modal_sum(par, s, nm, x, S.S_ETA + nm, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    afx, afy, afz, tax, tay, taz = S.modal_sum(par, s, nm, xdot, S.S_ETA + nm, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    ax_, ay_, az_ = xdot[s, S.S_W], xdot[s, S.S_W + 1], xdot[s, S.S_W + 2]
    # w x d, w x (w x d)
    cx = wy * dz - wz * dy
    cy = wz * dx - wx * dz
    cz = wx * dy - wy * dx
    ac0 = (ay_ * dz - az_ * dy) + (wy * cz - wz * cy) + 2.0 * (wy * vfz - wz * vfy) + afx
    ac1 = (az_ * dx - ax_ * dz) + (wz * cx - wx * cz) + 2.0 * (wz * vfx - wx * vfz) + afy
    ac2 = (ax_ * dy - ay_ * dx) + (wx * cy - wy * cx) + 2.0 * (wx * vfy - wy * vfx) + afz
    # mount rotation rate w_f = T(theta) theta', and its derivative T theta'' - (theta.theta'/(2 den)) w_f
    den = 1.0 + 0.25 * (tx * tx + ty * ty + tz * tz)
    wf0, wf1, wf2 = S.mount_rate(den, tx, ty, tz, tdx, tdy, tdz)
    g = 0.5 * (tx * tdx + ty * tdy + tz * tdz) / den
    wd0, wd1, wd2 = S.mount_rate(den, tx, ty, tz, tax, tay, taz)
    wd0 -= g * wf0
    wd1 -= g * wf1
    wd2 -= g * wf2
    ec0 = ax_ + wd0 + (wy * wf2 - wz * wf1)
    ec1 = ay_ + wd1 + (wz * wf0 - wx * wf2)
    ec2 = az_ + wd2 + (wx * wf1 - wy * wf0)
    ai0 = xdot[s, S.S_V] + ws[s, S.W_RIC] * ac0 + ws[s, S.W_RIC + 1] * ac1 + ws[s, S.W_RIC + 2] * ac2
    ai1 = xdot[s, S.S_V + 1] + ws[s, S.W_RIC + 3] * ac0 + ws[s, S.W_RIC + 4] * ac1 + ws[s, S.W_RIC + 5] * ac2
    ai2 = xdot[s, S.S_V + 2] + ws[s, S.W_RIC + 6] * ac0 + ws[s, S.W_RIC + 7] * ac1 + ws[s, S.W_RIC + 8] * ac2
    ei0 = ws[s, S.W_RIC] * ec0 + ws[s, S.W_RIC + 1] * ec1 + ws[s, S.W_RIC + 2] * ec2
    ei1 = ws[s, S.W_RIC + 3] * ec0 + ws[s, S.W_RIC + 4] * ec1 + ws[s, S.W_RIC + 5] * ec2
    ei2 = ws[s, S.W_RIC + 6] * ec0 + ws[s, S.W_RIC + 7] * ec1 + ws[s, S.W_RIC + 8] * ec2
    for i in range(3):
        c0 = ws[1, S.W_RID + i]          # R_IP[0, i]
        c1 = ws[1, S.W_RID + 3 + i]
        c2 = ws[1, S.W_RID + 6 + i]
        kin[K_A + i] = c0 * ai0 + c1 * ai1 + c2 * ai2
        kin[K_E + i] = c0 * ei0 + c1 * ei1 + c2 * ei2


@njit(**_JIT)
def digital_eval(kind, par, env, x, t, xr, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, kin, feat, featP,
                 pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links, latch_p, info, info_f, Rl, cscr,
                 link_pose, link_twist, aC, R_PE):
    """One evaluation of the coupled system (module docstring): contact, vehicles with the lagged
    base wrench, port acceleration, mechanism, vehicles with the new base wrench. ``xdot`` (2 x
    NS) and ``mout`` hold the derivatives; ``bwp`` (6) is the base wrench carried to the next
    evaluation. Returns the mechanism status (0 ok).

    Parameters
    ----------
    kind : int
        Mechanism kind (``sim_stand.dock_mechanism`` ``KIND_*``).
    par : float64[2, L]
        Both vehicles' packed parameters (``rt.dynamics.spacecraft`` module docstring, "The
        kernels' arguments", as for ``env``, ``x``, ``w_in``, ``xdot``, ``ws`` and ``rel``).
    env : float64[ENV_LEN]
        The environment.
    x : float64[2, NS]
        Both vehicles' state. Read only.
    t : float
        Time (s).
    xr : float64[12] or float64[2n]
        The mechanism's state (``sim_stand.dock_mechanism`` module docstring, "The slot's
        arrays", as for ``com`` .. ``cw`` and ``feat`` .. ``R_PE``). Read only.
    com : float64[3]
        The ring's centre of mass in C (m).
    ga : float64[4]
        Gravity on the mechanism in P (3, m/s^2; zero in orbit), then the HIL-coupling flag
        (1.0: the active vehicle feels the contact wrench's reaction, not the base wrench).
    mp, mw, mout, bm, cw : float64[:]
        The mechanism's parameters, workspace, outputs, base motion and contact wrench; the last
        three are written.
    bwp : float64[6]
        The mechanism's wrench on its base ``[f; m about O_0]``, frame 0 (N, N m), carried from
        one evaluation to the next; updated by each.
    w_in : float64[2, 6]
        Output: the vehicles' inputs: row 0 the contact wrench on P (P components, about P's
        origin), row 1 the base wrench on A (A components, about A's origin; zero with HIL
        coupling) (N, N m).
    xdot : float64[2, NS]
        Output: both vehicles' state derivative.
    ws, rel : float64 arrays
        Workspace: the two vehicles' port states; the relative kinematics.
    kin : float64[KIN_LEN]
        Output: A's and P's absolute kinematics in P (``sim_stand.kin`` ``K_*``).
    feat, featP : float64[nf, FW]
        The interface's features, and their workspace in P: from here to ``R_PE`` the arrays
        :func:`sim_stand.dock_mechanism.mech_contact` takes.
    pairs : int64[n_pairs, PW]
        Pair table.
    mat, lat : float64[:, :]
        Materials; latches and sensors.
    cst_in, cst_out : int64[S_LATCH0 + n_lat]
        The committed interface state (read only), and the state this evaluation produced
        (output, not committed here).
    rec, wrench_P, wrench_links, latch_p : float64 arrays
        Output: the contact records and wrenches, the latch deflections.
    info : int64[4]
        Output: the contact evaluation's status.
    info_f, Rl, cscr, link_pose, link_twist : float64 arrays
        Output: the offending penetration; workspace; the buffer link's pose and twist in P.
    aC, R_PE : float64[3, 3]
        Scratch; output: DCM E -> P.
    """
    nm = (x.shape[1] - S.N_RIGID) // 2
    hw = env[S.E_N] if env[S.E_HILL] != 0.0 else 0.0
    S._port(par, x, 0, nm, hw, ws)
    S._port(par, x, 1, nm, hw, ws)
    kin_from_ports(ws, kin)
    for i in range(3):
        kin[K_G + i] = ga[i]        # fixed in P (the stand's lab): in A it follows the relative attitude
    mech_contact(kind, kin, xr, com, mp, mw, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links,
                 latch_p, info, info_f, Rl, cscr, link_pose, link_twist, cw, aC, R_PE)
    hil = ga[3] != 0.0
    for i in range(6):
        w_in[0, i] = wrench_P[i]
        w_in[1, i] = 0.0 if hil else bwp[i]
    # the ports of x are in ws (above): both vehicle evaluations reuse them
    S.derivatives_at_ports(par, env, x, t, w_in, 1 if hil else 0, xdot, ws, rel)
    port_accel(par, x, xdot, ws, 0, kin)
    dock_base_motion(kin, bm)
    st = mech_derivatives(kind, mp, mw, xr, bm, cw, mout)
    if st != 0:
        return st
    o = base_wrench_offset(kind, mp)
    for i in range(6):
        bwp[i] = mout[o + i]
    if hil:
        # the platform carries the mechanism (its weight and inertia): the active vehicle
        # feels the contact wrench's reaction at A, exactly what the controller applies
        return 0
    for i in range(6):
        w_in[1, i] = mout[o + i]
    S.derivatives_at_ports(par, env, x, t, w_in, 0, xdot, ws, rel)
    return 0


@njit(**_JIT)
def sc_sie_update(par, env, x, xdot, dt):
    """Semi-implicit Euler for the vehicles: v, omega, eta' from the accelerations, then r,
    q (exact rotation by the new body rate over dt), eta from the new rates.

    Parameters
    ----------
    par, env : float64 arrays
        Both vehicles' packed parameters, the environment (``rt.dynamics.spacecraft`` module
        docstring, "The kernels' arguments").
    x : float64[2, NS]
        Both vehicles' state, advanced by ``dt`` in place.
    xdot : float64[2, NS]
        The state derivative at the step's start.
    dt : float
        Step (s).
    """
    nm = (x.shape[1] - S.N_RIGID) // 2
    hw = env[S.E_N] if env[S.E_HILL] != 0.0 else 0.0
    for s in range(2):
        for i in range(3):
            x[s, S.S_V + i] += dt * xdot[s, S.S_V + i]
            x[s, S.S_W + i] += dt * xdot[s, S.S_W + i]
        for k in range(nm):
            x[s, S.S_ETA + nm + k] += dt * xdot[s, S.S_ETA + nm + k]
        for i in range(3):
            x[s, S.S_R + i] += dt * x[s, S.S_V + i]
        for k in range(nm):
            x[s, S.S_ETA + k] += dt * x[s, S.S_ETA + nm + k]
        qw, qx, qy, qz = x[s, S.S_Q], x[s, S.S_Q + 1], x[s, S.S_Q + 2], x[s, S.S_Q + 3]
        # body rate relative to I (Hill: minus the orbit rate about I's z, in C)
        _, _, _, _, _, _, R20, R21, R22 = SP.quat_dcm_entries(qw, qx, qy, qz)
        wx = x[s, S.S_W] - R20 * hw
        wy = x[s, S.S_W + 1] - R21 * hw
        wz = x[s, S.S_W + 2] - R22 * hw
        a = math.sqrt(wx * wx + wy * wy + wz * wz) * dt
        if a < 1e-12:
            c = 1.0
            k = 0.5 * dt
        else:
            c = math.cos(0.5 * a)
            k = math.sin(0.5 * a) / a * dt
        dw, dx_, dy_, dz_ = c, k * wx, k * wy, k * wz
        nw, nx, ny, nz = SP.quat_mul_entries(qw, qx, qy, qz, dw, dx_, dy_, dz_)
        n = 1.0 / math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
        x[s, S.S_Q] = nw * n
        x[s, S.S_Q + 1] = nx * n
        x[s, S.S_Q + 2] = ny * n
        x[s, S.S_Q + 3] = nz * n


@njit(**_JIT)
def interface_gap(feat, lat, link_pose, R_PE, pmin):
    """A lower bound of the axial clearance between the units: ``pmin`` (the smallest x_P of the
    passive features' bounding spheres) minus the largest x_P of the active features' bounding
    spheres and of the latch tips over their strokes. Positive: no pair can touch, the kernel's
    broad phase would reject every pair.

    Parameters
    ----------
    feat : float64[nf, FW]
        Contact feature rows (``sim_stand.contact.geometry``); the active ones' bounding spheres
        (E components, m) are read.
    lat : float64[n_lat, LW]
        Latch and sensor rows (``sim_stand.contact.kernel`` ``L_*``): tips, strokes, pivots.
    link_pose : float64[n_links, 7]
        The buffer link's pose ``[p_PE (m), q_PE]`` in P (row 0; only the x of p_PE is read).
    R_PE : float64[3, 3]
        The buffer link's DCM E -> P.
    pmin : float
        Smallest x_P of the passive features' bounding spheres (m; ``passive_min_x``).
    """
    amax = -1e300
    px = link_pose[0, 0]
    for i in range(feat.shape[0]):
        if feat[i, G.F_SIDE] == 0.0:
            continue
        x = px + R_PE[0, 0] * feat[i, G.F_BC] + R_PE[0, 1] * feat[i, G.F_BC + 1] + R_PE[0, 2] * feat[i, G.F_BC + 2] \
            + feat[i, G.F_BR]
        if x > amax:
            amax = x
    for l in range(lat.shape[0]):
        tx, ty, tz = lat[l, K.L_TIP], lat[l, K.L_TIP + 1], lat[l, K.L_TIP + 2]
        x0 = px + R_PE[0, 0] * tx + R_PE[0, 1] * ty + R_PE[0, 2] * tz
        if lat[l, K.L_DOF] == 0.0:
            # translational: the tip sweeps the segment tip0 .. tip0 + p_max u
            pm = lat[l, K.L_PMAX]
            ux, uy, uz = lat[l, K.L_AX], lat[l, K.L_AX + 1], lat[l, K.L_AX + 2]
            x1 = x0 + pm * (R_PE[0, 0] * ux + R_PE[0, 1] * uy + R_PE[0, 2] * uz)
            x = (x0 if x0 > x1 else x1) + lat[l, K.L_RTIP]
        else:
            # rotary: the tip stays within its arm of the pivot
            ax = tx - lat[l, K.L_PIV]
            ay = ty - lat[l, K.L_PIV + 1]
            az = tz - lat[l, K.L_PIV + 2]
            arm = math.sqrt(ax * ax + ay * ay + az * az)
            xp = px + R_PE[0, 0] * lat[l, K.L_PIV] + R_PE[0, 1] * lat[l, K.L_PIV + 1] + R_PE[0, 2] * lat[l, K.L_PIV + 2]
            x = xp + arm + lat[l, K.L_RTIP]
        if x > amax:
            amax = x
    return pmin - amax


def passive_min_x(feat: np.ndarray) -> float:
    pas = feat[feat[:, G.F_SIDE] == 0.0]
    return float(np.min(pas[:, G.F_BC] - pas[:, G.F_BR]))


@njit(**_JIT)
def _row_head(row, lay, t, wrench_P, rel13, x):
    """The log fields both field sets begin with (``t``, ``w_P``, ``rel_pose``, ``rel_twist``,
    ``x``; :data:`LOG_FIELDS_MECH`, :data:`LOG_FIELDS_ROD`) into ``row`` at the offsets ``lay``;
    ``rel13`` is the relative state (``rt.dynamics.spacecraft.relative_state``)."""
    row[lay[0]] = t
    for i in range(6):
        row[lay[1] + i] = wrench_P[i]
    for i in range(7):
        row[lay[2] + i] = rel13[i]
    for i in range(6):
        row[lay[3] + i] = rel13[7 + i]
    ns = x.shape[1]
    for s in range(2):
        for i in range(ns):
            row[lay[4] + s * ns + i] = x[s, i]


@njit(**_JIT)
def _write_row(kind, row, lay, t, wrench_P, par, env, x, ws, rel13, cst, pen, ncont, xr, mout, mp, eabs, phase):
    S.relative_state(par, env, x, rel13, ws)
    _row_head(row, lay, t, wrench_P, rel13, x)
    row[lay[5]] = cst[K.S_CAPTURED]
    row[lay[6]] = pen
    row[lay[7]] = ncont
    for i in range(xr.shape[0]):
        row[lay[8] + i] = xr[i]
    if kind == KIND_TREE:
        n = xr.shape[0] // 2
        fo = 2 * n + 6
        for j in range(n):
            f = 0.0
            for k in range(LAY.NDEV):
                f += mout[fo + j * LAY.NDEV + k]
            row[lay[9] + j] = f
    else:
        nl = int(mp[LAY.H_NLEGS])
        so = int(mp[LAY.H_OUT + 7])
        for k in range(nl):
            row[lay[9] + k] = mout[so + k]
    bo = base_wrench_offset(kind, mp)
    for i in range(6):
        row[lay[10] + i] = mout[bo + i]
    row[lay[11]] = eabs
    row[lay[12]] = phase


@njit(**_JIT)
def _excursion_and_end(t, par, env, x, ws, rel13, dpar, stats, istate):
    S.relative_state(par, env, x, rel13, ws)
    _end_from_relative(t, rel13, dpar, stats, istate)


@njit(**_JIT)
def _end_from_relative(t, rel13, dpar, stats, istate):
    """The platform-excursion statistic and the end criteria from the relative state ``rel13``."""
    d = math.sqrt((rel13[0] - dpar[D_R0]) ** 2 + (rel13[1] - dpar[D_R0 + 1]) ** 2 + (rel13[2] - dpar[D_R0 + 2]) ** 2)
    if d > stats[ST_MAXEXC]:
        stats[ST_MAXEXC] = d
    r = math.sqrt(rel13[0] ** 2 + rel13[1] ** 2 + rel13[2] ** 2)
    settled = stats[ST_TCAP] >= 0.0 and t >= stats[ST_TCAP] + dpar[D_SETTLE] - 1e-9
    e = EC.end_of_run(t, dpar[D_TEND], r, dpar[D_SEPR], settled)
    if e != END_NONE:          # an end the step already set (penetration, mechanism) stays
        istate[J_END] = e


@njit(**_JIT)
def run_clock(dpar, istate, stats):
    """The run's time: the physics-step clock, or for an adaptive run that ended inside a log
    period (penetration, mechanism, divergence) the time of its last accepted state.

    Parameters
    ----------
    dpar : float64[D_LEN]
        The run's parameters (``D_*``): the physics step ``D_DT`` (s) and the integrator.
    istate : int64[J_LEN]
        The run's integer state (``J_*``): step clock, phase, end reason.
    stats : float64[ST_LEN]
        Run statistics (``ST_*``): ``ST_T``, the time of the last accepted state (s).
    """
    e = istate[J_END]
    if (dpar[D_INTEG] == INTEG_RK23 or dpar[D_INTEG] == INTEG_ROSW) and istate[J_PHASE] == 1 and (
            e == END_PENETRATION or e == END_MECHANISM or e == END_DIVERGED):
        return stats[ST_T]
    return istate[J_STEPS] * dpar[D_DT]

