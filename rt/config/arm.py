"""Berthing-arm config (``config/arms/*.toml``; [Zhu, Wang & Zheng, §2–4], issue 25): the main
spacecraft (body 1), two flexible links (bodies 2, 3: uniform Euler–Bernoulli beams by assumed
modes), the end effector (body 4) and the payload with its grapple fixture (body 5); revolute
joints.

Frames: C1 = the main spacecraft's centre-of-mass frame; link frames at their joints with x along
the undeformed link; the end-effector frame 4 at the wrist joint; the payload's centre-of-mass
frame. Every error is ``FILE: KEY: reason``; unknown keys are rejected (docs/config.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rt.config._common import read_inertia
from rt.config._schema import ConfigError, Table
from rt.dynamics.flexible_link import MAX_MODES

AXES = ("x", "y", "z")


@dataclass(frozen=True)
class Body:
    mass_kg: float
    inertia_kgm2: np.ndarray          # about the centre of mass, body axes
    com_m: np.ndarray                 # centre of mass in the body frame


@dataclass(frozen=True)
class FlexLink:
    name: str
    length_m: float
    ei_nm2: np.ndarray                # bending stiffness in the link's y and z planes
    rho_kg_per_m: float
    tip_mass_kg: float                # the next joint's drive, lumped at the tip
    hub_inertia_kgm2: np.ndarray      # rotor and housing at the joint's root (I_h, [Zhu, Wang & Zheng, eq. 20])
    modes_per_plane: int


@dataclass(frozen=True)
class Joint:
    name: str
    axis: int                         # axis of the joint frame (= the predecessor's axes)
    position_m: np.ndarray            # on the predecessor: C1 for the shoulder, the link's tip otherwise
    limits_rad: tuple[float, float]
    initial_rad: float


@dataclass(frozen=True)
class ArmConfig:
    name: str
    base: Body
    links: tuple[FlexLink, FlexLink]
    joints: tuple[Joint, Joint, Joint]   # shoulder (1 -> 2), elbow (2 -> 3), wrist (3 -> 4)
    end_effector: Body
    grasp_point_m: np.ndarray            # the load point r_4 in the end-effector frame
    payload: Body
    grapple_m: np.ndarray                # the grapple fixture in the payload's frame
    source: str = ""


def _body(t: Table, com_default=(0.0, 0.0, 0.0)) -> Body:
    return Body(t.float("mass_kg", gt=0.0), read_inertia(t), t.vector("com_m", 3, np.array(com_default)))


def _link(t: Table) -> FlexLink:
    name = t.str("name")
    L = t.float("length_m", gt=0.0)
    raw = t.data.get("ei_nm2")
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        ei = np.full(2, t.float("ei_nm2"))           # both bending planes
    else:
        ei = t.vector("ei_nm2", 2)                   # the y and z planes
    if np.any(ei <= 0.0):
        raise t.error("ei_nm2", f"bending stiffness must be > 0, got {ei.tolist()}")
    rho = t.float("rho_kg_per_m", gt=0.0)
    tip = t.float("tip_mass_kg", 0.0, ge=0.0)
    hub = read_inertia(t, "hub_inertia_kgm2")
    m = t.int("modes_per_plane", ge=1, le=MAX_MODES)
    t.done()
    return FlexLink(name, L, ei, rho, tip, hub, m)


def _joint(t: Table) -> Joint:
    name = t.str("name")
    axis = AXES.index(t.str("axis", choices=AXES))
    pos = t.vector("position_m", 3, np.zeros(3))
    lim = t.vector("limits_deg", 2)
    if not lim[0] < lim[1]:
        raise t.error("limits_deg", f"the lower limit must be below the upper one, got {lim.tolist()}")
    q0 = t.float("initial_deg", 0.0)
    if not lim[0] <= q0 <= lim[1]:
        raise t.error("initial_deg", f"{q0} deg is outside the limits {lim.tolist()}")
    t.done()
    return Joint(name, axis, pos, (float(np.radians(lim[0])), float(np.radians(lim[1]))), float(np.radians(q0)))


def parse_arm(t: Table) -> ArmConfig:
    name = t.str("name", t.file.stem)
    b = t.table("base")
    base = _body(b)
    b.done()
    lt = t.tables("links")
    if len(lt) != 2:
        raise t.error("links", f"the arm of [Zhu, Wang & Zheng] has two flexible links, got {len(lt)}")
    links = tuple(_link(x) for x in lt)
    jt = t.tables("joints")
    if len(jt) != 3:
        raise t.error("joints", f"three revolute joints (shoulder, elbow, wrist), got {len(jt)}")
    joints = tuple(_joint(x) for x in jt)
    e = t.table("end_effector")
    ee = _body(e)
    grasp = e.vector("grasp_point_m", 3)
    e.done()
    p = t.table("payload")
    pay = _body(p)
    grapple = p.vector("grapple_m", 3)
    p.done()
    t.done()
    return ArmConfig(name=name, base=base, links=links, joints=joints, end_effector=ee, grasp_point_m=grasp,
                     payload=pay, grapple_m=grapple, source=str(t.file))


def load_arm(path: str | Path) -> ArmConfig:
    """Load and validate an arm file; raises :class:`ConfigError` (file, key, reason)."""
    return parse_arm(Table.load(path))


__all__ = ["ArmConfig", "FlexLink", "Joint", "Body", "load_arm", "parse_arm", "ConfigError"]
