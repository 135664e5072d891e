"""The probe-cone (central) docking interface: its config (``config/interfaces/probe_cone.toml``)
and its features, pairs and latches ([Yaskevich 2018b, latches and sensors,
validation]; docs/models/probe_cone.md §2).

Geometry, in P (x_P into the socket, origin at the socket's entry plane on the axis): the
receiving cone from the mouth (x = -cone depth) to the entry edge (x = 0); the entry edge, a
rounded circle; the lip's bore (x = 0 .. lip thickness) and its sharp back edge; the stop, the lip's back face (an annulus
facing +x); the chamber's wall and the bottom (a disc facing -x). All passive surfaces are
bands of surfaces of revolution (``K_REVOLVED``), circles or annuli, so the contacts with the
spherical head and the latch tips are exact (the nearest point of a surface of revolution lies
in the meridian plane). On the head (buffer link 0, frame E): the head sphere; per latch a rotary
zero-mass link (front face's tip, deflected by the cone, the edge, the lip's bore and back edge; it snaps
out behind the lip) and its back face's tip against the stop once engaged (a pair gated by the
latch). Capture = every latch engaged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rt.config._schema import Table
from sim_stand.contact.build import Builder, Packed
from sim_stand.contact.config import Material, _material, _mm

EX = np.array([1.0, 0.0, 0.0])
MATERIALS = ("head_cone", "head_edge", "head_socket", "latch_face", "latch_stop")


@dataclass(frozen=True)
class ProbeConeInterface:
    name: str
    head_radius_m: float
    cone_mouth_radius_m: float
    cone_depth_m: float
    cone_wall_depth_m: float
    entry_radius_m: float
    edge_radius_m: float
    lip_thickness_m: float
    chamber_radius_m: float
    socket_depth_m: float
    latch_count: int
    latch_azimuth_rad: float
    latch_pivot: tuple[float, float]      # (axial, radial) in E
    latch_tip: tuple[float, float]
    latch_tip_rounding_m: float
    latch_stroke_rad: float
    latch_preload_nm: float
    latch_stiffness_nm_per_rad: float
    latch_tolerance_rad: float
    materials: dict
    max_contacts: int = 32
    source: str = ""
    kind: str = "probe_cone"


def parse_probe_cone(t: Table) -> ProbeConeInterface:
    name = t.str("name", t.file.stem)
    max_contacts = t.int("max_contacts", 32, ge=1, le=4096)
    h = t.table("head")
    rh = _mm(h, "radius_mm", gt=0.0)
    h.done()
    c = t.table("cone")
    mouth = _mm(c, "mouth_diameter_mm", gt=0.0) / 2
    cdepth = _mm(c, "depth_mm", gt=0.0)
    wall = _mm(c, "wall_depth_mm", gt=0.0)
    c.done()
    s = t.table("socket")
    entry = _mm(s, "entry_diameter_mm", gt=0.0) / 2
    if entry <= rh:
        raise s.error("entry_diameter_mm", f"must exceed the head's diameter ({2e3 * rh:g} mm)")
    if mouth <= entry:
        raise t.error("cone.mouth_diameter_mm", f"must exceed socket.entry_diameter_mm ({2e3 * entry:g} mm)")
    edge = _mm(s, "edge_radius_mm", ge=0.0)
    lip = _mm(s, "lip_thickness_mm", gt=0.0)
    chamber = _mm(s, "chamber_diameter_mm", gt=0.0) / 2
    if chamber <= entry:
        raise s.error("chamber_diameter_mm", f"must exceed entry_diameter_mm ({2e3 * entry:g} mm)")
    sdepth = _mm(s, "depth_mm", gt=0.0)
    if sdepth <= lip + rh:
        raise s.error("depth_mm", f"must exceed lip_thickness_mm + the head radius ({1e3 * (lip + rh):g} mm)")
    s.done()
    la = t.table("latches")
    count = la.int("count", ge=1, le=12)
    az = math.radians(la.float("azimuth_deg", 0.0))
    piv = (_mm(la, "pivot_axial_mm"), _mm(la, "pivot_radius_mm", ge=0.0))
    tip = (_mm(la, "tip_axial_mm"), _mm(la, "tip_radius_mm", gt=0.0))
    rt = _mm(la, "tip_rounding_mm", gt=0.0)
    if tip[1] + rt <= entry:
        raise la.error("tip_radius_mm", "the free latch tip must reach beyond the socket entry "
                       f"({2e3 * entry:g} mm diameter), or the latches never deflect")
    if tip[1] + rt >= chamber:
        raise la.error("tip_radius_mm", f"the free latch tip must fit in the chamber ({2e3 * chamber:g} mm "
                       "diameter), or the latches never engage")
    if math.hypot(tip[0] - piv[0], tip[1] - piv[1]) < 1e-3:
        raise la.error("tip_axial_mm", "tip and pivot coincide")
    stroke = math.radians(la.float("stroke_deg", gt=0.0, lt=90.0))
    pre = la.float("preload_nm", ge=0.0)
    k = la.float("stiffness_nm_per_rad", ge=0.0)
    tol = la.float("tolerance_mrad", gt=0.0) * 1e-3
    la.done()
    mt = t.table("materials")
    mats: dict[str, Material] = {key: _material(mt.table(key)) for key in MATERIALS}
    mt.done()
    t.done()
    return ProbeConeInterface(name=name, head_radius_m=rh, cone_mouth_radius_m=mouth, cone_depth_m=cdepth,
                              cone_wall_depth_m=wall, entry_radius_m=entry, edge_radius_m=edge,
                              lip_thickness_m=lip, chamber_radius_m=chamber, socket_depth_m=sdepth,
                              latch_count=count, latch_azimuth_rad=az, latch_pivot=piv, latch_tip=tip,
                              latch_tip_rounding_m=rt, latch_stroke_rad=stroke, latch_preload_nm=pre,
                              latch_stiffness_nm_per_rad=k, latch_tolerance_rad=tol, materials=mats,
                              max_contacts=max_contacts, source=str(t.file))


def cone_tangent_point(mouth: tuple[float, float], centre: tuple[float, float], r: float) -> tuple[float, float]:
    """Where the cone's generator from the mouth (a, rho) meets the rounded entry edge (circle of
    radius ``r`` about ``centre`` in the meridian plane) tangentially, the edge on the material
    side of the generator."""
    M, C = np.asarray(mouth, float), np.asarray(centre, float)
    d = C - M
    L = float(np.hypot(*d))
    if r == 0.0:
        return float(C[0]), float(C[1])
    ang = math.asin(r / L)
    best = None
    for sgn in (1.0, -1.0):
        c, s_ = math.cos(sgn * ang), math.sin(sgn * ang)
        u = np.array([c * d[0] - s_ * d[1], s_ * d[0] + c * d[1]]) / L     # tangent line direction
        T = M + u * (L * math.cos(ang))
        n = np.array([u[1], -u[0]])                                          # free-side normal
        if n @ (C - T) < 0.0:
            best = T
    return float(best[0]), float(best[1])


def build_probe_cone(itf: ProbeConeInterface) -> Packed:
    """Features, pairs, materials and latches (one buffer link: the probe head, link 0)."""
    b = Builder(n_links=1, max_contacts=itf.max_contacts)
    m = {key: b.material(key, x.stiffness_n_per_m, x.damping_ns_per_m, x.friction, x.max_penetration_m,
                         x.slip_velocity_m_per_s, x.stiffness_slope_n_per_m2, x.push_only)
         for key, x in itf.materials.items()}
    O = np.zeros(3)
    lip, re, rc, r_e = itf.lip_thickness_m, itf.entry_radius_m, itf.chamber_radius_m, itf.edge_radius_m
    # passive surfaces, generators ordered so the free side is towards the axis / the front.
    # cone, entry edge, lip bore and the lip's back edge are consecutive: the latches' deflecting faces
    mouth = (-itf.cone_depth_m, itf.cone_mouth_radius_m)
    tan = cone_tangent_point(mouth, (0.0, re + r_e), r_e)
    cone = b.revolved("cone", O, EX, mouth, tan, itf.cone_wall_depth_m)
    edge = b.circle("entry_edge", O, EX, re + r_e, r_e)
    # the lip is solid from its bore out to the chamber's radius: a latch tip anywhere in it is seen
    bore = b.revolved("lip_bore", O, EX, (0.0, re), (lip, re), rc - re)
    back_edge = b.circle("lip_back_edge", lip * EX, EX, re, 0.0)
    stop = b.annulus("stop", lip * EX, EX, re, rc, lip)
    for k in (1, 2, 3):                   # the latches' catches: one row per deflecting face
        b.annulus(f"stop.{k}", lip * EX, EX, re, rc, lip)
    wall = b.revolved("chamber_wall", O, EX, (lip, rc), (itf.socket_depth_m, rc), itf.lip_thickness_m)
    bottom = b.annulus("bottom", itf.socket_depth_m * EX, -EX, 0.0, rc, itf.lip_thickness_m)
    head = b.point("head", O, itf.head_radius_m, link=0)
    for name, f, mat in (("head-cone", cone, "head_cone"), ("head-edge", edge, "head_edge"),
                         ("head-lip", bore, "head_socket"), ("head-lip-back", back_edge, "head_socket"),
                         ("head-stop", stop, "head_socket"),
                         ("head-chamber", wall, "head_socket"), ("head-bottom", bottom, "head_socket")):
        b.pair(name, head, f, m[mat])
    (pa, pr), (ta, tr) = itf.latch_pivot, itf.latch_tip
    for i in range(itf.latch_count):
        psi = itf.latch_azimuth_rad + 2 * math.pi * i / itf.latch_count
        u = np.array([0.0, math.cos(psi), math.sin(psi)])
        tang = np.array([0.0, -math.sin(psi), math.cos(psi)])
        tag = f"latch{round(math.degrees(psi)) % 360}"
        tip = ta * EX + tr * u
        pivot = pa * EX + pr * u
        # a positive angle turns the tip towards the axis: (axis x (tip - pivot)) . u < 0
        axis = tang if np.cross(tang, tip - pivot) @ u < 0.0 else -tang
        li = b.latch(tag, 0, tip, axis, itf.latch_stroke_rad, itf.latch_preload_nm,
                     itf.latch_stiffness_nm_per_rad, itf.latch_tip_rounding_m, cone, m["latch_face"],
                     tol=itf.latch_tolerance_rad, back=stop, rotational=True, pivot=pivot, n_faces=4)
        back = b.point(f"{tag}.back", tip, itf.latch_tip_rounding_m, link=0)
        b.pair(f"{tag}-stop", back, stop, m["latch_stop"], gate=li)
    return b.pack()
