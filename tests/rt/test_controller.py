"""The assembled controller over memory transports (tests/rt/controller_rig.py): arming, the
run-up into the case's initial state, every safety trip within 2 cycles with its named reason
and a safe stop within the acceleration limit, operator commands, the run log."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sim_stand.kinematic_rig import NOMINAL, Rig  # noqa: F401
from drivers.motion_platform import Command, PlatformState
from rt import coupling as CP
from rt import spacecraft as SCM
from rt.config.case import load_case
from rt.controller import Phase
from rt.runlog import read_log
from rt.supervisor import State

DT = 1e-3


@pytest.fixture
def rig(tmp_path):
    r = Rig(tmp_path)
    yield r
    r.close()


def _rates(P):
    v = np.diff(P[:, :3], axis=0) / DT
    a = np.diff(v, axis=0) / DT
    return v, a


def test_arm_moves_slowly_then_runup_reaches_the_case_state_exactly(rig):
    c = rig.ctl
    rig.arm_and_start()
    lim = rig.stand.limits
    P = rig.sent_poses()
    v, a = _rates(P)
    # the arming move stays within half the limits (quintic), all commands within the limits
    assert np.linalg.norm(v, axis=1).max() <= 0.5 * lim.v_max_m_s + 1e-9
    assert np.linalg.norm(a, axis=1).max() <= 0.5 * lim.a_max_m_s2 * 1.001
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
    # at the switch the relative state is the case's initial state, integrated from there
    assert c.t_run == 0.0
    sc = SCM.Spacecraft.from_case(load_case(NOMINAL))
    np.testing.assert_array_equal(c.sc.x, sc.x)
    rig.run(300)
    P = rig.sent_poses()
    v, a = _rates(P)
    assert np.linalg.norm(a, axis=1).max() <= 0.5 * lim.a_max_m_s2 * 1.05
    # free flight (zero measured wrench but the dither): the controller's spacecraft state is the
    # kernel's, stepped 300 times with the same (tiny) wrench history -> compare the relative pose
    # to the kernel stepped with zero wrench within the dither's effect (1e-6 N on 7 t: < 1e-12 m)
    w = np.zeros((2, 6))
    for k in range(300):
        sc.step(k * DT, DT, w)
    np.testing.assert_allclose(c.sc.x, sc.x, atol=1e-10)


def test_command_is_the_prediction_of_the_coupling(rig):
    """The POSE sent in DYNAMICS is exactly rt.coupling's platform pose for the state."""
    c = rig.ctl
    rig.arm_and_start()
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
    rig.run(5)
    expected = c.out[CP.O_PCMD:CP.O_PCMD + 7].copy()
    rig.run(1)  # the device takes the frame at the next period
    np.testing.assert_array_equal(rig.sent_poses()[-1], expected)


def _post_trip_ok(rig, trip_cycle):
    """The commands after a trip decelerate within the limit and end in FREEZE."""
    lim = rig.stand.limits
    cmds = [(k, cmd, v) for k, cmd, v in rig.commands if k >= trip_cycle - 2]
    poses = np.array([v for k, cmd, v in cmds if cmd is Command.POSE])
    if len(poses) >= 3:
        v, a = _rates(poses)
        assert np.linalg.norm(a, axis=1).max() <= lim.a_max_m_s2 * 1.001
    assert any(cmd is Command.FREEZE for _, cmd, _ in cmds), "no FREEZE after the trip"


def _inject_and_run(rig, inject, reason, setup=None, max_cycles=100):
    c = rig.ctl
    rig.arm_and_start()
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
    rig.run(50)
    if setup:
        setup(rig)
    k0 = c.loop.cycles
    inject(rig)
    rig.run_until(lambda k: k.supervisor.state is State.SAFE, max_cycles)
    k_trip = c.loop.cycles
    assert c.supervisor.state is State.SAFE, c.status()
    assert c.supervisor.trip_reason == reason, (c.supervisor.trip_reason, c.trip_text)
    rig.run(600)
    assert c.phase is Phase.FROZEN
    _post_trip_ok(rig, k_trip)
    return k_trip - k0


def test_trip_over_range_force(rig):
    rating = rig.stand.limits.sensor_rating[2] * rig.stand.limits.rating_fraction

    def inject(r):
        r.w_S[2] = 1.01 * rating
    n = _inject_and_run(rig, inject, "FORCE_LIMIT")
    assert n <= 2


