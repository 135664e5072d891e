"""Mechanism config (``config/mechanisms/*.toml``) -> frozen :class:`MechanismConfig`.

Frames (docs/models/mechanism.md): frame 0 = mechanism base = active docking-unit frame A
(x0 along the approach direction, i.e. along the mechanism axis); ring frame R = the ring's
geometric frame (origin at the ring plane centre, axes parallel to 0 in the reference pose);
ring frame C = R's axes at the ring's centre of mass.

Every error is ``FILE: KEY: reason`` (:class:`rt.config.ConfigError`); unknown keys are rejected.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rt.config._common import read_inertia
from rt.config._schema import ConfigError, Table

LEG_TYPES = ("UPS", "SPU", "UCU", "RUS", "RSU")
HUNT = ("RUS", "RSU")


@dataclass(frozen=True)
class Link:
    """A leg link: mass, centre of mass on the link axis, centroidal inertia (axial, transverse).

    ``com_m``: for the cylinder / crank, distance from the base-side joint centre; for the rod /
    coupler, distance back from the ring-side joint centre."""
    mass_kg: float
    com_m: float
    inertia_axial_kgm2: float
    inertia_transverse_kgm2: float


@dataclass(frozen=True)
class Spring:
    preload: float                 # N (or N m), along +stroke at stroke 0
    table_s: np.ndarray            # strokes (m or rad), strictly increasing
    table_k: np.ndarray            # stiffness at those strokes (N/m or N m/rad)


@dataclass(frozen=True)
class Brake:
    coulomb: float
    breakaway: float
    stribeck_velocity: float
    regularization_velocity: float


@dataclass(frozen=True)
class EMDamper:
    """Ball screw (lead) + gear + motor shorted through a resistor."""
    ratio_rad_per_unit: float      # motor angle per unit stroke G (rad/m, or rad/rad)
    torque_constant_nm_per_a: float
    back_emf_v_s_per_rad: float
    resistance_ohm: float
    rotor_inertia_kgm2: float

    @property
    def damping(self) -> float:
        G = self.ratio_rad_per_unit
        return G * G * self.torque_constant_nm_per_a * self.back_emf_v_s_per_rad / self.resistance_ohm

    @property
    def reflected_inertia(self) -> float:
        return self.rotor_inertia_kgm2 * self.ratio_rad_per_unit ** 2


@dataclass(frozen=True)
class Drive:
    kp: float
    kd: float
    max_force: float
    enabled: bool = True


@dataclass(frozen=True)
class EndStops:
    stroke_min: float
    stroke_max: float
    stiffness: float
    damping: float


@dataclass(frozen=True)
class Devices:
    spring: Spring | None = None
    damping: float = 0.0
    brake: Brake | None = None
    emd: EMDamper | None = None
    drive: Drive | None = None
    end_stops: EndStops | None = None


@dataclass(frozen=True)
class MechanismConfig:
    name: str
    leg_type: str
    gravity_0: np.ndarray                 # gravity in frame 0 (m/s^2); zero in orbit
    ring_mass_kg: float
    ring_inertia_kgm2: np.ndarray         # about the ring's centre of mass, ring axes
    ring_com_R: np.ndarray                # centre of mass in the ring frame R
    ring_home_0: np.ndarray               # ring frame R origin in frame 0, reference pose
    base_joints_0: np.ndarray             # (N, 3) base joint centres, frame 0
    ring_joints_R: np.ndarray             # (N, 3) ring joint centres, frame R
    link1: Link                           # cylinder (Gough-Stewart) or crank (Hunt)
    link2: Link                           # rod (Gough-Stewart) or coupler (Hunt)
    devices: tuple[Devices, ...]          # one per leg
    crank_axes_0: np.ndarray | None = None    # (N, 3) Hunt: crank axes, frame 0
    crank_tips_0: np.ndarray | None = None    # (N, 3) Hunt: reference crank-tip joint centres
    newton_polish: int = 0
    source: str = ""

    @property
    def n_legs(self) -> int:
        return int(self.base_joints_0.shape[0])

    @property
    def hunt(self) -> bool:
        return self.leg_type in HUNT


def _inertia(t: Table, name: str) -> np.ndarray:
    return read_inertia(t, name)


def _link(t: Table, name: str, hunt: bool) -> Link:
    L = t.table(name)
    m = L.float("mass_kg", gt=0.0)
    com = L.float("com_m", ge=0.0)
    ia = L.float("inertia_axial_kgm2", gt=0.0)
    it = L.float("inertia_transverse_kgm2", gt=0.0)
    if ia > 2.0 * it + 1e-12:
        raise L.error("inertia_axial_kgm2", f"{ia} exceeds twice the transverse {it}: no real "
                      "body (triangle inequality)")
    L.done()
    return Link(m, com, ia, it)


def _units(rotary: bool) -> dict[str, str]:
    if rotary:
        return dict(F="nm", K="nm_per_rad", C="nms_per_rad", S="rad", V="rad_per_s", s="angle")
    return dict(F="n", K="n_per_m", C="ns_per_m", S="m", V="m_per_s", s="stroke")


def _devices(t: Table, rotary: bool) -> Devices:
    u = _units(rotary)
    spring = None
    if t.has("spring"):
        s = t.table("spring")
        pre = s.float(f"preload_{u['F']}", 0.0)
        ts = s.array(f"{u['s']}_table_{u['S']}", (-1,))
        tk = s.array(f"stiffness_table_{u['K']}", (-1,), ge=0.0)
        if ts.size < 1 or ts.size > 8:
            raise s.error(f"{u['s']}_table_{u['S']}", f"needs 1 to 8 entries, got {ts.size}")
        if tk.size != ts.size:
            raise s.error(f"stiffness_table_{u['K']}", f"needs {ts.size} entries (one per "
                          f"{u['s']}), got {tk.size}")
        if np.any(np.diff(ts) <= 0.0):
            raise s.error(f"{u['s']}_table_{u['S']}", "must be strictly increasing")
        s.done()
        spring = Spring(pre, ts, tk)
    damping = 0.0
    if t.has("damper"):
        d = t.table("damper")
        damping = d.float(f"damping_{u['C']}", ge=0.0)
        d.done()
    brake = None
    if t.has("brake"):
        b = t.table("brake")
        fc = b.float(f"coulomb_{u['F']}", ge=0.0)
        fb = b.float(f"breakaway_{u['F']}", fc, ge=0.0)
        if fb < fc:
            raise b.error(f"breakaway_{u['F']}", f"must be >= coulomb_{u['F']} ({fc}), got {fb}")
        vs = b.float(f"stribeck_{u['V']}", gt=0.0)
        vr = b.float(f"regularization_{u['V']}", gt=0.0)
        b.done()
        brake = Brake(fc, fb, vs, vr)
    emd = None
    if t.has("emd"):
        e = t.table("emd")
        gear = e.float("gear_ratio", gt=0.0)
        if rotary:
            G = gear
        else:
            G = gear * 2.0 * math.pi / e.float("screw_lead_m", gt=0.0)
        emd = EMDamper(G, e.float("torque_constant_nm_per_a", gt=0.0),
                       e.float("back_emf_v_s_per_rad", gt=0.0),
                       e.float("resistance_ohm", gt=0.0),
                       e.float("rotor_inertia_kgm2", 0.0, ge=0.0))
        e.done()
    drive = None
    if t.has("drive"):
        d = t.table("drive")
        drive = Drive(d.float(f"kp_{u['K']}", ge=0.0), d.float(f"kd_{u['C']}", ge=0.0),
                      d.float(f"max_{'force_n' if not rotary else 'torque_nm'}", gt=0.0),
                      d.bool("enabled", True))
        d.done()
    stops = None
    if t.has("end_stops"):
        e = t.table("end_stops")
        lo = e.float(f"{u['s']}_min_{u['S']}")
        hi = e.float(f"{u['s']}_max_{u['S']}")
        if not (lo <= 0.0 <= hi and lo < hi):
            raise e.error(f"{u['s']}_max_{u['S']}", f"limits must bracket the reference "
                          f"{u['s']} 0: need min <= 0 <= max and min < max, got {lo} .. {hi}")
        stops = EndStops(lo, hi, e.float(f"stiffness_{u['K']}", gt=0.0),
                         e.float(f"damping_{u['C']}", 0.0, ge=0.0))
        e.done()
    t.done()
    return Devices(spring, damping, brake, emd, drive, stops)


def _ring_points(radius: float, half: float, centres_deg) -> np.ndarray:
    pts = []
    for c in centres_deg:
        for sgn in (-1.0, 1.0):
            a = math.radians(c) + sgn * half
            pts.append([0.0, radius * math.cos(a), radius * math.sin(a)])
    return np.array(pts)


def _geometry(t: Table, hunt: bool):
    g = t.table("geometry")
    crank_axes = crank_tips = None
    if g.has("hexapod"):
        h = g.table("hexapod")
        rb = h.float("base_radius_m", gt=0.0)
        hb = math.radians(h.float("base_half_spacing_deg", gt=0.0, lt=60.0))
        rr = h.float("ring_radius_m", gt=0.0)
        hr = math.radians(h.float("ring_half_spacing_deg", gt=0.0, lt=60.0))
        base = _ring_points(rb, hb, (0.0, 120.0, 240.0))
        # ring pairs centred at 60, 180, 300 deg; leg 2i -> ring point at theta_i - 60 + hr
        ring = np.empty_like(base)
        for i, th in enumerate((0.0, 120.0, 240.0)):
            for j, a in enumerate((math.radians(th - 60.0) + hr, math.radians(th + 60.0) - hr)):
                ring[2 * i + j] = [0.0, rr * math.cos(a), rr * math.sin(a)]
        if hunt:
            L = h.float("crank_length_m", gt=0.0)
            el = math.radians(h.float("crank_elevation_deg", 0.0, gt=-80.0, lt=80.0))
            crank_axes = np.empty_like(base)
            crank_tips = np.empty_like(base)
            for i, b in enumerate(base):
                ur = b / np.linalg.norm(b)
                tang = np.cross([1.0, 0.0, 0.0], ur)
                crank_axes[i] = tang
                crank_tips[i] = b + L * (math.cos(el) * ur + math.sin(el) * np.array([1.0, 0.0, 0.0]))
        h.done()
    else:
        base = g.array("base_joints_m", (-1, 3))
        ring = g.array("ring_joints_m", (base.shape[0], 3))
        if hunt:
            crank_axes = g.array("crank_axes", (base.shape[0], 3))
            crank_tips = g.array("crank_tips_m", (base.shape[0], 3))
            n = np.linalg.norm(crank_axes, axis=1)
            if np.any(n < 1e-9):
                raise g.error("crank_axes", "zero crank axis")
            crank_axes = crank_axes / n[:, None]
            for i in range(base.shape[0]):
                arm = crank_tips[i] - base[i]
                if np.linalg.norm(arm) < 1e-6:
                    raise g.error("crank_tips_m", f"leg {i}: crank tip coincides with the base joint")
                if abs(arm @ crank_axes[i]) > 1e-6 * np.linalg.norm(arm):
                    raise g.error("crank_tips_m", f"leg {i}: crank arm not perpendicular to its axis")
    g.done()
    if base.shape[0] != 6:
        raise t.error("geometry", f"a 6-DOF peripheral mechanism needs 6 legs, got {base.shape[0]}")
    return base, ring, crank_axes, crank_tips


def parse_mechanism(t: Table) -> MechanismConfig:
    name = t.str("name", t.file.stem)
    leg_type = t.str("leg_type", choices=LEG_TYPES)
    hunt = leg_type in HUNT
    grav = t.vector("gravity_m_per_s2", 3, (0.0, 0.0, 0.0))
    if np.linalg.norm(grav) > 30.0:
        raise t.error("gravity_m_per_s2", f"|g| = {np.linalg.norm(grav):.3g} m/s^2 is implausible")
    r = t.table("ring")
    mC = r.float("mass_kg", gt=0.0)
    IC = _inertia(r, "inertia_kgm2")
    com = r.vector("com_m", 3, np.zeros(3))
    home = r.vector("home_position_m", 3)
    r.done()
    base, ring, crank_axes, crank_tips = _geometry(t, hunt)
    links = t.table("legs")
    l1 = _link(links, "crank" if hunt else "cylinder", hunt)
    l2 = _link(links, "coupler" if hunt else "rod", hunt)
    links.done()
    n = base.shape[0]
    dev_default = _devices(t.table("devices", {}), rotary=hunt) if t.has("devices") else Devices()
    devs = [dev_default] * n
    if t.has("leg_devices"):
        for ov in t.tables("leg_devices"):
            k = ov.int("leg", ge=0, le=n - 1)
            devs[k] = _devices(ov.table("devices"), rotary=hunt)
            ov.done()
    newton = t.int("newton_polish_iterations", 0, ge=0, le=10)
    t.done()
    cfg = MechanismConfig(name=name, leg_type=leg_type, gravity_0=grav, ring_mass_kg=mC,
                          ring_inertia_kgm2=IC, ring_com_R=com, ring_home_0=home,
                          base_joints_0=base, ring_joints_R=ring, link1=l1, link2=l2,
                          devices=tuple(devs), crank_axes_0=crank_axes, crank_tips_0=crank_tips,
                          newton_polish=newton, source=str(t.file))
    return cfg


__all__ = ["MechanismConfig", "Link", "Devices", "Spring", "Brake", "EMDamper", "Drive",
           "EndStops", "parse_mechanism", "ConfigError", "LEG_TYPES"]
