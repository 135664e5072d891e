"""Telemetry and commands over real tcp://127.0.0.1 sockets."""
import time

import msgpack
import numpy as np
import pytest
import zmq

from rt.control.clock import StepClock
from rt.control.loop import FixedStepLoop
from rt.record.telemetry import CommandClient, TelemetryServer, decode_state

ANY = "tcp://127.0.0.1:*"
FIELDS = {"t": 1, "wrench_P": 6, "blob": 293}  # 300 floats = 2.4 kB per message


class Work:
    def __init__(self, tel):
        self.tel = tel
        self.row = np.zeros(300)

    def read(self, c, t):
        pass

    def update(self, c, t):
        self.row[0] = t * 1e-9
        self.row[1:7] = c

    def write(self, c, t):
        self.tel.publish(c, t, 3, self.row)
        self.tel.poll()


def _controller_run(tmp_path, stalled: bool, n_dynamics: int = 2000):
    """The controller on the kinematic rig in lockstep with telemetry on (every cycle
    published: decimation 1, SNDHWM 4) through arming, run-up and ``n_dynamics`` cycles of
    the dynamics, with or without a subscriber that reads one message (so it is surely
    subscribed) and then never again."""
    from rt.config.stand import load_stand
    from rt.control.controller import Phase, with_endpoints
    from rt.record.runlog import read_log
    from sim_stand.kinematic_rig import STAND, Rig
    tmp_path.mkdir(parents=True, exist_ok=True)
    stand = with_endpoints(load_stand(STAND), telemetry={"pub_endpoint": f"ipc://{tmp_path}/pub",
                                                         "cmd_endpoint": f"ipc://{tmp_path}/cmd",
                                                         "decimation": 1, "sndhwm": 4})
    rig = Rig(tmp_path, telemetry=True, stand=stand)
    c = rig.ctl
    sub = None
    received = 0
    try:
        if stalled:
            sub = zmq.Context.instance().socket(zmq.SUB)
            sub.setsockopt(zmq.RCVHWM, 4)
            sub.setsockopt(zmq.RCVBUF, 4096)
            sub.setsockopt(zmq.SUBSCRIBE, b"")
            sub.connect(c.telemetry.pub_endpoint)
            for _ in range(500):               # until the subscription has reached the publisher
                c.telemetry.publish_event({"kind": "probe"})
                if sub.poll(10):
                    sub.recv_multipart()
                    break
            else:
                raise AssertionError("the subscriber never got a message")
        rig.arm_and_start()
        rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 2000)
        rig.run(n_dynamics)
        out = {"cycles": c.loop.cycles, "missed": c.loop.missed, "sent": c.telemetry.sent,
               "drops": c.telemetry.drops, "state": c.supervisor.state, "phase": c.phase}
        c.close()
        if sub is not None:                    # what the stalled subscriber holds now
            while sub.poll(100):
                sub.recv_multipart()
                received += 1
        log = read_log(c.log_path)
        out["fields"] = {k: v for k, v in log.fields.items() if k != "timing_ns"}
        out["n_records"] = log.n_records
        out["received"] = received
        return out
    finally:
        if sub is not None:
            sub.close(0)
        rig.close()


def test_stalled_subscriber_does_not_change_the_controller_run(tmp_path):
    """A subscriber that never reads: the lockstep controller run is the same cycle for cycle
    (cycle count, missed deadlines, every run-log field but host timing) as without it, and
    the subscriber really was stalled (it holds a small fraction of what was published:
    the rest was dropped, not waited for)."""
    from rt.control.controller import Phase
    from rt.control.supervisor import State
    a = _controller_run(tmp_path / "free", stalled=False)
    b = _controller_run(tmp_path / "stalled", stalled=True)
    assert a["state"] is b["state"] is State.RUNNING and a["phase"] is b["phase"] is Phase.DYNAMICS
    assert a["cycles"] == b["cycles"] and a["missed"] == b["missed"] == 0
    assert a["n_records"] == b["n_records"] > 2000
    assert list(a["fields"]) == list(b["fields"])
    for k in a["fields"]:
        np.testing.assert_array_equal(a["fields"][k], b["fields"][k], err_msg=k)
    assert a["sent"] == b["sent"] >= a["cycles"] - 1 and b["drops"] == 0
    assert 0 < b["received"] < b["sent"] // 4, (b["received"], b["sent"])


