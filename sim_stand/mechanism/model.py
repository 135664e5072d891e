"""Python side of the mechanism model: leg construction from the config, parameter packing,
workspace allocation, a checked evaluation wrapper and frame conversions.

The kernels never raise; :meth:`Mechanism.evaluate` turns a non-zero status into
:class:`MechanismError` with the leg and the reason.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim_stand.mechanism import layout as Lay
from rt.config._schema import Table
from sim_stand.mechanism.config import MechanismConfig, Devices, parse_mechanism

EX = np.array([1.0, 0.0, 0.0])
CHART_MARGIN = math.radians(5.0)


class GeometryError(ValueError):
    pass


class MechanismError(RuntimeError):
    """Singular or unreachable pose (the kernel's status flag, raised by the wrappers)."""

    def __init__(self, code: int, leg: int):
        self.code = int(code)
        self.leg = int(leg)
        where = f"leg {self.leg}" if self.leg >= 0 else "ring"
        super().__init__(f"mechanism: {Lay.STATUS_NAMES.get(self.code, self.code)} ({where})")


@dataclass
class LegModel:
    """One leg in the local indexing of [Golubev & Yaskevich, §3]: joints j = 1..n (0-based lists
    here)."""
    type: str
    jtypes: list            # JOINT_P / JOINT_R
    axes: list              # 0, 1, 2 (in the joint frame)
    l: list                 # l_{j-1}: joint-frame origin on body j-1 (frame j-1)
    gamma: list             # gamma_{j-1}: DCM body j-1 -> joint frame j
    mass: list
    com: list               # d_j, frame j
    inertia_O: list         # about O_j, frame j
    L_last: float           # l^L = [L_last, 0, 0] on the last body
    l_C: np.ndarray         # ring joint centre, frame C (from the ring's centre of mass)
    gamma_C: np.ndarray     # DCM C -> ring-side cut-joint frame
    ika: float
    ikb: float
    iks: float
    dj: int
    devices: Devices

    @property
    def n(self) -> int:
        return len(self.jtypes)


def _frame_x(d: np.ndarray, hint: np.ndarray) -> np.ndarray:
    """Rows x, y, z of a DCM whose x is d and whose y is as close to ``hint`` as possible."""
    x = d / np.linalg.norm(d)
    y = hint - (hint @ x) * x
    if np.linalg.norm(y) < 1e-3:
        y = np.eye(3)[int(np.argmin(np.abs(x)))]
        y = y - (y @ x) * x
    y /= np.linalg.norm(y)
    return np.array([x, y, np.cross(x, y)])


def _link_inertia(m: float, d: float, ia: float, it: float):
    c = np.array([d, 0.0, 0.0])
    I = np.diag([ia, it, it]) + m * (c @ c * np.eye(3) - np.outer(c, c))
    return c, I


def _elem(axis: int, q: float) -> np.ndarray:
    c, s = math.cos(q), math.sin(q)
    if axis == 0:
        return np.array([[1, 0, 0], [0, c, s], [0, -s, c]])
    if axis == 1:
        return np.array([[c, 0, -s], [0, 1, 0], [s, 0, c]])
    return np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]])


