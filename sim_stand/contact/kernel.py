"""The compiled contact evaluation of the docking interface ([Yaskevich 2018b, contact forces,
latches and sensors]).

One call, :func:`evaluate`, takes the pose and twist of every active buffer link in P and the
latch states, and writes every contact, the wrench on the passive unit and on each link, the
new latch/sensor states, events and a status. All arrays are preallocated by the caller
(:class:`sim_stand.contact.model.ContactModel` does it); nothing is allocated here.

Frames and signs (docs/models/contact.md §3):

* everything is in P (passive docking-unit frame, x along the approach, the active unit comes
  from -x);
* n_R is the direction of the normal force on the passive unit (x component > 0 for the
  approach-facing guide surfaces); the active body receives the opposite force;
* both forces of a contact act at one point, the midpoint x_C of x_A and x_P, so action and
  reaction balance exactly ([Yaskevich 2018b] applies them at x_A and x_P; they differ by Delta
  n_R).

Array layouts
-------------
``link_pose[j]``  = [p_PE (3, P), q_PE (4, Hamilton scalar-first, E -> P)]
``link_twist[j]`` = [v (3), omega (3)]: absolute velocity of E_j's origin and angular velocity,
                    P components
``passive_twist`` = [v_P (3), omega_P (3)]: absolute velocity of P's origin and angular velocity
                    of the passive unit, P components (zeros on the stand: the passive unit is
                    fixed; pass relative twists in ``link_twist`` then)
``rec[k]``        = contact record, offsets ``C_*`` below
``wrench_P``      = [f; m] on the passive unit, P components, m about P's origin
``wrench_links[j]``= [f; m] on buffer link j, P components, m about E_j's origin
                    (:func:`link_wrench_in_link_frame` gives E_j components)
``state`` (in/out) = [contact_seen, captured, latch/sensor state per latch ...]
``info``           = [status bits, offending pair, contacts found, event bits]
``info_f``         = [offending penetration (m), its limit (m)]

The kernels' other arguments, the same name the same array throughout:

``feat``           = the feature rows (``sim_stand.contact.geometry`` ``F_*`` layout): passive
                    ones in P, active ones in their buffer link's frame E_j; read only
``featP``          = the feature rows in P: passive rows as in ``feat``, active rows rewritten
                    each evaluation (:func:`transform_centres`, :func:`transform_row`)
``Rl[j]``          = link j's DCM R_PE (E_j components -> P components), written by
                    :func:`transform_centres`, read only after it
``lat``, ``l``     = the latch and sensor rows (``L_*`` layout below), read only; the row of one
                    latch (or sensor)
``p``              = a latch's deflection: m for a translational latch, rad for a rotational one
``tmp``            = a latch's workspace: tip centre [0:3] (m, P), dr/dp [3:6] (P), deepest face
                    [6], its normal [7:10]
``aff``            = the affine rows of :func:`latch_affine` (``A_*`` offsets), one per candidate
"""
from __future__ import annotations

import math

from numba import njit

from rt.dynamics import spatial
from sim_stand.contact.geometry import (
    F_A, F_B, F_BC, F_BR, F_DEPTH, F_KIND, F_LINK, F_NU, F_NV, F_SIDE, F_STALE, F_V, JIT, K_POLYGON, MAXV,
    circle_annulus, edge_plane, point_face_depth, point_surface, point_surface_depth,
    seg_annulus, seg_face, seg_seg,
)

# ---------------------------------------------------------------- pair table (int64)
PW = 6
P_TYPE = 0
P_FA = 1           # feature on the active side
P_FP = 2           # feature on the passive side
P_MAT = 3
P_GATE = 4         # -1, or a latch index: pair is live only while that latch is ENGAGED
P_OWNER = 5        # which feature is the face: 0 passive face (fp), 1 active face (fa)

PT_SEG_FACE = 0    # point/segment vs planar convex polygon
PT_SEG_SEG = 1     # rounded segment vs rounded segment (petal edges)
PT_SEG_ANNULUS = 2 # point/segment ends vs annulus or plane (ring faces seating)
PT_CIRCLE_ANNULUS = 3
PT_POINT_REVOLVED = 4  # rounded point / segment ends vs a revolved band (probe head vs cone, socket)
PT_POINT_CIRCLE = 5    # rounded point / segment ends vs a rounded circle (probe head vs socket edge)

# ---------------------------------------------------------------- materials (float64)
MW = 8
M_K0 = 0           # stiffness at zero penetration, N/m
M_K1 = 1           # stiffness slope, N/m^2: k_S(D) = k0 + k1 D
M_C = 2            # damping, N s/m
M_MU = 3           # friction coefficient k_Fr
M_VEPS = 4         # regularisation slip speed, m/s
M_MAXPEN = 5       # maximum allowed penetration, m
M_PUSH = 6         # 1: clip the normal force at zero (push only); 0: validation only

# ---------------------------------------------------------------- latches (float64)
LW = 24
L_KIND = 0         # 0 latch, 1 sensor
L_DOF = 1          # 0 translational (P), 1 rotational (R)
L_LINK = 2
L_TIP = 3          # tip centre at p = 0, E frame (3)
L_AX = 6           # P: unit deflection direction; R: unit rotation axis (E, 3)
L_PIV = 9          # R: a point on the axis (E, 3)
L_PMAX = 12        # full deflection (m or rad); the free position is p = 0
L_TOL = 13         # bisection tolerance on p
L_PRELOAD = 14     # spring force (N) or moment (N m) at p = 0
L_KSPR = 15        # spring rate, N/m or N m/rad
L_RTIP = 16        # tip rounding radius, m
L_TRIG = 17        # sensor trigger deflection
L_MINLEV = 18      # lower bound of |n_R . dr/dp| (self-locking guard)
L_FACE = 19        # first of the passive faces that can deflect the link (polygon or annulus)
L_BACK = 20        # first of the matching back faces (catches) of a latch, -1 for none
L_NFACE = 23       # number of candidate faces (rows L_FACE.. and L_BACK.. are contiguous)
L_MAT = 21         # material of the bottomed-out (class-1) contact
L_MAXIT = 22       # hard cap on bisection iterations