def test_subscriber_gets_decimated_state():
    ctx = zmq.Context()
    tel = TelemetryServer(FIELDS, pub_endpoint=ANY, cmd_endpoint=ANY, decimation=10, sndhwm=1000, context=ctx)
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"state")
    sub.connect(tel.pub_endpoint)
    time.sleep(0.2)
    w = Work(tel)
    FixedStepLoop(StepClock(), 1_000_000, w).run(max_cycles=500)
    got = []
    while sub.poll(500):
        got.append(decode_state(sub.recv_multipart(), FIELDS))
    assert tel.sent == 50
    assert [g["cycle"] for g in got] == list(range(0, 500, 10))
    g = got[3]
    assert g["state"] == 3 and g["t_ns"] == 31_000_000
    assert g["t"] == pytest.approx(0.031) and np.array_equal(g["wrench_P"], np.full(6, 30.0))
    sub.close(0)
    tel.close()
    ctx.term()


class FakeNow:
    def __init__(self):
        self.t = 0

    def __call__(self):
        return self.t


def roundtrip(tel, client, cmd, **args):
    rid = client.send(cmd, **args)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 5:
        tel.poll()
        if client.sock.poll(10):
            r = client.recv()
            assert r["id"] == rid
            return r
    raise TimeoutError(cmd)


def test_control_lease_and_commands():
    ctx = zmq.Context()
    now = FakeNow()
    lost = []
    handled = []

    def handler(cmd, args, client):
        handled.append((cmd, args, client))
        return {"ok": True, "reason": None, "state": "X"}

    tel = TelemetryServer(FIELDS, pub_endpoint=ANY, cmd_endpoint=ANY, handler=handler, now_ns=now,
                          lease_timeout_s=1.0, on_lease_lost=lambda *a: lost.append(a), context=ctx)
    a = CommandClient(tel.cmd_endpoint, name="console-A", context=ctx)
    b = CommandClient(tel.cmd_endpoint, name="console-B", context=ctx)
    r = roundtrip(tel, a, "arm")
    assert not r["ok"] and "needs the control lease" in r["reason"]
    assert roundtrip(tel, a, "acquire")["ok"]
    r = roundtrip(tel, b, "acquire")
    assert not r["ok"] and "console-A" in r["reason"]
    r = roundtrip(tel, b, "start")
    assert not r["ok"] and "held by console-A" in r["reason"]
    assert roundtrip(tel, b, "status")["ok"]           # watching needs no lease
    assert roundtrip(tel, b, "abort")["ok"]            # abort works without the lease
    r = roundtrip(tel, a, "load_case", case="c.toml")
    assert r["ok"] and r["lease"] == "console-A"
    assert handled == [("status", {}, "console-B"), ("abort", {}, "console-B"),
                       ("load_case", {"case": "c.toml"}, "console-A")]
    d = roundtrip(tel, b, "describe")
    assert d["fields"] == [["t", 1], ["wrench_P", 6], ["blob", 293]] and d["decimation"] == 20
    # heartbeats keep the lease; silence loses it and is reported
    now.t += 900_000_000
    assert roundtrip(tel, a, "heartbeat")["ok"]
    now.t += 900_000_000
    tel.poll()
    assert not lost and not tel.lease_lost
    now.t += 200_000_000
    tel.poll()
    assert lost == [("console-A", "silent")] and tel.lease_lost and tel.holder is None
    assert not roundtrip(tel, a, "heartbeat")["ok"]
    # a lapsed lease is not free for the taking: another console must confirm the takeover
    r = roundtrip(tel, b, "acquire")
    assert not r["ok"] and r["takeover_needed"] and "console-A lapsed" in r["reason"] and r["lease_lapsed"] == "console-A"
    assert roundtrip(tel, b, "acquire", takeover=True)["ok"] and not tel.lease_lost and tel.lapsed_from is None
    assert not roundtrip(tel, a, "release")["ok"]
    r = roundtrip(tel, a, "acquire", takeover=True)      # a live holder's lease is never taken over
    assert not r["ok"] and "held by console-B (last heard" in r["reason"]
    assert roundtrip(tel, b, "release")["ok"] and tel.holder is None
    assert roundtrip(tel, a, "acquire")["ok"]            # released cleanly: free, no confirmation
    now.t += 2_000_000_000
    tel.poll()
    assert tel.lapsed_from == "console-A"
    assert roundtrip(tel, a, "acquire")["ok"]            # the holder that lost it may come back without one
    for c in (a, b):
        c.close()
    tel.close()
    ctx.term()


