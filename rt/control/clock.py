"""Clocks for the fixed-step loop: one interface, two implementations.

* :class:`WallClock` — the stand: ``time.monotonic_ns``; :meth:`wait_until` blocks until an
  absolute deadline with the ``hybrid`` policy (``time.sleep`` until a margin before the
  deadline, then spin; the margin optionally adapts to how late the OS wakes a sleeper) or
  ``spin`` (busy-wait all the way).
* :class:`StepClock` — lockstep with the emulator and unit tests: virtual time that only
  moves when told. :meth:`wait_until` jumps straight to the deadline (after an optional
  ``gate`` callback, e.g. "wait until the emulator has stepped"), so a run is deterministic,
  faster than real time, and its timing record (lateness and durations, all in virtual
  time) is exactly zero / exactly one period.

Both return integer nanoseconds; the loop never converts to float in its hot path.
"""
from __future__ import annotations

import math
import time
from typing import Callable, Protocol

WAIT_POLICIES = ("hybrid", "spin")
_exp = math.exp


class Clock(Protocol):
    def now_ns(self) -> int: ...

    def wait_until(self, deadline_ns: int) -> int:
        """Return no earlier than ``deadline_ns``; the return value is the wake time."""
        ...


class WallClock:
    """Monotonic wall clock with absolute deadlines.

    ``policy="hybrid"``: sleep until a margin before the deadline (the OS wakes a sleeper late
    by its timer slack and scheduling latency, which the margin absorbs), then spin on
    ``monotonic_ns``. ``policy="spin"``: spin all the way (one core at 100 %).

    The margin is ``margin_ns`` or, with ``adaptive=True``, the larger of ``margin_ns`` and the
    *peak*. A wait that slept and still returned more than ``late_ns`` after its deadline
    sets the peak to the larger of its oversleep (the first clock read after the sleep minus
    the wake it asked for) and ``margin_ns`` plus its lateness. The second term covers a VM
    whose vCPU is held up just after waking in time (measured here: waits that slept were
    late at p99 by 85 us with their sleeps in time; waits that spun, by 8 us); it is taken
    over the minimum margin, not the widened one, so hold-ups that no margin avoids do not
    ratchet the margin up. The peak decays by half every ``half_life_ns`` of wall time.

    A machine whose sleeps come back late (a shared VM wakes an idle vCPU in up to
    milliseconds) thus widens the margin, up to spinning the whole period, until it has shown
    for a few half-lives that it wakes in time; a quiet machine keeps ``margin_ns`` and
    sleeps. The peak follows a high quantile of what a sleep costs (with one sleep per 1 ms
    period and a 1 s half-life, about one wait in a thousand that slept returns late): the
    deadline, not the CPU time, is what the policy protects.

    Counters: ``sleeps``, ``slept_ns`` (asleep), ``late_sleeps`` (waits that slept and
    returned more than ``late_ns`` after their deadline), ``max_oversleep_ns`` (the OS's
    largest oversleep); :meth:`margin_now_ns` is the current margin.
    ``sleep``/``now_ns`` may be replaced (tests script the oversleep).
    """

    def __init__(self, policy: str = "hybrid", margin_ns: int = 200_000, *, adaptive: bool = False,
                 half_life_ns: int = 1_000_000_000, late_ns: int = 10_000, max_margin_ns: int | None = None,
                 sleep: Callable[[float], None] = time.sleep, now_ns: Callable[[], int] = time.monotonic_ns):
        if policy not in WAIT_POLICIES:
            raise ValueError(f"wait policy must be one of {WAIT_POLICIES}, got {policy!r}")
        if margin_ns < 0:
            raise ValueError("margin_ns must be >= 0")
        if half_life_ns <= 0:
            raise ValueError("half_life_ns must be > 0")
        if late_ns < 0:
            raise ValueError("late_ns must be >= 0")
        self.policy = policy
        self.margin_ns = int(margin_ns)
        self.adaptive = bool(adaptive)
        self.half_life_ns = int(half_life_ns)
        self.late_ns = int(late_ns)
        # the adaptive margin's ceiling (None: up to spinning the whole period). Under SCHED_FIFO
        # with the kernel's RT throttling on, a loop that spins ~100 % is throttled for the rest of
        # each second (sched_rt_runtime_us): from_stand caps the margin there (docs/deploy.md)
        self.max_margin_ns = None if max_margin_ns is None else max(int(margin_ns), int(max_margin_ns))
        self._decay_per_ns = math.log(2.0) / self.half_life_ns
        self._sleep = sleep
        self.now_ns = now_ns
        self._peak = 0.0         # oversleep peak [ns] at time self._peak_t
        self._peak_t = 0
        self.sleeps = 0
        self.slept_ns = 0
        self.late_sleeps = 0
        self.max_oversleep_ns = 0

    @classmethod
    def from_stand(cls, stand, **override) -> "WallClock":
        """The stand config's wait (``[loop]``: ``wait_policy``, ``spin_margin_us``,
        ``adaptive_margin``, ``adaptive_margin_half_life_s``; rt.config.stand.Stand), with
        keyword ``override``s (e.g. ``policy="spin"``)."""
        kw = dict(policy=stand.wait_policy, margin_ns=stand.spin_margin_ns, adaptive=stand.adaptive_margin,
                  half_life_ns=stand.margin_half_life_ns, max_margin_ns=fifo_margin_cap_ns(stand))
        kw.update(override)
        return cls(**kw)

    def margin_now_ns(self) -> int:
        """The margin the next wait would use (``margin_ns`` unless adaptive)."""
        peak = self._peak
        if peak:
            peak *= math.exp((self._peak_t - self.now_ns()) * self._decay_per_ns)
        m = max(self.margin_ns, int(peak))
        return m if self.max_margin_ns is None else min(m, self.max_margin_ns)

    def report(self) -> dict:
        """The wait's state for status and summaries (not for the hot path)."""
        return {"policy": self.policy, "adaptive": self.adaptive, "margin_us": self.margin_now_ns() / 1e3,
                "max_margin_us": None if self.max_margin_ns is None else self.max_margin_ns / 1e3,
                "sleeps": self.sleeps, "late_sleeps": self.late_sleeps,
                "max_oversleep_us": self.max_oversleep_ns / 1e3}

    def wait_until(self, deadline_ns: int) -> int:
        now = self.now_ns
        t = now()
        if self.policy == "hybrid":
            margin = self.margin_ns
            peak = self._peak
            if peak:
                peak *= _exp((self._peak_t - t) * self._decay_per_ns)
                if peak > margin:
                    margin = int(peak)
                    cap = self.max_margin_ns
                    if cap is not None and margin > cap:
                        margin = cap
                else:
                    self._peak = 0.0     # decayed below the minimum: it cannot set the margin again
            wake = deadline_ns - margin
            if wake > t:
                self._sleep((wake - t) * 1e-9)
                woke = now()
                self.sleeps += 1
                self.slept_ns += woke - t
                over = woke - wake              # the OS's oversleep
                if over > self.max_oversleep_ns:
                    self.max_oversleep_ns = over
                t1 = woke
                while t1 < deadline_ns:
                    t1 = now()
                late = t1 - deadline_ns
                if late > self.late_ns:         # slept and still late: a new peak
                    self.late_sleeps += 1
                    if self.adaptive:
                        # the oversleep, or the minimum margin plus the lateness when the
                        # thread was held up after waking in time (not the widened margin
                        # plus it: hold-ups a wider margin cannot avoid must not ratchet it)
                        self._peak = float(max(over, self.margin_ns + late))
                        self._peak_t = t1
                return t1
        while t < deadline_ns:
            t = now()
        return t


