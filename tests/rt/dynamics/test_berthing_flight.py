"""The berthing flight's kernels (rt/dynamics/berthing_flight.py; issue 25): the system of main
spacecraft, flexible arm (joints held by their servos) and free payload conserves its linear and
angular momentum over 100 s of free flight; the kernels the controller calls each cycle are
compiled without reference counting (so they cannot allocate)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rt.config.case import load_case
from rt.dynamics import berthing_arm as BA
from rt.dynamics import berthing_flight as BF
from rt.dynamics import coupling as CP
from rt.dynamics import spacecraft as S

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_free_flight_conserves_momentum_over_100_s():
    """The stack tumbling at ~1 deg/s with its links vibrating and its joints' servos holding
    (internal torques): after 100 s of RK4 at 0.5 ms (200 000 steps) the system's linear momentum
    and angular momentum about the inertial origin are what they were to 1e-9 (relative). What
    is left is RK4's own error (measured: 3.7e-10 and 6.2e-10; 1.1e-8 and 1.8e-8 at 1 ms, the
    fifth power of the step). The servos dissipate: the energy only falls."""
    fl = BF.BerthingFlight(load_case(ROOT / "config/cases/berthing.toml"))
    arm = fl.arm
    rng = np.random.default_rng(3)
    u = fl.x[0, fl.nq:fl.nq + fl.n]
    u[0:6] = rng.normal(0.0, 0.02, 6)
    u[6:] = rng.normal(0.0, 3e-4, fl.n - 6)
    for i in list(range(arm.i_b2, arm.i_b2 + 2 * arm.ma)) + list(range(arm.i_b3, arm.i_b3 + 2 * arm.mb)):
        fl.x[0, i + 1] = rng.normal(0.0, 1e-4)
    for i in (arm.i_t2, arm.i_t3, arm.i_t4):
        fl.x[0, i + 1] += 5e-4
    w = np.zeros((2, 6))
    i0 = fl.invariants()
    ws = fl.ws
    for _ in range(200_000):
        assert BF.flight_rk4_step(fl.par[0], fl.x, 5e-4, w, ws.k, ws.xt, ws.ws, ws.rel)
    i1 = fl.invariants()
    P0, P1 = i0[S.I_P:S.I_P + 3], i1[S.I_P:S.I_P + 3]
    L0, L1 = i0[S.I_L:S.I_L + 3], i1[S.I_L:S.I_L + 3]
    assert np.linalg.norm(P1 - P0) <= 1e-9 * np.linalg.norm(P0), (P0, P1)
    assert np.linalg.norm(L1 - L0) <= 1e-9 * np.linalg.norm(L0), (L0, L1)
    assert i1[S.I_TOTAL] <= i0[S.I_TOTAL]


def test_the_cycle_kernels_cannot_allocate():
    """rt.jit.KERNEL (no reference counting): a kernel that allocated would not compile."""
    for f in (CP.berthing_update, CP.berthing_relative_rates, BF.flight_rk4_step, BF.flight_eval,
              BF.flight_ports, BF.flight_dynamics, BA.arm_eval, BA.arm_kinematics, BA.arm_dynamics):
        assert f.targetoptions.get("_nrt") is False, f


def test_ports_and_dynamics_apart_equal_one_evaluation():
    """The digital reference calls the two halves apart (ports, the snare's wrench from them, the
    dynamics): bit for bit what one evaluation gives."""
    fl = BF.BerthingFlight(load_case(ROOT / "config/cases/berthing.toml"))
    fl.x[0, fl.nq:fl.nq + fl.n] = np.linspace(-0.02, 0.03, fl.n)
    w = np.array([[30.0, -5.0, 12.0, 1.0, -2.0, 0.5], [0.0] * 6])
    xd1 = np.zeros_like(fl.x)
    assert BF.flight_eval(fl.par[0], fl.x, w, xd1, fl.ws.ws, fl.ws.rel)
    rel1 = fl.ws.rel.copy()
    xd2 = np.zeros_like(fl.x)
    fl.ws.ws[:] = 0.0
    BF.flight_ports(fl.par[0], fl.x, fl.ws.ws, fl.ws.rel)
    assert BF.flight_dynamics(fl.par[0], fl.x, w, xd2, fl.ws.ws)
    np.testing.assert_array_equal(xd1, xd2)
    np.testing.assert_array_equal(rel1, fl.ws.rel)
    assert np.any(xd1[1] != 0.0) and np.any(xd1[0, fl.nq:] != 0.0)
