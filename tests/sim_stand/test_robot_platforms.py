"""An industrial robot as the stand's platform, end to end (issue 41): ``dockstand demo`` with the
shipped robot stands -- the emulated KUKA (RSI) and ABB (EGM) robots in their own process,
speaking the robots' bytes, as the clock master, in lockstep with the controller -- runs the
nominal docking to DONE with a capture; a robot that stops sending trips ROBOT_CYCLE_MISSED
within the stand's configured robot cycles, by name."""
from __future__ import annotations

import numpy as np
import pytest

from rt.config.stand import load_stand
from rt.record.runlog import read_log
from sim_stand.cli import REPO, default_emulator, run_demo

PROTOCOLS = ("kuka_rsi", "abb_egm")


def _stand(protocol):
    return REPO / "config" / "stands" / f"{protocol}.toml"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_robot_stand_gets_its_robots_emulator(protocol):
    assert default_emulator(load_stand(_stand(protocol))) == REPO / "config" / "emulator" / f"{protocol}.toml"
    assert default_emulator(load_stand(REPO / "config" / "stand.toml")).name == "default.toml"


@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_nominal_docking_on_a_robot_ends_done_and_captured(protocol, tmp_path):
    r = run_demo(None, _stand(protocol), log_dir=tmp_path)
    assert r["final_state"] == "DONE" and r["trip"] is None, r["trip"]
    assert r["captured"] is True and r["time_to_capture_s"] is not None
    assert r["peak_contact_force_n"] > 1000.0                 # the latches' strike was felt through the robot
    assert ["soft_capture"] == [e for _, e in r["emulator_events"] if e == "soft_capture"]
    assert r["overruns"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_robot_that_stops_sending_trips_robot_cycle_missed_in_time(protocol, tmp_path):
    stand = load_stand(_stand(protocol))
    n = stand.platform_options["cycle_controller_cycles"]
    trip = stand.platform_options["missed_cycles_trip"]
    r = run_demo(None, _stand(protocol), faults=["robot_silent@2.5"], log_dir=tmp_path)
    assert r["trip_reason"] == "ROBOT_CYCLE_MISSED" and r["final_state"] == "SAFE"
    assert f"{trip} robot cycles in a row without an exchange" in r["trip"]
    assert r["captured"] is False
    # the robot's STATUS carries the last command it answered: its last change is the robot's last
    # state; the trip follows within the configured robot cycles (+ half a cycle of jitter allowed)
    log = read_log(r["log"], ["cycle", "trip", "platform_last_seq"])
    f = log.fields
    i = int(np.flatnonzero(f["trip"] != 0)[0])
    last = int(np.flatnonzero(np.diff(f["platform_last_seq"][:i]) != 0)[-1]) + 1
    quiet = f["cycle"][i] - f["cycle"][last]
    assert (trip - 1) * n < quiet <= trip * n + n // 2, quiet
