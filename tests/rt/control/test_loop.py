"""Fixed-step loop: lockstep determinism, overrun policy (skip, never burst, streak, throttled
warning), absolute deadlines, no per-cycle allocation in the loop's own code."""
import logging
import time
import tracemalloc

import numpy as np
import pytest

from bench.controller import _Empty as Nop     # a cycle that does nothing (the bench's empty loop)
from rt.control.clock import StepClock, WallClock
from rt.control.loop import FixedStepLoop, TimingRing

P = 1_000_000  # 1 ms


class Recorder:
    def __init__(self, clock=None, slow=None):
        self.calls = []
        self.clock = clock
        self.slow = slow or {}

    def read(self, c, t):
        self.calls.append(("r", c, t))

    def update(self, c, t):
        self.calls.append(("u", c, t))
        if c in self.slow:
            self.clock.advance(self.slow[c])

    def write(self, c, t):
        self.calls.append(("w", c, t))


def test_lockstep_is_deterministic_and_ordered():
    clk = StepClock()
    rec = Recorder()
    loop = FixedStepLoop(clk, P, rec)
    assert loop.run(max_cycles=500) == 500
    assert loop.cycles == 500 and loop.missed == 0
    assert rec.calls[:6] == [("r", 0, P), ("u", 0, P), ("w", 0, P), ("r", 1, 2 * P), ("u", 1, 2 * P), ("w", 1, 2 * P)]
    s = loop.timing.snapshot()
    assert np.array_equal(s["cycle"], np.arange(500))
    assert np.array_equal(s["slot"], np.arange(1, 501))
    assert not s["wake_late_ns"].any() and not s["read_ns"].any() and not s["update_ns"].any()
    assert np.all(s["period_ns"] == P)
    assert clk.now_ns() == 500 * P
    # a second run continues the cycle count
    loop.run(max_cycles=10)
    assert loop.cycles == 510


def test_overrun_skips_slots_and_never_bursts(caplog):
    clk = StepClock()
    # cycle 10 takes 2.5 periods, cycles 20-22 take 1.2 periods each (a streak of 3)
    rec = Recorder(clk, slow={10: int(2.5 * P), 20: int(1.2 * P), 21: int(1.2 * P), 22: int(1.2 * P)})
    seen = []
    loop = FixedStepLoop(clk, P, rec, on_overrun=lambda m, s: seen.append((m, s)))
    with caplog.at_level(logging.WARNING, logger="dockstand.loop"):
        loop.run(max_cycles=40)
    s = loop.timing.snapshot()
    # cycle 10 ran at slot 11 and ended at 13.5 P: slots 12 and 13 are skipped
    assert s["slot"][11] == 14 and s["missed"][11] == 2 and s["period_ns"][11] == 3 * P
    assert s["wake_late_ns"][11] == 0
    ts = [t for (k, c, t) in rec.calls if k == "r"]
    assert ts[11] == 14 * P
    # never bursts: consecutive wakes are at least one period apart
    assert np.all(s["period_ns"] >= P)
    assert seen[0] == (2, 1)
    assert [x[1] for x in seen[1:]] == [1, 2, 3]
    assert loop.max_overrun_streak == 3 and loop.overrun_streak == 0
    assert loop.missed == 2 + 3 * 1 and loop.overruns == 4
    assert s["missed"].sum() == loop.missed
    # the warning is throttled: four overruns within one second -> one message
    msgs = [r for r in caplog.records if "overrun" in r.getMessage()]
    assert len(msgs) == 1


def test_stop_from_inside():
    clk = StepClock()

    class Stopper(Nop):
        def update(self, c, t):
            if c == 7:
                loop.stop()

    loop = FixedStepLoop(clk, P, Stopper())
    assert loop.run() == 8
    assert not loop.running


def test_ring_wraps_and_keeps_the_newest():
    loop = FixedStepLoop(StepClock(), P, Nop(), ring_capacity=64)
    loop.run(max_cycles=200)
    s = loop.timing.snapshot()
    assert len(loop.timing) == 64
    assert np.array_equal(s["cycle"], np.arange(136, 200))
    assert loop.timing.stats()["missed"] == 0


def test_step_clock_gate_and_advance():
    gated = []
    clk = StepClock(gate=gated.append)
    loop = FixedStepLoop(clk, 2 * P, Nop())
    loop.run(max_cycles=3)
    assert gated == [2 * P, 4 * P, 6 * P]
    with pytest.raises(ValueError):
        clk.advance(-1)


@pytest.mark.parametrize("policy", ["hybrid", "spin"])
def test_wall_clock_absolute_deadlines(policy):
    """Structural, not a timing figure: each wake is at or after its deadline, and every
    period equals (slot difference) x P + (lateness difference), i.e. deadlines are absolute
    and do not accumulate the lateness (no drift)."""
    rng = np.random.default_rng(1)
    jitter = rng.uniform(0, 0.4e-3, 300)

    class Busy(Nop):
        def update(self, c, t):
            time.sleep(jitter[c])

    loop = FixedStepLoop(WallClock(policy, margin_ns=200_000), P, Busy())
    loop.run(max_cycles=300)
    s = loop.timing.snapshot()
    assert np.all(s["wake_late_ns"] >= 0)
    d_slot = np.diff(s["slot"])
    assert np.array_equal(s["period_ns"][1:], d_slot * P + np.diff(s["wake_late_ns"]))
    assert np.array_equal(d_slot - 1, s["missed"][1:])


def test_wall_clock_policy_validation():
    with pytest.raises(ValueError):
        WallClock("sleep")
    with pytest.raises(ValueError):
        WallClock("hybrid", margin_ns=-1)
    c = WallClock("hybrid", 100_000)
    t = c.now_ns() + 2_000_000
    assert c.wait_until(t) >= t


def test_loop_does_not_allocate_per_cycle():
    loop = FixedStepLoop(StepClock(), P, Nop(), ring_capacity=1024)
    loop.run(max_cycles=100)  # warm
    tracemalloc.start()
    try:
        loop.run(max_cycles=100)
        a = tracemalloc.take_snapshot()
        loop.run(max_cycles=20_000)
        b = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    flt = [tracemalloc.Filter(True, "*rt/control/loop.py"), tracemalloc.Filter(True, "*rt/control/clock.py")]
    diff = b.filter_traces(flt).compare_to(a.filter_traces(flt), "filename")
    grown = sum(max(d.size_diff, 0) for d in diff)
    assert grown < 512, diff  # nothing accumulates with the number of cycles


def test_timing_ring_validation():
    with pytest.raises(ValueError):
        TimingRing(0)
    with pytest.raises(ValueError):
        FixedStepLoop(StepClock(), 0, Nop())
