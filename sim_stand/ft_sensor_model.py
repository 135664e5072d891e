"""Emulated six-axis force/torque sensor under the passive unit (issue 7 item 1; its signal chain,
issue 40 item 3; docs/emulator.md "The F/T sensor's chain").

The inverse of the controller's sensing chain (``rt/stand/sensing.py``) plus what a real sensor
does between its gauges and its output. An ATI Net F/T samples its gauges at 7000 Hz, applies
the low-pass selected in its configuration and sends the newest filtered sample at the output
(RDT) rate [ATI Net F/T]; the emulator's physics runs at 10 kHz. Per output sample (one
controller period, :meth:`FtSensorModel.sample_trace`):

1. the true wrench on the passive unit ``[f; m]`` in P about P's origin, at each physics step of
   the period (the world's ``wrench_trace``), is taken to the sensor frame S
   (``f_S = R_PS^T f_P``, ``m_S = R_PS^T (m_P - p_PS_P x f_P)``) and sampled at the internal rate
   (linear interpolation between the physics steps: the gauges see the physics at 7 kHz);
2. plus white noise at the internal rate and saturation of each internal sample at the rating
   of its axis (status bit ``STATUS_SATURATED``; the tared-out weight of the passive unit counts
   against it: an Omega190-class sensor's ±7200 N lateral, ±18000 N axial);
3. the selected low-pass (:data:`NETFT_LOWPASS`: the manual's cut-off frequency and delay of each
   setting), modelled as a linear-phase FIR at the internal rate whose group delay is the
   manual's delay exactly and whose -3 dB frequency is the manual's cut-off
   (:func:`design_lowpass`; the manual states these two figures, not the filter's structure; a
   linear phase gives the stated delay at every frequency of the pass band);
4. decimation: the output is the filtered value at the period's last internal sample
   (``internal_rate / output_rate`` must be a whole number: 7 at 1 kHz);
5. a slow bias drift (random walk, ``drift_per_sqrt_s * sqrt(t)``) at the output, and the
   inverse calibration to raw counts ``raw = pinv(C_eff) w_S`` (N = 6 or 8 channels; with 8 gauges
   the minimum-norm gauge vector), quantised to integers.

``sigma_force_n`` / ``sigma_torque_nm`` are the noise **at the output** (1 sigma per sample, per
axis of S) at the configured filter setting, as a sensor's resolution is published and as the
controller sees it; the internal samples carry ``sigma / ||h||_2`` (``h`` the FIR's taps) so that
the filtered output has exactly ``sigma``.

The chain's group delay (:meth:`SensorChain.group_delay_s`) is part of the loop's measurement
delay: the lockstep controller leads by it (``sim_stand.cli.lockstep_stand``'s ``sensor_s``), as
a real stand's ``[delays] sensor_s`` must hold the delay of its sensor's filter setting.

:meth:`FtSensorModel.sample` keeps the instantaneous sample of one wrench (no chain) for callers
without a trace. Random numbers come from numba's generator, seeded once (:func:`seed`), so
lockstep runs are repeatable.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

STATUS_SATURATED = 0x1

# params: sigma_f, sigma_m, drift_f, drift_m (per sqrt s), dt (output), rating per axis of S (Fx..Tz),
# the internal noise's scale (1 / ||h||_2)
FP_SF, FP_SM, FP_DF, FP_DM, FP_DT, FP_RATING = range(6)
FP_SCALE = FP_RATING + 6
FP_LEN = FP_SCALE + 1

#: The ATI Net F/T's low-pass selections [ATI Net F/T, "Low-pass filtering"]: setting ->
#: (cut-off frequency Hz, delay s) at its 7000 Hz internal sample rate; 0 = no filter.
NETFT_LOWPASS = {0: (None, 0.0), 1: (838.0, 0.0005), 2: (219.0, 0.002), 3: (58.0, 0.008), 4: (16.0, 0.032),
                 5: (4.0, 0.128), 6: (1.0, 0.512)}
NETFT_INTERNAL_RATE_HZ = 7000.0        # [ATI Net F/T]: the gauges' sample rate


@dataclass(frozen=True)
class SensorNoise:
    sigma_force_n: float = 8.0 / 3.0       # 3 sigma ~ 8 N (SJTU stand, reference-data.md); at the output
    sigma_torque_nm: float = 0.5
    drift_force_n_per_sqrt_s: float = 0.05
    drift_torque_nm_per_sqrt_s: float = 0.005
    rating_n: tuple = (5000.0, 5000.0, 5000.0)      # saturation per force axis of S
    rating_nm: tuple = (1500.0, 1500.0, 1500.0)     # per torque axis


@dataclass(frozen=True)
class SensorChain:
    """The sensor's own signal chain (emulator file ``[sensor] internal_rate_hz``, ``lowpass``):
    the internal sample rate and the low-pass setting (:data:`NETFT_LOWPASS`). Default: the
    Net F/T's 7000 Hz and setting 1 (838 Hz, 0.5 ms), the lightest filter it offers: the least
    delay in the loop (every millisecond of it is prediction; docs/validation.md §3.3) while
    the gauges' content above ~1 kHz, where the 1 kHz output would alias it, is attenuated."""
    internal_rate_hz: float = NETFT_INTERNAL_RATE_HZ
    lowpass: int = 1

    @property
    def cutoff_hz(self) -> float | None:
        return NETFT_LOWPASS[self.lowpass][0]

    @property
    def group_delay_s(self) -> float:
        """The chain's delay from the gauges to the output: the filter's (exact, linear phase)."""
        return NETFT_LOWPASS[self.lowpass][1]

    def taps(self) -> np.ndarray:
        c, d = NETFT_LOWPASS[self.lowpass]
        return np.ones(1) if c is None else design_lowpass(c, d, self.internal_rate_hz)


