"""Emulated six-axis force/torque sensor under the passive unit (issue 7 item 1).

The inverse of the controller's sensing chain (``rt/stand/sensing.py``), plus the sensor's
imperfections, per sample:

1. true wrench on the passive unit ``[f; m]`` in P about P's origin -> sensor frame S:
   ``f_S = R_PS^T f_P``, ``m_S = R_PS^T (m_P - p_PS_P x f_P)``;
2. plus white noise (sigma per force / torque axis) and a slow bias drift (random walk whose
   standard deviation grows as ``drift_per_sqrt_s * sqrt(t)``);
3. saturation at the rating of each axis of S (status bit ``STATUS_SATURATED``): the stand's
   ratings, e.g. an Omega190-class sensor's ±7200 N lateral and ±18000 N axial (config/stand.toml
   ``[sensor] rating_n``); the tared-out weight of the passive unit counts against them;
4. inverse calibration to raw counts ``raw = pinv(C_eff) w_S`` (N = 6 or 8 channels; with 8
   gauges the minimum-norm gauge vector), quantised to integers.

Random numbers come from numba's generator, seeded once (:func:`seed`), so lockstep runs are
repeatable.

**The sensor's own chain** (issue 40 item 3; docs/emulator.md, "The F/T sensor's chain"). An ATI
Net F/T samples its gauges at a fixed internal rate, 7000 Hz, runs its selectable low-pass at
that rate and sends every n-th sample (its RDT output rates are 7000 / n Hz) [ATI Net F/T]. The
emulator's physics runs at its own rate (10 kHz by default) and the controller reads one sample
per frame (1 kHz), so :func:`ft_chain` does what the sensor does between two frames:

1. it samples the physics' wrench at the internal rate: each internal sample instant falls
   between two physics steps and takes the straight line between their wrenches (the world
   records the wrench at every step of a period: ``StandWorld.wrench_hist``). Interpolated,
   not the nearest step: the 7 kHz and 10 kHz grids coincide once per millisecond, the seven
   internal samples of a frame falling 0, 43, 86, 29, 71, 14 and 57 us after a step, so the
   nearest step would take them up to 43 us early or late, a pattern repeating every frame --
   a jitter (or, taking the step before, a 43 us mean delay) that no real sensor has; the
   straight line is exact for a wrench linear over the step and its error is second order in
   the step (the physics itself is integrated at first or fourth order over it);
2. it transforms the sample to the sensor frame S, adds the gauges' white noise (only when a
   filter is selected, below) and runs the low-pass, one first-order recursive stage per axis
   at the internal rate, ``y += a (x - y)``, with ``a`` such that the gain at the vendor's
   cut-off of the selected setting is exactly ``1/sqrt(2)`` (:func:`low_pass_coefficient`);
   its group delay at low frequency is ``(1 - a) / a`` internal samples
   (:func:`low_pass_group_delay_s`: 0.136 ms at 838 Hz, 0.98 ms at 152 Hz, 31.8 ms at 5 Hz).
   The cut-offs are the vendor's, the filter's form is this model's: a one-pole is the form
   the settings point to (the exact coefficients for settings 1 to 6 are within 3 % of 1/2,
   1/4 .. 1/64, a coefficient halved per setting: a shift in fixed point); the manual's
   table also lists a delay per setting, not at hand when this was written (docs/emulator.md);
3. it keeps every n-th filtered sample (n = internal rate x the frame's period: 7 at 1 kHz),
   the last of which, at ``output_phase`` of a frame before the frame, is what the controller
   receives: a decimation without averaging, as the sensor's (an unfiltered sensor at a low
   output rate aliases, as the real one does).

The delivered sample then goes through drift, saturation and quantisation (:func:`ft_output`).
Noise: the configured sigma is that of one sample of the unfiltered sensor; with no filter the
chain draws it once per delivered sample (the draws of the skipped internal samples would be
thrown away: the same statistics, and the default chain delivers bit for bit what the instant
sample did); with a filter it is drawn at every internal sample and filtered with the signal
(delivered sigma ``sigma sqrt(a / (2 - a))``, correlated over ``1/a`` internal samples).

At the defaults (no filter, the vendor's power-on setting; ``output_phase`` 0: the lockstep
emulator is the sensor's output clock, so its output sample is the frame's instant) the chain
adds no delay. Its mean delay, :func:`chain_delay_s` (the output's age plus the filter's group
delay), is a sensor delay: ``sim_stand.cli.lockstep_stand`` gives it to the controller as
``[delays] sensor_s``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

STATUS_SATURATED = 0x1

# params: sigma_f, sigma_m, drift_f, drift_m (per sqrt s), dt, rating per axis of S (Fx..Tz)
FP_SF, FP_SM, FP_DF, FP_DM, FP_DT, FP_RATING = range(6)
FP_LEN = FP_RATING + 6

#: the Net F/T's internal sample rate (Hz): its gauges are sampled, filtered and monitored at it
#: whatever the RDT output rate [ATI Net F/T]
NETFT_INTERNAL_RATE_HZ = 7000.0
#: the Net F/T's low-pass settings [ATI Net F/T] (the setting ``setuserfilter`` of its settings
#: page): setting -> cut-off frequency (Hz); 0 = no filter, the power-on default
NETFT_LOW_PASS_HZ = (0.0, 838.0, 326.0, 152.0, 73.0, 35.0, 18.0, 8.0, 5.0, 1500.0, 2000.0, 2500.0, 3000.0)

# chain parameters (float64[CP_LEN]): the low-pass coefficient a (1: no filter), the internal
# sample period (s), the physics step (s), internal samples per output sample n, noise sigma at
# each internal sample per force / torque axis (N, N m; 0 without a filter), filter on (1.0 / 0.0)
CP_A, CP_TI, CP_H, CP_N, CP_SF, CP_SM, CP_FILT = range(7)
CP_LEN = 7
# chain state (float64[CS_LEN]): the time from the present period's start to the next internal
# sample (s), the next internal sample's index within its output sample's n (0: an output sample)
CS_NEXT, CS_J = range(2)
CS_LEN = 2
#: an internal sample within this fraction of a physics step of a step takes that step's wrench
SNAP = 1e-6


@dataclass(frozen=True)
class SensorNoise:
    sigma_force_n: float = 8.0 / 3.0       # 3 sigma ~ 8 N (SJTU stand, [Li 2026])
    sigma_torque_nm: float = 0.5
    drift_force_n_per_sqrt_s: float = 0.05
    drift_torque_nm_per_sqrt_s: float = 0.005
    rating_n: tuple = (5000.0, 5000.0, 5000.0)      # saturation per force axis of S
    rating_nm: tuple = (1500.0, 1500.0, 1500.0)     # per torque axis


@dataclass(frozen=True)
class SensorChain:
    """The sensor's own chain (module docstring): its internal sample rate (Hz), its low-pass
    setting (an index of :data:`NETFT_LOW_PASS_HZ`; 0 = no filter) and the phase of its output
    sample before the controller's frame (a fraction of the frame's period, [0, 1))."""
    internal_rate_hz: float = NETFT_INTERNAL_RATE_HZ
    low_pass: int = 0
    output_phase: float = 0.0

    @property
    def cutoff_hz(self) -> float | None:
        """The selected low-pass's cut-off (Hz), None without a filter."""
        return NETFT_LOW_PASS_HZ[self.low_pass] or None


