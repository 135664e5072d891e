"""Spatial math against plain numpy formulas (independent of the kernels' own code paths)."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays
from numba import njit

from rt.dynamics import spatial as SP

TOL = 1e-12
fin = st.floats(-10.0, 10.0, allow_nan=False)
vec3 = arrays(np.float64, 3, elements=fin)
quat_raw = arrays(np.float64, 4, elements=st.floats(-1.0, 1.0)).filter(lambda q: np.linalg.norm(q) > 0.1)


def unit(q):
    return q / np.linalg.norm(q)


def ref_dcm(q):
    """Rodrigues' formula R = I + 2w[u]x + 2[u]x^2 from axis/angle (independent of quat_to_dcm)."""
    w, u = q[0], q[1:]
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    return np.eye(3) + 2 * w * K + 2 * K @ K


def elem(axis, a):
    c, s = math.cos(a), math.sin(a)
    return {0: np.array([[1, 0, 0], [0, c, s], [0, -s, c]]),
            1: np.array([[c, 0, -s], [0, 1, 0], [s, 0, c]]),
            2: np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]])}[axis]


@given(quat_raw)
def test_quat_to_dcm_is_rodrigues_and_orthonormal(q):
    q = unit(q)
    R = np.empty((3, 3))
    SP.quat_to_dcm(q, R)
    assert np.allclose(R, ref_dcm(q), atol=TOL, rtol=0)
    assert np.allclose(R @ R.T, np.eye(3), atol=1e-12)
    assert abs(np.linalg.det(R) - 1) < 1e-12


@given(quat_raw)
def test_dcm_quat_round_trip(q):
    q = unit(q)
    R = np.empty((3, 3))
    SP.quat_to_dcm(q, R)
    q2 = np.empty(4)
    SP.dcm_to_quat(R, q2)
    assert q2[0] >= 0
    assert min(np.abs(q2 - q).max(), np.abs(q2 + q).max()) < 1e-12


@given(quat_raw, quat_raw, vec3)
def test_product_composes_rotations(p, q, v):
    p, q = unit(p), unit(q)
    pq = np.empty(4)
    SP.quat_mul(p, q, pq)
    Rp, Rq, Rpq = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    SP.quat_to_dcm(p, Rp)
    SP.quat_to_dcm(q, Rq)
    SP.quat_to_dcm(pq, Rpq)
    assert np.allclose(Rpq, Rp @ Rq, atol=TOL)
    out, back = np.empty(3), np.empty(3)
    SP.quat_rotate(pq, v, out)
    assert np.allclose(out, Rp @ Rq @ v, atol=1e-11)
    SP.quat_rotate_inv(pq, out, back)
    assert np.allclose(back, v, atol=1e-11)
    c = np.empty(4)
    SP.quat_conj(q, c)
    SP.quat_mul(q, c, pq)
    assert np.allclose(pq, [1, 0, 0, 0], atol=TOL)


@given(vec3, vec3)
def test_skew_and_cross(a, b):
    K, c = np.empty((3, 3)), np.empty(3)
    SP.skew(a, K)
    SP.cross(a, b, c)
    assert np.allclose(K @ b, np.cross(a, b), atol=TOL)
    assert np.allclose(c, np.cross(a, b), atol=TOL)
    assert np.allclose(K, -K.T)


@pytest.mark.parametrize("seq", ["yzx", "xyz", "zyx", "zxy", "xzy", "yxz"])
def test_sequence_is_product_of_seed_elementary_matrices(seq):
    rng = np.random.default_rng(7)
    axes = SP.sequence_codes(seq)
    for _ in range(100):
        ang = rng.uniform(-math.pi, math.pi, 3)
        ang[1] = rng.uniform(-1.5, 1.5)
        R = np.empty((3, 3))
        SP.dcm_from_sequence(axes, ang, R)
        ref = elem(axes[2], ang[2]) @ elem(axes[1], ang[1]) @ elem(axes[0], ang[0])
        assert np.allclose(R, ref, atol=TOL)
        back = np.empty(3)
        SP.sequence_from_dcm(axes, R, back)
        assert np.allclose(back, ang, atol=1e-10)


