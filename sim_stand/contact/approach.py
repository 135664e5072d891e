"""Scripted (prescribed-motion) approach of the active ring, used by the tests and the docs.

No dynamics: the ring's pose is a function of time. It closes along x at a constant speed
with a lateral offset in a fixed direction; while the guides are in the way, the offset is
the largest one that keeps the deepest class-1 penetration at ``interference`` (the ring
"slides along the guides" as a compliant mechanism would let it). The offset never grows
back. Contact, latch and capture events come out of :class:`ContactModel` with their times.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim_stand.contact import kernel as K
from sim_stand.contact.model import ContactModel, Event


@dataclass(frozen=True)
class Script:
    t: np.ndarray          # (n,) s
    pose: np.ndarray       # (n, 7) ring pose in P
    twist: np.ndarray      # (n, 6) ring twist in P (finite differences of the path)


def _depth(model: ContactModel, pose, twist) -> float:
    saved = model.state.copy()
    model.evaluate(pose[None, :], twist[None, :], commit=False)
    model.state[:] = saved
    r = model.records
    cls1 = r[:, K.C_CLASS] == 1
    return float(r[cls1, K.C_PEN].max()) if cls1.any() else 0.0


def guided_path(model: ContactModel, direction_deg: float = 30.0, offset_m: float = 0.05,
                x_start_m: float = -0.30, x_end_m: float = -0.001, speed_m_per_s: float = 0.1,
                dt_s: float = 1e-3, interference_m: float = 5e-4, roll_deg: float = 0.0,
                centred_at_m: float = -0.045) -> Script:
    """The prescribed path (computed once; evaluating it is what the tests check). After the
    first guide contact the offset is also capped by a straight line reaching zero at
    x = ``centred_at_m`` (the guides have centred the ring before the latches meet the
    strikers)."""
    az = math.radians(direction_deg)
    u = np.array([0.0, math.cos(az), math.sin(az)])
    n = int(round((x_end_m - x_start_m) / (speed_m_per_s * dt_s))) + 1
    t = np.arange(n) * dt_s
    pose = np.zeros((n, 7))
    h = 0.5 * math.radians(roll_deg)
    q = np.array([math.cos(h), math.sin(h), 0.0, 0.0])
    twist = np.zeros((n, 6))
    twist[:, 0] = speed_m_per_s
    d = offset_m
    saved = model.state.copy()
    x_fc = None
    for i in range(n):
        x = min(x_start_m + speed_m_per_s * t[i], x_end_m)
        if x_fc is not None:
            d = min(d, d_fc * max(0.0, (centred_at_m - x) / (centred_at_m - x_fc)))
        row = np.concatenate(([x], d * u[1:], q))
        if _depth(model, row, twist[i]) > 0.0 and x_fc is None:
            x_fc, d_fc = x, d
        if _depth(model, row, twist[i]) > interference_m:
            lo, hi = 0.0, d
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                row[1:3] = mid * u[1:]
                if _depth(model, row, twist[i]) > interference_m:
                    hi = mid
                else:
                    lo = mid
            d = lo
            row[1:3] = d * u[1:]
        pose[i] = row
        # keep latch states in step with the path so engaged latches are gated correctly
        model.evaluate(row[None, :], twist[i][None, :], commit=True, t=t[i])
    model.state[:] = saved
    model.events.clear()
    twist[1:, 1:3] = np.diff(pose[:, 1:3], axis=0) / dt_s   # lateral velocity (y, z)
    return Script(t=t, pose=pose, twist=twist)


def run_script(model: ContactModel, script: Script) -> list[Event]:
    """Evaluate the model along the path, committing every step; returns the events."""
    for i in range(len(script.t)):
        model.evaluate(script.pose[i][None, :], script.twist[i][None, :], t=float(script.t[i]))
    return list(model.events)
