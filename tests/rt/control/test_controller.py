"""The assembled controller over memory transports (tests/rt/controller_rig.py): arming, the
run-up into the case's initial state, every safety trip within 2 cycles with its named reason
and a safe stop within the acceleration limit, operator commands, the run log."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sim_stand.kinematic_rig import NOMINAL, REPO, Rig  # noqa: F401
from drivers.motion_platform import Command, PlatformState
from rt.control import kernels as CK
from rt.dynamics import coupling as CP
from rt.dynamics import spacecraft as SCM
from rt.config.case import load_case
from rt.control.controller import Phase
from rt.record.runlog import read_log
from rt.control.supervisor import State

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


def _qmul(a, b):
    w1, x1, y1, z1 = a.T
    w2, x2, y2, z2 = b.T
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)


def _angular_rates(P):
    """Angular velocity (rotation vector of q_k+1 (x) q_k^* over DT, B components) and its
    backward difference (angular acceleration) of a sequence of poses [p, q_BT]."""
    q = P[:, 3:7]
    qc = q[:-1] * np.array([1.0, -1.0, -1.0, -1.0])
    dq = _qmul(q[1:], qc)
    dq[dq[:, 0] < 0] *= -1.0
    s = np.linalg.norm(dq[:, 1:], axis=1)
    ang = 2.0 * np.arctan2(s, dq[:, 0])
    scale = np.where(s > 1e-15, ang / np.where(s > 1e-15, s, 1.0), 2.0)
    w = dq[:, 1:] * scale[:, None] / DT
    return w, np.diff(w, axis=0) / DT


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
    """The POSE sent in DYNAMICS is exactly rt.dynamics.coupling's platform pose for the state."""
    c = rig.ctl
    rig.arm_and_start()
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
    rig.run(5)
    expected = c.out[CP.O_PCMD:CP.O_PCMD + 7].copy()
    rig.run(1)  # the device takes the frame at the next period
    np.testing.assert_array_equal(rig.sent_poses()[-1], expected)


def _post_trip_ok(rig, trip_cycle, first=0):
    """The commands after a trip decelerate within the limits (linear and angular: second
    differences of the commanded position and rotation) and end in FREEZE. ``first``: index
    into ``rig.commands`` where the loop whose cycles count ``trip_cycle`` began."""
    lim = rig.stand.limits
    sel = [i for i in range(first, len(rig.commands)) if rig.commands[i][0] >= trip_cycle - 2]
    cmds = [rig.commands[i] for i in sel]
    pi = [i for i in sel if rig.commands[i][1] is Command.POSE]
    poses = np.array([rig.commands[i][2] for i in pi])
    if len(poses) >= 3:
        # on the controller's clock: an overrunning loop's cycles are more than a period apart
        # (the device takes a frame at the next cycle, which the controller cannot foresee)
        h = np.diff(np.array([rig.command_t[i] for i in pi]))
        assert np.all(h > 0)
        v = np.diff(poses[:, :3], axis=0) / h[:, None]
        hm = 0.5 * (h[1:] + h[:-1])        # between the interval midpoints (uneven spacing)
        a = np.diff(v, axis=0) / hm[:, None]
        assert np.linalg.norm(a, axis=1).max() <= lim.a_max_m_s2 * 1.001
        w, _ = _angular_rates(poses)
        w = w * DT / h[:, None]
        alpha = np.diff(w, axis=0) / hm[:, None]
        assert np.linalg.norm(alpha, axis=1).max() <= lim.alpha_max_rad_s2 * 1.001
    assert any(cmd is Command.FREEZE for _, cmd, _ in cmds), "no FREEZE after the trip"
    frozen = [k for k, cmd, _ in cmds if cmd is Command.FREEZE][0]
    assert not any(cmd is Command.POSE for k, cmd, _ in cmds if k > frozen), "POSE after FREEZE"


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
    n = _inject_and_run(rig, inject, "SENSOR_LINK_LOST")
    # the stale condition exists after `stale` silent cycles; the trip follows within 2
    assert n <= stale + 2
    # the trip names the link's endpoint and when its last frame came
    text = rig.ctl.trip_text
    assert rig.ctl.links.s_tr.describe() in text and "last frame at t = " in text, text


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