def low_pass_coefficient(cutoff_hz: float | None, rate_hz: float) -> float:
    """The coefficient ``a`` of the first-order recursive low-pass ``y += a (x - y)`` run at
    ``rate_hz`` whose gain at ``cutoff_hz`` is exactly ``1/sqrt(2)`` (-3 dB): from
    ``|a / (1 - (1 - a) e^{-jwT})|^2 = 1/2``, ``a^2 + 2 c a - 2 c = 0`` with
    ``c = 1 - cos(w T)``. 1.0 (no filter) for ``cutoff_hz`` None or 0. ValueError for a cut-off at
    or above the Nyquist frequency."""
    if not cutoff_hz:
        return 1.0
    if not 0.0 < cutoff_hz < rate_hz / 2.0:
        raise ValueError(f"a cut-off of {cutoff_hz:g} Hz is not below the Nyquist frequency of {rate_hz:g} Hz")
    c = 1.0 - math.cos(2.0 * math.pi * cutoff_hz / rate_hz)
    return -c + math.sqrt(c * c + 2.0 * c)


def low_pass_group_delay_s(a: float, rate_hz: float) -> float:
    """The group delay at zero frequency (s) of ``y += a (x - y)`` at ``rate_hz``: ``(1 - a) / a``
    samples (the lag of its output behind a ramp)."""
    return (1.0 - a) / a / rate_hz


