"""Real-time set-up of the controller process and its loop thread; each step optional (from
``[realtime]`` of the stand config) and each reported plainly when the OS refuses.

    reports = apply_process(opts)            # once, in the main thread: mlockall
    reports += apply_thread(opts)            # in the loop thread: SCHED_FIFO, CPU affinity
    run_warm_up(hooks)                       # compile every kernel before the first cycle
    with GcPause(opts.gc_freeze):            # while RUNNING: gc collected, frozen, disabled
        loop.run()

Every function returns :class:`Report` objects (``name``, ``ok``, ``message``) instead of
raising; the controller logs them and publishes them in its status. ``os.sched_setscheduler(0,
...)`` and ``os.sched_setaffinity(0, ...)`` act on the *calling thread* on Linux, so calling
:func:`apply_thread` from the loop thread leaves the other threads (run-log writer, telemetry)
at normal priority.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable, Iterable

MCL_CURRENT, MCL_FUTURE = 1, 2


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


def lock_memory(enable: bool) -> Report:
    """mlockall(MCL_CURRENT | MCL_FUTURE) through ctypes."""
    if not enable:
        return Report("mlockall", True, "off")
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        libc = ctypes.CDLL(name, use_errno=True)
    except OSError as e:
        return Report("mlockall", False, f"cannot load libc: {e}")
    if libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0:
        err = ctypes.get_errno()
        return Report("mlockall", False, f"refused: {os.strerror(err)} (errno {err}); "
                      "needs CAP_IPC_LOCK or LimitMEMLOCK=infinity")
    return Report("mlockall", True, "all current and future pages locked")


def unlock_memory() -> Report:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        ok = libc.munlockall() == 0
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
    return [set_affinity(getattr(opts, "cpu_affinity", ())), set_fifo(getattr(opts, "sched_fifo_priority", 0))]


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
    gc.unfreeze() on exit (only if it disabled it). Use around RUNNING."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._was_enabled = False
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
