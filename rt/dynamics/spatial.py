"""Spatial math kernels: quaternions, direction cosine matrices, rotation sequences, skew
matrices, wrench and twist transforms, quaternion kinematics.

Conventions (docs/conventions.md):

* ``R_ab`` maps a vector's components from frame b to frame a: ``v_a = R_ab @ v_b``.
* Quaternions are Hamilton, scalar-first ``[w, x, y, z]``; ``q_ab`` rotates b-components into
  a-components, i.e. ``quat_to_dcm(q_ab) == R_ab``.
* The source papers' DCM "of frame B relative to frame A" (docs/references.md) maps
  ``x_B = alpha @ x_A``, so ``alpha == R_BA``. The elementary matrices ``alpha^x, alpha^y, alpha^z``
  for a *frame* rotation by angle q are :func:`dcm_axis` (``R_new_old``).
* Wrenches are ``[f; m]`` with m about the frame origin, twists ``[v; omega]`` with v the
  velocity of the frame origin.

Every function is ``@njit(**rt.jit.KERNEL)``, writes into caller-provided ``out`` arrays and
allocates nothing, so kernels can call them inside their inner loops. ``out`` may not alias
an input unless the docstring says so. The formulas that kernels also need on scalars (a
rotation kept in nine locals, a quaternion in four) are written once, as ``*_entries``
functions that take and return scalars (tuples) and are inlined into their caller at numba IR
level, so they compile with the caller's own options (fastmath contraction, error model); the
array functions are those same formulas over arrays.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt import rotation_entries
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
    """out = a x b (out may not alias a or b).

    Parameters
    ----------
    a, b : float64[3]
        The two vectors, in one frame.
    out : float64[3]
        Written: a x b, in the same frame.
    """
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(**KERNEL)
def skew(v, out):
    """out = [v]x, the 3x3 matrix with ``skew(v) @ b == v x b``.

    Parameters
    ----------
    v : float64[3]
        The vector.
    out : float64[3, 3]
        Written: the cross-product matrix [v]x.
    """
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
    """out = R @ v for 3x3 R (out may not alias v).

    Parameters
    ----------
    R : float64[3, 3]
        The matrix (e.g. a DCM R_ab).
    v : float64[3]
        The vector (e.g. in b-components).
    out : float64[3]
        Written: R @ v.
    """
    for i in range(3):
        out[i] = R[i, 0] * v[0] + R[i, 1] * v[1] + R[i, 2] * v[2]


@njit(**KERNEL)
def mattvec3(R, v, out):
    """out = R.T @ v for 3x3 R (out may not alias v): :func:`matvec3` with the transpose.

    Parameters
    ----------
    R : float64[3, 3]
        The matrix, as for :func:`matvec3`.
    v : float64[3]
        The vector (e.g. in a-components).
    out : float64[3]
        Written: R.T @ v.
    """
    for i in range(3):
        out[i] = R[0, i] * v[0] + R[1, i] * v[1] + R[2, i] * v[2]


@njit(**KERNEL)
def matmul3(A, B, out):
    """out = A @ B for 3x3 matrices (out may not alias A or B).

    Parameters
    ----------
    A, B : float64[3, 3]
        The factors.
    out : float64[3, 3]
        Written: A @ B.
    """
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(**KERNEL)
def mattmul3(A, B, out):
    """out = A.T @ B for 3x3 matrices (out may not alias A or B).

    Parameters
    ----------
    A, B : float64[3, 3]
        The factors; A enters transposed.
    out : float64[3, 3]
        Written: A.T @ B.
    """
    for i in range(3):
        for j in range(3):
            out[i, j] = A[0, i] * B[0, j] + A[1, i] * B[1, j] + A[2, i] * B[2, j]


# -------------------------------------------------------------------------- quaternions


@njit(inline="always", **KERNEL)
def quat_mul_entries(pw, px, py, pz, qw, qx, qy, qz):
    """Hamilton product ``p (x) q`` of two quaternions given as scalars (scalar first), returned
    as ``(w, x, y, z)``: ``[pw qw - p.q, pw q + qw p + p x q]``; with p = q_ab, q = q_bc it is
    q_ac (docs/conventions.md). For kernels that keep quaternions in scalars; inlined into the
    caller at numba IR level (compiled with the caller's options). :func:`quat_mul` is this
    formula over arrays.

    Parameters
    ----------
    pw, px, py, pz : float
        The left factor p, scalar first.
    qw, qx, qy, qz : float
        The right factor q, scalar first.
    """
    return (pw * qw - px * qx - py * qy - pz * qz,
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw)


@njit(**KERNEL)
def quat_mul(p, q, out):
    """Hamilton product out = p (x) q; with p = q_ab, q = q_bc gives q_ac
    (:func:`quat_mul_entries`; out may alias p or q).

    Parameters
    ----------
    p : float64[4]
        Left factor, scalar first (e.g. q_ab).
    q : float64[4]
        Right factor, scalar first (e.g. q_bc).
    out : float64[4]
        Written: p (x) q.
    """
    out[0], out[1], out[2], out[3] = quat_mul_entries(p[0], p[1], p[2], p[3], q[0], q[1], q[2], q[3])


@njit(**KERNEL)
def quat_conj(q, out):
    """out = q* (the inverse of a unit quaternion: q_ba from q_ab). out may alias q.

    Parameters
    ----------
    q : float64[4]
        The quaternion, scalar first (e.g. q_ab).
    out : float64[4]
        Written: [q0, -q1, -q2, -q3] (q_ba for a unit q_ab).
    """
    out[0] = q[0]
    out[1] = -q[1]
    out[2] = -q[2]
    out[3] = -q[3]


@njit(inline="always", **KERNEL)
def quat_normalize_entries(w, x, y, z):
    """The unit quaternion of ``[w, x, y, z]`` and the norm it had, ``(w, x, y, z, n)``: each
    entry times ``1/n``, ``n = sqrt(w^2 + x^2 + y^2 + z^2)``; a zero quaternion is returned as
    it is. Scalars in and out (no array); inlined into the caller (its compile options).

    Parameters
    ----------
    w, x, y, z : float
        The quaternion's entries, scalar first.
    """
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if n > 0.0:
        inv = 1.0 / n
        return w * inv, x * inv, y * inv, z * inv, n
    return w, x, y, z, n


@njit(inline="always", **KERNEL)
def quat_normalize(q):
    """Normalise the quaternion ``q`` in place; returns the norm it had (0.0 leaves q untouched).

    The one quaternion normalisation of the project (integrators after each step, poses
    before they are sent). Inlined into the caller at numba IR level, so that it compiles
    with the caller's options (fastmath, error model) and a caller's results do not depend on
    whether it normalises through this function or wrote the lines itself.

    Parameters
    ----------
    q : float64[4]
        Scalar-first quaternion ``[w, x, y, z]`` (any frame pair); a view into a state or pose
        array (e.g. ``x[s, S_Q:S_Q + 4]``) is normalised in that array."""
    q[0], q[1], q[2], q[3], n = quat_normalize_entries(q[0], q[1], q[2], q[3])
    return n


@njit(inline="always", **KERNEL)
def rk4_increment(h6, k1, k2, k3, k4):
    """The classical Runge–Kutta step's increment of one state entry,
    ``h/6 (k1 + 2 (k2 + k3) + k4)`` (Hairer, Nørsett & Wanner, Solving ODEs I, II.1), the one
    implementation of the RK4 combination (every fixed-step RK4 integrator of the project).
    Inlined into the caller (the caller's compile options), so it adds no call.

    Parameters
    ----------
    h6 : float
        The step over six, ``h / 6`` (s).
    k1, k2, k3, k4 : float
        The four stage derivatives of the entry (its unit per second), at t, t + h/2 (twice)
        and t + h.
    """
    return h6 * (k1 + 2.0 * (k2 + k3) + k4)


@njit(inline="always", **KERNEL)
def quat_dcm_entries(w, x, y, z):
    """The nine entries of ``R_ab``, row-major ``(r00, r01, r02, r10, ..., r22)``, of the unit
    Hamilton quaternion ``q_ab = [w, x, y, z]`` (scalar first; b-components -> a-components):

        R = I + 2 w [u]x + 2 [u]x^2,   u = (x, y, z)

    (the Euler–Rodrigues form, in the conventions of docs/conventions.md). For kernels that
    keep R in scalars (no array, no allocation); inlined into the caller at numba IR level, so
    it compiles with the caller's own options (fastmath, error model). :func:`quat_to_dcm` is
    this formula into an array.

    Parameters
    ----------
    w, x, y, z : float
        The unit quaternion q_ab, scalar first.
    """
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
            2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x),
            2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y))


@njit(**KERNEL)
def quat_to_dcm(q, out):
    """out = R_ab for q = q_ab (q must be unit); the entries of :func:`quat_dcm_entries`.

    Parameters
    ----------
    q : float64[4]
        The unit quaternion q_ab, scalar first.
    out : float64[3, 3]
        Written: R_ab.
    """
    (out[0, 0], out[0, 1], out[0, 2], out[1, 0], out[1, 1], out[1, 2],
     out[2, 0], out[2, 1], out[2, 2]) = quat_dcm_entries(q[0], q[1], q[2], q[3])


@njit(inline="always", **KERNEL)
def dcm_quat_entries(m00, m01, m02, m10, m11, m12, m20, m21, m22):
    """``q_ab = (w, x, y, z)`` of ``R_ab`` given by its nine entries (row-major): Shepperd's
    method (S. W. Shepperd, "Quaternion from rotation matrix", J. Guidance and Control 1(3),
    1978: the largest of w, x, y, z from the trace or a diagonal entry, the others from the
    off-diagonal sums and differences), scalar part made non-negative, normalised (a zero
    result is returned as it is). For kernels that keep R in scalars; inlined into the caller
    at numba IR level (compiled with the caller's options). :func:`dcm_to_quat` is this formula
    over arrays.

    Parameters
    ----------
    m00, m01, m02, m10, m11, m12, m20, m21, m22 : float
        The entries of the rotation matrix R_ab, row-major (m_ij = R_ab[i, j]).
    """
    tr = m00 + m11 + m22
    if tr >= m00 and tr >= m11 and tr >= m22:
        s = 2.0 * math.sqrt(1.0 + tr)
        qw, qx, qy, qz = 0.25 * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s
    elif m00 >= m11 and m00 >= m22:
        s = 2.0 * math.sqrt(1.0 + m00 - m11 - m22)
        qw, qx, qy, qz = (m21 - m12) / s, 0.25 * s, (m01 + m10) / s, (m02 + m20) / s
    elif m11 >= m22:
        s = 2.0 * math.sqrt(1.0 + m11 - m00 - m22)
        qw, qx, qy, qz = (m02 - m20) / s, (m01 + m10) / s, 0.25 * s, (m12 + m21) / s
    else:
        s = 2.0 * math.sqrt(1.0 + m22 - m00 - m11)
        qw, qx, qy, qz = (m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25 * s
    if qw < 0.0:
        qw, qx, qy, qz = -qw, -qx, -qy, -qz
    qw, qx, qy, qz, _ = quat_normalize_entries(qw, qx, qy, qz)
    return qw, qx, qy, qz


@njit(**KERNEL)
def dcm_to_quat(R, out):
    """out = q_ab for R = R_ab (Shepperd's method, scalar part made non-negative;
    :func:`dcm_quat_entries`).

    Parameters
    ----------
    R : float64[3, 3]
        The rotation matrix R_ab.
    out : float64[4]
        Written: q_ab, scalar first, scalar part >= 0.
    """
    out[0], out[1], out[2], out[3] = dcm_quat_entries(R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2],
                                                      R[2, 0], R[2, 1], R[2, 2])


#: ``R(q) v`` over scalars (:func:`rt.rotation_entries.quat_rotate_entries`, the one formula the
#: drivers also call as plain Python), inlined into the caller at numba IR level (compiled with the
#: caller's options); :func:`quat_rotate` and :func:`quat_rotate_inv` are this formula over arrays.
quat_rotate_entries = njit(inline="always", **KERNEL)(rotation_entries.quat_rotate_entries)


@njit(**KERNEL)
def quat_rotate(q, v, out):
    """out = R(q) @ v, i.e. v_a from v_b for q = q_ab (:func:`quat_rotate_entries`; out may
    alias v).

    Parameters
    ----------
    q : float64[4]
        The unit quaternion q_ab, scalar first.
    v : float64[3]
        The vector v_b, b-components.
    out : float64[3]
        Written: v_a, a-components.
    """
    out[0], out[1], out[2] = quat_rotate_entries(q[0], q[1], q[2], q[3], v[0], v[1], v[2])


@njit(**KERNEL)
def quat_rotate_inv(q, v, out):
    """out = R(q).T @ v, i.e. v_b from v_a for q = q_ab (:func:`quat_rotate_entries` of the
    conjugate; out may alias v).

    Parameters
    ----------
    q : float64[4]
        The unit quaternion q_ab, as for :func:`quat_rotate`.
    v : float64[3]
        The vector v_a, a-components.
    out : float64[3]
        Written: v_b, b-components.
    """
    out[0], out[1], out[2] = quat_rotate_entries(q[0], -q[1], -q[2], -q[3], v[0], v[1], v[2])


@njit(inline="always", **KERNEL)
def quat_rate_entries(w, x, y, z, ox, oy, oz):
    """Quaternion kinematics in scalars: for ``q_ab = [w, x, y, z]`` and ``(ox, oy, oz)`` the
    angular velocity of b relative to a in b-components, ``q_dot = 1/2 q (x) [0, omega_b]``
    (docs/conventions.md) as ``(w', x', y', z')``. Inlined into the caller at numba IR level
    (compiled with the caller's options); :func:`quat_kinematics` is this formula over arrays.

    Parameters
    ----------
    w, x, y, z : float
        The attitude q_ab, scalar first.
    ox, oy, oz : float
        Angular velocity of b relative to a, b-components, rad/s.
    """
    return (0.5 * (-x * ox - y * oy - z * oz),
            0.5 * (w * ox + y * oz - z * oy),
            0.5 * (w * oy - x * oz + z * ox),
            0.5 * (w * oz + x * oy - y * ox))


@njit(**KERNEL)
def quat_kinematics(q, omega_b, out):
    """Quaternion rate: for q = q_ab and omega_b the angular velocity of b relative to a in
    b-components, out = q_dot = 1/2 q (x) [0, omega_b] (:func:`quat_rate_entries`).

    Parameters
    ----------
    q : float64[4]
        The attitude q_ab, scalar first.
    omega_b : float64[3]
        Angular velocity of b relative to a, b-components, rad/s.
    out : float64[4]
        Written: the time derivative of q_ab, 1/s.
    """
    out[0], out[1], out[2], out[3] = quat_rate_entries(q[0], q[1], q[2], q[3], omega_b[0], omega_b[1], omega_b[2])


@njit(**KERNEL)
def quat_from_rotvec(phi, out):
    """out = exp(phi/2): the unit quaternion of a rotation by |phi| about phi/|phi|
    (q_ab where b is a rotated by phi, phi in a- (= b-) components).

    Parameters
    ----------
    phi : float64[3]
        Rotation vector, rad (angle |phi| about phi/|phi|), a- (= b-) components.
    out : float64[4]
        Written: the unit quaternion q_ab, scalar first.
    """
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


@njit(inline="always", **KERNEL)
def quat_rotvec_entries(w, x, y, z):
    """Rotation vector ``phi`` (3 scalars) of the unit quaternion ``[w, x, y, z]``, the shortest
    rotation (angle in [0, pi]): ``phi = 2 atan2(|u|, |w|) / |u| * sign(w) u``, ``u = (x, y, z)``;
    below |u| = 1e-12 the limit ``2 / |w| * sign(w) u`` (zero for a zero quaternion). The
    inverse of :func:`quat_from_rotvec` (q_ab <-> phi in a- (= b-) components). Inlined into
    the caller at numba IR level (compiled with the caller's options); :func:`quat_to_rotvec`
    is this formula over arrays.

    Parameters
    ----------
    w, x, y, z : float
        The unit quaternion, scalar first.
    """
    s = math.sqrt(x * x + y * y + z * z)
    sign = 1.0
    if w < 0.0:
        w = -w
        sign = -1.0
    angle = 2.0 * math.atan2(s, w)
    if s < 1e-12:
        k = 2.0 / w if w > 0.0 else 0.0
    else:
        k = angle / s
    return sign * k * x, sign * k * y, sign * k * z


@njit(**KERNEL)
def quat_to_rotvec(q, out):
    """Inverse of :func:`quat_from_rotvec` (shortest rotation, angle in [0, pi];
    :func:`quat_rotvec_entries`).

    Parameters
    ----------
    q : float64[4]
        The unit quaternion q_ab, scalar first.
    out : float64[3]
        Written: the rotation vector phi, rad, angle in [0, pi].
    """
    out[0], out[1], out[2] = quat_rotvec_entries(q[0], q[1], q[2], q[3])


# ------------------------------------------------------------------ rotation sequences


@njit(**KERNEL)
def dcm_axis_cs(axis, c, s, out):
    """:func:`dcm_axis` from the angle's cosine ``c`` and sine ``s`` (for callers that have
    them already): ``out = R_new_old`` of a frame rotated about its own ``axis`` (0, 1, 2), the
    papers' elementary matrices alpha^x, alpha^y, alpha^z (docs/conventions.md), e.g. alpha^z =
    [[c, s, 0], [-s, c, 0], [0, 0, 1]].

    Parameters
    ----------
    axis : int
        Axis of the rotation: 0 (x), 1 (y) or 2 (z).
    c, s : float
        Cosine and sine of the rotation angle.
    out : float64[3, 3]
        Written: R_new_old.
    """
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
def dcm_axis(axis, angle, out):
    """Elementary DCM of a frame rotated by ``angle`` about its own ``axis`` (0, 1, 2):
    ``out = R_new_old`` = the papers' alpha^x, alpha^y, alpha^z (docs/conventions.md).

    Parameters
    ----------
    axis : int
        Axis of the rotation: 0 (x), 1 (y) or 2 (z).
    angle : float
        Rotation angle of the frame, rad.
    out : float64[3, 3]
        Written: R_new_old.
    """
    dcm_axis_cs(axis, math.cos(angle), math.sin(angle), out)


@njit(**KERNEL)
def premul_axis(axis, angle, M):
    """In place ``M = alpha(axis, angle) @ M`` (an elementary frame rotation mixes two rows).

    Parameters
    ----------
    axis : int
        Axis of the elementary rotation: 0 (x), 1 (y) or 2 (z).
    angle : float
        Rotation angle of the frame, rad.
    M : float64[3, 3]
        The matrix; overwritten by alpha(axis, angle) @ M.
    """
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
    ``out = R_BA = alpha(axes[2]) @ alpha(axes[1]) @ alpha(axes[0])`` ([Golubev & Yaskevich, §3]
    uses y, z, x).

    Parameters
    ----------
    axes : int64[3]
        Axis codes of the three successive rotations (0 x, 1 y, 2 z; :func:`sequence_codes`).
    angles : float64[3]
        The three rotation angles, rad, in rotation order.
    out : float64[3, 3]
        Written: R_BA.
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

    Parameters
    ----------
    axes : int64[3]
        Axis codes of the three successive rotations (0 x, 1 y, 2 z), a Tait-Bryan sequence.
    R_BA : float64[3, 3]
        The rotation matrix of B relative to A (A-components -> B-components).
    out : float64[3]
        Written: the three angles, rad, in rotation order.
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


@njit(inline="always", **KERNEL)
def wrench_norms(w):
    """``(|f|, |m|)``: the magnitudes of the force and of the moment of a wrench ``w = [f; m]``
    (any frame: both are invariant under rotation; |m| depends on the moment's reference point).
    Inlined into the caller (compiled with its options).

    Parameters
    ----------
    w : float64[6]
        The wrench [f; m], N and N·m.
    """
    return (math.sqrt(w[0] ** 2 + w[1] ** 2 + w[2] ** 2),
            math.sqrt(w[3] ** 2 + w[4] ** 2 + w[5] ** 2))


@njit(**KERNEL)
def wrench_transform(R_ba, p_ab_a, w_a, out):
    """Wrench ``w_a = [f; m]`` in frame a, m about a's origin  ->  the same wrench in frame b
    with m about b's origin: ``f_b = R_ba f_a``, ``m_b = R_ba (m_a - p_ab_a x f_a)``.
    ``p_ab_a`` is b's origin relative to a's, in a-components.

    Parameters
    ----------
    R_ba : float64[3, 3]
        Rotation a-components -> b-components.
    p_ab_a : float64[3]
        b's origin relative to a's, a-components, m.
    w_a : float64[6]
        The wrench [f; m] in a, m about a's origin, N and N·m.
    out : float64[6]
        Written: the wrench in b, m about b's origin, N and N·m.
    """
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
    ``v_b = R_ba (v_a + omega_a x p_ab_a)``, ``omega_b = R_ba omega_a``.

    Parameters
    ----------
    R_ba : float64[3, 3]
        Rotation a-components -> b-components, as for :func:`wrench_transform` (and ``p_ab_a``).
    p_ab_a : float64[3]
        b's origin relative to a's, a-components, m.
    t_a : float64[6]
        The twist [v; omega] in a, v of the body point at a's origin, m/s and rad/s.
    out : float64[6]
        Written: the twist in b, v of the body point at b's origin, m/s and rad/s.
    """
    ox, oy, oz = t_a[3], t_a[4], t_a[5]
    vx = t_a[0] + (oy * p_ab_a[2] - oz * p_ab_a[1])
    vy = t_a[1] + (oz * p_ab_a[0] - ox * p_ab_a[2])
    vz = t_a[2] + (ox * p_ab_a[1] - oy * p_ab_a[0])
    for i in range(3):
        out[i] = R_ba[i, 0] * vx + R_ba[i, 1] * vy + R_ba[i, 2] * vz
        out[3 + i] = R_ba[i, 0] * ox + R_ba[i, 1] * oy + R_ba[i, 2] * oz
