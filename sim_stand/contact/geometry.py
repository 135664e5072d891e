"""Contact primitives of the docking interface ([Yaskevich 2018b, contact forces]; detection itself
is not in that paper and is reconstructed here, see docs/models/contact.md §2).

Every primitive works on features already expressed in frame P and writes one contact into a
caller-provided row ``out`` (length >= 10)::

    out[0:3]  x_A  contact point on the active surface (P)
    out[3:6]  x_P  contact point on the passive surface (P)
    out[6:9]  n_R  unit reaction normal: direction of the normal force ON THE PASSIVE unit
    out[9]    Delta penetration (> 0 means overlap)

and returns True when the features overlap (Delta > 0), False otherwise (``out`` is then
undefined). Nothing here allocates.

Feature rows (``FW`` float64 per feature, see ``F_*`` offsets) hold points, segments (with a
rounding radius), one-sided planar convex polygons, one-sided annuli/planes and circles. A
one-sided face has an outward normal nu (pointing out of its body's material, towards the
body it can touch) and a depth window: points deeper than the window behind the face are
not in contact with it (they belong to another face of a thin plate).
"""
from __future__ import annotations

import math

from numba import njit
from numba.core.cpu import CPUTargetOptions

# Compile options of every function here and in kernel.py. ``_nrt=False`` compiles without
# numba's reference-counted runtime (a private but long-standing numba option, as in
# sim_stand/mechanism/kernels.py and rt/dynamics/spacecraft.py): every array argument and every
# feature-row view passed per primitive pair would otherwise cost an atomic incref/decref pair,
# most of the evaluation's run time. Nothing here or in kernel.py allocates (any allocation is
# then a compile error); callers compiled with the NRT (the emulator, the digital simulation,
# the tests) call these functions as usual. Results are bit-identical either way.
JIT = dict(cache=True, _nrt=False, error_model="numpy") if hasattr(CPUTargetOptions, "_nrt") else dict(cache=True, error_model="numpy")

# ----------------------------------------------------------------- feature row layout
FW = 48            # floats per feature row
F_KIND = 0         # K_* code
F_SIDE = 1         # 0 passive (fixed in P), 1 active (fixed in a buffer link frame E_j)
F_LINK = 2         # buffer-link index (active features)
F_RAD = 3          # rounding radius (points, segments, circles; 0 for faces)
F_DEPTH = 4        # depth window behind a one-sided face (m)
F_A = 5            # point / segment start / face origin / circle centre (3)
F_B = 8            # segment end (3)
F_NU = 11          # face outward normal / circle axis (3)
F_NV = 14          # polygon vertex count
F_RIN = 15         # annulus inner radius / circle radius
F_ROUT = 16        # annulus outer radius
F_BC = 17          # bounding-sphere centre (3)
F_BR = 20          # bounding-sphere radius (rounding included)
F_V = 21           # polygon vertices, counter-clockwise about nu, MAXV x 3
MAXV = 8
F_STALE = FW - 1   # P rows of active features (featP): 1 while only the centre is transformed

K_POINT = 0
K_SEGMENT = 1
K_POLYGON = 2
K_ANNULUS = 3      # plane bounded by r_in <= radius <= r_out about F_A (r_out = inf: plane)
K_CIRCLE = 4
K_REVOLVED = 6     # band of a surface of revolution (cone frustum, cylinder, flat ring) about F_A, F_NU
# generator of a K_REVOLVED band in its meridian half-plane (a = axial along nu from F_A, rho =
# radius): start (a0, rho0), end (a1, rho1) and the unit normal towards the free side,
# (n_a, n_rho) = (rho1 - rho0, -(a1 - a0)) / length, stored from F_V on
F_G = F_V
G_A0, G_R0, G_A1, G_R1, G_NA, G_NR = range(6)

EPS = 1e-12


@njit(inline="always", **JIT)
def _any_perpendicular(ax, ay, az):
    """A unit vector perpendicular to the unit vector a: the one built from a's smallest
    component."""
    if abs(ax) <= abs(ay) and abs(ax) <= abs(az):
        ux, uy, uz = 0.0, -az, ay
    elif abs(ay) <= abs(az):
        ux, uy, uz = az, 0.0, -ax
    else:
        ux, uy, uz = -ay, ax, 0.0
    un = math.sqrt(ux * ux + uy * uy + uz * uz)
    return ux / un, uy / un, uz / un


