"""The all-digital reference: both spacecraft, the docking mechanism and the contacts in one
process with the same kernels as the emulator, no platform in the loop (issue 7 item 5;
docs/models/world.md §6).

Coupling (seed 002 §4.3, seed 000 §2.5 / seed 001 §3.9, digest §1 evaluation order):

* both vehicles: ``rt.dynamics.spacecraft`` (rigid bodies with flexible port modes, their own control);
* the mechanism's base frame 0 = the active vehicle's (deflected) port frame A. Its base motion
  is the port's exact absolute motion: ``omega_0``, and ``a_0``, ``eps_0`` from the vehicle's
  state derivative (``a = v' + R_IC (w' x d + w x (w x d) + 2 w x d' + d'')`` with ``d`` the
  deflected port position in C; ``eps = R_IC (w' + w_f' + w x w_f)`` with ``w_f`` the mount's
  rotation rate), gravity zero (orbit) -- or, for judging a HIL run, the stand's conditions
  (``gravity_P``, ``hil_coupling``: :func:`stand_conditions`, docs/validation.md);
* the passive unit P moves with the passive vehicle's port; the contact model sees A's and P's
  absolute twists;
* the active vehicle receives the mechanism's **base wrench** (``w_in[1]``), not the contact
  wrench; the passive vehicle receives the contact wrench (``w_in[0]``, ``react = 0``).

The base acceleration depends on the base wrench (the mechanism's inertia loads the vehicle):
each evaluation computes the vehicles' derivative with the previous evaluation's base wrench,
the port acceleration from it, the mechanism with that base motion, and the vehicles' derivative
again with the new base wrench. The residual lag is ``m_mech / m_port`` (<= 3 % for the 90 kg
mechanism on the Soyuz-class 3 t axial port mode) of the base-wrench change over one step.

Steps: before the first contact the mechanism rests on its base (its equilibrium in 0 g) and
the interface's bounding spheres are apart along x_P, so the vehicles alone are integrated with
RK4 at the coarse step (default 1 ms) and the ring is carried rigidly; as soon as the gap falls
below ``gap_margin`` the coupled system is integrated with the emulator config's
``digital_integrator``: the adaptive Bogacki-Shampine 3(2) by default (:func:`_rk23_period`: steps
of its own choosing up to one log period, landing on the rows), or semi-implicit Euler / RK4 at
the physics step (docs/models/world.md §6 compares them). The run ends at the case's duration,
``capture_settle_s`` after soft capture, when the units are ``separation_m`` beyond their start
distance, or when a penetration exceeds its limit (seed 002 §4.7 abort rule).

The run log has the HIL run-log format (``rt.record.runlog``); fields in :data:`LOG_FIELDS_MECH` /
:data:`LOG_FIELDS_ROD` (docs/models/world.md §6).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import njit

from rt.dynamics import berthing_flight as BF
from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from rt.jit import KERNEL
from rt.config.case import Case, load_case
from rt.record.runlog import RunLogWriter
from sim_stand.contact import build_interface, load_interface
from sim_stand.contact import kernel as CK
from sim_stand.contact import geometry as G
from sim_stand.dock_mechanism import (KIND_PARALLEL, KIND_TREE, base_wrench_offset, load_dock_mechanism,
                                     mech_absorbed_power, mech_contact, mech_derivatives, mech_error, mech_sie_update,
                                     mechanism_rest_state)
from sim_stand.mechanism import layout as ML
from sim_stand.mechanism.kernels import damping_jacobian
from sim_stand.grapple import GO_D, GO_F, GO_LEN, GO_POW, GS_CAP, GS_LEN, grapple_capture, grapple_eval
from sim_stand.rod import RO_DELTA, RO_FORCE, RO_LEN, RO_RATE, R_C, rod_rk4_step, rod_scratch
from sim_stand.kin import K_A, K_E, K_G, K_R, KIN_LEN, kin_from_ports
from sim_stand.world import (EV_MAX, contact_buffers, EVENT_CODE_NAMES, EV_PENETRATION, I_LEN, I_NEV, ST_EABS, ST_LEN,
                             ST_MAXEXC, ST_MAXPEN, ST_PEAKF, ST_PEAKM, ST_PEN, ST_POW, ST_T, ST_TCAP, dock_base_motion,
                             max_class1_penetration, record_events, step_stats)
from sim_stand.world_config import EmulatorConfig, load_emulator

# allocation-free kernels: no NRT reference counting (rt/jit.py; ~15 % of the digital case's time)
_JIT = dict(KERNEL, error_model="numpy")

# end reasons
END_NONE, END_DURATION, END_CAPTURE, END_SEPARATED, END_PENETRATION, END_MECHANISM, END_DIVERGED = 0, 1, 2, 3, 4, 5, 6
END_NAMES = {END_DURATION: "duration", END_CAPTURE: "capture_settled", END_SEPARATED: "separated",
             END_PENETRATION: "penetration_limit", END_MECHANISM: "mechanism_error", END_DIVERGED: "diverged"}

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
D_KIND = 20       # mechanism kind (sim_stand.dock_mechanism KIND_*)
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

# ROS34PW2 (Rang & Angermann 2005, BIT 45: a Rosenbrock-W method of order 3 for any W, embedded
# order 2, L-stable): (I - h gamma W) K_i = h f(y + sum_j a_ij K_j) + h W sum_j g_ij K_j
RW_GAMMA = 0.43586652150845900
RW_A = ((0.0, 0.0, 0.0), (0.87173304301691801, 0.0, 0.0), (0.84457060015369423, -0.11299064236484185, 0.0),
        (0.0, 0.0, 1.0))
RW_G = ((0.0, 0.0, 0.0), (-0.87173304301691801, 0.0, 0.0), (-0.90338057013044082, 0.054180672388095326, 0.0),
        (0.24212380706095346, -1.2232505839045147, 0.54526025533510214))
RW_B = (0.24212380706095346, -1.2232505839045147, 1.5452602553351020, 0.43586652150845900)
RW_BHAT = (0.37810903145819369, -0.096042292212423178, 0.5, 0.21793326075422950)

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
    derivative (module docstring), into kin[K_A], kin[K_E] in P components (ws row 1 = P)."""
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
    evaluation. Returns the mechanism status (0 ok)."""
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
    q (exact rotation by the new body rate over dt), eta from the new rates."""
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
    broad phase would reject every pair."""
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
        tx, ty, tz = lat[l, CK.L_TIP], lat[l, CK.L_TIP + 1], lat[l, CK.L_TIP + 2]
        x0 = px + R_PE[0, 0] * tx + R_PE[0, 1] * ty + R_PE[0, 2] * tz
        if lat[l, CK.L_DOF] == 0.0:
            # translational: the tip sweeps the segment tip0 .. tip0 + p_max u
            pm = lat[l, CK.L_PMAX]
            ux, uy, uz = lat[l, CK.L_AX], lat[l, CK.L_AX + 1], lat[l, CK.L_AX + 2]
            x1 = x0 + pm * (R_PE[0, 0] * ux + R_PE[0, 1] * uy + R_PE[0, 2] * uz)
            x = (x0 if x0 > x1 else x1) + lat[l, CK.L_RTIP]
        else:
            # rotary: the tip stays within its arm of the pivot
            ax = tx - lat[l, CK.L_PIV]
            ay = ty - lat[l, CK.L_PIV + 1]
            az = tz - lat[l, CK.L_PIV + 2]
            arm = math.sqrt(ax * ax + ay * ay + az * az)
            xp = px + R_PE[0, 0] * lat[l, CK.L_PIV] + R_PE[0, 1] * lat[l, CK.L_PIV + 1] + R_PE[0, 2] * lat[l, CK.L_PIV + 2]
            x = xp + arm + lat[l, CK.L_RTIP]
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
    row[lay[5]] = cst[CK.S_CAPTURED]
    row[lay[6]] = pen
    row[lay[7]] = ncont
    for i in range(xr.shape[0]):
        row[lay[8] + i] = xr[i]
    if kind == KIND_TREE:
        n = xr.shape[0] // 2
        fo = 2 * n + 6
        for j in range(n):
            f = 0.0
            for k in range(ML.NDEV):
                f += mout[fo + j * ML.NDEV + k]
            row[lay[9] + j] = f
    else:
        nl = int(mp[ML.H_NLEGS])
        so = int(mp[ML.H_OUT + 7])
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
    if stats[ST_TCAP] >= 0.0 and t >= stats[ST_TCAP] + dpar[D_SETTLE] - 1e-9:
        istate[J_END] = END_CAPTURE
    elif r > dpar[D_SEPR]:
        istate[J_END] = END_SEPARATED
    elif t >= dpar[D_TEND] - 1e-9:
        istate[J_END] = END_DURATION


@njit(**_JIT)
def _rk_stage(stg, c, t, x0, xr0, kind, par, env, xs, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel,
              kin, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f,
              Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, istate):
    """An explicit Runge-Kutta stage: the model at ``(x0, xr0) + c k[stg - 1]``, time ``t + c``,
    into ``kx[stg]``, ``kr[stg]``; the contact's states into scratch (nothing committed).
    Returns the mechanism status (0 ok; otherwise the run's end is set)."""
    ns = x0.shape[1]
    nx = xr0.shape[0]
    for s in range(2):
        for i in range(ns):
            xs[s, i] = x0[s, i] + c * kx[stg - 1, s, i]
    for i in range(nx):
        xrs[i] = xr0[i] + c * kr[stg - 1, i]
    st = digital_eval(kind, par, env, xs, t + c, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, kin,
                      feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P, wrench_links, latch_p, info,
                      info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
    istate[J_EVALS] += 1
    if st != 0:
        istate[J_STATUS] = st
        istate[J_END] = END_MECHANISM
        return st
    for s in range(2):
        for i in range(ns):
            kx[stg, s, i] = xdot[s, i]
    for i in range(nx):
        kr[stg, i] = mout[i]
    return 0


@njit(**_JIT)
def _err_scale_x(i, nm, tol, ttol):
    """The absolute tolerance of a vehicle's state component i (rt.dynamics.spacecraft layout):
    position tol, attitude (quaternion ~ half the angle) tol / 2 per metre of lever, velocities
    tol / ttol, modal coordinates as positions."""
    if i < S.S_V:
        return tol
    if i < S.S_Q:
        return tol / ttol
    if i < S.S_W:
        return 0.5 * tol
    if i < S.S_ETA:
        return tol / ttol
    if i < S.S_ETA + nm:
        return tol
    return tol / ttol


@njit(**_JIT)
def _err_scale_r(kind, i, nx, tol, ttol):
    """The same for the mechanism's state: a ring's [r, angles, v, omega], or a tree's [p, p']
    (joint coordinates, angles or strokes, per metre of lever)."""
    if kind == KIND_TREE:
        return tol if i < nx // 2 else tol / ttol
    return tol if i < 6 else tol / ttol


@njit(**_JIT)
def _step_back(x, x0, xdot, kx, xr, xr0, mout, kr, bwp, bwp0):
    """Back to a step's start: the states, their derivatives (k1) and the lagged base wrench."""
    for s in range(2):
        for i in range(x.shape[1]):
            x[s, i] = x0[s, i]
            xdot[s, i] = kx[0, s, i]
    for i in range(xr.shape[0]):
        xr[i] = xr0[i]
        mout[i] = kr[0, i]
    for i in range(6):
        bwp[i] = bwp0[i]


@njit(**_JIT)
def _rk23_period(nsteps, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, kin, feat,
                 featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f,
                 Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, istate, stats, ev, evst):
    """Integrate the coupled system over ``nsteps`` physics steps' time with the Bogacki-Shampine
    3(2) pair (Bogacki & Shampine 1989; MATLAB's ode23): three new evaluations per step, the last
    one at the new state (first-same-as-last), the step from the local error's estimate (the
    difference to the embedded second-order solution), max norm over every state component
    against an absolute tolerance (:func:`_err_scale_x`, :func:`_err_scale_r`). Steps land on the
    period's end, so the log's rows are states the integrator reached, never interpolated.
    Events, statistics and the contact's latch states are committed only for accepted steps
    (stages evaluate into ``cst_tmp``); a step whose end finds a contact event is retried at half
    its size until it is at most the physics step ``dt`` long, so events are timed to ``dt`` as with
    the fixed-step integrators. Returns the mechanism status (0 ok).

    On entry the model has been evaluated at the current state (``xdot``, ``mout``: k1)."""
    dt = dpar[D_DT]
    ns = x.shape[1]
    nm = (ns - S.N_RIGID) // 2
    nx = xr.shape[0]
    kind = int(dpar[D_KIND])
    com = dpar[D_COM:D_COM + 3]
    ga = dpar[D_GA:D_GA + 4]
    tol = dpar[D_TOL]
    ttol = dpar[D_TTOL]
    hmax = dpar[D_HMAX]
    hmin = dpar[D_HMIN]
    t = istate[J_STEPS] * dt
    tend = (istate[J_STEPS] + nsteps) * dt
    h = dpar[D_H] if dpar[D_H] > 0.0 else dt
    x0 = kx[3]
    xr0 = kr[3]
    while tend - t > 1e-3 * hmin:
        hh = h if h < hmax else hmax
        clamped = False
        if hh >= tend - t:
            hh = tend - t
            clamped = True
        for s in range(2):
            for i in range(ns):
                x0[s, i] = x[s, i]
                kx[0, s, i] = xdot[s, i]
        for i in range(nx):
            xr0[i] = xr[i]
            kr[0, i] = mout[i]
        for i in range(6):
            bwp0[i] = bwp[i]
        # stages 2 and 3 (contact states into scratch)
        st = 0
        for stg in range(1, 3):
            c = 0.5 * hh if stg == 1 else 0.75 * hh
            st = _rk_stage(stg, c, t, x0, xr0, kind, par, env, xs, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in,
                           xdot, ws, rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P,
                           wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr,
                           istate)
            if st != 0:
                break
        # the third-order solution, and the model at it (k4: the next step's k1)
        for s in range(2):
            for i in range(ns):
                x[s, i] = x0[s, i] + hh * (2.0 / 9.0 * kx[0, s, i] + 1.0 / 3.0 * kx[1, s, i]
                                           + 4.0 / 9.0 * kx[2, s, i])
            qn = 1.0 / math.sqrt(x[s, S.S_Q] ** 2 + x[s, S.S_Q + 1] ** 2 + x[s, S.S_Q + 2] ** 2
                                 + x[s, S.S_Q + 3] ** 2)
            for i in range(4):
                x[s, S.S_Q + i] *= qn
        for i in range(nx):
            xr[i] = xr0[i] + hh * (2.0 / 9.0 * kr[0, i] + 1.0 / 3.0 * kr[1, i] + 4.0 / 9.0 * kr[2, i])
        if st == 0:
            st = digital_eval(kind, par, env, x, t + hh, xr, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel,
                              kin, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links,
                              latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
            istate[J_EVALS] += 1
        if st != 0:
            # the mechanism failed at a trial state (out of reach, singular): a shorter step, down
            # to the physics step, before the run ends with the mechanism's reason
            _step_back(x, x0, xdot, kx, xr, xr0, mout, kr, bwp, bwp0)
            istate[J_STATUS] = st
            istate[J_END] = END_MECHANISM
            if hh <= dt:
                return st           # the run ends at the last accepted state (stats[ST_T])
            istate[J_STATUS] = 0
            istate[J_END] = END_NONE
            istate[J_REJECTED] += 1
            h = 0.25 * hh
            continue
        # error estimate: y3 - y2 = h (-5/72 k1 + 1/12 k2 + 1/9 k3 - 1/8 k4), max norm
        en = 0.0
        for s in range(2):
            for i in range(ns):
                e = hh * (-5.0 / 72.0 * kx[0, s, i] + 1.0 / 12.0 * kx[1, s, i] + 1.0 / 9.0 * kx[2, s, i]
                          - 0.125 * xdot[s, i])
                r = abs(e) / _err_scale_x(i, nm, tol, ttol)
                if r > en:
                    en = r
        for i in range(nx):
            e = hh * (-5.0 / 72.0 * kr[0, i] + 1.0 / 12.0 * kr[1, i] + 1.0 / 9.0 * kr[2, i] - 0.125 * mout[i])
            r = abs(e) / _err_scale_r(kind, i, nx, tol, ttol)
            if r > en:
                en = r
        if not math.isfinite(en):
            # the trial state is not finite: a shorter step, down to the physics step
            _step_back(x, x0, xdot, kx, xr, xr0, mout, kr, bwp, bwp0)
            if hh <= dt:
                istate[J_END] = END_DIVERGED
                return -1           # no row: the outputs are the failed trial's
            istate[J_REJECTED] += 1
            h = 0.25 * hh
            continue
        fac = 0.9 * (1.0 / en) ** (1.0 / 3.0) if en > 1e-12 else 5.0
        if fac > 5.0:
            fac = 5.0
        event = info[3] != 0 and hh > dt
        if (en > 1.0 and hh > hmin) or event:
            # rejected: back to the step's start (its derivative is k1; the lagged base wrench).
            # A contact event (first contact, a latch, capture) is placed to the physics step:
            # the step that finds one is halved until it is no longer than dt.
            _step_back(x, x0, xdot, kx, xr, xr0, mout, kr, bwp, bwp0)
            istate[J_REJECTED] += 1
            h = 0.5 * hh if event else hh * (fac if fac > 0.2 else 0.2)
            if h < hmin:
                h = hmin
            continue
        t = t + hh if not clamped else tend
        istate[J_FINE_STEPS] += 1
        evst[I_NEV] = istate[J_NEV]
        record_events(t, lat, cst_in, cst_out, info, info_f, rec, ev, evst)
        istate[J_NEV] = evst[I_NEV]
        step_stats(t, wrench_P, max_class1_penetration(rec, info[2]), mech_absorbed_power(kind, mp, mout), hh, stats,
                   cst_in[CK.S_CAPTURED])
        if info[0] & CK.ST_PENETRATION:
            istate[J_END] = END_PENETRATION
            break
        hn = hh * fac
        if clamped and hn < h:
            hn = h               # the period's end cut this step short: keep the step the error allows
        h = hn if hn > hmin else hmin
    dpar[D_H] = h
    return 0


# rosw scratch (rw) layout, after the 2 x NS + NX of the step's start derivative
RW_G0 = 0          # W's ring-velocity block G (36)
RW_LU = 36         # I - h gamma G, LU (36)
RW_PIV = 72        # its pivots (6)
RW_SUM = 78        # sum_j g_ij K_j on the ring's velocities (6)
RW_F0 = 84         # f(y_n): 2 x NS vehicles, then NX mechanism


def rosw_scratch_len(ns: int, nx: int) -> int:
    return RW_F0 + 2 * ns + nx + nx       # + the step start's mechanism state


@njit(**_JIT)
def _w_solve(rw, v0, v1, v2, v3, v4, v5, u):
    """u <- (I - h gamma G)^-1 [v0..v5] with the LU in ``rw``."""
    y = rw[RW_SUM:RW_SUM + 6]       # reused as scratch after the sum is consumed
    vals = (v0, v1, v2, v3, v4, v5)
    for i in range(6):
        y[i] = vals[int(rw[RW_PIV + i])]
    for i in range(6):
        acc = y[i]
        for j in range(i):
            acc -= rw[RW_LU + 6 * i + j] * y[j]
        y[i] = acc
    for i in range(5, -1, -1):
        acc = y[i]
        for j in range(i + 1, 6):
            acc -= rw[RW_LU + 6 * i + j] * y[j]
        y[i] = acc / rw[RW_LU + 6 * i + i]
    for i in range(6):
        u[i] = y[i]


@njit(**_JIT)
def _w_factor(rw, hg):
    """LU with partial pivoting of I - hg G (G in rw) into rw; False if singular."""
    for i in range(6):
        for j in range(6):
            rw[RW_LU + 6 * i + j] = (1.0 if i == j else 0.0) - hg * rw[RW_G0 + 6 * i + j]
        rw[RW_PIV + i] = i
    for k in range(6):
        p = k
        big = abs(rw[RW_LU + 6 * k + k])
        for i in range(k + 1, 6):
            if abs(rw[RW_LU + 6 * i + k]) > big:
                big = abs(rw[RW_LU + 6 * i + k])
                p = i
        if big < 1e-12:
            return False
        if p != k:
            for j in range(6):
                tmp = rw[RW_LU + 6 * k + j]
                rw[RW_LU + 6 * k + j] = rw[RW_LU + 6 * p + j]
                rw[RW_LU + 6 * p + j] = tmp
            tmp = rw[RW_PIV + k]
            rw[RW_PIV + k] = rw[RW_PIV + p]
            rw[RW_PIV + p] = tmp
        for i in range(k + 1, 6):
            f = rw[RW_LU + 6 * i + k] / rw[RW_LU + 6 * k + k]
            rw[RW_LU + 6 * i + k] = f
            for j in range(k + 1, 6):
                rw[RW_LU + 6 * i + j] -= f * rw[RW_LU + 6 * k + j]
    return True


@njit(**_JIT)
def _rosw_stage_k(stg, hh, kind, x, xr, xdot, mout, kx, kr, rw):
    """K_stg = (I - hh gamma W)^-1 (hh f + hh W sum_j g_ij K_j): f in ``xdot`` / ``mout[:nx]``,
    W nonzero only on the ring's velocities (ring_state 6..11) of a parallel mechanism."""
    ns = x.shape[1]
    nx = xr.shape[0]
    for s in range(2):
        for i in range(ns):
            kx[stg, s, i] = hh * xdot[s, i]
    for i in range(nx):
        kr[stg, i] = hh * mout[i]
    if kind == KIND_TREE:
        return
    # hh G (sum_j g_ij K_j), on the ring's velocities
    sm = rw[RW_SUM:RW_SUM + 6]
    for i in range(6):
        acc = 0.0
        for j in range(stg):
            acc += RW_G[stg][j] * kr[j, 6 + i]
        sm[i] = acc
    w0 = kr[stg, 6]
    w1 = kr[stg, 7]
    w2 = kr[stg, 8]
    w3 = kr[stg, 9]
    w4 = kr[stg, 10]
    w5 = kr[stg, 11]
    acc0 = acc1 = acc2 = acc3 = acc4 = acc5 = 0.0
    for j in range(6):
        acc0 += rw[RW_G0 + j] * sm[j]
        acc1 += rw[RW_G0 + 6 + j] * sm[j]
        acc2 += rw[RW_G0 + 12 + j] * sm[j]
        acc3 += rw[RW_G0 + 18 + j] * sm[j]
        acc4 += rw[RW_G0 + 24 + j] * sm[j]
        acc5 += rw[RW_G0 + 30 + j] * sm[j]
    _w_solve(rw, w0 + hh * acc0, w1 + hh * acc1, w2 + hh * acc2, w3 + hh * acc3, w4 + hh * acc4,
             w5 + hh * acc5, kr[stg, 6:12])


@njit(**_JIT)
def _interp_row(kind, row, lay, t, th, hh, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs, xrs, ws, rel13,
                rows2, mp):
    """The log row at ``t`` = t_n + th hh inside an accepted step: the state by the cubic Hermite
    through (y_n, f_n) and (y_n+1, f_n+1) (third order, as the method), quaternions normalised;
    the outputs (wrench, strokes, base wrench, penetration, energy) linear between the rows at the
    step's ends (``rows2[0]``, ``rows2[1]``), the contact flags of its start."""
    ns = x.shape[1]
    nx = xr.shape[0]
    h00 = (1.0 + 2.0 * th) * (1.0 - th) * (1.0 - th)
    h10 = th * (1.0 - th) * (1.0 - th)
    h01 = th * th * (3.0 - 2.0 * th)
    h11 = th * th * (th - 1.0)
    for s in range(2):
        for i in range(ns):
            xs[s, i] = h00 * x0[s, i] + h10 * hh * fx0[s * ns + i] + h01 * x[s, i] + h11 * hh * xdot[s, i]
        qn = 1.0 / math.sqrt(xs[s, S.S_Q] ** 2 + xs[s, S.S_Q + 1] ** 2 + xs[s, S.S_Q + 2] ** 2
                             + xs[s, S.S_Q + 3] ** 2)
        for i in range(4):
            xs[s, S.S_Q + i] *= qn
    for i in range(nx):
        xrs[i] = h00 * xr0[i] + h10 * hh * fr0[i] + h01 * xr[i] + h11 * hh * mout[i]
    a = rows2[0]
    b = rows2[1]
    S.relative_state(par, env, xs, rel13, ws)
    for i in range(row.shape[0]):
        row[i] = a[i] + th * (b[i] - a[i])
    row[lay[0]] = t
    for i in range(7):
        row[lay[2] + i] = rel13[i]
    for i in range(6):
        row[lay[3] + i] = rel13[7 + i]
    for s in range(2):
        for i in range(ns):
            row[lay[4] + s * ns + i] = xs[s, i]
    row[lay[5]] = a[lay[5]]          # captured
    row[lay[7]] = a[lay[7]]          # contacts
    row[lay[12]] = a[lay[12]]        # phase
    for i in range(nx):
        row[lay[8] + i] = xrs[i]


@njit(**_JIT)
def _rosw_emit(nrow, maxrows, t, hh, kind, dpar, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs, xrs, ws, rel13,
               rows2, mp, stats, istate, logbuf, lay):
    """The log's rows on the grid in (J_STEPS dt, t + hh] of the accepted step [t, t + hh], up to
    ``maxrows``: its end row ``rows2[1]`` where a row falls on it, :func:`_interp_row` inside;
    the end criteria at every row (a separation inside the step leaves the state at that row)."""
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    period = spr * dt
    ns = x.shape[1]
    nx = xr.shape[0]
    tn = t + hh
    k = istate[J_STEPS] // spr + 1
    while nrow < maxrows and k * period <= tn + 1e-9 * period:
        tr = k * period
        row = logbuf[nrow]
        exact = tn - tr <= 1e-9 * period
        if exact:
            for i in range(row.shape[0]):
                row[i] = rows2[1, i]
            row[lay[0]] = tr
            S.relative_state(par, env, x, rel13, ws)
        else:
            _interp_row(kind, row, lay, tr, (tr - t) / hh, hh, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs,
                        xrs, ws, rel13, rows2, mp)
        istate[J_STEPS] = k * spr
        nrow += 1
        _end_from_relative(tr, rel13, dpar, stats, istate)
        if istate[J_END] != 0:
            if not exact:
                for s in range(2):
                    for i in range(ns):
                        x[s, i] = xs[s, i]
                for i in range(nx):
                    xr[i] = xrs[i]
            return nrow
        k += 1
    return nrow


@njit(**_JIT)
def _rosw_penetration_end(nrow, maxrows, tn, dpar, istate, rows2, logbuf):
    """A penetration beyond its limit at the step ending ``tn``, once the grid rows up to it are
    written: its own row at ``tn`` (``rows2[1]``) unless a grid row fell on it (written on the
    next call if the block is full), then the run ends there (:func:`run_clock`)."""
    dt = dpar[D_DT]
    period = dpar[D_SPR] * dt
    if istate[J_STEPS] * dt < tn - 1e-9 * period:
        if nrow >= maxrows:
            return nrow
        row = logbuf[nrow]
        for i in range(row.shape[0]):
            row[i] = rows2[1, i]
        nrow += 1
    istate[J_END] = END_PENETRATION
    istate[J_STEPS] = int(math.ceil(tn / dt - 1e-9))
    dpar[D_RWH] = 0.0
    dpar[D_RWPEN] = 0.0
    return nrow


@njit(**_JIT)
def _rosw_rows(maxrows, nrow, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, rel13, kin,
               feat, featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p, info,
               info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, x0, rw, rows2, istate,
               stats, ev, evst, logbuf, lay):
    """Integrate the coupled system with the Rosenbrock-W method ROS34PW2 (constants ``RW_*``),
    W = the mechanism's device damping on the ring's velocities (``damping_jacobian``: the brakes'
    regularised cores, which cap an explicit step near 1 ms, are treated implicitly), writing the
    log's rows up to ``maxrows``; returns the rows written. Steps of the error control's choosing
    (up to ``D_HMAX``; cut at the duration and the capture-settle end); rows inside a step are
    interpolated (:func:`_interp_row`), those beyond ``maxrows`` left for the next call
    (``D_RWT``, ``D_RWH``, ``rows2``, the step's start in ``x0`` / ``rw``). Events, statistics, latches: accepted
    steps only; a step whose end finds a contact event is halved down to the physics step; a
    mechanism failure or a non-finite state is retried at a quarter of the step down to it."""
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    period = spr * dt
    ns = x.shape[1]
    nm = (ns - S.N_RIGID) // 2
    nx = xr.shape[0]
    kind = int(dpar[D_KIND])
    com = dpar[D_COM:D_COM + 3]
    ga = dpar[D_GA:D_GA + 4]
    tol = dpar[D_TOL]
    ttol = dpar[D_TTOL]
    hmax = dpar[D_HMAX]
    hmin = dpar[D_HMIN]
    h = dpar[D_H] if dpar[D_H] > 0.0 else dt
    fx0 = rw[RW_F0:RW_F0 + 2 * ns]
    fr0 = rw[RW_F0 + 2 * ns:RW_F0 + 2 * ns + nx]
    xr0 = rw[RW_F0 + 2 * ns + nx:RW_F0 + 2 * ns + 2 * nx]
    if dpar[D_RWH] > 0.0:
        # rows of the last step the previous call had no room for
        t = dpar[D_RWT]
        hh = dpar[D_RWH]
        nrow = _rosw_emit(nrow, maxrows, t, hh, kind, dpar, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs, xrs,
                          ws, rel13, rows2, mp, stats, istate, logbuf, lay)
        t = t + hh
        if istate[J_END] != 0 or (istate[J_STEPS] // spr + 1) * period <= t + 1e-9 * period:
            return nrow         # still rows of that step pending (or the run ended at one)
        if dpar[D_RWPEN] != 0.0:
            return _rosw_penetration_end(nrow, maxrows, t, dpar, istate, rows2, logbuf)
        for i in range(rows2.shape[1]):
            rows2[0, i] = rows2[1, i]
    else:
        t = istate[J_STEPS] * dt
        # the row of the current state (the start of the first step's interpolation)
        _write_row(kind, rows2[0], lay, t, wrench_P, par, env, x, ws, rel13, cst_in, stats[ST_PEN], info[2], xr,
                   mout, mp, stats[ST_EABS], 1)
    while nrow < maxrows and istate[J_END] == 0:
        # where this step may end at the latest: the duration, the settle end
        tcap = dpar[D_TEND]
        if stats[ST_TCAP] >= 0.0:
            # the settle end is found at the first row at or after it: end the step there
            ts = math.ceil((stats[ST_TCAP] + dpar[D_SETTLE]) / period - 1e-9) * period
            if ts < tcap:
                tcap = ts
        if tcap <= t + 1e-12:
            tcap = t + period
        # W at the step's start, the start saved
        for i in range(36):
            rw[RW_G0 + i] = 0.0
        if kind != KIND_TREE:
            damping_jacobian(mp, mw, mout, rw[RW_G0:RW_G0 + 36].reshape((6, 6)))
        for s in range(2):
            for i in range(ns):
                x0[s, i] = x[s, i]
                fx0[s * ns + i] = xdot[s, i]
        for i in range(nx):
            xr0[i] = xr[i]
            fr0[i] = mout[i]
        for i in range(6):
            bwp0[i] = bwp[i]
        while True:
            hh = h if h < hmax else hmax
            cut = False
            if hh > tcap - t:
                hh = tcap - t
                cut = True
            if not _w_factor(rw, hh * RW_GAMMA):
                hh *= 0.25
                h = hh
                continue
            st = 0
            for stg in range(4):
                if stg > 0:
                    c = 0.0
                    for s in range(2):
                        for i in range(ns):
                            acc = x0[s, i]
                            for j in range(stg):
                                acc += RW_A[stg][j] * kx[j, s, i]
                            xs[s, i] = acc
                    for i in range(nx):
                        acc = xr0[i]
                        for j in range(stg):
                            acc += RW_A[stg][j] * kr[j, i]
                        xrs[i] = acc
                    for j in range(stg):
                        c += RW_A[stg][j]
                    st = digital_eval(kind, par, env, xs, t + c * hh, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in,
                                      xdot, ws, rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P,
                                      wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
                    istate[J_EVALS] += 1
                    if st != 0:
                        break
                else:
                    for s in range(2):
                        for i in range(ns):
                            xdot[s, i] = fx0[s * ns + i]
                    for i in range(nx):
                        mout[i] = fr0[i]
                _rosw_stage_k(stg, hh, kind, x, xr, xdot, mout, kx, kr, rw)
            en = 0.0
            if st == 0:
                for s in range(2):
                    for i in range(ns):
                        acc = x0[s, i]
                        e = 0.0
                        for j in range(4):
                            acc += RW_B[j] * kx[j, s, i]
                            e += (RW_B[j] - RW_BHAT[j]) * kx[j, s, i]
                        x[s, i] = acc
                        r = abs(e) / _err_scale_x(i, nm, tol, ttol)
                        if not r <= en:
                            en = r
                    qn = 1.0 / math.sqrt(x[s, S.S_Q] ** 2 + x[s, S.S_Q + 1] ** 2 + x[s, S.S_Q + 2] ** 2
                                         + x[s, S.S_Q + 3] ** 2)
                    for i in range(4):
                        x[s, S.S_Q + i] *= qn
                for i in range(nx):
                    acc = xr0[i]
                    e = 0.0
                    for j in range(4):
                        acc += RW_B[j] * kr[j, i]
                        e += (RW_B[j] - RW_BHAT[j]) * kr[j, i]
                    xr[i] = acc
                    r = abs(e) / _err_scale_r(kind, i, nx, tol, ttol)
                    if not r <= en:
                        en = r
                st = digital_eval(kind, par, env, x, t + hh, xr, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws,
                                  rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links,
                                  latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
                istate[J_EVALS] += 1
            bad = st != 0 or not math.isfinite(en)
            if not bad:
                for s in range(2):
                    for i in range(ns):
                        if not math.isfinite(xdot[s, i]):
                            bad = True
                for i in range(nx):
                    if not math.isfinite(mout[i]):
                        bad = True
            event = not bad and info[3] != 0 and hh > dt
            if bad or event or (en > 1.0 and hh > hmin):
                for s in range(2):
                    for i in range(ns):
                        x[s, i] = x0[s, i]
                        xdot[s, i] = fx0[s * ns + i]
                for i in range(nx):
                    xr[i] = xr0[i]
                    mout[i] = fr0[i]
                for i in range(6):
                    bwp[i] = bwp0[i]
                if bad and hh <= dt:
                    if st != 0:
                        istate[J_STATUS] = st
                        istate[J_END] = END_MECHANISM
                    else:
                        istate[J_END] = END_DIVERGED
                    return nrow
                istate[J_REJECTED] += 1
                if bad:
                    h = 0.25 * hh
                elif event:
                    h = 0.5 * hh
                else:
                    fac = 0.9 * en ** (-1.0 / 3.0)
                    h = hh * (fac if fac > 0.2 else 0.2)
                if h < hmin:
                    h = hmin
                continue
            break
        # accepted
        tn = t + hh
        istate[J_FINE_STEPS] += 1
        evst[I_NEV] = istate[J_NEV]
        record_events(tn, lat, cst_in, cst_out, info, info_f, rec, ev, evst)
        istate[J_NEV] = evst[I_NEV]
        step_stats(tn, wrench_P, max_class1_penetration(rec, info[2]), mech_absorbed_power(kind, mp, mout), hh, stats,
                   cst_in[CK.S_CAPTURED])
        pen_end = info[0] & CK.ST_PENETRATION
        _write_row(kind, rows2[1], lay, tn, wrench_P, par, env, x, ws, rel13, cst_in, stats[ST_PEN], info[2], xr,
                   mout, mp, stats[ST_EABS], 1)
        fac = 0.9 * en ** (-1.0 / 3.0) if en > 1e-12 else 5.0
        hn = hh * (fac if fac < 5.0 else 5.0)
        if cut and hn < h:
            hn = h              # cut short by an end: keep the step the error allows
        if hn > hmax:
            hn = hmax
        h = hn if hn > hmin else hmin
        dpar[D_H] = h
        # the rows in (t, tn]
        dpar[D_RWT] = t
        dpar[D_RWH] = hh
        nrow = _rosw_emit(nrow, maxrows, t, hh, kind, dpar, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs, xrs,
                          ws, rel13, rows2, mp, stats, istate, logbuf, lay)
        dpar[D_RWPEN] = 1.0 if pen_end else 0.0
        if istate[J_END] == 0 and (istate[J_STEPS] // spr + 1) * period <= tn + 1e-9 * period:
            return nrow         # the batch is full: the rest of this step's rows on the next call
        if istate[J_END] == 0 and pen_end:
            return _rosw_penetration_end(nrow, maxrows, tn, dpar, istate, rows2, logbuf)
        t = tn
        for i in range(rows2.shape[1]):
            rows2[0, i] = rows2[1, i]
    dpar[D_H] = h
    return nrow


@njit(**_JIT)
def run_clock(dpar, istate, stats):
    """The run's time: the physics-step clock, or for an adaptive run that ended inside a log
    period (penetration, mechanism, divergence) the time of its last accepted state."""
    e = istate[J_END]
    if (dpar[D_INTEG] == INTEG_RK23 or dpar[D_INTEG] == INTEG_ROSW) and istate[J_PHASE] == 1 and (
            e == END_PENETRATION or e == END_MECHANISM or e == END_DIVERGED):
        return stats[ST_T]
    return istate[J_STEPS] * dpar[D_DT]


@njit(**_JIT)
def _fine_steps(nsteps, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, rel13, kin, feat,
                featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f,
                Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, istate, stats, ev, evst):
    """``nsteps`` physics steps of the coupled system (the model has been evaluated at the
    current state: derivatives in ``xdot``, ``mout``), or with ``rk23`` the same time in steps of
    its own choosing (:func:`_rk23_period`). Returns the mechanism status (0 ok)."""
    dt = dpar[D_DT]
    if dpar[D_INTEG] == INTEG_RK23:
        st = _rk23_period(nsteps, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, kin, feat,
                          featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p,
                          info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, istate,
                          stats, ev, evst)
        if istate[J_END] == END_NONE:
            istate[J_STEPS] += nsteps
        else:
            # ended inside the period, at stats[ST_T] (:func:`run_clock` gives that time)
            istate[J_STEPS] = int(math.ceil(stats[ST_T] / dt - 1e-9))
        return st
    rk4 = dpar[D_INTEG] == INTEG_RK4
    ns = x.shape[1]
    nx = xr.shape[0]
    kind = int(dpar[D_KIND])
    com = dpar[D_COM:D_COM + 3]
    ga = dpar[D_GA:D_GA + 4]
    for _ in range(nsteps):
        t = istate[J_STEPS] * dt
        if not rk4:
            sc_sie_update(par, env, x, xdot, dt)
            mech_sie_update(kind, xr, mout, dt)
        else:
            for s in range(2):
                for i in range(ns):
                    kx[0, s, i] = xdot[s, i]
            for i in range(nx):
                kr[0, i] = mout[i]
            for stg in range(1, 4):
                h = 0.5 * dt if stg < 3 else dt
                st = _rk_stage(stg, h, t, x, xr, kind, par, env, xs, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in,
                               xdot, ws, rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P,
                               wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr,
                               istate)
                if st != 0:
                    return st
            for s in range(2):
                for i in range(ns):
                    x[s, i] += dt / 6.0 * (kx[0, s, i] + 2.0 * (kx[1, s, i] + kx[2, s, i]) + kx[3, s, i])
                qn = 1.0 / math.sqrt(x[s, S.S_Q] ** 2 + x[s, S.S_Q + 1] ** 2 + x[s, S.S_Q + 2] ** 2
                                     + x[s, S.S_Q + 3] ** 2)
                for i in range(4):
                    x[s, S.S_Q + i] *= qn
            for i in range(nx):
                xr[i] += dt / 6.0 * (kr[0, i] + 2.0 * (kr[1, i] + kr[2, i]) + kr[3, i])
        istate[J_STEPS] += 1
        istate[J_FINE_STEPS] += 1
        t = istate[J_STEPS] * dt
        st = digital_eval(kind, par, env, x, t, xr, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, kin,
                          feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links, latch_p,
                          info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
        istate[J_EVALS] += 1
        if st != 0:
            istate[J_STATUS] = st
            istate[J_END] = END_MECHANISM
            return st
        ncont = info[2]
        evst[I_NEV] = istate[J_NEV]
        record_events(t, lat, cst_in, cst_out, info, info_f, rec, ev, evst)
        istate[J_NEV] = evst[I_NEV]
        step_stats(t, wrench_P, max_class1_penetration(rec, ncont), mech_absorbed_power(kind, mp, mout), dt, stats,
                   cst_in[CK.S_CAPTURED])
        if info[0] & CK.ST_PENETRATION:
            istate[J_END] = END_PENETRATION
            break
    return 0


@njit(**_JIT)
def digital_run(maxrows, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, rel13, kin, feat,
                featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f,
                Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, k4, xt4, zero_w, rw, rows2, istate,
                stats, ev, evst, logbuf, lay):
    """Integrate up to ``maxrows`` log periods, writing one row per period into ``logbuf``.
    Returns the number of rows written; ``istate[J_END]`` says whether the run ended."""
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    dtc = dpar[D_DTC]
    ns = x.shape[1]
    kind = int(dpar[D_KIND])
    com = dpar[D_COM:D_COM + 3]
    ga = dpar[D_GA:D_GA + 4]
    nrow = 0
    while nrow < maxrows and istate[J_END] == 0:
        t0 = istate[J_STEPS] * dt
        if istate[J_PHASE] == 0:
            # ---------------- coarse phase: the vehicles alone, the mechanism carried rigidly at
            # rest; after every coarse step a probe evaluation of the contact kernel (nothing
            # committed): at the first contact, step back and go fine from the last clear state
            nc = int(round(spr * dt / dtc))
            nm = (ns - S.N_RIGID) // 2
            hw = env[S.E_N] if env[S.E_HILL] != 0.0 else 0.0
            go_fine = dpar[D_COARSE] == 0.0
            for _ in range(nc):
                if go_fine:
                    break
                for s in range(2):
                    for i in range(ns):
                        xs[s, i] = x[s, i]
                S.rk4_step(par, env, x, istate[J_STEPS] * dt, dtc, zero_w, 0, k4, xt4, ws, rel)
                S._port(par, x, 0, nm, hw, ws)
                S._port(par, x, 1, nm, hw, ws)
                kin_from_ports(ws, kin)
                ncp = mech_contact(kind, kin, xr, com, mp, mw, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec,
                                   wrench_P, wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist,
                                   cw, aC, R_PE)
                if ncp > 0:
                    for s in range(2):
                        for i in range(ns):
                            x[s, i] = xs[s, i]
                    go_fine = True
                    break
                istate[J_STEPS] += int(round(dtc / dt))
            for i in range(6):
                wrench_P[i] = 0.0
            if go_fine:
                istate[J_PHASE] = 1
                for i in range(6):
                    bwp[i] = 0.0
                st = digital_eval(kind, par, env, x, istate[J_STEPS] * dt, xr, com, ga, mp, mw, mout, bm, cw, bwp, w_in,
                                  xdot, ws, rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P,
                                  wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
                istate[J_EVALS] += 1
                if st != 0:
                    istate[J_STATUS] = st
                    istate[J_END] = END_MECHANISM
                    return nrow
                t = istate[J_STEPS] * dt
                evst[I_NEV] = istate[J_NEV]
                record_events(t, lat, cst_in, cst_out, info, info_f, rec, ev, evst)
                istate[J_NEV] = evst[I_NEV]
                stats[ST_POW] = mech_absorbed_power(kind, mp, mout)
                step_stats(t, wrench_P, max_class1_penetration(rec, info[2]), stats[ST_POW], 0.0, stats,
                           cst_in[CK.S_CAPTURED])
                if dpar[D_INTEG] == INTEG_ROSW:
                    continue        # the Rosenbrock-W branch writes this period's row
                # finish this log period with fine steps
                rem = spr - (istate[J_STEPS] - int(round(t0 / dt)))
                if rem > 0:
                    st = _fine_steps(rem, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel,
                                     rel13, kin, feat, featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P,
                                     wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE,
                                     kx, kr, xs, xrs, bwp0, istate, stats, ev, evst)
                    if st != 0:
                        return nrow
        elif dpar[D_INTEG] == INTEG_ROSW:
            nrow = _rosw_rows(maxrows, nrow, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel,
                              rel13, kin, feat, featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P,
                              wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs,
                              xrs, bwp0, xt4, rw, rows2, istate, stats, ev, evst, logbuf, lay)
            continue
        else:
            # ---------------- fine phase: the coupled system at the physics step
            st = _fine_steps(spr, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, rel13, kin,
                             feat, featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links,
                             latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0,
                             istate, stats, ev, evst)
            if st != 0:
                return nrow
        t = run_clock(dpar, istate, stats)
        _excursion_and_end(t, par, env, x, ws, rel13, dpar, stats, istate)
        _write_row(kind, logbuf[nrow], lay, t, wrench_P, par, env, x, ws, rel13, cst_in, stats[ST_PEN], info[2] if
                   istate[J_PHASE] == 1 else 0, xr, mout, mp, stats[ST_EABS], istate[J_PHASE])
        nrow += 1
    return nrow


@njit(**_JIT)
def rod_run(maxrows, dpar, par, env, rp, x, w_in, k4, xt4, ws, rel, rel13, ro, tmp, istate, stats, logbuf, lay):
    """The elastic-rod case: RK4 with the rod force at every stage, one log row per period."""
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    nrow = 0
    while nrow < maxrows and istate[J_END] == 0:
        for _ in range(spr):
            rod_rk4_step(par, env, rp, x, istate[J_STEPS] * dt, dt, w_in, k4, xt4, ws, rel, ro, tmp)
            istate[J_STEPS] += 1
            t = istate[J_STEPS] * dt
            f = ro[RO_FORCE]
            pw = rp[R_C] * ro[RO_RATE] * ro[RO_RATE] if f > 0.0 else 0.0
            if f > 0.0 and stats[ST_FIRST] < 0.0:
                stats[ST_FIRST] = t
            step_stats(t, w_in[0], ro[RO_DELTA] if ro[RO_DELTA] > 0.0 else 0.0, pw, dt, stats, 0)
        t = istate[J_STEPS] * dt
        _excursion_and_end(t, par, env, x, ws, rel13, dpar, stats, istate)
        row = logbuf[nrow]
        _row_head(row, lay, t, w_in[0], rel13, x)
        row[lay[5]] = 0.0
        row[lay[6]] = ro[RO_DELTA] if ro[RO_DELTA] > 0.0 else 0.0
        row[lay[7]] = ro[RO_FORCE]
        row[lay[8]] = ro[RO_RATE]
        row[lay[9]] = stats[ST_EABS]
        nrow += 1
    return nrow


@njit(**_JIT)
def _grapple_derivatives(a, gp, gs, go, x, w_in, xdot, ws, rel, kin):
    """The berthing flight coupled by the snare: the ports at this state (the kinematic half of
    the evaluation), the snare's wrench from them, then the flight's dynamics under it."""
    BF.flight_ports(a, x, ws, rel)
    kin_from_ports(ws, kin)
    grapple_eval(gp, kin, gs, w_in[0], go)
    return BF.flight_dynamics(a, x, w_in, xdot, ws)


@njit(**_JIT)
def grapple_rk4_step(a, gp, gs, go, x, dt, w_in, k4, xt4, ws, rel, kin):
    """One RK4 step of the flight with the snare's wrench at every stage (the capture state
    ``gs`` held); afterwards ``ws``, ``rel``, ``kin``, ``w_in[0]`` and ``go`` hold the new state's
    ports, relative state and snare. Returns False if an evaluation failed (x unchanged)."""
    ns = x.shape[1]
    ok = _grapple_derivatives(a, gp, gs, go, x, w_in, k4[0], ws, rel, kin)
    for st in range(1, 4):
        h = 0.5 * dt if st < 3 else dt
        for r in range(2):
            for i in range(ns):
                xt4[r, i] = x[r, i] + h * k4[st - 1, r, i]
        ok = _grapple_derivatives(a, gp, gs, go, xt4, w_in, k4[st], ws, rel, kin) and ok
    if not ok:
        return False
    for r in range(2):
        for i in range(ns):
            x[r, i] += dt / 6.0 * (k4[0, r, i] + 2.0 * (k4[1, r, i] + k4[2, r, i]) + k4[3, r, i])
    BF.normalize_quaternions(x)
    _grapple_derivatives(a, gp, gs, go, x, w_in, k4[0], ws, rel, kin)
    return True


@njit(**_JIT)
def grapple_run(maxrows, dpar, a, gp, gs, go, x, w_in, k4, xt4, ws, rel, kin, istate, stats, logbuf, lay):
    """The berthing case: RK4 of the flight (``rt.dynamics.berthing_flight``) with the snare's
    wrench (``sim_stand.grapple``) at every stage, the capture checked at each step's end, one
    log row per period."""
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    nrow = 0
    while nrow < maxrows and istate[J_END] == 0:
        for _ in range(spr):
            if not grapple_rk4_step(a, gp, gs, go, x, dt, w_in, k4, xt4, ws, rel, kin):
                istate[J_END] = END_MECHANISM
                istate[J_STATUS] = 1
                return nrow
            istate[J_STEPS] += 1
            t = istate[J_STEPS] * dt
            if grapple_capture(gp, kin, gs, t):
                stats[ST_FIRST] = t
                grapple_eval(gp, kin, gs, w_in[0], go)
            step_stats(t, w_in[0], go[GO_D], go[GO_POW], dt, stats, int(gs[GS_CAP]))
        t = istate[J_STEPS] * dt
        _end_from_relative(t, rel, dpar, stats, istate)
        row = logbuf[nrow]
        _row_head(row, lay, t, w_in[0], rel, x)
        row[lay[5]] = gs[GS_CAP]
        row[lay[6]] = go[GO_D]
        row[lay[7]] = go[GO_F]
        row[lay[8]] = stats[ST_EABS]
        nrow += 1
    return nrow


# ====================================================================== Python shell
@dataclass
class DigitalResult:
    """Outcome of :func:`simulate` (the world's statistics plus the run's bookkeeping)."""

    case: str
    model: str
    captured: bool
    time_to_capture_s: float | None
    peak_force_n: float
    peak_moment_nm: float
    max_penetration_m: float
    energy_absorbed_j: float
    max_excursion_m: float
    first_contact_s: float | None
    end_reason: str
    t_end_s: float
    rel_velocity_end_mps: list
    events: list = field(default_factory=list)
    log_path: Path | None = None
    cpu_s: float = 0.0
    steps: int = 0
    fine_steps: int = 0
    evaluations: int = 0
    integrator: str = ""
    dt_s: float = 0.0
    message: str = ""

    def as_dict(self) -> dict:
        d = dict(vars(self))
        d["log_path"] = str(self.log_path) if self.log_path is not None else None
        d["events"] = [list(e) for e in self.events]
        return d


class DigitalSim:
    """The coupled all-digital system for one case (module docstring). :meth:`run` integrates
    to the end criteria; :func:`simulate` is the one-call form.

    ``emu`` supplies the physics step, the integrator and the mechanism / interface presets (a
    case's own ``[vehicles] mechanism / interface`` or ``[contact] model = "elastic_rod"`` take
    precedence, :meth:`EmulatorConfig.for_case`); gravity on the mechanism is zero (orbit) unless
    ``gravity_P`` (m/s^2, components in P, constant) gives the stand's (:func:`stand_gravity_P`):
    on the stand the passive unit hangs fixed in the lab and the platform turns the active unit
    to the relative attitude, so the mechanism feels gravity fixed in P, not in A.
    ``rest_gravity_A`` (optional, components in A): the gravity the mechanism came to rest under
    (the emulated stand's reset, at the platform's home pose: :func:`stand_rest_gravity_A`);
    default ``gravity_P`` at the initial relative attitude. On the stand the arming move then
    tilts the platform to the initial attitude: springs follow, friction holds.
    ``mechanism_state`` (optional): the mechanism's state at the start instead of a rest state
    (a HIL run's, ``sim_stand.prehistory.mechanism_state_from_run``); the mechanism is then
    integrated from the start (no coarse phase carrying it rigidly: it need not be at rest).
    ``hil_coupling``: the active vehicle receives the contact wrench's reaction at A instead of
    the mechanism's base wrench (the mechanism's weight and inertia ride on the platform, as in
    a HIL run). ``stand_integrator``: the emulated stand's own integrator (``emu.integrator``) instead
    of the reference's (``emu.digital_integrator``, adaptive rk23 by default) unless ``integrator``
    names one. These together are the stand's conditions (:func:`stand_conditions`), the ideal
    loop a HIL run is judged against (docs/validation.md). ``mechanism`` (optional): a parallel
    mechanism's :class:`sim_stand.mechanism.config.MechanismConfig` used instead of the file
    (a campaign's dispersed damper, spring and friction coefficients).

    Not for the real-time loop (builds buffers, compiles on first use); :meth:`run` integrates
    in compiled kernels and may write a run log."""

    def __init__(self, case: Case | str | Path, emu: EmulatorConfig | str | Path | None = None, *,
                 dt: float | None = None, integrator: str | None = None, log_rate_hz: float = 1000.0,
                 coarse: bool = True, coarse_dt: float = 1e-3, gap_margin_m: float = 0.01,
                 duration_s: float | None = None, gravity_P=None, rest_gravity_A=None, hil_coupling: bool = False,
                 mechanism=None, mechanism_state=None, stand_integrator: bool = False, rk23_tol_m: float | None = None,
                 rk23_time_scale_s: float = 0.01, rk23_max_step_s: float | None = None, rk23_min_step_s: float = 1e-6):
        if not isinstance(case, Case):
            case = load_case(case)
        if emu is None or not isinstance(emu, EmulatorConfig):
            emu = load_emulator(emu)
        emu = emu.for_case(case)
        self.case, self.emu = case, emu
        self.mechanism_config = mechanism
        self.initial_mechanism_state = mechanism_state
        self.model = emu.model
        self.dt = float(dt if dt is not None else emu.physics_dt_s)
        if integrator is not None and integrator not in INTEGRATOR_CODES and integrator != "auto":
            raise ValueError(f"integrator must be 'auto', 'rosw', 'rk23', 'semi_implicit_euler' or 'rk4', "
                             f"got {integrator!r}")
        if self.model != "mechanism":
            if integrator not in (None, "rk4", "auto"):
                raise ValueError(f"integrator {integrator!r} is for a docking mechanism's run; the {self.model} model "
                                 f"integrates with RK4 at the physics step")
            self.integrator = "rk4"
        elif integrator is not None:
            self.integrator = integrator
        else:
            self.integrator = emu.integrator if stand_integrator else emu.digital_integrator
        for name, v in (("rk23_tol_m", rk23_tol_m if rk23_tol_m is not None else emu.digital_tolerance_m),
                        ("rk23_time_scale_s", rk23_time_scale_s), ("rk23_min_step_s", rk23_min_step_s)):
            if not (math.isfinite(v) and v > 0.0):
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        if rk23_max_step_s is not None and not (math.isfinite(rk23_max_step_s) and rk23_max_step_s > 0.0):
            raise ValueError(f"rk23_max_step_s must be a positive number, got {rk23_max_step_s!r}")
        if rk23_min_step_s > 0.25 * self.dt:
            raise ValueError(f"rk23_min_step_s ({rk23_min_step_s:g} s) must be at most a quarter of the physics step "
                             f"({self.dt:g} s): events are placed to the physics step by halving")
        spr = (1.0 / log_rate_hz) / self.dt
        if abs(spr - round(spr)) > 1e-9 or round(spr) < 1:
            raise ValueError(f"the log period 1/{log_rate_hz:g} s must be a whole number of physics steps ({self.dt:g} s)")
        self.spr = int(round(spr))
        nc = (self.spr * self.dt) / coarse_dt
        if coarse and round(nc) < 1:
            coarse = False          # logged finer than the coarse step: the coupled system from the start
        if coarse and abs(nc - round(nc)) > 1e-9:
            raise ValueError("the log period must be a whole number of coarse steps")
        ratio = coarse_dt / self.dt
        if coarse and abs(ratio - round(ratio)) > 1e-9:
            raise ValueError("the coarse step must be a whole number of physics steps")
        self.sc = BF.flight_from_case(case)
        self.ns = self.sc.ns
        d = np.zeros(D_LEN)
        d[D_DT] = self.dt
        d[D_DTC] = coarse_dt
        d[D_SPR] = self.spr
        d[D_INTEG] = INTEGRATOR_CODES.get(self.integrator, INTEG_RK23)     # "auto": resolved below
        d[D_TOL] = emu.digital_tolerance_m if rk23_tol_m is None else rk23_tol_m
        d[D_TTOL] = rk23_time_scale_s
        d[D_HMAX] = self.spr * self.dt if rk23_max_step_s is None else rk23_max_step_s
        d[D_HMIN] = rk23_min_step_s
        d[D_TEND] = case.duration_s if duration_s is None else duration_s
        d[D_SETTLE] = case.end.capture_settle_s
        r0 = self.sc.relative()[S.REL_R:S.REL_R + 3]
        d[D_SEPR] = float(np.linalg.norm(r0)) + case.end.separation_m
        d[D_GAPM] = gap_margin_m
        d[D_COARSE] = 1.0 if coarse and mechanism_state is None else 0.0
        d[D_R0:D_R0 + 3] = r0
        if gravity_P is not None:
            ga = np.asarray(gravity_P, dtype=np.float64)
            if ga.shape != (3,) or not np.all(np.isfinite(ga)):
                raise ValueError(f"gravity_P must be 3 finite numbers, got {gravity_P!r}")
            d[D_GA:D_GA + 3] = ga
        self.rest_gravity_A = None
        if rest_gravity_A is not None:
            self.rest_gravity_A = np.asarray(rest_gravity_A, dtype=np.float64)
            if self.rest_gravity_A.shape != (3,) or not np.all(np.isfinite(self.rest_gravity_A)):
                raise ValueError(f"rest_gravity_A must be 3 finite numbers, got {rest_gravity_A!r}")
        d[D_HILC] = 1.0 if hil_coupling else 0.0
        self.dpar = d
        self.istate = np.zeros(J_LEN, dtype=np.int64)
        self.evst = np.zeros(I_LEN, dtype=np.int64)
        self.stats = np.zeros(ST_LEN)
        self.stats[ST_TCAP] = -1.0
        self.stats[ST_FIRST] = -1.0
        self.ev = np.zeros((EV_MAX, 4))
        self.w_in = np.zeros((2, 6))
        self.xdot = np.zeros((2, self.ns))
        self.rel13 = np.zeros(S.REL_LEN)
        self.k4 = np.zeros((4, 2, self.ns))
        self.xt4 = np.zeros((2, self.ns))
        self.zero_w = np.zeros((2, 6))
        if self.model == "mechanism":
            self._init_mechanism()
            if self.integrator == "auto":
                # the Rosenbrock-W step for a leg mechanism (its devices' damping in W), rk23 for a tree
                self.integrator = "rosw" if self.mech_kind == KIND_PARALLEL else "rk23"
            if self.integrator == "rosw" and self.mech_kind != KIND_PARALLEL:
                raise ValueError("integrator 'rosw' treats a leg mechanism's device damping implicitly; this "
                                 "mechanism is a tree: use 'rk23'")
            d[D_INTEG] = INTEGRATOR_CODES[self.integrator]
            if rk23_max_step_s is None:
                d[D_HMAX] = 0.01 if self.integrator == "rosw" else self.spr * self.dt
        elif self.model == "grapple":
            if case.berthing is None:
                raise ValueError(f"case {case.name!r}: the grapple contact needs a berthing case ([berthing])")
            self.gp = emu.grapple.pack()
            self.gs = np.zeros(GS_LEN)
            self.go = np.zeros(GO_LEN)
            self.kin = np.zeros(KIN_LEN)
            self.fields = {"t": 1, "w_P": 6, "rel_pose": 7, "rel_twist": 6, "x": 2 * self.ns, "captured": 1,
                           "penetration": 1, "snare_force": 1, "energy_absorbed": 1}
        else:
            self.rp = emu.rod.pack()
            self.ro = np.zeros(RO_LEN)
            self.tmp = rod_scratch()
            self.fields = {"t": 1, "w_P": 6, "rel_pose": 7, "rel_twist": 6, "x": 2 * self.ns, "captured": 1,
                           "penetration": 1, "rod_force": 1, "rod_rate": 1, "energy_absorbed": 1}
        self._layout()
        self.events: list[tuple[float, str]] = []
        self.event_details: list[tuple[float, str, str]] = []
        self._ev_read = 0

    def _init_mechanism(self) -> None:
        emu = self.emu
        if self.mechanism_config is not None:
            # a parallel mechanism's config given directly (a campaign's dispersed coefficients)
            from sim_stand.mechanism import Mechanism
            self.mech, self.mech_kind = Mechanism(self.mechanism_config), KIND_PARALLEL
            com = np.asarray(self.mechanism_config.ring_com_R, dtype=np.float64)
        else:
            self.mech, self.mech_kind, com = load_dock_mechanism(emu.mechanism_path)
        self.packed = build_interface(load_interface(emu.interface_path))
        pk = self.packed
        self.dpar[D_KIND] = self.mech_kind
        self.dpar[D_COM:D_COM + 3] = com
        self.dpar[D_PMIN] = passive_min_x(pk.feat)
        vars(self).update(contact_buffers(pk))
        self.aC = np.zeros((3, 3))
        self.R_PE = np.zeros((3, 3))
        self.bm = np.zeros(12)
        self.cw = np.zeros(6)
        self.bwp = np.zeros(6)
        self.bwp0 = np.zeros(6)
        self.kin = np.zeros(KIN_LEN)
        self.kx = np.zeros((4, 2, self.ns))
        # the mechanism at rest on its base (no base acceleration; 0 g in orbit, else
        # rest_gravity_A or gravity_P seen in A at the initial relative attitude)
        bm0 = np.zeros(12)
        if self.rest_gravity_A is not None:
            bm0[9:12] = self.rest_gravity_A
        else:
            R_PA = np.empty((3, 3))
            q = self.sc.relative()[S.REL_Q:S.REL_Q + 4]
            SP.quat_to_dcm(q / np.linalg.norm(q), R_PA)
            bm0[9:12] = R_PA.T @ self.dpar[D_GA:D_GA + 3]
        self.xr = mechanism_rest_state(self.mech, bm0)
        if self.initial_mechanism_state is not None:
            xr0 = np.asarray(self.initial_mechanism_state, dtype=np.float64)
            if xr0.shape != self.xr.shape or not np.all(np.isfinite(xr0)):
                raise ValueError(f"mechanism_state must be {self.xr.shape[0]} finite numbers (this mechanism's "
                                 f"state), got shape {xr0.shape}")
            self.xr[:] = xr0
        nx = self.xr.shape[0]
        self.kr = np.zeros((4, nx))
        self.rw = np.zeros(rosw_scratch_len(self.ns, nx))
        self.xs = np.zeros((2, self.ns))
        self.xrs = np.zeros(nx)
        head = {"t": 1, "w_P": 6, "rel_pose": 7, "rel_twist": 6, "x": 2 * self.ns, "captured": 1,
                "penetration": 1, "contacts": 1}
        if self.mech_kind == KIND_TREE:
            self.fields = {**head, "joint_state": nx, "joint_force": nx // 2, "base_wrench": 6,
                           "energy_absorbed": 1, "phase": 1}
        else:
            self.fields = {**head, "ring_state": 12, "stroke": self.mech.nl, "base_wrench": 6,
                           "energy_absorbed": 1, "phase": 1}

    def _layout(self) -> None:
        off = 0
        self.offsets = {}
        for n, s in self.fields.items():
            self.offsets[n] = off
            off += s
        self.width = off
        self.lay = np.array([self.offsets[n] for n in self.fields], dtype=np.int64)
        self.rows2 = np.zeros((2, self.width))

    # ------------------------------------------------------------------ running
    @property
    def t(self) -> float:
        return float(run_clock(self.dpar, self.istate, self.stats))

    @property
    def ended(self) -> bool:
        return int(self.istate[J_END]) != END_NONE

    def advance_rows(self, buf: np.ndarray) -> int:
        """Integrate up to ``len(buf)`` log periods, one row each; returns the rows written."""
        x = self.sc.x
        if self.model == "mechanism":
            pk = self.packed
            mech = self.mech
            n = digital_run(buf.shape[0], self.dpar, self.sc.par, self.sc.env, x, self.xr, mech.params,
                            mech.workspace, mech.out, self.bm, self.cw, self.bwp, self.w_in, self.xdot, self.sc.ws.ws,
                            self.sc.ws.rel, self.rel13, self.kin, pk.feat, self.featP, pk.pairs, pk.mat, pk.lat,
                            self.cst, self.cst_out, self.cst_tmp, self.rec, self.wrench_P, self.wrench_links,
                            self.latch_p, self.info, self.info_f, self.Rl, self.cscr, self.link_pose, self.link_twist,
                            self.aC, self.R_PE, self.kx, self.kr, self.xs, self.xrs, self.bwp0, self.k4, self.xt4,
                            self.zero_w, self.rw, self.rows2,
                            self.istate, self.stats, self.ev, self.evst, buf, self.lay)
            self._drain_events()
        elif self.model == "grapple":
            n = grapple_run(buf.shape[0], self.dpar, self.sc.par[0], self.gp, self.gs, self.go, x, self.w_in,
                            self.k4, self.xt4, self.sc.ws.ws, self.sc.ws.rel, self.kin, self.istate,
                            self.stats, buf, self.lay)
            if self.stats[ST_FIRST] >= 0.0 and not self.events:
                t = float(self.stats[ST_FIRST])
                self.events += [(t, "first_contact"), (t, "soft_capture")]
                self.event_details += [(t, "first_contact", "snare closed on the grapple fixture"),
                                       (t, "soft_capture", "snare closed on the grapple fixture")]
        else:
            n = rod_run(buf.shape[0], self.dpar, self.sc.par, self.sc.env, self.rp, x, self.w_in, self.k4, self.xt4,
                        self.sc.ws.ws, self.sc.ws.rel, self.rel13, self.ro, self.tmp, self.istate, self.stats, buf,
                        self.lay)
            if self.stats[ST_FIRST] >= 0.0 and not self.events:
                self.events.append((float(self.stats[ST_FIRST]), "first_contact"))
                self.event_details.append((float(self.stats[ST_FIRST]), "first_contact", "rod"))
        return int(n)

    def _drain_events(self) -> None:
        n = int(self.istate[J_NEV])
        pk = self.packed
        for k in range(self._ev_read, min(n, EV_MAX)):
            t, code, detail, value = self.ev[k]
            code = int(code)
            name = EVENT_CODE_NAMES.get(code, str(code))
            if code == CK.EV_FIRST_CONTACT:
                det = pk.contact_name(int(detail)) if detail >= 0 else ""
            elif code in (CK.EV_LATCH_DEFLECTED, CK.EV_LATCH_ENGAGED, CK.EV_SENSOR):
                det = pk.latch_names[int(detail)]
            elif code == EV_PENETRATION:
                det = (f"contact pair {pk.contact_name(int(detail))!r}: penetration {value * 1e3:.3f} mm exceeds "
                       f"the limit")
            else:
                det = ""
            self.events.append((float(t), name))
            self.event_details.append((float(t), name, det))
        self._ev_read = n

    def run(self, log_path: str | Path | None = None, header: dict | None = None, block_rows: int = 1000,
            on_rows=None) -> DigitalResult:
        """Integrate to the end criteria; write the run log when ``log_path`` is given;
        ``on_rows(rows)`` (optional) sees every block of log rows (an (n, width) array)."""
        t_cpu = time.process_time()
        buf = np.zeros((block_rows, self.width))
        writer = None
        if log_path is not None:
            log_path = Path(log_path)
            log_path.parent.mkdir(parents=True, exist_ok=True)
            hdr = {"case": self.case.source or self.case.name, "case_digest": self.case.digest, "kind": "digital", "model": self.model,
                   "integrator": self.integrator, "dt_s": self.dt, "log_period_s": self.spr * self.dt,
                   "config": {"emulator": str(self.emu.file) if self.emu.file else None,
                              "mechanism": str(self.emu.mechanism_path) if self.model == "mechanism" else None,
                              "interface": str(self.emu.interface_path) if self.model == "mechanism" else None,
                              "rod": vars(self.emu.rod) if self.emu.rod is not None and self.model == "elastic_rod"
                              else None,
                              "grapple": vars(self.emu.grapple) if self.model == "grapple" else None},
                   "stand_conditions": bool(self.dpar[D_HILC] != 0.0),
                   "gravity_P": [float(v) for v in self.dpar[D_GA:D_GA + 3]],
                   "mechanism_state": ("given" if self.initial_mechanism_state is not None else "rest")
                   if self.model == "mechanism" else None}
            hdr.update(header or {})
            writer = RunLogWriter(log_path, self.fields, header=hdr, threaded=False,
                                  capacity=max(1 << 14, 2 * block_rows), flush_interval_s=0.1)
        try:
            while not self.ended:
                n = self.advance_rows(buf)
                if writer is not None:
                    for i in range(n):
                        writer.staging[:] = buf[i]
                        writer.commit()
                    writer.flush()
                if on_rows is not None and n:
                    on_rows(buf[:n])
                if n == 0 and not self.ended:
                    raise RuntimeError("digital run made no progress")
            if writer is not None:
                for t, name, det in self.event_details:
                    writer.event(name, t=t, detail=det)
                writer.event("end", t=self.t, reason=END_NAMES.get(int(self.istate[J_END]), "?"))
        finally:
            if writer is not None:
                writer.close()
        cpu = time.process_time() - t_cpu
        return self.result(log_path, cpu)

    def result(self, log_path=None, cpu_s: float = 0.0) -> DigitalResult:
        s = self.stats
        end = int(self.istate[J_END])
        msg = ""
        if end == END_MECHANISM:
            msg = (str(mech_error(self.mech, int(self.istate[J_STATUS]))) if self.model == "mechanism"
                   else "the arm's mass matrix is not positive definite (the berthing flight diverged)")
        elif end == END_DIVERGED:
            msg = (f"the state stopped being finite at t = {self.t:.6f} s even at the physics step (the "
                   f"integration diverged; the log ends at the last finite state)")
        elif end == END_PENETRATION:
            pens = [d for (_, n, d) in self.event_details if n == "penetration_limit"]
            msg = pens[-1] if pens else "penetration limit exceeded"
        rel = self.sc.relative()
        if self.model == "mechanism" or self.model == "grapple":
            first = next((t for t, n in self.events if n == "first_contact"), None)
        else:
            first = float(s[ST_FIRST]) if s[ST_FIRST] >= 0.0 else None
        return DigitalResult(
            case=self.case.name, model=self.model, captured=bool(s[ST_TCAP] >= 0.0),
            time_to_capture_s=float(s[ST_TCAP]) if s[ST_TCAP] >= 0.0 else None,
            peak_force_n=float(s[ST_PEAKF]), peak_moment_nm=float(s[ST_PEAKM]), max_penetration_m=float(s[ST_MAXPEN]),
            energy_absorbed_j=float(s[ST_EABS]), max_excursion_m=float(s[ST_MAXEXC]), first_contact_s=first,
            end_reason=END_NAMES.get(end, "running"), t_end_s=self.t,
            rel_velocity_end_mps=[float(v) for v in rel[S.REL_V:S.REL_V + 3]], events=list(self.events),
            log_path=Path(log_path) if log_path is not None else None, cpu_s=cpu_s, steps=int(self.istate[J_STEPS]),
            fine_steps=int(self.istate[J_FINE_STEPS]), evaluations=int(self.istate[J_EVALS]), integrator=self.integrator, dt_s=self.dt, message=msg)


def stand_gravity_P(stand, emu: EmulatorConfig | None = None) -> np.ndarray:
    """The stand's gravity in the passive unit's frame P (m/s^2), as the emulated stand has it
    (``sim_stand.world.gravity_in_P``; -g x_P on the default stand, whose passive unit hangs
    above the platform with x_P up). In A it follows the platform's attitude, i.e. the relative
    attitude: a 1 deg misalignment puts 0.17 m/s^2 across the mechanism."""
    from sim_stand.world import gravity_in_P
    return gravity_in_P(stand, emu.gravity_m_per_s2 if emu is not None else 9.80665)


def stand_rest_gravity_A(stand, emu: EmulatorConfig | None = None) -> np.ndarray:
    """The stand's gravity in A at the platform's home pose (m/s^2): what the mechanism comes to
    rest under when the emulated stand resets (``StandWorld.reset`` at home), before the arming
    move tilts it to the case's initial attitude (``R_AW [0, 0, -g]``; -g x_A on the default stand)."""
    home = np.asarray(stand.hexapod.home, dtype=np.float64)
    R_BT = np.empty((3, 3))
    SP.quat_to_dcm(home[3:7] / np.linalg.norm(home[3:7]), R_BT)
    R_PA = stand.passive_mount.R.T @ stand.platform_base.R @ R_BT @ stand.active_mount.R
    return R_PA.T @ stand_gravity_P(stand, emu)


def stand_conditions(stand, emu: EmulatorConfig | None = None) -> dict:
    """Keyword arguments of :class:`DigitalSim` for the stand's conditions: the stand's 1 g on
    the mechanism (fixed in P; the mechanism at rest under it at the platform's home pose, as the
    emulated stand resets it), the HIL coupling (the controller's model of the vehicles' load) and,
    for a docking mechanism, the emulated stand's own integrator at its physics step (so that the
    difference between a HIL run and this reference is the loop's, not the discretisation's)."""
    return {"gravity_P": stand_gravity_P(stand, emu), "rest_gravity_A": stand_rest_gravity_A(stand, emu),
            "hil_coupling": True, "stand_integrator": True}


def simulate(case, stand=None, emu=None, log_path=None, **kw) -> DigitalResult:
    """Run the all-digital reference of ``case`` (a Case or a path) to its end criteria.

    ``stand`` (optional) only goes into the log header; ``emu`` (EmulatorConfig or path) supplies
    the physics step, integrator and presets; ``log_path`` writes the run log (rt.record.runlog format).
    Keyword arguments go to :class:`DigitalSim` (``dt``, ``integrator``, ``log_rate_hz``,
    ``coarse``, ``coarse_dt``, ``gap_margin_m``, ``duration_s``, ``gravity_P``, ``rest_gravity_A``, ``hil_coupling``)."""
    extra = kw.pop("header", None) or {}
    sim = DigitalSim(case, emu, **kw)
    header = {"stand": str(Path(stand.file).resolve()) if stand is not None and stand.file else None, **extra}
    return sim.run(log_path, header=header)


__all__ = ["DigitalSim", "DigitalResult", "simulate", "stand_gravity_P", "stand_rest_gravity_A", "stand_conditions", "LOG_FIELDS_MECH", "LOG_FIELDS_ROD", "END_NAMES"]