def chain_delay_s(chain: SensorChain, output_period_s: float) -> float:
    """The chain's mean delay (s) at an output period: the age of its output sample at the frame
    (``output_phase`` periods) plus the low-pass's group delay at low frequency -- the sensor's
    part of the loop's delay."""
    a = low_pass_coefficient(chain.cutoff_hz, chain.internal_rate_hz)
    return chain.output_phase * output_period_s + low_pass_group_delay_s(a, chain.internal_rate_hz)


def chain_params(chain: SensorChain, noise: SensorNoise, output_period_s: float, physics_dt_s: float) -> np.ndarray:
    """The chain's parameters (``CP_*``) for frames of ``output_period_s`` and a physics step of
    ``physics_dt_s``. ValueError when the internal rate is not a whole multiple of the frame rate
    (a Net F/T sends every n-th internal sample: its output rates are 7000 / n Hz) or a frame is
    not a whole number of physics steps."""
    fi = chain.internal_rate_hz
    n = fi * output_period_s
    if n < 1.0 - 1e-9 or abs(n - round(n)) > 1e-6:
        raise ValueError(f"the sensor's internal rate {fi:g} Hz is not a whole multiple of the frame rate "
                         f"{1.0 / output_period_s:g} Hz (a Net F/T sends every n-th internal sample: "
                         f"its output rates are {fi:g} / n Hz)")
    steps = output_period_s / physics_dt_s
    if abs(steps - round(steps)) > 1e-6:
        raise ValueError(f"a frame of {output_period_s:g} s is not a whole number of physics steps of "
                         f"{physics_dt_s:g} s")
    a = low_pass_coefficient(chain.cutoff_hz, fi)
    filt = a < 1.0
    cp = np.zeros(CP_LEN)
    cp[CP_A] = a
    cp[CP_TI] = 1.0 / fi
    cp[CP_H] = physics_dt_s
    cp[CP_N] = float(round(n))
    cp[CP_SF] = noise.sigma_force_n if filt else 0.0
    cp[CP_SM] = noise.sigma_torque_nm if filt else 0.0
    cp[CP_FILT] = 1.0 if filt else 0.0
    return cp


@njit(cache=True)
def seed(s):
    """Seed numba's random generator (the one :func:`ft_sample` draws from).

    Parameters
    ----------
    s : int
        The seed.
    """
    np.random.seed(s)


@njit(cache=True)
def to_sensor_frame(R_PS, p_PS_P, w_P, w_S):
    """The wrench ``w_P`` (on the passive unit, P components, about P's origin) in the sensor
    frame S about S's origin: ``f_S = R_PS^T f_P``, ``m_S = R_PS^T (m_P - p_PS_P x f_P)``.

    Parameters
    ----------
    R_PS : float64[3, 3]
        DCM of the sensor frame S in the passive unit frame P (S components -> P components).
    p_PS_P : float64[3]
        Position of S's origin relative to P's, P components (m).
    w_P : float64[6]
        The wrench ``[f; m]`` in P about P's origin (N, N m).
    w_S : float64[6]
        Output: the wrench in S about S's origin (N, N m); may not be ``w_P``.
    """
    fx, fy, fz = w_P[0], w_P[1], w_P[2]
    mx = w_P[3] - (p_PS_P[1] * fz - p_PS_P[2] * fy)
    my = w_P[4] - (p_PS_P[2] * fx - p_PS_P[0] * fz)
    mz = w_P[5] - (p_PS_P[0] * fy - p_PS_P[1] * fx)
    for i in range(3):
        w_S[i] = R_PS[0, i] * fx + R_PS[1, i] * fy + R_PS[2, i] * fz
        w_S[3 + i] = R_PS[0, i] * mx + R_PS[1, i] * my + R_PS[2, i] * mz