@njit(inline="always", **JIT)
def _dot(a, i, b, j):
    return a[i] * b[j] + a[i + 1] * b[j + 1] + a[i + 2] * b[j + 2]


@njit(inline="always", **JIT)
def edge_plane(f, i):
    """Edge i of the polygon row ``f``: (offset of its first vertex in the row, inward edge
    normal m = nu x e), e the edge from vertex i to i+1 (vertices counter-clockwise about nu);
    the prism of the face is the intersection of (p - v_i) . m_i >= 0.

    Parameters
    ----------
    f : float64[FW]
        Polygon feature row (``F_*`` layout): vertices from ``F_V``, count ``F_NV``, outward
        normal ``F_NU``.
    i : int
        Edge index, 0 <= i < ``f[F_NV]``.
    """
    k = F_V + 3 * i
    kn = k + 3 if i + 1 < int(f[F_NV]) else F_V
    ex = f[kn] - f[k]
    ey = f[kn + 1] - f[k + 1]
    ez = f[kn + 2] - f[k + 2]
    return (k, f[F_NU + 1] * ez - f[F_NU + 2] * ey, f[F_NU + 2] * ex - f[F_NU] * ez,
            f[F_NU] * ey - f[F_NU + 1] * ex)


@njit(inline="always", **JIT)
def _clip_halfspace(g0, gd, t0, t1):
    """One clipping step of a segment p(t), t in [t0, t1], against a half-space g(p) >= 0 (the
    Cyrus–Beck step): ``g0`` is g at t = 0 and ``gd`` its rate along the segment, so the
    segment is inside for g0 + t gd >= 0. Returns ``(inside, t0, t1)``: the interval narrowed
    to that part (which may leave it empty, t0 > t1), or inside = False when the segment runs
    parallel to the plane (|gd| < EPS) outside it."""
    if abs(gd) < EPS:
        if g0 < 0.0:
            return False, t0, t1
    elif gd > 0.0:
        t = -g0 / gd
        if t > t0:
            t0 = t
    else:
        t = -g0 / gd
        if t < t1:
            t1 = t
    return True, t0, t1


@njit(**JIT)
def clip_to_face(f, ax, ay, az, bx, by, bz, tw):
    """Clip the segment a + t (b - a), t in [0, 1], to the prism of a one-sided face row ``f``
    (polygon: the edge half-spaces; annulus: nothing radial here) and to the slab
    -depth <= nu.(p - o) (the depth window). Writes [t0, t1] into ``tw`` and returns False
    if nothing is left.

    Parameters
    ----------
    f : float64[FW]
        One-sided face row (polygon or annulus/plane) in P, ``F_*`` layout.
    ax, ay, az : float
        The segment's start a, P components (m).
    bx, by, bz : float
        The segment's end b, P components (m).
    tw : float64[>= 2]
        Output: the clipped parameter interval [t0, t1] (written only when something is left).
    """
    t0 = 0.0
    t1 = 1.0
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    nx = f[F_NU]
    ny = f[F_NU + 1]
    nz = f[F_NU + 2]
    # depth window: nu.(p - o) + depth >= 0
    g0 = (ax - f[F_A]) * nx + (ay - f[F_A + 1]) * ny + (az - f[F_A + 2]) * nz + f[F_DEPTH]
    gd = dx * nx + dy * ny + dz * nz
    inside, t0, t1 = _clip_halfspace(g0, gd, t0, t1)
    if not inside:
        return False
    if f[F_KIND] == K_POLYGON:
        for i in range(int(f[F_NV])):
            k, mx, my, mz = edge_plane(f, i)
            g0 = (ax - f[k]) * mx + (ay - f[k + 1]) * my + (az - f[k + 2]) * mz
            gd = dx * mx + dy * my + dz * mz
            inside, t0, t1 = _clip_halfspace(g0, gd, t0, t1)
            if not inside or t0 > t1:
                return False
    if t0 > t1:
        return False
    tw[0] = t0
    tw[1] = t1
    return True


