"""The flight side of a berthing run (issue 25 item 4): the arm of [Zhu, Wang & Zheng] (main
spacecraft, two flexible links, end effector; ``rt.dynamics.berthing_arm``) and the free payload,
under the wrench measured between the end effector's capture tool and the payload's grapple fixture.

It plays, for berthing, the part ``rt.dynamics.spacecraft`` plays for docking, with the same
port convention: the **active unit A** is the capture tool's frame on the end effector (body 4:
position ``tool`` and orientation in frame 4), the **passive unit P** the grapple fixture's
frame on the payload (the payload vehicle's ``[port]``). The measured wrench ``w_in[0]`` acts on
the payload at P's origin (P components, moment about P's origin); its reaction acts on body 4
at the same point (one line of action, as for docking). The relative state of A in P is
``rt.dynamics.spacecraft``'s (from the two ports' inertial states in the same workspace slots),
so prediction, platform pose, run statistics and the run log need nothing new.

State ``x`` (2 x ns): row 0 = the arm's [q (nq) | u (n)] (``rt.dynamics.berthing_arm``
coordinates); row 1 = the payload in the spacecraft layout (``S_R``: r (inertial), ``S_V``: v
(inertial), ``S_Q``: q_IC (scalar first), ``S_W``: omega (body C)). The joints are held by servos
about their initial angles: tau_j = -k_p (theta_j - theta_j0) - k_d theta_j' (the arm in its
"hold" mode while it waits for the payload; the paper's feedback linearization,
``rt.dynamics.berthing_control``, is the post-capture manoeuvre, not the capture).

Kernels: ``@njit(**rt.jit.KERNEL)``, allocation-free: the work arrays (the arm's M~, J_4, pose,
its recursion's scratch) are views of row 0 of the caller's ``ws`` past the spacecraft slots
(``flight_layout``); called from the DYNAMICS cycle through
``rt.dynamics.coupling.berthing_update``.

The kernels' arguments
----------------------
a : float64[L]
    The packed arm and payload (:func:`pack_flight`; the flight's ``par`` row).
x : float64[2, ns]
    The flight state (above): row 0 the arm's [q | u], row 1 the payload (``S_R``, ``S_V``,
    ``S_Q``, ``S_W``; m, m/s, -, rad/s).
w_in : float64[2, 6]
    Row 0: the measured wrench on the payload at P, P components, about P's origin, N and N·m.
ws : float64[2, WS_LEN + flight scratch]
    The ports in ``rt.dynamics.spacecraft``'s slots (row 0 = A, row 1 = P) and the flight's
    scratch past them in row 0 (:func:`flight_layout`).
rel : float64[nrel]
    The relative state of A in P in ``rel[:13]``, zeros after it.
"""
from __future__ import annotations


import numpy as np
from numba import njit

from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from rt.dynamics.berthing_arm import arm_dynamics, arm_kinematics, arm_scratch_len
from rt.jit import KERNEL

# blocks of the packed arm (pack_flight): a[0] = number of blocks, a[1 + b] = offset of block b
B_INTS, B_BASEM, B_BASEI, B_EEM, B_EEC, B_EEI, B_SHOULDER, B_LA, B_LB, B_FL = 0, 1, 2, 3, 4, 5, 6, 7, 15, 23
N_BLOCKS = 24
LINK_BLOCKS = 8                     # x, rw, phi, tip, slope, prm, hub, K
# the flight block
FL_P4A, FL_R4A = 0, 3               # the tool (A) in frame 4: position (3), R_4A (9)
FL_MP, FL_IP, FL_IPINV = 12, 13, 22  # payload mass, inertia about its centre of mass (C), its inverse
FL_PCP, FL_RCP = 31, 34             # the fixture (P) in the payload's C: position (3), R_CP (9)
FL_KP, FL_KD, FL_TH0 = 43, 46, 49   # joint servos: stiffness (3), damping (3), set-points (3)
FL_NQ, FL_N, FL_IT = 52, 53, 54     # sizes of q and u; u indices of the three joints (3)
FL_LEN = 57