def test_trip_stale_sensor(rig):
    stale = rig.stand.limits.stale_cycles

    def inject(r):
        r.sensor_silent = True
    n = _inject_and_run(rig, inject, "SENSOR_STALE")
    # the stale condition exists after `stale` silent cycles; the trip follows within 2
    assert n <= stale + 2


def test_trip_corrupt_burst(rig):
    def inject(r):
        r.corrupt = 2
    n = _inject_and_run(rig, inject, "CRC_BURST")
    assert n <= 2 + 1  # > crc_max (3) errors: the second burst cycle; +1 for the frames' flight


def test_trip_platform_fault(rig):
    def inject(r):
        r.state = PlatformState.FAULT
        r.fault = 6
    n = _inject_and_run(rig, inject, "PLATFORM_FAULT")
    assert n <= 2


def test_trip_platform_estop(rig):
    def inject(r):
        r.state = PlatformState.E_STOPPED
    assert _inject_and_run(rig, inject, "PLATFORM_ESTOP") <= 2


def test_trip_nonfinite_state(rig):
    """NaN cannot arrive on the wire (int counts; STATUS decoding refuses non-finite values),
    so it is injected where it would arise: the integrated state."""
    def inject(r):
        r.ctl.sc.x[0, 8] = math.nan
    assert _inject_and_run(rig, inject, "NONFINITE") <= 2


def test_trip_frozen_sensor(rig):
    n_frozen = rig.stand.limits.sensor_frozen_samples

    def inject(r):
        r.sensor_frozen = True
    n = _inject_and_run(rig, inject, "SENSOR_FROZEN", max_cycles=n_frozen + 10)
    assert n <= n_frozen + 2


def test_trip_platform_link_loss(rig):
    n_stale = rig.stand.limits.platform_stale_cycles

    def inject(r):
        r.platform_silent = True
    assert _inject_and_run(rig, inject, "PLATFORM_STALE", max_cycles=n_stale + 10) <= n_stale + 2


def test_trip_tracking_error(tmp_path):
    """A platform lagging 100 cycles (beyond the 2.5 ms spec) trips during the arming move."""
    rig = Rig(tmp_path, lag_cycles=100)
    try:
        c = rig.ctl
        rig.run(3)
        assert c.command("load_case", case=str(NOMINAL)).ok
        assert c.command("arm").ok
        rig.run_until(lambda k: k.supervisor.safe, 5000)
        assert c.supervisor.trip_reason == "TRACKING_ERROR", c.status()
        rig.run(600)
        assert c.phase is Phase.FROZEN
    finally:
        rig.close()


def test_trip_pose_limit(rig, tmp_path):
    """A case whose run needs the top outside the pose box: the command that would leave the
    box is never sent; the trip happens on the cycle that computes it."""
    import re
    orig = NOMINAL.read_text()
    text = re.sub(r"(?m)^position_m = \[[^,\]]+", "position_m = [-1.00", orig, count=1)
    assert text != orig
    text = text.replace('"../vehicles/', f'"{NOMINAL.parent.parent}/vehicles/')
    case = tmp_path / "far.toml"
    case.write_text(text)
    c = rig.ctl
    rig.run(3)
    assert c.command("load_case", case=str(case)).ok
    assert c.command("arm").ok
    rig.run_until(lambda k: k.supervisor.safe, 5000)
    assert c.supervisor.trip_reason == "POSITION_BOX", c.trip_text
    box_hi = rig.stand.hexapod.box[3:6]
    box_lo = rig.stand.hexapod.box[0:3]
    P = rig.sent_poses()
    assert np.all(P[:, :3] <= box_hi + 1e-12) and np.all(P[:, :3] >= box_lo - 1e-12)


def test_trip_overrun_streak(rig):
    c = rig.ctl
    rig.arm_and_start()
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
    write = c.write

    def slow_write(cycle, t_ns):  # every cycle takes 1.5 periods (on the step clock)
        write(cycle, t_ns)
        rig.clock.advance(int(1.5 * rig.stand.period_ns))
    c.write = slow_write
    c.make_loop(rig.clock)
    rig.loop = c.loop
    n = rig.run_until(lambda k: k.supervisor.safe, 100)
    assert c.supervisor.trip_reason == "OVERRUN_STREAK"
    assert n <= rig.stand.limits.overrun_streak_max + 2


