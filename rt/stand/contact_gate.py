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
  2e-10); the withheld samples of those ``persist - 1`` cycles are not lost, nor is the
  contact's rise below ``on_n``. The withheld samples are the contact itself (above ``on_n``):
  they pass whole with the opening one, as early as the gate knows them. The samples before
  them, back while their force points the way the opening force does (``f_j . u > 0``: a
  contact's rise; noise alone stops it within a sample or two), up to :data:`LOOKBACK` in all,
  are passed from the opening on, spread over as many cycles as they held (their impulse in
  one sample is a spike of the command's acceleration, ``tau^2 / (2 dt^2)`` times it: 200
  times at a robot's 20 ms lead). Without it the rise's impulse
  ~``on_n^2 / (2 k v)`` was lost: ``(on_n / F_peak)^2 / 2`` of the rebound, 0.005 % at a 4 kN
  peak but 0.9 % at 300 N (a light, soft contact of the rod grid). The withheld samples were
  once spread with the rise: a damper's first sample (its force steps to ``c v`` at the touch)
  then came late by half the look-back -- 32 ms where a tared sensor's small bias pointed the
  contact's way before the touch and no noise broke the run, +0.064 % of CoR on the rod at
  m* 1.6 t, k 2e5 N/m, zeta 0.3 (docs/validation.md §3.3, "The onset's sampling");
* it closes when ``|f|`` has stayed below ``off_n`` for ``release_s`` (a contact's force
  passes through zero only at its ends).

Layout: parameters G_ON, G_OFF, G_PERSIST, G_RELEASE (cycles), G_ENABLED; state G_OPEN,
G_ABOVE (consecutive samples above on_n), G_BELOW (consecutive below off_n), G_HELD (6: the
withheld wrench's sum), G_DEBT (6: the recovered rise still to pass, per cycle) and G_DEBT_N
(cycles it still lasts), G_RHEAD / G_RCOUNT and G_RING (LOOKBACK x 6: the last samples while
closed, N and N·m, P).

Kernels: ``@njit(**rt.jit.KERNEL)``, allocation-free: may be called in the real-time loop.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt.jit import KERNEL

G_ENABLED, G_ON, G_OFF, G_PERSIST, G_RELEASE = 0, 1, 2, 3, 4
G_OPEN, G_ABOVE, G_BELOW, G_HELD = 5, 6, 7, 8
G_DEBT = G_HELD + 6
G_DEBT_N = G_DEBT + 6
G_RHEAD, G_RCOUNT = G_DEBT_N + 1, G_DEBT_N + 2
G_RING = G_RCOUNT + 1
LOOKBACK = 64          # samples kept while closed (64 ms at 1 kHz: a 40 N rise at 0.6 N/ms)
G_LEN = G_RING + 6 * LOOKBACK


def pack_gate(enabled: bool, on_n: float, off_n: float, persist: int, release_s: float, dt: float) -> np.ndarray:
    """The gate's array (Python, once per stand)."""
    g = np.zeros(G_LEN)
    g[G_ENABLED] = 1.0 if enabled else 0.0
    g[G_ON], g[G_OFF] = on_n, off_n
    g[G_PERSIST] = max(1, int(persist))
    g[G_RELEASE] = max(1, int(round(release_s / dt)))
    gate_reset(g)
    return g


@njit(**KERNEL)
def gate_reset(g):
    """Closed, nothing withheld (at the start of every run).

    Parameters
    ----------
    g : float64[G_LEN]
        The gate's array (:func:`pack_gate`); its state is cleared.
    """
    g[G_OPEN] = 0.0
    g[G_ABOVE] = 0.0
    g[G_BELOW] = 0.0
    for i in range(6):
        g[G_HELD + i] = 0.0
        g[G_DEBT + i] = 0.0
    g[G_DEBT_N] = 0.0
    g[G_RHEAD] = 0.0
    g[G_RCOUNT] = 0.0


@njit(**KERNEL)
def _recover_rise(g, w_P, w_out):
    """At the opening: ``w_out`` = the opening sample and the withheld window (``G_HELD``, the
    samples above ``on_n`` before it: the contact itself) whole; the samples kept before the
    window, back while they point the way the opening force does (the rise below ``on_n``,
    module docstring), summed into ``G_DEBT`` as a per-cycle share over as many cycles
    (``G_DEBT_N``)."""
    fx, fy, fz = w_P[0], w_P[1], w_P[2]
    head = int(g[G_RHEAD])
    count = int(g[G_RCOUNT])
    for i in range(6):
        w_out[i] = w_P[i] + g[G_HELD + i]
        g[G_HELD + i] = 0.0
        g[G_DEBT + i] = 0.0
    n = 0
    for j in range(int(g[G_PERSIST]) - 1, count):     # the rise before the window
        r = G_RING + 6 * ((head - 1 - j) % LOOKBACK)
        if g[r] * fx + g[r + 1] * fy + g[r + 2] * fz <= 0.0:
            break
        for i in range(6):
            g[G_DEBT + i] += g[r + i]
        n += 1
    if n > 0:
        for i in range(6):
            g[G_DEBT + i] /= n
    g[G_DEBT_N] = n


@njit(**KERNEL)
def _keep(g, w_P):
    """The sample into the lookback ring (while closed)."""
    head = int(g[G_RHEAD])
    r = G_RING + 6 * head
    for i in range(6):
        g[r + i] = w_P[i]
    g[G_RHEAD] = (head + 1) % LOOKBACK
    if g[G_RCOUNT] < LOOKBACK:
        g[G_RCOUNT] += 1.0


@njit(**KERNEL)
def _pay_debt(g, w_out):
    """One cycle's share of the recovered rise onto ``w_out``."""
    if g[G_DEBT_N] > 0.0:
        for i in range(6):
            w_out[i] += g[G_DEBT + i]
        g[G_DEBT_N] -= 1.0


@njit(**KERNEL)
def gate(g, w_P, w_out, new_sample):
    """``w_out`` = what the dynamics receive of the measured wrench ``w_P`` this cycle (module
    docstring); the gate's counters advance only on a ``new_sample``.

    Parameters
    ----------
    g : float64[G_LEN]
        The gate's array (:func:`pack_gate`): parameters, and its state, updated.
    w_P : float64[6]
        The measured contact wrench on the passive unit, P, N and N·m.
    w_out : float64[6]
        Written: the wrench the dynamics receive, P, N and N·m.
    new_sample : bool
        A new sensor sample arrived this cycle.
    """
    if g[G_ENABLED] == 0.0:
        for i in range(6):
            w_out[i] = w_P[i]
        return
    if new_sample:
        f = math.sqrt(w_P[0] * w_P[0] + w_P[1] * w_P[1] + w_P[2] * w_P[2])
        if g[G_OPEN] != 0.0:
            g[G_BELOW] = g[G_BELOW] + 1.0 if f < g[G_OFF] else 0.0
            if g[G_BELOW] >= g[G_RELEASE]:
                gate_reset(g)
        elif f > g[G_ON]:
            g[G_ABOVE] += 1.0
            if g[G_ABOVE] >= g[G_PERSIST]:
                g[G_OPEN] = 1.0
                g[G_BELOW] = 0.0
                _recover_rise(g, w_P, w_out)        # the window whole, the rise from now on, spread
                _pay_debt(g, w_out)
                return
            for i in range(6):
                g[G_HELD + i] += w_P[i]
        else:
            g[G_ABOVE] = 0.0
            for i in range(6):
                g[G_HELD + i] = 0.0
        if g[G_OPEN] == 0.0:
            _keep(g, w_P)
    if g[G_OPEN] != 0.0:
        for i in range(6):
            w_out[i] = w_P[i]
        if new_sample:
            _pay_debt(g, w_out)
    else:
        for i in range(6):
            w_out[i] = 0.0