def test_sequence_gimbal_lock_still_reproduces_dcm():
    axes = SP.sequence_codes("yzx")
    for a2 in (math.pi / 2, -math.pi / 2):
        R, R2, back = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
        SP.dcm_from_sequence(axes, np.array([0.3, a2, -0.4]), R)
        SP.sequence_from_dcm(axes, R, back)
        SP.dcm_from_sequence(axes, back, R2)
        assert np.allclose(R, R2, atol=1e-9)


def test_elementary_matrix_is_frame_rotation():
    # Rotating the frame by +90 deg about z: the old x axis is seen at -90 deg in the new frame.
    R = np.empty((3, 3))
    SP.dcm_axis(2, math.pi / 2, R)
    assert np.allclose(R @ [1, 0, 0], [0, -1, 0], atol=TOL)


def test_bad_sequence_names():
    for bad in ("yyx", "xy", "abc", "xyzx"):
        with pytest.raises(ValueError):
            SP.sequence_codes(bad)


@given(vec3)
def test_rotvec_round_trip(phi):
    phi = phi * (3.0 / max(np.linalg.norm(phi), 3.0))  # angle <= 3 rad < pi
    q, back = np.empty(4), np.empty(3)
    SP.quat_from_rotvec(phi, q)
    assert abs(np.linalg.norm(q) - 1) < 1e-14
    SP.quat_to_rotvec(q, back)
    assert np.allclose(back, phi, atol=1e-11)
    R = np.empty((3, 3))
    SP.quat_to_dcm(q, R)
    # Rodrigues from the rotation vector
    a = np.linalg.norm(phi)
    if a > 1e-9:
        u = phi / a
        K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
        assert np.allclose(R, np.eye(3) + math.sin(a) * K + (1 - math.cos(a)) * K @ K, atol=1e-12)


@given(quat_raw, vec3)
def test_quat_kinematics_matches_finite_rotation(q, w):
    q = unit(q)
    qd = np.empty(4)
    SP.quat_kinematics(q, w, qd)
    h = 1e-6
    dq, q1 = np.empty(4), np.empty(4)
    SP.quat_from_rotvec(w * h, dq)  # body-frame increment: q(t+h) = q (x) exp(w h / 2)
    SP.quat_mul(q, dq, q1)
    assert np.allclose((q1 - q) / h, qd, atol=1e-5 * (1 + np.linalg.norm(w) ** 2))


@given(quat_raw, vec3, arrays(np.float64, 6, elements=fin), vec3)
def test_wrench_transform_preserves_power_and_moment_about_points(q, p, w, point):
    q = unit(q)
    R_ba = np.empty((3, 3))
    SP.quat_to_dcm(q, R_ba)
    wb = np.empty(6)
    SP.wrench_transform(R_ba, p, w, wb)
    # moment about an arbitrary point x (in a) must agree whichever frame computed it
    f_a, m_a = w[:3], w[3:]
    m_x_a = m_a - np.cross(point, f_a)
    m_x_b = wb[3:] - np.cross(R_ba @ (point - p), wb[:3])
    assert np.allclose(R_ba @ m_x_a, m_x_b, atol=1e-9)
    # power with any twist is frame independent
    t = np.concatenate([point, w[3:][::-1]])
    tb = np.empty(6)
    SP.twist_transform(R_ba, p, t, tb)
    assert math.isclose(w @ t, wb @ tb, rel_tol=1e-10, abs_tol=1e-9)


# ---- the scalar ("_entries") forms that kernels inline: the same numbers as the array forms


@njit
def _dcm9(q):
    return SP.quat_dcm_entries(q[0], q[1], q[2], q[3])


@njit
def _qmul4(p, q):
    return SP.quat_mul_entries(p[0], p[1], p[2], p[3], q[0], q[1], q[2], q[3])


@njit
def _q_of_R(R):
    return SP.dcm_quat_entries(R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2])


@njit
def _rot3(q, v):
    return SP.quat_rotate_entries(q[0], q[1], q[2], q[3], v[0], v[1], v[2])


@njit
def _rotvec3(q):
    return SP.quat_rotvec_entries(q[0], q[1], q[2], q[3])


@njit
def _rate4(q, w):
    return SP.quat_rate_entries(q[0], q[1], q[2], q[3], w[0], w[1], w[2])


