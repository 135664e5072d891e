"""Ratios against a peer measured the way a shared machine allows (issue 43, docs/bench.md,
"How a ratio is taken").

Timing A for a while and then B measures the machine as much as the code: on a shared VM the
speed of a core swings by 2x within seconds. So both are timed in the same process, in rounds:
each round times one batch of A and one batch of B back to back (the order alternating between
rounds, A B, B A, A B ..., so that a drift within a round does not favour one side), with the
garbage collector off. Each round gives one ratio A / B; the figure is the median of the
per-round ratios, printed with its interquartile range (``*_iqr``: the 25th and 75th
percentiles) so a reader sees how far the rounds agreed.

Helpers for the confidence interval of a mean difference over repeats (the console's and the
command socket's added work) are here as well.
"""
from __future__ import annotations

import gc
import math
import os
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Ratio:
    """The result of :func:`interleaved`: per-round ratios and the per-op times (s)."""
    ratios: np.ndarray
    a_s: np.ndarray
    b_s: np.ndarray

    @property
    def median(self) -> float:
        return float(np.median(self.ratios))

    @property
    def iqr(self) -> list[float]:
        return [float(np.percentile(self.ratios, 25)), float(np.percentile(self.ratios, 75))]

    def figures(self, key: str, digits: int = 3) -> dict:
        """``key`` (median ratio), ``key_iqr`` and ``key_rounds``."""
        return {key: round(self.median, digits), f"{key}_iqr": [round(v, digits) for v in self.iqr],
                f"{key}_rounds": int(self.ratios.size)}


def interleaved(a: Callable[[], float], b: Callable[[], float], rounds: int, warmup: int = 2,
                repeats: int = 3) -> Ratio:
    """``a`` and ``b`` each time one batch and return seconds per operation; ``rounds`` rounds
    of both, order alternating, gc off (module docstring); within a round each side is timed
    ``repeats`` times back to back, alternating, and its fastest batch kept (the machine's
    interruptions only ever add time). The first ``warmup`` rounds are run and dropped."""
    t = interleaved_many([a, b], rounds, warmup, repeats)
    return t.ratio(0, 1)


@dataclass(frozen=True)
class Times:
    """Seconds per operation of several contenders, one row per round (:func:`interleaved_many`)."""
    t: np.ndarray

    def ratio(self, i: int, j: int) -> Ratio:
        return Ratio(self.t[:, i] / self.t[:, j], self.t[:, i], self.t[:, j])


def interleaved_many(fns: list[Callable[[], float]], rounds: int, warmup: int = 2, repeats: int = 3) -> Times:
    """:func:`interleaved` for several contenders: in each round every contender is timed
    ``repeats`` times, the contenders taking turns, the order rotating from round to round (so
    every contender is as often first as last); a contender's time in the round is its fastest."""
    was = gc.isenabled()
    gc.disable()
    k = len(fns)
    out = np.empty((rounds, k))
    try:
        for r in range(warmup + rounds):
            row = np.full(k, np.inf)
            for rep in range(repeats):
                for i in range(k):
                    c = (i + r + rep) % k
                    row[c] = min(row[c], fns[c]())
            if r >= warmup:
                out[r - warmup] = row
    finally:
        if was:
            gc.enable()
    return Times(out)


def batch_timer(fn: Callable[[int], object], n: int) -> Callable[[], float]:
    """A timer for :func:`interleaved`: ``fn(n)`` runs n operations (a compiled loop); seconds
    per operation."""
    def t() -> float:
        t0 = time.perf_counter_ns()
        fn(n)
        return (time.perf_counter_ns() - t0) * 1e-9 / n
    return t


def call_timer(fn: Callable[[], object], n: int) -> Callable[[], float]:
    """A timer for :func:`interleaved`: ``fn()`` called n times from Python; seconds per call."""
    def t() -> float:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        return (time.perf_counter_ns() - t0) * 1e-9 / n
    return t


def mean_ci95(x) -> tuple[float, list[float]]:
    """Mean of ``x`` and its 95 % confidence interval (Student t on the repeats)."""
    x = np.asarray(x, dtype=float)
    m = float(x.mean())
    if x.size < 2:
        return m, [m, m]
    from scipy import stats
    h = float(stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, [m - h, m + h]


def median_of(fn: Callable[[], float], reps: int) -> float:
    return statistics.median(fn() for _ in range(reps))


def loadavg() -> list[float]:
    """The machine's 1, 5 and 15 min load averages."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return [float("nan")] * 3


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
