"""The berthing arm of [Zhu, Wang & Zheng, §2–4] (issue 25): main spacecraft (body 1,
free-floating), two flexible links (bodies 2, 3), the end effector (body 4); revolute joints. The
payload (body 5) joins the chain at capture.

Coordinates (our choice where the paper is silent, docs/models/berthing.md): q = [r_1 (3,
inertial), q_1 (4, scalar-first, C1 -> inertial), theta_2, b_2, theta_3, b_3, theta_4] and the
generalized speeds u = [v_1, omega_1 (C1 components), theta_2', b_2', theta_3', b_3', theta_4'].
The paper pins the main spacecraft's centre of mass (v_1 = 0); here it floats, so the system's
linear momentum is conserved and the stand can reproduce the relative motion.

Kinematics (the recursion of [N. A. Yaskevich], frames of the bodies): body c hangs from body p at
the point a (p's frame; for a flexible p its deflected tip a = [L, phi(L).b_y, phi(L).b_z]) with
the rotation R_pc = R_el(b_p) R_joint(theta_c). The tip's elastic rotation R_el = Rz(alpha)
Ry(beta), alpha = phi'(L).b_y, beta = -phi'(L).b_z (delta = D(L) b of [Zhu, Wang & Zheng, eq. 8],
made a proper rotation so that velocities are the exact derivatives of positions). Then

    v_c = R_pc^T (v_p + omega_p x a + a'),   omega_c = R_pc^T (omega_p + omega_el) + e theta_c',

linear in u: w_i = J_i u (the natural orthogonal complement N of [Zhu, Wang & Zheng, eqs. 32, 35],
one block row per body), and the accelerations w_i' = J_i u' + w0_i with w0_i the velocity-product
terms (the recursion at u' = 0).

Dynamics ([Zhu, Wang & Zheng, eqs. 35–36] with Kane's body terms, ``rt.dynamics.flexible_body``):
M~ u' = Q - sum_i J_i^T (M_i w0_i + c_i), M~ = sum_i J_i^T M_i J_i; Q holds the joint torques and
the generalized external loads. Rigid bodies with their frame at a point O off the centre of
mass c: M = [m 1, -m c~; m c~, I_O], c = [m (omega x v + omega x (omega x c)); m c x (omega x v) +
omega x I_O omega].

Kernels: ``@njit(**rt.jit.KERNEL)``, allocation-free (every work array is a view of the caller's
scratch ``wk``, :func:`arm_scratch_len`): may be called in the real-time loop.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt.dynamics import spatial as SP
from rt.dynamics.flexible_body import flexible_body_terms
from rt.dynamics.tree import tree_solve
from rt.jit import KERNEL


@njit(**KERNEL)
def _rot(axis, q, R):
    """R = R_parent_child of a rotation by q about ``axis`` (0, 1, 2): x_parent = R x_child."""
    c = math.cos(q)
    s = math.sin(q)
    for i in range(3):
        for j in range(3):
            R[i, j] = 0.0
    i1 = (axis + 1) % 3
    i2 = (axis + 2) % 3
    R[axis, axis] = 1.0
    R[i1, i1] = c
    R[i2, i2] = c
    R[i1, i2] = -s
    R[i2, i1] = s


@njit(**KERNEL)
def rigid_body_terms(mass, com, I_O, w, M, c):
    """M and c of a rigid body with its frame at O (module docstring), w = [v; omega].

    Parameters
    ----------
    mass : float
        The body's mass, kg.
    com : float64[3]
        Its centre of mass relative to O, body frame, m.
    I_O : float64[3, 3]
        Its inertia about O, body axes, kg·m^2.
    w : float64[6]
        The twist of the frame at O ``[v (m/s); omega (rad/s)]``, body-frame components.
    M : float64[6, 6]
        Written: the body's mass matrix at O.
    c : float64[6]
        Written: its velocity-product terms.
    """
    vx, vy, vz = w[0], w[1], w[2]
    ox, oy, oz = w[3], w[4], w[5]
    for a in range(6):
        c[a] = 0.0
        for b in range(6):
            M[a, b] = 0.0
    cx, cy, cz = mass * com[0], mass * com[1], mass * com[2]
    for a in range(3):
        M[a, a] = mass
        for b in range(3):
            M[3 + a, 3 + b] = I_O[a, b]
    # -m c~ (upper right), m c~ (lower left)
    M[0, 4] = cz
    M[0, 5] = -cy
    M[1, 3] = -cz
    M[1, 5] = cx
    M[2, 3] = cy
    M[2, 4] = -cx
    for a in range(3):
        for b in range(3):
            M[3 + a, b] = M[b, 3 + a]
    # omega x v, omega x (omega x com), omega x I_O omega, com x (omega x v)
    ovx, ovy, ovz = oy * vz - oz * vy, oz * vx - ox * vz, ox * vy - oy * vx
    wcx, wcy, wcz = oy * com[2] - oz * com[1], oz * com[0] - ox * com[2], ox * com[1] - oy * com[0]
    occx, occy, occz = oy * wcz - oz * wcy, oz * wcx - ox * wcz, ox * wcy - oy * wcx
    hx = I_O[0, 0] * ox + I_O[0, 1] * oy + I_O[0, 2] * oz
    hy = I_O[1, 0] * ox + I_O[1, 1] * oy + I_O[1, 2] * oz
    hz = I_O[2, 0] * ox + I_O[2, 1] * oy + I_O[2, 2] * oz
    c[0] = mass * (ovx + occx)
    c[1] = mass * (ovy + occy)
    c[2] = mass * (ovz + occz)
    c[3] = mass * (com[1] * ovz - com[2] * ovy) + (oy * hz - oz * hy)
    c[4] = mass * (com[2] * ovx - com[0] * ovz) + (oz * hx - ox * hz)
    c[5] = mass * (com[0] * ovy - com[1] * ovx) + (ox * hy - oy * hx)


# ---------------------------------------------------------------------------- scratch
# The evaluation's work arrays are views of one caller-owned float64 array ``wk`` (the "Data" of
# the Model/Data split), of length arm_scratch_len(ma, mb); arm_kinematics leaves in it what
# arm_dynamics needs, so the two can be called apart (ports first, wrench from them, then the
# dynamics: the digital reference's snare).

@njit(**KERNEL)
def arm_scratch_len(ma, mb):
    """Length of the scratch array ``wk`` for ma and mb modes per plane.

    Parameters
    ----------
    ma, mb : int
        Modes per plane of link 2 and of link 3.
    """
    n = 6 + 1 + 2 * ma + 1 + 2 * mb + 1
    na = 6 + 2 * ma
    nb = 6 + 2 * mb
    nx = max(na, nb)
    return (6 * n + na * n + nb * n + 2 * (12 + na + nb) + 7 * 9 + 3 * 3 + (6 + 12 * ma) + (6 + 12 * mb)
            + nx * nx + nx + 3 * nx + n * nx + n + n * n)


@njit(inline="always", **KERNEL)
def _v(wk, o, n):
    return wk[o:o + n], o + n


@njit(inline="always", **KERNEL)
def _m(wk, o, r, c):
    return wk[o:o + r * c].reshape((r, c)), o + r * c


@njit(inline="always", **KERNEL)
def _carve(wk, ma, mb):
    """The named views of ``wk`` (arm_scratch_len)."""
    n = 6 + 1 + 2 * ma + 1 + 2 * mb + 1
    na = 6 + 2 * ma
    nb = 6 + 2 * mb
    nx = max(na, nb)
    o = 0
    J1, o = _m(wk, o, 6, n)
    Ja, o = _m(wk, o, na, n)
    Jb, o = _m(wk, o, nb, n)
    w1, o = _v(wk, o, 6)
    wa, o = _v(wk, o, na)
    wb, o = _v(wk, o, nb)
    w4, o = _v(wk, o, 6)
    d1, o = _v(wk, o, 6)
    da, o = _v(wk, o, na)
    db, o = _v(wk, o, nb)
    d4, o = _v(wk, o, 6)
    R1, o = _m(wk, o, 3, 3)
    Ra, o = _m(wk, o, 3, 3)
    Rb, o = _m(wk, o, 3, 3)
    Rp, o = _m(wk, o, 3, 3)
    T1, o = _m(wk, o, 3, 3)
    T2, o = _m(wk, o, 3, 3)
    T3, o = _m(wk, o, 3, 3)
    r1, o = _v(wk, o, 3)
    ra, o = _v(wk, o, 3)
    rb, o = _v(wk, o, 3)
    aa, o = _v(wk, o, 3)
    Aa, o = _m(wk, o, 3, 2 * ma)
    Oa, o = _m(wk, o, 3, 2 * ma)
    ea, o = _v(wk, o, 3)
    ab, o = _v(wk, o, 3)
    Ab, o = _m(wk, o, 3, 2 * mb)
    Ob, o = _m(wk, o, 3, 2 * mb)
    eb, o = _v(wk, o, 3)
    M, o = _m(wk, o, nx, nx)
    c, o = _v(wk, o, nx)
    Wp, o = _m(wk, o, 3, nx)
    JtM, o = _m(wk, o, n, nx)
    rhs, o = _v(wk, o, n)
    A, o = _m(wk, o, n, n)
    return (J1, Ja, Jb, w1, wa, wb, w4, d1, da, db, d4, R1, Ra, Rb, Rp, T1, T2, T3, r1, ra, rb, aa, Aa, Oa, ea,
            ab, Ab, Ob, eb, M, c, Wp, JtM, rhs, A)


# ---------------------------------------------------------------------------- evaluation
@njit(**KERNEL)
def arm_eval(ints, base_m, base_I, ee_m, ee_c, ee_I, shoulder, la, lb, q, u, Q, f4, udot, Mt, mom, J4o, pose4, wk):
    """One evaluation: u' (``udot``) from the state (q, u), the generalized forces ``Q`` and a
    wrench on the end effector ``f4`` = [force (3), moment (3), point of application (3)], all
    inertial (its generalized force J_X^T F + (R_I4 J_omega)^T M, J_X the velocity Jacobian of
    body 4's material point at X, is added to Q);
    also the system mass matrix ``Mt``, ``mom`` = [linear momentum (3), angular momentum about
    the inertial origin (3)], inertial components, the end effector's J_4 (``J4o``, 6 x N: its
    [v_4; omega_4] in frame 4 = J_4 u) and pose (``pose4`` = [r_4 (3, inertial), R_I4 (9,
    row-major)]). ``ints`` = [ma, mb, axis_2, axis_3, axis_4]; ``la``, ``lb`` = each link's (x,
    rw, phi, tip, slope, prm, hub, K); ``wk`` the scratch (arm_scratch_len). Returns False if the
    mass matrix is not positive definite. Allocation-free: may be called in the real-time loop.

    Parameters
    ----------
    ints : int64[5]
        ``[ma, mb, axis_2, axis_3, axis_4]``: modes per plane of links 2 and 3, joint axes (0, 1, 2).
    base_m : float
        Mass of the main spacecraft (body 1), kg.
    base_I : float64[3, 3]
        Its inertia about its centre of mass, C1 axes, kg·m^2.
    ee_m : float
        Mass of the end effector (body 4), kg.
    ee_c : float64[3]
        Its centre of mass in frame 4, m.
    ee_I : float64[3, 3]
        Its inertia about frame 4's origin, frame-4 axes, kg·m^2.
    shoulder : float64[3]
        Joint 2's position in C1, m.
    la, lb : tuple of float64 arrays
        Links 2 and 3: (x, rw, phi, tip, slope, prm, hub, K), ``rt.dynamics.flexible_body.BodyModel``'s
        arrays and the shape functions' slopes at the tip.
    q : float64[N + 1]
        Generalized coordinates (module docstring): r_1 (m, inertial), q_1, joint angles (rad), elastic.
    u : float64[N]
        Generalized speeds: v_1 (m/s), omega_1 (rad/s; C1), joint rates (rad/s), elastic rates.
    Q : float64[N]
        Generalized forces (joint torques, N·m); the end effector's wrench is added to a copy.
    f4 : float64[9]
        Wrench on the end effector, inertial: force (N), moment (N·m), point of application (m).
    udot : float64[N]
        Written: u'.
    Mt : float64[N, N]
        Written: the system mass matrix M~.
    mom : float64[6]
        Written: linear momentum (kg·m/s) and angular momentum about the inertial origin
        (kg·m^2/s), inertial components.
    J4o : float64[6, N]
        Written: the end effector's J_4 (its [v_4; omega_4] in frame 4 = J_4 u).
    pose4 : float64[12]
        Written: the end effector's pose: r_4 (m, inertial), R_I4 (row-major).
    wk : float64[arm_scratch_len(ma, mb)]
        Scratch; left holding every body's J_i, twist and velocity-product acceleration.
    """
    arm_kinematics(ints, shoulder, la, lb, q, u, J4o, pose4, wk)
    return arm_dynamics(ints, base_m, base_I, ee_m, ee_c, ee_I, la, lb, q, u, Q, f4, udot, Mt, mom, J4o, pose4, wk)


@njit(**KERNEL)
def arm_kinematics(ints, shoulder, la, lb, q, u, J4o, pose4, wk):
    """The recursion of the module docstring: every body's J_i, twist w_i = J_i u and
    velocity-product acceleration w0_i (kept in ``wk``), the end effector's J_4 (``J4o``) and pose
    (``pose4``). Allocation-free: may be called in the real-time loop.

    Parameters
    ----------
    ints : int64[5]
        Modes per plane and joint axes; this and the rest as for :func:`arm_eval`.
    shoulder : float64[3]
        Joint 2's position in C1, m.
    la, lb : tuple of float64 arrays
        Links 2 and 3.
    q : float64[N + 1]
        Generalized coordinates.
    u : float64[N]
        Generalized speeds.
    J4o : float64[6, N]
        Written: the end effector's J_4.
    pose4 : float64[12]
        Written: the end effector's pose.
    wk : float64[arm_scratch_len(ma, mb)]
        Scratch; left holding every body's J_i, twist and velocity-product acceleration.
    """
    ma, mb = int(ints[0]), int(ints[1])
    ax2, ax3, ax4 = int(ints[2]), int(ints[3]), int(ints[4])
    (J1, Ja, Jb, w1, wa, wb, w4, d1, da, db, d4, R1, Ra, Rb, Rp, T1, T2, T3, r1, ra, rb, aa, Aa, Oa, ea,
     ab, Ab, Ob, eb, M, c, Wp, JtM, rhs, A) = _carve(wk, ma, mb)
    i_t2 = 6
    i_b2 = 7
    i_t3 = 7 + 2 * ma
    i_b3 = i_t3 + 1
    i_t4 = i_b3 + 2 * mb
    N = i_t4 + 1
    # ---------------- body 1 (base): frame C1 at its centre of mass
    SP.quat_to_dcm(q[3:7], R1)
    for a in range(3):
        r1[a] = q[a]
    for a in range(6):
        for k in range(N):
            J1[a, k] = 0.0
        J1[a, a] = 1.0
        w1[a] = u[a]
        d1[a] = 0.0
    # ---------------- link 2 from the base at the shoulder (rigid parent)
    _rot(ax2, q[i_t2 + 1], Rp)
    SP.matmul3(R1, Rp, Ra)
    SP.matvec3(R1, shoulder, ra)
    for a in range(3):
        ra[a] += r1[a]
        ea[a] = 0.0
    _child(J1, w1, d1, shoulder, Aa, Oa, ea, 0, Rp, ax2, i_t2, Ja, wa, da, u)
    _elastic_rows(Ja, wa, i_b2, ma, u)
    # ---------------- link 3 from link 2's tip, the end effector from link 3's tip
    _from_tip(la, ma, i_b2, ax3, i_t3, q, u, Ja, wa, da, Ra, ra, aa, Aa, Oa, ea, Rp, T1, T2, T3, Rb, rb, Jb, wb, db)
    _elastic_rows(Jb, wb, i_b3, mb, u)
    _from_tip(lb, mb, i_b3, ax4, i_t4, q, u, Jb, wb, db, Rb, rb, ab, Ab, Ob, eb, Rp, T1, T2, T3, T1, T2[0], J4o, w4, d4)
    for a in range(3):
        pose4[a] = T2[0, a]
        for b in range(3):
            pose4[3 + 3 * a + b] = T1[a, b]


@njit(**KERNEL)
def _from_tip(link, m, i_b, axis, i_theta, q, u, Jp, wp, dp, Rp_I, rp_I, a, A, Om, bias, Rpc, T1, T2, T3, Rc_I, rc_I,
              Jc, wc, dc):
    """The body hanging from a flexible link's deflected tip: its attachment (:func:`_tip_frame`),
    inertial pose R_Ic = R_Ip R_pc, r_c = r_p + R_Ip a (``Rc_I`` may be ``T1``, ``rc_I`` a row of
    ``T2``: both are written last) and its rows of J, w, w0 (:func:`_child`)."""
    x, rw, ph, tip, slope, prm, hub, K = link
    _tip_frame(tip, slope, prm[0], q[i_b + 1:i_b + 1 + 2 * m], u[i_b:i_b + 2 * m], axis, q[i_theta + 1],
               a, A, Om, bias, Rpc, T1, T2, T3)
    _child(Jp, wp, dp, a, A, Om, bias, 1, Rpc, axis, i_theta, Jc, wc, dc, u)
    SP.matvec3(Rp_I, a, T3[0])
    for i in range(3):
        T3[0, i] += rp_I[i]
    SP.matmul3(Rp_I, Rpc, Rc_I)
    for i in range(3):
        rc_I[i] = T3[0, i]


@njit(**KERNEL)
def arm_dynamics(ints, base_m, base_I, ee_m, ee_c, ee_I, la, lb, q, u, Q, f4, udot, Mt, mom, J4o, pose4, wk):
    """After :func:`arm_kinematics` on the same (q, u) and ``wk``: the body terms, M~ and its
    solve (module docstring; the arguments as :func:`arm_eval`'s). Allocation-free: may be called
    in the real-time loop.

    Parameters
    ----------
    ints : int64[5]
        Modes per plane and joint axes; this and the rest down to ``mom`` as for :func:`arm_eval`.
    base_m : float
        The main spacecraft's mass.
    base_I : float64[3, 3]
        The main spacecraft's inertia.
    ee_m : float
        The end effector's mass.
    ee_c : float64[3]
        The end effector's centre of mass.
    ee_I : float64[3, 3]
        The end effector's inertia.
    la, lb : tuple of float64 arrays
        Links 2 and 3.
    q, u, Q, f4 : float64 arrays
        Generalized coordinates, speeds and forces; the wrench on the end effector.
    udot, Mt, mom : float64 arrays
        Written: u', the system mass matrix, the momenta.
    J4o : float64[6, N]
        The end effector's J_4, as :func:`arm_kinematics` left it.
    pose4 : float64[12]
        The end effector's pose, as :func:`arm_kinematics` left it.
    wk : float64[arm_scratch_len(ma, mb)]
        Scratch, as :func:`arm_kinematics` left it; the body terms and the solve's work written.
    """
    ma, mb = int(ints[0]), int(ints[1])
    (J1, Ja, Jb, w1, wa, wb, w4, d1, da, db, d4, R1, Ra, Rb, Rp, T1, T2, T3, r1, ra, rb, aa, Aa, Oa, ea,
     ab, Ab, Ob, eb, M, c, Wp, JtM, rhs, A) = _carve(wk, ma, mb)
    i_b2 = 7
    i_b3 = 7 + 2 * ma + 1
    N = i_b3 + 2 * mb + 1
    for a in range(N):
        rhs[a] = Q[a]
        for b in range(N):
            Mt[a, b] = 0.0
    for a in range(6):
        mom[a] = 0.0
    for a in range(3):
        T3[0, a] = pose4[a]
        for b in range(3):
            T1[a, b] = pose4[3 + 3 * a + b]
    R4 = T1
    r4 = T3[0]
    _add_wrench(f4, R4, r4, J4o, rhs)
    # base (frame at its centre of mass), the links, the end effector; each body's J has no entry
    # past its own last coordinate
    for a in range(3):
        T2[0, a] = 0.0
    rigid_body_terms(base_m, T2[0], base_I, w1, M, c)
    _assemble(J1, M, c, d1, 6, 6, Mt, rhs, w1, R1, r1, mom, JtM)
    na = 6 + 2 * ma
    xa, rwa, pha, tipa, slopea, prma, huba, Ka = la
    flexible_body_terms(xa, rwa, pha, tipa, prma, huba, Ka, q[i_b2 + 1:i_b2 + 1 + 2 * ma], wa[6:], wa, M, c, Wp)
    _assemble(Ja, M, c, da, na, i_b2 + 2 * ma, Mt, rhs, wa, Ra, ra, mom, JtM)
    nb = 6 + 2 * mb
    xb, rwb, phb, tipb, slopeb, prmb, hubb, Kb = lb
    flexible_body_terms(xb, rwb, phb, tipb, prmb, hubb, Kb, q[i_b3 + 1:i_b3 + 1 + 2 * mb], wb[6:], wb, M, c, Wp)
    _assemble(Jb, M, c, db, nb, i_b3 + 2 * mb, Mt, rhs, wb, Rb, rb, mom, JtM)
    rigid_body_terms(ee_m, ee_c, ee_I, w4, M, c)
    _assemble(J4o, M, c, d4, 6, N, Mt, rhs, w4, R4, r4, mom, JtM)
    for a in range(N):
        for b in range(N):
            A[a, b] = Mt[a, b]
    return tree_solve(A, rhs, udot, N)


@njit(**KERNEL)
def _elastic_rows(J, w, i_b, m, u):
    """A flexible link's rows 6.. of J and w: its own elastic rates."""
    N = J.shape[1]
    for k in range(2 * m):
        for j in range(N):
            J[6 + k, j] = 0.0
        J[6 + k, i_b + k] = 1.0
        w[6 + k] = u[i_b + k]


@njit(**KERNEL)
def _add_wrench(f4, R4, r4, J4, rhs):
    """rhs += J_X^T F + (R_I4 J_omega)^T M for the wrench ``f4`` = [F, M, X] (inertial) on body 4:
    the material point at X moves with R_I4 (v_4 + omega_4 x g), g = R_I4^T (X - r_4)."""
    if (f4[0] == 0.0 and f4[1] == 0.0 and f4[2] == 0.0 and f4[3] == 0.0 and f4[4] == 0.0
            and f4[5] == 0.0):
        return
    g0 = R4[0, 0] * (f4[6] - r4[0]) + R4[1, 0] * (f4[7] - r4[1]) + R4[2, 0] * (f4[8] - r4[2])
    g1 = R4[0, 1] * (f4[6] - r4[0]) + R4[1, 1] * (f4[7] - r4[1]) + R4[2, 1] * (f4[8] - r4[2])
    g2 = R4[0, 2] * (f4[6] - r4[0]) + R4[1, 2] * (f4[7] - r4[1]) + R4[2, 2] * (f4[8] - r4[2])
    # the force and moment in frame 4
    F0 = R4[0, 0] * f4[0] + R4[1, 0] * f4[1] + R4[2, 0] * f4[2]
    F1 = R4[0, 1] * f4[0] + R4[1, 1] * f4[1] + R4[2, 1] * f4[2]
    F2 = R4[0, 2] * f4[0] + R4[1, 2] * f4[1] + R4[2, 2] * f4[2]
    M0 = R4[0, 0] * f4[3] + R4[1, 0] * f4[4] + R4[2, 0] * f4[5]
    M1 = R4[0, 1] * f4[3] + R4[1, 1] * f4[4] + R4[2, 1] * f4[5]
    M2 = R4[0, 2] * f4[3] + R4[1, 2] * f4[4] + R4[2, 2] * f4[5]
    # v_X = v_4 + omega_4 x g: F . v_X = F4 . v_4 + (g x F4) . omega_4
    t0 = g1 * F2 - g2 * F1 + M0
    t1 = g2 * F0 - g0 * F2 + M1
    t2 = g0 * F1 - g1 * F0 + M2
    for k in range(J4.shape[1]):
        rhs[k] += (F0 * J4[0, k] + F1 * J4[1, k] + F2 * J4[2, k] + t0 * J4[3, k] + t1 * J4[4, k]
                   + t2 * J4[5, k])


@njit(**KERNEL)
def _tip_frame(tip, slope, L, b, bd, axis, theta, a, A, Om, bias, Rpc, T1, T2, T3):
    """A flexible link's deflected tip as the next body's attachment (module docstring): the
    point ``a`` = [L, phi(L).b_y, phi(L).b_z], its rate matrix ``A`` (a' = A b'), the elastic
    rotation's rate matrix ``Om`` (omega_el = Om b', parent frame), the ``bias`` of omega_el
    (alpha' z x (Rz(alpha) y beta')), and ``Rpc`` = Rz(alpha) Ry(beta) R_joint(theta); T1..T3
    scratch."""
    m = tip.shape[0]
    ty = 0.0
    tz = 0.0
    alpha = 0.0
    beta = 0.0
    ad = 0.0
    bdt = 0.0
    for k in range(m):
        ty += tip[k] * b[k]
        tz += tip[k] * b[m + k]
        alpha += slope[k] * b[k]
        beta -= slope[k] * b[m + k]
        ad += slope[k] * bd[k]
        bdt -= slope[k] * bd[m + k]
    a[0] = L
    a[1] = ty
    a[2] = tz
    for r in range(3):
        for k in range(2 * m):
            A[r, k] = 0.0
            Om[r, k] = 0.0
    _rot(2, alpha, T1)
    for k in range(m):
        A[1, k] = tip[k]
        A[2, m + k] = tip[k]
        Om[2, k] = slope[k]
        for r in range(3):
            Om[r, m + k] = -T1[r, 1] * slope[k]
    # bias = [0, 0, ad] x (Rz[:, 1] bdt)
    bias[0] = -ad * T1[1, 1] * bdt
    bias[1] = ad * T1[0, 1] * bdt
    bias[2] = 0.0
    _rot(1, beta, T2)
    SP.matmul3(T1, T2, T3)
    _rot(axis, theta, T2)
    SP.matmul3(T3, T2, Rpc)


@njit(**KERNEL)
def _child(Jp, wp, dp, a, Ab, Om, oel_bias, flex, Rpc, axis, i_theta, Jc, wc, dc, u):
    """One step of the recursion (module docstring): the child's rigid rows of J, w and the
    velocity-product acceleration w0 from the parent's (``flex``: the parent is a flexible link
    whose elastic rates sit in its rows 6.. of J / w; ``axis`` the joint's axis in the child's
    frame)."""
    N = Jp.shape[1]
    nb = Ab.shape[1]
    a0, a1, a2 = a[0], a[1], a[2]
    # v_c = R^T (v_p + omega_p x a + Ab b'_p), omega_c = R^T (omega_p + Om b'_p) + e theta'
    for k in range(N):
        jw0, jw1, jw2 = Jp[3, k], Jp[4, k], Jp[5, k]
        jv0 = Jp[0, k] - (a1 * jw2 - a2 * jw1)
        jv1 = Jp[1, k] - (a2 * jw0 - a0 * jw2)
        jv2 = Jp[2, k] - (a0 * jw1 - a1 * jw0)
        if flex:
            for j in range(nb):
                x = Jp[6 + j, k]
                if x != 0.0:
                    jv0 += Ab[0, j] * x
                    jv1 += Ab[1, j] * x
                    jv2 += Ab[2, j] * x
                    jw0 += Om[0, j] * x
                    jw1 += Om[1, j] * x
                    jw2 += Om[2, j] * x
        for r in range(3):
            Jc[r, k] = Rpc[0, r] * jv0 + Rpc[1, r] * jv1 + Rpc[2, r] * jv2
            Jc[3 + r, k] = Rpc[0, r] * jw0 + Rpc[1, r] * jw1 + Rpc[2, r] * jw2
    Jc[3 + axis, i_theta] += 1.0
    for r in range(6):
        s = 0.0
        for k in range(N):
            s += Jc[r, k] * u[k]
        wc[r] = s
    # a' = Ab b'_p and omega_el = Om b'_p of the parent's tip (zero for a rigid parent)
    ad0 = ad1 = ad2 = 0.0
    oe0 = oe1 = oe2 = 0.0
    if flex:
        for j in range(nb):
            x = wp[6 + j]
            ad0 += Ab[0, j] * x
            ad1 += Ab[1, j] * x
            ad2 += Ab[2, j] * x
            oe0 += Om[0, j] * x
            oe1 += Om[1, j] * x
            oe2 += Om[2, j] * x
    op0, op1, op2 = wp[3], wp[4], wp[5]
    # relative angular velocity of c w.r.t. p (c frame): R^T omega_el + e theta'
    wr0 = Rpc[0, 0] * oe0 + Rpc[1, 0] * oe1 + Rpc[2, 0] * oe2
    wr1 = Rpc[0, 1] * oe0 + Rpc[1, 1] * oe1 + Rpc[2, 1] * oe2
    wr2 = Rpc[0, 2] * oe0 + Rpc[1, 2] * oe1 + Rpc[2, 2] * oe2
    th = u[i_theta]
    if axis == 0:
        wr0 += th
    elif axis == 1:
        wr1 += th
    else:
        wr2 += th
    # v0_c = R^T (v0_p + eps0_p x a + omega_p x a') - w_rel x v_c
    e0, e1, e2 = dp[3], dp[4], dp[5]
    t0 = dp[0] + (e1 * a2 - e2 * a1) + (op1 * ad2 - op2 * ad1)
    t1 = dp[1] + (e2 * a0 - e0 * a2) + (op2 * ad0 - op0 * ad2)
    t2 = dp[2] + (e0 * a1 - e1 * a0) + (op0 * ad1 - op1 * ad0)
    vc0, vc1, vc2 = wc[0], wc[1], wc[2]
    # eps0_c = R^T (eps0_p + oel_bias) - w_rel x R^T (omega_p + omega_el)
    s0, s1, s2 = e0 + oel_bias[0], e1 + oel_bias[1], e2 + oel_bias[2]
    p0, p1, p2 = op0 + oe0, op1 + oe1, op2 + oe2
    for r in range(3):
        rt_ = Rpc[0, r] * t0 + Rpc[1, r] * t1 + Rpc[2, r] * t2
        rs = Rpc[0, r] * s0 + Rpc[1, r] * s1 + Rpc[2, r] * s2
        dc[r] = rt_
        dc[3 + r] = rs
    q0 = Rpc[0, 0] * p0 + Rpc[1, 0] * p1 + Rpc[2, 0] * p2
    q1 = Rpc[0, 1] * p0 + Rpc[1, 1] * p1 + Rpc[2, 1] * p2
    q2 = Rpc[0, 2] * p0 + Rpc[1, 2] * p1 + Rpc[2, 2] * p2
    dc[0] -= wr1 * vc2 - wr2 * vc1
    dc[1] -= wr2 * vc0 - wr0 * vc2
    dc[2] -= wr0 * vc1 - wr1 * vc0
    dc[3] -= wr1 * q2 - wr2 * q1
    dc[4] -= wr2 * q0 - wr0 * q2
    dc[5] -= wr0 * q1 - wr1 * q0


@njit(**KERNEL)
def _assemble(J, M, c, d, nb, ncol, Mt, rhs, w, R, r, mom, JtM):
    """Mt += J^T M J, rhs -= J^T (M d + c); momentum += [R p; r x R p + R l] with [p; l] = M w
    (the body's nb rows of J, M, c, d, w; J zero from column ``ncol`` on; JtM scratch)."""
    for k in range(ncol):
        for j in range(nb):
            s = 0.0
            for i in range(nb):
                s += J[i, k] * M[i, j]
            JtM[k, j] = s
    for k in range(ncol):
        for l in range(k, ncol):
            s = 0.0
            for j in range(nb):
                s += JtM[k, j] * J[j, l]
            Mt[k, l] += s
            if l != k:
                Mt[l, k] += s
        s = 0.0
        for j in range(nb):
            s += JtM[k, j] * d[j] + J[j, k] * c[j]
        rhs[k] -= s
    h0 = h1 = h2 = h3 = h4 = h5 = 0.0
    for j in range(nb):
        x = w[j]
        h0 += M[0, j] * x
        h1 += M[1, j] * x
        h2 += M[2, j] * x
        h3 += M[3, j] * x
        h4 += M[4, j] * x
        h5 += M[5, j] * x
    P0 = R[0, 0] * h0 + R[0, 1] * h1 + R[0, 2] * h2
    P1 = R[1, 0] * h0 + R[1, 1] * h1 + R[1, 2] * h2
    P2 = R[2, 0] * h0 + R[2, 1] * h1 + R[2, 2] * h2
    mom[0] += P0
    mom[1] += P1
    mom[2] += P2
    mom[3] += r[1] * P2 - r[2] * P1 + R[0, 0] * h3 + R[0, 1] * h4 + R[0, 2] * h5
    mom[4] += r[2] * P0 - r[0] * P2 + R[1, 0] * h3 + R[1, 1] * h4 + R[1, 2] * h5
    mom[5] += r[0] * P1 - r[1] * P0 + R[2, 0] * h3 + R[2, 1] * h4 + R[2, 2] * h5


# ====================================================================== Python shell
class ArmModel:
    """The arm's arrays from an :class:`rt.config.arm.ArmConfig` (built once, outside the loop):
    :meth:`evaluate` gives u' for (q, u, Q); :meth:`home` the configuration at the joints' initial
    angles, undeflected, at rest."""

    def __init__(self, cfg):
        from rt.dynamics.flexible_body import body_model
        from rt.dynamics.flexible_link import shape
        self.cfg = cfg
        links = []
        for lk in cfg.links:
            bm = body_model(lk.length_m, lk.ei_nm2, lk.rho_kg_per_m, lk.tip_mass_kg, lk.hub_inertia_kgm2,
                            lk.modes_per_plane)
            slope = np.array([shape(j, np.array(lk.length_m), lk.length_m, 1)
                              for j in range(1, lk.modes_per_plane + 1)], dtype=float)
            links.append((bm.x, bm.rw, bm.phi, bm.tip, slope, bm.prm, bm.hub, bm.K))
        self.la, self.lb = links
        ma, mb = (lk.modes_per_plane for lk in cfg.links)
        self.ints = np.array([ma, mb, cfg.joints[0].axis, cfg.joints[1].axis, cfg.joints[2].axis], dtype=np.int64)
        self.ma, self.mb = ma, mb
        self.n = 6 + 1 + 2 * ma + 1 + 2 * mb + 1
        self.nq = self.n + 1
        b = cfg.base
        self.base_m = b.mass_kg
        d = np.asarray(b.com_m, float)
        if np.any(d != 0.0):
            raise ValueError("the main spacecraft's frame is its centre of mass: com_m must be 0")
        self.base_I = np.asarray(b.inertia_kgm2, float)
        ee = cfg.end_effector
        c = np.asarray(ee.com_m, float)
        self.ee_m = ee.mass_kg
        self.ee_c = c
        self.ee_I = np.asarray(ee.inertia_kgm2, float) + ee.mass_kg * (c @ c * np.eye(3) - np.outer(c, c))
        self.shoulder = np.asarray(cfg.joints[0].position_m, float)
        self.Mt = np.zeros((self.n, self.n))
        self.mom = np.zeros(6)
        self.udot = np.zeros(self.n)
        self.J4 = np.zeros((6, self.n))
        self.pose4 = np.zeros(12)
        self._no_wrench = np.zeros(9)
        self.wk = np.zeros(arm_scratch_len(ma, mb))
        # indices
        self.i_t2, self.i_b2 = 6, 7
        self.i_t3 = 7 + 2 * ma
        self.i_b3 = self.i_t3 + 1
        self.i_t4 = self.i_b3 + 2 * mb

    def q_index(self, i_u: int) -> int:
        """Index in q of the coordinate whose rate is u[i_u] (joint or elastic; q has one more
        entry than u before them: the quaternion's fourth)."""
        return i_u + 1

    def home(self) -> tuple[np.ndarray, np.ndarray]:
        q = np.zeros(self.nq)
        q[3] = 1.0
        for jt, i in zip(self.cfg.joints, (self.i_t2, self.i_t3, self.i_t4)):
            q[self.q_index(i)] = jt.initial_rad
        return q, np.zeros(self.n)

    def evaluate(self, q, u, Q=None, f4=None) -> np.ndarray:
        """u' for the state (q, u), generalized forces Q (zeros: free flight) and the wrench
        ``f4`` on the end effector ([F, M, X], inertial; :func:`arm_eval`). Also fills
        :attr:`Mt` and :attr:`mom` ([P; L about the inertial origin], inertial)."""
        Q = np.zeros(self.n) if Q is None else np.asarray(Q, float)
        qr = self.rigid_q(q)
        ok = arm_eval(self.ints, self.base_m, self.base_I, self.ee_m, self.ee_c, self.ee_I, self.shoulder,
                      self.la, self.lb, qr, np.asarray(u, float), Q, self._no_wrench if f4 is None else f4, self.udot, self.Mt, self.mom, self.J4,
                      self.pose4, self.wk)
        if not ok:
            raise FloatingPointError("the arm's mass matrix is not positive definite")
        return self.udot

    def rigid_q(self, q):
        """The kernels' q layout: [r, quat, theta_2, b_2, ...] in u's order after the quaternion
        (q itself: the layouts agree; kept for clarity)."""
        return np.asarray(q, float)

    def grasp_jacobian(self) -> np.ndarray:
        """After :meth:`evaluate`: the 3 x N Jacobian of the grasp point's inertial velocity (the J
        of [Zhu, Wang & Zheng, eqs. 39, 42]): R_I4 (J_v - [g x] J_omega), g = the grasp point in
        frame 4."""
        R4 = self.pose4[3:].reshape(3, 3)
        g = np.asarray(self.cfg.grasp_point_m, float)
        gx = np.array([[0.0, -g[2], g[1]], [g[2], 0.0, -g[0]], [-g[1], g[0], 0.0]])
        return R4 @ (self.J4[0:3] - gx @ self.J4[3:6])

    def grasp_point(self) -> np.ndarray:
        """After :meth:`evaluate`: the grasp point in the inertial frame."""
        return self.pose4[:3] + self.pose4[3:].reshape(3, 3) @ np.asarray(self.cfg.grasp_point_m, float)

    def with_payload(self, mass_kg: float, com_4: np.ndarray, inertia_c_4: np.ndarray) -> "ArmModel":
        """The arm after capture: the payload rigidly joined to the end effector (body 5 fixed in
        frame 4 at the instant of capture, its centre of mass at ``com_4`` and its inertia about it
        ``inertia_c_4``, frame-4 axes) merged into the end effector's mass properties about O_4."""
        import copy
        out = copy.copy(self)
        m1, c1, I1 = self.ee_m, self.ee_c, self.ee_I
        c2 = np.asarray(com_4, float)
        I2 = np.asarray(inertia_c_4, float) + mass_kg * (c2 @ c2 * np.eye(3) - np.outer(c2, c2))
        out.ee_m = m1 + mass_kg
        out.ee_c = (m1 * c1 + mass_kg * c2) / out.ee_m
        out.ee_I = I1 + I2
        out.Mt = np.zeros_like(self.Mt)
        out.mom = np.zeros(6)
        out.udot = np.zeros(self.n)
        out.J4 = np.zeros_like(self.J4)
        out.pose4 = np.zeros(12)
        out.wk = np.zeros_like(self.wk)
        return out
