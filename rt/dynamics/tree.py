"""Compiled dynamics of a tree-structured mechanism on a moving base (seed 000 §2.3-2.11;
docs/models/tree.md): kinematics, the modified CRBA, the generalized forces with the base's
transport motion, the wrench on the base, and the ABA for open chains.

Every kernel is ``algorithm(params, work, ...)`` over the packed arrays of
:class:`rt.dynamics.tree_model.TreeModel` (``params`` immutable, ``work`` the caller's data),
``@njit(**rt.jit.KERNEL)`` and allocation-free: each may be called in the real-time loop once the
caller has warmed it up.

Frames and conventions (seed 000, digest §0/§2):

* body quantities are in the body frame ``j``; base quantities in frame 0 (the mechanism base);
* a motion vector ``a = [w; eps]`` is the *classical* linear acceleration of the frame origin and
  the angular acceleration; a wrench ``[f; m]`` has ``m`` about the frame origin;
* ``a_0`` (the base's acceleration) is in frame 0 and carries gravity as ``w_0 = a_0 - g_0``
  (seed 000 §2.5: the free-fall trick; pass ``g_0 = 0`` in orbit);
* ``omega_0`` is the base's absolute angular velocity (frame 0); every ``om_j`` is then absolute;
* ``g`` (n) holds the generalized active joint forces (springs, dampers, brakes, drives): the
  force along / moment about joint j's axis that the predecessor applies to body j;
* ``fext`` (n x 6) holds the external wrench on each body at O_j, frame j (contact wrenches).

Evaluation order (§2.11): :func:`tree_kinematics` (beta, r, B, Phi, omega, h, and the placement
relative to the base), :func:`tree_body_bias` (s_j), then either :func:`tree_aba` (open chains:
accelerations and the base wrench in three passes) or :func:`tree_crba` + :func:`tree_bias` +
:func:`tree_solve` + :func:`tree_base_wrench` (§2.7-2.9, for stiff chains and as the oracle of
each other).
"""
from __future__ import annotations

import math

from numba import njit

from rt.jit import KERNEL
from rt.dynamics.tree_model import H_N, H_P, H_W, JOINT_R


# ------------------------------------------------------------------ views
@njit(inline="always", **KERNEL)
def _pv(P, i):
    return int(P[H_P + i])


@njit(inline="always", **KERNEL)
def _wv(P, i):
    return int(P[H_W + i])


@njit(inline="always", **KERNEL)
def _model(P):
    n = int(P[H_N])
    parent = P[_pv(P, 0):_pv(P, 0) + n]
    jtype = P[_pv(P, 1):_pv(P, 1) + n]
    axis = P[_pv(P, 2):_pv(P, 2) + n]
    l = P[_pv(P, 3):_pv(P, 3) + 3 * n].reshape((n, 3))
    gamma = P[_pv(P, 4):_pv(P, 4) + 9 * n].reshape((n, 3, 3))
    M = P[_pv(P, 5):_pv(P, 5) + 36 * n].reshape((n, 6, 6))
    c = P[_pv(P, 6):_pv(P, 6) + 3 * n].reshape((n, 3))
    RB = P[_pv(P, 7):_pv(P, 7) + n * n].reshape((n, n))
    return n, parent, jtype, axis, l, gamma, M, c, RB


@njit(inline="always", **KERNEL)
def _w3(P, W, i, n):
    return W[_wv(P, i):_wv(P, i) + 3 * n].reshape((n, 3))


@njit(inline="always", **KERNEL)
def _w6(P, W, i, n):
    return W[_wv(P, i):_wv(P, i) + 6 * n].reshape((n, 6))


@njit(inline="always", **KERNEL)
def _w33(P, W, i, n):
    return W[_wv(P, i):_wv(P, i) + 9 * n].reshape((n, 3, 3))


@njit(inline="always", **KERNEL)
def _w66(P, W, i, n):
    return W[_wv(P, i):_wv(P, i) + 36 * n].reshape((n, 6, 6))


# work block indices (tree_model._WORK_BLOCKS order)
_BETA, _R, _B, _PHI, _OM, _H, _S, _TAU, _O, _VR, _WR, _A, _F, _MH, _SH, _U, _AI, _N, _NV, _TMP = range(20)


# ------------------------------------------------------------------ small spatial helpers
@njit(inline="always", **KERNEL)
def _bmul(B, x, out):
    """out = B x (6x6 times 6); out may not alias x."""
    for i in range(6):
        s = 0.0
        for k in range(6):
            s += B[i, k] * x[k]
        out[i] = s


