"""Interface config (``config/interfaces/*.toml``): geometry of the guide petals, rings,
latches, strikers and sensors of a peripheral androgynous docking interface, and the contact
parameters per pair type. ``load_peripheral_interface(path)`` returns a frozen :class:`Interface`;
errors are ``FILE: KEY: reason`` and unknown keys are rejected (rt.config._schema).

Units at the edge: mm and deg in the key names, SI inside the objects. Every key is described
in docs/models/contact.md §5.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from rt.config._schema import ConfigError, Table

PAIR_TYPES = ("petal_face", "petal_edge", "rim_petal", "ring_seat", "latch_striker")


@dataclass(frozen=True)
class Material:
    """Contact law of one pair type ([Yaskevich 2018b, eq. 7]): |f_R| = (k0 + k1 D) D + c D'."""
    stiffness_n_per_m: float
    damping_ns_per_m: float
    friction: float
    max_penetration_m: float
    slip_velocity_m_per_s: float = 1e-3
    stiffness_slope_n_per_m2: float = 0.0
    push_only: bool = True


@dataclass(frozen=True)
class Ring:
    passage_radius_m: float      # inner edge of the ring face = the rim the other petals pass
    outer_radius_m: float
    seat_radius_m: float
    seat_points: int
    rim_segments: int
    rim_radius_m: float
    face_depth_m: float


@dataclass(frozen=True)
class Petals:
    count: int
    active_azimuth_rad: float
    passive_azimuth_rad: float
    base_radius_m: float         # petal mid-plane at its root
    height_m: float
    inclination_rad: float       # inward lean from the unit axis
    base_width_m: float
    tip_width_m: float
    thickness_m: float
    edge_radius_m: float


@dataclass(frozen=True)
class Latches:
    count: int
    azimuth_rad: float
    axial_m: float               # tip centre, x of the ring frame E (negative: behind the face)
    free_radius_m: float
    tip_radius_m: float
    stroke: float                # m (translational pawls only: rotational ones are refused, below)
    preload: float               # N
    rate: float                  # N/m
    tolerance: float             # bisection tolerance on p (m)


@dataclass(frozen=True)
class Strikers:
    crest_x_m: float             # x in P of the crest (= the catch face)
    height_m: float
    ramp_length_m: float
    width_m: float


@dataclass(frozen=True)
class Sensors:
    count: int
    azimuth_rad: float
    radius_m: float
    protrusion_m: float
    tip_radius_m: float
    stroke_m: float
    trigger_m: float
    preload_n: float
    rate_n_per_m: float


@dataclass(frozen=True)
class Interface:
    name: str
    ring: Ring
    petals: Petals
    latches: Latches
    strikers: Strikers
    sensors: Sensors | None
    materials: dict = field(default_factory=dict)   # pair type -> Material
    max_contacts: int = 64
    neighbour_deg: float = 180.0
    source: str = ""


def _mm(t: Table, key: str, default=None, **kw) -> float:
    """A length given in mm (bounds in mm too), returned in m."""
    if default is None:
        return t.float(key, **kw) * 1e-3
    return t.float(key, default * 1e3, **kw) * 1e-3


def _material(t: Table) -> Material:
    m = Material(
        stiffness_n_per_m=t.float("stiffness_n_per_m", gt=0.0),
        damping_ns_per_m=t.float("damping_ns_per_m", ge=0.0),
        friction=t.float("friction", ge=0.0, le=2.0),
        max_penetration_m=t.float("max_penetration_mm", gt=0.0) * 1e-3,
        slip_velocity_m_per_s=t.float("slip_velocity_mm_per_s", 1.0, gt=0.0) * 1e-3,
        stiffness_slope_n_per_m2=t.float("stiffness_slope_n_per_m2", 0.0, ge=0.0),
        push_only=t.bool("push_only", True),
    )
    t.done()
    return m


