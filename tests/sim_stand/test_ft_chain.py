"""The emulated F/T sensor's own chain (issue 40 item 3; sim_stand/ft_sensor_model.py): the
physics sampled at the sensor's internal rate, its low-pass, the decimation to the frame.

Against the vendor's figures [ATI Net F/T]: each low-pass setting's cut-off is the filter's
-3 dB point, its step response is the one-pole's of that cut-off at 7 kHz, and its group delay
at low frequency is the one-pole's, ``1 / (2 pi f_c)``, less half an internal sample (the
discretisation); the default chain (no filter, the vendor's power-on setting) delivers what the
instant sample did, bit for bit; the decimation's age is the output phase. A few seconds."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sim_stand.ft_sensor_model import (NETFT_INTERNAL_RATE_HZ, NETFT_LOW_PASS_HZ, FtSensorModel, SensorChain,
                                       SensorNoise, chain_delay_s, low_pass_coefficient, low_pass_group_delay_s)

REPO = Path(__file__).resolve().parents[2]
FI = NETFT_INTERNAL_RATE_HZ
TI = 1.0 / FI
QUIET = SensorNoise(0.0, 0.0, 0.0, 0.0, (1e9,) * 3, (1e9,) * 3)
# counts of 1e-6 N: quantisation far below every tolerance here
CPU = np.full(6, 1e6)


def model(chain: SensorChain, frame_s: float, physics_dt_s: float, noise: SensorNoise = QUIET, seed: int = 1):
    m = FtSensorModel(np.eye(6), CPU, np.zeros(3), np.eye(3), noise, 1.0 / frame_s, rng_seed=seed)
    m.set_chain(chain, frame_s, physics_dt_s)
    return m


def run(m: FtSensorModel, signal, frames: int, frame_s: float, nsteps: int) -> np.ndarray:
    """The delivered Fx of ``frames`` frames of the physics' wrench ``signal(t)`` (Fx only),
    each frame's history at its physics steps; the chain at rest under ``signal(0)``."""
    h = frame_s / nsteps
    w0 = np.zeros(6)
    w0[0] = signal(0.0)
    m.reset_chain(w0)
    hist = np.zeros((nsteps + 1, 6))
    out = np.empty(frames)
    zero = np.zeros(6)
    for k in range(frames):
        t0 = k * frame_s
        for s in range(nsteps + 1):
            hist[s, 0] = signal(t0 + s * h)
        m.sample_frame(hist, nsteps, zero)
        out[k] = m.w_S[0]
    return out


@pytest.mark.parametrize("setting", range(1, len(NETFT_LOW_PASS_HZ)))
def test_each_setting_has_the_vendors_cutoff_and_a_one_pole_step_response(setting):
    """Run at the internal rate (one output per internal sample: frames of 1/7000 s on a physics
    of 10 steps per frame), a unit step at t = 0+ gives the one-pole's ``1 - (1 - a)^(m + 1)``
    at internal sample m (to 1e-12); the ``a`` read back from the response (the ratio of
    successive errors) puts the filter's gain at the vendor's cut-off at 1/sqrt(2) (to 1e-9)."""
    fc = NETFT_LOW_PASS_HZ[setting]
    a = low_pass_coefficient(fc, FI)
    m = model(SensorChain(low_pass=setting), TI, TI / 10)
    n = min(400, int(8.0 / a))
    y = run(m, lambda t: 1.0 if t > 0.0 else 0.0, n, TI, 10)
    k = np.arange(n)
    assert np.max(np.abs(y - (1.0 - (1.0 - a) ** (k + 1)))) < 1e-12
    e = 1.0 - y
    a_read = 1.0 - e[1] / e[0]
    z = np.exp(-2j * math.pi * fc / FI)
    assert abs(abs(a_read / (1.0 - (1.0 - a_read) * z)) - 1.0 / math.sqrt(2.0)) < 1e-9
    # and below it the gain is above 1/sqrt(2), above it below (a low-pass, not a notch)
    for f, above in ((0.5 * fc, True), (min(1.5 * fc, 0.499 * FI), False)):
        g = abs(a / (1.0 - (1.0 - a) * np.exp(-2j * math.pi * f / FI)))
        assert (g > 1.0 / math.sqrt(2.0)) == above


@pytest.mark.parametrize("setting", range(1, 9))
def test_group_delay_at_low_frequency_is_the_one_poles_of_the_vendors_cutoff(setting):
    """A slow ramp through the chain at 1 kHz frames: the delivered samples lag it by the
    filter's group delay at zero frequency, ``(1 - a) / a`` internal samples (to 1e-9 of it),
    which is the continuous one-pole's ``1 / (2 pi f_c)`` of the vendor's cut-off less half an
    internal sample, to 0.15 of an internal sample (21 us; the discretisation's next term,
    largest at 838 Hz, 0.12 samples; below 0.02 at 152 Hz and lower)."""
    fc = NETFT_LOW_PASS_HZ[setting]
    a = low_pass_coefficient(fc, FI)
    gd = low_pass_group_delay_s(a, FI)
    frames = int(25.0 / a / 7.0) + 20          # 25 time constants and more: the start's transient below 1e-10
    m = model(SensorChain(low_pass=setting), 1e-3, 1e-4)
    rate = 100.0                               # N/s
    y = run(m, lambda t: rate * t, frames, 1e-3, 10)
    t_k = np.arange(1, frames + 1) * 1e-3
    lag = t_k[-1] - y[-1] / rate
    assert abs(lag - gd) < 1e-9 * max(gd, 1e-3) + 1e-12
    assert abs(gd - (1.0 / (2.0 * math.pi * fc) - TI / 2.0)) < 0.15 * TI
    assert chain_delay_s(SensorChain(low_pass=setting), 1e-3) == pytest.approx(gd, rel=1e-15)


