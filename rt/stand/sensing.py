"""Sensing chain: raw F/T counts -> the contact wrench on the passive unit, in P.

Per cycle (one call of :func:`sense` with the newest raw frame; repeat the last frame when no
new one came, the safety monitor trips on staleness):

1. ``w_S = C_eff @ raw`` with ``C_eff = calibration / counts_per_unit[:, None]``:
   ``calibration`` is the sensor's 6xN matrix (N = 6 for a sensor that already reports
   Fx..Tz counts, e.g. ATI Net F/T RDT with an identity matrix; N = 6 or 8 raw gauge
   channels otherwise), ``counts_per_unit`` the counts per N (rows 0-2) and per N·m (rows
   3-5). ``w_S`` is the wrench on the sensor's tool side (the passive unit side), force first,
   moment about S's origin, in S components.
2. Transform to P with the sensor mounting pose (``p_PS_P``, ``R_PS``: S's origin and axes in
   P): ``f_P = R_PS f_S``, ``m_P = R_PS m_S + p_PS_P x f_P`` (moment about P's origin).
3. Tare: ``w = w_P - bias`` where ``bias`` is the mean of ``w_P`` over ``tare_samples`` cycles
   taken at ARM (:meth:`Sensing.begin_tare`). It removes the passive unit's weight and the
   sensor offset. **It is valid only while the measuring platform (and so the sensor and the
   passive unit) stays fixed**: the weight is a constant wrench in P only as long as P does
   not rotate with respect to gravity.
4. Optional second-order low-pass ``H(s) = w0^2 / (s^2 + 2 zeta w0 s + w0^2)`` discretised with
   the bilinear transform pre-warped at the cut-off, unity DC gain, per channel in direct form
   II transposed. Its low-frequency **group delay** ``Sensing.group_delay_s`` (exactly
   ``T * [(b1 + 2 b2)/(b0 + b1 + b2) - (a1 + 2 a2)/(1 + a1 + a2)]``, ≈ ``2 zeta / w0``) is the
   lag of the filtered wrench behind the true one for slowly varying input; the coupling
   adds it to the compensated loop delay.

Output ``w_P`` (6): the wrench the active unit applies to the passive unit, ``[f; m]`` in P,
moment about P's origin. All arrays are allocated once in :class:`Sensing`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from rt.jit import KERNEL

# counters layout (int64): tare samples still to take, tare window, tare done flag, filter on
CTR_TARE_LEFT, CTR_TARE_N, CTR_TARED, CTR_FILTER = 0, 1, 2, 3


def lowpass2_coefficients(cutoff_hz: float, damping: float, rate_hz: float) -> np.ndarray:
    """``[b0, b1, b2, a1, a2]`` of the pre-warped bilinear second-order low-pass (a0 = 1)."""
    if not 0.0 < cutoff_hz < rate_hz / 2.0:
        raise ValueError(f"cut-off {cutoff_hz} Hz must be in (0, {rate_hz / 2} Hz)")
    if not damping > 0.0:
        raise ValueError("damping must be > 0")
    T = 1.0 / rate_hz
    w = 2.0 * math.pi * cutoff_hz
    K = w / math.tan(w * T / 2.0)
    a0 = K * K + 2.0 * damping * w * K + w * w
    b0 = w * w / a0
    return np.array([b0, 2.0 * b0, b0, (2.0 * w * w - 2.0 * K * K) / a0, (K * K - 2.0 * damping * w * K + w * w) / a0])


def dc_group_delay_s(coef: np.ndarray, rate_hz: float) -> float:
    """Group delay at zero frequency of ``B(z)/A(z)`` (coefficients as above), in seconds."""
    b0, b1, b2, a1, a2 = coef
    return ((b1 + 2 * b2) / (b0 + b1 + b2) - (a1 + 2 * a2) / (1 + a1 + a2)) / rate_hz


def lowpass_group_delay_s(cutoff_hz: float, damping: float, rate_hz: float) -> float:
    """The sensing low-pass's group delay at zero frequency (s): what the compensation adds to
    tau for it, and what a reference seen through it lags by."""
    return float(dc_group_delay_s(lowpass2_coefficients(cutoff_hz, damping, rate_hz), rate_hz))


@njit(**KERNEL)
def sense(C_eff, R_PS, p_PS_P, raw, bias, acc, ctr, coef, fstate, w_S, w_P_raw, w_P):
    """One sensing step (see the module docstring). ``raw`` (N,) float64 counts. Writes
    ``w_S``, ``w_P_raw`` (untared, unfiltered, in P) and ``w_P`` (tared, filtered).

    Parameters
    ----------
    C_eff : float64[6, N]
        Calibration over counts per unit: N or N·m per count (N = 6 or 8 channels).
    R_PS : float64[3, 3]
        The sensor's axes in P (S-components -> P-components).
    p_PS_P : float64[3]
        The sensor's origin in P, m.
    raw : float64[N]
        The newest raw sample, counts.
    bias : float64[6]
        The tare, P, N and N·m; written when a tare completes.
    acc : float64[6]
        The tare's running sum of ``w_P_raw``, P, N and N·m; updated while taring.
    ctr : int64[4]
        Counters, layout ``CTR_*``: tare samples left, tare window, tared flag, filter on.
    coef : float64[5]
        The low-pass's ``[b0, b1, b2, a1, a2]`` (:func:`lowpass2_coefficients`).
    fstate : float64[6, 2]
        The low-pass's state per channel, N and N·m; updated.
    w_S : float64[6]
        Written: the wrench in S about S's origin, untared, N and N·m.
    w_P_raw : float64[6]
        Written: the wrench on the passive unit in P about P's origin, untared and unfiltered.
    w_P : float64[6]
        Written: the contact wrench on the passive unit in P, tared and filtered, N and N·m.
    """
    n = raw.shape[0]
    for i in range(6):
        s = 0.0
        for j in range(n):
            s += C_eff[i, j] * raw[j]
        w_S[i] = s
    # to P: f_P = R_PS f_S ; m_P = R_PS m_S + p_PS_P x f_P
    for i in range(3):
        w_P_raw[i] = R_PS[i, 0] * w_S[0] + R_PS[i, 1] * w_S[1] + R_PS[i, 2] * w_S[2]
    fx, fy, fz = w_P_raw[0], w_P_raw[1], w_P_raw[2]
    for i in range(3):
        w_P_raw[3 + i] = R_PS[i, 0] * w_S[3] + R_PS[i, 1] * w_S[4] + R_PS[i, 2] * w_S[5]
    w_P_raw[3] += p_PS_P[1] * fz - p_PS_P[2] * fy
    w_P_raw[4] += p_PS_P[2] * fx - p_PS_P[0] * fz
    w_P_raw[5] += p_PS_P[0] * fy - p_PS_P[1] * fx
    # tare accumulation
    if ctr[0] > 0:
        for i in range(6):
            acc[i] += w_P_raw[i]
        ctr[0] -= 1
        if ctr[0] == 0:
            inv = 1.0 / ctr[1]
            for i in range(6):
                bias[i] = acc[i] * inv
                # restart the filter at rest on the new (tared) signal
                fstate[i, 0] = 0.0
                fstate[i, 1] = 0.0
            ctr[2] = 1
    b0, b1, b2, a1, a2 = coef[0], coef[1], coef[2], coef[3], coef[4]
    filt = ctr[3] != 0
    for i in range(6):
        x = w_P_raw[i] - bias[i]
        if filt:
            y = b0 * x + fstate[i, 0]
            fstate[i, 0] = b1 * x - a1 * y + fstate[i, 1]
            fstate[i, 1] = b2 * x - a2 * y
            w_P[i] = y
        else:
            w_P[i] = x


@njit(**KERNEL)
def filter_settle(coef, fstate, x):
    """Set the filter state to rest at a constant input ``x`` (6,): the output equals x.

    Parameters
    ----------
    coef : float64[5]
        The low-pass's ``[b0, b1, b2, a1, a2]`` (:func:`lowpass2_coefficients`).
    fstate : float64[6, 2]
        Written: the low-pass's state per channel.
    x : float64[6]
        The constant input, N and N·m.
    """
    b0, b1, b2, a1, a2 = coef[0], coef[1], coef[2], coef[3], coef[4]
    for i in range(6):
        fstate[i, 1] = (b2 - a2) * x[i]
        fstate[i, 0] = (b1 - a1) * x[i] + fstate[i, 1]


@dataclass(frozen=True)
class SensingParams:
    """Sensor calibration and mounting, tare window and filter (from the stand config)."""

    calibration: np.ndarray          # (6, N), N = 6 or 8
    counts_per_unit: np.ndarray      # (6,) counts per N (0..2) and per N·m (3..5)
    p_PS_P: np.ndarray               # (3,) sensor origin in P
    R_PS: np.ndarray                 # (3, 3) sensor axes -> P axes
    rate_hz: float                   # the loop rate (the filter's sample rate)
    tare_samples: int = 500
    filter_cutoff_hz: float | None = None
    filter_damping: float = 1.0 / math.sqrt(2.0)

    def __post_init__(self):
        C = np.asarray(self.calibration, dtype=np.float64)
        if C.ndim != 2 or C.shape[0] != 6 or C.shape[1] not in (6, 8):
            raise ValueError(f"calibration must be 6x6 or 6x8, got {C.shape}")
        cpu = np.asarray(self.counts_per_unit, dtype=np.float64)
        if cpu.shape != (6,) or np.any(cpu == 0) or not np.all(np.isfinite(cpu)):
            raise ValueError("counts_per_unit must be 6 finite non-zero numbers")
        if self.tare_samples < 1:
            raise ValueError("tare_samples must be >= 1")


class Sensing:
    """Preallocated state and outputs of the sensing chain; :meth:`step` is the per-cycle call."""

    def __init__(self, p: SensingParams):
        self.params = p
        C = np.asarray(p.calibration, dtype=np.float64)
        self.n_raw = C.shape[1]
        self.C_eff = np.ascontiguousarray(C / np.asarray(p.counts_per_unit, dtype=np.float64)[:, None])
        self.R_PS = np.ascontiguousarray(p.R_PS, dtype=np.float64)
        self.p_PS_P = np.ascontiguousarray(p.p_PS_P, dtype=np.float64)
        self.bias = np.zeros(6)
        self.acc = np.zeros(6)
        self.ctr = np.zeros(4, dtype=np.int64)
        self.fstate = np.zeros((6, 2))
        if p.filter_cutoff_hz is not None:
            self.coef = lowpass2_coefficients(p.filter_cutoff_hz, p.filter_damping, p.rate_hz)
            self.ctr[CTR_FILTER] = 1
            self.group_delay_s = dc_group_delay_s(self.coef, p.rate_hz)
        else:
            self.coef = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
            self.group_delay_s = 0.0
        self.raw = np.zeros(self.n_raw)
        self.w_S = np.zeros(6)
        self.w_P_raw = np.zeros(6)
        self.w_P = np.zeros(6)

    # per cycle -------------------------------------------------------------------------
    def step(self, raw: np.ndarray | None = None) -> np.ndarray:
        """Process ``raw`` (or ``self.raw``, which a driver may fill in place); returns ``w_P``."""
        sense(self.C_eff, self.R_PS, self.p_PS_P, self.raw if raw is None else raw, self.bias, self.acc,
              self.ctr, self.coef, self.fstate, self.w_S, self.w_P_raw, self.w_P)
        return self.w_P

    # tare -------------------------------------------------------------------------------
    def begin_tare(self, samples: int | None = None) -> None:
        """Start averaging ``w_P_raw`` over the next ``samples`` steps (default: the config's)."""
        n = self.params.tare_samples if samples is None else int(samples)
        if n < 1:
            raise ValueError("tare needs at least one sample")
        self.acc[:] = 0.0
        self.ctr[CTR_TARE_N] = n
        self.ctr[CTR_TARE_LEFT] = n
        self.ctr[CTR_TARED] = 0

    @property
    def taring(self) -> bool:
        return bool(self.ctr[CTR_TARE_LEFT] > 0)

    @property
    def tared(self) -> bool:
        return bool(self.ctr[CTR_TARED])

    def clear_tare(self) -> None:
        self.bias[:] = 0.0
        self.ctr[CTR_TARE_LEFT] = 0
        self.ctr[CTR_TARED] = 0

    def reset_filter(self) -> None:
        self.fstate[:] = 0.0

    def warm_up(self) -> None:
        """Compile the kernels without disturbing the state."""
        saved = (self.bias.copy(), self.acc.copy(), self.ctr.copy(), self.fstate.copy())
        self.step(np.zeros(self.n_raw))
        filter_settle(self.coef, self.fstate, self.w_P)
        self.bias[:], self.acc[:], self.ctr[:], self.fstate[:] = saved
        self.w_S[:] = self.w_P_raw[:] = self.w_P[:] = 0.0
