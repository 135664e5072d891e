"""Real-time set-up of the controller process and its loop thread; each step optional (from
``[realtime]`` of the stand config) and each reported plainly when the OS refuses.

    reports = apply_process(opts)            # once, in the main thread: mlockall
    reports += apply_thread(opts)            # in the loop thread: SCHED_FIFO, CPU affinity, timer slack
    run_warm_up(hooks)                       # compile every kernel before the first cycle
    gc_pause = GcPause(opts.gc_freeze)       # the controller enters it at ARM, leaves it after the run
    reports = demote_helper_thread()         # first thing in a helper thread the loop starts

Every function returns :class:`Report` objects (``name``, ``ok``, ``message``) instead of
raising; the controller logs them and publishes them in its status. ``os.sched_setscheduler(0,
...)`` and ``os.sched_setaffinity(0, ...)`` act on the *calling thread* on Linux, so calling
:func:`apply_thread` from the loop thread leaves the other threads (run-log writer, telemetry)
at normal priority — but a thread *started* by the loop thread (the run-log writer, started
at ARM) inherits the loop's SCHED_FIFO priority and CPU mask. Such a helper calls
:func:`demote_helper_thread` first: SCHED_OTHER, and the process's CPUs at start-up minus the
loop's (:func:`apply_thread` remembers them), or all of them when that leaves none.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

MCL_CURRENT, MCL_FUTURE = 1, 2
PR_SET_TIMERSLACK, PR_GET_TIMERSLACK = 29, 30


def _startup_cpus() -> frozenset[int]:
    try:
        return frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return frozenset()


# CPUs the process may use, as it started (before any loop thread narrowed its own mask; the
# module is imported before the loop starts), and the CPUs the loop thread was pinned to
STARTUP_CPUS: frozenset[int] = _startup_cpus()
_loop_cpus: frozenset[int] = frozenset()


def loop_cpus() -> frozenset[int]:
    """The CPUs :func:`apply_thread` pinned the loop thread to (empty: not pinned)."""
    return _loop_cpus


def set_loop_cpus(cpus: Iterable[int]) -> None:
    """Record the loop thread's CPUs (done by :func:`apply_thread`; tests restore it)."""
    global _loop_cpus
    _loop_cpus = frozenset(int(c) for c in cpus)


@dataclass(frozen=True)
class Report:
    name: str
    ok: bool
    message: str

    def __str__(self) -> str:
        return f"{self.name}: {'ok' if self.ok else 'REFUSED'}: {self.message}"


def _err(e: OSError) -> str:
    return f"{e.strerror or e} (errno {e.errno})"


def set_fifo(priority: int) -> Report:
    """SCHED_FIFO at ``priority`` for the calling thread (0 = leave the policy alone)."""
    if priority <= 0:
        return Report("sched_fifo", True, "off (SCHED_OTHER)")
    if not hasattr(os, "sched_setscheduler"):
        return Report("sched_fifo", False, "not supported on this OS")
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(priority)))
    except OSError as e:
        return Report("sched_fifo", False, f"priority {priority} refused: {_err(e)}; "
                      "needs CAP_SYS_NICE or LimitRTPRIO (systemd) / rtprio (limits.conf)")
    return Report("sched_fifo", True, f"loop thread at SCHED_FIFO {priority}")


def set_fifo_io_threads(priority: int) -> Report:
    """SCHED_FIFO at ``priority`` for the process's ZeroMQ I/O threads (libzmq names them
    ``ZMQbg/IO/<n>``): the device links' frames and the commands pass through them, so a loop
    at SCHED_FIFO whose I/O threads stay SCHED_OTHER still sees its sensor late whenever another
    process keeps the other CPU busy (0 = leave them alone). Linux only; never raises."""
    if priority <= 0:
        return Report("io_threads_fifo", True, "off (SCHED_OTHER)")
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")
                if Path(f"/proc/self/task/{t}/comm").read_text().startswith("ZMQbg/IO")]
    except OSError as e:
        return Report("io_threads_fifo", False, f"cannot list the threads: {_err(e)}")
    if not tids:
        return Report("io_threads_fifo", True, "no ZeroMQ I/O thread yet")
    try:
        for tid in tids:
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(int(priority)))
    except OSError as e:
        return Report("io_threads_fifo", False, f"priority {priority} refused: {_err(e)}")
    return Report("io_threads_fifo", True, f"{len(tids)} ZeroMQ I/O thread(s) at SCHED_FIFO {priority}")