LAT_FREE = 0
LAT_DEFLECTED = 1
LAT_BOTTOMED = 2
LAT_ENGAGED = 3
# held open by the mechanism's release output (the control unit's UNDOCK; sim_stand.world
# release_mechanism): the latch is drawn back, touches nothing and never engages, the gated
# tip/catch pairs are off -- the units are free to part -- until the output is cleared (then FREE)
LAT_RELEASED = 4
SEN_IDLE = 0
SEN_TRIGGERED = 1

S_SEEN = 0
S_CAPTURED = 1
S_LATCH0 = 2

# ---------------------------------------------------------------- contact records
CW = 28
C_PAIR = 0         # pair index, or n_pairs + latch index for class-2 contacts
C_LINK = 1
C_CLASS = 2        # 1 or 2
C_XA = 3           # contact point on the active surface (P)
C_XP = 6           # contact point on the passive surface (P)
C_N = 9            # n_R (P)
C_PEN = 12         # Delta
C_RATE = 13        # Delta dot
C_VT = 14          # tangential velocity of active rel. passive (P)
C_FN = 17          # |f_R| normal force (signed if push-only is off)
C_FT = 18          # |f_Fr| friction force
C_F = 19           # force on the passive unit (P) = n_R |f_R| + friction
C_XC = 22          # application point of both forces (P)
C_ITER = 25        # bisection iterations (class 2)
C_P = 26           # latch deflection p (class 2)

# ---------------------------------------------------------------- status and events
ST_OK = 0
ST_PENETRATION = 1 # a penetration exceeded its limit
ST_OVERFLOW = 2    # more contacts than record rows (wrenches still complete)

EV_FIRST_CONTACT = 1
EV_LATCH_DEFLECTED = 2
EV_LATCH_ENGAGED = 4
EV_SOFT_CAPTURE = 8
EV_SENSOR = 16

# affine form of a translational latch's depth (one row of AW floats per candidate striker,
# see latch_affine): distances to the striker's planes and prism edges are affine in p
AFF_FACES = 62     # = the most candidate faces a latch may have (Builder.latch)
A_K = 0            # candidate index k
A_D1 = 1           # d1(0): tip centre in front of the ramp / face plane
A_S1 = 2           # d d1 / dp
A_D2 = 3           # d2(0): in front of the catch plane
A_S2 = 4           # d d2 / dp
A_C12 = 5          # n_ramp . n_catch
A_NE = 6           # number of prism edges kept
A_E = 7            # (g_i(0), d g_i / dp) per kept edge
AW = A_E + 2 * MAXV

# scratch layout (float64, length >= SCRATCH)
_OUT = 0           # 10 floats: primitive result
_TW = 12           # 2 floats: clip / closest parameters
_TMP = 16          # 10 floats: latch tip, dr/dp, face, striker normal
_RES = 28          # 8 floats: bisection result
_AFF = 40          # AFF_FACES * AW floats: affine latch rows
SCRATCH = _AFF + AFF_FACES * AW


@njit(inline="always", **JIT)
def _point_to_P(feat, featP, i, k, R, px, py, pz):
    """The point at ``feat[i, k:k+3]`` (link frame E_j) into ``featP[i, k:k+3]`` (P):
    ``p_P = p_PE + R_PE p_E``, with ``R = R_PE`` and ``(px, py, pz) = p_PE``."""
    x = feat[i, k]
    y = feat[i, k + 1]
    z = feat[i, k + 2]
    featP[i, k] = px + R[0, 0] * x + R[0, 1] * y + R[0, 2] * z
    featP[i, k + 1] = py + R[1, 0] * x + R[1, 1] * y + R[1, 2] * z
    featP[i, k + 2] = pz + R[2, 0] * x + R[2, 1] * y + R[2, 2] * z


@njit(**JIT)
def transform_centres(feat, featP, link_pose, Rl):
    """The links' R_PE into ``Rl`` and every active feature's bounding-sphere centre (E_j) into
    P; the rest of each active row is marked stale (column ``F_STALE``) for :func:`transform_row`,
    which the pair loop calls only for features that pass the broad phase.

    Parameters
    ----------
    feat, featP : float64[nf, FW]
        The feature rows, and their copy in P, in which the active rows' bounding-sphere centres
        ``F_BC`` and stale flags ``F_STALE`` are written (module docstring, as for the rest).
    link_pose : float64[n_links, 7]
        Pose of each buffer link E_j in P: ``[p_PE (m), q_PE]`` (module docstring).
    Rl : float64[n_links, 3, 3]
        Output: each link's DCM R_PE.
    """
    nl = link_pose.shape[0]
    for j in range(nl):
        spatial.quat_to_dcm(link_pose[j, 3:7], Rl[j])
    for i in range(feat.shape[0]):
        if feat[i, F_SIDE] == 0.0:
            continue
        j = int(feat[i, F_LINK])
        _point_to_P(feat, featP, i, F_BC, Rl[j], link_pose[j, 0], link_pose[j, 1], link_pose[j, 2])
        featP[i, F_STALE] = 1.0


@njit(**JIT)
def transform_row(feat, featP, i, link_pose, Rl):
    """Active feature row i (E_j) -> P in ``featP``: points A, B, polygon vertices and the normal
    (the centre is done by :func:`transform_centres`), once per evaluation.

    Parameters
    ----------
    feat, featP : float64[nf, FW]
        The feature rows, and their copy in P, whose row ``i`` is rewritten if still marked
        stale, then unmarked (module docstring).
    i : int
        Index of an active feature row.
    link_pose : float64[n_links, 7]
        The buffer links' poses in P.
    Rl : float64[n_links, 3, 3]
        Each link's DCM R_PE, as :func:`transform_centres` left it.
    """
    if featP[i, F_STALE] == 0.0:
        return
    featP[i, F_STALE] = 0.0
    j = int(feat[i, F_LINK])
    R = Rl[j]
    px = link_pose[j, 0]
    py = link_pose[j, 1]
    pz = link_pose[j, 2]
    _point_to_P(feat, featP, i, F_A, R, px, py, pz)
    _point_to_P(feat, featP, i, F_B, R, px, py, pz)
    x = feat[i, F_NU]
    y = feat[i, F_NU + 1]
    z = feat[i, F_NU + 2]
    featP[i, F_NU] = R[0, 0] * x + R[0, 1] * y + R[0, 2] * z
    featP[i, F_NU + 1] = R[1, 0] * x + R[1, 1] * y + R[1, 2] * z
    featP[i, F_NU + 2] = R[2, 0] * x + R[2, 1] * y + R[2, 2] * z
    if feat[i, F_KIND] == K_POLYGON:
        for v in range(int(feat[i, F_NV])):
            _point_to_P(feat, featP, i, F_V + 3 * v, R, px, py, pz)


