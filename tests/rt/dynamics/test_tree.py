"""Tree dynamics on a moving base ([Yaskevich 2018a]) against Pinocchio (independent
implementation): CRBA's A and b vs pin.crba / pin.rnea, ABA vs A^-1 b and pin.aba, the base wrench
(§2.9 recursion and the ABA's own) vs the root wrench of pin.rnea. Tolerance 1e-9 relative."""
from __future__ import annotations

import numpy as np
import pytest

from rt.dynamics import tree as T
from rt.dynamics.tree_model import TreeBody, TreeModel
from tests.rt.dynamics.tree_cases import random_state, random_tree

pin = pytest.importorskip("pinocchio")
from rt.dynamics import tree_pinocchio as TP  # noqa: E402

TOL = 1e-9
TREES = [(seed, random_tree(seed)) for seed in (1, 2, 3)]


def rel(a, b):
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(1.0, np.max(np.abs(b)))


def evaluate(tree, st):
    """Our kernels at a state: A, b, p'' (ABA and Cholesky), base wrench (ABA and §2.9)."""
    n = tree.n
    P, W = tree.params, tree.new_work()
    a0 = np.concatenate([st["w0"] - st["grav"], st["eps0"]])
    T.tree_kinematics(P, W, st["p"], st["pd"], st["omega0"])
    T.tree_body_bias(P, W, st["fext"])
    A, b = np.zeros((n, n)), np.zeros(n)
    T.tree_crba(P, W, A)
    T.tree_bias(P, W, a0, st["g"], b)
    pdd_aba, S_aba = np.zeros(n), np.zeros(6)
    assert T.tree_aba(P, W, a0, st["g"], pdd_aba, S_aba)
    S_rec = np.zeros(6)
    T.tree_base_wrench(P, W, a0, st["g"], pdd_aba, S_rec)
    Af, pdd_chol = A.copy(), np.zeros(n)
    assert T.tree_solve(Af, b, pdd_chol, n)
    return A, b, pdd_aba, pdd_chol, S_aba, S_rec


def pin_state(tree, st, pdd):
    pt = TP.PinTree(tree)
    pt.model.gravity = pin.Motion(st["R_W0"] @ st["grav"], np.zeros(3))    # gravity in the world frame
    q = pt.q(st["R_W0"], st["p_W0"], st["p"])
    v = pt.v(st["v0"], st["omega0"], st["pd"])
    a = pt.a(st["w0"], st["eps0"], st["v0"], st["omega0"], pdd)
    return pt, q, v, a, pt.fext(st["fext"])


@pytest.mark.parametrize("seed,tree", TREES, ids=[f"random8-{s}" for s, _ in TREES])
@pytest.mark.parametrize("k", range(3))
def test_crba_bias_aba_base_wrench_match_pinocchio(seed, tree, k):
    st = random_state(10 * seed + k, tree.n)
    A, b, pdd_aba, pdd_chol, S_aba, S_rec = evaluate(tree, st)
    pt, q, v, a, fext = pin_state(tree, st, pdd_aba)
    model, data = pt.model, pt.data
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    assert rel(A, pt.matrix(M[6:, 6:])) < TOL
    # b = g - (bias at p'' = 0 with the base's acceleration, gravity and external wrenches)
    a_free = a.copy()
    a_free[6:] = 0.0
    tau0 = pin.rnea(model, data, q, v, a_free, fext)
    assert rel(b, st["g"] - pt.ours(tau0[6:])) < TOL
    assert rel(pdd_aba, pdd_chol) < TOL
    # the accelerations need exactly the joint forces g, and the root needs -S0 (massless root)
    tau = pin.rnea(model, data, q, v, a, fext)
    assert rel(pt.ours(tau[6:]), st["g"]) < TOL
    assert rel(S_aba, -tau[:6]) < TOL
    assert rel(S_rec, -tau[:6]) < TOL


