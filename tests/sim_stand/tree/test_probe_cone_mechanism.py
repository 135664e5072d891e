"""The probe-cone mechanism (config/mechanisms/probe_cone.toml) on the tree kernels: config
errors, Pinocchio oracles on its tree, energy conservation, joint devices, statics."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from rt.config import ConfigError
from sim_stand.mechanism.config import Devices
from sim_stand.tree.config import load_tree_mechanism
from sim_stand.tree.model import TreeMechanism
from tests.rt.dynamics.tree_cases import random_state

ROOT = Path(__file__).resolve().parents[3]
PROBE = ROOT / "config/mechanisms/probe_cone.toml"


@pytest.fixture(scope="module")
def probe():
    return TreeMechanism(PROBE)


def test_probe_cone_tree_structure(probe):
    assert probe.names == ("housing/y", "housing", "rod")
    b = probe.cfg.bodies
    assert [x.parent for x in b] == [-1, 0, 1]
    assert [(x.joint, x.axis) for x in b] == [("R", 1), ("R", 2), ("P", 0)]
    assert b[0].mass == 0.0 and b[1].mass == 12.0 and b[2].mass == 5.0
    assert probe.cfg.contact_body == 2
    assert probe.cfg.engagement[2].one_way and probe.cfg.engagement[2].below == -0.12


def _write(tmp_path, text):
    p = tmp_path / "m.toml"
    p.write_text(text)
    return p


BASE = PROBE.read_text()


@pytest.mark.parametrize("edit,key,reason", [
    (lambda s: s.replace('predecessor = "housing"', 'predecessor = "hosing"'), "bodies[1].predecessor", "unknown body"),
    (lambda s: s.replace('axes = ["y", "z"]', 'axes = ["y"]'), "bodies[0].joint.axes", "needs 2 axes"),
    (lambda s: s.replace('axes = ["y", "z"]', 'axes = ["y", "w"]'), "bodies[0].joint.axes", "'w' is not one of"),
    (lambda s: s.replace('type = "R2"', 'type = "U"'), "bodies[0].joint.type", "must be one of"),
    (lambda s: s + '\n[[loops]]\nroot = "base"\n', "loops", "loop reduction"),
    (lambda s: s.replace("below_m = -0.12", "below_mm = -0.12"), "bodies[1].joint.brake_engagement",
     "below_m"),
    (lambda s: s.replace('body = "rod"', 'body = "head"'), "contact_link.body", "unknown body"),
    (lambda s: s.replace("mass_kg = 5.0", "mass_kg = -5.0"), "bodies[1].mass_kg", ""),
])
def test_config_errors_name_file_key_reason(tmp_path, edit, key, reason):
    p = _write(tmp_path, edit(BASE))
    with pytest.raises(ConfigError) as e:
        load_tree_mechanism(p)
    assert e.value.file == str(p)
    assert e.value.key.startswith(key), e.value.key
    assert reason in str(e.value)


def test_pinocchio_oracles_on_probe_cone_tree(probe):
    pin = pytest.importorskip("pinocchio")
    from tests.rt.dynamics.test_tree import TOL, evaluate, pin_state, rel
    for k in range(4):
        st = random_state(500 + k, probe.n)
        st["p"] = np.array([0.1, -0.08, -0.2]) * (k + 1) / 4
        A, b, pdd_aba, pdd_chol, S_aba, S_rec = evaluate(probe.tree, st)
        pt, q, v, a, fext = pin_state(probe.tree, st, pdd_aba)
        M = pin.crba(pt.model, pt.data, q)
        M = np.triu(M) + np.triu(M, 1).T
        assert rel(A, pt.matrix(M[6:, 6:])) < TOL
        a_free = a.copy()
        a_free[6:] = 0.0
        assert rel(b, st["g"] - pt.ours(pin.rnea(pt.model, pt.data, q, v, a_free, fext)[6:])) < TOL
        assert rel(pdd_aba, pdd_chol) < TOL
        tau = pin.rnea(pt.model, pt.data, q, v, a, fext)
        assert rel(pt.ours(tau[6:]), st["g"]) < TOL
        assert rel(S_aba, -tau[:6]) < TOL and rel(S_rec, -tau[:6]) < TOL
    # pin.aba itself on the probe-cone tree: a fixed base whose acceleration is Pinocchio's gravity
    from rt.dynamics.tree_pinocchio import PinTree
    st = dict(random_state(600, probe.n), omega0=np.zeros(3), eps0=np.zeros(3), v0=np.zeros(3))
    _, _, pdd, _, _, _ = evaluate(probe.tree, st)
    pt = PinTree(probe.tree, floating=False)
    pt.model.gravity = pin.Motion(st["grav"] - st["w0"], np.zeros(3))
    got = pin.aba(pt.model, pt.data, pt.joints(st["p"]), pt.joints(st["pd"]), pt.joints(st["g"]),
                  pt.fext(st["fext"]))
    assert rel(pdd, pt.ours(got)) < TOL


def _springs_only(cfg):
    devs = tuple(Devices(spring=d.spring) for d in cfg.devices)
    return dataclasses.replace(cfg, devices=devs)


@pytest.mark.parametrize("gravity", [(0.0, 0.0, 0.0), (-9.80665, 0.0, 0.0)], ids=["orbit", "stand"])
def test_energy_conserved_with_springs_only(gravity):
    """Springs, no damping, brake or stops; base at rest; 10 s at the emulator's 0.1 ms step
    (RK4): |E(t) - E(0)| <= 1e-6 of the energy's scale."""
    cfg = dataclasses.replace(_springs_only(load_tree_mechanism(PROBE)), gravity_0=np.array(gravity))
    m = TreeMechanism(cfg)
    x = np.array([0.12, -0.09, -0.15, 0.6, 0.9, 0.4])
    e0 = m.energy(x)
    scale = abs(e0["kinetic"]) + abs(e0["spring"]) + abs(e0["gravity"])
    worst = 0.0
    for _ in range(10):
        m.step_rk4(x, 1e-4, nsteps=10_000)
        worst = max(worst, abs(m.energy(x)["total"] - e0["total"]))
    assert worst <= 1e-6 * scale, (worst, scale)
    assert np.max(np.abs(x[:3])) > 0.05          # it really moved