@njit(cache=True)
def ft_output(par, Cinv, x_S, noise_on, drift, w_S, raw):
    """The sensor's output sample from the wrench ``x_S`` it measures (in S): bias drift (one
    random-walk step), white noise when ``noise_on`` (else the chain has added it), saturation
    at each axis's rating, inverse calibration to integer-valued counts. Returns status bits.

    Parameters
    ----------
    par : float64[FP_LEN]
        Noise parameters, as for :func:`ft_sample`.
    Cinv : float64[N, 6]
        Pseudo-inverse of the effective calibration matrix: sensor-frame wrench -> raw counts.
    x_S : float64[6]
        The wrench the sensor measures, in S about S's origin (N, N m); may be ``w_S``.
    noise_on : int
        1: add the white noise here; 0: it is in ``x_S`` already (a filtering chain).
    drift : float64[6]
        Bias drift of each sensor axis (N, N m); advanced one random-walk step in place.
    w_S : float64[6]
        Output: the drifted, noisy, saturated wrench in S (N, N m).
    raw : float64[N]
        Output: the raw gauge counts, rounded to integer values.
    """
    sq = np.sqrt(par[FP_DT])
    status = 0
    for i in range(6):
        f = i < 3
        drift[i] += (par[FP_DF] if f else par[FP_DM]) * sq * np.random.standard_normal()
        w = x_S[i] + drift[i]
        if noise_on != 0:
            w = w + (par[FP_SF] if f else par[FP_SM]) * np.random.standard_normal()
        r = par[FP_RATING + i]
        if w > r:
            w = r
            status |= STATUS_SATURATED
        elif w < -r:
            w = -r
            status |= STATUS_SATURATED
        w_S[i] = w
    for j in range(raw.shape[0]):
        s = 0.0
        for i in range(6):
            s += Cinv[j, i] * w_S[i]
        raw[j] = np.floor(s + 0.5)
    return status


