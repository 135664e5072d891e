"""Generalized inertia of a flexible link in its floating frame ([Zhu, Wang & Zheng, §3, §4.1];
issue 25): the body-level equation M_i(b) w_i' + c_i(w_i, b) = u_E + u_C - [0; 0; K b] with
the link's generalized velocity w_i = [v; omega; b'] (v, omega: velocity of the link frame's origin
and angular velocity, link-frame components; b: the 2m elastic coordinates, y plane then z plane).

A point of the link at x along its axis sits at s(x) = x e_x + B(x) b (link frame;
``rt.dynamics.flexible_link``: mu = B b, axial stretch neglected); its absolute velocity is
R (v + omega x s + B b') = R W w with the W = [E_3, -[s x], B] of [Zhu, Wang & Zheng, eq. 19], and
its absolute acceleration R (W w' + kappa) with kappa = omega x v + omega x (omega x s) + 2 omega x
(B b'). Kane's equations (D'Alembert's principle in the quasi-velocities w) then give, exactly,

    M_i = int rho W^T W dx + m_tip W^T W |_L + H^T I_h H,
    c_i = int rho W^T kappa dx + m_tip W^T kappa |_L + H^T (omega x I_h omega),

(H = [0, E_3, 0]; I_h the joint hub's inertia, at the link's root, in link axes) which is the
M_i of [Zhu, Wang & Zheng, eq. 22] and its velocity terms u_S written without Lagrange's derivatives
of M (u_S of eq. 28 is garbled in the printed form, **reconstructed**): our choice, because it needs
no derivative of M with respect to b and is exact for any deflection. Every integrand is
a polynomial in x, so Gauss–Legendre quadrature with enough points (``BodyModel``) makes
the integrals exact.

Kernels: ``@njit(**KERNEL)``, allocation-free; may be called in the real-time loop.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rt.dynamics.flexible_link import shape
from rt.jit import KERNEL


@dataclass(frozen=True)
class BodyModel:
    """Quadrature data of one flexible link (build once, outside the loop): points ``x`` (ng),
    weights times mass per length ``rw`` (ng), shape values ``phi`` (ng x m), tip values
    ``tip`` (m), ``prm`` = [L, m_tip], hub inertia ``hub`` (3x3), stiffness ``K`` (2m x 2m)."""
    m: int
    x: np.ndarray
    rw: np.ndarray
    phi: np.ndarray
    tip: np.ndarray
    prm: np.ndarray
    hub: np.ndarray
    K: np.ndarray

    @property
    def n(self) -> int:
        return 6 + 2 * self.m


def body_model(length_m: float, ei_nm2, rho_kg_per_m: float, tip_mass_kg: float, hub_kgm2, modes: int) -> BodyModel:
    """Quadrature data for a uniform link; ``ei_nm2`` one value or (EI_y, EI_z)."""
    from rt.dynamics.flexible_link import link_modes
    L = float(length_m)
    ei = np.broadcast_to(np.asarray(ei_nm2, dtype=float), (2,))
    g, w = np.polynomial.legendre.leggauss(modes + 4)      # exact: integrands of degree <= 2m + 5
    x = 0.5 * L * (g + 1.0)
    rw = rho_kg_per_m * 0.5 * L * w
    phi = np.array([[shape(j, xi, L) for j in range(1, modes + 1)] for xi in x])
    tip = np.array([shape(j, np.array(L), L) for j in range(1, modes + 1)], dtype=float)
    K = np.zeros((2 * modes, 2 * modes))
    K[:modes, :modes] = link_modes(L, ei[0], rho_kg_per_m, tip_mass_kg, modes).stiffness
    K[modes:, modes:] = link_modes(L, ei[1], rho_kg_per_m, tip_mass_kg, modes).stiffness
    return BodyModel(modes, x, rw, phi, tip, np.array([L, float(tip_mass_kg)]), np.asarray(hub_kgm2, dtype=float),
                     K)


@njit(inline="always", **KERNEL)
def _deflection(ph, m, b, bd):
    """The point's deflection B b = [0, sy, sz] and its rate B b' = [0, dy, dz]."""
    sy = 0.0
    sz = 0.0
    dy = 0.0
    dz = 0.0
    for j in range(m):
        sy += ph[j] * b[j]
        sz += ph[j] * b[m + j]
        dy += ph[j] * bd[j]
        dz += ph[j] * bd[m + j]
    return sy, sz, dy, dz


@njit(**KERNEL)
def _point(mass, x, ph, m, b, bd, w, M, c, Wp):
    """Add one mass point's W^T W and W^T kappa (module docstring); ``Wp`` is 3 x n scratch."""
    n = 6 + 2 * m
    sy, sz, dy, dz = _deflection(ph, m, b, bd)
    sx = x
    # W = [E_3, -[s x], B]
    for r in range(3):
        for k in range(n):
            Wp[r, k] = 0.0
    Wp[0, 0] = 1.0
    Wp[1, 1] = 1.0
    Wp[2, 2] = 1.0
    # -[s x] = [[0, sz, -sy], [-sz, 0, sx], [sy, -sx, 0]]
    Wp[0, 4] = sz
    Wp[0, 5] = -sy
    Wp[1, 3] = -sz
    Wp[1, 5] = sx
    Wp[2, 3] = sy
    Wp[2, 4] = -sx
    for j in range(m):
        Wp[1, 6 + j] = ph[j]
        Wp[2, 6 + m + j] = ph[j]
    vx, vy, vz = w[0], w[1], w[2]
    ox, oy, oz = w[3], w[4], w[5]
    # kappa = omega x v + omega x (omega x s) + 2 omega x (B b'),  B b' = [0, dy, dz]
    cx = oy * sz - oz * sy
    cy = oz * sx - ox * sz
    cz = ox * sy - oy * sx
    k0 = (oy * vz - oz * vy) + (oy * cz - oz * cy) + 2.0 * (oy * dz - oz * dy)
    k1 = (oz * vx - ox * vz) + (oz * cx - ox * cz) + 2.0 * (-ox * dz)
    k2 = (ox * vy - oy * vx) + (ox * cy - oy * cx) + 2.0 * (ox * dy)
    for a in range(n):
        wa0 = Wp[0, a]
        wa1 = Wp[1, a]
        wa2 = Wp[2, a]
        c[a] += mass * (wa0 * k0 + wa1 * k1 + wa2 * k2)
        for bb in range(a, n):
            v = mass * (wa0 * Wp[0, bb] + wa1 * Wp[1, bb] + wa2 * Wp[2, bb])
            M[a, bb] += v
            if bb != a:
                M[bb, a] += v


