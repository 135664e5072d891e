"""`dockstand run` and `dockstand ctl` as a user runs them: a real controller process on private
ipc endpoints, commands over its ROUTER socket, SIGTERM -> safe stop and a clean exit."""
from __future__ import annotations

import pytest
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from config_edits import ipc_stand

REPO = Path(__file__).resolve().parents[3]


def _ctl(tmp_path, *args):
    r = subprocess.run([sys.executable, "-m", "rt.cli", "ctl", *args, "--endpoint", f"ipc://{tmp_path}/cmd",
                        "--timeout", "5"], capture_output=True, text=True, cwd=REPO, timeout=60)
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else r.stderr)


@pytest.mark.slow
def test_run_ctl_and_sigterm(tmp_path):
    stand = ipc_stand(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "rt.cli", "run", "--stand", str(stand)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert "dockstand run" in first, proc.stderr.read() if proc.poll() is not None else first
        rc, r = _ctl(tmp_path, "status")
        assert rc == 0 and r["state"] == "IDLE" and r["ok"], r
        w = r["wait"]   # the stand's wall-clock wait: hybrid, adaptive, never narrower than its minimum
        assert w["policy"] == "hybrid" and w["adaptive"] and w["margin_us"] >= 200.0 and w["late_sleeps"] <= w["sleeps"]
        rc, r = _ctl(tmp_path, "load", str(REPO / "config" / "cases" / "nominal.toml"))
        assert rc == 0 and r["state"] == "CONFIGURED", r
        rc, r = _ctl(tmp_path, "arm")   # nothing streams on the sensor link: refused, with the reason
        assert rc == 1 and r["state"] == "CONFIGURED" and "not streaming" in r["reason"], r
        assert "never heard" in r["reason"] and f"ipc://{tmp_path}/sensor" in r["reason"], r["reason"]
        rc, r = _ctl(tmp_path, "status")  # before arming, status says which link was never heard, and where
        for name in ("sensor", "platform"):
            link = r["links"][name]
            assert link["seen"] is False and link["last_frame_age_s"] is None
            assert f"ipc://{tmp_path}/{name}" in link["device"], link
        rc, r = _ctl(tmp_path, "start")
        assert rc == 1 and "not allowed in state CONFIGURED" in r["reason"]
        # ctl says whom it talks to, and refuses a leased command to another stand than --stand's
        p = subprocess.run([sys.executable, "-m", "rt.cli", "ctl", "status", "--stand", str(stand), "--timeout", "5"],
                           capture_output=True, text=True, cwd=REPO, timeout=60)
        assert p.returncode == 0 and f"controller of stand 'default' ({stand}) on " in p.stderr, p.stderr
        assert f"pid {proc.pid}, no run yet" in p.stderr
        other = tmp_path / "other.toml"
        other.write_text(stand.read_text().replace('name = "default"', 'name = "lab-stand-2"', 1))
        p = subprocess.run([sys.executable, "-m", "rt.cli", "ctl", "arm", "--stand", str(other), "--timeout", "5"],
                           capture_output=True, text=True, cwd=REPO, timeout=60)
        assert p.returncode == 2 and "refusing arm" in p.stderr and "not 'lab-stand-2'" in p.stderr, p.stderr
        rc, r = _ctl(tmp_path, "status")
        assert r["lease"] is None                    # the refusal took no lease
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["state"] in ("ABORTED", "CONFIGURED")
        assert summary["cycles"] > 0 and summary["wait"]["policy"] == "hybrid"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
