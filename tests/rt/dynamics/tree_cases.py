"""Trees for the tree-dynamics tests: a random tree with mixed joints, massless fictitious
bodies and offsets, and random states of it on a moving base."""
from __future__ import annotations

import numpy as np

from rt.dynamics.tree_model import TreeBody, TreeModel


def random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def random_inertia(rng, mass: float) -> np.ndarray:
    R = random_rotation(rng)
    a, b, c = rng.uniform(0.02, 0.3, size=3)
    # a solid box's principal moments (always a valid inertia)
    d = mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    return R @ np.diag(d) @ R.T


def random_tree(seed: int, n: int = 8, massless: tuple[int, ...] = (2,)) -> TreeModel:
    """``n`` bodies, predecessors drawn at random (so branches), P and R joints about random
    joint-frame axes, random joint placements, body ``massless`` massless (a fictitious body of a
    composite joint; it always has a child with mass)."""
    rng = np.random.default_rng(seed)
    bodies = []
    for j in range(n):
        if j == 0:
            parent = -1
        elif j - 1 in massless:
            parent = j - 1
        else:
            parent = int(rng.integers(-1, j))
        joint = "P" if rng.random() < 0.35 else "R"
        mass = 0.0 if j in massless else float(rng.uniform(0.5, 8.0))
        bodies.append(TreeBody(
            name=f"b{j}", parent=parent, joint=joint, axis=int(rng.integers(0, 3)),
            l=rng.uniform(-0.4, 0.4, size=3), gamma=random_rotation(rng), mass=mass,
            com=rng.uniform(-0.2, 0.2, size=3) if mass else np.zeros(3),
            inertia_com=random_inertia(rng, mass) if mass else np.zeros((3, 3))))
    return TreeModel(bodies)


def random_state(seed: int, n: int) -> dict:
    """Joint state, base motion (frame 0), gravity (frame 0), joint forces and external wrenches."""
    rng = np.random.default_rng(1000 + seed)
    return dict(p=rng.uniform(-1.0, 1.0, n), pd=rng.uniform(-2.0, 2.0, n), g=rng.uniform(-20, 20, n),
                v0=rng.uniform(-1, 1, 3), omega0=rng.uniform(-0.8, 0.8, 3), w0=rng.uniform(-3, 3, 3),
                eps0=rng.uniform(-2, 2, 3), grav=rng.uniform(-10, 10, 3), fext=rng.uniform(-50, 50, (n, 6)),
                R_W0=random_rotation(rng), p_W0=rng.uniform(-1, 1, 3))
