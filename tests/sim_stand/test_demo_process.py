"""The demo leaves nothing behind (issue 21 item 7): its emulator dies with it, even after a
``kill -9``, and a finished demo removes its endpoints' folder. Real processes, by PID."""
from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from rt import SOURCE_ROOT


def _children(pid: int) -> list[tuple[int, str]]:
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    out.append((int(d), f.read().replace(b"\0", b" ").decode()))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_emulator_dies_with_a_killed_demo(tmp_path):
    demo = subprocess.Popen([sys.executable, "-m", "rt.cli", "demo", "--log-dir", str(tmp_path)],
                            cwd=SOURCE_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        emu = None
        end = time.monotonic() + 60
        while emu is None and time.monotonic() < end:
            emu = next((p for p, cmd in _children(demo.pid) if " emulate " in cmd), None)
            time.sleep(0.05)
        assert emu is not None, "the demo did not start its emulator"
        os.kill(demo.pid, signal.SIGKILL)
        demo.wait(10)
        end = time.monotonic() + 15
        while _alive(emu) and time.monotonic() < end:
            time.sleep(0.05)
        assert not _alive(emu), f"emulator {emu} outlived the killed demo {demo.pid}"
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()


@pytest.mark.slow
def test_a_finished_demo_leaves_no_temporary_folder(tmp_path):
    from sim_stand.cli import REPO, run_demo
    pattern = os.path.join(tempfile.gettempdir(), "dockstand-demo-*")
    before = set(glob.glob(pattern))
    out = run_demo(REPO / "config" / "cases" / "nominal.toml", log_dir=tmp_path)
    assert out["final_state"] == "DONE"
    assert set(glob.glob(pattern)) - before == set()
