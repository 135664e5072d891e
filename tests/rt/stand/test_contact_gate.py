"""The contact gate (rt/stand/contact_gate.py): noise alone never reaches the dynamics; a
contact opens it with the withheld samples' impulse kept; it closes after the contact."""
from __future__ import annotations

import numpy as np

from rt.stand import contact_gate as CG

DT = 1e-3


def _run(g, W):
    out = np.zeros_like(W)
    for k in range(len(W)):
        CG.gate(g, W[k], out[k], True)
    return out


def test_noise_alone_stays_out():
    """100 s of 8 N (1 sigma per axis) noise: nothing passes (the 5-sigma threshold twice in a
    row); the same noise with the gate disabled passes whole."""
    rng = np.random.default_rng(7)
    W = np.zeros((100_000, 6))
    W[:, :3] = rng.normal(0.0, 8.0, (100_000, 3))
    out = _run(CG.pack_gate(True, 40.0, 25.0, 2, 0.05, DT), W)
    assert not out.any()
    np.testing.assert_array_equal(_run(CG.pack_gate(False, 40.0, 25.0, 2, 0.05, DT), W), W)


def test_contact_passes_with_its_impulse_and_the_gate_closes_after():
    """A half-sine contact of 2 kN over 0.25 s between quiet stretches: from the first sample
    above the threshold on, the dynamics receive the measured impulse exactly (the withheld
    opening sample comes with the next); what is lost is the rise below 40 N; 50 ms after the
    force has gone the gate is closed again and stays closed."""
    n = 1000
    t = np.arange(n) * DT
    f = np.where((t >= 0.2) & (t < 0.45), 2000.0 * np.sin(np.pi * (t - 0.2) / 0.25), 0.0)
    W = np.zeros((n, 6))
    W[:, 0] = f
    W[:, 4] = 0.1 * f                          # a moment with it
    g = CG.pack_gate(True, 40.0, 25.0, 2, 0.05, DT)
    out = _run(g, W)
    first = int(np.argmax(f > 40.0))
    assert not out[:first + 1].any()           # the first sample above is withheld ...
    np.testing.assert_allclose(out[first + 1], W[first + 1] + W[first])   # ... and passed with the next
    np.testing.assert_allclose(out.sum(axis=0), W[first:].sum(axis=0), rtol=1e-14)
    lost = W[:first, 0].sum() * DT
    assert 0.0 < lost < 40.0 * 0.002
    last = int(np.nonzero(f > 25.0)[0][-1])
    assert g[CG.G_OPEN] == 0.0 and not out[last + 51:].any()


def test_a_sustained_light_contact_below_the_release_threshold_closes_it():
    """The gate is for contacts that come and go: a force that stays under off_n for
    release_s is taken as over (documented limit: a sustained light contact needs lower
    thresholds)."""
    W = np.zeros((300, 6))
    W[10:20, 2] = 100.0
    W[20:, 2] = 10.0
    g = CG.pack_gate(True, 40.0, 25.0, 2, 0.05, DT)
    out = _run(g, W)
    assert out[20:69, 2].min() == 10.0 and not out[69:].any()     # the 50th sample below closes it