@njit(inline="always", **KERNEL)
def _btmul_add(B, f, out, sign):
    """out += sign * B^T f."""
    for i in range(6):
        s = 0.0
        for k in range(6):
            s += B[k, i] * f[k]
        out[i] += sign * s


@njit(inline="always", **KERNEL)
def _carry(B, parent, a0, a, j, out):
    """out = B_j a_p(j): the predecessor's acceleration (the base's ``a0`` for p(j) = -1) seen at
    O_j, frame j (seed 000 eq. 1 without Phi p'' and h)."""
    pj = int(parent[j])
    if pj < 0:
        _bmul(B[j], a0, out)
    else:
        _bmul(B[j], a[pj], out)


@njit(inline="always", **KERNEL)
def _elementary(k, q, out):
    """alpha^k(q): the frame rotation by q about axis k (digest §0), R_new_old."""
    c = math.cos(q)
    s = math.sin(q)
    for i in range(3):
        for j in range(3):
            out[i, j] = 0.0
    i1 = (k + 1) % 3
    i2 = (k + 2) % 3
    out[k, k] = 1.0
    out[i1, i1] = c
    out[i2, i2] = c
    out[i1, i2] = s
    out[i2, i1] = -s


# ------------------------------------------------------------------ kinematics
@njit(**KERNEL)
def tree_kinematics(P, W, p, pd, omega0):
    """Pass 1 (seed 000 §2.3, eq. 1; §2.5): for every joint beta_j, r_{p(j),j}, B_j, Phi_j, the
    absolute angular velocity om_j (from ``omega0``, frame 0), the velocity-product acceleration
    h_j = [beta (om_p x (om_p x r)) + 2 omb x v_rel; omb x om_rel] with omb = beta om_p
    (digest, reconstructed), and the placement relative to the base: tau_j (0 -> j), O_j, the
    velocity of O_j and the angular velocity of j relative to the base (frame 0; seed 002 §4.6)."""
    n, parent, jtype, axis, l, gamma, M, c, RB = _model(P)
    beta = _w33(P, W, _BETA, n)
    r = _w3(P, W, _R, n)
    B = _w66(P, W, _B, n)
    phi = _w6(P, W, _PHI, n)
    om = _w3(P, W, _OM, n)
    h = _w6(P, W, _H, n)
    tau = _w33(P, W, _TAU, n)
    o = _w3(P, W, _O, n)
    vr = _w3(P, W, _VR, n)
    wr = _w3(P, W, _WR, n)
    al = _w66(P, W, _TMP, 8)[0, 0:3, 0:3]
    for j in range(n):
        pj = int(parent[j])
        k = int(axis[j])
        rev = jtype[j] == JOINT_R
        # beta_j = alpha_j gamma_j, r = l + gamma^T t_j
        if rev:
            _elementary(k, p[j], al)
            for a in range(3):
                for b in range(3):
                    beta[j, a, b] = al[a, 0] * gamma[j, 0, b] + al[a, 1] * gamma[j, 1, b] + al[a, 2] * gamma[j, 2, b]
                r[j, a] = l[j, a]
        else:
            for a in range(3):
                for b in range(3):
                    beta[j, a, b] = gamma[j, a, b]
                r[j, a] = l[j, a] + gamma[j, k, a] * p[j]
        # B = [beta, -beta r~; 0, beta]
        rx, ry, rz = r[j, 0], r[j, 1], r[j, 2]
        for a in range(3):
            b0, b1, b2 = beta[j, a, 0], beta[j, a, 1], beta[j, a, 2]
            for b in range(3):
                B[j, a, b] = beta[j, a, b]
                B[j, 3 + a, 3 + b] = beta[j, a, b]
                B[j, 3 + a, b] = 0.0
            # -(beta r~)[a, :]
            B[j, a, 3] = -(b1 * rz - b2 * ry)
            B[j, a, 4] = -(b2 * rx - b0 * rz)
            B[j, a, 5] = -(b0 * ry - b1 * rx)
        for a in range(6):
            phi[j, a] = 0.0
        phi[j, k + 3 if rev else k] = 1.0
        # angular velocities
        if pj < 0:
            wpx, wpy, wpz = omega0[0], omega0[1], omega0[2]
        else:
            wpx, wpy, wpz = om[pj, 0], om[pj, 1], om[pj, 2]
        obx = beta[j, 0, 0] * wpx + beta[j, 0, 1] * wpy + beta[j, 0, 2] * wpz
        oby = beta[j, 1, 0] * wpx + beta[j, 1, 1] * wpy + beta[j, 1, 2] * wpz
        obz = beta[j, 2, 0] * wpx + beta[j, 2, 1] * wpy + beta[j, 2, 2] * wpz
        om[j, 0], om[j, 1], om[j, 2] = obx, oby, obz
        if rev:
            om[j, k] += pd[j]
        # h: beta (w x (w x r)) + 2 omb x v_rel ; omb x w_rel
        cx = wpy * rz - wpz * ry
        cy = wpz * rx - wpx * rz
        cz = wpx * ry - wpy * rx
        qx = wpy * cz - wpz * cy
        qy = wpz * cx - wpx * cz
        qz = wpx * cy - wpy * cx
        for a in range(3):
            h[j, a] = beta[j, a, 0] * qx + beta[j, a, 1] * qy + beta[j, a, 2] * qz
            h[j, 3 + a] = 0.0
        ex = 1.0 if k == 0 else 0.0
        ey = 1.0 if k == 1 else 0.0
        ez = 1.0 if k == 2 else 0.0
        ux = (oby * ez - obz * ey) * pd[j]     # omb x e pd
        uy = (obz * ex - obx * ez) * pd[j]
        uz = (obx * ey - oby * ex) * pd[j]
        if rev:
            h[j, 3], h[j, 4], h[j, 5] = ux, uy, uz
        else:
            h[j, 0] += 2.0 * ux
            h[j, 1] += 2.0 * uy
            h[j, 2] += 2.0 * uz
        # placement relative to the base (frame 0)
        for a in range(3):
            for b in range(3):
                if pj < 0:
                    tau[j, a, b] = beta[j, a, b]
                else:
                    tau[j, a, b] = (beta[j, a, 0] * tau[pj, 0, b] + beta[j, a, 1] * tau[pj, 1, b]
                                    + beta[j, a, 2] * tau[pj, 2, b])
        for a in range(3):
            if pj < 0:
                o[j, a] = r[j, a]
            else:
                o[j, a] = o[pj, a] + tau[pj, 0, a] * rx + tau[pj, 1, a] * ry + tau[pj, 2, a] * rz
        if pj < 0:
            for a in range(3):
                wr[j, a] = 0.0
                vr[j, a] = 0.0
        else:
            dx = o[j, 0] - o[pj, 0]
            dy = o[j, 1] - o[pj, 1]
            dz = o[j, 2] - o[pj, 2]
            wr[j, 0] = wr[pj, 0]
            wr[j, 1] = wr[pj, 1]
            wr[j, 2] = wr[pj, 2]
            vr[j, 0] = vr[pj, 0] + wr[pj, 1] * dz - wr[pj, 2] * dy
            vr[j, 1] = vr[pj, 1] + wr[pj, 2] * dx - wr[pj, 0] * dz
            vr[j, 2] = vr[pj, 2] + wr[pj, 0] * dy - wr[pj, 1] * dx
        for a in range(3):
            if rev:
                wr[j, a] += tau[j, k, a] * pd[j]
            else:
                vr[j, a] += tau[j, k, a] * pd[j]


