"""Compiled dynamics of a tree-structured mechanism on a moving base ([Yaskevich 2018a];
docs/models/tree.md): kinematics, the modified CRBA, the generalized forces with the base's
transport motion, the wrench on the base, and the ABA for open chains.

Every kernel is ``algorithm(params, work, ...)`` over the packed arrays of
:class:`rt.dynamics.tree_model.TreeModel` (``params`` immutable, ``work`` the caller's data),
``@njit(**rt.jit.KERNEL)`` and allocation-free: each may be called in the real-time loop once the
caller has warmed it up. The kernels index the flat arrays directly (block offsets from the
header, e.g. ``beta_j[a, b] = work[ob + 9 j + 3 a + b]``): building reshaped views per call cost
three times the kinematics' own arithmetic (docs/models/tree.md §5).

Frames and conventions ([Yaskevich 2018a]; docs/conventions.md):

* body quantities are in the body frame ``j``; base quantities in frame 0 (the mechanism base);
* a motion vector ``a = [w; eps]`` is the *classical* linear acceleration of the frame origin and
  the angular acceleration; a wrench ``[f; m]`` has ``m`` about the frame origin;
* ``a_0`` (the base's acceleration) is in frame 0 and carries gravity as ``w_0 = a_0 - g_0``
  (the base's transport motion is the recursion's start, [Yaskevich 2018a, modified CRBA]: the
  free-fall trick; pass ``g_0 = 0`` in orbit);
* ``omega_0`` is the base's absolute angular velocity (frame 0); every ``om_j`` is then absolute;
* ``g`` (n) holds the generalized active joint forces (springs, dampers, brakes, drives): the
  force along / moment about joint j's axis that the predecessor applies to body j;
* ``fext`` (n x 6) holds the external wrench on each body at O_j, frame j (contact wrenches).

Evaluation order: :func:`tree_kinematics` (beta, r, B, Phi, omega, h, and the placement
relative to the base), :func:`tree_body_bias` (s_j), then either :func:`tree_aba` (open chains:
accelerations and the base wrench in three passes) or :func:`tree_crba` + :func:`tree_bias` +
:func:`tree_solve` + :func:`tree_base_wrench` ([Yaskevich 2018a, modified CRBA, base wrench], for
stiff chains and as the oracle of each other).

The kernels' arguments
----------------------
The same name is the same array in every kernel below:

P : float64[:]
    The tree's packed parameters (``rt.dynamics.tree_model.TreeModel.params``).
W : float64[:]
    The tree's work array (``TreeModel.new_work``): each pass reads the blocks of the passes it
    needs (evaluation order above) and writes its own.
p, pd : float64[n]
    Joint coordinates, rad (revolute) or m (prismatic), and their rates, rad/s or m/s.
omega0 : float64[3]
    The base's absolute angular velocity, frame 0, rad/s.
fext : float64[n, 6]
    External wrench on each body ``[f (N); m (N·m)]`` at O_j, frame j.
a0 : float64[6]
    The base's acceleration ``[w_0 - g_0 (m/s^2); eps_0 (rad/s^2)]``, frame 0 (gravity in w_0).
g : float64[n]
    Generalized active joint forces, N (prismatic) or N·m (revolute).
pdd : float64[n]
    The joint accelerations p'', rad/s^2 or m/s^2.
S0 : float64[6]
    The mechanism's wrench on its base ``[f (N); m (N·m) about O_0]``, frame 0.
A : float64[n, n]
    The inertia matrix A.
"""
from __future__ import annotations

import math

from numba import njit, types
from numba.extending import intrinsic

from rt.jit import KERNEL
from rt.dynamics.tree_model import H_N, H_P, H_W, JOINT_R


# ------------------------------------------------------------------ offsets
@intrinsic
def _ld(typingctx, arr, idx):
    """``arr[idx]`` of a 1-D array without the negative-index wrap-around check (every index here
    is a non-negative offset built from the layout; numba cannot prove it and emits a compare
    and a conditional move per access: a quarter of the ABA's instructions)."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(idx, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i = context.cast(builder, args[1], signature.args[1], types.intp)
        return builder.load(builder.gep(ary.data, [i], inbounds=True))
    return arr.dtype(arr, idx), codegen


@intrinsic
def _st(typingctx, arr, idx, val):
    """``arr[idx] = val`` without the wrap-around check (:func:`_ld`)."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(idx, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i = context.cast(builder, args[1], signature.args[1], types.intp)
        v = context.cast(builder, args[2], signature.args[2], signature.args[0].dtype)
        builder.store(v, builder.gep(ary.data, [i], inbounds=True))
        return context.get_dummy_value()
    return types.none(arr, idx, arr.dtype), codegen


#: the kernels' compile options: the real-time loop's (rt.jit.KERNEL) with IEEE division (no
#: zero-divisor check before each division; every divisor here is tested or a positive mass
#: term first), which changes no result
_K = dict(KERNEL, error_model="numpy")


@njit(inline="always", **_K)
def _offsets(P):
    """n and the offsets of every params block (tree_model._PARAM_BLOCKS order) and work block
    (tree_model._WORK_BLOCKS order)."""
    return (int(P[H_N]), int(P[H_P]), int(P[H_P + 1]), int(P[H_P + 2]), int(P[H_P + 3]), int(P[H_P + 4]),
            int(P[H_P + 5]), int(P[H_P + 6]), int(P[H_P + 7]),
            int(P[H_W]), int(P[H_W + 1]), int(P[H_W + 2]), int(P[H_W + 3]), int(P[H_W + 4]), int(P[H_W + 5]),
            int(P[H_W + 6]), int(P[H_W + 7]), int(P[H_W + 8]), int(P[H_W + 9]), int(P[H_W + 10]),
            int(P[H_W + 11]), int(P[H_W + 12]), int(P[H_W + 13]), int(P[H_W + 14]), int(P[H_W + 15]),
            int(P[H_W + 16]), int(P[H_W + 17]))