def pack_flight(arm, payload_mass, payload_inertia, p_CP, R_CP, p_4A, R_4A, kp, kd, theta0) -> np.ndarray:
    """One float64 array holding the arm model (``ArmModel``'s arrays) and the flight block: the
    ``par`` row of the flight (Python, once per run)."""
    blocks = [np.asarray(arm.ints, float), np.array([arm.base_m]), arm.base_I.ravel(), np.array([arm.ee_m]),
              np.asarray(arm.ee_c, float), arm.ee_I.ravel(), np.asarray(arm.shoulder, float)]
    for link in (arm.la, arm.lb):
        blocks += [np.asarray(v, float).ravel() for v in link]
    fl = np.zeros(FL_LEN)
    fl[FL_P4A:FL_P4A + 3] = p_4A
    fl[FL_R4A:FL_R4A + 9] = np.asarray(R_4A, float).ravel()
    fl[FL_MP] = payload_mass
    I = np.asarray(payload_inertia, float)
    fl[FL_IP:FL_IP + 9] = I.ravel()
    fl[FL_IPINV:FL_IPINV + 9] = np.linalg.inv(I).ravel()
    fl[FL_PCP:FL_PCP + 3] = p_CP
    fl[FL_RCP:FL_RCP + 9] = np.asarray(R_CP, float).ravel()
    fl[FL_KP:FL_KP + 3] = kp
    fl[FL_KD:FL_KD + 3] = kd
    fl[FL_TH0:FL_TH0 + 3] = theta0
    fl[FL_NQ], fl[FL_N] = arm.nq, arm.n
    fl[FL_IT:FL_IT + 3] = (arm.i_t2, arm.i_t3, arm.i_t4)
    blocks.append(fl)
    assert len(blocks) == N_BLOCKS
    head = 1 + N_BLOCKS
    offs = np.cumsum([head] + [len(b) for b in blocks])[:-1]
    return np.concatenate([[N_BLOCKS], offs] + blocks)


@njit(inline="always", **KERNEL)
def _blk(a, b):
    return a[int(a[1 + b]):int(a[2 + b]) if b + 1 < N_BLOCKS else a.shape[0]]


@njit(inline="always", **KERNEL)
def _link(a, first, m):
    x = _blk(a, first)
    ng = x.shape[0]
    return (x, _blk(a, first + 1), _blk(a, first + 2).reshape((ng, m)), _blk(a, first + 3), _blk(a, first + 4),
            _blk(a, first + 5), _blk(a, first + 6).reshape((3, 3)), _blk(a, first + 7).reshape((2 * m, 2 * m)))


@njit(inline="always", **KERNEL)
def arm_views(a):
    """The arm model's arrays as views of the packed array (no copy): the arguments of
    ``rt.dynamics.berthing_arm.arm_eval`` before the state, and the flight block.

    Parameters
    ----------
    a : float64[L]
        The packed arm and payload (:func:`pack_flight`).
    """
    ints = _blk(a, B_INTS)
    ma = int(ints[0])
    mb = int(ints[1])
    return (ints, a[int(a[1 + B_BASEM])], _blk(a, B_BASEI).reshape((3, 3)), a[int(a[1 + B_EEM])], _blk(a, B_EEC),
            _blk(a, B_EEI).reshape((3, 3)), _blk(a, B_SHOULDER), _link(a, B_LA, ma), _link(a, B_LB, mb),
            a[int(a[1 + B_FL]):int(a[1 + B_FL]) + FL_LEN])


@njit(**KERNEL)
def flight_layout(ma, mb):
    """Offsets in the flight's scratch (row 0 of ``ws`` from ``S.WS_LEN``): M~ (n x n), momentum
    (6), J_4 (6 x n), pose_4 (12), u' (n), Q (n), the end effector's wrench (9), R_IC (9), R_IP
    (9), p_IP (3), the arm's scratch (``arm_scratch_len``); the last entry is the total length.

    Parameters
    ----------
    ma, mb : int
        Modes per plane of link 2 and of link 3.
    """
    n = 6 + 1 + 2 * ma + 1 + 2 * mb + 1
    o_mt = 0
    o_mom = o_mt + n * n
    o_j4 = o_mom + 6
    o_pose = o_j4 + 6 * n
    o_ud = o_pose + 12
    o_q = o_ud + n
    o_f4 = o_q + n
    o_ric = o_f4 + 9
    o_rip = o_ric + 9
    o_pip = o_rip + 9
    o_wk = o_pip + 3
    return o_mt, o_mom, o_j4, o_pose, o_ud, o_q, o_f4, o_ric, o_rip, o_pip, o_wk, o_wk + arm_scratch_len(ma, mb)


