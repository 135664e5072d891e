"""Packing an interface into the flat arrays the kernel reads.

:class:`Builder` is the low-level API (features, pairs, materials, latches; used by the tests
for single primitives); :func:`build_peripheral` turns a loaded
:class:`~sim_stand.contact.config.Interface` (the peripheral androgynous preset and its
variants) into a :class:`Packed` through it. Geometry of the preset: docs/models/contact.md §2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim_stand.contact import geometry as G
from sim_stand.contact import kernel as K


@dataclass(frozen=True)
class Packed:
    """Immutable kernel parameters plus the names used in messages."""
    feat: np.ndarray           # (nf, FW) features: passive ones in P, active ones in E_j
    pairs: np.ndarray          # (np, PW) int64
    mat: np.ndarray            # (nm, MW)
    lat: np.ndarray            # (nl, LW)
    n_links: int
    max_contacts: int
    feature_names: tuple[str, ...]
    pair_names: tuple[str, ...]
    material_names: tuple[str, ...]
    latch_names: tuple[str, ...]

    def contact_name(self, code: int) -> str:
        """Name of a record's pair code (pairs, then latches/sensors)."""
        code = int(code)
        if code < len(self.pair_names):
            return self.pair_names[code]
        return self.latch_names[code - len(self.pair_names)]


def _v(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).reshape(3)


