"""Elastic-rod calibration contact (issue 7 item 7; docs/models/world.md §5).

The docking mechanism and the guide/latch contacts are replaced by one known-stiffness rod
between the active and the passive unit, acting along the approach axis x_P. The rod is mounted
on the active unit: its tip is the point ``c_A = [tip_offset, 0, 0]`` in A (on A's x axis). The
passive unit's face is the plane x_P = 0. The penetration is

    delta = x_P-coordinate of the tip = (p_PA + R_PA c_A)_x            (> 0: rod compressed)
    delta' = (v_tip - v_face)_x   (absolute velocities of the two surface points, P components)

and while ``delta > 0`` the force on the passive unit is ``f = max(0, k delta + c delta')`` along
+x_P, applied at the tip's foot on the face ``x_C = (0, y_tip, z_tip)`` (one point for action and
reaction, so the pair balances exactly; the active unit receives ``-f`` at the same point).

Separation rule (chosen so that the coefficient of restitution is analytic): **push only** --
the force is clipped at zero, so the contact ends when ``k delta + c delta' = 0`` (a real rod
cannot pull the passive plate; after the clip the massless rod relaxes on its own, and the
plate flies off, so there is no re-contact in a single impact). For the relative motion of two
free rigid bodies along the rod axis (reduced mass ``m* = m_A m_P / (m_A + m_P)``, no rotation),
``w = sqrt(k/m*)``, ``zeta = c / (2 sqrt(k m*))``, ``w_d = w sqrt(1 - zeta^2)``:

    delta(t) = v0/w_d e^{-zeta w t} sin(w_d t)
    contact ends at  w_d t* = pi - atan2(2 zeta sqrt(1-zeta^2), 1 - 2 zeta^2)
    e = e^{-zeta w t*} |cos(w_d t*) - zeta / sqrt(1-zeta^2) sin(w_d t*)|          (clipped law)

(for zeta = 0, t* = pi/w and e = 1; for zeta = 0.1, e = 0.7444; the textbook law that lets the
force pull until delta = 0 would give exp(-zeta pi / sqrt(1-zeta^2)) = 0.7292 instead, see
:func:`restitution_unclipped`). The undamped peak force is ``v0 sqrt(k m*)``.

A loop delay tau (the HIL stand without compensation) applies ``k delta(t - tau)``: to first
order a negative damping ``-k tau``, i.e. ``zeta_eff = zeta - w tau / 2``; for the undamped rod
the injected energy over one contact is ``pi w tau`` times the impact energy, so
``e = sqrt(1 + pi w tau) ~ 1 + pi w tau / 2`` (:func:`restitution_with_delay`).

A loop that samples the force every ``dt`` (the HIL stand: the vehicles integrated under the
sample held over the cycle, the lead making each sample the force at its cycle's midpoint)
begins a damped contact's force at a cycle boundary, not at the touch: the damper's step
``c v0`` at first touch starts ``phi`` later than the touch (:func:`onset_phase`, within
``(-dt/2, dt/2]``), and ``c v0 phi`` of impulse is missing (``phi < 0``: added) at the very
start. The clipped law is linear and has no scale, so the rest of the contact gives the same
ratio from the closing speed ``v0 + c v0 phi / m*``: ``e (1 + 2 zeta w phi)`` to first order
(:func:`restitution_sampled`). No compensator can remove it: a step and the ramp that follows
it, sampled, do not tell the step's instant from its height (docs/validation.md §3.3, "The
onset's sampling").

Kernels are ``@njit(cache=True)`` over flat arrays, allocation-free.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from sim_stand.kin import K_P, K_R, K_V, K_VP, K_W, K_WP, KIN_LEN, kin_from_ports

# rod parameter array
R_K, R_C, R_TIP = 0, 1, 2
ROD_LEN = 3
# rod output: [delta, delta_dot, force, contact point (3)]
RO_DELTA, RO_RATE, RO_FORCE, RO_XC = 0, 1, 2, 3
RO_LEN = 6


@dataclass(frozen=True)
class RodParams:
    """A calibration rod: stiffness, viscous damping, tip position ahead of A's origin along x_A
    at zero compression."""

    stiffness_n_per_m: float
    damping_ns_per_m: float = 0.0
    tip_offset_m: float = 0.0

    def pack(self) -> np.ndarray:
        p = np.zeros(ROD_LEN)
        p[R_K] = self.stiffness_n_per_m
        p[R_C] = self.damping_ns_per_m
        p[R_TIP] = self.tip_offset_m
        return p


@dataclass(frozen=True)
class RodContact:
    """A case's ``[contact] model = "elastic_rod"`` section (docs/config.md): a calibration rod
    of known stiffness along x_P instead of the mechanism (docs/models/world.md §5). Its damping
    is given as the ratio ``zeta`` of the linear spring-dashpot on the reduced mass of the two
    vehicles, so the coefficient of restitution has a closed form (:func:`restitution`)."""
    model: str = "elastic_rod"
    stiffness_n_per_m: float = 0.0
    damping_ratio: float = 0.0
    tip_offset_m: float = 0.0
    reduced_mass_kg: float = 0.0

    @property
    def damping_ns_per_m(self) -> float:
        return 2.0 * self.damping_ratio * (self.stiffness_n_per_m * self.reduced_mass_kg) ** 0.5

    @property
    def omega_radps(self) -> float:
        return (self.stiffness_n_per_m / self.reduced_mass_kg) ** 0.5 if self.reduced_mass_kg > 0 else 0.0

    def rod_params(self) -> RodParams:
        return RodParams(self.stiffness_n_per_m, self.damping_ns_per_m, self.tip_offset_m)


def parse_contact(c, reduced_mass_kg: float) -> RodContact:
    """The ``dockstand.contact_models`` entry ``elastic_rod``: parses a case's ``[contact]``
    table (``rt.config._schema.Table``; the caller checks for unknown keys)."""
    k = c.float("stiffness_n_per_m", gt=0.0)
    z = c.float("damping_ratio", 0.0, ge=0.0)
    if z >= 1.0:
        raise c.error("damping_ratio", f"must be < 1 (an underdamped impact with a closed-form restitution), got {z}")
    tip = c.float("tip_offset_m", 0.0, ge=-1.0, le=1.0)
    return RodContact(stiffness_n_per_m=k, damping_ratio=z, tip_offset_m=tip, reduced_mass_kg=reduced_mass_kg)


# ------------------------------------------------------------------ analytic values
def reduced_mass(m_a: float, m_p: float) -> float:
    return m_a * m_p / (m_a + m_p)


def damping_for_ratio(k: float, m_red: float, zeta: float) -> float:
    """c = 2 zeta sqrt(k m*)."""
    return 2.0 * zeta * math.sqrt(k * m_red)


def contact_time(zeta: float, omega: float) -> float:
    """t* of the clipped law (module docstring)."""
    s = math.sqrt(1.0 - zeta * zeta)
    return (math.pi - math.atan2(2.0 * zeta * s, 1.0 - 2.0 * zeta * zeta)) / (omega * s)


def restitution(zeta: float) -> float:
    """Coefficient of restitution of the clipped (push-only) linear spring-dashpot."""
    if zeta == 0.0:
        return 1.0
    s = math.sqrt(1.0 - zeta * zeta)
    wdt = math.pi - math.atan2(2.0 * zeta * s, 1.0 - 2.0 * zeta * zeta)
    return math.exp(-zeta * wdt / s) * abs(math.cos(wdt) - zeta / s * math.sin(wdt))


def restitution_unclipped(zeta: float) -> float:
    """The textbook value when the force may pull until delta returns to 0."""
    return math.exp(-zeta * math.pi / math.sqrt(1.0 - zeta * zeta))


def peak_force_undamped(v0: float, k: float, m_red: float) -> float:
    return v0 * math.sqrt(k * m_red)


def restitution_with_delay(zeta: float, omega: float, tau: float) -> float:
    """First-order effect of a loop delay tau on the coefficient of restitution: the delayed
    force ``k delta(t - tau) + c delta'(t - tau)`` is, to first order in ``omega tau``, the
    undelayed law with ``zeta_eff = zeta - omega tau / 2``. With ``zeta_eff >= 0`` the clipped
    law applies (:func:`restitution`); with ``zeta_eff < 0`` the force never reaches zero before
    delta does, so the contact ends at delta = 0 and ``e = exp(-zeta_eff pi / sqrt(1 -
    zeta_eff^2))``. For the undamped rod that is ``1 + pi omega tau / 2 + O((omega tau)^2)``,
    the same as the energy argument ``sqrt(1 + pi omega tau)``."""
    ze = zeta - 0.5 * omega * tau
    if ze >= 0.0:
        return restitution(ze)
    return math.exp(-ze * math.pi / math.sqrt(1.0 - ze * ze))


def onset_phase(touch_s: float, dt: float) -> float:
    """How much later than the touch at ``touch_s`` (s, on the loop's clock: cycles at whole
    multiples of ``dt``) a loop sampling every ``dt`` begins the contact's force (module
    docstring): the first cycle whose midpoint is past the touch starts at
    ``t_j = dt (floor(touch / dt - 1/2) + 1)``, and ``phi = t_j - touch`` in ``(-dt/2, dt/2]``
    (s). Zero for a touch on a cycle boundary."""
    return dt * (math.floor(touch_s / dt - 0.5) + 1.0) - touch_s


def restitution_sampled(zeta: float, omega: float, phase_s: float) -> float:
    """The coefficient of restitution of the clipped law as a loop sampling the force sees it
    when it begins the contact ``phase_s`` after the touch (:func:`onset_phase`), to first order
    in ``zeta omega phase``: ``e (1 + 2 zeta omega phase)`` (module docstring). Its error is
    second order, ``(omega dt)^2`` and ``(zeta omega phase)^2`` (tests/sim_stand/
    test_rod_sampling.py: against a sampled loop integrated exactly cycle by cycle)."""
    return restitution(zeta) * (1.0 + 2.0 * zeta * omega * phase_s)


# ------------------------------------------------------------------ kernels
@njit(cache=True, error_model="numpy")
def rod_eval(rp, kin, wrench_P, ro):
    """Rod wrench on the passive unit ``wrench_P`` ([f; m] in P about P's origin) from the
    kinematic record ``kin`` of A in P (``sim_stand.kin``): the pose of A in P (``K_P``,
    ``K_R``), A's absolute velocity and angular velocity (``K_V``, ``K_W``) and the passive
    unit's (``K_VP``, ``K_WP``), all P components. ``ro`` (RO_LEN) receives delta, delta', the
    force and the contact point. Returns the force.

    Parameters
    ----------
    rp : float64[ROD_LEN]
        Rod parameters (``RodParams.pack``): stiffness ``R_K`` (N/m), damping ``R_C`` (N s/m),
        tip offset along x_A ``R_TIP`` (m).
    kin : float64[KIN_LEN]
        Kinematic record of A in P (``sim_stand.kin`` ``K_*`` layout); pose, A's and P's
        absolute velocities and angular velocities, P components. Read only.
    wrench_P : float64[6]
        Output: the rod's wrench ``[f; m]`` on the passive unit, P components, about P's origin
        (N, N m).
    ro : float64[RO_LEN]
        Output: penetration delta (m), its rate (m/s), the force (N) and the contact point on
        the face (m, P components).
    """
    t = rp[R_TIP]
    # tip c = p_PA + R_PA c_A, c_A = [t, 0, 0]: column 0 of R_PA
    cx = kin[K_P] + kin[K_R] * t
    cy = kin[K_P + 1] + kin[K_R + 3] * t
    cz = kin[K_P + 2] + kin[K_R + 6] * t
    delta = cx
    # tip velocity (x component): v_A + w_A x (R_PA c_A); face point velocity: v_P + w_P x x_C
    rx = cx - kin[K_P]
    ry = cy - kin[K_P + 1]
    rz = cz - kin[K_P + 2]
    vt = kin[K_V] + kin[K_W + 1] * rz - kin[K_W + 2] * ry
    vf = kin[K_VP] + kin[K_WP + 1] * cz - kin[K_WP + 2] * cy
    rate = vt - vf
    f = 0.0
    if delta > 0.0:
        f = rp[R_K] * delta + rp[R_C] * rate
        if f < 0.0:
            f = 0.0
    for i in range(6):
        wrench_P[i] = 0.0
    wrench_P[0] = f
    # moment about P's origin of f e_x applied at x_C = (0, cy, cz): x_C x (f, 0, 0)
    wrench_P[4] = cz * f
    wrench_P[5] = -cy * f
    ro[RO_DELTA] = delta
    ro[RO_RATE] = rate
    ro[RO_FORCE] = f
    ro[RO_XC] = 0.0
    ro[RO_XC + 1] = cy
    ro[RO_XC + 2] = cz
    return f


@njit(cache=True, error_model="numpy")
def _rod_from_ports(rp, ws, w_in, ro, kin):
    """The rod wrench from the two vehicles' port states in ``ws`` (rt.dynamics.spacecraft layout) into
    w_in[0] (wrench on the passive unit); ``kin`` (KIN_LEN) is scratch for A's and P's motion in P."""
    # velocities are absolute (frame I inertial); P's origin velocity is subtracted in rod_eval
    # through the face-point velocity v_P + w_P x x_C
    kin_from_ports(ws, kin)
    rod_eval(rp, kin, w_in[0], ro)


@njit(cache=True, error_model="numpy")
def rod_derivatives(par, env, rp, x, t, w_in, xdot, ws, rel, ro, kin):
    """State derivative of the two vehicles coupled by the rod: the rod wrench is evaluated from
    this very state (no hold), then rt.dynamics.spacecraft.derivatives with ``react = 1`` (the active unit
    gets the opposite wrench on the same line of action).

    Parameters
    ----------
    par, env : float64 arrays
        Both vehicles' packed parameters and the environment (``rt.dynamics.spacecraft`` module
        docstring, "The kernels' arguments", as for ``x``, ``w_in``, ``xdot``, ``ws`` and ``rel``).
    rp : float64[ROD_LEN]
        Rod parameters (:func:`rod_eval`).
    x : float64[2, NS]
        Both vehicles' state. Read only.
    t : float
        Time (s).
    w_in : float64[2, 6]
        The held inputs; row 0 is overwritten with the rod's wrench on the passive unit (P
        components, about P's origin; N, N m), row 1 (the extra wrench on the active unit) is
        zeroed.
    xdot : float64[2, NS]
        Output: the state derivative.
    ws, rel : float64 arrays
        Workspace of ``rt.dynamics.spacecraft.derivatives``.
    ro : float64[RO_LEN]
        Output: the rod's penetration, its rate, force and contact point (:func:`rod_eval`).
    kin : float64[KIN_LEN]
        Scratch for A's and P's motion in P (a ``sim_stand.kin`` record; :func:`rod_scratch`).
    """
    nm = (x.shape[1] - S.N_RIGID) // 2
    hw = env[S.E_N] if env[S.E_HILL] != 0.0 else 0.0
    S._port(par, x, 0, nm, hw, ws)
    S._port(par, x, 1, nm, hw, ws)
    _rod_from_ports(rp, ws, w_in, ro, kin)
    for i in range(6):
        w_in[1, i] = 0.0
    S.derivatives(par, env, x, t, w_in, 1, xdot, ws, rel)


@njit(cache=True, error_model="numpy")
def rod_rk4_step(par, env, rp, x, t, dt, w_in, k, xt, ws, rel, ro, kin):
    """One classical RK4 step of the two vehicles with the rod force evaluated at every stage.
    Afterwards ``w_in[0]`` and ``ro`` hold the rod at the new state. Quaternions renormalised.

    Parameters
    ----------
    par, env, rp : float64 arrays
        As for :func:`rod_derivatives`.
    x : float64[2, NS]
        Both vehicles' state, advanced by ``dt`` in place.
    t : float
        Time at the step's start (s).
    dt : float
        Step (s).
    w_in : float64[2, 6]
        The held inputs; afterwards row 0 holds the rod's wrench at the new state, row 1 zero.
    k, xt, ws, rel : float64 arrays
        Workspace of ``rt.dynamics.spacecraft.rk4_step``.
    ro, kin : float64 arrays
        Output: the rod at the new state; scratch (as for :func:`rod_derivatives`).
    """
    ns = x.shape[1]
    rod_derivatives(par, env, rp, x, t, w_in, k[0], ws, rel, ro, kin)
    h = 0.5 * dt
    for s in range(2):
        for i in range(ns):
            xt[s, i] = x[s, i] + h * k[0, s, i]
    rod_derivatives(par, env, rp, xt, t + h, w_in, k[1], ws, rel, ro, kin)
    for s in range(2):
        for i in range(ns):
            xt[s, i] = x[s, i] + h * k[1, s, i]
    rod_derivatives(par, env, rp, xt, t + h, w_in, k[2], ws, rel, ro, kin)
    for s in range(2):
        for i in range(ns):
            xt[s, i] = x[s, i] + dt * k[2, s, i]
    rod_derivatives(par, env, rp, xt, t + dt, w_in, k[3], ws, rel, ro, kin)
    h6 = dt / 6.0
    for s in range(2):
        for i in range(ns):
            x[s, i] += SP.rk4_increment(h6, k[0, s, i], k[1, s, i], k[2, s, i], k[3, s, i])
        SP.quat_normalize(x[s, S.S_Q:S.S_Q + 4])
    # the rod at the new state (for logging and statistics)
    nm = (ns - S.N_RIGID) // 2
    hw = env[S.E_N] if env[S.E_HILL] != 0.0 else 0.0
    S._port(par, x, 0, nm, hw, ws)
    S._port(par, x, 1, nm, hw, ws)
    _rod_from_ports(rp, ws, w_in, ro, kin)


def rod_scratch() -> np.ndarray:
    """The ``kin`` scratch of :func:`rod_rk4_step` / :func:`rod_derivatives` (a ``sim_stand.kin`` record)."""
    return np.zeros(KIN_LEN)
