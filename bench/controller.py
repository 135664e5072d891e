"""Controller figures (issue 6): loop lateness at 1 kHz on the wall clock, hybrid and spin.

``loop_lateness_us_*`` and ``missed_deadlines``: a 20 s (quick: 2 s) run of the fixed-step
loop at 1 kHz with the default ``hybrid`` wait (sleep to 200 us before the deadline, then
spin) and an empty cycle; ``loop_lateness_spin_us_p99``: the same with ``spin`` (10 s; quick
2 s). Lateness = wake time - deadline on ``time.monotonic_ns``. No RT priority is requested
here (the figures are what an unprivileged process gets on this machine).

``controller_cycle_us_p50/p99``: read -> update -> write of the assembled controller in the
DYNAMICS phase with memory transports over 1e5 cycles (quick: 1e4); target p99 <= 50 us. The
rig holds the units at rest relative to each other (:func:`_hold_case`) so the whole window is
DYNAMICS; only cycles that begin and end in DYNAMICS are timed, and
``controller_cycle_ran_dynamics`` says whether all of them were. ``controller_read_us_p50``,
``controller_update_us_p50``, ``controller_write_us_p50``: the split of the same cycles.

``controller_kernel_call_us_packed`` / ``_unpacked``: median of one call from Python of the
DYNAMICS kernel on copies of the controller's arrays, through the address table
(``rt.control_kernels.hil_cycle_packed``, what the controller calls) and with its 55 arrays as
arguments (``hil_cycle``): the price of numba's per-argument unboxing (rt/arraypack.py).
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


def _hold_case(n_cycles: int, period_s: float):
    """The nominal case with the units at rest relative to each other (no closing, lateral or
    angular velocity) and a time limit beyond the timed window: the kinematic rig's stand stays
    in DYNAMICS (free flight, no contact, no run-up) for as long as it is timed. The per-cycle
    work of DYNAMICS does not depend on the velocities (sensing, RK4 of both vehicles,
    prediction, geometry, rates, safety, end criteria run every cycle)."""
    from dataclasses import replace

    import numpy as np

    from rt.config.case import load_case
    from sim_stand.kinematic_rig import NOMINAL

    case = load_case(NOMINAL)
    ini = replace(case.initial, velocity_mps=np.zeros(3), active_rate_radps=np.zeros(3),
                  passive_rate_radps=np.zeros(3), active_eta_dot=np.zeros_like(case.initial.active_eta_dot),
                  passive_eta_dot=np.zeros_like(case.initial.passive_eta_dot))
    return replace(case, initial=ini, duration_s=(n_cycles + 1000) * period_s + 10.0)


def _controller_cycle(quick: bool) -> dict:
    """read -> update -> write of the assembled controller in RUNNING/DYNAMICS with memory
    transports, the kinematic rig answering each cycle (its time is not counted). Only cycles
    that begin and end in DYNAMICS without a trip are timed; ``controller_cycle_ran_dynamics``
    is True only if all ``controller_cycle_cycles`` timed cycles were such cycles."""
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
            rig.arm_and_start(_hold_case(n, c.period_s))
            rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 5000)
            c.stop_when = None
            dur = np.zeros(n, dtype=np.int64)
            split = np.zeros((3, n), dtype=np.int64)
            clock = time.perf_counter_ns
            t_ns = c._prev_tns
            timed = 0
            dyn = Phase.DYNAMICS
            with GcPause(True):
                for i in range(n):
                    if c.phase is not dyn or c.trip_code:
                        break
                    rig.gate(0)
                    t_ns += 1_000_000
                    t0 = clock()
                    c.read(i, t_ns)
                    ta = clock()
                    c.update(i, t_ns)
                    tb = clock()
                    c.write(i, t_ns)
                    t1 = clock()
                    if c.phase is dyn and not c.trip_code:
                        dur[timed] = t1 - t0
                        split[0, timed], split[1, timed], split[2, timed] = ta - t0, tb - ta, t1 - tb
                        timed += 1
            ok = timed == n
            calls = _kernel_calls(c, 2000 if quick else 20000)
            why = None if ok else f"left DYNAMICS after {timed} cycles: {c.supervisor.state.name}/{c.phase.name} " \
                                  f"({c.finish_reason or c.trip_text})"
        finally:
            rig.close()
    us = dur[:timed] / 1e3 if timed else np.zeros(1)
    out = {"controller_cycle_us_p50": round(float(np.percentile(us, 50)), 2),
           "controller_cycle_us_p99": round(float(np.percentile(us, 99)), 2),
           "controller_cycle_cycles": int(timed), "controller_cycle_ran_dynamics": bool(ok),
           **{f"controller_{k}_us_p50": round(float(np.median(split[j, :max(timed, 1)])) / 1e3, 2)
              for j, k in enumerate(("read", "update", "write"))}, **calls}
    if why:
        out["controller_cycle_note"] = why
    return out


def _kernel_calls(c, n: int) -> dict:
    """Median time of one call of the DYNAMICS kernel from Python, packed and unpacked, on
    copies of the controller ``c``'s arrays (no frames: nothing to decode)."""
    import time

    import numpy as np

    from rt import control_kernels as CK

    arrays = tuple(a.copy() for a in c._hil_arrays(c.sc))
    pk = c._pack(arrays)
    unpacked = (c._ftype, *arrays[:24], c.tau, c._mode, *arrays[24:])
    out = {}
    for name in ("packed", "unpacked"):
        d = np.zeros(n, dtype=np.int64)
        for i in range(n):
            if name == "packed":
                t0 = time.perf_counter_ns()
                CK.hil_cycle_packed(b"", b"", i, i, 1e-3 * i, c._ftype, c.tau, c._mode, pk.table)
            else:
                t0 = time.perf_counter_ns()
                CK.hil_cycle(b"", b"", i, i, 1e-3 * i, *unpacked)
            d[i] = time.perf_counter_ns() - t0
        out[f"controller_kernel_call_us_{name}"] = round(float(np.median(d)) / 1e3, 2)
    return out


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