@njit(inline="always", **KERNEL)
def _scratch(ws, ma, mb):
    n = 6 + 1 + 2 * ma + 1 + 2 * mb + 1
    o_mt, o_mom, o_j4, o_pose, o_ud, o_q, o_f4, o_ric, o_rip, o_pip, o_wk, end = flight_layout(ma, mb)
    sc = ws[0, S.WS_LEN:]
    return (sc[o_mt:o_mt + n * n].reshape((n, n)), sc[o_mom:o_mom + 6], sc[o_j4:o_j4 + 6 * n].reshape((6, n)),
            sc[o_pose:o_pose + 12], sc[o_ud:o_ud + n], sc[o_q:o_q + n], sc[o_f4:o_f4 + 9],
            sc[o_ric:o_ric + 9].reshape((3, 3)), sc[o_rip:o_rip + 9].reshape((3, 3)), sc[o_pip:o_pip + 3],
            sc[o_wk:end])


@njit(inline="always", **KERNEL)
def _views(a, x, ws):
    """The packed arm's arrays, the flight's scratch and the arm's state (q, u) as views."""
    ints, base_m, base_I, ee_m, ee_c, ee_I, sh, la, lb, fl = arm_views(a)
    Mt, mom, J4, pose4, udot, Q, f4, R_IC, R_IP, p_IP, wk = _scratch(ws, int(ints[0]), int(ints[1]))
    nq = int(fl[FL_NQ])
    n = int(fl[FL_N])
    return (ints, base_m, base_I, ee_m, ee_c, ee_I, sh, la, lb, fl, Mt, mom, J4, pose4, udot, Q, f4, R_IC, R_IP, p_IP, wk,
            nq, n, x[0, 0:nq], x[0, nq:nq + n])


@njit(**KERNEL)
def flight_ports(a, x, ws, rel):
    """The kinematic half of an evaluation (no forces): the arm's recursion (J_4, pose_4 and the
    bodies' twists in the scratch), the two ports' inertial states in ``ws`` (``rt.dynamics.
    spacecraft`` slots W_PI, W_VI, W_WI, W_RID; row 0 = A, row 1 = P) and the relative state of A
    in P in ``rel[:13]``. Allocation-free: may be called in the real-time loop.

    Parameters
    ----------
    a : float64[L]
        The packed arm and payload (module docstring, "The kernels' arguments", as for the rest).
    x : float64[2, ns]
        The flight state.
    ws : float64[2, WS_LEN + flight scratch]
        Workspace: the ports and the flight's scratch, written.
    rel : float64[nrel]
        Written: the relative state of A in P.
    """
    (ints, base_m, base_I, ee_m, ee_c, ee_I, sh, la, lb, fl, Mt, mom, J4, pose4, udot, Q, f4, R_IC, R_IP, p_IP, wk,
     nq, n, q, u) = _views(a, x, ws)
    arm_kinematics(ints, sh, la, lb, q, u, J4, pose4, wk)
    # ---- the tool A on body 4: origin at p_4A, velocity R_I4 (v_4 + omega_4 x p_4A)
    w0 = w1 = w2 = w3 = w4 = w5 = 0.0
    for k in range(n):
        uk = u[k]
        w0 += J4[0, k] * uk
        w1 += J4[1, k] * uk
        w2 += J4[2, k] * uk
        w3 += J4[3, k] * uk
        w4 += J4[4, k] * uk
        w5 += J4[5, k] * uk
    p0, p1, p2 = fl[FL_P4A], fl[FL_P4A + 1], fl[FL_P4A + 2]
    va0 = w0 + w4 * p2 - w5 * p1
    va1 = w1 + w5 * p0 - w3 * p2
    va2 = w2 + w3 * p1 - w4 * p0
    for i in range(3):
        R0, R1, R2 = pose4[3 + 3 * i], pose4[4 + 3 * i], pose4[5 + 3 * i]
        ws[0, S.W_PI + i] = pose4[i] + R0 * p0 + R1 * p1 + R2 * p2
        ws[0, S.W_VI + i] = R0 * va0 + R1 * va1 + R2 * va2
        ws[0, S.W_WI + i] = R0 * w3 + R1 * w4 + R2 * w5
        for j in range(3):
            ws[0, S.W_RID + 3 * i + j] = R0 * fl[FL_R4A + j] + R1 * fl[FL_R4A + 3 + j] + R2 * fl[FL_R4A + 6 + j]
    # ---- the payload's fixture P: R_IP = R_IC R_CP, p_IP = r + R_IC p_CP, v_P = v + R_IC (omega x p_CP)
    SP.quat_to_dcm(x[1, S.S_Q:S.S_Q + 4], R_IC)
    for i in range(3):
        for j in range(3):
            R_IP[i, j] = (R_IC[i, 0] * fl[FL_RCP + j] + R_IC[i, 1] * fl[FL_RCP + 3 + j]
                          + R_IC[i, 2] * fl[FL_RCP + 6 + j])
    c0, c1, c2 = fl[FL_PCP], fl[FL_PCP + 1], fl[FL_PCP + 2]
    o0, o1, o2 = x[1, S.S_W], x[1, S.S_W + 1], x[1, S.S_W + 2]
    oc0, oc1, oc2 = o1 * c2 - o2 * c1, o2 * c0 - o0 * c2, o0 * c1 - o1 * c0
    for i in range(3):
        p_IP[i] = x[1, S.S_R + i] + R_IC[i, 0] * c0 + R_IC[i, 1] * c1 + R_IC[i, 2] * c2
        ws[1, S.W_PI + i] = p_IP[i]
        ws[1, S.W_VI + i] = x[1, S.S_V + i] + R_IC[i, 0] * oc0 + R_IC[i, 1] * oc1 + R_IC[i, 2] * oc2
        ws[1, S.W_WI + i] = R_IC[i, 0] * o0 + R_IC[i, 1] * o1 + R_IC[i, 2] * o2
        for j in range(3):
            ws[1, S.W_RID + 3 * i + j] = R_IP[i, j]
    S.relative_from_ports(ws, rel)
    for i in range(S.REL_LEN, rel.shape[0]):
        rel[i] = 0.0


