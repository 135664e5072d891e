"""The berthing arm's dynamics (rt/dynamics/berthing_arm.py; issue 25 oracles): the rigid limit
against Pinocchio on the same rigid chain, and free flight conserving linear and angular
momentum and energy."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import njit

from rt.config.arm import load_arm
from rt.dynamics import spatial as SP
from rt.dynamics.berthing_arm import ArmModel, arm_eval, arm_scratch_len

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def arm():
    return ArmModel(load_arm(ROOT / "config/arms/berthing_arm.toml"))


def moving_state(arm, seed=0):
    rng = np.random.default_rng(seed)
    q, u = arm.home()
    q[0:3] = [0.5, -0.3, 0.2]
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    q[3:7] = np.concatenate([[np.cos(0.2)], np.sin(0.2) * axis])
    u[0:6] = rng.normal(0.0, 0.02, 6)
    u[6:] = rng.normal(0.0, 0.03, arm.n - 6)
    for i in list(range(arm.i_b2, arm.i_b2 + 2 * arm.ma)) + list(range(arm.i_b3, arm.i_b3 + 2 * arm.mb)):
        q[i + 1] = rng.normal(0.0, 0.01)
    return q, u


def energy(arm, q, u):
    arm.evaluate(q, u)
    e = 0.5 * u @ arm.Mt @ u
    la, lb = arm.la, arm.lb
    ba = q[arm.i_b2 + 1:arm.i_b2 + 1 + 2 * arm.ma]
    bb = q[arm.i_b3 + 1:arm.i_b3 + 1 + 2 * arm.mb]
    return e + 0.5 * ba @ la[7] @ ba + 0.5 * bb @ lb[7] @ bb


@njit
def _rk4(ints, bm, bI, em, ec, eI, sh, la, lb, q, u, dt, steps):
    n = u.shape[0]
    Q = np.zeros(n)
    f4 = np.zeros(9)
    Mt = np.zeros((n, n))
    mom = np.zeros(6)
    J4 = np.zeros((6, n))
    pose4 = np.zeros(12)
    ku = np.zeros((4, n))
    kq = np.zeros((4, q.shape[0]))
    R = np.empty((3, 3))
    qd = np.empty(4)
    wk = np.zeros(arm_scratch_len(int(ints[0]), int(ints[1])))
    for _ in range(steps):
        q0 = q.copy()
        u0 = u.copy()
        for s in range(4):
            h = 0.0 if s == 0 else (0.5 * dt if s < 3 else dt)
            qs = q0 + h * kq[s - 1] if s > 0 else q0.copy()
            us = u0 + h * ku[s - 1] if s > 0 else u0.copy()
            ud = np.zeros(n)
            arm_eval(ints, bm, bI, em, ec, eI, sh, la, lb, qs, us, Q, f4, ud, Mt, mom, J4, pose4, wk)
            ku[s] = ud
            SP.quat_to_dcm(qs[3:7] / np.sqrt(np.sum(qs[3:7] ** 2)), R)
            for i in range(3):
                kq[s, i] = R[i, 0] * us[0] + R[i, 1] * us[1] + R[i, 2] * us[2]
            SP.quat_kinematics(qs[3:7], us[3:6], qd)
            kq[s, 3:7] = qd
            kq[s, 7:] = us[6:]
        q[:] = q0 + dt / 6.0 * (kq[0] + 2 * kq[1] + 2 * kq[2] + kq[3])
        u[:] = u0 + dt / 6.0 * (ku[0] + 2 * ku[1] + 2 * ku[2] + ku[3])
        q[3:7] /= np.sqrt(np.sum(q[3:7] ** 2))


def _fly(arm, q, u, dt, seconds):
    _rk4(arm.ints, arm.base_m, arm.base_I, arm.ee_m, arm.ee_c, arm.ee_I, arm.shoulder, arm.la, arm.lb, q, u, dt,
         int(round(seconds / dt)))


@pytest.mark.slow
def test_free_flight_conserves_momentum_and_energy(arm):
    """No joint torques: the main spacecraft, the vibrating flexible links and the end effector
    exchange momentum; the totals (inertial, angular about the inertial origin) stay to 1e-9 over
    2 s and the energy error is RK4's (fifth power of the step)."""
    errs = []
    for dt in (2e-4, 1e-4):
        q, u = moving_state(arm)
        arm.evaluate(q, u)
        m0, e0 = arm.mom.copy(), energy(arm, q, u)
        _fly(arm, q, u, dt, 2.0)
        arm.evaluate(q, u)
        m1, e1 = arm.mom.copy(), energy(arm, q, u)
        dp = np.linalg.norm(m1[:3] - m0[:3]) / np.linalg.norm(m0[:3])
        dl = np.linalg.norm(m1[3:] - m0[3:]) / np.linalg.norm(m0[3:])
        errs.append((dp, dl, abs(e1 - e0) / e0))
    (p1, l1, e1), (p2, l2, e2) = errs
    # what is left is RK4's own error: it falls with the 4th (momentum) and 5th (energy) power of
    # the step, so the equations themselves conserve all three
    assert max(p2, l2) <= 1e-9 and p1 / p2 >= 12.0 and l1 / l2 >= 12.0, errs
    assert e2 <= 1e-6 and e1 / e2 >= 16.0, errs


