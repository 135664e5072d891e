"""Readers shared by every config kind: orientations and poses.

An orientation table describes a child frame relative to its parent, in exactly one of three
forms (docs/conventions.md):

* ``quaternion_wxyz = [w, x, y, z]``: ``q_parent_child`` (Hamilton, scalar first), unit to 1e-6;
* ``sequence = "yzx"``, ``angles_deg = [a1, a2, a3]``: the child frame is reached from the
  parent by rotating about the *current* axes in that order (the ring of
  [Golubev & Yaskevich, §3] uses y, z, x);
* ``dcm = [[...], [...], [...]]``: ``R_parent_child``, orthonormal to 1e-6 with determinant +1.
"""
from __future__ import annotations

import numpy as np

from rt.dynamics import spatial
from rt.config._schema import Table

UNIT_TOL = 1e-6


def read_orientation(t: Table, name: str, default_identity: bool = True) -> np.ndarray:
    """``R_parent_child`` from the orientation table ``name`` of ``t`` (identity if absent)."""
    if not t.has(name):
        if default_identity:
            return np.eye(3)
        raise t.error(name, "required key is missing")
    o = t.table(name)
    forms = [k for k in ("quaternion_wxyz", "sequence", "dcm") if o.has(k)]
    if len(forms) != 1:
        raise o.error("", "give exactly one of quaternion_wxyz, sequence (+ angles_deg), dcm"
                      + (f"; found {', '.join(forms)}" if forms else ""))
    R = np.empty((3, 3))
    if forms[0] == "quaternion_wxyz":
        q = o.vector("quaternion_wxyz", 4, ge=-1.0 - UNIT_TOL, le=1.0 + UNIT_TOL)
        n = float(np.linalg.norm(q))
        if n < 0.5:
            raise o.error("quaternion_wxyz", f"degenerate quaternion (norm {n:.3g})")
        if abs(n - 1.0) > UNIT_TOL:
            raise o.error("quaternion_wxyz", f"not a unit quaternion (norm {n:.9g}, tolerance {UNIT_TOL})")
        spatial.quat_to_dcm(q / n, R)
    elif forms[0] == "sequence":
        seq = o.str("sequence")
        try:
            axes = spatial.sequence_codes(seq)
        except ValueError as e:
            raise o.error("sequence", str(e)) from None
        ang = np.radians(o.vector("angles_deg", 3))
        R_cp = np.empty((3, 3))
        spatial.dcm_from_sequence(axes, ang, R_cp)
        R = R_cp.T.copy()
    else:
        R = o.array("dcm", (3, 3))
        err = float(np.abs(R @ R.T - np.eye(3)).max())
        if err > UNIT_TOL:
            raise o.error("dcm", f"not orthonormal (max |R R^T - I| = {err:.3g})")
        if np.linalg.det(R) < 0:
            raise o.error("dcm", "determinant is -1 (a reflection, not a rotation)")
    o.done()
    return R


def read_pose(t: Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A pose table ``{position_m = [..], orientation = {...}}``: (p_parent_child_parent, R_parent_child)."""
    p = t.table(name)
    pos = p.vector("position_m", 3)
    R = read_orientation(p, "orientation")
    p.done()
    return pos, R


def read_inertia(t: Table, name: str = "inertia_kgm2") -> np.ndarray:
    """A 3x3 inertia tensor (kg m^2): symmetric, positive definite, and with principal moments
    that satisfy the triangle inequality (each at most the sum of the other two: a real body)."""
    J = t.array(name, (3, 3))
    if np.abs(J - J.T).max() > 1e-9 * max(1.0, np.abs(J).max()):
        raise t.error(name, "not symmetric")
    ev = np.linalg.eigvalsh(J)
    if ev.min() <= 0.0:
        raise t.error(name, f"not positive definite (eigenvalues {ev.round(6).tolist()})")
    if ev[2] > ev[0] + ev[1] + 1e-9 * ev[2]:
        raise t.error(name, f"principal moments {ev.round(6).tolist()} violate the triangle inequality "
                      "(largest exceeds the sum of the other two): no real body")
    return J