def test_bad_requests_and_req_clients():
    ctx = zmq.Context()
    tel = TelemetryServer(FIELDS, pub_endpoint=ANY, cmd_endpoint=ANY, context=ctx)
    req = ctx.socket(zmq.REQ)
    req.connect(tel.cmd_endpoint)
    for body, want in ((b"\xc1", "bad request"), (msgpack.packb([1, 2]), "bad request"),
                       (msgpack.packb({"cmd": "ping"}), None), (msgpack.packb({"cmd": "fly"}), "unknown command")):
        req.send(body)
        t0 = time.monotonic()
        while not req.poll(10):
            tel.poll()
            assert time.monotonic() - t0 < 5
        r = msgpack.unpackb(req.recv(), raw=False)
        if want is None:
            assert r["ok"]
        else:
            assert not r["ok"] and want in r["reason"]
    req.close(0)
    tel.close()
    ctx.term()
    with pytest.raises(ValueError):
        TelemetryServer(FIELDS, decimation=0)


def test_publish_event_and_loopback_default():
    ctx = zmq.Context()
    tel = TelemetryServer(FIELDS, pub_endpoint=ANY, cmd_endpoint=ANY, context=ctx)
    assert tel.pub_endpoint.startswith("tcp://127.0.0.1:") and tel.cmd_endpoint.startswith("tcp://127.0.0.1:")
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"event")
    sub.connect(tel.pub_endpoint)
    time.sleep(0.2)
    assert tel.publish_event({"kind": "trip", "reason": "FORCE_LIMIT", "arr": np.zeros(2)})
    assert sub.poll(2000)
    topic, body = sub.recv_multipart()
    assert topic == b"event" and msgpack.unpackb(body)["reason"] == "FORCE_LIMIT"
    sub.close(0)
    tel.close()
    ctx.term()


def test_an_oversized_request_is_dropped_by_libzmq_and_others_still_answered():
    ctx = zmq.Context()
    tel = TelemetryServer(FIELDS, pub_endpoint=ANY, cmd_endpoint=ANY, context=ctx, max_request_bytes=4096)
    big = ctx.socket(zmq.DEALER)
    big.setsockopt(zmq.LINGER, 0)
    big.connect(tel.cmd_endpoint)
    big.send_multipart([b"", msgpack.packb({"cmd": "ping", "args": {"x": b"\0" * (20 << 20)}})])
    garbage = ctx.socket(zmq.DEALER)
    garbage.setsockopt(zmq.LINGER, 0)
    garbage.connect(tel.cmd_endpoint)
    garbage.send_multipart([b"", b"\xc1\xc1"])
    cli = CommandClient(tel.cmd_endpoint, name="ok", timeout_s=0.05, context=ctx)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 1.0:          # time for the 20 MB to arrive, if it were taken
        tel.poll()
        time.sleep(0.01)
    rid = cli.send("describe")
    r = None
    while r is None and time.monotonic() - t0 < 5:
        tel.poll()
        try:
            r = cli.recv(0.01)
        except TimeoutError:
            pass
    assert r is not None and r["id"] == rid and r["ok"] and r["max_request_bytes"] == 4096
    assert r["refused"] == 1 and r["requests"] == 2       # the garbage and the describe: never the 20 MB
    assert not big.poll(50)                                # and it got no answer
    for s in (big, garbage):
        s.close(0)
    cli.close()
    tel.close()
    ctx.term()
