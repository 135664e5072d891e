"""The berthing arm of seed 004 (§6.1-6.3; issue 25): main spacecraft (body 1, free-floating),
two flexible links (bodies 2, 3), the end effector (body 4); revolute joints. The payload (body
5) joins the chain at capture.

Coordinates (our choice where the seed is silent, docs/models/berthing.md): q = [r_1 (3,
inertial), q_1 (4, scalar-first, C1 -> inertial), theta_2, b_2, theta_3, b_3, theta_4] and the
generalized speeds u = [v_1, omega_1 (C1 components), theta_2', b_2', theta_3', b_3', theta_4'].
The seed pins the main spacecraft's centre of mass (v_1 = 0); here it floats, so the system's
linear momentum is conserved and the stand can reproduce the relative motion.

Kinematics (seed 003 recursion, frames of the bodies): body c hangs from body p at the point a
(p's frame; for a flexible p its deflected tip a = [L, phi(L).b_y, phi(L).b_z]) with the
rotation R_pc = R_el(b_p) R_joint(theta_c). The tip's elastic rotation R_el = Rz(alpha) Ry(beta),
alpha = phi'(L).b_y, beta = -phi'(L).b_z (seed 004 delta = D(L) b, made a proper rotation so that
velocities are the exact derivatives of positions). Then

    v_c = R_pc^T (v_p + omega_p x a + a'),   omega_c = R_pc^T (omega_p + omega_el) + e theta_c',

linear in u: w_i = J_i u (the natural orthogonal complement N of seed 004 eq. 35, one block row
per body), and the accelerations w_i' = J_i u' + w0_i with w0_i the velocity-product terms
(the recursion at u' = 0).

Dynamics (seed 004 eqs. 35-36 with Kane's body terms, ``rt.dynamics.flexible_body``):
M~ u' = Q - sum_i J_i^T (M_i w0_i + c_i), M~ = sum_i J_i^T M_i J_i; Q holds the joint torques and
the generalized external loads. Rigid bodies with their frame at a point O off the centre of
mass c: M = [m 1, -m c~; m c~, I_O], c = [m (omega x v + omega x (omega x c)); m c x (omega x v) +
omega x I_O omega].
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt.dynamics import spatial as SP
from rt.dynamics.flexible_body import flexible_body_terms
from rt.dynamics.tree import tree_solve


@njit(cache=True)
def _rot(axis, q):
    """R_parent_child of a rotation by q about ``axis`` (0, 1, 2): x_parent = R x_child."""
    c = math.cos(q)
    s = math.sin(q)
    R = np.eye(3)
    i1 = (axis + 1) % 3
    i2 = (axis + 2) % 3
    R[i1, i1] = c
    R[i2, i2] = c
    R[i1, i2] = -s
    R[i2, i1] = s
    return R


@njit(cache=True)
def _mm(A, B):
    """A B for small matrices (numba's matmul would need scipy's BLAS)."""
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for k in range(A.shape[1]):
            a = A[i, k]
            if a != 0.0:
                for j in range(B.shape[1]):
                    C[i, j] += a * B[k, j]
    return C


@njit(cache=True)
def _mv(A, x):
    y = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        s = 0.0
        for k in range(A.shape[1]):
            s += A[i, k] * x[k]
        y[i] = s
    return y


@njit(cache=True)
def _dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True)
def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


@njit(cache=True)
def rigid_body_terms(mass, com, I_O, w, M, c):
    """M and c of a rigid body with its frame at O (module docstring), w = [v; omega]."""
    v = w[0:3]
    om = w[3:6]
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
    ov = _cross(om, v)
    occ = _cross(om, _cross(om, com))
    Iw = _mv(I_O, om)
    gyro = _cross(om, Iw)
    cov = _cross(com, ov)
    for a in range(3):
        c[a] = mass * (ov[a] + occ[a])
        c[3 + a] = mass * cov[a] + gyro[a]


@njit(cache=True)
def arm_eval(ints, base_m, base_I, ee_m, ee_c, ee_I, shoulder, la, lb, q, u, Q, f4, udot, Mt, mom, J4o, pose4):
    """One evaluation: u' (``udot``) from the state (q, u), the generalized forces ``Q`` and a
    wrench on the end effector ``f4`` = [force (3), moment (3), point of application (3)], all
    inertial (its generalized force J_X^T F + (R_I4 J_omega)^T M, J_X the velocity Jacobian of
    body 4's material point at X, is added to Q);
    also the system mass matrix ``Mt``, ``mom`` = [linear momentum (3), angular momentum about
    the inertial origin (3)], inertial components, the end effector's J_4 (``J4o``, 6 x N: its
    [v_4; omega_4] in frame 4 = J_4 u) and pose (``pose4`` = [r_4 (3, inertial), R_I4 (9,
    row-major)]). ``ints`` = [ma, mb, axis_2, axis_3, axis_4];
    ``la``, ``lb`` = each link's (x, rw, phi, tip, slope, prm, hub, K). Returns False if the mass
    matrix is not positive definite."""
    ma, mb = int(ints[0]), int(ints[1])
    ax2, ax3, ax4 = int(ints[2]), int(ints[3]), int(ints[4])
    # u indices; the same coordinate sits at index + 1 in q (q has the quaternion's 4 entries)
    i_t2 = 6
    i_b2 = 7
    i_t3 = 7 + 2 * ma
    i_b3 = i_t3 + 1
    i_t4 = i_b3 + 2 * mb
    N = i_t4 + 1
    # ---------------- body 1 (base): frame C1
    R1 = np.empty((3, 3))
    SP.quat_to_dcm(q[3:7], R1)
    r1 = q[0:3].copy()
    J1 = np.zeros((6, N))
    for a in range(6):
        J1[a, a] = 1.0
    w1 = _mv(J1, u)
    d1 = np.zeros(6)
    bodies_R = (R1,)
    # ---------------- generic child step
    # parent quantities for link 2: rigid parent (base), attachment at the shoulder, no elastic tip
    Ja = np.zeros((6 + 2 * ma, N))
    Jb = np.zeros((6 + 2 * mb, N))
    J4 = np.zeros((6, N))
    wa = np.zeros(6 + 2 * ma)
    wb = np.zeros(6 + 2 * mb)
    w4 = np.zeros(6)
    da = np.zeros(6 + 2 * ma)
    db = np.zeros(6 + 2 * mb)
    d4 = np.zeros(6)
    # link 2 from the base
    Rpc = _rot(ax2, q[i_t2 + 1])
    Ra = _mm(R1, Rpc)
    ra = r1 + _mv(R1, shoulder)
    e = np.zeros(3)
    e[ax2] = 1.0
    _child(J1, w1, d1, shoulder, np.zeros((3, 0)), np.zeros((3, 0)), np.zeros(3), 0, Rpc, e, i_t2, Ja, wa, da, u)
    for k in range(2 * ma):
        Ja[6 + k, i_b2 + k] = 1.0
        wa[6 + k] = u[i_b2 + k]
    # link 3 from link 2's tip
    xa, rwa, pha, tipa, slopea, prma, huba, Ka = la
    ba = q[i_b2 + 1:i_b2 + 1 + 2 * ma]
    aa, Ab_a, Om_a, oel_bias, Rpc = _tip_frame(tipa, slopea, prma[0], ba, u[i_b2:i_b2 + 2 * ma], ax3, q[i_t3 + 1])
    Rb = _mm(Ra, Rpc)
    rb = ra + _mv(Ra, aa)
    e = np.zeros(3)
    e[ax3] = 1.0
    _child(Ja, wa, da, aa, Ab_a, Om_a, oel_bias, 1, Rpc, e, i_t3, Jb, wb, db, u)
    for k in range(2 * mb):
        Jb[6 + k, i_b3 + k] = 1.0
        wb[6 + k] = u[i_b3 + k]
    # end effector from link 3's tip
    xb, rwb, phb, tipb, slopeb, prmb, hubb, Kb = lb
    bb = q[i_b3 + 1:i_b3 + 1 + 2 * mb]
    ab, Ab_b, Om_b, oel_bias, Rpc = _tip_frame(tipb, slopeb, prmb[0], bb, u[i_b3:i_b3 + 2 * mb], ax4, q[i_t4 + 1])
    R4 = _mm(Rb, Rpc)
    r4 = rb + _mv(Rb, ab)
    e = np.zeros(3)
    e[ax4] = 1.0
    _child(Jb, wb, db, ab, Ab_b, Om_b, oel_bias, 1, Rpc, e, i_t4, J4, w4, d4, u)
    J4o[:, :] = J4
    for a in range(3):
        pose4[a] = r4[a]
        for b in range(3):
            pose4[3 + 3 * a + b] = R4[a, b]
    # ---------------- body terms, assembly
    rhs = Q.copy()
    _add_wrench(f4, R4, r4, J4, rhs)
    for a in range(N):
        for b in range(N):
            Mt[a, b] = 0.0
    for a in range(6):
        mom[a] = 0.0
    # base: frame at its centre of mass
    M = np.zeros((6, 6))
    c = np.zeros(6)
    rigid_body_terms(base_m, np.zeros(3), base_I, w1, M, c)
    _assemble(J1, M, c, d1, Mt, rhs, w1, R1, r1, mom)
    na = 6 + 2 * ma
    M = np.zeros((na, na))
    c = np.zeros(na)
    Wp = np.zeros((3, na))
    flexible_body_terms(xa, rwa, pha, tipa, prma, huba, Ka, ba, wa[6:], wa, M, c, Wp)
    _assemble(Ja, M, c, da, Mt, rhs, wa, Ra, ra, mom)
    nb = 6 + 2 * mb
    M = np.zeros((nb, nb))
    c = np.zeros(nb)
    Wp = np.zeros((3, nb))
    flexible_body_terms(xb, rwb, phb, tipb, prmb, hubb, Kb, bb, wb[6:], wb, M, c, Wp)
    _assemble(Jb, M, c, db, Mt, rhs, wb, Rb, rb, mom)
    M = np.zeros((6, 6))
    c = np.zeros(6)
    rigid_body_terms(ee_m, ee_c, ee_I, w4, M, c)
    _assemble(J4, M, c, d4, Mt, rhs, w4, R4, r4, mom)
    A = Mt.copy()
    return tree_solve(A, rhs, udot, N)


@njit(cache=True)
def _add_wrench(f4, R4, r4, J4, rhs):
    """rhs += J_X^T F + (R_I4 J_omega)^T M for the wrench ``f4`` = [F, M, X] (inertial) on body 4:
    the material point at X moves with R_I4 (v_4 + omega_4 x g), g = R_I4^T (X - r_4)."""
    F = f4[0:3]
    Mo = f4[3:6]
    if F[0] == 0.0 and F[1] == 0.0 and F[2] == 0.0 and Mo[0] == 0.0 and Mo[1] == 0.0 and Mo[2] == 0.0:
        return
    g = _mv(R4.T.copy(), f4[6:9] - r4)
    F4 = _mv(R4.T.copy(), F)          # the force and moment in frame 4
    M4 = _mv(R4.T.copy(), Mo)
    # v_X = v_4 + omega_4 x g = v_4 - g x omega_4: F . v_X = F4 . v_4 + (g x F4) . omega_4
    gF = _cross(g, F4)
    for k in range(J4.shape[1]):
        s = 0.0
        for a in range(3):
            s += F4[a] * J4[a, k] + (gF[a] + M4[a]) * J4[3 + a, k]
        rhs[k] += s


@njit(cache=True)
def _tip_frame(tip, slope, L, b, bd, axis, theta):
    """A flexible link's deflected tip as the next body's attachment (module docstring): the
    point a = [L, phi(L).b_y, phi(L).b_z], its rate matrix A (a' = A b'), the elastic rotation's
    rate matrix Om (omega_el = Om b', parent frame), the bias of omega_el (alpha' z x
    (Rz(alpha) y beta')), and R_pc = Rz(alpha) Ry(beta) R_joint(theta)."""
    m = tip.shape[0]
    a = np.array([L, _dot(tip, b[:m]), _dot(tip, b[m:])])
    A = np.zeros((3, 2 * m))
    A[1, :m] = tip
    A[2, m:] = tip
    alpha = _dot(slope, b[:m])
    beta = -_dot(slope, b[m:])
    Rz = _rot(2, alpha)
    Om = np.zeros((3, 2 * m))
    for k in range(m):
        Om[2, k] = slope[k]
        for r in range(3):
            Om[r, m + k] = -Rz[r, 1] * slope[k]
    ad = _dot(slope, bd[:m])
    bdt = -_dot(slope, bd[m:])
    bias = _cross(np.array([0.0, 0.0, ad]), Rz[:, 1] * bdt)
    Rpc = _mm(_mm(Rz, _rot(1, beta)), _rot(axis, theta))
    return a, A, Om, bias, Rpc


@njit(cache=True)
def _child(Jp, wp, dp, a, Ab, Om, oel_bias, flex, Rpc, e, i_theta, Jc, wc, dc, u):
    """One step of the recursion (module docstring): the child's rigid rows of J, w and the
    velocity-product acceleration w0 from the parent's (``flex``: the parent is a flexible link
    whose elastic rates sit in its rows 6.. of J / w)."""
    N = Jp.shape[1]
    RT = Rpc.T
    # parent's rigid rows
    Jv = Jp[0:3]
    Jw = Jp[3:6]
    # v_c = R^T (v_p + omega_p x a + Ab b'_p), omega_c = R^T (omega_p + Om b'_p) + e theta'
    ax = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    Jvc = Jv - _mm(ax, Jw)
    Jwc = Jw.copy()
    if flex:
        Jb = Jp[6:]
        Jvc = Jvc + _mm(Ab, Jb)
        Jwc = Jwc + _mm(Om, Jb)
    Jc[0:3] = _mm(RT, Jvc)
    Jc[3:6] = _mm(RT, Jwc)
    for r in range(3):
        Jc[3 + r, i_theta] += e[r]
    for r in range(6):
        s = 0.0
        for k in range(N):
            s += Jc[r, k] * u[k]
        wc[r] = s
    # relative angular velocity of c w.r.t. p (c frame)
    vp = wp[0:3]
    op = wp[3:6]
    adot = np.zeros(3)
    oel = np.zeros(3)
    if flex:
        bdp = wp[6:]
        adot = _mv(Ab, bdp)
        oel = _mv(Om, bdp)
    w_rel = _mv(RT, oel) + e * u[i_theta]
    vc = wc[0:3]
    # bias: v0_c = R^T (v0_p + eps0_p x a + omega_p x a') - w_rel x v_c
    t = dp[0:3] + _cross(dp[3:6], a) + _cross(op, adot)
    v0 = _mv(RT, t) - _cross(w_rel, vc)
    # eps0_c = R^T (eps0_p + oel_bias) - w_rel x R^T (omega_p + oel)
    e0 = _mv(RT, dp[3:6] + oel_bias) - _cross(w_rel, _mv(RT, op + oel))
    for r in range(3):
        dc[r] = v0[r]
        dc[3 + r] = e0[r]
    _ = vp


@njit(cache=True)
def _assemble(J, M, c, d, Mt, rhs, w, R, r, mom):
    """Mt += J^T M J, rhs -= J^T (M d + c); momentum += [R p; r x R p + R l] with [p; l] = M w."""
    Jt = J.T.copy()
    JtM = _mm(Jt, M)
    Mt += _mm(JtM, J)
    rhs -= _mv(JtM, d) + _mv(Jt, c)
    h = _mv(M, w)
    P = _mv(R, h[0:3])
    Lo = _mv(R, h[3:6])
    rp = _cross(r, P)
    for a in range(3):
        mom[a] += P[a]
        mom[3 + a] += rp[a] + Lo[a]


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
                      self.pose4)
        if not ok:
            raise FloatingPointError("the arm's mass matrix is not positive definite")
        return self.udot

    def rigid_q(self, q):
        """The kernels' q layout: [r, quat, theta_2, b_2, ...] in u's order after the quaternion
        (q itself: the layouts agree; kept for clarity)."""
        return np.asarray(q, float)

    def grasp_jacobian(self) -> np.ndarray:
        """After :meth:`evaluate`: the 3 x N Jacobian of the grasp point's inertial velocity (seed
        004 §6.4 J): R_I4 (J_v - [g x] J_omega), g = the grasp point in frame 4."""
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
        return out
