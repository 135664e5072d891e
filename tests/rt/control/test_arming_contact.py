"""Arming a latched mechanism. After a captured docking the units stay latched; arming again
moves the platform to the run-up's start pose, which would pull the latched mechanism apart
until a force/torque trip (9.7 kN, 1.3 kN·m on the emulator before the guards). Two guards:

* the mechanism's capture signal (the STATUS digital inputs, ``[platform.inputs]``;
  rt/control/mechanism_inputs.py): ``arm`` is refused while the mechanism reports capture;
* ARMING_CONTACT (rt/control/controller.py ``_arming_contact``), for a stand that does not wire
  the signals: a trip on the contact levels early in the move, saying why.

Controller in lockstep with the emulator process (tests/rt/console/live_rig.py)."""
from __future__ import annotations

import pytest
import sys
from pathlib import Path

import numpy as np

from dataclasses import replace

from rt.config.stand import MechanismInputs
from rt.record.runlog import read_log
from rt.record.telemetry import CommandClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "console"))
from live_rig import LiveStand, short_case  # noqa: E402
from live_rig import wait_for as _wait  # noqa: E402



@pytest.mark.slow
def test_rearming_a_latched_mechanism_trips_early_and_says_why(tmp_path):
    case = short_case(tmp_path / "case")
    rig = LiveStand(tmp_path / "runs", case)
    cl = CommandClient(rig.cmd_ep, name="operator", timeout_s=5.0)
    c = rig.ctl
    try:
        def req(cmd, **a):
            r = cl.request(cmd, **a)
            assert r["ok"], (cmd, r)
            return r

        req("acquire")
        req("load_case", case=str(case))
        req("arm")
        assert _wait(lambda: c.phase.name == "READY"), (c.phase, c.trip_text)   # free units: no trip
        req("start")
        assert _wait(lambda: c.supervisor.state.name == "DONE", 300), (c.supervisor.state, c.trip_text)
        assert _wait(lambda: c.phase.name == "FROZEN")
        first_log = c.log_path

        # the capture came in on the platform's inputs, one or two cycles after the emulated
        # mechanism's last latch engaged (its STATUS answers the next frame)
        summ = c.summary()
        kinds = [e["kind"] for e in c.recorder.events]
        assert kinds.count("latch_closed") == 3 and kinds.count("capture") == 1, kinds
        assert kinds.index("first_contact") < kinds.index("capture")
        cap = next(e for e in c.recorder.events if e["kind"] == "capture")
        assert cap["phase"] == "DYNAMICS" and cap["t_run"] == summ["capture_signal_s"] > summ["first_contact_s"]
        assert c.mechanism()["capture"] is True and c.mechanism()["latches"] == [True, True, True]

        # an abort after the run keeps its outcome
        r = cl.request("abort")
        assert r["ok"] and r["state"] == "DONE", r
        req("acquire")
        req("reset")
        r = cl.request("arm")                     # the mechanism says it is latched: refused, nothing moves
        assert not r["ok"] and "reports capture" in r["reason"] and "release the mechanism" in r["reason"], r
        assert c.phase.name == "FROZEN"

        # a stand that does not wire the mechanism's signals: the contact guard trips instead
        c.stand = replace(c.stand, mechanism_inputs=MechanismInputs())
        req("arm")
        assert _wait(lambda: c.supervisor.state.name == "SAFE", 120), (c.supervisor.state, c.phase)
        assert c.supervisor.trip_reason == "ARMING_CONTACT", c.trip_text
        assert "still latched" in c.trip_text and "arming move" in c.trip_text, c.trip_text
        assert _wait(lambda: c.phase.name == "FROZEN")
    finally:
        cl.close()
        rig.close()
    assert rig.error is None, rig.error

    # the captured run's log holds the docking; the re-arm's log holds a small load only
    assert c.log_path != first_log
    log = read_log(c.log_path)
    f = np.linalg.norm(log.fields["w_P"][:, :3], axis=1)
    ph = log.fields["phase"]
    from rt.control.controller import Phase
    tared = ph >= Phase.MOVE                      # after the tare
    peak = float(f[tared].max())
    trip_level = 0.9 * 2500.0                     # the stand's lowest force trip level (config/stand.toml)
    assert 50.0 < peak < 0.2 * trip_level, peak   # stopped within a few hundred newtons, not at the trip
