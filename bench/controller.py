"""Controller figures (issue 6): loop lateness at 1 kHz on the wall clock, hybrid and spin.

``loop_lateness_us_*`` and ``missed_deadlines``: a 20 s (quick: 2 s) run of the fixed-step
loop at 1 kHz with the default ``hybrid`` wait (sleep to 200 us before the deadline, then
spin) and an empty cycle; ``loop_lateness_spin_us_p99``: the same with ``spin`` (10 s; quick
2 s). Lateness = wake time - deadline on ``time.monotonic_ns``. No RT priority is requested
here (the figures are what an unprivileged process gets on this machine).

``controller_cycle_us_p50/p99``: read -> update -> write of the assembled controller in the
DYNAMICS phase with memory transports over 1e5 cycles (quick: 1e4); target p99 <= 50 us.
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
    """read -> update -> write of the assembled controller (RUNNING, DYNAMICS phase) with memory
    transports and the kinematic rig answering each cycle (its time is not counted)."""
    import tempfile
    import time

    import numpy as np

    from rt.controller import Phase
    from sim_stand.kinematic_rig import Rig

    n = 10_000 if quick else 100_000
    with tempfile.TemporaryDirectory() as d:
        rig = Rig(d)
        try:
            c = rig.ctl
            c.warm_up()
            rig.arm_and_start()
            rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 5000)
            c.stop_when = None
            dur = np.zeros(n, dtype=np.int64)
            clock = time.perf_counter_ns
            t_ns = c._prev_tns
            with GcPause(True):
                for i in range(n):
                    rig.gate(0)
                    t_ns += 1_000_000
                    t0 = clock()
                    c.read(i, t_ns)
                    c.update(i, t_ns)
                    c.write(i, t_ns)
                    dur[i] = clock() - t0
            ok = c.phase is Phase.DYNAMICS or c.phase is Phase.STOP or c.phase is Phase.FROZEN
        finally:
            rig.close()
    us = dur / 1e3
    return {"controller_cycle_us_p50": round(float(np.percentile(us, 50)), 2),
            "controller_cycle_us_p99": round(float(np.percentile(us, 99)), 2),
            "controller_cycle_cycles": n, "controller_cycle_ran_dynamics": bool(ok)}


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
