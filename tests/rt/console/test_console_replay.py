"""``dockstand console --replay LOG`` (Pilot): a run log recorded by the controller (kinematic
rig, lockstep) plays through the same panels and ends on the values of its last record and the
controller's summary; a truncated copy plays to its last complete record and says so."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from rt.console import view as V
from rt.console.source import ReplaySource, WatchOnly
from rt.control.controller import Phase
from rt.record.runlog import read_log
from sim_stand.kinematic_rig import REPO, Rig

from pilot_steps import play_to_end, replay_in_console
from rig_steps import record_until_frozen


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    rig = Rig(tmp_path_factory.mktemp("replay"), contact=(-0.2, 2000.0))
    return record_until_frozen(rig, 1500, lambda rig: rig.ctl.command("abort", client="test"))


@pytest.mark.slow
def test_replay_ends_on_the_summary_values(recorded):
    path, summary = recorded
    log = read_log(path)
    src = ReplaySource(path)

    async def steps(app, pilot):
        assert app.sample is not None and src.speed == 1.0
        await pilot.press("p")
        assert src.paused
        await pilot.press("p")
        await play_to_end(app, pilot)
        assert src.speed == 10.0 and src.ended
        assert "replay ended at cycle" in app.message and "truncated" not in app.message
        # how the run ended, and no key to press: a replay sends nothing
        assert "ABORTED" in app.message and "reset" not in app.message, app.message
        # a lockstep log holds no link ages or wall-clock timing: said, not shown as 0
        assert "not recorded" in app.shown["links"] and "not recorded" in app.shown["timing"]
        assert "t_run" in app.shown["header"]
        assert "mechanism  capture open   latches 1○ 2○ 3○" in app.shown["relative"]   # the rig has no mechanism
        assert "since the log opened" in str(app.w["events"].border_title)
        assert all(app.w[f"spark-{n}"].summary_function is V.extreme for n in V.WRENCH)

    app = replay_in_console(src, steps)
    last = log.n_records - 1
    assert app.sample["cycle"] == log.fields["cycle"][last]
    assert app.shown["wrench"] == V.fmt_wrench(log.fields["w_P"][last])
    assert V.name_of(V.STATES, app.sample["state"]) == summary["state"] == "ABORTED"
    assert app.shown["header"].count("ABORTED") == 1
    with pytest.raises(WatchOnly):
        src.send("arm")
    # the summary's peak force is the largest |f| of the dynamics the replay passed through
    dyn = log.fields["phase"] == int(Phase.DYNAMICS)
    assert dyn.any()
    peak = np.linalg.norm(log.fields["w_P"][dyn][:, :3], axis=1).max()
    assert peak > 0.0 and peak == pytest.approx(summary["peak_force_n"], rel=1e-12)


def test_a_truncated_log_plays_to_its_end_and_says_so(recorded, tmp_path):
    path, _ = recorded
    raw = path.read_bytes()
    cut = tmp_path / "cut.dslog"
    cut.write_bytes(raw[: int(len(raw) * 0.6)])
    src = ReplaySource(cut)
    assert src.truncated and 0 < src.n < read_log(path).n_records

    async def steps(app, pilot):
        assert "truncated" in app.message
        await play_to_end(app, pilot)
        assert "replay ended" in app.message and "truncated log" in app.message

    app = replay_in_console(src, steps)
    log = read_log(cut)
    assert app.sample["cycle"] == log.fields["cycle"][-1]


def test_replay_of_a_missing_log_is_a_clear_error(tmp_path):
    r = subprocess.run([sys.executable, "-m", "rt.cli", "console", "--replay", str(tmp_path / "nope.dslog")],
                       capture_output=True, text=True, cwd=REPO, timeout=60, env={**os.environ, "TERM": "dumb"})
    assert r.returncode == 2 and "nope.dslog" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_the_log_holds_what_led_to_the_arm_on_the_logs_clock(recorded):
    """The log opens at the arm: the case loaded, the arm command and who sent them went in
    first (``before_log``), and a replay shows every event in seconds since the log's first
    record (the controller's clock counts from the loop's start, not from the arm)."""
    path, _ = recorded
    log = read_log(path)
    before = [e for e in log.events if e.get("before_log")]
    assert [e.get("command") for e in before if e["kind"] == "supervisor_command"] == ["load_case", "arm"]
    assert all(e["cycle"] <= log.fields["cycle"][0] for e in before)
    assert not [e for e in log.events if e.get("before_log") is None and e.get("command") == "arm"]  # once
    src = ReplaySource(path)
    ev = {(e["kind"], e.get("phase") or e.get("command")): e["t"] for e in src.events_t if "t" in e}
    assert ev[("supervisor_command", "arm")] <= 0.0 <= ev[("phase", "TARE")] < 0.01
    assert V.fmt_event(next(e for e in src.events_t if e.get("command") == "load_case")).startswith("   -0.0")