class Builder:
    def __init__(self, n_links: int = 1, max_contacts: int = 64):
        self.n_links = n_links
        self.max_contacts = max_contacts
        self.feat: list[np.ndarray] = []
        self.fnames: list[str] = []
        self.pairs: list[list[int]] = []
        self.pnames: list[str] = []
        self.mat: list[np.ndarray] = []
        self.mnames: list[str] = []
        self.lat: list[np.ndarray] = []
        self.lnames: list[str] = []

    # ------------------------------------------------------------------ features
    def _row(self, kind, link, name, radius=0.0):
        r = np.zeros(G.FW)
        r[G.F_KIND] = kind
        r[G.F_SIDE] = 0.0 if link is None else 1.0
        r[G.F_LINK] = 0.0 if link is None else float(link)
        r[G.F_RAD] = radius
        if link is not None and not 0 <= link < self.n_links:
            raise ValueError(f"feature {name!r}: link {link} out of range")
        return r

    def _add(self, r, name):
        self.feat.append(r)
        self.fnames.append(name)
        return len(self.feat) - 1

    def point(self, name, p, radius=0.0, link=None) -> int:
        r = self._row(G.K_POINT, link, name, radius)
        r[G.F_A:G.F_A + 3] = _v(p)
        r[G.F_B:G.F_B + 3] = _v(p)
        r[G.F_BC:G.F_BC + 3] = _v(p)
        r[G.F_BR] = radius
        return self._add(r, name)

    def segment(self, name, a, b, radius=0.0, link=None) -> int:
        a, b = _v(a), _v(b)
        r = self._row(G.K_SEGMENT, link, name, radius)
        r[G.F_A:G.F_A + 3] = a
        r[G.F_B:G.F_B + 3] = b
        r[G.F_BC:G.F_BC + 3] = 0.5 * (a + b)
        r[G.F_BR] = 0.5 * np.linalg.norm(b - a) + radius
        return self._add(r, name)

    def polygon(self, name, verts, normal, depth, link=None) -> int:
        """One-sided planar convex polygon; ``normal`` = outward normal nu (out of the body);
        vertices in either order (stored counter-clockwise about nu)."""
        V = np.asarray(verts, dtype=np.float64)
        nu = _v(normal)
        nu = nu / np.linalg.norm(nu)
        if not 3 <= len(V) <= G.MAXV:
            raise ValueError(f"polygon {name!r}: 3..{G.MAXV} vertices")
        c = V.mean(axis=0)
        off = np.abs((V - c) @ nu).max()
        if off > 1e-9 * max(1.0, np.abs(V).max()):
            raise ValueError(f"polygon {name!r}: vertices not coplanar with the normal ({off:.3g} m)")
        if np.dot(np.cross(V[1] - V[0], V[2] - V[1]), nu) < 0:
            V = V[::-1].copy()
        n = len(V)
        for i in range(n):
            e1 = V[(i + 1) % n] - V[i]
            e2 = V[(i + 2) % n] - V[(i + 1) % n]
            if np.dot(np.cross(e1, e2), nu) <= 0:
                raise ValueError(f"polygon {name!r}: not strictly convex")
        r = self._row(G.K_POLYGON, link, name)
        r[G.F_A:G.F_A + 3] = c
        r[G.F_NU:G.F_NU + 3] = nu
        r[G.F_NV] = n
        r[G.F_DEPTH] = depth
        r[G.F_V:G.F_V + 3 * n] = V.ravel()
        r[G.F_BC:G.F_BC + 3] = c
        r[G.F_BR] = np.linalg.norm(V - c, axis=1).max() + depth
        return self._add(r, name)

    def annulus(self, name, centre, normal, r_in, r_out, depth, link=None) -> int:
        """One-sided annulus (r_in <= radius <= r_out about ``centre``; r_out = inf: plane)."""
        nu = _v(normal)
        nu = nu / np.linalg.norm(nu)
        r = self._row(G.K_ANNULUS, link, name)
        r[G.F_A:G.F_A + 3] = _v(centre)
        r[G.F_NU:G.F_NU + 3] = nu
        r[G.F_RIN] = r_in
        r[G.F_ROUT] = r_out
        r[G.F_DEPTH] = depth
        r[G.F_BC:G.F_BC + 3] = _v(centre)
        r[G.F_BR] = (r_out if math.isfinite(r_out) else 1e150) + depth
        return self._add(r, name)

    def circle(self, name, centre, axis, rho, radius=0.0, link=None) -> int:
        ax = _v(axis)
        ax = ax / np.linalg.norm(ax)
        r = self._row(G.K_CIRCLE, link, name, radius)
        r[G.F_A:G.F_A + 3] = _v(centre)
        r[G.F_NU:G.F_NU + 3] = ax
        r[G.F_RIN] = rho
        r[G.F_BC:G.F_BC + 3] = _v(centre)
        r[G.F_BR] = rho + radius
        return self._add(r, name)

    def revolved(self, name, centre, axis, start, end, depth) -> int:
        """Passive band of a surface of revolution about the axis through ``centre`` along
        ``axis``: the generator from ``start`` = (a0, rho0) to ``end`` = (a1, rho1) in the
        meridian half-plane (a along the axis, rho the radius); the free side (where the other
        unit may be) is on the side of (rho1 - rho0, -(a1 - a0)) (docs/models/probe_cone.md §2)."""
        ax = _v(axis)
        ax = ax / np.linalg.norm(ax)
        (a0, r0), (a1, r1) = start, end
        if min(r0, r1) < 0.0:
            raise ValueError(f"revolved band {name!r}: negative radius")
        length = math.hypot(a1 - a0, r1 - r0)
        if length <= 0.0:
            raise ValueError(f"revolved band {name!r}: zero-length generator")
        r = self._row(G.K_REVOLVED, None, name)
        r[G.F_A:G.F_A + 3] = _v(centre)
        r[G.F_NU:G.F_NU + 3] = ax
        r[G.F_DEPTH] = depth
        r[G.F_G:G.F_G + 6] = [a0, r0, a1, r1, (r1 - r0) / length, -(a1 - a0) / length]
        ac = 0.5 * (a0 + a1)
        r[G.F_BC:G.F_BC + 3] = _v(centre) + ac * ax
        r[G.F_BR] = max(math.hypot(a0 - ac, r0), math.hypot(a1 - ac, r1)) + depth
        return self._add(r, name)

    # ------------------------------------------------------------------ materials, pairs
    def material(self, name, stiffness, damping, friction, max_penetration, slip_velocity=1e-3,
                 stiffness_slope=0.0, push_only=True) -> int:
        m = np.zeros(K.MW)
        m[K.M_K0] = stiffness
        m[K.M_K1] = stiffness_slope
        m[K.M_C] = damping
        m[K.M_MU] = friction
        m[K.M_VEPS] = slip_velocity
        m[K.M_MAXPEN] = max_penetration
        m[K.M_PUSH] = 1.0 if push_only else 0.0
        self.mat.append(m)
        self.mnames.append(name)
        return len(self.mat) - 1

    def pair(self, name, fa, fp, material, gate=-1) -> int:
        """Pair of active feature ``fa`` and passive feature ``fp``; the type follows from the
        kinds (a polygon/annulus on either side is the face)."""
        ka = int(self.feat[fa][G.F_KIND])
        kp = int(self.feat[fp][G.F_KIND])
        if self.feat[fa][G.F_SIDE] != 1.0 or self.feat[fp][G.F_SIDE] != 0.0:
            raise ValueError(f"pair {name!r}: first feature must be active, second passive")
        segs = (G.K_POINT, G.K_SEGMENT)
        if ka in segs and kp == G.K_POLYGON:
            t, owner = K.PT_SEG_FACE, 0
        elif kp in segs and ka == G.K_POLYGON:
            t, owner = K.PT_SEG_FACE, 1
        elif ka == G.K_SEGMENT and kp == G.K_SEGMENT:
            t, owner = K.PT_SEG_SEG, 0
        elif ka in segs and kp == G.K_ANNULUS:
            t, owner = K.PT_SEG_ANNULUS, 0
        elif kp in segs and ka == G.K_ANNULUS:
            t, owner = K.PT_SEG_ANNULUS, 1
        elif ka in segs and kp == G.K_REVOLVED:
            t, owner = K.PT_POINT_REVOLVED, 0
        elif ka in segs and kp == G.K_CIRCLE:
            t, owner = K.PT_POINT_CIRCLE, 0
        elif ka == G.K_CIRCLE and kp == G.K_ANNULUS:
            t, owner = K.PT_CIRCLE_ANNULUS, 0
        elif kp == G.K_CIRCLE and ka == G.K_ANNULUS:
            t, owner = K.PT_CIRCLE_ANNULUS, 1
        else:
            raise ValueError(f"pair {name!r}: no primitive for kinds {ka} vs {kp}")
        self.pairs.append([t, fa, fp, material, gate, owner])
        self.pnames.append(name)
        return len(self.pairs) - 1

    def latch(self, name, link, tip, direction, p_max, preload, rate, tip_radius, face, material,
              tol=1e-6, back=-1, sensor=False, rotational=False, pivot=(0, 0, 0), trigger=0.0,
              min_lever=None, max_iter=64, n_faces=1) -> int:
        """Zero-mass 1-DOF link ([Yaskevich 2018b, latches and sensors]). Translational: tip(p) =
        tip + p direction; rotational: tip rotated about ``direction`` through ``pivot`` by p (rad).
        ``face``: first of ``n_faces`` consecutive passive features that can deflect it; ``back``:
        first of the matching catches behind the strikers (latches), in the same order."""
        if n_faces > 62:
            raise ValueError(f"latch {name!r}: at most 62 candidate faces")
        for first in (face, back):
            if first >= 0 and any(self.feat[first + k][G.F_SIDE] != 0.0 for k in range(n_faces)):
                # the kernel reads these rows as fixed in P (kernel.evaluate transforms an active
                # row only for a pair that passes the broad phase)
                raise ValueError(f"latch {name!r}: its faces and catches must be passive features")
        r = np.zeros(K.LW)
        r[K.L_KIND] = 1.0 if sensor else 0.0
        r[K.L_DOF] = 1.0 if rotational else 0.0
        r[K.L_LINK] = link
        r[K.L_TIP:K.L_TIP + 3] = _v(tip)
        d = _v(direction)
        r[K.L_AX:K.L_AX + 3] = d / np.linalg.norm(d)
        r[K.L_PIV:K.L_PIV + 3] = _v(pivot)
        r[K.L_PMAX] = p_max
        r[K.L_TOL] = tol
        r[K.L_PRELOAD] = preload
        r[K.L_KSPR] = rate
        r[K.L_RTIP] = tip_radius
        r[K.L_TRIG] = trigger
        if min_lever is None:
            min_lever = 0.05 if not rotational else 0.05 * np.linalg.norm(_v(tip) - _v(pivot))
        r[K.L_MINLEV] = min_lever
        r[K.L_FACE] = face
        r[K.L_BACK] = back
        r[K.L_MAT] = material
        r[K.L_MAXIT] = max_iter
        r[K.L_NFACE] = n_faces
        self.lat.append(r)
        self.lnames.append(name)
        return len(self.lat) - 1

    def pack(self) -> Packed:
        def arr(rows, w, dtype=np.float64):
            a = np.zeros((len(rows), w), dtype=dtype)
            for i, r in enumerate(rows):
                a[i] = r
            a.setflags(write=False)
            return a
        return Packed(feat=arr(self.feat, G.FW), pairs=arr(self.pairs, K.PW, np.int64),
                      mat=arr(self.mat, K.MW), lat=arr(self.lat, K.LW), n_links=self.n_links,
                      max_contacts=self.max_contacts, feature_names=tuple(self.fnames),
                      pair_names=tuple(self.pnames), material_names=tuple(self.mnames),
                      latch_names=tuple(self.lnames))