@pytest.mark.parametrize("seed,tree", TREES[:2], ids=[f"random8-{s}" for s, _ in TREES[:2]])
def test_aba_matches_pinocchio_aba(seed, tree):
    """pin.aba itself: (1) a fixed base whose translational acceleration is Pinocchio's gravity;
    (2) a moving base with a massive root body carrying the wrench that makes its acceleration
    the prescribed one: pin.aba must return that base acceleration and our p''."""
    st = random_state(77 + seed, tree.n)
    # (1) fixed base, no rotation of the base: gravity = g_0 - w_0
    st1 = dict(st, omega0=np.zeros(3), eps0=np.zeros(3), v0=np.zeros(3))
    _, _, pdd, _, _, _ = evaluate(tree, st1)
    pt = TP.PinTree(tree, floating=False)
    pt.model.gravity = pin.Motion(st["grav"] - st["w0"], np.zeros(3))
    got = pin.aba(pt.model, pt.data, pt.joints(st["p"]), pt.joints(st["pd"]), pt.joints(st["g"]),
                  pt.fext(st["fext"]))
    assert rel(pdd, pt.ours(got)) < TOL
    # (2) moving base with a massive root body
    _, _, pdd, _, _, S0 = evaluate(tree, st)
    pt, q, v, a, fext = pin_state(tree, st, pdd)
    model = pt.model
    model.inertias[1] = pin.Inertia(500.0, np.array([0.1, -0.2, 0.05]), np.diag([40.0, 55.0, 70.0]))
    data = model.createData()
    tau = pin.rnea(model, data, q, v, a, fext)
    tau[6:] = pt.joints(st["g"])
    acc = pin.aba(model, data, q, v, tau, fext)
    assert rel(acc, a) < TOL


def test_single_pendulum_closed_form():
    """A point mass m on a massless rod of length L about z, fixed base, gravity -y:
    p'' = -(g/L) cos p - (joint torque)/(m L^2) sign conventions from first principles, and the
    base wrench = the rod's pull at the pivot."""
    m, L, grav = 2.0, 0.7, 9.81
    tree = TreeModel([TreeBody("bob", -1, "R", 2, np.zeros(3), np.eye(3), m, np.array([L, 0, 0]),
                               np.zeros((3, 3)))])
    P, W = tree.params, tree.new_work()
    p, pd = np.array([0.3]), np.array([1.1])
    T.tree_kinematics(P, W, p, pd, np.zeros(3))
    T.tree_body_bias(P, W, np.zeros((1, 6)))
    pdd, S0 = np.zeros(1), np.zeros(6)
    a0 = np.array([0.0, grav, 0.0, 0, 0, 0])       # w_0 - g_0 with g_0 = -g y
    torque = 0.5
    assert T.tree_aba(P, W, a0, np.array([torque]), pdd, S0)
    expect = -grav / L * np.cos(p[0]) + torque / (m * L * L)
    assert pdd[0] == pytest.approx(expect, rel=1e-13)
    # the bob's acceleration (inertial): tangential L pdd, centripetal L pd^2 towards the pivot
    c, s = np.cos(p[0]), np.sin(p[0])
    r = L * np.array([c, s, 0])
    acc = L * pdd[0] * np.array([-s, c, 0]) - L * pd[0] ** 2 * np.array([c, s, 0])
    f_rod = m * acc - m * np.array([0, -grav, 0])   # force the pivot applies to the bob
    assert S0[:3] == pytest.approx(-f_rod, abs=1e-12)
    assert S0[5] == pytest.approx(-torque, abs=1e-12)  # the joint's torque reacts on the base


def test_massless_subtree_is_refused():
    tree = TreeModel([TreeBody("ghost", -1, "R", 0, np.zeros(3), np.eye(3), 0.0, np.zeros(3), np.zeros((3, 3)))])
    P, W = tree.params, tree.new_work()
    T.tree_kinematics(P, W, np.zeros(1), np.zeros(1), np.zeros(3))
    T.tree_body_bias(P, W, np.zeros((1, 6)))
    assert not T.tree_aba(P, W, np.zeros(6), np.zeros(1), np.zeros(1), np.zeros(6))


def test_model_validation():
    with pytest.raises(ValueError, match="predecessor"):
        TreeModel([TreeBody("a", 0, "R", 0, np.zeros(3), np.eye(3), 1.0, np.zeros(3), np.eye(3))])
    tree = random_tree(5)
    RB = tree.param_views()["RB"]
    for i in range(tree.n):
        assert RB[i, i] == 1
        k = tree.bodies[i].parent
        while k >= 0:
            assert RB[i, k] == 1
            k = tree.bodies[k].parent
    assert not tree.params.flags.writeable
