"""Post-capture control (rt/dynamics/berthing_control.py, [Zhu, Wang & Zheng, §5.2]): after
a plastic capture, feedback linearization drives the joint angles to their targets with the designed
damping ratio and frequency (overshoot and settling time against the second-order design) and
holds the main spacecraft's attitude; the elastic coordinates stay small and are reported."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rt.config.arm import load_arm
from rt.dynamics import spatial as SP
from rt.dynamics.berthing_arm import ArmModel
from rt.dynamics.berthing_control import schur_feedback
from rt.dynamics.capture import plastic_capture

ROOT = Path(__file__).resolve().parents[3]
ZETA, OMEGA = 0.7, 1.0


def _rotvec(q):
    """Rotation vector of the unit quaternion q (scalar first)."""
    w = np.clip(q[0], -1.0, 1.0)
    s = np.linalg.norm(q[1:])
    if s < 1e-15:
        return np.zeros(3)
    ang = 2.0 * math.atan2(s, w)
    return ang * q[1:] / s


@pytest.mark.slow
def test_feedback_linearization_after_capture():
    base = ArmModel(load_arm(ROOT / "config/arms/berthing_arm.toml"))
    q, u = base.home()
    base.evaluate(q, u)
    cfg = base.cfg
    # capture: a payload drifting at 3 cm/s into the resting arm's grasp point
    R4 = base.pose4[3:].reshape(3, 3)
    r_pb = R4 @ np.array([0.0, 0.0, cfg.grapple_m[2]])
    I_p = R4 @ np.asarray(cfg.payload.inertia_kgm2) @ R4.T
    cap = plastic_capture(base.Mt, base.grasp_jacobian(), cfg.payload.mass_kg, I_p, r_pb, u,
                          np.array([0.03, -0.01, 0.0]), np.zeros(3))
    # after capture the payload is part of the end effector
    g = np.asarray(cfg.grasp_point_m, float)
    arm = base.with_payload(cfg.payload.mass_kg, g - np.array([0.0, 0.0, cfg.grapple_m[2]]),
                            np.asarray(cfg.payload.inertia_kgm2))
    u = cap.u_f.copy()
    ctrl = [3, 4, 5, arm.i_t2, arm.i_t3, arm.i_t4]
    th_d = np.array([q[arm.i_t2 + 1] + 0.02, q[arm.i_t3 + 1], q[arm.i_t4 + 1]])
    q_att0 = q[3:7].copy()

    def state_feedback(qq, uu):
        # attitude error: rotation vector of q_d^-1 q (body frame)
        qe = np.empty(4)
        qc = np.empty(4)
        SP.quat_conj(q_att0, qc)
        SP.quat_mul(qc, qq[3:7], qe)
        err = np.concatenate([_rotvec(qe), [qq[arm.i_t2 + 1], qq[arm.i_t3 + 1], qq[arm.i_t4 + 1]] - th_d])
        ud0 = arm.evaluate(qq, uu).copy()
        b = arm.Mt @ ud0
        k = schur_feedback(arm.Mt, b, ctrl, err, uu[ctrl], ZETA, OMEGA)
        Q = np.zeros(arm.n)
        Q[ctrl] = k
        return arm.evaluate(qq, uu, Q).copy()

    def qdot(qq, uu):
        R = np.empty((3, 3))
        SP.quat_to_dcm(qq[3:7] / np.linalg.norm(qq[3:7]), R)
        out = np.empty(arm.nq)
        out[0:3] = R @ uu[0:3]
        qd = np.empty(4)
        SP.quat_kinematics(np.ascontiguousarray(qq[3:7]), np.ascontiguousarray(uu[3:6]), qd)
        out[3:7] = qd
        out[7:] = uu[6:]
        return out

    dt, T = 4e-3, 12.0
    ts, th2, bmax = [], [], 0.0
    for k in range(int(T / dt)):
        k1u = state_feedback(q, u)
        k1q = qdot(q, u)
        k2u = state_feedback(q + 0.5 * dt * k1q, u + 0.5 * dt * k1u)
        k2q = qdot(q + 0.5 * dt * k1q, u + 0.5 * dt * k1u)
        k3u = state_feedback(q + 0.5 * dt * k2q, u + 0.5 * dt * k2u)
        k3q = qdot(q + 0.5 * dt * k2q, u + 0.5 * dt * k2u)
        k4u = state_feedback(q + dt * k3q, u + dt * k3u)
        k4q = qdot(q + dt * k3q, u + dt * k3u)
        q = q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        u = u + dt / 6 * (k1u + 2 * k2u + 2 * k3u + k4u)
        q[3:7] /= np.linalg.norm(q[3:7])
        ts.append((k + 1) * dt)
        th2.append(q[arm.i_t2 + 1])
        for i0, mm, lk in ((arm.i_b2 + 1, arm.ma, arm.la), (arm.i_b3 + 1, arm.mb, arm.lb)):
            bb = q[i0:i0 + 2 * mm]
            bmax = max(bmax, abs(lk[3] @ bb[:mm]), abs(lk[3] @ bb[mm:]))     # tip deflections
    ts, th2 = np.array(ts), np.array(th2)
    # the closed loop of theta_2 is exactly theta'' + 2 zeta w theta' + w^2 (theta - theta_d) = 0
    e0 = th2[0] - th_d[0]
    resp = 1.0 - (th2 - th_d[0]) / e0              # normalised step response, 0 -> 1
    overshoot = resp.max() - 1.0
    design = math.exp(-ZETA * math.pi / math.sqrt(1 - ZETA ** 2))
    assert overshoot == pytest.approx(design, abs=0.01), (overshoot, design)
    outside = np.nonzero(np.abs(resp - 1.0) > 0.02)[0]
    t_settle = ts[outside[-1]] if outside.size else 0.0
    assert t_settle == pytest.approx(4.0 / (ZETA * OMEGA), rel=0.15), t_settle
    assert abs(q[arm.i_t3 + 1] - th_d[1]) < 1e-3 and abs(q[arm.i_t4 + 1] - th_d[2]) < 1e-3
    qe = np.empty(4)
    qc = np.empty(4)
    SP.quat_conj(q_att0, qc)
    SP.quat_mul(qc, q[3:7], qe)
    assert np.linalg.norm(_rotvec(qe)) < 1e-3       # attitude held
    # the links bend (the capture's impulse, and the joint accelerations the law asks of a flexible
    # arm carrying 12 t) and their tip deflections stay small
    assert 1e-4 < bmax < 0.05, bmax
