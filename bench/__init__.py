"""Benchmarks that print figures (never timed assertions).

Every module ``bench/<area>.py`` that defines ``run(quick: bool) -> dict`` contributes its
figures to ``dockstand bench --json``; see docs/bench.md for the keys.
"""
import rt as _rt  # noqa: F401  (sets the numba cache location before any kernel compiles)
