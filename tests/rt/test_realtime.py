"""Real-time set-up reports (never raises) and sd_notify against a real AF_UNIX socket."""
import gc
import os
import socket
import sys
import threading
import uuid

import pytest

from rt import realtime as RT
from rt.operator import sdnotify
from rt.config.stand import RealtimeOptions


def test_gc_pause_freezes_and_restores():
    assert gc.isenabled()
    with RT.GcPause(True) as g:
        assert not gc.isenabled() and g.report.ok
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with RT.GcPause(False) as g:
        assert gc.isenabled() and g.report.message == "off"


def test_gc_pause_enter_leave_idempotent():
    g = RT.GcPause(True)
    assert g.leave() is None and gc.isenabled()
    try:
        assert g.enter().ok and not gc.isenabled() and gc.get_freeze_count() > 0
        g.enter()                                   # twice: still one pause
        assert g.active
    finally:
        r = g.leave()
    assert r.ok and gc.isenabled() and gc.get_freeze_count() == 0 and not g.active
    assert g.leave() is None
    off = RT.GcPause(False)
    assert off.enter().message == "off" and gc.isenabled()
    off.leave()
    assert gc.isenabled()


def test_steps_report_instead_of_raising():
    opts = RealtimeOptions(gc_freeze=True, sched_fifo_priority=10, cpu_affinity=(0,), mlockall=True,
                           timer_slack_ns=1)
    out = {}
    main_slack = RT.timer_slack_ns()

    def thread():  # per-thread steps in their own thread, like the loop thread
        out["r"] = RT.apply_thread(opts)
        out["slack"] = RT.timer_slack_ns()
        RT.set_other()

    before = os.sched_getaffinity(0)
    switch = sys.getswitchinterval()
    t = threading.Thread(target=thread)
    t.start()
    t.join()
    RT.set_loop_cpus(())   # apply_thread remembered the test thread's CPUs as the loop's
    try:
        reports = RT.apply_process(opts) + out["r"]
    finally:
        RT.unlock_memory()
        sys.setswitchinterval(switch)
    names = [r.name for r in reports]
    assert names == ["mlockall", "switch_interval", "cpu_affinity", "sched_fifo", "io_threads_fifo", "timer_slack"]
    if reports[5].ok:   # prctl is Linux's: the loop thread's slack is 1 ns (recent kernels read 0 for a
        # SCHED_FIFO thread: they give real-time threads none), the main thread's is untouched
        assert out["slack"] in ((0, 1) if reports[3].ok else (1,)) and RT.timer_slack_ns() == main_slack
    for r in reports:
        assert r.message and str(r).startswith(r.name)
        if not r.ok:
            assert "REFUSED" in str(r)
    assert os.sched_getaffinity(0) == before  # the main thread is untouched
    fifo = reports[3]
    assert fifo.ok or "LimitRTPRIO" in fifo.message
    ml = reports[0]
    assert ml.ok or "LimitMEMLOCK" in ml.message
    assert not RT.set_affinity([10_000]).ok
    assert RT.set_fifo(0).ok and RT.set_affinity([]).ok and RT.lock_memory(False).ok


def test_warm_up_hooks():
    calls = []

    def fine():
        calls.append(1)

    def broken():
        raise RuntimeError("no numba")

    r = RT.run_warm_up([fine, broken])
    assert calls == [1] and r[0].ok and not r[1].ok and "no numba" in r[1].message


@pytest.mark.parametrize("abstract", [False, True])
def test_sdnotify_to_a_real_socket(tmp_path, monkeypatch, abstract):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if abstract:
        name = f"dockstand-test-{uuid.uuid4().hex}"
        srv.bind("\0" + name)
        env = "@" + name
    else:
        env = str(tmp_path / "notify.sock")
        srv.bind(env)
    srv.settimeout(2.0)
    monkeypatch.setenv("NOTIFY_SOCKET", env)
    n = sdnotify.Notifier()
    assert n.enabled
    assert n.ready() and n.watchdog() and n.status("RUNNING case c1\nline") and n.stopping()
    got = [srv.recv(4096).decode() for _ in range(4)]
    assert got == ["READY=1", "WATCHDOG=1", "STATUS=RUNNING case c1 line", "STOPPING=1"]
    n.close()
    srv.close()


def test_sdnotify_without_systemd_and_dead_socket(monkeypatch, tmp_path):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    n = sdnotify.Notifier()
    assert not n.enabled and not n.ready()
    n = sdnotify.Notifier(str(tmp_path / "nobody"))
    assert not n.ready() and n.errors == 1  # never raises


def test_watchdog_interval(monkeypatch):
    monkeypatch.setenv("WATCHDOG_USEC", "2000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert sdnotify.watchdog_interval_s() == 2.0
    monkeypatch.setenv("WATCHDOG_PID", "1")
    assert sdnotify.watchdog_interval_s() is None
    monkeypatch.delenv("WATCHDOG_USEC")
    assert sdnotify.watchdog_interval_s() is None


def test_zmq_io_threads_follow_the_loop_to_sched_fifo():
    """The device links' frames pass through libzmq's I/O threads: with sched_fifo_priority
    they run at SCHED_FIFO too (one below the loop), or the refusal is reported."""
    import zmq
    ctx = zmq.Context()
    sock = ctx.socket(zmq.PAIR)        # the context's I/O thread exists once a socket does
    try:
        # the I/O threads there are when it is called (another test's context left in the
        # process may start one of its own at any time: not this call's to set)
        tids = [int(t) for t in os.listdir("/proc/self/task")
                if open(f"/proc/self/task/{t}/comm").read().startswith("ZMQbg/IO")]
        assert tids
        r = RT.set_fifo_io_threads(5)
        if r.ok:
            assert "SCHED_FIFO 5" in r.message
            alive = [t for t in tids if os.path.exists(f"/proc/self/task/{t}")]
            assert alive and all(os.sched_getscheduler(t) == os.SCHED_FIFO for t in alive)
        else:
            assert "refused" in r.message
        assert RT.set_fifo_io_threads(0).ok
    finally:
        for t in os.listdir("/proc/self/task"):
            try:
                if open(f"/proc/self/task/{t}/comm").read().startswith("ZMQbg/IO"):
                    os.sched_setscheduler(int(t), os.SCHED_OTHER, os.sched_param(0))
            except OSError:
                pass
        sock.close(0)
        ctx.term()
