"""The all-digital reference's integrators (sim_stand/digital.py): the default for a leg
mechanism, the Rosenbrock-W ROS34PW2 with the legs' device damping implicit ("rosw", via "auto"),
and the adaptive Bogacki-Shampine 3(2) ("rk23", a tree's default), against an independent fine
solution (classical RK4 at half the physics step); their step state carried between calls; the
choices refused where they do not apply.

Measured on the nominal case over its first 2.4 s (first contact 0.96 s, capture 1.73 s, the peak
force after it), 2026-11-26, against RK4 at 5e-5 s: rosw |dr| 0.0031 mm, |dv| 0.036 mm/s, force
RMS 0.85 N, capture +0.01 ms; rk23 0.0007 mm, 0.011 mm/s, 0.66 N, +0.01 ms; the semi-implicit
Euler at 1e-4 s 0.0016 mm, 0.070 mm/s, 0.65 N, +0.05 ms. Over the full 10 s: docs/models/world.md §6.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim_stand.digital import DigitalSim

REPO = Path(__file__).resolve().parents[2]
NOMINAL = REPO / "config" / "cases" / "nominal.toml"


def _rows(block_rows=1000, **kw):
    out = []
    sim = DigitalSim(NOMINAL, duration_s=2.4, **kw)
    res = sim.run(on_rows=lambda r: out.append(r.copy()), block_rows=block_rows)
    return np.concatenate(out), sim, res


@pytest.fixture(scope="module")
def oracle():
    return _rows(integrator="rk4", dt=5e-5)


@pytest.fixture(scope="module")
def rk23():
    return _rows(integrator="rk23")


@pytest.fixture(scope="module")
def rosw():
    return _rows()


def _errors(run, ref):
    r, sim, _ = run
    q, _, _ = ref
    off = sim.offsets
    n = min(len(r), len(q))
    assert n == len(q) == len(r)
    seg = lambda a, k, m: a[:n, off[k]:off[k] + m]
    return {"dr": np.abs(seg(r, "rel_pose", 3) - seg(q, "rel_pose", 3)).max(),
            "dv": np.abs(seg(r, "rel_twist", 3) - seg(q, "rel_twist", 3)).max(),
            "f_rms": float(np.sqrt(((seg(r, "w_P", 3) - seg(q, "w_P", 3)) ** 2).mean())),
            "stroke": np.abs(seg(r, "stroke", 6) - seg(q, "stroke", 6)).max()}


def _matches_the_oracle(run, oracle, integrator, dr_m, dv_m_s):
    """``run`` (by ``integrator``) and the fine RK4 both capture; the relative pose within
    ``dr_m``, the relative velocity within ``dv_m_s``, the contact force within 2 N RMS (over the
    run's rows, contacts up to 3.6 kN) and the strokes within 1e-5 m of the oracle's on every row;
    the events to the physics step (the step finding one is halved down to dt), the energy
    absorbed within 1 % and the peak force within 0.5 %."""
    _, _, res = run
    _, _, ref = oracle
    assert res.integrator == integrator and res.captured and ref.captured
    e = _errors(run, oracle)
    assert e["dr"] < dr_m
    assert e["dv"] < dv_m_s
    assert e["f_rms"] < 2.0
    assert e["stroke"] < 1e-5        # m (measured rosw 3.9 um, rk23 1.5 um)
    assert abs(res.time_to_capture_s - ref.time_to_capture_s) <= 1e-4
    assert abs(res.first_contact_s - ref.first_contact_s) <= 1e-4
    assert abs(res.energy_absorbed_j - ref.energy_absorbed_j) < 0.01 * ref.energy_absorbed_j
    assert abs(res.peak_force_n - ref.peak_force_n) < 0.005 * ref.peak_force_n


def test_rosw_is_the_default_and_matches_a_fine_rk4(rosw, rk23, oracle):
    # measured: |dr| 3.1 um, |dv| 0.036 mm/s, force RMS 0.85 N
    _matches_the_oracle(rosw, oracle, "rosw", dr_m=1e-5, dv_m_s=1e-4)
    sim = rosw[1]
    t = rosw[0][:, sim.offsets["t"]]
    assert np.allclose(np.diff(t), 1e-3)             # rows on the log's grid, interpolated inside steps


def test_rk23_matches_a_fine_rk4(rk23, oracle):
    # measured: |dr| 0.7 um, |dv| 0.011 mm/s, force RMS 0.66 N
    _matches_the_oracle(rk23, oracle, "rk23", dr_m=5e-6, dv_m_s=5e-5)
    _, sim, res = rk23
    assert int(sim.istate[7]) < res.fine_steps // 5      # few rejected steps


def test_rk23_no_less_accurate_than_the_fixed_step_euler(rk23, oracle):
    sie = _rows(integrator="semi_implicit_euler")
    e23, esie = _errors(rk23, oracle), _errors(sie, oracle)
    assert sie[2].evaluations > 2 * rk23[2].evaluations
    for k in ("dr", "dv", "stroke"):
        assert e23[k] < esie[k], (k, e23[k], esie[k])


@pytest.mark.parametrize("name", ["rk23", "rosw"])
def test_the_adaptive_step_is_carried_between_calls(name, rk23, rosw):
    """The step size (and rosw's last step, whose rows may not all fit) is state: rows integrated
    in blocks of 7 are the same rows."""
    r, _, res = {"rk23": rk23, "rosw": rosw}[name]
    r7, _, res7 = _rows(block_rows=7, integrator=name)
    assert np.array_equal(r, r7)
    assert res7.events == res.events


def test_rk23_only_for_a_docking_mechanism():
    rod = REPO / "config" / "cases" / "elastic_rod.toml"
    for name in ("rk23", "rosw", "semi_implicit_euler"):
        with pytest.raises(ValueError, match=f"integrator '{name}' is for a docking mechanism's run.*RK4"):
            DigitalSim(rod, integrator=name)
    assert DigitalSim(rod).integrator == DigitalSim(rod, integrator="rk4").integrator == "rk4"
    assert DigitalSim(rod, integrator="auto").integrator == "rk4"
    with pytest.raises(ValueError, match="integrator must be"):
        DigitalSim(NOMINAL, integrator="euler")
    cone = REPO / "config" / "cases" / "probe_cone.toml"
    with pytest.raises(ValueError, match="this mechanism is a tree: use 'rk23'"):
        DigitalSim(cone, integrator="rosw")
    assert DigitalSim(cone).integrator == "rk23" and DigitalSim(NOMINAL).integrator == "rosw"


@pytest.mark.parametrize("kw, words", [
    (dict(rk23_tol_m=0.0), "rk23_tol_m must be a positive number"),
    (dict(rk23_time_scale_s=float("nan")), "rk23_time_scale_s must be a positive number"),
    (dict(rk23_max_step_s=-1e-3), "rk23_max_step_s must be a positive number"),
    (dict(rk23_min_step_s=1e-4), "at most a quarter of the physics step"),
])
def test_rk23_settings_checked(kw, words):
    with pytest.raises(ValueError, match=words):
        DigitalSim(NOMINAL, **kw)


def test_hil_reference_keeps_the_stands_integrator(tmp_path):
    """A HIL run is judged against the reference at the stand's own discretisation."""
    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from sim_stand.reference import reference_of_run
    from sim_stand.world_config import load_emulator

    case = load_case(NOMINAL)
    emu = load_emulator().for_case(case)
    stand = load_stand(REPO / "config" / "stand.toml")
    res = reference_of_run(case, stand, emu, tmp_path / "ref.dslog")
    assert res.integrator == emu.integrator == "semi_implicit_euler"


def test_digital_integrator_key_checked(tmp_path):
    from rt.config import ConfigError
    from sim_stand.world_config import load_emulator

    src = (REPO / "config" / "emulator" / "default.toml").read_text()
    assert 'digital_integrator = "auto"' in src
    bad = tmp_path / "emu.toml"
    bad.write_text(src.replace('digital_integrator = "auto"', 'digital_integrator = "rk45"')
                   .replace('"../', f'"{REPO}/config/'))
    with pytest.raises(ConfigError) as e:
        load_emulator(bad)
    assert "digital_integrator" in str(e.value) and str(bad) in str(e.value)
    ok = tmp_path / "emu_sie.toml"
    ok.write_text(src.replace('digital_integrator = "auto"', 'digital_integrator = "semi_implicit_euler"')
                  .replace('"../', f'"{REPO}/config/'))
    assert DigitalSim(NOMINAL, load_emulator(ok)).integrator == "semi_implicit_euler"


def test_rosw_takes_long_steps_once_the_brakes_hold():
    """The point of rosw: after capture the brakes' regularised cores (-2.6e3 s^-1 in the ring's
    velocities) cap an explicit step near 1 ms; with them in W the steps grow. Over the full 10 s
    (the capture-settle end off, as the bench runs it) rosw needs a third fewer evaluations than
    rk23 (measured 19.5 k against 29.2 k), while over the contact phase alone it needs more."""
    from dataclasses import replace

    from rt.config.case import EndCriteria, load_case

    case = load_case(NOMINAL)
    case = replace(case, end=EndCriteria(separation_m=case.end.separation_m, capture_settle_s=1e9))
    a = DigitalSim(case, integrator="rosw").run()
    b = DigitalSim(case, integrator="rk23").run()
    assert a.captured and b.captured and a.t_end_s == b.t_end_s == 10.0
    assert a.evaluations < 0.75 * b.evaluations, (a.evaluations, b.evaluations)
    assert abs(a.peak_force_n - b.peak_force_n) < 0.005 * b.peak_force_n
    assert abs(a.energy_absorbed_j - b.energy_absorbed_j) < 0.005 * b.energy_absorbed_j