def test_trip_model_failure_on_a_berthing_run(rig):
    """A berthing flight whose arm can no longer be evaluated (its mass matrix made indefinite in
    place: the end effector's mass negative) trips MODEL_FAILURE, named, within 2 cycles, and the
    stand stops safely; the held state is the last good one, not a partial step."""
    from rt.dynamics import berthing_flight as BF
    rig.arm_and_start(case=REPO / "config" / "cases" / "berthing.toml")
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 4000)
    rig.run(50)
    c = rig.ctl
    a = c.sc.par[0]
    k0 = c.loop.cycles
    a[int(a[1 + BF.B_EEM])] = -1e9
    rig.run_until(lambda k: k.supervisor.state is State.SAFE, 100)
    assert c.supervisor.state is State.SAFE, c.status()
    assert c.supervisor.trip_reason == "MODEL_FAILURE", (c.supervisor.trip_reason, c.trip_text)
    assert "mass matrix is not positive definite" in c.trip_text
    assert c.loop.cycles - k0 <= 2
    assert np.all(np.isfinite(c.sc.x))
    k_trip = c.loop.cycles
    rig.run(600)
    assert c.phase is Phase.FROZEN
    _post_trip_ok(rig, k_trip)


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
    assert _inject_and_run(rig, inject, "PLATFORM_LINK_LOST", max_cycles=n_stale + 10) <= n_stale + 2
    text = rig.ctl.trip_text
    assert rig.ctl.links.p_tr.describe() in text and "last frame at t = " in text, text


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


def _case_with_position(tmp_path, position, name="far.toml"):
    """nominal.toml with [initial] position_m replaced (the text must change) and the vehicle
    paths made absolute."""
    import re
    text, n = re.subn(r"(?m)^position_m\s*=\s*\[[^\]]*\]", f"position_m = [{', '.join(map(repr, position))}]",
                      NOMINAL.read_text())
    assert n == 1, "nominal.toml has no (single) position_m line"
    text = text.replace('"../vehicles/', f'"{NOMINAL.parent.parent}/vehicles/')
    case = tmp_path / name
    case.write_text(text)
    assert load_case(case).initial.position_m.tolist() == list(position)
    return case


def test_trip_pose_limit(rig, tmp_path, monkeypatch):
    """A case whose run needs the top outside the pose box (A 1.2 m short of P: the top
    below the box's floor): the arming move heads there; the command that would leave the box
    is never sent, the trip comes within 2 cycles of the first command computed outside it,
    and the safe stop after it respects the limits."""
    from rt.control import controller as CTRL
    box_lo, box_hi = rig.stand.hexapod.box[0:3], rig.stand.hexapod.box[3:6]
    case = _case_with_position(tmp_path, [-1.20, 0.02, -0.01])
    c = rig.ctl
    computed = []                           # (cycle, pose) of every arming-move command computed
    move_eval = CTRL.CK.move_eval

    def spy(mv, t, pose, scr):
        done = move_eval(mv, t, pose, scr)
        computed.append((c.loop.cycles, pose.copy()))
        return done
    monkeypatch.setattr(CTRL.CK, "move_eval", spy)
    rig.run(3)
    assert c.command("load_case", case=str(case)).ok
    assert c.command("arm").ok
    rig.run_until(lambda k: k.supervisor.safe, 5000)
    assert c.supervisor.trip_reason == "POSITION_BOX", c.trip_text
    k_trip = c.loop.cycles - 1              # the cycle whose update tripped (run_until stops after it)
    outside = [k for k, p in computed if np.any(p[:3] > box_hi) or np.any(p[:3] < box_lo)]
    assert outside, "no command outside the box was computed"
    assert 0 <= k_trip - outside[0] <= 2, (k_trip, outside[0])
    P = rig.sent_poses()
    assert np.all(P[:, :3] <= box_hi + 1e-12) and np.all(P[:, :3] >= box_lo - 1e-12)
    rig.run(600)                            # the safe stop goes on along the path (it may overshoot
    assert c.phase is Phase.FROZEN          # the box by v^2 / 2 a_max), within the limits
    _post_trip_ok(rig, k_trip)