# ------------------------------------------------------------------ small spatial helpers (flat)
@njit(inline="always", **_K)
def _mv6(A, oa, x, ox, y, oy):
    """y[oy:oy+6] = A x, A the 6x6 block at A[oa] (row-major), x at x[ox]; y may not alias x."""
    for i in range(6):
        r = oa + 6 * i
        y[oy + i] = (A[r] * x[ox] + A[r + 1] * x[ox + 1] + A[r + 2] * x[ox + 2]
                     + A[r + 3] * x[ox + 3] + A[r + 4] * x[ox + 4] + A[r + 5] * x[ox + 5])


@njit(inline="always", **_K)
def _xm(W, ob, orr, x0, x1, x2, x3, x4, x5):
    """B x for B = [beta, -beta r~; 0, beta] (beta at W[ob], r at W[orr]): the motion x of the
    predecessor at O_p seen at O_j, frame j = [beta (x_l + x_a x r); beta x_a]."""
    rx = _ld(W, orr)
    ry = _ld(W, orr + 1)
    rz = _ld(W, orr + 2)
    v0 = x0 + x4 * rz - x5 * ry
    v1 = x1 + x5 * rx - x3 * rz
    v2 = x2 + x3 * ry - x4 * rx
    return (_ld(W, ob) * v0 + _ld(W, ob + 1) * v1 + _ld(W, ob + 2) * v2,
            _ld(W, ob + 3) * v0 + _ld(W, ob + 4) * v1 + _ld(W, ob + 5) * v2,
            _ld(W, ob + 6) * v0 + _ld(W, ob + 7) * v1 + _ld(W, ob + 8) * v2,
            _ld(W, ob) * x3 + _ld(W, ob + 1) * x4 + _ld(W, ob + 2) * x5,
            _ld(W, ob + 3) * x3 + _ld(W, ob + 4) * x4 + _ld(W, ob + 5) * x5,
            _ld(W, ob + 6) * x3 + _ld(W, ob + 7) * x4 + _ld(W, ob + 8) * x5)


@njit(inline="always", **_K)
def _xm_at(W, ob, orr, x, ox, y, oy):
    """y[oy:oy+6] = B x[ox:ox+6] (:func:`_xm`); y may alias x only at another offset."""
    a0, a1, a2, a3, a4, a5 = _xm(W, ob, orr, x[ox], x[ox + 1], x[ox + 2], x[ox + 3], x[ox + 4], x[ox + 5])
    y[oy] = a0
    y[oy + 1] = a1
    y[oy + 2] = a2
    y[oy + 3] = a3
    y[oy + 4] = a4
    y[oy + 5] = a5


@njit(inline="always", **_K)
def _xft_add(W, ob, orr, f0, f1, f2, f3, f4, f5, y, oy, sign):
    """y[oy:oy+6] += sign B^T f: the wrench f at O_j (frame j) carried to O_p (frame p):
    B^T f = [beta^T f_l; r x (beta^T f_l) + beta^T f_a]."""
    rx = _ld(W, orr)
    ry = _ld(W, orr + 1)
    rz = _ld(W, orr + 2)
    g0 = _ld(W, ob) * f0 + _ld(W, ob + 3) * f1 + _ld(W, ob + 6) * f2
    g1 = _ld(W, ob + 1) * f0 + _ld(W, ob + 4) * f1 + _ld(W, ob + 7) * f2
    g2 = _ld(W, ob + 2) * f0 + _ld(W, ob + 5) * f1 + _ld(W, ob + 8) * f2
    y[oy] += sign * g0
    y[oy + 1] += sign * g1
    y[oy + 2] += sign * g2
    y[oy + 3] += sign * (ry * g2 - rz * g1 + _ld(W, ob) * f3 + _ld(W, ob + 3) * f4 + _ld(W, ob + 6) * f5)
    y[oy + 4] += sign * (rz * g0 - rx * g2 + _ld(W, ob + 1) * f3 + _ld(W, ob + 4) * f4 + _ld(W, ob + 7) * f5)
    y[oy + 5] += sign * (rx * g1 - ry * g0 + _ld(W, ob + 2) * f3 + _ld(W, ob + 5) * f4 + _ld(W, ob + 8) * f5)


@njit(inline="always", **_K)
def _xft_add_at(W, ob, orr, f, of_, y, oy, sign):
    """y[oy:oy+6] += sign B^T f[of_:of_+6] (:func:`_xft_add`)."""
    _xft_add(W, ob, orr, f[of_], f[of_ + 1], f[of_ + 2], f[of_ + 3], f[of_ + 4], f[of_ + 5], y, oy, sign)


@njit(inline="always", **_K)
def _carry(P, W, opar, ob, orr, oa, j, a0, y, oy):
    """y[oy:oy+6] = B_j a_p(j): the predecessor's acceleration (the base's ``a0`` for p(j) = -1)
    seen at O_j, frame j ([Yaskevich 2018a, eq. 1] without Phi p'' and h)."""
    pj = int(P[opar + j])
    if pj < 0:
        _xm_at(W, ob + 9 * j, orr + 3 * j, a0, 0, y, oy)
    else:
        _xm_at(W, ob + 9 * j, orr + 3 * j, W, oa + 6 * pj, y, oy)