@njit(**JIT)
def seg_face(s, f, face_is_active, tw, out):
    """Segment or point row ``s`` (rounding radius r) against the one-sided polygon face ``f``.

    The deepest point of the segment part inside the face prism and depth window is an end of
    that part (the signed distance is linear along the segment), so the contact is exact for
    flat faces. ``face_is_active`` says which body owns the face: n_R = -nu for a passive face
    (the segment on the active body pushes into it), n_R = +nu for an active face.

    Parameters
    ----------
    s : float64[FW]
        Point or segment feature row in P (``F_*`` layout), rounding radius ``F_RAD`` (m).
    f : float64[FW]
        One-sided polygon face row in P.
    face_is_active : bool
        True when the face belongs to the active body (n_R = +nu), False for a passive face
        (n_R = -nu).
    tw : float64[>= 2]
        Workspace: the clip interval of :func:`clip_to_face`.
    out : float64[>= 10]
        Output: the contact's row (module docstring); undefined when there is no overlap.
    """
    ax = s[F_A]
    ay = s[F_A + 1]
    az = s[F_A + 2]
    if s[F_KIND] == K_SEGMENT:
        bx = s[F_B]
        by = s[F_B + 1]
        bz = s[F_B + 2]
    else:
        bx = ax
        by = ay
        bz = az
    nx = f[F_NU]
    ny = f[F_NU + 1]
    nz = f[F_NU + 2]
    # early out: both ends in front of the face by more than the rounding, or both behind the
    # depth window (cheaper than clipping against the polygon's edges)
    r = s[F_RAD]
    da = (ax - f[F_A]) * nx + (ay - f[F_A + 1]) * ny + (az - f[F_A + 2]) * nz
    db = (bx - f[F_A]) * nx + (by - f[F_A + 1]) * ny + (bz - f[F_A + 2]) * nz
    if (da >= r and db >= r) or (da < -f[F_DEPTH] and db < -f[F_DEPTH]):
        return False
    if not clip_to_face(f, ax, ay, az, bx, by, bz, tw):
        return False
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    best_d = 1e300
    px = 0.0
    py = 0.0
    pz = 0.0
    for e in range(2):
        t = tw[e]
        qx = ax + t * dx
        qy = ay + t * dy
        qz = az + t * dz
        d = (qx - f[F_A]) * nx + (qy - f[F_A + 1]) * ny + (qz - f[F_A + 2]) * nz
        if d < best_d:
            best_d = d
            px = qx
            py = qy
            pz = qz
    return _face_contact(px, py, pz, best_d, s[F_RAD], nx, ny, nz, face_is_active, out)


@njit(inline="always", **JIT)
def _face_contact(px, py, pz, d, r, nx, ny, nz, face_is_active, out):
    pen = r - d
    if pen <= 0.0:
        return False
    # point on the face and on the rounded feature's surface
    fx = px - d * nx
    fy = py - d * ny
    fz = pz - d * nz
    sx = px - r * nx
    sy = py - r * ny
    sz = pz - r * nz
    if face_is_active:
        out[0] = fx
        out[1] = fy
        out[2] = fz
        out[3] = sx
        out[4] = sy
        out[5] = sz
        out[6] = nx
        out[7] = ny
        out[8] = nz
    else:
        out[0] = sx
        out[1] = sy
        out[2] = sz
        out[3] = fx
        out[4] = fy
        out[5] = fz
        out[6] = -nx
        out[7] = -ny
        out[8] = -nz
    out[9] = pen
    return True


@njit(**JIT)
def seg_annulus(s, f, face_is_active, out):
    """Point or segment row ``s`` (ends only) against the one-sided annulus / plane ``f``:
    the deepest end whose foot lies within r_in <= radius <= r_out and inside the depth
    window.

    Parameters
    ----------
    s : float64[FW]
        Point or segment feature row in P (``F_*`` layout); its ends and rounding radius are used.
    f : float64[FW]
        One-sided annulus / plane row in P: origin ``F_A``, normal ``F_NU``, radii ``F_RIN``,
        ``F_ROUT`` (m), depth window ``F_DEPTH`` (m).
    face_is_active : bool
        True for a face of the active body, as for :func:`seg_face`.
    out : float64[>= 10]
        Output: the contact's row (module docstring); undefined when there is no overlap.
    """
    nx = f[F_NU]
    ny = f[F_NU + 1]
    nz = f[F_NU + 2]
    nend = 2 if s[F_KIND] == K_SEGMENT else 1
    best_d = 1e300
    px = 0.0
    py = 0.0
    pz = 0.0
    found = False
    for e in range(nend):
        k = F_A if e == 0 else F_B
        rx = s[k] - f[F_A]
        ry = s[k + 1] - f[F_A + 1]
        rz = s[k + 2] - f[F_A + 2]
        d = rx * nx + ry * ny + rz * nz
        if d < -f[F_DEPTH]:
            continue
        wx = rx - d * nx
        wy = ry - d * ny
        wz = rz - d * nz
        rad = math.sqrt(wx * wx + wy * wy + wz * wz)
        if rad < f[F_RIN] or rad > f[F_ROUT]:
            continue
        if d < best_d:
            best_d = d
            px = s[k]
            py = s[k + 1]
            pz = s[k + 2]
            found = True
    if not found:
        return False
    return _face_contact(px, py, pz, best_d, s[F_RAD], nx, ny, nz, face_is_active, out)


