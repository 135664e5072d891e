"""Discovers the bench modules and merges their figures into one dict.

A bench module is any ``bench/<area>.py`` (not starting with ``_``, not ``runner``) that
defines ``run(quick: bool = False) -> dict[str, float | int | str | None]``. A figure that
needs an optional peer (Basilisk, MuJoCo, Pinocchio) that is not installed is reported as
``None`` with a ``<figure>_note`` string saying why, never silently left out.

The machine's load is part of every wall-clock figure: the run records the 1, 5 and 15 min load
averages at its start and end (``bench_loadavg_start`` / ``_end``) and each module's 1 min load
at its start and end (``bench_<area>_loadavg``); a module whose 1 min load at either end was at
least the number of cores this process may use (``bench_cores``: another runnable task for every
core besides this one) ran under load, and its figures are listed in
``bench_figures_under_load`` (``bench_under_load`` true if any). Ratios taken interleaved
(bench/interleave.py) hold up under load much better than absolute times; absolute times under
load are upper bounds.
"""
from __future__ import annotations

import importlib
import pkgutil
import time
from typing import IO

import bench
from bench.interleave import cores, loadavg

SKIP = {"runner", "interleave", "pinocchio_cpp", "kernel_instructions"}


def modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(bench.__path__)
                  if not m.name.startswith("_") and m.name not in SKIP
                  and not m.name.startswith("fuzz"))


def run_all(quick: bool = False, only: list[str] | None = None, progress: IO | None = None) -> dict:
    figures: dict = {}
    names = modules()
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise SystemExit(f"dockstand bench: unknown area {', '.join(unknown)}; known: {', '.join(names)}")
        names = [n for n in names if n in only]
    ncores = cores()
    meta: dict = {"bench_loadavg_start": loadavg(), "bench_cores": ncores, "bench_under_load_threshold": float(ncores)}
    loaded: list[str] = []
    for name in names:
        mod = importlib.import_module(f"bench.{name}")
        if not hasattr(mod, "run"):
            continue
        t0 = time.perf_counter()
        l0 = loadavg()[0]
        if progress is not None:
            print(f"bench: {name} ... (load average {l0})", file=progress, flush=True)
        out = mod.run(quick=quick)
        l1 = loadavg()[0]
        clash = set(out) & set(figures)
        if clash:
            raise RuntimeError(f"bench module {name} repeats figure(s) {sorted(clash)}")
        figures.update(out)
        meta[f"bench_{name}_loadavg"] = [l0, l1]
        if max(l0, l1) >= ncores:
            loaded += [k for k in out if not k.endswith("_note")]
        if progress is not None:
            print(f"bench: {name} done in {time.perf_counter() - t0:.1f} s (load average {l1})",
                  file=progress, flush=True)
    meta["bench_loadavg_end"] = loadavg()
    meta["bench_figures_under_load"] = sorted(loaded)
    meta["bench_under_load"] = bool(loaded)
    figures.update(meta)
    return figures