@pytest.mark.parametrize("phase", [0.0, 0.3, 0.5, 0.9])
def test_the_decimations_age_is_the_output_phase(phase):
    """No filter: the frame's sample is the physics' wrench ``phase`` of a frame before the
    frame (a ramp, exact through the interpolation between physics steps); with a filter the
    age and the group delay add. The internal samples fall between the 10 kHz steps (seven per
    frame, at most one of them on a step)."""
    ramp = 250.0
    m = model(SensorChain(output_phase=phase), 1e-3, 1e-4)
    y = run(m, lambda t: ramp * t, 50, 1e-3, 10)
    t_k = np.arange(1, 51) * 1e-3
    age = t_k - y / ramp
    assert np.max(np.abs(age[1:] - phase * 1e-3)) < 1e-12
    assert chain_delay_s(SensorChain(output_phase=phase), 1e-3) == pytest.approx(phase * 1e-3, abs=1e-18)
    ch = SensorChain(low_pass=3, output_phase=phase)
    m = model(ch, 1e-3, 1e-4)
    y = run(m, lambda t: ramp * t, 120, 1e-3, 10)
    assert abs((0.12 - y[-1] / ramp) - chain_delay_s(ch, 1e-3)) < 1e-12


def test_default_chain_delivers_the_instant_sample_bit_for_bit():
    """The vendor's default (no filter) at the frame's instant: the same noise, drift, counts and
    status as sampling the wrench at the frame's end, draw for draw (the default emulator's runs
    are unchanged by the chain)."""
    noise = SensorNoise(8.0, 0.5, 0.05, 0.005, (300.0,) * 3, (100.0,) * 3)
    rng = np.random.default_rng(4)
    hist = rng.normal(scale=150.0, size=(40, 11, 6))
    offset = np.array([0.0, 0.0, 1471.0, 3.0, -2.0, 0.0]) * 0.1
    chained = model(SensorChain(), 1e-3, 1e-4, noise, seed=9)
    chained.reset_chain(hist[0, 0] + offset)
    got = []
    for k in range(len(hist)):
        st = chained.sample_frame(hist[k], 10, offset)
        got.append((st, chained.w_S.copy(), chained.raw.copy(), chained.drift.copy()))
    instant = FtSensorModel(np.eye(6), CPU, np.zeros(3), np.eye(3), noise, 1000.0, rng_seed=9)
    for k in range(len(hist)):
        st = instant.sample(hist[k, 10] + offset)
        g = got[k]
        assert st == g[0]
        assert np.array_equal(instant.w_S, g[1]) and np.array_equal(instant.raw, g[2])
        assert np.array_equal(instant.drift, g[3])
    assert any(g[0] for g in got)               # the rating was met on the way: the status too


def test_a_filter_filters_the_gauges_noise():
    """With a filter the gauges' noise (the configured sigma, per internal sample) goes through
    it: the delivered sigma is ``sigma sqrt(a / (2 - a))`` (838 Hz: successive 1 kHz samples are
    independent to 0.7 %), within 3 %."""
    noise = SensorNoise(8.0, 0.5, 0.0, 0.0, (1e9,) * 3, (1e9,) * 3)
    a = low_pass_coefficient(838.0, FI)
    m = model(SensorChain(low_pass=1), 1e-3, 1e-4, noise, seed=3)
    y = run(m, lambda t: 100.0, 20000, 1e-3, 10)
    assert abs(y.mean() - 100.0) < 0.15      # 4.5 sigma of the mean of 20000 samples
    assert abs(y.std() / (8.0 * math.sqrt(a / (2.0 - a))) - 1.0) < 0.03


def _emu_file(tmp_path, sensor_lines: str) -> Path:
    src = (REPO / "config" / "emulator" / "default.toml").read_text()
    src = src.replace('mechanism = "../', f'mechanism = "{REPO}/config/').replace('interface = "../',
                                                                                 f'interface = "{REPO}/config/')
    i = src.index("internal_rate_hz = 7000")
    j = src.index("\n\n", i)
    p = tmp_path / "emu.toml"
    p.write_text(src[:i] + sensor_lines + src[j:])
    return p


