"""Rotation formulas over scalars, in plain Python, written once: the compiled kernels inline them
(``rt.dynamics.spatial`` wraps each with ``njit(inline="always")``, so they compile with the caller's
options) and the drivers call them as they are (``drivers.robot_pose``: a robot's pose every robot
cycle, no numba in the adapter). Conventions: docs/conventions.md (quaternions Hamilton, scalar
first; ``q_ab`` takes b-components to a-components).

May run in the real-time loop (no allocation beyond the returned tuple, no I/O).
"""
from __future__ import annotations


def quat_rotate_entries(w, x, y, z, vx, vy, vz):
    """``R(q) v`` for the unit quaternion ``q = [w, x, y, z]`` and ``v`` given as scalars, i.e.
    ``v_a`` from ``v_b`` for ``q = q_ab``, without forming R: with ``u = (x, y, z)``,
    ``t = 2 u x v``, ``R(q) v = v + w t + u x t`` (docs/conventions.md). ``R(q)^T v`` is the same
    with ``u`` negated. ``rt.dynamics.spatial.quat_rotate`` and ``quat_rotate_inv`` are this formula over arrays.

    Parameters
    ----------
    w, x, y, z : float
        The unit quaternion q_ab, scalar first.
    vx, vy, vz : float
        The vector v_b, b-components.
    """
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    return (vx + w * tx + (y * tz - z * ty),
            vy + w * ty + (z * tx - x * tz),
            vz + w * tz + (x * ty - y * tx))
