"""Leg force devices: small pure functions of the device-joint coordinate ``s`` (stroke, m, or
crank angle, rad) and its rate ``v``.  Each returns the generalized force on the joint, positive
along the joint axis (extending the leg / increasing the crank angle).  The device's power
delivered to the mechanism is ``force * v`` (negative when it absorbs energy).

All are ``@njit(cache=True)`` and allocation-free; the per-leg parameters live in the packed
params block (``layout.L_*``), see docs/models/mechanism.md §Devices.

The functions' arguments
------------------------
P : float64[HDR + n_legs * LP]
    The mechanism's packed parameters (``layout``); the leg's device entries ``L_*`` are read.
lo : int
    Offset of the leg's block in ``P`` (``HDR + k * LP``).
s : float
    Device-joint coordinate: stroke (m) or crank angle (rad).
v : float
    Its rate (m/s or rad/s).
s_cmd, v_cmd : float
    The drive's commanded coordinate (m or rad) and rate (m/s or rad/s).
"""
from __future__ import annotations

import math

from numba import njit

from sim_stand.mechanism.layout import (L_BR_FB, L_BR_FC, L_BR_VR, L_BR_VS, L_DA_C, L_DR_FMAX,
                                        L_DR_KD, L_DR_KP, L_DR_ON, L_EM_C, L_SP_F0, L_SP_K,
                                        L_SP_KC, L_SP_NT, L_SP_S, L_SP_VC, L_ST_C, L_ST_K,
                                        L_ST_MAX, L_ST_MIN, L_ST_ON)


@njit(cache=True)
def _k_at(P, lo, s, n):
    """Stiffness k(s): linear interpolation of the table, constant beyond its ends."""
    s0 = P[lo + L_SP_S]
    if n == 1 or s <= s0:
        return P[lo + L_SP_K]
    for i in range(n - 1):
        sa = P[lo + L_SP_S + i]
        sb = P[lo + L_SP_S + i + 1]
        if s <= sb:
            ka = P[lo + L_SP_K + i]
            kb = P[lo + L_SP_K + i + 1]
            return ka + (kb - ka) * (s - sa) / (sb - sa)
    return P[lo + L_SP_K + n - 1]


@njit(cache=True)
def _table_point(P, lo, s, n):
    """Index i of the spring table's last point at or below the stroke s (0 below the first
    point): s lies in the table segment [s_i, s_i+1) (the last one extends to the right), on
    which the stiffness is linear."""
    if n == 1 or s <= P[lo + L_SP_S]:
        return 0
    i = 0
    while i < n - 1 and P[lo + L_SP_S + i + 1] <= s:
        i += 1
    return i


@njit(cache=True)
def spring_K(P, lo, s):
    """K(s) = int_0^s k(sigma) d sigma (exact for the piecewise-linear table).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters: the leg's spring table ``L_SP_*`` (the arguments:
        module docstring).
    lo : int
        Offset of the leg's block in ``P``.
    s : float
        Upper end of the integral (m or rad).
    """
    n = int(P[lo + L_SP_NT])
    if n == 0:
        return 0.0
    i = _table_point(P, lo, s, n)       # K(s_i) is precomputed
    si = P[lo + L_SP_S + i]
    ki = _k_at(P, lo, si, n)
    ks = _k_at(P, lo, s, n)
    return P[lo + L_SP_KC + i] + 0.5 * (ki + ks) * (s - si)


@njit(cache=True)
def spring_force(P, lo, s):
    """Linear spring with preload F0 and stroke-dependent stiffness:  F = F0 - K(s).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters, from which the leg's preload ``L_SP_F0`` and table are
        read (module docstring).
    lo : int
        Offset of the leg's block in ``P``.
    s : float
        The spring's stroke (m) or angle (rad).
    """
    if int(P[lo + L_SP_NT]) == 0:
        return 0.0
    return P[lo + L_SP_F0] - spring_K(P, lo, s)


@njit(cache=True)
def spring_potential(P, lo, s):
    """V(s) with F = -dV/ds, V(0) = 0:  V = -F0 s + int_0^s K (Simpson: exact, K is quadratic
    on each table segment).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        Packed parameters (module docstring): the preload, the table and its cumulative
        integrals ``L_SP_VC``.
    lo : int
        Offset of the leg's block in ``P``.
    s : float
        Where V is wanted (m or rad).
    """
    n = int(P[lo + L_SP_NT])
    if n == 0:
        return 0.0
    i = _table_point(P, lo, s, n)
    si = P[lo + L_SP_S + i]
    # no table point lies strictly between s_i and s, so K is quadratic there: Simpson is exact
    acc = P[lo + L_SP_VC + i] + (s - si) / 6.0 * (
        spring_K(P, lo, si) + 4.0 * spring_K(P, lo, 0.5 * (si + s)) + spring_K(P, lo, s))
    return -P[lo + L_SP_F0] * s + acc


@njit(cache=True)
def damper_force(P, lo, v):
    """Viscous damper F = -c v.

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        Packed parameters (module docstring); the damping ``L_DA_C`` is read.
    lo : int
        Offset of the leg's block in ``P``.
    v : float
        The device-joint rate (m/s or rad/s).
    """
    return -P[lo + L_DA_C] * v