@njit(**KERNEL)
def tree_frame_state(P, W, j, c, pose0, twist0):
    """A frame E fixed on body ``j`` at ``c`` (frame j) with the body's axes, relative to the base
    after :func:`tree_kinematics`: ``pose0 = [o_E (3), R_0E (9, row-major)]`` and ``twist0 =
    [v_E; omega_j]`` (velocity of E's origin and angular velocity relative to the base, frame 0;
    seed 002 §4.6 r_E^(0), v_E^(0), omega_j^(0))."""
    n = int(P[H_N])
    tau = _w33(P, W, _TAU, n)
    o = _w3(P, W, _O, n)
    vr = _w3(P, W, _VR, n)
    wr = _w3(P, W, _WR, n)
    d0 = tau[j, 0, 0] * c[0] + tau[j, 1, 0] * c[1] + tau[j, 2, 0] * c[2]
    d1 = tau[j, 0, 1] * c[0] + tau[j, 1, 1] * c[1] + tau[j, 2, 1] * c[2]
    d2 = tau[j, 0, 2] * c[0] + tau[j, 1, 2] * c[1] + tau[j, 2, 2] * c[2]
    w0, w1, w2 = wr[j, 0], wr[j, 1], wr[j, 2]
    pose0[0] = o[j, 0] + d0
    pose0[1] = o[j, 1] + d1
    pose0[2] = o[j, 2] + d2
    for a in range(3):
        for b in range(3):
            pose0[3 + 3 * a + b] = tau[j, b, a]
    twist0[0] = vr[j, 0] + w1 * d2 - w2 * d1
    twist0[1] = vr[j, 1] + w2 * d0 - w0 * d2
    twist0[2] = vr[j, 2] + w0 * d1 - w1 * d0
    twist0[3] = w0
    twist0[4] = w1
    twist0[5] = w2


