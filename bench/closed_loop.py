"""Closed-loop figures (issue 7): the controller and the emulator (its own process) in lockstep.

* ``closed_loop_cycles_per_s``: controller cycles per wall second over the whole nominal demo
  (arming, run-up, 10 s of docking, stop), emulator physics included;
* ``elastic_rod_cor_error_pct_uncompensated`` / ``_compensated``: the elastic-rod calibration
  case (config/cases/elastic_rod.toml, emulator config/emulator/elastic_rod.toml: 3 ms platform
  delay, 8 N sensor noise, sensor low-pass off) with delay compensation off and on; error of
  the measured coefficient of restitution against the closed form, in % of it
  (sim_stand/calibration.py). Also the expected uncompensated excess ``pi w tau / 2``.
* ``emulator_realtime_factor``: emulated seconds per wall second of the stand emulator's physics
  alone (sim_stand/world.py: platform servo and delay, mechanism, contacts at 10 kHz), free
  running, no protocol: the platform pushes the active unit from the home pose into the passive
  unit at 0.1 m/s, so the window covers free motion, first contact and the latches; target >= 3;
* ``digital_case_cpu_s``: CPU seconds of the all-digital reference for the 10 s nominal case run
  to its full duration (the capture-settle end switched off) with its default integrator (rosw),
  goal <= 0.3 s (issue 23); with ``digital_case_sim_s`` (10), ``digital_case_integrator``,
  ``digital_case_fine_steps`` (coupled steps taken), ``digital_case_evaluations`` (of the coupled
  system), ``digital_case_us_per_evaluation`` and the same case with rk23
  (``digital_case_cpu_s_rk23``, ``digital_case_evaluations_rk23``); docs/bench.md.
* ``elastic_rod_grid_within_limit`` of ``elastic_rod_grid_points``: the calibration grid
  (sim_stand/rod_grid.py, docs/validation.md §3.3: m* 100 kg..20 t, k 1e4..3e6 N/m, platform
  delay 2..20 ms, zeta 0 / 0.1 / 0.3; 81 points, the 4 of ``COARSE`` with ``--quick``) at the
  stand's shipped defaults (sensor noise 3 sigma = 8 N): the points whose |CoR error| is within
  their goal ``max(0.05 %, 1.5 x the ideal delayed loop's)`` (``_or_noise``: or within twice the
  point's noise floor; a run that trips before its rebound counts in neither), with
  ``elastic_rod_grid_worst_ratio_to_limit`` (goal <= 1) and its point; the points beyond the
  stand's envelope (``rt.stand.envelope``) are listed in ``elastic_rod_grid_outside_envelope``
  and not run (``elastic_rod_grid_points_inside_envelope`` counts the rest);
  ``elastic_rod_cor_error_pct_compensated_worst`` the largest error, the largest noise floor,
  whether every run ended DONE, and the constant-acceleration predictor at the hardest point
  inside for comparison.
* ``docking_hil_peak_force_error_pct_worst`` / ``docking_hil_capture_time_error_ms_worst`` /
  ``docking_hil_first_contact_error_ms_worst``: the docking cases (nominal, offset, low-energy,
  probe-cone, berthing; nominal only with ``--quick``) on the lockstep stand at its shipped defaults
  against the all-digital reference under the stand's conditions, started from the mechanism
  state the run's arming left (sim_stand/prehistory.py) and logged at the physics rate: the peak
  force's error against the reference's band over the run's 1 kHz sampling phase (0 inside;
  rt/analysis/compare.py), the capture on the model's clock (sim_stand/model_clock.py), the
  first contact at 50 N (docs/validation.md §2); goals 1 % and one cycle (issue 26).
"""
from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def emulator_setup(seconds: float):
    """The emulated stand of the nominal case and the platform's commands for ``seconds``: up the
    platform's z (= x_P) at 0.1 m/s from home, one command per controller period; reset to home.
    -> (world, commands, period, home pose)."""
    from rt.stand import hexapod as HX
    from rt.config.stand import load_stand
    from sim_stand.cli import load_world

    stand = load_stand(REPO / "config" / "stand.toml")
    world, _ = load_world(stand, None, REPO / "config" / "cases" / "nominal.toml")
    period = stand.period_ns * 1e-9
    home = stand.hexapod.home.copy()
    base, top = np.ascontiguousarray(stand.hexapod.base), np.ascontiguousarray(stand.hexapod.top)
    L, J = np.zeros(6), np.zeros((6, 6))
    pose = home.copy()
    n = int(round(seconds / period))
    cmds = np.empty((n, 6))
    for k in range(n):                    # up the platform's z (= x_P) at 0.1 m/s
        pose[2] = home[2] + 0.1 * (k + 1) * period
        HX.inverse(base, top, pose, L, J)
        cmds[k] = L
    world.reset(home.copy())
    return world, cmds, period, home