@njit(**JIT)
def transform_active(feat, featP, link_pose, Rl):
    """Active feature rows (E_j) -> P rows in ``featP``, all of them (passive rows are left
    untouched).

    Parameters
    ----------
    feat, featP : float64[nf, FW]
        The feature rows and their copy in P, whose active rows are rewritten here (module
        docstring).
    link_pose : float64[n_links, 7]
        The links' poses in P.
    Rl : float64[n_links, 3, 3]
        Output: each link's DCM R_PE.
    """
    transform_centres(feat, featP, link_pose, Rl)
    for i in range(feat.shape[0]):
        if feat[i, F_SIDE] != 0.0:
            transform_row(feat, featP, i, link_pose, Rl)


@njit(**JIT)
def _apply(out, link, cls, fn_given, m, mat, link_pose, link_twist, passive_twist,
           wrench_P, wrench_links, rec, nrec, pair_code, iters, pdefl):
    """Eq. 7 for one contact (geometry in ``out``): rates, normal and friction forces, wrench
    accumulation and the record. ``cls`` 1: |f_R| = k_S(D) D + c_D D' (+ ``fn_given``);
    ``cls`` 2: |f_R| = ``fn_given`` (the latch spring), no friction. Returns the new record
    count."""
    xax = out[0]
    xay = out[1]
    xaz = out[2]
    xpx = out[3]
    xpy = out[4]
    xpz = out[5]
    nx = out[6]
    ny = out[7]
    nz = out[8]
    pen = out[9]
    # velocities of the two surface points ([Yaskevich 2018b, contact forces]), P components
    rx = xax - link_pose[link, 0]
    ry = xay - link_pose[link, 1]
    rz = xaz - link_pose[link, 2]
    wx = link_twist[link, 3]
    wy = link_twist[link, 4]
    wz = link_twist[link, 5]
    vax = link_twist[link, 0] + wy * rz - wz * ry
    vay = link_twist[link, 1] + wz * rx - wx * rz
    vaz = link_twist[link, 2] + wx * ry - wy * rx
    wx = passive_twist[3]
    wy = passive_twist[4]
    wz = passive_twist[5]
    vpx = passive_twist[0] + wy * xpz - wz * xpy
    vpy = passive_twist[1] + wz * xpx - wx * xpz
    vpz = passive_twist[2] + wx * xpy - wy * xpx
    dvx = vax - vpx
    dvy = vay - vpy
    dvz = vaz - vpz
    rate = nx * dvx + ny * dvy + nz * dvz
    vtx = dvx - rate * nx
    vty = dvy - rate * ny
    vtz = dvz - rate * nz
    if cls == 1:
        fn = (mat[m, M_K0] + mat[m, M_K1] * pen) * pen + mat[m, M_C] * rate + fn_given
        if mat[m, M_PUSH] != 0.0 and fn < 0.0:
            fn = 0.0
    else:
        fn = fn_given
    # regularised Coulomb friction: |f_Fr| = k_Fr |f_R| min(1, |v_T| / v_eps), along +v_T on
    # the passive unit (the active surface drags it), -v_T on the active one. None on class 2:
    # [Yaskevich 2018b] neglects the energy exchange of zero-mass links, and the link's spring
    # balance |f_R| = Q / |n . dr/dp| has no tangential term (docs/models/contact.md §4)
    vt = math.sqrt(vtx * vtx + vty * vty + vtz * vtz)
    veps = mat[m, M_VEPS]
    ft_over_v = 0.0
    if cls == 1:
        ft_over_v = mat[m, M_MU] * abs(fn) / (vt if vt > veps else veps)
    fx = nx * fn + ft_over_v * vtx
    fy = ny * fn + ft_over_v * vty
    fz = nz * fn + ft_over_v * vtz
    cx = 0.5 * (xax + xpx)
    cy = 0.5 * (xay + xpy)
    cz = 0.5 * (xaz + xpz)
    wrench_P[0] += fx
    wrench_P[1] += fy
    wrench_P[2] += fz
    wrench_P[3] += cy * fz - cz * fy
    wrench_P[4] += cz * fx - cx * fz
    wrench_P[5] += cx * fy - cy * fx
    lx = cx - link_pose[link, 0]
    ly = cy - link_pose[link, 1]
    lz = cz - link_pose[link, 2]
    wrench_links[link, 0] -= fx
    wrench_links[link, 1] -= fy
    wrench_links[link, 2] -= fz
    wrench_links[link, 3] -= ly * fz - lz * fy
    wrench_links[link, 4] -= lz * fx - lx * fz
    wrench_links[link, 5] -= lx * fy - ly * fx
    if nrec < rec.shape[0]:
        r = rec[nrec]
        r[C_PAIR] = pair_code
        r[C_LINK] = link
        r[C_CLASS] = cls
        for i in range(3):
            r[C_XA + i] = out[i]
            r[C_XP + i] = out[3 + i]
            r[C_N + i] = out[6 + i]
        r[C_PEN] = pen
        r[C_RATE] = rate
        r[C_VT] = vtx
        r[C_VT + 1] = vty
        r[C_VT + 2] = vtz
        r[C_FN] = fn
        r[C_FT] = ft_over_v * vt
        r[C_F] = fx
        r[C_F + 1] = fy
        r[C_F + 2] = fz
        r[C_XC] = cx
        r[C_XC + 1] = cy
        r[C_XC + 2] = cz
        r[C_ITER] = iters
        r[C_P] = pdefl
    return nrec + 1