@njit(**JIT)
def circle_annulus(c, f, face_is_active, out):
    """Circle row ``c`` (centre, unit axis, radius rho, rounding r) against the one-sided
    annulus / plane ``f``: the circle point deepest along -nu, i.e. c - rho w/|w| with
    w = nu - (nu.a) a. If the circle is parallel to the plane every point is equally deep
    and the point on the circle's first in-plane axis is taken; use several points for
    seating of parallel faces (docs/models/contact.md §2.3).

    Parameters
    ----------
    c : float64[FW]
        Circle feature row in P (``F_*`` layout): centre ``F_A`` (m), unit axis ``F_NU``,
        radius ``F_RIN`` (m), rounding ``F_RAD`` (m).
    f : float64[FW]
        One-sided annulus / plane row in P.
    face_is_active : bool
        True for a face of the active body, as for :func:`seg_face`.
    out : float64[>= 10]
        Output: the contact's row (module docstring); undefined when there is no overlap.
    """
    nx = f[F_NU]
    ny = f[F_NU + 1]
    nz = f[F_NU + 2]
    axx = c[F_NU]
    axy = c[F_NU + 1]
    axz = c[F_NU + 2]
    na = nx * axx + ny * axy + nz * axz
    wx = nx - na * axx
    wy = ny - na * axy
    wz = nz - na * axz
    wn = math.sqrt(wx * wx + wy * wy + wz * wz)
    rho = c[F_RIN]
    if wn < 1e-9:
        # any in-plane unit vector of the circle
        ux, uy, uz = _any_perpendicular(axx, axy, axz)
        px = c[F_A] + rho * ux
        py = c[F_A + 1] + rho * uy
        pz = c[F_A + 2] + rho * uz
    else:
        px = c[F_A] - rho * wx / wn
        py = c[F_A + 1] - rho * wy / wn
        pz = c[F_A + 2] - rho * wz / wn
    rx = px - f[F_A]
    ry = py - f[F_A + 1]
    rz = pz - f[F_A + 2]
    d = rx * nx + ry * ny + rz * nz
    if d < -f[F_DEPTH]:
        return False
    qx = rx - d * nx
    qy = ry - d * ny
    qz = rz - d * nz
    rad = math.sqrt(qx * qx + qy * qy + qz * qz)
    if rad < f[F_RIN] or rad > f[F_ROUT]:
        return False
    return _face_contact(px, py, pz, d, c[F_RAD], nx, ny, nz, face_is_active, out)


