"""Campaigns on real Dask clusters: a LocalCluster of processes and a ``dask scheduler`` +
``dask worker`` processes on loopback give identical rows; a worker killed by PID mid-campaign
loses and duplicates nothing; resume runs only the missing samples; rerun reproduces a row and
writes a run log the run-log reader loads; a diverging sample is a ``failure`` with its reason."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from sim_stand.campaign.cli import rerun, rows_equal
from sim_stand.campaign.engine import run_campaign
from sim_stand.campaign.outcome import run_sample
from sim_stand.campaign.spec import load_campaign
from sim_stand.campaign.store import ResultStore, StoreError

from campaign_helpers import check_rows_on_processes, comparable_rows, short_campaign

N = 16


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """The short campaign on a LocalCluster of 2 processes (kernels compiled once in this
    process first, so the workers load them from numba's cache)."""
    tmp = tmp_path_factory.mktemp("local")
    c = load_campaign(short_campaign(tmp, N))
    run_sample(c, 0, {})                                         # compile here, once
    rep = run_campaign(c, tmp / "out", workers=2, progress=False, flush_rows=4)
    return c, tmp / "out", rep


_rows = comparable_rows


@pytest.mark.slow
def test_local_cluster_runs_every_sample_once(local_run):
    c, out, rep = local_run
    assert rep.ran == N and rep.written == N and rep.workers == 2
    rows = ResultStore.open(out).read().to_pylist()
    assert [r["sample"] for r in rows] == list(range(N))
    assert {r["outcome"] for r in rows} <= {"capture", "no_capture", "failure"}
    assert sum(r["outcome"] == "capture" for r in rows) >= N // 2       # the nominal case captures
    cap = [r for r in rows if r["outcome"] == "capture"]
    assert all(r["capture_time_s"] > r["first_contact_s"] > 0 for r in cap)
    assert all(r["peak_force_n"] > 0 and r["energy_absorbed_j"] > 0 and r["peak_stroke_rate_mps"] > 0 for r in cap)
    # run by the cluster's worker processes (how the scheduler shares them out is its choice)
    assert all(not r["worker"].endswith(f":{os.getpid()}") for r in rows)
    # the parts are Parquet files any reader can take as one table
    import pyarrow.parquet as pq
    assert pq.read_table(out / "results").num_rows == N


@pytest.mark.slow
def test_scheduler_and_worker_processes_give_identical_rows(local_run, dask_procs, tmp_path):
    check_rows_on_processes(local_run, dask_procs, tmp_path / "remote", N)


@pytest.mark.slow
def test_worker_killed_mid_campaign_each_sample_exactly_once(dask_procs, tmp_path):
    c = load_campaign(short_campaign(tmp_path, 16, sampling="random"))
    run_sample(c, 0, {})                               # kernels compiled (once) before the workers start
    addr = dask_procs.start_scheduler()
    victim = dask_procs.start_worker("victim")
    dask_procs.start_worker("survivor")
    from dask.distributed import Client
    with Client(addr, timeout="30s") as cl:
        cl.wait_for_workers(2, timeout=120)
    out = tmp_path / "out"
    result = {}

    def go():
        result["rep"] = run_campaign(c, out, scheduler=addr, progress=False, flush_rows=1)

    th = threading.Thread(target=go, daemon=True)
    th.start()

    def victim_rows():
        if not (out / "campaign.json").exists():
            return 0, 0
        rows = ResultStore.open(out).read().to_pylist()
        return sum(r["worker"].endswith(f":{victim.pid}") for r in rows), len(rows)

    end = time.monotonic() + 120
    while time.monotonic() < end:                      # kill the victim once it has delivered a row
        mine, total = victim_rows()
        if mine >= 1:
            break
        time.sleep(0.02)
    else:
        pytest.fail("the victim worker delivered nothing")
    assert total < 16                                  # mid-campaign
    os.kill(victim.pid, signal.SIGKILL)
    th.join(timeout=300)
    assert not th.is_alive()
    assert victim.wait(timeout=10) == -signal.SIGKILL
    rows = ResultStore.open(out).read().to_pylist()
    assert sorted(r["sample"] for r in rows) == list(range(16))          # none lost, none twice
    assert result["rep"].ran == 16
    pids = {r["worker"].rsplit(":", 1)[1] for r in rows}
    assert str(victim.pid) in pids and len(pids) == 2           # the victim worked before it died
    # the samples the dead worker had taken were recomputed: same values as a clean run
    for r in rows[:3]:
        assert rows_equal(r, run_sample(c, r["sample"], {k: r[k] for k in c.names}))


@pytest.mark.slow
def test_resume_runs_only_the_missing_samples(local_run, tmp_path):
    c, _, _ = local_run
    c = load_campaign(short_campaign(tmp_path, 6, sampling="random"))
    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cl, Client(cl) as client:
        run_campaign(c, tmp_path / "out", samples=4, progress=False, client=client)
        first = _rows(tmp_path / "out")
        rep = run_campaign(c, tmp_path / "out", samples=6, resume=True, progress=False, client=client)
        assert (rep.already_done, rep.ran) == (4, 2)
        rep = run_campaign(c, tmp_path / "out", resume=True, progress=False, client=client)
        assert rep.ran == 0
        with pytest.raises(StoreError, match="would shrink it"):      # a campaign only grows
            run_campaign(c, tmp_path / "out", samples=5, resume=True, progress=False, client=client)
        assert ResultStore.open(tmp_path / "out").samples == 6
    rows = _rows(tmp_path / "out")
    assert [r["sample"] for r in rows] == list(range(6))
    assert rows[:4] == first


@pytest.mark.slow
def test_rerun_reproduces_its_row_and_writes_the_run_log(local_run, tmp_path):
    from rt.record.runlog import read_log
    _, out, _ = local_run
    row, stored = rerun(out, 5, tmp_path / "s5.dslog")
    assert stored is not None and rows_equal(row, stored)
    log = read_log(tmp_path / "s5.dslog")
    assert log.header["campaign_digest"] == ResultStore.open(out).manifest["campaign_digest"]
    assert log.header["sample_values"]["closing_velocity_mps"] == stored["closing_velocity_mps"]


def test_a_sample_that_starts_interpenetrating_is_named_so(tmp_path):
    # offset 47 mm / -75 mm with 1.4 deg of pitch: a guide's rim already sits 6.3 mm inside the
    # passive ring's outer edge at t = 0, and the contact's abort rule stops the run at its first
    # step: a failure whose reason names the infeasible start (end reason
    # initial_interpenetration), not a failure of the mechanism
    c = load_campaign(short_campaign(tmp_path, 2))
    row = run_sample(c, 0, {"position_y_m": 0.0467365382284433, "position_z_m": -0.07514927561433918,
                            "closing_velocity_mps": 0.11046891340464339, "misalignment_1_deg": 0.4051153421445391,
                            "misalignment_2_deg": -1.365784156966021, "misalignment_3_deg": 0.8183865954277814,
                            "lateral_velocity_y_mps": 0.006411380368989643,
                            "lateral_velocity_z_mps": 0.0034129480897233007})
    assert row["outcome"] == "failure", row
    assert row["end_reason"] == "initial_interpenetration" and row["t_end_s"] <= 1e-3, row
    assert "initial pose already interpenetrates" in row["reason"] and "exceeds the limit" in row["reason"], row


def test_a_sample_that_starts_in_contact_is_an_infeasible_start(tmp_path):
    # below the penetration limit but in contact from the first step (a guide 4.7 mm into the
    # passive ring): its 19 kN are the overlap springing apart, not a docking's load -- found in
    # an analyst's 60-sample campaign, where it set the campaign's peak force as a "capture"
    c = load_campaign(short_campaign(tmp_path, 2))
    row = run_sample(c, 0, {"position_y_m": -0.015362305090383829, "position_z_m": -0.061939768845806646,
                            "closing_velocity_mps": 0.09897474671676519, "misalignment_1_deg": -0.16390859903330368,
                            "misalignment_2_deg": -0.07651976703451316, "misalignment_3_deg": 1.1608734110151486,
                            "lateral_velocity_y_mps": 0.004204731841275437,
                            "lateral_velocity_z_mps": -0.003171301613455334})
    assert row["outcome"] == "failure" and row["end_reason"] == "initial_interpenetration", row
    assert row["first_contact_s"] == 0.0 and "already in contact" in row["reason"], row


@pytest.mark.parametrize("integrator", ["rosw", "rk23"])
def test_a_penetration_end_does_not_depend_on_the_row_blocks(tmp_path, integrator):
    # the interpenetrating start above ends on its first step: the adaptive integrators' end
    # inside a log period (its own last row, the run's end time) is the same whether the rows
    # are taken one at a time or a thousand at a time
    import numpy as np

    from sim_stand.campaign.apply import sample_inputs
    from sim_stand.digital import DigitalSim

    c = load_campaign(short_campaign(tmp_path, 2))
    values = {"position_y_m": 0.0467365382284433, "position_z_m": -0.07514927561433918,
              "closing_velocity_mps": 0.11046891340464339, "misalignment_1_deg": 0.4051153421445391,
              "misalignment_2_deg": -1.365784156966021, "misalignment_3_deg": 0.8183865954277814,
              "lateral_velocity_y_mps": 0.006411380368989643, "lateral_velocity_z_mps": 0.0034129480897233007}
    out = []
    for block in (1000, 1):
        case, emu, mech = sample_inputs(c, values)
        rows = []
        res = DigitalSim(case, emu, mechanism=mech, integrator=integrator).run(
            on_rows=lambda r: rows.append(r.copy()), block_rows=block)
        out.append((np.concatenate(rows), res))
    (a, ra), (b, rb) = out
    assert ra.end_reason == rb.end_reason == "penetration_limit" and ra.t_end_s <= 1e-3
    assert np.array_equal(a, b) and ra.t_end_s == rb.t_end_s and ra.events == rb.events
    assert np.all(np.diff(a[:, 0]) > 0) and a[-1, 0] == ra.t_end_s