@njit(inline="always", **JIT)
def latch_tip(lat, l, p, link_pose, Rl, tmp):
    """Tip centre of latch ``l`` at deflection ``p``, in P, into tmp[0:3]; the derivative
    dr/dp (P) into tmp[3:6].

    Parameters
    ----------
    lat : float64[n_lat, LW]
        Latch and sensor rows, of which the latch's link, tip, axis and pivot are read (module
        docstring, "The kernels' other arguments", as for the rest).
    l : int
        The latch's (or sensor's) row.
    p : float
        The latch's deflection (m or rad).
    link_pose : float64[n_links, 7]
        The buffer links' poses in P.
    Rl : float64[n_links, 3, 3]
        The links' DCMs R_PE.
    tmp : float64[>= 6]
        Output: tip centre [0:3] (m, P) and dr/dp [3:6] (P; per m or per rad).
    """
    j = int(lat[l, L_LINK])
    R = Rl[j]
    ax = lat[l, L_AX]
    ay = lat[l, L_AX + 1]
    az = lat[l, L_AX + 2]
    if lat[l, L_DOF] == 0.0:
        ex = lat[l, L_TIP] + p * ax
        ey = lat[l, L_TIP + 1] + p * ay
        ez = lat[l, L_TIP + 2] + p * az
        dx = ax
        dy = ay
        dz = az
    else:
        # Rodrigues rotation of (tip - pivot) about the unit axis by p
        ux = lat[l, L_TIP] - lat[l, L_PIV]
        uy = lat[l, L_TIP + 1] - lat[l, L_PIV + 1]
        uz = lat[l, L_TIP + 2] - lat[l, L_PIV + 2]
        c = math.cos(p)
        s = math.sin(p)
        kd = ax * ux + ay * uy + az * uz
        cxu = ay * uz - az * uy
        cyu = az * ux - ax * uz
        czu = ax * uy - ay * ux
        rx = ux * c + cxu * s + ax * kd * (1.0 - c)
        ry = uy * c + cyu * s + ay * kd * (1.0 - c)
        rz = uz * c + czu * s + az * kd * (1.0 - c)
        ex = lat[l, L_PIV] + rx
        ey = lat[l, L_PIV + 1] + ry
        ez = lat[l, L_PIV + 2] + rz
        dx = ay * rz - az * ry
        dy = az * rx - ax * rz
        dz = ax * ry - ay * rx
    for i in range(3):
        tmp[i] = link_pose[j, i] + R[i, 0] * ex + R[i, 1] * ey + R[i, 2] * ez
        tmp[3 + i] = R[i, 0] * dx + R[i, 1] * dy + R[i, 2] * dz


@njit(inline="always", **JIT)
def latch_candidates(lat, l, featP, link_pose, Rl, tmp):
    """Bit mask of the candidate faces of latch ``l`` whose bounding spheres the tip can reach
    over its whole stroke (broad phase, once per evaluation).

    Parameters
    ----------
    lat : float64[n_lat, LW]
        Latch and sensor rows: the latch's stroke, tip radius and candidate faces (module
        docstring, as for the other arrays).
    l : int
        The latch's (or sensor's) row.
    featP : float64[nf, FW]
        The feature rows in P, the latch's candidate faces among them.
    link_pose : float64[n_links, 7]
        The buffer links' poses in P.
    Rl : float64[n_links, 3, 3]
        The links' DCMs.
    tmp : float64[>= 6]
        Workspace of :func:`latch_tip`.
    """
    latch_tip(lat, l, 0.0, link_pose, Rl, tmp)
    x0 = tmp[0]
    y0 = tmp[1]
    z0 = tmp[2]
    latch_tip(lat, l, lat[l, L_PMAX], link_pose, Rl, tmp)
    cx = 0.5 * (x0 + tmp[0])
    cy = 0.5 * (y0 + tmp[1])
    cz = 0.5 * (z0 + tmp[2])
    # the chord bounds a translational stroke; a rotational tip stays within the chord's
    # half-length times 1/cos(stroke/2) <= 1.5 for strokes below 90 deg
    rs = 0.75 * math.sqrt((tmp[0] - x0) ** 2 + (tmp[1] - y0) ** 2 + (tmp[2] - z0) ** 2) + lat[l, L_RTIP]
    mask = 0
    f0 = int(lat[l, L_FACE])
    for k in range(int(lat[l, L_NFACE])):
        f = featP[f0 + k]
        dx = cx - f[F_BC]
        dy = cy - f[F_BC + 1]
        dz = cz - f[F_BC + 2]
        rr = rs + f[F_BR]
        if dx * dx + dy * dy + dz * dz <= rr * rr:
            mask |= 1 << k
    return mask


