"""Elastic-rod calibration of the HIL loop (issue 7 item 7; docs/validation.md): the docking
mechanism is replaced by a rod of known stiffness (sim_stand/rod.py), so the coefficient of
restitution (CoR) of the two spacecraft's relative motion has a closed form; the HIL loop's
delay shows as an excess CoR (energy injected), which delay compensation must remove.

:func:`cor_from_log` measures the CoR from a run log (HIL or digital): the axial relative
velocity of A in P (``rel_twist[0]``) in free flight before the contact (the first record of
the run) and after it (the last record before the end), ``e = -v_after / v_before``. The
contact must have ended before the run did (the case ends on separation). Contact = |f| above
``contact_n`` (100 N: 5 % of the 2 kN peak of the preset cases, > 10 sigma of the 8 N sensor noise).
"""
from __future__ import annotations

import json
import math
import sys

import numpy as np

from rt.analysis.fidelity import cor_noise_floor_pct   # one implementation: the run fidelity verdict uses it too
from rt.record.runlog import read_log
from rt.stand.delay_id import first_order_lag_s


def cor_from_log(path, contact_n: float = 100.0) -> dict:
    log = read_log(path)
    f = log.fields
    t = f["t"]
    run = np.isfinite(t) & (t >= 0.0)
    if "phase" in f:
        from rt.control.controller import Phase
        run &= f["phase"] == Phase.DYNAMICS
    tw = f["rel_twist"][run]
    w = f["w_P"][run]
    tt = t[run]
    fn = np.linalg.norm(w[:, :3], axis=1)
    hit = np.nonzero(fn > contact_n)[0]
    if not len(hit):
        raise ValueError(f"{path}: no contact above {contact_n} N in the run")
    if hit[-1] >= len(tt) - 2:
        raise ValueError(f"{path}: the contact had not ended when the run did")
    v_before = float(tw[0, 0])
    v_after = float(tw[-1, 0])
    free = w[:max(0, hit[0] - 5), 0]            # the axial force's noise in free flight before the contact
    return {"cor": -v_after / v_before, "v_before_mps": v_before, "v_after_mps": v_after,
            "contact_start_s": float(tt[hit[0]]), "contact_end_s": float(tt[hit[-1]]), "run_s": float(tt[-1] - tt[0]),
            "peak_force_n": float(fn.max()), "noise_sigma_n": float(np.std(free)) if len(free) >= 50 else math.nan}


def rod_hil(case_path, compensate: bool, log_dir=None, emulator_path=None, delay_error: float = 0.0,
            identify: str | None = None, contact_gate: bool | None = None, stand_path=None,
            predictor: str | None = None) -> dict:
    """One HIL run of a rod case (emulator in lockstep, its platform delay from the emulator
    config, 8 N sensor noise; the sensor low-pass off so the loop delay is the platform's);
    returns the measured CoR, the closed-form ideal and the error in %, and the platform delay
    identified at the end of the run (``rt.stand.delay_id``; ``delay_error``, ``identify``:
    ``contact_gate``, ``stand_path``, ``predictor``: :func:`sim_stand.cli.run_demo`'s)."""
    from rt.config.case import load_case
    from sim_stand import rod
    from sim_stand.cli import REPO, run_demo

    emulator_path = emulator_path or REPO / "config" / "emulator" / "elastic_rod.toml"
    out = run_demo(case_path, stand_path=stand_path, emulator_path=emulator_path, compensate=compensate,
                   log_dir=log_dir, sensor_filter=False, delay_error=delay_error, identify=identify,
                   contact_gate=contact_gate, predictor=predictor)
    case = load_case(case_path)
    ideal = rod.restitution(case.contact.damping_ratio)
    try:
        m = cor_from_log(out["log"])
    except ValueError as e:
        raise ValueError(f"{e} (the run ended {out['final_state']}"
                         + (f": {out['trip']})" if out["trip"] else ")")) from None
    from rt.analysis.energy import approach_energy
    log = read_log(out["log"], ["phase", "x", "delay"])
    dt = 1.0 / float(log.header.get("rate_hz") or 1000.0)
    e_app = approach_energy(log.fields["x"][np.nonzero(log.fields["phase"] == 6)[0][0]], case)
    momentum = 2.0 * e_app / abs(m["v_before_mps"])            # m* v from E = m* v^2 / 2
    # the noise reaches the vehicles over the contact only with the gate (the one the run had, as
    # its log says); without it over the whole run, whose first and last records give the CoR
    gated = bool((log.header.get("contact_gate") or {}).get("enabled"))
    noisy_s = (m["contact_end_s"] - m["contact_start_s"]) if gated else m["run_s"]
    m.update(approach_j=e_app, noise_floor_pct=cor_noise_floor_pct(m["noise_sigma_n"], noisy_s, dt, momentum, ideal),
             contact_gate=gated)
    m.update(ideal=ideal, error_pct=100.0 * (m["cor"] - ideal) / ideal, compensate=compensate,
             final_state=out["final_state"], finish_reason=out["finish_reason"], trip=out["trip"], log=out["log"],
             energy_audit=out["energy_audit"])
    f = log.fields["delay"]
    kappa = float(f[-1, 2]) if f.shape[1] > 2 else math.nan        # logs before kappa: two columns
    lag = first_order_lag_s(kappa, dt)
    used = f[:, 1][np.isfinite(f[:, 1])]
    m.update(delay_identified_s=float(f[-1, 0]), delay_used_s=float(used.max()) if len(used) else None,
             lead_s=float(used[-1]) if len(used) else None, kappa_s2=kappa if math.isfinite(kappa) else None,
             first_order_lag_s=lag if math.isfinite(lag) else None)
    return m


