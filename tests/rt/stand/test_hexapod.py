"""Hexapod kinematics: IK/FK round trip over the workspace, refusals with a reason, the
Jacobian against finite differences."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import njit

from rt.stand import hexapod as H
from rt.dynamics import spatial as SP

G = H.default_geometry()
HEX = H.Hexapod(G)


def pose_from(dp, rotvec):
    q = np.empty(4)
    SP.quat_from_rotvec(np.asarray(rotvec, float), q)
    return np.concatenate([G.home[:3] + np.asarray(dp, float), q])


def ref_lengths(pose):
    R = np.empty((3, 3))
    SP.quat_to_dcm(pose[3:] / np.linalg.norm(pose[3:]), R)
    return np.linalg.norm(pose[:3] + G.top @ R.T - G.base, axis=1)


# a pose inside the box: +-0.3 m lateral, +-0.3 m vertical, +-0.3 rad tilt, +-0.45 rad yaw
poses = st.tuples(st.floats(-0.3, 0.3), st.floats(-0.3, 0.3), st.floats(-0.3, 0.3),
                  st.floats(-0.3, 0.3), st.floats(-0.3, 0.3), st.floats(-0.45, 0.45))


def test_home_is_reachable_and_symmetric():
    code, why = HEX.check_pose(G.home)
    assert code == H.Workspace.OK, why
    L = HEX.inverse(G.home).copy()
    assert np.allclose(L, L[0], atol=1e-12)  # three-fold symmetric layout
    assert G.length_min_m < L[0] < G.length_max_m


@given(poses)
def test_inverse_matches_plain_numpy(x):
    pose = pose_from(x[:3], x[3:])
    L = np.empty(6)
    L2 = np.empty(6)
    J = np.empty((6, 6))
    H.inverse(G.base, G.top, pose, L, J)
    H.leg_lengths(G.base, G.top, pose, L2)
    ref = ref_lengths(pose)
    assert np.allclose(L, ref, atol=1e-13, rtol=0)
    assert np.allclose(L2, ref, atol=1e-13, rtol=0)


@given(poses)
@settings(max_examples=300)
def test_ik_fk_round_trip(x):
    pose = pose_from(x[:3], x[3:])
    code, why = HEX.check_pose(pose)
    if code != H.Workspace.OK:  # outside the leg range: refused, with a reason
        assert code in (H.Workspace.LEG_TOO_LONG, H.Workspace.LEG_TOO_SHORT), why
        return
    L = HEX.inverse(pose).copy()
    out = np.empty(7)
    status, it = HEX.forward(L, out)
    assert status == H.FKStatus.OK and it <= 10
    assert np.max(np.abs(out[:3] - pose[:3])) < 1e-12
    q = pose[3:] * (1 if pose[3] >= 0 else -1)
    assert np.max(np.abs(out[3:] - q)) < 1e-12


def test_round_trip_at_box_corners():
    """Every corner of a large sub-box (the workspace extremes the stand actually uses)."""
    out = np.empty(7)
    n = 0
    for dx in (-0.25, 0.25):
        for dy in (-0.25, 0.25):
            for dz in (-0.25, 0.3):
                for rv in ((0.25, 0.0, 0.0), (0.0, -0.25, 0.0), (0.0, 0.0, 0.4), (0.15, 0.15, -0.3)):
                    pose = pose_from((dx, dy, dz), rv)
                    if HEX.check_pose(pose)[0] != H.Workspace.OK:
                        continue
                    n += 1
                    L = HEX.inverse(pose).copy()
                    assert HEX.forward(L, out)[0] == H.FKStatus.OK
                    assert np.max(np.abs(out[:3] - pose[:3])) < 1e-12
                    assert np.max(np.abs(out[3:] - pose[3:])) < 1e-12
    assert n >= 24


@given(poses)
@settings(max_examples=100)
def test_jacobian_against_finite_differences(x):
    pose = pose_from(x[:3], x[3:])
    J = np.empty((6, 6))
    L = np.empty(6)
    H.inverse(G.base, G.top, pose, L, J)
    h = 1e-6
    Jn = np.empty((6, 6))
    for k in range(6):
        d = np.zeros(6)
        d[k] = h
        cols = []
        for sgn in (1.0, -1.0):
            p = pose.copy()
            p[:3] += sgn * d[:3]
            dq = np.empty(4)
            SP.quat_from_rotvec(sgn * d[3:], dq)
            q = np.empty(4)
            SP.quat_mul(dq, pose[3:], q)  # exp(dphi) (x) q: rotation vector in B
            p[3:] = q
            cols.append(ref_lengths(p))
        Jn[:, k] = (cols[0] - cols[1]) / (2 * h)
    assert np.allclose(J, Jn, atol=1e-8, rtol=0)


@pytest.mark.parametrize("dp, rv, reason, idx", [
    ((0.6, 0.0, 0.0), (0, 0, 0), H.Workspace.POSITION_OUT_OF_BOX, 0),
    ((0.0, 0.0, -0.5), (0, 0, 0), H.Workspace.POSITION_OUT_OF_BOX, 2),
    ((0.0, 0.0, 0.0), (0.0, 0.5, 0.0), H.Workspace.ORIENTATION_OUT_OF_BOX, 1),
    ((0.0, 0.0, 0.0), (0.0, 0.0, -0.7), H.Workspace.ORIENTATION_OUT_OF_BOX, 2),
])
def test_pose_box_refusals_name_the_axis(dp, rv, reason, idx):
    code, why = HEX.check_pose(pose_from(dp, rv))
    assert code == reason
    assert int(HEX.detail[0]) == idx
    assert why and "box" in why


def test_leg_range_refusals():
    # geometry with a tight length range around home: a vertical move breaks it
    g = H.HexapodGeometry(G.base, G.top, 2.0, 2.2, G.home, G.box)
    hx = H.Hexapod(g)
    code, why = hx.check_pose(pose_from((0, 0, 0.3), (0, 0, 0)))
    assert code == H.Workspace.LEG_TOO_LONG and "above the maximum 2.2" in why
    code, why = hx.check_pose(pose_from((0, 0, -0.3), (0, 0, 0)))
    assert code == H.Workspace.LEG_TOO_SHORT and "below the minimum 2.0" in why
    code, why = hx.check_lengths(np.array([2.1, 2.1, 2.1, 2.3, 2.1, 2.1]))
    assert code == H.Workspace.LEG_TOO_LONG and int(hx.detail[0]) == 3


def test_nonfinite_refused():
    p = G.home.copy()
    p[1] = np.nan
    assert HEX.check_pose(p)[0] == H.Workspace.NONFINITE
    L = np.full(6, 2.0)
    L[4] = np.inf
    assert HEX.check_lengths(L)[0] == H.Workspace.NONFINITE
    out = np.empty(7)
    status, _ = HEX.forward(L, out)
    assert status == H.FKStatus.NONFINITE and np.all(np.isfinite(out))


def test_fk_unreachable_lengths_report_status_never_nan():
    out = np.empty(7)
    # lengths no platform pose can have (legs wildly different): no convergence
    L = np.array([0.1, 5.0, 0.1, 5.0, 0.1, 5.0])
    status, it = HEX.forward(L, out)
    assert status in (H.FKStatus.MAX_ITER, H.FKStatus.SINGULAR)
    assert it <= HEX.max_iter
    assert np.all(np.isfinite(out))
    assert np.allclose(out, G.home)  # the guess is handed back


def test_fk_iteration_cap_is_honoured():
    pose = pose_from((0.2, -0.1, 0.1), (0.1, 0.2, 0.3))
    L = HEX.inverse(pose).copy()
    out = np.empty(7)
    st_, it = H.forward(G.base, G.top, L, G.home, out, H.fk_workspace(), 1e-13, 2)
    assert st_ == H.FKStatus.MAX_ITER and it == 2


def test_joint_circle_layout():
    b = H.joint_circle(1.0, 20.0, top=False)
    t = H.joint_circle(0.6, 20.0, top=True)
    ang_b = np.degrees(np.arctan2(b[:, 1], b[:, 0]))
    ang_t = np.degrees(np.arctan2(t[:, 1], t[:, 0]))
    assert np.allclose(ang_b[:2], [-10, 10])
    assert np.allclose(ang_t[:2], [-50, 50])
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0)


@njit
def _pose_dcm(pose):
    return H.pose_dcm(pose)


@njit
def _pose_quat(pose):
    return H.pose_quat(pose)


@given(poses, st.floats(0.2, 5.0))
def test_pose_dcm_is_r_bt_of_the_normalised_quaternion(x, scale):
    pose = pose_from(x[:3], x[3:])
    pose[3:] *= scale                                  # not unit: used normalised
    before = pose.copy()
    R = np.empty((3, 3))
    q = pose[3:] / np.linalg.norm(pose[3:])
    SP.quat_to_dcm(q, R)
    assert np.allclose(np.array(_pose_dcm(pose)), R.ravel(), atol=1e-15, rtol=0)
    assert np.allclose(np.array(_pose_quat(pose)), q, atol=1e-15, rtol=0)
    assert np.array_equal(pose, before)


def test_pose_quat_leaves_a_zero_quaternion():
    pose = np.array([0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 0.0])
    assert _pose_quat(pose) == (0.0, 0.0, 0.0, 0.0)
    assert np.array_equal(np.array(_pose_dcm(pose)), np.eye(3).ravel())
