"""HIL campaigns (``mode = "hil"``, docs/campaigns.md): each sample a closed-loop docking on the
emulated stand with the controller in lockstep (sim_stand/closed_loop.py), the stand's delay a
dispersed parameter. On a LocalCluster of worker processes and on a ``dask scheduler`` +
``dask worker`` pair the rows are identical; a rerun reproduces its row and writes the
controller's run log, in which the controller's online identification finds the sampled delay
(an independent check that the dispersion reached the emulated platform)."""
from __future__ import annotations

import os

import numpy as np
import pytest

from rt.config import ConfigError
from sim_stand.campaign.cli import rerun, rows_equal
from sim_stand.campaign.engine import run_campaign
from sim_stand.campaign.spec import load_campaign
from sim_stand.campaign.store import ResultStore

from campaign_helpers import NOMINAL, check_rows_on_processes, write_campaign

pytestmark = pytest.mark.slow

N = 4


def hil_campaign(tmp, samples=N, extra="", mode="hil"):
    """The nominal docking started at -0.65 m (contact after ~0.5 s), cut to 2.5 s; the
    platform's delay 2.2 .. 4.5 ms against the 2.5 ms the controller is configured for
    (``mode`` None: no mode given)."""
    case = tmp / "short_case.toml"
    text = NOMINAL.read_text().replace("../vehicles/", f"{NOMINAL.parent.parent}/vehicles/")
    case.write_text(text.replace("position_m = [-0.70,", "position_m = [-0.65,"))
    return write_campaign(tmp / "hil.toml", {
        "stand_delay_s": {"distribution": "uniform", "bounds": [0.0022, 0.0045]},
        "closing_velocity_mps": {"distribution": "uniform", "bounds": [0.09, 0.12]},
    }, extra, name="hil_short", case=case, mode=mode, samples=samples, seed=11, sampling="sobol", duration_s=2.5,
        capture_settle_s=0.2)


@pytest.fixture(scope="module")
def hil_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hil")
    c = load_campaign(hil_campaign(tmp))
    rep = run_campaign(c, tmp / "out", workers=2, progress=False, flush_rows=2)
    return c, tmp / "out", rep


def test_hil_samples_dock_on_the_emulated_stand(hil_run):
    c, out, rep = hil_run
    assert c.mode == "hil" and rep.ran == N and rep.written == N
    rows = ResultStore.open(out).read().to_pylist()
    assert [r["sample"] for r in rows] == list(range(N))
    assert all(r["outcome"] == "capture" for r in rows), [(r["outcome"], r["reason"]) for r in rows]
    assert all(0.0022 <= r["stand_delay_s"] <= 0.0045 for r in rows)
    assert all(r["capture_time_s"] > r["first_contact_s"] > 0 and r["peak_force_n"] > 500 for r in rows)
    assert all(r["energy_absorbed_j"] > 0 and r["max_penetration_m"] > 0 for r in rows)
    assert all(r["peak_stroke_m"] is None for r in rows)      # the emulator's strokes are not recorded
    # run by the cluster's worker processes (which of the two takes which sample is the scheduler's choice)
    assert all(not r["worker"].endswith(f":{os.getpid()}") for r in rows)


def test_hil_rows_identical_on_scheduler_and_worker_processes(hil_run, dask_procs, tmp_path):
    check_rows_on_processes(hil_run, dask_procs, tmp_path / "remote", N)


def test_rerun_log_shows_the_sampled_delay(hil_run, tmp_path):
    from rt.record.runlog import read_log
    _, out, _ = hil_run
    rows = ResultStore.open(out).read().to_pylist()
    i = max(range(N), key=lambda k: rows[k]["stand_delay_s"])          # the longest delay of the design
    row, stored = rerun(out, i, tmp_path / "s.dslog")
    assert stored is not None and rows_equal(row, stored)
    log = read_log(tmp_path / "s.dslog")
    assert log.header["sample_values"]["stand_delay_s"] == stored["stand_delay_s"]
    emulated = log.header["emulated_platform_delay_s"]               # rounded to the 0.1 ms physics step
    assert abs(emulated - stored["stand_delay_s"]) <= 0.5e-4 + 1e-12
    # the controller was configured for 2.5 ms; its online identification (rt.stand.delay_id,
    # monitor mode) finds the emulated platform's delay from commanded vs measured motion
    ident = float(log.fields["delay"][-1, 0])
    assert np.isfinite(ident) and abs(ident - emulated) <= 0.05 * emulated, (ident, emulated)


def test_hil_only_keys_are_refused_elsewhere(tmp_path):
    with pytest.raises(ConfigError) as e:
        load_campaign(hil_campaign(tmp_path, mode=None))
    assert e.value.key == "dispersions.stand_delay_s" and "mode = 'hil'" in e.value.reason
    p = hil_campaign(tmp_path)
    p.write_text(p.read_text().replace("bounds = [0.0022, 0.0045]", "bounds = [0.0010, 0.0045]"))
    with pytest.raises(ConfigError) as e:
        load_campaign(p)
    assert e.value.key == "dispersions.stand_delay_s.bounds" and "servo's own lag" in e.value.reason
    p.write_text(p.read_text().replace('mode = "hil"', 'mode = "hil"\nstand = "nowhere.toml"'))
    with pytest.raises(ConfigError) as e:
        load_campaign(p)
    assert e.value.key == "stand" and "not found" in e.value.reason
