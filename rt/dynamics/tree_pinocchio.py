"""The same tree as a Pinocchio model, for the oracle tests and the comparison benchmark
(``pin`` is a test dependency; nothing in the loop imports this module).

The base is a free-flyer with a massless root body whose frame is frame 0. Joint ``j`` is placed
on its predecessor by the SE3 (R = gamma^T, t = l) and is Pinocchio's RX/RY/RZ or PX/PY/PZ: the
papers' elementary frame rotation alpha^k(q) (docs/conventions.md) is R_{j,J}, whose transpose is
Pinocchio's joint rotation R_{J,j}(q) with the same sign of q. Body inertias go in as (m, d, I_C).

Conversions (docs/models/tree.md, "Pinocchio oracle"):

* configuration ``[p_W0, q_W0 (x, y, z, w), p]``, velocity ``[v_0, omega_0, pd]`` with the base's
  twist in frame 0;
* Pinocchio's free-flyer acceleration is the spatial one, ``vdot_0 = w_0 - omega_0 x v_0`` (w_0 the
  classical acceleration of O_0 in frame 0);
* ``rnea`` returns on the free-flyer the wrench the root joint applies to the massless root body,
  i.e. minus the mechanism's wrench on its base;
* Pinocchio's algorithms assume that every joint's subtree occupies a contiguous range of the
  velocity vector, so the joints are added depth-first: :attr:`PinTree.order` lists our body
  indices in Pinocchio's order and :meth:`PinTree.joints` / :meth:`PinTree.ours` permute.
"""
from __future__ import annotations

import numpy as np

from rt.dynamics.tree_model import JOINT_NAMES, JOINT_R, TreeModel


def depth_first(tree: TreeModel) -> list[int]:
    children: dict[int, list[int]] = {}
    for j, b in enumerate(tree.bodies):
        children.setdefault(b.parent, []).append(j)
    out: list[int] = []
    stack = list(reversed(children.get(-1, [])))
    while stack:
        j = stack.pop()
        out.append(j)
        stack.extend(reversed(children.get(j, [])))
    return out


class PinTree:
    """``tree`` as a Pinocchio model on a free-flyer base (or, with ``floating=False``, on the
    fixed universe), gravity zero, joints depth-first."""

    def __init__(self, tree: TreeModel, floating: bool = True):
        import pinocchio as pin
        self.order = depth_first(tree)
        m = pin.Model()
        m.gravity = pin.Motion.Zero()
        root = 0
        if floating:
            root = m.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
            m.appendBodyToJoint(root, pin.Inertia.Zero(), pin.SE3.Identity())
        ids: dict[int, int] = {}
        for j in self.order:
            b = tree.bodies[j]
            parent = root if b.parent < 0 else ids[b.parent]
            axis = "XYZ"[b.axis]
            jm = getattr(pin, ("JointModelR" if JOINT_NAMES[b.joint] == JOINT_R else "JointModelP") + axis)()
            place = pin.SE3(np.asarray(b.gamma, dtype=float).T.copy(), np.asarray(b.l, dtype=float))
            ids[j] = m.addJoint(parent, jm, place, b.name)
            m.appendBodyToJoint(ids[j], pin.Inertia(float(b.mass), np.asarray(b.com, dtype=float),
                                                    np.asarray(b.inertia_com, dtype=float)), pin.SE3.Identity())
        self.model = m
        self.data = m.createData()

    def joints(self, x: np.ndarray) -> np.ndarray:
        """Our per-body vector in Pinocchio's joint order."""
        return np.asarray(x)[self.order]

    def ours(self, x: np.ndarray) -> np.ndarray:
        """Pinocchio's joint-ordered vector (or the last axis of a matrix) in our body order."""
        out = np.empty_like(x)
        out[..., self.order] = x
        return out

    def matrix(self, M: np.ndarray) -> np.ndarray:
        """Pinocchio's joint block of a mass matrix in our body order."""
        out = np.empty_like(M)
        out[np.ix_(self.order, self.order)] = M
        return out

    def q(self, R_W0, p_W0, p) -> np.ndarray:
        """Configuration from the base pose in the world and the joint coordinates."""
        import pinocchio as pin
        quat = pin.Quaternion(np.asarray(R_W0, dtype=float))
        return np.concatenate([p_W0, [quat.x, quat.y, quat.z, quat.w], self.joints(p)])

    def v(self, v0, omega0, pd) -> np.ndarray:
        return np.concatenate([v0, omega0, self.joints(pd)])

    def a(self, w0, eps0, v0, omega0, pdd) -> np.ndarray:
        """Pinocchio acceleration from the classical base acceleration [w_0; eps_0] (frame 0)."""
        return np.concatenate([np.asarray(w0) - np.cross(omega0, v0), eps0, self.joints(pdd)])

    def fext(self, fext: np.ndarray):
        """Pinocchio's per-joint external forces from the kernels' ``fext`` (n x 6, frame j about O_j)."""
        import pinocchio as pin
        out = pin.StdVec_Force()
        out.append(pin.Force.Zero())          # universe
        if self.model.njoints > len(self.order) + 1:
            out.append(pin.Force.Zero())      # base
        for j in self.order:
            out.append(pin.Force(np.asarray(fext[j, :3], dtype=float), np.asarray(fext[j, 3:], dtype=float)))
        return out