def set_other() -> Report:
    """Back to SCHED_OTHER for the calling thread (after the loop)."""
    try:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (OSError, AttributeError) as e:
        return Report("sched_other", False, str(e))
    return Report("sched_other", True, "loop thread back at SCHED_OTHER")


def set_affinity(cpus: Iterable[int]) -> Report:
    cpus = sorted(set(int(c) for c in cpus))
    if not cpus:
        return Report("cpu_affinity", True, "off (all CPUs)")
    try:
        os.sched_setaffinity(0, cpus)
    except (OSError, ValueError) as e:
        return Report("cpu_affinity", False, f"CPUs {cpus} refused: {_err(e) if isinstance(e, OSError) else e}")
    return Report("cpu_affinity", True, f"loop thread on CPUs {cpus}")


_LIBC = None


def _libc():
    """libc, loaded once (``find_library`` runs ``ldconfig``: milliseconds, not for the loop
    thread's first cycle)."""
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _LIBC


_UL0 = ctypes.c_ulong(0)


def timer_slack_ns() -> int | None:
    """The calling thread's timer slack (None where prctl is unavailable)."""
    try:
        v = _libc().prctl(PR_GET_TIMERSLACK, _UL0, _UL0, _UL0, _UL0)
    except (OSError, AttributeError):
        return None
    return None if v < 0 else int(v)


# the timer slack of the thread that imported this module (the main thread, before any loop
# thread set its own): what helper threads go back to
STARTUP_SLACK: int | None = timer_slack_ns() if sys.platform.startswith("linux") else None


def set_timer_slack(ns: int) -> Report:
    """``prctl(PR_SET_TIMERSLACK, ns)`` for the calling thread (0 = leave it). Linux lets a
    sleeper's wake-up be deferred by up to the slack (50 us by default) to batch timer
    interrupts; the loop thread's sleeps want it as small as the OS allows (the systemd unit's
    ``TimerSlackNSec=1`` does the same for the whole service)."""
    if ns <= 0:
        return Report("timer_slack", True, "off (left as is)")
    if not sys.platform.startswith("linux"):
        return Report("timer_slack", False, "not supported on this OS")
    try:
        libc = _libc()
        if libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(int(ns)), _UL0, _UL0, _UL0) != 0:
            err = ctypes.get_errno()
            return Report("timer_slack", False, f"{ns} ns refused: {os.strerror(err)} (errno {err})")
    except (OSError, AttributeError) as e:
        return Report("timer_slack", False, f"prctl unavailable: {e}")
    return Report("timer_slack", True, f"loop thread's timer slack {timer_slack_ns()} ns")


def lock_memory(enable: bool) -> Report:
    """mlockall(MCL_CURRENT | MCL_FUTURE) through ctypes."""
    if not enable:
        return Report("mlockall", True, "off")
    try:
        libc = _libc()
    except OSError as e:
        return Report("mlockall", False, f"cannot load libc: {e}")
    if libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0:
        err = ctypes.get_errno()
        return Report("mlockall", False, f"refused: {os.strerror(err)} (errno {err}); "
                      "needs CAP_IPC_LOCK or LimitMEMLOCK=infinity")
    return Report("mlockall", True, "all current and future pages locked")


def unlock_memory() -> Report:
    try:
        ok = _libc().munlockall() == 0
    except OSError as e:
        return Report("munlockall", False, str(e))
    return Report("munlockall", ok, "pages unlocked" if ok else os.strerror(ctypes.get_errno()))


def set_switch_interval(us: float) -> Report:
    """``sys.setswitchinterval``: how long another thread may hold the GIL before handing over."""
    try:
        sys.setswitchinterval(us * 1e-6)
    except ValueError as e:
        return Report("switch_interval", False, str(e))
    return Report("switch_interval", True, f"{us:g} us")


