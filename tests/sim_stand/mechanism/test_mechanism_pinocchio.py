"""Each leg chain's CRBA mass matrix A_k and bias b_k (with the base's transport motion and
gravity) equal Pinocchio's crba / rnea on the same chain rooted on a free-flyer that carries the
base motion, to 1e-10 (relative to the largest entry)."""
import numpy as np
import pytest
from conftest import make_mech, random_state

pin = pytest.importorskip("pinocchio")

from sim_stand.mechanism import layout as L  # noqa: E402

_JM = {(L.JOINT_R, 0): "JointModelRX", (L.JOINT_R, 1): "JointModelRY", (L.JOINT_R, 2): "JointModelRZ",
       (L.JOINT_P, 0): "JointModelPX", (L.JOINT_P, 1): "JointModelPY", (L.JOINT_P, 2): "JointModelPZ"}


def pin_leg_model(leg):
    model = pin.Model()
    jid = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    model.appendBodyToJoint(jid, pin.Inertia.Zero(), pin.SE3.Identity())
    for j in range(leg.n):
        M = pin.SE3(np.asarray(leg.gamma[j]).T.copy(), np.asarray(leg.l[j], float).copy())
        jid = model.addJoint(jid, getattr(pin, _JM[(leg.jtypes[j], leg.axes[j])])(), M, f"j{j}")
        m = leg.mass[j]
        if m > 0:
            d = np.asarray(leg.com[j], float)
            Ic = np.asarray(leg.inertia_O[j]) - m * (d @ d * np.eye(3) - np.outer(d, d))
            model.appendBodyToJoint(jid, pin.Inertia(m, d, Ic), pin.SE3.Identity())
    return model


@pytest.mark.parametrize("leg_type", ("UPS", "SPU", "UCU", "RUS", "RSU"))
def test_leg_crba_and_bias_equal_pinocchio(leg_type):
    mech = make_mech(leg_type, spring=None, damping=0.0, brake=None, emd=None, drive=None,
                     end_stops=None)
    rng = np.random.default_rng(5)
    for _ in range(2):
        x = random_state(mech, rng)
        a0, om0, eps0 = rng.normal(0, 0.5, 3), rng.normal(0, 0.4, 3), rng.normal(0, 0.4, 3)
        g = mech.gravity_0
        mech.evaluate(x, np.concatenate([a0, om0, eps0, g]))
        for k, leg in enumerate(mech.legs):
            n = leg.n
            model = pin_leg_model(leg)
            model.gravity.linear = g.copy()
            data = model.createData()
            p = mech.view.p[k, :n].copy()
            pd = mech.view.pd[k, :n].copy()
            q = np.concatenate([np.zeros(3), [0, 0, 0, 1.0], p])
            v = np.concatenate([np.zeros(3), om0, pd])
            a = np.concatenate([a0, eps0, np.zeros(n)])
            Mp = pin.crba(model, data, q)
            Mp = np.triu(Mp) + np.triu(Mp, 1).T
            tau = pin.rnea(model, data, q, v, a)
            A = mech.ws.A[k, :n, :n]
            b = mech.ws.b[k, :n]
            assert np.abs(A - Mp[6:, 6:]).max() <= 1e-10 * np.abs(Mp[6:, 6:]).max()
            assert np.abs(b + tau[6:]).max() <= 1e-10 * max(np.abs(tau[6:]).max(), 1e-3)
