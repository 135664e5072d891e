"""Tree-structured multibody model on a moving base ([Yaskevich 2018a], its structure tables and
modified CRBA): the immutable packed parameters and the preallocated data of :mod:`rt.dynamics.tree`
(Pinocchio's Model/Data split).

A tree has bodies ``0 .. n-1``; body ``j`` hangs from ``parent[j] < j`` (``-1`` = the base, frame 0)
through one 1-DOF joint ``J_j`` ([Yaskevich 2018a, eqs. 1–2]): the joint frame sits on
the predecessor at ``l`` (predecessor frame) with the constant DCM ``gamma`` (predecessor frame ->
joint frame, ``x_J = gamma x_p``); the joint moves frame ``j`` relative to the joint frame by
a translation ``e_k p`` (prismatic) or the elementary frame rotation ``alpha^k(p)`` (revolute,
docs/conventions.md) about the joint frame's axis ``k`` in {0: x, 1: y, 2: z}. Composite joints (R2,
R3, U, S) are sequences of such joints joined by massless "fictitious" bodies (built by
the configuration loaders).

Body data: mass ``m``, centre of mass ``d`` and inertia about the centre of mass, in the body's
frame; stored as the 6x6 block ``M_j = [m 1, -m d~; m d~, I_O]`` with ``I_O = I_C + m (d.d 1 - d d^T)``
([Yaskevich 2018a, eq. 3], the inertia about the frame origin O_j).

``params`` (float64, 1-D, immutable): header :data:`HDR` then the blocks named in
:func:`param_layout`; ``work`` (float64, 1-D): the blocks of :func:`work_layout`. Integer data are
stored as exact small floats. Neither is touched by Python once built; the kernels read the
offsets from the header.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

JOINT_P, JOINT_R = 0, 1
JOINT_NAMES = {"P": JOINT_P, "R": JOINT_R}
AXES = {"x": 0, "y": 1, "z": 2}

# ------------------------------------------------------------------ params header
H_N = 0             # number of bodies / joints
H_TAG = 1           # TREE_TAG: tells a tree's params from a parallel mechanism's
H_P = 2             # 16 slots: param block offsets, in param_layout order
H_W = 18            # 32 slots: work block offsets, in work_layout order
H_PSIZE = 50        # size of the params array (callers may append their own blocks after it)
H_WSIZE = 51        # size of the work array the kernels use
HDR = 64
TREE_TAG = 7000.0

_PARAM_BLOCKS = (
    ("parent", (1,)),        # predecessor index, -1 = base
    ("jtype", (1,)),         # JOINT_P / JOINT_R
    ("axis", (1,)),          # 0, 1, 2 (joint-frame axis)
    ("l", (3,)),             # joint-frame origin on the predecessor, predecessor frame
    ("gamma", (3, 3)),       # DCM predecessor -> joint frame
    ("M", (6, 6)),           # body block about O_j, frame j
    ("c", (3,)),             # first moment m d, frame j
    ("RB", None),            # n x n: RB[i, j] = 1 if j is on the path from the base to i (RB[j, j] = 1)
)
_WORK_BLOCKS = (
    ("beta", (3, 3)),        # DCM predecessor -> j
    ("r", (3,)),             # O_p -> O_j, predecessor frame (beta and r are the motion transfer
                             # B = [beta, -beta r~; 0, beta]: a_j = B a_p + ...; B^T carries a wrench
                             # from O_j to O_p; the kernels apply it without forming the 6x6)
    ("phi", (6,)),           # Phi_j (frame j)
    ("om", (3,)),            # absolute angular velocity of j (frame j)
    ("h", (6,)),             # velocity-product acceleration (frame j)
    ("s", (6,)),             # external + gyroscopic wrench of the body (frame j, about O_j)
    ("tau", (3, 3)),         # DCM 0 -> j
    ("o", (3,)),             # O_j in frame 0
    ("vr", (3,)),            # velocity of O_j relative to the base, frame 0
    ("wr", (3,)),            # angular velocity of j relative to the base, frame 0
    ("a", (6,)),             # accelerations (recursions)
    ("f", (6,)),             # wrenches (recursions)
    ("Mh", (6, 6)),          # ABA articulated inertia
    ("sh", (6,)),            # ABA articulated bias
    ("U", (6,)),             # ABA Mh Phi
    ("aI", (1,)),            # ABA Phi^T Mh Phi
    ("nv", (6,)),            # ABA bias passed through the joint
    ("tmp", None),           # 8 x 6 x 6 scratch (not per body)
)
P_NAMES = [b[0] for b in _PARAM_BLOCKS]
W_NAMES = [b[0] for b in _WORK_BLOCKS]


def _layout(blocks, n: int, start: int) -> dict[str, tuple[int, tuple[int, ...]]]:
    out, off = {}, start
    for name, shp in blocks:
        if shp is None:
            shape = (n, n) if name == "RB" else (8, 6, 6)
        elif shp == (1,):
            shape = (n,)
        else:
            shape = (n,) + shp
        out[name] = (off, shape)
        off += int(np.prod(shape))
    out["_size"] = (off, ())
    return out


def param_layout(n: int) -> dict[str, tuple[int, tuple[int, ...]]]:
    return _layout(_PARAM_BLOCKS, n, HDR)


def work_layout(n: int) -> dict[str, tuple[int, tuple[int, ...]]]:
    return _layout(_WORK_BLOCKS, n, 0)


@dataclass(frozen=True)
class TreeBody:
    """One body and the joint that carries it ([Yaskevich 2018a] structure, body and joint tables).
    Frames as in the module docstring; ``gamma`` maps predecessor components to joint-frame
    components."""
    name: str
    parent: int
    joint: str                 # "P" or "R"
    axis: int                  # 0, 1, 2
    l: np.ndarray              # (3,)
    gamma: np.ndarray          # (3, 3)
    mass: float
    com: np.ndarray            # (3,), frame j
    inertia_com: np.ndarray    # (3, 3) about the centre of mass, frame j


def inertia_about_origin(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """I_O = I_C + m (d.d 1 - d d^T) (parallel axis: [Yaskevich 2018a, eq. 3] takes I about O_j)."""
    d = np.asarray(com, dtype=float)
    return np.asarray(inertia_com, dtype=float) + mass * (d @ d * np.eye(3) - np.outer(d, d))


def body_block(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """M_j = [m 1, -m d~; m d~, I_O] ([Yaskevich 2018a, eq. 3])."""
    c = mass * np.asarray(com, dtype=float)
    cx = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    M = np.zeros((6, 6))
    M[:3, :3] = mass * np.eye(3)
    M[:3, 3:] = -cx
    M[3:, :3] = cx
    M[3:, 3:] = inertia_about_origin(mass, com, inertia_com)
    return M


class TreeModel:
    """Immutable packed parameters of a tree (:attr:`params`) and its body names. Build once,
    outside the real-time loop; :meth:`new_work` gives a data array for the kernels."""

    def __init__(self, bodies: list[TreeBody]):
        n = len(bodies)
        if n == 0:
            raise ValueError("a tree needs at least one body")
        for j, b in enumerate(bodies):
            if not -1 <= b.parent < j:
                raise ValueError(f"body {b.name!r}: predecessor {b.parent} must be -1 (base) or < {j}")
            if b.joint not in JOINT_NAMES or b.axis not in (0, 1, 2):
                raise ValueError(f"body {b.name!r}: joint {b.joint!r} axis {b.axis}")
        self.n = n
        self.names = tuple(b.name for b in bodies)
        self.bodies = tuple(bodies)
        pl, wl = param_layout(n), work_layout(n)
        p = np.zeros(pl["_size"][0])
        p[H_N] = n
        p[H_TAG] = TREE_TAG
        for i, name in enumerate(P_NAMES):
            p[H_P + i] = pl[name][0]
        for i, name in enumerate(W_NAMES):
            p[H_W + i] = wl[name][0]
        p[H_PSIZE] = pl["_size"][0]
        p[H_WSIZE] = wl["_size"][0]
        v = self.views(p, pl)
        for j, b in enumerate(bodies):
            v["parent"][j] = b.parent
            v["jtype"][j] = JOINT_NAMES[b.joint]
            v["axis"][j] = b.axis
            v["l"][j] = b.l
            v["gamma"][j] = b.gamma
            v["M"][j] = body_block(b.mass, b.com, b.inertia_com)
            v["c"][j] = b.mass * np.asarray(b.com, dtype=float)
        RB = v["RB"]
        for i in range(n):
            k = i
            while k >= 0:
                RB[i, k] = 1.0
                k = bodies[k].parent
        p.flags.writeable = False
        self.params = p
        self.work_size = wl["_size"][0]

    @staticmethod
    def views(arr: np.ndarray, layout: dict) -> dict[str, np.ndarray]:
        return {k: arr[o:o + int(np.prod(s))].reshape(s) for k, (o, s) in layout.items() if k != "_size"}

    def new_work(self) -> np.ndarray:
        return np.zeros(self.work_size)

    def work_views(self, work: np.ndarray) -> dict[str, np.ndarray]:
        """Named views into a data array (tests, diagnostics)."""
        return self.views(work, work_layout(self.n))

    def param_views(self) -> dict[str, np.ndarray]:
        return self.views(self.params, param_layout(self.n))

    @property
    def parents(self) -> np.ndarray:
        return np.array([b.parent for b in self.bodies])

    def subtree(self, j: int) -> list[int]:
        """Bodies whose path from the base passes through ``j`` (``j`` included)."""
        RB = self.param_views()["RB"]
        return [i for i in range(self.n) if RB[i, j]]
