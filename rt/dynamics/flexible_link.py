"""Assumed-modes model of a flexible arm link ([Zhu, Wang & Zheng, §3, eqs. 2–10]; issue 25):
a uniform clamped-free Euler–Bernoulli beam of length L, bending stiffness EI and mass per length
rho, with a tip mass, bending in its two planes (y and z of the link frame, x along the undeformed
link; axial stretch neglected, mu_x = 0).

Deflection in one plane: mu(x, t) = sum_j phi_j(x) b_j(t) with the clamped-free admissible
functions phi_j(x) = (x / L)^(j + 1), j = 1..m (phi(0) = phi'(0) = 0; **our choice**: the paper
leaves the functions open. Polynomials make the Rayleigh–Ritz approximation converge from above
as m grows, so the frequency oracles are a real test; the exact cantilever eigenfunctions would
make them trivially exact). Every integral is a polynomial one, computed exactly by Gauss–Legendre
quadrature with enough points.

Per plane (m x m or m): the link's modal integrals that the arm's mass matrix needs
([Zhu, Wang & Zheng, eq. 22] M_i = int rho W^T W dx + m_tip W^T W|_L + ...):

* ``mass``   = int_0^L rho phi_i phi_j dx + m_tip phi_i(L) phi_j(L)
* ``first``  = int_0^L rho phi_i dx + m_tip phi_i(L)           (coupling with translation)
* ``moment`` = int_0^L rho x phi_i dx + m_tip L phi_i(L)       (coupling with rotation)
* ``stiffness`` = EI int_0^L phi_i'' phi_j'' dx                (K'' of eq. 26)
* ``tip`` = phi_i(L), ``tip_slope`` = phi_i'(L)                (B_i(L), D_i(L) of eqs. 6, 9)

and the link's rigid mass properties (mass, first and second moments about the joint).
Built once, outside the real-time loop (numpy).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_MODES = 8   # x^2 .. x^9: the Gram matrix stays well conditioned (cond < 1e10)


@dataclass(frozen=True)
class LinkModes:
    """Modal integrals of one bending plane (module docstring), SI units."""
    m: int
    mass: np.ndarray
    first: np.ndarray
    moment: np.ndarray
    stiffness: np.ndarray
    tip: np.ndarray
    tip_slope: np.ndarray


def _gauss(n: int, L: float) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(n)
    return 0.5 * L * (x + 1.0), 0.5 * L * w


def shape(j: int, x: np.ndarray, L: float, derivative: int = 0) -> np.ndarray:
    """phi_j(x) = (x / L)^(j + 1) (j = 1..m) or its first / second derivative."""
    k = j + 1
    xi = np.asarray(x, dtype=float) / L
    if derivative == 0:
        return xi ** k
    if derivative == 1:
        return k * xi ** (k - 1) / L
    if derivative == 2:
        return k * (k - 1) * xi ** (k - 2) / L ** 2
    raise ValueError("derivative must be 0, 1 or 2")


def link_modes(length_m: float, ei_nm2: float, rho_kg_per_m: float, tip_mass_kg: float, modes: int) -> LinkModes:
    """The modal integrals of one bending plane of a uniform clamped-free link."""
    if not 1 <= modes <= MAX_MODES:
        raise ValueError(f"modes must be 1..{MAX_MODES}, got {modes}")
    L = float(length_m)
    x, w = _gauss(modes + 3, L)          # exact for the degree-(2m + 3) integrands
    ph = np.array([shape(j, x, L) for j in range(1, modes + 1)])
    pp = np.array([shape(j, x, L, 2) for j in range(1, modes + 1)])
    tip = np.array([shape(j, np.array(L), L) for j in range(1, modes + 1)], dtype=float)
    slope = np.array([shape(j, np.array(L), L, 1) for j in range(1, modes + 1)], dtype=float)
    mass = rho_kg_per_m * (ph * w) @ ph.T + tip_mass_kg * np.outer(tip, tip)
    first = rho_kg_per_m * ph @ w + tip_mass_kg * tip
    moment = rho_kg_per_m * ph @ (w * x) + tip_mass_kg * L * tip
    stiff = ei_nm2 * (pp * w) @ pp.T
    return LinkModes(modes, mass, first, moment, stiff, tip, slope)


def clamped_frequencies_hz(modes: LinkModes) -> np.ndarray:
    """Natural frequencies (Hz, ascending) of the link clamped at its joint: the generalized
    eigenvalues of (stiffness, mass) (Rayleigh–Ritz: each is an upper bound that decreases as
    modes are added)."""
    Lc = np.linalg.cholesky(modes.mass)
    Li = np.linalg.inv(Lc)
    lam = np.linalg.eigvalsh(Li @ modes.stiffness @ Li.T)
    return np.sqrt(np.maximum(lam, 0.0)) / (2.0 * np.pi)


def cantilever_frequency_hz(n: int, length_m: float, ei_nm2: float, rho_kg_per_m: float) -> float:
    """The n-th natural frequency of a uniform clamped-free beam without tip mass (standard
    beam theory, [Beam theory] in docs/references.md):
    (beta_n L)^2 sqrt(EI / (rho L^4)) / (2 pi)."""
    bl = (1.8751040687, 4.6940911330, 7.8547574382, 10.9955407349)[n - 1]
    return bl ** 2 * np.sqrt(ei_nm2 / (rho_kg_per_m * length_m ** 4)) / (2.0 * np.pi)