@njit(**KERNEL)
def flight_dynamics(a, x, w_in, xdot, ws):
    """The dynamic half, after :func:`flight_ports` on the same ``x`` and ``ws``: x' (``xdot``)
    under the wrench ``w_in[0]`` on P (module docstring). Returns False if the arm's mass matrix is
    not positive definite. Allocation-free: may be called in the real-time loop.

    Parameters
    ----------
    a : float64[L]
        The packed arm and payload; this, ``x``, ``w_in`` and ``ws`` as in the module docstring
        ("The kernels' arguments").
    x : float64[2, ns]
        The flight state.
    w_in : float64[2, 6]
        Row 0: the measured wrench on the payload at P.
    xdot : float64[2, ns]
        Written: x'.
    ws : float64[2, WS_LEN + flight scratch]
        Workspace holding what :func:`flight_ports` left for the same x; the flight's scratch written.
    """
    (ints, base_m, base_I, ee_m, ee_c, ee_I, sh, la, lb, fl, Mt, mom, J4, pose4, udot, Q, f4, R_IC, R_IP, p_IP, wk,
     nq, n, q, u) = _views(a, x, ws)
    # ---- the payload under the wrench on P (P components, moment about P's origin)
    fP0, fP1, fP2 = w_in[0, 0], w_in[0, 1], w_in[0, 2]
    mP0, mP1, mP2 = w_in[0, 3], w_in[0, 4], w_in[0, 5]
    for i in range(3):
        f4[i] = -(R_IP[i, 0] * fP0 + R_IP[i, 1] * fP1 + R_IP[i, 2] * fP2)       # the reaction on body 4
        f4[3 + i] = -(R_IP[i, 0] * mP0 + R_IP[i, 1] * mP1 + R_IP[i, 2] * mP2)
        f4[6 + i] = p_IP[i]
    # force and moment about the centre of mass, body axes: R_CP f_P, R_CP m_P + p_CP x (R_CP f_P)
    r = FL_RCP
    fC0 = fl[r] * fP0 + fl[r + 1] * fP1 + fl[r + 2] * fP2
    fC1 = fl[r + 3] * fP0 + fl[r + 4] * fP1 + fl[r + 5] * fP2
    fC2 = fl[r + 6] * fP0 + fl[r + 7] * fP1 + fl[r + 8] * fP2
    c0, c1, c2 = fl[FL_PCP], fl[FL_PCP + 1], fl[FL_PCP + 2]
    mC0 = fl[r] * mP0 + fl[r + 1] * mP1 + fl[r + 2] * mP2 + c1 * fC2 - c2 * fC1
    mC1 = fl[r + 3] * mP0 + fl[r + 4] * mP1 + fl[r + 5] * mP2 + c2 * fC0 - c0 * fC2
    mC2 = fl[r + 6] * mP0 + fl[r + 7] * mP1 + fl[r + 8] * mP2 + c0 * fC1 - c1 * fC0
    o0, o1, o2 = x[1, S.S_W], x[1, S.S_W + 1], x[1, S.S_W + 2]
    I = FL_IP
    h0 = fl[I] * o0 + fl[I + 1] * o1 + fl[I + 2] * o2
    h1 = fl[I + 3] * o0 + fl[I + 4] * o1 + fl[I + 5] * o2
    h2 = fl[I + 6] * o0 + fl[I + 7] * o1 + fl[I + 8] * o2
    g0 = mC0 - (o1 * h2 - o2 * h1)
    g1 = mC1 - (o2 * h0 - o0 * h2)
    g2 = mC2 - (o0 * h1 - o1 * h0)
    mp = fl[FL_MP]
    for i in range(3):
        xdot[1, S.S_R + i] = x[1, S.S_V + i]
        xdot[1, S.S_V + i] = -f4[i] / mp
        xdot[1, S.S_W + i] = (fl[FL_IPINV + 3 * i] * g0 + fl[FL_IPINV + 3 * i + 1] * g1
                              + fl[FL_IPINV + 3 * i + 2] * g2)
    qw, qx, qy, qz = x[1, S.S_Q], x[1, S.S_Q + 1], x[1, S.S_Q + 2], x[1, S.S_Q + 3]
    d0, d1, d2, d3 = SP.quat_rate_entries(qw, qx, qy, qz, o0, o1, o2)
    xdot[1, S.S_Q] = d0
    xdot[1, S.S_Q + 1] = d1
    xdot[1, S.S_Q + 2] = d2
    xdot[1, S.S_Q + 3] = d3
    # ---- the arm: joint servos, the reaction at P's origin
    for i in range(n):
        Q[i] = 0.0
    for j in range(3):
        i = int(fl[FL_IT + j])
        Q[i] = -fl[FL_KP + j] * (q[i + 1] - fl[FL_TH0 + j]) - fl[FL_KD + j] * u[i]
    ok = arm_dynamics(ints, base_m, base_I, ee_m, ee_c, ee_I, la, lb, q, u, Q, f4, udot, Mt, mom, J4, pose4, wk)
    # r_1' = R_I1 v_1, the base's quaternion rate, the joint and elastic coordinates' rates
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = SP.quat_dcm_entries(q[3], q[4], q[5], q[6])
    xdot[0, 0] = R00 * u[0] + R01 * u[1] + R02 * u[2]
    xdot[0, 1] = R10 * u[0] + R11 * u[1] + R12 * u[2]
    xdot[0, 2] = R20 * u[0] + R21 * u[1] + R22 * u[2]
    d0, d1, d2, d3 = SP.quat_rate_entries(q[3], q[4], q[5], q[6], u[3], u[4], u[5])
    xdot[0, 3] = d0
    xdot[0, 4] = d1
    xdot[0, 5] = d2
    xdot[0, 6] = d3
    for i in range(6, n):
        xdot[0, i + 1] = u[i]
    for i in range(n):
        xdot[0, nq + i] = udot[i]
    return ok


