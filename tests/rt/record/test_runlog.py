"""Run log: round trip, header, events, truncated tail, SIGKILL mid-run, size per record."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgpack
import numpy as np
import pytest

from rt.record.runlog import SCHEMA_VERSION, RunLogWriter, read_log

REPO = Path(__file__).resolve().parents[3]
FIELDS = {"t": 1, "cycle": 1, "wrench_P": 6, "pose_cmd": 7}


def fill(w, n, start=0):
    wrench = np.zeros(6)
    pose = np.zeros(7)
    w.bind("wrench_P", wrench)
    w.bind("pose_cmd", pose)
    t = w.view("t")
    c = w.view("cycle")
    for i in range(start, start + n):
        t[0] = i * 1e-3
        c[0] = i
        wrench[:] = i + np.arange(6)
        pose[:] = -i
        assert w.commit()


def test_round_trip_header_and_events(tmp_path):
    p = tmp_path / "run.log"
    cfg = {"loop": {"rate_hz": 1000}, "calibration": np.eye(6)}
    with RunLogWriter(p, FIELDS, header={"config": cfg, "case": {"name": "c1"}}, threaded=False) as w:
        fill(w, 250)
        w.event("transition", cycle=3, previous="IDLE", state="CONFIGURED")
        w.flush()
        fill(w, 250, start=250)
        w.event("trip", cycle=400, reason="FORCE_LIMIT")
    log = read_log(p)
    assert not log.truncated and log.footer["records"] == 500 and log.footer["dropped"] == 0
    h = log.header
    assert h["schema"] == SCHEMA_VERSION and h["config"]["loop"]["rate_hz"] == 1000
    assert h["config"]["calibration"][0] == [1.0, 0, 0, 0, 0, 0] and h["case"] == {"name": "c1"}
    for key in ("version", "git", "host", "start_time", "start_time_ns"):
        assert h[key]
    assert log.n_records == 500
    assert np.array_equal(log.fields["cycle"], np.arange(500))
    assert log.fields["wrench_P"].shape == (500, 6)
    assert np.array_equal(log.fields["wrench_P"][:, 2], np.arange(500) + 2.0)
    assert np.array_equal(log.fields["pose_cmd"][:, 6], -np.arange(500.0))
    assert [e["kind"] for e in log.events] == ["transition", "trip"]
    assert log.events[1]["reason"] == "FORCE_LIMIT"
    sub = read_log(p, fields=["t"])
    assert list(sub.fields) == ["t"] and np.allclose(sub.fields["t"], np.arange(500) * 1e-3)
    with pytest.raises(KeyError):
        read_log(p, fields=["nope"])


def test_ring_full_drops_and_never_blocks(tmp_path):
    w = RunLogWriter(tmp_path / "r.log", {"x": 1}, capacity=8, threaded=False)
    ok = 0
    for i in range(20):
        w.view("x")[0] = i
        ok += w.commit()
    assert ok == 8 and w.dropped == 12
    w.flush()
    w.view("x")[0] = 99
    assert w.commit()
    w.close()
    log = read_log(tmp_path / "r.log")
    assert log.fields["x"].tolist() == list(range(8)) + [99]
    assert log.footer["dropped"] == 12


def test_ring_wrap_writes_two_blocks(tmp_path):
    w = RunLogWriter(tmp_path / "r.log", {"x": 2}, capacity=16, threaded=False)
    for i in range(100):
        w.view("x")[:] = (i, -i)
        w.commit()
        if i % 10 == 9:
            w.flush()
    w.close()
    log = read_log(tmp_path / "r.log")
    assert np.array_equal(log.fields["x"][:, 0], np.arange(100))


def test_truncated_tail_every_cut(tmp_path):
    p = tmp_path / "r.log"
    with RunLogWriter(p, {"i": 1, "v": 3}, threaded=False) as w:
        for blk in range(5):
            for i in range(blk * 40, blk * 40 + 40):
                w.view("i")[0] = i
                w.commit()
            w.event("mark", block=blk)
            w.flush()
    data = p.read_bytes()
    # offsets where each object ends
    up = msgpack.Unpacker(raw=False)
    up.feed(data)
    ends, n_at = [], []
    recs = 0
    for obj in up:
        if obj.get("k") == "rec":
            recs += obj["n"]
        ends.append(up.tell())
        n_at.append(recs)
    rng = np.random.default_rng(0)
    cuts = sorted(set(rng.integers(ends[0], len(data), 60).tolist()) | set(ends))
    for cut in cuts:
        q = tmp_path / "cut.log"
        q.write_bytes(data[:cut])
        log = read_log(q)
        complete = max(k for k, e in enumerate(ends) if e <= cut)
        assert log.n_records == n_at[complete]
        assert np.array_equal(log.fields["i"], np.arange(log.n_records))
        assert log.truncated == (cut != len(data))


WRITER = textwrap.dedent("""
    import sys, time
    import numpy as np
    from rt.record.runlog import RunLogWriter
    def flushed(n):
        print(n, flush=True)
    w = RunLogWriter(sys.argv[1], {"i": 1, "sq": 2}, flush_interval_s=0.02, on_flush=flushed)
    i = 0
    v = w.view("i"); s = w.view("sq")
    while True:
        for _ in range(20):
            v[0] = i; s[0] = i * i; s[1] = -i
            w.commit(); i += 1
        time.sleep(0.005)