@njit(cache=True)
def ft_chain(cp, cs, fy, R_PS, p_PS_P, w_hist, nsteps, offset_P, x_P, x_S, w_out):
    """The sensor's chain over one frame (module docstring): every internal sample instant of
    the frame ``(t_k - nsteps h, t_k]`` samples the physics' wrench (the straight line between
    the two steps around it) plus ``offset_P``, transforms it to S, adds the gauges' noise when
    filtering, runs the low-pass; each n-th sample (the decimation's) is written to ``w_out``.
    Returns the number of internal samples taken. Allocation-free.

    Parameters
    ----------
    cp : float64[CP_LEN]
        Chain parameters (``CP_*``, :func:`chain_params`).
    cs : float64[CS_LEN]
        Chain state (``CS_*``): the time from the frame's start to the next internal sample (s),
        the next sample's index within its output's n; advanced to the next frame.
    fy : float64[6]
        The low-pass's output per axis of S (N, N m); advanced.
    R_PS : float64[3, 3]
        DCM of S in P, as for :func:`to_sensor_frame`.
    p_PS_P : float64[3]
        S's origin in P, P components (m).
    w_hist : float64[nsteps + 1, 6]
        The wrench on the passive unit (P, about P's origin; N, N m) at the frame's start (row
        0) and at the end of each physics step of it (``StandWorld.wrench_hist``).
    nsteps : int
        Physics steps in the frame (of ``cp[CP_H]`` s each).
    offset_P : float64[6]
        Added to every sample (the passive unit's weight, a blow on the stand), P (N, N m).
    x_P, x_S : float64[6]
        Scratch: a sample in P, in S.
    w_out : float64[6]
        Output: the last output sample of the frame, in S (N, N m); unchanged when the frame had
        none.
    """
    a = cp[CP_A]
    ti = cp[CP_TI]
    h = cp[CP_H]
    n_dec = int(cp[CP_N] + 0.5)
    filt = cp[CP_FILT] != 0.0
    period = nsteps * h
    tol = SNAP * h
    taken = 0
    while cs[CS_NEXT] <= period + tol:
        u = cs[CS_NEXT] / h
        s = int(np.floor(u))
        f = u - s
        if f > 1.0 - SNAP:
            s += 1
            f = 0.0
        elif f < SNAP:
            f = 0.0
        if s >= nsteps:
            s = nsteps
            f = 0.0
        elif s < 0:
            s = 0
            f = 0.0
        for i in range(6):
            w0 = w_hist[s, i]
            if f > 0.0:
                w0 = w0 + f * (w_hist[s + 1, i] - w0)
            x_P[i] = w0 + offset_P[i]
        to_sensor_frame(R_PS, p_PS_P, x_P, x_S)
        if filt:
            for i in range(6):
                x = x_S[i] + (cp[CP_SF] if i < 3 else cp[CP_SM]) * np.random.standard_normal()
                fy[i] += a * (x - fy[i])
        else:
            for i in range(6):
                fy[i] = x_S[i]
        j = int(cs[CS_J] + 0.5)
        if j == 0:
            for i in range(6):
                w_out[i] = fy[i]
        cs[CS_J] = float((j + 1) % n_dec)
        cs[CS_NEXT] += ti
        taken += 1
    cs[CS_NEXT] -= period
    return taken


@njit(cache=True)
def ft_sample(par, Cinv, R_PS, p_PS_P, w_P, drift, w_S, raw):
    """One sensor sample from the true wrench ``w_P`` at the instant (no chain); updates
    ``drift`` (6), writes the noisy sensor-frame wrench ``w_S`` (6) and integer-valued ``raw``
    counts (N). Returns status bits.

    Parameters
    ----------
    par : float64[FP_LEN]
        Noise parameters: force and torque sigma ``FP_SF``, ``FP_SM`` (N, N m), bias drift per
        sqrt(s) ``FP_DF``, ``FP_DM``, sample period ``FP_DT`` (s), and the rating of each axis
        of S from ``FP_RATING`` (Fx..Tz; N, N m).
    Cinv : float64[N, 6]
        Pseudo-inverse of the effective calibration matrix: sensor-frame wrench -> raw counts
        (N = 6 or 8 gauge channels).
    R_PS : float64[3, 3]
        DCM of the sensor frame S in the passive unit frame P (S components -> P components).
    p_PS_P : float64[3]
        Position of S's origin relative to P's, P components (m).
    w_P : float64[6]
        True wrench ``[f; m]`` on the passive unit, P components, about P's origin (N, N m).
    drift : float64[6]
        Bias drift of each sensor axis (N, N m); advanced one random-walk step in place.
    w_S : float64[6]
        Output: the noisy, drifted, saturated wrench in S about S's origin (N, N m).
    raw : float64[N]
        Output: the raw gauge counts, rounded to integer values.
    """
    to_sensor_frame(R_PS, p_PS_P, w_P, w_S)
    return ft_output(par, Cinv, w_S, 1, drift, w_S, raw)


