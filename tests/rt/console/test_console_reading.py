"""The console as an operator reads it (Pilot): every panel titled; a replay's footer offers the
transport only (a replay sends nothing); the wrench plots start after the tare (the unit's weight
does not hold their range); after a trip the header keeps the run's time of the trip, the message
line says TRIPPED and the way back, the platform's fault code has its name; refusals speak of
keys, not of the protocol."""
from __future__ import annotations

import numpy as np
import pytest
from textual.widgets._footer import FooterKey

from drivers.motion_platform import PlatformState
from rt.console import view as V
from rt.console.source import ReplaySource, load_log
from rt.record.runlog import read_log
from sim_stand.kinematic_rig import Rig

from pilot_steps import play_to_end, replay_in_console
from rig_steps import record_until_frozen

WEIGHT_N = -1500.0        # the passive unit's weight on the sensor before the tare


@pytest.fixture(scope="module")
def tripped(tmp_path_factory):
    """A kinematic-rig run with the unit's weight on the sensor (taken out by the arm's tare),
    a contact, and the platform reporting FAULT / WATCHDOG in the dynamics: PLATFORM_FAULT."""
    rig = Rig(tmp_path_factory.mktemp("tripped"), contact=(-0.2, 2000.0))
    rig.w_S[2] = WEIGHT_N

    def platform_fault(rig):
        rig.state, rig.fault = PlatformState.FAULT, 1
    path, summary = record_until_frozen(rig, 1200, platform_fault)
    return path, summary.get("trip_reason")


@pytest.mark.slow
def test_replay_titles_footer_plots_and_the_trip(tripped):
    path, trip = tripped
    assert trip == "PLATFORM_FAULT"
    log = read_log(path)
    src = ReplaySource(path)

    async def steps(app, pilot):
        # every panel has a title
        for pid in ("wrench", "plots", "relative", "platform", "margins", "links", "timing", "events"):
            assert str(app.w[pid].border_title or "").strip(), pid
        # the footer of a replay: its transport and quit, no command key
        for _ in range(100):            # the footer composes its keys after the first frames
            keys = {k.description for k in app.query(FooterKey)}
            if keys:
                break
            await pilot.pause(0.05)
        assert {"play/pause", "+10 s", "quit"} <= keys
        assert not keys & {k.label for k in V.COMMAND_KEYS}, keys
        assert "sends no command" in app.message
        await pilot.press("p")
        await pilot.press("a")          # a command key in a replay: said, and nothing sent
        await pilot.pause(0.1)
        assert "arm: a replay sends no command" in app.message
        # the plots start after the tare: past the MOVE, no plotted value carries the weight (paused,
        # seeking by 1 s)
        while V.name_of(V.PHASES, app.sample["phase"]) in ("ENGAGE", "TARE", "IDLE"):
            await pilot.press("right")
            await pilot.pause(0.05)
        await pilot.pause(0.2)          # (paused: the panels hold one sample)
        fz = app.w["spark-Fz"].data
        assert fz and min(fz) > 0.5 * WEIGHT_N, min(fz)
        assert "-1.5k" not in app.shown["spark-label-Fz"]
        await pilot.press("p")
        await play_to_end(app, pilot)
        # after the trip: its time in the header, the message line, the fault's name
        assert V.name_of(V.STATES, app.sample["state"]) == "SAFE"
        header = app.shown["header"]
        assert "t_run     —" in header and "tripped: PLATFORM_FAULT at t_run" in header, header
        assert "TRIPPED: PLATFORM_FAULT" in app.message and ("reset (r)" in app.message
                                                              or "Next: " in app.message), app.message

    app = replay_in_console(src, steps, settle_s=0.3)
    # the trip's run time is the run clock at the trip's cycle (from the run_start event's two
    # clocks, the controller's: the replay's cycle-based event times drift from it by a cycle)
    t_trip = float(app.run_end.rsplit("t_run ", 1)[1].split()[0])
    ev = next(e for e in log.events if e.get("kind") == "supervisor_trip")
    k = int(np.searchsorted(log.fields["cycle"], ev["cycle"]))
    t_at = log.fields["t"][k - 1]            # the trip's cycle is the first without a run time: a period on
    period = 1.0 / float(log.header["rate_hz"])
    assert np.isfinite(t_at) and abs(t_trip - (t_at + period)) < 1e-6, (t_trip, t_at)
    assert "WATCHDOG (1): no command or heartbeat" in V.fmt_links(
        {**src.sample_at(src.n - 1), "platform_state": 3, "platform_fault": 1}, {"replay": True})