def build_legs(cfg: MechanismConfig) -> list[LegModel]:
    """Joint frames, masses and IK constants of every leg at the reference pose (ring frame R
    at ``ring_home_0``, axes parallel to frame 0, every leg coordinate 0)."""
    legs = []
    com = cfg.ring_com_R
    P, R = Lay.JOINT_P, Lay.JOINT_R
    I3 = np.eye(3)
    z3 = np.zeros(3)
    for k in range(cfg.n_legs):
        b = cfg.base_joints_0[k]
        a_ref = cfg.ring_home_0 + cfg.ring_joints_R[k]       # ring joint centre, frame 0
        l_C = cfg.ring_joints_R[k] - com
        dev = cfg.devices[k]
        m1, m2 = cfg.link1, cfg.link2
        if not cfg.hunt:
            d = a_ref - b
            LS0 = float(np.linalg.norm(d))
            if LS0 < 1e-3:
                raise GeometryError(f"leg {k}: base and ring joint centres coincide")
            tang = np.cross(EX, b) if np.linalg.norm(np.cross(EX, b)) > 1e-6 else np.array([0.0, 1.0, 0.0])
            g0 = _frame_x(d, tang)
            c1, I1 = _link_inertia(m1.mass_kg, m1.com_m, m1.inertia_axial_kgm2, m1.inertia_transverse_kgm2)
            c2, I2 = _link_inertia(m2.mass_kg, LS0 - m2.com_m, m2.inertia_axial_kgm2, m2.inertia_transverse_kgm2)
            zero = (0.0, z3, np.zeros((3, 3)))
            cyl = (m1.mass_kg, c1, I1)
            rod = (m2.mass_kg, c2, I2)
            if cfg.leg_type == "UPS":
                jt, ax, bodies = [R, R, P], [1, 2, 0], [zero, cyl, rod]
            elif cfg.leg_type == "SPU":
                jt, ax, bodies = [R, R, R, P], [1, 2, 0, 0], [zero, zero, cyl, rod]
            else:  # UCU
                jt, ax, bodies = [R, R, R, P], [1, 2, 0, 0], [zero, cyl, zero, rod]
            n = len(jt)
            ls = [b.copy()] + [z3.copy() for _ in range(n - 1)]
            gs = [g0] + [I3.copy() for _ in range(n - 1)]
            tau_n = g0
            ika, ikb, iks, L_last, dj = LS0, 0.0, 0.0, LS0, n - 1
        else:
            axis = cfg.crank_axes_0[k] / np.linalg.norm(cfg.crank_axes_0[k])
            tip = cfg.crank_tips_0[k]
            arm = tip - b
            l12 = float(np.linalg.norm(arm))
            g0 = np.array([arm / l12, axis, np.cross(arm / l12, axis)])
            cpl = a_ref - tip
            l23 = float(np.linalg.norm(cpl))
            if l23 < 1e-3:
                raise GeometryError(f"leg {k}: crank tip coincides with the ring joint")
            cdir = g0 @ cpl / l23          # coupler direction in the crank frame (p1 = 0)
            g1 = _frame_x(cdir, np.array([0.0, 1.0, 0.0]))
            q = g0 @ (a_ref - b)
            rho = math.hypot(q[0], q[2])
            phi = math.atan2(-q[2], q[0])
            kap = (q @ q + l12 ** 2 - l23 ** 2) / (2 * l12 * rho)
            if abs(kap) > 1 - math.sin(CHART_MARGIN) ** 2:
                raise GeometryError(f"leg {k}: reference pose too close to the crank singularity "
                                    f"(crank and coupler nearly aligned)")
            iks = -1.0 if phi > 0 else 1.0
            c1, I1 = _link_inertia(m1.mass_kg, m1.com_m, m1.inertia_axial_kgm2, m1.inertia_transverse_kgm2)
            c2, I2 = _link_inertia(m2.mass_kg, l23 - m2.com_m, m2.inertia_axial_kgm2, m2.inertia_transverse_kgm2)
            zero = (0.0, z3, np.zeros((3, 3)))
            if cfg.leg_type == "RUS":
                jt, ax, bodies = [R, R, R], [1, 1, 2], [(m1.mass_kg, c1, I1), zero, (m2.mass_kg, c2, I2)]
            else:
                jt, ax, bodies = [R, R, R, R], [1, 1, 2, 0], [(m1.mass_kg, c1, I1), zero, zero, (m2.mass_kg, c2, I2)]
            n = len(jt)
            ls = [b.copy(), np.array([l12, 0.0, 0.0])] + [z3.copy() for _ in range(n - 2)]
            gs = [g0, g1] + [I3.copy() for _ in range(n - 2)]
            tau_n = g1 @ g0
            ika, ikb, L_last, dj = l12, l23, l23, 0
        legs.append(LegModel(cfg.leg_type, jt, ax, ls, gs, [x[0] for x in bodies],
                             [x[1] for x in bodies], [x[2] for x in bodies], L_last, l_C,
                             tau_n.copy(), ika, ikb, iks, dj, dev))
    # reference pose must be solvable by the closed form with margin
    for k, leg in enumerate(legs):
        p = ik_numpy(leg, cfg.ring_home_0 + com, np.eye(3))
        if np.max(np.abs(p - 0.0)) > 1e-9:
            raise GeometryError(f"leg {k}: reference pose does not give zero joint coordinates "
                                f"({np.round(p, 6).tolist()})")
    J = device_jacobian(legs, cfg.ring_home_0 + com, np.eye(3))
    sv = np.linalg.svd(J, compute_uv=False)
    if sv[-1] <= 1e-6 * sv[0]:
        raise GeometryError(f"the mechanism is singular at the reference pose (ring twist -> "
                            f"device-joint rates Jacobian has condition number "
                            f"{sv[0] / max(sv[-1], 1e-300):.3g}): the legs cannot hold the ring")
    return legs


