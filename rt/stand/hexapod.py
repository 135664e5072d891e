"""Gough–Stewart platform (hexapod) kinematics, shared by the controller and the emulator.

Frames and layout (docs/conventions.md, docs/controller.md):

* B: the hexapod **base** frame (fixed). T: the platform **top** frame (moves).
* A pose of the top is ``pose = [p_BT_B (3), q_BT (4)]`` (7 floats): the position of T's origin
  in B, and the Hamilton scalar-first quaternion rotating T-components into B-components.
* ``base`` (6, 3): joint centre of leg i on the base, in B. ``top`` (6, 3): joint centre of
  leg i on the top, in T. Leg i runs from ``base[i]`` to ``p + R_BT top[i]``.
* Jacobian ``J`` (6, 6): ``L_dot = J @ [v; omega]`` with v the velocity of T's origin and omega
  the angular velocity of T, **both in B components**. Row i is ``[u_i, r_i x u_i]`` where
  ``u_i`` is the unit leg vector and ``r_i = R_BT top[i]``. A small pose change
  ``[dp; dphi]`` (dphi a rotation vector in B, ``R <- exp(dphi) R``) changes the lengths by
  ``J @ [dp; dphi]`` to first order.

Kernels are ``@njit(cache=True)`` over caller-provided arrays; :func:`forward` needs a workspace
from :func:`fk_workspace`. Nothing here allocates per call or returns NaN: forward kinematics
reports a status code and leaves the last finite iterate (or the guess) in ``pose_out``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
from numba import njit

from rt.dynamics import linalg as LA
from rt.dynamics import spatial as SP
from rt.jit import KERNEL

POSE_SIZE = 7

# ----------------------------------------------------------------------------- status codes


class FKStatus(IntEnum):
    """Outcome of :func:`forward`."""

    OK = 0
    MAX_ITER = 1     # no convergence within the iteration cap
    SINGULAR = 2     # the Jacobian is (numerically) singular at an iterate
    NONFINITE = 3    # non-finite lengths or guess


class Workspace(IntEnum):
    """Why a pose or a set of lengths is refused (0 = reachable)."""

    OK = 0
    LEG_TOO_SHORT = 1
    LEG_TOO_LONG = 2
    POSITION_OUT_OF_BOX = 3
    ORIENTATION_OUT_OF_BOX = 4
    NONFINITE = 5
    NO_FORWARD_SOLUTION = 6


# workspace box layout: pos_lo(3) pos_hi(3) rot_lo(3) rot_hi(3) -- rot = rotation vector of q_BT
BOX_SIZE = 12


# ----------------------------------------------------------------------------- geometry


def joint_circle(radius_m: float, pair_separation_deg: float, top: bool, z_m: float = 0.0) -> np.ndarray:
    """Six joint centres on a circle, in pairs (the classic 6-6 layout).

    Base leg i (k = i // 2, s = -1 for even i, +1 for odd) sits at angle ``120 k + s sep/2``;
    top leg i sits at ``120 k + s (60 - sep/2)``, so each leg crosses to the neighbouring top
    pair and the legs form the usual zig-zag.
    """
    out = np.empty((6, 3))
    half = math.radians(pair_separation_deg) / 2.0
    for i in range(6):
        k, s = i // 2, (-1.0 if i % 2 == 0 else 1.0)
        a = math.radians(120.0 * k) + (s * (math.pi / 3.0 - half) if top else s * half)
        out[i] = (radius_m * math.cos(a), radius_m * math.sin(a), z_m)
    return out


@dataclass(frozen=True)
class HexapodGeometry:
    """Joint layout, leg length range, home pose and workspace box (all SI, frames above)."""

    base: np.ndarray                      # (6, 3) in B
    top: np.ndarray                       # (6, 3) in T
    length_min_m: float
    length_max_m: float
    home: np.ndarray                      # (7,) pose of T in B at rest
    box: np.ndarray = field(default=None)  # (12,) see BOX_SIZE; None -> unbounded

    def __post_init__(self):
        box = self.box
        if box is None:
            box = np.array([-1e9] * 3 + [1e9] * 3 + [-4.0] * 3 + [4.0] * 3)
        object.__setattr__(self, "box", np.ascontiguousarray(box, dtype=np.float64))
        for name in ("base", "top", "home"):
            object.__setattr__(self, name, np.ascontiguousarray(getattr(self, name), dtype=np.float64))
        if self.base.shape != (6, 3) or self.top.shape != (6, 3) or self.home.shape != (7,):
            raise ValueError("base and top must be (6, 3), home (7,)")
        if self.box.shape != (BOX_SIZE,):
            raise ValueError("box must have 12 entries")
        if not 0.0 < self.length_min_m < self.length_max_m:
            raise ValueError("need 0 < length_min_m < length_max_m")

    @property
    def limits(self) -> np.ndarray:
        """``[length_min, length_max]`` as an array for the kernels."""
        return np.array([self.length_min_m, self.length_max_m])

    @classmethod
    def from_circles(cls, base_radius_m: float, base_pair_separation_deg: float, top_radius_m: float,
                     top_pair_separation_deg: float, home_height_m: float, length_min_m: float,
                     length_max_m: float, box: np.ndarray | None = None) -> "HexapodGeometry":
        home = np.array([0.0, 0.0, home_height_m, 1.0, 0.0, 0.0, 0.0])
        return cls(joint_circle(base_radius_m, base_pair_separation_deg, False),
                   joint_circle(top_radius_m, top_pair_separation_deg, True),
                   length_min_m, length_max_m, home, box)


def default_geometry() -> HexapodGeometry:
    """A mid-size stand hexapod (≈ 1.0 m base radius, ≈ 0.6 m top, 1.6–2.6 m legs); the
    numbers of ``config/stand.toml``."""
    box = np.array([-0.4, -0.4, 1.55, 0.4, 0.4, 2.35,
                    -0.35, -0.35, -0.5, 0.35, 0.35, 0.5])
    return HexapodGeometry.from_circles(1.0, 20.0, 0.6, 20.0, 1.95, 1.5, 2.6, box)


# ----------------------------------------------------------------------------- kernels


@njit(inline="always", **KERNEL)
def pose_quat(pose):
    """``q_BT`` of a top pose ``[p_BT_B, q_BT]`` (T-components -> B-components, scalar first) as
    four scalars, normalised: ``q / |q|``; a zero quaternion is returned as it is. The pose array
    is untouched. Inlined into the caller (compiled with its options).

    Parameters
    ----------
    pose : float64[7]
        Top pose ``[p_BT_B (m), q_BT]``; only q_BT (entries 3..6) is read.
    """
    qw, qx, qy, qz = pose[3], pose[4], pose[5], pose[6]
    n = math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
    if n > 0.0:
        qw /= n
        qx /= n
        qy /= n
        qz /= n
    return qw, qx, qy, qz


@njit(inline="always", **KERNEL)
def pose_dcm(pose):
    """The nine entries of ``R_BT`` (row-major; T-components -> B-components) of a top pose
    ``[p_BT_B, q_BT]``, its quaternion used normalised (:func:`pose_quat`,
    ``spatial.quat_dcm_entries``). Inlined into the caller (compiled with its options).

    Parameters
    ----------
    pose : float64[7]
        Top pose ``[p_BT_B (m), q_BT]``; only q_BT (entries 3..6) is read.
    """
    qw, qx, qy, qz = pose_quat(pose)
    return SP.quat_dcm_entries(qw, qx, qy, qz)


@njit(**KERNEL)
def inverse(base, top, pose, lengths_out, J_out):
    """Leg lengths (6) and the Jacobian J (6, 6) of the top pose ``[p_BT_B, q_BT]``.

    ``q_BT`` need not be exactly unit: it is used normalised (the array itself is untouched).

    Parameters
    ----------
    base, top : float64[6, 3]
        Joint centre of each leg on the base, B, and on the top, T, m (module docstring).
    pose : float64[7]
        Top pose ``[p_BT_B (m), q_BT]``; q_BT used normalised.
    lengths_out : float64[6]
        Written: the leg lengths, m.
    J_out : float64[6, 6]
        Written: the Jacobian, row i ``[u_i, r_i x u_i]`` in B.
    """
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = pose_dcm(pose)
    for i in range(6):
        tx, ty, tz = top[i, 0], top[i, 1], top[i, 2]
        rx = r00 * tx + r01 * ty + r02 * tz
        ry = r10 * tx + r11 * ty + r12 * tz
        rz = r20 * tx + r21 * ty + r22 * tz
        lx = pose[0] + rx - base[i, 0]
        ly = pose[1] + ry - base[i, 1]
        lz = pose[2] + rz - base[i, 2]
        L = math.sqrt(lx * lx + ly * ly + lz * lz)
        lengths_out[i] = L
        inv = 1.0 / L if L > 0.0 else 0.0
        ux, uy, uz = lx * inv, ly * inv, lz * inv
        J_out[i, 0] = ux
        J_out[i, 1] = uy
        J_out[i, 2] = uz
        J_out[i, 3] = ry * uz - rz * uy
        J_out[i, 4] = rz * ux - rx * uz
        J_out[i, 5] = rx * uy - ry * ux


@njit(**KERNEL)
def leg_lengths(base, top, pose, lengths_out):
    """Leg lengths only (no Jacobian).

    Parameters
    ----------
    base, top : float64[6, 3]
        The legs' joint centres; this and the rest as for :func:`inverse`.
    pose : float64[7]
        Top pose.
    lengths_out : float64[6]
        Written: the leg lengths, m.
    """
    qw, qx, qy, qz = pose_quat(pose)
    for i in range(6):
        tx, ty, tz = top[i, 0], top[i, 1], top[i, 2]
        # r = t + 2 w (u x t) + 2 u x (u x t)
        cx = qy * tz - qz * ty
        cy = qz * tx - qx * tz
        cz = qx * ty - qy * tx
        rx = tx + 2.0 * (qw * cx + qy * cz - qz * cy)
        ry = ty + 2.0 * (qw * cy + qz * cx - qx * cz)
        rz = tz + 2.0 * (qw * cz + qx * cy - qy * cx)
        lx = pose[0] + rx - base[i, 0]
        ly = pose[1] + ry - base[i, 1]
        lz = pose[2] + rz - base[i, 2]
        lengths_out[i] = math.sqrt(lx * lx + ly * ly + lz * lz)


@njit(**KERNEL)
def solve6(A, b, x):
    """Solve A x = b (6x6) by Gaussian elimination with partial pivoting, in place on A and b
    (both destroyed). Returns False if a pivot is below 1e-14 of the largest entry.

    Parameters
    ----------
    A : float64[6, 6]
        The matrix; destroyed (reduced to upper-triangular form).
    b : float64[6]
        The right-hand side; destroyed.
    x : float64[6]
        Written: the solution (left as it was when False is returned).
    """
    n = 6
    scale = 0.0
    for i in range(n):
        for j in range(n):
            a = abs(A[i, j])
            if a > scale:
                scale = a
    if not scale > 0.0:
        return False
    for k in range(n):
        if not LA.partial_pivot(A, b, k, n, 1e-14 * scale):
            return False
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            f = A[i, k] * inv
            if f != 0.0:
                for j in range(k, n):
                    A[i, j] -= f * A[k, j]
                b[i] -= f * b[k]
    LA.back_substitute(A, b, x, n)
    return True


def fk_workspace() -> np.ndarray:
    """Scratch space for :func:`forward` (allocate once)."""
    return np.empty((10, 6))


@njit(**KERNEL)
def forward(base, top, lengths, guess, pose_out, work, tol_m, max_iter):
    """Forward kinematics by Newton–Raphson from ``guess`` (7): the top pose whose legs have
    ``lengths``. Converged when every length residual is below ``tol_m`` and the last step is
    below 1e3 * tol (m and rad).

    Returns ``(status, iterations)``; status is an :class:`FKStatus` code. On failure
    ``pose_out`` holds the guess (always finite if the guess is).

    Parameters
    ----------
    base, top : float64[6, 3]
        Joint centre of each leg on the base, B, and on the top, T, m (module docstring).
    lengths : float64[6]
        The leg lengths to reach, m.
    guess : float64[7]
        Start pose of the iteration ``[p_BT_B (m), q_BT]``.
    pose_out : float64[7]
        Written: the top pose found ``[p_BT_B (m), q_BT]``, q_BT with scalar part >= 0; the
        guess (normalised) on failure.
    work : float64[10, 6]
        Workspace (:func:`fk_workspace`).
    tol_m : float
        Convergence tolerance on the length residuals, m (the step's is 1e3 tol_m, m and rad).
    max_iter : int
        Iteration cap.
    """
    J = work[0:6, :]
    res = work[6, :]
    dx = work[7, :]
    L = work[8, :]
    dq = work[9, 0:4]
    for i in range(7):
        pose_out[i] = guess[i]
    for i in range(6):
        if not math.isfinite(lengths[i]):
            return 3, 0
    for i in range(7):
        if not math.isfinite(guess[i]):
            return 3, 0
    if SP.quat_normalize(pose_out[3:7]) == 0.0:
        return 3, 0
    it = 0
    while it < max_iter:
        inverse(base, top, pose_out, L, J)
        rmax = 0.0
        for i in range(6):
            res[i] = lengths[i] - L[i]
            if abs(res[i]) > rmax:
                rmax = abs(res[i])
        if not math.isfinite(rmax):
            break
        if not solve6(J, res, dx):
            for i in range(7):
                pose_out[i] = guess[i]
            SP.quat_normalize(pose_out[3:7])
            return 2, it
        it += 1
        smax = 0.0
        for i in range(6):
            if abs(dx[i]) > smax:
                smax = abs(dx[i])
        pose_out[0] += dx[0]
        pose_out[1] += dx[1]
        pose_out[2] += dx[2]
        # q <- exp(dphi) (x) q  (dphi in B)
        SP.quat_from_rotvec(dx[3:6], dq)
        pose_out[3], pose_out[4], pose_out[5], pose_out[6] = SP.quat_mul_entries(
            dq[0], dq[1], dq[2], dq[3], pose_out[3], pose_out[4], pose_out[5], pose_out[6])
        SP.quat_normalize(pose_out[3:7])
        if rmax < tol_m and smax < 1e3 * tol_m:
            if pose_out[3] < 0.0:
                for i in range(3, 7):
                    pose_out[i] = -pose_out[i]
            return 0, it
    # not converged (or diverged to non-finite): hand back the guess
    for i in range(7):
        pose_out[i] = guess[i]
    SP.quat_normalize(pose_out[3:7])
    return 1, it


@njit(**KERNEL)
def check_pose(base, top, limits, box, pose, lengths_out, detail):
    """Workspace check of a top pose: leg lengths into ``lengths_out`` and a
    :class:`Workspace` code; ``detail[0]`` = leg or axis index, ``detail[1]`` = offending value.

    Parameters
    ----------
    base, top : float64[6, 3]
        Joint centre of each leg on the base, B, and on the top, T, m (module docstring).
    limits : float64[2]
        Leg length range ``[length_min, length_max]``, m.
    box : float64[12]
        The pose box (``BOX_SIZE``): position low (3), high (3), m, B; rotation-vector low (3),
        high (3) of q_BT, rad.
    pose : float64[7]
        Top pose ``[p_BT_B (m), q_BT]`` to check.
    lengths_out : float64[6]
        Written: the leg lengths, m (only when position and orientation are inside the box).
    detail : float64[2]
        Written: ``[index, value]`` of the offending pose entry, axis or leg (-1, 0 when reachable).
    """
    detail[0] = -1.0
    detail[1] = 0.0
    for i in range(7):
        if not math.isfinite(pose[i]):
            detail[0] = i
            detail[1] = pose[i]
            return 5
    for k in range(3):
        if pose[k] < box[k] or pose[k] > box[3 + k]:
            detail[0] = k
            detail[1] = pose[k]
            return 3
    n = math.sqrt(pose[3] ** 2 + pose[4] ** 2 + pose[5] ** 2 + pose[6] ** 2)
    if n == 0.0:
        detail[0] = 3
        return 5
    # rotation vector of q_BT (shortest)
    w = pose[3] / n
    s = math.sqrt(pose[4] ** 2 + pose[5] ** 2 + pose[6] ** 2) / n
    sign = 1.0
    if w < 0.0:
        w = -w
        sign = -1.0
    angle = 2.0 * math.atan2(s, w)
    k_ = angle / s if s > 1e-12 else 2.0
    for k in range(3):
        r = sign * k_ * pose[4 + k] / n
        if r < box[6 + k] or r > box[9 + k]:
            detail[0] = k
            detail[1] = r
            return 4
    leg_lengths(base, top, pose, lengths_out)
    return check_lengths(limits, lengths_out, detail)


@njit(**KERNEL)
def check_lengths(limits, lengths, detail):
    """Length range check; :class:`Workspace` code, ``detail = [leg, length]``.

    Parameters
    ----------
    limits : float64[2]
        Leg length range ``[length_min, length_max]``, m.
    lengths : float64[6]
        The leg lengths to check, m.
    detail : float64[2]
        Written: ``[leg, length]`` of the first leg out of range (-1, 0 when all are in range).
    """
    detail[0] = -1.0
    detail[1] = 0.0
    for i in range(6):
        L = lengths[i]
        if not math.isfinite(L):
            detail[0] = i
            detail[1] = L
            return 5
        if L < limits[0]:
            detail[0] = i
            detail[1] = L
            return 1
        if L > limits[1]:
            detail[0] = i
            detail[1] = L
            return 2
    return 0


# ----------------------------------------------------------------------------- Python shell


def describe(code: int, detail: np.ndarray, geometry: HexapodGeometry | None = None) -> str:
    """A sentence for a :class:`Workspace` code and its detail array."""
    r = Workspace(int(code))
    idx = int(detail[0])
    val = float(detail[1])
    axis = "xyz"[idx] if 0 <= idx < 3 else str(idx)
    g = geometry
    if r is Workspace.OK:
        return "reachable"
    if r is Workspace.LEG_TOO_SHORT:
        return f"leg {idx} length {val:.6f} m below the minimum" + (f" {g.length_min_m} m" if g else "")
    if r is Workspace.LEG_TOO_LONG:
        return f"leg {idx} length {val:.6f} m above the maximum" + (f" {g.length_max_m} m" if g else "")
    if r is Workspace.POSITION_OUT_OF_BOX:
        return f"position {axis} = {val:.6f} m outside the pose box"
    if r is Workspace.ORIENTATION_OUT_OF_BOX:
        return f"rotation about {axis} = {val:.6f} rad outside the pose box"
    if r is Workspace.NONFINITE:
        return f"non-finite value at index {idx}"
    return "forward kinematics found no pose for these lengths"


class Hexapod:
    """Convenience shell holding the geometry and the scratch arrays (one per user thread)."""

    def __init__(self, geometry: HexapodGeometry, tol_m: float = 1e-13, max_iter: int = 30):
        self.g = geometry
        self.limits = geometry.limits
        self.tol_m = tol_m
        self.max_iter = max_iter
        self.lengths = np.empty(6)
        self.J = np.empty((6, 6))
        self.detail = np.empty(2)
        self._work = fk_workspace()

    def inverse(self, pose: np.ndarray, lengths_out=None, J_out=None) -> np.ndarray:
        L = self.lengths if lengths_out is None else lengths_out
        inverse(self.g.base, self.g.top, pose, L, self.J if J_out is None else J_out)
        return L

    def forward(self, lengths: np.ndarray, pose_out: np.ndarray, guess: np.ndarray | None = None) -> tuple[FKStatus, int]:
        st, it = forward(self.g.base, self.g.top, lengths, self.g.home if guess is None else guess,
                         pose_out, self._work, self.tol_m, self.max_iter)
        return FKStatus(st), it

    def check_pose(self, pose: np.ndarray) -> tuple[Workspace, str]:
        c = check_pose(self.g.base, self.g.top, self.limits, self.g.box, pose, self.lengths, self.detail)
        return Workspace(c), describe(c, self.detail, self.g)

    def check_lengths(self, lengths: np.ndarray) -> tuple[Workspace, str]:
        c = check_lengths(self.limits, lengths, self.detail)
        return Workspace(c), describe(c, self.detail, self.g)

    def warm_up(self) -> None:
        """Compile every kernel (call before the loop starts)."""
        pose = self.g.home.copy()
        self.inverse(pose)
        self.forward(self.lengths.copy(), np.empty(7))
        self.check_pose(pose)
        self.check_lengths(self.lengths)
