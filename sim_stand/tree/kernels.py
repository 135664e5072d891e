"""Compiled right-hand side of a tree mechanism ([Yaskevich 2018a, open chains]: the ABA): joint
devices, the contact wrench on the buffer link, accelerations and the wrench on the base.

Two flat arrays, built by :class:`sim_stand.tree.model.TreeMechanism`, play the parallel
mechanism's ``params`` / ``workspace`` roles, so the emulated stand and the digital reference
carry either kind in the same slots:

* ``mp`` = ``[P | D | E]``: the tree's params (:class:`rt.dynamics.tree_model.TreeModel`, size in
  its header); ``D`` (n x ``layout.LP``): per joint the device block of the parallel mechanism's
  legs (``sim_stand.mechanism.layout.L_SP_F0`` .. ``L_ST_C``, the same device laws) and the brake's
  engagement in the two spare slots :data:`D_ENG_BELOW`, :data:`D_ENG_ONEWAY`; ``E``
  (:data:`E_LEN`): the buffer link and the origin of frame E on it (axes of the link);
* ``mw`` = ``[W | g (n) | a0 (6) | ext (n x 6) | pose0 (12) | twist0 (6)]``: the tree's work array
  and scratch.

State ``x = [p (n), pd (n)]``: joint coordinates (m or rad) and rates (m/s or rad/s); base motion
``bm = [a_0 (m/s^2), omega_0 (rad/s), eps_0 (rad/s^2), g_0 (m/s^2)]`` (frame 0, as the parallel
mechanism's); ``cw`` = contact wrench ``[f; m]`` on the buffer link, frame E about E's origin
(N, N m); ``out = [xdot (2n), base_wrench (6: [f; m about O_0], frame 0, the mechanism on its
base), dev_force (n x NDEV), dev_power (n x NDEV), status]`` (offsets :func:`out_offsets`). The
kernels below take these arrays under these names.

All ``@njit(cache=True)`` and allocation-free.
"""
from __future__ import annotations

from numba import njit

from rt.dynamics import spatial as SP
from rt.dynamics.tree import tree_aba, tree_body_bias, tree_frame_state, tree_kinematics
from rt.dynamics.tree_model import H_N, H_PSIZE, H_WSIZE
from sim_stand.kin import K_P, K_R, K_V, K_W
from sim_stand.mechanism import devices as DV
from sim_stand.mechanism import layout as LAY

D_ENG_BELOW = LAY.L_ST_C + 1      # the brake works below this coordinate (inf: everywhere)
D_ENG_ONEWAY = LAY.L_ST_C + 2     # 1: only while the coordinate decreases
assert D_ENG_ONEWAY < LAY.LP

E_BODY = 0          # buffer link index
E_POS = 1           # E's origin in the link frame (3)
E_LEN = 4

STATUS_OK = 0
STATUS_SINGULAR = 2  # an articulated inertia about a joint axis is not positive
_JIT = dict(cache=True, error_model="numpy")


def out_offsets(n: int) -> dict[str, tuple[int, tuple[int, ...]]]:
    shapes = [("xdot", (2 * n,)), ("base_wrench", (6,)), ("dev_force", (n, LAY.NDEV)),
              ("dev_power", (n, LAY.NDEV)), ("status", (1,))]
    out, off = {}, 0
    for name, shp in shapes:
        out[name] = (off, shp)
        off += int(shp[0] * (shp[1] if len(shp) > 1 else 1))
    out["_size"] = (off, ())
    return out


def packed_sizes(P) -> tuple[int, int]:
    """(len(mp), len(mw)) for a tree's params ``P``."""
    n = int(P[H_N])
    return int(P[H_PSIZE]) + n * LAY.LP + E_LEN, int(P[H_WSIZE]) + 7 * n + 6 + 18


@njit(inline="always", **_JIT)
def _unpack(mp, mw):
    n = int(mp[H_N])
    ps = int(mp[H_PSIZE])
    ws = int(mp[H_WSIZE])
    P = mp[:ps]
    D = mp[ps:ps + n * LAY.LP]
    E = mp[ps + n * LAY.LP:ps + n * LAY.LP + E_LEN]
    W = mw[:ws]
    g = mw[ws:ws + n]
    a0 = mw[ws + n:ws + n + 6]
    ext = mw[ws + n + 6:ws + 7 * n + 6].reshape((n, 6))
    return n, P, D, E, W, g, a0, ext


