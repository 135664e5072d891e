"""Safety checks (each a named :class:`Reason`) and the safe-stop trajectory generator.

**Checks** — :func:`check` (njit) runs every cycle over preallocated arrays, in this order,
and returns the first reason that applies (``Reason.NONE`` = all clear); ``detail`` gets
``[index, value]`` of the offending axis/leg/quantity:

=====================  ====================================================================
NONFINITE              NaN/Inf in the command pose, twist or acceleration, the wrenches, or
                       the controller's ``extra`` array (e.g. the spacecraft states)
PLATFORM_ESTOP         platform reports E_STOPPED
PLATFORM_FAULT         platform reports FAULT
SENSOR_LINK_LOST       no new sensor sample for ``stale_cycles`` consecutive cycles (the trip's
                       text adds the endpoint and when its last frame came)
CRC_BURST              more than ``crc_max`` CRC errors within the last ``burst_window`` cycles
SEQUENCE_GAP_BURST     more than ``gap_max`` sequence gaps within the last ``burst_window`` cycles
FORCE_LIMIT            |F_i| of the sensor-frame wrench above ``rating_fraction`` x rating_i
TORQUE_LIMIT           |T_i| likewise
POSITION_BOX           commanded top position outside the pose box (base frame)
ORIENTATION_BOX        commanded top orientation (rotation vector) outside the box
LEG_TOO_SHORT / LONG   an actuator length of the command outside [length_min, length_max]
COMMAND_VELOCITY       |v| of the command above ``v_max``
COMMAND_ANGULAR_VELOCITY  |omega| above ``omega_max``
COMMAND_ACCELERATION   |a| of the command above ``a_max`` (x ``accel_margin``)
COMMAND_ANGULAR_ACCELERATION  |alpha| above ``alpha_max`` (x ``accel_margin``)
OVERRUN_STREAK         the loop overran ``overrun_streak_max`` consecutive cycles
HEARTBEAT_LOST         the controlling console's lease expired (reported by telemetry)
=====================  ====================================================================

The command's twist and acceleration are those of the platform top T in the base frame B
(``[v; omega]``, both in B components), as produced by the coupling.

**Safe stop** — :class:`SafeStop`: from the current commanded pose and twist, decelerate to
rest along the current path (same straight-line direction of v, same rotation axis of omega,
both reaching zero at the same time ``T = max(|v|/a_max, |omega|/alpha_max)``, so neither
deceleration exceeds its limit), then report ``done`` and the controller requests FREEZE.
The trajectory is evaluated in closed form at the elapsed time (``k * dt``, or the time
that really passed when the loop skipped slots: ``SafeStop.step(dt)``; no accumulated error).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
from numba import njit

from drivers.motion_platform import FaultCode
from rt.stand import hexapod as HX
from rt.dynamics import spatial as SP
from rt.jit import KERNEL


class Reason(IntEnum):
    NONE = 0
    NONFINITE = 1
    PLATFORM_ESTOP = 2
    PLATFORM_FAULT = 3
    SENSOR_LINK_LOST = 4
    CRC_BURST = 5
    SEQUENCE_GAP_BURST = 6
    FORCE_LIMIT = 7
    TORQUE_LIMIT = 8
    POSITION_BOX = 9
    ORIENTATION_BOX = 10
    LEG_TOO_SHORT = 11
    LEG_TOO_LONG = 12
    COMMAND_VELOCITY = 13
    COMMAND_ANGULAR_VELOCITY = 14
    COMMAND_ACCELERATION = 15
    COMMAND_ANGULAR_ACCELERATION = 16
    OVERRUN_STREAK = 17
    HEARTBEAT_LOST = 18
    # checked by the controller (rt/control/controller.py) after check() passes
    PLATFORM_LINK_LOST = 19
    TRACKING_ERROR = 20
    SENSOR_FROZEN = 21
    ARM_TIMEOUT = 22
    OVERLOAD = 23
    MODEL_FAILURE = 24      # the flight model could not be evaluated (rt.control.kernels.hil_cycle_packed)
    DELAY_OUT_OF_BAND = 25  # the identified platform delay left its band (rt.stand.delay_id)
    ARMING_CONTACT = 26     # a load on the passive unit during the arming move or at READY (units latched/touching)
    SENSOR_STATUS = 27      # the force/torque sensor's newest sample carries a non-zero status (e.g. saturated)
    RUNLOG_FAILED = 28      # the run log could not be written (a full disk) and [runlog] on_failure = "trip"
    CYCLE_FAILURE = 29      # the controller's own cycle raised (a defect): safe stop, never an exit
    RETRACT_LOAD = 30       # the load on the passive unit grew during a retract (the units are held together)
    MECHANISM_FAULT = 31    # the docking mechanism's control unit reports a fault (its Modbus link)
    ROBOT_CYCLE_MISSED = 32  # an industrial robot's exchange missed a run of its cycles (drivers.robot_platform):
                             # stopped before the robot's own late-packet limit stops the robot


# every reason as a plain int for the compiled kernels (numba reads module-level ints as constants)
R_NONFINITE = int(Reason.NONFINITE)
R_PLATFORM_ESTOP = int(Reason.PLATFORM_ESTOP)
R_PLATFORM_FAULT = int(Reason.PLATFORM_FAULT)
R_SENSOR_LINK_LOST = int(Reason.SENSOR_LINK_LOST)
R_CRC_BURST = int(Reason.CRC_BURST)
R_SEQUENCE_GAP_BURST = int(Reason.SEQUENCE_GAP_BURST)
R_FORCE_LIMIT = int(Reason.FORCE_LIMIT)
R_TORQUE_LIMIT = int(Reason.TORQUE_LIMIT)
R_COMMAND_VELOCITY = int(Reason.COMMAND_VELOCITY)
R_COMMAND_ANGULAR_VELOCITY = int(Reason.COMMAND_ANGULAR_VELOCITY)
R_COMMAND_ACCELERATION = int(Reason.COMMAND_ACCELERATION)
R_COMMAND_ANGULAR_ACCELERATION = int(Reason.COMMAND_ANGULAR_ACCELERATION)
R_OVERRUN_STREAK = int(Reason.OVERRUN_STREAK)
R_HEARTBEAT_LOST = int(Reason.HEARTBEAT_LOST)
R_PLATFORM_LINK_LOST = int(Reason.PLATFORM_LINK_LOST)
R_TRACKING_ERROR = int(Reason.TRACKING_ERROR)
R_SENSOR_FROZEN = int(Reason.SENSOR_FROZEN)
R_OVERLOAD = int(Reason.OVERLOAD)
R_MODEL_FAILURE = int(Reason.MODEL_FAILURE)
R_DELAY_OUT_OF_BAND = int(Reason.DELAY_OUT_OF_BAND)
R_SENSOR_STATUS = int(Reason.SENSOR_STATUS)
# the SENSOR_SAMPLE status bits this controller knows (docs/protocols.md); others are named by value
SENSOR_STATUS_BITS = {0x1: "saturated: an axis at its rating, the measured wrench is not the load"}


def sensor_status_text(status: int) -> str:
    """The sensor's status word in words (allocates: call only on a trip)."""
    known = [t for b, t in SENSOR_STATUS_BITS.items() if status & b]
    rest = status & ~sum(SENSOR_STATUS_BITS)
    if rest:
        known.append(f"device bits 0x{rest:08x}")
    return f"the force/torque sensor reports status 0x{status:08x} ({'; '.join(known)})"


