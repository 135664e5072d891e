"""A cycle that raises never ends the loop (issue 38): an exception in the DYNAMICS kernel's
call mid-docking trips CYCLE_FAILURE — the safe stop decelerates the platform within its
limits and freezes it, the run log closes with the cycle_failure event — and the loop goes on;
a failure that repeats every cycle (the links' read) puts the controller in the fail-safe hold
(FREEZE once, a HEARTBEAT every cycle, requests still served), which ``reset`` leaves; and
after both, the stand docks again. The controller on the kinematic rig."""
from __future__ import annotations

import numpy as np

from drivers.motion_platform import Command, PlatformState
from rt.control import kernels as CK
from rt.control.controller import Phase
from rt.record.runlog import read_log
from sim_stand.kinematic_rig import Rig

from rig_steps import into_dynamics


def test_a_raising_cycle_stops_the_platform_and_the_loop_goes_on(tmp_path, monkeypatch):
    rig = Rig(tmp_path / "logs")
    c = rig.ctl
    try:
        into_dynamics(rig, 200)
        real = CK.hil_cycle_packed
        calls = {"n": 0}

        def once(*a):
            calls["n"] += 1
            if calls["n"] == 1:
                raise RecursionError("maximum recursion depth exceeded (injected)")
            return real(*a)
        monkeypatch.setattr(CK, "hil_cycle_packed", once)
        n_before = len(rig.commands)
        rig.run(1)
        assert c.loop.cycle_errors == 1 and c.cycle_failures == 1
        assert c.supervisor.state.name == "SAFE" and c.supervisor.trip_reason == "CYCLE_FAILURE"
        assert "RecursionError" in c.trip_text and "Next:" in c.trip_text, c.trip_text
        rig.run_until(lambda k: k.phase is Phase.FROZEN, 5000)
        rig.run(2)                               # the FREEZE frame reaches the device
        assert c.phase is Phase.FROZEN and rig.state is PlatformState.FROZEN
        # the stop was a deceleration along the path: the set-points after the failure move less
        # and less, and the command's acceleration stayed within the stand's limit
        poses = np.array([v for _, cmd, v in rig.commands[n_before:] if cmd is Command.POSE])
        steps = np.linalg.norm(np.diff(poses[:, :3], axis=0), axis=1)
        assert len(steps) > 5 and steps[-1] < steps[0]
        acc = np.abs(np.diff(steps)) / 1e-6
        assert acc.max() <= c.stand.limits.a_max_m_s2 * 1.01
        log_path = c.log_path
        rig.run(200)
        assert c.wait_log_closed()
        log = read_log(log_path)
        fails = [e for e in log.events if e["kind"] == "cycle_failure"]
        assert fails and "RecursionError" in fails[0]["error"] and fails[0]["phase"] == "DYNAMICS"
        assert not log.truncated

        # a failure every cycle: the fail-safe hold after three
        monkeypatch.setattr(c.links, "read", lambda raw: (_ for _ in ()).throw(OSError("device gone (injected)")))
        r = c.command("reset")
        assert r.ok
        rig.run(10)
        assert c.failsafe is not None and "3 times in a row" in c.failsafe, c.failsafe
        held = rig.commands[-5:]
        assert all(cmd is Command.HEARTBEAT for _, cmd, _ in held[1:]), held
        assert c.supervisor.state.name == "SAFE"
        assert c.status()["health"]["failsafe"] == c.failsafe   # the operator sees why
        monkeypatch.undo()
        assert c.command("reset").ok
        rig.run(10)
        assert c.failsafe is None and c.phase in (Phase.FROZEN, Phase.IDLE)

        # and the stand docks again
        rig.arm_and_start()
        rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 20000)
        assert c.phase is Phase.DYNAMICS and c.trip_text is None
    finally:
        rig.close()
