"""Tree-dynamics figures (issue 24): the probe-cone mechanism's ABA and CRBA (seed 000 §2.7,
§2.10) and Pinocchio's ABA on the same model in the same run. A missing Pinocchio gives ``None``
plus a ``*_note``."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
from numba import njit

from bench.mechanism import median_us
from rt.dynamics.tree import tree_forward_dynamics, tree_mass_matrix

ROOT = Path(__file__).resolve().parent.parent
PRESET = ROOT / "config/mechanisms/probe_cone.toml"


@njit(cache=True)
def _aba_loop(P, W, p, pd, om, fext, a0, g, pdd, S0, n):
    s = 0.0
    for _ in range(n):
        tree_forward_dynamics(P, W, p, pd, om, fext, a0, g, pdd, S0)
        s += pdd[0]
    return s


@njit(cache=True)
def _crba_loop(P, W, p, pd, om, A, n):
    s = 0.0
    for _ in range(n):
        tree_mass_matrix(P, W, p, pd, om, A)
        s += A[0, 0]
    return s


def _loop_us(fn, reps: int, batches: int) -> float:
    fn(10)
    out = []
    for _ in range(batches):
        t0 = time.perf_counter()
        fn(reps)
        out.append((time.perf_counter() - t0) / reps * 1e6)
    return statistics.median(out)


def run(quick: bool = False) -> dict:
    from sim_stand.tree.model import TreeMechanism

    reps, batches = (20000, 5) if quick else (200000, 15)
    mech = TreeMechanism(PRESET)
    n = mech.n
    P, W = mech.tree.params, mech.tree.new_work()
    p = np.array([0.05, -0.03, -0.1])
    pd = np.array([0.2, -0.1, -0.3])
    om = np.zeros(3)
    fext = np.zeros((n, 6))
    fext[n - 1] = [-150.0, 20.0, -10.0, 1.0, 5.0, -3.0]
    grav = mech.cfg.gravity_0
    a0 = np.concatenate([-grav, np.zeros(3)])
    g = np.array([-12.0, 8.0, 150.0])
    pdd, S0, A = np.zeros(n), np.zeros(6), np.zeros((n, n))
    fig: dict = {}
    fig["tree_aba_us"] = _loop_us(lambda k: _aba_loop(P, W, p, pd, om, fext, a0, g, pdd, S0, k), reps, batches)
    fig["tree_crba_us"] = _loop_us(lambda k: _crba_loop(P, W, p, pd, om, A, k), reps, batches)
    fig["tree_dynamics_note"] = (f"probe-cone tree ({n} joints: gimbal R_y R_z, axial P_x), compiled loop; "
                                 "ABA = kinematics + body bias + ABA passes 2-3 with the base wrench; "
                                 "CRBA = kinematics + A")
    fig["tree_aba_python_call_us"] = median_us(
        lambda: tree_forward_dynamics(P, W, p, pd, om, fext, a0, g, pdd, S0), reps // 10, batches)
    try:
        import pinocchio as pin
        from rt.dynamics.tree_pinocchio import PinTree
        pt = PinTree(mech.tree, floating=False)
        pt.model.gravity = pin.Motion(np.asarray(grav, float), np.zeros(3))
        q, v, tau = pt.joints(p), pt.joints(pd), pt.joints(g)
        fx = pt.fext(fext)
        fig["pinocchio_aba_us"] = median_us(lambda: pin.aba(pt.model, pt.data, q, v, tau, fx), reps // 10, batches)
        fig["pinocchio_aba_note"] = ("pin.aba on the same probe-cone tree (fixed base, gravity, external "
                                     "wrench), Python call; compared with tree_aba_python_call_us")
        fig["tree_aba_over_pinocchio_aba"] = fig["tree_aba_python_call_us"] / fig["pinocchio_aba_us"]
    except ImportError as e:
        fig["pinocchio_aba_us"] = None
        fig["pinocchio_aba_note"] = f"pinocchio not installed ({e}); pip install '.[test]'"
        fig["tree_aba_over_pinocchio_aba"] = None
    fig.update(emulator_realtime_factor(quick))
    return fig


def emulator_realtime_factor(quick: bool = False) -> dict:
    """The emulated stand with the probe-cone case's mechanism and interface at its 10 kHz
    physics: the platform holding the active unit so that the probe head rests on the socket's
    bottom (the preloaded axial spring keeps it there: one head-bottom contact, the latches
    past the lip), one controller period (1 ms, 10 physics steps) per call, as the emulator
    advances it. Emulated time over wall time."""
    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from sim_stand.world import StandWorld
    from sim_stand.world_config import load_emulator

    stand = load_stand(ROOT / "config/stand.toml")
    emu = load_emulator(None).for_case(load_case(ROOT / "config/cases/probe_cone.toml"))
    world = StandWorld(stand, emu)
    # A at x_P = head just on the bottom (x_P = 0.075) - the 0.50 m extended probe (resting 40 um
    # past its forward stop under its preload) and 0.1 mm more: the preload less the rod's weight
    # keeps the head on the bottom.
    # The top's z = x_PA + 2.5 m (config/stand.toml: P at 2.85 m, A 0.35 m above T)
    x_pa = 0.12 - 0.045 - 0.50 - 4e-5 + 1e-4
    pose = stand.hexapod.home.copy()
    pose[2] = x_pa + 2.5
    world.reset(pose)
    cmd = world.platform.L.copy()
    n = 200 if quick else 2000
    for _ in range(50):
        world.advance(cmd, 1e-3)
    contacts = int(world.info[2])
    t0 = time.perf_counter()
    for _ in range(n):
        world.advance(cmd, 1e-3)
    wall = time.perf_counter() - t0
    return {"probe_cone_emulator_realtime_factor": n * 1e-3 / wall,
            "probe_cone_emulator_contacts": contacts,
            "probe_cone_emulator_note": (f"StandWorld.advance(1 ms) x {n} at {emu.physics_rate_hz:g} Hz "
                                         f"({emu.integrator}), head on the socket bottom, {contacts} contact(s)")}
