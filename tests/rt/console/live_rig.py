"""A controller attached to the lockstep emulator for console tests: the emulator as its own
process (``dockstand emulate --lockstep``, stopped by PID), the controller's loop in a thread of
the test process with telemetry on private ipc endpoints (decimation 10, so a console sees
every phase), paced to ~``cycle_s`` of wall time per cycle so a console can follow it."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

from rt.config.stand import load_stand
from rt.control.controller import Controller, with_endpoints
from sim_stand.cli import (DEFAULT_STAND, REPO, _emulator_config, _endpoint_override, die_with_parent, lockstep_stand,
                           start_lockstep)

NOMINAL = REPO / "config" / "cases" / "nominal.toml"


def short_case(tmp: Path) -> Path:
    """The nominal docking started closer (first contact after ~0.45 s instead of 0.96 s: the units
    touch at x ≈ -0.60 m) and cut to 4 s (contact, capture, a lean test)."""
    text = NOMINAL.read_text().replace("../vehicles/", f"{REPO}/config/vehicles/")
    text = text.replace("duration_s = 10.0", "duration_s = 4.0").replace("position_m = [-0.70,", "position_m = [-0.65,")
    tmp.mkdir(parents=True, exist_ok=True)
    p = tmp / "nominal_short.toml"
    p.write_text(text)
    return p


class LiveStand:
    def __init__(self, log_dir: Path, case: Path = NOMINAL, cycle_s: float = 0.0, decimation: int = 10,
                 limits: dict | None = None):
        """``limits``: [limits] values of the controller's stand to replace (e.g. a brisker retract)."""
        self.tmp = Path(tempfile.mkdtemp(prefix="dockstand-console-"))
        s_ep, p_ep = f"ipc://{self.tmp}/sensor", f"ipc://{self.tmp}/platform"
        stand = load_stand(DEFAULT_STAND)
        stand = replace(stand, sensor_link=_endpoint_override(stand.sensor_link, s_ep),
                        platform_link=_endpoint_override(stand.platform_link, p_ep))
        stand = lockstep_stand(stand, _emulator_config(None, case))
        if limits:
            stand = replace(stand, limits=replace(stand.limits, **limits))
        self.cmd_ep, self.pub_ep = f"ipc://{self.tmp}/cmd", f"ipc://{self.tmp}/pub"
        stand = with_endpoints(stand, telemetry={"pub_endpoint": self.pub_ep, "cmd_endpoint": self.cmd_ep,
                                                 "decimation": decimation, "sndhwm": 64, "lease_timeout_s": 5.0})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rt.cli", "emulate", "--stand", str(stand.file), "--lockstep", "--sensor-endpoint",
             s_ep, "--platform-endpoint", p_ep, "--case", str(case)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, cwd=str(REPO), preexec_fn=die_with_parent(os.getpid()))
        assert self.proc.stdout.readline(), self.proc.stderr.read()
        from rt.analysis.audit import run_audit
        self.ctl = Controller(stand, lockstep=True, telemetry=True, log_dir=log_dir, lockstep_timeout_s=0.5,
                              auditor=run_audit)
        start_lockstep(self.ctl)
        self.stop = threading.Event()
        self.cycle_s = cycle_s
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        def pred(c):
            if self.cycle_s:
                time.sleep(self.cycle_s)
            return self.stop.is_set()
        try:
            self.ctl.run_until(pred, None)
        except BaseException as e:  # noqa: BLE001 - the test reports it
            self.error = e

    def close(self):
        self.stop.set()
        self.thread.join(timeout=10)
        self.ctl.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


async def until(pilot, pred, timeout=60.0, step=0.05) -> bool:
    """Let the console run until ``pred()`` holds (True) or ``timeout`` s pass (False)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return True
        await pilot.pause(step)
    return False


def state_of(app):
    """The supervisor state the console shows (None before its first sample)."""
    from rt.console import view as V
    return V.name_of(V.STATES, app.sample["state"]) if app.sample else None


def phase_of(app):
    """The controller phase the console shows (None before its first sample)."""
    from rt.console import view as V
    return V.name_of(V.PHASES, app.sample["phase"]) if app.sample else None


def wait_for(pred, timeout=120.0) -> bool:
    """Poll ``pred()`` every 20 ms until it holds (True) or ``timeout`` s pass (False): for a
    test thread watching a controller whose loop runs in another thread."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return True
        time.sleep(0.02)
    return False