def _fir_gain(h: np.ndarray, f_hz: float, fs: float) -> float:
    n = np.arange(len(h))
    return float(abs(np.sum(h * np.exp(-2j * np.pi * f_hz / fs * n))))


def design_lowpass(cutoff_hz: float, delay_s: float, fs: float) -> np.ndarray:
    """A linear-phase FIR low-pass at the sample rate ``fs`` with the group delay ``delay_s``
    (``2 delay fs + 1`` taps, symmetric) and unity DC gain whose gain at ``cutoff_hz`` is
    ``1/sqrt(2)``: a Hann-windowed sinc whose own cut-off is found by bisection. Not real-time
    (once per emulator). ValueError if no such filter of that length exists."""
    L = int(round(2.0 * delay_s * fs)) + 1
    if L < 2 or abs((L - 1) / (2.0 * fs) - delay_s) > 1e-9:
        raise ValueError(f"a delay of {delay_s:g} s is not a whole number of half samples at {fs:g} Hz")
    n = np.arange(L) - 0.5 * (L - 1)
    win = 0.5 - 0.5 * np.cos(2.0 * np.pi * (np.arange(L) + 0.5) / L)     # Hann over the L taps

    def taps(fc):
        h = np.sinc(2.0 * fc / fs * n) * win
        return h / h.sum()

    target = 1.0 / math.sqrt(2.0)
    lo, hi = 1e-6 * fs, 0.5 * fs
    if _fir_gain(taps(hi), cutoff_hz, fs) < target or _fir_gain(taps(lo), cutoff_hz, fs) > target:
        raise ValueError(f"no {L}-tap linear-phase low-pass has its -3 dB point at {cutoff_hz:g} Hz")
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if _fir_gain(taps(mid), cutoff_hz, fs) < target:
            lo = mid
        else:
            hi = mid
    return taps(0.5 * (lo + hi))


@njit(cache=True)
def seed(s):
    np.random.seed(s)


@njit(cache=True)
def _quantise(Cinv, w_S, raw):
    for j in range(raw.shape[0]):
        s = 0.0
        for i in range(6):
            s += Cinv[j, i] * w_S[i]
        raw[j] = np.floor(s + 0.5)