# the platform's own fault codes that are a trip reason of their own (drivers.motion_platform.FaultCode)
FAULT_REASONS = {int(FaultCode.ROBOT_CYCLE_MISSED): Reason.ROBOT_CYCLE_MISSED}


def platform_fault_reason(code: int, fault: int) -> int:
    """A PLATFORM_FAULT trip named by the platform's fault code when that code is a reason of
    its own (FAULT_REASONS: an industrial robot's missed cycles); otherwise ``code``."""
    if code == Reason.PLATFORM_FAULT:
        return int(FAULT_REASONS.get(int(fault), code))
    return code


# hexapod Workspace code -> Reason
_WS = np.array([0, Reason.LEG_TOO_SHORT, Reason.LEG_TOO_LONG, Reason.POSITION_BOX, Reason.ORIENTATION_BOX,
                Reason.NONFINITE, Reason.NONFINITE], dtype=np.int64)

# limits array layout
L_VMAX, L_WMAX, L_AMAX, L_ALPHAMAX, L_FRAC = 0, 1, 2, 3, 4
L_RATING = 5  # 6 entries
L_STALE, L_WINDOW, L_CRCMAX, L_GAPMAX, L_OVERRUN, L_HEARTBEAT, L_ACCMARGIN = 11, 12, 13, 14, 15, 16, 17
N_LIMITS = 18