def test_trip_overrun_streak(rig):
    c = rig.ctl
    rig.arm_and_start()
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
    write = c.write

    def slow_write(cycle, t_ns):  # every cycle takes 1.5 periods (on the step clock)
        write(cycle, t_ns)
        rig.clock.advance(int(1.5 * rig.stand.period_ns))
    c.write = slow_write
    first = len(rig.commands)               # the new loop counts its cycles from 0
    c.make_loop(rig.clock)
    rig.loop = c.loop
    n = rig.run_until(lambda k: k.supervisor.safe, 100)
    assert c.supervisor.trip_reason == "OVERRUN_STREAK"
    assert n <= rig.stand.limits.overrun_streak_max + 2
    k_trip = c.loop.cycles
    rig.run(600)
    assert c.phase is Phase.FROZEN
    _post_trip_ok(rig, k_trip, first)


def test_trip_heartbeat_loss(tmp_path):
    """The console holding the lease goes silent: HEARTBEAT_LOST while RUNNING."""
    import time

    from rt.record.telemetry import CommandClient
    from rt.control.controller import with_endpoints
    from rt.config.stand import load_stand
    from sim_stand.kinematic_rig import STAND
    stand = load_stand(STAND)
    stand = with_endpoints(stand, telemetry={"pub_endpoint": f"ipc://{tmp_path}/pub",
                                             "cmd_endpoint": f"ipc://{tmp_path}/cmd", "lease_timeout_s": 1.0})
    # 1 s: the lockstep rig runs arming and run-up in wall time, and a loaded CI machine can
    # stall a process for a few hundred ms between two heartbeats
    rig = Rig(tmp_path, telemetry=True, stand=stand)
    try:
        c = rig.ctl
        c.warm_up()
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
        time.sleep(1.1)  # the console says nothing for longer than the lease timeout
        k0 = c.loop.cycles
        rig.run_until(lambda k: k.supervisor.safe, 50)
        assert c.supervisor.trip_reason == "HEARTBEAT_LOST"
        assert c.loop.cycles - k0 <= 2
        k_trip = c.loop.cycles
        rig.run(600)
        assert c.phase is Phase.FROZEN
        _post_trip_ok(rig, k_trip)
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
    for bad in (5, ["a"], None, ""):       # a script's wrong type: refused with the reason, not a TypeError
        r = c.command("load_case", case=bad)
        assert not r.ok and "case must be the path of a case file" in r.reason and "TypeError" not in r.reason
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


def _telemetry_rig(tmp_path, lease_timeout_s=0.3, **kw):
    from rt.config.stand import load_stand
    from rt.control.controller import with_endpoints
    from sim_stand.kinematic_rig import STAND
    stand = with_endpoints(load_stand(STAND), telemetry={"pub_endpoint": f"ipc://{tmp_path}/pub",
                                                         "cmd_endpoint": f"ipc://{tmp_path}/cmd",
                                                         "lease_timeout_s": lease_timeout_s, **kw})
    return Rig(tmp_path, telemetry=True, stand=stand), stand


def _request(rig, cli, cmd, max_cycles=2000, timeout_s=20.0, **args):
    """Send a request and run the loop until its reply arrives: the command thread answers it,
    the worker prepares it (a case file read off the loop) and the loop executes it at its next
    drain -- on a loaded machine that takes wall time, not cycles, so the lockstep loop waits a
    little each cycle (up to ``timeout_s``)."""
    import time
    rid = cli.send(cmd, **args)
    got = {}
    n = [0]
    end = time.monotonic() + timeout_s

    def answered(k):
        if cli.sock.poll(0):
            r = cli.recv(0.1)
            if r.get("id") == rid:
                got["r"] = r
        n[0] += 1
        if "r" not in got and n[0] > 2000 and n[0] % 50 == 0:     # past 2000 cycles: wait for the threads
            time.sleep(0.001)
        return "r" in got or time.monotonic() > end
    rig.ctl.run_until(answered, None if max_cycles is None else max(max_cycles, 100_000))
    assert "r" in got, f"no reply to {cmd}"
    return got["r"]