""")


def test_sigkill_mid_run_keeps_every_record_up_to_the_last_flush(tmp_path):
    p = tmp_path / "killed.log"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(p)], stdout=subprocess.PIPE, text=True, env=env,
                            cwd=str(REPO))
    last = 0
    try:
        deadline = time.monotonic() + 60
        while last < 2000 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            last = int(line)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert last >= 2000, "the writer never reported enough flushes"
    log = read_log(p)
    assert log.truncated and log.footer is None
    assert log.n_records >= last
    i = log.fields["i"]
    assert np.array_equal(i, np.arange(log.n_records))
    assert np.array_equal(log.fields["sq"][:, 0], i * i)


def test_size_per_record_and_reading_scales(tmp_path):
    """The controller's record (~150 floats) costs 8 W bytes plus a few bytes per 100-record
    block; the reader's work is one msgpack object per block (not per record), so an hour at
    1 kHz (3.6e6 records, 36 000 blocks) reads in linear time without per-record overhead."""
    fields = {"t": 1, "cycle": 1, "timing": 6, "raw": 8, "wrench_P": 6, "sc_a": 25, "sc_p": 25, "rel": 13,
              "cmd": 13, "fb": 13, "lengths": 6, "state": 1, "flags": 1, "extra": 31}
    W = sum(fields.values())
    p = tmp_path / "big.log"
    n = 20_000
    with RunLogWriter(p, fields, threaded=False) as w:
        x = w.view("t")
        for i in range(n):
            x[0] = i
            w.commit()
            if i % 100 == 99:  # 100 ms at 1 kHz
                w.flush()
    header = len(msgpack.packb(read_log(p, fields=["t"]).header, use_bin_type=True))
    per_record = (p.stat().st_size - header) / n
    assert 8 * W <= per_record <= 8 * W + 1.0
    hour_gb = per_record * 3.6e6 / 1e9
    assert hour_gb < 5.0
    up = msgpack.Unpacker(raw=False)
    up.feed(p.read_bytes())
    objects = sum(1 for _ in up)
    assert objects <= n / 100 + 3
    log = read_log(p, fields=["t", "cycle"])
    assert log.n_records == n and np.array_equal(log.fields["t"], np.arange(n))


def test_background_thread_flushes_within_100_ms(tmp_path):
    seen = []
    w = RunLogWriter(tmp_path / "t.log", {"x": 1}, flush_interval_s=0.05, on_flush=seen.append)
    w.view("x")[0] = 1.0
    w.commit()
    t0 = time.monotonic()
    while not seen and time.monotonic() - t0 < 5:
        time.sleep(0.005)
    assert seen == [1]
    assert read_log(tmp_path / "t.log").n_records == 1  # readable before close
    w.close()
    w.close()
    with pytest.raises(ValueError):
        RunLogWriter(tmp_path / "u.log", {"x": 1}, flush_interval_s=0.5)


def test_not_a_run_log(tmp_path):
    p = tmp_path / "x.log"
    p.write_bytes(msgpack.packb({"k": "something"}))
    with pytest.raises(ValueError, match="not a run log"):
        read_log(p)
    p.write_bytes(b"")
    with pytest.raises(ValueError, match="not a run log"):
        read_log(p)


def test_writer_thread_drops_the_loop_threads_priority_and_cpus(tmp_path):
    """The writer thread is started by the loop thread at ARM: it must not keep the loop's
    SCHED_FIFO priority, CPU mask or timer slack (it sets itself to SCHED_OTHER on the start-up
    CPUs minus the loop's, with the start-up slack), and says so in its reports."""
    import threading

    from rt import realtime as RT
    from rt.config.stand import RealtimeOptions
    cpus = sorted(RT.STARTUP_CPUS)
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    out = {}

    def loop_thread():
        rep = RT.apply_thread(RealtimeOptions(cpu_affinity=(cpus[0],), sched_fifo_priority=10))
        out["pinned"], out["fifo"] = rep[0].ok, rep[1].ok
        w = RunLogWriter(tmp_path / "a.dslog", FIELDS)
        assert w.thread_ready.wait(5.0)
        tid = w._thread.native_id
        out["aff"] = os.sched_getaffinity(tid)
        out["policy"] = os.sched_getscheduler(tid)
        slack = f"/proc/self/task/{tid}/timerslack_ns"
        out["slack"] = int(open(slack).read()) if os.path.exists(slack) else None
        out["reports"] = w.thread_reports
        fill(w, 10)
        w.close()
        RT.set_other()

    t = threading.Thread(target=loop_thread)
    try:
        t.start()
        t.join()
    finally:
        RT.set_loop_cpus(())
    assert out["pinned"], "could not pin the test's loop thread"
    assert out["aff"] == set(cpus) - {cpus[0]}
    assert out["policy"] == os.SCHED_OTHER           # also when the loop thread got SCHED_FIFO
    names = [r.name for r in out["reports"]]
    # the loop thread set its timer slack to 1 ns (RealtimeOptions' default); the helper went
    # back to the process's start-up slack
    reset = ["helper_timer_slack"] if RT.STARTUP_SLACK not in (None, 1) else []
    assert names == ["helper_sched_other", "helper_cpu_affinity"] + reset, names
    assert all(r.ok for r in out["reports"])
    assert out["slack"] in (None, RT.STARTUP_SLACK)
    assert read_log(tmp_path / "a.dslog").n_records == 10


def test_demote_reports_refusals_plainly(monkeypatch):
    from rt import realtime as RT

    def refuse(*a):
        raise PermissionError(1, "Operation not permitted")
    monkeypatch.setattr(os, "sched_setaffinity", refuse)
    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    reps = RT.demote_helper_thread()
    assert [r.ok for r in reps] == [False, False]
    assert all("REFUSED" in str(r) and "Operation not permitted" in r.message for r in reps)


def test_git_describe_runs_once(tmp_path, monkeypatch):
    import rt.record.runlog as RL
    first = RL.git_describe()

    def no_subprocess(*a, **k):
        raise AssertionError("git describe ran again")
    monkeypatch.setattr(RL.subprocess, "run", no_subprocess)
    assert RL.git_describe() == first
    with RunLogWriter(tmp_path / "b.dslog", FIELDS) as w:
        fill(w, 3)
    assert read_log(tmp_path / "b.dslog").header["git"] == first


def test_request_close_does_not_wait(tmp_path, monkeypatch):
    """request_close() returns at once; the writer thread writes the rest, the footer, fsyncs
    and closes (here it is held in fsync until the test lets it go)."""
    import threading
    gate = threading.Event()
    entered = threading.Event()
    real = os.fsync

    def slow_fsync(fd):
        entered.set()
        assert gate.wait(10.0)
        return real(fd)
    monkeypatch.setattr(os, "fsync", slow_fsync)
    w = RunLogWriter(tmp_path / "c.dslog", FIELDS)
    fill(w, 5)
    w.request_close()
    assert not w.commit()                      # closed for records
    assert entered.wait(5.0) and not w.finished  # the writer thread is in fsync, we are not
    gate.set()
    assert w.wait_closed(5.0) and w.finished
    log = read_log(tmp_path / "c.dslog")
    assert log.n_records == 5 and not log.truncated


def test_kernel_commit_is_commit(tmp_path):
    """rt.control.kernels.commit_row (the controller's cycle commits in compiled code) does what
    RunLogWriter.commit does: the same ring rows and counters, drops when full, nothing once
    closed; and the file reads back the same."""
    from rt.control.kernels import commit_row
    a = RunLogWriter(tmp_path / "a.log", {"x": 1, "y": 2}, capacity=8, threaded=False)
    b = RunLogWriter(tmp_path / "b.log", {"x": 1, "y": 2}, capacity=8, threaded=False)
    assert b.kernel_commit_ok
    for i in range(30):
        for w in (a, b):
            w.staging[:] = (i, -i, 0.5 * i)
        a.commit()
        commit_row(b.staging, b.ring, b.cursor)
        if i % 11 == 10:                      # the writer catches up now and then
            a.flush()
            b.flush()
        assert (a.head, a.tail, a.dropped) == (b.head, b.tail, b.dropped)
        assert np.array_equal(a.ring, b.ring)
    assert a.dropped > 0
    for w in (a, b):
        w.request_close()
    a.staging[:] = b.staging[:] = 7.0
    assert not a.commit()
    commit_row(b.staging, b.ring, b.cursor)
    assert (a.head, a.dropped) == (b.head, b.dropped)
    la, lb = read_log(tmp_path / "a.log"), read_log(tmp_path / "b.log")
    assert la.n_records == lb.n_records > 0
    for k in ("x", "y"):
        assert np.array_equal(la.fields[k], lb.fields[k])