@njit(**KERNEL)
def flight_eval(a, x, w_in, xdot, ws, rel):
    """x' (``xdot``) of the flight state under the wrench ``w_in[0]`` on P (module docstring):
    :func:`flight_ports` then :func:`flight_dynamics`; leaves the ports in ``ws``, the relative
    state in ``rel`` and the arm's M~, momentum, J_4 and pose in the scratch (``flight_layout``).
    Returns False if the arm's mass matrix is not positive definite. Allocation-free: may be
    called in the real-time loop.

    Parameters
    ----------
    a : float64[L]
        The packed arm and payload; the arguments as for :func:`flight_ports` and
        :func:`flight_dynamics` (module docstring, "The kernels' arguments").
    x : float64[2, ns]
        The flight state.
    w_in : float64[2, 6]
        Row 0: the wrench on the payload at P.
    xdot : float64[2, ns]
        Written: x'.
    ws : float64[2, WS_LEN + flight scratch]
        Workspace: the ports (left for ``x``) and the flight's scratch.
    rel : float64[nrel]
        Written: the relative state of A in P.
    """
    flight_ports(a, x, ws, rel)
    return flight_dynamics(a, x, w_in, xdot, ws)


@njit(**KERNEL)
def _normalize(x, r, o):
    SP.quat_normalize(x[r, o:o + 4])