@njit(**KERNEL)
def flexible_body_terms(x, rw, phi, tip, prm, hub, K, b, bd, w, M, c, Wp):
    """M_i (n x n) and c_i (n) of the link at elastic state (b, b') and twist w (module
    docstring), plus the elastic forces: c_i[6:] += K b (so the body equation is
    M w' = -c + [external]).

    Parameters
    ----------
    x : float64[ng]
        Quadrature points along the link axis, m (:class:`BodyModel`).
    rw : float64[ng]
        Quadrature weights times mass per length, kg.
    phi : float64[ng, m]
        Shape-function values at the points.
    tip : float64[m]
        Shape-function values at the tip.
    prm : float64[2]
        ``[L (m), m_tip (kg)]``.
    hub : float64[3, 3]
        The joint hub's inertia at the link's root, link axes, kg·m^2.
    K : float64[2m, 2m]
        Stiffness of the elastic coordinates.
    b : float64[2m]
        Elastic coordinates, y plane then z plane.
    bd : float64[2m]
        Their rates b'.
    w : float64[>=6]
        The link frame's twist ``[v (m/s); omega (rad/s)]``, link-frame components (entries 0..5).
    M : float64[>=n, >=n]
        Written: the generalized inertia M_i in its leading n x n block, n = 6 + 2m.
    c : float64[>=n]
        Written: the velocity terms c_i plus the elastic forces K b in c[6:n].
    Wp : float64[3, >=n]
        Scratch.
    """
    m = tip.shape[0]
    n = 6 + 2 * m
    for a in range(n):
        c[a] = 0.0
        for bb in range(n):
            M[a, bb] = 0.0
    for g in range(x.shape[0]):
        _point(rw[g], x[g], phi[g], m, b, bd, w, M, c, Wp)
    if prm[1] > 0.0:
        _point(prm[1], prm[0], tip, m, b, bd, w, M, c, Wp)
    ox, oy, oz = w[3], w[4], w[5]
    hx = hub[0, 0] * ox + hub[0, 1] * oy + hub[0, 2] * oz
    hy = hub[1, 0] * ox + hub[1, 1] * oy + hub[1, 2] * oz
    hz = hub[2, 0] * ox + hub[2, 1] * oy + hub[2, 2] * oz
    c[3] += oy * hz - oz * hy
    c[4] += oz * hx - ox * hz
    c[5] += ox * hy - oy * hx
    for a in range(3):
        for bb in range(3):
            M[3 + a, 3 + bb] += hub[a, bb]
    for a in range(2 * m):
        s = 0.0
        for bb in range(2 * m):
            s += K[a, bb] * b[bb]
        c[6 + a] += s


@njit(**KERNEL)
def flexible_body_momentum(x, rw, phi, tip, prm, hub, b, bd, w, out):
    """Linear momentum and angular momentum about the link frame's origin, link-frame
    components: out = [p (3); l_O (3)] = int rho [u; s x u] dx (+ tip, + hub I_h omega), with u the
    point's velocity v + omega x s + B b'.

    Parameters
    ----------
    x, rw, phi, tip, prm, hub : float64 arrays
        The link's model (:class:`BodyModel`), as for :func:`flexible_body_terms`.
    b, bd : float64[2m]
        Elastic coordinates and their rates.
    w : float64[>=6]
        The link frame's twist, as for :func:`flexible_body_terms`.
    out : float64[6]
        Written: linear momentum (kg·m/s) and angular momentum about the link frame's origin
        (kg·m^2/s), link-frame components.
    """
    m = tip.shape[0]
    for a in range(6):
        out[a] = 0.0
    for g in range(x.shape[0] + 1):
        if g < x.shape[0]:
            mass = rw[g]
            xx = x[g]
            ph = phi[g]
        else:
            mass = prm[1]
            xx = prm[0]
            ph = tip
        sy, sz, dy, dz = _deflection(ph, m, b, bd)
        ux = w[0] + w[4] * sz - w[5] * sy
        uy = w[1] + w[5] * xx - w[3] * sz + dy
        uz = w[2] + w[3] * sy - w[4] * xx + dz
        out[0] += mass * ux
        out[1] += mass * uy
        out[2] += mass * uz
        out[3] += mass * (sy * uz - sz * uy)
        out[4] += mass * (sz * ux - xx * uz)
        out[5] += mass * (xx * uy - sy * ux)
    for a in range(3):
        out[3 + a] += hub[a, 0] * w[3] + hub[a, 1] * w[4] + hub[a, 2] * w[5]
