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
    quiet = SensorNoise(0.0, 0.0, 0.0, 0.0, (1e6,) * 3, (1e6,) * 3)
    model = FtSensorModel(C, cpu, p, R_PS, quiet, 1000.0)
    sens = Sensing(SensingParams(C, cpu, p, R_PS, 1000.0, tare_samples=1))
    w = np.array([120.0, -35.0, 410.0, 12.0, -7.5, 3.0])
    assert model.sample(w) == 0
    out = sens.step(model.raw)
    # quantisation: half a count per channel through the calibration
    tol = 0.5 * np.abs(sens.C_eff).sum(axis=1) * (np.abs(sens.R_PS).sum() + 1) * (1 + np.abs(p).sum())
    assert np.all(np.abs(out - w) <= tol + 1e-9)


def test_noise_statistics_and_saturation():
    noise = SensorNoise(2.0, 0.2, 0.0, 0.0, (500.0, 500.0, 1250.0), (100.0,) * 3)
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
    # each axis at its own rating: 900 N along z (axial, rated 1250 N) is not clipped
    assert model.sample(np.array([0.0, 0, 900.0, 0, 0, 0])) & STATUS_SATURATED == 0
    assert model.sample(np.array([0.0, 0, -1300.0, 0, 0, 0])) & STATUS_SATURATED
    assert model.w_S[2] == -1250.0


def test_emulated_sensor_saturates_at_the_stands_ratings(tmp_path):
    """The emulator's sensor clips each axis at the stand's rating of that axis (the controller's
    force trip is a fraction of the same numbers); the old single lateral rating for all axes is
    refused with the key that replaces it."""
    from rt.config import ConfigError
    from rt.config.stand import load_stand
    from sim_stand.world_config import load_emulator

    from pathlib import Path
    REPO = Path(__file__).resolve().parents[2]
    stand = load_stand(REPO / "config" / "stand.toml")
    for name in ("default", "elastic_rod"):
        emu = load_emulator(REPO / "config" / "emulator" / f"{name}.toml")
        assert emu.sensor_noise.rating_n + emu.sensor_noise.rating_nm == stand.limits.sensor_rating
    p = tmp_path / "emu.toml"
    p.write_text('[sensor]\nrating_force_n = 7200.0\n')
    with pytest.raises(ConfigError) as e:
        load_emulator(p)
    assert e.value.key == "sensor.rating_force_n" and "rating_n = [Fx, Fy, Fz]" in str(e.value)
    p.write_text('[sensor]\nrating_n = [7200.0, 7200.0, -1.0]\n')
    with pytest.raises(ConfigError) as e:
        load_emulator(p)
    assert e.value.key == "sensor.rating_n"