@njit(inline="always", **_JIT)
def _frame_scratch(mp, mw):
    n = int(mp[H_N])
    o = int(mp[H_WSIZE]) + 7 * n + 6
    return mw[o:o + 12], mw[o + 12:o + 18]


@njit(**_JIT)
def joint_forces(D, n, x, g, out, o_f, o_p):
    """g_j = the sum of joint j's device forces along its axis (spring, damper, brake within its
    engagement, end stops; sim_stand.mechanism.devices), and each device's force and power
    (W, < 0 absorbed) into ``out``.

    Parameters
    ----------
    D : float64[n * LP]
        Per joint the device block (``sim_stand.mechanism.layout.L_*`` entries, and the brake's
        engagement ``D_ENG_BELOW``, ``D_ENG_ONEWAY``).
    n : int
        Number of joints.
    x : float64[2n]
        State ``[p, pd]`` (module docstring).
    g : float64[n]
        Output: the summed device force along each joint's axis (N or N m).
    out : float64[out_size]
        Output: each device's force (from ``o_f``) and power (from ``o_p``), n x NDEV each.
    o_f : int
        Offset of the device forces in ``out``.
    o_p : int
        Offset of the device powers in ``out``.
    """
    for j in range(n):
        lo = j * LAY.LP
        s = x[j]
        v = x[n + j]
        fs = DV.spring_force(D, lo, s)
        fd = DV.damper_force(D, lo, v)
        fb = 0.0
        if s < D[lo + D_ENG_BELOW] and (D[lo + D_ENG_ONEWAY] == 0.0 or v < 0.0):
            fb = DV.brake_force(D, lo, v)
        fe = DV.stop_force(D, lo, s, v)
        g[j] = fs + fd + fb + fe
        b = j * LAY.NDEV
        for k in range(LAY.NDEV):
            out[o_f + b + k] = 0.0
            out[o_p + b + k] = 0.0
        out[o_f + b + LAY.DEV_SPRING] = fs
        out[o_f + b + LAY.DEV_DAMPER] = fd
        out[o_f + b + LAY.DEV_BRAKE] = fb
        out[o_f + b + LAY.DEV_STOP] = fe
        out[o_p + b + LAY.DEV_SPRING] = fs * v
        out[o_p + b + LAY.DEV_DAMPER] = fd * v
        out[o_p + b + LAY.DEV_BRAKE] = fb * v
        out[o_p + b + LAY.DEV_STOP] = fe * v


@njit(**_JIT)
def tree_kinematics_packed(mp, mw, x, omega0):
    """Pass 1 (of the ABA, [Yaskevich 2018a, open chains]): the tree's kinematics at ``x`` with
    the base's angular velocity ``omega0`` (frame 0).

    Parameters
    ----------
    mp : float64[:]
        The tree's packed parameters (module docstring, as for ``mw`` and ``x``;
        :func:`packed_sizes`).
    mw : float64[:]
        The tree's work array; the kinematics are written into its ``W``.
    x : float64[2n]
        State ``[p, pd]``.
    omega0 : float64[3]
        Angular velocity of the base frame 0 relative to the inertial frame, frame 0 (rad/s).
    """
    n, P, D, E, W, g, a0, ext = _unpack(mp, mw)
    tree_kinematics(P, W, x[:n], x[n:2 * n], omega0)