def test_lease_expired_while_idle_does_not_trip_a_later_arm(tmp_path):
    """Console A's lease expires while the stand is IDLE; console B takes the lease later and
    arms: the old expiry must not trip HEARTBEAT_LOST (it belongs to a lease that is gone)."""
    import time

    from rt.record.telemetry import CommandClient
    rig, stand = _telemetry_rig(tmp_path, lease_timeout_s=1.0)   # arming in lockstep takes wall time
    a = b = None
    try:
        c = rig.ctl
        rig.run(3)
        a = CommandClient(stand.telemetry["cmd_endpoint"], name="console-A")
        assert _request(rig, a, "acquire")["ok"]
        time.sleep(1.1)                     # A falls silent beyond the lease timeout, stand IDLE
        rig.run(5)
        assert c.telemetry.lease_lost and c.telemetry.holder is None
        assert any(e["kind"] == "lease_lost" for e in c.events)
        b = CommandClient(stand.telemetry["cmd_endpoint"], name="console-B")
        assert _request(rig, b, "acquire", takeover=True)["ok"]   # the lapsed lease: taken over with consent
        rig.run(2)                          # the lease's notice reaches the loop at its next drain
        assert not c._heartbeat_lost        # a console holds a fresh lease
        assert _request(rig, b, "load_case", case=str(NOMINAL))["ok"]
        assert _request(rig, b, "arm")["ok"]

        def beat(k):                        # B heartbeats while the stand arms
            if k.loop.cycles % 20 == 0:
                b.send("heartbeat")
            return k.phase is Phase.READY or k.supervisor.safe
        rig.run_until(beat, 20000)
        assert c.supervisor.trip_reason is None, (c.supervisor.trip_reason, c.trip_text)
        assert c.phase is Phase.READY and c.supervisor.state is State.ARMED
        # a lease lost while ARMED still trips
        time.sleep(1.1)
        k0 = c.loop.cycles
        rig.run_until(lambda k: k.supervisor.safe, 50)
        assert c.supervisor.trip_reason == "HEARTBEAT_LOST" and c.loop.cycles - k0 <= 2
    finally:
        for cli in (a, b):
            if cli is not None:
                cli.close()
        rig.close()


def test_heartbeat_flag_cleared_on_reset_and_arm(rig):
    """The HEARTBEAT_LOST input is cleared by reset and at the start of arm (a local arm
    after an expiry of a lease nobody renewed)."""
    c = rig.ctl
    rig.run(3)
    c._lease_lost("console-A")              # as telemetry reports an expiry
    assert c._heartbeat_lost
    assert c.command("load_case", case=str(NOMINAL)).ok
    assert c.command("reset").ok            # CONFIGURED -> IDLE
    assert not c._heartbeat_lost
    c._lease_lost("console-A")
    assert c.command("load_case", case=str(NOMINAL)).ok
    assert c.command("arm").ok
    assert not c._heartbeat_lost


def test_finish_by_capture_settled(tmp_path):
    """A latching damper between the units (the rig's contact model): after the first contact
    the relative motion dies out with the units together; the run finishes "capture settled"
    exactly when the speed, rate and contact conditions have held for capture_settle_s, as
    recomputed from the run log."""
    rig = Rig(tmp_path, contact=(-0.52, 20000.0))
    try:
        c = rig.ctl
        rig.arm_and_start()
        rig.run_until(lambda k: k.supervisor.state is not State.RUNNING, 12000)
        assert c.supervisor.state is State.DONE and c.finish_reason == "capture settled", c.status()
        assert c.t_run < load_case(NOMINAL).duration_s - 1.0
        rig.run(500)
        assert c.phase is Phase.FROZEN
        c.close()
        lim = rig.stand.limits
        log = read_log(c.log_path)
        f = log.fields
        k_end = int(np.flatnonzero(f["state"] == State.DONE)[0])
        run = np.flatnonzero((f["phase"] == Phase.DYNAMICS) | (np.arange(log.n_records) == k_end))
        force = np.linalg.norm(f["w_P"][run, :3], axis=1)
        speed = np.linalg.norm(f["rel_twist"][run, :3], axis=1)
        rate = np.linalg.norm(f["rel_twist"][run, 3:], axis=1)
        d = np.linalg.norm(f["rel_pose"][run, :3], axis=1)
        k_c = int(np.flatnonzero(force > lim.contact_force_n)[0])
        contact = (force > lim.contact_force_n) | (d <= d[k_c])
        ok = (speed < lim.capture_speed_max_m_s) & (rate < lim.capture_rate_max_rad_s) & contact
        ok[:k_c] = False
        n = int(round(load_case(NOMINAL).end.capture_settle_s / DT))
        assert run[-1] == k_end and ok[-n:].all() and not ok[-n - 1]
        # the force is not held (free-floating bodies at relative rest exchange no net force):
        # the "units no farther apart than at first contact" alternative carried the criterion
        assert (force[-n:] <= lim.contact_force_n).any()
    finally:
        rig.close()