# ---------------------------------------------------------------------- the preset geometry


def _ur(psi):
    return np.array([0.0, math.cos(psi), math.sin(psi)])


def _ut(psi):
    return np.array([0.0, -math.sin(psi), math.cos(psi)])


EX = np.array([1.0, 0.0, 0.0])


def petal_geometry(psi, sigma, pet) -> dict:
    """Mid-plane corners and normals of one flat trapezoidal guide petal at azimuth ``psi`` of
    a unit whose petals point along sigma*x (active +1, passive -1), leaning inward by the
    inclination (docs/models/contact.md §2.1)."""
    ur, ut = _ur(psi), _ut(psi)
    h = pet.height_m
    tb = math.tan(pet.inclination_rad)
    B = pet.base_radius_m * ur
    T = sigma * h * EX + (pet.base_radius_m - h * tb) * ur
    along = (T - B) / np.linalg.norm(T - B)
    nu_out = np.cross(ut, along)
    if nu_out @ ur < 0:
        nu_out = -nu_out
    ab, at = 0.5 * pet.base_width_m, 0.5 * pet.tip_width_m
    corners = np.array([B - ab * ut, B + ab * ut, T + at * ut, T - at * ut])
    return dict(B=B, T=T, along=along, nu_out=nu_out, ur=ur, ut=ut, corners=corners)