# ------------------------------------------------------------------ kinematics
@njit(**_K)
def tree_kinematics(P, W, p, pd, omega0):
    """Pass 1 ([Yaskevich 2018a, eqs. 1–2], the transport motion of its modified CRBA): for every
    joint beta_j = alpha_j gamma_j, r_{p(j),j} = l + gamma^T t_j (beta and r are B_j = [beta, -beta
    r~; 0, beta]), Phi_j, the absolute angular velocity om_j (from ``omega0``, frame 0),
    the velocity-product acceleration h_j = [beta (om_p x (om_p x r)) + 2 omb x v_rel; omb x om_rel]
    with omb = beta om_p (our reconstruction of [Yaskevich 2018a, eq. 2]), and the placement
    relative to the base: tau_j (0 -> j), O_j, the velocity of O_j and the angular velocity of j
    relative to the base (frame 0; [Yaskevich 2018b, contact forces]). Each joint's quantities are
    formed in scalars and stored once.

    Parameters
    ----------
    P, W : float64[:]
        The tree's parameters and work array, whose kinematic blocks are written (module
        docstring, "The kernels' arguments", for every argument).
    p, pd : float64[n]
        Joint coordinates and rates.
    omega0 : float64[3]
        The base's angular velocity.
    """
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, onv, oT) = _offsets(P)
    for j in range(n):
        pj = int(_ld(P, opar + j))
        k = int(_ld(P, oax + j))
        rev = _ld(P, ojt + j) == JOINT_R
        gb = og + 9 * j
        g00 = _ld(P, gb)
        g01 = _ld(P, gb + 1)
        g02 = _ld(P, gb + 2)
        g10 = _ld(P, gb + 3)
        g11 = _ld(P, gb + 4)
        g12 = _ld(P, gb + 5)
        g20 = _ld(P, gb + 6)
        g21 = _ld(P, gb + 7)
        g22 = _ld(P, gb + 8)
        q = p[j]
        qd = pd[j]
        rx = _ld(P, ol + 3 * j)
        ry = _ld(P, ol + 3 * j + 1)
        rz = _ld(P, ol + 3 * j + 2)
        if rev:
            # beta = alpha^k(q) gamma: row k kept, rows k+1, k+2 turned (docs/conventions.md)
            c = math.cos(q)
            s = math.sin(q)
            if k == 0:
                b00, b01, b02 = g00, g01, g02
                b10, b11, b12 = c * g10 + s * g20, c * g11 + s * g21, c * g12 + s * g22
                b20, b21, b22 = c * g20 - s * g10, c * g21 - s * g11, c * g22 - s * g12
            elif k == 1:
                b10, b11, b12 = g10, g11, g12
                b20, b21, b22 = c * g20 + s * g00, c * g21 + s * g01, c * g22 + s * g02
                b00, b01, b02 = c * g00 - s * g20, c * g01 - s * g21, c * g02 - s * g22
            else:
                b20, b21, b22 = g20, g21, g22
                b00, b01, b02 = c * g00 + s * g10, c * g01 + s * g11, c * g02 + s * g12
                b10, b11, b12 = c * g10 - s * g00, c * g11 - s * g01, c * g12 - s * g02
        else:
            b00, b01, b02, b10, b11, b12, b20, b21, b22 = g00, g01, g02, g10, g11, g12, g20, g21, g22
            if k == 0:
                rx += g00 * q
                ry += g01 * q
                rz += g02 * q
            elif k == 1:
                rx += g10 * q
                ry += g11 * q
                rz += g12 * q
            else:
                rx += g20 * q
                ry += g21 * q
                rz += g22 * q
        bb = ob + 9 * j
        _st(W, bb, b00)
        _st(W, bb + 1, b01)
        _st(W, bb + 2, b02)
        _st(W, bb + 3, b10)
        _st(W, bb + 4, b11)
        _st(W, bb + 5, b12)
        _st(W, bb + 6, b20)
        _st(W, bb + 7, b21)
        _st(W, bb + 8, b22)
        _st(W, orr + 3 * j, rx)
        _st(W, orr + 3 * j + 1, ry)
        _st(W, orr + 3 * j + 2, rz)
        ph = oph + 6 * j
        for a in range(6):
            _st(W, ph + a, 0.0)
        _st(W, ph + (k + 3 if rev else k), 1.0)
        # angular velocities: om_j = beta om_p (+ e_k pd for a revolute joint)
        if pj < 0:
            wpx = omega0[0]
            wpy = omega0[1]
            wpz = omega0[2]
        else:
            wpx = _ld(W, oom + 3 * pj)
            wpy = _ld(W, oom + 3 * pj + 1)
            wpz = _ld(W, oom + 3 * pj + 2)
        obx = b00 * wpx + b01 * wpy + b02 * wpz
        oby = b10 * wpx + b11 * wpy + b12 * wpz
        obz = b20 * wpx + b21 * wpy + b22 * wpz
        ex = 1.0 if k == 0 else 0.0
        ey = 1.0 if k == 1 else 0.0
        ez = 1.0 if k == 2 else 0.0
        om = oom + 3 * j
        _st(W, om, obx)
        _st(W, om + 1, oby)
        _st(W, om + 2, obz)
        if rev:
            _st(W, om + k, _ld(W, om + k) + (qd))
        # h: beta (w x (w x r)) + 2 omb x v_rel ; omb x w_rel
        cx = wpy * rz - wpz * ry
        cy = wpz * rx - wpx * rz
        cz = wpx * ry - wpy * rx
        qx = wpy * cz - wpz * cy
        qy = wpz * cx - wpx * cz
        qz = wpx * cy - wpy * cx
        h0 = b00 * qx + b01 * qy + b02 * qz
        h1 = b10 * qx + b11 * qy + b12 * qz
        h2 = b20 * qx + b21 * qy + b22 * qz
        ux = (oby * ez - obz * ey) * qd     # omb x e pd
        uy = (obz * ex - obx * ez) * qd
        uz = (obx * ey - oby * ex) * qd
        hb = oh + 6 * j
        if rev:
            _st(W, hb, h0)
            _st(W, hb + 1, h1)
            _st(W, hb + 2, h2)
            _st(W, hb + 3, ux)
            _st(W, hb + 4, uy)
            _st(W, hb + 5, uz)
        else:
            _st(W, hb, h0 + 2.0 * ux)
            _st(W, hb + 1, h1 + 2.0 * uy)
            _st(W, hb + 2, h2 + 2.0 * uz)
            _st(W, hb + 3, 0.0)
            _st(W, hb + 4, 0.0)
            _st(W, hb + 5, 0.0)
        # placement relative to the base (frame 0): tau_j = beta tau_p, O_j = O_p + tau_p^T r
        tb = otau + 9 * j
        if pj < 0:
            t00, t01, t02, t10, t11, t12, t20, t21, t22 = b00, b01, b02, b10, b11, b12, b20, b21, b22
            _st(W, oo + 3 * j, rx)
            _st(W, oo + 3 * j + 1, ry)
            _st(W, oo + 3 * j + 2, rz)
            vx = vy = vz = 0.0
            w0 = w1 = w2 = 0.0
        else:
            tp = otau + 9 * pj
            p00 = _ld(W, tp)
            p01 = _ld(W, tp + 1)
            p02 = _ld(W, tp + 2)
            p10 = _ld(W, tp + 3)
            p11 = _ld(W, tp + 4)
            p12 = _ld(W, tp + 5)
            p20 = _ld(W, tp + 6)
            p21 = _ld(W, tp + 7)
            p22 = _ld(W, tp + 8)
            t00 = b00 * p00 + b01 * p10 + b02 * p20
            t01 = b00 * p01 + b01 * p11 + b02 * p21
            t02 = b00 * p02 + b01 * p12 + b02 * p22
            t10 = b10 * p00 + b11 * p10 + b12 * p20
            t11 = b10 * p01 + b11 * p11 + b12 * p21
            t12 = b10 * p02 + b11 * p12 + b12 * p22
            t20 = b20 * p00 + b21 * p10 + b22 * p20
            t21 = b20 * p01 + b21 * p11 + b22 * p21
            t22 = b20 * p02 + b21 * p12 + b22 * p22
            _st(W, oo + 3 * j, _ld(W, oo + 3 * pj) + p00 * rx + p10 * ry + p20 * rz)
            _st(W, oo + 3 * j + 1, _ld(W, oo + 3 * pj + 1) + p01 * rx + p11 * ry + p21 * rz)
            _st(W, oo + 3 * j + 2, _ld(W, oo + 3 * pj + 2) + p02 * rx + p12 * ry + p22 * rz)
            dx = _ld(W, oo + 3 * j) - _ld(W, oo + 3 * pj)
            dy = _ld(W, oo + 3 * j + 1) - _ld(W, oo + 3 * pj + 1)
            dz = _ld(W, oo + 3 * j + 2) - _ld(W, oo + 3 * pj + 2)
            w0 = _ld(W, owr + 3 * pj)
            w1 = _ld(W, owr + 3 * pj + 1)
            w2 = _ld(W, owr + 3 * pj + 2)
            vx = _ld(W, ovr + 3 * pj) + w1 * dz - w2 * dy
            vy = _ld(W, ovr + 3 * pj + 1) + w2 * dx - w0 * dz
            vz = _ld(W, ovr + 3 * pj + 2) + w0 * dy - w1 * dx
        _st(W, tb, t00)
        _st(W, tb + 1, t01)
        _st(W, tb + 2, t02)
        _st(W, tb + 3, t10)
        _st(W, tb + 4, t11)
        _st(W, tb + 5, t12)
        _st(W, tb + 6, t20)
        _st(W, tb + 7, t21)
        _st(W, tb + 8, t22)
        # the joint's own rate along / about row k of tau_j, relative to the base
        if k == 0:
            ax, ay, az = t00 * qd, t01 * qd, t02 * qd
        elif k == 1:
            ax, ay, az = t10 * qd, t11 * qd, t12 * qd
        else:
            ax, ay, az = t20 * qd, t21 * qd, t22 * qd
        if rev:
            w0 += ax
            w1 += ay
            w2 += az
        else:
            vx += ax
            vy += ay
            vz += az
        _st(W, owr + 3 * j, w0)
        _st(W, owr + 3 * j + 1, w1)
        _st(W, owr + 3 * j + 2, w2)
        _st(W, ovr + 3 * j, vx)
        _st(W, ovr + 3 * j + 1, vy)
        _st(W, ovr + 3 * j + 2, vz)


