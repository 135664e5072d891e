"""Compiled right-hand side of a tree mechanism (seed 000 §2.11 with the ABA of §2.10): joint
devices, the contact wrench on the buffer link, accelerations and the wrench on the base.

Arrays (built by :class:`sim_stand.tree.model.TreeMechanism`):

* ``P``: the tree's params (:class:`rt.dynamics.tree_model.TreeModel`), ``W`` its work array;
* ``D`` (float64, n x ``layout.LP``): per joint the device block of the parallel mechanism's legs
  (``sim_stand.mechanism.layout.L_SP_F0`` .. ``L_ST_C``, same device laws) and the brake's
  engagement in the two spare slots :data:`D_ENG_BELOW`, :data:`D_ENG_ONEWAY`;
* ``E`` (float64, 1-D, :data:`E_LEN` + 6 n): the buffer link and frame E on it, and the external
  wrench array the kernels fill;
* state ``x = [p (n), pd (n)]``; base motion ``bm = [a_0, omega_0, eps_0, g_0]`` (frame 0, as the
  parallel mechanism's); ``cw`` = contact wrench on the buffer link, frame E about E's origin;
* ``out``: ``[xdot (2n), base_wrench (6: [f; m about O_0], frame 0, the mechanism on its base),
  dev_force (n x NDEV), dev_power (n x NDEV), status]`` (offsets :func:`out_offsets`).

All ``@njit(cache=True)`` and allocation-free.
"""
from __future__ import annotations

from numba import njit

from rt.dynamics.tree import tree_aba, tree_body_bias, tree_kinematics
from rt.dynamics.tree_model import H_N
from sim_stand.mechanism import devices as DV
from sim_stand.mechanism import layout as ML

D_ENG_BELOW = ML.L_ST_C + 1      # the brake works below this coordinate (inf: everywhere)
D_ENG_ONEWAY = ML.L_ST_C + 2     # 1: only while the coordinate decreases
assert D_ENG_ONEWAY < ML.LP

E_BODY = 0          # buffer link index
E_POS = 1           # E's origin in the link frame (3)
E_LEN = 4           # then the n x 6 external wrenches

STATUS_OK = 0
STATUS_SINGULAR = 2  # an articulated inertia about a joint axis is not positive
_JIT = dict(cache=True, error_model="numpy")


def out_offsets(n: int) -> dict[str, tuple[int, tuple[int, ...]]]:
    shapes = [("xdot", (2 * n,)), ("base_wrench", (6,)), ("dev_force", (n, ML.NDEV)),
              ("dev_power", (n, ML.NDEV)), ("status", (1,))]
    out, off = {}, 0
    for name, shp in shapes:
        out[name] = (off, shp)
        off += int(shp[0] * (shp[1] if len(shp) > 1 else 1))
    out["_size"] = (off, ())
    return out


@njit(**_JIT)
def joint_forces(D, n, x, g, out, o_f, o_p):
    """g_j = the sum of joint j's device forces along its axis (spring, damper, brake within its
    engagement, end stops; sim_stand.mechanism.devices), and each device's force and power
    (W, < 0 absorbed) into ``out``."""
    for j in range(n):
        lo = j * ML.LP
        s = x[j]
        v = x[n + j]
        fs = DV.spring_force(D, lo, s)
        fd = DV.damper_force(D, lo, v)
        fb = 0.0
        if s < D[lo + D_ENG_BELOW] and (D[lo + D_ENG_ONEWAY] == 0.0 or v < 0.0):
            fb = DV.brake_force(D, lo, v)
        fe = DV.stop_force(D, lo, s, v)
        g[j] = fs + fd + fb + fe
        b = j * ML.NDEV
        for k in range(ML.NDEV):
            out[o_f + b + k] = 0.0
            out[o_p + b + k] = 0.0
        out[o_f + b + ML.DEV_SPRING] = fs
        out[o_f + b + ML.DEV_DAMPER] = fd
        out[o_f + b + ML.DEV_BRAKE] = fb
        out[o_f + b + ML.DEV_STOP] = fe
        out[o_p + b + ML.DEV_SPRING] = fs * v
        out[o_p + b + ML.DEV_DAMPER] = fd * v
        out[o_p + b + ML.DEV_BRAKE] = fb * v
        out[o_p + b + ML.DEV_STOP] = fe * v


