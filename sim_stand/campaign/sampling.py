"""A campaign's samples: the unit design and the marginals (docs/campaigns.md §sampling).

The design is an (N, d) array of points in the open unit cube, one column per dispersion in the
file's order:

* ``random``: sample i's point comes from its own stream ``numpy.random.default_rng([seed, i])``:
  it depends on (seed, i) only, so a campaign grows (``--samples``) without changing a sample;
* ``lhs``: ``scipy.stats.qmc.LatinHypercube`` seeded with ``seed`` (a stratification of all N
  samples: sample i depends on (seed, N, i); the results directory records N);
* ``sobol``: the scrambled Sobol' sequence ``scipy.stats.qmc.Sobol`` seeded with ``seed``; point i
  depends on (seed, i) only.

Each column goes through its marginal's inverse CDF (``scipy.stats``): uniform on the bounds,
normal (mean, sigma), normal truncated to the bounds. Not for the real-time loop.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy import stats
from scipy.stats import qmc

from sim_stand.campaign.spec import Campaign, Dispersion

_EPS = 1e-12


def unit_design(c: Campaign, n: int | None = None) -> np.ndarray:
    """The (n, d) unit design of campaign ``c`` (n defaults to the file's ``samples``)."""
    n = c.samples if n is None else int(n)
    d = len(c.dispersions)
    if d == 0:
        return np.zeros((n, 0))
    if c.sampling == "random":
        u = np.stack([np.random.default_rng([c.seed, i]).random(d) for i in range(n)]) if n else np.zeros((0, d))
    elif c.sampling == "lhs":
        u = qmc.LatinHypercube(d, rng=np.random.default_rng(c.seed)).random(n)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)      # "balance properties ... 2^m": any n is fine here
            u = qmc.Sobol(d, scramble=True, rng=np.random.default_rng(c.seed)).random(n)
    return np.clip(u, _EPS, 1.0 - _EPS)


def marginal(disp: Dispersion):
    """The frozen ``scipy.stats`` distribution of one dispersion."""
    if disp.distribution == "uniform":
        return stats.uniform(loc=disp.lower, scale=disp.upper - disp.lower)
    if disp.distribution == "normal":
        return stats.norm(loc=disp.mean, scale=disp.sigma)
    a = (disp.lower - disp.mean) / disp.sigma
    b = (disp.upper - disp.mean) / disp.sigma
    return stats.truncnorm(a, b, loc=disp.mean, scale=disp.sigma)


def design(c: Campaign, n: int | None = None) -> np.ndarray:
    """The (n, d) parameter values of every sample (columns: ``c.names``)."""
    u = unit_design(c, n)
    out = np.empty_like(u)
    for j, disp in enumerate(c.dispersions):
        out[:, j] = marginal(disp).ppf(u[:, j])
    return out


def sample_values(c: Campaign, index: int, n: int | None = None) -> dict[str, float]:
    """Sample ``index``'s parameter values by name (``n``: the campaign's N, needed for lhs)."""
    n = c.samples if n is None else int(n)
    if not 0 <= index < n:
        raise IndexError(f"sample {index} is not in 0 .. {n - 1}")
    if c.sampling == "random":
        d = len(c.dispersions)
        u = np.clip(np.random.default_rng([c.seed, index]).random(d), _EPS, 1.0 - _EPS) if d else np.zeros(0)
        row = [float(marginal(disp).ppf(u[j])) for j, disp in enumerate(c.dispersions)]
    else:
        row = [float(v) for v in design(c, n)[index]]
    return dict(zip(c.names, row))


__all__ = ["unit_design", "design", "marginal", "sample_values"]
