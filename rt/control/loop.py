"""The fixed-step loop: ``read -> update -> write`` every period on absolute deadlines.

Semantics (docs/controller.md, "Loop"):

* Deadlines are absolute: slot k is due at ``start + k * period`` on the clock, so the loop
  never drifts however late a single wake-up is.
* Overruns follow ros2_control: when a cycle ends after the next deadline, the deadlines
  already passed are **skipped** (counted in ``missed``), the next cycle waits for the first
  deadline still in the future, and the loop never bursts to catch up. ``overrun_streak`` is
  the number of consecutive overrunning cycles (the safety monitor trips on it); a warning
  is logged at most once per ``warn_interval_s`` of wall time.
* Every cycle is recorded in preallocated int64 ring buffers (:class:`TimingRing`): cycle
  index, slot, wake lateness, read/update/write durations, period (wake to wake) and the
  number of slots skipped before it.
* The loop's own code allocates nothing per cycle (no lists, dicts, arrays or closures);
  the tests check this with ``tracemalloc``.
* A cycle that raises does not end the loop when the work has ``cycle_failed(exc, cycle)``:
  the loop calls it (the controller's safe stop, rt.control.failsafe), counts the cycle in
  ``cycle_errors`` and goes on with the next deadline. A work without the hook ends the loop
  with the exception, as any other code would.

The work is any object with ``read(cycle, t_ns)``, ``update(cycle, t_ns)`` and
``write(cycle, t_ns)`` where ``cycle`` counts executed cycles from 0 and ``t_ns`` is the slot's
scheduled time since the start (``slot * period``, skipped slots included).
"""
from __future__ import annotations

import logging
import time
from typing import Protocol

import numpy as np

from rt.control.clock import Clock

log = logging.getLogger("dockstand.loop")

TIMING_FIELDS = ("cycle", "slot", "wake_late_ns", "read_ns", "update_ns", "write_ns", "period_ns", "missed")


class Cyclic(Protocol):
    def read(self, cycle: int, t_ns: int) -> None: ...

    def update(self, cycle: int, t_ns: int) -> None: ...

    def write(self, cycle: int, t_ns: int) -> None: ...