def test_finish_by_separation(rig, tmp_path):
    """Units moving apart finish "separated" beyond |r0| + end.separation_m."""
    import re
    text = _case_with_position(tmp_path, [-0.70, 0.02, -0.01], "apart.toml").read_text()
    text, n1 = re.subn(r"(?m)^closing_velocity_mps\s*=.*$", "closing_velocity_mps = -0.10", text)
    text, n2 = re.subn(r"(?m)^separation_m\s*=.*$", "separation_m = 0.05", text)
    assert n1 == n2 == 1
    case = tmp_path / "apart.toml"
    case.write_text(text)
    c = rig.ctl
    rig.arm_and_start(case)
    rig.run_until(lambda k: k.supervisor.state is not State.RUNNING, 3000)
    assert c.supervisor.state is State.DONE and c.finish_reason == "separated", c.status()
    assert abs(c.t_run - 0.5) < 0.02


def test_gc_paused_from_arm_to_the_end_of_the_run(rig):
    """The collection falls on the arm (the platform only engaging), never on the start of the
    run; gc stays frozen and disabled through READY and RUNNING, as usual again once it ends."""
    import gc
    c = rig.ctl
    assert c.stand.realtime.gc_freeze
    rig.run(3)
    assert c.command("load_case", case=str(NOMINAL)).ok
    assert gc.isenabled() and gc.get_freeze_count() == 0      # CONFIGURED: gc as usual
    assert c.command("arm").ok
    assert not gc.isenabled() and gc.get_freeze_count() > 0   # ARMED: collected, frozen, disabled
    rig.run_until(lambda k: k.phase is Phase.READY, 20000)
    assert not gc.isenabled()
    assert c.command("start").ok
    rig.run(50)
    assert c.supervisor.state is State.RUNNING
    assert not gc.isenabled() and gc.get_freeze_count() > 0   # RUNNING: still frozen, no second collection
    assert c.command("abort").ok
    assert gc.isenabled() and gc.get_freeze_count() == 0      # re-enabled as the run ends
    rig.run(600)
    assert gc.isenabled()
    assert [r.name for r in c.gc_reports] == ["gc_freeze", "gc_freeze"] and all(r.ok for r in c.gc_reports)


def test_run_log_closed_off_the_loop_thread_once_frozen(rig, tmp_path, monkeypatch):
    """After DONE the stop ends FROZEN: the log gets that cycle's record, then the writer thread
    (not the loop) writes the footer, fsyncs and closes; the loop keeps cycling and the file
    gets no more rows."""
    import os
    import re
    import threading
    fsync_threads = []
    real_fsync = os.fsync

    def fsync(fd):
        fsync_threads.append(threading.current_thread().name)
        return real_fsync(fd)
    monkeypatch.setattr(os, "fsync", fsync)
    text, n = re.subn(r"(?m)^duration_s\s*=.*$", "duration_s = 0.3", NOMINAL.read_text())
    assert n == 1
    case = tmp_path / "short.toml"
    case.write_text(text.replace('"../vehicles/', f'"{NOMINAL.parent.parent}/vehicles/'))
    c = rig.ctl
    rig.arm_and_start(case)
    rig.run_until(lambda k: k.phase is Phase.FROZEN, 3000)
    assert c.supervisor.state is State.DONE and c.phase is Phase.FROZEN
    k_frozen = c.loop.cycles - 1
    assert c.writer is None                      # close requested in the FROZEN cycle's write
    rig.run(300)
    assert c.wait_log_closed()
    assert fsync_threads == ["runlog-writer"]
    log = read_log(c.log_path)
    assert not log.truncated and log.footer["records"] == log.n_records
    assert log.fields["cycle"][-1] == k_frozen and log.fields["phase"][-1] == Phase.FROZEN
    assert (log.fields["phase"][:-1] != Phase.FROZEN).all()