@njit(cache=True)
def _to_sensor(R_PS, p_PS_P, w_P, out):
    fx, fy, fz = w_P[0], w_P[1], w_P[2]
    mx = w_P[3] - (p_PS_P[1] * fz - p_PS_P[2] * fy)
    my = w_P[4] - (p_PS_P[2] * fx - p_PS_P[0] * fz)
    mz = w_P[5] - (p_PS_P[0] * fy - p_PS_P[1] * fx)
    for i in range(3):
        out[i] = R_PS[0, i] * fx + R_PS[1, i] * fy + R_PS[2, i] * fz
        out[3 + i] = R_PS[0, i] * mx + R_PS[1, i] * my + R_PS[2, i] * mz


@njit(cache=True)
def ft_sample(par, Cinv, R_PS, p_PS_P, w_P, drift, w_S, raw):
    """One instantaneous sensor sample from the true wrench ``w_P`` (no chain); updates ``drift``
    (6), writes the noisy sensor-frame wrench ``w_S`` (6) and integer-valued ``raw`` counts (N).
    Returns status bits."""
    _to_sensor(R_PS, p_PS_P, w_P, w_S)
    sq = np.sqrt(par[FP_DT])
    status = 0
    for i in range(6):
        f = i < 3
        drift[i] += (par[FP_DF] if f else par[FP_DM]) * sq * np.random.standard_normal()
        w = w_S[i] + drift[i] + (par[FP_SF] if f else par[FP_SM]) * np.random.standard_normal()
        r = par[FP_RATING + i]
        if w > r:
            w = r
            status |= STATUS_SATURATED
        elif w < -r:
            w = -r
            status |= STATUS_SATURATED
        w_S[i] = w
    _quantise(Cinv, w_S, raw)
    return status


@njit(cache=True)
def ft_chain_sample(par, Cinv, R_PS, p_PS_P, trace, n_steps, offset_P, prev_S, n_internal, taps, hist, head,
                    drift, w_S, raw, tmp):
    """One output sample of the chain (module docstring) over a period whose true wrench at the
    end of each of its ``n_steps`` physics steps is ``trace[:n_steps] + offset_P`` (P); ``prev_S``
    (6): the sensor-frame wrench at the period's start (updated to its end); ``n_internal``
    internal samples in the period, the last at its end; ``hist`` (6, L) the filter's ring of
    internal samples, ``head[0]`` its newest slot. Writes ``w_S`` (the filtered, drifting output)
    and ``raw``; returns status bits."""
    L = taps.shape[0]
    status = 0
    scale = par[FP_SCALE]
    for j in range(n_internal):
        u = (j + 1.0) * n_steps / n_internal          # in physics steps from the period's start
        k = int(math.floor(u + 1e-9))
        f = u - k
        # the wrench at step k (k = 0: the period's start) and k + 1, interpolated
        if k >= n_steps:
            for i in range(6):
                tmp[6 + i] = trace[n_steps - 1, i] + offset_P[i]
            _to_sensor(R_PS, p_PS_P, tmp[6:12], tmp[0:6])
        else:
            for i in range(6):
                tmp[12 + i] = trace[k, i] + offset_P[i]
            _to_sensor(R_PS, p_PS_P, tmp[12:18], tmp[6:12])          # S at step k + 1
            if k == 0:
                for i in range(6):
                    tmp[i] = prev_S[i] + f * (tmp[6 + i] - prev_S[i])
            else:
                for i in range(6):
                    tmp[12 + i] = trace[k - 1, i] + offset_P[i]
                _to_sensor(R_PS, p_PS_P, tmp[12:18], tmp[18:24])
                for i in range(6):
                    tmp[i] = tmp[18 + i] + f * (tmp[6 + i] - tmp[18 + i])
        h = (head[0] + 1) % L
        head[0] = h
        for i in range(6):
            w = tmp[i] + scale * (par[FP_SF] if i < 3 else par[FP_SM]) * np.random.standard_normal()
            r = par[FP_RATING + i]
            if w > r:
                w = r
                status |= STATUS_SATURATED
            elif w < -r:
                w = -r
                status |= STATUS_SATURATED
            hist[i, h] = w
    for i in range(6):
        tmp[6 + i] = trace[n_steps - 1, i] + offset_P[i]
    _to_sensor(R_PS, p_PS_P, tmp[6:12], prev_S)
    sq = math.sqrt(par[FP_DT])
    h = head[0]
    for i in range(6):
        s = 0.0
        for m in range(L):                 # taps[m] on the sample m internal periods old
            s += taps[m] * hist[i, (h - m) % L]
        drift[i] += (par[FP_DF] if i < 3 else par[FP_DM]) * sq * np.random.standard_normal()
        w = s + drift[i]
        r = par[FP_RATING + i]
        w_S[i] = min(r, max(-r, w))
    _quantise(Cinv, w_S, raw)
    return status


