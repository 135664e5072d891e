"""Pinocchio's C++ ABA in a compiled loop through the pin wheel's own library
(bench/pinocchio_cpp.py): it builds, computes what pin.aba computes (array-equal) and what our
ABA computes (1e-9), and times itself. Skipped, with the reason, where the bench extra or a C++
compiler is missing."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup():
    pin = pytest.importorskip("pinocchio")
    from bench.pinocchio_cpp import load
    from bench.tree import PRESET, bench_inputs
    from rt.dynamics.tree_pinocchio import PinTree
    from sim_stand.tree.model import TreeMechanism
    mech = TreeMechanism(PRESET)
    pt = PinTree(mech.tree, floating=False)
    p, pd, om, fext, grav, a0, g = bench_inputs(mech)
    cpp, why = load(mech.tree, grav, pt.order)
    if cpp is None:
        pytest.skip(why)
    pt.model.gravity = pin.Motion(grav, np.zeros(3))
    return pin, mech, pt, cpp, (p, pd, om, fext, grav, a0, g)


def test_the_compiled_loop_computes_what_pin_aba_computes(setup):
    pin, mech, pt, cpp, (p, pd, om, fext, grav, a0, g) = setup
    rng = np.random.default_rng(4)
    from rt.dynamics.tree import tree_forward_dynamics
    W = mech.tree.new_work()
    for _ in range(20):
        p_, pd_, g_ = p + rng.normal(size=3) * 0.1, rng.normal(size=3), g + rng.normal(size=3) * 10
        f_ = fext + rng.normal(size=fext.shape) * 20
        cpp.set(p_, pd_, g_, f_)
        assert cpp.run(3) > 0.0
        ref = pt.ours(np.asarray(pin.aba(pt.model, pt.data, pt.joints(p_), pt.joints(pd_), pt.joints(g_),
                                         pt.fext(f_))).copy())
        assert np.array_equal(cpp.ddq(), ref)
        pdd, S0 = np.zeros(mech.n), np.zeros(6)
        assert tree_forward_dynamics(mech.tree.params, W, p_, pd_, om, f_, a0, g_, pdd, S0)
        assert np.max(np.abs(pdd - ref)) <= 1e-9 * max(1.0, np.max(np.abs(ref)))
