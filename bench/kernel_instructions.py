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
    else:
        print(json.dumps(measure(), indent=2))
