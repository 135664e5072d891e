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


# ---------------------------------------------------------------- the sensor's own chain (issue 40 item 3)
from sim_stand.ft_sensor_model import NETFT_INTERNAL_RATE_HZ, NETFT_LOWPASS, SensorChain, design_lowpass  # noqa: E402

FS = NETFT_INTERNAL_RATE_HZ


def _gain(h, f):
    n = np.arange(len(h))
    return abs(np.sum(h * np.exp(-2j * np.pi * f / FS * n)))


@pytest.mark.parametrize("setting", [1, 2, 3, 4])
def test_lowpass_settings_have_the_manuals_cutoff_and_delay(setting):
    """Each Net F/T low-pass setting [ATI Net F/T]: the -3 dB point at the manual's cut-off
    (to 0.1 %), a constant group delay equal to the manual's delay at every frequency of the
    pass band (a symmetric FIR: the phase is -w delay exactly), unity DC gain; the step response
    crosses half at the delay and is settled (1 %) by twice it."""
    fc, delay = NETFT_LOWPASS[setting]
    h = SensorChain(lowpass=setting).taps()
    assert abs(h.sum() - 1.0) < 1e-12 and np.allclose(h, h[::-1], rtol=0, atol=1e-15)
    assert _gain(h, fc) == pytest.approx(1 / np.sqrt(2), rel=1e-3)
    assert _gain(h, 0.5 * fc) > 0.9 and _gain(h, 2.5 * fc) < 0.5
    n = np.arange(len(h))
    for f in (0.1 * fc, 0.5 * fc, 0.9 * fc):
        H = np.sum(h * np.exp(-2j * np.pi * f / FS * n))
        phase = np.angle(H * np.exp(2j * np.pi * f * delay))      # the phase beyond the delay: 0 (or pi where H < 0)
        assert abs(np.sin(phase)) < 1e-9, (f, phase)
    step = np.cumsum(h)                                           # the response to a unit step at sample 0
    t = np.arange(len(h)) / FS
    i50 = int(np.argmax(step >= 0.5))
    assert abs(t[i50] - delay) <= 1.0 / FS                        # half way at the delay (within a sample)
    assert np.all(np.abs(step[t >= 2.0 * delay] - 1.0) <= 0.01)


def test_design_refuses_an_impossible_filter():
    with pytest.raises(ValueError):
        design_lowpass(3000.0, 0.5e-3 + 0.3 / FS, FS)           # not a whole number of half samples
    with pytest.raises(ValueError):
        design_lowpass(3400.0, 0.5e-3, FS)                      # an 8-tap low-pass cannot reach 3.4 kHz


def _trace_model(setting, sigma=0.0, rating=1e6):
    noise = SensorNoise(sigma, 0.0, 0.0, 0.0, (rating,) * 3, (rating,) * 3)
    return FtSensorModel(np.eye(6), np.ones(6) * 1e4, np.zeros(3), np.eye(3), noise, 1000.0, rng_seed=5,
                         chain=SensorChain(lowpass=setting))


@pytest.mark.parametrize("setting", [0, 1, 2])
def test_chain_delays_a_ramp_by_the_settings_delay(setting):
    """Through the whole chain (10 kHz physics sampled at 7 kHz, filtered, decimated to 1 kHz) a
    force ramp reaches the output exactly the setting's delay late: the delay the controller's
    lead must hold ([delays] sensor_s; in lockstep sim_stand.cli.lockstep_stand)."""
    m = _trace_model(setting)
    m.prime(np.zeros(6))
    rate = 1e4                                                    # 1 kN/s along x
    out, ts = [], []
    for k in range(60):
        t_end = (k + 1) * 1e-3
        tr = np.zeros((10, 6))
        tr[:, 0] = rate * (k * 1e-3 + (np.arange(10) + 1) * 1e-4)
        m.sample_trace(tr, 10, np.zeros(6))
        out.append(m.w_S[0])
        ts.append(t_end)
    out, ts = np.array(out), np.array(ts)
    lag = ts[40:] - out[40:] / rate
    assert np.allclose(lag, NETFT_LOWPASS[setting][1], rtol=0, atol=1e-4)       # quantised counts: 0.1 mN / 1 kN/s


def test_chain_noise_at_the_output_and_saturation_per_gauge():
    """The configured sigma is the output's (at the setting): the internal samples carry it
    scaled up by 1/||h||, the filter brings it back; consecutive outputs are nearly
    uncorrelated at setting 1 (its 8 taps span 1.1 internal periods of the output's 7). A gauge
    beyond its rating flags the sample."""
    m = _trace_model(1, sigma=3.0)
    m.prime(np.zeros(6))
    x = np.empty(20000)
    for k in range(len(x)):
        m.sample_trace(np.zeros((10, 6)), 10, np.zeros(6))
        x[k] = m.w_S[0]
    assert x.std() == pytest.approx(3.0, rel=0.03)
    assert abs(np.corrcoef(x[1:], x[:-1])[0, 1]) < 0.05
    s = _trace_model(1, rating=500.0)
    s.prime(np.zeros(6))
    tr = np.zeros((10, 6))
    tr[7:, 0] = 800.0                                             # a spike the filtered output need not reach
    assert s.sample_trace(tr, 10, np.zeros(6)) & STATUS_SATURATED
