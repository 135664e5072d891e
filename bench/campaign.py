"""Campaign figures (issue 23):

* ``campaign_samples_per_s``: samples per wall second of the shipped campaign
  (config/campaigns/nominal_dispersed.toml, its first 32 samples; 12 with ``--quick``) on a
  LocalCluster with one worker process per core, results streamed to Parquet; timed from the
  first submission to the last row written (the cluster's start and the workers' kernel loading
  are excluded: ``campaign_startup_s``);
* ``campaign_parallel_efficiency``: that rate over (cores x the rate of the same samples on a
  one-worker cluster); goal >= 0.8;
* ``campaign_single_worker_samples_per_s``, ``campaign_cores``, ``campaign_bench_samples``;
* ``campaign_hil_samples_per_s``: the same for the HIL campaign (config/campaigns/hil_delay.toml:
  each sample a 10 s docking on the emulated stand with the controller in lockstep, arming
  included; 8 samples, 4 with ``--quick``), all cores.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _rate(c, n: int, workers: int) -> tuple[float, float]:
    from sim_stand.campaign.engine import run_campaign
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        rep = run_campaign(c, Path(d) / "out", samples=n, workers=workers, progress=False)
        total = time.perf_counter() - t0
    assert rep.written == n
    return rep.samples_per_s, total - rep.wall_s


def run(quick: bool = False) -> dict:
    from sim_stand.campaign.outcome import run_sample
    from sim_stand.campaign.spec import load_campaign

    c = load_campaign(REPO / "config" / "campaigns" / "nominal_dispersed.toml")
    run_sample(c, 0, {})                         # compile once here; the workers load the cache
    n = 12 if quick else 32
    cores = os.cpu_count() or 1
    one, _ = _rate(c, n, 1)
    rate, startup = _rate(c, n, cores)
    h = load_campaign(REPO / "config" / "campaigns" / "hil_delay.toml")
    hil, _ = _rate(h, 4 if quick else 8, cores)
    return {"campaign_samples_per_s": round(rate, 3), "campaign_single_worker_samples_per_s": round(one, 3),
            "campaign_parallel_efficiency": round(rate / (cores * one), 3) if one > 0 else None,
            "campaign_cores": cores, "campaign_bench_samples": n, "campaign_startup_s": round(startup, 2),
            "campaign_hil_samples_per_s": round(hil, 3)}