@pytest.mark.parametrize("lines, key, words", [
    ("low_pass = 13", "sensor.low_pass", ["13 is not a Net F/T low-pass setting", "0 (no filter) to 12",
                                          "3 = 152 Hz"]),
    ("low_pass = -1", "sensor.low_pass", ["0 (no filter) to 12"]),
    ("output_phase = 1.0", "sensor.output_phase", ["in [0, 1)"]),
    ("internal_rate_hz = 500", "sensor.internal_rate_hz", ["[1000, 100000] Hz", "7000 Hz"]),
    ("internal_rate_hz = 4000\nlow_pass = 12", "sensor.low_pass", ["3000 Hz", "Nyquist", "4000 Hz"]),
])
def test_bad_chain_settings_are_refused_in_one_line(tmp_path, lines, key, words):
    from rt.config import ConfigError
    from sim_stand.world_config import load_emulator
    p = _emu_file(tmp_path, lines)
    with pytest.raises(ConfigError) as e:
        load_emulator(p)
    msg = str(e.value)
    assert e.value.key == key and str(p) in msg and "\n" not in msg, msg
    for w in words:
        assert w in msg, msg


def test_chain_settings_load_and_a_rate_that_does_not_divide_the_frame_is_refused(tmp_path):
    """The settings reach the config; an internal rate that is not a whole multiple of the stand's
    frame rate (a Net F/T sends every n-th internal sample) is refused when the emulator builds
    its sensor, naming the emulator file's key and the stand's rate."""
    from rt.config import ConfigError
    from rt.config.stand import load_stand
    from sim_stand.emulator import SensorDevice
    from sim_stand.world_config import load_emulator
    for name in ("default", "elastic_rod", "kuka_rsi", "abb_egm"):
        assert load_emulator(REPO / "config" / "emulator" / f"{name}.toml").sensor_chain == SensorChain()
    emu = load_emulator(_emu_file(tmp_path, "internal_rate_hz = 7000\nlow_pass = 3\noutput_phase = 0.25"))
    assert emu.sensor_chain == SensorChain(7000.0, 3, 0.25)
    assert emu.sensor_chain.cutoff_hz == 152.0
    stand = load_stand(REPO / "config" / "stand.toml")
    SensorDevice(stand, None, emu.sensor_noise, chain=emu.sensor_chain, physics_dt_s=1e-4, emu_file=emu.file)
    bad = load_emulator(_emu_file(tmp_path, "internal_rate_hz = 7500"))
    with pytest.raises(ConfigError) as e:
        SensorDevice(stand, None, bad.sensor_noise, chain=bad.sensor_chain, physics_dt_s=1e-4, emu_file=bad.file)
    msg = str(e.value)
    assert e.value.key == "sensor.internal_rate_hz" and str(bad.file) in msg and "1000 Hz" in msg, msg


def test_the_lockstep_lead_carries_the_chains_delay():
    """``lockstep_stand`` gives the controller the chain's mean delay as ``[delays] sensor_s``
    (the sensor's part of the lead): 0 at the defaults, the output's age plus the filter's group
    delay otherwise; the platform's part is untouched."""
    from rt.config.stand import load_stand
    from sim_stand.cli import lockstep_stand
    from sim_stand.world_config import load_emulator
    stand = load_stand(REPO / "config" / "stand.toml")
    emu = load_emulator(REPO / "config" / "emulator" / "default.toml")
    base = lockstep_stand(stand, emu)
    assert base.delays.sensor_s == 0.0
    ch = SensorChain(low_pass=3, output_phase=0.5)
    led = lockstep_stand(stand, replace(emu, sensor_chain=ch))
    gd = low_pass_group_delay_s(low_pass_coefficient(152.0, FI), FI)
    assert led.delays.sensor_s == pytest.approx(0.5e-3 + gd, rel=1e-12)
    assert led.delays.platform_s == base.delays.platform_s
    assert led.delays.total_s == pytest.approx(base.delays.total_s + 0.5e-3 + gd, rel=1e-12)


def test_the_world_records_the_wrench_at_every_step_of_an_advance():
    """``StandWorld.wrench_hist``: the wrench at the advance's start (the last one's end) and
    after each physics step; the last row is ``wrench_P``."""
    from rt.config.stand import load_stand
    from sim_stand.world import StandWorld
    from sim_stand.world_config import load_emulator
    stand = load_stand(REPO / "config" / "stand.toml")
    w = StandWorld(stand, load_emulator(REPO / "config" / "emulator" / "elastic_rod.toml"))
    L = w.lengths.copy()
    prev = w.wrench_P.copy()
    for k in range(8):
        L += 2e-4                     # the platform pushes A into the rod (at rest on it at home)
        w.advance(L, 1e-3)
        assert w.hist_steps == 10 and w.wrench_hist.shape == (11, 6)
        assert np.array_equal(w.wrench_hist[0], prev)
        assert np.array_equal(w.wrench_hist[10], w.wrench_P)
        prev = w.wrench_P.copy()
    fx = w.wrench_hist[:, 0]
    assert fx[0] > 20.0 and np.all(np.diff(fx) > 0.0)      # the rod's force, growing step by step