def load_mechanism(path) -> MechanismConfig:
    """Load and validate a mechanism file: the schema (:func:`parse_mechanism`), then the
    geometry (every leg's frames built at the reference pose); raises
    :class:`rt.config.ConfigError` (file, key, reason)."""
    t = Table.load(path)
    cfg = parse_mechanism(t)
    try:
        build_legs(cfg)
    except GeometryError as e:
        raise t.error("geometry", str(e)) from None
    return cfg


def device_jacobian(legs, rC, aC) -> np.ndarray:
    """6 x 6 map from the ring twist u = [v_C (frame 0); omega_C (frame C)] to the device-joint
    rates, from the numpy kinematics (row k = row dj of H_k = C^(d)^-1 C^(i))."""
    J = np.zeros((len(legs), 6))
    for k, leg in enumerate(legs):
        p = ik_numpy(leg, rC, aC)
        _, Cd = closure_numpy(leg, p, rC, aC)
        Ci = np.zeros((leg.n, 6))
        Ci[:3, :3] = np.eye(3)
        lc = leg.l_C
        Ci[:3, 3:] = -aC.T @ np.array([[0, -lc[2], lc[1]], [lc[2], 0, -lc[0]], [-lc[1], lc[0], 0.0]])
        if leg.n == 4:
            frames, _, _ = fk_numpy(leg, p)
            nR = np.cross(frames[-1][0][1], (leg.gamma_C @ aC)[2])
            Ci[3, 3:] = aC @ nR
        J[k] = np.linalg.solve(Cd, Ci)[leg.dj]
    return J


def ik_numpy(leg: LegModel, rC: np.ndarray, aC: np.ndarray) -> np.ndarray:
    """Reference-pose check of the leg construction (Newton on the numpy FK, from p = 0)."""
    p = np.zeros(leg.n)
    for _ in range(30):
        f, J = closure_numpy(leg, p, rC, aC)
        dp = np.linalg.solve(J, f)
        p -= dp
        if np.abs(dp).max() < 1e-14:
            break
    return p


def fk_numpy(leg: LegModel, p):
    """Frames of every body: list of (tau_j: DCM 0 -> j, O_j in frame 0), joint axes in 0."""
    tau = np.eye(3)
    r = np.zeros(3)
    out, axes, centres = [], [], []
    for j in range(leg.n):
        g = leg.gamma[j]
        theta = g @ tau
        e = theta[leg.axes[j]]
        t = np.zeros(3)
        if leg.jtypes[j] == Lay.JOINT_P:
            t[leg.axes[j]] = p[j]
            alpha = np.eye(3)
        else:
            alpha = _elem(leg.axes[j], p[j])
        centre = r + tau.T @ leg.l[j]
        r = r + tau.T @ (leg.l[j] + g.T @ t)
        tau = alpha @ g @ tau
        out.append((tau, r))
        axes.append(e)
        centres.append(centre)
    return out, axes, centres


