"""Compile the heaviest kernels into numba's cache beside a cold test session.

``tests/conftest.py`` starts this file in a background process (lowest CPU priority) when
the kernel cache is empty -- a fresh clone, a CI machine -- so the second core compiles the
digital reference, the emulator's and the berthing kernels while the first runs the early
tests; a test that reaches a kernel already compiled loads it from the cache instead of
compiling it again. Nothing here is asserted: a failure only means the tests compile the
kernel themselves, as they would without this. Runs lockstep demos on ``ipc://`` endpoints
in its own temporary folder (no ports, nothing the tests look for).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

#: The cases whose lockstep demo and digital reference are compiled, the ones the tests reach
#: last first (the early tests compile the nominal controller kernels themselves anyway).
CASES = ("berthing", "probe_cone", "elastic_rod", "nominal", "low_energy")

#: Written into numba's cache folder when every case has been compiled: the next session
#: starts no background compile.
MARKER = ".dockstand-precompiled"


def marker_path() -> Path:
    import rt  # noqa: F401  (sets NUMBA_CACHE_DIR)
    return Path(os.environ["NUMBA_CACHE_DIR"]) / MARKER


def main() -> int:
    from rt.analysis.commands import simulate_reference
    from rt.analysis.run import load_run
    from sim_stand.cli import REPO, run_demo

    failed = 0
    with tempfile.TemporaryDirectory(prefix="precompile-") as d:
        for case in CASES:
            try:
                res = run_demo(REPO / "config" / "cases" / f"{case}.toml", log_dir=d)
                simulate_reference(load_run(str(res["log"])), Path(d) / f"{case}-digital.dslog")
            except Exception as e:       # noqa: BLE001 -- the tests compile it themselves then
                print(f"precompile: {case}: {type(e).__name__}: {e}", file=sys.stderr)
                failed += 1
    if not failed:
        p = marker_path()
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("kernels of the shipped cases compiled\n")
    return failed


if __name__ == "__main__":
    sys.exit(main())