@njit(**KERNEL)
def normalize_quaternions(x):
    """The arm's base and the payload's attitude quaternions back to unit length (after a step).

    Parameters
    ----------
    x : float64[2, ns]
        The flight state; the arm base's quaternion (row 0, entries 3..6) and the payload's
        (row 1, ``S_Q``) scaled to unit norm in place.
    """
    _normalize(x, 0, 3)
    _normalize(x, 1, S.S_Q)


@njit(**KERNEL)
def flight_rk4_step(a, x, dt, w_in, k, xt, ws, rel):
    """One classical RK4 step with the wrench held; quaternions renormalised. Returns False if an
    evaluation failed (the state is then left unchanged). Allocation-free: may be called in the
    real-time loop.

    Parameters
    ----------
    a : float64[L]
        The packed arm and payload (module docstring, "The kernels' arguments", as for ``w_in``,
        ``ws`` and ``rel``).
    x : float64[2, ns]
        The flight state; advanced by dt in place (unchanged on failure).
    dt : float
        Step, s.
    w_in : float64[2, 6]
        Row 0: the wrench on the payload at P, held over the step.
    k : float64[4, 2, ns]
        Workspace: the four stage derivatives.
    xt : float64[2, ns]
        Workspace: the stage state.
    ws, rel : float64 arrays
        Workspace of :func:`flight_eval`.
    """
    ns = x.shape[1]
    ok = flight_eval(a, x, w_in, k[0], ws, rel)
    for st in range(1, 4):
        h = 0.5 * dt if st < 3 else dt
        for r in range(2):
            for i in range(ns):
                xt[r, i] = x[r, i] + h * k[st - 1, r, i]
        ok = flight_eval(a, xt, w_in, k[st], ws, rel) and ok
    if not ok:
        return False
    for r in range(2):
        for i in range(ns):
            x[r, i] += SP.rk4_increment(dt / 6.0, k[0, r, i], k[1, r, i], k[2, r, i], k[3, r, i])
    normalize_quaternions(x)
    return True


@njit(**KERNEL)
def flight_relative_rates(a, x, w_in, h, out, o, xdot, xt, ws, rel):
    """out[o:o+13] = the relative state of A in P, out[o+13:o+19] its accelerations by a forward
    difference along the exact derivative (as ``rt.dynamics.coupling.relative_rates``).
    Allocation-free: may be called in the real-time loop.

    Parameters
    ----------
    a, x, w_in : float64 arrays
        The packed arm and payload, the flight state, the held wrench (module docstring, "The
        kernels' arguments").
    h : float
        Step of the forward difference, s.
    out : float64[o + 19]
        Written: the relative state of A in P and its accelerations, as by
        ``rt.dynamics.coupling.relative_rates``.
    o : int
        Offset of the relative state in out.
    xdot : float64[2, ns]
        Workspace: x' at x.
    xt : float64[2, ns]
        Workspace: the state stepped by h.
    ws, rel : float64 arrays
        Workspace of :func:`flight_eval`.
    """
    flight_eval(a, x, w_in, xdot, ws, rel)
    for i in range(S.REL_LEN):
        out[o + i] = rel[i]
    for r in range(2):
        for i in range(x.shape[1]):
            xt[r, i] = x[r, i] + h * xdot[r, i]
    flight_ports(a, xt, ws, rel)
    for i in range(3):
        out[o + S.REL_LEN + i] = (rel[S.REL_V + i] - out[o + S.REL_V + i]) / h
        out[o + S.REL_LEN + 3 + i] = (rel[S.REL_W + i] - out[o + S.REL_W + i]) / h


# ====================================================================== Python shell
def flight_env() -> np.ndarray:
    """The ``env`` of a berthing flight: ``E_FLIGHT`` set (no orbit terms, no coupling spring)."""
    e = S.pack_env()
    e[S.E_FLIGHT] = 1.0
    return e