@njit(**_K)
def tree_frame_state(P, W, j, c, pose0, twist0):
    """A frame E fixed on body ``j`` at ``c`` (frame j) with the body's axes, relative to the base
    after :func:`tree_kinematics`: ``pose0 = [o_E (3), R_0E (9, row-major)]`` and ``twist0 =
    [v_E; omega_j]`` (velocity of E's origin and angular velocity relative to the base, frame 0;
    r_E^(0), v_E^(0), omega_j^(0) of [Yaskevich 2018b, contact forces]).

    Parameters
    ----------
    P, W : float64[:]
        The tree's parameters, and its work array after :func:`tree_kinematics` (read only).
    j : int
        The body E is fixed on.
    c : float64[3]
        E's origin on body j, frame j, m.
    pose0 : float64[12]
        Written: ``[o_E (m), R_0E (row-major)]`` relative to the base, frame 0.
    twist0 : float64[6]
        Written: ``[v_E (m/s); omega_j (rad/s)]`` relative to the base, frame 0.
    """
    otau = int(P[H_W + 6]) + 9 * j
    oo = int(P[H_W + 7]) + 3 * j
    ovr = int(P[H_W + 8]) + 3 * j
    owr = int(P[H_W + 9]) + 3 * j
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


@njit(**_K)
def tree_body_bias(P, W, fext):
    """s_j = [f_E - om x (om x c); m_E - om x (I_O om)] (our reconstruction
    of [Yaskevich 2018a, eq. 3]), c = m d; ``fext[j]`` is the external wrench at O_j, frame j. Needs
    :func:`tree_kinematics`.

    Parameters
    ----------
    P, W : float64[:]
        The tree's parameters and work array (module docstring); s_j is written.
    fext : float64[n, 6]
        External wrench on each body.
    """
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, onv, oT) = _offsets(P)
    for j in range(n):
        wx = _ld(W, oom + 3 * j)
        wy = _ld(W, oom + 3 * j + 1)
        wz = _ld(W, oom + 3 * j + 2)
        cx = _ld(P, oc + 3 * j)
        cy = _ld(P, oc + 3 * j + 1)
        cz = _ld(P, oc + 3 * j + 2)
        tx = wy * cz - wz * cy
        ty = wz * cx - wx * cz
        tz = wx * cy - wy * cx
        sb = os_ + 6 * j
        _st(W, sb, fext[j, 0] - (wy * tz - wz * ty))
        _st(W, sb + 1, fext[j, 1] - (wz * tx - wx * tz))
        _st(W, sb + 2, fext[j, 2] - (wx * ty - wy * tx))
        m = oM + 36 * j
        Ix = _ld(P, m + 21) * wx + _ld(P, m + 22) * wy + _ld(P, m + 23) * wz
        Iy = _ld(P, m + 27) * wx + _ld(P, m + 28) * wy + _ld(P, m + 29) * wz
        Iz = _ld(P, m + 33) * wx + _ld(P, m + 34) * wy + _ld(P, m + 35) * wz
        _st(W, sb + 3, fext[j, 3] - (wy * Iz - wz * Iy))
        _st(W, sb + 4, fext[j, 4] - (wz * Ix - wx * Iz))
        _st(W, sb + 5, fext[j, 5] - (wx * Iy - wy * Ix))


