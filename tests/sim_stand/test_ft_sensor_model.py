"""The emulated F/T sensor is the inverse of the controller's sensing chain (plus noise)."""
import numpy as np
import pytest

from rt.stand.sensing import Sensing, SensingParams
from sim_stand.ft_sensor_model import STATUS_SATURATED, FtSensorModel, SensorNoise


def rot(axis, ang):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(ang) * K + (1 - np.cos(ang)) * K @ K


@pytest.mark.parametrize("n", [6, 8])
def test_noiseless_sensor_round_trips_through_sensing(n):
    rng = np.random.default_rng(5)
    C = np.eye(6) if n == 6 else rng.normal(size=(6, 8))
    cpu = np.array([1e3, 1e3, 1e3, 1e4, 1e4, 1e4]) if n == 6 else np.ones(6) * 50.0
    R_PS, p = rot([1, -2, 0.5], 0.7), np.array([0.3, -0.1, -0.6])
    quiet = SensorNoise(0.0, 0.0, 0.0, 0.0, 1e6, 1e6)
    model = FtSensorModel(C, cpu, p, R_PS, quiet, 1000.0)
    sens = Sensing(SensingParams(C, cpu, p, R_PS, 1000.0, tare_samples=1))
    w = np.array([120.0, -35.0, 410.0, 12.0, -7.5, 3.0])
    assert model.sample(w) == 0
    out = sens.step(model.raw)
    # quantisation: half a count per channel through the calibration
    tol = 0.5 * np.abs(sens.C_eff).sum(axis=1) * (np.abs(sens.R_PS).sum() + 1) * (1 + np.abs(p).sum())
    assert np.all(np.abs(out - w) <= tol + 1e-9)


def test_noise_statistics_and_saturation():
    noise = SensorNoise(2.0, 0.2, 0.0, 0.0, 500.0, 100.0)
    model = FtSensorModel(np.eye(6), np.ones(6) * 1e4, np.zeros(3), np.eye(3), noise, 1000.0, rng_seed=3)
    samples = np.empty((20000, 6))
    for k in range(len(samples)):
        model.sample(np.array([100.0, 0, 0, 0, 0, 10.0]))
        samples[k] = model.w_S
    assert abs(samples[:, 0].mean() - 100.0) < 0.05
    assert abs(samples[:, 0].std() - 2.0) / 2.0 < 0.03
    assert abs(samples[:, 5].std() - 0.2) / 0.2 < 0.03
    assert model.sample(np.array([900.0, 0, 0, 0, 0, 0])) & STATUS_SATURATED
    assert model.w_S[0] == 500.0
