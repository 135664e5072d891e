"""The contact gate: what of the measured wrench the vehicles' dynamics receive (issue 26; docs/
validation.md §3.2).

Outside contact the F/T sensor still reads its noise (8 N sigma on the rod stand). Integrated
into the vehicles' dynamics, zero-mean noise random-walks their velocities: sigma_v =
sigma_F sqrt(T dt) / m* after T seconds of free flight (for 1.6 t of reduced mass, 1.5 s at
1 kHz: 1.9e-4 m/s, 0.19 % of a 0.1 m/s closing speed) — energy the stand invents or removes
before and after every impact. A low-pass does not help: it keeps the noise's DC content,
which is what integrates.

The gate passes the measured wrench only in contact and zero outside:

* it opens when ``|f|`` exceeds ``on_n`` on ``persist`` consecutive samples (noise alone: the
  chance that a 3-axis Gaussian of sigma s exceeds 5 s is 1.5e-5 per sample, twice in a row
  2e-10); the withheld samples of those ``persist - 1`` cycles are passed with the opening one,
  so their impulse is not lost (what is lost is the rise below ``on_n``: ~on_n^2 / (2 k v), 0.03
  N s on the rod against 320 N s exchanged). The shipped ``persist`` is 1: a lump of withheld
  samples passed at once is a step of the force, which the prediction's lead turns into a
  spike of the command (berthing's capture: 5.7 rad/s^2 against a 5.2 rad/s^2 trip);
* once the sensor's noise is known (below), ``|f|`` is the force's distance from its mean while
  nothing touched (a bias drift is not a contact), and the thresholds are at most
  :data:`ON_SIGMA` / :data:`OFF_SIGMA` per-axis sigmas of that noise (and at least
  :data:`MIN_FRACTION` of the configured ones): what the configured ones
  are for a noisy sensor, the measured noise lowers for a quiet one, so that a docking's light
  guiding contacts (tens of newtons for hundreds of milliseconds) are not withheld;
* it closes when ``|f|`` has stayed below ``off_n`` for ``release_s`` (a contact's force
  passes through zero only at its ends) and, once the sensor's noise is known (below), the
  force's mean over that time is within one standard deviation of the noise (the norm of the
  three axes') of its mean while nothing touched: a contact that still carries a steady force
  lighter than ``off_n`` (a captured stack settling: the berthing snare's 15 N) is not over, and
  cutting it would both withhold a real force and step the vehicles' acceleration. Otherwise the
  next ``release_s`` is judged.

While nothing touches (closed and ``|f|`` below ``on_n``) the gate also measures the sensor's
noise as the dynamics would receive it: the exponentially weighted mean and mean square of each
force axis and the mean square of the wrench's change from one sample to the next, per axis
(time constant ``noise_time_constant_s``; kept from run to run: it is the sensor's), whatever
filter coloured it. The constant-jerk predictor judges
a change of the wrench in contact against it (:func:`rate_noise`; ``rt.dynamics.coupling.
jerk_estimate``): a jerk the noise could make is no jerk.

Layout: parameters G_ON, G_OFF, G_PERSIST, G_RELEASE (cycles), G_ENABLED, G_NLAM (the noise
mean's weight per sample); state G_OPEN, G_ABOVE (consecutive samples above on_n), G_BELOW
(consecutive below off_n), G_HELD (6: the withheld wrench's sum), G_NPREV (6: the last sample),
G_NVAR (6: the mean square change), G_NCOUNT (quiet changes counted), G_QMEAN / G_QMSQ (3 each:
the quiet force's mean and mean square), G_BSUM (3: the force summed over the samples below
off_n).

Kernels: ``@njit(**rt.jit.KERNEL)``, allocation-free: may be called in the real-time loop.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt.jit import KERNEL

G_ENABLED, G_ON, G_OFF, G_PERSIST, G_RELEASE = 0, 1, 2, 3, 4
G_OPEN, G_ABOVE, G_BELOW, G_HELD = 5, 6, 7, 8
G_NLAM = 14
G_NPREV, G_NVAR, G_NCOUNT = 15, 21, 27
G_QMEAN, G_QMSQ, G_BSUM = 28, 31, 34
G_LEN = 37
NOISE_MIN_COUNT = 20             # quiet changes before the noise's estimate is used (rate_noise, the thresholds)
ON_SIGMA, OFF_SIGMA = 5.0, 4.0   # the thresholds once the noise is known: |f - quiet mean| in per-axis sigmas
MIN_FRACTION = 0.1               # ... but not below this fraction of the configured ones (a noiseless signal)


def pack_gate(enabled: bool, on_n: float, off_n: float, persist: int, release_s: float, dt: float,
              noise_time_constant_s: float = 0.5) -> np.ndarray:
    """The gate's array (Python, once per stand)."""
    g = np.zeros(G_LEN)
    g[G_ENABLED] = 1.0 if enabled else 0.0
    g[G_ON], g[G_OFF] = on_n, off_n
    g[G_PERSIST] = max(1, int(persist))
    g[G_RELEASE] = max(1, int(round(release_s / dt)))
    g[G_NLAM] = math.exp(-dt / noise_time_constant_s)
    gate_reset(g)
    return g


@njit(**KERNEL)
def _noise_known(g):
    return g[G_NCOUNT] > NOISE_MIN_COUNT


