"""Executed instructions per call of the controller's DYNAMICS kernel, counted by valgrind.

Wall-clock figures on a shared VM follow the host's load (docs/controller.md, "Where the
cycle's time goes"); an instruction count does not. This script brings the kinematic rig's
stand into DYNAMICS (as bench/controller.py does), saves copies of the kernel's arrays, and
runs itself twice under ``valgrind --tool=cachegrind --cache-sim=no``: ``rt.control.kernels.
hil_cycle_packed`` called 1000 and 3000 times on that state, in a compiled loop and from
Python. The difference over 2000 calls of the instructions in code without a file (numba's
JIT code) is the kernel's count per call; of all instructions, the call's from Python with
its dispatch. OpenBLAS threads are held to one (an idle BLAS thread spins into the count),
and each count is taken after a first run under valgrind has compiled the kernels for
valgrind's CPU.

    python -m bench.kernel_instructions            # needs valgrind (apt-get install valgrind)

The physics kernels of issue 43 are counted the same way, each ``python -m
bench.kernel_instructions --kernel NAME`` (or ``--kernel all``):

* ``tree_aba``: ``tree_forward_dynamics`` of the probe-cone tree on bench/tree.py's state, in a
  compiled loop; ``pinocchio_aba_cpp``: the pin wheel's ``pinocchio::aba`` on the same model
  and state in the compiled C++ loop of bench/pinocchio_aba_loop.cpp;
* ``mechanism_derivative``: ``mechanism_derivatives`` of the 6-UPS mechanism on bench/mechanism.py's
  state, compiled loop; ``mechanism_rk4``: one RK4 step of it;
* ``emulator_ms`` / ``probe_cone_emulator_ms``: one ``StandWorld.advance(1 ms)`` (10 physics steps)
  of bench/closed_loop.py's and bench/tree.py's emulator figures, called from Python.

For these every instruction the process executes counts (libm's sin/cos, Pinocchio's library),
per call, from the difference of two runs. numba compiles for a fixed CPU model here
(``NUMBA_CPU_NAME=x86-64-v3``, no extra features) so that the kernels compiled natively before
the count are the ones valgrind runs (valgrind's CPU hides AVX-512, which would otherwise key a
fresh, very slow compile under valgrind); the count is of that code, for comparing versions.

Not part of ``dockstand bench`` (no ``run``): it takes minutes under valgrind.
"""
from __future__ import annotations

from rt.control.cycle_data import KINDS, cycle_arrays  # noqa: E402

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CALLS = (1000, 3000)
ROOT = Path(__file__).resolve().parent.parent


def _save_state(path: str) -> None:
    from bench.controller import _hold_case
    from rt.control.controller import Phase
    from sim_stand.kinematic_rig import Rig

    with tempfile.TemporaryDirectory() as d:
        rig = Rig(d)
        try:
            c = rig.ctl
            c.warm_up()
            rig.arm_and_start(_hold_case(2000, c.period_s))
            rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 5000)
            rig.run(5)
            state = {"arrays": [a.copy() for a in cycle_arrays(c)], "ftype": c._ftype, "tau": c.tau,
                     "mode": c._mode}
        finally:
            rig.close()
    with open(path, "wb") as f:
        pickle.dump(state, f)


def _calls(path: str, n: int, where: str) -> None:
    """n kernel calls on the saved state (the child under valgrind)."""
    from bench.controller import _kernel_loop
    from rt.record import arraypack as AP
    from rt.control import kernels as CK

    with open(path, "rb") as f:
        s = pickle.load(f)
    pk = AP.pack(s["arrays"], KINDS)      # the declared kinds (rt.control.cycle_data)
    if where == "loop":
        _kernel_loop(n, s["ftype"], s["tau"], s["mode"], pk.table)
    else:
        f = CK.hil_cycle_packed
        for i in range(n):
            f(b"", b"", i, i, 1e-3 * i, s["ftype"], s["tau"], s["mode"], pk.table, 1e-3, i, 0, 0, -1, 0, 0, 0, False)


CPU = {"NUMBA_CPU_NAME": "x86-64-v3", "NUMBA_CPU_FEATURES": ""}
PHYSICS = ("tree_aba", "pinocchio_aba_cpp", "mechanism_derivative", "mechanism_rk4", "emulator_ms",
           "probe_cone_emulator_ms")


