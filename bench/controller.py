"""Controller figures (issue 6): loop lateness at 1 kHz on the wall clock, hybrid and spin.

``loop_lateness_us_*`` and ``missed_deadlines``: a 20 s (quick: 2 s) run of the fixed-step
loop at 1 kHz with the default ``hybrid`` wait (sleep to 200 us before the deadline, then
spin) and an empty cycle; ``loop_lateness_spin_us_p99``: the same with ``spin`` (10 s; quick
2 s). Lateness = wake time - deadline on ``time.monotonic_ns``. No RT priority is requested
here (the figures are what an unprivileged process gets on this machine).

``controller_cycle_us_p50/p99`` (read -> update -> write of the assembled controller with
memory transports over 1e5 cycles) come with the controller assembly: ``_controller_cycle``.
"""
from __future__ import annotations

from rt.clock import WallClock
from rt.loop import FixedStepLoop
from rt.realtime import GcPause

PERIOD_NS = 1_000_000


class _Empty:
    def read(self, c, t):
        pass

    def update(self, c, t):
        pass

    def write(self, c, t):
        pass


def _lateness(policy: str, seconds: float) -> dict:
    n = int(seconds * 1e9 / PERIOD_NS)
    loop = FixedStepLoop(WallClock(policy, margin_ns=200_000), PERIOD_NS, _Empty(), ring_capacity=n)
    with GcPause(True):
        loop.run(max_cycles=n)
    s = loop.timing.stats()
    s["missed"] = loop.missed
    return s


def _controller_cycle(quick: bool) -> dict:
    """Place for the assembled controller's cycle time (memory transports, 1e5 cycles)."""
    note = "needs the assembled controller (rt/controller.py, issue 6 assembly)"
    return {"controller_cycle_us_p50": None, "controller_cycle_us_p50_note": note,
            "controller_cycle_us_p99": None, "controller_cycle_us_p99_note": note}


def run(quick: bool = False) -> dict:
    h = _lateness("hybrid", 2.0 if quick else 20.0)
    s = _lateness("spin", 2.0 if quick else 10.0)
    out = {"loop_lateness_us_p50": round(h["lateness_us_p50"], 2),
           "loop_lateness_us_p99": round(h["lateness_us_p99"], 2),
           "loop_lateness_us_max": round(h["lateness_us_max"], 2),
           "missed_deadlines": int(h["missed"]),
           "loop_lateness_spin_us_p99": round(s["lateness_us_p99"], 2)}
    out.update(_controller_cycle(quick))
    return out