def _face_corners(C, offset, x_root):
    """Corners of one face of a petal plate: the mid-plane corners ``C`` moved by ``offset``
    (half the thickness along the face normal), then each root corner slid along its side edge
    to the plane x = ``x_root`` inside the ring the plate stands on (docs/models/contact.md
    §2.1). Offsetting alone would leave the face's root edge |offset_x| (1.25 mm for a 12 mm
    plate leaning 12 deg) in front of the ring face: a rim of the other unit passing under that
    edge (seated, tilted, pressed into the ring face) would meet the face only on backing off,
    already overlapping it (a force step of up to k_S times the rim rounding)."""
    F = C + offset
    for root, tip in ((0, 3), (1, 2)):
        d = F[tip] - F[root]
        F[root] = F[root] + ((x_root - F[root][0]) / d[0]) * d
    return F


def build_peripheral(itf) -> Packed:
    """Features, pairs, materials and latches of a peripheral androgynous interface (one
    buffer link: the active ring, link 0, frame E = ring frame with x towards the passive unit).
    :func:`sim_stand.contact.interfaces.build_interface` takes either kind."""
    b = Builder(n_links=1, max_contacts=itf.max_contacts)
    mats = {}
    for key, m in itf.materials.items():
        mats[key] = b.material(key, m.stiffness_n_per_m, m.damping_ns_per_m, m.friction,
                               m.max_penetration_m, m.slip_velocity_m_per_s,
                               m.stiffness_slope_n_per_m2, m.push_only)
    pet, ring = itf.petals, itf.ring
    n = pet.count
    step = 2 * math.pi / n
    half_t = 0.5 * pet.thickness_m
    units = {}
    for unit, sigma, psi0, link in (("a", 1.0, pet.active_azimuth_rad, 0),
                                    ("p", -1.0, pet.passive_azimuth_rad, None)):
        petals = []
        for i in range(n):
            psi = psi0 + i * step
            g = petal_geometry(psi, sigma, pet)
            tag = f"{unit}{round(math.degrees(psi)) % 360}"
            C = g["corners"]
            # the faces continue into the ring body through the ring face's depth window: a
            # rim that can still touch the ring face can also meet the petal's root
            x_root = -sigma * ring.face_depth_m
            out = b.polygon(f"{tag}.outer", _face_corners(C, half_t * g["nu_out"], x_root),
                            g["nu_out"], pet.thickness_m, link)
            inn = b.polygon(f"{tag}.inner", _face_corners(C, -half_t * g["nu_out"], x_root),
                            -g["nu_out"], pet.thickness_m, link)
            r_e = pet.edge_radius_m
            edges = [b.segment(f"{tag}.side-", C[0], C[3], r_e, link),
                     b.segment(f"{tag}.side+", C[1], C[2], r_e, link),
                     b.segment(f"{tag}.tip", C[3], C[2], r_e, link)]
            petals.append(dict(psi=psi, tag=tag, faces=(out, inn), outer=out, edges=edges, g=g))
        # inner rim of the ring face (passage edge), as a polyline of rounded segments
        rim = []
        m_rim = ring.rim_segments
        r_poly = ring.passage_radius_m / math.cos(math.pi / m_rim)  # chords touch the circle
        for s in range(m_rim):
            a0 = psi0 + s * 2 * math.pi / m_rim
            a1 = a0 + 2 * math.pi / m_rim
            rim.append((0.5 * (a0 + a1), b.segment(f"{unit}.rim{s}", r_poly * _ur(a0), r_poly * _ur(a1),
                                                   ring.rim_radius_m, link)))
        face = b.annulus(f"{unit}.ring", np.zeros(3), sigma * EX, ring.passage_radius_m,
                         ring.outer_radius_m, ring.face_depth_m, link)
        units[unit] = dict(petals=petals, rim=rim, face=face)

    def angdiff(a, c):
        return abs((a - c + math.pi) % (2 * math.pi) - math.pi)

    A, P = units["a"], units["p"]
    # neighbour_deg >= 180 pairs everything with everything: the pair set is then invariant
    # under any roll of the ring (exact 120 deg symmetry); smaller values prune pairs that
    # cannot meet near the nominal roll (faster, valid for small roll misalignment only)
    full = itf.neighbour_deg >= 180.0
    neigh = math.radians(itf.neighbour_deg)
    base_half = math.atan2(0.5 * pet.base_width_m, pet.base_radius_m)
    rim_half = math.pi if full else base_half + 2 * math.pi / ring.rim_segments
    for pa in A["petals"]:
        for pp in P["petals"]:
            if not full and angdiff(pa["psi"], pp["psi"]) > neigh:
                continue
            for e in pa["edges"]:
                for f in pp["faces"]:
                    b.pair(f"{b.fnames[e]}/{b.fnames[f]}", e, f, mats["petal_face"])
            for e in pp["edges"]:
                for f in pa["faces"]:
                    b.pair(f"{b.fnames[f]}/{b.fnames[e]}", f, e, mats["petal_face"])
            for ea in pa["edges"]:
                for ep in pp["edges"]:
                    b.pair(f"{b.fnames[ea]}/{b.fnames[ep]}", ea, ep, mats["petal_edge"])
    # rims against the other unit's petals (outer faces), petal tips against the ring faces
    for pp in P["petals"]:
        for mid, s in A["rim"]:
            if angdiff(mid, pp["psi"]) <= rim_half:
                b.pair(f"{b.fnames[s]}/{b.fnames[pp['outer']]}", s, pp["outer"], mats["rim_petal"])
        e = pp["edges"][2]
        b.pair(f"{b.fnames[A['face']]}/{b.fnames[e]}", A["face"], e, mats["ring_seat"])
    for pa in A["petals"]:
        for mid, s in P["rim"]:
            if angdiff(mid, pa["psi"]) <= rim_half:
                b.pair(f"{b.fnames[pa['outer']]}/{b.fnames[s]}", pa["outer"], s, mats["rim_petal"])
        e = pa["edges"][2]
        b.pair(f"{b.fnames[e]}/{b.fnames[P['face']]}", e, P["face"], mats["ring_seat"])
    # ring faces seating: points of the active face against the passive annulus
    for s in range(ring.seat_points):
        psi = pet.active_azimuth_rad + (s + 0.5) * 2 * math.pi / ring.seat_points
        pt = b.point(f"a.seat{s}", ring.seat_radius_m * _ur(psi), 0.0, 0)
        b.pair(f"a.seat{s}/p.ring", pt, P["face"], mats["ring_seat"])
    # strikers on the passive petals (ramps contiguous, then catches), latches on the ring
    lt, st = itf.latches, itf.strikers
    ramps, backs = [], []
    for i in range(lt.count):
        psi = lt.azimuth_rad + i * 2 * math.pi / lt.count
        g = petal_geometry(psi, -1.0, pet)
        ut, along, nu = g["ut"], g["along"], g["nu_out"]
        h = pet.height_m

        def surf(x):  # outer petal surface on the centre line at axial position x (<= 0)
            s_ = -x / h * np.linalg.norm(g["T"] - g["B"])
            return g["B"] + s_ * along + half_t * nu

        crest_base = surf(st.crest_x_m)
        crest = crest_base + st.height_m * nu
        foot = surf(st.crest_x_m - st.ramp_length_m)
        w = 0.5 * st.width_m
        ramp_n = np.cross(crest - foot, ut)
        if ramp_n @ EX > 0:
            ramp_n = -ramp_n
        ramps.append(([foot - w * ut, foot + w * ut, crest + w * ut, crest - w * ut], ramp_n))
        # the catch faces +x (towards the passive base): n_R = -x, the latch holds the unit
        backs.append(([crest_base - w * ut, crest_base + w * ut, crest + w * ut, crest - w * ut], -along))
    ramp_ids = [b.polygon(f"striker{i}.ramp", V, n, st.height_m) for i, (V, n) in enumerate(ramps)]
    back_ids = [b.polygon(f"striker{i}.back", V, n, st.ramp_length_m) for i, (V, n) in enumerate(backs)]
    for i in range(lt.count):
        psi = lt.azimuth_rad + i * 2 * math.pi / lt.count
        ur = _ur(psi)
        tip = lt.axial_m * EX + lt.free_radius_m * ur
        common = dict(tol=lt.tolerance, back=back_ids[0], n_faces=lt.count)
        li = b.latch(f"latch{i}", 0, tip, ur, lt.stroke, lt.preload, lt.rate, lt.tip_radius_m,
                     ramp_ids[0], mats["latch_striker"], **common)
        tip_f = b.point(f"latch{i}.tip", tip, lt.tip_radius_m, 0)
        for k in back_ids:
            b.pair(f"latch{i}.tip/{b.fnames[k]}", tip_f, k, mats["latch_striker"], gate=li)
    if itf.sensors is not None:
        se = itf.sensors
        for i in range(se.count):
            psi = se.azimuth_rad + i * 2 * math.pi / se.count
            # the ball's front (its outermost point along +x_E) stands protrusion_mm proud of
            # the ring face: its centre is one tip radius behind that
            tip = (se.protrusion_m - se.tip_radius_m) * EX + se.radius_m * _ur(psi)
            b.latch(f"sensor{i}", 0, tip, -EX, se.stroke_m, se.preload_n, se.rate_n_per_m,
                    se.tip_radius_m, P["face"], mats["ring_seat"], tol=lt.tolerance, sensor=True,
                    trigger=se.trigger_m)
    return b.pack()
