"""Sensing chain against a hand-computed case; tare; the filter's documented group delay."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from rt.dynamics import spatial as Sp
from rt.stand.sensing import Sensing, SensingParams, dc_group_delay_s, lowpass2_coefficients

# Sensor S mounted 0.2 m behind P's origin along -x, its axes turned +90 deg about z:
# x_S -> y_P, y_S -> -x_P.
R_PS = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
p_PS_P = np.array([-0.2, 0.0, 0.0])


def params(**kw):
    base = dict(calibration=np.eye(6), counts_per_unit=np.array([100.0, 100, 100, 1000, 1000, 1000]),
                p_PS_P=p_PS_P, R_PS=R_PS, rate_hz=1000.0, tare_samples=4)
    base.update(kw)
    return SensingParams(**base)


def test_hand_computed_case():
    """Calibration with a cross-talk term, transform to P, by hand:

    raw = [1000, 0, 500, 0, 0, 0] counts, C = I except C[2, 0] = -0.1 (Fz picks up -10 % of the
    Fx gauge) -> counts [1000, 0, 400, 0, 0, 0] / [100, ..] -> f_S = (10, 0, 4) N, m_S = 0.
    f_P = R_PS f_S = (0, 10, 4). m_P = p_PS_P x f_P = (-0.2, 0, 0) x (0, 10, 4)
        = (0*4 - 0*10, 0*0 - (-0.2)*4, (-0.2)*10 - 0*0) = (0, 0.8, -2.0) N m.
    """
    C = np.eye(6)
    C[2, 0] = -0.1
    s = Sensing(params(calibration=C))
    w = s.step(np.array([1000.0, 0, 500, 0, 0, 0]))
    assert np.allclose(s.w_S, [10, 0, 4, 0, 0, 0], atol=1e-14)
    assert np.allclose(w, [0, 10, 4, 0, 0.8, -2.0], atol=1e-14)
    # a pure sensor moment m_S = (0, 0, 3) N m (3000 counts) stays a pure moment about z
    w = s.step(np.array([0.0, 0, 0, 0, 0, 3000]))
    assert np.allclose(w, [0, 0, 0, 0, 0, 3.0], atol=1e-14)
    # a moment about x_S = (2, 0, 0) -> about y_P
    w = s.step(np.array([0.0, 0, 0, 2000, 0, 0]))
    assert np.allclose(w, [0, 0, 0, 0, 2.0, 0], atol=1e-14)


def test_eight_channel_calibration():
    C = np.zeros((6, 8))
    C[:, :6] = np.eye(6)
    C[:, 6] = 0.5   # two extra gauges mixed into every axis
    C[:, 7] = -0.5
    s = Sensing(params(calibration=C, counts_per_unit=np.ones(6), R_PS=np.eye(3), p_PS_P=np.zeros(3)))
    raw = np.array([1.0, 2, 3, 4, 5, 6, 10, 4])
    assert np.allclose(s.step(raw), raw[:6] + 3.0, atol=1e-14)
    with pytest.raises(ValueError):
        SensingParams(np.eye(6)[:, :5], np.ones(6), np.zeros(3), np.eye(3), 1000.0)


@given(arrays(np.float64, 6, elements=st.floats(-1e4, 1e4)),
       arrays(np.float64, 3, elements=st.floats(-1, 1)),
       arrays(np.float64, 3, elements=st.floats(-2, 2)))
@settings(max_examples=100)
def test_transform_matches_spatial_wrench_transform(raw, p, rv):
    q = np.empty(4)
    Sp.quat_from_rotvec(rv, q)
    R = np.empty((3, 3))
    Sp.quat_to_dcm(q, R)
    s = Sensing(params(R_PS=R, p_PS_P=p, counts_per_unit=np.ones(6)))
    w = s.step(raw)
    ref = np.empty(6)
    # wrench_transform(R_ba, p_ab_a, w_a) with a = S, b = P: R_ba = R_PS, p_SP_S = -R_PS^T p_PS_P
    Sp.wrench_transform(R, -R.T @ p, raw, ref)
    assert np.allclose(w, ref, atol=1e-9, rtol=1e-12)


def test_tare_removes_the_passive_units_weight():
    """Passive unit of 50 kg whose centre of mass is 0.3 m ahead of P along x (P's z up):
    weight (0, 0, -490.5) N at (0.3, 0, 0) -> about P: m = r x f = (0, 147.15, 0) N m."""
    s = Sensing(params(R_PS=np.eye(3), p_PS_P=np.zeros(3), counts_per_unit=np.ones(6), tare_samples=4))
    weight = np.array([0.0, 0, -490.5, 0, 147.15, 0])
    noise = np.array([[1.0, -1, 2, 0, 0, 0], [-1.0, 1, -2, 0, 0, 0], [0.5, 0, 0, 0.1, 0, 0], [-0.5, 0, 0, -0.1, 0, 0]])
    s.begin_tare()
    assert s.taring and not s.tared
    for k in range(4):
        s.step(weight + noise[k])
    assert s.tared and not s.taring
    assert np.allclose(s.bias, weight, atol=1e-12)  # noise averages out exactly
    contact = np.array([-120.0, 5, 0, 0, 0, 1])
    assert np.allclose(s.step(weight + contact), contact, atol=1e-12)
    s.clear_tare()
    assert np.allclose(s.step(weight), weight)


def test_filter_group_delay_is_as_documented():
    fc, zeta, fs = 30.0, 1 / math.sqrt(2), 1000.0
    s = Sensing(params(R_PS=np.eye(3), p_PS_P=np.zeros(3), counts_per_unit=np.ones(6),
                       filter_cutoff_hz=fc, filter_damping=zeta))
    tau = s.group_delay_s
    # close to the continuous filter's 2 zeta / w0 (= 7.50 ms at 30 Hz)
    assert abs(tau - 2 * zeta / (2 * math.pi * fc)) < 0.01 * tau
    # a ramp comes out exactly tau late once the transient has died (unity DC gain)
    rate = np.array([100.0, -50, 20, 1, 2, 3])
    n = 2000
    for k in range(n):
        w = s.step(rate * k / fs)
    t = (n - 1) / fs
    assert np.allclose(w, rate * (t - tau), rtol=1e-9, atol=1e-9)
    # unity DC gain
    s.reset_filter()
    for _ in range(2000):
        w = s.step(np.full(6, 7.0))
    assert np.allclose(w, 7.0, rtol=1e-12)


def test_filter_coefficients_and_delay_formula():
    c = lowpass2_coefficients(50.0, 0.7, 1000.0)
    assert abs(c[:3].sum() / (1 + c[3] + c[4]) - 1.0) < 1e-12
    # the delay formula against the impulse response's first moment
    x = np.zeros(20000)
    x[0] = 1.0
    y = np.zeros_like(x)
    s1 = s2 = 0.0
    for k, xi in enumerate(x):
        yi = c[0] * xi + s1
        s1 = c[1] * xi - c[3] * yi + s2
        s2 = c[2] * xi - c[4] * yi
        y[k] = yi
    centroid = (np.arange(len(y)) * y).sum() / y.sum() / 1000.0
    assert abs(centroid - dc_group_delay_s(c, 1000.0)) < 1e-12
    with pytest.raises(ValueError):
        lowpass2_coefficients(600.0, 0.7, 1000.0)


def test_tare_restarts_filter_cleanly_and_warm_up_keeps_state():
    s = Sensing(params(R_PS=np.eye(3), p_PS_P=np.zeros(3), counts_per_unit=np.ones(6),
                       filter_cutoff_hz=40.0, tare_samples=10))
    s.warm_up()
    assert not s.tared and not s.bias.any()
    s.begin_tare()
    for _ in range(10):
        s.step(np.full(6, 100.0))
    w = s.step(np.full(6, 100.0))
    assert np.allclose(w, 0.0, atol=1e-12)  # filter restarted at rest on the tared signal