@njit(**JIT)
def closest_seg_seg(a0x, a0y, a0z, a1x, a1y, a1z, b0x, b0y, b0z, b1x, b1y, b1z, tw):
    """Parameters (s, t) in [0, 1]^2 of the closest points of segments a and b (Ericson,
    Real-Time Collision Detection §5.1.9), written into tw[0], tw[1].

    Parameters
    ----------
    a0x, a0y, a0z, a1x, a1y, a1z : float
        Start and end of segment a (m, any one frame).
    b0x, b0y, b0z, b1x, b1y, b1z : float
        Start and end of segment b (m, the same frame).
    tw : float64[>= 2]
        Output: s on a, t on b.
    """
    d1x = a1x - a0x
    d1y = a1y - a0y
    d1z = a1z - a0z
    d2x = b1x - b0x
    d2y = b1y - b0y
    d2z = b1z - b0z
    rx = a0x - b0x
    ry = a0y - b0y
    rz = a0z - b0z
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    s = 0.0
    t = 0.0
    EPS = 1e-24  # squared length: segments shorter than 1e-12 m are points
    if a <= EPS and e <= EPS:
        s = 0.0
        t = 0.0
    elif a <= EPS:
        s = 0.0
        t = min(max(f / e, 0.0), 1.0)
    else:
        c = d1x * rx + d1y * ry + d1z * rz
        if e <= EPS:
            t = 0.0
            s = min(max(-c / a, 0.0), 1.0)
        else:
            b = d1x * d2x + d1y * d2y + d1z * d2z
            den = a * e - b * b
            if den > 1e-12 * a * e:
                s = min(max((b * f - c * e) / den, 0.0), 1.0)
            else:
                s = 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = min(max(-c / a, 0.0), 1.0)
            elif t > 1.0:
                t = 1.0
                s = min(max((b - c) / a, 0.0), 1.0)
    tw[0] = s
    tw[1] = t


@njit(**JIT)
def seg_seg(sa, sp, tw, out):
    """Rounded segment ``sa`` (active) against rounded segment ``sp`` (passive): the closest
    points, Delta = r_a + r_p - distance, n_R from the active axis towards the passive one.
    If the axes intersect (distance 0) the normal is their common perpendicular, oriented
    along +x of P (the approach direction); parallel intersecting axes use +x.

    Parameters
    ----------
    sa : float64[FW]
        Active segment row in P (``F_*`` layout), rounding radius ``F_RAD`` (m).
    sp : float64[FW]
        Passive segment row in P, rounding radius ``F_RAD`` (m).
    tw : float64[>= 2]
        Workspace: the closest-point parameters of :func:`closest_seg_seg`.
    out : float64[>= 10]
        Output: the contact's row (module docstring); undefined when there is no overlap.
    """
    closest_seg_seg(sa[F_A], sa[F_A + 1], sa[F_A + 2], sa[F_B], sa[F_B + 1], sa[F_B + 2],
                    sp[F_A], sp[F_A + 1], sp[F_A + 2], sp[F_B], sp[F_B + 1], sp[F_B + 2], tw)
    s = tw[0]
    t = tw[1]
    qax = sa[F_A] + s * (sa[F_B] - sa[F_A])
    qay = sa[F_A + 1] + s * (sa[F_B + 1] - sa[F_A + 1])
    qaz = sa[F_A + 2] + s * (sa[F_B + 2] - sa[F_A + 2])
    qpx = sp[F_A] + t * (sp[F_B] - sp[F_A])
    qpy = sp[F_A + 1] + t * (sp[F_B + 1] - sp[F_A + 1])
    qpz = sp[F_A + 2] + t * (sp[F_B + 2] - sp[F_A + 2])
    dx = qpx - qax
    dy = qpy - qay
    dz = qpz - qaz
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    ra = sa[F_RAD]
    rp = sp[F_RAD]
    pen = ra + rp - dist
    if pen <= 0.0:
        return False
    if dist > 1e-12:
        nx = dx / dist
        ny = dy / dist
        nz = dz / dist
    else:
        ux = sa[F_B] - sa[F_A]
        uy = sa[F_B + 1] - sa[F_A + 1]
        uz = sa[F_B + 2] - sa[F_A + 2]
        vx = sp[F_B] - sp[F_A]
        vy = sp[F_B + 1] - sp[F_A + 1]
        vz = sp[F_B + 2] - sp[F_A + 2]
        nx = uy * vz - uz * vy
        ny = uz * vx - ux * vz
        nz = ux * vy - uy * vx
        nn = math.sqrt(nx * nx + ny * ny + nz * nz)
        if nn < 1e-12:
            nx, ny, nz, nn = 1.0, 0.0, 0.0, 1.0
        if nx < 0.0:
            nn = -nn
        nx /= nn
        ny /= nn
        nz /= nn
    out[0] = qax + ra * nx
    out[1] = qay + ra * ny
    out[2] = qaz + ra * nz
    out[3] = qpx - rp * nx
    out[4] = qpy - rp * ny
    out[5] = qpz - rp * nz
    out[6] = nx
    out[7] = ny
    out[8] = nz
    out[9] = pen
    return True


