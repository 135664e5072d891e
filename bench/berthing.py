"""Berthing-arm figures (issue 25): one evaluation of the five-body dynamics of seed 004 (the
system mass matrix, the bias forces and the solve) with 2 modes per bending plane."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
from numba import njit

from rt.dynamics.berthing_arm import arm_eval

ROOT = Path(__file__).resolve().parent.parent


@njit(cache=True)
def _loop(ints, bm, bI, em, ec, eI, sh, la, lb, q, u, Q, ud, Mt, mom, J4, pose4, n):
    s = 0.0
    for _ in range(n):
        arm_eval(ints, bm, bI, em, ec, eI, sh, la, lb, q, u, Q, ud, Mt, mom, J4, pose4)
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
    args = (arm.ints, arm.base_m, arm.base_I, arm.ee_m, arm.ee_c, arm.ee_I, arm.shoulder, arm.la, arm.lb, q, u, Q,
            arm.udot, arm.Mt, arm.mom, arm.J4, arm.pose4)
    reps, batches = (2000, 5) if quick else (20000, 9)
    _loop(*args, 10)
    ts = []
    for _ in range(batches):
        t0 = time.perf_counter()
        _loop(*args, reps)
        ts.append((time.perf_counter() - t0) / reps * 1e6)
    return {"berthing_derivative_us": statistics.median(ts),
            "berthing_derivative_note": (f"seed 004 five-body arm, {arm.ma} + {arm.mb} modes per bending plane "
                                         f"({arm.n} generalized speeds): J_i, velocity-product terms, Kane's body "
                                         "terms, M~ and its Cholesky solve; compiled loop")}
