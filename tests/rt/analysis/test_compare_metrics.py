"""rt.analysis.compare's run metrics against signals whose answer is known in closed form."""
import numpy as np
import pytest

from rt.analysis.compare import CONTACT_N, crossing_time, metrics


def _ramp_run(rate_hz: float, t0: float, slope_n_per_s: float, duration_s: float = 0.5):
    """A force rising from zero at ``t0`` along x at ``slope``, sampled at ``rate_hz``; the
    vehicles at rest (no capture)."""
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    w = np.zeros((len(t), 6))
    w[:, 0] = np.clip(slope_n_per_s * (t - t0), 0.0, None)
    pose = np.zeros((len(t), 7))
    pose[:, 3] = 1.0
    return t, w, pose, np.zeros((len(t), 6))


@pytest.mark.parametrize("rate_hz", [1000.0, 10000.0])
def test_first_contact_is_the_crossing_not_the_next_sample(rate_hz):
    # a 20 N/ms rise from t0 = 0.10037 s crosses 50 N at t0 + 2.5 ms = 0.10287 s exactly: the first
    # sample above it is up to one period later (1 ms at 1 kHz); the crossing is linear between
    # samples, so interpolation recovers it to rounding
    t0, slope = 0.10037, 2.0e4
    m = metrics(*_ramp_run(rate_hz, t0, slope))
    assert m["first_contact_s"] == pytest.approx(t0 + CONTACT_N / slope, abs=1e-12)


def test_a_1khz_log_and_a_10khz_reference_of_one_rise_agree():
    hil = metrics(*_ramp_run(1000.0, 0.1996848, 3.3e4))["first_contact_s"]
    ref = metrics(*_ramp_run(10000.0, 0.1996848, 3.3e4))["first_contact_s"]
    assert abs(hil - ref) < 1e-12
    # what the sample times alone gave: a whole period apart at worst
    t = np.arange(0.0, 0.5, 1e-3)
    first_sample = t[np.nonzero(3.3e4 * (t - 0.1996848) > CONTACT_N)[0][0]]
    assert first_sample - ref > 0.5e-3


def test_crossing_time_at_the_first_sample_and_on_a_flat_step():
    t = np.array([0.0, 1.0, 2.0])
    assert crossing_time(t, np.array([60.0, 70.0, 80.0]), 0, 50.0) == 0.0       # nothing before: the sample
    assert crossing_time(t, np.array([0.0, 100.0, 0.0]), 1, 50.0) == 0.5
    assert crossing_time(t, np.array([50.0, 50.0, 50.0]), 1, 50.0) == 1.0        # no rise between: the sample
