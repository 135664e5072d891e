"""Static equilibrium under a known ring load equals the virtual-work solution Q = -J^{-T} w:
with the leg forces set to it (position drives), the ring and legs stay at rest (accelerations
1e-9 relative to the load scale) and each UPS/SPU leg's reaction on the ring is its axial force
along the leg (1e-9 relative).  J is the classical Stewart-platform Jacobian, built here
independently: s'_k = d_k . (v_C + omega_C^(0) x rho_k)."""
import numpy as np
import pytest
from conftest import make_mech

from sim_stand.mechanism import base_motion
from sim_stand.mechanism.config import Drive
from sim_stand.mechanism.kernels import ring_dcm


@pytest.mark.parametrize("leg_type", ("UPS", "SPU", "UCU"))
def test_static_equilibrium_virtual_work(leg_type):
    kp = 1.0e4
    mech = make_mech(leg_type, spring=None, damping=0.0, brake=None, emd=None, end_stops=None,
                     drive=Drive(kp, 0.0, 1e12, enabled=True))
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = mech.home_state()
        x[0:3] += rng.normal(0, 0.03, 3)
        x[3:6] += rng.normal(0, 0.05, 3)
        aC = np.zeros((3, 3))
        ring_dcm(x[3], x[4], x[5], aC)
        w_C = rng.normal(0, 300, 6)                   # load on the ring: frame C, about the CoM
        w_gen = np.concatenate([aC.T @ w_C[:3], w_C[3:]])
        J = np.zeros((6, 6))
        D = []
        for k, leg in enumerate(mech.legs):
            rho = aC.T @ leg.l_C
            d = x[0:3] + rho - mech.cfg.base_joints_0[k]
            d /= np.linalg.norm(d)
            D.append(d)
            J[k, :3] = d
            J[k, 3:] = aC @ np.cross(rho, d)
        Q = -np.linalg.solve(J.T, w_gen)
        v = mech.evaluate(x, base_motion(), np.zeros(6))       # strokes at this pose
        for k in range(6):
            mech.set_drive_command(k, v.stroke[k] + Q[k] / kp, 0.0)
        v = mech.evaluate(x, base_motion(), w_C)
        scale = np.abs(w_C).max() / mech.cfg.ring_mass_kg
        assert np.abs(v.udot).max() <= 1e-9 * scale
        assert np.abs(v.pdd).max() <= 1e-9 * scale
        for k in range(6):
            np.testing.assert_allclose(v.lam[k, :3], Q[k] * D[k], rtol=0,
                                       atol=1e-9 * np.abs(Q).max())
            assert abs(v.dev_force[k, 4] - Q[k]) <= 1e-9 * np.abs(Q).max()
        # the base carries the whole load: base wrench = ring load moved to O_0
        f0 = aC.T @ w_C[:3]
        m0 = aC.T @ w_C[3:] + np.cross(x[0:3], f0)
        np.testing.assert_allclose(v.base_wrench, np.concatenate([f0, m0]), rtol=0,
                                   atol=1e-9 * np.abs(w_C).max() * 10)
