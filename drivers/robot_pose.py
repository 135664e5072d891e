"""Poses as industrial robots report them, and the robot-frame <-> stand-frame calibration
(docs/platforms.md, "Frames").

A robot reports its tool centre point (TCP) in its own base frame R: KUKA as X, Y, Z (mm) and
A, B, C (degrees; ``R = Rz(A) Ry(B) Rx(C)``, rotations about the moving z, then y, then x axes:
KUKA's Z-Y-X convention), ABB EGM as x, y, z (mm) and a unit quaternion u0..u3 (scalar first).
The stand's controller speaks the pose of the platform top T in the platform base B (m,
quaternion w x y z, docs/conventions.md). The stand file's ``[platform.robot]`` calibration
places the robot base in the stand (``X_BR``: R in B) and the stand's top frame on the robot's
tool (``X_CT``: T in the TCP frame C), so that

    X_BT = X_BR * X_RC * X_CT        (measured: the robot's TCP pose X_RC -> the top pose)
    X_RC = X_BR^-1 * X_BT * X_CT^-1  (commanded: the top pose the controller wants -> a TCP target)

A pose here is ``(p, q)``: ``p`` a 3-tuple in metres, ``q`` a unit quaternion (w, x, y, z)
taking child components to parent components. Plain floats and the ``math`` module: the
adapters call these every robot cycle (a few microseconds each; tests/drivers check them
against scipy's Rotation). Allocation-light, no numpy in the per-cycle path.
"""
from __future__ import annotations

import math

from rt.rotation_entries import quat_rotate_entries

__all__ = ["Pose", "Calibration", "zyx_deg_to_quat", "quat_to_zyx_deg", "quat_mul", "quat_conj", "rotate",
           "compose", "inverse", "rotation_angle_deg", "normalize"]

Pose = tuple   # (p (x, y, z) m, q (w, x, y, z))


def zyx_deg_to_quat(a_deg: float, b_deg: float, c_deg: float) -> tuple:
    """KUKA's A, B, C (degrees) -> the quaternion (w, x, y, z) of ``Rz(A) Ry(B) Rx(C)``."""
    ha, hb, hc = math.radians(a_deg) * 0.5, math.radians(b_deg) * 0.5, math.radians(c_deg) * 0.5
    ca, sa = math.cos(ha), math.sin(ha)
    cb, sb = math.cos(hb), math.sin(hb)
    cc, sc = math.cos(hc), math.sin(hc)
    # q = qz(A) * qy(B) * qx(C)
    return (ca * cb * cc + sa * sb * sc,
            ca * cb * sc - sa * sb * cc,
            ca * sb * cc + sa * cb * sc,
            sa * cb * cc - ca * sb * sc)


def quat_to_zyx_deg(q) -> tuple:
    """The quaternion (w, x, y, z) -> KUKA's A, B, C (degrees), B in [-90, 90], A and C in
    (-180, 180]. At B = +-90 (gimbal lock) C is taken as 0."""
    w, x, y, z = q
    # R entries of Rz(A) Ry(B) Rx(C): r20 = -sin B, r21 = cos B sin C, r22 = cos B cos C,
    # r10 = sin A cos B, r00 = cos A cos B
    r20 = 2.0 * (x * z - w * y)
    if r20 >= 1.0 - 1e-12 or r20 <= -1.0 + 1e-12:
        b = -math.copysign(90.0, r20)
        r01 = 2.0 * (x * y - w * z)
        r11 = 1.0 - 2.0 * (x * x + z * z)
        # with C = 0: r01 = -sin A, r11 = cos A (B = +90) -- the same at B = -90
        return math.degrees(math.atan2(-r01, r11)), b, 0.0
    r21 = 2.0 * (y * z + w * x)
    r22 = 1.0 - 2.0 * (x * x + y * y)
    r10 = 2.0 * (x * y + w * z)
    r00 = 1.0 - 2.0 * (y * y + z * z)
    return (math.degrees(math.atan2(r10, r00)), math.degrees(math.asin(-r20)),
            math.degrees(math.atan2(r21, r22)))


def quat_mul(a, b) -> tuple:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw)


def quat_conj(q) -> tuple:
    return (q[0], -q[1], -q[2], -q[3])


def normalize(q) -> tuple:
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if not n > 0.0:
        raise ValueError("a quaternion of zero norm")
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


def rotate(q, v) -> tuple:
    """``R(q) v`` for a unit quaternion (:func:`rt.rotation_entries.quat_rotate_entries`)."""
    return quat_rotate_entries(q[0], q[1], q[2], q[3], v[0], v[1], v[2])


def compose(a, b) -> tuple:
    """``a * b`` of two poses (p, q): b expressed in a's child frame, the result in a's parent."""
    pa, qa = a
    pb, qb = b
    r = rotate(qa, pb)
    return ((pa[0] + r[0], pa[1] + r[1], pa[2] + r[2]), quat_mul(qa, qb))


def inverse(a) -> tuple:
    p, q = a
    qi = quat_conj(q)
    r = rotate(qi, p)
    return ((-r[0], -r[1], -r[2]), qi)


def rotation_angle_deg(q) -> float:
    """The angle of the rotation ``q`` (degrees, 0..180): ``2 atan2(|v|, |w|)``, exact to
    rounding near 0 where ``2 acos(w)`` loses half the digits."""
    v = math.sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return math.degrees(2.0 * math.atan2(v, abs(q[0])))


class Calibration:
    """The stand file's calibration (module docstring): ``X_BR`` (the robot base R in the
    platform base B) and ``X_CT`` (the stand's top T in the robot's TCP frame C), with their
    inverses ``X_RB``, ``X_TC``. The controller's adapter (drivers.robot_platform) and the
    emulated robot (sim_stand.robot_twin) turn poses through the same one."""

    __slots__ = ("X_BR", "X_RB", "X_CT", "X_TC")

    def __init__(self, base_in_stand, top_on_tcp):
        self.X_BR = base_in_stand
        self.X_RB = inverse(base_in_stand)
        self.X_CT = top_on_tcp
        self.X_TC = inverse(top_on_tcp)

    def top_of(self, tcp) -> tuple:
        """The top pose in B of the robot's TCP pose ``tcp`` in R: ``X_BR * X_RC * X_CT``."""
        return compose(compose(self.X_BR, tcp), self.X_CT)

    def tcp_of(self, top) -> tuple:
        """The TCP pose in R that puts the top at ``top`` in B: ``X_RB * X_BT * X_TC``."""
        return compose(compose(self.X_RB, top), self.X_TC)
