"""The ideal delayed loop (sim_stand/loop_theory.py) against the analysis of docs/validation.md
§3.3: a delay alone is a negative damping zeta = -w tau / 2 (CoR exp(pi w tau / 2)); the
constant-acceleration predictor loses pi (w tau)^3 / 12; the constant-jerk predictor is left with
the contact's onset and release, below (w tau)^4 / 12."""
from __future__ import annotations

import math

import pytest

from sim_stand.loop_theory import ideal_rebound

POINTS = [(1600.0, 2.5e5, 0.0033), (200.0, 1e5, 0.0048), (200.0, 1e6, 0.0018)]   # w tau 0.041, 0.107, 0.127


@pytest.mark.parametrize("m,k,tau", POINTS)
def test_delay_alone_is_a_negative_damping(m, k, tau):
    wt = math.sqrt(k / m) * tau
    assert ideal_rebound(m, k, tau, "none") == pytest.approx(math.exp(math.pi * wt / 2.0), rel=1e-3)


@pytest.mark.parametrize("m,k,tau", POINTS)
def test_constant_acceleration_loses_pi_wt3_over_12(m, k, tau):
    wt = math.sqrt(k / m) * tau
    err = ideal_rebound(m, k, tau, "acceleration") - 1.0
    assert err == pytest.approx(-math.pi * wt ** 3 / 12.0, rel=0.1), (err, wt)


@pytest.mark.parametrize("m,k,tau", POINTS + [(200.0, 1e6, 0.0048)])      # and w tau 0.34
def test_constant_jerk_is_left_with_the_onset_and_release(m, k, tau):
    wt = math.sqrt(k / m) * tau
    err = ideal_rebound(m, k, tau, "jerk") - 1.0
    ca = ideal_rebound(m, k, tau, "acceleration") - 1.0
    assert abs(err) <= wt ** 4 / 12.0 and abs(err) < 0.15 * abs(ca), (err, ca, wt)
