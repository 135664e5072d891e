"""Pre-flight timing check (``dockstand check-host``, and for a second at ``dockstand run``
start; docs/deploy.md, "Is this computer fast enough?").

The stand's own wait (``rt.control.clock.WallClock.from_stand``: policy, margin, adaptive
margin) is run for a few seconds at the stand's rate with no work in the cycle; each wake-up's
lateness (the time it returned minus its deadline) is what the loop would lose before doing
anything. A wake-up later than a whole period is a missed deadline, as in the loop (the next
deadline is the next slot in the future). Verdict for the configured rate:

* ``fails`` — any missed deadline, or the lateness p99 above half a period;
* ``marginal`` — p99 above a tenth of a period, or the maximum above half of one;
* ``ok`` — otherwise.

Not real-time: it *is* a timed loop, run before the controller's and never beside it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rt.control.clock import WallClock


@dataclass
class TimingCheck:
    rate_hz: float
    seconds: float
    policy: str
    wakeups: int
    missed: int
    lateness_us_p50: float
    lateness_us_p99: float
    lateness_us_max: float
    verdict: str
    advice: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (f"timing {self.verdict}: {self.wakeups} wake-ups at {self.rate_hz:g} Hz ({self.policy} wait) over "
                f"{self.seconds:g} s: lateness p50 {self.lateness_us_p50:.1f} us, p99 {self.lateness_us_p99:.1f} us, "
                f"max {self.lateness_us_max:.1f} us, missed deadlines {self.missed}")


def judge(late_ns: np.ndarray, missed: int, period_ns: int) -> str:
    p99 = float(np.percentile(late_ns, 99)) if len(late_ns) else 0.0
    mx = float(late_ns.max()) if len(late_ns) else 0.0
    if missed or p99 > 0.5 * period_ns:
        return "fails"
    if p99 > 0.1 * period_ns or mx > 0.5 * period_ns:
        return "marginal"
    return "ok"


def _advice(verdict: str, policy: str, rate_hz: float) -> list[str]:
    if verdict == "ok":
        return []
    out = []
    if policy != "spin":
        out.append('[loop] wait_policy = "spin": the loop spins instead of sleeping (one core at 100 %)')
    out += ["isolate a CPU for the loop (kernel isolcpus=/nohz_full=) and pin it: [realtime] cpu_affinity",
            "run it SCHED_FIFO with locked memory: [realtime] sched_fifo_priority, mlockall (systemd unit: "
            "LimitRTPRIO, LimitMEMLOCK; docs/deploy.md)",
            f"or a lower [loop] rate_hz than {rate_hz:g}"]
    return out


def check_timing(stand, seconds: float = 3.0, clock: WallClock | None = None) -> TimingCheck:
    """Run the stand's wait for ``seconds`` at its rate (module docstring)."""
    clock = clock or WallClock.from_stand(stand)
    period = int(round(1e9 / stand.rate_hz))
    n = max(1, int(seconds * stand.rate_hz))
    late = np.empty(n, dtype=np.int64)
    missed = 0
    deadline = clock.now_ns() + period
    for i in range(n):
        t = clock.wait_until(deadline)
        late[i] = t - deadline
        deadline += period
        if t > deadline:                       # woke after the next slot too: those are missed
            k = (t - deadline) // period + 1
            missed += int(k)
            deadline += k * period
    verdict = judge(late, missed, period)
    us = late / 1e3
    return TimingCheck(stand.rate_hz, seconds, clock.policy, n, missed, float(np.percentile(us, 50)),
                       float(np.percentile(us, 99)), float(us.max()), verdict,
                       _advice(verdict, clock.policy, stand.rate_hz))
