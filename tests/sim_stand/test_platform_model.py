"""Emulated platform physics: servo response, transport delay, limits, top kinematics."""
import math

import numpy as np

from rt.stand import hexapod as H
from sim_stand.platform_model import FAULT_STROKE, PlatformModel, PlatformParams


def model(**kw):
    return PlatformModel(H.default_geometry(), PlatformParams(**kw))


def test_small_step_follows_second_order_servo_after_the_delay():
    """A 1 mm step of every actuator with limits far away: the response is the linear
    second-order step response, shifted by the transport delay (semi-implicit Euler at 10 kHz:
    within 2 % of the step height)."""
    p = model(transport_delay_s=0.003, acceleration_max_mps2=1e3, velocity_max_mps=10.0)
    geo = H.default_geometry()
    p.reset_to_pose(geo.home)
    L0 = p.L.copy()
    cmd = L0 + 1e-3
    wn, ze = 2 * math.pi * 15.0, 0.8
    wd = wn * math.sqrt(1 - ze ** 2)
    err = 0.0
    for k in range(1, 3001):
        p.step(cmd)
        t = k * 1e-4 - 0.003
        if t <= 0:
            assert np.allclose(p.L, L0, atol=1e-15)
            continue
        y = 1 - math.exp(-ze * wn * t) * (math.cos(wd * t) + ze / math.sqrt(1 - ze ** 2) * math.sin(wd * t))
        err = max(err, abs((p.L[0] - L0[0]) / 1e-3 - y))
    assert err < 0.02
    assert np.allclose(p.L, cmd, atol=1e-6)


def test_velocity_and_acceleration_limits_hold():
    p = model(velocity_max_mps=0.05, acceleration_max_mps2=0.5, transport_delay_s=0.0)
    geo = H.default_geometry()
    p.reset_to_pose(geo.home)
    cmd = p.L + 0.2
    vmax = amax = 0.0
    for _ in range(5000):
        p.step(cmd)
        vmax = max(vmax, np.abs(p.Ld).max())
        amax = max(amax, np.abs(p.Ldd).max())
    assert vmax <= 0.05 + 1e-12
    assert amax <= 0.5 + 1e-9


def test_stroke_limit_faults_and_holds():
    p = model(transport_delay_s=0.0, velocity_max_mps=1.0, acceleration_max_mps2=50.0)
    geo = H.default_geometry()
    p.reset_to_pose(geo.home)
    cmd = np.full(6, geo.length_max_m + 0.5)
    for _ in range(20000):
        p.step(cmd)
    assert p.fault & FAULT_STROKE
    assert np.all(p.L <= geo.length_max_m)


def test_pose_and_twist_follow_the_lengths():
    """The measured pose is the forward kinematics of the lengths; the twist maps to L' by J."""
    geo = H.default_geometry()
    p = model(transport_delay_s=0.001)
    p.reset_to_pose(geo.home)
    target = geo.home.copy()
    target[:3] += [0.02, -0.01, 0.03]
    hx = H.Hexapod(geo)
    cmd = hx.inverse(target)
    for _ in range(300):
        p.step(cmd)
    L, J = np.zeros(6), np.zeros((6, 6))
    hx.inverse(p.pose, L, J)
    assert np.allclose(L, p.L, atol=1e-10)
    assert np.allclose(J @ p.twist, p.Ld, atol=1e-10)
