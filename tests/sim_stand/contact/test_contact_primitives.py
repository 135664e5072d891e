"""Contact primitives against brute-force sampling and closed forms (tolerances in each test)."""
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from sim_stand.contact import Builder
from sim_stand.contact import geometry as G

fin = st.floats(-1.0, 1.0, allow_nan=False)
vec = st.tuples(fin, fin, fin).map(np.array)


def _rows(b):
    pk = b.pack()
    return pk.feat.copy()


def square(b, name="sq", depth=0.05, half=0.5):
    # passive square in the plane x = 0, facing -x (towards the approaching unit)
    V = [(0, -half, -half), (0, half, -half), (0, half, half), (0, -half, half)]
    return b.polygon(name, V, (-1, 0, 0), depth)


def test_point_face_contact_geometry():
    b = Builder()
    f = square(b)
    p = b.point("p", (0.003, 0.1, 0.2), radius=0.002, link=0)
    F = _rows(b)
    out = np.zeros(10)
    tw = np.zeros(2)
    assert G.seg_face(F[p], F[f], False, tw, out)
    assert math.isclose(out[9], 0.005, abs_tol=1e-15)          # 3 mm through + 2 mm rounding
    assert np.allclose(out[6:9], [1, 0, 0])                     # force on passive: +x
    assert np.allclose(out[0:3], [0.005, 0.1, 0.2])             # deepest point of the rounded tip
    assert np.allclose(out[3:6], [0.0, 0.1, 0.2])               # foot on the face
    # outside the polygon's prism, in front of the face, behind the depth window: no contact
    for q in [(0.003, 0.6, 0.0), (-0.0021, 0.1, 0.2), (0.06, 0.0, 0.0)]:
        b2 = Builder()
        f2 = square(b2)
        p2 = b2.point("p", q, radius=0.002, link=0)
        F2 = _rows(b2)
        assert not G.seg_face(F2[p2], F2[f2], False, tw, out)


@settings(max_examples=150)
@given(vec, vec, st.floats(0.0, 0.02))
def test_segment_face_is_deepest_sampled_point(a, c, r):
    """Deepest point of a segment inside the face prism and depth window equals a fine
    sampling of the segment (1e-3 relative sampling step -> 2e-3 m tolerance)."""
    a = a * np.array([0.1, 0.8, 0.8])
    c = c * np.array([0.1, 0.8, 0.8])
    b = Builder()
    f = square(b, depth=0.05)
    s = b.segment("s", a, c, radius=r, link=0)
    F = _rows(b)
    out = np.zeros(10)
    hit = G.seg_face(F[s], F[f], False, np.zeros(2), out)
    ts = np.linspace(0, 1, 2001)
    P = a[None, :] + ts[:, None] * (c - a)[None, :]
    d = -P[:, 0]                               # signed distance along nu = -x
    ok = (np.abs(P[:, 1]) <= 0.5) & (np.abs(P[:, 2]) <= 0.5) & (d >= -0.05)
    pen = np.where(ok, r - d, -np.inf)
    ref = pen.max()
    if ref > 2e-3:
        assert hit and abs(out[9] - ref) < 2e-3
    if hit:
        assert ref > -2e-3 and out[9] >= ref - 1e-12


@settings(max_examples=150)
@given(vec, vec, vec, vec, st.floats(0.0, 0.3), st.floats(0.0, 0.3))
def test_segment_segment_matches_sampling(a0, a1, b0, b1, ra, rb):
    """Closest distance equals a 400x400 sampling minimum within its resolution (and 1e-7 m
    for nearly parallel segments, which the closest-point routine treats as parallel)."""
    b = Builder()
    sa = b.segment("a", a0, a1, ra, link=0)
    sp = b.segment("b", b0, b1, rb)
    F = _rows(b)
    out = np.zeros(10)
    hit = G.seg_seg(F[sa], F[sp], np.zeros(2), out)
    s = np.linspace(0, 1, 400)
    A = a0[None, :] + s[:, None] * (a1 - a0)
    B = b0[None, :] + s[:, None] * (b1 - b0)
    dmin = np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)).min()
    res = 2 * (np.linalg.norm(a1 - a0) + np.linalg.norm(b1 - b0)) / 399
    ref = ra + rb - dmin
    if hit:
        assert out[9] >= ref - 1e-7 and out[9] <= ref + res + 1e-12
        assert abs(np.linalg.norm(out[6:9]) - 1) < 1e-12
        # the two surface points are Delta apart along -n_R (overlap)
        assert np.allclose(out[3:6] - out[0:3], -out[9] * out[6:9], atol=1e-12)
    else:
        assert ref <= res + 1e-12


def test_segment_segment_crossing_axes_normal():
    b = Builder()
    sa = b.segment("a", (0, -1, 0), (0, 1, 0), 0.01, link=0)
    sp = b.segment("b", (0.015, 0, -1), (0.015, 0, 1), 0.01)
    F = _rows(b)
    out = np.zeros(10)
    assert G.seg_seg(F[sa], F[sp], np.zeros(2), out)
    assert np.allclose(out[6:9], [1, 0, 0]) and math.isclose(out[9], 0.005, abs_tol=1e-15)
    # axes intersecting exactly: common perpendicular, oriented along +x
    b = Builder()
    sa = b.segment("a", (0, -1, 0), (0, 1, 0), 0.01, link=0)
    sp = b.segment("b", (0, 0, -1), (0, 0, 1), 0.01)
    F = _rows(b)
    assert G.seg_seg(F[sa], F[sp], np.zeros(2), out)
    assert np.allclose(out[6:9], [1, 0, 0]) and math.isclose(out[9], 0.02)


def test_point_and_circle_against_annulus():
    b = Builder()
    ann = b.annulus("ring", (0, 0, 0), (-1, 0, 0), 0.5, 0.6, 0.03)
    inside = b.point("in", (0.002, 0.55, 0.0), link=0)
    hole = b.point("hole", (0.002, 0.45, 0.0), link=0)
    # circle of radius 0.55 tilted by 2 deg about z: deepest point is at -y
    tilt = math.radians(2.0)
    axis = (math.cos(tilt), math.sin(tilt), 0.0)
    circ = b.circle("c", (-0.01, 0, 0), axis, 0.55, radius=0.001, link=0)
    F = _rows(b)
    out = np.zeros(10)
    assert G.seg_annulus(F[inside], F[ann], False, out) and math.isclose(out[9], 0.002)
    assert not G.seg_annulus(F[hole], F[ann], False, out)
    assert G.circle_annulus(F[circ], F[ann], False, out)
    # rim point centre + 0.55 (sin t, -cos t, 0) is the deepest along +x
    x_deep = -0.01 + 0.55 * math.sin(tilt)
    assert math.isclose(out[9], x_deep + 0.001, rel_tol=1e-12)
    assert np.allclose(out[6:9], [1, 0, 0])
    assert math.isclose(out[4], -0.55 * math.cos(tilt), rel_tol=1e-12)
