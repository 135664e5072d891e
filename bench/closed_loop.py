"""Closed-loop figures (issue 7): the controller and the emulator (its own process) in lockstep.

* ``closed_loop_cycles_per_s``: controller cycles per wall second over the whole nominal demo
  (arming, run-up, 10 s of docking, stop), emulator physics included;
* ``elastic_rod_cor_error_pct_uncompensated`` / ``_compensated``: the elastic-rod calibration
  case (config/cases/elastic_rod.toml, emulator config/emulator/elastic_rod.toml: 3 ms platform
  delay, 8 N sensor noise, sensor low-pass off) with delay compensation off and on; error of
  the measured coefficient of restitution against the closed form, in % of it
  (sim_stand/calibration.py). Also the expected uncompensated excess ``pi w tau / 2``.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(quick: bool = False) -> dict:
    from sim_stand.calibration import rod_hil
    from sim_stand.cli import run_demo

    out: dict = {}
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
    return out
