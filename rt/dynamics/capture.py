"""Capture of the payload by the arm as a plastic impact ([Zhu, Wang & Zheng, §5.1, eqs. 46–53];
issue 25 item 2a): the velocity jump the digital reference applies at the instant the end effector's
grasp point meets the payload's grapple fixture.

Assumptions (the paper's (1) and (2)): the coordinates, elastic ones included, do not change during
the impact; only a force is transmitted at the contact point, no moment. All vectors inertial.

With P the impulse the payload gives the arm at the contact point (the payload receives -P):

    arm:      M~ (u_f - u_i) = J^T P                                      (eq. 47 with eq. 46)
    payload:  m_p (v_pf - v_pi) = -P,   I_p (w_pf - w_pi) = -r_pb x P
    plastic:  J u_f = v_pf + w_pf x r_pb                                  (eq. 48)

so (M~ + J^T S^-1 J) u_f = M~ u_i + J^T S^-1 (v_pi + w_pi x r_pb) (eqs. 49-51, G u_f = H) with
S = 1/m_p E_3 - [r_pb x] I_p^-1 [r_pb x] (positive definite), then P = S^-1 (v_ci - J u_f),
v_pf = v_pi - P / m_p and w_pf = w_pi - I_p^-1 (r_pb x P) (eqs. 52-53, **reconstructed**: the signs
follow from the impulse balance). Not for the real-time loop (numpy, once per capture).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


@dataclass(frozen=True)
class CaptureResult:
    u_f: np.ndarray            # the arm's generalized speeds after the impact
    v_pf: np.ndarray           # the payload's centre-of-mass velocity after (inertial)
    w_pf: np.ndarray           # its angular velocity after (inertial)
    impulse: np.ndarray        # P: on the arm at the contact point (the payload gets -P)
    energy_lost_j: float       # >= 0 (a plastic impact never gains energy)


def plastic_capture(Mt, J, m_p, I_p, r_pb, u_i, v_pi, w_pi) -> CaptureResult:
    """The velocities after a plastic capture (module docstring). ``Mt``: the arm's M~ (N x N);
    ``J``: the grasp point's 3 x N Jacobian; ``I_p``: the payload's inertia about its centre of
    mass, inertial axes; ``r_pb``: the contact point relative to the payload's centre of mass."""
    Mt = np.asarray(Mt, float)
    J = np.asarray(J, float)
    I_p = np.asarray(I_p, float)
    r = np.asarray(r_pb, float)
    rx = _skew(r)
    Ip_inv = np.linalg.inv(I_p)
    S = np.eye(3) / m_p - rx @ Ip_inv @ rx
    Si = np.linalg.inv(S)
    v_ci = np.asarray(v_pi, float) + np.cross(w_pi, r)
    G = Mt + J.T @ Si @ J
    H = Mt @ u_i + J.T @ Si @ v_ci
    u_f = np.linalg.solve(G, H)
    P = Si @ (v_ci - J @ u_f)
    v_pf = np.asarray(v_pi, float) - P / m_p
    w_pf = np.asarray(w_pi, float) - Ip_inv @ np.cross(r, P)
    T_i = 0.5 * u_i @ Mt @ u_i + 0.5 * m_p * v_pi @ v_pi + 0.5 * w_pi @ I_p @ w_pi
    T_f = 0.5 * u_f @ Mt @ u_f + 0.5 * m_p * v_pf @ v_pf + 0.5 * w_pf @ I_p @ w_pf
    return CaptureResult(u_f, v_pf, w_pf, P, float(T_i - T_f))