@njit(**KERNEL)
def tree_body_bias(P, W, fext):
    """s_j = [f_E - om x (om x c); m_E - om x (I_O om)] (digest §2.4, reconstructed), c = m d;
    ``fext[j]`` is the external wrench at O_j, frame j. Needs :func:`tree_kinematics`."""
    n, parent, jtype, axis, l, gamma, M, c, RB = _model(P)
    om = _w3(P, W, _OM, n)
    s = _w6(P, W, _S, n)
    for j in range(n):
        wx, wy, wz = om[j, 0], om[j, 1], om[j, 2]
        cx, cy, cz = c[j, 0], c[j, 1], c[j, 2]
        tx = wy * cz - wz * cy
        ty = wz * cx - wx * cz
        tz = wx * cy - wy * cx
        s[j, 0] = fext[j, 0] - (wy * tz - wz * ty)
        s[j, 1] = fext[j, 1] - (wz * tx - wx * tz)
        s[j, 2] = fext[j, 2] - (wx * ty - wy * tx)
        Ix = M[j, 3, 3] * wx + M[j, 3, 4] * wy + M[j, 3, 5] * wz
        Iy = M[j, 4, 3] * wx + M[j, 4, 4] * wy + M[j, 4, 5] * wz
        Iz = M[j, 5, 3] * wx + M[j, 5, 4] * wy + M[j, 5, 5] * wz
        s[j, 3] = fext[j, 3] - (wy * Iz - wz * Iy)
        s[j, 4] = fext[j, 4] - (wz * Ix - wx * Iz)
        s[j, 5] = fext[j, 5] - (wx * Iy - wy * Ix)


# ------------------------------------------------------------------ CRBA, b, solve, base wrench
@njit(**KERNEL)
def tree_crba(P, W, A):
    """The inertia matrix A of A p'' = b (seed 000 §2.7, modified CRBA: column j from a unit
    p''_j with zero velocities, propagated to the subtree of j through B, the wrenches carried back
    through B^T; entries with neither body in the other's subtree are 0). Needs
    :func:`tree_kinematics`."""
    n, parent, jtype, axis, l, gamma, M, c, RB = _model(P)
    B = _w66(P, W, _B, n)
    phi = _w6(P, W, _PHI, n)
    a = _w6(P, W, _A, n)
    f = _w6(P, W, _F, n)
    for i in range(n):
        for j in range(n):
            A[i, j] = 0.0
    for j in range(n):
        for i in range(n):
            for q in range(6):
                f[i, q] = 0.0
        for q in range(6):
            a[j, q] = phi[j, q]
        _bmul(M[j], a[j], f[j])
        for i in range(j + 1, n):
            if RB[i, j] != 0.0:
                _bmul(B[i], a[int(parent[i])], a[i])
                _bmul(M[i], a[i], f[i])
        for i in range(n - 1, j - 1, -1):
            if RB[i, j] != 0.0:
                v = 0.0
                for q in range(6):
                    v += phi[i, q] * f[i, q]
                A[i, j] = v
                A[j, i] = v
                if i > j:
                    _btmul_add(B[i], f[i], f[int(parent[i])], 1.0)


@njit(**KERNEL)
def tree_bias(P, W, a0, g, b):
    """Generalized forces b of A p'' = b (seed 000 §2.8): the accelerations at p'' = 0 from the
    base's ``a0`` (frame 0, [w_0 - g_0; eps_0]), F_j = M_j a_j - s_j carried to the predecessors,
    b_j = g_j - Phi_j . F_j. Leaves F (the joint wrenches at p'' = 0) in the work's f block.
    Needs :func:`tree_kinematics` and :func:`tree_body_bias`."""
    n, parent, jtype, axis, l, gamma, M, c, RB = _model(P)
    B = _w66(P, W, _B, n)
    phi = _w6(P, W, _PHI, n)
    h = _w6(P, W, _H, n)
    s = _w6(P, W, _S, n)
    a = _w6(P, W, _A, n)
    f = _w6(P, W, _F, n)
    for j in range(n):
        _carry(B, parent, a0, a, j, a[j])
        for q in range(6):
            a[j, q] += h[j, q]
        _bmul(M[j], a[j], f[j])
        for q in range(6):
            f[j, q] -= s[j, q]
    for j in range(n - 1, -1, -1):
        v = 0.0
        for q in range(6):
            v += phi[j, q] * f[j, q]
        b[j] = g[j] - v
        pj = int(parent[j])
        if pj >= 0:
            _btmul_add(B[j], f[j], f[pj], 1.0)