@njit(inline="always", **JIT)
def _in_polygon_prism(f, px, py, pz):
    """Whether the point lies in the prism of the polygon row ``f`` (all inward edge half-spaces
    m_i = nu x e_i). The same arithmetic and the same decision as :func:`clip_to_face` for a
    zero-length segment, where every edge's gd is exactly 0, without the clip parameters."""
    for i in range(int(f[F_NV])):
        k, mx, my, mz = edge_plane(f, i)
        if (px - f[k]) * mx + (py - f[k + 1]) * my + (pz - f[k + 2]) * mz < 0.0:
            return False
    return True


@njit(inline="always", **JIT)
def _along_normal(px, py, pz, f):
    """The point relative to row ``f``'s origin F_A, and its distance along F_NU (the face's
    outward normal, or the axis): (r_x, r_y, r_z, d, n_x, n_y, n_z)."""
    nx = f[F_NU]
    ny = f[F_NU + 1]
    nz = f[F_NU + 2]
    rx = px - f[F_A]
    ry = py - f[F_A + 1]
    rz = pz - f[F_A + 2]
    return rx, ry, rz, rx * nx + ry * ny + rz * nz, nx, ny, nz


@njit(inline="always", **JIT)
def _meridian(px, py, pz, f):
    """Axial coordinate a, radius rho and the radial unit vector of a point about the axis
    (F_A, F_NU) of row ``f``; on the axis the radial direction is any perpendicular."""
    rx, ry, rz, a, nx, ny, nz = _along_normal(px, py, pz, f)
    wx = rx - a * nx
    wy = ry - a * ny
    wz = rz - a * nz
    rho = math.sqrt(wx * wx + wy * wy + wz * wz)
    if rho > 1e-12:
        return a, rho, wx / rho, wy / rho, wz / rho
    ux, uy, uz = _any_perpendicular(nx, ny, nz)
    return a, rho, ux, uy, uz


@njit(inline="always", **JIT)
def revolved_distance(px, py, pz, f):
    """Signed distance of a point from the revolved band ``f`` towards its free side, and the
    free-side unit normal there (P): (d, N_x, N_y, N_z). d = -1e300 when the point's foot is off
    the generator segment or the point lies deeper than the depth window behind it. For a
    surface of revolution the nearest point lies in the meridian plane through the point, so
    the 2-D distance to the generator is exact (docs/models/probe_cone.md §2).

    Parameters
    ----------
    px, py, pz : float
        The point, P components (m).
    f : float64[FW]
        Revolved-band row in P (``K_REVOLVED``): axis origin ``F_A``, unit axis ``F_NU``,
        generator from ``F_G`` (``G_*`` offsets), depth window ``F_DEPTH`` (m).
    """
    a, rho, ux, uy, uz = _meridian(px, py, pz, f)
    a0 = f[F_G + G_A0]
    r0 = f[F_G + G_R0]
    da = f[F_G + G_A1] - a0
    dr = f[F_G + G_R1] - r0
    ll = da * da + dr * dr
    t = ((a - a0) * da + (rho - r0) * dr) / ll
    na = f[F_G + G_NA]
    nr = f[F_G + G_NR]
    if t < 0.0 or t > 1.0:
        return -1e300, na, 0.0, 0.0
    d = (a - a0) * na + (rho - r0) * nr
    if d < -f[F_DEPTH]:
        return -1e300, na, 0.0, 0.0
    return d, na * f[F_NU] + nr * ux, na * f[F_NU + 1] + nr * uy, na * f[F_NU + 2] + nr * uz


@njit(inline="always", **JIT)
def circle_distance(px, py, pz, f):
    """Distance of a point from the circle row ``f`` (centre F_A, axis F_NU, radius F_RIN) minus
    its rounding F_RAD, and the unit direction from the circle to the point (P).

    Parameters
    ----------
    px, py, pz : float
        The point, P components (m).
    f : float64[FW]
        Circle row in P (``K_CIRCLE``): centre ``F_A``, unit axis ``F_NU``, radius ``F_RIN``,
        rounding ``F_RAD`` (m).
    """
    a, rho, ux, uy, uz = _meridian(px, py, pz, f)
    qa = a
    qr = rho - f[F_RIN]
    dist = math.sqrt(qa * qa + qr * qr)
    if dist < 1e-15:
        return -f[F_RAD], f[F_NU], f[F_NU + 1], f[F_NU + 2]
    na = qa / dist
    nr = qr / dist
    return (dist - f[F_RAD], na * f[F_NU] + nr * ux, na * f[F_NU + 1] + nr * uy,
            na * f[F_NU + 2] + nr * uz)