@njit(**KERNEL)
def _level(g, w_P):
    """``(|f - m|, on, off)``: the force's distance from its quiet mean ``m`` and the thresholds
    in effect (module docstring); before the noise is known ``m = 0`` and the configured ones."""
    if not _noise_known(g):
        return math.sqrt(w_P[0] * w_P[0] + w_P[1] * w_P[1] + w_P[2] * w_P[2]), g[G_ON], g[G_OFF]
    f2 = 0.0
    var = 0.0
    for i in range(3):
        m = g[G_QMEAN + i]
        d = w_P[i] - m
        f2 += d * d
        var += max(0.0, g[G_QMSQ + i] - m * m)
    sig = math.sqrt(var / 3.0)
    on = min(g[G_ON], max(MIN_FRACTION * g[G_ON], ON_SIGMA * sig))
    off = min(g[G_OFF], max(MIN_FRACTION * g[G_OFF], OFF_SIGMA * sig))
    return math.sqrt(f2), on, off


@njit(**KERNEL)
def _noise_update(g, w_P):
    """The noise's mean square change (module docstring), on a new sample."""
    f, on, _ = _level(g, w_P)
    if g[G_OPEN] == 0.0 and f < on:
        if g[G_NCOUNT] >= 0.5:
            lam = g[G_NLAM] if g[G_NCOUNT] > 1.0 / (1.0 - g[G_NLAM]) else 1.0 - 1.0 / g[G_NCOUNT]
            for i in range(6):
                d = w_P[i] - g[G_NPREV + i]
                g[G_NVAR + i] = lam * g[G_NVAR + i] + (1.0 - lam) * d * d
            for i in range(3):
                g[G_QMEAN + i] = lam * g[G_QMEAN + i] + (1.0 - lam) * w_P[i]
                g[G_QMSQ + i] = lam * g[G_QMSQ + i] + (1.0 - lam) * w_P[i] * w_P[i]
        g[G_NCOUNT] += 1.0
    for i in range(6):
        g[G_NPREV + i] = w_P[i]


@njit(**KERNEL)
def _contact_over(g):
    """After ``release`` samples below off_n: is the mean force of those samples noise (module
    docstring)? True also while the noise is not known yet."""
    if not _noise_known(g):
        return True
    n = g[G_BELOW]
    var = 0.0
    dev = 0.0
    for i in range(3):
        m = g[G_QMEAN + i]
        var += max(0.0, g[G_QMSQ + i] - m * m)
        d = g[G_BSUM + i] / n - m
        dev += d * d
    return dev <= var


@njit(**KERNEL)
def rate_noise(g, sigma):
    """``sigma`` (6) = the sensor noise's standard deviation in the wrench's change from one
    sample to the next, per axis (N, N m), once :data:`NOISE_MIN_COUNT` quiet changes are
    counted; 0 before (unknown)."""
    ok = _noise_known(g)
    for i in range(6):
        sigma[i] = math.sqrt(g[G_NVAR + i]) if ok else 0.0


@njit(**KERNEL)
def _block_reset(g):
    g[G_BELOW] = 0.0
    for i in range(3):
        g[G_BSUM + i] = 0.0


@njit(**KERNEL)
def gate_reset(g):
    """Closed, nothing withheld (at the start of every run; the noise's estimate is kept)."""
    g[G_OPEN] = 0.0
    g[G_ABOVE] = 0.0
    _block_reset(g)
    for i in range(6):
        g[G_HELD + i] = 0.0


@njit(**KERNEL)
def gate(g, w_P, w_out, new_sample):
    """``w_out`` = what the dynamics receive of the measured wrench ``w_P`` this cycle (module
    docstring); the gate's counters advance only on a ``new_sample``."""
    if new_sample:
        _noise_update(g, w_P)
    if g[G_ENABLED] == 0.0:
        for i in range(6):
            w_out[i] = w_P[i]
        return
    if new_sample:
        f, on, off = _level(g, w_P)
        if g[G_OPEN] != 0.0:
            if f < off:
                g[G_BELOW] += 1.0
                for i in range(3):
                    g[G_BSUM + i] += w_P[i]
            else:
                _block_reset(g)
            if g[G_BELOW] >= g[G_RELEASE]:
                if _contact_over(g):
                    gate_reset(g)
                else:
                    _block_reset(g)
        elif f > on:
            g[G_ABOVE] += 1.0
            if g[G_ABOVE] >= g[G_PERSIST]:
                g[G_OPEN] = 1.0
                _block_reset(g)
                for i in range(6):                  # the withheld samples' impulse, now
                    w_out[i] = w_P[i] + g[G_HELD + i]
                    g[G_HELD + i] = 0.0
                return
            for i in range(6):
                g[G_HELD + i] += w_P[i]
        else:
            g[G_ABOVE] = 0.0
            for i in range(6):
                g[G_HELD + i] = 0.0
    if g[G_OPEN] != 0.0:
        for i in range(6):
            w_out[i] = w_P[i]
    else:
        for i in range(6):
            w_out[i] = 0.0


@njit(**KERNEL)
def replay(g, W, new_sample, out, lo, hi):
    """:func:`gate` over the rows ``lo:hi`` of a logged wrench ``W`` (n x 6) with the rows'
    ``new_sample`` flags (non-zero: a new sample) into ``out`` (the energy audit's replay of
    what the dynamics received; rt.analysis.report). Not for the real-time loop's cycle (the
    writer thread's audit; compiled by the controller's warm-up)."""
    for i in range(lo, hi):
        gate(g, W[i], out[i], new_sample[i] != 0.0)
