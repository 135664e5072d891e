"""Tree-dynamics figures (issue 24): the probe-cone mechanism's ABA and CRBA
([Yaskevich 2018a, modified CRBA, open chains]) and Pinocchio's ABA on the same model in the same
run. A missing Pinocchio gives ``None`` plus a ``*_note``.

The ratios against Pinocchio are interleaved (bench/interleave.py): ``tree_aba_over_pinocchio_cpp``
our compiled loop against Pinocchio's C++ ``aba`` from the pin wheel's library in a compiled C++
loop (bench/pinocchio_cpp.py), ``tree_aba_over_pinocchio_py_call`` our call from Python
against ``pin.aba`` from Python (each pays its binding). Results are checked equal first."""
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


def bench_inputs(mech):
    """The benchmarked state of the probe-cone tree: joints off centre and moving, a contact
    wrench on the probe, gravity, joint forces; shared with bench/kernel_instructions.py."""
    n = mech.n
    p = np.array([0.05, -0.03, -0.1])
    pd = np.array([0.2, -0.1, -0.3])
    om = np.zeros(3)
    fext = np.zeros((n, 6))
    fext[n - 1] = [-150.0, 20.0, -10.0, 1.0, 5.0, -3.0]
    grav = np.asarray(mech.cfg.gravity_0, dtype=float)
    a0 = np.concatenate([-grav, np.zeros(3)])
    g = np.array([-12.0, 8.0, 150.0])
    return p, pd, om, fext, grav, a0, g


