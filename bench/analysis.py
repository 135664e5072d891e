"""Figures of the post-test analysis (issue 22; docs/analysis.md, "Figures").

A synthetic HIL run log of the controller's own record layout (the nominal case's vehicles,
the stand config's snapshot in the header; a docking-like wrench and relative motion, the
platform following the command) is written with the real writer: >= 1 GB (15 min at 1 kHz),
100 MB with ``--quick``. Then, each in this run:

* ``log_read_mb_per_s`` — ``load_run`` (the index) plus one field (``w_P``) of that log, file
  MB over seconds; the file was just written, so it is read from the page cache
  (``log_read_cache`` says so): the reader's own cost, not the disk's.
* ``report_s_per_run_minute`` — ``dockstand report LOG -o FILE.pdf`` in a child process
  (without ``--simulate``), wall seconds over the log's minutes of run; ``report_peak_mb`` —
  that process's peak resident memory (``ru_maxrss``), ``report_pages`` its page count;
  ``report_cpu_s_per_run_minute`` its CPU seconds (user + system) per run minute, which a
  shared machine's load inflates far less than the wall figure (``report_load_average`` beside).

Then the nominal demo (``dockstand demo``'s lockstep run of config/cases/nominal.toml) and:

* ``report_simulate_s`` — ``dockstand report DEMO_LOG --simulate --reference-log REF -o
  FILE.pdf`` in a child process, wall seconds: the digital reference simulated (at the emulated
  stand's own integrator and step, from the arming's mechanism state: what the run is judged
  against) and the report written (goal <= 30 s; the kernels come compiled from numba's cache,
  as on any machine after its first run); ``report_simulate_reused_s`` — the same command
  again, the reference at ``REF`` reused (made for this run), and ``report_simulate_ref_s`` —
  the reference's own share (the first minus the second).
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _write_log(path: Path, target_bytes: int) -> tuple[int, float]:
    """The synthetic log; returns (records, run seconds)."""
    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from rt.control.recorder import record_fields
    from rt.dynamics import spacecraft as S
    from rt.record.runlog import RunLogWriter
    from sim_stand.cli import DEFAULT_STAND, REPO

    case_path = REPO / "config" / "cases" / "nominal.toml"
    case = load_case(case_path)
    stand = load_stand(DEFAULT_STAND)
    sc = S.Spacecraft.from_case(case)
    fields = record_fields(6, sc.ns)
    width = sum(fields.values())
    n = max(1, target_bytes // (8 * width))
    block = 1000
    w = RunLogWriter(path, fields, header={"config": stand.raw, "case": str(case_path), "case_digest": case.digest,
                                          "kind": "hil", "compensate": True, "tau_s": 0.005, "rate_hz": 1000.0,
                                          "lockstep": True, "sensing_filter": {"cutoff_hz": 100.0, "damping": 0.7071}},
                     threaded=False, capacity=2 * block)
    off = {}
    o = 0
    for k, s in fields.items():
        off[k] = slice(o, o + s)
        o += s
    rows = np.zeros((block, width))
    x0 = sc.x.ravel()
    home = stand.hexapod.home
    for b0 in range(0, n, block):
        m = min(block, n - b0)
        i = np.arange(b0, b0 + m)
        t = i * 1e-3
        rows[:m] = 0.0
        rows[:m, off["t"]] = t[:, None]
        rows[:m, off["cycle"]] = i[:, None]
        rows[:m, off["phase"]] = 6.0                                  # DYNAMICS
        rows[:m, off["state"]] = 3.0
        rows[:m, off["timing_ns"]] = (2000.0, 1500.0, 5000.0, 900.0)
        f = 500.0 * np.sin(2 * np.pi * 0.5 * t) ** 2
        rows[:m, off["w_P"].start] = -f
        rows[:m, off["w_P"].start + 4] = 0.05 * f
        rows[:m, off["x"]] = x0
        rp = rows[:m, off["rel_pose"]]
        rp[:, 0] = -0.05 * np.cos(2 * np.pi * 0.5 * t)
        rp[:, 3] = 1.0
        rows[:m, off["rel_twist"].start] = 0.05 * np.pi * np.sin(2 * np.pi * 0.5 * t)
        for name in ("cmd_pose", "meas_pose"):
            pp = rows[:m, off[name]]
            pp[:, :3] = home[:3]
            pp[:, 3:] = home[3:]
            pp[:, 0] += rp[:, 0]
        rows[:m, off["cmd_lengths"]] = 2.0
        rows[:m, off["meas_lengths"]] = 2.0
        for k in range(m):
            w.staging[:] = rows[k]
            w.commit()
        w.flush()
    w.close(fsync=False)
    return n, n * 1e-3


def run(quick: bool = False) -> dict:
    from rt.analysis.run import load_run

    target = (100 if quick else 1100) * (1 << 20)
    with tempfile.TemporaryDirectory(prefix="dockstand-bench-analysis-") as d:
        log = Path(d) / "synthetic.dslog"
        n, run_s = _write_log(log, target)
        mb = log.stat().st_size / 1e6
        t0 = time.perf_counter()
        r = load_run(log)
        wp = r.field("w_P")
        read_s = time.perf_counter() - t0
        assert wp.shape == (n, 6)
        del wp, r
        out = Path(d) / "report.pdf"
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        before = r0.ru_maxrss
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "rt.cli", "report", str(log), "-o", str(out)],
                           capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
        rep_s = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        rep_cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
        peak_kb = r1.ru_maxrss
        if p.returncode != 0:
            raise RuntimeError(f"report failed: {p.stderr.strip()}")
        sim = report_simulate(Path(d))
    return {**sim,"log_bench_file_mb": round(mb, 1), "log_bench_records": int(n),
            "log_read_mb_per_s": round(mb / read_s, 1), "log_read_cache": "page cache (file just written)",
            "report_s_per_run_minute": round(rep_s / (run_s / 60.0), 3),
            "report_cpu_s_per_run_minute": round(rep_cpu / (run_s / 60.0), 3),
            "report_load_average": round(os.getloadavg()[0], 2),
            "report_peak_mb": round(max(peak_kb, before) / 1024.0, 1),
            "report_pages": pages_of(p.stdout)}


def pages_of(stdout: str) -> int | None:
    """The page count ``dockstand report`` prints on its first line (``FILE.pdf: 8 pages, ...``;
    the fidelity line that follows has a colon too), or None."""
    import re
    m = re.search(r": (\d+) pages,", stdout.splitlines()[0]) if stdout.strip() else None
    return int(m.group(1)) if m else None


def report_simulate(d: Path) -> dict:
    """``report --simulate`` of the nominal demo, then again with its reference reused (module
    docstring); each in a child process, wall seconds."""
    from sim_stand.cli import REPO, run_demo

    log = Path(run_demo(REPO / "config" / "cases" / "nominal.toml", log_dir=d / "demo")["log"])
    ref, out = d / "reference.dslog", d / "simulate.pdf"
    argv = [sys.executable, "-m", "rt.cli", "report", str(log), "--simulate", "--reference-log", str(ref),
            "-o", str(out), "--quiet"]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    times, cpu = [], []
    for _ in range(2):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(argv, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        if p.returncode != 0:
            raise RuntimeError(f"report --simulate failed: {p.stderr.strip()}")
    return {"report_simulate_s": round(times[0], 2), "report_simulate_reused_s": round(times[1], 2),
            "report_simulate_ref_s": round(times[0] - times[1], 2), "report_simulate_cpu_s": round(cpu[0], 2),
            "report_simulate_reused_cpu_s": round(cpu[1], 2)}
