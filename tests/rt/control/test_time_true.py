"""Time-true commands (issue 21 item 1): the arming move, the run-up and the platform command
are functions of the loop's time, so a cycle that comes late (deadlines skipped) moves on along
the same path instead of jumping, and the command's acceleration is judged over the time that
really passed. A loop that cannot hold its rate trips OVERLOAD with its figures, before any
consequence (a link gone quiet, a command rate) is named. Lockstep rig, stalls scripted on the
step clock: deterministic."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rt.analysis.recompute import recompute
from rt.analysis.run import load_run
from rt.control import kernels as CK
from rt.control.controller import Phase
from rt.control.supervisor import State
from rt.record.runlog import read_log
from sim_stand.kinematic_rig import NOMINAL, Rig


def _rig(tmp_path, **limits) -> Rig:
    r = Rig(tmp_path)
    if limits:
        stand = dataclasses.replace(r.stand, limits=dataclasses.replace(r.stand.limits, **limits))
        r.close()
        r = Rig(tmp_path, stand=stand)
    return r


def _stall_once(rig: Rig, seconds: float) -> None:
    """The next cycle's write takes ``seconds`` (on the step clock): the loop skips the slots."""
    c = rig.ctl
    write = c.write
    once = [True]

    def slow(cycle, t_ns):
        write(cycle, t_ns)
        if once[0]:
            once[0] = False
            rig.clock.advance(int(seconds * 1e9))
    c.write = slow


def _log(rig: Rig):
    rig.ctl.close()
    return read_log(rig.ctl.log_path)


@pytest.mark.parametrize("stall_s", [0.005, 0.031, 0.048])
def test_a_stall_during_the_arming_move_moves_on_along_the_path(tmp_path, stall_s):
    """Stalls within the default miss budget (50 per second): no trip, the move goes on at
    its true time. (A longer stall is an OVERLOAD; a platform asked to catch up with a long
    stall's worth of travel would also show it as a tracking error.)"""
    rig = _rig(tmp_path)
    c = rig.ctl
    rig.run(3)
    assert c.command("load_case", case=str(NOMINAL)).ok and c.command("arm").ok
    rig.run_until(lambda k: k.phase is Phase.MOVE, 20000)
    rig.run(150)
    _stall_once(rig, stall_s)
    rig.run_until(lambda k: k.phase is Phase.READY or k.supervisor.safe, 20000)
    assert c.phase is Phase.READY and c.supervisor.state is State.ARMED, c.trip_text
    assert c.loop.missed == round(stall_s * 1000)
    f = _log(rig).fields
    move = f["phase"] == Phase.MOVE
    lim = rig.stand.limits
    # the acceleration of the quintic move (<= half the limit) is what the check saw, stall or not
    a = np.linalg.norm(f["cmd_acc"][move][:, :3], axis=1)
    assert a.max() <= 0.5 * lim.a_max_m_s2 * 1.02, a.max()
    # each step of the command is the move's speed over the time that really passed (no jump)
    P = f["cmd_pose"][move][:, :3]
    h = (1.0 + np.diff(f["missed"][move])) * rig.stand.period_ns * 1e-9
    step_speed = np.linalg.norm(np.diff(P, axis=0), axis=1) / h
    assert step_speed.max() <= 0.5 * lim.v_max_m_s * 1.001
    assert np.diff(f["missed"][move]).max() == round(stall_s * 1000)


