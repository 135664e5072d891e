"""Tree mechanism config (``config/mechanisms/<tree>.toml``, e.g. ``probe_cone.toml``) ->
frozen :class:`TreeMechanismConfig` (the tables of [Yaskevich 2018a, kinematic features]: structure,
bodies, joints; loops).

A file is a tree mechanism when it has ``[[bodies]]`` (a parallel mechanism has ``leg_type``).
Frames (docs/models/tree.md): frame 0 = mechanism base = active docking-unit frame A; each body
hangs from its predecessor (``"base"`` or an earlier body) through a joint frame at
``position_m`` with orientation ``rpy_deg`` in the predecessor frame; a 1-DOF joint (``P``, ``R``)
moves along / about one axis of its joint frame, a composite one (``R2``, ``R3``) is that many
revolute joints in the order of ``axes``, joined by massless fictitious bodies named
``"<body>/<axis>"``. Joint devices reuse the parallel mechanism's tables (spring, damper, brake,
end stops; ``sim_stand.mechanism.config``), per elementary joint.

Every error is ``FILE: KEY: reason`` (:class:`rt.config.ConfigError`); unknown keys are rejected.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rt.config._schema import ConfigError, Table
from rt.dynamics.tree_model import AXES, TreeBody
from sim_stand.mechanism.config import Devices, _devices, _inertia

COMPOSITE = {"P": 1, "R": 1, "R2": 2, "R3": 3}


@dataclass(frozen=True)
class BrakeEngagement:
    """Where the joint's brake works: below ``below`` (coordinate units), and with ``one_way``
    only while the coordinate decreases (a retraction brake released on the rebound)."""
    below: float = math.inf
    one_way: bool = False


@dataclass(frozen=True)
class TreeMechanismConfig:
    name: str
    gravity_0: np.ndarray                       # frame 0, m/s^2
    bodies: tuple[TreeBody, ...]                # elementary bodies (fictitious ones included)
    devices: tuple[Devices, ...]                # one per elementary joint
    engagement: tuple[BrakeEngagement, ...]     # one per elementary joint
    contact_body: int                           # index of the buffer link
    contact_position: np.ndarray                # E's origin in the buffer link's frame (axes of the link)
    source: str = ""

    @property
    def n(self) -> int:
        return len(self.bodies)

    def index(self, name: str) -> int:
        return [b.name for b in self.bodies].index(name)


def rpy_matrix(rpy_deg) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll): the joint frame's axes in the predecessor frame."""
    r, p, y = (math.radians(float(a)) for a in rpy_deg)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1.0]])
    Ry = np.array([[cp, 0, sp], [0, 1.0, 0], [-sp, 0, cp]])
    Rx = np.array([[1.0, 0, 0], [0, cr, -sr], [0, sr, cr]])
    return Rz @ Ry @ Rx


def is_tree_file(path: str | Path) -> bool:
    """True if the mechanism file describes a tree (has ``[[bodies]]``)."""
    t = Table.load(path)
    return "bodies" in t.data