def closure_numpy(leg: LegModel, p, rC, aC):
    frames, axes, centres = fk_numpy(leg, p)
    tau_n, r_n = frames[-1]
    rL = r_n + tau_n.T @ np.array([leg.L_last, 0.0, 0.0])
    m = leg.n
    f = np.zeros(m)
    f[:3] = rL - (rC + aC.T @ leg.l_C)
    J = np.zeros((m, m))
    e1 = tau_n[1]
    e2 = (leg.gamma_C @ aC)[2]
    nR = np.cross(e1, e2)
    for i in range(m):
        if leg.jtypes[i] == Lay.JOINT_P:
            J[:3, i] = axes[i]
        else:
            J[:3, i] = np.cross(axes[i], rL - frames[i][1])
            if m == 4:
                J[3, i] = nR @ axes[i]
    if m == 4:
        f[3] = e1 @ e2
    return f, J


# ------------------------------------------------------------------------- packing
def _spring_tables(sp) -> tuple[np.ndarray, np.ndarray]:
    """K(s_i) and V-integral int_0^{s_i} K at the table points (exact piecewise integration)."""
    s_tab, k_tab = sp.table_s, sp.table_k

    def k(s):
        return float(np.interp(s, s_tab, k_tab))

    def K(s):
        pts = sorted({0.0, s, *[x for x in s_tab if min(0.0, s) < x < max(0.0, s)]})
        acc = 0.0
        for a, b in zip(pts[:-1], pts[1:]):
            acc += 0.5 * (k(a) + k(b)) * (b - a)
        return acc if s >= 0 else -acc

    def V(s):
        pts = sorted({0.0, s, *[x for x in s_tab if min(0.0, s) < x < max(0.0, s)]})
        acc = 0.0
        for a, b in zip(pts[:-1], pts[1:]):
            acc += (b - a) / 6.0 * (K(a) + 4.0 * K(0.5 * (a + b)) + K(b))
        return acc if s >= 0 else -acc

    return np.array([K(s) for s in s_tab]), np.array([V(s) for s in s_tab])


def pack_devices(B: np.ndarray, d: Devices) -> None:
    """Write one joint's devices into a parameter block ``B`` laid out by ``layout.L_*`` (the
    device section, ``L_SP_F0`` .. ``L_ST_C``); shared by the legs and the tree mechanisms."""
    if d.spring is not None:
        nt = d.spring.table_s.size
        B[Lay.L_SP_F0] = d.spring.preload
        B[Lay.L_SP_NT] = nt
        B[Lay.L_SP_S:Lay.L_SP_S + nt] = d.spring.table_s
        B[Lay.L_SP_K:Lay.L_SP_K + nt] = d.spring.table_k
        Kc, Vc = _spring_tables(d.spring)
        B[Lay.L_SP_KC:Lay.L_SP_KC + nt] = Kc
        B[Lay.L_SP_VC:Lay.L_SP_VC + nt] = Vc
    B[Lay.L_DA_C] = d.damping
    if d.brake is not None:
        B[Lay.L_BR_FC] = d.brake.coulomb
        B[Lay.L_BR_FB] = d.brake.breakaway
        B[Lay.L_BR_VS] = d.brake.stribeck_velocity
        B[Lay.L_BR_VR] = d.brake.regularization_velocity
    else:
        B[Lay.L_BR_VS] = B[Lay.L_BR_VR] = 1.0
    if d.emd is not None:
        B[Lay.L_EM_C] = d.emd.damping
        B[Lay.L_EM_M] = d.emd.reflected_inertia
    if d.drive is not None:
        B[Lay.L_DR_ON] = 1.0 if d.drive.enabled else 0.0
        B[Lay.L_DR_KP] = d.drive.kp
        B[Lay.L_DR_KD] = d.drive.kd
        B[Lay.L_DR_FMAX] = d.drive.max_force
    if d.end_stops is not None:
        B[Lay.L_ST_ON] = 1.0
        B[Lay.L_ST_MIN] = d.end_stops.stroke_min
        B[Lay.L_ST_MAX] = d.end_stops.stroke_max
        B[Lay.L_ST_K] = d.end_stops.stiffness
        B[Lay.L_ST_C] = d.end_stops.damping


