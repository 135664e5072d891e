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

With ``apply_realtime`` (``check-host``, ``run``) the measuring thread first takes the stand's
``[realtime]`` settings as the loop thread would (CPU affinity, SCHED_FIFO, timer slack, the
GIL switch interval; each refusal is reported), so the check measures the loop as deployed.
The kernel's RT throttling (``sched_rt_runtime_us``) is read: a SCHED_FIFO loop that spins
more than that share of each period is stopped for the rest of it (tens of missed deadlines
a second), so a FIFO stand with throttling on gets the adaptive margin capped
(``[loop] fifo_spin_fraction``) and ``wait_policy = "spin"`` with throttling on is advised
against. The advice names only what is not set already.

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
    realtime: list[str] = field(default_factory=list)     # what applying [realtime] did (apply_realtime)
    rt_throttling: str | None = None                       # the kernel's RT throttling, as read

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


def _advice(verdict: str, policy: str, rate_hz: float, rto=None, applied: dict | None = None,
            throttle: tuple[int, int] | None = None) -> list[str]:
    """What to change, naming only what is not in effect already (``applied``: each
    [realtime] step's outcome by name)."""
    applied = applied or {}
    fifo = bool(rto is not None and rto.sched_fifo_priority > 0 and applied.get("sched_fifo", False))
    out = []
    if fifo and throttle is not None and throttle[0] >= 0 and policy == "spin":
        out.append(f'RT throttling is on (kernel.sched_rt_runtime_us = {throttle[0]} of {throttle[1]}): a SCHED_FIFO '
                   'loop with wait_policy = "spin" is stopped for the rest of every period it exceeds that; use '
                   '"hybrid" or, on an isolated CPU, sysctl kernel.sched_rt_runtime_us=-1 (docs/deploy.md)')
    if verdict == "ok":
        return out
    if policy != "spin" and not fifo:
        out.append('[loop] wait_policy = "spin": the loop spins instead of sleeping (one core at 100 %)')
    if not (rto is not None and rto.cpu_affinity and applied.get("cpu_affinity", False)):
        out.append("isolate a CPU for the loop (kernel isolcpus=/nohz_full=) and pin it: [realtime] cpu_affinity")
    if not fifo:
        why = ("" if rto is None or rto.sched_fifo_priority <= 0 else
               " (configured, but the OS refused it: systemd LimitRTPRIO or CAP_SYS_NICE)")
        out.append("run it SCHED_FIFO with locked memory: [realtime] sched_fifo_priority, mlockall (systemd unit: "
                   f"LimitRTPRIO, LimitMEMLOCK; docs/deploy.md){why}")
    out.append(f"or a lower [loop] rate_hz than {rate_hz:g}")
    return out


def check_timing(stand, seconds: float = 3.0, clock: WallClock | None = None,
                 apply_realtime: bool = False) -> TimingCheck:
    """Run the stand's wait for ``seconds`` at its rate (module docstring); with
    ``apply_realtime`` in a thread that first takes the stand's ``[realtime]`` settings."""
    if apply_realtime:
        import threading
        box: dict = {}

        def measure():
            from rt import realtime as RT
            reports = [RT.set_switch_interval(stand.realtime.switch_interval_us)] + RT.apply_thread(stand.realtime)
            try:
                box["r"] = check_timing(stand, seconds, clock)
            finally:
                # the thread ends here: its FIFO priority and mask go with it; the process's
                # switch interval is the run's own (apply_process sets it again)
                box["reports"] = reports
        th = threading.Thread(target=measure, name="dockstand-preflight")
        th.start()
        th.join()
        r = box["r"]
        applied = {rep.name: rep.ok for rep in box["reports"]}
        r.realtime = [str(rep) for rep in box["reports"]]
        r.advice = _advice(r.verdict, r.policy, stand.rate_hz, stand.realtime, applied, _throttle())
        r.rt_throttling = _throttle_text()
        return r
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
                       _advice(verdict, clock.policy, stand.rate_hz), rt_throttling=_throttle_text())


def _throttle():
    from rt.control.clock import rt_runtime_us
    return rt_runtime_us()


def _throttle_text() -> str | None:
    t = _throttle()
    if t is None:
        return None
    return "off (sched_rt_runtime_us = -1)" if t[0] < 0 else \
        f"on: SCHED_FIFO threads get {t[0]} us of every {t[1]} us (kernel.sched_rt_runtime_us)"
