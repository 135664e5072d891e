"""Plastic capture of the payload (rt/dynamics/capture.py, [Zhu, Wang & Zheng, §5.1]; issue 25
oracles): momentum of arm + payload conserved across the impact (eq. 47) to 1e-12, the impulse
relation J^T F = M~ (u_f - u_i) to 1e-10, equal contact-point velocities after, and no energy
gained."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rt.config.arm import load_arm
from rt.dynamics import spatial as SP
from rt.dynamics.berthing_arm import ArmModel
from rt.dynamics.capture import plastic_capture
from tests.rt.dynamics.test_berthing_arm import moving_state

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def arm():
    return ArmModel(load_arm(ROOT / "config/arms/berthing_arm.toml"))


@pytest.mark.parametrize("seed", range(4))
def test_plastic_capture(arm, seed):
    rng = np.random.default_rng(100 + seed)
    q, u = moving_state(arm, seed)
    arm.evaluate(q, u)
    Mt = arm.Mt.copy()
    J = arm.grasp_jacobian()
    c = arm.grasp_point()
    p = arm.cfg.payload
    R = np.empty((3, 3))
    qp = rng.normal(size=4)
    SP.quat_to_dcm(qp / np.linalg.norm(qp), R)
    I_p = R @ np.asarray(p.inertia_kgm2) @ R.T
    r_pb = R @ np.asarray(arm.cfg.grapple_m, float)  # the grapple sits on the grasp point
    r_p = c - r_pb
    v_pi = rng.normal(0.0, 0.05, 3)
    w_pi = rng.normal(0.0, 0.01, 3)
    res = plastic_capture(Mt, J, p.mass_kg, I_p, r_pb, u, v_pi, w_pi)
    # momentum of the arm system (linear in u at the same configuration) and of the payload
    mom_i = arm.mom.copy()
    arm.evaluate(q, res.u_f)
    mom_f = arm.mom.copy()
    Pp_i, Pp_f = p.mass_kg * v_pi, p.mass_kg * res.v_pf
    Lp_i = np.cross(r_p, Pp_i) + I_p @ w_pi
    Lp_f = np.cross(r_p, Pp_f) + I_p @ res.w_pf
    lin_i, lin_f = mom_i[:3] + Pp_i, mom_f[:3] + Pp_f
    ang_i, ang_f = mom_i[3:] + Lp_i, mom_f[3:] + Lp_f
    assert np.abs(lin_f - lin_i).max() <= 1e-12 * max(1.0, np.abs(Pp_i).max(), np.abs(mom_i[:3]).max())
    assert np.abs(ang_f - ang_i).max() <= 1e-12 * max(1.0, np.abs(Lp_i).max(), np.abs(mom_i[3:]).max())
    # impulse relation: J^T F = M~ (u_f - u_i), F = -m_p (v_pf - v_pi)
    F = -p.mass_kg * (res.v_pf - v_pi)
    lhs, rhs = J.T @ F, Mt @ (res.u_f - u)
    assert np.abs(lhs - rhs).max() <= 1e-10 * max(1.0, np.abs(rhs).max())
    # plastic: the contact points move together after
    assert J @ res.u_f == pytest.approx(res.v_pf + np.cross(res.w_pf, r_pb), abs=1e-12)
    assert res.energy_lost_j >= 0.0


def test_capture_of_a_payload_at_rest_by_a_resting_arm_changes_nothing(arm):
    q, u = arm.home()
    arm.evaluate(q, u)
    res = plastic_capture(arm.Mt, arm.grasp_jacobian(), 1000.0, np.diag([100.0, 200.0, 300.0]),
                          np.array([0.0, 0.0, -1.0]), u, np.zeros(3), np.zeros(3))
    assert np.all(res.u_f == 0.0) and np.all(res.impulse == 0.0) and res.energy_lost_j == 0.0
