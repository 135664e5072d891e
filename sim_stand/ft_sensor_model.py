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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

STATUS_SATURATED = 0x1

# params: sigma_f, sigma_m, drift_f, drift_m (per sqrt s), dt, rating per axis of S (Fx..Tz)
FP_SF, FP_SM, FP_DF, FP_DM, FP_DT, FP_RATING = range(6)
FP_LEN = FP_RATING + 6


@dataclass(frozen=True)
class SensorNoise:
    sigma_force_n: float = 8.0 / 3.0       # 3 sigma ~ 8 N (SJTU stand, [Li 2026])
    sigma_torque_nm: float = 0.5
    drift_force_n_per_sqrt_s: float = 0.05
    drift_torque_nm_per_sqrt_s: float = 0.005
    rating_n: tuple = (5000.0, 5000.0, 5000.0)      # saturation per force axis of S
    rating_nm: tuple = (1500.0, 1500.0, 1500.0)     # per torque axis


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
def ft_sample(par, Cinv, R_PS, p_PS_P, w_P, drift, w_S, raw):
    """One sensor sample from the true wrench ``w_P``; updates ``drift`` (6), writes the noisy
    sensor-frame wrench ``w_S`` (6) and integer-valued ``raw`` counts (N). Returns status bits.

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
    fx, fy, fz = w_P[0], w_P[1], w_P[2]
    mx = w_P[3] - (p_PS_P[1] * fz - p_PS_P[2] * fy)
    my = w_P[4] - (p_PS_P[2] * fx - p_PS_P[0] * fz)
    mz = w_P[5] - (p_PS_P[0] * fy - p_PS_P[1] * fx)
    sq = np.sqrt(par[FP_DT])
    status = 0
    for i in range(3):
        w_S[i] = R_PS[0, i] * fx + R_PS[1, i] * fy + R_PS[2, i] * fz
        w_S[3 + i] = R_PS[0, i] * mx + R_PS[1, i] * my + R_PS[2, i] * mz
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
    for j in range(raw.shape[0]):
        s = 0.0
        for i in range(6):
            s += Cinv[j, i] * w_S[i]
        raw[j] = np.floor(s + 0.5)
    return status


class FtSensorModel:
    """Sensor model with its calibration (the same numbers the controller's stand config has)."""

    def __init__(self, calibration: np.ndarray, counts_per_unit: np.ndarray, p_PS_P: np.ndarray,
                 R_PS: np.ndarray, noise: SensorNoise, rate_hz: float, rng_seed: int = 1):
        C_eff = np.asarray(calibration, float) / np.asarray(counts_per_unit, float)[:, None]
        self.Cinv = np.ascontiguousarray(np.linalg.pinv(C_eff))
        self.R_PS = np.ascontiguousarray(R_PS, dtype=np.float64)
        self.p_PS_P = np.ascontiguousarray(p_PS_P, dtype=np.float64)
        self.par = np.array([noise.sigma_force_n, noise.sigma_torque_nm, noise.drift_force_n_per_sqrt_s,
                             noise.drift_torque_nm_per_sqrt_s, 1.0 / rate_hz, *noise.rating_n, *noise.rating_nm])
        self.drift = np.zeros(6)
        self.w_S = np.zeros(6)
        self.raw = np.zeros(self.Cinv.shape[0])
        seed(rng_seed)

    def sample(self, w_P: np.ndarray) -> int:
        return ft_sample(self.par, self.Cinv, self.R_PS, self.p_PS_P, w_P, self.drift, self.w_S, self.raw)