@njit(**_JIT)
def tree_finish(mp, mw, x, bm, cw, out):
    """The rest of one evaluation after :func:`tree_kinematics_packed` (with ``omega0 =
    bm[3:6]``): the contact wrench moved from E to the buffer link's origin (m_j = m_E + c_E x f),
    s_j, joint devices, ABA with ``a_0 = [a_0 - g_0; eps_0]`` (free-fall trick for the stand's
    gravity) and its base wrench. Returns the status (0 ok); on failure every output is zero.

    Parameters
    ----------
    mp, mw, x, bm, cw : float64[:]
        The tree's parameters, work array (with the kinematics of ``x``), state, base motion and
        contact wrench (module docstring).
    out : float64[out_size]
        Output (module docstring, :func:`out_offsets`).
    """
    n, P, D, E, W, g, a0, ext = _unpack(mp, mw)
    no = 2 * n
    o_f = no + 6
    o_p = o_f + n * LAY.NDEV
    o_s = o_p + n * LAY.NDEV
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
    if not tree_aba(P, W, a0, g, out[n:2 * n], out[no:no + 6]):
        for i in range(out.shape[0]):
            out[i] = 0.0
        out[o_s] = STATUS_SINGULAR
        return STATUS_SINGULAR
    for j in range(n):
        out[j] = x[n + j]
    out[o_s] = STATUS_OK
    return STATUS_OK


@njit(**_JIT)
def tree_derivatives(mp, mw, x, bm, cw, out):
    """One evaluation ([Yaskevich 2018a, open chains]): :func:`tree_kinematics_packed` then
    :func:`tree_finish`. Returns the status.

    Parameters
    ----------
    mp, mw, x, bm, cw : float64[:]
        The tree's parameters, work array (the kinematics written), state, base motion and
        contact wrench, as for :func:`tree_finish`.
    out : float64[out_size]
        Output: the evaluation.
    """
    tree_kinematics_packed(mp, mw, x, bm[3:6])
    return tree_finish(mp, mw, x, bm, cw, out)


@njit(**_JIT)
def tree_step_rk4(mp, mw, x, bm, cw, out, dt, k, xt):
    """Classical RK4 step of ``x`` with the base motion and the contact wrench held; ``k``
    (4 x 2n) and ``xt`` (2n) are scratch. Returns the status of the first failing stage, or 0.

    Parameters
    ----------
    mp, mw : float64[:]
        The tree's parameters and work array (module docstring, as for the other arrays).
    x : float64[2n]
        State ``[p, pd]``, advanced by ``dt`` in place.
    bm, cw : float64[:]
        Base motion and contact wrench, held over the step.
    out : float64[out_size]
        Output (:func:`out_offsets`): each stage's evaluation, the last stage's after the step.
    dt : float
        Step (s).
    k : float64[4, 2n]
        Scratch: the stage derivatives.
    xt : float64[2n]
        Scratch: the stage state.
    """
    m = x.shape[0]
    for s in range(4):
        h = 0.0 if s == 0 else (0.5 * dt if s < 3 else dt)
        for i in range(m):
            xt[i] = x[i] + h * (k[s - 1, i] if s > 0 else 0.0)
        st = tree_derivatives(mp, mw, xt, bm, cw, out)
        if st != 0:
            return st
        for i in range(m):
            k[s, i] = out[i]
    for i in range(m):
        x[i] += SP.rk4_increment(dt / 6.0, k[0, i], k[1, i], k[2, i], k[3, i])
    return 0


@njit(**_JIT)
def tree_rk4_run(mp, mw, x, bm, cw, out, dt, nsteps, k, xt):
    """``nsteps`` RK4 steps (tests and benchmarks: energy drift, real-time factor). Returns the
    status.

    Parameters
    ----------
    mp, mw : float64[:]
        As for :func:`tree_step_rk4`, as are the other arguments.
    x : float64[2n]
        State ``[p, pd]``, advanced by ``nsteps * dt`` in place.
    bm, cw : float64[:]
        Held over all the steps.
    out : float64[out_size]
        Output: the last stage's evaluation.
    dt : float
        Step (s).
    nsteps : int
        Number of steps.
    k, xt : float64 arrays
        Scratch.
    """
    for _ in range(nsteps):
        st = tree_step_rk4(mp, mw, x, bm, cw, out, dt, k, xt)
        if st != 0:
            return st
    return 0


@njit(**_JIT)
def tree_sie_update(x, xdot, dt):
    """Semi-implicit (symplectic) Euler step of ``x = [p, pd]``: pd from the accelerations, then
    p from the new rates.

    Parameters
    ----------
    x : float64[2n]
        State ``[p, pd]`` (module docstring), advanced in place.
    xdot : float64[>= 2n]
        The state derivative (``out`` of :func:`tree_finish`); its accelerations ``xdot[n:2n]``
        are read.
    dt : float
        Step (s).
    """
    n = x.shape[0] // 2
    for j in range(n):
        x[n + j] += dt * xdot[n + j]
    for j in range(n):
        x[j] += dt * x[n + j]