# counters layout (int64)
C_STALE, C_IDX, C_CRCSUM, C_GAPSUM = 0, 1, 2, 3


@dataclass(frozen=True)
class SafetyLimits:
    v_max_m_s: float = 0.5
    omega_max_rad_s: float = 0.5
    a_max_m_s2: float = 2.0
    alpha_max_rad_s2: float = 2.0
    accel_margin: float = 1.5           # command acceleration trips above margin x a_max
    sensor_rating: tuple = (2500.0, 2500.0, 6250.0, 400.0, 400.0, 400.0)   # N, N m per axis
    rating_fraction: float = 0.9
    stale_cycles: int = 5
    burst_window: int = 100
    crc_max: int = 3
    gap_max: int = 3
    overrun_streak_max: int = 5
    miss_budget: int = 50                # OVERLOAD: more missed deadlines than this ...
    miss_window_s: float = 1.0           # ... within this window (a leaky bucket: rt.control.kernels)
    heartbeat_enabled: bool = True
    tracking_error_max_m: float = 0.01   # measured top position vs the command sent the platform delay ago
    platform_stale_cycles: int = 20      # no STATUS from the platform for this many cycles
    sensor_frozen_samples: int = 50      # this many identical raw samples in a row = a frozen sensor
    arm_timeout_s: float = 30.0          # ENGAGE + tare + move to the initial pose must finish within this
    # the arming move's creep: its first arming_creep_m / arming_creep_rad at these speeds and
    # accelerations (also at most half of v_max / a_max ...), so that ARMING_CONTACT stops it within
    # a fraction of a millimetre of where a load appeared; the rest at half the run's limits
    arming_creep_m: float = 0.03
    arming_creep_rad: float = math.radians(3.0)
    arming_speed_m_s: float = 0.05
    arming_accel_m_s2: float = 0.25
    arming_rate_rad_s: float = math.radians(2.0)
    arming_angular_accel_rad_s2: float = math.radians(10.0)
    # end criterion "capture settled" (not trips; rt.control.kernels.run_statistics)
    contact_force_n: float = 50.0        # |f_P| above this counts as contact (first contact, contact held)
    capture_speed_max_m_s: float = 0.005     # relative speed of A in P below this ...
    capture_rate_max_rad_s: float = math.radians(0.2)   # ... and relative angular rate below this
    # ARMING_CONTACT: |f_P| above contact_force_n or |m_P| above this during the arming move / READY
    contact_moment_nm: float = 20.0
    # the ways back after a trip (rt.control.recovery): RETRACT moves the active unit this far
    # away from the passive one along the docking axis at this speed; RETRACT_LOAD trips when
    # |f_P| grows by more than the margin over its value at the retract's start
    retract_distance_m: float = 0.05
    retract_speed_m_s: float = 0.005
    retract_accel_m_s2: float = 0.05
    retract_force_margin_n: float = 100.0
    # ARM is refused while the loop missed more than miss_budget deadlines within this window
    arm_health_window_s: float = 5.0
    # what the platform is told when the controller's own cycle keeps failing (rt.control.failsafe)
    failsafe_action: str = "freeze"

    def pack(self) -> np.ndarray:
        a = np.zeros(N_LIMITS)
        a[L_VMAX], a[L_WMAX], a[L_AMAX], a[L_ALPHAMAX] = (self.v_max_m_s, self.omega_max_rad_s,
                                                          self.a_max_m_s2, self.alpha_max_rad_s2)
        a[L_FRAC] = self.rating_fraction
        a[L_RATING:L_RATING + 6] = self.sensor_rating
        a[L_STALE], a[L_WINDOW], a[L_CRCMAX], a[L_GAPMAX] = self.stale_cycles, self.burst_window, self.crc_max, self.gap_max
        a[L_OVERRUN] = self.overrun_streak_max
        a[L_HEARTBEAT] = 1.0 if self.heartbeat_enabled else 0.0
        a[L_ACCMARGIN] = self.accel_margin
        return a


@njit(**KERNEL)
def _norm3(v, o):
    return math.sqrt(v[o] * v[o] + v[o + 1] * v[o + 1] + v[o + 2] * v[o + 2])


@njit(**KERNEL)
def _allfinite(a):
    for i in range(a.shape[0]):
        if not math.isfinite(a[i]):
            return i
    return -1


