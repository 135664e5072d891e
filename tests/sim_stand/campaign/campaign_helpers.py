"""Campaign test helpers (imported by name; the fixtures are in conftest.py): a short campaign file, and a real Dask scheduler and workers started
as processes on loopback (stopped by PID)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
NOMINAL = ROOT / "config" / "cases" / "nominal.toml"


def toml_value(v) -> str:
    """A number, a string (a path) or a list of numbers as TOML writes it."""
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, (str, Path)):
        return f'"{v}"'
    return repr(v)


def write_campaign(path: Path, dispersions: dict, extra: str = "", **keys) -> Path:
    """A campaign file at ``path``: the top-level ``keys`` in their order (None: left out), a
    ``[dispersions.NAME]`` table for each entry of ``dispersions`` (name -> its keys), then the
    TOML text ``extra``."""
    lines = [f"{k} = {toml_value(v)}" for k, v in keys.items() if v is not None]
    for name, table in dispersions.items():
        lines += ["", f"[dispersions.{name}]", *(f"{k} = {toml_value(v)}" for k, v in table.items())]
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def short_campaign(tmp_path: Path, samples: int = 12, sampling: str = "lhs", extra: str = "") -> Path:
    """The nominal case cut to 2.5 s (capture settles 0.2 s after capture): ~0.2 s CPU a sample."""
    return write_campaign(tmp_path / "short.toml", {
        "position_y_m": {"distribution": "normal", "sigma": 0.01},
        "closing_velocity_mps": {"distribution": "uniform", "bounds": [0.08, 0.14]},
        "misalignment_2_deg": {"distribution": "normal", "three_sigma": 1.5},
        "damper_scale": {"distribution": "truncated_normal", "sigma": 0.1, "bounds": [0.8, 1.2]},
        "active_mass_scale": {"distribution": "uniform", "bounds": [0.95, 1.05]},
    }, extra, name="short", case=NOMINAL, samples=samples, seed=7, sampling=sampling, duration_s=2.5,
        capture_settle_s=0.2)


class DaskProcesses:
    """``dask scheduler`` and ``dask worker`` processes on 127.0.0.1 (no nanny: a worker's PID
    is the worker)."""

    def __init__(self, tmp_path: Path):
        self.dir = tmp_path
        self.procs: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        self.address = None

    def _start(self, args, log):
        f = open(self.dir / log, "wb")
        p = subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=f, stderr=subprocess.STDOUT,
                             env=os.environ.copy(), cwd=self.dir)
        self.procs.append(p)
        return p

    def start_scheduler(self):
        sf = self.dir / "scheduler.json"
        self._start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(sf)], "scheduler.log")
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if sf.exists():
                try:
                    self.address = json.loads(sf.read_text())["address"]
                    return self.address
                except (ValueError, KeyError):
                    pass
            time.sleep(0.1)
        raise RuntimeError("the dask scheduler did not start: " + (self.dir / "scheduler.log").read_text())

    def start_worker(self, name: str):
        p = self._start(["worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                         "--host", "127.0.0.1", "--name", name], f"worker-{name}.log")
        self.workers.append(p)
        return p

    def stop(self):
        """Workers first (each closes with the scheduler still there), then the scheduler: SIGTERM,
        and SIGKILL after 5 s."""
        for p in reversed(self.procs):
            if p.poll() is None:
                os.kill(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    os.kill(p.pid, signal.SIGKILL)
                    p.wait()


def comparable_rows(directory) -> list[dict]:
    """A results directory's rows without the columns that differ between machines."""
    from sim_stand.campaign.cli import comparable
    from sim_stand.campaign.store import ResultStore
    return [comparable(r) for r in ResultStore.open(directory).read().to_pylist()]


def run_on_processes(c, procs: DaskProcesses, out_dir):
    """Campaign ``c`` on a ``dask scheduler`` and one ``dask worker`` process started by ``procs``."""
    from sim_stand.campaign.engine import run_campaign
    addr = procs.start_scheduler()
    procs.start_worker("w1")
    return run_campaign(c, out_dir, scheduler=addr, progress=False)


def check_rows_on_processes(local_run, procs: DaskProcesses, out_dir, n: int) -> None:
    """``local_run``'s campaign (campaign, its results directory, its report) run again on a
    ``dask scheduler`` and a ``dask worker`` process into ``out_dir``: all ``n`` samples ran and
    the rows are those of the local run."""
    c, out, _ = local_run
    rep = run_on_processes(c, procs, out_dir)
    assert rep.ran == n
    assert comparable_rows(out_dir) == comparable_rows(out)
