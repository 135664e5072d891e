"""Discovers the bench modules and merges their figures into one dict.

A bench module is any ``bench/<area>.py`` (not starting with ``_``, not ``runner``) that
defines ``run(quick: bool = False) -> dict[str, float | int | str | None]``. A figure that
needs an optional peer (Basilisk, MuJoCo, Pinocchio) that is not installed is reported as
``None`` with a ``<figure>_note`` string saying why, never silently left out.
"""
from __future__ import annotations

import importlib
import pkgutil
import time
from typing import IO

import bench

SKIP = {"runner"}


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
    for name in names:
        mod = importlib.import_module(f"bench.{name}")
        if not hasattr(mod, "run"):
            continue
        t0 = time.perf_counter()
        if progress is not None:
            print(f"bench: {name} ...", file=progress, flush=True)
        out = mod.run(quick=quick)
        clash = set(out) & set(figures)
        if clash:
            raise RuntimeError(f"bench module {name} repeats figure(s) {sorted(clash)}")
        figures.update(out)
        if progress is not None:
            print(f"bench: {name} done in {time.perf_counter() - t0:.1f} s", file=progress, flush=True)
    return figures
