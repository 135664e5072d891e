"""Kernels vs the dense DAE oracle (all bodies in absolute coordinates, every joint a
constraint, one dense KKT solve) and the base wrench vs Newton-Euler of the whole system.

Tolerances: ring accelerations, joint accelerations and leg reactions 1e-9 relative to the
largest entry of each quantity (all legs); base wrench 1e-8 relative to its largest entry plus
the total weight scale."""
import numpy as np
import pytest
from conftest import random_state
from mech_oracle import Dense

TYPES = ("UPS", "SPU", "UCU", "RUS", "RSU")


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1e-12)


@pytest.mark.parametrize("leg_type", TYPES)
def test_dense_oracle_moving_base_devices_contact(leg_type):
    """Random feasible states, moving base, gravity, contact wrench, every device active (drive
    enabled with a command), reflected rotor inertia."""
    from sim_stand.mechanism.config import Drive
    from conftest import make_mech
    hunt = leg_type in ("RUS", "RSU")
    mech = make_mech(leg_type, drive=Drive(40.0 if hunt else 2e4, 5.0 if hunt else 2e3,
                                           1e4, enabled=True))
    rng = np.random.default_rng(sum(map(ord, leg_type)))
    for leg in range(6):
        mech.set_drive_command(leg, 0.01 * (leg - 2.5), 0.02)
    for _ in range(3):
        x = random_state(mech, rng)
        bm = np.concatenate([rng.normal(0, 0.5, 3), rng.normal(0, 0.3, 3), rng.normal(0, 0.3, 3),
                             mech.gravity_0])
        cw = rng.normal(0, 80, 6)
        v = mech.evaluate(x, bm, cw)
        d = Dense(mech, x, bm, cw, v.p, cmd=mech.ws.cmd)
        assert _rel(v.udot, d.ring_udot()) < 1e-9
        assert _rel(v.xdot[6:12], d.ring_udot()) < 1e-9
        pdd = np.concatenate([v.pdd[k, :mech.legs[k].n] for k in range(6)])
        pdd_o = np.concatenate([d.pdd(k) for k in range(6)])
        assert _rel(pdd, pdd_o) < 1e-9
        pd = np.concatenate([v.pd[k, :mech.legs[k].n] for k in range(6)])
        pd_o = np.concatenate([d.leg_info[k]["pd"] for k in range(6)])
        assert _rel(pd, pd_o) < 1e-9
        lam = np.concatenate([v.lam[k, :mech.legs[k].n] for k in range(6)])
        lam_o = np.concatenate([d.lam_cut(k) for k in range(6)])
        assert _rel(lam, lam_o) < 1e-9
        bw_o = d.base_wrench_momentum()
        scale = max(np.abs(bw_o).max(), 1.0)
        assert np.abs(v.base_wrench - bw_o).max() / scale < 1e-8
        assert np.all(np.isfinite(mech.out))
        assert np.any(v.dev_force[:, 4] != 0.0)   # the drive acted


@pytest.mark.parametrize("leg_type", ("UPS", "RSU"))
def test_strokes_and_device_power(mechs, leg_type):
    mech = mechs[leg_type]
    rng = np.random.default_rng(7)
    x = random_state(mech, rng)
    v = mech.evaluate(x)
    for k, leg in enumerate(mech.legs):
        assert v.stroke[k] == v.p[k, leg.dj]
        assert v.stroke_rate[k] == v.pd[k, leg.dj]
        np.testing.assert_allclose(v.dev_power[k], v.dev_force[k] * v.stroke_rate[k], rtol=0, atol=1e-12)
    # dampers absorb energy
    from sim_stand.mechanism.layout import DEV_DAMPER, DEV_EMD, DEV_BRAKE
    assert np.all(v.dev_power[:, [DEV_DAMPER, DEV_EMD, DEV_BRAKE]] <= 0.0)