# ------------------------------------------------------------------ CRBA, b, solve, base wrench
@njit(**_K)
def tree_crba(P, W, A):
    """The inertia matrix A of A p'' = b ([Yaskevich 2018a, modified CRBA]: column j from a unit
    p''_j with zero velocities, propagated to the subtree of j through B, the wrenches carried back
    through B^T; entries with neither body in the other's subtree are 0). Needs
    :func:`tree_kinematics`.

    Parameters
    ----------
    P, W : float64[:]
        The tree's parameters, and its work array after :func:`tree_kinematics` (module
        docstring).
    A : float64[n, n]
        Written: the inertia matrix A.
    """
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, onv, oT) = _offsets(P)
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
                _xm_at(W, ob + 9 * i, orr + 3 * i, W, oa + 6 * int(P[opar + i]), W, oa + 6 * i)
                _mv6(P, oM + 36 * i, W, oa + 6 * i, W, of + 6 * i)
        for i in range(n - 1, j - 1, -1):
            if P[oRB + n * i + j] != 0.0:
                v = 0.0
                for q in range(6):
                    v += W[oph + 6 * i + q] * W[of + 6 * i + q]
                A[i, j] = v
                A[j, i] = v
                if i > j:
                    _xft_add_at(W, ob + 9 * i, orr + 3 * i, W, of + 6 * i, W, of + 6 * int(P[opar + i]), 1.0)


@njit(**_K)
def tree_bias(P, W, a0, g, b):
    """Generalized forces b of A p'' = b ([Yaskevich 2018a, modified CRBA]): the accelerations at
    p'' = 0 from the base's ``a0`` (frame 0, [w_0 - g_0; eps_0]), F_j = M_j a_j - s_j carried to
    the predecessors, b_j = g_j - Phi_j . F_j. Leaves F (the joint wrenches at p'' = 0) in
    the work's f block. Needs :func:`tree_kinematics` and :func:`tree_body_bias`.

    Parameters
    ----------
    P, W : float64[:]
        The tree's parameters and work array (module docstring); F is left in its f block.
    a0 : float64[6]
        The base's acceleration.
    g : float64[n]
        Generalized active joint forces.
    b : float64[n]
        Written: the generalized forces b, N or N·m.
    """
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, onv, oT) = _offsets(P)
    for j in range(n):
        _carry(P, W, opar, ob, orr, oa, j, a0, W, oa + 6 * j)
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
            _xft_add_at(W, ob + 9 * j, orr + 3 * j, W, of + 6 * j, W, of + 6 * pj, 1.0)


@njit(**_K)
def tree_solve(A, b, x, n):
    """x = A^-1 b by Cholesky (A symmetric positive definite); A is overwritten by its factor.
    Returns False (x untouched) if a pivot is not positive.

    Parameters
    ----------
    A : float64[>=n, >=n]
        Symmetric positive definite; overwritten by its Cholesky factor (lower triangle).
    b : float64[>=n]
        Right-hand side.
    x : float64[>=n]
        Written: the solution.
    n : int
        Size of the leading block solved.
    """
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


@njit(**_K)
def tree_base_wrench(P, W, a0, g, pdd, S0):
    """The wrench of the mechanism on its base, S0 = [f; m about O_0], frame 0
    ([Yaskevich 2018a, base wrench]): forward a_j = B_j a_p + Phi_j p''_j + h_j, d'Alembert
    fI_j = -M_j a_j + s_j; backward the wrench body j puts on its predecessor X = -Q_j + E_j (fI_j +
    S_j), with Q_j = Phi_j g_j and the projector E_j that removes the joint's free direction (a
    prismatic joint passes the force across its axis and every moment; a revolute one every force
    and the moment across its axis), S_p += B_j^T X. Needs :func:`tree_kinematics` and
    :func:`tree_body_bias`.

    Parameters
    ----------
    P, W : float64[:]
        The tree's parameters, and its work array after :func:`tree_kinematics` and
        :func:`tree_body_bias` (module docstring, as for the rest).
    a0, g, pdd : float64[:]
        The base's acceleration, the active joint forces and the joint accelerations.
    S0 : float64[6]
        Written: the mechanism's wrench on its base.
    """
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, onv, oT) = _offsets(P)
    S = of
    for q in range(6):
        S0[q] = 0.0
    for j in range(n):
        _carry(P, W, opar, ob, orr, oa, j, a0, W, oa + 6 * j)
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
            _xft_add_at(W, ob + 9 * j, orr + 3 * j, W, oT, S0, 0, 1.0)
        else:
            _xft_add_at(W, ob + 9 * j, orr + 3 * j, W, oT, W, S + 6 * pj, 1.0)


# ------------------------------------------------------------------ ABA
@njit(inline="always", **_K)
def _rot_sym(x00, x01, x02, x11, x12, x22, b00, b01, b02, b10, b11, b12, b20, b21, b22):
    """beta^T X beta for a symmetric 3x3 X: its upper entries (00, 01, 02, 11, 12, 22)."""
    y00 = x00 * b00 + x01 * b10 + x02 * b20
    y01 = x00 * b01 + x01 * b11 + x02 * b21
    y02 = x00 * b02 + x01 * b12 + x02 * b22
    y10 = x01 * b00 + x11 * b10 + x12 * b20
    y11 = x01 * b01 + x11 * b11 + x12 * b21
    y12 = x01 * b02 + x11 * b12 + x12 * b22
    y20 = x02 * b00 + x12 * b10 + x22 * b20
    y21 = x02 * b01 + x12 * b11 + x22 * b21
    y22 = x02 * b02 + x12 * b12 + x22 * b22
    return (b00 * y00 + b10 * y10 + b20 * y20, b00 * y01 + b10 * y11 + b20 * y21,
            b00 * y02 + b10 * y12 + b20 * y22, b01 * y01 + b11 * y11 + b21 * y21,
            b01 * y02 + b11 * y12 + b21 * y22, b02 * y02 + b12 * y12 + b22 * y22)