@njit(**_JIT)
def tree_link_state(mp, mw, kin, link_pose, link_twist, R_PE):
    """Pose and absolute twist in P of the buffer link's frame E ([Yaskevich 2018b, contact forces])
    after :func:`tree_kinematics_packed`, from A's absolute kinematics ``kin`` (``K_*``, P
    components): p_PE = p_PA + R_PA o_E, R_PE = R_PA R_0E, v_E = v_A + w_A x (R_PA o_E) + R_PA
    v_rel, w_E = w_A + R_PA w_rel. Also writes the link's quaternion into ``link_pose[0, 3:7]``.

    Parameters
    ----------
    mp, mw : float64[:]
        The tree's packed parameters, and its work array as :func:`tree_kinematics_packed` left
        it (module docstring).
    kin : float64[KIN_LEN]
        Kinematic record of A in P (``sim_stand.kin`` ``K_*``): position ``K_P`` (m), DCM
        ``K_R``, A's absolute velocity ``K_V`` (m/s) and angular velocity ``K_W`` (rad/s), P
        components.
    link_pose : float64[>= 1, 7]
        Output: row 0 = ``[p_PE (m), q_PE]``, the buffer link frame E's pose in P.
    link_twist : float64[>= 1, 6]
        Output: row 0 = E's absolute twist ``[v (m/s), omega (rad/s)]``, P components.
    R_PE : float64[3, 3]
        Output: DCM E -> P.
    """
    n, P, D, E, W, g, a0, ext = _unpack(mp, mw)
    pose0, twist0 = _frame_scratch(mp, mw)
    tree_frame_state(P, W, int(E[E_BODY]), E[E_POS:E_POS + 3], pose0, twist0)
    R = kin[K_R:K_R + 9]
    for i in range(3):
        oi = R[3 * i] * pose0[0] + R[3 * i + 1] * pose0[1] + R[3 * i + 2] * pose0[2]
        link_pose[0, i] = kin[K_P + i] + oi
        for j in range(3):
            R_PE[i, j] = R[3 * i] * pose0[3 + j] + R[3 * i + 1] * pose0[6 + j] + R[3 * i + 2] * pose0[9 + j]
    ox = link_pose[0, 0] - kin[K_P]
    oy = link_pose[0, 1] - kin[K_P + 1]
    oz = link_pose[0, 2] - kin[K_P + 2]
    wx, wy, wz = kin[K_W], kin[K_W + 1], kin[K_W + 2]
    for i in range(3):
        vr = R[3 * i] * twist0[0] + R[3 * i + 1] * twist0[1] + R[3 * i + 2] * twist0[2]
        wr = R[3 * i] * twist0[3] + R[3 * i + 1] * twist0[4] + R[3 * i + 2] * twist0[5]
        link_twist[0, 3 + i] = kin[K_W + i] + wr
        link_twist[0, i] = kin[K_V + i] + vr
    link_twist[0, 0] += wy * oz - wz * oy
    link_twist[0, 1] += wz * ox - wx * oz
    link_twist[0, 2] += wx * oy - wy * ox
    SP.dcm_to_quat(R_PE, link_pose[0, 3:7])


@njit(**_JIT)
def absorbed_power(mp, out):
    """Power the dampers, brakes and end stops absorb (W, >= 0 absorbing), last evaluation.

    Parameters
    ----------
    mp : float64[:]
        The tree's packed parameters (module docstring); only the joint count is read.
    out : float64[out_size]
        Outputs of the last evaluation (:func:`out_offsets`); the device powers are read.
    """
    n = int(mp[H_N])
    o_p = 2 * n + 6 + n * LAY.NDEV
    s = 0.0
    for j in range(n):
        b = o_p + j * LAY.NDEV
        s -= out[b + LAY.DEV_DAMPER] + out[b + LAY.DEV_BRAKE] + out[b + LAY.DEV_STOP]
    return s