@njit(cache=True)
def brake_force(P, lo, v):
    """Friction brake: Coulomb level Fc, break-away level Fb >= Fc reached near zero rate
    (Stribeck velocity vs), regularised by tanh(v / vr) so a fixed-step integrator stays
    stable when dt < 2 m_eff vr / Fb.  F = -(Fc + (Fb - Fc) exp(-(v/vs)^2)) tanh(v/vr).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters (module docstring): the brake's levels and
        velocities ``L_BR_*``.
    lo : int
        Offset of the leg's block in ``P``.
    v : float
        The rate the brake resists (m/s or rad/s).
    """
    fc = P[lo + L_BR_FC]
    if fc <= 0.0 and P[lo + L_BR_FB] <= 0.0:
        return 0.0
    fb = P[lo + L_BR_FB]
    x = v / P[lo + L_BR_VS]
    return -(fc + (fb - fc) * math.exp(-x * x)) * math.tanh(v / P[lo + L_BR_VR])


@njit(cache=True)
def emd_force(P, lo, v):
    """Electromechanical damper (ball screw + gear + motor shorted through a resistor):
    back-EMF damping F = -(G^2 k_t k_e / R) v.  Its reflected rotor inertia J G^2 is added to
    the leg's mass matrix on the device joint (not a force).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters, the back-EMF damping ``L_EM_C`` among them (module
        docstring).
    lo : int
        Offset of the leg's block.
    v : float
        The device joint's rate (m/s or rad/s).
    """
    return -P[lo + L_EM_C] * v


@njit(cache=True)
def drive_force(P, lo, s, v, s_cmd, v_cmd):
    """Position/velocity drive (alignment, retraction): PD law saturated at +-Fmax.

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters: the drive's switch, gains and saturation ``L_DR_*``
        (the arguments: module docstring).
    lo : int
        Offset of the leg's block in ``P``.
    s, v, s_cmd, v_cmd : float
        The device joint's coordinate and rate, and the drive's commanded ones.
    """
    if P[lo + L_DR_ON] == 0.0:
        return 0.0
    f = P[lo + L_DR_KP] * (s_cmd - s) + P[lo + L_DR_KD] * (v_cmd - v)
    fm = P[lo + L_DR_FMAX]
    if f > fm:
        f = fm
    elif f < -fm:
        f = -fm
    return f


@njit(cache=True)
def stop_force(P, lo, s, v):
    """Hard end stops at the stroke limits: unilateral penalty spring-damper (never pulls).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters: the end stops' switch, limits, stiffness and damping
        ``L_ST_*`` (module docstring).
    lo : int
        Offset of the leg's block in ``P``.
    s, v : float
        The device joint's coordinate and rate.
    """
    if P[lo + L_ST_ON] == 0.0:
        return 0.0
    smax = P[lo + L_ST_MAX]
    smin = P[lo + L_ST_MIN]
    k = P[lo + L_ST_K]
    c = P[lo + L_ST_C]
    if s > smax:
        f = -k * (s - smax) - c * v
        return f if f < 0.0 else 0.0
    if s < smin:
        f = k * (smin - s) - c * v
        return f if f > 0.0 else 0.0
    return 0.0


@njit(cache=True)
def rate_slope(P, lo, s, v, s_cmd, v_cmd):
    """d F / d v of the sum of the leg's devices at (s, v): the damper's and EMD's -c, the brake's
    regularised core, the drive's -kd while unsaturated, an engaged end stop's -c. Its stiff
    part is the brake's: -F_b / v_r at v = 0 (1.1e5 N s/m on the peripheral preset), what caps an
    explicit step near 1 ms once the brakes hold (docs/models/world.md §6).

    Parameters
    ----------
    P : float64[HDR + n_legs * LP]
        The mechanism's packed parameters: every device entry of the leg (module docstring, as
        for the other arguments).
    lo : int
        The leg's block offset.
    s, v, s_cmd, v_cmd : float
        The device joint's state, the drive's command.
    """
    g = -P[lo + L_DA_C] - P[lo + L_EM_C]
    fc = P[lo + L_BR_FC]
    fb = P[lo + L_BR_FB]
    if fc > 0.0 or fb > 0.0:
        vs = P[lo + L_BR_VS]
        vr = P[lo + L_BR_VR]
        x = v / vs
        e = math.exp(-x * x)
        lev = fc + (fb - fc) * e
        th = math.tanh(v / vr)
        # F = -lev(v) tanh(v / vr)
        g += -(-2.0 * x / vs * (fb - fc) * e) * th - lev * (1.0 - th * th) / vr
    if P[lo + L_DR_ON] != 0.0:
        f = P[lo + L_DR_KP] * (s_cmd - s) + P[lo + L_DR_KD] * (v_cmd - v)
        if -P[lo + L_DR_FMAX] < f < P[lo + L_DR_FMAX]:
            g -= P[lo + L_DR_KD]
    if P[lo + L_ST_ON] != 0.0 and stop_force(P, lo, s, v) != 0.0:
        g -= P[lo + L_ST_C]
    return g