@given(quat_raw)
def test_quat_dcm_entries_equal_quat_to_dcm_and_rodrigues(q):
    q = unit(q)
    R = np.empty((3, 3))
    SP.quat_to_dcm(q, R)
    R9 = np.array(_dcm9(q))
    assert np.array_equal(R9, R.ravel())                       # bit for bit, row-major
    assert np.allclose(R9.reshape(3, 3), ref_dcm(q), atol=TOL, rtol=0)


@given(quat_raw, quat_raw)
def test_quat_mul_entries_equal_quat_mul_and_hamilton(p, q):
    p, q = unit(p), unit(q)
    pq = np.empty(4)
    SP.quat_mul(p, q, pq)
    e = np.array(_qmul4(p, q))
    assert np.array_equal(e, pq)
    ref = np.concatenate([[p[0] * q[0] - p[1:] @ q[1:]], p[0] * q[1:] + q[0] * p[1:] + np.cross(p[1:], q[1:])])
    assert np.allclose(e, ref, atol=TOL)
    # out may alias an input
    a = p.copy()
    SP.quat_mul(a, q, a)
    assert np.array_equal(a, pq)


@given(quat_raw)
def test_dcm_quat_entries_equal_dcm_to_quat(q):
    q = unit(q)
    R = ref_dcm(q)
    q2 = np.empty(4)
    SP.dcm_to_quat(R, q2)
    assert np.array_equal(np.array(_q_of_R(R)), q2)
    assert min(np.abs(q2 - q).max(), np.abs(q2 + q).max()) < 1e-12


@given(quat_raw, vec3)
def test_quat_rotate_entries_equal_quat_rotate_and_dcm(q, v):
    q = unit(q)
    out, back = np.empty(3), np.empty(3)
    SP.quat_rotate(q, v, out)
    assert np.array_equal(np.array(_rot3(q, v)), out)
    assert np.allclose(out, ref_dcm(q) @ v, atol=1e-11)
    SP.quat_rotate_inv(q, v, back)
    assert np.array_equal(np.array(_rot3(q * [1, -1, -1, -1], v)), back)
    assert np.allclose(back, ref_dcm(q).T @ v, atol=1e-11)


@given(vec3)
def test_quat_rotvec_entries_equal_quat_to_rotvec(phi):
    phi = phi * (3.0 / max(np.linalg.norm(phi), 3.0))
    q, back = np.empty(4), np.empty(3)
    SP.quat_from_rotvec(phi, q)
    SP.quat_to_rotvec(q, back)
    assert np.array_equal(np.array(_rotvec3(q)), back)
    assert np.array_equal(np.array(_rotvec3(-q)), back)      # the shortest rotation either sign
    assert np.allclose(back, phi, atol=1e-11)
    assert _rotvec3(np.zeros(4)) == (0.0, 0.0, 0.0)


@given(quat_raw, vec3)
def test_quat_rate_entries_equal_quat_kinematics(q, w):
    q = unit(q)
    qd = np.empty(4)
    SP.quat_kinematics(q, w, qd)
    assert np.array_equal(np.array(_rate4(q, w)), qd)
    ref = 0.5 * np.concatenate([[-q[1:] @ w], q[0] * w + np.cross(q[1:], w)])
    assert np.allclose(qd, ref, atol=TOL)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_dcm_axis_cs_is_the_seed_elementary_matrix(axis):
    for a in np.linspace(-3.0, 3.0, 13):
        R, R2 = np.empty((3, 3)), np.empty((3, 3))
        SP.dcm_axis_cs(axis, math.cos(a), math.sin(a), R)
        SP.dcm_axis(axis, a, R2)
        assert np.array_equal(R, R2)
        assert np.allclose(R, elem(axis, a), atol=TOL)


@given(arrays(np.float64, 6, elements=fin))
def test_wrench_norms(w):
    f, m = SP.wrench_norms(w)
    assert math.isclose(f, np.linalg.norm(w[:3]), rel_tol=1e-14, abs_tol=1e-300)
    assert math.isclose(m, np.linalg.norm(w[3:]), rel_tol=1e-14, abs_tol=1e-300)
