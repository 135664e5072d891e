"""Assumed-modes flexible link ([Zhu, Wang & Zheng, §3], issue 25 oracles): a uniform clamped-free
link's bending frequencies against the Euler–Bernoulli closed form, Rayleigh–Ritz convergence from
above, the modal integrals against direct quadrature, a tip mass against Rayleigh's estimate."""
from __future__ import annotations

import numpy as np
import pytest

from rt.dynamics.flexible_link import (MAX_MODES, cantilever_frequency_hz, clamped_frequencies_hz, link_modes,
                                       shape)

L, EI, RHO = 7.0, 8.5e6, 25.0


@pytest.mark.parametrize("m", range(3, MAX_MODES + 1))
def test_first_frequency_within_0p1_percent_with_3_or_more_modes(m):
    f = clamped_frequencies_hz(link_modes(L, EI, RHO, 0.0, m))
    assert abs(f[0] / cantilever_frequency_hz(1, L, EI, RHO) - 1.0) < 1e-3


@pytest.mark.parametrize("m", range(4, MAX_MODES + 1))
def test_second_frequency_within_1_percent_with_4_or_more_modes(m):
    f = clamped_frequencies_hz(link_modes(L, EI, RHO, 0.0, m))
    assert abs(f[1] / cantilever_frequency_hz(2, L, EI, RHO) - 1.0) < 1e-2


def test_rayleigh_ritz_converges_from_above():
    exact = [cantilever_frequency_hz(n, L, EI, RHO) for n in (1, 2)]
    prev = [np.inf, np.inf]
    for m in range(2, MAX_MODES + 1):
        f = clamped_frequencies_hz(link_modes(L, EI, RHO, 0.0, m))
        for n in (0, 1):
            assert exact[n] * (1 - 1e-9) <= f[n] <= prev[n] * (1 + 1e-12)
            prev[n] = f[n]
    assert abs(prev[0] / exact[0] - 1) < 1e-9 and abs(prev[1] / exact[1] - 1) < 1e-7


def test_modal_integrals_against_direct_quadrature():
    m, tip = 3, 120.0
    lm = link_modes(L, EI, RHO, tip, m)
    x = np.linspace(0.0, L, 200001)

    def integ(y):
        return np.trapezoid(y, x)
    for i in range(1, m + 1):
        pi, ppi = shape(i, x, L), shape(i, x, L, 2)
        assert lm.first[i - 1] == pytest.approx(RHO * integ(pi) + tip * shape(i, L, L), rel=1e-8)
        assert lm.moment[i - 1] == pytest.approx(RHO * integ(x * pi) + tip * L * shape(i, L, L), rel=1e-8)
        assert lm.tip_slope[i - 1] == pytest.approx((i + 1) / L)
        for j in range(1, m + 1):
            assert lm.mass[i - 1, j - 1] == pytest.approx(
                RHO * integ(pi * shape(j, x, L)) + tip * shape(i, L, L) * shape(j, L, L), rel=1e-8)
            assert lm.stiffness[i - 1, j - 1] == pytest.approx(EI * integ(ppi * shape(j, x, L, 2)), rel=1e-8)


def test_tip_mass_lowers_the_frequency_as_rayleigh_says():
    """A heavy tip mass M >> rho L: f -> sqrt(3 EI / (L^3 (M + 33/140 rho L))) / (2 pi)."""
    M = 50.0 * RHO * L
    f = clamped_frequencies_hz(link_modes(L, EI, RHO, M, 4))[0]
    rayleigh = np.sqrt(3 * EI / (L ** 3 * (M + 33.0 / 140.0 * RHO * L))) / (2 * np.pi)
    assert f == pytest.approx(rayleigh, rel=2e-3)
    assert f < clamped_frequencies_hz(link_modes(L, EI, RHO, 0.0, 4))[0]


def test_bad_mode_count():
    with pytest.raises(ValueError, match="modes"):
        link_modes(L, EI, RHO, 0.0, 0)