class FtSensorModel:
    """Sensor model with its calibration (the same numbers the controller's stand config has)
    and its chain (``chain``; None: the Net F/T's defaults, :class:`SensorChain`)."""

    def __init__(self, calibration: np.ndarray, counts_per_unit: np.ndarray, p_PS_P: np.ndarray,
                 R_PS: np.ndarray, noise: SensorNoise, rate_hz: float, rng_seed: int = 1,
                 chain: SensorChain | None = None):
        C_eff = np.asarray(calibration, float) / np.asarray(counts_per_unit, float)[:, None]
        self.Cinv = np.ascontiguousarray(np.linalg.pinv(C_eff))
        self.R_PS = np.ascontiguousarray(R_PS, dtype=np.float64)
        self.p_PS_P = np.ascontiguousarray(p_PS_P, dtype=np.float64)
        self.chain = chain or SensorChain()
        ratio = self.chain.internal_rate_hz / rate_hz
        if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
            raise ValueError(f"the sensor's internal rate {self.chain.internal_rate_hz:g} Hz is not a whole multiple "
                             f"of its output rate {rate_hz:g} Hz")
        self.n_internal = int(round(ratio))
        self.taps = np.ascontiguousarray(self.chain.taps())     # taps[m] weighs the sample m internal periods old
        self.par = np.array([noise.sigma_force_n, noise.sigma_torque_nm, noise.drift_force_n_per_sqrt_s,
                             noise.drift_torque_nm_per_sqrt_s, 1.0 / rate_hz, *noise.rating_n, *noise.rating_nm,
                             1.0 / float(np.sqrt(np.sum(self.taps ** 2)))])
        self.drift = np.zeros(6)
        self.w_S = np.zeros(6)
        self.raw = np.zeros(self.Cinv.shape[0])
        self.hist = np.zeros((6, len(self.taps)))
        self.head = np.zeros(1, dtype=np.int64)
        self.prev_S = np.zeros(6)
        self._tmp = np.zeros(24)
        self._primed = False
        seed(rng_seed)

    @property
    def group_delay_s(self) -> float:
        return self.chain.group_delay_s

    def sample(self, w_P: np.ndarray) -> int:
        """An instantaneous sample of ``w_P`` (no chain)."""
        return ft_sample(self.par, self.Cinv, self.R_PS, self.p_PS_P, w_P, self.drift, self.w_S, self.raw)

    def prime(self, w_P: np.ndarray) -> None:
        """The chain at rest under a constant ``w_P`` (the emulator's reset: the sensor has been
        on long before the run)."""
        _to_sensor(self.R_PS, self.p_PS_P, np.ascontiguousarray(w_P, dtype=np.float64), self.prev_S)
        self.hist[:] = self.prev_S[:, None]
        self._primed = True

    def sample_trace(self, trace: np.ndarray, n_steps: int, offset_P: np.ndarray) -> int:
        """One output sample through the chain from the period's wrench trace (module docstring)."""
        if not self._primed:
            self.prime(trace[0] + offset_P)
        return ft_chain_sample(self.par, self.Cinv, self.R_PS, self.p_PS_P, trace, n_steps, offset_P, self.prev_S,
                               self.n_internal, self.taps, self.hist, self.head, self.drift, self.w_S, self.raw,
                               self._tmp)