@njit(**KERNEL)
def tree_solve(A, b, x, n):
    """x = A^-1 b by Cholesky (A symmetric positive definite); A is overwritten by its factor.
    Returns False (x untouched) if a pivot is not positive."""
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            return False
        d = math.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            v = A[i, j]
            for k in range(j):
                v -= A[i, k] * A[j, k]
            A[i, j] = v / d
    for i in range(n):
        v = b[i]
        for k in range(i):
            v -= A[i, k] * x[k]
        x[i] = v / A[i, i]
    for i in range(n - 1, -1, -1):
        v = x[i]
        for k in range(i + 1, n):
            v -= A[k, i] * x[k]
        x[i] = v / A[i, i]
    return True


@njit(**KERNEL)
def tree_base_wrench(P, W, a0, g, pdd, S0):
    """The wrench of the mechanism on its base, S0 = [f; m about O_0], frame 0 (seed 000 §2.9):
    forward a_j = B_j a_p + Phi_j p''_j + h_j, d'Alembert fI_j = -M_j a_j + s_j; backward the wrench
    body j puts on its predecessor X = -Q_j + E_j (fI_j + S_j), with Q_j = Phi_j g_j and the
    projector E_j that removes the joint's free direction (a prismatic joint passes the force
    across its axis and every moment; a revolute one every force and the moment across its
    axis), S_p += B_j^T X. Needs :func:`tree_kinematics` and :func:`tree_body_bias`."""
    n, parent, jtype, axis, l, gamma, M, c, RB = _model(P)
    B = _w66(P, W, _B, n)
    phi = _w6(P, W, _PHI, n)
    h = _w6(P, W, _H, n)
    s = _w6(P, W, _S, n)
    a = _w6(P, W, _A, n)
    S = _w6(P, W, _F, n)
    X = _w66(P, W, _TMP, 8)[0, 0]
    for q in range(6):
        S0[q] = 0.0
    for j in range(n):
        _carry(B, parent, a0, a, j, a[j])
        for q in range(6):
            a[j, q] += h[j, q] + phi[j, q] * pdd[j]
            S[j, q] = 0.0
    for j in range(n - 1, -1, -1):
        _bmul(M[j], a[j], X)
        for q in range(6):
            X[q] = s[j, q] - X[q] + S[j, q]          # fI + S
        free = int(axis[j]) + (3 if jtype[j] == JOINT_R else 0)
        X[free] = -g[j]                              # -Q + E (fI + S)
        pj = int(parent[j])
        if pj < 0:
            _btmul_add(B[j], X, S0, 1.0)
        else:
            _btmul_add(B[j], X, S[pj], 1.0)


