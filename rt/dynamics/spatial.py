"""Spatial math kernels: quaternions, direction cosine matrices, rotation sequences, skew
matrices, wrench and twist transforms, quaternion kinematics.

Conventions (docs/conventions.md, ../shared/docs/architecture.md):

* ``R_ab`` maps a vector's components from frame b to frame a: ``v_a = R_ab @ v_b``.
* Quaternions are Hamilton, scalar-first ``[w, x, y, z]``; ``q_ab`` rotates b-components into
  a-components, i.e. ``quat_to_dcm(q_ab) == R_ab``.
* The seeds' DCM "of frame B relative to frame A" (seed-digest §0) maps ``x_B = alpha @ x_A``,
  so ``alpha == R_BA``. The elementary matrices ``alpha^x, alpha^y, alpha^z`` for a *frame*
  rotation by angle q are :func:`dcm_axis` (``R_new_old``).
* Wrenches are ``[f; m]`` with m about the frame origin, twists ``[v; omega]`` with v the
  velocity of the frame origin.

Every function is ``@njit(cache=True)``, writes into caller-provided ``out`` arrays and
allocates nothing, so kernels can call them inside their inner loops. ``out`` may not alias
an input unless the docstring says so.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt.jit import KERNEL

# Axis codes used by rotation sequences.
AXIS_X = 0
AXIS_Y = 1
AXIS_Z = 2
_AXIS_CODES = {"x": AXIS_X, "y": AXIS_Y, "z": AXIS_Z}


def sequence_codes(seq: str) -> np.ndarray:
    """``"yzx"`` -> ``array([1, 2, 0])`` (axes of successive rotations about current axes)."""
    seq = seq.lower()
    if len(seq) != 3 or any(c not in _AXIS_CODES for c in seq):
        raise ValueError(f"rotation sequence must be three of x/y/z, got {seq!r}")
    if seq[0] == seq[1] or seq[1] == seq[2]:
        raise ValueError(f"rotation sequence {seq!r} repeats an axis in succession")
    return np.array([_AXIS_CODES[c] for c in seq], dtype=np.int64)


# ---------------------------------------------------------------------------- vectors


@njit(**KERNEL)
def cross(a, b, out):
    """out = a x b (out may not alias a or b)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(**KERNEL)
def skew(v, out):
    """out = [v]x, the 3x3 matrix with ``skew(v) @ b == v x b``."""
    out[0, 0] = 0.0
    out[0, 1] = -v[2]
    out[0, 2] = v[1]
    out[1, 0] = v[2]
    out[1, 1] = 0.0
    out[1, 2] = -v[0]
    out[2, 0] = -v[1]
    out[2, 1] = v[0]
    out[2, 2] = 0.0


@njit(**KERNEL)
def matvec3(R, v, out):
    """out = R @ v for 3x3 R (out may not alias v)."""
    for i in range(3):
        out[i] = R[i, 0] * v[0] + R[i, 1] * v[1] + R[i, 2] * v[2]


@njit(**KERNEL)
def mattvec3(R, v, out):
    """out = R.T @ v for 3x3 R (out may not alias v)."""
    for i in range(3):
        out[i] = R[0, i] * v[0] + R[1, i] * v[1] + R[2, i] * v[2]


@njit(**KERNEL)
def matmul3(A, B, out):
    """out = A @ B for 3x3 matrices (out may not alias A or B)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(**KERNEL)
def mattmul3(A, B, out):
    """out = A.T @ B for 3x3 matrices (out may not alias A or B)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = A[0, i] * B[0, j] + A[1, i] * B[1, j] + A[2, i] * B[2, j]


# -------------------------------------------------------------------------- quaternions


@njit(**KERNEL)
def quat_mul(p, q, out):
    """Hamilton product out = p (x) q; with p = q_ab, q = q_bc gives q_ac."""
    pw, px, py, pz = p[0], p[1], p[2], p[3]
    qw, qx, qy, qz = q[0], q[1], q[2], q[3]
    out[0] = pw * qw - px * qx - py * qy - pz * qz
    out[1] = pw * qx + px * qw + py * qz - pz * qy
    out[2] = pw * qy - px * qz + py * qw + pz * qx
    out[3] = pw * qz + px * qy - py * qx + pz * qw


@njit(**KERNEL)
def quat_conj(q, out):
    """out = q* (the inverse of a unit quaternion: q_ba from q_ab). out may alias q."""
    out[0] = q[0]
    out[1] = -q[1]
    out[2] = -q[2]
    out[3] = -q[3]


@njit(**KERNEL)
def quat_normalize(q):
    """Normalise q in place; returns the norm it had (0.0 leaves q untouched)."""
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if n > 0.0:
        inv = 1.0 / n
        for i in range(4):
            q[i] *= inv
    return n


