"""Closed-form IK ([Golubev & Yaskevich, §4]) vs Newton IK (its eq. 4.6) for every leg type over
the workspace, to 1e-12 (rad / m) per leg; singular or unreachable poses raise MechanismError with
a status flag and never produce NaN."""
import numpy as np
import pytest
from conftest import random_state

from sim_stand.mechanism import MechanismError
from sim_stand.mechanism.kernels import ring_dcm
from sim_stand.mechanism.model import leg_ik, leg_ik_newton

TYPES = ("UPS", "SPU", "UCU", "RUS", "RSU")


def _pose(x):
    aC = np.zeros((3, 3))
    ring_dcm(x[3], x[4], x[5], aC)
    return x[0:3], aC


@pytest.mark.parametrize("leg_type", TYPES)
def test_closed_form_equals_newton(mechs, leg_type):
    mech = mechs[leg_type]
    rng = np.random.default_rng(11)
    n_ok = 0
    for _ in range(40):
        x = random_state(mech, rng, pos=0.06, ang=0.12)
        rC, aC = _pose(x)
        for k in range(mech.nl):
            try:
                p = leg_ik(mech, k, rC, aC)
            except MechanismError:
                continue
            # Newton from a perturbed start converges to the same branch
            pn, it = leg_ik_newton(mech, k, rC, aC, p + rng.normal(0, 0.02, p.size))
            assert np.abs(p - pn).max() < 1e-12, (k, p, pn)
            n_ok += 1
    assert n_ok > 200


@pytest.mark.parametrize("leg_type", TYPES)
def test_unreachable_pose_raises_without_nan(mechs, leg_type):
    mech = mechs[leg_type]
    x = mech.home_state()
    x[0] += 5.0 if leg_type in ("RUS", "RSU") else -1.5   # out of reach / ring behind the base
    with pytest.raises(MechanismError) as ei:
        mech.evaluate(x)
    assert ei.value.code in (1, 2, 3)
    assert ei.value.leg >= 0
    assert np.all(np.isfinite(mech.out))
    assert mech.view.status[0] == ei.value.code


@pytest.mark.parametrize("leg_type", ("SPU", "RSU"))
def test_singular_pose_raises(mechs, leg_type):
    """Ring pitched 90 deg (theta = pi/2): the cut-U twist leaves its chart or the y-z-x angle
    rates are singular; either way a status flag, an exception, and no NaN."""
    mech = mechs[leg_type]
    x = mech.home_state()
    x[4] = np.pi / 2
    with pytest.raises(MechanismError):
        mech.evaluate(x)
    assert np.all(np.isfinite(mech.out))


@pytest.mark.parametrize("leg_type", TYPES)
def test_newton_polish_option_in_the_kernel(mechs, leg_type):
    """``newton_polish_iterations`` > 0 runs eq. 4.6 after the closed form inside
    mechanism_derivatives: the joint coordinates change by round-off only (1e-12 rad / m), the
    closure residual of the polished p is below 1e-12, and the outputs agree to 1e-9 relative."""
    import dataclasses

    from sim_stand.mechanism import Mechanism
    from sim_stand.mechanism.model import closure_numpy
    ref = mechs[leg_type]
    pol = Mechanism(dataclasses.replace(ref.cfg, newton_polish=3))
    assert pol.params[11] == 3 and ref.params[11] == 0        # layout.H_NEWTON
    rng = np.random.default_rng(13)
    for _ in range(5):
        x = random_state(ref, rng)
        v0 = ref.evaluate(x)
        p0, udot0 = v0.p.copy(), v0.udot.copy()
        v1 = pol.evaluate(x)
        assert np.abs(v1.p - p0).max() < 1e-12
        rC, aC = _pose(x)
        for k, leg in enumerate(pol.legs):
            f, _ = closure_numpy(leg, v1.p[k, :leg.n], rC, aC)
            assert np.abs(f).max() < 1e-12
        assert np.abs(v1.udot - udot0).max() <= 1e-9 * np.abs(udot0).max()
        assert np.all(np.isfinite(pol.out))