@njit(inline="always", **_K)
def _rot_gen(x00, x01, x02, x10, x11, x12, x20, x21, x22, b00, b01, b02, b10, b11, b12, b20, b21, b22):
    """beta^T X beta for a general 3x3 X (row-major, 9 entries)."""
    y00 = x00 * b00 + x01 * b10 + x02 * b20
    y01 = x00 * b01 + x01 * b11 + x02 * b21
    y02 = x00 * b02 + x01 * b12 + x02 * b22
    y10 = x10 * b00 + x11 * b10 + x12 * b20
    y11 = x10 * b01 + x11 * b11 + x12 * b21
    y12 = x10 * b02 + x11 * b12 + x12 * b22
    y20 = x20 * b00 + x21 * b10 + x22 * b20
    y21 = x20 * b01 + x21 * b11 + x22 * b21
    y22 = x20 * b02 + x21 * b12 + x22 * b22
    return (b00 * y00 + b10 * y10 + b20 * y20, b00 * y01 + b10 * y11 + b20 * y21,
            b00 * y02 + b10 * y12 + b20 * y22, b01 * y00 + b11 * y10 + b21 * y20,
            b01 * y01 + b11 * y11 + b21 * y21, b01 * y02 + b11 * y12 + b21 * y22,
            b02 * y00 + b12 * y10 + b22 * y20, b02 * y01 + b12 * y11 + b22 * y21,
            b02 * y02 + b12 * y12 + b22 * y22)