def test_lengths_mode_sends_the_inverse_kinematics_of_the_command(tmp_path):
    from dataclasses import replace

    from rt.stand import hexapod as HX
    from rt.config.stand import load_stand
    from sim_stand.kinematic_rig import STAND
    stand = replace(load_stand(STAND), command_mode="lengths")
    rig = Rig(tmp_path, stand=stand)
    try:
        c = rig.ctl
        rig.arm_and_start()
        rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
        rig.run(300)
        assert c.supervisor.state is State.RUNNING and c.supervisor.trip_reason is None
        # write sends the DYNAMICS kernel's frame through a view of its length fixed by the type
        assert len(c._set_point_frame) == int(c.ins[CK.IN_TXLEN]) == 22 + 8 * 6
        c.close()
        log = read_log(c.log_path)
        row = {int(k): i for i, k in enumerate(log.fields["cycle"])}
        sent = [(k, v) for k, cmd, v in rig.commands if cmd is Command.LENGTHS]
        assert not [1 for _, cmd, _ in rig.commands if cmd is Command.POSE]
        g = stand.hexapod
        L, J = np.zeros(6), np.zeros((6, 6))
        phases = set()
        for k, lengths in sent:
            i = row[k - 1]                       # the frame taken at cycle k was sent by cycle k-1
            phases.add(int(log.fields["phase"][i]))
            pose = np.ascontiguousarray(log.fields["cmd_pose"][i])
            HX.inverse(g.base, g.top, pose, L, J)
            np.testing.assert_allclose(lengths, L, rtol=0, atol=1e-12)
            np.testing.assert_array_equal(lengths, log.fields["cmd_lengths"][i])
        assert {Phase.MOVE, Phase.READY, Phase.RUNUP, Phase.DYNAMICS} <= phases
        assert len(sent) > 300
    finally:
        rig.close()


WARM_UP_SCRIPT = r"""
import sys
import numpy as np
from numba.core.dispatcher import Dispatcher
from sim_stand.kinematic_rig import NOMINAL, Rig
from rt.control.controller import Phase
from rt.control import kernels as CK
from rt.dynamics import coupling as CP
from rt.stand import safety as SF, sensing as SN, hexapod as HX

def dispatchers():
    out = {}
    for name, mod in list(sys.modules.items()):
        if name == "rt" or name.startswith("rt."):
            for obj in list(vars(mod).values()):
                if isinstance(obj, Dispatcher):
                    out[obj.py_func.__module__ + "." + obj.py_func.__qualname__] = obj
    return out

rig = Rig(sys.argv[1], contact=(-0.52, 20000.0))
c = rig.ctl
c.warm_up()
used = [CK.hil_cycle_packed, CK.set_link_inputs, CK.ingest, CK.emit, CK.supervise, CK.move_setup, CK.move_eval, CK.runup_eval, CK.command_rates, CK.quintic,
        CP.relative_rates, CP.predict_pose, CP.platform_pose, CP.coupling_update, SF.safe_stop_init,
        SF.safe_stop_advance, SN.sense, SN.filter_settle, HX.inverse, HX.forward, HX.check_pose]
missing = [d.py_func.__qualname__ for d in used if not d.signatures]
before = {k: len(d.signatures) for k, d in dispatchers().items()}
# a whole life: arm, run-up, dynamics with contact, a trip and its safe stop, reset, re-arm, abort
rig.arm_and_start()
rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
rig.run(2500)
rig.w_S[2] = 1e5
rig.run_until(lambda k: k.supervisor.safe, 100)
rig.run(800)
assert c.phase is Phase.FROZEN, c.phase
rig.w_S[2] = 0.0
rig.run(300)          # the load gone from the filtered wrench (ARM refuses a loaded passive unit)
assert c.command("reset").ok and c.command("arm").ok
rig.run_until(lambda k: k.phase is Phase.MOVE, 20000)
rig.run(50)
assert c.command("abort").ok
rig.run(800)
assert c.phase is Phase.FROZEN, c.phase
after = {k: len(d.signatures) for k, d in dispatchers().items()}
new = sorted(k for k in after if after[k] > before.get(k, 0))
rig.close()
print("MISSING", missing)
print("NEW", new)
sys.exit(1 if missing or new else 0)
"""


