"""The stand's frame chain (docs/conventions.md): W lab, B platform base, T platform top,
A active docking unit (on T), P passive docking unit (in W), S sensor (in P).

:func:`stand_geometry` packs the chain the coupling kernels map through
(``rt.dynamics.coupling.pack_geometry``): P in B (both placed in W by the stand file) and T in
A (the inverse of the active unit's mount, A in T). Not real-time (at construction).
"""
from __future__ import annotations

import numpy as np

from rt.dynamics import coupling as CP
from rt.dynamics import spatial as SP


def inverse_pose(p: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Child in parent ``(p, R)`` -> parent in child ``(-R^T p, R^T)``."""
    return -R.T @ p, R.T


def quaternion_of(R: np.ndarray) -> np.ndarray:
    """The unit quaternion [w, x, y, z] of a rotation matrix (a new array)."""
    q = np.zeros(4)
    SP.dcm_to_quat(np.ascontiguousarray(R, dtype=np.float64), q)
    return q


def stand_geometry(stand) -> np.ndarray:
    """``rt.dynamics.coupling.pack_geometry`` of a stand (rt.config.stand.Stand): P in B and T in A."""
    pB, RB = stand.platform_base.p, stand.platform_base.R      # B in W
    pP, RP = stand.passive_mount.p, stand.passive_mount.R      # P in W
    p_BP_B = RB.T @ (pP - pB)
    R_BP = RB.T @ RP
    p_AT_A, R_AT = inverse_pose(stand.active_mount.p, stand.active_mount.R)
    return CP.pack_geometry(p_BP_B, quaternion_of(R_BP), p_AT_A, quaternion_of(R_AT))