def test_a_stall_at_the_start_overshoots_the_runup_onto_the_same_path(tmp_path):
    """A stall at START longer than the run-up (within the miss budget): the run-up's
    constant-velocity extension at the true time, the dynamics from the case's state carried
    free over the overshoot; no trip; and `dockstand recompute` still reproduces every DYNAMICS
    cycle bit for bit."""
    rig = _rig(tmp_path)
    c = rig.ctl
    rig.arm_and_start()
    T = -c.t_run
    stall = 0.049
    assert 0.0 < T < stall - 0.001
    _stall_once(rig, stall)
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS and k.t_run > 0.3 or k.supervisor.safe, 2000)
    assert c.supervisor.state is State.RUNNING, c.trip_text
    over = [e for e in c.events if e["kind"] == "runup_overshoot"]
    assert len(over) == 1 and over[0]["t_run"] > stall - T - 1e-6, (over, T)
    log = _log(rig)
    f = log.fields
    run = (f["phase"] == Phase.RUNUP) | (f["phase"] == Phase.DYNAMICS)
    v = np.linalg.norm(f["cmd_twist"][run][:, :3], axis=1)
    a = np.linalg.norm(f["cmd_acc"][run][:, :3], axis=1)
    lim = rig.stand.limits
    assert v.max() < 0.5 * lim.v_max_m_s and a.max() <= 0.5 * lim.a_max_m_s2 * 1.05, (v.max(), a.max())
    res = recompute(load_run(c.log_path))
    assert res.reproduced, res.first_diff


def test_sustained_misses_trip_overload_with_the_figures_not_a_consequence(tmp_path):
    """Every 10th cycle overruns by 12 periods (120 deadlines/s against a budget of 50 per
    second, never 5 overruns in a row): OVERLOAD, naming the budget and the loop's figures."""
    rig = Rig(tmp_path)
    c = rig.ctl
    rig.arm_and_start()
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
    write = c.write

    def sometimes_slow(cycle, t_ns):
        write(cycle, t_ns)
        if cycle % 10 == 0:
            rig.clock.advance(12 * rig.stand.period_ns)
    c.write = sometimes_slow
    c.make_loop(rig.clock)
    rig.loop = c.loop
    n = rig.run_until(lambda k: k.supervisor.safe, 2000)
    assert c.supervisor.trip_reason == "OVERLOAD", c.trip_text
    assert "budget 50 per 1 s" in c.trip_text and "missed in total" in c.trip_text, c.trip_text
    # the bucket drains 50/s and fills 120/s: over budget after about 50 / (120 - 50) s
    assert 40 <= n <= 120, n
    c.write = write
    rig.run(600)
    assert c.phase is Phase.FROZEN


def test_a_link_gone_quiet_while_the_loop_misses_deadlines_is_an_overload(tmp_path):
    """The sensor stops answering right after the loop skipped 10 deadlines (under the budget):
    the loop's own misses are named, the quiet link as their consequence."""
    rig = Rig(tmp_path)
    c = rig.ctl
    rig.arm_and_start()
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
    rig.run(20)
    _stall_once(rig, 0.010)
    rig.run(1)
    rig.sensor_silent = True
    rig.run_until(lambda k: k.supervisor.safe, 100)
    assert c.supervisor.trip_reason == "OVERLOAD", c.trip_text
    assert "meanwhile the sensor link went quiet" in c.trip_text and c.links.s_tr.describe() in c.trip_text


def test_command_rates_divide_by_the_distance_of_the_velocity_midpoints():
    """A path p(t) = t^2 (acceleration 2) sampled at uneven steps: the backward-difference
    acceleration is exactly 2 whatever the steps; on even steps it is the plain one."""
    pose = np.zeros(7)
    pose[3] = 1.0
    prev_pose, prev_vel = pose.copy(), np.zeros(7)
    vel, acc, scr = np.zeros(6), np.zeros(6), np.zeros(16)
    t = 0.0
    CK.command_rates(pose, prev_pose, prev_vel, vel, acc, 1e-3, True, scr)
    for h in (1e-3, 1e-3, 0.031, 1e-3, 0.004, 1e-3):
        t += h
        pose[0] = t * t
        CK.command_rates(pose, prev_pose, prev_vel, vel, acc, h, False, scr)
        assert vel[0] == pytest.approx((t * t - (t - h) ** 2) / h, rel=1e-12)
        if t > 1.5e-3:
            assert acc[0] == pytest.approx(2.0, rel=1e-9), (t, h, acc[0])