class BerthingFlight:
    """The berthing flight of one case: packed model (``par``, 1 x L), ``env``, state ``x`` (2 x
    ns) and the spacecraft workspace (``ws``: k, xt, ws, rel), used where a docking case uses
    ``rt.dynamics.spacecraft.Spacecraft`` (the controller, the digital reference, recompute)."""

    def __init__(self, case):
        from rt.dynamics.berthing_arm import ArmModel
        b = case.berthing
        if b is None:
            raise ValueError(f"case {case.name!r} is not a berthing case (no [berthing] table)")
        self.case = case
        self.arm = ArmModel(b.arm)
        arm = self.arm
        pay = case.passive
        th0 = [j.initial_rad for j in b.arm.joints]
        self.par = pack_flight(arm, pay.mass_kg, pay.inertia_kgm2, pay.port_position_m, pay.R_CD,
                               b.tool_position_m, b.R_4A, b.joint_stiffness_nm_per_rad,
                               b.joint_damping_nms_per_rad, th0)[None, :].copy()
        self.env = flight_env()
        self.nq, self.n = arm.nq, arm.n
        self.ns = max(self.nq + self.n, S.N_RIGID)
        self.x = np.zeros((2, self.ns))
        self.ws = S.Workspace(self.ns)
        # the flight's scratch past the spacecraft slots of ws's row 0 (flight_layout)
        lay = flight_layout(arm.ma, arm.mb)
        self.ws.ws = np.zeros((2, S.WS_LEN + lay[-1]))
        sc = self.ws.ws[0, S.WS_LEN:]
        n = self.n
        self.Mt = sc[lay[0]:lay[0] + n * n].reshape(n, n)
        self.mom = sc[lay[1]:lay[1] + 6]
        self.J4 = sc[lay[2]:lay[2] + 6 * n].reshape(6, n)
        self.pose4 = sc[lay[3]:lay[3] + 12]
        self.udot = sc[lay[4]:lay[4] + n]
        self._initial_state()

    @classmethod
    def from_case(cls, case) -> "BerthingFlight":
        return cls(case)

    def _initial_state(self) -> None:
        """The arm at rest at its joints' initial angles (undeflected, main spacecraft at the
        origin), the payload placed so that A has the case's pose in P and moving so that A has
        the case's velocity relative to P (seen in P), spinning at the case's passive rate."""
        ini = self.case.initial
        pay = self.case.passive
        b = self.case.berthing
        q, u = self.arm.home()
        self.x[0, :self.nq] = q
        self.x[0, self.nq:self.nq + self.n] = u
        self.x[1, S.S_Q] = 1.0
        self.evaluate(np.zeros((2, 6)))
        R_I4 = self.pose4[3:].reshape(3, 3)
        p_IA = self.pose4[:3] + R_I4 @ b.tool_position_m
        R_IA = R_I4 @ b.R_4A
        R_IP = R_IA @ ini.R_PA.T
        p_IP = p_IA - R_IP @ ini.position_m
        R_IC = R_IP @ pay.R_CD.T
        r_C = p_IP - R_IC @ pay.port_position_m
        w_C = ini.passive_rate_radps
        w_I = R_IC @ w_C
        # A is at rest: 0 = v_P + R_IP v_rel + w_P x (p_IA - p_IP)
        v_P = -(R_IP @ ini.velocity_mps) - np.cross(w_I, p_IA - p_IP)
        v_C = v_P - np.cross(w_I, R_IC @ pay.port_position_m)
        qc = np.empty(4)
        SP.dcm_to_quat(np.ascontiguousarray(R_IC), qc)
        self.x[1, S.S_R:S.S_R + 3] = r_C
        self.x[1, S.S_V:S.S_V + 3] = v_C
        self.x[1, S.S_Q:S.S_Q + 4] = qc
        self.x[1, S.S_W:S.S_W + 3] = w_C

    def evaluate(self, w_in: np.ndarray) -> np.ndarray:
        """x' at the current state; fills Mt, mom, J4, pose4 and ws.rel (Python shell)."""
        xdot = np.zeros_like(self.x)
        ok = flight_eval(self.par[0], self.x, np.ascontiguousarray(w_in, dtype=float), xdot, self.ws.ws, self.ws.rel)
        if not ok:
            raise FloatingPointError("the arm's mass matrix is not positive definite")
        return xdot

    def tool_jacobian(self) -> np.ndarray:
        """After :meth:`evaluate`: the 3 x n Jacobian of A's origin's inertial velocity,
        R_I4 (J_v - [p_4A x] J_omega) (the J of [Zhu, Wang & Zheng, eqs. 39, 42] with the tool as
        the contact point)."""
        R4 = self.pose4[3:].reshape(3, 3)
        g = np.asarray(self.case.berthing.tool_position_m, float)
        gx = np.array([[0.0, -g[2], g[1]], [g[2], 0.0, -g[0]], [-g[1], g[0], 0.0]])
        return R4 @ (self.J4[0:3] - gx @ self.J4[3:6])

    # the Spacecraft interface used by the controller, recompute and the analysis
    def set_hold_references(self) -> None:
        """Nothing to do: the joint servos hold the case's initial angles."""

    def step(self, t: float, dt: float, w_in: np.ndarray, react: int = 1) -> None:
        w = self.ws
        if not flight_rk4_step(self.par[0], self.x, dt, w_in, w.k, w.xt, w.ws, w.rel):
            raise FloatingPointError("the arm's mass matrix is not positive definite")

    def derivatives(self, t: float, w_in: np.ndarray, react: int = 1) -> np.ndarray:
        return self.evaluate(w_in)

    def relative(self) -> np.ndarray:
        self.evaluate(np.zeros((2, 6)))
        return self.ws.rel[:S.REL_LEN].copy()

    def invariants(self) -> np.ndarray:
        """``rt.dynamics.spacecraft``'s invariant record: I_T0 the arm's kinetic energy (elastic
        rates included), I_T0 + 1 the payload's, I_MODAL0 the links' strain energy, I_SPRING the
        joint servos' potential, I_TOTAL their sum, I_P / I_L the system's linear and angular
        momentum (about the inertial origin)."""
        self.evaluate(np.zeros((2, 6)))
        out = np.zeros(S.INV_LEN)
        u = self.x[0, self.nq:self.nq + self.n]
        q = self.x[0, :self.nq]
        out[S.I_T0] = 0.5 * u @ self.Mt @ u
        pay = self.case.passive
        v, w = self.x[1, S.S_V:S.S_V + 3], self.x[1, S.S_W:S.S_W + 3]
        out[S.I_T0 + 1] = 0.5 * pay.mass_kg * v @ v + 0.5 * w @ pay.inertia_kgm2 @ w
        arm = self.arm
        e = 0.0
        for (link, i_b, m) in ((arm.la, arm.i_b2, arm.ma), (arm.lb, arm.i_b3, arm.mb)):
            bq = q[i_b + 1:i_b + 1 + 2 * m]
            e += 0.5 * bq @ link[7] @ bq
        out[S.I_MODAL0] = e
        b = self.case.berthing
        th = np.array([q[i + 1] for i in (arm.i_t2, arm.i_t3, arm.i_t4)])
        th0 = np.array([j.initial_rad for j in b.arm.joints])
        out[S.I_SPRING] = 0.5 * float(b.joint_stiffness_nm_per_rad @ (th - th0) ** 2)
        out[S.I_TOTAL] = out[S.I_T0] + out[S.I_T0 + 1] + out[S.I_MODAL0] + out[S.I_SPRING]
        R_IC = np.empty((3, 3))
        SP.quat_to_dcm(np.ascontiguousarray(self.x[1, S.S_Q:S.S_Q + 4]), R_IC)
        r = self.x[1, S.S_R:S.S_R + 3]
        p = pay.mass_kg * v
        out[S.I_P:S.I_P + 3] = self.mom[:3] + p
        out[S.I_L:S.I_L + 3] = self.mom[3:] + np.cross(r, p) + R_IC @ (pay.inertia_kgm2 @ w)
        return out


def flight_from_case(case, coupling: tuple | None = None):
    """The flight model of a case: a :class:`BerthingFlight` for a berthing case, else the two
    spacecraft (``rt.dynamics.spacecraft.Spacecraft.from_case``)."""
    if getattr(case, "berthing", None) is not None:
        return BerthingFlight(case)
    return S.Spacecraft.from_case(case, coupling)
