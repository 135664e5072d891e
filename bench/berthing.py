"""Berthing figures (issue 25): one evaluation of the five-body dynamics of [Zhu, Wang & Zheng] (the
system mass matrix, the bias forces and the solve) with 2 modes per bending plane; the controller's
berthing step per cycle; the emulated stand in berthing mode."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
from numba import njit

from rt.dynamics.berthing_arm import arm_eval

ROOT = Path(__file__).resolve().parent.parent


@njit(cache=True)
def _loop(ints, bm, bI, em, ec, eI, sh, la, lb, q, u, Q, f4, ud, Mt, mom, J4, pose4, wk, n):
    s = 0.0
    for _ in range(n):
        arm_eval(ints, bm, bI, em, ec, eI, sh, la, lb, q, u, Q, f4, ud, Mt, mom, J4, pose4, wk)
        s += ud[0]
    return s


def run(quick: bool = False) -> dict:
    from rt.config.arm import load_arm
    from rt.dynamics.berthing_arm import ArmModel

    arm = ArmModel(load_arm(ROOT / "config/arms/berthing_arm.toml"))
    q, u = arm.home()
    u[3:6] = [0.01, -0.02, 0.03]
    u[6:] = 0.01
    Q = np.zeros(arm.n)
    f4 = np.zeros(9)
    f4[0:3] = [40.0, -10.0, 5.0]        # the snare's force on the end effector, so its term is timed too
    args = (arm.ints, arm.base_m, arm.base_I, arm.ee_m, arm.ee_c, arm.ee_I, arm.shoulder, arm.la, arm.lb, q, u, Q, f4,
            arm.udot, arm.Mt, arm.mom, arm.J4, arm.pose4, arm.wk)
    reps, batches = (2000, 5) if quick else (20000, 9)
    _loop(*args, 10)
    ts = []
    for _ in range(batches):
        t0 = time.perf_counter()
        _loop(*args, reps)
        ts.append((time.perf_counter() - t0) / reps * 1e6)
    fig = {"berthing_derivative_us": statistics.median(ts),
            "berthing_derivative_note": (f"[Zhu, Wang & Zheng] five-body arm, {arm.ma} + {arm.mb} modes per bending plane "
                                         f"({arm.n} generalized speeds): J_i, velocity-product terms, Kane's body "
                                         "terms, M~ and its Cholesky solve; compiled loop")}
    fig.update(controller_cycle(quick))
    fig.update(emulator_realtime_factor(quick))
    return fig


def controller_cycle(quick: bool = False) -> dict:
    """The controller's berthing step per 1 ms cycle (rt.dynamics.coupling.berthing_update: RK4
    of arm + payload under the measured wrench, the relative state's rates, prediction, platform
    pose), on the shipped berthing case after capture-like loading."""
    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from rt.control.controller import stand_geometry
    from rt.dynamics import coupling as CP
    from rt.dynamics.berthing_flight import flight_from_case

    fl = flight_from_case(load_case(ROOT / "config/cases/berthing.toml"))
    geo = stand_geometry(load_stand(ROOT / "config/stand.toml"))
    out = np.zeros(CP.OUT_LEN)
    w_in = np.zeros((2, 6))
    w_in[0, :3] = [60.0, 5.0, -3.0]
    w = fl.ws
    n = 200 if quick else 2000
    CP.berthing_update(fl.par, fl.env, fl.x, 0.0, 1e-3, w_in, 3e-3, CP.MODE_PREDICT, geo, out, w.k, w.xt, w.ws, w.rel)
    t0 = time.perf_counter()
    for i in range(n):
        CP.berthing_update(fl.par, fl.env, fl.x, i * 1e-3, 1e-3, w_in, 3e-3, CP.MODE_PREDICT, geo, out, w.k, w.xt,
                           w.ws, w.rel)
    us = (time.perf_counter() - t0) / n * 1e6
    return {"berthing_controller_step_us": us,
            "berthing_controller_step_note": "CP.berthing_update per 1 ms cycle from Python (4 arm evaluations for RK4, 2 kinematic passes for "
                                             "the relative state's forward difference)"}


def emulator_realtime_factor(quick: bool = False) -> dict:
    """The emulated stand in the berthing case's mode at its 10 kHz physics: the snare closed on
    the fixture and stretched (the platform holding A 5 mm past the anchor), one controller
    period (1 ms, 10 physics steps) per call, as the emulator advances it. Emulated time over
    wall time. (The arm and payload are the controller's, not the emulator's: the stand's
    hardware is the end-effector mock-up and the fixture.)"""
    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from sim_stand.world import StandWorld
    from sim_stand.world_config import load_emulator

    stand = load_stand(ROOT / "config/stand.toml")
    case = load_case(ROOT / "config/cases/berthing.toml")
    world = StandWorld(stand, load_emulator(None).for_case(case))
    pose = stand.hexapod.home.copy()
    pin = case.contact.pin_point_m[0]
    pose[2] = pin + 2.5                  # the top's z = x_PA + 2.5 m (config/stand.toml)
    world.reset(pose)
    cmd = world.platform.L.copy()
    world.advance(cmd, 1e-3)
    assert world.captured
    pose[2] += 5e-3
    from rt.stand.hexapod import Hexapod
    Hexapod(stand.hexapod).inverse(pose, cmd)
    n = 200 if quick else 2000
    for _ in range(50):
        world.advance(cmd, 1e-3)
    t0 = time.perf_counter()
    for _ in range(n):
        world.advance(cmd, 1e-3)
    wall = time.perf_counter() - t0
    f = float(np.linalg.norm(world.wrench_P[:3]))
    return {"berthing_emulator_realtime_factor": n * 1e-3 / wall,
            "berthing_emulator_note": (f"StandWorld.advance(1 ms) x {n} at {world.emu.physics_rate_hz:g} Hz, snare "
                                       f"closed and loaded ({f:.0f} N)")}