def emulator_realtime_factor(seconds: float = 3.0) -> dict:
    world, cmds, period, home = emulator_setup(seconds)
    world.advance(cmds[0], period)        # compiled before timing
    world.reset(home.copy())
    n = len(cmds)
    t0 = time.perf_counter()
    for k in range(n):
        world.advance(cmds[k], period)
    wall = time.perf_counter() - t0
    ev = [name for _, name in world.events]
    return {"emulator_realtime_factor": round(world.t / wall, 2), "emulator_bench_emulated_s": round(world.t, 3),
            "emulator_bench_events": len(ev), "emulator_bench_contact": "first_contact" in ev}


def digital_case_cpu() -> dict:
    from dataclasses import replace

    from rt.config.case import EndCriteria, load_case
    from sim_stand.digital import DigitalSim

    case = load_case(REPO / "config" / "cases" / "nominal.toml")
    case = replace(case, end=EndCriteria(separation_m=case.end.separation_m, capture_settle_s=1e9))
    DigitalSim(case).run()                # compile
    DigitalSim(case, integrator="rk23").run()
    runs = sorted((DigitalSim(case).run() for _ in range(3)), key=lambda r: r.cpu_s)
    res = runs[1]                         # the median of three
    r23 = sorted((DigitalSim(case, integrator="rk23").run() for _ in range(3)), key=lambda r: r.cpu_s)[1]
    return {"digital_case_cpu_s": round(res.cpu_s, 3), "digital_case_sim_s": round(res.t_end_s, 3),
            "digital_case_integrator": res.integrator, "digital_case_fine_steps": res.fine_steps,
            "digital_case_evaluations": res.evaluations, "digital_case_captured": res.captured,
            "digital_case_us_per_evaluation": round(1e6 * res.cpu_s / max(res.evaluations, 1), 3),
            "digital_case_cpu_s_rk23": round(r23.cpu_s, 3), "digital_case_evaluations_rk23": r23.evaluations}


def run(quick: bool = False) -> dict:
    from sim_stand.calibration import rod_hil
    from sim_stand.cli import run_demo

    out: dict = {}
    out.update(emulator_realtime_factor(1.5 if quick else 3.0))
    out.update(digital_case_cpu())
    with tempfile.TemporaryDirectory() as d:
        r = run_demo(REPO / "config" / "cases" / "nominal.toml", log_dir=d)
        out["closed_loop_cycles_per_s"] = round(r["cycles"] / r["wall_s"], 1)
        out["closed_loop_nominal_captured"] = r["captured"]
        rod_case = REPO / "config" / "cases" / "elastic_rod.toml"
        if rod_case.exists():
            import math

            from rt.config.case import load_case
            from sim_stand.world_config import load_emulator
            for comp in (False, True):
                m = rod_hil(rod_case, comp, log_dir=d)
                key = "compensated" if comp else "uncompensated"
                out[f"elastic_rod_cor_error_pct_{key}"] = round(m["error_pct"], 3)
                out[f"elastic_rod_cor_{key}"] = round(m["cor"], 5)
            case = load_case(rod_case)
            emu = load_emulator(REPO / "config" / "emulator" / "elastic_rod.toml")
            pp = emu.platform
            tau = pp.transport_delay_s + 2.0 * pp.damping_ratio / (2.0 * math.pi * pp.bandwidth_hz)
            out["elastic_rod_platform_delay_s"] = round(tau, 6)
            out["elastic_rod_expected_excess_pct"] = round(100.0 * math.pi * case.contact.omega_radps * tau / 2.0, 3)
            out.update(delay_identification(d))
    out.update(rod_grid(quick))
    out.update(docking_fidelity(quick))
    return out


DOCKING_CASES = ("nominal", "offset", "low_energy", "probe_cone", "berthing")


