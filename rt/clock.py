"""Clocks for the fixed-step loop: one interface, two implementations.

* :class:`WallClock` — the stand: ``time.monotonic_ns``; :meth:`wait_until` blocks until an
  absolute deadline with the ``hybrid`` policy (``time.sleep`` until ``margin_ns`` before the
  deadline, then spin) or ``spin`` (busy-wait all the way).
* :class:`StepClock` — lockstep with the emulator and unit tests: virtual time that only
  moves when told. :meth:`wait_until` jumps straight to the deadline (after an optional
  ``gate`` callback, e.g. "wait until the emulator has stepped"), so a run is deterministic,
  faster than real time, and its timing record (lateness and durations, all in virtual
  time) is exactly zero / exactly one period.

Both return integer nanoseconds; the loop never converts to float in its hot path.
"""
from __future__ import annotations

import time
from typing import Callable, Protocol

WAIT_POLICIES = ("hybrid", "spin")


class Clock(Protocol):
    def now_ns(self) -> int: ...

    def wait_until(self, deadline_ns: int) -> int:
        """Return no earlier than ``deadline_ns``; the return value is the wake time."""
        ...


class WallClock:
    """Monotonic wall clock with absolute deadlines.

    ``policy="hybrid"``: sleep until ``margin_ns`` before the deadline (the OS may wake us late
    by its timer slack and scheduling latency, which the margin absorbs), then spin on
    ``monotonic_ns``. ``policy="spin"``: spin all the way (one core at 100 %).
    """

    def __init__(self, policy: str = "hybrid", margin_ns: int = 200_000):
        if policy not in WAIT_POLICIES:
            raise ValueError(f"wait policy must be one of {WAIT_POLICIES}, got {policy!r}")
        if margin_ns < 0:
            raise ValueError("margin_ns must be >= 0")
        self.policy = policy
        self.margin_ns = int(margin_ns)
        self.now_ns = time.monotonic_ns

    def wait_until(self, deadline_ns: int) -> int:
        now = time.monotonic_ns
        t = now()
        if self.policy == "hybrid":
            rest = deadline_ns - self.margin_ns - t
            if rest > 0:
                time.sleep(rest * 1e-9)
                t = now()
        while t < deadline_ns:
            t = now()
        return t


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
