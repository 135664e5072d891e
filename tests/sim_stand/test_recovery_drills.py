"""Every trip the emulated stand produces mid-run, and the way back to a completed docking that
its text tells the operator, on one controller and one emulator never restarted (issue 38;
sim_stand/recovery_drill.py)."""
from __future__ import annotations

import pytest

from sim_stand.recovery_drill import DRILLS, run_drills


@pytest.mark.slow
def test_every_reachable_trip_recovers_to_a_completed_docking(tmp_path):
    r = run_drills(log_dir=tmp_path / "runs")
    assert r["recovery_paths_failed"] == {}, r["recovery_paths_failed"]
    assert r["recovery_paths_completed"] == r["recovery_paths_reachable"] == len(DRILLS)
    by = {d["reason"]: d for d in r["recovery_drills"]}
    assert any(s.startswith("reset_fault") for s in by["PLATFORM_FAULT"]["steps"]), by["PLATFORM_FAULT"]
    assert any(s.startswith("retract") for s in by["FORCE_LIMIT"]["steps"]), by["FORCE_LIMIT"]
    assert any("take the control lease" in s for s in by["HEARTBEAT_LOST"]["steps"])
    for d in r["recovery_drills"]:
        assert d["tripped"] == d["reason"] and d["end"]["state"] == "DONE" and d["end"]["finish"] == "separated", d