def test_rigid_limit_equals_pinocchio(arm):
    """Undeflected and with no elastic rates (the limit EI -> infinity), the rows and columns of
    the base's 6 speeds and the 3 joints equal Pinocchio's CRBA and its nonlinear effects on the
    same rigid chain (free-flyer base, links as rigid bodies with their tip drives and hubs)."""
    pin = pytest.importorskip("pinocchio")
    cfg = arm.cfg
    model = pin.Model()
    base = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    model.appendBodyToJoint(base, pin.Inertia(cfg.base.mass_kg, np.zeros(3), np.asarray(cfg.base.inertia_kgm2)),
                            pin.SE3.Identity())
    parent, place = base, np.asarray(cfg.joints[0].position_m, float)
    for lk, jt in zip(cfg.links, cfg.joints[:2]):
        jid = model.addJoint(parent, getattr(pin, "JointModelR" + "XYZ"[jt.axis])(), pin.SE3(np.eye(3), place), jt.name)
        L, rho, mt = lk.length_m, lk.rho_kg_per_m, lk.tip_mass_kg
        m = rho * L + mt
        c = np.array([(rho * L * L / 2 + mt * L) / m, 0.0, 0.0])
        I_O = np.asarray(lk.hub_inertia_kgm2, float) + np.diag([0.0, 1.0, 1.0]) * (rho * L ** 3 / 3 + mt * L * L)
        I_C = I_O - m * (c @ c * np.eye(3) - np.outer(c, c))
        model.appendBodyToJoint(jid, pin.Inertia(m, c, I_C), pin.SE3.Identity())
        parent, place = jid, np.array([L, 0.0, 0.0])
    jt = cfg.joints[2]
    jid = model.addJoint(parent, getattr(pin, "JointModelR" + "XYZ"[jt.axis])(), pin.SE3(np.eye(3), place), jt.name)
    ee = cfg.end_effector
    model.appendBodyToJoint(jid, pin.Inertia(ee.mass_kg, np.asarray(ee.com_m, float), np.asarray(ee.inertia_kgm2)),
                            pin.SE3.Identity())
    model.gravity = pin.Motion.Zero()
    data = model.createData()
    rigid = [0, 1, 2, 3, 4, 5, arm.i_t2, arm.i_t3, arm.i_t4]
    for seed in range(3):
        q, u = moving_state(arm, seed)
        for i in list(range(arm.i_b2, arm.i_b2 + 2 * arm.ma)) + list(range(arm.i_b3, arm.i_b3 + 2 * arm.mb)):
            q[i + 1] = 0.0
            u[i] = 0.0
        ud = arm.evaluate(q, u).copy()
        rhs = arm.Mt @ ud                          # M~ u' = rhs: the bias with Q = 0
        qp = np.concatenate([q[0:3], q[4:7], q[3:4], [q[arm.i_t2 + 1], q[arm.i_t3 + 1], q[arm.i_t4 + 1]]])
        vp = u[rigid]
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        Mr = arm.Mt[np.ix_(rigid, rigid)]
        assert np.abs(Mr - M).max() <= 1e-9 * np.abs(M).max(), np.abs(Mr - M).max()
        nle = pin.nonLinearEffects(model, data, qp, vp)
        assert np.abs(rhs[rigid] + nle).max() <= 1e-9 * max(1.0, np.abs(nle).max()), (rhs[rigid], -nle)