@njit(**KERNEL)
def check(lim, base, top, leg_lim, box, ctr, crc_ring, gap_ring, pose_cmd, vel_cmd, acc_cmd, w_S, w_P, extra,
          new_sample, crc_new, gap_new, platform_fault, platform_estop, overrun_streak, heartbeat_lost,
          lengths_out, detail):
    """One cycle of safety checks; returns a :class:`Reason` code (see the module docstring).
    Counters (stale, burst windows) are updated every call before any check.

    Parameters
    ----------
    lim : float64[N_LIMITS]
        The safety limits, layout ``L_*`` (:meth:`SafetyLimits.pack`).
    base : float64[6, 3]
        The hexapod's base joints, B, m.
    top : float64[6, 3]
        The hexapod's top joints, T, m.
    leg_lim : float64[2]
        Actuator length range ``[length_min, length_max]``, m.
    box : float64[12]
        The pose box (``rt.stand.hexapod.BOX_SIZE``), m and rad, B.
    ctr : int64[4]
        Counters, layout ``C_*``: cycles without a new sample, ring index, CRC errors and
        sequence gaps in the burst window; updated.
    crc_ring : int64[burst_window]
        Corrupt sensor frames per cycle over the burst window; updated.
    gap_ring : int64[burst_window]
        Sequence gaps per cycle over the burst window; updated.
    pose_cmd : float64[7]
        The command pose of the top ``[p_BT_B (m), q_BT]``.
    vel_cmd : float64[6]
        The command twist ``[v (m/s); omega (rad/s)]``, T in B, B components.
    acc_cmd : float64[6]
        The command acceleration ``[a (m/s^2); alpha (rad/s^2)]``, B components.
    w_S : float64[6]
        The wrench measured in the sensor frame S (untared), N and N·m: against the sensor's rating.
    w_P : float64[6]
        The contact wrench on the passive unit in P, N and N·m (checked finite only).
    extra : float64[n]
        The controller's further values checked finite (e.g. the coupling's output); may be empty.
    new_sample : bool
        A new sensor sample arrived this cycle.
    crc_new : int
        Corrupt sensor frames this cycle.
    gap_new : int
        Sensor sequence gaps this cycle.
    platform_fault : bool
        The platform reports FAULT.
    platform_estop : bool
        The platform reports E_STOPPED.
    overrun_streak : int
        Consecutive loop overruns so far.
    heartbeat_lost : bool
        The controlling console's lease expired.
    lengths_out : float64[6]
        Written: the command's actuator lengths, m.
    detail : float64[2]
        Written: ``[index, value]`` of what tripped (-1, 0 when clear).
    """
    # -- counters
    if new_sample:
        ctr[0] = 0
    else:
        ctr[0] += 1
    w = crc_ring.shape[0]
    i = ctr[1]
    ctr[2] += crc_new - crc_ring[i]
    crc_ring[i] = crc_new
    ctr[3] += gap_new - gap_ring[i]
    gap_ring[i] = gap_new
    ctr[1] = (i + 1) % w
    detail[0] = -1.0
    detail[1] = 0.0
    # -- NaN / Inf anywhere
    k = _allfinite(pose_cmd)
    if k < 0:
        k = _allfinite(vel_cmd)
        if k >= 0:
            k += 7
    if k < 0:
        k = _allfinite(acc_cmd)
        if k >= 0:
            k += 13
    if k < 0:
        k = _allfinite(w_S)
        if k >= 0:
            k += 19
    if k < 0:
        k = _allfinite(w_P)
        if k >= 0:
            k += 25
    if k < 0:
        k = _allfinite(extra)
        if k >= 0:
            k += 31
    if k >= 0:
        detail[0] = k
        return R_NONFINITE
    if platform_estop:
        return R_PLATFORM_ESTOP
    if platform_fault:
        return R_PLATFORM_FAULT
    if ctr[0] >= lim[L_STALE]:
        detail[1] = ctr[0]
        return R_SENSOR_LINK_LOST
    if ctr[2] > lim[L_CRCMAX]:
        detail[1] = ctr[2]
        return R_CRC_BURST
    if ctr[3] > lim[L_GAPMAX]:
        detail[1] = ctr[3]
        return R_SEQUENCE_GAP_BURST
    frac = lim[L_FRAC]
    for a in range(6):
        if abs(w_S[a]) > frac * lim[L_RATING + a]:
            detail[0] = a
            detail[1] = w_S[a]
            return R_FORCE_LIMIT if a < 3 else R_TORQUE_LIMIT
    code = HX.check_pose(base, top, leg_lim, box, pose_cmd, lengths_out, detail)
    if code != 0:
        return _WS[code]
    v = _norm3(vel_cmd, 0)
    if v > lim[L_VMAX]:
        detail[1] = v
        return R_COMMAND_VELOCITY
    v = _norm3(vel_cmd, 3)
    if v > lim[L_WMAX]:
        detail[1] = v
        return R_COMMAND_ANGULAR_VELOCITY
    v = _norm3(acc_cmd, 0)
    if v > lim[L_AMAX] * lim[L_ACCMARGIN]:
        detail[1] = v
        return R_COMMAND_ACCELERATION
    v = _norm3(acc_cmd, 3)
    if v > lim[L_ALPHAMAX] * lim[L_ACCMARGIN]:
        detail[1] = v
        return R_COMMAND_ANGULAR_ACCELERATION
    if overrun_streak >= lim[L_OVERRUN]:
        detail[1] = overrun_streak
        return R_OVERRUN_STREAK
    if heartbeat_lost and lim[L_HEARTBEAT] != 0.0:
        return R_HEARTBEAT_LOST
    return 0