def pack_params(cfg: MechanismConfig, legs: list[LegModel] | None = None) -> np.ndarray:
    legs = build_legs(cfg) if legs is None else legs
    nl = len(legs)
    P = np.zeros(Lay.HDR + nl * Lay.LP)
    P[Lay.H_NLEGS] = nl
    P[Lay.H_MC] = cfg.ring_mass_kg
    P[Lay.H_IC:Lay.H_IC + 9] = np.asarray(cfg.ring_inertia_kgm2, float).ravel()
    P[Lay.H_NEWTON] = cfg.newton_polish
    wsl = Lay.ws_layout(nl)
    names = [n for n in wsl if n != "_size"]
    assert len(names) <= 32
    for i, n in enumerate(names):
        P[Lay.H_WS + i] = wsl[n][0]
    ol = Lay.out_offsets(nl)
    onames = [n for n in ol if n != "_size"]
    for i, n in enumerate(onames):
        P[Lay.H_OUT + i] = ol[n][0]
    for k, leg in enumerate(legs):
        lo = Lay.HDR + k * Lay.LP
        B = P[lo:lo + Lay.LP]
        B[Lay.L_TYPE] = Lay.LEG_TYPES[leg.type]
        B[Lay.L_N] = leg.n
        B[Lay.L_M] = leg.n
        B[Lay.L_DJ] = leg.dj
        B[Lay.L_LAST] = leg.L_last
        B[Lay.L_IKA], B[Lay.L_IKB], B[Lay.L_IKS] = leg.ika, leg.ikb, leg.iks
        for j in range(leg.n):
            B[Lay.L_JT + j] = leg.jtypes[j]
            B[Lay.L_JA + j] = leg.axes[j]
            B[Lay.L_JL + 3 * j: Lay.L_JL + 3 * j + 3] = leg.l[j]
            B[Lay.L_JG + 9 * j: Lay.L_JG + 9 * j + 9] = np.asarray(leg.gamma[j]).ravel()
            B[Lay.L_BM + j] = leg.mass[j]
            B[Lay.L_BC + 3 * j: Lay.L_BC + 3 * j + 3] = leg.mass[j] * np.asarray(leg.com[j])
            B[Lay.L_BI + 9 * j: Lay.L_BI + 9 * j + 9] = np.asarray(leg.inertia_O[j]).ravel()
        B[Lay.L_LC:Lay.L_LC + 3] = leg.l_C
        B[Lay.L_GC:Lay.L_GC + 9] = leg.gamma_C.ravel()
        pack_devices(B, leg.devices)
    P.setflags(write=False)
    return P


# ------------------------------------------------------------------------- wrapper
def base_motion(a0_0=(0, 0, 0), omega0_0=(0, 0, 0), eps0_0=(0, 0, 0), g_0=(0, 0, 0)) -> np.ndarray:
    """Pack ``[a_0, omega_0, eps_0, g]`` (frame 0) for the kernels."""
    return np.concatenate([np.asarray(x, float) for x in (a0_0, omega0_0, eps0_0, g_0)])


def contact_wrench_on_ring(R_PC: np.ndarray, p_PC_P: np.ndarray, wrench_P: np.ndarray,
                           on_passive: bool = True) -> np.ndarray:
    """Contact engineer's wrench -> the kernel's ``contact_wrench`` (frame C, about C's origin).

    ``wrench_P`` = [f; m] in frame P about P's origin.  With ``on_passive=True`` (the project's
    contact convention, docs/conventions.md) it is the wrench the active unit -- here the ring,
    the buffer link -- applies to the passive unit, and the ring receives its opposite; with
    ``False`` it is already the wrench on the ring.  ``R_PC``: C-components -> P-components;
    ``p_PC_P``: ring centre of mass relative to P's origin, in P."""
    w = np.asarray(wrench_P, float)
    if on_passive:
        w = -w
    f_P = w[:3]
    m_P = w[3:] - np.cross(p_PC_P, f_P)
    return np.concatenate([R_PC.T @ f_P, R_PC.T @ m_P])


