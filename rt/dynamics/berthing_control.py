"""Post-capture control by feedback linearization ([Zhu, Wang & Zheng, §5.2]; issue 25 item 3).

Partition the generalized speeds into the controlled ones (the main spacecraft's attitude rates
and the joint rates: theta) and the rest (the elastic rates, and here also the main spacecraft's
translation, which the paper pins and no actuator drives). With M~ u' = b + Q (b the bias forces
at Q = 0), eliminating the uncontrolled accelerations gives the Schur complement
M^ theta'' = c^ + k, M^ = M_cc - M_cu M_uu^-1 M_uc, c^ = b_c - M_cu M_uu^-1 b_u, and the control

    k = -M^ [D_1 theta' + D_2 (theta - theta_d)] - c^,   D_1 = diag(2 zeta_i omega_i), D_2 = diag(omega_i^2)

makes theta'' + D_1 theta' + D_2 (theta - theta_d) = 0 exactly (full, noise-free state, as the
paper assumes). The elastic coordinates are not controlled; they are reported. For the main
spacecraft's attitude, theta - theta_d is the rotation vector of the attitude error in its body
frame and theta' its body rate: linear for small errors (our choice; the paper uses Euler angles).
"""
from __future__ import annotations

import numpy as np


def schur_feedback(Mt, b, controlled, error, rate, zeta, omega) -> np.ndarray:
    """k (one per controlled speed) from the system's M~ and bias b (module docstring)."""
    Mt = np.asarray(Mt, float)
    b = np.asarray(b, float)
    c = np.asarray(controlled, dtype=int)
    rest = np.setdiff1d(np.arange(Mt.shape[0]), c)
    Mcc = Mt[np.ix_(c, c)]
    Mcu = Mt[np.ix_(c, rest)]
    Muu = Mt[np.ix_(rest, rest)]
    X = np.linalg.solve(Muu, np.column_stack([Mt[np.ix_(rest, c)], b[rest]]))
    M_hat = Mcc - Mcu @ X[:, :-1]
    c_hat = b[c] - Mcu @ X[:, -1]
    zeta = np.broadcast_to(np.asarray(zeta, float), c.shape)
    omega = np.broadcast_to(np.asarray(omega, float), c.shape)
    a_des = -(2.0 * zeta * omega) * np.asarray(rate, float) - omega ** 2 * np.asarray(error, float)
    return M_hat @ a_des - c_hat
