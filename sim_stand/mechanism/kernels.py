"""Compiled kernels of the parallel-manipulator docking mechanism ([Golubev & Yaskevich],
with the transport motion of the base of [Yaskevich 2018a]).  See docs/models/mechanism.md for
the equations.

Entry points (all ``@njit(**_JIT)``: cached, no NRT, allocation-free):

* :func:`mechanism_derivatives` ``(params, workspace, ring_state, base_motion, contact_wrench,
  out)`` -- one full evaluation: closed-form IK of every leg, constraint matrices, ``H_k``,
  ``h_k``, per-leg CRBA ``A_k`` and bias ``b_k`` (with base motion, gravity and leg devices),
  the reduced 6x6 ring equation, dependent joint accelerations, Lagrange multipliers and the
  wrench on the mechanism base.
* :func:`mechanism_step_rk4` -- one classical RK4 step of the ring's 12-state, base motion and
  contact wrench held over the step.

Arrays:

* ``params`` (the leg kernels' ``P``, ``HDR + n_legs * LP``): the mechanism's packed parameters
  (``layout``: header ``H_*``, then one block ``L_*`` of ``LP`` entries per leg); ``lo``, the offset
  of a leg's block in it, ``HDR + k * LP``.
* the leg kernels' bodies and joints, as :func:`leg_fk` and :func:`leg_constraint_jacobian` write
  them.
* ``ring_state`` (12): ``[r_C (frame 0), psi, theta, phi, v_C = r_C' (frame 0), omega_C
  (frame C)]``: position of the ring's centre of mass relative to O_0, the y-z-x angle sequence
  of frame C relative to frame 0 (``alpha_C = alpha^x(phi) alpha^z(theta) alpha^y(psi)`` =
  ``R_C0``), the velocity relative to frame 0 and the angular velocity of C relative to 0.
* ``base_motion`` (12): ``[a_0, omega_0, eps_0, g]``, all in frame 0: linear acceleration of
  O_0, angular velocity and angular acceleration of frame 0 relative to the inertial frame,
  and the gravity vector (zero in orbit).
* ``contact_wrench`` (6): external wrench on the ring ``[f; m]``, components in frame C, m about
  the ring's centre of mass (C's origin).  See ``contact_wrench_on_ring`` in ``model.py``.
* ``out``: see ``layout.out_offsets`` / ``layout.OutView``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.core.cpu import CPUTargetOptions

from rt.dynamics import linalg as LA
from rt.dynamics import spatial as SP
from sim_stand.mechanism import devices as dv
from sim_stand.mechanism.layout import (DEV_BRAKE, DEV_DAMPER, DEV_DRIVE, DEV_EMD, DEV_SPRING,
                                        DEV_STOP, H_IC, H_MC, H_NEWTON, H_NLEGS, H_OUT, H_WS, HDR,
                                        JOINT_P, L_BC, L_BI, L_BM, L_DJ, L_EM_M, L_GC, L_IKA,
                                        L_IKB, L_IKS, L_JA, L_JG, L_JL, L_JT, L_LAST, L_LC, L_M,
                                        L_N, L_TYPE, LP, NDEV, NMAX, RSU, RUS, SPU, UCU, UPS,
                                        STATUS_JOINT_LIMIT, STATUS_OK, STATUS_SINGULAR,
                                        STATUS_UNREACHABLE)

# Compiled without numba's reference-counted runtime (NRT, a private but long-standing numba
# option): every array view passed between these functions would otherwise cost an atomic
# incref/decref pair, about half the run time of mechanism_derivatives. It also turns any
# allocation in the kernels into a compile error (they use only caller-provided arrays).
# Callers compiled with the NRT (the emulator, the digital simulation) call them as usual.
_JIT = dict(cache=True, _nrt=False, error_model="numpy") if hasattr(CPUTargetOptions, "_nrt") else dict(cache=True, error_model="numpy")

TINY = 1e-12
PIVOT_TOL = 1e-9     # |pivot| / max|row| below this: C^(d) treated as singular
CHART_TOL = 1e-6     # cos of a chart angle below this: joint at +-90 deg
NEWTON_TOL = 1e-15   # Newton polish: stop once the closure residual is below this (m, or cos)


# =============================================================================== helpers
@njit(inline="always", **_JIT)
def _ws(W, P, slot, n):
    o = int(P[H_WS + slot])
    return W[o:o + n]


@njit(**_JIT)
def ring_dcm(psi, theta, phi, R):
    """alpha_C = alpha^x(phi) alpha^z(theta) alpha^y(psi) = R_C0 ([Golubev & Yaskevich, §3]).

    Parameters
    ----------
    psi, theta, phi : float
        The ring's y-z-x angles relative to frame 0 (rad).
    R : float64[3, 3]
        Output: alpha_C = R_C0.
    """
    cps, sps = math.cos(psi), math.sin(psi)
    cth, sth = math.cos(theta), math.sin(theta)
    cph, sph = math.cos(phi), math.sin(phi)
    R[0, 0] = cth * cps
    R[0, 1] = sth
    R[0, 2] = -cth * sps
    R[1, 0] = -cph * sth * cps + sph * sps
    R[1, 1] = cph * cth
    R[1, 2] = cph * sth * sps + sph * cps
    R[2, 0] = sph * sth * cps + cph * sps
    R[2, 1] = -sph * cth
    R[2, 2] = -sph * sth * sps + cph * cps


# ======================================================================= leg kinematics
@njit(**_JIT)
def leg_fk(P, lo, p, tau, beta, rloc, r0, e0, rL, lL0):
    """Forward position kinematics of one leg, base fixed ([Golubev & Yaskevich, §3, §4]).

    p: joint coordinates (n).  Fills tau[j] (DCM 0 -> body j, tau[0] = 1), beta[j-1]
    (body j-1 -> j), rloc[j-1] (r_{j-1,j}, frame j-1), r0[j] (O_j in frame 0), e0[j-1] (axis of
    joint j in frame 0), rL (cut-joint centre in frame 0), lL0 (tau_n^T l^L).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring): the leg's joints and body count.
    lo : int
        Offset of the leg's block in ``P``.
    p : float64[>= n]
        The leg's joint coordinates (m for a prismatic joint, rad for a revolute one).
    tau : float64[NMAX + 1, 3, 3]
        Output: DCM frame 0 -> body j per body (index 0: the base, the identity).
    beta : float64[NMAX, 3, 3]
        Output: DCM body j-1 -> body j per joint (index j-1).
    rloc : float64[NMAX, 3]
        Output: r_{j-1,j}: joint-frame origin of body j from O_{j-1}, frame j-1 (m; index j-1).
    r0 : float64[NMAX + 1, 3]
        Output: body origins O_j in frame 0 (m; index 0: the base origin O_0).
    e0 : float64[NMAX, 3]
        Output: unit joint axes in frame 0 (index j-1).
    rL : float64[3]
        Output: cut-joint centre at the leg's end, frame 0 (m).
    lL0 : float64[3]
        Output: tau_n^T l^L: the cut-joint centre from the last body's origin, frame 0 (m).
    """
    n = int(P[lo + L_N])
    for a in range(3):
        for b in range(3):
            tau[0, a, b] = 1.0 if a == b else 0.0
        r0[0, a] = 0.0
    for j in range(n):
        ax = int(P[lo + L_JA + j])
        g = P[lo + L_JG + 9 * j: lo + L_JG + 9 * j + 9]
        lj = P[lo + L_JL + 3 * j: lo + L_JL + 3 * j + 3]
        isP = P[lo + L_JT + j] == JOINT_P
        # axis in frame 0: row ax of theta^J = gamma tau_{j}
        for b in range(3):
            acc = 0.0
            for m in range(3):
                acc += g[3 * ax + m] * tau[j, m, b]
            e0[j, b] = acc
        # beta = alpha(p) gamma (a revolute joint's elementary rotation mixes two rows of gamma)
        for a in range(3):
            for b in range(3):
                beta[j, a, b] = g[3 * a + b]
        if not isP:
            SP.premul_axis(ax, p[j], beta[j])
        # r_{j-1,j} = l + gamma^T t
        for a in range(3):
            rloc[j, a] = lj[a]
        if isP:
            for a in range(3):
                rloc[j, a] += g[3 * ax + a] * p[j]
        # tau_j = beta_j tau_{j-1};  O_j = O_{j-1} + tau_{j-1}^T r_{j-1,j}
        for a in range(3):
            for b in range(3):
                tau[j + 1, a, b] = (beta[j, a, 0] * tau[j, 0, b] + beta[j, a, 1] * tau[j, 1, b]
                                    + beta[j, a, 2] * tau[j, 2, b])
        for b in range(3):
            r0[j + 1, b] = r0[j, b] + (tau[j, 0, b] * rloc[j, 0] + tau[j, 1, b] * rloc[j, 1]
                                       + tau[j, 2, b] * rloc[j, 2])
    # cut-joint centre l^L = [L, 0, 0] on the last body
    Ll = P[lo + L_LAST]
    for b in range(3):
        lL0[b] = tau[n, 0, b] * Ll
        rL[b] = r0[n, b] + lL0[b]


@njit(**_JIT)
def leg_constraint_jacobian(P, lo, tau, r0, e0, rL, e1, e2, nR, Cd):
    """C^(d) (m x m) from the leg's kinematics: rows 0-2 = T^L_n (Jacobian of the cut-joint
    centre w.r.t. p'), row 3 (m = 4) = n_R^T R_n.  e1 (y axis of the last body), e2 (ring-side
    z axis, set by the caller) and n_R = e1 x e2 are in frame 0.

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring): the leg's joint types and sizes.
    lo : int
        Offset of the leg's block in ``P``.
    tau : float64[NMAX + 1, 3, 3]
        The bodies' DCMs, as :func:`leg_fk` left them (and ``r0``, ``e0``, ``rL``).
    r0 : float64[NMAX + 1, 3]
        Body origins, frame 0.
    e0 : float64[NMAX, 3]
        Joint axes, frame 0.
    rL : float64[3]
        Cut-joint centre, frame 0.
    e1 : float64[3]
        Output (m = 4 legs): y axis of the last body, frame 0.
    e2 : float64[3]
        Ring-side z axis of the cut joint, frame 0 (m = 4 legs; :func:`ring_e2`).
    nR : float64[3]
        Output (m = 4 legs): n_R = e1 x e2, frame 0.
    Cd : float64[NMAX, NMAX]
        Output: C^(d) in its m x m block.
    """
    n = int(P[lo + L_N])
    m = int(P[lo + L_M])
    for i in range(n):
        if P[lo + L_JT + i] == JOINT_P:
            for a in range(3):
                Cd[a, i] = e0[i, a]
        else:
            dx = rL[0] - r0[i + 1, 0]
            dy = rL[1] - r0[i + 1, 1]
            dz = rL[2] - r0[i + 1, 2]
            Cd[0, i] = e0[i, 1] * dz - e0[i, 2] * dy
            Cd[1, i] = e0[i, 2] * dx - e0[i, 0] * dz
            Cd[2, i] = e0[i, 0] * dy - e0[i, 1] * dx
    if m == 4:
        for a in range(3):
            e1[a] = tau[n, 1, a]
        nR[0] = e1[1] * e2[2] - e1[2] * e2[1]
        nR[1] = e1[2] * e2[0] - e1[0] * e2[2]
        nR[2] = e1[0] * e2[1] - e1[1] * e2[0]
        for i in range(n):
            if P[lo + L_JT + i] == JOINT_P:
                Cd[3, i] = 0.0
            else:
                Cd[3, i] = nR[0] * e0[i, 0] + nR[1] * e0[i, 1] + nR[2] * e0[i, 2]


@njit(inline="always", **_JIT)
def _lu(A, LU, piv, m):
    """LU with partial pivoting of the m x m block of A; returns False if a pivot is below
    PIVOT_TOL times the largest entry of A (numerically singular)."""
    scale = 0.0
    for i in range(m):
        piv[i] = i
        for j in range(m):
            LU[i, j] = A[i, j]
            scale = max(scale, abs(A[i, j]))
    tol = PIVOT_TOL * max(scale, TINY)
    for k in range(m):
        if not LA.partial_pivot(LU, piv, k, m, tol):
            return False
        for i in range(k + 1, m):
            f = LU[i, k] / LU[k, k]
            LU[i, k] = f
            for j in range(k + 1, m):
                LU[i, j] -= f * LU[k, j]
    return True


@njit(**_JIT)
def _lu_solve(LU, piv, m, x):
    """In place x <- A^{-1} x."""
    # permute into a temp held in the tail of x? use explicit small copies (scalars)
    y0 = x[int(piv[0])]
    y1 = x[int(piv[1])] if m > 1 else 0.0
    y2 = x[int(piv[2])] if m > 2 else 0.0
    y3 = x[int(piv[3])] if m > 3 else 0.0
    x[0] = y0
    if m > 1:
        x[1] = y1
    if m > 2:
        x[2] = y2
    if m > 3:
        x[3] = y3
    for i in range(m):
        s = x[i]
        for j in range(i):
            s -= LU[i, j] * x[j]
        x[i] = s
    LA.back_substitute(LU, x, x, m)


@njit(inline="always", **_JIT)
def _lu_solve_cols(LU, piv, m, B, X):
    """X[:m, c] <- A^{-1} B[:m, c] for the 6 columns c (A = P^T L U), without array views."""
    for c in range(6):
        for i in range(m):
            X[i, c] = B[int(piv[i]), c]
        for i in range(m):
            s = X[i, c]
            for j in range(i):
                s -= LU[i, j] * X[j, c]
            X[i, c] = s
        for i in range(m - 1, -1, -1):
            s = X[i, c]
            for j in range(i + 1, m):
                s -= LU[i, j] * X[j, c]
            X[i, c] = s / LU[i, i]


@njit(inline="always", **_JIT)
def _lu_solve_t(LU, piv, m, x):
    """In place x <- A^{-T} x  (A = P^T L U  =>  A^T = U^T L^T P)."""
    for i in range(m):
        s = x[i]
        for j in range(i):
            s -= LU[j, i] * x[j]
        x[i] = s / LU[i, i]
    for i in range(m - 1, -1, -1):
        s = x[i]
        for j in range(i + 1, m):
            s -= LU[j, i] * x[j]
        x[i] = s
    y0 = x[0]
    y1 = x[1] if m > 1 else 0.0
    y2 = x[2] if m > 2 else 0.0
    y3 = x[3] if m > 3 else 0.0
    x[int(piv[0])] = y0
    if m > 1:
        x[int(piv[1])] = y1
    if m > 2:
        x[int(piv[2])] = y2
    if m > 3:
        x[int(piv[3])] = y3


# ================================================================== closed-form IK (§4)
@njit(**_JIT)
def _chart_yz(u0, u1, u2, out_p, i):
    """Angles (about y, then z) that turn the x axis onto direction u ([Golubev & Yaskevich,
    §4], UPS steps 3-5): u = |u| [c1 c2, s2, -s1 c2].  Returns a status code."""
    L = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    if L <= TINY:
        return STATUS_JOINT_LIMIT
    rho = math.sqrt(u0 * u0 + u2 * u2)
    if u0 <= CHART_TOL * L or rho <= CHART_TOL * L:
        return STATUS_JOINT_LIMIT
    out_p[i] = math.atan2(-u2 / rho, u0 / rho)
    out_p[i + 1] = math.atan2(u1 / L, rho / L)
    return STATUS_OK


@njit(**_JIT)
def leg_ik(P, lo, rC, aC, p, Z, T):
    """Closed-form inverse kinematics of one leg ([Golubev & Yaskevich, §4]): joint coordinates p
    from the ring pose (r_C in frame 0, alpha_C = R_C0).  Z, T: 3x3 scratch.  Returns a status
    code.

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring): the leg's joint geometry.
    lo : int
        Offset of the leg's block in ``P``.
    rC : float64[3]
        Ring centre of mass r_C relative to O_0, frame 0 (m).
    aC : float64[3, 3]
        The ring's DCM alpha_C = R_C0 (:func:`ring_dcm`).
    p : float64[>= n]
        Output: the leg's joint coordinates (m or rad).
    Z, T : float64[3, 3]
        Scratch.
    """
    typ = int(P[lo + L_TYPE])
    # ring joint centre in frame 0 and the ring-side U axis e2 (m = 4)
    lc0 = P[lo + L_LC]
    lc1 = P[lo + L_LC + 1]
    lc2 = P[lo + L_LC + 2]
    tx = rC[0] + aC[0, 0] * lc0 + aC[1, 0] * lc1 + aC[2, 0] * lc2
    ty = rC[1] + aC[0, 1] * lc0 + aC[1, 1] * lc1 + aC[2, 1] * lc2
    tz = rC[2] + aC[0, 2] * lc0 + aC[1, 2] * lc1 + aC[2, 2] * lc2
    g0 = P[lo + L_JG: lo + L_JG + 9]
    l0 = P[lo + L_JL: lo + L_JL + 3]
    dx = tx - l0[0]
    dy = ty - l0[1]
    dz = tz - l0[2]
    q0 = g0[0] * dx + g0[1] * dy + g0[2] * dz
    q1 = g0[3] * dx + g0[4] * dy + g0[5] * dz
    q2 = g0[6] * dx + g0[7] * dy + g0[8] * dz
    if typ == UPS or typ == SPU or typ == UCU:
        st = _chart_yz(q0, q1, q2, p, 0)
        if st != STATUS_OK:
            return st
        L = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2)
        if typ == UPS:
            p[2] = L - P[lo + L_IKA]
            return STATUS_OK
        p[3] = L - P[lo + L_IKA]
        # zero-twist frame Z = alpha^z(p2) alpha^y(p1) gamma_0
        SP.dcm_axis_cs(1, math.cos(p[0]), math.sin(p[0]), T)
        for a in range(3):
            for b in range(3):
                Z[a, b] = T[a, 0] * g0[b] + T[a, 1] * g0[3 + b] + T[a, 2] * g0[6 + b]
        SP.dcm_axis_cs(2, math.cos(p[1]), math.sin(p[1]), T)
        return _twist_after(P, lo, aC, T, Z, p, 2)
    # Hunt legs: crank about y of the base joint frame; tip = l12 [c1, 0, -s1]
    l12 = P[lo + L_IKA]
    l23 = P[lo + L_IKB]
    sig = P[lo + L_IKS]
    rho = math.sqrt(q0 * q0 + q2 * q2)
    K = (q0 * q0 + q1 * q1 + q2 * q2 + l12 * l12 - l23 * l23) / (2.0 * l12)
    if rho <= TINY:
        return STATUS_SINGULAR
    kap = K / rho
    if kap > 1.0 or kap < -1.0:
        return STATUS_UNREACHABLE
    cphi = q0 / rho
    sphi = -q2 / rho
    cd = kap
    sd = sig * math.sqrt(1.0 - kap * kap)
    c1 = cphi * cd - sphi * sd
    s1 = sphi * cd + cphi * sd
    p[0] = math.atan2(s1, c1)
    # coupler vector in body 1: alpha^y(p1) q - [l12, 0, 0]; in joint frame 1: gamma_1 (...)
    v0 = c1 * q0 - s1 * q2 - l12
    v1 = q1
    v2 = s1 * q0 + c1 * q2
    g1 = P[lo + L_JG + 9: lo + L_JG + 18]
    u0 = g1[0] * v0 + g1[1] * v1 + g1[2] * v2
    u1 = g1[3] * v0 + g1[4] * v1 + g1[5] * v2
    u2 = g1[6] * v0 + g1[7] * v1 + g1[8] * v2
    st = _chart_yz(u0, u1, u2, p, 1)
    if st != STATUS_OK or typ == RUS:
        return st
    # zero-twist frame Z = alpha^z(p3) alpha^y(p2) gamma_1 alpha^y(p1) gamma_0
    SP.dcm_axis_cs(1, c1, s1, T)
    for a in range(3):
        for b in range(3):
            Z[a, b] = T[a, 0] * g0[b] + T[a, 1] * g0[3 + b] + T[a, 2] * g0[6 + b]
    # T <- gamma_1 Z  (row by row, using T as the result after copying Z into place)
    for b in range(3):
        z0 = Z[0, b]
        z1 = Z[1, b]
        z2 = Z[2, b]
        Z[0, b] = g1[0] * z0 + g1[1] * z1 + g1[2] * z2
        Z[1, b] = g1[3] * z0 + g1[4] * z1 + g1[5] * z2
        Z[2, b] = g1[6] * z0 + g1[7] * z1 + g1[8] * z2
    SP.dcm_axis_cs(1, math.cos(p[1]), math.sin(p[1]), T)
    _premul(T, Z)
    SP.dcm_axis_cs(2, math.cos(p[2]), math.sin(p[2]), T)
    return _twist_after(P, lo, aC, T, Z, p, 3)


@njit(inline="always", **_JIT)
def _premul(T, Z):
    """Z <- T Z (3x3, in place)."""
    for b in range(3):
        z0 = Z[0, b]
        z1 = Z[1, b]
        z2 = Z[2, b]
        Z[0, b] = T[0, 0] * z0 + T[0, 1] * z1 + T[0, 2] * z2
        Z[1, b] = T[1, 0] * z0 + T[1, 1] * z1 + T[1, 2] * z2
        Z[2, b] = T[2, 0] * z0 + T[2, 1] * z1 + T[2, 2] * z2


@njit(**_JIT)
def _twist_after(P, lo, aC, T, Z, p, i):
    """Z <- T Z, then the twist p[i] from the ring-side axis e2 = row 2 of gamma_C alpha_C."""
    _premul(T, Z)
    gc = P[lo + L_GC: lo + L_GC + 9]
    e20 = gc[6] * aC[0, 0] + gc[7] * aC[1, 0] + gc[8] * aC[2, 0]
    e21 = gc[6] * aC[0, 1] + gc[7] * aC[1, 1] + gc[8] * aC[2, 1]
    e22 = gc[6] * aC[0, 2] + gc[7] * aC[1, 2] + gc[8] * aC[2, 2]
    wy = Z[1, 0] * e20 + Z[1, 1] * e21 + Z[1, 2] * e22
    wz = Z[2, 0] * e20 + Z[2, 1] * e21 + Z[2, 2] * e22
    s = math.sqrt(wy * wy + wz * wz)
    if s <= CHART_TOL or abs(wz) <= CHART_TOL * s:
        return STATUS_JOINT_LIMIT
    sg = 1.0 if wz > 0.0 else -1.0
    p[i] = math.atan2(-sg * wy / s, sg * wz / s)
    return STATUS_OK


@njit(**_JIT)
def ring_e2(P, lo, aC, e2):
    """Ring-side U axis (3rd axis of the cut-joint frame on the ring) in frame 0.

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring): the ring-side cut-joint frame.
    lo : int
        Offset of the leg's block in ``P``.
    aC : float64[3, 3]
        The ring's DCM alpha_C = R_C0 (:func:`ring_dcm`).
    e2 : float64[3]
        Output: the axis, frame 0.
    """
    gc = P[lo + L_GC: lo + L_GC + 9]
    for b in range(3):
        e2[b] = gc[6] * aC[0, b] + gc[7] * aC[1, b] + gc[8] * aC[2, b]


@njit(**_JIT)
def leg_closure_residual(P, lo, rC, aC, p, tau, beta, rloc, r0, e0, rL, lL0, e1, e2, nR, f, Cd):
    """Position-level closure f_k(p) (eq. 4.6) and its Jacobian C^(d).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring), as read by :func:`leg_fk`,
        :func:`ring_e2` and :func:`leg_constraint_jacobian`.
    lo : int
        Offset of the leg's block in ``P``.
    rC : float64[3]
        The ring's centre of mass, as for :func:`leg_ik` (and ``aC``).
    aC : float64[3, 3]
        The ring's DCM.
    p : float64[>= n]
        The leg's joint coordinates (m for a prismatic joint, rad for a revolute one).
    tau, beta : float64[:, 3, 3]
        Output: the DCMs frame 0 -> body j and body j-1 -> body j, as by :func:`leg_fk`.
    rloc, r0, e0 : float64[:, 3]
        Output: the joint-frame offsets, body origins and joint axes (:func:`leg_fk`).
    rL, lL0 : float64[3]
        Output: the cut-joint centre and its offset from the last body (:func:`leg_fk`).
    e1, e2, nR : float64[3]
        Output: the last body's y axis, the ring-side z axis and n_R, frame 0
        (:func:`leg_constraint_jacobian`).
    f : float64[>= m]
        Output: the closure residual (m, and the cosine e1 . e2 for m = 4).
    Cd : float64[NMAX, NMAX]
        Output: the constraint Jacobian C^(d) (its m x m block).
    """
    m = int(P[lo + L_M])
    leg_fk(P, lo, p, tau, beta, rloc, r0, e0, rL, lL0)
    ring_e2(P, lo, aC, e2)
    for b in range(3):
        t = rC[b]
        for a in range(3):
            t += aC[a, b] * P[lo + L_LC + a]
        f[b] = rL[b] - t
    leg_constraint_jacobian(P, lo, tau, r0, e0, rL, e1, e2, nR, Cd)
    if m == 4:
        f[3] = e1[0] * e2[0] + e1[1] * e2[1] + e1[2] * e2[2]


@njit(**_JIT)
def leg_ik_newton(P, lo, rC, aC, p, tol, maxit, tau, beta, rloc, r0, e0, rL, lL0, e1, e2, nR,
                  f, Cd, LU, piv):
    """Newton iteration p <- p - C^(d)^{-1} f (eq. 4.6) from the initial p; returns
    (iterations, status).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring), as for :func:`leg_closure_residual`.
    lo : int
        Offset of the leg's block in ``P``.
    rC, aC : float64 arrays
        The ring's centre of mass and DCM, as for :func:`leg_ik`.
    p : float64[>= n]
        The leg's joint coordinates (m or rad): the initial guess, refined in place.
    tol : float
        Stop once the largest residual entry is below it (m, or cosine).
    maxit : int
        Most iterations.
    tau, beta, rloc, r0, e0, rL, lL0, e1, e2, nR : float64 arrays
        Workspace: the outputs of :func:`leg_closure_residual`.
    f : float64[>= m]
        Workspace: the residual, then the Newton step.
    Cd : float64[NMAX, NMAX]
        Workspace: C^(d).
    LU : float64[NMAX, NMAX]
        Workspace: LU factors of C^(d).
    piv : float64[NMAX]
        Workspace: the row pivots (as floats).
    """
    m = int(P[lo + L_M])
    for it in range(maxit):
        leg_closure_residual(P, lo, rC, aC, p, tau, beta, rloc, r0, e0, rL, lL0, e1, e2, nR, f, Cd)
        nrm = 0.0
        for i in range(m):
            nrm = max(nrm, abs(f[i]))
        if not _lu(Cd, LU, piv, m):
            return it, STATUS_SINGULAR
        _lu_solve(LU, piv, m, f)
        for i in range(m):
            p[i] -= f[i]
        if nrm < tol:
            return it + 1, STATUS_OK
    return maxit, STATUS_UNREACHABLE


# ============================================================== per-leg dynamics (§5)
@njit(**_JIT)
def leg_crba(P, lo, beta, rloc, A, tmp):
    """Leg mass matrix A_k by the CRBA of [Golubev & Yaskevich, §5] (body frames), plus
    the reflected rotor inertia of an electromechanical damper on the device joint.  tmp: (16, >=3)
    scratch.

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring): the leg's joints and bodies' inertia,
        the device joint and its reflected inertia.
    lo : int
        Offset of the leg's block in ``P``.
    beta, rloc : float64 arrays
        The joints' DCMs and offsets, as :func:`leg_fk` wrote them.
    A : float64[NMAX, NMAX]
        Output: the leg's mass matrix in its n x n block (kg, kg m, kg m^2 by joint type).
    tmp : float64[16, >= 3]
        Scratch: the bodies' unit twists and momenta.
    """
    n = int(P[lo + L_N])
    for jj in range(n):
        for b in range(jj, n):
            m = P[lo + L_BM + b]
            c = P[lo + L_BC + 3 * b: lo + L_BC + 3 * b + 3]
            I = P[lo + L_BI + 9 * b: lo + L_BI + 9 * b + 9]
            if b == jj:
                ax = int(P[lo + L_JA + b])
                for a in range(3):
                    tmp[b, a] = 0.0
                    tmp[4 + b, a] = 0.0
                if P[lo + L_JT + b] == JOINT_P:
                    tmp[b, ax] = 1.0
                else:
                    tmp[4 + b, ax] = 1.0
            else:
                _propagate(beta, rloc, b, tmp)
            v0 = tmp[b, 0]
            v1 = tmp[b, 1]
            v2 = tmp[b, 2]
            w0 = tmp[4 + b, 0]
            w1 = tmp[4 + b, 1]
            w2 = tmp[4 + b, 2]
            # f = m v + om x c ;  mo = I om + c x v
            tmp[8 + b, 0] = m * v0 + w1 * c[2] - w2 * c[1]
            tmp[8 + b, 1] = m * v1 + w2 * c[0] - w0 * c[2]
            tmp[8 + b, 2] = m * v2 + w0 * c[1] - w1 * c[0]
            tmp[12 + b, 0] = I[0] * w0 + I[1] * w1 + I[2] * w2 + c[1] * v2 - c[2] * v1
            tmp[12 + b, 1] = I[3] * w0 + I[4] * w1 + I[5] * w2 + c[2] * v0 - c[0] * v2
            tmp[12 + b, 2] = I[6] * w0 + I[7] * w1 + I[8] * w2 + c[0] * v1 - c[1] * v0
        for b in range(n - 1, jj - 1, -1):
            ax = int(P[lo + L_JA + b])
            if P[lo + L_JT + b] == JOINT_P:
                A[b, jj] = tmp[8 + b, ax]
            else:
                A[b, jj] = tmp[12 + b, ax]
            A[jj, b] = A[b, jj]
            if b > jj:
                _carry(beta, rloc, b, tmp, 8 + b, 12 + b, 8 + b - 1, 12 + b - 1)
    dj = int(P[lo + L_DJ])
    A[dj, dj] += P[lo + L_EM_M]


@njit(inline="always", **_JIT)
def _propagate(beta, rloc, b, T):
    """Twist of body b from its predecessor's, both in their own frames ([Golubev & Yaskevich, §5],
    rows T[b] = v, T[4 + b] = omega): v_b = beta_b (v_{b-1} + om_{b-1} x r_{b-1,b});
    om_b = beta_b om_{b-1}."""
    o0 = T[4 + b - 1, 0]
    o1 = T[4 + b - 1, 1]
    o2 = T[4 + b - 1, 2]
    r0_ = rloc[b, 0]
    r1_ = rloc[b, 1]
    r2_ = rloc[b, 2]
    x0 = T[b - 1, 0] + o1 * r2_ - o2 * r1_
    x1 = T[b - 1, 1] + o2 * r0_ - o0 * r2_
    x2 = T[b - 1, 2] + o0 * r1_ - o1 * r0_
    for a in range(3):
        T[b, a] = beta[b, a, 0] * x0 + beta[b, a, 1] * x1 + beta[b, a, 2] * x2
        T[4 + b, a] = beta[b, a, 0] * o0 + beta[b, a, 1] * o1 + beta[b, a, 2] * o2


@njit(inline="always", **_JIT)
def _carry_to(beta, rloc, b, f, m, fo, mo):
    """Add the wrench (f, m) at O_b, frame b, moved to O_{b-1} in frame b-1, to (fo, mo):
    fo += beta^T f;  mo += beta^T m + r x (beta^T f)  (r = r_{b-1,b}; body 0's predecessor is
    the mechanism base, frame 0, origin O_0)."""
    g0 = beta[b, 0, 0] * f[0] + beta[b, 1, 0] * f[1] + beta[b, 2, 0] * f[2]
    g1 = beta[b, 0, 1] * f[0] + beta[b, 1, 1] * f[1] + beta[b, 2, 1] * f[2]
    g2 = beta[b, 0, 2] * f[0] + beta[b, 1, 2] * f[1] + beta[b, 2, 2] * f[2]
    r0 = rloc[b, 0]
    r1 = rloc[b, 1]
    r2 = rloc[b, 2]
    fo[0] += g0
    fo[1] += g1
    fo[2] += g2
    for a in range(3):
        mo[a] += beta[b, 0, a] * m[0] + beta[b, 1, a] * m[1] + beta[b, 2, a] * m[2]
    mo[0] += r1 * g2 - r2 * g1
    mo[1] += r2 * g0 - r0 * g2
    mo[2] += r0 * g1 - r1 * g0


@njit(inline="always", **_JIT)
def _carry(beta, rloc, b, T, fi, mi, fo, mo):
    """:func:`_carry_to` on rows of T: the wrench (T[fi], T[mi]) at O_b, frame b, added at
    O_{b-1} in frame b-1 to (T[fo], T[mo])."""
    _carry_to(beta, rloc, b, T[fi], T[mi], T[fo], T[mo])


@njit(**_JIT)
def leg_bias(P, lo, beta, rloc, pd, om0, eps0, w0, dj, Qdj, b, fn0, mn0, oab, eab, wab, tmp):
    """Leg bias b_k ([Golubev & Yaskevich, §5] with the transport terms of [Yaskevich 2018a]):
    generalized forces at p'' = 0 with the actual p, p' and the base motion (omega_0, eps_0, w_0 =
    a_0 - g, frame 0), plus the active force Qdj on the device joint dj.  Stores
    the velocity-dependent d'Alembert wrenches fn0, mn0 (at O_j, frame j) and the absolute omega_j,
    eps_j, w_j for the base-wrench pass.

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring): the leg's joints and bodies' inertia.
    lo : int
        Offset of the leg's block in ``P``.
    beta : float64[NMAX, 3, 3]
        The joints' DCMs (:func:`leg_fk`).
    rloc : float64[NMAX, 3]
        The joint-frame offsets r_{j-1,j} (:func:`leg_fk`).
    pd : float64[>= n]
        The leg's joint rates (m/s or rad/s).
    om0 : float64[3]
        omega_0: angular velocity of frame 0 relative to the inertial frame, frame 0 (rad/s).
    eps0 : float64[3]
        eps_0: its angular acceleration, frame 0 (rad/s^2).
    w0 : float64[3]
        w_0 = a_0 - g: acceleration of O_0 less gravity, frame 0 (m/s^2).
    dj : int
        Index of the device joint.
    Qdj : float
        Active generalized force of the devices on that joint (N or N m).
    b : float64[>= n]
        Output: the bias b_k (N or N m per joint).
    fn0, mn0 : float64[NMAX, 3]
        Output: the velocity-dependent d'Alembert force (N) and moment (N m) of each body, at
        O_j, frame j.
    oab : float64[NMAX, 3]
        Output: absolute angular velocity omega_j of each body, frame j (rad/s).
    eab : float64[NMAX, 3]
        Output: its absolute angular acceleration eps_j at p'' = 0, frame j (rad/s^2).
    wab : float64[NMAX, 3]
        Output: the absolute acceleration w_j of O_j at p'' = 0, less gravity, frame j (m/s^2).
    tmp : float64[16, >= 3]
        Scratch: the wrenches carried down the leg.
    """
    n = int(P[lo + L_N])
    for b_ in range(n):
        ax = int(P[lo + L_JA + b_])
        isP = P[lo + L_JT + b_] == JOINT_P
        m = P[lo + L_BM + b_]
        c = P[lo + L_BC + 3 * b_: lo + L_BC + 3 * b_ + 3]
        I = P[lo + L_BI + 9 * b_: lo + L_BI + 9 * b_ + 9]
        if b_ == 0:
            op0, op1, op2 = om0[0], om0[1], om0[2]
            ep0, ep1, ep2 = eps0[0], eps0[1], eps0[2]
            wp0, wp1, wp2 = w0[0], w0[1], w0[2]
        else:
            op0, op1, op2 = oab[b_ - 1, 0], oab[b_ - 1, 1], oab[b_ - 1, 2]
            ep0, ep1, ep2 = eab[b_ - 1, 0], eab[b_ - 1, 1], eab[b_ - 1, 2]
            wp0, wp1, wp2 = wab[b_ - 1, 0], wab[b_ - 1, 1], wab[b_ - 1, 2]
        r0_ = rloc[b_, 0]
        r1_ = rloc[b_, 1]
        r2_ = rloc[b_, 2]
        # x = w + eps x r + om x (om x r)   (predecessor frame)
        y0 = op1 * r2_ - op2 * r1_
        y1 = op2 * r0_ - op0 * r2_
        y2 = op0 * r1_ - op1 * r0_
        x0 = wp0 + ep1 * r2_ - ep2 * r1_ + op1 * y2 - op2 * y1
        x1 = wp1 + ep2 * r0_ - ep0 * r2_ + op2 * y0 - op0 * y2
        x2 = wp2 + ep0 * r1_ - ep1 * r0_ + op0 * y1 - op1 * y0
        B = beta[b_]
        oj0 = B[0, 0] * op0 + B[0, 1] * op1 + B[0, 2] * op2
        oj1 = B[1, 0] * op0 + B[1, 1] * op1 + B[1, 2] * op2
        oj2 = B[2, 0] * op0 + B[2, 1] * op1 + B[2, 2] * op2
        w_0 = B[0, 0] * x0 + B[0, 1] * x1 + B[0, 2] * x2
        w_1 = B[1, 0] * x0 + B[1, 1] * x1 + B[1, 2] * x2
        w_2 = B[2, 0] * x0 + B[2, 1] * x1 + B[2, 2] * x2
        e_0 = B[0, 0] * ep0 + B[0, 1] * ep1 + B[0, 2] * ep2
        e_1 = B[1, 0] * ep0 + B[1, 1] * ep1 + B[1, 2] * ep2
        e_2 = B[2, 0] * ep0 + B[2, 1] * ep1 + B[2, 2] * ep2
        o_0, o_1, o_2 = oj0, oj1, oj2
        rel = pd[b_]
        if isP:
            # w += 2 om^(j) x v_rel,  v_rel = axis * pd
            vr0 = rel if ax == 0 else 0.0
            vr1 = rel if ax == 1 else 0.0
            vr2 = rel if ax == 2 else 0.0
            w_0 += 2.0 * (oj1 * vr2 - oj2 * vr1)
            w_1 += 2.0 * (oj2 * vr0 - oj0 * vr2)
            w_2 += 2.0 * (oj0 * vr1 - oj1 * vr0)
        else:
            wr0 = rel if ax == 0 else 0.0
            wr1 = rel if ax == 1 else 0.0
            wr2 = rel if ax == 2 else 0.0
            e_0 += oj1 * wr2 - oj2 * wr1
            e_1 += oj2 * wr0 - oj0 * wr2
            e_2 += oj0 * wr1 - oj1 * wr0
            o_0 += wr0
            o_1 += wr1
            o_2 += wr2
        oab[b_, 0], oab[b_, 1], oab[b_, 2] = o_0, o_1, o_2
        eab[b_, 0], eab[b_, 1], eab[b_, 2] = e_0, e_1, e_2
        wab[b_, 0], wab[b_, 1], wab[b_, 2] = w_0, w_1, w_2
        # d'Alembert: fn = -m w - eps x c - om x (om x c);  mn = -I eps - c x w - om x (I om)
        z0 = o_1 * c[2] - o_2 * c[1]
        z1 = o_2 * c[0] - o_0 * c[2]
        z2 = o_0 * c[1] - o_1 * c[0]
        fn0[b_, 0] = -m * w_0 - (e_1 * c[2] - e_2 * c[1]) - (o_1 * z2 - o_2 * z1)
        fn0[b_, 1] = -m * w_1 - (e_2 * c[0] - e_0 * c[2]) - (o_2 * z0 - o_0 * z2)
        fn0[b_, 2] = -m * w_2 - (e_0 * c[1] - e_1 * c[0]) - (o_0 * z1 - o_1 * z0)
        io0 = I[0] * o_0 + I[1] * o_1 + I[2] * o_2
        io1 = I[3] * o_0 + I[4] * o_1 + I[5] * o_2
        io2 = I[6] * o_0 + I[7] * o_1 + I[8] * o_2
        mn0[b_, 0] = -(I[0] * e_0 + I[1] * e_1 + I[2] * e_2) - (c[1] * w_2 - c[2] * w_1) - (o_1 * io2 - o_2 * io1)
        mn0[b_, 1] = -(I[3] * e_0 + I[4] * e_1 + I[5] * e_2) - (c[2] * w_0 - c[0] * w_2) - (o_2 * io0 - o_0 * io2)
        mn0[b_, 2] = -(I[6] * e_0 + I[7] * e_1 + I[8] * e_2) - (c[0] * w_1 - c[1] * w_0) - (o_0 * io1 - o_1 * io0)
    for b_ in range(n):
        for a in range(3):
            tmp[b_, a] = fn0[b_, a]
            tmp[4 + b_, a] = mn0[b_, a]
    for b_ in range(n - 1, -1, -1):
        ax = int(P[lo + L_JA + b_])
        if P[lo + L_JT + b_] == JOINT_P:
            b[b_] = tmp[b_, ax]
        else:
            b[b_] = tmp[4 + b_, ax]
        if b_ == dj:
            b[b_] += Qdj
        if b_ > 0:
            _carry(beta, rloc, b_, tmp, b_, 4 + b_, b_ - 1, 4 + b_ - 1)


@njit(**_JIT)
def leg_devices(P, lo, s, v, s_cmd, v_cmd, force, power):
    """Every device's generalized force on the device joint and its power; returns the sum.

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring): the leg's device entries.
    lo : int
        Offset of the leg's block in ``P``.
    s, v, s_cmd, v_cmd : float
        The device joint's coordinate and rate, and the drive's command
        (``sim_stand.mechanism.devices`` module docstring).
    force : float64[NDEV]
        Output: each device's generalized force (``DEV_*`` order; N or N m, + along the axis).
    power : float64[NDEV]
        Output: each device's power delivered to the mechanism (W; < 0 when it absorbs).
    """
    force[DEV_SPRING] = dv.spring_force(P, lo, s)
    force[DEV_DAMPER] = dv.damper_force(P, lo, v)
    force[DEV_BRAKE] = dv.brake_force(P, lo, v)
    force[DEV_EMD] = dv.emd_force(P, lo, v)
    force[DEV_DRIVE] = dv.drive_force(P, lo, s, v, s_cmd, v_cmd)
    force[DEV_STOP] = dv.stop_force(P, lo, s, v)
    tot = 0.0
    for i in range(NDEV):
        power[i] = force[i] * v
        tot += force[i]
    return tot


# ====================================================================== full evaluation
@njit(inline="always", **_JIT)
def _reduce(m, Ak, H, h, bk, AH, As, bs):
    """One leg's share of the reduced ring equation ([Golubev & Yaskevich, eqs. 5.3–5.4]):
    A* += H^T A H (upper triangle), b* += H^T (b - A h). Inlined, so a literal m unrolls it."""
    for i in range(m):
        for col in range(6):
            acc = 0.0
            for j in range(m):
                acc += Ak[i, j] * H[j, col]
            AH[i, col] = acc
    for r in range(6):
        for col in range(r, 6):
            acc = 0.0
            for i in range(m):
                acc += H[i, r] * AH[i, col]
            As[r, col] += acc
    for i in range(m):
        acc = bk[i]
        for j in range(m):
            acc -= Ak[i, j] * h[j]
        for r in range(6):
            bs[r] += H[i, r] * acc


@njit(**_JIT)
def _fail(out, P, code, leg):
    for i in range(out.shape[0]):
        out[i] = 0.0
    o = int(P[H_OUT + 11])
    out[o] = code
    out[o + 1] = leg
    return code


@njit(**_JIT)
def mechanism_derivatives(params, workspace, ring_state, base_motion, contact_wrench, out):
    """One evaluation of the mechanism dynamics (in the order of [Golubev & Yaskevich, §7]).
    Returns the status code (also in ``out`` 'status'); on a non-zero status every other output is
    zero (never NaN).

    Parameters
    ----------
    params : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (``layout``).
    workspace : float64[ws_size(n_legs)]
        Workspace (``layout.ws_layout``); its ``cmd`` block holds each leg's drive command
        [stroke (m or rad), rate], set by the caller.
    ring_state : float64[12]
        ``[r_C (frame 0, m), psi, theta, phi (rad), v_C (frame 0, m/s), omega_C (frame C,
        rad/s)]`` (module docstring).
    base_motion : float64[12]
        ``[a_0 (m/s^2), omega_0 (rad/s), eps_0 (rad/s^2), g (m/s^2)]``, all in frame 0.
    contact_wrench : float64[6]
        External wrench ``[f; m]`` on the ring, frame C, about the ring's centre of mass (N, N m).
    out : float64[out_size(n_legs)]
        Output (``layout.out_offsets``): the ring state derivative, u', leg coordinates, rates,
        accelerations and multipliers, the wrench on the base, strokes, device forces and powers,
        status.
    """
    P = params
    W = workspace
    nl = int(P[H_NLEGS])
    # ---- workspace views (offsets in the params header, see layout.ws_layout)
    cmd = W[int(P[H_WS + 0]): int(P[H_WS + 0]) + nl * 2].reshape((nl, 2))
    tauA = W[int(P[H_WS + 1]): int(P[H_WS + 1]) + nl * 45].reshape((nl, 5, 3, 3))
    betaA = W[int(P[H_WS + 2]): int(P[H_WS + 2]) + nl * 36].reshape((nl, 4, 3, 3))
    rlocA = W[int(P[H_WS + 3]): int(P[H_WS + 3]) + nl * 12].reshape((nl, 4, 3))
    r0A = W[int(P[H_WS + 4]): int(P[H_WS + 4]) + nl * 15].reshape((nl, 5, 3))
    e0A = W[int(P[H_WS + 5]): int(P[H_WS + 5]) + nl * 12].reshape((nl, 4, 3))
    CdA = W[int(P[H_WS + 6]): int(P[H_WS + 6]) + nl * 16].reshape((nl, 4, 4))
    LUA = W[int(P[H_WS + 7]): int(P[H_WS + 7]) + nl * 16].reshape((nl, 4, 4))
    pivA = W[int(P[H_WS + 8]): int(P[H_WS + 8]) + nl * 4].reshape((nl, 4))
    CiA = W[int(P[H_WS + 9]): int(P[H_WS + 9]) + nl * 24].reshape((nl, 4, 6))
    HA = W[int(P[H_WS + 10]): int(P[H_WS + 10]) + nl * 24].reshape((nl, 4, 6))
    hA = W[int(P[H_WS + 11]): int(P[H_WS + 11]) + nl * 4].reshape((nl, 4))
    cA = W[int(P[H_WS + 12]): int(P[H_WS + 12]) + nl * 4].reshape((nl, 4))
    AA = W[int(P[H_WS + 13]): int(P[H_WS + 13]) + nl * 16].reshape((nl, 4, 4))
    bA = W[int(P[H_WS + 14]): int(P[H_WS + 14]) + nl * 4].reshape((nl, 4))
    fn0A = W[int(P[H_WS + 15]): int(P[H_WS + 15]) + nl * 12].reshape((nl, 4, 3))
    mn0A = W[int(P[H_WS + 16]): int(P[H_WS + 16]) + nl * 12].reshape((nl, 4, 3))
    wabA = W[int(P[H_WS + 17]): int(P[H_WS + 17]) + nl * 12].reshape((nl, 4, 3))
    eabA = W[int(P[H_WS + 18]): int(P[H_WS + 18]) + nl * 12].reshape((nl, 4, 3))
    oabA = W[int(P[H_WS + 19]): int(P[H_WS + 19]) + nl * 12].reshape((nl, 4, 3))
    rLA = W[int(P[H_WS + 20]): int(P[H_WS + 20]) + nl * 3].reshape((nl, 3))
    lL0A = W[int(P[H_WS + 21]): int(P[H_WS + 21]) + nl * 3].reshape((nl, 3))
    nRA = W[int(P[H_WS + 22]): int(P[H_WS + 22]) + nl * 3].reshape((nl, 3))
    e1A = W[int(P[H_WS + 23]): int(P[H_WS + 23]) + nl * 3].reshape((nl, 3))
    e2A = W[int(P[H_WS + 24]): int(P[H_WS + 24]) + nl * 3].reshape((nl, 3))
    tmp = W[int(P[H_WS + 25]): int(P[H_WS + 25]) + 96].reshape((16, 6))
    As = W[int(P[H_WS + 26]): int(P[H_WS + 26]) + 36].reshape((6, 6))
    bs = W[int(P[H_WS + 27]): int(P[H_WS + 27]) + 6]
    AH = W[int(P[H_WS + 28]): int(P[H_WS + 28]) + 24].reshape((4, 6))
    kin = W[int(P[H_WS + 29]): int(P[H_WS + 29]) + 30]
    # ---- out views
    xdot = out[0:12]
    udot = out[int(P[H_OUT + 1]): int(P[H_OUT + 1]) + 6]
    pO = out[int(P[H_OUT + 2]): int(P[H_OUT + 2]) + nl * 4].reshape((nl, 4))
    pdO = out[int(P[H_OUT + 3]): int(P[H_OUT + 3]) + nl * 4].reshape((nl, 4))
    pddO = out[int(P[H_OUT + 4]): int(P[H_OUT + 4]) + nl * 4].reshape((nl, 4))
    lamO = out[int(P[H_OUT + 5]): int(P[H_OUT + 5]) + nl * 4].reshape((nl, 4))
    bw = out[int(P[H_OUT + 6]): int(P[H_OUT + 6]) + 6]
    strokeO = out[int(P[H_OUT + 7]): int(P[H_OUT + 7]) + nl]
    srateO = out[int(P[H_OUT + 8]): int(P[H_OUT + 8]) + nl]
    dfO = out[int(P[H_OUT + 9]): int(P[H_OUT + 9]) + nl * NDEV].reshape((nl, NDEV))
    dpO = out[int(P[H_OUT + 10]): int(P[H_OUT + 10]) + nl * NDEV].reshape((nl, NDEV))
    stO = out[int(P[H_OUT + 11]): int(P[H_OUT + 11]) + 2]

    # ---- ring
    rC = ring_state[0:3]
    vC = ring_state[6:9]
    wC = ring_state[9:12]
    # C-contiguous 3x3 scratch (a strided view of tmp makes every callee use strided indexing)
    aC = kin[0:9].reshape((3, 3))
    ikZ = kin[9:18].reshape((3, 3))
    ikT = kin[18:27].reshape((3, 3))
    ring_dcm(ring_state[3], ring_state[4], ring_state[5], aC)
    a0 = base_motion[0:3]
    om0 = base_motion[3:6]
    eps0 = base_motion[6:9]
    # omega_C^(0) = alpha_C^T omega_C
    wC0x = aC[0, 0] * wC[0] + aC[1, 0] * wC[1] + aC[2, 0] * wC[2]
    wC0y = aC[0, 1] * wC[0] + aC[1, 1] * wC[1] + aC[2, 1] * wC[2]
    wC0z = aC[0, 2] * wC[0] + aC[1, 2] * wC[1] + aC[2, 2] * wC[2]
    for i in range(6):
        bs[i] = 0.0
        for j in range(6):
            As[i, j] = 0.0
    w0g0 = base_motion[0] - base_motion[9]
    w0g1 = base_motion[1] - base_motion[10]
    w0g2 = base_motion[2] - base_motion[11]
    stO[0] = 0.0
    stO[1] = 0.0
    w0g = kin[27:30]     # w_0 = a_0 - g: gravity enters as an acceleration of the base
    w0g[0] = w0g0
    w0g[1] = w0g1
    w0g[2] = w0g2
    for k in range(nl):
        lo = HDR + k * LP
        n = int(P[lo + L_N])
        m = n
        p = pO[k]
        pd = pdO[k]
        tau = tauA[k]
        beta = betaA[k]
        rloc = rlocA[k]
        r0 = r0A[k]
        e0 = e0A[k]
        Cd = CdA[k]
        LU = LUA[k]
        piv = pivA[k]
        Ci = CiA[k]
        H = HA[k]
        h = hA[k]
        cv = cA[k]
        rL = rLA[k]
        lL0 = lL0A[k]
        e1 = e1A[k]
        e2 = e2A[k]
        nR = nRA[k]
        for i in range(4):
            p[i] = 0.0
            pd[i] = 0.0
        # 1. closed-form IK (§3.8), optionally polished by newton_polish_iterations steps of
        #    eq. 4.6 (the closed form covers its whole chart, so Newton is a polish and the
        #    test oracle, not a way to reach poses the closed form rejects)
        st = leg_ik(P, lo, rC, aC, p, ikZ, ikT)
        if st != STATUS_OK:
            return _fail(out, P, st, k)
        npol = int(P[H_NEWTON])
        if npol > 0:
            it, st = leg_ik_newton(P, lo, rC, aC, p, NEWTON_TOL, npol, tau, beta, rloc, r0, e0,
                                   rL, lL0, e1, e2, nR, cv, Cd, LU, piv)
            if st == STATUS_SINGULAR:
                return _fail(out, P, st, k)
        # 2. position kinematics, C^(d), C^(i)
        leg_fk(P, lo, p, tau, beta, rloc, r0, e0, rL, lL0)
        ring_e2(P, lo, aC, e2)
        leg_constraint_jacobian(P, lo, tau, r0, e0, rL, e1, e2, nR, Cd)
        ok = _lu(Cd, LU, piv, 4) if m == 4 else _lu(Cd, LU, piv, m)     # literal 4: unrolled
        if not ok:
            return _fail(out, P, STATUS_SINGULAR, k)
        lc0 = P[lo + L_LC]
        lc1 = P[lo + L_LC + 1]
        lc2 = P[lo + L_LC + 2]
        # -alpha_C^T skew(l_C): column b = -alpha_C^T (l_C x e_b)
        for a in range(3):
            for b in range(3):
                Ci[a, b] = 1.0 if a == b else 0.0
        # l x e_x = [0, l2, -l1]; l x e_y = [-l2, 0, l0]; l x e_z = [l1, -l0, 0]
        for a in range(3):
            Ci[a, 3] = -(aC[1, a] * lc2 - aC[2, a] * lc1)
            Ci[a, 4] = -(-aC[0, a] * lc2 + aC[2, a] * lc0)
            Ci[a, 5] = -(aC[0, a] * lc1 - aC[1, a] * lc0)
        if m == 4:
            for b in range(3):
                Ci[3, b] = 0.0
            for b in range(3):
                Ci[3, 3 + b] = aC[b, 0] * nR[0] + aC[b, 1] * nR[1] + aC[b, 2] * nR[2]
        # 3. H = C^(d)^-1 C^(i);  p' = H u
        if m == 4:
            _lu_solve_cols(LU, piv, 4, Ci, H)
        else:
            _lu_solve_cols(LU, piv, m, Ci, H)
        for i in range(m):
            acc = 0.0
            for col in range(3):
                acc += H[i, col] * vC[col] + H[i, 3 + col] * wC[col]
            pd[i] = acc
        # 4. relative velocity-product terms (frame 0, base fixed) -> c, h
        ox = 0.0
        oy = 0.0
        oz = 0.0
        ex = 0.0
        ey = 0.0
        ez = 0.0
        wx = 0.0
        wy = 0.0
        wz = 0.0
        for j in range(n):
            rx = r0[j + 1, 0] - r0[j, 0]
            ry = r0[j + 1, 1] - r0[j, 1]
            rz = r0[j + 1, 2] - r0[j, 2]
            yx = oy * rz - oz * ry
            yy = oz * rx - ox * rz
            yz = ox * ry - oy * rx
            wx += ey * rz - ez * ry + oy * yz - oz * yy
            wy += ez * rx - ex * rz + oz * yx - ox * yz
            wz += ex * ry - ey * rx + ox * yy - oy * yx
            ux = e0[j, 0] * pd[j]
            uy = e0[j, 1] * pd[j]
            uz = e0[j, 2] * pd[j]
            if P[lo + L_JT + j] == JOINT_P:
                wx += 2.0 * (oy * uz - oz * uy)
                wy += 2.0 * (oz * ux - ox * uz)
                wz += 2.0 * (ox * uy - oy * ux)
            else:
                ex += oy * uz - oz * uy
                ey += oz * ux - ox * uz
                ez += ox * uy - oy * ux
                ox += ux
                oy += uy
                oz += uz
        lx = lL0[0]
        ly = lL0[1]
        lz = lL0[2]
        yx = oy * lz - oz * ly
        yy = oz * lx - ox * lz
        yz = ox * ly - oy * lx
        wLx = wx + ey * lz - ez * ly + oy * yz - oz * yy
        wLy = wy + ez * lx - ex * lz + oz * yx - ox * yz
        wLz = wz + ex * ly - ey * lx + ox * yy - oy * yx
        # ring: alpha_C^T (om_C x (om_C x l_C))
        zx = wC[1] * lc2 - wC[2] * lc1
        zy = wC[2] * lc0 - wC[0] * lc2
        zz = wC[0] * lc1 - wC[1] * lc0
        qx = wC[1] * zz - wC[2] * zy
        qy = wC[2] * zx - wC[0] * zz
        qz = wC[0] * zy - wC[1] * zx
        cv[0] = aC[0, 0] * qx + aC[1, 0] * qy + aC[2, 0] * qz - wLx
        cv[1] = aC[0, 1] * qx + aC[1, 1] * qy + aC[2, 1] * qz - wLy
        cv[2] = aC[0, 2] * qx + aC[1, 2] * qy + aC[2, 2] * qz - wLz
        if m == 4:
            # ndot = (om_n x e1) x e2 + e1 x (om_C0 x e2)
            ax_ = oy * e1[2] - oz * e1[1]
            ay_ = oz * e1[0] - ox * e1[2]
            az_ = ox * e1[1] - oy * e1[0]
            n1x = ay_ * e2[2] - az_ * e2[1]
            n1y = az_ * e2[0] - ax_ * e2[2]
            n1z = ax_ * e2[1] - ay_ * e2[0]
            bx_ = wC0y * e2[2] - wC0z * e2[1]
            by_ = wC0z * e2[0] - wC0x * e2[2]
            bz_ = wC0x * e2[1] - wC0y * e2[0]
            ndx = n1x + e1[1] * bz_ - e1[2] * by_
            ndy = n1y + e1[2] * bx_ - e1[0] * bz_
            ndz = n1z + e1[0] * by_ - e1[1] * bx_
            cv[3] = -(nR[0] * ex + nR[1] * ey + nR[2] * ez) - (
                ndx * (ox - wC0x) + ndy * (oy - wC0y) + ndz * (oz - wC0z))
        for i in range(m):
            h[i] = cv[i]
        _lu_solve(LU, piv, m, h)
        # 5. devices on the device joint
        dj = int(P[lo + L_DJ])
        s = p[dj]
        v = pd[dj]
        strokeO[k] = s
        srateO[k] = v
        Qt = leg_devices(P, lo, s, v, cmd[k, 0], cmd[k, 1], dfO[k], dpO[k])
        # 6. CRBA and bias
        Ak = AA[k]
        bk = bA[k]
        leg_crba(P, lo, beta, rloc, Ak, tmp)
        leg_bias(P, lo, beta, rloc, pd, om0, eps0, w0g, dj, Qt, bk, fn0A[k], mn0A[k],
                 oabA[k], eabA[k], wabA[k], tmp)
        # 7. reduction: A* += H^T A H;  b* += H^T (b - A h)
        if m == 4:
            _reduce(4, Ak, H, h, bk, AH, As, bs)
        else:
            _reduce(m, Ak, H, h, bk, AH, As, bs)
    # ---- ring equations (frame 0 translation at the CoM, frame C rotation)
    mC = P[H_MC]
    IC = P[H_IC:H_IC + 9]
    # transport acceleration of the CoM: a0 - g + eps0 x r + om0 x (om0 x r) + 2 om0 x v
    yx = om0[1] * rC[2] - om0[2] * rC[1]
    yy = om0[2] * rC[0] - om0[0] * rC[2]
    yz = om0[0] * rC[1] - om0[1] * rC[0]
    atx = w0g0 + eps0[1] * rC[2] - eps0[2] * rC[1] + om0[1] * yz - om0[2] * yy + 2.0 * (om0[1] * vC[2] - om0[2] * vC[1])
    aty = w0g1 + eps0[2] * rC[0] - eps0[0] * rC[2] + om0[2] * yx - om0[0] * yz + 2.0 * (om0[2] * vC[0] - om0[0] * vC[2])
    atz = w0g2 + eps0[0] * rC[1] - eps0[1] * rC[0] + om0[0] * yy - om0[1] * yx + 2.0 * (om0[0] * vC[1] - om0[1] * vC[0])
    fE = contact_wrench
    for a in range(3):
        bs[a] += (aC[0, a] * fE[0] + aC[1, a] * fE[1] + aC[2, a] * fE[2])
    bs[0] -= mC * atx
    bs[1] -= mC * aty
    bs[2] -= mC * atz
    # om0 in C, absolute Omega, eps0 in C
    o0c0 = aC[0, 0] * om0[0] + aC[0, 1] * om0[1] + aC[0, 2] * om0[2]
    o0c1 = aC[1, 0] * om0[0] + aC[1, 1] * om0[1] + aC[1, 2] * om0[2]
    o0c2 = aC[2, 0] * om0[0] + aC[2, 1] * om0[1] + aC[2, 2] * om0[2]
    Ox = o0c0 + wC[0]
    Oy = o0c1 + wC[1]
    Oz = o0c2 + wC[2]
    etx = aC[0, 0] * eps0[0] + aC[0, 1] * eps0[1] + aC[0, 2] * eps0[2] + o0c1 * wC[2] - o0c2 * wC[1]
    ety = aC[1, 0] * eps0[0] + aC[1, 1] * eps0[1] + aC[1, 2] * eps0[2] + o0c2 * wC[0] - o0c0 * wC[2]
    etz = aC[2, 0] * eps0[0] + aC[2, 1] * eps0[1] + aC[2, 2] * eps0[2] + o0c0 * wC[1] - o0c1 * wC[0]
    IOx = IC[0] * Ox + IC[1] * Oy + IC[2] * Oz
    IOy = IC[3] * Ox + IC[4] * Oy + IC[5] * Oz
    IOz = IC[6] * Ox + IC[7] * Oy + IC[8] * Oz
    bs[3] += fE[3] - (IC[0] * etx + IC[1] * ety + IC[2] * etz) - (Oy * IOz - Oz * IOy)
    bs[4] += fE[4] - (IC[3] * etx + IC[4] * ety + IC[5] * etz) - (Oz * IOx - Ox * IOz)
    bs[5] += fE[5] - (IC[6] * etx + IC[7] * ety + IC[8] * etz) - (Ox * IOy - Oy * IOx)
    for a in range(3):
        As[a, a] += mC
        for b in range(a, 3):
            As[3 + a, 3 + b] += IC[3 * a + b]
    # ---- Cholesky (upper triangle of As holds A*; L into the lower triangle incl. diagonal)
    for j in range(6):
        d = As[j, j]
        for q in range(j):
            d -= As[j, q] * As[j, q]
        if not d > PIVOT_TOL * As[j, j]:
            return _fail(out, P, STATUS_SINGULAR, -1)
        d = math.sqrt(d)
        As[j, j] = d
        for i in range(j + 1, 6):
            s_ = As[j, i]
            for q in range(j):
                s_ -= As[i, q] * As[j, q]
            As[i, j] = s_ / d
    for i in range(6):
        s_ = bs[i]
        for q in range(i):
            s_ -= As[i, q] * udot[q]
        udot[i] = s_ / As[i, i]
    for i in range(5, -1, -1):
        s_ = udot[i]
        for q in range(i + 1, 6):
            s_ -= As[q, i] * udot[q]
        udot[i] = s_ / As[i, i]
    # ---- dependent accelerations, multipliers, base wrench (§6)
    for a in range(6):
        bw[a] = 0.0
    for k in range(nl):
        lo = HDR + k * LP
        n = int(P[lo + L_N])
        m = n
        H = HA[k]
        pdd = pddO[k]
        lam = lamO[k]
        Ak = AA[k]
        bk = bA[k]
        beta = betaA[k]
        rloc = rlocA[k]
        tau = tauA[k]
        fn0 = fn0A[k]
        mn0 = mn0A[k]
        for i in range(4):
            pdd[i] = 0.0
            lam[i] = 0.0
        for i in range(m):
            acc = hA[k, i]
            for col in range(6):
                acc += H[i, col] * udot[col]
            pdd[i] = acc
        for i in range(m):
            acc = bk[i]
            for j in range(m):
                acc -= Ak[i, j] * pdd[j]
            lam[i] = acc
        if m == 4:
            _lu_solve_t(LUA[k], pivA[k], 4, lam)
        else:
            _lu_solve_t(LUA[k], pivA[k], m, lam)
        # forward: p'' parts of the body accelerations (body frames) -> d'Alembert f^I, m^I
        for b_ in range(n):
            ax = int(P[lo + L_JA + b_])
            if b_ == 0:
                for a in range(3):
                    tmp[b_, a] = 0.0
                    tmp[4 + b_, a] = 0.0
            else:
                _propagate(beta, rloc, b_, tmp)
            if P[lo + L_JT + b_] == JOINT_P:
                tmp[b_, ax] += pdd[b_]
            else:
                tmp[4 + b_, ax] += pdd[b_]
        for b_ in range(n):
            mm = P[lo + L_BM + b_]
            c = P[lo + L_BC + 3 * b_: lo + L_BC + 3 * b_ + 3]
            I = P[lo + L_BI + 9 * b_: lo + L_BI + 9 * b_ + 9]
            v0 = tmp[b_, 0]
            v1 = tmp[b_, 1]
            v2 = tmp[b_, 2]
            w0 = tmp[4 + b_, 0]
            w1 = tmp[4 + b_, 1]
            w2 = tmp[4 + b_, 2]
            tmp[8 + b_, 0] = fn0[b_, 0] - mm * v0 - (w1 * c[2] - w2 * c[1])
            tmp[8 + b_, 1] = fn0[b_, 1] - mm * v1 - (w2 * c[0] - w0 * c[2])
            tmp[8 + b_, 2] = fn0[b_, 2] - mm * v2 - (w0 * c[1] - w1 * c[0])
            tmp[12 + b_, 0] = mn0[b_, 0] - (I[0] * w0 + I[1] * w1 + I[2] * w2) - (c[1] * v2 - c[2] * v1)
            tmp[12 + b_, 1] = mn0[b_, 1] - (I[3] * w0 + I[4] * w1 + I[5] * w2) - (c[2] * v0 - c[0] * v2)
            tmp[12 + b_, 2] = mn0[b_, 2] - (I[6] * w0 + I[7] * w1 + I[8] * w2) - (c[0] * v1 - c[1] * v0)
        # ring reaction on the last body: f = -tau_n lam[0:3]; m = l^L x f - lam3 tau_n n_R
        nb = n - 1
        fx = -(tau[n, 0, 0] * lam[0] + tau[n, 0, 1] * lam[1] + tau[n, 0, 2] * lam[2])
        fy = -(tau[n, 1, 0] * lam[0] + tau[n, 1, 1] * lam[1] + tau[n, 1, 2] * lam[2])
        fz = -(tau[n, 2, 0] * lam[0] + tau[n, 2, 1] * lam[1] + tau[n, 2, 2] * lam[2])
        Ll = P[lo + L_LAST]
        tmp[8 + nb, 0] += fx
        tmp[8 + nb, 1] += fy
        tmp[8 + nb, 2] += fz
        tmp[12 + nb, 1] += -Ll * fz
        tmp[12 + nb, 2] += Ll * fy
        if m == 4:
            nR = nRA[k]
            for a in range(3):
                tmp[12 + nb, a] -= lam[3] * (tau[n, a, 0] * nR[0] + tau[n, a, 1] * nR[1] + tau[n, a, 2] * nR[2])
        # backward: the load body b puts on its predecessor = f^I + S, carried down
        for b_ in range(n - 1, 0, -1):
            _carry(beta, rloc, b_, tmp, 8 + b_, 12 + b_, 8 + b_ - 1, 12 + b_ - 1)
        # body 0 -> base (frame 0, about O_0): rows 14/15 of tmp are free only if n < 3 ...
        # so accumulate directly into bw.
        _carry_to(beta, rloc, 0, tmp[8], tmp[12], bw[0:3], bw[3:6])
    # ---- ring state derivative
    for a in range(3):
        xdot[a] = vC[a]
        xdot[6 + a] = udot[a]
        xdot[9 + a] = udot[3 + a]
    th = ring_state[4]
    ph = ring_state[5]
    cth = math.cos(th)
    if abs(cth) < 1e-9:
        return _fail(out, P, STATUS_SINGULAR, -1)
    cph = math.cos(ph)
    sph = math.sin(ph)
    t = cph * wC[1] - sph * wC[2]
    xdot[3] = t / cth
    xdot[4] = sph * wC[1] + cph * wC[2]
    xdot[5] = wC[0] - math.tan(th) * t
    return STATUS_OK


@njit(**_JIT)
def damping_jacobian(params, workspace, out, G):
    """G = d(u')/du of the devices' rate dependence at the last evaluation (its workspace and
    ``out`` must be current): A*^-1 sum_k (dQ_k/dv) h_k h_k^T, with u = [v_C, omega_C] (ring_state
    6..11), h_k the device joint's row of leg k's H (p'_dj = h_k . u), dQ/dv from
    ``devices.rate_slope`` and A* the reduced mass matrix (its Cholesky factor, as the evaluation
    left it). The configuration is held: the part of the Jacobian a Rosenbrock-W step treats
    implicitly (sim_stand.digital).

    Parameters
    ----------
    params : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (``layout``).
    workspace : float64[ws_size(n_legs)]
        The workspace of the last :func:`mechanism_derivatives` call: H, the Cholesky factor of
        A*, the drive commands. Read only.
    out : float64[out_size(n_legs)]
        The outputs of that call: strokes and stroke rates are read.
    G : float64[6, 6]
        Output: d(u')/du (1/s).
    """
    P = params
    W = workspace
    nl = int(P[H_NLEGS])
    HA = W[int(P[H_WS + 10]): int(P[H_WS + 10]) + nl * 24].reshape((nl, 4, 6))
    As = W[int(P[H_WS + 26]): int(P[H_WS + 26]) + 36].reshape((6, 6))
    cmd = W[int(P[H_WS + 0]): int(P[H_WS + 0]) + nl * 2].reshape((nl, 2))
    stroke = out[int(P[H_OUT + 7]): int(P[H_OUT + 7]) + nl]
    srate = out[int(P[H_OUT + 8]): int(P[H_OUT + 8]) + nl]
    for i in range(6):
        for j in range(6):
            G[i, j] = 0.0
    for k in range(nl):
        lo = HDR + k * LP
        dj = int(P[lo + L_DJ])
        c = dv.rate_slope(P, lo, stroke[k], srate[k], cmd[k, 0], cmd[k, 1])
        for i in range(6):
            hi = c * HA[k, dj, i]
            for j in range(6):
                G[i, j] += hi * HA[k, dj, j]
    # A*^-1 C by the Cholesky factor L (lower triangle of As, diagonal included)
    for col in range(6):
        for i in range(6):
            s_ = G[i, col]
            for q in range(i):
                s_ -= As[i, q] * G[q, col]
            G[i, col] = s_ / As[i, i]
        for i in range(5, -1, -1):
            s_ = G[i, col]
            for q in range(i + 1, 6):
                s_ -= As[q, i] * G[q, col]
            G[i, col] = s_ / As[i, i]


@njit(**_JIT)
def mechanism_step_rk4(params, workspace, ring_state, base_motion, contact_wrench, dt, out,
                       k_acc, x_tmp):
    """One classical RK4 step of the ring's 12-state in place (base motion and contact wrench
    held).  ``out`` holds the last stage's evaluation (at the step's end time, from the third
stage's state; outputs for logging);
    k_acc (12), x_tmp (12): scratch.  Returns the worst status code met.

    Parameters
    ----------
    params, workspace : float64[:]
        The packed parameters and the workspace with the drive commands, as for
        :func:`mechanism_derivatives`.
    ring_state : float64[12]
        The ring's state (module docstring), advanced by ``dt`` in place.
    base_motion, contact_wrench : float64[:]
        The base motion and the contact wrench, held over the step (module docstring).
    dt : float
        Step (s).
    out : float64[out_size(n_legs)]
        Output: the evaluation's outputs (``layout.OutView``). Every stage writes them, so after
        a successful step they are the fourth stage's (at the start state plus ``dt k3``).
    k_acc : float64[12]
        Scratch: the weighted sum of the stage derivatives.
    x_tmp : float64[12]
        Scratch: the stage state.
    """
    st = mechanism_derivatives(params, workspace, ring_state, base_motion, contact_wrench, out)
    if st != STATUS_OK:
        return st
    # stage outputs are written to out; keep the first stage in k_acc and recompute at the end
    for i in range(12):
        k_acc[i] = out[i]
        x_tmp[i] = ring_state[i] + 0.5 * dt * out[i]
    # a second out-sized buffer is not available; stage evaluations reuse `out`
    st = mechanism_derivatives(params, workspace, x_tmp, base_motion, contact_wrench, out)
    if st != STATUS_OK:
        return st
    for i in range(12):
        k_acc[i] += 2.0 * out[i]
        x_tmp[i] = ring_state[i] + 0.5 * dt * out[i]
    st = mechanism_derivatives(params, workspace, x_tmp, base_motion, contact_wrench, out)
    if st != STATUS_OK:
        return st
    for i in range(12):
        k_acc[i] += 2.0 * out[i]
        x_tmp[i] = ring_state[i] + dt * out[i]
    st = mechanism_derivatives(params, workspace, x_tmp, base_motion, contact_wrench, out)
    if st != STATUS_OK:
        return st
    for i in range(12):
        ring_state[i] += dt / 6.0 * (k_acc[i] + out[i])
    return STATUS_OK
