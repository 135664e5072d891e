"""Vehicle config (``config/vehicles/*.toml``): mass properties, docking port, flexible modes at
the port, and the vehicle's own control system. See docs/config.md for every key.

Frames: C = centre-of-mass body frame, D = docking-unit (port) frame (docs/conventions.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rt.config._common import read_inertia, read_orientation
from rt.config._schema import ConfigError, Table, expect_kind

ROT_MODES = ("free", "hold")
TRANS_MODES = ("free", "thrust")


@dataclass(frozen=True)
class Mode:
    """One elastic mode seen at the port (mass-normalised).

    ``shape`` = [dx, dy, dz, rx, ry, rz]: port translation (m) and small rotation (rad) per
    unit modal coordinate, in body axes C."""
    frequency_hz: float
    damping_ratio: float
    shape: np.ndarray


@dataclass(frozen=True)
class AttitudeHold:
    kp_nm_per_rad: np.ndarray
    kd_nms_per_rad: np.ndarray
    torque_max_nm: np.ndarray
    deadband_rad: np.ndarray


@dataclass(frozen=True)
class Thrust:
    force_n: np.ndarray  # body axes C, through the centre of mass
    start_s: float
    stop_s: float


@dataclass(frozen=True)
class Control:
    rotation: tuple[str, str, str] = ("free", "free", "free")
    translation: tuple[str, str, str] = ("free", "free", "free")
    attitude_hold: AttitudeHold | None = None
    thrust: Thrust | None = None


@dataclass(frozen=True)
class Vehicle:
    name: str
    mass_kg: float
    inertia_kgm2: np.ndarray      # about the centre of mass, body axes C
    port_position_m: np.ndarray   # l_CD: port origin in C
    R_CD: np.ndarray              # port orientation: D-components -> C-components
    modes: tuple[Mode, ...] = ()
    control: Control = field(default_factory=Control)
    source: str = ""


def _inertia(t: Table) -> np.ndarray:
    return read_inertia(t, "inertia_kgm2")


def _three(t: Table, name: str, choices: tuple[str, ...]) -> tuple[str, str, str]:
    v = t.data.get(name, ["free", "free", "free"])
    t._used.add(name)
    if not (isinstance(v, list) and len(v) == 3 and all(isinstance(x, str) for x in v)):
        raise t.error(name, "expected three strings, one per body axis x, y, z")
    for x in v:
        if x not in choices:
            raise t.error(name, f"each axis must be one of {', '.join(map(repr, choices))}; got {x!r}")
    return tuple(v)  # type: ignore[return-value]


def _control(t: Table) -> Control:
    if not t.has("control"):
        return Control()
    c = t.table("control")
    rot = _three(c, "rotation", ROT_MODES)
    trans = _three(c, "translation", TRANS_MODES)
    hold = None
    if "hold" in rot or c.has("attitude_hold"):
        if not c.has("attitude_hold"):
            raise c.error("attitude_hold", "required when any rotation axis is 'hold'")
        h = c.table("attitude_hold")
        hold = AttitudeHold(
            kp_nm_per_rad=h.vector("kp_nm_per_rad", 3, ge=0.0),
            kd_nms_per_rad=h.vector("kd_nms_per_rad", 3, ge=0.0),
            torque_max_nm=h.vector("torque_max_nm", 3, gt=0.0),
            deadband_rad=np.radians(h.vector("deadband_deg", 3, (0.0, 0.0, 0.0), ge=0.0)),
        )
        h.done()
    thrust = None
    if "thrust" in trans or c.has("thrust"):
        if not c.has("thrust"):
            raise c.error("thrust", "required when any translation axis is 'thrust'")
        th = c.table("thrust")
        start = th.float("start_s", 0.0, ge=0.0)
        stop = th.float("stop_s", gt=0.0)
        if stop <= start:
            raise th.error("stop_s", f"must be after start_s ({start}), got {stop}")
        thrust = Thrust(force_n=th.vector("force_n", 3), start_s=start, stop_s=stop)
        th.done()
    c.done()
    return Control(rotation=rot, translation=trans, attitude_hold=hold, thrust=thrust)


def _modes(t: Table) -> tuple[Mode, ...]:
    if not t.has("modes"):
        return ()
    out = []
    for m in t.tables("modes"):
        f = m.float("frequency_hz", gt=0.0)
        z = m.float("damping_ratio", ge=0.0)
        if z >= 1.0:
            raise m.error("damping_ratio", f"must be < 1 (an underdamped structural mode), got {z}")
        shape = m.vector("shape", 6, ge=-1e3, le=1e3)
        if not np.any(shape):
            raise m.error("shape", "all-zero mode shape: the mode is not seen at the port")
        m.done()
        out.append(Mode(frequency_hz=f, damping_ratio=z, shape=shape))
    return tuple(out)


def parse_vehicle(t: Table) -> Vehicle:
    name = t.str("name", t.file.stem)
    mass = t.float("mass_kg", gt=0.0)
    J = _inertia(t)
    port = t.table("port")
    l_cd = port.vector("position_m", 3)
    R_cd = read_orientation(port, "orientation")
    port.done()
    modes = _modes(t)
    control = _control(t)
    t.done()
    return Vehicle(name=name, mass_kg=mass, inertia_kgm2=J, port_position_m=l_cd, R_CD=R_cd,
                   modes=modes, control=control, source=str(t.file))


def load_vehicle(path: str | Path) -> Vehicle:
    """Load and validate a vehicle file; raises :class:`ConfigError` (file, key, reason)."""
    t = Table.load(path)
    expect_kind(t, "vehicle")
    return parse_vehicle(t)


__all__ = ["Vehicle", "Mode", "Control", "AttitudeHold", "Thrust", "load_vehicle", "ConfigError"]