def parse_interface(t: Table) -> Interface:
    name = t.str("name", t.file.stem)
    max_contacts = t.int("max_contacts", 64, ge=1, le=4096)
    neighbour = t.float("neighbour_deg", 180.0, gt=0.0, le=180.0)

    r = t.table("ring")
    passage = _mm(r, "passage_diameter_mm", gt=0.0) / 2
    outer = _mm(r, "outer_diameter_mm", gt=0.0) / 2
    if outer <= passage:
        raise r.error("outer_diameter_mm", f"must exceed passage_diameter_mm ({2e3 * passage:g} mm)")
    seat = _mm(r, "seat_diameter_mm", gt=0.0) / 2
    if not passage <= seat <= outer:
        raise r.error("seat_diameter_mm", "must lie between passage_diameter_mm and outer_diameter_mm")
    ring = Ring(passage_radius_m=passage, outer_radius_m=outer, seat_radius_m=seat,
                seat_points=r.int("seat_points", ge=3, le=64),
                rim_segments=r.int("rim_segments", ge=6, le=360),
                rim_radius_m=_mm(r, "rim_radius_mm", ge=0.0),
                face_depth_m=_mm(r, "face_depth_mm", gt=0.0))
    r.done()

    p = t.table("petals")
    count = p.int("count", ge=2, le=8)
    pet = Petals(count=count,
                 active_azimuth_rad=math.radians(p.float("active_azimuth_deg")),
                 passive_azimuth_rad=math.radians(p.float("passive_azimuth_deg")),
                 base_radius_m=_mm(p, "base_radius_mm", gt=0.0),
                 height_m=_mm(p, "height_mm", gt=0.0),
                 inclination_rad=math.radians(p.float("inclination_deg", ge=0.0, lt=80.0)),
                 base_width_m=_mm(p, "base_width_mm", gt=0.0),
                 tip_width_m=_mm(p, "tip_width_mm", gt=0.0),
                 thickness_m=_mm(p, "thickness_mm", gt=0.0),
                 edge_radius_m=_mm(p, "edge_radius_mm", ge=0.0))
    if pet.edge_radius_m > 0.5 * pet.thickness_m + 1e-12:
        raise p.error("edge_radius_mm", "must not exceed half the petal thickness")
    if pet.tip_width_m >= pet.base_width_m:
        raise p.error("tip_width_mm", "must be smaller than base_width_mm (trapezoidal petal)")
    off = (pet.passive_azimuth_rad - pet.active_azimuth_rad) % (2 * math.pi / count)
    if abs(off - math.pi / count) > 1e-9:
        raise p.error("passive_azimuth_deg", f"petals must interleave: passive = active + "
                      f"{180 / count:g} deg (mod {360 / count:g})")
    if pet.base_radius_m + 0.5 * pet.thickness_m >= ring.passage_radius_m:
        raise p.error("base_radius_mm", "petal roots (plus half thickness) must lie inside the "
                      "passage so the other unit's petals can enter it")
    if pet.base_radius_m - pet.height_m * math.tan(pet.inclination_rad) <= 0.0:
        raise p.error("inclination_deg", "petal tips would cross the axis")
    p.done()

    lt = t.table("latches")
    dof = lt.str("dof", "translational", choices=("translational", "rotational"))
    if dof == "rotational":
        # the strikers of this interface always have catches (docs/models/contact.md §8)
        raise lt.error("dof", "rotational pawls are not supported against strikers with catch faces: "
                       "along the tip's arc the overlap with the catch can change sign more than "
                       "once, and the bisection from the free position to full deflection may pick "
                       "a root the pawl cannot reach (energy error up to 2.8 J per latch at a 40 mm "
                       "arm); use \"translational\"")
    stroke = _mm(lt, "stroke_mm", gt=0.0)
    tol = _mm(lt, "tolerance_mm", gt=0.0)
    if tol >= stroke:
        raise lt.error("tolerance_mm", "must be smaller than the stroke")
    lat = Latches(count=lt.int("count", ge=1, le=12),
                  azimuth_rad=math.radians(lt.float("azimuth_deg")),
                  axial_m=_mm(lt, "axial_position_mm"),
                  free_radius_m=_mm(lt, "free_radius_mm", gt=0.0),
                  tip_radius_m=_mm(lt, "tip_radius_mm", ge=0.0),
                  stroke=stroke, preload=lt.float("preload_n", ge=0.0),
                  rate=lt.float("stiffness_n_per_m", ge=0.0), tolerance=tol)
    if lat.free_radius_m >= ring.passage_radius_m:
        raise lt.error("free_radius_mm", "latch tips protrude inward from the passage wall: must be "
                       "smaller than the passage radius")
    lt.done()
    if lat.count != pet.count:
        raise t.error("latches", f"count {lat.count} must equal petals.count {pet.count} "
                      "(one striker per passive petal)")
    off = (lat.azimuth_rad - pet.passive_azimuth_rad) % (2 * math.pi / count)
    if min(off, 2 * math.pi / count - off) > 1e-9:
        raise t.error("latches", "azimuth_deg must be a passive petal's azimuth (the striker sits on it)")

    s = t.table("strikers")
    st = Strikers(crest_x_m=_mm(s, "crest_axial_mm", lt=0.0),
                  height_m=_mm(s, "height_mm", gt=0.0),
                  ramp_length_m=_mm(s, "ramp_length_mm", gt=0.0),
                  width_m=_mm(s, "width_mm", gt=0.0))
    if st.crest_x_m - st.ramp_length_m < -pet.height_m:
        raise s.error("ramp_length_mm", "the ramp runs past the petal tip")
    s.done()

    sensors = None
    if t.has("sensors"):
        se = t.table("sensors")
        sensors = Sensors(count=se.int("count", ge=1, le=12),
                          azimuth_rad=math.radians(se.float("azimuth_deg")),
                          radius_m=_mm(se, "radius_mm", gt=0.0),
                          protrusion_m=_mm(se, "protrusion_mm", gt=0.0),
                          tip_radius_m=_mm(se, "tip_radius_mm", ge=0.0),
                          stroke_m=_mm(se, "stroke_mm", gt=0.0),
                          trigger_m=_mm(se, "trigger_mm", gt=0.0),
                          preload_n=se.float("preload_n", ge=0.0),
                          rate_n_per_m=se.float("stiffness_n_per_m", ge=0.0))
        if not ring.passage_radius_m < sensors.radius_m < ring.outer_radius_m:
            raise se.error("radius_mm", "sensors sit on the ring face (between passage and outer radius)")
        if sensors.trigger_m >= sensors.stroke_m:
            raise se.error("trigger_mm", "must be smaller than stroke_mm")
        se.done()

    mt = t.table("materials")
    mats = {}
    for key in PAIR_TYPES:
        if not mt.has(key):
            raise mt.error(key, "required pair type is missing")
        mats[key] = _material(mt.table(key))
    mt.done()
    t.done()
    return Interface(name=name, ring=ring, petals=pet, latches=lat, strikers=st, sensors=sensors,
                     materials=mats, max_contacts=max_contacts, neighbour_deg=neighbour,
                     source=str(t.file))


def load_peripheral_interface(path: str | Path) -> Interface:
    """Load and validate a peripheral interface file; raises :class:`ConfigError` (file, key,
    reason). :func:`sim_stand.contact.interfaces.load_interface` takes either kind."""
    return parse_interface(Table.load(path))


__all__ = ["Interface", "Material", "load_peripheral_interface", "parse_interface", "ConfigError", "PAIR_TYPES"]
