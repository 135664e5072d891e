"""The ideal delayed loop (sim_stand/loop_theory.py) against the analysis of docs/validation.md
§3.3: a delay alone is a negative damping zeta = -w tau / 2 (CoR exp(pi w tau / 2)); the
constant-acceleration predictor loses pi (w tau)^3 / 12; the constant-jerk predictor is left with
the contact's onset and release, below (w tau)^4 / 12; without a loop the rod's closed form; a
damped contact's error depends on where its first touch falls within a sample."""
from __future__ import annotations

import math

import pytest

from sim_stand.loop_theory import ideal_error_pct, ideal_rebound
from sim_stand.rod import restitution

POINTS = [(200.0, 1e5, 0.0048), (1600.0, 1e6, 0.005), (200.0, 1e6, 0.0048)]   # w tau 0.107, 0.125, 0.339


def _mean(m, k, tau, predictor, zeta=0.0):
    """The CoR over eight phases of the first touch within the sample."""
    return sum(ideal_rebound(m, k, tau, predictor, zeta=zeta, phase=p / 8) for p in range(8)) / 8


@pytest.mark.parametrize("zeta", [0.0, 0.1, 0.3])
def test_without_a_loop_the_closed_form(zeta):
    assert ideal_rebound(1600.0, 2.5e5, 1.5e-6, "none", h=1e-6, zeta=zeta) == pytest.approx(restitution(zeta), rel=1e-4)


@pytest.mark.parametrize("m,k,tau", POINTS)
def test_delay_alone_is_a_negative_damping(m, k, tau):
    wt = math.sqrt(k / m) * tau
    assert _mean(m, k, tau, "none") == pytest.approx(math.exp(math.pi * wt / 2.0), rel=2e-2)


@pytest.mark.parametrize("m,k,tau", POINTS)
def test_constant_acceleration_loses_pi_wt3_over_12(m, k, tau):
    wt = math.sqrt(k / m) * tau
    err = _mean(m, k, tau, "acceleration") - 1.0
    assert err == pytest.approx(-math.pi * wt ** 3 / 12.0, rel=0.15), (err, wt)


@pytest.mark.parametrize("m,k,tau", POINTS)
def test_constant_jerk_is_left_with_the_onset_and_release(m, k, tau):
    """The constant-jerk predictor removes three quarters of the constant-acceleration's loss and more; what
    remains is the contact's onset and release ((w tau)^4 / 12) and the 1 kHz sampling of its
    onset (no more than twice as much again)."""
    wt = math.sqrt(k / m) * tau
    err = _mean(m, k, tau, "jerk") - 1.0
    ca = _mean(m, k, tau, "acceleration") - 1.0
    assert abs(err) <= 3.0 * wt ** 4 / 12.0 and abs(err) < 0.25 * abs(ca), (err, ca, wt)


def test_a_damped_contact_depends_on_the_touchs_phase():
    """The damper's step at the first touch lands anywhere in the 1 kHz sample: the CoR error
    spreads with the phase by about 2 zeta w h, and ideal_error_pct gives the worst."""
    m, k, tau, z = 200.0, 1e6, 0.0048, 0.1
    errs = [100.0 * (ideal_rebound(m, k, tau, "jerk", zeta=z, phase=p / 8 + 1 / 16) / restitution(z) - 1.0)
            for p in range(8)]
    spread = max(errs) - min(errs)
    assert 0.5 * 200.0 * z * math.sqrt(k / m) * 1e-3 < spread < 1.5 * 200.0 * z * math.sqrt(k / m) * 1e-3, errs
    assert ideal_error_pct(m, k, tau, z) == max(errs, key=abs)
    # undamped: a tenth of it
    e0 = [100.0 * (ideal_rebound(m, k, tau, "jerk", phase=p / 8 + 1 / 16) - 1.0) for p in range(8)]
    assert max(e0) - min(e0) < 0.1 * spread


def test_a_delay_shorter_than_the_sampling_is_refused():
    with pytest.raises(ValueError):
        ideal_rebound(200.0, 1e6, 1e-3, "jerk")
