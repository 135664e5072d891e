"""The interleaved ratio helpers of dockstand bench (bench/interleave.py) and the runner's load
flags (bench/runner.py): what the figures are computed from, on made-up timings."""
from __future__ import annotations

import gc
import math

import numpy as np
import pytest

from bench import interleave as IL
from bench import runner


def _seq(values):
    it = iter(values)
    return lambda: next(it)


def test_interleaved_alternates_the_order_and_takes_the_median_of_per_round_ratios():
    calls = []
    a_times = iter([9.0, 9.0] + [2.0, 2.0, 2.0, 100.0, 2.0])     # two warm-up rounds, one outlier
    b_times = iter([9.0, 9.0] + [1.0, 1.0, 1.0, 1.0, 1.0])

    def a():
        calls.append("a")
        return next(a_times)

    def b():
        calls.append("b")
        return next(b_times)
    r = IL.interleaved(a, b, rounds=5, warmup=2, repeats=1)
    assert calls[:4] == ["a", "b", "b", "a"]            # A B, then B A: neither side always first
    assert r.ratios.tolist() == [2.0, 2.0, 2.0, 100.0, 2.0]
    assert r.median == 2.0                               # the interrupted round does not move it
    assert r.iqr == [2.0, 2.0]
    f = r.figures("x")
    assert f == {"x": 2.0, "x_iqr": [2.0, 2.0], "x_rounds": 5}


def test_each_round_keeps_each_sides_fastest_batch():
    a = iter([5.0, 1.0, 3.0] * 2)       # interrupted, fast, slower
    b = iter([2.0, 9.0, 2.0] * 2)
    r = IL.interleaved(lambda: next(a), lambda: next(b), rounds=2, warmup=0, repeats=3)
    assert r.a_s.tolist() == [1.0, 1.0] and r.b_s.tolist() == [2.0, 2.0] and r.median == 0.5


def test_interleaved_turns_gc_off_while_timing_and_back_on():
    seen = []
    assert gc.isenabled()
    IL.interleaved(lambda: seen.append(gc.isenabled()) or 1.0, lambda: 1.0, rounds=3, warmup=0, repeats=1)
    assert seen == [False, False, False] and gc.isenabled()


def test_interleaved_many_rotates_every_contender_through_every_position():
    order = []
    fns = [(lambda k=k: order.append(k) or float(k + 1)) for k in range(3)]
    t = IL.interleaved_many(fns, rounds=3, warmup=0, repeats=1)
    assert order == [0, 1, 2, 1, 2, 0, 2, 0, 1]
    assert t.t.tolist() == [[1.0, 2.0, 3.0]] * 3
    assert t.ratio(0, 2).median == pytest.approx(1.0 / 3.0)


def test_mean_ci95_is_the_student_interval():
    x = [1.0, 2.0, 3.0, 4.0]
    m, (lo, hi) = IL.mean_ci95(x)
    h = 3.182446305284263 * np.std(x, ddof=1) / 2.0          # t(0.975, 3)
    assert m == 2.5 and lo == pytest.approx(2.5 - h) and hi == pytest.approx(2.5 + h)
    assert IL.mean_ci95([5.0]) == (5.0, [5.0, 5.0])


def test_runner_records_the_load_and_flags_the_figures_taken_under_it(monkeypatch):
    loads = iter([[0.5, 0.5, 0.5], [0.4, 0, 0], [0.6, 0, 0], [2.5, 0, 0], [0.3, 0, 0], [0.2, 0.2, 0.2]])
    monkeypatch.setattr(runner, "loadavg", lambda: next(loads))
    monkeypatch.setattr(runner, "cores", lambda: 2)

    class Quiet:
        @staticmethod
        def run(quick=False):
            return {"quiet_us": 1.0, "quiet_us_note": "why"}

    class Busy:
        @staticmethod
        def run(quick=False):
            return {"busy_ratio": 0.9}
    mods = {"bench.aaa": Quiet, "bench.bbb": Busy}
    monkeypatch.setattr(runner, "modules", lambda: ["aaa", "bbb"])
    monkeypatch.setattr(runner.importlib, "import_module", lambda name: mods[name])
    out = runner.run_all()
    assert out["bench_loadavg_start"] == [0.5, 0.5, 0.5] and out["bench_loadavg_end"] == [0.2, 0.2, 0.2]
    assert out["bench_aaa_loadavg"] == [0.4, 0.6] and out["bench_bbb_loadavg"] == [2.5, 0.3]
    assert out["bench_figures_under_load"] == ["busy_ratio"] and out["bench_under_load"] is True
    assert out["bench_under_load_threshold"] == 2.0


def test_runner_does_not_offer_the_helpers_as_bench_areas():
    names = runner.modules()
    assert "tree" in names and "spacecraft" in names
    assert not {"interleave", "pinocchio_cpp", "kernel_instructions", "runner"} & set(names)


def test_the_trajectory_check_measures_the_rotation_between_attitudes():
    from bench.spacecraft import _max_diff
    row = np.zeros(13)
    row[6] = 1.0
    other = row.copy()
    a = 1e-12                                              # a rotation far below acos's resolution
    other[6:10] = [math.cos(a / 2), 0.0, 0.0, math.sin(a / 2)]
    assert _max_diff([row], [other]) == pytest.approx(a, rel=1e-6)
    other[6:10] *= -1.0                                    # the same attitude
    assert _max_diff([row], [other]) == pytest.approx(a, rel=1e-6)