@njit(**_K)
def tree_aba(P, W, a0, g, pdd, S0):
    """Articulated-body algorithm for open chains on the moving base
    ([Yaskevich 2018a, open chains], root n_R = the base): pass 2 (backward) the articulated
    inertias Mh_j = M_j + sum B^T N B and biases, U = Mh Phi, aI = Phi^T U, N = Mh - U U^T / aI, n =
    N h + U (g + Phi^T sh) / aI - sh; pass 3 (forward) p''_j = (g_j + Phi^T (sh - Mh (B a_p + h))) /
    aI, a_j = B a_p + h + Phi p''_j. The base wrench S0 (frame 0, about O_0) is the ABA's own: -sum
    over the base's children of B^T (N B a_0 + n) (our reconstruction; the paper states that the ABA
    gives it). Needs :func:`tree_kinematics` and :func:`tree_body_bias`. Returns False if an
    articulated inertia about a joint axis is not positive (a massless subtree).

    N is symmetric and Phi a unit vector (every joint moves along or about one axis of its
    frame): N is held in 21 scalars, B^T N B = [A', E; E^T, D' + r~ E - C'^T r~] with
    A' = beta^T N11 beta, C' = beta^T N12 beta, D' = beta^T N22 beta, E = C' - A' r~ is formed
    from beta and r without the 6x6 B ([Featherstone 2008, §7.3 and §2.8], the inertia
    transform).

    Parameters
    ----------
    P, W : float64[:]
        The tree's parameters and work array (module docstring, as for the rest); the
        articulated inertias and biases are written.
    a0, g : float64[:]
        The base's acceleration and the active joint forces.
    pdd, S0 : float64[:]
        Written: the joint accelerations, and the mechanism's wrench on its base.
    """
    (n, opar, ojt, oax, ol, og, oM, oc, oRB, ob, orr, oph, oom, oh, os_, otau, oo, ovr, owr,
     oa, of, oMh, osh, oU, oaI, onv, oT) = _offsets(P)
    for i in range(36 * n):
        _st(W, oMh + i, _ld(P, oM + i))
    for i in range(6 * n):
        _st(W, osh + i, _ld(W, os_ + i))
    for q in range(6):
        S0[q] = 0.0
    for j in range(n - 1, -1, -1):
        # Mh, sh already hold the children's contributions
        k = int(_ld(P, oax + j)) + (3 if _ld(P, ojt + j) == JOINT_R else 0)
        mh = oMh + 36 * j
        u = oU + 6 * j
        mk = mh + 6 * k                                   # row k of Mh = Mh Phi (symmetric)
        u0 = _ld(W, mk)
        u1 = _ld(W, mk + 1)
        u2 = _ld(W, mk + 2)
        u3 = _ld(W, mk + 3)
        u4 = _ld(W, mk + 4)
        u5 = _ld(W, mk + 5)
        _st(W, u, u0)
        _st(W, u + 1, u1)
        _st(W, u + 2, u2)
        _st(W, u + 3, u3)
        _st(W, u + 4, u4)
        _st(W, u + 5, u5)
        d = _ld(W, mk + k)
        if not d > 0.0:
            return False
        _st(W, oaI + j, d)
        # N = Mh - U U^T / d (upper triangle)
        v0 = u0 / d
        v1 = u1 / d
        v2 = u2 / d
        v3 = u3 / d
        v4 = u4 / d
        v5 = u5 / d
        n00 = _ld(W, mh) - v0 * u0
        n01 = _ld(W, mh + 1) - v0 * u1
        n02 = _ld(W, mh + 2) - v0 * u2
        n03 = _ld(W, mh + 3) - v0 * u3
        n04 = _ld(W, mh + 4) - v0 * u4
        n05 = _ld(W, mh + 5) - v0 * u5
        n11 = _ld(W, mh + 7) - v1 * u1
        n12 = _ld(W, mh + 8) - v1 * u2
        n13 = _ld(W, mh + 9) - v1 * u3
        n14 = _ld(W, mh + 10) - v1 * u4
        n15 = _ld(W, mh + 11) - v1 * u5
        n22 = _ld(W, mh + 14) - v2 * u2
        n23 = _ld(W, mh + 15) - v2 * u3
        n24 = _ld(W, mh + 16) - v2 * u4
        n25 = _ld(W, mh + 17) - v2 * u5
        n33 = _ld(W, mh + 21) - v3 * u3
        n34 = _ld(W, mh + 22) - v3 * u4
        n35 = _ld(W, mh + 23) - v3 * u5
        n44 = _ld(W, mh + 28) - v4 * u4
        n45 = _ld(W, mh + 29) - v4 * u5
        n55 = _ld(W, mh + 35) - v5 * u5
        # n = N h + U (g + Phi^T sh) / d - sh
        sj = osh + 6 * j
        coef = (g[j] + _ld(W, sj + k)) / d
        hb = oh + 6 * j
        h0 = _ld(W, hb)
        h1 = _ld(W, hb + 1)
        h2 = _ld(W, hb + 2)
        h3 = _ld(W, hb + 3)
        h4 = _ld(W, hb + 4)
        h5 = _ld(W, hb + 5)
        nv0 = n00 * h0 + n01 * h1 + n02 * h2 + n03 * h3 + n04 * h4 + n05 * h5 + u0 * coef - _ld(W, sj)
        nv1 = n01 * h0 + n11 * h1 + n12 * h2 + n13 * h3 + n14 * h4 + n15 * h5 + u1 * coef - _ld(W, sj + 1)
        nv2 = n02 * h0 + n12 * h1 + n22 * h2 + n23 * h3 + n24 * h4 + n25 * h5 + u2 * coef - _ld(W, sj + 2)
        nv3 = n03 * h0 + n13 * h1 + n23 * h2 + n33 * h3 + n34 * h4 + n35 * h5 + u3 * coef - _ld(W, sj + 3)
        nv4 = n04 * h0 + n14 * h1 + n24 * h2 + n34 * h3 + n44 * h4 + n45 * h5 + u4 * coef - _ld(W, sj + 4)
        nv5 = n05 * h0 + n15 * h1 + n25 * h2 + n35 * h3 + n45 * h4 + n55 * h5 + u5 * coef - _ld(W, sj + 5)
        nv = onv + 6 * j
        _st(W, nv, nv0)
        _st(W, nv + 1, nv1)
        _st(W, nv + 2, nv2)
        _st(W, nv + 3, nv3)
        _st(W, nv + 4, nv4)
        _st(W, nv + 5, nv5)
        pj = int(_ld(P, opar + j))
        bb = ob + 9 * j
        rb = orr + 3 * j
        if pj < 0:
            # the chain's push on the base: -B^T (N B a_0 + n)
            x0, x1, x2, x3, x4, x5 = _xm(W, bb, rb, a0[0], a0[1], a0[2], a0[3], a0[4], a0[5])
            _xft_add(W, bb, rb,
                     n00 * x0 + n01 * x1 + n02 * x2 + n03 * x3 + n04 * x4 + n05 * x5 + nv0,
                     n01 * x0 + n11 * x1 + n12 * x2 + n13 * x3 + n14 * x4 + n15 * x5 + nv1,
                     n02 * x0 + n12 * x1 + n22 * x2 + n23 * x3 + n24 * x4 + n25 * x5 + nv2,
                     n03 * x0 + n13 * x1 + n23 * x2 + n33 * x3 + n34 * x4 + n35 * x5 + nv3,
                     n04 * x0 + n14 * x1 + n24 * x2 + n34 * x3 + n44 * x4 + n45 * x5 + nv4,
                     n05 * x0 + n15 * x1 + n25 * x2 + n35 * x3 + n45 * x4 + n55 * x5 + nv5,
                     S0, 0, -1.0)
            continue
        _xft_add(W, bb, rb, nv0, nv1, nv2, nv3, nv4, nv5, W, osh + 6 * pj, -1.0)
        # Mh_p += B^T N B
        b00 = _ld(W, bb)
        b01 = _ld(W, bb + 1)
        b02 = _ld(W, bb + 2)
        b10 = _ld(W, bb + 3)
        b11 = _ld(W, bb + 4)
        b12 = _ld(W, bb + 5)
        b20 = _ld(W, bb + 6)
        b21 = _ld(W, bb + 7)
        b22 = _ld(W, bb + 8)
        rx = _ld(W, rb)
        ry = _ld(W, rb + 1)
        rz = _ld(W, rb + 2)
        a00, a01, a02, a11, a12, a22 = _rot_sym(n00, n01, n02, n11, n12, n22,
                                                b00, b01, b02, b10, b11, b12, b20, b21, b22)
        d00, d01, d02, d11, d12, d22 = _rot_sym(n33, n34, n35, n44, n45, n55,
                                                b00, b01, b02, b10, b11, b12, b20, b21, b22)
        c00, c01, c02, c10, c11, c12, c20, c21, c22 = _rot_gen(n03, n04, n05, n13, n14, n15, n23, n24, n25,
                                                               b00, b01, b02, b10, b11, b12, b20, b21, b22)
        # E = C' - A' r~ ; (A' r~)[a, :] = [a_a1 rz - a_a2 ry, a_a2 rx - a_a0 rz, a_a0 ry - a_a1 rx]
        e00 = c00 - (a01 * rz - a02 * ry)
        e01 = c01 - (a02 * rx - a00 * rz)
        e02 = c02 - (a00 * ry - a01 * rx)
        e10 = c10 - (a11 * rz - a12 * ry)
        e11 = c11 - (a12 * rx - a01 * rz)
        e12 = c12 - (a01 * ry - a11 * rx)
        e20 = c20 - (a12 * rz - a22 * ry)
        e21 = c21 - (a22 * rx - a02 * rz)
        e22 = c22 - (a02 * ry - a12 * rx)
        # D' + r~ E - C'^T r~ (symmetric): (r~ E)[a, b] = (r x E[:, b])_a,
        # (C'^T r~)[a, :] = [c1a rz - c2a ry, c2a rx - c0a rz, c0a ry - c1a rx]
        f00 = d00 + (ry * e20 - rz * e10) - (c10 * rz - c20 * ry)
        f01 = d01 + (ry * e21 - rz * e11) - (c20 * rx - c00 * rz)
        f02 = d02 + (ry * e22 - rz * e12) - (c00 * ry - c10 * rx)
        f11 = d11 + (rz * e01 - rx * e21) - (c21 * rx - c01 * rz)
        f12 = d12 + (rz * e02 - rx * e22) - (c01 * ry - c11 * rx)
        f22 = d22 + (rx * e12 - ry * e02) - (c02 * ry - c12 * rx)
        m = oMh + 36 * pj
        _st(W, m, _ld(W, m) + (a00))
        _st(W, m + 1, _ld(W, m + 1) + (a01))
        _st(W, m + 2, _ld(W, m + 2) + (a02))
        _st(W, m + 6, _ld(W, m + 6) + (a01))
        _st(W, m + 7, _ld(W, m + 7) + (a11))
        _st(W, m + 8, _ld(W, m + 8) + (a12))
        _st(W, m + 12, _ld(W, m + 12) + (a02))
        _st(W, m + 13, _ld(W, m + 13) + (a12))
        _st(W, m + 14, _ld(W, m + 14) + (a22))
        _st(W, m + 3, _ld(W, m + 3) + (e00))
        _st(W, m + 4, _ld(W, m + 4) + (e01))
        _st(W, m + 5, _ld(W, m + 5) + (e02))
        _st(W, m + 9, _ld(W, m + 9) + (e10))
        _st(W, m + 10, _ld(W, m + 10) + (e11))
        _st(W, m + 11, _ld(W, m + 11) + (e12))
        _st(W, m + 15, _ld(W, m + 15) + (e20))
        _st(W, m + 16, _ld(W, m + 16) + (e21))
        _st(W, m + 17, _ld(W, m + 17) + (e22))
        _st(W, m + 18, _ld(W, m + 18) + (e00))
        _st(W, m + 19, _ld(W, m + 19) + (e10))
        _st(W, m + 20, _ld(W, m + 20) + (e20))
        _st(W, m + 24, _ld(W, m + 24) + (e01))
        _st(W, m + 25, _ld(W, m + 25) + (e11))
        _st(W, m + 26, _ld(W, m + 26) + (e21))
        _st(W, m + 30, _ld(W, m + 30) + (e02))
        _st(W, m + 31, _ld(W, m + 31) + (e12))
        _st(W, m + 32, _ld(W, m + 32) + (e22))
        _st(W, m + 21, _ld(W, m + 21) + (f00))
        _st(W, m + 22, _ld(W, m + 22) + (f01))
        _st(W, m + 23, _ld(W, m + 23) + (f02))
        _st(W, m + 27, _ld(W, m + 27) + (f01))
        _st(W, m + 28, _ld(W, m + 28) + (f11))
        _st(W, m + 29, _ld(W, m + 29) + (f12))
        _st(W, m + 33, _ld(W, m + 33) + (f02))
        _st(W, m + 34, _ld(W, m + 34) + (f12))
        _st(W, m + 35, _ld(W, m + 35) + (f22))
    for j in range(n):
        pj = int(_ld(P, opar + j))
        bb = ob + 9 * j
        rb = orr + 3 * j
        if pj < 0:
            w0, w1, w2, w3, w4, w5 = _xm(W, bb, rb, a0[0], a0[1], a0[2], a0[3], a0[4], a0[5])
        else:
            ap = oa + 6 * pj
            w0, w1, w2, w3, w4, w5 = _xm(W, bb, rb, _ld(W, ap), _ld(W, ap + 1), _ld(W, ap + 2), _ld(W, ap + 3), _ld(W, ap + 4), _ld(W, ap + 5))
        hb = oh + 6 * j
        w0 += _ld(W, hb)
        w1 += _ld(W, hb + 1)
        w2 += _ld(W, hb + 2)
        w3 += _ld(W, hb + 3)
        w4 += _ld(W, hb + 4)
        w5 += _ld(W, hb + 5)
        k = int(_ld(P, oax + j)) + (3 if _ld(P, ojt + j) == JOINT_R else 0)
        u = oU + 6 * j
        v = _ld(W, u) * w0 + _ld(W, u + 1) * w1 + _ld(W, u + 2) * w2 + _ld(W, u + 3) * w3 + _ld(W, u + 4) * w4 + _ld(W, u + 5) * w5
        x = (g[j] + _ld(W, osh + 6 * j + k) - v) / _ld(W, oaI + j)
        pdd[j] = x
        aj = oa + 6 * j
        _st(W, aj, w0)
        _st(W, aj + 1, w1)
        _st(W, aj + 2, w2)
        _st(W, aj + 3, w3)
        _st(W, aj + 4, w4)
        _st(W, aj + 5, w5)
        _st(W, aj + k, _ld(W, aj + k) + (x))
    return True


