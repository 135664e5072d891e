"""Compiled dynamics of a tree-structured mechanism on a moving base (seed 000 §2.3-2.11;
docs/models/tree.md): kinematics, the modified CRBA, the generalized forces with the base's
transport motion, the wrench on the base, and the ABA for open chains.

Every kernel is ``algorithm(params, work, ...)`` over the packed arrays of
:class:`rt.dynamics.tree_model.TreeModel` (``params`` immutable, ``work`` the caller's data),
``@njit(**rt.jit.KERNEL)`` and allocation-free: each may be called in the real-time loop once the
caller has warmed it up. The kernels index the flat arrays directly (block offsets from the
header, e.g. ``B_j[a, b] = work[oB + 36 j + 6 a + b]``): building reshaped views per call cost
three times the kinematics' own arithmetic (docs/models/tree.md §5).

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


# ------------------------------------------------------------------ offsets
@njit(inline="always", **KERNEL)
def _offsets(P):
    """n and the offsets of every params block (tree_model._PARAM_BLOCKS order) and work block
    (tree_model._WORK_BLOCKS order)."""
    return (int(P[H_N]), int(P[H_P]), int(P[H_P + 1]), int(P[H_P + 2]), int(P[H_P + 3]), int(P[H_P + 4]),
            int(P[H_P + 5]), int(P[H_P + 6]), int(P[H_P + 7]),
            int(P[H_W]), int(P[H_W + 1]), int(P[H_W + 2]), int(P[H_W + 3]), int(P[H_W + 4]), int(P[H_W + 5]),
            int(P[H_W + 6]), int(P[H_W + 7]), int(P[H_W + 8]), int(P[H_W + 9]), int(P[H_W + 10]),
            int(P[H_W + 11]), int(P[H_W + 12]), int(P[H_W + 13]), int(P[H_W + 14]), int(P[H_W + 15]),
            int(P[H_W + 16]), int(P[H_W + 17]), int(P[H_W + 18]), int(P[H_W + 19]))


# ------------------------------------------------------------------ small spatial helpers (flat)
@njit(inline="always", **KERNEL)
def _mv6(A, oa, x, ox, y, oy):
    """y[oy:oy+6] = A x, A the 6x6 block at A[oa] (row-major), x at x[ox]; y may not alias x."""
    for i in range(6):
        r = oa + 6 * i
        y[oy + i] = (A[r] * x[ox] + A[r + 1] * x[ox + 1] + A[r + 2] * x[ox + 2]
                     + A[r + 3] * x[ox + 3] + A[r + 4] * x[ox + 4] + A[r + 5] * x[ox + 5])


@njit(inline="always", **KERNEL)
def _mtv6_add(A, oa, x, ox, y, oy, sign):
    """y[oy:oy+6] += sign A^T x (B^T carries a wrench from O_j to O_p(j))."""
    for i in range(6):
        y[oy + i] += sign * (A[oa + i] * x[ox] + A[oa + 6 + i] * x[ox + 1] + A[oa + 12 + i] * x[ox + 2]
                             + A[oa + 18 + i] * x[ox + 3] + A[oa + 24 + i] * x[ox + 4] + A[oa + 30 + i] * x[ox + 5])


@njit(inline="always", **KERNEL)
def _carry(P, W, opar, oB, oa, j, a0, y, oy):
    """y[oy:oy+6] = B_j a_p(j): the predecessor's acceleration (the base's ``a0`` for p(j) = -1)
    seen at O_j, frame j (seed 000 eq. 1 without Phi p'' and h)."""
    pj = int(P[opar + j])
    if pj < 0:
        _mv6(W, oB + 36 * j, a0, 0, y, oy)
    else:
        _mv6(W, oB + 36 * j, W, oa + 6 * pj, y, oy)


# ------------------------------------------------------------------ kinematics
@njit(**KERNEL)
def tree_kinematics(P, W, p, pd, omega0):
    """Pass 1 (seed 000 §2.3, eq. 1; §2.5): for every joint beta_j = alpha_j gamma_j,
    r_{p(j),j} = l + gamma^T t_j, B_j = [beta, -beta r~; 0, beta], Phi_j, the absolute angular
    velocity om_j (from ``omega0``, frame 0), the velocity-product acceleration
    h_j = [beta (om_p x (om_p x r)) + 2 omb x v_rel; omb x om_rel] with omb = beta om_p
    (digest, reconstructed), and the placement relative to the base: tau_j (0 -> j), O_j, the
    velocity of O_j and the angular velocity of j relative to the base (frame 0; seed 002 §4.6)."""
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oB, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, oN, onv, oT) = _offsets(P)
    for j in range(n):
        pj = int(P[opar + j])
        k = int(P[oax + j])
        rev = P[ojt + j] == JOINT_R
        gb = og + 9 * j
        bb = ob + 9 * j
        q = p[j]
        if rev:
            # beta = alpha^k(q) gamma: row k kept, rows k+1, k+2 turned (digest §0)
            c = math.cos(q)
            s = math.sin(q)
            i1 = (k + 1) % 3
            i2 = (k + 2) % 3
            for b in range(3):
                W[bb + 3 * k + b] = P[gb + 3 * k + b]
                W[bb + 3 * i1 + b] = c * P[gb + 3 * i1 + b] + s * P[gb + 3 * i2 + b]
                W[bb + 3 * i2 + b] = c * P[gb + 3 * i2 + b] - s * P[gb + 3 * i1 + b]
            rx = P[ol + 3 * j]
            ry = P[ol + 3 * j + 1]
            rz = P[ol + 3 * j + 2]
        else:
            for a in range(9):
                W[bb + a] = P[gb + a]
            rx = P[ol + 3 * j] + P[gb + 3 * k] * q
            ry = P[ol + 3 * j + 1] + P[gb + 3 * k + 1] * q
            rz = P[ol + 3 * j + 2] + P[gb + 3 * k + 2] * q
        W[orr + 3 * j] = rx
        W[orr + 3 * j + 1] = ry
        W[orr + 3 * j + 2] = rz
        BB = oB + 36 * j
        for a in range(3):
            b0 = W[bb + 3 * a]
            b1 = W[bb + 3 * a + 1]
            b2 = W[bb + 3 * a + 2]
            for b in range(3):
                v = W[bb + 3 * a + b]
                W[BB + 6 * a + b] = v
                W[BB + 6 * (3 + a) + 3 + b] = v
                W[BB + 6 * (3 + a) + b] = 0.0
            # -(beta r~)[a, :]
            W[BB + 6 * a + 3] = -(b1 * rz - b2 * ry)
            W[BB + 6 * a + 4] = -(b2 * rx - b0 * rz)
            W[BB + 6 * a + 5] = -(b0 * ry - b1 * rx)
        for a in range(6):
            W[oph + 6 * j + a] = 0.0
        W[oph + 6 * j + (k + 3 if rev else k)] = 1.0
        # angular velocities
        if pj < 0:
            wpx = omega0[0]
            wpy = omega0[1]
            wpz = omega0[2]
        else:
            wpx = W[oom + 3 * pj]
            wpy = W[oom + 3 * pj + 1]
            wpz = W[oom + 3 * pj + 2]
        obx = W[bb] * wpx + W[bb + 1] * wpy + W[bb + 2] * wpz
        oby = W[bb + 3] * wpx + W[bb + 4] * wpy + W[bb + 5] * wpz
        obz = W[bb + 6] * wpx + W[bb + 7] * wpy + W[bb + 8] * wpz
        W[oom + 3 * j] = obx
        W[oom + 3 * j + 1] = oby
        W[oom + 3 * j + 2] = obz
        if rev:
            W[oom + 3 * j + k] += pd[j]
        # h: beta (w x (w x r)) + 2 omb x v_rel ; omb x w_rel
        cx = wpy * rz - wpz * ry
        cy = wpz * rx - wpx * rz
        cz = wpx * ry - wpy * rx
        qx = wpy * cz - wpz * cy
        qy = wpz * cx - wpx * cz
        qz = wpx * cy - wpy * cx
        hb = oh + 6 * j
        for a in range(3):
            W[hb + a] = W[bb + 3 * a] * qx + W[bb + 3 * a + 1] * qy + W[bb + 3 * a + 2] * qz
            W[hb + 3 + a] = 0.0
        ex = 1.0 if k == 0 else 0.0
        ey = 1.0 if k == 1 else 0.0
        ez = 1.0 if k == 2 else 0.0
        ux = (oby * ez - obz * ey) * pd[j]     # omb x e pd
        uy = (obz * ex - obx * ez) * pd[j]
        uz = (obx * ey - oby * ex) * pd[j]
        if rev:
            W[hb + 3] = ux
            W[hb + 4] = uy
            W[hb + 5] = uz
        else:
            W[hb] += 2.0 * ux
            W[hb + 1] += 2.0 * uy
            W[hb + 2] += 2.0 * uz
        # placement relative to the base (frame 0): tau_j = beta tau_p, O_j = O_p + tau_p^T r
        tb = otau + 9 * j
        if pj < 0:
            for a in range(9):
                W[tb + a] = W[bb + a]
            W[oo + 3 * j] = rx
            W[oo + 3 * j + 1] = ry
            W[oo + 3 * j + 2] = rz
            for a in range(3):
                W[owr + 3 * j + a] = 0.0
                W[ovr + 3 * j + a] = 0.0
        else:
            tp = otau + 9 * pj
            for a in range(3):
                for b in range(3):
                    W[tb + 3 * a + b] = (W[bb + 3 * a] * W[tp + b] + W[bb + 3 * a + 1] * W[tp + 3 + b]
                                         + W[bb + 3 * a + 2] * W[tp + 6 + b])
            for a in range(3):
                W[oo + 3 * j + a] = (W[oo + 3 * pj + a] + W[tp + a] * rx + W[tp + 3 + a] * ry
                                     + W[tp + 6 + a] * rz)
            dx = W[oo + 3 * j] - W[oo + 3 * pj]
            dy = W[oo + 3 * j + 1] - W[oo + 3 * pj + 1]
            dz = W[oo + 3 * j + 2] - W[oo + 3 * pj + 2]
            w0 = W[owr + 3 * pj]
            w1 = W[owr + 3 * pj + 1]
            w2 = W[owr + 3 * pj + 2]
            W[owr + 3 * j] = w0
            W[owr + 3 * j + 1] = w1
            W[owr + 3 * j + 2] = w2
            W[ovr + 3 * j] = W[ovr + 3 * pj] + w1 * dz - w2 * dy
            W[ovr + 3 * j + 1] = W[ovr + 3 * pj + 1] + w2 * dx - w0 * dz
            W[ovr + 3 * j + 2] = W[ovr + 3 * pj + 2] + w0 * dy - w1 * dx
        rel = owr if rev else ovr
        for a in range(3):
            W[rel + 3 * j + a] += W[tb + 3 * k + a] * pd[j]


@njit(**KERNEL)
def tree_frame_state(P, W, j, c, pose0, twist0):
    """A frame E fixed on body ``j`` at ``c`` (frame j) with the body's axes, relative to the base
    after :func:`tree_kinematics`: ``pose0 = [o_E (3), R_0E (9, row-major)]`` and ``twist0 =
    [v_E; omega_j]`` (velocity of E's origin and angular velocity relative to the base, frame 0;
    seed 002 §4.6 r_E^(0), v_E^(0), omega_j^(0))."""
    otau = int(P[H_W + 7]) + 9 * j
    oo = int(P[H_W + 8]) + 3 * j
    ovr = int(P[H_W + 9]) + 3 * j
    owr = int(P[H_W + 10]) + 3 * j
    d0 = W[otau] * c[0] + W[otau + 3] * c[1] + W[otau + 6] * c[2]
    d1 = W[otau + 1] * c[0] + W[otau + 4] * c[1] + W[otau + 7] * c[2]
    d2 = W[otau + 2] * c[0] + W[otau + 5] * c[1] + W[otau + 8] * c[2]
    w0 = W[owr]
    w1 = W[owr + 1]
    w2 = W[owr + 2]
    pose0[0] = W[oo] + d0
    pose0[1] = W[oo + 1] + d1
    pose0[2] = W[oo + 2] + d2
    for a in range(3):
        for b in range(3):
            pose0[3 + 3 * a + b] = W[otau + 3 * b + a]
    twist0[0] = W[ovr] + w1 * d2 - w2 * d1
    twist0[1] = W[ovr + 1] + w2 * d0 - w0 * d2
    twist0[2] = W[ovr + 2] + w0 * d1 - w1 * d0
    twist0[3] = w0
    twist0[4] = w1
    twist0[5] = w2


@njit(**KERNEL)
def tree_body_bias(P, W, fext):
    """s_j = [f_E - om x (om x c); m_E - om x (I_O om)] (digest §2.4, reconstructed), c = m d;
    ``fext[j]`` is the external wrench at O_j, frame j. Needs :func:`tree_kinematics`."""
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oB, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, oN, onv, oT) = _offsets(P)
    for j in range(n):
        wx = W[oom + 3 * j]
        wy = W[oom + 3 * j + 1]
        wz = W[oom + 3 * j + 2]
        cx = P[oc + 3 * j]
        cy = P[oc + 3 * j + 1]
        cz = P[oc + 3 * j + 2]
        tx = wy * cz - wz * cy
        ty = wz * cx - wx * cz
        tz = wx * cy - wy * cx
        sb = os_ + 6 * j
        W[sb] = fext[j, 0] - (wy * tz - wz * ty)
        W[sb + 1] = fext[j, 1] - (wz * tx - wx * tz)
        W[sb + 2] = fext[j, 2] - (wx * ty - wy * tx)
        m = oM + 36 * j
        Ix = P[m + 21] * wx + P[m + 22] * wy + P[m + 23] * wz
        Iy = P[m + 27] * wx + P[m + 28] * wy + P[m + 29] * wz
        Iz = P[m + 33] * wx + P[m + 34] * wy + P[m + 35] * wz
        W[sb + 3] = fext[j, 3] - (wy * Iz - wz * Iy)
        W[sb + 4] = fext[j, 4] - (wz * Ix - wx * Iz)
        W[sb + 5] = fext[j, 5] - (wx * Iy - wy * Ix)


# ------------------------------------------------------------------ CRBA, b, solve, base wrench
@njit(**KERNEL)
def tree_crba(P, W, A):
    """The inertia matrix A of A p'' = b (seed 000 §2.7, modified CRBA: column j from a unit
    p''_j with zero velocities, propagated to the subtree of j through B, the wrenches carried back
    through B^T; entries with neither body in the other's subtree are 0). Needs
    :func:`tree_kinematics`."""
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oB, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, oN, onv, oT) = _offsets(P)
    for i in range(n):
        for j in range(n):
            A[i, j] = 0.0
    for j in range(n):
        for i in range(6 * n):
            W[of + i] = 0.0
        for q in range(6):
            W[oa + 6 * j + q] = W[oph + 6 * j + q]
        _mv6(P, oM + 36 * j, W, oa + 6 * j, W, of + 6 * j)
        for i in range(j + 1, n):
            if P[oRB + n * i + j] != 0.0:
                _mv6(W, oB + 36 * i, W, oa + 6 * int(P[opar + i]), W, oa + 6 * i)
                _mv6(P, oM + 36 * i, W, oa + 6 * i, W, of + 6 * i)
        for i in range(n - 1, j - 1, -1):
            if P[oRB + n * i + j] != 0.0:
                v = 0.0
                for q in range(6):
                    v += W[oph + 6 * i + q] * W[of + 6 * i + q]
                A[i, j] = v
                A[j, i] = v
                if i > j:
                    _mtv6_add(W, oB + 36 * i, W, of + 6 * i, W, of + 6 * int(P[opar + i]), 1.0)


@njit(**KERNEL)
def tree_bias(P, W, a0, g, b):
    """Generalized forces b of A p'' = b (seed 000 §2.8): the accelerations at p'' = 0 from the
    base's ``a0`` (frame 0, [w_0 - g_0; eps_0]), F_j = M_j a_j - s_j carried to the predecessors,
    b_j = g_j - Phi_j . F_j. Leaves F (the joint wrenches at p'' = 0) in the work's f block.
    Needs :func:`tree_kinematics` and :func:`tree_body_bias`."""
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oB, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, oN, onv, oT) = _offsets(P)
    for j in range(n):
        _carry(P, W, opar, oB, oa, j, a0, W, oa + 6 * j)
        for q in range(6):
            W[oa + 6 * j + q] += W[oh + 6 * j + q]
        _mv6(P, oM + 36 * j, W, oa + 6 * j, W, of + 6 * j)
        for q in range(6):
            W[of + 6 * j + q] -= W[os_ + 6 * j + q]
    for j in range(n - 1, -1, -1):
        v = 0.0
        for q in range(6):
            v += W[oph + 6 * j + q] * W[of + 6 * j + q]
        b[j] = g[j] - v
        pj = int(P[opar + j])
        if pj >= 0:
            _mtv6_add(W, oB + 36 * j, W, of + 6 * j, W, of + 6 * pj, 1.0)


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
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oB, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, oN, onv, oT) = _offsets(P)
    S = of
    for q in range(6):
        S0[q] = 0.0
    for j in range(n):
        _carry(P, W, opar, oB, oa, j, a0, W, oa + 6 * j)
        for q in range(6):
            W[oa + 6 * j + q] += W[oh + 6 * j + q] + W[oph + 6 * j + q] * pdd[j]
            W[S + 6 * j + q] = 0.0
    for j in range(n - 1, -1, -1):
        _mv6(P, oM + 36 * j, W, oa + 6 * j, W, oT)
        for q in range(6):
            W[oT + q] = W[os_ + 6 * j + q] - W[oT + q] + W[S + 6 * j + q]     # fI + S
        free = int(P[oax + j]) + (3 if P[ojt + j] == JOINT_R else 0)
        W[oT + free] = -g[j]                                                # -Q + E (fI + S)
        pj = int(P[opar + j])
        if pj < 0:
            _mtv6_add(W, oB + 36 * j, W, oT, S0, 0, 1.0)
        else:
            _mtv6_add(W, oB + 36 * j, W, oT, W, S + 6 * pj, 1.0)


# ------------------------------------------------------------------ ABA
@njit(inline="always", **KERNEL)
def _add_transformed(W, on, obeta, orr, out, T):
    """W[out] (6x6) += B^T N B for the symmetric N at W[on] and B = [beta, -beta r~; 0, beta]
    (beta at W[obeta], r at W[orr]): rotate the 3x3 blocks, then shift by r (the inertia
    transform; T = 27 floats of scratch). With A' = beta^T N11 beta, C' = beta^T N12 beta,
    D' = beta^T N22 beta and E = C' - A' r~: the result is [A', E; E^T, D' + r~ E - C'^T r~]."""
    rx = W[orr]
    ry = W[orr + 1]
    rz = W[orr + 2]
    for blk in range(3):        # 0: N11 -> A', 1: N12 -> C', 2: N22 -> D' (into T[9 blk ..])
        ro = 0 if blk < 2 else 3
        co = 0 if blk == 0 else 3
        for a in range(3):
            # row a of (N_blk beta): x = sum_m N[ro + a, co + m] beta[m, :]
            n0 = W[on + 6 * (ro + a) + co]
            n1 = W[on + 6 * (ro + a) + co + 1]
            n2 = W[on + 6 * (ro + a) + co + 2]
            for b in range(3):
                W[T + 27 + 3 * a + b] = n0 * W[obeta + b] + n1 * W[obeta + 3 + b] + n2 * W[obeta + 6 + b]
        for a in range(3):
            for b in range(3):
                W[T + 9 * blk + 3 * a + b] = (W[obeta + a] * W[T + 27 + b] + W[obeta + 3 + a] * W[T + 30 + b]
                                              + W[obeta + 6 + a] * W[T + 33 + b])
    A = T
    C = T + 9
    D = T + 18
    E = T + 27
    for a in range(3):
        a0 = W[A + 3 * a]
        a1 = W[A + 3 * a + 1]
        a2 = W[A + 3 * a + 2]
        # (A' r~)[a, :] = [a1 rz - a2 ry, a2 rx - a0 rz, a0 ry - a1 rx]
        W[E + 3 * a] = W[C + 3 * a] - (a1 * rz - a2 * ry)
        W[E + 3 * a + 1] = W[C + 3 * a + 1] - (a2 * rx - a0 * rz)
        W[E + 3 * a + 2] = W[C + 3 * a + 2] - (a0 * ry - a1 * rx)
    for a in range(3):
        for b in range(3):
            W[out + 6 * a + b] += W[A + 3 * a + b]
            W[out + 6 * a + 3 + b] += W[E + 3 * a + b]
            W[out + 6 * (3 + a) + b] += W[E + 3 * b + a]
    # D' + r~ E - C'^T r~: (r~ E)[a, b] = (r x E[:, b])_a ; (C'^T r~)[a, b] = (C'[:, a] x r)_b... as rows
    for b in range(3):
        e0 = W[E + b]
        e1 = W[E + 3 + b]
        e2 = W[E + 6 + b]
        x0 = ry * e2 - rz * e1
        x1 = rz * e0 - rx * e2
        x2 = rx * e1 - ry * e0
        W[out + 21 + b] += W[D + b] + x0
        W[out + 27 + b] += W[D + 3 + b] + x1
        W[out + 33 + b] += W[D + 6 + b] + x2
    for a in range(3):
        c0 = W[C + a]
        c1 = W[C + 3 + a]
        c2 = W[C + 6 + a]
        # row a of C'^T r~ = (C'[:, a])^T r~ = -(r x C'[:, a])^T ... = [c1 rz - c2 ry, c2 rx - c0 rz, c0 ry - c1 rx]
        W[out + 6 * (3 + a) + 3] -= c1 * rz - c2 * ry
        W[out + 6 * (3 + a) + 4] -= c2 * rx - c0 * rz
        W[out + 6 * (3 + a) + 5] -= c0 * ry - c1 * rx


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
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oB, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, oN, onv, oT) = _offsets(P)
    NB = oT + 36            # 6x6 scratch
    v6 = oT                 # 6 scratch
    for i in range(36 * n):
        W[oMh + i] = P[oM + i]
    for i in range(6 * n):
        W[osh + i] = W[os_ + i]
    for q in range(6):
        S0[q] = 0.0
    for j in range(n - 1, -1, -1):
        # Mh, sh already hold the children's contributions
        k = int(P[oax + j]) + (3 if P[ojt + j] == JOINT_R else 0)
        mh = oMh + 36 * j
        u = oU + 6 * j
        for q in range(6):
            W[u + q] = W[mh + 6 * q + k]                  # Mh Phi (Phi = unit vector k)
        d = W[u + k]
        if not d > 0.0:
            return False
        W[oaI + j] = d
        nn = oN + 36 * j
        for q in range(6):
            uq = W[u + q] / d
            for r in range(6):
                W[nn + 6 * q + r] = W[mh + 6 * q + r] - uq * W[u + r]
        coef = (g[j] + W[osh + 6 * j + k]) / d
        nv = onv + 6 * j
        _mv6(W, nn, W, oh + 6 * j, W, nv)
        for q in range(6):
            W[nv + q] += W[u + q] * coef - W[osh + 6 * j + q]
        pj = int(P[opar + j])
        bj = oB + 36 * j
        if pj >= 0:
            _add_transformed(W, nn, ob + 9 * j, orr + 3 * j, oMh + 36 * pj, NB)
            _mtv6_add(W, bj, W, nv, W, osh + 6 * pj, -1.0)
        else:
            # the chain's push on the base: -B^T (N B a_0 + n)
            _mv6(W, bj, a0, 0, W, NB)
            _mv6(W, nn, W, NB, W, v6)
            for q in range(6):
                W[v6 + q] += W[nv + q]
            _mtv6_add(W, bj, W, v6, S0, 0, -1.0)
    w6 = oT + 6
    for j in range(n):
        _carry(P, W, opar, oB, oa, j, a0, W, w6)
        for q in range(6):
            W[w6 + q] += W[oh + 6 * j + q]
        k = int(P[oax + j]) + (3 if P[ojt + j] == JOINT_R else 0)
        mk = oMh + 36 * j + 6 * k
        v = (W[mk] * W[w6] + W[mk + 1] * W[w6 + 1] + W[mk + 2] * W[w6 + 2] + W[mk + 3] * W[w6 + 3]
             + W[mk + 4] * W[w6 + 4] + W[mk + 5] * W[w6 + 5])
        x = (g[j] + W[osh + 6 * j + k] - v) / W[oaI + j]
        pdd[j] = x
        for q in range(6):
            W[oa + 6 * j + q] = W[w6 + q]
        W[oa + 6 * j + k] += x
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
