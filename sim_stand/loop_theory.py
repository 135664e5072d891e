"""An ideal delayed loop on an elastic rod, for the theory of docs/validation.md §3.3: what a pose
predictor can do when nothing else is wrong -- no sampling of the force, no servo, no noise, a
pure delay, the vehicles' state exact. Independent of the controller's code (its own
integration, its own predictor), it is the oracle the stand's rod grid is compared with.

One axis, reduced mass ``m``, rod stiffness ``k`` (push only): the vehicles' relative position
``x`` (the rod touches at ``x = 0``) moves under ``F = -k x_p`` (``x_p > 0``), where the platform
pose ``x_p(t)`` is the prediction made at ``t - tau`` of the vehicles' pose at ``t``. The
predictors: ``"none"`` (``x``), ``"acceleration"`` (``x + v tau + a tau^2/2``), ``"jerk"``
(``+ j tau^3/6``, the jerk a backward difference of the accelerations over ``h``: a loop that
samples at 1/h). Integration: semi-implicit Euler at ``dt`` (1e-5 s: its own error ~1e-5 of the
CoR). Not real-time.
"""
from __future__ import annotations

import math

import numpy as np


def ideal_rebound(m: float, k: float, tau: float, predictor: str, v0: float = 0.1, dt: float = 1e-5,
                  h: float = 1e-3) -> float:
    """The coefficient of restitution of one contact through the ideal delayed loop (module
    docstring); the closed form without a loop is 1."""
    n_tau = int(round(tau / dt))
    n_h = max(1, int(round(h / dt)))
    w = math.sqrt(k / m)
    x0 = -2.0 * v0 * tau - 1e-3                          # free flight to the rod: the delay line fills exactly
    x, v = x0, v0
    line = np.array([x0 + v0 * (i * dt) for i in range(n_tau)])   # predictions in flight (free motion)
    acc = np.zeros(n_h)
    i = ia = 0
    steps = int((2.0 * abs(x0) / v0 + 3.0 * math.pi / w) / dt)
    for _ in range(steps):
        xp = line[i]
        a = -k * xp / m if xp > 0.0 else 0.0
        jerk = (a - acc[ia]) / h
        acc[ia] = a
        ia = (ia + 1) % n_h
        pred = x
        if predictor != "none":
            pred = x + v * tau + 0.5 * a * tau * tau
            if predictor == "jerk":
                pred += jerk * tau ** 3 / 6.0
        line[i] = pred
        i = (i + 1) % n_tau
        v += a * dt
        x += v * dt
        if x < x0:
            break
    return -v / v0
