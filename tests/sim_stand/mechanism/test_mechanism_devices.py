"""Leg force devices as pure functions of stroke and stroke rate."""
import numpy as np
from conftest import make_mech

from sim_stand.mechanism import devices as dv
from sim_stand.mechanism import layout as L


def _mech_lo():
    m = make_mech("UPS")
    return m, m.params, L.HDR


def test_spring_force_is_minus_potential_gradient_and_table():
    m, P, lo = _mech_lo()
    sp = m.cfg.devices[0].spring
    assert dv.spring_force(P, lo, 0.0) == sp.preload
    for s in np.linspace(-0.3, 0.3, 41):
        h = 1e-6
        num = -(dv.spring_potential(P, lo, s + h) - dv.spring_potential(P, lo, s - h)) / (2 * h)
        assert abs(num - dv.spring_force(P, lo, s)) < 1e-6 * 1e3
        # stiffness = -dF/ds equals the interpolated table
        k = -(dv.spring_force(P, lo, s + h) - dv.spring_force(P, lo, s - h)) / (2 * h)
        assert abs(k - np.interp(s, sp.table_s, sp.table_k)) < 1e-3


def test_damper_emd_brake_drive_stops():
    m, P, lo = _mech_lo()
    d = m.cfg.devices[0]
    assert dv.damper_force(P, lo, 0.1) == -d.damping * 0.1
    G = 3.0 * 2 * np.pi / 0.005
    c = G ** 2 * 0.05 * 0.05 / 6.0
    assert abs(dv.emd_force(P, lo, 0.1) + c * 0.1) < 1e-9
    assert abs(P[lo + L.L_EM_M] - 2e-6 * G ** 2) < 1e-12
    # brake: odd, continuous through 0, break-away peak above the Coulomb level, Coulomb at speed
    assert dv.brake_force(P, lo, 0.0) == 0.0
    assert abs(dv.brake_force(P, lo, 0.5) + 150.0) < 1e-6
    peak = max(-dv.brake_force(P, lo, v) for v in np.linspace(1e-4, 0.02, 400))
    assert 150.0 < peak <= 220.0
    assert dv.brake_force(P, lo, -0.01) == -dv.brake_force(P, lo, 0.01)
    # drive disabled in the preset
    assert dv.drive_force(P, lo, 0.0, 0.0, 0.1, 0.0) == 0.0
    # end stops: zero inside, push back outside, never pull
    assert dv.stop_force(P, lo, 0.0, 1.0) == 0.0
    assert dv.stop_force(P, lo, 0.23, 0.0) < 0.0
    assert dv.stop_force(P, lo, -0.23, 0.0) > 0.0
    assert dv.stop_force(P, lo, 0.2201, -10.0) == 0.0


def test_drive_saturates():
    from sim_stand.mechanism.config import Drive
    m = make_mech("UPS", drive=Drive(1e4, 1e3, 500.0, enabled=True))
    P, lo = m.params, L.HDR
    assert dv.drive_force(P, lo, 0.0, 0.0, 0.01, 0.0) == 100.0
    assert dv.drive_force(P, lo, 0.0, 0.0, 1.0, 0.0) == 500.0
    assert dv.drive_force(P, lo, 0.0, 0.0, -1.0, 0.0) == -500.0


def test_contact_wrench_conversion():
    from sim_stand.mechanism import contact_wrench_on_ring
    R = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])   # C -> P
    p = np.array([0.5, 0.1, 0.0])
    w = np.array([10.0, 0, 0, 0, 0, 1.0])                # on the passive unit, about P
    c = contact_wrench_on_ring(R, p, w)
    f_P = -w[:3]
    m_P = -w[3:] - np.cross(p, f_P)
    np.testing.assert_allclose(c, np.concatenate([R.T @ f_P, R.T @ m_P]))
    np.testing.assert_allclose(contact_wrench_on_ring(R, p, -w, on_passive=False), c)


def test_brake_holds_without_chatter_at_a_fixed_step():
    """Friction brakes only (no spring, damper, EMD, drive; orbit), RK4 at 10 kHz for 0.2 s with
    an axial ring load: below the legs' combined break-away the ring creeps (every leg's stroke
    rate below the regularisation speed v_r = 2 mm/s) and its velocity never changes sign (no
    stick/slip chatter); well above it, the ring slips."""
    import dataclasses

    from sim_stand.mechanism import Mechanism, base_motion
    m0 = make_mech("UPS", spring=None, damping=0.0, emd=None, drive=None, end_stops=None)
    mech = Mechanism(dataclasses.replace(m0.cfg, gravity_0=np.zeros(3)))
    v_r = mech.cfg.devices[0].brake.regularization_velocity
    for F, holds in ((300.0, True), (2000.0, False)):
        x = mech.home_state()
        cw = np.array([F, 0, 0, 0, 0, 0.0])
        vx, rates = [], []
        for _ in range(2000):
            mech.step_rk4(x, 1e-4, base_motion(), cw)
            vx.append(x[6])
            rates.append(np.abs(mech.view.stroke_rate).max())
        vx = np.array(vx)
        assert np.all(vx > 0.0)                       # pushed along +x, never back
        if holds:
            assert max(rates) < v_r
        else:
            assert vx[-1] > 0.1