def parse_tree(t: Table) -> TreeMechanismConfig:
    name = t.str("name", t.file.stem)
    grav = t.vector("gravity_m_per_s2", 3, (0.0, 0.0, 0.0))
    if np.linalg.norm(grav) > 30.0:
        raise t.error("gravity_m_per_s2", f"|g| = {np.linalg.norm(grav):.3g} m/s^2 is implausible")
    bodies: list[TreeBody] = []
    devices: list[Devices] = []
    engage: list[BrakeEngagement] = []
    index: dict[str, int] = {"base": -1}          # body name -> index of its (last) elementary body
    rows = t.tables("bodies")
    if not rows:
        raise t.error("bodies", "a tree mechanism needs at least one body")
    for k, b in enumerate(rows):
        bname = b.str("name")
        if bname in index or "/" in bname:
            raise b.error("name", f"{bname!r} is used twice or contains '/'" if bname != "base"
                          else "'base' names frame 0")
        pred = b.str("predecessor")
        if pred not in index:
            raise b.error("predecessor", f"unknown body {pred!r}: predecessors must be 'base' or a body "
                          f"listed before (known: {', '.join(index)})")
        mass = b.float("mass_kg", gt=0.0)
        com = b.vector("com_m", 3, np.zeros(3))
        J = _inertia(b, "inertia_kgm2")
        j = b.table("joint")
        jt = j.str("type", choices=tuple(COMPOSITE))
        axes = j.strings("axes", choices=tuple(AXES))
        if len(axes) != COMPOSITE[jt]:
            raise j.error("axes", f"a {jt} joint needs {COMPOSITE[jt]} axes, got {axes!r}")
        if len(set(axes)) != len(axes):
            raise j.error("axes", f"repeated axis in {axes!r}")
        pos = j.vector("position_m", 3)
        gamma = rpy_matrix(j.vector("rpy_deg", 3, np.zeros(3))).T
        dev_t = j.table("devices", {}) if j.has("devices") else None
        eng_t = j.table("brake_engagement") if j.has("brake_engagement") else None
        rotary = jt != "P"
        parent = index[pred]
        for i, ax in enumerate(axes):
            last = i == len(axes) - 1
            if dev_t is None:
                dev = Devices()
            elif len(axes) == 1:
                dev = _devices(dev_t, rotary=rotary)
            else:
                dev = _devices(dev_t.table(ax), rotary=True) if dev_t.has(ax) else Devices()
            eg = BrakeEngagement()
            if eng_t is not None and (len(axes) == 1 or eng_t.has(ax)):
                e = eng_t if len(axes) == 1 else eng_t.table(ax)
                eg = BrakeEngagement(e.float("below_rad" if rotary else "below_m"), e.bool("one_way", False))
                if len(axes) > 1:
                    e.done()
                if dev.brake is None:
                    raise j.error("brake_engagement", "there is no brake on this joint to engage")
            bodies.append(TreeBody(
                name=bname if last else f"{bname}/{ax}", parent=parent, joint="P" if jt == "P" else "R",
                axis=AXES[ax], l=pos if i == 0 else np.zeros(3), gamma=gamma if i == 0 else np.eye(3),
                mass=mass if last else 0.0, com=com if last else np.zeros(3),
                inertia_com=J if last else np.zeros((3, 3))))
            devices.append(dev)
            engage.append(eg)
            parent = len(bodies) - 1
        if dev_t is not None and len(axes) > 1:
            dev_t.done()
        if eng_t is not None:
            eng_t.done()
        j.done()
        b.done()
        index[bname] = len(bodies) - 1
    if t.has("loops"):
        raise t.error("loops", "closed loops need the loop reduction of [Yaskevich 2018c], which the tree "
                      "model does not implement: describe an open tree (a probe-cone mechanism is one)")
    c = t.table("contact_link")
    cb = c.str("body")
    if cb not in index or cb == "base":
        raise c.error("body", f"unknown body {cb!r} (bodies: {', '.join(k for k in index if k != 'base')})")
    cpos = c.vector("position_m", 3, np.zeros(3))
    c.done()
    t.done()
    return TreeMechanismConfig(name=name, gravity_0=grav, bodies=tuple(bodies), devices=tuple(devices),
                               engagement=tuple(engage), contact_body=index[cb], contact_position=cpos,
                               source=str(t.file))


def load_tree_mechanism(path: str | Path) -> TreeMechanismConfig:
    """Load and validate a tree mechanism file; raises :class:`ConfigError` (file, key, reason)."""
    return parse_tree(Table.load(path))


__all__ = ["TreeMechanismConfig", "BrakeEngagement", "load_tree_mechanism", "parse_tree", "is_tree_file",
           "rpy_matrix", "ConfigError"]