_DETAIL_NAMES = ("pose_cmd", "vel_cmd", "acc_cmd", "w_S", "w_P", "extra")
_DETAIL_OFFS = (0, 7, 13, 19, 25, 31)


def describe(code: int, detail: np.ndarray, lim: np.ndarray | None = None) -> str:
    """A sentence for a reason code and its detail (allocates: call only on a trip)."""
    r = Reason(int(code))
    i, v = int(detail[0]), float(detail[1])
    if r is Reason.NONE:
        return "all clear"
    if r is Reason.NONFINITE:
        k = max(j for j, o in enumerate(_DETAIL_OFFS) if i >= o)
        return f"non-finite value in {_DETAIL_NAMES[k]}[{i - _DETAIL_OFFS[k]}]"
    if r in (Reason.FORCE_LIMIT, Reason.TORQUE_LIMIT):
        ax = ("Fx", "Fy", "Fz", "Tx", "Ty", "Tz")[i]
        unit = "N" if i < 3 else "N·m"
        s = f"sensor-frame {ax} = {v:+.1f} {unit}"
        if lim is not None:
            s += (f", over the trip level ±{lim[L_FRAC] * lim[L_RATING + i]:.1f} {unit} "
                  f"({lim[L_FRAC]:.0%} of the sensor's {ax} rating)")
        else:
            s += " over the trip level"
        return s
    if r is Reason.SENSOR_STATUS:
        return sensor_status_text(int(v))
    if r in (Reason.POSITION_BOX, Reason.ORIENTATION_BOX, Reason.LEG_TOO_SHORT, Reason.LEG_TOO_LONG):
        ws = {Reason.POSITION_BOX: 3, Reason.ORIENTATION_BOX: 4, Reason.LEG_TOO_SHORT: 1, Reason.LEG_TOO_LONG: 2}[r]
        return "command " + HX.describe(ws, detail)
    return {
        Reason.PLATFORM_ESTOP: "platform reports E_STOPPED",
        Reason.PLATFORM_FAULT: "platform reports FAULT",
        Reason.ROBOT_CYCLE_MISSED: "the robot's cycles went unanswered (a run of missed exchanges)",
        Reason.SENSOR_LINK_LOST: f"sensor link lost: no new sample for {v:.0f} cycles",
        Reason.CRC_BURST: f"{v:.0f} corrupt sensor frames within the burst window",
        Reason.SEQUENCE_GAP_BURST: f"{v:.0f} sequence gaps within the burst window",
        Reason.COMMAND_VELOCITY: f"command speed {v:.6g} m/s over the limit",
        Reason.COMMAND_ANGULAR_VELOCITY: f"command angular speed {v:.6g} rad/s over the limit",
        Reason.COMMAND_ACCELERATION: f"command acceleration {v:.6g} m/s^2 over the limit",
        Reason.COMMAND_ANGULAR_ACCELERATION: f"command angular acceleration {v:.6g} rad/s^2 over the limit",
        Reason.OVERRUN_STREAK: f"{v:.0f} consecutive loop overruns",
        Reason.HEARTBEAT_LOST: "the controlling console's heartbeat was lost",
        Reason.PLATFORM_LINK_LOST: f"platform link lost: no STATUS for {v:.0f} cycles",
        Reason.TRACKING_ERROR: f"platform tracking error {v:.6g} m over the limit (lag beyond spec)",
        Reason.SENSOR_FROZEN: f"sensor raw values unchanged for {v:.0f} samples (frozen)",
        Reason.ARM_TIMEOUT: f"arming did not finish within {v:.6g} s",
        Reason.OVERLOAD: (f"loop overloaded: more deadlines missed within the miss window than its budget "
                          f"(the leaky bucket at {v:.2f})"),
        Reason.MODEL_FAILURE: ("the flight model could not be evaluated: the berthing arm's mass matrix is not "
                               "positive definite (state held at the last good cycle)"),
        Reason.DELAY_OUT_OF_BAND: f"identified platform delay {1e3 * v:.3g} ms outside its band",
        Reason.ARMING_CONTACT: f"a load of {v:.6g} on the passive unit while arming",
    }.get(r, r.name.replace("_", " ").lower())


