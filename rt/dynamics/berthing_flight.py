"""The flight side of a berthing run (issue 25 item 4): the arm of seed 004 (main spacecraft, two
flexible links, end effector; ``rt.dynamics.berthing_arm``) and the free payload, under the
wrench measured between the end effector's capture tool and the payload's grapple fixture.

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
"hold" mode while it waits for the payload; the seed's feedback linearization,
``rt.dynamics.berthing_control``, is the post-capture manoeuvre, not the capture).

Kernels: compiled with numba's reference counting (the arm's evaluation still allocates its
small work matrices, docs/models/berthing.md §8); called from the DYNAMICS cycle through
``rt.dynamics.coupling.flight_update``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from rt.dynamics.berthing_arm import arm_eval

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


@njit(cache=True)
def _blk(a, b):
    return a[int(a[1 + b]):int(a[2 + b]) if b + 1 < N_BLOCKS else a.shape[0]]


@njit(cache=True)
def _link(a, first, m):
    x = _blk(a, first)
    ng = x.shape[0]
    return (x, _blk(a, first + 1), _blk(a, first + 2).reshape((ng, m)), _blk(a, first + 3), _blk(a, first + 4),
            _blk(a, first + 5), _blk(a, first + 6).reshape((3, 3)), _blk(a, first + 7).reshape((2 * m, 2 * m)))


@njit(cache=True)
def arm_views(a):
    """The arm model's arrays as views of the packed array (no copy): the arguments of
    ``rt.dynamics.berthing_arm.arm_eval`` before the state, and the flight block."""
    ints = _blk(a, B_INTS)
    ma = int(ints[0])
    mb = int(ints[1])
    return (ints, a[int(a[1 + B_BASEM])], _blk(a, B_BASEI).reshape((3, 3)), a[int(a[1 + B_EEM])], _blk(a, B_EEC),
            _blk(a, B_EEI).reshape((3, 3)), _blk(a, B_SHOULDER), _link(a, B_LA, ma), _link(a, B_LB, mb),
            a[int(a[1 + B_FL]):int(a[1 + B_FL]) + FL_LEN])


@njit(cache=True)
def _m3(M, o, i, j):
    return M[o + 3 * i + j]


@njit(cache=True)
def flight_eval(a, x, w_in, xdot, ws, rel, Mt, mom, J4, pose4, udot):
    """x' (``xdot``) of the flight state under the wrench ``w_in[0]`` on P (module docstring);
    leaves the two ports' inertial states in ``ws`` (``rt.dynamics.spacecraft`` slots W_PI, W_VI,
    W_WI, W_RID; row 0 = A, row 1 = P), the relative state of A in P in ``rel[:13]``, and the
    arm's M~, momentum, J_4 and pose. Returns False if the arm's mass matrix is not positive
    definite."""
    ints, base_m, base_I, ee_m, ee_c, ee_I, sh, la, lb, fl = arm_views(a)
    nq = int(fl[FL_NQ])
    n = int(fl[FL_N])
    q = x[0, 0:nq]
    u = x[0, nq:nq + n]
    # ---- the payload and its fixture P
    R_IC = np.empty((3, 3))
    SP.quat_to_dcm(x[1, S.S_Q:S.S_Q + 4], R_IC)
    R_IP = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += R_IC[i, k] * fl[FL_RCP + 3 * k + j]
            R_IP[i, j] = s
    pc = fl[FL_PCP:FL_PCP + 3]
    om = x[1, S.S_W:S.S_W + 3]
    f_P = w_in[0, 0:3]
    m_P = w_in[0, 3:6]
    F = np.zeros(3)
    Mo = np.zeros(3)
    fC = np.zeros(3)
    mC = np.zeros(3)
    for i in range(3):
        for j in range(3):
            F[i] += R_IP[i, j] * f_P[j]
            Mo[i] += R_IP[i, j] * m_P[j]
            fC[i] += fl[FL_RCP + 3 * i + j] * f_P[j]
            mC[i] += fl[FL_RCP + 3 * i + j] * m_P[j]
    # moment about the centre of mass, body axes: R_CP m_P + p_CP x (R_CP f_P)
    mC[0] += pc[1] * fC[2] - pc[2] * fC[1]
    mC[1] += pc[2] * fC[0] - pc[0] * fC[2]
    mC[2] += pc[0] * fC[1] - pc[1] * fC[0]
    Iw = np.zeros(3)
    for i in range(3):
        for j in range(3):
            Iw[i] += fl[FL_IP + 3 * i + j] * om[j]
    g0 = mC[0] - (om[1] * Iw[2] - om[2] * Iw[1])
    g1 = mC[1] - (om[2] * Iw[0] - om[0] * Iw[2])
    g2 = mC[2] - (om[0] * Iw[1] - om[1] * Iw[0])
    mp = fl[FL_MP]
    for i in range(3):
        xdot[1, S.S_R + i] = x[1, S.S_V + i]
        xdot[1, S.S_V + i] = F[i] / mp
        xdot[1, S.S_W + i] = (fl[FL_IPINV + 3 * i] * g0 + fl[FL_IPINV + 3 * i + 1] * g1
                              + fl[FL_IPINV + 3 * i + 2] * g2)
    qd = np.empty(4)
    SP.quat_kinematics(x[1, S.S_Q:S.S_Q + 4], om, qd)
    for i in range(4):
        xdot[1, S.S_Q + i] = qd[i]
    p_IP = np.zeros(3)
    v_P = np.zeros(3)
    oc = np.array([om[1] * pc[2] - om[2] * pc[1], om[2] * pc[0] - om[0] * pc[2], om[0] * pc[1] - om[1] * pc[0]])
    for i in range(3):
        p_IP[i] = x[1, S.S_R + i]
        v_P[i] = x[1, S.S_V + i]
        for j in range(3):
            p_IP[i] += R_IC[i, j] * pc[j]
            v_P[i] += R_IC[i, j] * oc[j]
    for i in range(3):
        ws[1, S.W_PI + i] = p_IP[i]
        ws[1, S.W_VI + i] = v_P[i]
        ws[1, S.W_WI + i] = R_IC[i, 0] * om[0] + R_IC[i, 1] * om[1] + R_IC[i, 2] * om[2]
        for j in range(3):
            ws[1, S.W_RID + 3 * i + j] = R_IP[i, j]
    # ---- the arm: joint servos, the reaction at P's origin
    Q = np.zeros(n)
    for j in range(3):
        i = int(fl[FL_IT + j])
        Q[i] = -fl[FL_KP + j] * (q[i + 1] - fl[FL_TH0 + j]) - fl[FL_KD + j] * u[i]
    f4 = np.empty(9)
    for i in range(3):
        f4[i] = -F[i]
        f4[3 + i] = -Mo[i]
        f4[6 + i] = p_IP[i]
    ok = arm_eval(ints, base_m, base_I, ee_m, ee_c, ee_I, sh, la, lb, q, u, Q, f4, udot, Mt, mom, J4, pose4)
    R1 = np.empty((3, 3))
    SP.quat_to_dcm(q[3:7], R1)
    for i in range(3):
        xdot[0, i] = R1[i, 0] * u[0] + R1[i, 1] * u[1] + R1[i, 2] * u[2]
    SP.quat_kinematics(q[3:7], u[3:6], qd)
    for i in range(4):
        xdot[0, 3 + i] = qd[i]
    for i in range(6, n):
        xdot[0, i + 1] = u[i]
    for i in range(n):
        xdot[0, nq + i] = udot[i]
    # ---- the tool A on body 4
    w4 = np.zeros(6)
    for r in range(6):
        for k in range(n):
            w4[r] += J4[r, k] * u[k]
    pa = fl[FL_P4A:FL_P4A + 3]
    va = np.array([w4[0] + w4[4] * pa[2] - w4[5] * pa[1], w4[1] + w4[5] * pa[0] - w4[3] * pa[2],
                   w4[2] + w4[3] * pa[1] - w4[4] * pa[0]])
    for i in range(3):
        ws[0, S.W_PI + i] = pose4[i]
        ws[0, S.W_VI + i] = 0.0
        ws[0, S.W_WI + i] = 0.0
        for k in range(3):
            R = pose4[3 + 3 * i + k]
            ws[0, S.W_PI + i] += R * pa[k]
            ws[0, S.W_VI + i] += R * va[k]
            ws[0, S.W_WI + i] += R * w4[3 + k]
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += pose4[3 + 3 * i + k] * fl[FL_R4A + 3 * k + j]
            ws[0, S.W_RID + 3 * i + j] = s
    S.relative_from_ports(ws, rel)
    for i in range(S.REL_LEN, rel.shape[0]):
        rel[i] = 0.0
    return ok


@njit(cache=True)
def flight_derivatives(a, x, w_in, xdot, ws, rel):
    """:func:`flight_eval` with its own work arrays."""
    fl = arm_views(a)[9]
    n = int(fl[FL_N])
    return flight_eval(a, x, w_in, xdot, ws, rel, np.empty((n, n)), np.empty(6), np.empty((6, n)), np.empty(12),
                       np.empty(n))


@njit(cache=True)
def _normalize(x, r, o):
    s = 1.0 / math.sqrt(x[r, o] ** 2 + x[r, o + 1] ** 2 + x[r, o + 2] ** 2 + x[r, o + 3] ** 2)
    for i in range(4):
        x[r, o + i] *= s


@njit(cache=True)
def normalize_quaternions(x):
    """The arm's base and the payload's attitude quaternions back to unit length (after a step)."""
    _normalize(x, 0, 3)
    _normalize(x, 1, S.S_Q)


@njit(cache=True)
def flight_rk4_step(a, x, dt, w_in, k, xt, ws, rel):
    """One classical RK4 step with the wrench held; quaternions renormalised. Returns False if an
    evaluation failed (the state is then left unchanged)."""
    ns = x.shape[1]
    ok = flight_derivatives(a, x, w_in, k[0], ws, rel)
    for st in range(1, 4):
        h = 0.5 * dt if st < 3 else dt
        for r in range(2):
            for i in range(ns):
                xt[r, i] = x[r, i] + h * k[st - 1, r, i]
        ok = flight_derivatives(a, xt, w_in, k[st], ws, rel) and ok
    if not ok:
        return False
    for r in range(2):
        for i in range(ns):
            x[r, i] += dt / 6.0 * (k[0, r, i] + 2.0 * (k[1, r, i] + k[2, r, i]) + k[3, r, i])
    normalize_quaternions(x)
    return True


@njit(cache=True)
def flight_relative_rates(a, x, w_in, h, out, o, xdot, xt, ws, rel):
    """out[o:o+13] = the relative state of A in P, out[o+13:o+19] its accelerations by a forward
    difference along the exact derivative (as ``rt.dynamics.coupling.relative_rates``)."""
    flight_derivatives(a, x, w_in, xdot, ws, rel)
    for i in range(S.REL_LEN):
        out[o + i] = rel[i]
    for r in range(2):
        for i in range(x.shape[1]):
            xt[r, i] = x[r, i] + h * xdot[r, i]
    flight_derivatives(a, xt, w_in, xdot, ws, rel)
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
        self.Mt = np.zeros((self.n, self.n))
        self.mom = np.zeros(6)
        self.J4 = np.zeros((6, self.n))
        self.pose4 = np.zeros(12)
        self.udot = np.zeros(self.n)
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
        ok = flight_eval(self.par[0], self.x, np.asarray(w_in, float), xdot, self.ws.ws, self.ws.rel, self.Mt,
                         self.mom, self.J4, self.pose4, self.udot)
        if not ok:
            raise FloatingPointError("the arm's mass matrix is not positive definite")
        return xdot

    def tool_jacobian(self) -> np.ndarray:
        """After :meth:`evaluate`: the 3 x n Jacobian of A's origin's inertial velocity,
        R_I4 (J_v - [p_4A x] J_omega) (seed 004 §6.4's J with the tool as the contact point)."""
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
