"""The energy audit's formulas (rt/analysis/energy.py) against closed forms and against the
compiled platform map it inverts."""
from __future__ import annotations

import numpy as np
import pytest

from rt.analysis.energy import audit, contact_power, relative_from_platform, twist_from_poses
from rt.dynamics import coupling as CP
from rt.dynamics import spatial as SP


def test_contact_power_translation_and_rotation_closed_forms():
    # f along x on a unit translating along x: f v; a unit turning about z at r = R y: the
    # material point at P's origin moves at -w x r = W R x, plus m . w
    F, V, W, R, M = 120.0, 0.07, 0.3, 0.4, 25.0
    w = np.array([[F, 0, 0, 0, 0, M]])
    p1 = contact_power(w, np.zeros((1, 3)), np.array([[V, 0, 0]]), np.zeros((1, 3)))
    p2 = contact_power(w, np.array([[0, R, 0]]), np.zeros((1, 3)), np.array([[0, 0, W]]))
    assert p1[0] == pytest.approx(F * V, rel=1e-15)
    assert p2[0] == pytest.approx(F * W * R + M * W, rel=1e-15)


def test_audit_of_a_constant_force_over_a_ramp_is_force_times_distance():
    t = np.linspace(0.0, 2.0, 2001)
    v0 = 0.1
    rel_pose = np.zeros((len(t), 7))
    rel_pose[:, 0] = 1.0 - v0 * t
    rel_pose[:, 3] = 1.0
    rel_twist = np.zeros((len(t), 6))
    rel_twist[:, 0] = -v0
    w = np.zeros((len(t), 6))
    w[:, 0] = -50.0
    a = audit(t, w, rel_pose, rel_twist)
    assert a.vehicles_j == pytest.approx(50.0 * v0 * 2.0, rel=1e-12)
    assert a.mechanism_j is None and a.stand_injected_j is None and a.approach_j is None


def test_relative_from_platform_inverts_the_compiled_platform_map():
    rng = np.random.default_rng(3)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    q2 = rng.normal(size=4)
    q2 /= np.linalg.norm(q2)
    geo = CP.pack_geometry(rng.normal(size=3), q, rng.normal(size=3), q2)
    n = 50
    r = rng.normal(size=(n, 3))
    qa = rng.normal(size=(n, 4))
    qa /= np.linalg.norm(qa, axis=1)[:, None]
    qa *= np.sign(qa[:, :1])
    top = np.zeros((n, 7))
    out = np.zeros(CP.OUT_LEN)
    for i in range(n):
        out[CP.O_RPRED:CP.O_RPRED + 3] = r[i]
        out[CP.O_QPRED:CP.O_QPRED + 4] = qa[i]
        CP.platform_pose(geo, out)
        top[i] = out[CP.O_PCMD:CP.O_PCMD + 7]
    rb, qb = relative_from_platform(top, geo)
    assert np.allclose(rb, r, atol=1e-12, rtol=0) and np.allclose(qb, qa, atol=1e-12, rtol=0)


def test_twist_from_poses_of_a_uniform_screw():
    t = np.linspace(0.0, 1.0, 1001)
    w = np.array([0.2, -0.1, 0.3])
    v = np.array([0.05, 0.0, -0.02])
    r = v * t[:, None]
    q = np.zeros((len(t), 4))
    for i, ti in enumerate(t):
        SP.quat_from_rotvec(w * ti, q[i])
    vv, ww = twist_from_poses(t, r, q)
    assert np.allclose(vv, v, atol=1e-12)
    assert np.allclose(ww[1:-1], w, atol=1e-6)        # second-order differences of a smooth rotation