@njit(inline="always", **JIT)
def latch_affine(lat, l, mask, featP, tx, ty, tz, ux, uy, uz, aff):
    """Affine rows of latch ``l``'s candidate strikers for a tip centre r(p) = t + p u in P:
    every signed distance the striker depth uses -- to the ramp (or face) and catch planes and
    to the ramp prism's edge planes (without the crest wall when there is a catch) -- is
    g(p) = g(0) + p (n . u). One row of ``aff`` per candidate (A_* offsets); returns the
    number of rows, or -1 if a candidate is not a polygon (a sensor's annulus).

    For a translational latch (u = dr/dp, the buffer link frozen) the rows are set up once per
    evaluation and every bisection step is a few multiply-adds per candidate; the direct form
    (:func:`latch_depth`) sets them up at the tip's own position with u = 0.

    Parameters
    ----------
    lat : float64[n_lat, LW]
        Latch and sensor rows: the latch's candidate faces and catches (module docstring).
    l : int
        The latch's row.
    mask : int
        Bit mask of the candidate faces to set up (:func:`latch_candidates`).
    featP : float64[nf, FW]
        The feature rows in P.
    tx, ty, tz : float
        Tip centre t at p = 0, P components (m).
    ux, uy, uz : float
        Tip direction u = dr/dp, P components (per m or per rad); zero for the direct form.
    aff : float64[AFF_FACES * AW]
        Output: one row per candidate (``A_*`` offsets).
    """
    f0 = int(lat[l, L_FACE])
    b0 = int(lat[l, L_BACK])
    ns = 0
    for k in range(int(lat[l, L_NFACE])):
        if not (mask & (1 << k)):
            continue
        f = featP[f0 + k]
        if f[F_KIND] != K_POLYGON:
            return -1
        o = ns * AW
        n1x = f[F_NU]
        n1y = f[F_NU + 1]
        n1z = f[F_NU + 2]
        aff[o + A_K] = k
        aff[o + A_D1] = (tx - f[F_A]) * n1x + (ty - f[F_A + 1]) * n1y + (tz - f[F_A + 2]) * n1z
        aff[o + A_S1] = ux * n1x + uy * n1y + uz * n1z
        n2x = 0.0
        n2y = 0.0
        n2z = 0.0
        fb = f
        if b0 >= 0:
            fb = featP[b0 + k]
            n2x = fb[F_NU]
            n2y = fb[F_NU + 1]
            n2z = fb[F_NU + 2]
            aff[o + A_D2] = (tx - fb[F_A]) * n2x + (ty - fb[F_A + 1]) * n2y + (tz - fb[F_A + 2]) * n2z
            aff[o + A_S2] = ux * n2x + uy * n2y + uz * n2z
            aff[o + A_C12] = n1x * n2x + n1y * n2y + n1z * n2z
        ne = 0
        nv = int(f[F_NV])
        for i in range(nv):
            kk, mx, my, mz = edge_plane(f, i)
            if b0 >= 0 and mx * n2x + my * n2y + mz * n2z < -1e-9 * math.sqrt(mx * mx + my * my + mz * mz):
                # the crest edge: both ends in the catch plane, its wall facing away from the
                # catch side. No wall there: the wedge continues past it (the catch bounds it).
                # (Side edges of a ramp narrowing towards the crest also face away; their ends
                # are not in the catch plane.)
                kn = kk + 3 if i + 1 < nv else F_V
                ca = (f[kk] - fb[F_A]) * n2x + (f[kk + 1] - fb[F_A + 1]) * n2y + (f[kk + 2] - fb[F_A + 2]) * n2z
                cb = (f[kn] - fb[F_A]) * n2x + (f[kn + 1] - fb[F_A + 1]) * n2y + (f[kn + 2] - fb[F_A + 2]) * n2z
                if abs(ca) <= 1e-9 and abs(cb) <= 1e-9:
                    continue
            aff[o + A_E + 2 * ne] = (tx - f[kk]) * mx + (ty - f[kk + 1]) * my + (tz - f[kk + 2]) * mz
            aff[o + A_E + 2 * ne + 1] = ux * mx + uy * my + uz * mz
            ne += 1
        aff[o + A_NE] = ne
        ns += 1
    return ns


@njit(inline="always", **JIT)
def _keep(d, best, face, f, tmp):
    """The deeper of ``best`` and ``d``; a deeper ``d`` writes its face and f's normal."""
    if d > best:
        tmp[6] = face
        tmp[7] = f[F_NU]
        tmp[8] = f[F_NU + 1]
        tmp[9] = f[F_NU + 2]
        return d
    return best


@njit(inline="always", **JIT)
def latch_depth_affine(lat, l, p, ns, featP, aff, tmp):
    """Delta(p) of latch ``l`` from the rows of :func:`latch_affine` ([Yaskevich 2018b, latches and
    sensors]): the deepest penetration of the tip into its candidate strikers, the index of that
    face into tmp[6] and the unit normal of the striker surface there (outward, P) into tmp[7:10].

    Without catches (``L_BACK < 0``) a striker is its ramp face (a one-sided polygon). With
    catches, striker k is the solid wedge under ramp k and behind catch k (docs/models/contact.md
    §4): with d1, d2 the tip centre's distances in front of the ramp and catch planes (inside the
    ramp's prism without its wall through the crest, within the ramp's depth window), and
    v = a n1 + b n2 the offset from the crest edge (a = (d1 - c d2)/(1 - c^2),
    b = (d2 - c d1)/(1 - c^2), c = n1.n2): a, b > 0 is the rounded crest edge,
    Delta = r_tip - |v| with normal v/|v|; otherwise the nearer plane,
    Delta = r_tip - max(d1, d2).

    Parameters
    ----------
    lat : float64[n_lat, LW]
        Latch and sensor rows: the latch's tip radius, faces and catches (module docstring, as
        for the other arrays).
    l : int
        The latch's row.
    p : float
        Deflection at which Delta is evaluated (m or rad).
    ns : int
        Number of rows in ``aff`` (the value :func:`latch_affine` returned).
    featP : float64[nf, FW]
        The feature rows in P.
    aff : float64[AFF_FACES * AW]
        The affine rows of :func:`latch_affine`. Read only.
    tmp : float64[>= 10]
        Output: the deepest face's index [6] and its striker normal [7:10] (P).
    """
    r = lat[l, L_RTIP]
    best = -1e300
    f0 = int(lat[l, L_FACE])
    b0 = int(lat[l, L_BACK])
    for s in range(ns):
        o = s * AW
        k = int(aff[o + A_K])
        f = featP[f0 + k]
        d1 = aff[o + A_D1] + p * aff[o + A_S1]
        if d1 < -f[F_DEPTH]:
            continue
        inside = True
        for i in range(int(aff[o + A_NE])):
            if aff[o + A_E + 2 * i] + p * aff[o + A_E + 2 * i + 1] < 0.0:
                inside = False
                break
        if not inside:
            continue
        if b0 < 0:
            best = _keep(r - d1, best, f0 + k, f, tmp)
            continue
        fb = featP[b0 + k]
        d2 = aff[o + A_D2] + p * aff[o + A_S2]
        ea = 0.0
        eb = 0.0
        c12 = aff[o + A_C12]
        den = 1.0 - c12 * c12
        if (d1 > 0.0 or d2 > 0.0) and den > 1e-12:    # (ramp and catch coplanar: no edge)
            ea = (d1 - d2 * c12) / den
            eb = (d2 - d1 * c12) / den
        if ea > 0.0 and eb > 0.0:
            dist = math.sqrt(ea * d1 + eb * d2)
            d = r - dist
            if d > best:
                best = d
                tmp[6] = b0 + k
                tmp[7] = (ea * f[F_NU] + eb * fb[F_NU]) / dist
                tmp[8] = (ea * f[F_NU + 1] + eb * fb[F_NU + 1]) / dist
                tmp[9] = (ea * f[F_NU + 2] + eb * fb[F_NU + 2]) / dist
        elif d1 >= d2:
            best = _keep(r - d1, best, f0 + k, f, tmp)
        else:
            best = _keep(r - d2, best, b0 + k, fb, tmp)
    return best