def test_trip_heartbeat_loss(tmp_path):
    """The console holding the lease goes silent: HEARTBEAT_LOST while RUNNING."""
    import time

    from rt.telemetry import CommandClient
    from rt.controller import with_endpoints
    from rt.config.stand import load_stand
    from sim_stand.kinematic_rig import STAND
    stand = load_stand(STAND)
    stand = with_endpoints(stand, telemetry={"pub_endpoint": f"ipc://{tmp_path}/pub",
                                             "cmd_endpoint": f"ipc://{tmp_path}/cmd", "lease_timeout_s": 0.3})
    rig = Rig(tmp_path, telemetry=True, stand=stand)
    try:
        c = rig.ctl
        cli = CommandClient(stand.telemetry["cmd_endpoint"], name="console")
        cli.send("acquire")
        rig.run_until(lambda k: k.telemetry.holder is not None, 2000)
        assert cli.recv(1.0)["ok"]
        c.stop_when = None

        def beat(k):  # the console heartbeats while the stand arms and starts
            if k.loop.cycles % 50 == 0:
                cli.send("heartbeat")
            return k.phase is Phase.READY or k.supervisor.safe
        assert c.command("load_case", case=str(NOMINAL)).ok
        assert c.command("arm").ok
        rig.run_until(beat, 20000)
        assert c.command("start").ok
        rig.run_until(lambda k: beat(k) and False or k.phase is Phase.DYNAMICS, 5000)
        assert c.supervisor.state is State.RUNNING
        time.sleep(0.4)  # the console says nothing for longer than the lease timeout
        k0 = c.loop.cycles
        rig.run_until(lambda k: k.supervisor.safe, 50)
        assert c.supervisor.trip_reason == "HEARTBEAT_LOST"
        assert c.loop.cycles - k0 <= 2
        cli.close()
    finally:
        rig.close()


def test_abort_from_every_phase_lands_safe_and_frozen(tmp_path):
    for phase in (Phase.ENGAGE, Phase.TARE, Phase.MOVE, Phase.READY, Phase.DYNAMICS):
        rig = Rig(tmp_path)
        try:
            c = rig.ctl
            rig.run(3)
            assert c.command("load_case", case=str(NOMINAL)).ok
            assert c.command("arm").ok
            if phase is not Phase.ENGAGE:
                rig.run_until(lambda k: k.phase is phase or k.phase is Phase.READY, 5000)
                if phase is Phase.DYNAMICS:
                    assert c.command("start").ok
                    rig.run_until(lambda k: k.phase is phase, 5000)
            assert c.phase is phase
            r = c.command("abort")
            assert r.ok and c.supervisor.state is State.ABORTED
            rig.run(800)
            assert c.phase in (Phase.FROZEN,), (phase, c.phase)
        finally:
            rig.close()


def test_start_refused_until_ready_and_illegal_commands_say_why(rig):
    c = rig.ctl
    rig.run(3)
    r = c.command("start")
    assert not r.ok and "not allowed in state IDLE" in r.reason
    r = c.command("load_case", case="/nonexistent.toml")
    assert not r.ok and "nonexistent" in r.reason
    assert c.command("load_case", case=str(NOMINAL)).ok
    assert c.command("arm").ok
    r = c.command("start")
    assert not r.ok and "not ready" in r.reason


def test_end_by_time_limit_then_stop_and_log(rig, tmp_path):
    text = NOMINAL.read_text().replace("duration_s = 10.0", "duration_s = 0.3")
    text = text.replace('"../vehicles/', f'"{NOMINAL.parent.parent}/vehicles/')
    case = tmp_path / "short.toml"
    case.write_text(text)
    rig.arm_and_start(case)
    c = rig.ctl
    rig.run_until(lambda k: k.supervisor.state is State.DONE, 2000)
    assert c.finish_reason == "time limit"
    rig.run(500)
    assert c.phase is Phase.FROZEN
    c.close()
    log = read_log(c.log_path)
    t = log.fields["t"]
    dyn = log.fields["phase"] == Phase.DYNAMICS
    assert abs(np.nanmax(t[dyn]) - 0.3) < 1.5e-3
    assert log.header["kind"] == "hil" and log.header["case"].endswith("short.toml")
    kinds = [e["kind"] for e in log.events]
    assert "supervisor_finish" in kinds and "phase" in kinds