def run(quick: bool = False) -> dict:
    from bench.interleave import batch_timer, call_timer, interleaved
    from sim_stand.tree.model import TreeMechanism

    reps, batches = (20000, 5) if quick else (200000, 15)
    # short batches (~1 ms), many rounds: a batch the machine interrupts is an outlier the median drops
    rounds, inner = (21, 1000) if quick else (101, 1000)
    mech = TreeMechanism(PRESET)
    n = mech.n
    P, W = mech.tree.params, mech.tree.new_work()
    p, pd, om, fext, grav, a0, g = bench_inputs(mech)
    pdd, S0, A = np.zeros(n), np.zeros(6), np.zeros((n, n))
    fig: dict = {}
    fig["tree_aba_us"] = _loop_us(lambda k: _aba_loop(P, W, p, pd, om, fext, a0, g, pdd, S0, k), reps, batches)
    fig["tree_crba_us"] = _loop_us(lambda k: _crba_loop(P, W, p, pd, om, A, k), reps, batches)
    fig["tree_dynamics_note"] = (f"probe-cone tree ({n} joints: gimbal R_y R_z, axial P_x), compiled loop; "
                                 "ABA = kinematics + body bias + ABA passes 2-3 with the base wrench; "
                                 "CRBA = kinematics + A")
    fig["tree_aba_python_call_us"] = median_us(
        lambda: tree_forward_dynamics(P, W, p, pd, om, fext, a0, g, pdd, S0), reps // 10, batches)
    ours = pdd.copy()
    try:
        import pinocchio as pin
        from rt.dynamics.tree_pinocchio import PinTree
    except ImportError as e:
        why = f"pinocchio not installed ({e}); pip install -e '.[bench]'"
        for k in ("pinocchio_aba_us", "pinocchio_aba_cpp_us", "tree_aba_over_pinocchio_cpp",
                  "tree_aba_over_pinocchio_py_call"):
            fig[k] = None
            fig[f"{k}_note"] = why
        fig.update(emulator_realtime_factor(quick))
        return fig
    pt = PinTree(mech.tree, floating=False)
    pt.model.gravity = pin.Motion(grav, np.zeros(3))
    q, v, tau = pt.joints(p), pt.joints(pd), pt.joints(g)
    fx = pt.fext(fext)
    ddq_py = pt.ours(np.asarray(pin.aba(pt.model, pt.data, q, v, tau, fx)).copy())
    err = float(np.max(np.abs(ddq_py - ours)) / max(1.0, float(np.max(np.abs(ddq_py)))))
    fig["tree_aba_pinocchio_max_rel_diff"] = err
    if not err < 1e-9:
        raise RuntimeError(f"bench tree: our ABA and pin.aba differ by {err:.3g} on the benchmarked state")
    py = interleaved(call_timer(lambda: tree_forward_dynamics(P, W, p, pd, om, fext, a0, g, pdd, S0), inner // 4),
                     call_timer(lambda: pin.aba(pt.model, pt.data, q, v, tau, fx), inner // 4), rounds)
    fig["pinocchio_aba_us"] = round(float(np.median(py.b_s)) * 1e6, 4)
    fig["pinocchio_aba_note"] = ("pin.aba on the same probe-cone tree (fixed base, gravity, the same external "
                                 "wrench and joint forces), called from Python, results checked equal to 1e-9")
    fig.update(py.figures("tree_aba_over_pinocchio_py_call"))
    fig["tree_aba_over_pinocchio_aba"] = fig["tree_aba_over_pinocchio_py_call"]     # the figure's former name
    from bench.pinocchio_cpp import load
    cpp, why = load(mech.tree, grav, pt.order)
    if cpp is None:
        fig["pinocchio_aba_cpp_us"] = None
        fig["pinocchio_aba_cpp_us_note"] = why
        fig["tree_aba_over_pinocchio_cpp"] = None
        fig["tree_aba_over_pinocchio_cpp_note"] = why
    else:
        cpp.set(p, pd, g, fext)
        cpp.run(10)
        d = cpp.ddq()
        if not np.array_equal(d, ddq_py):
            raise RuntimeError(f"bench tree: the compiled Pinocchio loop gives {d}, pin.aba {ddq_py}")
        r = interleaved(batch_timer(lambda k: _aba_loop(P, W, p, pd, om, fext, a0, g, pdd, S0, k), inner),
                        lambda: cpp.run(inner), rounds)
        fig["pinocchio_aba_cpp_us"] = round(float(np.median(r.b_s)) * 1e6, 4)
        fig["tree_aba_loop_us_interleaved"] = round(float(np.median(r.a_s)) * 1e6, 4)
        fig["pinocchio_aba_cpp_us_note"] = (
            "pinocchio::aba as instantiated in the pin wheel's libpinocchio_default.so (what pin.aba runs), "
            "called in a compiled C++ loop (bench/pinocchio_aba_loop.cpp), no Python; its result "
            "array-equal to pin.aba's")
        fig.update(r.figures("tree_aba_over_pinocchio_cpp"))
    fig.update(emulator_realtime_factor(quick))
    return fig


def probe_cone_world():
    """The emulated stand of the probe-cone case with the head resting on the socket's bottom
    (emulator_realtime_factor's docstring), warmed up by 50 ms. -> (world, the legs' command)."""
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
    for _ in range(50):
        world.advance(cmd, 1e-3)
    return world, cmd


def emulator_realtime_factor(quick: bool = False) -> dict:
    """The emulated stand with the probe-cone case's mechanism and interface at its 10 kHz
    physics: the platform holding the active unit so that the probe head rests on the socket's
    bottom (the preloaded axial spring keeps it there: one head-bottom contact, the latches
    past the lip), one controller period (1 ms, 10 physics steps) per call, as the emulator
    advances it. Emulated time over wall time."""
    world, cmd = probe_cone_world()
    n = 200 if quick else 2000
    emu = world.emu
    contacts = int(world.info[2])
    t0 = time.perf_counter()
    for _ in range(n):
        world.advance(cmd, 1e-3)
    wall = time.perf_counter() - t0
    return {"probe_cone_emulator_realtime_factor": n * 1e-3 / wall,
            "probe_cone_emulator_contacts": contacts,
            "probe_cone_emulator_note": (f"StandWorld.advance(1 ms) x {n} at {emu.physics_rate_hz:g} Hz "
                                         f"({emu.integrator}), head on the socket bottom, {contacts} contact(s)")}