# ------------------------------------------------------------------ ABA
@njit(**KERNEL)
def tree_aba(P, W, a0, g, pdd, S0):
    """Articulated-body algorithm for open chains on the moving base (seed 000 §2.10, root n_R =
    the base): pass 2 (backward) the articulated inertias Mh_j = M_j + sum B^T N B and biases,
    U = Mh Phi, aI = Phi^T U, N = Mh - U U^T / aI, n = N h + U (g + Phi^T sh) / aI - sh; pass 3
    (forward) p''_j = (g_j + Phi^T (sh - Mh (B a_p + h))) / aI, a_j = B a_p + h + Phi p''_j. The base
    wrench S0 (frame 0, about O_0) is the ABA's own: -sum over the base's children of
    B^T (N B a_0 + n) (digest, reconstructed). Needs :func:`tree_kinematics` and
    :func:`tree_body_bias`. Returns False if an articulated inertia about a joint axis is not
    positive (a massless subtree)."""
    n, parent, jtype, axis, l, gamma, M, c, RB = _model(P)
    B = _w66(P, W, _B, n)
    phi = _w6(P, W, _PHI, n)
    h = _w6(P, W, _H, n)
    s = _w6(P, W, _S, n)
    a = _w6(P, W, _A, n)
    Mh = _w66(P, W, _MH, n)
    sh = _w6(P, W, _SH, n)
    U = _w6(P, W, _U, n)
    aI = W[_wv(P, _AI):_wv(P, _AI) + n]
    N = _w66(P, W, _N, n)
    nv = _w6(P, W, _NV, n)
    T = _w66(P, W, _TMP, 8)
    NB = T[1]
    v6 = T[0, 0]
    w6 = T[0, 1]
    for j in range(n):
        for q in range(6):
            sh[j, q] = s[j, q]
            for r in range(6):
                Mh[j, q, r] = M[j, q, r]
    for q in range(6):
        S0[q] = 0.0
    for j in range(n - 1, -1, -1):
        # Mh, sh already hold the children's contributions
        k = int(axis[j]) + (3 if jtype[j] == JOINT_R else 0)
        for q in range(6):
            U[j, q] = Mh[j, q, k]                    # Mh Phi (Phi = unit vector k)
        d = U[j, k]
        if not d > 0.0:
            return False
        aI[j] = d
        for q in range(6):
            for r in range(6):
                N[j, q, r] = Mh[j, q, r] - U[j, q] * U[j, r] / d
        coef = (g[j] + sh[j, k]) / d
        for q in range(6):
            v = 0.0
            for r in range(6):
                v += N[j, q, r] * h[j, r]
            nv[j, q] = v + U[j, q] * coef - sh[j, q]
        pj = int(parent[j])
        # N B with B = [beta, C; 0, beta] (C = -beta r~): the lower-left zero block skipped
        for q in range(6):
            for r in range(3):
                NB[q, r] = N[j, q, 0] * B[j, 0, r] + N[j, q, 1] * B[j, 1, r] + N[j, q, 2] * B[j, 2, r]
                NB[q, 3 + r] = (N[j, q, 0] * B[j, 0, 3 + r] + N[j, q, 1] * B[j, 1, 3 + r]
                                + N[j, q, 2] * B[j, 2, 3 + r] + N[j, q, 3] * B[j, 3, 3 + r]
                                + N[j, q, 4] * B[j, 4, 3 + r] + N[j, q, 5] * B[j, 5, 3 + r])
        if pj >= 0:
            # Mh_p += B^T (N B): symmetric, so the upper triangle and its mirror
            for q in range(6):
                for r in range(q, 6):
                    if q < 3:
                        v = B[j, 0, q] * NB[0, r] + B[j, 1, q] * NB[1, r] + B[j, 2, q] * NB[2, r]
                    else:
                        v = (B[j, 0, q] * NB[0, r] + B[j, 1, q] * NB[1, r] + B[j, 2, q] * NB[2, r]
                             + B[j, 3, q] * NB[3, r] + B[j, 4, q] * NB[4, r] + B[j, 5, q] * NB[5, r])
                    Mh[pj, q, r] += v
                    if r != q:
                        Mh[pj, r, q] += v
            _btmul_add(B[j], nv[j], sh[pj], -1.0)
        else:
            _bmul(NB, a0, v6)
            for q in range(6):
                v6[q] += nv[j, q]
            _btmul_add(B[j], v6, S0, -1.0)
    for j in range(n):
        _carry(B, parent, a0, a, j, w6)
        for q in range(6):
            w6[q] += h[j, q]
        k = int(axis[j]) + (3 if jtype[j] == JOINT_R else 0)
        v = 0.0
        for r in range(6):
            v += Mh[j, k, r] * w6[r]
        x = (g[j] + sh[j, k] - v) / aI[j]
        pdd[j] = x
        for q in range(6):
            a[j, q] = w6[q]
        a[j, k] += x
    return True


@njit(**KERNEL)
def tree_forward_dynamics(P, W, p, pd, omega0, fext, a0, g, pdd, S0):
    """One forward-dynamics evaluation of an open chain in one call (seed 000 §2.11 with ABA):
    :func:`tree_kinematics`, :func:`tree_body_bias`, :func:`tree_aba`. Returns its status."""
    tree_kinematics(P, W, p, pd, omega0)
    tree_body_bias(P, W, fext)
    return tree_aba(P, W, a0, g, pdd, S0)


@njit(**KERNEL)
def tree_mass_matrix(P, W, p, pd, omega0, A):
    """:func:`tree_kinematics` and :func:`tree_crba` in one call."""
    tree_kinematics(P, W, p, pd, omega0)
    tree_crba(P, W, A)