@njit(**JIT)
def point_surface(s, f, out):
    """Rounded point (or segment ends) ``s`` against a revolved band (one-sided, free side along
    its normal) or a rounded circle (a torus: an edge of the passive unit) ``f``: the deepest
    end, Delta = r_s - (signed distance to the surface), n_R = -N (the force on the passive
    surface).

    Parameters
    ----------
    s : float64[FW]
        Rounded point or segment row in P (active side; ends and rounding radius ``F_RAD`` used).
    f : float64[FW]
        Passive revolved band (``K_REVOLVED``) or rounded circle (``K_CIRCLE``) row in P.
    out : float64[>= 10]
        Output: the contact's row (module docstring); undefined when there is no overlap.
    """
    nend = 2 if s[F_KIND] == K_SEGMENT else 1
    rev = f[F_KIND] == K_REVOLVED
    best = 1e300
    bx = by = bz = 0.0
    nx = ny = nz = 0.0
    for e in range(nend):
        k = F_A if e == 0 else F_B
        if rev:
            d, mx, my, mz = revolved_distance(s[k], s[k + 1], s[k + 2], f)
        else:
            d, mx, my, mz = circle_distance(s[k], s[k + 1], s[k + 2], f)
        if d > -1e300 and d < best:
            best = d
            bx, by, bz = s[k], s[k + 1], s[k + 2]
            nx, ny, nz = mx, my, mz
    if best == 1e300:
        return False
    return _face_contact(bx, by, bz, best, s[F_RAD], nx, ny, nz, False, out)


@njit(**JIT)
def point_surface_depth(px, py, pz, r, f):
    """Penetration of a rounded point into a passive face of any kind (polygon, annulus,
    revolved band, rounded circle) and the face's free-side unit normal at the contact (P):
    (Delta, N_x, N_y, N_z); Delta = -1e300 where the face does not apply. Used by the latch
    bisection ([Yaskevich 2018b, latches and sensors]).

    Parameters
    ----------
    px, py, pz : float
        The point, P components (m).
    r : float
        Rounding radius of the point (m).
    f : float64[FW]
        Passive face row in P of any kind (``F_*`` layout).
    """
    k = f[F_KIND]
    if k == K_REVOLVED:
        d, nx, ny, nz = revolved_distance(px, py, pz, f)
        if d == -1e300:
            return -1e300, nx, ny, nz
        return r - d, nx, ny, nz
    if k == K_CIRCLE:
        d, nx, ny, nz = circle_distance(px, py, pz, f)
        return r - d, nx, ny, nz
    return point_face_depth(px, py, pz, r, f), f[F_NU], f[F_NU + 1], f[F_NU + 2]


@njit(**JIT)
def point_face_depth(px, py, pz, r, f):
    """Penetration of a rounded point into a one-sided face row (polygon or annulus), or
    -1e300 if the point is outside the face's prism / annulus or depth window. Used by the
    latch bisection ([Yaskevich 2018b, latches and sensors]), where only Delta(p) is needed.

    Parameters
    ----------
    px, py, pz : float
        The point, P components (m), as for :func:`point_surface_depth`.
    r : float
        Rounding radius of the point (m).
    f : float64[FW]
        One-sided polygon or annulus / plane row in P (``F_*`` layout).
    """
    rx, ry, rz, d, nx, ny, nz = _along_normal(px, py, pz, f)
    # depth window; clip_to_face's own window test (d + depth < 0) can then never fire: d >=
    # -depth makes the exact sum >= 0, and rounding keeps it >= 0
    if d < -f[F_DEPTH]:
        return -1e300
    if f[F_KIND] == K_POLYGON:
        if not _in_polygon_prism(f, px, py, pz):
            return -1e300
    else:
        wx = rx - d * nx
        wy = ry - d * ny
        wz = rz - d * nz
        rad = math.sqrt(wx * wx + wy * wy + wz * wz)
        if rad < f[F_RIN] or rad > f[F_ROUT]:
            return -1e300
    return r - d
