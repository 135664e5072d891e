"""The ways back from the console's keys (issue 38; docs/console.md, docs/controller.md "Ways
back"): every command a trip's text names carries the console key it names, and an operator who
aborted an approach backs the platform off (``b``, retract) and parks it (``k``) from the
console, each after a confirmation, against a controller in lockstep with the emulator's own
process (tests/rt/console/live_rig.py)."""
from __future__ import annotations

import pytest
import asyncio
import re
import time

from rt.console import view as V
from rt.console.app import ConfirmScreen, ConsoleApp
from rt.console.source import LiveSource
from rt.control.mechanism_link import HOW_UNDOCK
from rt.control.phases import HOW

from live_rig import LiveStand, short_case
from live_rig import phase_of as _phase
from live_rig import until as _until


def test_every_way_back_a_trip_names_is_on_the_console_key_it_names():
    texts = {**HOW, "undock": HOW_UNDOCK}
    for command, text in texts.items():
        m = re.search(r"console (\S+?),", text)
        assert m, text
        key = V.KEY_OF.get(command)
        assert key is not None, f"{command}: no console key"
        assert key.key == m.group(1), (command, key.key, text)
        assert f"`dockstand ctl {command.replace('_', '-')}`" in text
    keys = [k.key for k in V.COMMAND_KEYS]
    assert len(keys) == len(set(keys))                      # one command per key
    assert {"f", "b", "k", "u"} <= set(keys)
    for k in V.COMMAND_KEYS:                                # the platform moves or a fault clears: asked first
        if k.command in ("reset_fault", "retract", "park", "undock"):
            assert k.confirm


def test_the_console_names_every_phase_the_controller_has():
    from rt.control.phases import Phase
    assert V.PHASES == tuple(p.name for p in sorted(Phase))




@pytest.mark.slow
def test_abort_then_retract_and_park_from_the_console_keys(tmp_path):
    case = short_case(tmp_path / "case")
    # a brisker retract than the shipped 5 mm/s (the keys and the sequence are what is tested)
    rig = LiveStand(tmp_path / "runs", case, cycle_s=0.00005,
                    limits={"retract_speed_m_s": 0.03, "retract_accel_m_s2": 0.3})
    src = LiveSource(rig.cmd_ep, name="op")
    try:
        app = ConsoleApp(src, refresh_hz=15)

        async def ask(cmd, **kw):
            rid = src.send(cmd, **kw)
            t0 = time.monotonic()
            while time.monotonic() - t0 < 20:
                for r in src.replies_seen:
                    if r.get("id") == rid:
                        return r
                await asyncio.sleep(0.05)
            raise TimeoutError(cmd)

        async def go():
            async with app.run_test(size=(160, 50)) as pilot:
                assert await _until(pilot, lambda: app.sample is not None)
                await pilot.press("c")
                assert await _until(pilot, lambda: src.holds_lease)
                assert (await ask("load_case", case=str(case)))["ok"]
                assert (await ask("arm"))["ok"]
                assert await _until(pilot, lambda: _phase(app) in ("MOVE", "READY"), 60), _phase(app)
                await pilot.press("space")
                assert await _until(pilot, lambda: _phase(app) == "FROZEN", 60), _phase(app)
                # b: asked first; "n" sends nothing
                await pilot.press("b")
                assert isinstance(app.screen, ConfirmScreen)
                await pilot.press("n")
                assert await _until(pilot, lambda: "retract cancelled" in app.message)
                assert not [e for e in rig.ctl.events if e.get("command") == "retract"]
                await pilot.press("b")
                await pilot.press("y")
                assert await _until(pilot, lambda: _phase(app) == "RETRACT", 30), (_phase(app), app.message)
                assert await _until(pilot, lambda: _phase(app) == "FROZEN", 60), (_phase(app), app.message)
                await pilot.press("k")
                await pilot.press("y")
                assert await _until(pilot, lambda: _phase(app) == "IDLE", 60), (_phase(app), app.message)
        asyncio.run(go())
        assert rig.error is None, rig.error
        sent = [e for e in rig.ctl.events if e.get("kind") == "supervisor_command"
                and e.get("command") in ("retract", "park")]
        assert [e["command"] for e in sent] == ["retract", "park"] and all(e["client"] == "op" for e in sent), sent
    finally:
        src.close()
        rig.close()


def test_the_mechanisms_own_link_is_what_the_console_shows():
    link = {"link": "modbus tcp 127.0.0.1:5502 unit 1", "ok": True, "error": None, "capture": True,
            "latches": [True, True, False], "hooks": [], "release_on": True, "fault": 0, "fault_name": None}
    t = V.fmt_mechanism({"platform_inputs": 0}, {"capture_bit": -1, "latch_bits": []}, 2.5, link=link)
    assert "modbus tcp 127.0.0.1:5502" in t and "CAPTURED[/] at t_run 2.500 s" in t
    assert "latches 1● 2● 3○" in t and "release output ON" in t
    silent = V.fmt_mechanism({}, None, None, link={**link, "ok": False, "error": "timeout after 0.05 s"})
    assert "silent" in silent and "timeout after 0.05 s" in silent and "ARM refused" in silent
    fault = V.fmt_mechanism({}, None, None, link={**link, "fault": 1, "fault_name": "latch drive overcurrent"})
    assert "FAULT latch drive overcurrent (code 1)" in fault
    # neither a link nor wired inputs: unknown, and said why
    assert "unknown" in V.fmt_mechanism({"platform_inputs": 0}, {"capture_bit": -1, "latch_bits": []}, None)
    ev = V.fmt_event({"kind": "capture", "t": 1.0, "t_run": 2.5, "source": "mechanism_io"})
    assert "(its control unit) reports soft capture t_run 2.500 s" in ev
