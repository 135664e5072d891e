"""The stand's frame chain (docs/conventions.md): W lab, B platform base, T platform top,
A active docking unit (on T), P passive docking unit (in W), S sensor (in P).

:func:`stand_geometry` packs the chain the coupling kernels map through
(``rt.dynamics.coupling.pack_geometry``): P in B (both placed in W by the stand file) and T in
A (the inverse of the active unit's mount, A in T). :func:`active_in_passive`,
:func:`base_in_passive` and :func:`gravity_in_P` are the same chain for the emulated stand and
the digital reference: the one implementation of the stand's frames. Not real-time (at
construction and for summaries).
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


def compose_pose(p_XY: np.ndarray, R_XY: np.ndarray, p_YZ: np.ndarray,
                 R_YZ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Z in X from Y in X and Z in Y: ``(p_XY + R_XY p_YZ, R_XY R_YZ)`` (positions in the
    first frame's components; ``R_XY`` maps Y components to X components)."""
    return p_XY + R_XY @ p_YZ, R_XY @ R_YZ


def relative_pose(p_CX: np.ndarray, R_CX: np.ndarray, p_CY: np.ndarray,
                  R_CY: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Y in X from X and Y both in a common frame C: ``(R_CX^T (p_CY - p_CX), R_CX^T R_CY)``."""
    return R_CX.T @ (p_CY - p_CX), R_CX.T @ R_CY


def passive_in_base(stand) -> tuple[np.ndarray, np.ndarray]:
    """P in B, ``(p_BP, R_BP)``, from B and P in W (the stand file's geometry)."""
    return relative_pose(stand.platform_base.p, stand.platform_base.R, stand.passive_mount.p, stand.passive_mount.R)


def base_in_passive(stand) -> tuple[np.ndarray, np.ndarray]:
    """B in P, ``(p_PB, R_PB)``, from B and P in W (the emulated stand's world)."""
    return relative_pose(stand.passive_mount.p, stand.passive_mount.R, stand.platform_base.p, stand.platform_base.R)


def active_in_passive(stand, p_BT: np.ndarray, R_BT: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A in P, ``(p_PA, R_PA)``, for the platform top T at ``(p_BT, R_BT)`` in B: the chain
    W -> B -> T -> A, seen from P (B and P in W, A in T: the stand file's geometry)."""
    p_WT, R_WT = compose_pose(stand.platform_base.p, stand.platform_base.R, p_BT, R_BT)
    p_WA, R_WA = compose_pose(p_WT, R_WT, stand.active_mount.p, stand.active_mount.R)
    return relative_pose(stand.passive_mount.p, stand.passive_mount.R, p_WA, R_WA)


def gravity_in_P(stand, g: float) -> np.ndarray:
    """The lab's gravity ``[0, 0, -g]`` (m/s^2, along -z of W) in the passive unit's frame P,
    which hangs fixed in the lab: ``R_WP^T [0, 0, -g]``. Constant; the mechanism on the
    platform sees it in A through the platform's attitude."""
    return stand.passive_mount.R.T @ np.array([0.0, 0.0, -float(g)])


def stand_geometry(stand) -> np.ndarray:
    """``rt.dynamics.coupling.pack_geometry`` of a stand (rt.config.stand.Stand): P in B and T in A."""
    p_BP_B, R_BP = passive_in_base(stand)
    p_AT_A, R_AT = inverse_pose(stand.active_mount.p, stand.active_mount.R)
    return CP.pack_geometry(p_BP_B, quaternion_of(R_BP), p_AT_A, quaternion_of(R_AT))