class Mechanism:
    """Params, workspace and out of one mechanism, plus checked Python-level calls."""

    def __init__(self, cfg: MechanismConfig):
        self.cfg = cfg
        self.legs = build_legs(cfg)
        self.nl = len(self.legs)
        self.params = pack_params(cfg, self.legs)
        self.workspace = np.zeros(Lay.ws_size(self.nl))
        self.out = np.zeros(Lay.out_size(self.nl))
        self.view = Lay.OutView(self.out, self.nl)
        self.ws = Lay.WsView(self.workspace, self.nl)
        self.gravity_0 = np.asarray(cfg.gravity_0, float)

    # reference state ----------------------------------------------------------
    def home_state(self) -> np.ndarray:
        x = np.zeros(12)
        x[0:3] = self.cfg.ring_home_0 + self.cfg.ring_com_R
        return x

    def base_motion_static(self) -> np.ndarray:
        return base_motion(g_0=self.gravity_0)

    def set_drive_command(self, leg: int, stroke: float, stroke_rate: float = 0.0) -> None:
        self.ws.cmd[leg, 0] = stroke
        self.ws.cmd[leg, 1] = stroke_rate

    def evaluate(self, ring_state, base_motion_=None, contact_wrench=None) -> Lay.OutView:
        from sim_stand.mechanism.kernels import mechanism_derivatives
        bm = self.base_motion_static() if base_motion_ is None else np.asarray(base_motion_, float)
        cw = np.zeros(6) if contact_wrench is None else np.asarray(contact_wrench, float)
        st = mechanism_derivatives(self.params, self.workspace, np.asarray(ring_state, float), bm,
                                   cw, self.out)
        if st != 0:
            raise MechanismError(st, int(self.view.status[1]))
        return self.view

    def step_rk4(self, ring_state: np.ndarray, dt: float, base_motion_=None, contact_wrench=None,
                 n_steps: int = 1) -> np.ndarray:
        from sim_stand.mechanism.kernels import mechanism_step_rk4
        bm = self.base_motion_static() if base_motion_ is None else np.asarray(base_motion_, float)
        cw = np.zeros(6) if contact_wrench is None else np.asarray(contact_wrench, float)
        k_acc = np.zeros(12)
        x_tmp = np.zeros(12)
        for _ in range(n_steps):
            st = mechanism_step_rk4(self.params, self.workspace, ring_state, bm, cw, dt, self.out,
                                    k_acc, x_tmp)
            if st != 0:
                raise MechanismError(st, int(self.view.status[1]))
        return ring_state


def _scratch():
    return dict(tau=np.zeros((5, 3, 3)), beta=np.zeros((4, 3, 3)), rloc=np.zeros((4, 3)),
                r0=np.zeros((5, 3)), e0=np.zeros((4, 3)), rL=np.zeros(3), lL0=np.zeros(3),
                e1=np.zeros(3), e2=np.zeros(3), nR=np.zeros(3), f=np.zeros(4),
                Cd=np.zeros((4, 4)), LU=np.zeros((4, 4)), piv=np.zeros(4))


def leg_ik(mech: "Mechanism", k: int, rC, aC) -> np.ndarray:
    """Closed-form IK of leg k ([Golubev & Yaskevich, §4]); raises MechanismError if
    unreachable/singular."""
    from sim_stand.mechanism.kernels import leg_ik as _ik
    p = np.zeros(4)
    st = _ik(mech.params, Lay.HDR + k * Lay.LP, np.asarray(rC, float), np.asarray(aC, float), p,
             np.zeros((3, 3)), np.zeros((3, 3)))
    if st != 0:
        raise MechanismError(st, k)
    return p[:mech.legs[k].n]


def leg_ik_newton(mech: "Mechanism", k: int, rC, aC, p0, tol: float = 1e-14, maxit: int = 50):
    """Newton IK (eq. 4.6) of leg k from p0; raises MechanismError if it fails."""
    from sim_stand.mechanism.kernels import leg_ik_newton as _nw
    s = _scratch()
    p = np.zeros(4)
    p[:len(p0)] = p0
    it, st = _nw(mech.params, Lay.HDR + k * Lay.LP, np.asarray(rC, float), np.asarray(aC, float),
                 p, tol, maxit, s["tau"], s["beta"], s["rloc"], s["r0"], s["e0"], s["rL"], s["lL0"],
                 s["e1"], s["e2"], s["nR"], s["f"], s["Cd"], s["LU"], s["piv"])
    if st != 0:
        raise MechanismError(st, k)
    return p[:mech.legs[k].n], it
