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


class _Platform:
    """A transport delay and a second-order servo (or, with ``lag_s``, a first-order lag: exact
    over each physics step for its held input) integrated at SUB steps a cycle, the cycle's
    set-point held over it; :meth:`cycle` returns the position at the cycle's end."""

    def __init__(self, start, transport_s=0.002, wn=727.0, zeta=0.8, lag_s=None):
        self.n_tr = int(round(transport_s / (DT / SUB)))
        self.queue = []                              # set-points in transport, per physics step
        self.y = np.array(start, dtype=float)
        self.ydot = np.zeros_like(self.y)
        self.wn, self.zeta, self.lag_s = wn, zeta, lag_s

    def cycle(self, cmd):
        for _ in range(SUB):
            self.queue.append(np.array(cmd, dtype=float))
            u = self.queue.pop(0) if len(self.queue) > self.n_tr else self.queue[0]
            if self.lag_s is None:
                self.ydot += (DT / SUB) * (self.wn ** 2 * (u - self.y) - 2.0 * self.zeta * self.wn * self.ydot)
                self.y += (DT / SUB) * self.ydot
            else:
                self.y += (1.0 - math.exp(-(DT / SUB) / self.lag_s)) * (u - self.y)
        return self.y


def _run(profile, transport_s=0.002, wn=727.0, zeta=0.8, configured_s=0.005, lag_s=None, seconds=3.0, kappa=None):
    """Drive the platform with the commanded positions ``profile(t)`` (3-vectors) and the
    estimator with them; returns the estimate after each cycle and the platform's last position
    (with ``kappa`` a list: the acceleration offset after each cycle appended to it)."""
    dly = DY.pack_delay_id("monitor", 0.2, 1e-3, 0.2, None, configured_s, 0.0, DT)
    ring = np.zeros((DY.ring_rows(dly), 3))
    plat = _Platform(profile(0.0), transport_s, wn, zeta, lag_s)
    h, filled, est = 0, 0, []
    for k in range(int(round(seconds / DT))):
        cmd = profile(k * DT)
        ring[h] = cmd
        filled = min(filled + 1, ring.shape[0])
        y = plat.cycle(cmd)
        DY.delay_update(dly, ring, h, filled, y, DT)
        est.append(dly[DY.DY_EST])
        if kappa is not None:
            kappa.append(dly[DY.DY_KAPPA])
        h = (h + 1) % ring.shape[0]
    return np.array(est), y


def _kappa_of_response(f_hz, lag_rows, **platform):
    """The oracle: the platform's acceleration offset at ``f_hz`` from its frequency response
    between the cycles' set-points and the positions at the cycles' ends, H = sum_m h_m
    e^{-j w m dt} over its impulse response h (the platform alone: no estimator), shifted by the
    lag the estimator identified: kappa = (1 - Re(H e^{j w lag})) / w^2 -- the part of the
    response in phase with the acceleration, which is what a fit r = kappa a - eps v measures."""
    plat = _Platform([0.0], **platform)
    plat.queue = [np.zeros(1) for _ in range(plat.n_tr)]      # at rest before the impulse
    h = np.array([plat.cycle([1.0 if m == 0 else 0.0])[0] for m in range(2000)])
    w = 2.0 * math.pi * f_hz
    H = np.sum(h * np.exp(-1j * w * DT * np.arange(h.size)))
    return (1.0 - (H * np.exp(1j * w * lag_rows * DT)).real) / (w * w)


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


def _ramp_and_swing(t):
    """A ramp at 0.1 m/s (the delay is identified on it) with, from 1 s, a swing on top:
    0.02 m at 8 Hz along x and y (accelerations to 50 m/s^2, the motion a contact makes)."""
    if t < 1.0:
        return np.array([0.1 * t, 0.0, 0.0])
    w = 2.0 * math.pi * 8.0
    s = t - 1.0
    return np.array([0.1 * t + 0.02 * math.sin(w * s), 0.02 * (1.0 - math.cos(w * s)), 0.0])


def _lag_rows(est):
    return est / DT + 0.5                   # delay_update's T = (d* - 1/2) dt, no status latency


def test_a_first_order_lag_is_identified_by_its_acceleration_offset():
    """A platform of 1 ms transport and a first-order lag T1 (2 and 4 ms): on the ramp the
    delay is transport + T1 (a lag's ramp offset); under the swing's acceleration the offset
    kappa against the platform's own frequency response (to 0.5 %), and T1 back from kappa
    (first_order_lag_s: the lag sampled once a cycle, kappa = dt^2 / (8 sinh^2(dt / 2 T1)) =
    T1^2 / 2 - dt^2 / 24 + ...; the swing's frequency shifts it by -(3/8) w^2 T1^4: 1 % at 4 ms)."""
    for lag in (0.002, 0.004):
        kap = []
        est, _ = _run(_ramp_and_swing, transport_s=0.001, lag_s=lag, seconds=4.0, kappa=kap)
        assert abs(est[999] - (0.001 + lag - DT)) < 1e-4, (lag, est[999])   # as for the servo: less a cycle
        assert np.isnan(kap[999]) and np.isfinite(kap[-1])
        oracle = _kappa_of_response(8.0, _lag_rows(est[-1]), transport_s=0.001, lag_s=lag)
        assert abs(kap[-1] / oracle - 1.0) < 0.005, (lag, kap[-1], oracle)
        assert abs(DY.first_order_lag_s(kap[-1], DT) / lag - 1.0) < 0.015, (lag, DY.first_order_lag_s(kap[-1], DT))
        assert np.ptp(est[1000:]) < 1e-9                  # the swing leaves the delay alone


def test_the_servo_acceleration_offset_and_no_lag_where_there_is_none():
    """The second-order servo: kappa against its frequency response (continuous: (2 zeta^2 - 1)
    / w_n^2); zeta 0.5: kappa < 0, no first-order lag to report."""
    for zeta in (0.8, 0.5):
        kap = []
        est, _ = _run(_ramp_and_swing, transport_s=0.001, zeta=zeta, seconds=4.0, kappa=kap)
        oracle = _kappa_of_response(8.0, _lag_rows(est[-1]), transport_s=0.001, zeta=zeta)
        assert abs(kap[-1] - oracle) < 0.01 * abs(oracle), (zeta, kap[-1], oracle, (2 * zeta ** 2 - 1) / 727.0 ** 2)
    assert kap[-1] < 0 and math.isnan(DY.first_order_lag_s(kap[-1], DT))
