"""Online identification of the platform's delay (issue 26 item 2; docs/validation.md §3.1).

The loop's delay is mostly the motion platform's (transport + servo lag), and it is taken from
the stand config; when the real platform's differs (temperature, load, firmware) the
compensator predicts to the wrong horizon and the contact gains or loses energy. The
controller sees what the platform does: every cycle it sends a set-point and reads the measured
top pose (STATUS), so the lag between the two is observable whenever the platform moves.

Estimator: for each candidate lag of d cycles (d = 0 .. n - 1) an exponentially weighted mean

    E_d <- lam E_d + (1 - lam) |p_meas(k) - p_cmd(k - d)|^2 / |v_cmd(k)|^2      (s^2)

over the cycles with a new STATUS, a commanded speed above ``v_min`` and a commanded
acceleration below ``ACC_GATE |v_cmd| / tau_cfg`` (``p``: the platform top's position in its
base frame; ``v_cmd`` the command's velocity over the last cycle, ``a_cmd`` its acceleration
over the last 2 ``ACC_SPAN`` cycles: the sensor noise moves the command's acceleration from
cycle to cycle by ~0.5 m/s^2 in free flight, sixteen times less over four).
Only nearly uniform motion counts: a servo that follows a ramp with the lag 2 zeta / w_n follows
an acceleration ``a`` with a further offset ``a (4 zeta^2 - 1) / w_n^2``, which reads as a lag
``(a / v) (4 zeta^2 - 1) / w_n^2`` -- in a contact (a / v ~ w) tens of microseconds, and
without bound where the contact turns the motion round (v -> 0); the gate keeps that below
``ACC_GATE`` (4 zeta^2 - 1) / (w_n^2 tau_cfg), a few microseconds. For a
platform that follows its set-points with an effective delay T, ``p_meas(t) = p_cmd(t - T')``
and ``E_d ~ (d dt - T')^2``: a parabola in d with its vertex at T' / dt, which the three
points around the smallest E_d give exactly (sub-cycle). From the lag d* (cycles) between a
set-point's row and the measurement's row,

    T = d* dt - dt / 2 - status_latency

is the delay the pose predictor (``rt.dynamics.coupling.predict_pose``) must lead by: the
command of cycle i extrapolates the vehicles to t_i + dt + tau; the platform is there d*
cycles later (less the STATUS report's own latency, ``status_latency_s``: 0 in lockstep, where
STATUS leaves with the sample); the force it then meets is measured at the end of a cycle and
held over the next, so the vehicles feel it half a cycle later on average. Lead and lags
cancel when tau = T. (For a platform of transport delay T_d and second-order servo lag
2 zeta / w_n driven by set-points held over a cycle, T = T_d + 2 zeta / w_n; the emulated
one's, integrated at 10 kHz, is ~0.1 ms shorter.)

The estimate is valid after ``n_min`` updates; it is written to the run-log record ``delay``
(with the delay the compensator used) and published in telemetry with it. The cycles the gate
leaves out (accelerating) identify the platform's acceleration offset kappa instead
(:func:`acceleration_offset_update`; a first-order lag's time constant from it:
:func:`first_order_lag_s`),
logged and published in the same record; the compensator leads by the delay alone (a lag's
ramp offset is in it; kappa is reported, not compensated). In mode "feed" the
run-up leads by the configured delay and the dynamics then move the lead smoothly to the
identified one (:func:`compensated_delay`: the arming move identified it meanwhile); outside
``[lo, hi]`` it trips DELAY_OUT_OF_BAND (``rt.control.kernels.supervise``).

Kernels: ``@njit(**rt.jit.KERNEL)``, allocation-free: may be called in the real-time loop.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt.jit import KERNEL

# parameters
DY_ON, DY_FEED, DY_LAM, DY_VMIN, DY_NMIN, DY_LO, DY_HI, DY_CFG, DY_STATUS = 0, 1, 2, 3, 4, 5, 6, 7, 8
# state (DY_RATE: the rate of the lead the compensator uses, compensated_delay; DY_SRA ..
# DY_KAPPA: the acceleration offset's regression, acceleration_offset_update)
DY_COUNT, DY_EST, DY_RATE = 9, 10, 11
DY_SRA, DY_SRV, DY_SAA, DY_SAV, DY_SVV, DY_KCOUNT, DY_KAPPA = 12, 13, 14, 15, 16, 17, 18
DY_E = 19                       # E_d for d = 0 .. n_lags - 1
# the run-log record "delay": identified platform delay (s; NaN until valid), the delay the
# compensator used this cycle (s; NaN outside the dynamics), the identified acceleration
# offset kappa (s^2; NaN until valid)
DR_ID, DR_USED, DR_KAPPA = 0, 1, 2
DR_LEN = 3
KAPPA_SPAN = 2                  # cycles either side of the lag for the commanded acceleration there
ACC_GATE = 0.01                 # updates only while |a_cmd| tau_cfg <= ACC_GATE |v_cmd| (module docstring)
ACC_SPAN = 4                    # cycles between the three commands a_cmd is taken from (the noise's share / 16)


def pack_delay_id(mode: str, time_constant_s: float, v_min_m_s: float, settle_s: float, band_s: tuple | None,
                  configured_s: float, status_latency_s: float, dt: float) -> np.ndarray:
    """The estimator's array (parameters, state, one E_d per candidate lag) for ``mode`` "off" |
    "monitor" | "feed" (Python, once per stand). The lags searched reach three cycles past the
    band's top (``band_s`` None: no band check, the lags reach 3 x the configured delay, at
    least 10 ms)."""
    top = band_s[1] if band_s is not None else max(3.0 * configured_s, 0.01)
    n_lags = int(math.ceil((top + status_latency_s) / dt + 0.5)) + 3
    a = np.zeros(DY_E + n_lags)
    a[DY_ON] = 0.0 if mode == "off" else 1.0
    a[DY_FEED] = 1.0 if mode == "feed" else 0.0
    a[DY_LAM] = math.exp(-dt / time_constant_s)
    a[DY_VMIN] = v_min_m_s
    a[DY_NMIN] = max(3.0, round(settle_s / dt))
    a[DY_LO], a[DY_HI] = band_s if band_s is not None else (-math.inf, math.inf)
    a[DY_CFG] = configured_s
    a[DY_STATUS] = status_latency_s
    delay_reset(a)
    return a


def ring_rows(dly: np.ndarray) -> int:
    """Rows the command ring needs for every candidate lag (and the last cycle's speed), and for
    the acceleration over 2 ACC_SPAN cycles."""
    return max(dly.shape[0] - DY_E + 1, 2 * ACC_SPAN + 1)


@njit(**KERNEL)
def delay_reset(dly):
    """Forget what was identified (at every arm: a new run, maybe a new platform state).

    Parameters
    ----------
    dly : float64[DY_E + n_lags]
        The estimator's array (:func:`pack_delay_id`); its state is cleared, parameters kept.
    """
    dly[DY_COUNT] = 0.0
    dly[DY_EST] = math.nan
    dly[DY_RATE] = 0.0
    for i in range(DY_SRA, DY_KCOUNT + 1):
        dly[i] = 0.0
    dly[DY_KAPPA] = math.nan
    for i in range(DY_E, dly.shape[0]):
        dly[i] = 0.0


@njit(**KERNEL)
def delay_valid(dly):
    """True when the estimator is on and has had ``n_min`` updates.

    Parameters
    ----------
    dly : float64[DY_E + n_lags]
        The estimator's array (:func:`pack_delay_id`); its switch ``DY_ON``, update count and
        ``n_min`` are read.
    """
    return dly[DY_ON] != 0.0 and dly[DY_COUNT] >= dly[DY_NMIN]


@njit(**KERNEL)
def delay_update(dly, ring, h, filled, status_pos, dt):
    """One update (module docstring) after the ring's slot ``h`` received this cycle's command;
    ``filled``: how many slots hold commands; ``status_pos``: the measured top position of the
    STATUS that arrived this cycle.

    Parameters
    ----------
    dly : float64[DY_E + n_lags]
        The estimator's array (:func:`pack_delay_id`); its state is updated.
    ring : float64[n_rows, 3]
        The commands sent, one row per cycle: the top position p_BT_B, m (:func:`ring_rows` rows).
    h : int
        Row of this cycle's command in ring.
    filled : int
        How many rows of ring hold commands.
    status_pos : float64[>=3]
        The top position p_BT_B of the STATUS that arrived this cycle, m (its first three entries).
    dt : float
        The cycle period, s.
    """
    if dly[DY_ON] == 0.0:
        return
    n = ring.shape[0]
    nl = dly.shape[0] - DY_E
    if filled < nl + 1 or nl + 1 > n:
        return
    hp = (h - 1) % n
    v2 = ((ring[h, 0] - ring[hp, 0]) ** 2 + (ring[h, 1] - ring[hp, 1]) ** 2 + (ring[h, 2] - ring[hp, 2]) ** 2) / (dt * dt)
    if not v2 > dly[DY_VMIN] * dly[DY_VMIN]:
        return
    if filled > 2 * ACC_SPAN and n > 2 * ACC_SPAN:
        h1, h2 = (h - ACC_SPAN) % n, (h - 2 * ACC_SPAN) % n
        a2 = 0.0
        for i in range(3):
            a2 += (ring[h, i] - 2.0 * ring[h1, i] + ring[h2, i]) ** 2
        a2 /= (ACC_SPAN * dt) ** 4
        if a2 * dly[DY_CFG] * dly[DY_CFG] > ACC_GATE * ACC_GATE * v2:
            acceleration_offset_update(dly, ring, h, filled, status_pos, dt)
            return
    lam = dly[DY_LAM]
    for d in range(nl):
        j = (h - d) % n
        e2 = ((status_pos[0] - ring[j, 0]) ** 2 + (status_pos[1] - ring[j, 1]) ** 2
              + (status_pos[2] - ring[j, 2]) ** 2)
        dly[DY_E + d] = lam * dly[DY_E + d] + (1.0 - lam) * e2 / v2
    dly[DY_COUNT] += 1.0
    if dly[DY_COUNT] < dly[DY_NMIN]:
        return
    k = 1
    for d in range(2, nl - 1):
        if dly[DY_E + d] < dly[DY_E + k]:
            k = d
    em, e0, ep = dly[DY_E + k - 1], dly[DY_E + k], dly[DY_E + k + 1]
    c = em - 2.0 * e0 + ep
    delta = 0.5 * (em - ep) / c if c > 0.0 else 0.0
    if delta > 0.5:
        delta = 0.5
    elif delta < -0.5:
        delta = -0.5
    dly[DY_EST] = (k + delta - 0.5) * dt - dly[DY_STATUS]


@njit(**KERNEL)
def acceleration_offset_update(dly, ring, h, filled, status_pos, dt):
    """The platform's acceleration offset kappa (s^2), on the cycles the delay's update leaves
    out (accelerating), once the delay is valid. To second order in s a platform with delay T
    follows ``p_meas(t) = p_cmd(t - T) + kappa a_cmd(t - T)``: a first-order lag T1 has
    kappa = T1^2 / 2 (e^{-sT}/(1 + s T1) = e^{-s(T + T1)} (1 + T1^2 s^2 / 2 + ...)), less dt^2 / 24
    when its held set-points and its position are taken once a cycle (:func:`first_order_lag_s`);
    a second-order servo (2 zeta^2 - 1) / w_n^2. With the
    residual ``r = p_meas(k) - p_cmd(k - d*)`` (the command at the identified lag d*, quadratic
    interpolation between rows), the command's acceleration there (central second difference
    over KAPPA_SPAN cycles) and its velocity, ``r = kappa a - eps v`` is fitted by exponentially
    weighted least squares (like E_d): eps, the delay's own error in this motion, takes the
    part of the residual in phase with the velocity, which would otherwise leak into kappa
    wherever the weighting does not average it out. Valid after ``n_min`` such cycles.

    Parameters
    ----------
    dly : float64[DY_E + n_lags]
        The estimator's array; its state is updated. This and the rest as for
        :func:`delay_update`.
    ring : float64[n_rows, 3]
        The commands sent (top positions).
    h, filled : int
        Row of this cycle's command in ring; how many rows hold commands.
    status_pos : float64[>=3]
        The top position of the STATUS that arrived this cycle.
    dt : float
        The cycle period, s.
    """
    if not delay_valid(dly):
        return
    n = ring.shape[0]
    df = (dly[DY_EST] + dly[DY_STATUS]) / dt + 0.5          # the lag in rows (delay_update)
    k = int(math.floor(df + 0.5))
    f = df - k
    if k < KAPPA_SPAN or k + KAPPA_SPAN >= filled or k + KAPPA_SPAN >= n:
        return
    jm, j0, jp = (h - k + 1) % n, (h - k) % n, (h - k - 1) % n          # lags k - 1, k, k + 1
    ja, jb = (h - k + KAPPA_SPAN) % n, (h - k - KAPPA_SPAN) % n
    ra = rv = aa = av = vv = 0.0
    for i in range(3):
        d1 = 0.5 * (ring[jp, i] - ring[jm, i])
        d2 = ring[jp, i] - 2.0 * ring[j0, i] + ring[jm, i]
        r = status_pos[i] - (ring[j0, i] + f * d1 + 0.5 * f * f * d2)
        v = -(d1 + f * d2) / dt                              # d/dt = -d/dlag
        a = (ring[ja, i] - 2.0 * ring[j0, i] + ring[jb, i]) / ((KAPPA_SPAN * dt) ** 2)
        ra += r * a
        rv += r * v
        aa += a * a
        av += a * v
        vv += v * v
    lam = dly[DY_LAM]
    g = 1.0 - lam
    dly[DY_SRA] = lam * dly[DY_SRA] + g * ra
    dly[DY_SRV] = lam * dly[DY_SRV] + g * rv
    dly[DY_SAA] = lam * dly[DY_SAA] + g * aa
    dly[DY_SAV] = lam * dly[DY_SAV] + g * av
    dly[DY_SVV] = lam * dly[DY_SVV] + g * vv
    dly[DY_KCOUNT] += 1.0
    det = dly[DY_SAA] * dly[DY_SVV] - dly[DY_SAV] * dly[DY_SAV]
    if dly[DY_KCOUNT] >= dly[DY_NMIN] and det > 1e-9 * dly[DY_SAA] * dly[DY_SVV]:
        dly[DY_KAPPA] = (dly[DY_SRA] * dly[DY_SVV] - dly[DY_SRV] * dly[DY_SAV]) / det


def first_order_lag_s(kappa: float, dt: float) -> float:
    """The time constant of the first-order lag whose acceleration offset is ``kappa``, the lag
    driven by set-points held over a cycle and sampled once a cycle: its step-invariant form
    (1 - a) / (z - a), a = e^{-dt/T1}, expanded at z = e^{s dt}, gives kappa = dt^2 a / (2 (1 - a)^2)
    = dt^2 / (8 sinh^2(dt / 2 T1)) = T1^2 / 2 - dt^2 / 24 + ..., inverted here. NaN when kappa <= 0:
    no such lag (a second-order servo with zeta < 1/sqrt 2 has kappa < 0)."""
    if not kappa > 0.0:
        return math.nan
    return dt / (2.0 * math.asinh(dt / math.sqrt(8.0 * kappa)))


@njit(**KERNEL)
def delay_out_of_band(dly):
    """True when a valid estimate has left [lo, hi].

    Parameters
    ----------
    dly : float64[DY_E + n_lags]
        The estimator's array (:func:`pack_delay_id`); its switch, update count, estimate and band
        are read.
    """
    if not delay_valid(dly):
        return False
    return dly[DY_EST] < dly[DY_LO] or dly[DY_EST] > dly[DY_HI]


FOLLOW_HZ = 5.0                 # how fast the lead follows the estimate in a run (critically damped)


@njit(**KERNEL)
def compensated_delay(dly, tau, used, dt):
    """The delay the predictor leads by this cycle: the configured ``tau`` with its platform
    part replaced by the identified one (mode "feed", once valid), followed from the last
    cycle's ``used`` by a critically damped second-order filter at :data:`FOLLOW_HZ` (its rate
    in ``dly[DY_RATE]``): a step in the lead is a step in the command (0.1 ms at 0.1 m/s is
    10 um in one cycle, 10 m/s^2); filtered, a 1 ms change costs ~0.1 m/s^2 at 0.1 m/s.
    ``used`` NaN: the target at once.

    Parameters
    ----------
    dly : float64[DY_E + n_lags]
        The estimator's array (:func:`pack_delay_id`); ``DY_RATE`` (the lead's rate, 1) updated.
    tau : float
        The configured delay the predictor leads by, s.
    used : float
        The lead used last cycle, s; NaN: none (the target at once).
    dt : float
        The cycle period, s.
    """
    target = tau
    if dly[DY_FEED] != 0.0 and delay_valid(dly):
        target = tau - dly[DY_CFG] + dly[DY_EST]
    if not math.isfinite(used):
        dly[DY_RATE] = 0.0
        return target
    w = 2.0 * math.pi * FOLLOW_HZ
    rate = dly[DY_RATE] + dt * (w * w * (target - used) - 2.0 * w * dly[DY_RATE])
    dly[DY_RATE] = rate
    return used + dt * rate
