"""Sampling: reproducible from (seed, index), and the requested marginals (Kolmogorov-Smirnov
with fixed seeds: a wrong transform, a wrong sigma or an ignored truncation fails it)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from sim_stand.campaign.sampling import design, sample_values, unit_design
from sim_stand.campaign.spec import load_campaign

from campaign_helpers import NOMINAL, write_campaign

N = 2000


def _campaign(tmp_path, sampling):
    return load_campaign(write_campaign(tmp_path / "m.toml", {
        "closing_velocity_mps": {"distribution": "uniform", "bounds": [0.05, 0.20]},
        "position_y_m": {"distribution": "normal", "mean": 0.01, "three_sigma": 0.09},
        "damper_scale": {"distribution": "truncated_normal", "sigma": 0.15, "bounds": [0.8, 1.3]},
    }, case=NOMINAL, samples=N, seed=11, sampling=sampling))


@pytest.mark.parametrize("sampling", ["random", "lhs", "sobol"])
def test_marginals_are_the_requested_distributions(tmp_path, sampling):
    c = _campaign(tmp_path, sampling)
    x = design(c)
    assert x.shape == (N, 3)
    want = [stats.uniform(0.05, 0.15), stats.norm(0.01, 0.03),
            stats.truncnorm((0.8 - 1.0) / 0.15, (1.3 - 1.0) / 0.15, loc=1.0, scale=0.15)]
    for j, dist in enumerate(want):
        p = stats.kstest(x[:, j], dist.cdf).pvalue
        assert p > 0.01, (sampling, c.names[j], p)
    # a truncated normal stays in its bounds, and is not the untruncated one
    assert x[:, 2].min() >= 0.8 and x[:, 2].max() <= 1.3
    assert stats.kstest(x[:, 2], stats.norm(1.0, 0.15).cdf).pvalue < 1e-6
    # the sigma is the requested one (three_sigma / 3), not three_sigma
    assert np.std(x[:, 1]) == pytest.approx(0.03, rel=0.06)


@pytest.mark.parametrize("sampling", ["random", "lhs", "sobol"])
def test_sampling_is_reproducible(tmp_path, sampling):
    c = _campaign(tmp_path, sampling)
    a, b = design(c, 64), design(c, 64)
    assert np.array_equal(a, b)
    v = sample_values(c, 17, 64)
    assert list(v.values()) == list(a[17])
    other = design(replace(c, seed=12), 64)
    assert not np.allclose(a, other)


def test_random_and_sobol_samples_depend_on_seed_and_index_only(tmp_path):
    for sampling in ("random", "sobol"):
        c = _campaign(tmp_path, sampling)
        small, big = design(c, 20), design(c, 50)
        assert np.array_equal(small, big[:20]), sampling          # growing N keeps the first samples
    c = _campaign(tmp_path, "random")
    assert np.array_equal(unit_design(c, 5)[3], np.random.default_rng([11, 3]).random(3))


def test_lhs_stratifies_each_column(tmp_path):
    c = _campaign(tmp_path, "lhs")
    u = unit_design(c, 50)
    for j in range(3):
        assert sorted(np.floor(u[:, j] * 50).astype(int)) == list(range(50))