def _physics(name: str):
    """A function ``f(n)`` that runs ``n`` calls of the kernel ``name`` (module docstring)."""
    import numpy as np
    if name in ("tree_aba", "pinocchio_aba_cpp"):
        import bench.tree as BT
        from sim_stand.tree.model import TreeMechanism
        mech = TreeMechanism(BT.PRESET)
        P, W = mech.tree.params, mech.tree.new_work()
        p, pd, om, fext, grav, a0, g = BT.bench_inputs(mech)
        pdd, S0 = np.zeros(mech.n), np.zeros(6)
        if name == "tree_aba":
            return lambda n: BT._aba_loop(P, W, p, pd, om, fext, a0, g, pdd, S0, n)
        from bench.pinocchio_cpp import load
        from rt.dynamics.tree_pinocchio import depth_first
        cpp, why = load(mech.tree, grav, depth_first(mech.tree))
        if cpp is None:
            raise SystemExit(why)
        cpp.set(p, pd, g, fext)
        return cpp.run
    if name in ("mechanism_derivative", "mechanism_rk4"):
        import bench.mechanism as M
        from sim_stand.mechanism import Mechanism, load_mechanism
        mech = Mechanism(load_mechanism(M.PRESET))
        x = M._state(mech)
        bm, cw = mech.base_motion_static(), np.zeros(6)
        P, W, O = mech.params, mech.workspace, mech.out
        if name == "mechanism_derivative":
            return lambda n: M._loop(P, W, x, bm, cw, O, n)
        ka, xt = np.zeros(12), np.zeros(12)
        return lambda n: M._rk4_loop(P, W, x, bm, cw, M.DT, O, ka, xt, n)
    if name == "emulator_ms":
        from bench.closed_loop import emulator_setup
        world, cmds, period, _ = emulator_setup(0.2)

        def f(n):
            for k in range(n):
                world.advance(cmds[k % len(cmds)], period)
        return f
    if name == "probe_cone_emulator_ms":
        from bench.tree import probe_cone_world
        world, cmd = probe_cone_world()

        def f(n):
            for _ in range(n):
                world.advance(cmd, 1e-3)
        return f
    raise SystemExit(f"unknown kernel {name!r}; known: controller, {', '.join(PHYSICS)}")


PHYSICS_CALLS = {"emulator_ms": (20, 60), "probe_cone_emulator_ms": (20, 60)}


def _physics_child(name: str, n: int) -> None:
    f = _physics(name)
    f(3)
    f(n)


def measure_physics(name: str) -> dict:
    """Instructions per call of a physics kernel (module docstring)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind not found (apt-get install valgrind)")
    calls = PHYSICS_CALLS.get(name, CALLS)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0", **CPU)
    args = [sys.executable, "-m", "bench.kernel_instructions", "--physics-child", name]
    subprocess.run([*args, "3"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)   # compiles
    with tempfile.TemporaryDirectory() as d:
        procs, files = [], []
        for n in calls:
            f = os.path.join(d, f"cg.{n}")
            files.append(f)
            procs.append(subprocess.Popen(["valgrind", "-q", "--tool=cachegrind", "--cache-sim=no",
                                           f"--cachegrind-out-file={f}", *args, str(n)],
                                          cwd=ROOT, env=env, stdout=subprocess.DEVNULL))
        for p in procs:
            if p.wait() != 0:
                raise RuntimeError(f"valgrind run failed ({p.args})")
        tot = [_counts(f)[1] for f in files]
    return {f"instructions_{name}": round((tot[1] - tot[0]) / (calls[1] - calls[0]))}


def _counts(out_file: str) -> tuple[int, int]:
    """(instructions in fl=??? fn=??? (JIT code), all instructions) of a cachegrind output file."""
    jit = 0
    fl = fn = None
    total = None
    with open(out_file) as f:
        for line in f:
            if line.startswith("fl="):
                fl = line[3:].strip()
            elif line.startswith("fn="):
                fn = line[3:].strip()
            elif line.startswith("summary:"):
                total = int(line.split()[1])
            elif line[:1].isdigit() and fl == "???" and fn == "???":
                jit += int(line.split()[1])
    if total is None:
        raise RuntimeError(f"{out_file}: no summary line (did valgrind finish?)")
    return jit, total


def _valgrind(state: str, n: int, where: str, out_file: str | None) -> None:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
    tool = ["--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out_file}"] if out_file else \
        ["--tool=none"]
    subprocess.run(["valgrind", "-q", *tool, sys.executable, "-m", "bench.kernel_instructions", "--child",
                    state, str(n), where], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


def measure() -> dict:
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind not found (apt-get install valgrind)")
    out = {}
    with tempfile.TemporaryDirectory() as d:
        state = os.path.join(d, "state.pkl")
        _save_state(state)
        for where in ("loop", "python"):
            _valgrind(state, 5, where, None)           # compiles for valgrind's CPU, untimed
            c = {}
            for n in CALLS:
                f = os.path.join(d, f"cg.{where}.{n}")
                _valgrind(state, n, where, f)
                c[n] = _counts(f)
            k = CALLS[1] - CALLS[0]
            jit = (c[CALLS[1]][0] - c[CALLS[0]][0]) / k
            out[f"kernel_instructions_{where}"] = round(jit)
            if where == "python":
                out["kernel_instructions_python_all"] = round((c[CALLS[1]][1] - c[CALLS[0]][1]) / k)
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _calls(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) > 1 and sys.argv[1] == "--physics-child":
        _physics_child(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) > 2 and sys.argv[1] == "--kernel":
        names = PHYSICS if sys.argv[2] == "all" else sys.argv[2].split(",")
        res = {}
        for nm in names:
            res.update(measure() if nm == "controller" else measure_physics(nm))
            print(json.dumps(res), file=sys.stderr, flush=True)
        print(json.dumps(res, indent=2))
    else:
        print(json.dumps(measure(), indent=2))
