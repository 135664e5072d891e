"""A full disk (issue 38), on a real small filesystem (a tmpfs mounted for the test; skipped
with the reason where mounting is not permitted), the controller on the kinematic rig:

* before ARM: the arm is refused with the free space and what the run needs; the platform is
  never engaged and no log file is left;
* mid-run, ``[runlog] on_failure = "trip"`` (the default): the writer's failure is an event
  and a named trip (RUNLOG_FAILED), the platform stops, the controller lives on, the log reads
  back up to what reached the disk; with space freed, reset and arm record again;
* mid-run, ``"continue"``: an event, and the run goes on unrecorded.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from rt.config.stand import load_stand
from rt.control.controller import Phase
from rt.record.runlog import read_log
from sim_stand.kinematic_rig import NOMINAL, STAND, Rig

from rig_steps import arm_refused_cleanly, into_dynamics


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of 200 MB at tmp_path/disk (unmounted after)."""
    d = tmp_path / "disk"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200m", "tmpfs", str(d)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): {r.stderr.strip()}")
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)


def fill(d: Path, leave_bytes: int) -> Path:
    """Fill the filesystem at ``d`` to ``leave_bytes`` free with one file."""
    st = os.statvfs(d)
    n = st.f_bavail * st.f_frsize - leave_bytes
    f = d / "filler"
    with open(f, "wb") as fh:
        chunk = b"\0" * (1 << 20)
        while n > 0:
            k = min(n, len(chunk))
            try:
                fh.write(chunk[:k])
            except OSError:
                break
            n -= k
    return f


def test_a_full_disk_before_arm_refuses_it_and_nothing_moves(small_disk):
    filler = fill(small_disk, 4 << 20)
    rig = Rig(small_disk / "runs")
    c = rig.ctl
    try:
        rig.run(3)
        assert c.command("load_case", case=str(NOMINAL)).ok
        arm_refused_cleanly(rig, small_disk / "runs", c.command("arm"), "MB free in", "the run log needs up to")
        h = c.status()["recorder"]
        assert h["free_mb"] < h["run_needs_mb"], h
        filler.unlink()
        assert c.command("arm").ok                   # space freed: it arms
    finally:
        rig.close()


@pytest.mark.parametrize("policy", ["trip", "continue"])
def test_a_disk_that_fills_mid_run_is_named_and_survived(small_disk, policy):
    stand = replace(load_stand(STAND), runlog_on_failure=policy)
    rig = Rig(small_disk / "runs", stand=stand)
    c = rig.ctl
    try:
        into_dynamics(rig, 300)
        path = c.log_path
        filler = fill(small_disk, 64 << 10)
        rig.run_until(lambda k: k.recorder.last_failure is not None, 3000)
        rig.run(50)
        ev = [e for e in c.recorder.events if e["kind"] == "runlog_failed"]
        assert ev and "No space left on device" in ev[0]["reason"] and ev[0]["policy"] == policy, ev
        assert c.status()["recorder"]["state"] == "failed"
        if policy == "trip":
            assert c.supervisor.state.name == "SAFE" and c.supervisor.trip_reason == "RUNLOG_FAILED"
            assert "free disk space" in c.trip_text and "Next:" in c.trip_text, c.trip_text
            rig.run_until(lambda k: k.phase is Phase.FROZEN, 3000)
            assert c.phase is Phase.FROZEN
        else:
            assert c.supervisor.state.name == "RUNNING" and c.phase is Phase.DYNAMICS and c.trip_text is None
        assert c.loop.cycle_errors == 0
        log = read_log(path)                          # what reached the disk reads back
        assert log.n_records > 300 and log.truncated
        filler.unlink()
        if policy == "trip":
            assert c.command("reset").ok
            assert c.command("arm").ok
            rig.run(5)
            assert c.status()["recorder"]["state"] == "recording" and c.log_path != path
    finally:
        rig.close()