def rt_runtime_us() -> tuple[int, int] | None:
    """The kernel's RT throttling: (``sched_rt_runtime_us``, ``sched_rt_period_us``); runtime -1
    means off; None where /proc does not say. Not real-time (reads /proc)."""
    try:
        with open("/proc/sys/kernel/sched_rt_runtime_us") as f:
            rt_us = int(f.read().strip())
        with open("/proc/sys/kernel/sched_rt_period_us") as f:
            per_us = int(f.read().strip())
        return rt_us, per_us
    except (OSError, ValueError):
        return None


def fifo_margin_cap_ns(stand) -> int | None:
    """The adaptive margin's ceiling for the stand's loop: under SCHED_FIFO with RT throttling
    on (``sched_rt_runtime_us`` not -1), ``[loop] fifo_spin_fraction`` of the period, so that the
    loop sleeps the rest of each period and is never throttled; otherwise None (no cap)."""
    if getattr(stand.realtime, "sched_fifo_priority", 0) <= 0 or stand.wait_policy != "hybrid":
        return None
    thr = rt_runtime_us()
    if thr is not None and thr[0] < 0:
        return None
    return int(getattr(stand, "fifo_spin_fraction", 0.5) * 1e9 / stand.rate_hz)


class StepClock:
    """Deterministic virtual clock (lockstep).

    ``now_ns()`` returns the virtual time; ``advance(dt_ns)`` moves it forward by hand;
    ``wait_until(deadline)`` calls ``gate(deadline)`` if given (the lockstep hand-shake) and then
    sets the time to the deadline (never backwards).
    """

    def __init__(self, start_ns: int = 0, gate: Callable[[int], None] | None = None):
        self._t = int(start_ns)
        self.gate = gate

    def now_ns(self) -> int:
        return self._t

    def advance(self, dt_ns: int) -> int:
        if dt_ns < 0:
            raise ValueError("a StepClock never goes backwards")
        self._t += int(dt_ns)
        return self._t

    def wait_until(self, deadline_ns: int) -> int:
        if self.gate is not None:
            self.gate(deadline_ns)
        if deadline_ns > self._t:
            self._t = deadline_ns
        return self._t
