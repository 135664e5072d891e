"""Two free-flying spacecraft with flexible docking-port mounts, coupled through the docking
wrench ([Yaskevich 2018b, eq. 1] and its relative kinematics of the units; model and
assumptions in docs/models/spacecraft.md).

Vehicle index 0 carries the active docking unit (frame A), index 1 the passive unit (frame P).

State ``x[s, :]`` of vehicle s (float64, one row each, padded to the larger mode count NM):

=========  ======================================================================
``0:3``    r: centre of mass in the reference frame I (inertial, or local-orbit with Hill terms)
``3:6``    v: its velocity relative to I, I components
``6:10``   q_IC: attitude quaternion (scalar first), C-components -> I-components
``10:13``  omega: inertial angular velocity of the body, C components
``13:13+NM``        eta: modal coordinates of the port mount (mass-normalised)
``13+NM:13+2NM``    eta_dot
=========  ======================================================================

Inputs held over a step, ``w_in[2, 6]`` (wrenches are ``[f; m]``):

* ``w_in[0]``: the wrench applied **to the passive unit** (by the active one), P components,
  moment about P's origin: the measured contact wrench. With ``react = 1`` the active unit
  receives its exact opposite (same line of action, transferred to A's origin) at every stage,
  which neglects the mechanism's inertia (docs/models/spacecraft.md).
* ``w_in[1]``: an additional wrench on the active unit, A components, about A's origin (the
  mechanism's base wrench in the all-digital simulation, where ``react = 0``).

Parameters ``par[s, :]`` are packed by :func:`pack_vehicle` from a vehicle description (any
object with the fields of :class:`rt.config.vehicle.Vehicle`; this module never loads one); the environment ``env`` by
:func:`pack_env` (orbit option and an optional linear spring-damper between the ports, used
for the elastic-rod calibration case and the conservation tests).

The kernels' arguments
----------------------
The same names mean the same arrays in every kernel below (and in the kernels of
``rt.dynamics.coupling``, ``sim_stand.rod`` and ``sim_stand.digital`` that pass them on):

par : float64[2, L]
    Parameter rows of the active (0) and passive (1) vehicle, layout ``P_*`` (:func:`pack_vehicle`).
env : float64[ENV_LEN]
    Environment, layout ``E_*`` (:func:`pack_env`): Hill terms and the orbit rate, the port
    spring-damper (stiffness, damping, rest pose), the berthing-flight flag.
x : float64[2, NS]
    State rows of both vehicles, layout ``S_*`` (above); SI units.
w_in : float64[2, 6]
    Held inputs (above), N and N·m: ``w_in[0]`` the wrench on the passive unit in P about P's
    origin, ``w_in[1]`` an additional wrench on the active unit in A about A's origin.
react : int
    1: the active unit receives the opposite of ``w_in[0]`` (HIL); 0: it does not (digital
    reference).
xdot : float64[2, NS]
    dx/dt, the layout of ``x``.
ws : float64[2, WS_LEN]
    Workspace, one row per vehicle (layout ``W_*``): the port states, then the port wrenches.
rel : float64[REL_LEN + 6]
    Workspace: relative kinematics and the port spring-damper's wrench.
k : float64[4, 2, NS]
    RK4 workspace: the four stage derivatives.
xt : float64[2, NS]
    RK4 workspace: the stage state (:class:`Workspace` holds ``k``, ``xt``, ``ws`` and ``rel``).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from rt.dynamics import spatial
from rt.jit import KERNEL

if TYPE_CHECKING:   # annotations only: the builders read a description's fields, never load one
    from rt.config.case import Case
    from rt.config.vehicle import Vehicle

# ------------------------------------------------------------------ layouts
S_R, S_V, S_Q, S_W, S_ETA = 0, 3, 6, 10, 13
N_RIGID = 13

P_MASS = 0
P_J = 1            # 9, row-major
P_JINV = 10        # 9
P_LCD = 19         # 3
P_RCD = 22         # 9, row-major, undeformed port D0 -> C
P_NM = 31
P_ROTMODE = 32     # 3 (1.0 = attitude hold on that body axis)
P_KP = 35
P_KD = 38
P_TMAX = 41
P_DB = 44
P_TRMODE = 47      # 3 (1.0 = thrust on that body axis)
P_FORCE = 50       # 3, body axes
P_TSTART = 53
P_TSTOP = 54
P_QREF = 55        # 4, attitude-hold reference q_IC
P_MODES = 59       # omega_n[NM], zeta[NM], Phi[NM, 6]
P_RIGID_LEN = P_MODES

E_HILL, E_N = 0, 1
E_COUPLED, E_KLIN, E_CLIN, E_KROT, E_CROT, E_R0 = 2, 3, 4, 5, 6, 7  # E_R0: 3
E_FLIGHT = 10     # 0: these two spacecraft; 1: a berthing flight (rt.dynamics.berthing_flight)
ENV_LEN = 11

# energy / momentum record (spacecraft_invariants)
I_T0, I_T1, I_MODAL0, I_MODAL1, I_SPRING, I_TOTAL, I_P, I_L = 0, 1, 2, 3, 4, 5, 6, 9
INV_LEN = 12

# relative kinematics record (relative_state)
REL_R, REL_Q, REL_V, REL_W = 0, 3, 7, 10
REL_LEN = 13


# ------------------------------------------------------------------ packing (Python, once)
def n_modes(v: Vehicle) -> int:
    return len(v.modes)


def pack_vehicle(v: Vehicle, nm_slots: int, q_ref: np.ndarray | None = None) -> np.ndarray:
    """Flat float64 parameter row of one vehicle (layout ``P_*``), padded to ``nm_slots`` modes."""
    nm = len(v.modes)
    if nm > nm_slots:
        raise ValueError(f"vehicle {v.name} has {nm} modes, more than the {nm_slots} slots")
    p = np.zeros(P_MODES + 8 * nm_slots)
    p[P_MASS] = v.mass_kg
    p[P_J:P_J + 9] = v.inertia_kgm2.ravel()
    p[P_JINV:P_JINV + 9] = np.linalg.inv(v.inertia_kgm2).ravel()
    p[P_LCD:P_LCD + 3] = v.port_position_m
    p[P_RCD:P_RCD + 9] = v.R_CD.ravel()
    p[P_NM] = nm
    c = v.control
    p[P_ROTMODE:P_ROTMODE + 3] = [1.0 if a == "hold" else 0.0 for a in c.rotation]
    p[P_TRMODE:P_TRMODE + 3] = [1.0 if a == "thrust" else 0.0 for a in c.translation]
    if c.attitude_hold is not None:
        h = c.attitude_hold
        p[P_KP:P_KP + 3] = h.kp_nm_per_rad
        p[P_KD:P_KD + 3] = h.kd_nms_per_rad
        p[P_TMAX:P_TMAX + 3] = h.torque_max_nm
        p[P_DB:P_DB + 3] = h.deadband_rad
    if c.thrust is not None:
        p[P_FORCE:P_FORCE + 3] = c.thrust.force_n
        p[P_TSTART] = c.thrust.start_s
        p[P_TSTOP] = c.thrust.stop_s
    p[P_QREF:P_QREF + 4] = [1.0, 0.0, 0.0, 0.0] if q_ref is None else q_ref
    for k, m in enumerate(v.modes):
        p[P_MODES + k] = 2.0 * math.pi * m.frequency_hz
        p[P_MODES + nm_slots + k] = m.damping_ratio
        p[P_MODES + 2 * nm_slots + 6 * k:P_MODES + 2 * nm_slots + 6 * k + 6] = m.shape
    return p


def pack_env(hill: bool = False, mean_motion_radps: float = 0.0, coupling: tuple | None = None) -> np.ndarray:
    """Environment array: orbit option and an optional port-to-port spring-damper
    ``coupling = (k_lin N/m, c_lin N·s/m, k_rot N·m/rad, c_rot N·m·s/rad, r0_m[3])``."""
    e = np.zeros(ENV_LEN)
    e[E_HILL] = 1.0 if hill else 0.0
    e[E_N] = mean_motion_radps
    if coupling is not None:
        k, c, kr, cr, r0 = coupling
        e[E_COUPLED] = 1.0
        e[E_KLIN], e[E_CLIN], e[E_KROT], e[E_CROT] = k, c, kr, cr
        e[E_R0:E_R0 + 3] = r0
    return e


class Workspace:
    """Preallocated scratch for the kernels (the "Data" of the Model/Data split)."""

    def __init__(self, ns: int):
        self.k = np.zeros((4, 2, ns))
        self.xt = np.zeros((2, ns))
        self.ws = np.zeros((2, WS_LEN))
        self.rel = np.zeros(REL_LEN + 6)


class Spacecraft:
    """The packed model of both vehicles for one case plus its workspace.

    ``par`` (2 x L) and ``env`` are immutable after construction; ``x`` (2 x NS) is the state."""

    def __init__(self, active: Vehicle, passive: Vehicle, env: np.ndarray | None = None):
        self.nm = max(len(active.modes), len(passive.modes))
        self.ns = N_RIGID + 2 * self.nm
        self.active, self.passive = active, passive
        self.par = np.vstack([pack_vehicle(active, self.nm), pack_vehicle(passive, self.nm)])
        self.env = pack_env() if env is None else env
        self.ws = Workspace(self.ns)
        self.x = np.zeros((2, self.ns))
        self.x[:, S_Q] = 1.0

    @classmethod
    def from_case(cls, case: Case, coupling: tuple | None = None) -> "Spacecraft":
        env = pack_env(case.orbit.hill, case.orbit.mean_motion_radps, coupling)
        sc = cls(case.active, case.passive, env)
        sc.x[:] = initial_state(case, sc.nm)
        sc.set_hold_references()
        return sc

    def set_hold_references(self) -> None:
        """Attitude-hold references := the current attitudes (called at the start of a run)."""
        for s in range(2):
            self.par[s, P_QREF:P_QREF + 4] = self.x[s, S_Q:S_Q + 4]

    def step(self, t: float, dt: float, w_in: np.ndarray, react: int = 1) -> None:
        w = self.ws
        rk4_step(self.par, self.env, self.x, t, dt, w_in, react, w.k, w.xt, w.ws, w.rel)

    def derivatives(self, t: float, w_in: np.ndarray, react: int = 1) -> np.ndarray:
        out = np.zeros_like(self.x)
        derivatives(self.par, self.env, self.x, t, w_in, react, out, self.ws.ws, self.ws.rel)
        return out

    def invariants(self) -> np.ndarray:
        out = np.zeros(INV_LEN)
        spacecraft_invariants(self.par, self.env, self.x, out, self.ws.ws, self.ws.rel)
        return out

    def relative(self) -> np.ndarray:
        out = np.zeros(REL_LEN)
        relative_state(self.par, self.env, self.x, out, self.ws.ws)
        return out


def initial_state(case: Case, nm: int) -> np.ndarray:
    """State rows of both vehicles from a case (Python, once per run).

    The passive vehicle sits at the origin of I with body axes along I; its centre of mass is
    at rest (its port moves if it rotates). The active vehicle is placed so that the undeformed
    ports have the case's relative pose, and moves so that A's origin has the case's velocity
    relative to P as seen in P."""
    ini = case.initial
    x = np.zeros((2, N_RIGID + 2 * nm))
    pa, pp = case.active, case.passive
    # passive
    R_IP = np.eye(3)  # R_I,C_passive
    x[1, S_Q] = 1.0
    x[1, S_W:S_W + 3] = ini.passive_rate_radps
    R_IDp = R_IP @ pp.R_CD
    p_port_p = R_IP @ pp.port_position_m
    w_p_I = R_IP @ ini.passive_rate_radps
    v_port_p = np.cross(w_p_I, p_port_p)
    # active: R_I,Da = R_I,Dp R_PA ; R_I,Ca = R_I,Da R_CD_a^T
    R_IDa = R_IDp @ ini.R_PA
    R_ICa = R_IDa @ pa.R_CD.T
    p_port_a = p_port_p + R_IDp @ ini.position_m
    r_a = p_port_a - R_ICa @ pa.port_position_m
    w_a_I = R_ICa @ ini.active_rate_radps
    # velocity of A's origin: v_Pport + R_IP (v_rel + w_P x r)   (P rotates with the passive body)
    v_port_a = v_port_p + R_IDp @ ini.velocity_mps + np.cross(w_p_I, R_IDp @ ini.position_m)
    v_a = v_port_a - np.cross(w_a_I, R_ICa @ pa.port_position_m)
    q = np.empty(4)
    spatial.dcm_to_quat(R_ICa, q)
    x[0, S_R:S_R + 3] = r_a
    x[0, S_V:S_V + 3] = v_a
    x[0, S_Q:S_Q + 4] = q
    x[0, S_W:S_W + 3] = ini.active_rate_radps
    for s, eta, etad in ((0, ini.active_eta, ini.active_eta_dot), (1, ini.passive_eta, ini.passive_eta_dot)):
        x[s, S_ETA:S_ETA + len(eta)] = eta
        x[s, S_ETA + nm:S_ETA + nm + len(etad)] = etad
    return x


# ------------------------------------------------------------------ kernels
# Workspace row layout (ws[s, :], one row per vehicle), indexed explicitly so the hot path makes
# no array views (each view costs reference counting in compiled code).
W_RIC, W_RID, W_RCD, W_PI, W_VI, W_WI, W_WREL, W_F, W_M = 0, 9, 18, 21, 24, 27, 30, 33, 36
W_RPA, W_TH = 39, 48
WS_LEN = 52

# Compile options of every kernel below: rt.jit.KERNEL (no reference counting), NaN/Inf rather
# than an exception on a division by zero, and fused multiply-adds.
_JIT = dict(KERNEL, error_model="numpy", fastmath={"contract"})


@njit(inline="always", **_JIT)
def modal_sum(par, s, nm, q, o, a0, a1, a2, a3, a4, a5):
    """``(a0, ..., a5) + sum_k Phi_k q[s, o + k]`` over vehicle s's port-mount modes (six
    scalars; ``Phi_k = [Phi_r; Phi_theta]`` the mode's shape at the port, in the body frame C,
    ``nm`` the padded mode count of the state layout): the port's modal translation (first
    three, ``Phi_r q``) and rotation vector (last three, ``Phi_theta q``) for ``q`` = eta
    (``o = S_ETA``), eta_dot (``o = S_ETA + nm``) or, in a state derivative, eta_ddot
    (docs/models/spacecraft.md, "Flexible mounts"). The sums start from ``a0 .. a5`` (e.g.
    ``r_CD = l_CD + Phi_r eta``) and add the modes in order. Inlined into the caller at numba IR
    level (compiled with the caller's options).

    Parameters
    ----------
    par : float64[2, L]
        Parameter rows of both vehicles, layout ``P_*``: the mode shapes Phi from ``P_MODES + 2 nm``.
    s : int
        Vehicle index: 0 active, 1 passive.
    nm : int
        Padded mode count NM of the state layout.
    q : float64[2, NS]
        A state (or state-derivative) array holding the modal coordinates.
    o : int
        Column of the first modal coordinate in q: ``S_ETA`` (eta) or ``S_ETA + nm`` (eta_dot).
    a0, a1, a2, a3, a4, a5 : float
        Start values of the six sums, body frame C: translation (first three), rotation (last three).
    """
    ph = P_MODES + 2 * nm
    for k in range(int(par[s, P_NM])):
        e = q[s, o + k]
        j = ph + 6 * k
        a0 += par[s, j] * e
        a1 += par[s, j + 1] * e
        a2 += par[s, j + 2] * e
        a3 += par[s, j + 3] * e
        a4 += par[s, j + 4] * e
        a5 += par[s, j + 5] * e
    return a0, a1, a2, a3, a4, a5


@njit(inline="always", **_JIT)
def mount_rate(den, tx, ty, tz, ux, uy, uz):
    """``T(theta) u`` with ``T(theta) = (I + 1/2 [theta]x) / (1 + |theta|^2/4)`` (three scalars),
    ``den = 1 + |theta|^2/4`` given by the caller: the port mount's flexible rotation
    ``R_flex`` = the rotation of quaternion normalise([1, theta/2]) has the angular velocity
    ``T(theta) theta'`` (docs/models/spacecraft.md, "Flexible mounts"), and its time
    derivative contains ``T(theta) theta''``. ``theta`` (the mount's rotation vector Phi_theta
    eta) and ``u`` are in the carrier's body frame C, and so is the result. Inlined into the
    caller at numba IR level (compiled with the caller's options).

    Parameters
    ----------
    den : float
        ``1 + |theta|^2/4``.
    tx, ty, tz : float
        The mount's rotation vector theta = Phi_theta eta, body frame C, rad.
    ux, uy, uz : float
        The vector u, body frame C (e.g. theta', rad/s, or theta'', rad/s^2).
    """
    return ((ux + 0.5 * (ty * uz - tz * uy)) / den,
            (uy + 0.5 * (tz * ux - tx * uz)) / den,
            (uz + 0.5 * (tx * uy - ty * ux)) / den)


@njit(**_JIT)
def _port(par, x, s, nm, hill_w, ws):
    """Port pose and twist of vehicle s into ws[s] ([Yaskevich 2018b, contact forces]):

    R_IC from q; r_cd = l_CD + Phi_r eta (C); R_CD = R_flex(Phi_theta eta) R_CD0;
    pI = r + R_IC r_cd; R_ID = R_IC R_CD; vI = v + R_IC (w_rel x r_cd + Phi_r eta_dot);
    wI = R_IC (w_rel + Phi_theta eta_dot), with w_rel the body rate relative to frame I
    (= omega unless Hill terms are on: then minus the orbit rate hill_w about I's z).
    The flexible rotation is the exact rotation of quaternion normalise([1, theta/2]) (Gibbs
    vector theta/2): angle 2 atan(|theta|/2) = |theta| + O(|theta|^3), orthonormal so momentum
    bookkeeping is exact; its angular velocity is T(theta) Phi_theta eta_dot, and the modal
    equations use T^T so the mount exchanges energy exactly (docs/models/spacecraft.md)."""
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = spatial.quat_dcm_entries(
        x[s, S_Q], x[s, S_Q + 1], x[s, S_Q + 2], x[s, S_Q + 3])
    ws[s, W_RIC + 0], ws[s, W_RIC + 1], ws[s, W_RIC + 2] = R00, R01, R02
    ws[s, W_RIC + 3], ws[s, W_RIC + 4], ws[s, W_RIC + 5] = R10, R11, R12
    ws[s, W_RIC + 6], ws[s, W_RIC + 7], ws[s, W_RIC + 8] = R20, R21, R22
    wx = x[s, S_W] - R20 * hill_w
    wy = x[s, S_W + 1] - R21 * hill_w
    wz = x[s, S_W + 2] - R22 * hill_w
    ws[s, W_WREL], ws[s, W_WREL + 1], ws[s, W_WREL + 2] = wx, wy, wz
    # r_cd = l_CD + Phi_r eta, theta = Phi_theta eta; v_f = Phi_r eta_dot, Phi_theta eta_dot
    dx, dy, dz, tx, ty, tz = modal_sum(par, s, nm, x, S_ETA, par[s, P_LCD], par[s, P_LCD + 1],
                                       par[s, P_LCD + 2], 0.0, 0.0, 0.0)
    vfx, vfy, vfz, wfx, wfy, wfz = modal_sum(par, s, nm, x, S_ETA + nm, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    ws[s, W_RCD], ws[s, W_RCD + 1], ws[s, W_RCD + 2] = dx, dy, dz
    ws[s, W_TH], ws[s, W_TH + 1], ws[s, W_TH + 2] = tx, ty, tz
    qx, qy, qz = 0.5 * tx, 0.5 * ty, 0.5 * tz
    den = 1.0 + qx * qx + qy * qy + qz * qz
    # angular velocity of R_flex (in C): T(theta) theta_dot; the modal force uses T^T
    wfx, wfy, wfz = mount_rate(den, tx, ty, tz, wfx, wfy, wfz)
    inv = 1.0 / math.sqrt(den)
    f00, f01, f02, f10, f11, f12, f20, f21, f22 = spatial.quat_dcm_entries(inv, qx * inv, qy * inv, qz * inv)
    for j in range(3):
        c0 = par[s, P_RCD + j]
        c1 = par[s, P_RCD + 3 + j]
        c2 = par[s, P_RCD + 6 + j]
        g0 = f00 * c0 + f01 * c1 + f02 * c2   # (R_flex R_CD0)[:, j]
        g1 = f10 * c0 + f11 * c1 + f12 * c2
        g2 = f20 * c0 + f21 * c1 + f22 * c2
        ws[s, W_RID + j] = R00 * g0 + R01 * g1 + R02 * g2
        ws[s, W_RID + 3 + j] = R10 * g0 + R11 * g1 + R12 * g2
        ws[s, W_RID + 6 + j] = R20 * g0 + R21 * g1 + R22 * g2
    ux = wy * dz - wz * dy + vfx
    uy = wz * dx - wx * dz + vfy
    uz = wx * dy - wy * dx + vfz
    ox, oy, oz = wx + wfx, wy + wfy, wz + wfz
    ws[s, W_PI] = x[s, S_R] + R00 * dx + R01 * dy + R02 * dz
    ws[s, W_PI + 1] = x[s, S_R + 1] + R10 * dx + R11 * dy + R12 * dz
    ws[s, W_PI + 2] = x[s, S_R + 2] + R20 * dx + R21 * dy + R22 * dz
    ws[s, W_VI] = x[s, S_V] + R00 * ux + R01 * uy + R02 * uz
    ws[s, W_VI + 1] = x[s, S_V + 1] + R10 * ux + R11 * uy + R12 * uz
    ws[s, W_VI + 2] = x[s, S_V + 2] + R20 * ux + R21 * uy + R22 * uz
    ws[s, W_WI] = R00 * ox + R01 * oy + R02 * oz
    ws[s, W_WI + 1] = R10 * ox + R11 * oy + R12 * oz
    ws[s, W_WI + 2] = R20 * ox + R21 * oy + R22 * oz


@njit(**_JIT)
def _relative(ws, out, o):
    """From the port states in ws: out[o:o+13] = r_DPA (P comps), q_PA, rate of r_DPA seen in P,
    angular velocity of A relative to P (P comps) ([Yaskevich 2018b, contact forces]).
    Uses ws[0, W_RPA] scratch."""
    d0 = ws[0, W_PI] - ws[1, W_PI]
    d1 = ws[0, W_PI + 1] - ws[1, W_PI + 1]
    d2 = ws[0, W_PI + 2] - ws[1, W_PI + 2]
    u0 = ws[0, W_VI] - ws[1, W_VI]
    u1 = ws[0, W_VI + 1] - ws[1, W_VI + 1]
    u2 = ws[0, W_VI + 2] - ws[1, W_VI + 2]
    e0 = ws[0, W_WI] - ws[1, W_WI]
    e1 = ws[0, W_WI + 1] - ws[1, W_WI + 1]
    e2 = ws[0, W_WI + 2] - ws[1, W_WI + 2]
    for i in range(3):
        c0, c1, c2 = ws[1, W_RID + i], ws[1, W_RID + 3 + i], ws[1, W_RID + 6 + i]  # column i of R_IP
        out[o + REL_R + i] = c0 * d0 + c1 * d1 + c2 * d2
        out[o + REL_V + i] = c0 * u0 + c1 * u1 + c2 * u2
        out[o + REL_W + i] = c0 * e0 + c1 * e1 + c2 * e2
        for j in range(3):
            ws[0, W_RPA + 3 * i + j] = (c0 * ws[0, W_RID + j] + c1 * ws[0, W_RID + 3 + j]
                                        + c2 * ws[0, W_RID + 6 + j])
    wp0, wp1, wp2 = ws[1, W_WI], ws[1, W_WI + 1], ws[1, W_WI + 2]
    a0 = ws[1, W_RID] * wp0 + ws[1, W_RID + 3] * wp1 + ws[1, W_RID + 6] * wp2
    a1 = ws[1, W_RID + 1] * wp0 + ws[1, W_RID + 4] * wp1 + ws[1, W_RID + 7] * wp2
    a2 = ws[1, W_RID + 2] * wp0 + ws[1, W_RID + 5] * wp1 + ws[1, W_RID + 8] * wp2
    r0, r1, r2 = out[o + REL_R], out[o + REL_R + 1], out[o + REL_R + 2]
    out[o + REL_V] -= a1 * r2 - a2 * r1
    out[o + REL_V + 1] -= a2 * r0 - a0 * r2
    out[o + REL_V + 2] -= a0 * r1 - a1 * r0
    _dcm_row_to_quat(ws, W_RPA, out, o + REL_Q)


@njit(**_JIT)
def _dcm_row_to_quat(ws, r, out, o):
    """out[o:o+4] = quaternion of the 3x3 DCM stored row-major at ws[0, r:r+9]
    (``spatial.dcm_quat_entries``: Shepperd)."""
    out[o], out[o + 1], out[o + 2], out[o + 3] = spatial.dcm_quat_entries(
        ws[0, r], ws[0, r + 1], ws[0, r + 2], ws[0, r + 3], ws[0, r + 4], ws[0, r + 5],
        ws[0, r + 6], ws[0, r + 7], ws[0, r + 8])


@njit(**_JIT)
def _coupling_wrench(env, ws, rel):
    """Port-to-port spring-damper (env) as the wrench on the passive unit in P about P's origin,
    into rel[REL_LEN:REL_LEN+6]: f = k (r - r0) + c r_dot, m = r x f + k_rot theta + c_rot w_rel
    with r = r_DPA and theta the rotation vector of R_PA. Derived from the potential
    V = k/2 |r - r0|^2 + k_rot/2 |theta|^2, so the pair is conservative and its moment balance
    exact (docs/models/spacecraft.md)."""
    _relative(ws, rel, 0)
    r0, r1, r2 = rel[REL_R], rel[REL_R + 1], rel[REL_R + 2]
    t0, t1, t2 = spatial.quat_rotvec_entries(rel[REL_Q], rel[REL_Q + 1], rel[REL_Q + 2], rel[REL_Q + 3])
    k, c, kr, cr = env[E_KLIN], env[E_CLIN], env[E_KROT], env[E_CROT]
    f0 = k * (r0 - env[E_R0]) + c * rel[REL_V]
    f1 = k * (r1 - env[E_R0 + 1]) + c * rel[REL_V + 1]
    f2 = k * (r2 - env[E_R0 + 2]) + c * rel[REL_V + 2]
    o = REL_LEN
    rel[o], rel[o + 1], rel[o + 2] = f0, f1, f2
    rel[o + 3] = r1 * f2 - r2 * f1 + kr * t0 + cr * rel[REL_W]
    rel[o + 4] = r2 * f0 - r0 * f2 + kr * t1 + cr * rel[REL_W + 1]
    rel[o + 5] = r0 * f1 - r1 * f0 + kr * t2 + cr * rel[REL_W + 2]


@njit(**_JIT)
def _control(par, x, s, t, ws):
    """The vehicle's own control in body axes: per-axis attitude hold (PD on the error from the
    reference attitude, angle deadband, torque saturation) and per-axis thrust in a time window.
    Returns (fx, fy, fz, tx, ty, tz)."""
    f0 = f1 = f2 = 0.0
    if t >= par[s, P_TSTART] and t < par[s, P_TSTOP]:
        if par[s, P_TRMODE] != 0.0:
            f0 = par[s, P_FORCE]
        if par[s, P_TRMODE + 1] != 0.0:
            f1 = par[s, P_FORCE + 1]
        if par[s, P_TRMODE + 2] != 0.0:
            f2 = par[s, P_FORCE + 2]
    u0 = u1 = u2 = 0.0
    if par[s, P_ROTMODE] != 0.0 or par[s, P_ROTMODE + 1] != 0.0 or par[s, P_ROTMODE + 2] != 0.0:
        # error quaternion q_e = q_ref^* (x) q  (rotation of the body away from the reference)
        rw, rx, ry, rz = par[s, P_QREF], -par[s, P_QREF + 1], -par[s, P_QREF + 2], -par[s, P_QREF + 3]
        ew, ex, ey, ez = spatial.quat_mul_entries(rw, rx, ry, rz, x[s, S_Q], x[s, S_Q + 1], x[s, S_Q + 2],
                                                  x[s, S_Q + 3])
        sg = 2.0 if ew >= 0.0 else -2.0
        for i in range(3):
            if par[s, P_ROTMODE + i] != 0.0:
                e = sg * (ex if i == 0 else (ey if i == 1 else ez))
                db = par[s, P_DB + i]
                if e > db:
                    e -= db
                elif e < -db:
                    e += db
                else:
                    e = 0.0
                u = -par[s, P_KP + i] * e - par[s, P_KD + i] * ws[s, W_WREL + i]
                tm = par[s, P_TMAX + i]
                if u > tm:
                    u = tm
                elif u < -tm:
                    u = -tm
                if i == 0:
                    u0 = u
                elif i == 1:
                    u1 = u
                else:
                    u2 = u
    return f0, f1, f2, u0, u1, u2


@njit(**_JIT)
def derivatives(par, env, x, t, w_in, react, xdot, ws, rel):
    """xdot = f(t, x) for both vehicles under the held inputs ``w_in`` (module docstring).
    ``ws`` (2 x WS_LEN) and ``rel`` (REL_LEN + 6) are workspace.

    Per vehicle ([Yaskevich 2018b, eq. 1] with its two misprints read as I_s and l_CD):
    m r'' = R_IC (f_R + f_C) (+ Hill terms), J w' = -w x J w + r_cd x f_R + m_R + m_C,
    q' = 1/2 q (x) [0, w_rel], eta'' = -2 zeta Omega eta' - Omega^2 eta + Phi^T [f_R; m_R],
    with [f_R; m_R] the port wrench in C, moment about the (deflected) port origin.

    Parameters
    ----------
    par : float64[2, L]
        Both vehicles' parameter rows (module docstring, "The kernels' arguments", as for the
        rest).
    env : float64[ENV_LEN]
        The environment.
    x : float64[2, NS]
        Both vehicles' state.
    t : float
        Time, s (the thrust window of the vehicles' control).
    w_in : float64[2, 6]
        The held inputs.
    react : int
        1: the active unit receives the opposite of ``w_in[0]``; 0: it does not.
    xdot : float64[2, NS]
        Written: dx/dt.
    ws, rel : float64 arrays
        Workspace: the port states and wrenches; relative kinematics.
    """
    nm = (x.shape[1] - N_RIGID) // 2
    hw = env[E_N] if env[E_HILL] != 0.0 else 0.0
    _port(par, x, 0, nm, hw, ws)
    _port(par, x, 1, nm, hw, ws)
    return derivatives_at_ports(par, env, x, t, w_in, react, xdot, ws, rel)


@njit(**_JIT)
def derivatives_at_ports(par, env, x, t, w_in, react, xdot, ws, rel):
    """:func:`derivatives` with both ports already in ``ws`` for this ``x`` (``_port``): for a
    caller that evaluates the same state more than once (the digital reference's coupling).

    Parameters
    ----------
    par, env, x : float64 arrays
        As for :func:`derivatives` (module docstring, "The kernels' arguments").
    t : float
        Time, s.
    w_in : float64[2, 6]
        The held inputs.
    react : int
        1 (HIL) or 0 (digital reference), as for :func:`derivatives`.
    xdot : float64[2, NS]
        Written: dx/dt.
    ws : float64[2, WS_LEN]
        Workspace holding both port states of this x (layout ``W_*``); its wrench rows are written.
    rel : float64[REL_LEN + 6]
        Workspace.
    """
    nm = (x.shape[1] - N_RIGID) // 2
    hw = env[E_N] if env[E_HILL] != 0.0 else 0.0
    # Wrench on the passive unit in P about P's origin: the input plus the optional coupling.
    # The reacting part acts, opposite, on the active unit with the same line of action.
    f0, f1, f2 = w_in[0, 0], w_in[0, 1], w_in[0, 2]
    m0, m1, m2 = w_in[0, 3], w_in[0, 4], w_in[0, 5]
    if react != 0:
        g0, g1, g2, h0, h1, h2 = f0, f1, f2, m0, m1, m2
    else:
        g0 = g1 = g2 = h0 = h1 = h2 = 0.0
    if env[E_COUPLED] != 0.0:
        _coupling_wrench(env, ws, rel)
        o = REL_LEN
        f0 += rel[o]
        f1 += rel[o + 1]
        f2 += rel[o + 2]
        m0 += rel[o + 3]
        m1 += rel[o + 4]
        m2 += rel[o + 5]
        g0 += rel[o]
        g1 += rel[o + 1]
        g2 += rel[o + 2]
        h0 += rel[o + 3]
        h1 += rel[o + 4]
        h2 += rel[o + 5]
    d0 = ws[0, W_PI] - ws[1, W_PI]
    d1 = ws[0, W_PI + 1] - ws[1, W_PI + 1]
    d2 = ws[0, W_PI + 2] - ws[1, W_PI + 2]
    a0, a1, a2 = w_in[1, 0], w_in[1, 1], w_in[1, 2]
    b0, b1, b2 = w_in[1, 3], w_in[1, 4], w_in[1, 5]
    for i in range(3):
        P0, P1, P2 = ws[1, W_RID + 3 * i], ws[1, W_RID + 3 * i + 1], ws[1, W_RID + 3 * i + 2]
        A0, A1, A2 = ws[0, W_RID + 3 * i], ws[0, W_RID + 3 * i + 1], ws[0, W_RID + 3 * i + 2]
        ws[1, W_F + i] = P0 * f0 + P1 * f1 + P2 * f2
        ws[1, W_M + i] = P0 * m0 + P1 * m1 + P2 * m2
        ws[0, W_F + i] = -(P0 * g0 + P1 * g1 + P2 * g2) + A0 * a0 + A1 * a1 + A2 * a2
        ws[0, W_M + i] = -(P0 * h0 + P1 * h1 + P2 * h2) + A0 * b0 + A1 * b1 + A2 * b2
    # move the reaction's moment from P's origin to A's: m_A = -m + (pA - pP) x f
    gx = -(ws[1, W_RID] * g0 + ws[1, W_RID + 1] * g1 + ws[1, W_RID + 2] * g2)
    gy = -(ws[1, W_RID + 3] * g0 + ws[1, W_RID + 4] * g1 + ws[1, W_RID + 5] * g2)
    gz = -(ws[1, W_RID + 6] * g0 + ws[1, W_RID + 7] * g1 + ws[1, W_RID + 8] * g2)
    ws[0, W_M] -= d1 * gz - d2 * gy
    ws[0, W_M + 1] -= d2 * gx - d0 * gz
    ws[0, W_M + 2] -= d0 * gy - d1 * gx

    for s in range(2):
        fc0, fc1, fc2, tc0, tc1, tc2 = _control(par, x, s, t, ws)
        R00, R01, R02 = ws[s, W_RIC], ws[s, W_RIC + 1], ws[s, W_RIC + 2]
        R10, R11, R12 = ws[s, W_RIC + 3], ws[s, W_RIC + 4], ws[s, W_RIC + 5]
        R20, R21, R22 = ws[s, W_RIC + 6], ws[s, W_RIC + 7], ws[s, W_RIC + 8]
        fx, fy, fz = ws[s, W_F], ws[s, W_F + 1], ws[s, W_F + 2]
        mx, my, mz = ws[s, W_M], ws[s, W_M + 1], ws[s, W_M + 2]
        # port wrench in C (moment about the port origin)
        fr0 = R00 * fx + R10 * fy + R20 * fz
        fr1 = R01 * fx + R11 * fy + R21 * fz
        fr2 = R02 * fx + R12 * fy + R22 * fz
        mr0 = R00 * mx + R10 * my + R20 * mz
        mr1 = R01 * mx + R11 * my + R21 * mz
        mr2 = R02 * mx + R12 * my + R22 * mz
        inv_m = 1.0 / par[s, P_MASS]
        ft0, ft1, ft2 = fr0 + fc0, fr1 + fc1, fr2 + fc2
        xdot[s, S_R] = x[s, S_V]
        xdot[s, S_R + 1] = x[s, S_V + 1]
        xdot[s, S_R + 2] = x[s, S_V + 2]
        xdot[s, S_V] = (R00 * ft0 + R01 * ft1 + R02 * ft2) * inv_m
        xdot[s, S_V + 1] = (R10 * ft0 + R11 * ft1 + R12 * ft2) * inv_m
        xdot[s, S_V + 2] = (R20 * ft0 + R21 * ft1 + R22 * ft2) * inv_m
        if hw != 0.0:
            # Clohessy–Wiltshire: x radial, y along track, z orbit normal; v relative to I
            xdot[s, S_V] += 3.0 * hw * hw * x[s, S_R] + 2.0 * hw * x[s, S_V + 1]
            xdot[s, S_V + 1] += -2.0 * hw * x[s, S_V]
            xdot[s, S_V + 2] += -hw * hw * x[s, S_R + 2]
        # J w' = tau - w x J w
        w0, w1, w2 = x[s, S_W], x[s, S_W + 1], x[s, S_W + 2]
        j = P_J
        k0 = par[s, j] * w0 + par[s, j + 1] * w1 + par[s, j + 2] * w2
        k1 = par[s, j + 3] * w0 + par[s, j + 4] * w1 + par[s, j + 5] * w2
        k2 = par[s, j + 6] * w0 + par[s, j + 7] * w1 + par[s, j + 8] * w2
        rc0, rc1, rc2 = ws[s, W_RCD], ws[s, W_RCD + 1], ws[s, W_RCD + 2]
        t0 = mr0 + (rc1 * fr2 - rc2 * fr1) + tc0 - (w1 * k2 - w2 * k1)
        t1 = mr1 + (rc2 * fr0 - rc0 * fr2) + tc1 - (w2 * k0 - w0 * k2)
        t2 = mr2 + (rc0 * fr1 - rc1 * fr0) + tc2 - (w0 * k1 - w1 * k0)
        j = P_JINV
        xdot[s, S_W] = par[s, j] * t0 + par[s, j + 1] * t1 + par[s, j + 2] * t2
        xdot[s, S_W + 1] = par[s, j + 3] * t0 + par[s, j + 4] * t1 + par[s, j + 5] * t2
        xdot[s, S_W + 2] = par[s, j + 6] * t0 + par[s, j + 7] * t1 + par[s, j + 8] * t2
        # q' = 1/2 q (x) [0, w_rel]
        xdot[s, S_Q], xdot[s, S_Q + 1], xdot[s, S_Q + 2], xdot[s, S_Q + 3] = spatial.quat_rate_entries(
            x[s, S_Q], x[s, S_Q + 1], x[s, S_Q + 2], x[s, S_Q + 3], ws[s, W_WREL], ws[s, W_WREL + 1],
            ws[s, W_WREL + 2])
        # port-mount modes; rotational generalised force with T(theta)^T m (see _port)
        th0, th1, th2 = ws[s, W_TH], ws[s, W_TH + 1], ws[s, W_TH + 2]
        den = 1.0 + 0.25 * (th0 * th0 + th1 * th1 + th2 * th2)
        n0 = (mr0 - 0.5 * (th1 * mr2 - th2 * mr1)) / den
        n1 = (mr1 - 0.5 * (th2 * mr0 - th0 * mr2)) / den
        n2 = (mr2 - 0.5 * (th0 * mr1 - th1 * mr0)) / den
        nmv = int(par[s, P_NM])
        ph = P_MODES + 2 * nm
        for k in range(nm):
            if k < nmv:
                om = par[s, P_MODES + k]
                ze = par[s, P_MODES + nm + k]
                b = ph + 6 * k
                gen = (par[s, b] * fr0 + par[s, b + 1] * fr1 + par[s, b + 2] * fr2
                       + par[s, b + 3] * n0 + par[s, b + 4] * n1 + par[s, b + 5] * n2)
                e = x[s, S_ETA + k]
                ed = x[s, S_ETA + nm + k]
                xdot[s, S_ETA + k] = ed
                xdot[s, S_ETA + nm + k] = gen - 2.0 * ze * om * ed - om * om * e
            else:
                xdot[s, S_ETA + k] = 0.0
                xdot[s, S_ETA + nm + k] = 0.0


@njit(**_JIT)
def rk4_step(par, env, x, t, dt, w_in, react, k, xt, ws, rel):
    """One classical RK4 step of both vehicles and all modes with the inputs held; x updated in
    place, quaternions renormalised. ``k`` (4 x 2 x NS), ``xt`` (2 x NS), ``ws``, ``rel`` are
    workspace (:class:`Workspace`).

    Parameters
    ----------
    par : float64[2, L]
        Both vehicles' parameter rows, as for :func:`derivatives` (so are ``env``, ``x``,
        ``w_in``, ``react``, ``ws`` and ``rel``).
    env : float64[ENV_LEN]
        The environment.
    x : float64[2, NS]
        Both vehicles' state, advanced by dt in place.
    t : float
        Time at the start of the step, s.
    dt : float
        Step, s.
    w_in : float64[2, 6]
        The inputs, held over the step.
    react : int
        1 (HIL) or 0 (digital reference), as for :func:`derivatives`.
    k : float64[4, 2, NS]
        Workspace: the stage derivatives.
    xt : float64[2, NS]
        Workspace: the stage state.
    ws, rel : float64 arrays
        Workspace of :func:`derivatives`.
    """
    ns = x.shape[1]
    k0, k1, k2, k3 = k[0], k[1], k[2], k[3]
    derivatives(par, env, x, t, w_in, react, k0, ws, rel)
    h = 0.5 * dt
    for s in range(2):
        for i in range(ns):
            xt[s, i] = x[s, i] + h * k0[s, i]
    derivatives(par, env, xt, t + h, w_in, react, k1, ws, rel)
    for s in range(2):
        for i in range(ns):
            xt[s, i] = x[s, i] + h * k1[s, i]
    derivatives(par, env, xt, t + h, w_in, react, k2, ws, rel)
    for s in range(2):
        for i in range(ns):
            xt[s, i] = x[s, i] + dt * k2[s, i]
    derivatives(par, env, xt, t + dt, w_in, react, k3, ws, rel)
    h6 = dt / 6.0
    for s in range(2):
        for i in range(ns):
            x[s, i] += spatial.rk4_increment(h6, k0[s, i], k1[s, i], k2[s, i], k3[s, i])
        spatial.quat_normalize(x[s, S_Q:S_Q + 4])


@njit(**_JIT)
def rk4_steps(par, env, x, t0, dt, nsteps, w_in, react, k, xt, ws, rel):
    """``nsteps`` RK4 steps in compiled code (benchmarks and runs with a held input).

    Parameters
    ----------
    par, env, x : float64 arrays
        As for :func:`rk4_step` (module docstring, "The kernels' arguments"); x is advanced by
        nsteps * dt in place.
    t0 : float
        Time at the start of the first step, s.
    dt : float
        Step, s.
    nsteps : int
        Number of steps.
    w_in : float64[2, 6]
        The inputs, held over all the steps.
    react : int
        1 (HIL) or 0 (digital reference).
    k, xt, ws, rel : float64 arrays
        Workspace of :func:`rk4_step`.
    """
    t = t0
    for _ in range(nsteps):
        rk4_step(par, env, x, t, dt, w_in, react, k, xt, ws, rel)
        t += dt
    return t


@njit(**_JIT)
def relative_state(par, env, x, out, ws):
    """Relative kinematics of the docking units ([Yaskevich 2018b, contact forces]) into ``out``
    (REL_LEN): r_DPA (A's origin in P, P comps), q_PA (A comps -> P comps), the rate of r_DPA as
    seen in P, and the angular velocity of A relative to P in P comps.

    Parameters
    ----------
    par : float64[2, L]
        Both vehicles' parameter rows, as for :func:`derivatives` (module docstring, "The
        kernels' arguments"); so are ``x`` and ``ws``.
    env : float64[ENV_LEN]
        The environment: whether Hill terms are on, the orbit rate.
    x : float64[2, NS]
        Both vehicles' state.
    out : float64[REL_LEN]
        Written, layout ``REL_*``: r_DPA (m, P), q_PA, rate of r_DPA seen in P (m/s, P),
        angular velocity of A relative to P (rad/s, P).
    ws : float64[2, WS_LEN]
        Workspace (layout ``W_*``); left holding both port states.
    """
    nm = (x.shape[1] - N_RIGID) // 2
    hw = env[E_N] if env[E_HILL] != 0.0 else 0.0
    _port(par, x, 0, nm, hw, ws)
    _port(par, x, 1, nm, hw, ws)
    _relative(ws, out, 0)


@njit(**_JIT)
def relative_from_ports(ws, out):
    """:func:`relative_state` from the port states already in ``ws``, as the last
    :func:`relative_state`, :func:`port_states` or :func:`derivatives` call left them (the
    latter changes only their force rows): the same numbers without evaluating the ports again.

    Parameters
    ----------
    ws : float64[2, WS_LEN]
        Workspace holding both port states (layout ``W_*``); its ``W_RPA`` entries are scratch.
    out : float64[REL_LEN]
        Written, as by :func:`relative_state`.
    """
    _relative(ws, out, 0)


@njit(**_JIT)
def port_states(par, env, x, out, ws):
    """Absolute port states, ``out[s, :]`` = [p (3), q_ID (4), v (3), w (3)] in I (13 each).

    Parameters
    ----------
    par, env, x : float64 arrays
        As for :func:`relative_state`.
    out : float64[2, 13]
        Written, row s for vehicle s: port position (m), q_ID, velocity (m/s), angular velocity
        (rad/s), all in I.
    ws : float64[2, WS_LEN]
        Workspace (layout ``W_*``); left holding both port states.
    """
    nm = (x.shape[1] - N_RIGID) // 2
    hw = env[E_N] if env[E_HILL] != 0.0 else 0.0
    for s in range(2):
        _port(par, x, s, nm, hw, ws)
        for i in range(3):
            out[s, i] = ws[s, W_PI + i]
            out[s, 7 + i] = ws[s, W_VI + i]
            out[s, 10 + i] = ws[s, W_WI + i]
        for i in range(9):
            ws[0, W_RPA + i] = ws[s, W_RID + i]
        _dcm_row_to_quat(ws, W_RPA, out[s], 3)


@njit(**_JIT)
def spacecraft_invariants(par, env, x, out, ws, rel):
    """Energies and momenta in frame I (Hill terms ignored) into ``out`` (INV_LEN): kinetic
    energy of each rigid body, modal energy 1/2 eta_dot^2 + 1/2 Omega^2 eta^2 of each mount,
    coupling-spring potential, total, linear momentum (3), angular momentum about I's origin (3).

    Parameters
    ----------
    par : float64[2, L]
        Both vehicles' parameter rows (module docstring, "The kernels' arguments"), as for
        :func:`derivatives`; so are ``x``, ``ws`` and ``rel``.
    env : float64[ENV_LEN]
        The environment: the port spring-damper's stiffness and rest pose.
    x : float64[2, NS]
        Both vehicles' state.
    out : float64[INV_LEN]
        Written, layout ``I_*``: energies (J), linear momentum (kg·m/s, I), angular momentum about
        I's origin (kg·m^2/s, I).
    ws, rel : float64 arrays
        Workspace of :func:`derivatives`.
    """
    nm = (x.shape[1] - N_RIGID) // 2
    for i in range(INV_LEN):
        out[i] = 0.0
    for s in range(2):
        _port(par, x, s, nm, 0.0, ws)
        m = par[s, P_MASS]
        w0, w1, w2 = x[s, S_W], x[s, S_W + 1], x[s, S_W + 2]
        j = P_J
        k0 = par[s, j] * w0 + par[s, j + 1] * w1 + par[s, j + 2] * w2
        k1 = par[s, j + 3] * w0 + par[s, j + 4] * w1 + par[s, j + 5] * w2
        k2 = par[s, j + 6] * w0 + par[s, j + 7] * w1 + par[s, j + 8] * w2
        vx, vy, vz = x[s, S_V], x[s, S_V + 1], x[s, S_V + 2]
        rx, ry, rz = x[s, S_R], x[s, S_R + 1], x[s, S_R + 2]
        out[I_T0 + s] = 0.5 * m * (vx * vx + vy * vy + vz * vz) + 0.5 * (w0 * k0 + w1 * k1 + w2 * k2)
        em = 0.0
        for k in range(int(par[s, P_NM])):
            om = par[s, P_MODES + k]
            e = x[s, S_ETA + k]
            ed = x[s, S_ETA + nm + k]
            em += 0.5 * ed * ed + 0.5 * om * om * e * e
        out[I_MODAL0 + s] = em
        out[I_P] += m * vx
        out[I_P + 1] += m * vy
        out[I_P + 2] += m * vz
        for i in range(3):
            out[I_L + i] += (ws[s, W_RIC + 3 * i] * k0 + ws[s, W_RIC + 3 * i + 1] * k1
                             + ws[s, W_RIC + 3 * i + 2] * k2)
        out[I_L] += m * (ry * vz - rz * vy)
        out[I_L + 1] += m * (rz * vx - rx * vz)
        out[I_L + 2] += m * (rx * vy - ry * vx)
    if env[E_COUPLED] != 0.0:
        _relative(ws, rel, 0)
        t0, t1, t2 = spatial.quat_rotvec_entries(rel[REL_Q], rel[REL_Q + 1], rel[REL_Q + 2], rel[REL_Q + 3])
        d0 = rel[REL_R] - env[E_R0]
        d1 = rel[REL_R + 1] - env[E_R0 + 1]
        d2 = rel[REL_R + 2] - env[E_R0 + 2]
        out[I_SPRING] = 0.5 * env[E_KLIN] * (d0 * d0 + d1 * d1 + d2 * d2) \
            + 0.5 * env[E_KROT] * (t0 * t0 + t1 * t1 + t2 * t2)
    out[I_TOTAL] = out[I_T0] + out[I_T1] + out[I_MODAL0] + out[I_MODAL1] + out[I_SPRING]
