"""The elastic-rod calibration over the grid (issue 26; sim_stand/rod_grid.py, docs/validation.md
§3.3), coarse: the four points of ``COARSE`` -- the grid's hardest (m* 200 kg, k 1e6 N/m,
5 ms: w tau 0.35), undamped and damped, its easiest (10 t, 1e5 N/m, 2 ms) and the shipped
vehicles at 5 ms -- on the lockstep emulator with the sensor's 3 sigma = 8 N noise, at the
stand's fidelity settings (identified delay fed, contact gate, constant-jerk predictor).

Bounds: 0.05 % of the closed-form CoR where w tau <= 0.15; at w tau = 0.35 the causal limit of
any predictor driven by the measured force (the contact's onset and release, unknown until
they happen: ~(w tau)^4 / 24 each, 0.065 %; an ideal continuous loop with the same predictor
gives -0.10 %, docs/validation.md §3.3) plus the noise floor: 0.2 %. Every run ends DONE with
the contact over (the compensation keeps the loop bounded). The constant-acceleration
predictor at the hardest point loses what the analysis says, pi (w tau)^3 / 12."""
from __future__ import annotations

import math

import pytest

from sim_stand.rod_grid import COARSE, run_point

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("point", COARSE, ids=[p.label.replace(" ", "_") for p in COARSE])
def test_grid_point_rebound(point, tmp_path):
    m = run_point(point, tmp_path, predictor="jerk")
    assert m["final_state"] == "DONE" and m["trip"] is None, m
    wt = point.omega_radps * point.delay_s
    bound = 0.05 if wt <= 0.15 else 0.2
    assert abs(m["error_pct"]) <= bound, (point.label, m["error_pct"], wt)


def test_constant_acceleration_predictor_loses_pi_wt3_over_12_at_the_hardest_point(tmp_path):
    p = COARSE[0]
    m = run_point(p, tmp_path, predictor="acceleration")
    wt = p.omega_radps * m["delay_identified_s"]
    theory = -100.0 * math.pi * wt ** 3 / 12.0          # -1.09 % at w tau = 0.34
    assert m["error_pct"] == pytest.approx(theory, abs=0.2), (m["error_pct"], theory)