@njit(**_K)
def tree_forward_dynamics(P, W, p, pd, omega0, fext, a0, g, pdd, S0):
    """One forward-dynamics evaluation of an open chain in one call
    ([Yaskevich 2018a, open chains]): :func:`tree_kinematics`, :func:`tree_body_bias`,
    :func:`tree_aba`. Returns its status.

    Parameters
    ----------
    P, W : float64[:]
        The tree's parameters and work array, for the three passes (module docstring, as for
        every argument).
    p, pd : float64[n]
        Joint coordinates and rates.
    omega0 : float64[3]
        The base's angular velocity.
    fext : float64[n, 6]
        External wrench on each body.
    a0, g : float64[:]
        The base's acceleration and the active joint forces.
    pdd, S0 : float64[:]
        Written: the joint accelerations and the mechanism's wrench on its base.
    """
    tree_kinematics(P, W, p, pd, omega0)
    tree_body_bias(P, W, fext)
    return tree_aba(P, W, a0, g, pdd, S0)


@njit(**_K)
def tree_mass_matrix(P, W, p, pd, omega0, A):
    """:func:`tree_kinematics` and :func:`tree_crba` in one call.

    Parameters
    ----------
    P, W : float64[:]
        The tree's parameters and work array, for :func:`tree_kinematics` and :func:`tree_crba`
        (module docstring).
    p, pd : float64[n]
        Joint coordinates and rates.
    omega0 : float64[3]
        The base's angular velocity.
    A : float64[n, n]
        Written: the inertia matrix A.
    """
    tree_kinematics(P, W, p, pd, omega0)
    tree_crba(P, W, A)