class SafetyMonitor:
    """Preallocated state of :func:`check` plus the geometry it needs."""

    def __init__(self, limits: SafetyLimits, geometry: HX.HexapodGeometry):
        self.limits = limits
        self.lim = limits.pack()
        self.g = geometry
        self.leg_lim = geometry.limits
        self.ctr = np.zeros(4, dtype=np.int64)
        self.crc_ring = np.zeros(max(1, limits.burst_window), dtype=np.int64)
        self.gap_ring = np.zeros(max(1, limits.burst_window), dtype=np.int64)
        self.lengths = np.zeros(6)
        self.detail = np.zeros(2)
        self._empty = np.zeros(0)

    def check(self, pose_cmd, vel_cmd, acc_cmd, w_S, w_P, extra=None, *, new_sample=True, crc_new=0, gap_new=0,
              platform_fault=False, platform_estop=False, overrun_streak=0, heartbeat_lost=False) -> int:
        return check(self.lim, self.g.base, self.g.top, self.leg_lim, self.g.box, self.ctr, self.crc_ring,
                     self.gap_ring, pose_cmd, vel_cmd, acc_cmd, w_S, w_P, self._empty if extra is None else extra,
                     new_sample, crc_new, gap_new, platform_fault, platform_estop, overrun_streak, heartbeat_lost,
                     self.lengths, self.detail)

    def describe(self, code: int) -> str:
        return describe(code, self.detail, self.lim)

    def reset(self) -> None:
        self.ctr[:] = 0
        self.crc_ring[:] = 0
        self.gap_ring[:] = 0


# ----------------------------------------------------------------------------- safe stop

# state layout: p0(3) q0(4) v0(3) w0(3) T k dt done  (k = steps taken, t = k dt)
SS_SIZE = 17


@njit(**KERNEL)
def safe_stop_init(state, pose, twist, a_max, alpha_max, dt):
    """Start a stop from ``pose`` (7, top in B) and ``twist`` (6, [v; omega] in B). A
    non-finite twist is taken as zero (stop in place); returns the stop time T (s).

    Parameters
    ----------
    state : float64[SS_SIZE]
        Written: the stop's state (start pose, start twist, T, elapsed periods, period, done).
    pose : float64[7]
        The current command pose ``[p_BT_B (m), q_BT]``.
    twist : float64[6]
        The current command twist ``[v (m/s); omega (rad/s)]``, B.
    a_max : float
        Deceleration limit, m/s^2.
    alpha_max : float
        Angular deceleration limit, rad/s^2.
    dt : float
        The loop period, s.
    """
    for i in range(7):
        state[i] = pose[i]
    ok = True
    for i in range(6):
        if not math.isfinite(twist[i]):
            ok = False
    for i in range(6):
        state[7 + i] = twist[i] if ok else 0.0
    v = math.sqrt(state[7] ** 2 + state[8] ** 2 + state[9] ** 2)
    w = math.sqrt(state[10] ** 2 + state[11] ** 2 + state[12] ** 2)
    T = max(v / a_max, w / alpha_max)
    state[13] = T
    state[14] = 0.0
    state[15] = dt
    state[16] = 1.0 if T == 0.0 else 0.0
    return T