def docking_fidelity(quick: bool) -> dict:
    """The docking cases' HIL against the reference (module docstring)."""
    from rt.analysis.compare import compare_logs
    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from sim_stand.cli import DEFAULT_STAND, _emulator_config, run_demo
    from sim_stand.reference import reference_of_run

    stand = load_stand(DEFAULT_STAND)
    worst = {"peak": (0.0, None), "capture": (0.0, None), "contact": (0.0, None)}
    per_case = {}
    within = True
    for name in DOCKING_CASES[:1] if quick else DOCKING_CASES:
        path = REPO / "config" / "cases" / f"{name}.toml"
        with tempfile.TemporaryDirectory() as d:
            hil = run_demo(path, log_dir=d)          # the shipped defaults
            emu = _emulator_config(None, path)
            ref = reference_of_run(load_case(path), stand, emu, Path(d) / "reference.dslog", hil["log"],
                                   require_state=True)
            rep = compare_logs(hil["log"], ref.log_path)
            floor = peak_noise_floor_pct(hil["log"])
        peak = rep["peak_force_error_band_pct"]
        cap = (1e3 * (hil["time_to_capture_s"] - ref.time_to_capture_s)
               if hil["time_to_capture_s"] is not None and ref.time_to_capture_s is not None else None)
        fc = rep["fidelity"]["first_contact_difference_s"]
        fc = 1e3 * fc if fc is not None else None
        per_case[name] = {"peak_force_error_pct": None if peak is None else round(peak, 3),
                          "peak_force_error_pct_phase0": round(rep["peak_force_error_pct"], 3),
                          "capture_ms": None if cap is None else round(cap, 3),
                          "capture_outcome_agrees": bool(hil["captured"] == ref.captured),
                          "first_contact_ms": None if fc is None else round(fc, 3),
                          "peak_noise_floor_pct": round(floor, 3),
                          "final_state": hil["final_state"]}
        for key, v in (("peak", peak), ("capture", cap), ("contact", fc)):
            if v is not None and abs(v) >= abs(worst[key][0]):
                worst[key] = (v, name)
        within &= peak is not None and abs(peak) <= max(1.0, 2.0 * floor)
    return {"docking_hil_peak_force_error_pct_worst": round(worst["peak"][0], 3),
            "docking_hil_peak_force_worst_case": worst["peak"][1],
            "docking_hil_capture_time_error_ms_worst": round(worst["capture"][0], 3),
            "docking_hil_capture_worst_case": worst["capture"][1],
            "docking_hil_first_contact_error_ms_worst": round(worst["contact"][0], 3),
            "docking_hil_peak_force_within_1pct_or_noise": within,     # or twice the noise floor (a light contact)
            "docking_hil_cases": per_case}


def peak_noise_floor_pct(log_path) -> float:
    """How far the sensor noise alone lifts a run's measured peak force, in % of it: the
    expected excess of the largest of N noisy samples, ``sigma sqrt(2 ln N)``, with ``sigma`` the
    measured (filtered) per-axis noise before the first contact and N the samples within 3 sigma
    of the peak, thinned by the low-pass's correlation (one in ``rate / (2 f_c)``)."""
    from rt.record.runlog import read_log
    log = read_log(log_path, ["t", "w_P"])
    t, w = log.fields["t"], log.fields["w_P"]
    ok = np.isfinite(t) & (t >= 0.0)
    t, w = t[ok], w[ok]
    f = np.linalg.norm(w[:, :3], axis=1)
    i0 = int(np.argmax(f > 50.0))
    quiet = t < t[i0] - 0.05
    if quiet.sum() < 100:
        return 0.0
    sigma = float(np.sqrt(np.mean(np.var(w[quiet, :3], axis=0))))
    peak = float(f.max())
    flt = log.header.get("sensing_filter") or {}
    thin = 2.0 * float(flt["cutoff_hz"]) / float(log.header.get("rate_hz", 1000.0)) if flt.get("cutoff_hz") else 1.0
    n = max(2.0, thin * float(np.count_nonzero(f >= peak - 3.0 * sigma)))
    return 100.0 * sigma * math.sqrt(2.0 * math.log(n)) / peak


