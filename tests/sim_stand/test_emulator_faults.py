"""Fault injection from the emulator side (issue 7): the emulator runs as its own process
(`dockstand emulate --lockstep --world free --fault NAME@T`), the controller in this process;
each fault must bring the controller to SAFE with the right named reason, and everything it
commanded must stay within the platform's limits (read back from its run log)."""
from __future__ import annotations

import numpy as np
import pytest

from rt.config.stand import load_stand
from rt.control.controller import Phase
from rt.record.runlog import read_log
from sim_stand.cli import DEFAULT_STAND, run_demo

STAND = load_stand(DEFAULT_STAND)

CASES = [("sensor_dropout@1.3", "SENSOR_LINK_LOST"),
         ("garbage@1.3", "CRC_BURST"),
         ("sensor_frozen@1.3", "SENSOR_FROZEN"),
         ("sensor_saturated@1.3", "SENSOR_STATUS"),
         ("platform_fault@1.3", "PLATFORM_FAULT"),
         ("platform_lag@0.55", "TRACKING_ERROR"),   # during the arming move
         ("link_loss@1.3", "SENSOR_LINK_LOST")]         # the sensor goes stale first (5 cycles)


def _check_commands(log_path):
    log = read_log(log_path)
    f = log.fields
    engaged = (f["phase"] >= Phase.TARE) & (f["phase"] <= Phase.STOP)
    P = f["cmd_pose"][engaged]
    box = STAND.hexapod.box
    assert np.all(P[:, :3] >= box[:3] - 1e-9) and np.all(P[:, :3] <= box[3:6] + 1e-9)
    lim = STAND.limits
    v = np.linalg.norm(f["cmd_twist"][engaged][:, :3], axis=1)
    a = np.linalg.norm(f["cmd_acc"][engaged][:, :3], axis=1)
    assert v.max() <= lim.v_max_m_s + 1e-9
    assert a.max() <= lim.a_max_m_s2 * lim.accel_margin
    return log


@pytest.mark.slow
@pytest.mark.parametrize("fault,reason", CASES, ids=[c[0].split("@")[0] for c in CASES])
def test_emulator_fault_reaches_safe_state(fault, reason, tmp_path):
    out = run_demo(world="free", faults=[fault], log_dir=tmp_path)
    assert out["final_state"] == "SAFE", out
    assert out["trip_reason"] == reason, out
    log = _check_commands(out["log"])
    trips = [e for e in log.events if e["kind"] == "supervisor_trip"]
    assert trips and trips[0]["reason"] == reason
    if reason == "SENSOR_STATUS":           # the status word and what it means
        assert out["trip"].startswith("the force/torque sensor reports status 0x00000001 (saturated"), out["trip"]
    if reason == "PLATFORM_FAULT":          # the device's own code, named in the trip
        assert out["trip"].startswith("platform reports FAULT (fault code ") and "(not in" not in out["trip"], out["trip"]