@njit(**_JIT)
def tree_derivatives(P, W, D, E, g, a0, x, bm, cw, out):
    """One evaluation (seed 000 §2.11, open chain): kinematics from ``omega_0``, the contact
    wrench moved from E to the buffer link's origin (m_j = m_E + c_E x f), s_j, joint devices,
    ABA with ``a_0 = [a_0 - g_0; eps_0]`` (free-fall trick for the stand's gravity) and its base
    wrench. ``g`` (n) and ``a0`` (6) are scratch. Returns the status (0 ok); on failure every
    output is zero."""
    n = int(P[H_N])
    no = 2 * n
    o_f = no + 6
    o_p = o_f + n * ML.NDEV
    o_s = o_p + n * ML.NDEV
    tree_kinematics(P, W, x[:n], x[n:2 * n], bm[3:6])
    ext = E[E_LEN:E_LEN + 6 * n].reshape((n, 6))
    for j in range(n):
        for q in range(6):
            ext[j, q] = 0.0
    cb = int(E[E_BODY])
    cx, cy, cz = E[E_POS], E[E_POS + 1], E[E_POS + 2]
    ext[cb, 0] = cw[0]
    ext[cb, 1] = cw[1]
    ext[cb, 2] = cw[2]
    ext[cb, 3] = cw[3] + cy * cw[2] - cz * cw[1]
    ext[cb, 4] = cw[4] + cz * cw[0] - cx * cw[2]
    ext[cb, 5] = cw[5] + cx * cw[1] - cy * cw[0]
    tree_body_bias(P, W, ext)
    joint_forces(D, n, x, g, out, o_f, o_p)
    for q in range(3):
        a0[q] = bm[q] - bm[9 + q]
        a0[3 + q] = bm[6 + q]
    ok = tree_aba(P, W, a0, g, out[n:2 * n], out[no:no + 6])
    if not ok:
        for i in range(out.shape[0]):
            out[i] = 0.0
        out[o_s] = STATUS_SINGULAR
        return STATUS_SINGULAR
    for j in range(n):
        out[j] = x[n + j]
    out[o_s] = STATUS_OK
    return STATUS_OK


@njit(**_JIT)
def tree_step_rk4(P, W, D, E, g, a0, x, bm, cw, out, dt, k, xt):
    """Classical RK4 step of ``x`` with the base motion and the contact wrench held; ``k``
    (4 x 2n) and ``xt`` (2n) are scratch. Returns the status of the first failing stage, or 0."""
    m = x.shape[0]
    for s in range(4):
        h = 0.0 if s == 0 else (0.5 * dt if s < 3 else dt)
        for i in range(m):
            xt[i] = x[i] + h * (k[s - 1, i] if s > 0 else 0.0)
        st = tree_derivatives(P, W, D, E, g, a0, xt, bm, cw, out)
        if st != 0:
            return st
        for i in range(m):
            k[s, i] = out[i]
    for i in range(m):
        x[i] += dt / 6.0 * (k[0, i] + 2.0 * (k[1, i] + k[2, i]) + k[3, i])
    return 0


@njit(**_JIT)
def tree_rk4_run(P, W, D, E, g, a0, x, bm, cw, out, dt, nsteps, k, xt):
    """``nsteps`` RK4 steps (tests and benchmarks: energy drift, real-time factor). Returns the
    status."""
    for _ in range(nsteps):
        st = tree_step_rk4(P, W, D, E, g, a0, x, bm, cw, out, dt, k, xt)
        if st != 0:
            return st
    return 0


@njit(**_JIT)
def absorbed_power(n, out):
    """Power the dampers, brakes and end stops absorb (W, >= 0 absorbing), last evaluation."""
    o_p = 2 * n + 6 + n * ML.NDEV
    s = 0.0
    for j in range(n):
        b = o_p + j * ML.NDEV
        s -= out[b + ML.DEV_DAMPER] + out[b + ML.DEV_BRAKE] + out[b + ML.DEV_STOP]
    return s