def rod_grid(quick: bool) -> dict:
    """The calibration grid's figures at the stand's defaults (module docstring)."""
    from sim_stand.rod_grid import COARSE, GRID, goal_pct, ideal_error_pct, inside_envelope, run_point

    pts = COARSE if quick else GRID
    inside = [p for p in pts if inside_envelope(p)]
    outside = [p for p in pts if not inside_envelope(p)]
    rows, worst, worst_ratio, n_ok, n_noise, floor, all_done = [], None, None, 0, 0, 0.0, True
    with tempfile.TemporaryDirectory() as d:
        for i, p in enumerate(inside):
            goal = goal_pct(p)
            try:
                m = run_point(p, Path(d) / f"p{i}")
            except ValueError as e:          # the run tripped before its rebound could be measured
                all_done = False
                rows.append(f"{p.label}: no rebound ({str(e).split('(the run ended ')[-1].rstrip(')')[:120]})")
                continue
            ratio = abs(m["error_pct"]) / goal
            n_noise += abs(m["error_pct"]) <= max(goal, 2.0 * m["noise_floor_pct"])
            all_done &= m["final_state"] == "DONE" and m["trip"] is None
            rows.append(f"{p.label}: {m['error_pct']:+.4f} % (goal {goal:.3f} %, ideal loop {ideal_error_pct(p):+.4f} %, "
                        f"w tau {m['omega_tau']:.3f}, noise floor {m['noise_floor_pct']:.3f} %"
                        + ("" if m["final_state"] == "DONE" and m["trip"] is None else f", {m['final_state']} {m['trip']}")
                        + ")")
            n_ok += ratio <= 1.0
            floor = max(floor, m["noise_floor_pct"])
            if worst is None or abs(m["error_pct"]) > abs(worst[1]):
                worst = (p, m["error_pct"])
            if worst_ratio is None or ratio > worst_ratio[1]:
                worst_ratio = (p, ratio)
        hard = max(inside, key=lambda p: (p.omega_radps * p.delay_s, -p.damping_ratio))
        base = run_point(hard, Path(d) / "baseline", predictor="acceleration")
    return {"elastic_rod_grid_points": len(pts), "elastic_rod_grid_points_inside_envelope": len(inside),
            "elastic_rod_grid_within_limit": int(n_ok),
            "elastic_rod_grid_within_limit_or_noise": int(n_noise),     # or twice the point's noise floor
            "elastic_rod_grid_worst_ratio_to_limit": round(worst_ratio[1], 3),
            "elastic_rod_grid_worst_ratio_point": worst_ratio[0].label,
            "elastic_rod_cor_error_pct_compensated_worst": round(worst[1], 4),
            "elastic_rod_grid_worst_point": worst[0].label,
            "elastic_rod_grid_noise_floor_pct_max": round(floor, 4), "elastic_rod_grid_all_done": bool(all_done),
            "elastic_rod_cor_error_pct_acceleration_predictor_hardest": round(base["error_pct"], 4),
            "elastic_rod_grid_hardest_point": hard.label,
            "elastic_rod_grid_outside_envelope": "; ".join(f"{p.label} (w tau {p.omega_radps * p.delay_s:.2f})"
                                                           for p in outside),
            "elastic_rod_grid_note": "; ".join(rows)}


def delay_identification(log_dir) -> dict:
    """Issue 26 (rt.stand.delay_id, rt.stand.contact_gate; docs/validation.md §3.1-3.2): the
    platform delay identified in the rod cases' runs, and the CoR error at the stand's fidelity
    settings (the identified delay fed to the compensator, the contact gate on) while the stand
    is configured with the platform's delay 30 % too long or too short (the worst of the four
    runs: undamped and damped rod, +-30 %; 8 N noise as configured)."""
    from sim_stand.calibration import rod_hil
    cases = [REPO / "config" / "cases" / n for n in ("elastic_rod.toml", "elastic_rod_damped.toml")]
    worst, ident, rows = 0.0, [], []
    for case in cases:
        for err in (0.3, -0.3):
            m = rod_hil(case, True, log_dir=log_dir, delay_error=err, identify="feed", contact_gate=True)
            ident.append(m["delay_identified_s"])
            rows.append(f"{case.stem} {err:+.0%}: {m['error_pct']:+.3f} %")
            if abs(m["error_pct"]) > abs(worst):
                worst = m["error_pct"]
    return {"elastic_rod_cor_error_pct_delay_mismatch_worst": round(worst, 3),
            "elastic_rod_delay_identified_s": round(float(np.mean(ident)), 7),
            "elastic_rod_delay_mismatch_note": ("identify = feed, contact gate on, configured platform delay x 0.7 / 1.3; "
                                                + "; ".join(rows) + " (goal <= 0.1 %)")}
