"""Benchmarks that print figures (never timed assertions).

Every module ``bench/<area>.py`` that defines ``run(quick: bool) -> dict`` contributes its
figures to ``dockstand bench --json``; see docs/bench.md for the keys.
"""
