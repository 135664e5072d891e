"""Spacecraft-dynamics figures (issue 2): one RK4 step of both vehicles with 6 port modes each.

* ``spacecraft_step_us_loop``: median per step, steps looped inside compiled code;
* ``spacecraft_step_us_call``: median per step, one call from Python per step (the controller's
  situation);
* ``basilisk_step_us``: the same two rigid bodies propagated by Basilisk (``bsk``, optional
  ``peers`` extra) with its RK4 at the same dt, and ``basilisk_ratio`` = basilisk / ours (loop).
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from rt.dynamics import spacecraft as S
from rt.config.vehicle import Control, Mode, Vehicle

DT = 1e-3


def six_mode_pair() -> S.Spacecraft:
    rng = np.random.default_rng(3)

    def veh(mass, J, port):
        modes = tuple(Mode(f, 0.02, rng.normal(size=6) * 0.01) for f in (0.3, 0.5, 1.1, 2.0, 3.3, 4.8))
        return Vehicle("bench", mass, np.asarray(J, float), np.asarray(port, float), np.eye(3), modes, Control())

    sc = S.Spacecraft(veh(7080.0, np.diag([4.6e3, 3.5e4, 3.5e4]), [3.6, 0, 0]),
                      veh(419455.0, np.diag([1.27e8, 1.07e8, 2.01e8]), [32.0, 0, 3.0]))
    sc.x[0, S.S_R] = -36.0
    sc.x[0, S.S_W:S.S_W + 3] = [0.001, 0.002, -0.001]
    return sc


def _loop_us(sc: S.Spacecraft, n: int, reps: int) -> float:
    w = np.zeros((2, 6))
    w[0] = [50.0, 5.0, -3.0, 1.0, 2.0, -1.0]
    ws = sc.ws
    S.rk4_steps(sc.par, sc.env, sc.x, 0.0, DT, 10, w, 1, ws.k, ws.xt, ws.ws, ws.rel)  # compile / warm
    out = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        S.rk4_steps(sc.par, sc.env, sc.x, 0.0, DT, n, w, 1, ws.k, ws.xt, ws.ws, ws.rel)
        out.append((time.perf_counter_ns() - t0) / n / 1e3)
    return statistics.median(out)


def _call_us(sc: S.Spacecraft, n: int, reps: int) -> float:
    w = np.zeros((2, 6))
    w[0] = [50.0, 5.0, -3.0, 1.0, 2.0, -1.0]
    ws = sc.ws
    par, env, x, k, xt, wsa, rel = sc.par, sc.env, sc.x, ws.k, ws.xt, ws.ws, ws.rel
    step = S.rk4_step
    step(par, env, x, 0.0, DT, w, 1, k, xt, wsa, rel)
    out = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        for i in range(n):
            step(par, env, x, i * DT, DT, w, 1, k, xt, wsa, rel)
        out.append((time.perf_counter_ns() - t0) / n / 1e3)
    return statistics.median(out)


def _basilisk_us(n: int) -> tuple[float | None, str]:
    try:
        from Basilisk.simulation import spacecraft as bsk_sc
        from Basilisk.simulation import svIntegrators
        from Basilisk.utilities import SimulationBaseClass, macros
    except Exception as e:  # not installed: optional peer
        return None, f"Basilisk not installed ({type(e).__name__}); pip install '.[peers]'"
    sim = SimulationBaseClass.SimBaseClass()
    proc = sim.CreateNewProcess("p")
    proc.addTask(sim.CreateNewTask("t", macros.sec2nano(DT)))
    bodies = []
    for name, m, J, r in (("a", 7080.0, [4.6e3, 3.5e4, 3.5e4], [-36.0, 0, 0]),
                          ("p", 419455.0, [1.27e8, 1.07e8, 2.01e8], [0.0, 0, 0])):
        b = bsk_sc.Spacecraft()
        b.ModelTag = name
        b.hub.mHub = m
        b.hub.IHubPntBc_B = [[J[0], 0, 0], [0, J[1], 0], [0, 0, J[2]]]
        b.hub.r_CN_NInit = r
        b.hub.omega_BN_BInit = [[0.001], [0.002], [-0.001]]
        integ = svIntegrators.svIntegratorRK4(b)
        b.setIntegrator(integ)
        sim.AddModelToTask("t", b)
        bodies.append((b, integ))
    sim.InitializeSimulation()
    sim.ConfigureStopTime(macros.sec2nano(10 * DT))
    sim.ExecuteSimulation()
    t0 = time.perf_counter_ns()
    sim.ConfigureStopTime(macros.sec2nano((10 + n) * DT))
    sim.ExecuteSimulation()
    return (time.perf_counter_ns() - t0) / n / 1e3, "two rigid hubs, svIntegratorRK4, same dt, no modes"


def run(quick: bool = False) -> dict:
    n, reps = (2000, 3) if quick else (20000, 7)
    sc = six_mode_pair()
    loop = _loop_us(sc, n, reps)
    call = _call_us(six_mode_pair(), n // 2, reps)
    bsk, note = _basilisk_us(n // 4)
    return {
        "spacecraft_step_us_loop": round(loop, 4),
        "spacecraft_step_us_call": round(call, 4),
        "basilisk_step_us": None if bsk is None else round(bsk, 3),
        "basilisk_step_us_note": note,
        "basilisk_ratio": None if bsk is None else round(bsk / loop, 2),
    }