ROD_CASES = ("elastic_rod.toml", "elastic_rod_damped.toml")


def lead_error_pct(case_path, lead_s, identified_s) -> float:
    """The CoR error (%) that a lead ``lead_s`` other than the identified delay gives on the rod
    case by itself: the rod's delayed restitution (``sim_stand.rod.restitution_with_delay``) at
    the delay ``identified - lead`` against the closed form; ``-pi w (lead - T) / 2`` for the
    undamped rod (docs/validation.md §3.3: a lead too long takes energy, one too short injects
    it). 0 when either is unknown."""
    from rt.config.case import load_case
    from sim_stand import rod
    if lead_s is None or identified_s is None or not (math.isfinite(lead_s) and math.isfinite(identified_s)):
        return 0.0
    c = load_case(case_path).contact
    z = c.damping_ratio
    return 100.0 * (rod.restitution_with_delay(z, c.omega_radps, identified_s - lead_s) / rod.restitution(z) - 1.0)


def calibrate_loop(stand_path=None, emulator_path=None, identify: str | None = None,
                   contact_gate: bool | None = None, bound_pct: float = 0.05, log_dir=None,
                   predictor: str | None = None) -> dict:
    """What a stand crew runs before a test campaign (issue 26 item 4; docs/validation.md §3):
    the elastic-rod case undamped and damped (ζ = 0.1) on the stand, here the emulated one in
    lockstep; per case the CoR measured against the closed form and a verdict against
    ``bound_pct``, the platform delay identified (``rt.stand.delay_id``) against the configured
    one, and the run's energy balance: the approach energy (``rt.analysis.energy.
    approach_energy``), what the rod absorbed and what the loop injected, from the rebound
    (``E (e^2 - e_ideal^2)``: exact, whatever the log's sampling). ``identify`` /
    ``contact_gate``, ``predictor`` override the stand's ``[delays] identify``,
    ``[sensor.contact_gate] enabled`` and ``[delays] predictor`` (the fidelity settings: "feed",
    True, "jerk"). Each case's run-log energy audit (rt.analysis.audit) comes with it."""
    from rt.config.stand import load_stand
    from sim_stand.cli import DEFAULT_STAND, REPO, lockstep_stand
    from sim_stand.world_config import load_emulator

    emulator_path = emulator_path or REPO / "config" / "emulator" / "elastic_rod.toml"
    stand = lockstep_stand(load_stand(stand_path or DEFAULT_STAND), load_emulator(emulator_path), False)
    rows = []
    for name in ROD_CASES:
        case = REPO / "config" / "cases" / name
        m = rod_hil(case, True, log_dir=log_dir, emulator_path=emulator_path, identify=identify,
                    contact_gate=contact_gate, stand_path=stand_path, predictor=predictor)
        e_app = m["approach_j"]
        e, e0 = m["cor"], m["ideal"]
        err, floor = abs(m["error_pct"]), m["noise_floor_pct"]
        # the lead's platform part (what the identification measures) at the end of the run
        lead = None if m["lead_s"] is None else m["lead_s"] - stand.delays.measurement_s
        lead_pct = lead_error_pct(case, lead, m["delay_identified_s"])
        verdict = "PASS" if err <= bound_pct else ("WITHIN_NOISE" if err <= bound_pct + 2.0 * floor else "FAIL")
        if abs(lead_pct) > bound_pct:
            verdict = "FAIL"          # a known error of the lead: no run, however lucky, certifies it
        rows.append({"case": case.stem, "cor_ideal": e0, "cor": e, "error_pct": m["error_pct"],
                     "noise_floor_pct": floor, "verdict": verdict,
                     "delay_identified_s": m["delay_identified_s"], "delay_configured_s": stand.delays.platform_s,
                     "lead_platform_s": lead, "lead_error_pct_expected": lead_pct,
                     "kappa_s2": m["kappa_s2"], "first_order_lag_s": m["first_order_lag_s"],
                     "approach_j": e_app, "absorbed_j": e_app * (1.0 - e * e), "ideal_absorbed_j": e_app * (1.0 - e0 * e0),
                     "injected_j": e_app * (e * e - e0 * e0), "injected_pct": 100.0 * (e * e - e0 * e0),
                     "final_state": m["final_state"], "trip": m["trip"], "log": m["log"],
                     "energy_audit": m["energy_audit"]})
    return {"bound_pct": bound_pct, "identify": identify or stand.delays.identify,
            "predictor": predictor or stand.delays.predictor,
            "contact_gate": stand.contact_gate.enabled if contact_gate is None else bool(contact_gate),
            "verdict": ("FAIL" if any(r["verdict"] == "FAIL" or r["trip"] is not None for r in rows) else
                        "PASS" if all(r["verdict"] == "PASS" for r in rows) else "WITHIN_NOISE"),
            "cases": rows}


