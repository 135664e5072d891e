"""The delay estimator's kernel (rt/stand/delay_id.py) against a platform model of its own: a
transport delay and a second-order servo (zeta 0.8) integrated at 10 kHz, set-points held for a
1 ms cycle. On a ramp the estimate is the platform's lag as the estimator defines it; a
contact-like stretch of the motion (a half sine of the acceleration, where the servo's offset
``a (4 zeta^2 - 1) / w_n^2`` reads as extra lag, unbounded where the motion turns) leaves it
unchanged: only nearly uniform motion counts."""
from __future__ import annotations

import math

import numpy as np

from rt.stand import delay_id as DY

DT = 1e-3
SUB = 10


def _run(profile, transport_s=0.002, wn=727.0, zeta=0.8, configured_s=0.005):
    """Drive the model with the commanded positions ``profile(t)`` (3-vectors) and the
    estimator with them; returns the estimate after each cycle and the model's last position."""
    dly = DY.pack_delay_id("monitor", 0.2, 1e-3, 0.2, None, configured_s, 0.0, DT)
    ring = np.zeros((DY.ring_rows(dly), 3))
    n_tr = int(round(transport_s / (DT / SUB)))
    queue = []                                   # set-points in transport, per physics step
    y = np.zeros(3)
    ydot = np.zeros(3)
    h, filled, est = 0, 0, []
    cmd = profile(0.0)
    y[:] = cmd
    for k in range(int(round(3.0 / DT))):
        cmd = profile(k * DT)
        ring[h] = cmd
        filled = min(filled + 1, ring.shape[0])
        for _ in range(SUB):                     # the platform over the cycle
            queue.append(cmd.copy())
            u = queue.pop(0) if len(queue) > n_tr else queue[0]
            ydot += (DT / SUB) * (wn * wn * (u - y) - 2.0 * zeta * wn * ydot)
            y += (DT / SUB) * ydot
        DY.delay_update(dly, ring, h, filled, y, DT)
        est.append(dly[DY.DY_EST])
        h = (h + 1) % ring.shape[0]
    return np.array(est), y


def _ramp(t):
    return np.array([0.1 * t, 0.0, 0.0])


def _ramp_with_contact(t):
    """A ramp at 0.1 m/s with, from 1.5 s, a 'contact': the velocity reversed by a half sine of
    the acceleration over 0.05 s (w = 63 rad/s), then the ramp back at -0.1 m/s."""
    t0, T = 1.5, 0.05
    if t < t0:
        return np.array([0.1 * t, 0.0, 0.0])
    w = math.pi / T
    if t < t0 + T:
        s = t - t0                                # v = 0.1 cos(w s): a = -0.1 w sin(w s)
        return np.array([0.1 * t0 + 0.1 * math.sin(w * s) / w, 0.0, 0.0])
    return np.array([0.1 * t0 - 0.1 * (t - t0 - T), 0.0, 0.0])


def test_estimate_on_a_ramp_is_the_models_lag():
    est, y = _run(_ramp)
    # the model's steady lag on the ramp, in cycles between the command's row and the
    # position measured after the cycle (the last cycle k: y = 0.1 (k - d*) dt), T = d* dt - dt/2
    k = len(est) - 1
    d_star = k - y[0] / (0.1 * DT)
    assert np.isfinite(est[-1])
    assert abs(est[-1] - (d_star * DT - DT / 2)) < 1e-9, (est[-1], d_star)
    # about transport + 2 zeta / w_n, less the cycle this model's platform starts on at once
    assert abs(est[-1] - (0.002 + 2 * 0.8 / 727.0 - DT)) < 1e-4
    assert np.ptp(est[-1000:]) < 1e-9


def test_a_contact_does_not_move_the_estimate():
    ramp, _ = _run(_ramp)
    est, _ = _run(_ramp_with_contact)
    before = est[1499]
    assert abs(before - ramp[1499]) < 1e-9
    # through the contact and 1.45 s after it: within 1 us of the ramp's (without the gate the
    # contact's cycles pulled it by tens of microseconds at the turn)
    assert np.max(np.abs(est[1500:] - before)) < 1e-6, np.max(np.abs(est[1500:] - before))