def test_refusals_read_in_keys_not_protocol():
    t = V.operator_text("arm", "arm needs the control lease (free; send acquire first)")
    assert t == "arm needs control of the stand: take it first (c)" and "acquire" not in t
    t = V.operator_text("start", "start needs the control lease (held by alice@stand-pc)")
    assert "alice@stand-pc has it" in t and "lease" not in t
    t = V.operator_text("arm", "arm is not allowed in state SAFE (only in CONFIGURED): reset first")
    assert t == "cannot arm while SAFE (only while CONFIGURED): reset first (r)"
    t = V.operator_text("arm", "arm is not allowed in state IDLE (only in CONFIGURED): load a case first")
    assert t.endswith("load a case first (l)")
    assert V.operator_text("tare", "the mechanism reports capture") == "the mechanism reports capture"
    assert V.fault_name(0) == "none" and V.fault_name(99).startswith("code 99")
    # a health field of the status, when the controller sends one
    assert V.fmt_health({}) == []
    # the controller's status as it sends it (rt.control.operator_api.recorder_health / health)
    ok = V.fmt_health({"recorder": {"state": "recording", "records": 1200, "dropped": 0, "free_mb": 41000.0,
                                    "run_needs_mb": 210.0, "on_failure": "trip"},
                       "health": {"preflight_failure": None, "arm_refusal": None, "cycle_failures": 0,
                                  "failsafe": False}})
    assert ok == ["recorder recording · 1200 records · 41.0 GB free (the run needs 0.2 GB)", "loop     ok"]
    full = V.fmt_health({"recorder": {"state": "failed", "failure": "OSError: [Errno 28] No space left on device",
                                      "free_mb": 0.0, "on_failure": "trip"}})
    assert full[0].startswith("recorder [bold red]FAILED[/] OSError: [Errno 28] No space left on device") and \
        "the stand trips (RUNLOG_FAILED)" in full[0]
    assert "the run goes on UNRECORDED" in V.fmt_health({"recorder": {"state": "failed", "failure": "x",
                                                                      "on_failure": "continue"}})[0]
    low = V.fmt_health({"recorder": {"state": "idle", "free_mb": 50.0, "run_needs_mb": 210.0}})
    assert "too little space" in low[0] and "ARM is refused" in low[0]
    bad = V.fmt_health({"health": {"preflight_failure": "p99 wake-up 900 us", "allow_failed_preflight": False,
                                   "arm_refusal": None, "cycle_failures": 2, "failsafe": True}})
    assert "FAIL-SAFE HOLD" in bad[0] and "2 cycle failure(s)" in bad[0] and "pre-flight failed: p99" in bad[0]


def test_a_long_replay_loads_with_progress(tripped):
    path, _ = tripped
    seen = []
    log = load_log(path, progress=lambda done, total: seen.append((done, total)), chunk=1000)
    ref = read_log(path)
    assert seen[-1] == (ref.n_records, ref.n_records) and len(seen) == -(-ref.n_records // 1000)
    for k, v in ref.fields.items():
        assert np.array_equal(log.fields[k], v, equal_nan=True), k
    assert log.events == ref.events and log.header == ref.header


def test_the_replay_clock_starts_at_the_first_frame_not_at_loading(tripped):
    """However long loading and the app's start take, the replay starts at the log's first record."""
    path, _ = tripped
    now = [0.0]
    src = ReplaySource(path, clock=lambda: now[0])
    now[0] += 30.0                            # a long load / a slow start
    src.poll()
    assert src.index == 0
    now[0] += 0.5
    src.poll()
    assert 0.45 <= src.t[src.index] - src.t[0] <= 0.5
