"""The kinematic record ``kin`` of the active docking unit A in the passive unit's frame P
(docs/models/world.md §2, §6): what the contact model, the mechanism's base motion and the
calibration rod read of the two units' motion. The emulated stand fills it from the platform
(``sim_stand.world.platform_kin``), the all-digital reference from the two vehicles' ports
(:func:`kin_from_ports`).
"""
from __future__ import annotations

from numba import njit

from rt.dynamics import spacecraft as S
from rt.jit import KERNEL

# allocation-free kernels: no NRT reference counting (rt/jit.py; ~15 % of the digital case's time)
_JIT = dict(KERNEL, error_model="numpy")

K_P = 0        # p_PA_P (3)
K_R = 3        # R_PA, row-major (9)
K_V = 12       # absolute velocity of A's origin, P components (3)
K_W = 15       # absolute angular velocity of A, P components (3)
K_A = 18       # absolute acceleration of A's origin, P components (3)
K_E = 21       # absolute angular acceleration of A, P components (3)
K_G = 24       # gravity, P components (3)
K_VP = 27      # absolute velocity of P's origin, P components (3) (zero on the stand)
K_WP = 30      # absolute angular velocity of P, P components (3)
KIN_LEN = 33


@njit(**_JIT)
def kin_from_ports(ws, kin):
    """A's and P's absolute kinematics in P (the ``K_*`` record; accelerations untouched,
    gravity zero) from the two vehicles' port states in ``ws`` (``rt.dynamics.spacecraft``
    layout, row 0 = A, row 1 = P, all in I; [Yaskevich 2018b, contact forces]):
    ``p_PA = R_IP^T (p_IA - p_IP)``, ``R_PA = R_IP^T R_IA``, and ``R_IP^T`` times each of A's
    and P's absolute velocity and angular velocity.

    Parameters
    ----------
    ws : float64[2, WS_LEN]
        The two vehicles' kinematic workspace (``rt.dynamics.spacecraft`` ``W_*`` layout), row 0
        the active vehicle, row 1 the passive: port origin positions ``W_PI`` (m), port DCMs
        ``R_ID`` at ``W_RID`` (row-major), absolute port velocities ``W_VI`` (m/s) and angular
        velocities ``W_WI`` (rad/s), all in I components. Read only.
    kin : float64[KIN_LEN]
        Output: the kinematic record of A in P (``K_*`` layout); position, DCM, velocities and
        gravity (set to zero) are written, the accelerations ``K_A``, ``K_E`` are left as they are.
    """
    for i in range(3):
        d = 0.0
        va = 0.0
        wa = 0.0
        vp = 0.0
        wp = 0.0
        for k in range(3):
            c = ws[1, S.W_RID + 3 * k + i]      # R_IP[k, i]
            d += c * (ws[0, S.W_PI + k] - ws[1, S.W_PI + k])
            va += c * ws[0, S.W_VI + k]
            wa += c * ws[0, S.W_WI + k]
            vp += c * ws[1, S.W_VI + k]
            wp += c * ws[1, S.W_WI + k]
        kin[K_P + i] = d
        kin[K_V + i] = va
        kin[K_W + i] = wa
        kin[K_VP + i] = vp
        kin[K_WP + i] = wp
        kin[K_G + i] = 0.0
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += ws[1, S.W_RID + 3 * k + i] * ws[0, S.W_RID + 3 * k + j]
            kin[K_R + 3 * i + j] = s