class TimingRing:
    """Per-cycle timing record in preallocated int64 ring buffers (the last ``capacity`` cycles)."""

    def __init__(self, capacity: int = 1 << 16):
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = int(capacity)
        self.data = np.zeros((len(TIMING_FIELDS), self.capacity), dtype=np.int64)
        for k, name in enumerate(TIMING_FIELDS):
            setattr(self, name, self.data[k])  # row views, e.g. ring.wake_late_ns
        self.count = 0  # records ever written

    def clear(self) -> None:
        self.count = 0

    def __len__(self) -> int:
        return min(self.count, self.capacity)

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the retained records, oldest first."""
        n = len(self)
        i0 = self.count % self.capacity if self.count > self.capacity else 0
        idx = (np.arange(n) + i0) % self.capacity
        return {name: self.data[k, idx].copy() for k, name in enumerate(TIMING_FIELDS)}

    def stats(self) -> dict[str, float]:
        """p50 / p99 / max of lateness and of the read+update+write time, in microseconds."""
        s = self.snapshot()
        if not len(s["cycle"]):
            return {}
        late = s["wake_late_ns"] / 1e3
        work = (s["read_ns"] + s["update_ns"] + s["write_ns"]) / 1e3
        return {"lateness_us_p50": float(np.percentile(late, 50)),
                "lateness_us_p99": float(np.percentile(late, 99)),
                "lateness_us_max": float(late.max()),
                "cycle_us_p50": float(np.percentile(work, 50)),
                "cycle_us_p99": float(np.percentile(work, 99)),
                "cycle_us_max": float(work.max()),
                "missed": int(s["missed"].sum())}


class FixedStepLoop:
    """Fixed-step loop on a :class:`~rt.control.clock.Clock` (see the module docstring)."""

    def __init__(self, clock: Clock, period_ns: int, work: Cyclic, *, ring_capacity: int = 1 << 16,
                 warn_interval_s: float = 1.0, on_overrun=None):
        if period_ns <= 0:
            raise ValueError("period_ns must be > 0")
        self.clock = clock
        self.period_ns = int(period_ns)
        self.work = work
        self.timing = TimingRing(ring_capacity)
        self.warn_interval_ns = int(warn_interval_s * 1e9)
        self.on_overrun = on_overrun  # f(missed_now, streak) called from the loop thread
        self.cycles = 0          # executed cycles
        self.missed = 0          # skipped slots in total
        self.overruns = 0        # cycles that overran
        self.overrun_streak = 0  # consecutive overrunning cycles
        self.max_overrun_streak = 0
        self.cycle_errors = 0    # cycles whose work raised (handed to the work's cycle_failed)
        self.running = False
        self._stop = False
        self._last_warn_ns = -(1 << 62)
        self._overruns_since_warn = 0
        self._missed_since_warn = 0

    def stop(self) -> None:
        """Ask the loop to return after the current cycle (thread-safe: a flag)."""
        self._stop = True

    def run(self, max_cycles: int | None = None) -> int:
        """Run until :meth:`stop` or ``max_cycles`` executed cycles; returns cycles executed
        in this call. The first slot is due one period after the call."""
        clock = self.clock
        now = clock.now_ns
        wait = clock.wait_until
        work = self.work
        read, update, write = work.read, work.update, work.write
        failed = getattr(work, "cycle_failed", None)
        period = self.period_ns
        ring = self.timing
        cap = ring.capacity
        r_cycle, r_slot, r_late = ring.cycle, ring.slot, ring.wake_late_ns
        r_read, r_upd, r_write, r_per, r_missed = ring.read_ns, ring.update_ns, ring.write_ns, ring.period_ns, ring.missed
        limit = -1 if max_cycles is None else int(max_cycles)
        self._stop = False
        self.running = True
        start = now()
        slot = 1
        deadline = start + period
        prev_wake = start
        skipped = 0
        done = 0
        try:
            while done != limit and not self._stop:
                wake = wait(deadline)
                t_ns = slot * period
                cycle = self.cycles
                t1 = t2 = wake
                try:
                    read(cycle, t_ns)
                    t1 = now()
                    update(cycle, t_ns)
                    t2 = now()
                    write(cycle, t_ns)
                except Exception as e:  # noqa: BLE001 - the work's hook stops the platform; the loop goes on
                    if failed is None:
                        raise
                    self.cycle_errors += 1
                    failed(e, cycle)
                t3 = now()
                i = ring.count % cap
                r_cycle[i] = cycle
                r_slot[i] = slot
                r_late[i] = wake - deadline
                r_read[i] = t1 - wake
                r_upd[i] = t2 - t1
                r_write[i] = t3 - t2
                r_per[i] = wake - prev_wake
                r_missed[i] = skipped
                ring.count += 1
                self.cycles = cycle + 1
                done += 1
                prev_wake = wake
                deadline += period
                slot += 1
                if t3 > deadline:  # overran the next deadline: skip the passed slots
                    skipped = (t3 - deadline) // period + 1
                    deadline += skipped * period
                    slot += skipped
                    self.missed += skipped
                    self.overruns += 1
                    self.overrun_streak += 1
                    if self.overrun_streak > self.max_overrun_streak:
                        self.max_overrun_streak = self.overrun_streak
                    self._overrun(skipped)
                else:
                    skipped = 0
                    self.overrun_streak = 0
        finally:
            self.running = False
        return done

    def _overrun(self, skipped: int) -> None:
        self._overruns_since_warn += 1
        self._missed_since_warn += skipped
        if self.on_overrun is not None:
            self.on_overrun(skipped, self.overrun_streak)
        t = time.monotonic_ns()
        if t - self._last_warn_ns >= self.warn_interval_ns:
            log.warning("loop overrun: %d cycle(s) overran, %d deadline(s) skipped since the last warning "
                        "(streak %d, total missed %d)", self._overruns_since_warn, self._missed_since_warn,
                        self.overrun_streak, self.missed)
            self._last_warn_ns = t
            self._overruns_since_warn = 0
            self._missed_since_warn = 0