class FtSensorModel:
    """Sensor model with its calibration (the same numbers the controller's stand config has).
    :meth:`sample` samples a wrench at the instant; after :meth:`set_chain`,
    :meth:`sample_frame` runs the sensor's chain over a frame of the physics."""

    def __init__(self, calibration: np.ndarray, counts_per_unit: np.ndarray, p_PS_P: np.ndarray,
                 R_PS: np.ndarray, noise: SensorNoise, rate_hz: float, rng_seed: int = 1):
        C_eff = np.asarray(calibration, float) / np.asarray(counts_per_unit, float)[:, None]
        self.Cinv = np.ascontiguousarray(np.linalg.pinv(C_eff))
        self.R_PS = np.ascontiguousarray(R_PS, dtype=np.float64)
        self.p_PS_P = np.ascontiguousarray(p_PS_P, dtype=np.float64)
        self.noise = noise
        self.par = np.array([noise.sigma_force_n, noise.sigma_torque_nm, noise.drift_force_n_per_sqrt_s,
                             noise.drift_torque_nm_per_sqrt_s, 1.0 / rate_hz, *noise.rating_n, *noise.rating_nm])
        self.drift = np.zeros(6)
        self.w_S = np.zeros(6)
        self.raw = np.zeros(self.Cinv.shape[0])
        # the chain's arrays (set_chain): parameters, state, low-pass output, scratch, output sample
        self.chain = SensorChain()
        self.cp = np.zeros(CP_LEN)
        self.cs = np.zeros(CS_LEN)
        self.fy = np.zeros(6)
        self.x_P = np.zeros(6)
        self.x_S = np.zeros(6)
        self.w_out = np.zeros(6)
        self.output_period_s = 1.0 / rate_hz
        seed(rng_seed)

    def sample(self, w_P: np.ndarray) -> int:
        return ft_sample(self.par, self.Cinv, self.R_PS, self.p_PS_P, w_P, self.drift, self.w_S, self.raw)

    # ------------------------------------------------------------------ the sensor's chain
    def set_chain(self, chain: SensorChain, output_period_s: float, physics_dt_s: float) -> None:
        """Run ``chain`` over frames of ``output_period_s`` of a physics of step ``physics_dt_s``
        (ValueError: :func:`chain_params`); then :meth:`reset_chain` before the first frame."""
        self.cp[:] = chain_params(chain, self.noise, output_period_s, physics_dt_s)
        self.chain = chain
        self.output_period_s = output_period_s

    @property
    def chain_delay_s(self) -> float:
        """The chain's mean delay (s): :func:`chain_delay_s`."""
        return chain_delay_s(self.chain, self.output_period_s)

    def reset_chain(self, w_P: np.ndarray) -> None:
        """The chain at rest under ``w_P`` (P, N and N m) at t = 0, a frame's instant: the
        low-pass settled on it (the sensor has been on long before), the internal sample grid
        placed so that its output samples fall ``output_phase`` of a frame before each frame."""
        to_sensor_frame(self.R_PS, self.p_PS_P, np.ascontiguousarray(w_P, dtype=np.float64), self.x_S)
        self.fy[:] = self.x_S
        self.w_out[:] = self.x_S
        ti = self.cp[CP_TI]
        age = self.chain.output_phase * self.output_period_s   # the output sample j = 0 is at -age
        j1 = int(math.floor(age / ti + SNAP)) + 1                 # the first internal sample after t = 0
        self.cs[CS_NEXT] = j1 * ti - age
        self.cs[CS_J] = float(j1 % int(round(self.cp[CP_N])))

    def sample_frame(self, w_hist: np.ndarray, nsteps: int, offset_P: np.ndarray) -> int:
        """The sample the sensor delivers at the end of a frame of ``nsteps`` physics steps
        (``w_hist``: the wrench at the frame's start and after each step, P) with ``offset_P``
        added: the chain, then drift, saturation, counts (``w_S``, ``raw``). Returns status bits."""
        ft_chain(self.cp, self.cs, self.fy, self.R_PS, self.p_PS_P, w_hist, nsteps, offset_P, self.x_P, self.x_S,
                 self.w_out)
        return ft_output(self.par, self.Cinv, self.w_out, 0 if self.cp[CP_FILT] != 0.0 else 1, self.drift,
                         self.w_S, self.raw)
