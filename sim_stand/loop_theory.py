"""An ideal delayed loop on an elastic rod, for the theory of docs/validation.md §3.3: what a pose
predictor can do when nothing else is wrong -- no servo, no noise, no filter, a pure delay, the
vehicles' state exact. Independent of the controller's code (its own integration, its own
predictor), it is the oracle the stand's rod grid is compared with: the grid's goal at a point
is ``max(0.05 %, 1.5 x`` this loop's CoR error there ``)`` (sim_stand/rod_grid.py).

One axis, reduced mass ``m``, rod stiffness ``k`` and damping ``c = 2 zeta sqrt(k m)``, push only
(the rod's law, sim_stand/rod.py: ``F = max(0, k x_p + c x_p')`` while ``x_p > 0``); the rod
touches at ``x = 0``. The loop samples at ``1/h`` (the stand's 1 kHz): at each sample ``t_k`` it
measures the force at the platform's pose, holds it on the vehicles over ``[t_k, t_k + h]`` (as
the stand's dynamics step does) and issues a prediction of the vehicles' pose ``tau`` ahead;
``tau - h/2`` after a prediction is issued the platform follows it, its pose and rate the
prediction's own extrapolation until the next one arrives (an ideal platform: the trajectory
it is told, exactly, late). A force measured at
``t_k`` is then that of the vehicles at ``t_k + h/2`` on average, so ``tau`` is the whole loop's
delay. The predictors, at ``t_k`` from the exact state: ``"none"`` (``x``), ``"acceleration"``
(``x + v tau + a tau^2/2``), ``"jerk"`` (``+ j tau^3/6``, with ``j`` the backward difference of the
measured accelerations over ``h``, a difference that disagrees with the one before giving way
to the median of the last three -- a damper's step at the first touch is no jerk -- and the
acceleration taken back the half sample it is ahead, ``a - j h/2``). The vehicles move exactly
under the held force. Without a loop (``tau -> h/2``, ``h -> 0``) the CoR is the rod's closed
form. :func:`ideal_error_pct` takes the largest error over the first touch's phase within a
sample. Not real-time; compiled (numba) so that a grid of points costs seconds.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

PREDICTORS = {"none": 0, "acceleration": 1, "jerk": 2}


@njit(cache=True)
def _median3(a, b, c):
    if a > b:
        a, b = b, a
    if b > c:
        b = c
    return a if a > b else b


@njit(cache=True)
def _rebound(m, k, c, tau, mode, v0, h, phase):
    w = math.sqrt(k / m)
    D = tau - 0.5 * h                                    # from a prediction's issue to the platform
    nb = int(math.ceil(D / h - 1e-12))                   # the prediction shown is issued nb samples ago ...
    s0 = nb * h - D                                      # ... and s0 into its course
    nd = nb + 2
    x0 = -2.0 * v0 * (tau + h) - 1e-3 - phase * v0 * h  # free flight to the rod: the delay line fills exactly
    x, v = x0, v0
    # the predictions issued at the last nd samples: the state (x, v) and the extrapolation (a, j)
    rx = np.empty(nd)
    rv = np.full(nd, v0)
    ra = np.zeros(nd)
    rj = np.zeros(nd)
    for i in range(nd):
        rx[i] = x0 + v0 * (i - nd + 1) * h
    head = nd - 1
    a1 = d1 = d2 = 0.0
    lead = tau if mode != 0 else 0.0
    n_samples = int((2.0 * abs(x0) / v0 + 3.0 * math.pi / w) / h) + 10
    for kk in range(n_samples):
        q = (head - nb + 1) % nd                         # issued nb samples ago (head: the last sample's)
        L = lead + s0
        xp = rx[q] + rv[q] * L + 0.5 * ra[q] * L * L + rj[q] * L ** 3 / 6.0
        vp = rv[q] + ra[q] * L + 0.5 * rj[q] * L * L
        F = k * xp + c * vp if xp > 0.0 else 0.0
        a = -F / m if F > 0.0 else 0.0
        d0 = (a - a1) / h
        if kk < 3:
            jk = 0.0
        elif abs(d0 - d1) <= 0.5 * max(abs(d0), abs(d1)):
            jk = d0
        else:
            jk = _median3(d0, d1, d2)
        d2, d1, a1 = d1, d0, a
        head = (head + 1) % nd
        rx[head], rv[head] = x, v
        ra[head] = 0.0 if mode == 0 else (a - 0.5 * h * jk if mode == 2 else a)
        rj[head] = jk if mode == 2 else 0.0
        x += v * h + 0.5 * a * h * h
        v += a * h
        if x < x0:
            break
    return -v / v0


def ideal_rebound(m: float, k: float, tau: float, predictor: str, v0: float = 0.1, h: float = 1e-3,
                  zeta: float = 0.0, phase: float = 0.0) -> float:
    """The coefficient of restitution of one contact through the ideal delayed loop of delay
    ``tau`` sampled at ``1/h`` (module docstring), the first touch ``phase`` (0..1) of a sample
    later; without a loop it is the rod's closed form (sim_stand.rod.restitution(zeta))."""
    if not tau >= 1.5 * h:
        raise ValueError(f"the loop's delay {tau:g} s must be at least one and a half samples ({1.5 * h:g} s)")
    c = 2.0 * zeta * math.sqrt(k * m)
    return float(_rebound(float(m), float(k), c, float(tau), PREDICTORS[predictor], float(v0), float(h), float(phase)))


def ideal_error_pct(m: float, k: float, tau: float, zeta: float = 0.0, predictor: str = "jerk",
                    h: float = 1e-3, phases: int = 8) -> float:
    """The ideal loop's CoR error in % of the closed form (sim_stand.rod.restitution): the
    largest over ``phases`` phases of the first touch within a sample (with its sign). Where the
    first touch falls within the 1 kHz sample is chance, and it matters for a damped contact,
    whose force steps at the touch (by ``2 zeta`` of the undamped peak): the held sample takes
    the step up to half a sample early or late, ``~ 2 zeta w h`` of the contact's energy."""
    from sim_stand.rod import restitution
    e0 = restitution(zeta)
    errs = [100.0 * (ideal_rebound(m, k, tau, predictor, h=h, zeta=zeta, phase=(i + 0.5) / phases) / e0 - 1.0)
            for i in range(phases)]
    return max(errs, key=abs)