@njit(**JIT)
def latch_depth(lat, l, p, mask, featP, link_pose, Rl, tmp, aff):
    """Delta(p) of latch ``l`` evaluated directly at the tip's position (any latch, rotational
    ones included; outputs as :func:`latch_depth_affine`). A candidate that is not a polygon
    (a sensor against the ring face's annulus) is tested by ``point_face_depth``.

    Parameters
    ----------
    lat : float64[n_lat, LW]
        Latch and sensor rows; the latch's faces and tip radius are read (module docstring, for
        every array).
    l : int
        The latch's (or sensor's) row.
    p : float
        Deflection at which Delta is evaluated (m or rad).
    mask : int
        Bit mask of the candidate faces (:func:`latch_candidates`).
    featP : float64[nf, FW]
        The feature rows in P.
    link_pose : float64[n_links, 7]
        The buffer links' poses.
    Rl : float64[n_links, 3, 3]
        The links' DCMs R_PE.
    tmp, aff : float64[:]
        Workspace: the tip, the deepest face and its normal; the affine rows.
    """
    latch_tip(lat, l, p, link_pose, Rl, tmp)
    ns = latch_affine(lat, l, mask, featP, tmp[0], tmp[1], tmp[2], 0.0, 0.0, 0.0, aff)
    if ns >= 0:
        return latch_depth_affine(lat, l, 0.0, ns, featP, aff, tmp)
    best = -1e300
    f0 = int(lat[l, L_FACE])
    for k in range(int(lat[l, L_NFACE])):
        if mask & (1 << k):
            d, nx, ny, nz = point_surface_depth(tmp[0], tmp[1], tmp[2], lat[l, L_RTIP], featP[f0 + k])
            if d > best:
                best = d
                tmp[6] = f0 + k
                tmp[7] = nx
                tmp[8] = ny
                tmp[9] = nz
    return best


@njit(inline="always", **JIT)
def _latch_delta(lat, l, p, mask, featP, link_pose, Rl, tmp, aff, naff):
    if naff >= 0:
        return latch_depth_affine(lat, l, p, naff, featP, aff, tmp)
    return latch_depth(lat, l, p, mask, featP, link_pose, Rl, tmp, aff)


@njit(inline="always", **JIT)
def bisect_latch(lat, l, featP, link_pose, Rl, tmp, res, aff):
    """Dichotomy of [Yaskevich 2018b, latches and sensors] for latch ``l``. res = [p, Delta(p),
    iterations, case, face, striker normal (3)] with case 0: no contact (p = 0), 1: contact found by
    bisection, 2: bottomed out (Delta(p_max) > 0, p = p_max). Delta(p) by :func:`latch_depth`, in
    its affine form (:func:`latch_affine`, workspace ``aff``) for translational latches.

    Parameters
    ----------
    lat : float64[n_lat, LW]
        Latch and sensor rows: the latch's kind of joint, stroke, tolerance and iteration cap
        (module docstring, as for the other arrays).
    l : int
        The latch's row.
    featP : float64[nf, FW]
        The feature rows in P.
    link_pose : float64[n_links, 7]
        The links' poses in P.
    Rl : float64[n_links, 3, 3]
        The links' DCMs R_PE.
    tmp : float64[>= 10]
        Workspace of :func:`latch_depth`.
    res : float64[8]
        Output: [p (m or rad), Delta(p) (m), iterations, case, face, striker normal (3, P)].
    aff : float64[AFF_FACES * AW]
        Workspace: the affine rows.
    """
    p0 = 0.0
    pmax = lat[l, L_PMAX]
    res[4] = -1.0
    mask = latch_candidates(lat, l, featP, link_pose, Rl, tmp)
    if mask == 0:
        res[0] = p0
        res[1] = -1e300
        res[2] = 0.0
        res[3] = 0.0
        return
    naff = -1
    if lat[l, L_DOF] == 0.0:
        latch_tip(lat, l, 0.0, link_pose, Rl, tmp)
        naff = latch_affine(lat, l, mask, featP, tmp[0], tmp[1], tmp[2], tmp[3], tmp[4], tmp[5], aff)
    d0 = _latch_delta(lat, l, p0, mask, featP, link_pose, Rl, tmp, aff, naff)
    if d0 <= 0.0:
        res[0] = p0
        res[1] = d0
        res[2] = 0.0
        res[3] = 0.0
        return
    face = tmp[6]
    res[5] = tmp[7]
    res[6] = tmp[8]
    res[7] = tmp[9]
    dmax = _latch_delta(lat, l, pmax, mask, featP, link_pose, Rl, tmp, aff, naff)
    if dmax > 0.0:
        res[0] = pmax
        res[1] = dmax
        res[2] = 0.0
        res[3] = 2.0
        res[4] = tmp[6]
        res[5] = tmp[7]
        res[6] = tmp[8]
        res[7] = tmp[9]
        return
    pb = p0
    db = d0
    pe = pmax
    tol = lat[l, L_TOL]
    maxit = int(lat[l, L_MAXIT])
    it = 0
    while abs(pe - pb) > tol and it < maxit:
        pm = 0.5 * (pb + pe)
        dm = _latch_delta(lat, l, pm, mask, featP, link_pose, Rl, tmp, aff, naff)
        it += 1
        if dm > 0.0:
            pb = pm
            db = dm
            face = tmp[6]
            res[5] = tmp[7]
            res[6] = tmp[8]
            res[7] = tmp[9]
        else:
            pe = pm
    res[0] = pb
    res[1] = db
    res[2] = it
    res[3] = 1.0
    res[4] = face