def test_axial_brake_works_past_the_spring_stroke_retracting_only(probe):
    bm = probe.base_motion_static()
    o = probe.evaluate([0, 0, -0.05, 0, 0, -0.3], bm)
    assert o.dev_force[2, 2] == 0.0                             # within the spring stroke: no brake
    assert o.dev_force[2, 0] == pytest.approx(120.0 + 500.0 * 0.05)
    o = probe.evaluate([0, 0, -0.2, 0, 0, -0.3], bm)
    assert o.dev_force[2, 2] == pytest.approx(650.0, rel=1e-3)  # past it, retracting: the brake holds
    o = probe.evaluate([0, 0, -0.2, 0, 0, 0.3], bm)
    assert o.dev_force[2, 2] == 0.0                             # rebound: released (one-way)
    o = probe.evaluate([0.2, 0, 0, 0, 0, 0], bm)
    assert o.dev_force[0, 5] < -0.05 * 2.0e5                    # gimbal past its 0.14 rad stop


def test_rest_on_the_stand_base_carries_the_weight(probe):
    """Settle on the stand (1 g along -x0): the rod rests on its forward stop (preload > weight),
    the gimbal centred; the base wrench is then the mechanism's weight, its moment about O_0 that
    of the weight at the centre of mass (independent statics)."""
    x = probe.home_state()
    bm = probe.base_motion_static()
    probe.step_rk4(x, 1e-4, bm, nsteps=20_000)
    o = probe.evaluate(x, bm)
    assert np.max(np.abs(o.xdot)) < 1e-6
    # on the forward stop: preload - weight = (spring rate + stop stiffness) x overtravel
    assert x[2] == pytest.approx((120.0 - 5.0 * 9.80665) / (500.0 + 2.0e6), rel=1e-6)
    assert np.abs(x[:2]).max() < 1e-9
    g0 = probe.cfg.gravity_0
    m = sum(b.mass for b in probe.cfg.bodies)
    assert o.base_wrench[:3] == pytest.approx(m * g0, abs=1e-6)
    v = probe.tree.work_views(probe.work)
    mom = sum(np.cross(v["o"][j] + v["tau"][j].T @ b.com, b.mass * g0) for j, b in enumerate(probe.cfg.bodies))
    assert o.base_wrench[3:] == pytest.approx(mom, abs=1e-6)


def test_link_state_is_the_head_frame(probe):
    x = np.array([0.05, -0.03, -0.1, 0.2, -0.1, -0.3])
    probe.evaluate(x, np.zeros(12))
    pose, tw = probe.link_state()
    # finite difference of the head position along the motion
    h = 1e-7
    x2 = x.copy()
    x2[:3] += h * x[3:]
    probe.evaluate(x2, np.zeros(12))
    pose2, _ = probe.link_state()
    assert (pose2[:3] - pose[:3]) / h == pytest.approx(tw[:3], abs=1e-6)
    assert np.linalg.norm(pose[:3]) == pytest.approx(-0.50 + 0.45 + 0.55 - 0.1, abs=0.02)