def test_warm_up_compiles_every_kernel_the_loop_uses(tmp_path):
    """In a fresh process (nothing compiled yet but what the numba cache holds): after
    warm_up() every kernel the controller calls has a compiled signature, and a whole run
    (arming, run-up, dynamics with contact, a trip and its safe stop, re-arm, abort) adds no
    signature to any njit dispatcher of rt (nothing compiles inside the loop)."""
    import os
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", WARM_UP_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                       cwd=str(NOMINAL.parents[2]), env=os.environ.copy(), timeout=900)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    assert "MISSING []" in r.stdout and "NEW []" in r.stdout


def test_arm_runs_no_git_subprocess(rig, monkeypatch):
    """git describe is run once at start-up (controller construction), not at arm."""
    import rt.record.runlog as RL

    def no_subprocess(*a, **k):
        raise AssertionError("a subprocess at arm time")
    monkeypatch.setattr(RL.subprocess, "run", no_subprocess)
    c = rig.ctl
    rig.run(3)
    assert c.command("load_case", case=str(NOMINAL)).ok and c.command("arm").ok
    rig.run(5)
    c.close()
    assert read_log(c.log_path).header["git"] == c.git == RL.git_describe()


def test_load_case_refused_while_the_platform_stops_then_the_run_log_is_whole(rig, tmp_path):
    """After a finished run (DONE) the platform still stops, logged: a case loaded then would
    re-lay the record under the open run log, so it is refused with the reason until the
    platform is frozen; the log has one row per cycle."""
    text = NOMINAL.read_text().replace("duration_s = 10.0", "duration_s = 0.3")
    text = text.replace('"../vehicles/', f'"{NOMINAL.parent.parent}/vehicles/')
    case = tmp_path / "short.toml"
    case.write_text(text)
    c = rig.ctl
    rig.arm_and_start(case)
    rig.run_until(lambda k: k.supervisor.state is State.DONE, 2000)
    assert c.phase is Phase.STOP and c.writer is not None
    r = c.command("load_case", case=str(NOMINAL))
    assert not r.ok and "still stopping" in r.reason
    rig.run_until(lambda k: k.phase is Phase.FROZEN, 2000)
    rig.run(3)
    assert c.command("load_case", case=str(NOMINAL)).ok
    c.close()
    log = read_log(c.log_path)
    assert np.all(np.diff(log.fields["cycle"]) == 1) and log.footer is not None and log.footer["dropped"] == 0


def test_commands_before_the_loop_runs_are_answered_not_kept(tmp_path):
    """The command socket is up while the controller still compiles its kernels (minutes on a
    first start) and its loop has not drained once: an abort is answered at once (nothing is
    armed or moving), a command is withdrawn after a while with the reason -- never carried
    out minutes later (found by a review: an abort sent then took effect when the loop started)."""
    import time

    from rt.record.telemetry import CommandClient
    rig, stand = _telemetry_rig(tmp_path, lease_timeout_s=30.0)
    cli = None
    try:
        c = rig.ctl
        c.port.loop_seen = False                 # as during the warm-up: the loop has not drained yet
        cli = CommandClient(stand.telemetry["cmd_endpoint"], name="early", timeout_s=10.0)
        r = cli.request("abort")
        assert r["ok"] and "has not started" in r["reason"] and c.supervisor.state is State.IDLE, r
        assert cli.request("acquire")["ok"]
        t0 = time.monotonic()
        r = cli.request("load_case", case=str(NOMINAL))
        assert not r["ok"] and "not running yet" in r["reason"] and "was not carried out" in r["reason"], r
        assert time.monotonic() - t0 < 8.0 and c.supervisor.state is State.IDLE and not c.port.ready
        rig.run(3)                               # the loop runs: commands are carried out again
        assert _request(rig, cli, "load_case", case=str(NOMINAL))["ok"] and c.supervisor.state is State.CONFIGURED
    finally:
        if cli is not None:
            cli.close()
        rig.close()
