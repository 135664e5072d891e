"""The contact gate (rt/stand/contact_gate.py): noise alone stays (almost) out of the dynamics;
a contact opens it at once with its impulse; it closes after the contact, not while a light
contact still carries a steady force; its thresholds follow the noise it measures while nothing
touches, and so does its estimate of the noise in the wrench's change the jerk predictor uses."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rt.stand import contact_gate as CG

DT = 1e-3


def _run(g, W):
    out = np.zeros_like(W)
    for k in range(len(W)):
        CG.gate(g, W[k], out[k], True)
    return out


def _noise(n, sigma, seed=7):
    W = np.zeros((n, 6))
    W[:, :3] = np.random.default_rng(seed).normal(0.0, sigma, (n, 3))
    return W


def test_noise_alone_stays_out():
    """100 s of 8 N (1 sigma per axis) noise: with two samples in a row above 5 sigma nothing
    passes; on one sample (the shipped persist) a rare opening (chance 1.5e-5 per sample) passes
    noise for the release time only: under 0.5 % of the samples. The gate disabled passes it all."""
    W = _noise(100_000, 8.0)
    assert not _run(CG.pack_gate(True, 40.0, 25.0, 2, 0.05, DT), W).any()
    out = _run(CG.pack_gate(True, 40.0, 25.0, 1, 0.05, DT), W)
    assert np.count_nonzero(np.any(out != 0.0, axis=1)) < 0.005 * len(W)
    np.testing.assert_array_equal(_run(CG.pack_gate(False, 40.0, 25.0, 1, 0.05, DT), W), W)


def _half_sine(n=1000, peak=2000.0):
    t = np.arange(n) * DT
    f = np.where((t >= 0.2) & (t < 0.45), peak * np.sin(np.pi * (t - 0.2) / 0.25), 0.0)
    W = np.zeros((n, 6))
    W[:, 0] = f
    W[:, 4] = 0.1 * f                          # a moment with it
    return W, f


def test_contact_passes_from_its_first_sample_above_and_the_gate_closes_after():
    """A half-sine contact of 2 kN over 0.25 s between quiet stretches, the noise not yet known
    (the configured thresholds): from the first sample above 40 N on, the dynamics receive the
    measured wrench exactly (persist 1: nothing withheld to be passed in a lump); what is lost is
    the rise below 40 N; 50 ms after the force has gone the gate is closed again and stays."""
    W, f = _half_sine()
    W[:150] = 0.0
    g = CG.pack_gate(True, 40.0, 25.0, 1, 0.05, DT)
    g[CG.G_NCOUNT] = -1e9                      # the noise never known: the configured thresholds
    out = _run(g, W)
    first = int(np.argmax(f > 40.0))
    assert not out[:first].any()
    np.testing.assert_array_equal(out[first:first + 200], W[first:first + 200])
    lost = W[:first, 0].sum() * DT
    assert 0.0 < lost < 40.0 * 0.002
    last = int(np.nonzero(f > 25.0)[0][-1])
    assert g[CG.G_OPEN] == 0.0 and not out[last + 51:].any()


def test_the_thresholds_follow_the_noise():
    """After quiet samples of 1 N (1 sigma per axis) noise the gate opens at 5 sigma, not at the
    configured 40 N: a docking's light guiding contact (a few newtons for a long time) reaches
    the vehicles; 8 N of noise keeps the configured 40 N (5 sigma); a noiseless signal keeps a
    tenth of them."""
    for sigma, on in ((1.0, 5.0), (8.0, 40.0), (0.0, 4.0)):
        g = CG.pack_gate(True, 40.0, 25.0, 1, 0.05, DT)
        _run(g, _noise(3000, sigma, seed=3))
        w = np.zeros(6)
        got = np.zeros(6)
        w[0] = 0.8 * on + g[CG.G_QMEAN]
        CG.gate(g, w, got, True)
        assert not got.any() and g[CG.G_OPEN] == 0.0, (sigma, g[CG.G_QMEAN:CG.G_QMEAN + 3])
        w[0] = 1.25 * on + g[CG.G_QMEAN]
        CG.gate(g, w, got, True)
        assert g[CG.G_OPEN] == 1.0 and got[0] == w[0], sigma


def test_a_sustained_light_contact_keeps_it_open():
    """A contact that still carries a steady force below off_n (a captured stack settling) is not
    over: with the noise known, the gate closes only when the force's mean over release_s is
    within the noise of its quiet mean -- here 6 N (below the 8 N off threshold of 2 N noise)
    stays in, and the force going to noise closes it."""
    W = _noise(3000, 2.0, seed=11)
    W[1000:1100, 2] += 100.0
    W[1100:2000, 2] += 6.0
    g = CG.pack_gate(True, 40.0, 25.0, 1, 0.05, DT)
    out = _run(g, W)
    assert np.array_equal(out[1000:2000], W[1000:2000])          # all of it passed
    assert not out[2200:].any()                                 # and closed once it was noise again
    # unknown noise: the configured rule (below off_n for release_s) closes it
    g = CG.pack_gate(True, 40.0, 25.0, 1, 0.05, DT)
    g[CG.G_NCOUNT] = -1e9
    out = _run(g, W)
    assert not out[1200:2000].any()


def test_rate_noise_is_the_noise_of_the_wrench_change():
    """The noise of the change from one sample to the next, per axis, whatever filtered it: white
    noise of sigma gives sqrt(2) sigma; 0 before NOISE_MIN_COUNT quiet samples."""
    g = CG.pack_gate(True, 40.0, 25.0, 1, 0.05, DT, noise_time_constant_s=2.0)
    sig = np.zeros(6)
    W = _noise(8000, 3.0, seed=5)
    _run(g, W[:10])
    CG.rate_noise(g, sig)
    assert not sig.any()
    _run(g, W[10:])
    CG.rate_noise(g, sig)
    assert sig[:3] == pytest.approx([3.0 * math.sqrt(2.0)] * 3, rel=0.08) and not sig[3:].any()


def test_replay_is_the_gate_row_by_row():
    W, _ = _half_sine()
    W += _noise(len(W), 2.0)
    a = CG.pack_gate(True, 40.0, 25.0, 1, 0.05, DT)
    b = a.copy()
    new = np.ones(len(W))
    new[::7] = 0.0
    out_a = np.zeros_like(W)
    for k in range(len(W)):
        CG.gate(a, W[k], out_a[k], bool(new[k]))
    out_b = np.zeros_like(W)
    CG.replay(b, W, new, out_b, 0, len(W))
    np.testing.assert_array_equal(out_a, out_b)