@njit(**JIT)
def evaluate(feat, featP, pairs, mat, lat, link_pose, link_twist, passive_twist, state_in,
             rec, wrench_P, wrench_links, state_out, latch_p, info, info_f, Rl, scratch):
    """One full evaluation of the interface. Returns the number of contacts found (records
    beyond ``rec.shape[0]`` are not written; ``info[0]`` then has ST_OVERFLOW).

    Parameters
    ----------
    feat, featP : float64[nf, FW]
        The feature rows, and their copy in P (module docstring).
    pairs : int64[n_pairs, PW]
        Primitive pair table (``P_*`` columns): type, active and passive feature, material,
        gating latch, face owner.
    mat : float64[n_mat, MW]
        Materials (``M_*`` columns): stiffness k0 (N/m) and slope k1 (N/m^2), damping (N s/m),
        friction coefficient, regularisation slip speed (m/s), penetration limit (m), push-only.
    lat : float64[n_lat, LW]
        Latch and sensor rows (``L_*`` layout).
    link_pose : float64[n_links, 7]
        Pose of each buffer link E_j in P: ``[p_PE (m), q_PE]`` (module docstring).
    link_twist : float64[n_links, 6]
        Absolute twist ``[v (m/s), omega (rad/s)]`` of each link's origin, P components.
    passive_twist : float64[6]
        Absolute twist ``[v_P (m/s), omega_P (rad/s)]`` of the passive unit, P components
        (zeros on the stand).
    state_in : int64[S_LATCH0 + n_lat]
        Interface state before the call: contact seen, captured, each latch's / sensor's state
        (``LAT_*``, ``SEN_*``). Read only.
    rec : float64[max_contacts, CW]
        Output: one contact record per row (``C_*`` offsets).
    wrench_P : float64[6]
        Output: ``[f; m]`` on the passive unit, P components, about P's origin (N, N m).
    wrench_links : float64[n_links, 6]
        Output: ``[f; m]`` on each buffer link, P components, about E_j's origin (N, N m).
    state_out : int64[S_LATCH0 + n_lat]
        Output: the interface state after this evaluation (same layout as ``state_in``).
    latch_p : float64[n_lat]
        Output: each latch's / sensor's deflection (m or rad).
    info : int64[4]
        Output: [status bits ``ST_*``, offending pair, contacts found, event bits ``EV_*``].
    info_f : float64[2]
        Output: [offending penetration (m), its limit (m)].
    Rl : float64[n_links, 3, 3]
        Output: each link's DCM R_PE.
    scratch : float64[SCRATCH]
        Workspace (primitive output, clip parameters, latch tip, bisection result, affine rows).
    """
    out = scratch[_OUT:_OUT + 10]
    tw = scratch[_TW:_TW + 2]
    tmp = scratch[_TMP:_TMP + 10]
    res = scratch[_RES:_RES + 8]
    aff = scratch[_AFF:_AFF + AFF_FACES * AW]
    for i in range(6):
        wrench_P[i] = 0.0
    for j in range(wrench_links.shape[0]):
        for i in range(6):
            wrench_links[j, i] = 0.0
    status = ST_OK
    worst = 0.0
    worst_pair = -1
    worst_pen = 0.0
    worst_lim = 0.0
    transform_centres(feat, featP, link_pose, Rl)
    npair = pairs.shape[0]
    nrec = 0
    nlat = lat.shape[0]
    all_engaged = nlat > 0
    n_latches = 0
    events = 0
    # ---------------------------------------------------------------- class 2: latches, sensors
    for l in range(nlat):
        prev = state_in[S_LATCH0 + l]
        kind = lat[l, L_KIND]
        link = int(lat[l, L_LINK])
        new = prev
        if kind == 0.0:
            n_latches += 1
        if kind == 0.0 and prev == LAT_ENGAGED:
            latch_p[l] = 0.0
            state_out[S_LATCH0 + l] = LAT_ENGAGED
            continue
        if kind == 0.0 and prev == LAT_RELEASED:
            latch_p[l] = 0.0
            state_out[S_LATCH0 + l] = LAT_RELEASED
            all_engaged = False
            continue
        bisect_latch(lat, l, featP, link_pose, Rl, tmp, res, aff)
        p = res[0]
        case = int(res[3])
        latch_p[l] = p
        if case == 0:
            if kind == 0.0:
                new = LAT_FREE
                if prev == LAT_DEFLECTED or prev == LAT_BOTTOMED:
                    back = int(lat[l, L_BACK])
                    if back >= 0:
                        latch_tip(lat, l, 0.0, link_pose, Rl, tmp)
                        for kb in range(int(lat[l, L_NFACE])):
                            fb = featP[back + kb]
                            db = ((tmp[0] - fb[F_A]) * fb[F_NU] + (tmp[1] - fb[F_A + 1]) * fb[F_NU + 1]
                                  + (tmp[2] - fb[F_A + 2]) * fb[F_NU + 2])
                            # in front of the catch, within its outline and one window deep
                            if 0.0 < db <= fb[F_DEPTH] and point_face_depth(
                                    tmp[0], tmp[1], tmp[2], 0.0, fb) > -1e300:
                                if db >= lat[l, L_RTIP]:
                                    new = LAT_ENGAGED
                                elif new != LAT_ENGAGED:
                                    # in front of the catch but its rounding still overlaps the
                                    # catch plane with no contact found (outside the ramp's side
                                    # walls or depth window; the wedge itself keeps the tip on
                                    # the catch until it clears, docs §4.1). Snapping now would
                                    # start the engaged tip/catch contact at a penetration of up
                                    # to the tip radius (a force step of k_S r_tip); it snaps once
                                    # the rounding is clear.
                                    new = prev
            else:
                new = SEN_IDLE
        else:
            latch_tip(lat, l, p, link_pose, Rl, tmp)
            r = lat[l, L_RTIP]
            nx = res[5]
            ny = res[6]
            nz = res[7]
            d = r - res[1]
            # geometry: n_R = -nu (the link pushes into the passive face)
            out[0] = tmp[0] - r * nx
            out[1] = tmp[1] - r * ny
            out[2] = tmp[2] - r * nz
            out[3] = tmp[0] - d * nx
            out[4] = tmp[1] - d * ny
            out[5] = tmp[2] - d * nz
            out[6] = -nx
            out[7] = -ny
            out[8] = -nz
            out[9] = res[1]
            # spring force through the massless link: Q(p) / |n_R . dr/dp| (virtual work)
            lev = abs(nx * tmp[3] + ny * tmp[4] + nz * tmp[5])
            if lev < lat[l, L_MINLEV]:
                lev = lat[l, L_MINLEV]
            q = lat[l, L_PRELOAD] + lat[l, L_KSPR] * p
            m = int(lat[l, L_MAT])
            if case == 1:
                nrec = _apply(out, link, 2, q / lev, m, mat, link_pose, link_twist, passive_twist,
                              wrench_P, wrench_links, rec, nrec, npair + l, res[2], p)
            else:
                # bottomed out: class 1 on the buffer link, continuous with the spring force
                nrec = _apply(out, link, 1, q / lev, m, mat, link_pose, link_twist, passive_twist,
                              wrench_P, wrench_links, rec, nrec, npair + l, res[2], p)
                lim = mat[m, M_MAXPEN]
                if res[1] > lim and res[1] / lim > worst:
                    worst = res[1] / lim
                    worst_pair = npair + l
                    worst_pen = res[1]
                    worst_lim = lim
            if kind == 0.0:
                new = LAT_DEFLECTED if case == 1 else LAT_BOTTOMED
            else:
                new = SEN_TRIGGERED if p >= lat[l, L_TRIG] or case == 2 else SEN_IDLE
        state_out[S_LATCH0 + l] = new
        if kind == 0.0:
            if prev == LAT_FREE and (new == LAT_DEFLECTED or new == LAT_BOTTOMED):
                events |= EV_LATCH_DEFLECTED
            if new == LAT_ENGAGED and prev != LAT_ENGAGED:
                events |= EV_LATCH_ENGAGED
            if new != LAT_ENGAGED:
                all_engaged = False
        else:
            if new == SEN_TRIGGERED and prev != SEN_TRIGGERED:
                events |= EV_SENSOR
    if n_latches == 0:
        all_engaged = False
    # ---------------------------------------------------------------- class 1: primitive pairs
    for k in range(npair):
        gate = pairs[k, P_GATE]
        if gate >= 0 and state_out[S_LATCH0 + gate] != LAT_ENGAGED:
            continue
        ptype = pairs[k, P_TYPE]
        fa = featP[pairs[k, P_FA]]
        fp = featP[pairs[k, P_FP]]
        # broad phase: bounding spheres (rounding included)
        dx = fa[F_BC] - fp[F_BC]
        dy = fa[F_BC + 1] - fp[F_BC + 1]
        dz = fa[F_BC + 2] - fp[F_BC + 2]
        rr = fa[F_BR] + fp[F_BR]
        if dx * dx + dy * dy + dz * dz > rr * rr:
            continue
        transform_row(feat, featP, pairs[k, P_FA], link_pose, Rl)
        owner = pairs[k, P_OWNER]
        hit = False
        if ptype == PT_SEG_FACE:
            if owner == 0:
                hit = seg_face(fa, fp, False, tw, out)
            else:
                hit = seg_face(fp, fa, True, tw, out)
        elif ptype == PT_SEG_SEG:
            hit = seg_seg(fa, fp, tw, out)
        elif ptype == PT_SEG_ANNULUS:
            if owner == 0:
                hit = seg_annulus(fa, fp, False, out)
            else:
                hit = seg_annulus(fp, fa, True, out)
        elif ptype == PT_CIRCLE_ANNULUS:
            if owner == 0:
                hit = circle_annulus(fa, fp, False, out)
            else:
                hit = circle_annulus(fp, fa, True, out)
        elif ptype == PT_POINT_REVOLVED or ptype == PT_POINT_CIRCLE:
            hit = point_surface(fa, fp, out)
        if not hit:
            continue
        m = pairs[k, P_MAT]
        link = int(fa[F_LINK])
        nrec = _apply(out, link, 1, 0.0, m, mat, link_pose, link_twist, passive_twist,
                      wrench_P, wrench_links, rec, nrec, k, 0.0, 0.0)
        lim = mat[m, M_MAXPEN]
        if out[9] > lim and out[9] / lim > worst:
            worst = out[9] / lim
            worst_pair = k
            worst_pen = out[9]
            worst_lim = lim
    # ---------------------------------------------------------------- states, events, status
    seen = state_in[S_SEEN]
    if nrec > 0 and seen == 0:
        events |= EV_FIRST_CONTACT
        seen = 1
    state_out[S_SEEN] = seen
    captured = state_in[S_CAPTURED]
    if all_engaged and captured == 0:
        events |= EV_SOFT_CAPTURE
        captured = 1
    state_out[S_CAPTURED] = captured
    if worst_pair >= 0:
        status |= ST_PENETRATION
    if nrec > rec.shape[0]:
        status |= ST_OVERFLOW
    info[0] = status
    info[1] = worst_pair
    info[2] = nrec
    info[3] = events
    info_f[0] = worst_pen
    info_f[1] = worst_lim
    return nrec


@njit(**JIT)
def link_wrench_in_link_frame(link_pose_j, wrench_P_j, Rtmp, out):
    """Wrench on a buffer link as the kernel gives it (P components, moment about E_j's
    origin) -> E_j components about E_j's origin: what the mechanism's ``contact_wrench``
    input takes (force first).

    Parameters
    ----------
    link_pose_j : float64[7]
        The link's pose in P, ``[p_PE (m), q_PE]``; only ``q_PE`` is read.
    wrench_P_j : float64[6]
        Wrench ``[f; m]`` on the link, P components, about E_j's origin (N, N m).
    Rtmp : float64[3, 3]
        Workspace: R_PE.
    out : float64[6]
        Output: the same wrench in E_j components, about E_j's origin (N, N m).
    """
    spatial.quat_to_dcm(link_pose_j[3:7], Rtmp)  # R_PE
    spatial.mattvec3(Rtmp, wrench_P_j[0:3], out[0:3])
    spatial.mattvec3(Rtmp, wrench_P_j[3:6], out[3:6])