def apply_process(opts) -> list[Report]:
    """Process-wide steps (main thread, before the loop thread starts)."""
    return [lock_memory(getattr(opts, "mlockall", False)),
            set_switch_interval(getattr(opts, "switch_interval_us", 5000.0))]


def apply_thread(opts) -> list[Report]:
    """Per-thread steps: call from the loop thread."""
    cpus = tuple(getattr(opts, "cpu_affinity", ()))
    aff = set_affinity(cpus)
    if aff.ok and cpus:
        set_loop_cpus(cpus)
    prio = getattr(opts, "sched_fifo_priority", 0)
    return [aff, set_fifo(prio), set_fifo_io_threads(max(1, prio - 1) if prio > 0 else 0),
            set_timer_slack(getattr(opts, "timer_slack_ns", 0))]


def demote_helper_thread() -> list[Report]:
    """First call of a helper thread (run-log writer) that may have been started by the loop
    thread and inherited its SCHED_FIFO priority, CPU mask and timer slack: back to
    SCHED_OTHER, onto the start-up CPUs minus the loop's (all start-up CPUs if that leaves
    none), and the process's start-up timer slack. Never raises."""
    out = []
    if hasattr(os, "sched_setscheduler"):
        try:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            out.append(Report("helper_sched_other", True, "helper thread at SCHED_OTHER"))
        except OSError as e:
            out.append(Report("helper_sched_other", False, f"SCHED_OTHER refused: {_err(e)}"))
    else:
        out.append(Report("helper_sched_other", False, "not supported on this OS"))
    if STARTUP_CPUS and hasattr(os, "sched_setaffinity"):
        cpus = STARTUP_CPUS - _loop_cpus or STARTUP_CPUS
        try:
            os.sched_setaffinity(0, cpus)
            out.append(Report("helper_cpu_affinity", True, f"helper thread on CPUs {sorted(cpus)}"))
        except (OSError, ValueError) as e:
            msg = _err(e) if isinstance(e, OSError) else str(e)
            out.append(Report("helper_cpu_affinity", False, f"CPUs {sorted(cpus)} refused: {msg}"))
    else:
        out.append(Report("helper_cpu_affinity", False, "CPU affinity not supported on this OS"))
    if STARTUP_SLACK and timer_slack_ns() != STARTUP_SLACK:
        r = set_timer_slack(STARTUP_SLACK)
        out.append(Report("helper_timer_slack", r.ok, r.message.replace("loop thread's", "helper thread's")))
    return out


def run_warm_up(hooks: Iterable[Callable[[], object]]) -> list[Report]:
    """Call each hook (kernel compilation, first-call paths); a failing hook is reported."""
    out = []
    for h in hooks:
        name = getattr(h, "__qualname__", repr(h))
        t0 = time.perf_counter()
        try:
            h()
        except Exception as e:
            out.append(Report(f"warm_up {name}", False, f"{type(e).__name__}: {e}"))
            continue
        out.append(Report(f"warm_up {name}", True, f"{(time.perf_counter() - t0) * 1e3:.1f} ms"))
    return out


class GcPause:
    """Context manager: gc.collect(); gc.freeze(); gc.disable() on entry, gc.enable() and
    gc.unfreeze() on exit (only if it disabled it). The controller enters it when the
    supervisor arms and leaves it when the run is over (:meth:`enter`/:meth:`leave`
    are the same without the ``with``; both idempotent)."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._was_enabled = False
        self._active = False
        self.report: Report | None = None

    def __enter__(self):
        if not self.enabled:
            self.report = Report("gc_freeze", True, "off")
            return self
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        self.report = Report("gc_freeze", True, f"collected, {gc.get_freeze_count()} objects frozen, gc disabled")
        return self

    def __exit__(self, *exc):
        if self.enabled:
            gc.unfreeze()
            if self._was_enabled:
                gc.enable()
        return False

    @property
    def active(self) -> bool:
        return self._active

    def enter(self) -> Report:
        if not self.active:
            self.__enter__()
            self._active = True
        return self.report

    def leave(self) -> Report | None:
        if not self.active:
            return None
        self._active = False
        self.__exit__(None, None, None)
        return Report("gc_freeze", True, "gc unfrozen and re-enabled" if self.enabled else "off")