@njit(**KERNEL)
def safe_stop_eval(state, t, pose_out, twist_out, rv, dq):
    """Pose and twist of the stop trajectory at time t (rv (3), dq (4) scratch).

    Parameters
    ----------
    state : float64[SS_SIZE]
        The stop's state: start pose (7), start twist (6), stop time T (s), elapsed periods, period
        (s), done flag.
    t : float
        Time since the stop's start, s (held at T beyond it).
    pose_out : float64[7]
        Written: the command pose ``[p_BT_B (m), q_BT]``.
    twist_out : float64[6]
        Written: the command twist ``[v (m/s); omega (rad/s)]``, B.
    rv : float64[3]
        Scratch.
    dq : float64[4]
        Scratch.
    """
    T = state[13]
    if t > T:
        t = T
    # s(t) = t - t^2 / (2T): distance factor; sdot = 1 - t/T
    if T > 0.0:
        s = t - 0.5 * t * t / T
        sd = 1.0 - t / T
    else:
        s = 0.0
        sd = 0.0
    for i in range(3):
        pose_out[i] = state[i] + state[7 + i] * s
        rv[i] = state[10 + i] * s
        twist_out[i] = state[7 + i] * sd
        twist_out[3 + i] = state[10 + i] * sd
    SP.quat_from_rotvec(rv, dq)
    SP.quat_mul(dq, state[3:7], pose_out[3:7])  # exp(phi) (x) q0, phi in B
    SP.quat_normalize(pose_out[3:7])


@njit(**KERNEL)
def safe_stop_step(state, pose_out, twist_out, rv, dq):
    """Advance one period; writes the next command; returns True once at rest.

    Parameters
    ----------
    state : float64[SS_SIZE]
        The stop's state (:func:`safe_stop_init`); its elapsed periods and done flag updated.
    pose_out, twist_out : float64 arrays
        Written: the command pose and twist, as by :func:`safe_stop_eval`.
    rv, dq : float64 arrays
        Scratch of :func:`safe_stop_eval`.
    """
    return safe_stop_advance(state, state[15], pose_out, twist_out, rv, dq)


@njit(**KERNEL)
def safe_stop_advance(state, h, pose_out, twist_out, rv, dq):
    """Advance by the time ``h`` that really passed (an overrunning loop skips slots: its cycles
    are more than one period apart, and a stop stepped by the period would decelerate on the
    platform's clock faster than the limit at its start); writes the command; True at rest.
    ``state[14]`` counts the elapsed time in periods (``h = dt`` adds exactly 1).

    Parameters
    ----------
    state : float64[SS_SIZE]
        The stop's state (:func:`safe_stop_init`); its elapsed periods and done flag updated.
    h : float
        Time since the last command, s.
    pose_out, twist_out : float64 arrays
        Written: the command pose and twist (:func:`safe_stop_eval`).
    rv, dq : float64 arrays
        Scratch.
    """
    state[14] += h / state[15]
    t = state[14] * state[15]
    safe_stop_eval(state, t, pose_out, twist_out, rv, dq)
    if t >= state[13] - 1e-9 * state[15]:
        state[16] = 1.0
    return state[16] != 0.0


class SafeStop:
    """Bring the platform command to rest within the acceleration limits, then say FREEZE."""

    def __init__(self, dt_s: float, a_max_m_s2: float, alpha_max_rad_s2: float):
        self.dt = float(dt_s)
        self.a_max = float(a_max_m_s2)
        self.alpha_max = float(alpha_max_rad_s2)
        self.state = np.zeros(SS_SIZE)
        self.pose = np.zeros(7)
        self.twist = np.zeros(6)
        self._rv = np.zeros(3)
        self._dq = np.zeros(4)
        self.active = False

    def start(self, pose: np.ndarray, twist: np.ndarray) -> float:
        """Begin from the current command; returns the time to rest (s)."""
        T = safe_stop_init(self.state, pose, twist, self.a_max, self.alpha_max, self.dt)
        self.pose[:] = pose
        self.twist[:] = self.state[7:13]
        self.active = True
        return T

    def step(self, dt: float | None = None) -> bool:
        """Next command into ``self.pose`` / ``self.twist`` one period later, or ``dt`` later
        (the time since the last command, when the loop skipped slots); True when at rest
        (-> FREEZE)."""
        return bool(safe_stop_advance(self.state, self.dt if dt is None else float(dt), self.pose, self.twist,
                                      self._rv, self._dq))

    @property
    def done(self) -> bool:
        return bool(self.state[16])
