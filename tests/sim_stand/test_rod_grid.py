"""The elastic-rod calibration over the grid (sim_stand/rod_grid.py, docs/validation.md §3.3),
coarse, at the stand's shipped defaults (identified delay fed, contact gate, constant-jerk
predictor) on the lockstep emulator with the sensor's 3 sigma = 8 N noise: the points of
``COARSE`` inside the stand's envelope -- the stiffest contact at 2 ms (m* 100 kg, k 3e6 N/m: w tau
0.35, zeta 0.1), an industrial robot's 20 ms on the shipped vehicles (zeta 0.1),
a heavy stiff contact at 5 ms -- each within its goal max(0.05 %, 1.5 x the ideal delayed loop's
error) and ending DONE with the contact over; the fourth point (20 ms on the stiffest contact:
w tau 3.5) is beyond the envelope. The constant-acceleration predictor at w tau 0.35 loses what
the analysis says, pi (w tau)^3 / 12. The heavy soft damped point (m* 20 t, k 2e5, zeta 0.3)
within its goal now that it touches on a cycle, and off a cycle the stand moving by what the
sampled closed form says (docs/validation.md §3.3, "The onset's sampling"); a damped onset through
the contact gate on a quiet sensor, on time."""
from __future__ import annotations

import math

import pytest

from sim_stand.rod_grid import COARSE, GridPoint, goal_pct, inside_envelope, run_point

pytestmark = pytest.mark.slow

INSIDE = [p for p in COARSE if inside_envelope(p)]


def test_the_coarse_grid_has_one_point_beyond_the_envelope():
    assert len(INSIDE) == 3 and not inside_envelope(COARSE[3])
    assert COARSE[3].omega_radps * COARSE[3].delay_s > 3.0


@pytest.mark.parametrize("point", INSIDE, ids=[p.label.replace(" ", "_") for p in INSIDE])
def test_grid_point_rebound(point, tmp_path):
    m = run_point(point, tmp_path)
    assert m["final_state"] == "DONE" and m["trip"] is None, m
    assert abs(m["error_pct"]) <= goal_pct(point), (point.label, m["error_pct"], goal_pct(point))


def test_constant_acceleration_predictor_loses_pi_wt3_over_12_at_the_hardest_point(tmp_path):
    p = GridPoint(200.0, 1e6, 0.005, 0.0)             # w tau 0.35, 14 samples per radian
    m = run_point(p, tmp_path, predictor="acceleration")
    wt = p.omega_radps * m["delay_identified_s"]
    theory = -100.0 * math.pi * wt ** 3 / 12.0          # -1.1 % at w tau = 0.35
    assert m["error_pct"] == pytest.approx(theory, abs=0.25), (m["error_pct"], theory)


def test_the_heavy_soft_damped_point_within_its_goal(tmp_path):
    """m* 20 t, k 2e5 N/m, zeta 0.3 (w 3.2 rad/s, a 0.84 s contact): measured +0.074 % at 2, 5 and
    20 ms alike while its 50 mm start put the touch 0.43 ms before a cycle's end (the sampled
    loop's ``2 zeta w phi`` = +0.082 %, tests/sim_stand/test_rod_sampling.py); touching on a
    cycle, the closed form within the goal (0.05 %; measured -0.008 %, the undamped point's -0.006 %)."""
    p = GridPoint(20000.0, 2e5, 0.002, 0.3)
    m = run_point(p, tmp_path)
    assert m["final_state"] == "DONE" and m["trip"] is None, m
    assert abs(m["error_pct"]) <= goal_pct(p), (m["error_pct"], goal_pct(p))
    assert m["onset_phase_s"] == 0.0


def test_the_stand_follows_the_sampled_closed_form_off_a_cycle(tmp_path):
    """The same point with the touch moved 0.4 ms earlier (the cycles stay where they are, so the
    loop begins the damper's step 0.4 ms late, ``sim_stand.rod.onset_phase``): the CoR error moves
    by ``2 zeta w phi`` (+0.0759 %, ``sim_stand.rod.restitution_sampled``) within 0.005 % -- the
    loop's effective sampling instant is its cycle's midpoint, as the lead makes it."""
    import re

    from sim_stand.calibration import rod_hil
    from sim_stand.rod import onset_phase, restitution, restitution_sampled
    from sim_stand.rod_grid import DT, SIGMA_3SIGMA_8N, write_point

    p = GridPoint(20000.0, 2e5, 0.002, 0.3)
    base = run_point(p, tmp_path / "on")
    paths = write_point(p, tmp_path / "off", sigma_force_n=SIGMA_3SIGMA_8N)
    v = paths["closing_speed_mps"]
    touch = paths["touch_s"] - 4e-4
    text = paths["case"].read_text()
    text, n = re.subn(r"position_m = \[[^,]*,", f"position_m = [{-0.55 - touch * v!r},", text, count=1)
    assert n == 1
    paths["case"].write_text(text)
    off = rod_hil(paths["case"], True, log_dir=tmp_path / "off", emulator_path=paths["emulator"],
                  stand_path=paths["stand"])
    assert off["final_state"] == "DONE" and off["trip"] is None, off
    phi = onset_phase(touch, DT)
    assert phi == pytest.approx(4e-4, abs=1e-9)
    expected = 100.0 * (restitution_sampled(0.3, p.omega_radps, phi) / restitution(0.3) - 1.0)
    assert off["error_pct"] - base["error_pct"] == pytest.approx(expected, abs=0.005), (off["error_pct"],
                                                                                         base["error_pct"], expected)


def test_a_damped_onset_passes_the_gate_on_time_on_a_quiet_sensor(tmp_path):
    """The sensor's white noise off, its drift on (the shipped emulator's seed: a small bias the
    contact's way before the touch): the contact gate's look-back ran through all 64 kept samples
    and spread the damper's first sample (2.4 kN) over 65 cycles: +0.064 % at m* 1.6 t, k 2e5,
    zeta 0.3. Passed whole at the opening, the closed form within 0.02 % (measured -0.003 %)."""
    p = GridPoint(1600.0, 2e5, 0.002, 0.3)
    m = run_point(p, tmp_path, sigma_force_n=0.0)
    assert m["final_state"] == "DONE" and m["trip"] is None, m
    assert abs(m["error_pct"]) <= 0.02, m["error_pct"]