def format_calibration(res: dict) -> str:
    """The calibration as the crew reads it (one line per case, then the verdict)."""
    from rt.analysis.audit import format_verdict
    lines = [f"loop calibration: identify = {res['identify']}, contact gate {'on' if res['contact_gate'] else 'off'}, "
             f"predictor {res['predictor']}, bound ±{res['bound_pct']:g} %",
             f"{'case':<20} {'CoR ideal':>9} {'measured':>9} {'error':>9}  {'delay id / cfg (ms)':>19}  "
             f"{'approach':>11} {'absorbed':>11} {'rebound excess':>19}  verdict"]
    for r in res["cases"]:
        inj = f"{r['injected_j']:+.4f} J {r['injected_pct']:+.3f} %"
        lines.append(f"{r['case']:<20} {r['cor_ideal']:>9.5f} {r['cor']:>9.5f} {r['error_pct']:>+8.3f}%  "
                     f"{1e3 * r['delay_identified_s']:>9.3f} / {1e3 * r['delay_configured_s']:<7.3f}  "
                     f"{r['approach_j']:>9.4f} J {r['absorbed_j']:>9.4f} J {inj:>19}  {r['verdict']}"
                     + (f" (trip: {r['trip']})" if r["trip"] else ""))
    for r in res["cases"]:
        lead = r.get("lead_error_pct_expected") or 0.0
        if abs(lead) > res["bound_pct"]:
            used, ident = 1e3 * r["lead_platform_s"], 1e3 * r["delay_identified_s"]
            lines.append(f"{r['case']:<20} the lead's platform part ({used:.3f} ms) is {abs(used - ident):.3f} ms "
                         f"{'longer' if used > ident else 'shorter'} than the platform's identified delay "
                         f"({ident:.3f} ms): that alone gives {lead:+.3f} % (the rod's restitution at that delay); correct the stand's "
                         "[delays] or run with --identify feed")
    for r in res["cases"]:
        if r.get("kappa_s2") is not None:
            lag = (f"were the platform a first-order lag, T1 = {1e3 * r['first_order_lag_s']:.3f} ms"
                   if r.get("first_order_lag_s") else "no first-order lag gives it (kappa <= 0)")
            lines.append(f"{r['case']:<20} platform acceleration offset kappa {r['kappa_s2']:+.3e} s^2 ({lag})")
    for r in res["cases"]:
        if r.get("energy_audit"):
            lines.append(f"{r['case']:<20} run log's {format_verdict(r['energy_audit'])}")
    for r in res["cases"]:
        lines.append(f"{r['case']:<20} noise floor {r['noise_floor_pct']:.3f} % (1 sigma: the sensor noise's impulse "
                     f"over {'the contact' if res['contact_gate'] else 'the whole run (no contact gate)'}, against "
                     "the approach momentum)")
    lines.append("rebound excess: E (e^2 - e_ideal^2), the loop's share and the noise's walk of the velocities "
                 "together; the run log's energy audit gives the loop's share alone (the noise does work on both "
                 "of its sides)")
    lines.append(f"verdict: {res['verdict']}")
    if res["verdict"] == "WITHIN_NOISE":
        lines.append("  (an error above the bound but within 2 sigma of the noise floor: one run cannot resolve the "
                     "bound at this sensor noise; repeat the calibration (on the emulator: with another [sensor] seed) and judge the mean of several)")
    return "\n".join(lines)


def cmd_calibrate_loop(args) -> int:
    """dockstand calibrate-loop: :func:`calibrate_loop`, printed."""
    from rt.config import ConfigError
    from rt.config.stand import resolve_stand_path
    if not args.bound_pct > 0.0:
        print(f"error: --bound-pct must be > 0, got {args.bound_pct:g}", file=sys.stderr)
        return 2
    if args.log_dir is not None:
        from pathlib import Path
        try:
            Path(args.log_dir).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            print(f"error: --log-dir {args.log_dir}: {e.strerror}", file=sys.stderr)
            return 2
    try:
        res = calibrate_loop(resolve_stand_path(args.stand, "calibrate-loop"), args.emulator, identify=args.identify, contact_gate=args.contact_gate,
                             bound_pct=args.bound_pct, log_dir=args.log_dir, predictor=args.predictor)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - the crew gets the reason
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(res, default=float) if args.json else format_calibration(res))
    return 1 if res["verdict"] == "FAIL" else 0
