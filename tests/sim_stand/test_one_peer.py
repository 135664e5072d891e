"""One controller per device link (issue 21 item 3), with real processes on real sockets: the
emulator (`dockstand emulate`) serves the first controller (`dockstand run`); a second
controller started on the same device endpoints by mistake is refused and named on both sides
-- the emulator says so on stderr, the second controller's status and arm refusal say "device
busy" -- while the first one arms and moves on untouched. Second controllers killed with
SIGKILL mid-connection (what made a PAIR device abort inside libzmq) leave the emulator
running."""
from __future__ import annotations

import pytest
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rt.record.telemetry import CommandClient

from config_edits import ipc_stand

REPO = Path(__file__).resolve().parents[2]


def _intruder(endpoints: list[str]) -> int:
    """A forked peer (no interpreter start-up to load the machine) that connects to the device
    endpoints, says hello and a few bytes, and waits to be killed; returns its pid once it has
    spoken."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                  # the child: its own context, never the parent's
        try:
            os.close(r)
            import zmq
            ctx = zmq.Context()
            socks = []
            for ep in endpoints:
                sk = ctx.socket(zmq.DEALER)
                sk.setsockopt(zmq.LINGER, 0)
                sk.connect(ep)
                socks.append(sk)
            for sk in socks:
                sk.send(b"")
                sk.send(b"\xa5\xc3 not a frame")
            time.sleep(0.2)
            os.write(w, b"x")
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"x"
    os.close(r)
    return pid


# this test is about peers, not about timing on a busy 2-core machine (forked intruders and
# a FIFO emulator share it with the controller): links may go quiet for 100 cycles before
# they count as lost, and the loop may overrun or miss 1000 cycles before it trips
PATIENT = (("stale_cycles = 5 ", "stale_cycles = 100 "), ("platform_stale_cycles = 20 ", "platform_stale_cycles = 100 "),
           ("overrun_streak_max = 5", "overrun_streak_max = 1000"), ("miss_budget = 50 ", "miss_budget = 1000 "))


def _stand(tmp_path: Path, name: str, cmd: str, pub: str) -> Path:
    return ipc_stand(tmp_path, name, cmd, pub, more=PATIENT)


def _start(args, tmp_path, **kw):
    env = {**os.environ, "DOCKSTAND_DATA": str(tmp_path / "data")}
    return subprocess.Popen([sys.executable, "-m", "rt.cli", *args], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, **kw)


def _leased(cli: CommandClient, cmd: str, **args) -> dict:
    assert cli.request("acquire")["ok"]
    try:
        return cli.request(cmd, **args)
    finally:
        cli.request("release")


def _wait(pred, timeout_s: float, what: str):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_a_second_controller_is_refused_and_named_and_the_first_goes_on(tmp_path):
    s1 = _stand(tmp_path, "stand1", "cmd1", "pub1")
    s2 = _stand(tmp_path, "stand2", "cmd2", "pub2")
    emu_err = open(tmp_path / "emu.err", "w+")
    procs = []
    try:
        # the emulator stands for devices with CPUs of their own (on a 2-core machine a
        # starting process could otherwise starve it; refused without the privilege)
        emu = _start(["emulate", "--stand", str(s1), "--sched-fifo", os.environ.get("EMU_FIFO", "10")], tmp_path, stderr=emu_err)
        procs.append(emu)
        assert json.loads(emu.stdout.readline())["ready"]
        c1 = _start(["run", "--stand", str(s1), "--no-preflight"], tmp_path, stderr=subprocess.DEVNULL)
        procs.append(c1)
        assert "dockstand run" in c1.stdout.readline()
        cli1 = CommandClient(f"ipc://{tmp_path}/cmd1", name="first", timeout_s=10)
        _wait(lambda: cli1.request("status")["links"]["sensor"]["seen"], 20, "the first controller to hear the sensor")
        # a second controller on the same device endpoints
        c2 = _start(["run", "--stand", str(s2), "--no-preflight"], tmp_path, stderr=subprocess.DEVNULL)
        procs.append(c2)
        assert "dockstand run" in c2.stdout.readline()
        cli2 = CommandClient(f"ipc://{tmp_path}/cmd2", name="second", timeout_s=10)
        st2 = _wait(lambda: (lambda r: r if "device busy" in r["links"]["sensor"]["status"] else None)(
            cli2.request("status")), 20, "the second controller to be told the device is busy")
        assert st2["links"]["sensor"]["seen"] is False and st2["links"]["platform"]["seen"] is False
        assert "serves another peer" in st2["links"]["sensor"]["status"]
        assert _leased(cli2, "load_case", case=str(REPO / "config" / "cases" / "nominal.toml"))["ok"]
        r = _leased(cli2, "arm")
        assert not r["ok"] and "device busy" in r["reason"], r
        # the emulator named the refused peer, once per link
        events = _wait(lambda: [json.loads(x) for x in Path(emu_err.name).read_text().splitlines()
                                if x.startswith("{") and "peer_refused" in x] or None, 10, "the emulator's report")
        assert {e["link"] for e in events} <= {"sensor", "platform"} and all("refused" in e["reason"] for e in events)
        # the first controller arms and reaches READY meanwhile, while the second controller is
        # killed with SIGKILL and more peers connect, speak and are killed mid-connection (the
        # condition that aborted a PAIR device)
        os.kill(c2.pid, signal.SIGKILL)
        c2.wait()
        assert _leased(cli1, "load_case", case=str(REPO / "config" / "cases" / "nominal.toml"))["ok"]
        r = _leased(cli1, "arm")
        assert r["ok"], r
        for _ in range(6):
            pid = _intruder([f"ipc://{tmp_path}/sensor", f"ipc://{tmp_path}/platform"])
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        st1 = _wait(lambda: (lambda r: r if r["phase"] in ("READY", "FROZEN", "STOP") else None)(
            cli1.request("status")), 60, "the first controller to be READY")
        assert st1["phase"] == "READY" and st1["state"] == "ARMED", (st1["trip"], st1.get("missed"), st1["links"])
        # ctl and consoles see which run they talk to
        run_id = Path(st1["log"]).stem
        assert st1["run_id"] == run_id and cli1.request("describe")["identity"]["run_id"] == run_id
        assert emu.poll() is None, "the emulator died"
        assert "Assertion failed" not in Path(emu_err.name).read_text()
        assert cli1.request("abort")["ok"]
    finally:
        for p in procs[::-1]:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs[::-1]:
            try:
                p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        emu_err.close()
