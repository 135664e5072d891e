"""The console (Textual Pilot) against a controller in lockstep with the emulator
(tests/rt/console/live_rig.py): it follows a docking IDLE -> CONFIGURED -> ARMED -> RUNNING
(first contact, the three capture latches, capture: the emulated mechanism's signals on the
platform's digital inputs) -> DONE (capture settled: the capture signal held for the case's
end.capture_settle_s; docs/console.md), its panels show the run log's values for the cycle they show;
arm/start/abort from its keys reach the controller; a console without the lease and a
``--watch`` console get their leased commands refused (the latter never sends them), while
abort needs no lease and drives the stand to its safe state."""
from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from rt.console import view as V
from rt.console.app import ConsoleApp, ConfirmScreen, PickerScreen
from rt.console.source import LiveSource, WatchOnly
from rt.record.runlog import read_log

from live_rig import LiveStand, short_case
from live_rig import phase_of as _phase
from live_rig import state_of as _state
from live_rig import until as _until

pytestmark = pytest.mark.slow





class RecordingApp(ConsoleApp):
    """The console, noting every frame it rendered: (cycle, state, the panels' text)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.frames = []

    def render_sample(self, s):
        super().render_sample(s)
        self.frames.append((int(s["cycle"]), V.name_of(V.STATES, s["state"]), self.shown["wrench"],
                            self.shown["relative"], self.shown["platform"], self.capture_t_run,
                            V.platform_status_age(self.source.status or {})))


def test_console_follows_a_docking_and_shows_the_logged_values(tmp_path):
    case = short_case(tmp_path / "case")
    rig = LiveStand(tmp_path / "runs", case, cycle_s=0.0001)
    src = LiveSource(rig.cmd_ep, name="operator")
    app = RecordingApp(src, cases_dir=case.parent, refresh_hz=15)

    async def go():
        async with app.run_test(size=(200, 60)) as pilot:
            assert await _until(pilot, lambda: app.sample is not None)
            assert "UNTARED" in app.shown["wrench_title"]           # nothing tared since the controller started
            await pilot.press("c")
            assert await _until(pilot, lambda: src.holds_lease), app.message
            await pilot.press("l")
            assert isinstance(app.screen, PickerScreen)
            inp = app.screen.query_one("#path")
            inp.focus()
            inp.value = str(case)
            await pilot.press("enter")
            assert await _until(pilot, lambda: _state(app) == "CONFIGURED"), app.message
            await pilot.press("a")
            assert await _until(pilot, lambda: _phase(app) == "READY", 90), (app.message, _phase(app))
            await pilot.press("s")
            assert isinstance(app.screen, ConfirmScreen)       # start asks first
            await pilot.press("y")
            assert await _until(pilot, lambda: _state(app) in ("DONE", "SAFE", "ABORTED"), 120), app.message
            assert await _until(pilot, lambda: _phase(app) == "FROZEN", 60)
            await pilot.pause(0.6)
            assert app.shown["wrench_title"] == "contact wrench · on P, tared, filtered"
            # the run's fidelity verdict, judged once its log is closed, comes with a status poll
            assert await _until(pilot, lambda: app.fidelity is not None, 30), app.message
            assert app.fidelity["run_id"] == rig.ctl.log_path.stem and "fidelity " in app.message
    try:
        asyncio.run(go())
        assert rig.error is None, rig.error
    finally:
        src.close()
        rig.close()
    seen_states = [f[1] for k, f in enumerate(app.frames) if k == 0 or app.frames[k - 1][1] != f[1]]
    assert seen_states == ["IDLE", "CONFIGURED", "ARMED", "RUNNING", "DONE"], seen_states
    kinds = [e["kind"] for e in app.events]
    seqs = [e["eseq"] for e in app.events if "eseq" in e]
    own = [e["kind"] for e in app.events if "eseq" not in e]      # the console's own lines: the run's verdict
    assert own == ["fidelity_verdict"], own
    assert len(seqs) == len(set(seqs)) and len(seqs) == len(kinds) - 1   # the controller's events once each (numbered)
    assert "first_contact" in kinds
    assert kinds.count("latch_closed") == 3 and kinds.count("capture") == 1, kinds
    assert kinds.index("first_contact") < kinds.index("capture") < kinds.index("supervisor_finish")
    cap = next(e for e in app.events if e["kind"] == "capture")
    assert cap["t_run"] == rig.ctl.capture_t_run > 0.0
    fin = [e for e in app.events if e["kind"] == "supervisor_finish"]
    assert fin and rig.ctl.finish_reason == fin[-1]["reason"], fin
    log = read_log(rig.ctl.log_path)
    row_of = {int(c): k for k, c in enumerate(log.fields["cycle"])}
    running = [s for s in app.frames if s[1] == "RUNNING" and s[0] in row_of]
    assert len(running) > 20, len(running)
    forceful = 0
    limits = src.status.get("limits")
    captured_frames = timed_frames = 0
    for cycle, st, wrench, rel, plat, t_cap, age in running:
        k = row_of[cycle]
        assert wrench == V.fmt_wrench(log.fields["w_P"][k]), cycle
        assert rel == (V.fmt_relative(log.fields["rel_pose"][k], log.fields["rel_twist"][k]) + "\n"
                       + V.fmt_mechanism({"platform_inputs": log.fields["platform_inputs"][k]}, limits, t_cap,
                                         age)), cycle
        if int(log.fields["platform_inputs"][k]) & 1:       # the capture bit (config/stand.toml [platform.inputs])
            captured_frames += 1
            assert "CAPTURED[/]" in rel and "1● 2● 3●" in rel, rel
            # the capture's time comes with the controller's next status answer (the console
            # polls it): the first frames after the capture may not have it yet, none after
            if t_cap is not None:
                assert t_cap == cap["t_run"] and f"at t_run {cap['t_run']:.3f} s" in rel, rel
                timed_frames += 1
            else:
                assert timed_frames == 0, rel
        assert plat == V.fmt_platform(log.fields["cmd_pose"][k], log.fields["meas_pose"][k],
                                      log.fields["cmd_lengths"][k], limits), cycle
        forceful += np.linalg.norm(log.fields["w_P"][k][:3]) > 50.0
    assert forceful >= 3        # some of the compared frames are in contact
    assert captured_frames >= 3 and timed_frames >= 1   # and some after the capture, with its time


def test_lease_watch_only_and_abort_from_a_console(tmp_path):
    case = short_case(tmp_path / "case")
    rig = LiveStand(tmp_path / "runs", case, cycle_s=0.0002)
    holder = LiveSource(rig.cmd_ep, name="holder")
    other = LiveSource(rig.cmd_ep, name="second")
    watcher = LiveSource(rig.cmd_ep, name="watcher", watch=True)
    try:
        def ask(src, cmd, **kw):
            rid = src.send(cmd, **kw)
            t0 = time.monotonic()
            while time.monotonic() - t0 < 10:
                _, _, replies = src.poll()
                for r in replies:
                    if r["id"] == rid:
                        return r
                time.sleep(0.01)
            raise TimeoutError(cmd)
        assert ask(holder, "acquire")["ok"]
        assert ask(holder, "load_case", case=str(case))["ok"]
        # --watch: a leased command is never sent (the controller never sees it)
        n0 = rig.ctl.telemetry.requests
        for cmd in ("acquire", "arm", "start", "load_case"):
            with pytest.raises(WatchOnly):
                watcher.send(cmd)
        time.sleep(0.2)
        watched = ConsoleApp(watcher, refresh_hz=15)
        other_app = ConsoleApp(other, refresh_hz=15)

        async def keep_holder():         # the holding console stays alive (its status polls renew the lease)
            while True:
                holder.poll()
                await asyncio.sleep(0.1)

        async def go():
            keeper = asyncio.create_task(keep_holder())
            async with watched.run_test(size=(160, 50)) as pilot:
                await pilot.press("a")
                await pilot.pause(0.2)
                assert "watches only" in watched.message
            assert not [r for r in watched.replies if r.get("cmd") in ("arm", "acquire")]
            r = holder.send("arm")
            while not any(x.get("id") == r for x in holder.replies_seen):
                await asyncio.sleep(0.05)
            reply = [x for x in holder.replies_seen if x.get("id") == r][0]
            assert reply["ok"], reply
            async with other_app.run_test(size=(160, 50)) as pilot:
                assert await _until(pilot, lambda: other_app.sample is not None)
                assert await _until(pilot, lambda: "watch-only until you take control" in other_app.shown.get("header", ""))
                await pilot.press("s")
                await pilot.press("y")
                assert await _until(pilot, lambda: "start refused" in other_app.message), other_app.message
                assert "needs control of the stand, and holder has it" in other_app.message
                await pilot.press("c")        # the holder is alive: no takeover
                assert await _until(pilot, lambda: "acquire refused" in other_app.message)
                assert "held by holder" in other_app.message and not other.holds_lease
                assert await _until(pilot, lambda: _phase(other_app) in ("MOVE", "READY"), 60), _phase(other_app)
                await pilot.press("space")    # abort: one key, no confirmation, no lease
                assert await _until(pilot, lambda: _state(other_app) == "ABORTED", 20), other_app.message
                assert await _until(pilot, lambda: _phase(other_app) == "FROZEN", 60), _phase(other_app)
            keeper.cancel()
        asyncio.run(go())
        assert rig.ctl.telemetry.requests >= n0
        assert rig.error is None, rig.error
        assert rig.ctl.supervisor.state.name == "ABORTED"
        refused = [e for e in rig.ctl.events if e.get("kind") == "supervisor_command" and e.get("command") == "abort"]
        assert refused and refused[-1]["client"] == "second"
    finally:
        for s in (holder, other, watcher):
            s.close()
        rig.close()
