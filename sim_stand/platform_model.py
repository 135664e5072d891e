"""Emulated motion platform: per-actuator servo dynamics, transport delay, velocity /
acceleration / stroke limits, and the kinematics of the top (issue 7 item 1; docs/emulator.md).

Physics only (the device state machine and the wire protocol live in the emulator shell).
Each actuator i follows a second-order servo towards its delayed command,

    L_i'' = wn^2 (Lc_i(t - tau) - L_i) - 2 zeta wn L_i',

with the acceleration clipped to ``a_max``, the velocity to ``v_max``, and the stroke held at
its hard stops [L_min, L_max] (hitting a stop sets a fault flag). Integration is semi-implicit
Euler at the physics step (stable for wn dt << 1; the default 10 kHz with wn = 2 pi 15 Hz has
wn dt ~ 0.01). The transport delay is a ring buffer of commands sampled at the physics step.

The measured top pose comes from forward kinematics (``rt.stand.hexapod.forward``, Newton warm-started
at the previous pose); the top twist from the Jacobian, ``[v; w] = J^-1 L'``, and its
acceleration by differencing the twist over the physics step.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rt.stand import hexapod as H

# parameters
PP_WN, PP_ZETA, PP_VMAX, PP_AMAX, PP_LMIN, PP_LMAX, PP_DT, PP_NDELAY, PP_INTERP = range(9)
PP_LEN = 9
# state: lengths (6), rates (6), delay ring (ndelay x 6) stored separately, ring head, fault bits
FAULT_STROKE = 1
FAULT_VELOCITY = 2


@dataclass(frozen=True)
class PlatformParams:
    bandwidth_hz: float = 15.0
    damping_ratio: float = 0.8
    velocity_max_mps: float = 0.5
    acceleration_max_mps2: float = 5.0
    transport_delay_s: float = 0.002
    physics_dt_s: float = 1e-4
    # how the controller's set-point reaches the servo within a cycle: "hold" (the new set-point
    # for the whole cycle: a staircase) or "linear" (interpolated from the last one over the
    # cycle: a ramp, half a cycle later on average; sim_stand.world.world_advance)
    interpolation: str = "hold"

    def pack(self, length_min_m: float, length_max_m: float) -> np.ndarray:
        p = np.zeros(PP_LEN)
        p[PP_WN] = 2.0 * np.pi * self.bandwidth_hz
        p[PP_ZETA] = self.damping_ratio
        p[PP_VMAX] = self.velocity_max_mps
        p[PP_AMAX] = self.acceleration_max_mps2
        p[PP_LMIN], p[PP_LMAX] = length_min_m, length_max_m
        p[PP_DT] = self.physics_dt_s
        p[PP_NDELAY] = max(0, int(round(self.transport_delay_s / self.physics_dt_s)))
        p[PP_INTERP] = 1.0 if self.interpolation == "linear" else 0.0
        return p


@njit(cache=True)
def servo_step(par, L, Ld, Ldd, ring, head, cmd):
    """Advance the six actuators by one physics step. ``cmd`` (6) is the command arriving now;
    it is pushed into the delay ring and the command from ``ndelay`` steps ago is tracked.
    Returns (new head, fault bits).

    Parameters
    ----------
    par : float64[PP_LEN]
        Packed servo parameters (``PlatformParams.pack``): natural frequency ``PP_WN`` (rad/s),
        damping ratio, velocity and acceleration limits (m/s, m/s^2), stroke stops
        ``PP_LMIN``/``PP_LMAX`` (m), physics step ``PP_DT`` (s), delay length ``PP_NDELAY``
        (steps).
    L : float64[6]
        Actuator lengths (m); advanced in place and held at the stroke stops.
    Ld : float64[6]
        Actuator rates (m/s); advanced in place, zeroed at a stop.
    Ldd : float64[6]
        Output: actuator accelerations over this step (m/s^2), after the limits.
    ring : float64[max(1, ndelay), 6]
        Delay line of commanded lengths (m), one row per physics step; the newest command is
        written at ``head``. Unused when ``ndelay`` is 0.
    head : int
        Ring slot this step's command is written to; the head returned is the next slot.
    cmd : float64[6]
        The six commanded actuator lengths arriving this step (m).
    """
    nd = int(par[PP_NDELAY])
    wn, ze, vmax, amax = par[PP_WN], par[PP_ZETA], par[PP_VMAX], par[PP_AMAX]
    lmin, lmax, dt = par[PP_LMIN], par[PP_LMAX], par[PP_DT]
    fault = 0
    if nd > 0:
        for i in range(6):
            ring[head, i] = cmd[i]
        head = (head + 1) % nd
    for i in range(6):
        c = ring[head, i] if nd > 0 else cmd[i]  # oldest entry = command from nd steps ago
        a = wn * wn * (c - L[i]) - 2.0 * ze * wn * Ld[i]
        if a > amax:
            a = amax
        elif a < -amax:
            a = -amax
        v = Ld[i] + a * dt
        if v > vmax:
            v = vmax
        elif v < -vmax:
            v = -vmax
        Ldd[i] = (v - Ld[i]) / dt
        Ld[i] = v
        L[i] += v * dt
        if L[i] < lmin:
            L[i] = lmin
            Ld[i] = 0.0
            fault |= FAULT_STROKE
        elif L[i] > lmax:
            L[i] = lmax
            Ld[i] = 0.0
            fault |= FAULT_STROKE
    return head, fault


class PlatformModel:
    """The emulated platform's physics: actuators, delay line, and top kinematics."""

    def __init__(self, geometry: H.HexapodGeometry, params: PlatformParams):
        self.hex = H.Hexapod(geometry)
        self.geometry = geometry
        self.params = params
        lim = geometry.limits
        self.par = params.pack(float(lim[0]), float(lim[1]))
        nd = max(1, int(self.par[PP_NDELAY]))
        self.ring = np.zeros((nd, 6))
        self.head = 0
        self.L = np.zeros(6)
        self.Ld = np.zeros(6)
        self.Ldd = np.zeros(6)
        self.cmd = np.zeros(6)
        self.pose = np.zeros(H.POSE_SIZE)
        self.pose[3] = 1.0
        self.twist = np.zeros(6)      # [v; w] of the top in B
        self.twist_prev = np.zeros(6)
        self.accel = np.zeros(6)      # d/dt twist, B components
        self.fault = 0
        self._J = np.zeros((6, 6))
        self._Ltmp = np.zeros(6)
        self._b = np.zeros(6)

    def reset_to_pose(self, pose: np.ndarray) -> None:
        """Place the platform at rest at ``pose`` (lengths from inverse kinematics)."""
        self.pose[:] = pose
        self.hex.inverse(self.pose, self.L, self._J)
        self.Ld[:] = 0.0
        self.cmd[:] = self.L
        self.ring[:] = self.L
        self.twist[:] = 0.0
        self.accel[:] = 0.0

    def step(self, cmd_lengths: np.ndarray) -> int:
        """One physics step towards ``cmd_lengths``; updates lengths, pose, twist, acceleration."""
        self.cmd[:] = cmd_lengths
        self.head, f = servo_step(self.par, self.L, self.Ld, self.Ldd, self.ring, self.head, self.cmd)
        self.fault |= f
        status, _ = self.hex.forward(self.L, self.pose, self.pose)
        self.hex.inverse(self.pose, self._Ltmp, self._J)
        self.twist_prev[:] = self.twist
        self._b[:] = self.Ld
        H.solve6(self._J, self._b, self.twist)
        self.accel[:] = (self.twist - self.twist_prev) / self.par[PP_DT]
        return int(status)


class PlatformReadings:
    """The platform's part of the world interface (``sim_stand.world.StandWorld``,
    ``sim_stand.free_world.FreeSpaceWorld``): what the emulator reports of the motion platform,
    read from the world's :class:`PlatformModel` ``self.platform``."""

    platform: PlatformModel

    @property
    def top_pose(self) -> np.ndarray:
        """``[p_BT_B, q_BT]``: the top's pose in the base frame B (rt.stand.hexapod layout)."""
        return self.platform.pose

    @property
    def top_twist(self) -> np.ndarray:
        """``[v; omega]`` of the top, B components."""
        return self.platform.twist

    @property
    def lengths(self) -> np.ndarray:
        """The six actuator lengths (m)."""
        return self.platform.L

    @property
    def platform_fault(self) -> int:
        """Fault bits (``FAULT_STROKE``, ``FAULT_VELOCITY``, and the world's own)."""
        return int(self.platform.fault)