@njit(**KERNEL)
def quat_to_dcm(q, out):
    """out = R_ab for q = q_ab (q must be unit)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    out[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[0, 1] = 2.0 * (x * y - w * z)
    out[0, 2] = 2.0 * (x * z + w * y)
    out[1, 0] = 2.0 * (x * y + w * z)
    out[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[1, 2] = 2.0 * (y * z - w * x)
    out[2, 0] = 2.0 * (x * z - w * y)
    out[2, 1] = 2.0 * (y * z + w * x)
    out[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(**KERNEL)
def dcm_to_quat(R, out):
    """out = q_ab for R = R_ab (Shepperd's method, scalar part made non-negative)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr >= R[0, 0] and tr >= R[1, 1] and tr >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + tr)
        out[0] = 0.25 * s
        out[1] = (R[2, 1] - R[1, 2]) / s
        out[2] = (R[0, 2] - R[2, 0]) / s
        out[3] = (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        out[0] = (R[2, 1] - R[1, 2]) / s
        out[1] = 0.25 * s
        out[2] = (R[0, 1] + R[1, 0]) / s
        out[3] = (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        out[0] = (R[0, 2] - R[2, 0]) / s
        out[1] = (R[0, 1] + R[1, 0]) / s
        out[2] = 0.25 * s
        out[3] = (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        out[0] = (R[1, 0] - R[0, 1]) / s
        out[1] = (R[0, 2] + R[2, 0]) / s
        out[2] = (R[1, 2] + R[2, 1]) / s
        out[3] = 0.25 * s
    if out[0] < 0.0:
        for i in range(4):
            out[i] = -out[i]
    quat_normalize(out)


@njit(**KERNEL)
def quat_rotate(q, v, out):
    """out = R(q) @ v, i.e. v_a from v_b for q = q_ab (out may not alias v)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    # t = 2 (u x v); out = v + w t + u x t, u = (x, y, z)
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    out[0] = v[0] + w * tx + (y * tz - z * ty)
    out[1] = v[1] + w * ty + (z * tx - x * tz)
    out[2] = v[2] + w * tz + (x * ty - y * tx)


@njit(**KERNEL)
def quat_rotate_inv(q, v, out):
    """out = R(q).T @ v, i.e. v_b from v_a for q = q_ab (out may not alias v)."""
    w, x, y, z = q[0], -q[1], -q[2], -q[3]
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    out[0] = v[0] + w * tx + (y * tz - z * ty)
    out[1] = v[1] + w * ty + (z * tx - x * tz)
    out[2] = v[2] + w * tz + (x * ty - y * tx)


@njit(**KERNEL)
def quat_kinematics(q, omega_b, out):
    """Quaternion rate: for q = q_ab and omega_b the angular velocity of b relative to a in
    b-components, out = q_dot = 1/2 q (x) [0, omega_b]."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    ox, oy, oz = omega_b[0], omega_b[1], omega_b[2]
    out[0] = 0.5 * (-x * ox - y * oy - z * oz)
    out[1] = 0.5 * (w * ox + y * oz - z * oy)
    out[2] = 0.5 * (w * oy - x * oz + z * ox)
    out[3] = 0.5 * (w * oz + x * oy - y * ox)


@njit(**KERNEL)
def quat_from_rotvec(phi, out):
    """out = exp(phi/2): the unit quaternion of a rotation by |phi| about phi/|phi|
    (q_ab where b is a rotated by phi, phi in a- (= b-) components)."""
    a = math.sqrt(phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2])
    h = 0.5 * a
    if a < 1e-8:
        k = 0.5 - a * a / 48.0  # sin(h)/a, Taylor
    else:
        k = math.sin(h) / a
    out[0] = math.cos(h)
    out[1] = k * phi[0]
    out[2] = k * phi[1]
    out[3] = k * phi[2]


@njit(**KERNEL)
def quat_to_rotvec(q, out):
    """Inverse of :func:`quat_from_rotvec` (shortest rotation, angle in [0, pi])."""
    w = q[0]
    s = math.sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    sign = 1.0
    if w < 0.0:
        w = -w
        sign = -1.0
    angle = 2.0 * math.atan2(s, w)
    if s < 1e-12:
        k = 2.0 / w if w > 0.0 else 0.0
    else:
        k = angle / s
    out[0] = sign * k * q[1]
    out[1] = sign * k * q[2]
    out[2] = sign * k * q[3]


# ------------------------------------------------------------------ rotation sequences


@njit(**KERNEL)
def dcm_axis(axis, angle, out):
    """Elementary DCM of a frame rotated by ``angle`` about its own ``axis`` (0, 1, 2):
    ``out = R_new_old`` = the seeds' alpha^x, alpha^y, alpha^z (seed-digest §0)."""
    c = math.cos(angle)
    s = math.sin(angle)
    for i in range(3):
        for j in range(3):
            out[i, j] = 0.0
    if axis == 0:
        out[0, 0] = 1.0
        out[1, 1] = c
        out[1, 2] = s
        out[2, 1] = -s
        out[2, 2] = c
    elif axis == 1:
        out[1, 1] = 1.0
        out[0, 0] = c
        out[0, 2] = -s
        out[2, 0] = s
        out[2, 2] = c
    else:
        out[2, 2] = 1.0
        out[0, 0] = c
        out[0, 1] = s
        out[1, 0] = -s
        out[1, 1] = c


@njit(**KERNEL)
def premul_axis(axis, angle, M):
    """In place ``M = alpha(axis, angle) @ M`` (an elementary frame rotation mixes two rows)."""
    c = math.cos(angle)
    s = math.sin(angle)
    if axis == 0:
        r1, r2 = 1, 2
    elif axis == 1:
        r1, r2 = 2, 0
    else:
        r1, r2 = 0, 1
    for j in range(3):
        a = M[r1, j]
        b = M[r2, j]
        M[r1, j] = c * a + s * b
        M[r2, j] = -s * a + c * b


@njit(**KERNEL)
def dcm_from_sequence(axes, angles, out):
    """DCM of a frame B reached from frame A by three successive rotations about the
    *current* axes ``axes[0], axes[1], axes[2]`` by ``angles``:
    ``out = R_BA = alpha(axes[2]) @ alpha(axes[1]) @ alpha(axes[0])`` (seed 001 uses y, z, x).
    """
    for i in range(3):
        for j in range(3):
            out[i, j] = 1.0 if i == j else 0.0
    premul_axis(axes[0], angles[0], out)
    premul_axis(axes[1], angles[1], out)
    premul_axis(axes[2], angles[2], out)


@njit(**KERNEL)
def sequence_from_dcm(axes, R_BA, out):
    """Angles of the current-axes sequence ``axes`` for ``R_BA`` (inverse of
    :func:`dcm_from_sequence` for Tait–Bryan sequences, middle angle in [-pi/2, pi/2]).

    With R = alpha_k(q3) alpha_j(q2) alpha_i(q1) and (i, j, k) a permutation of (0, 1, 2) of
    parity e (+1 cyclic, -1 otherwise): R[k, i] = e sin q2, R[j, i] / R[i, i] = -e tan q3,
    R[k, j] / R[k, k] = -e tan q1.
    """
    i = axes[0]
    j = axes[1]
    k = axes[2]
    # parity of (i, j, k): +1 for cyclic, -1 otherwise
    e = 1.0 if (j - i) % 3 == 1 else -1.0
    s2 = e * R_BA[k, i]
    if s2 > 1.0:
        s2 = 1.0
    elif s2 < -1.0:
        s2 = -1.0
    out[1] = math.asin(s2)
    if abs(s2) < 1.0 - 1e-12:
        out[2] = math.atan2(-e * R_BA[j, i], R_BA[i, i])
        out[0] = math.atan2(-e * R_BA[k, j], R_BA[k, k])
    else:  # gimbal lock: put the whole remaining rotation into the first angle
        out[2] = 0.0
        out[0] = math.atan2(e * R_BA[j, k], R_BA[j, j])


# ------------------------------------------------------------------ wrench and twist


@njit(**KERNEL)
def wrench_transform(R_ba, p_ab_a, w_a, out):
    """Wrench ``w_a = [f; m]`` in frame a, m about a's origin  ->  the same wrench in frame b
    with m about b's origin: ``f_b = R_ba f_a``, ``m_b = R_ba (m_a - p_ab_a x f_a)``.
    ``p_ab_a`` is b's origin relative to a's, in a-components."""
    fx, fy, fz = w_a[0], w_a[1], w_a[2]
    mx = w_a[3] - (p_ab_a[1] * fz - p_ab_a[2] * fy)
    my = w_a[4] - (p_ab_a[2] * fx - p_ab_a[0] * fz)
    mz = w_a[5] - (p_ab_a[0] * fy - p_ab_a[1] * fx)
    for i in range(3):
        out[i] = R_ba[i, 0] * fx + R_ba[i, 1] * fy + R_ba[i, 2] * fz
        out[3 + i] = R_ba[i, 0] * mx + R_ba[i, 1] * my + R_ba[i, 2] * mz


@njit(**KERNEL)
def twist_transform(R_ba, p_ab_a, t_a, out):
    """Twist of a rigid body ``t_a = [v; omega]`` (v of the point at a's origin) in frame a  ->
    ``[v; omega]`` of the same body at b's origin in frame b:
    ``v_b = R_ba (v_a + omega_a x p_ab_a)``, ``omega_b = R_ba omega_a``."""
    ox, oy, oz = t_a[3], t_a[4], t_a[5]
    vx = t_a[0] + (oy * p_ab_a[2] - oz * p_ab_a[1])
    vy = t_a[1] + (oz * p_ab_a[0] - ox * p_ab_a[2])
    vz = t_a[2] + (ox * p_ab_a[1] - oy * p_ab_a[0])
    for i in range(3):
        out[i] = R_ba[i, 0] * vx + R_ba[i, 1] * vy + R_ba[i, 2] * vz
        out[3 + i] = R_ba[i, 0] * ox + R_ba[i, 1] * oy + R_ba[i, 2] * oz
