"""Hostile requests mid-docking (issue 38): the controller in lockstep with the emulator
process, an operator console holding the lease, and a hostile local process (bench/_attacker.py)
that sends the fixed corpus — nested 1000 and 5000 deep, 60 kB and 100 kB, 3000-key maps,
mistyped fields, garbage, a FIFO and a 300 MB file to load, lease spoofing — and then a flood
of 10 000 requests, all while the docking runs. The docking ends DONE without a trip, every
item is answered as a correct server answers it (or dropped by libzmq), and afterwards a new
console still gets the events. Then, as the lease holder: a FIFO and a 300 MB file named as the
case are refused at once while the loop keeps its cycles, and an abort whose reason is nested
1000 deep is carried out, its reason replaced, its events readable."""
from __future__ import annotations

import pytest
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgpack
import zmq

from bench._attacker import _map, _nest, hostile_files
from rt.record.telemetry import CommandClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "console"))
from live_rig import REPO, LiveStand, short_case  # noqa: E402
from live_rig import wait_for as _wait  # noqa: E402



class Operator:
    """A console that holds the lease and sends a heartbeat every 0.5 s from its own thread."""

    def __init__(self, ep: str):
        self.cli = CommandClient(ep, name="operator", timeout_s=5.0)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.req("acquire")
        self.th = threading.Thread(target=self._beat, daemon=True)
        self.th.start()

    def req(self, cmd, **a):
        with self.lock:
            return self.cli.request(cmd, **a)

    def _beat(self):
        while not self.stop.wait(0.5):
            self.req("heartbeat")

    def close(self):
        self.stop.set()
        self.th.join(5)
        self.cli.close()


@pytest.mark.slow
def test_hostile_requests_mid_docking_leave_the_docking_done(tmp_path):
    case = short_case(tmp_path / "case")
    files = hostile_files(tmp_path / "hostile")
    rig = LiveStand(tmp_path / "runs", case)
    c = rig.ctl
    op = Operator(rig.cmd_ep)
    try:
        for cmd, kw in (("load_case", {"case": str(case)}), ("arm", {})):
            r = op.req(cmd, **kw)
            assert r["ok"], (cmd, r)
        assert _wait(lambda: c.phase.name == "READY"), (c.phase, c.trip_text)
        assert op.req("start")["ok"]
        assert _wait(lambda: c.phase.name == "DYNAMICS"), (c.phase, c.trip_text)
        out = tmp_path / "attack.json"
        att = subprocess.run([sys.executable, "-m", "bench._attacker", rig.cmd_ep, str(out), "--flood", "10000",
                              "--files", str(tmp_path / "hostile")], cwd=REPO, capture_output=True, text=True,
                             timeout=600)
        assert att.returncode == 0, att.stderr[-3000:]
        res = json.loads(out.read_text())
        assert _wait(lambda: c.supervisor.state.name != "RUNNING", 300), c.supervisor.state
        assert c.supervisor.state.name == "DONE" and c.trip_text is None, (c.supervisor.state, c.trip_text)
        assert rig.error is None and c.loop.cycle_errors == 0
        bad = [i for i in res["items"] if not i["ok"]]
        assert not bad, bad
        assert res["flood_replies"] == res["flood_sent"] == 10000, res
        tel = c.telemetry
        assert tel.refused >= sum(i["outcome"] == "refused" for i in res["items"]) - 12   # the lease refusals are not "bad"
        assert tel.rate_limited > 0 and tel.thread_errors == 0, tel.last_thread_error
        # the loop never ran a request: the docking's cycles were the emulator's pace, none missed
        assert c.loop.missed == 0
        # a console that attaches now gets the events (nothing a client sent breaks the packing)
        fresh = CommandClient(rig.cmd_ep, name="late-console", timeout_s=5.0)
        ev = fresh.request("events", since=0)
        assert ev["ok"] and ev["events"], ev
        fresh.close()

        # as the lease holder, with the run over: a FIFO and a 300 MB file are refused at once,
        # and the loop kept its cycles meanwhile
        n0 = c.loop.cycles
        t0 = time.monotonic()
        r = op.req("load_case", case=files["fifo"])
        assert not r["ok"] and "a FIFO, not a case file" in r["reason"] and time.monotonic() - t0 < 3.0, r
        r = op.req("load_case", case=files["huge"])
        assert not r["ok"] and "314.6 MB: not a case file" in r["reason"], r
        assert _wait(lambda: c.loop.cycles > n0 + 10, 10)

        # an abort whose reason is nested 1000 deep: carried out, its reason replaced; events readable
        s = zmq.Context.instance().socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(rig.cmd_ep)
        s.send_multipart([b"", _map(cmd=msgpack.packb("abort"), args=_map(reason=_nest(1000)))])
        assert s.poll(5000)
        r = msgpack.unpackb(s.recv_multipart()[-1], raw=False)
        s.close(0)
        assert r["ok"], r
        aborts = [e for e in c.recorder.events if e.get("command") == "abort"]
        assert aborts and "not kept" in aborts[-1]["reason"], aborts[-1:]
        fresh = CommandClient(rig.cmd_ep, name="another-console", timeout_s=5.0)
        ev = fresh.request("events", since=0)
        assert ev["ok"] and any(e.get("command") == "abort" for e in ev["events"])
        fresh.close()
    finally:
        op.close()
        rig.close()
    assert rig.error is None, rig.error


def test_a_case_whose_vehicle_is_a_device_or_a_fifo_is_refused_at_once(tmp_path):
    """Every file a case names is read as the case itself is: a regular file of at most 1 MiB
    (a vehicle set to /dev/zero fed the command worker without end, 130 MB/s, until the
    controller ran out of memory -- found by a review; a FIFO would block it for ever)."""
    import os
    import threading

    from rt.control.operator_port import read_case_file
    from sim_stand.cli import REPO
    nominal = (REPO / "config" / "cases" / "nominal.toml").read_text().replace(
        '"../vehicles/', f'"{REPO}/config/vehicles/')
    fifo = tmp_path / "vehicle.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "vehicle.toml"
    with open(big, "wb") as f:
        f.truncate(5 << 20)
    for target, why in (("/dev/zero", "is a device or socket"), (str(fifo), "is a FIFO"),
                        (str(big), "5.2 MB: not a configuration file")):
        text = nominal.replace(f'active = "{REPO}/config/vehicles/', f'active = "{target}" # ', 1)
        assert f'active = "{target}"' in text
        case = tmp_path / "case.toml"
        case.write_text(text)
        out = []
        th = threading.Thread(target=lambda: out.append(read_case_file(str(case))), daemon=True)
        th.start()
        th.join(10)
        assert out, f"reading a case whose vehicle is {target} did not return"
        c, _, reason = out[0]
        assert c is None and why in reason and target in reason, reason
