"""Telemetry and commands over real tcp://127.0.0.1 sockets."""
import time

import msgpack
import numpy as np
import pytest
import zmq

from rt.clock import StepClock
from rt.loop import FixedStepLoop
from rt.telemetry import CommandClient, TelemetryServer, decode_state

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


def lockstep_run(with_stalled_subscriber, n=20_000):
    ctx = zmq.Context()
    tel = TelemetryServer(FIELDS, pub_endpoint=ANY, cmd_endpoint=ANY, decimation=1, sndhwm=4, context=ctx)
    sub = None
    if with_stalled_subscriber:
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.RCVHWM, 4)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(tel.pub_endpoint)
        time.sleep(0.2)  # let the subscription reach the publisher
    loop = FixedStepLoop(StepClock(), 1_000_000, Work(tel))
    loop.run(max_cycles=n)
    out = (loop.cycles, loop.missed, loop.timing.snapshot(), tel.sent, tel.drops)
    if sub is not None:
        sub.close(0)
    tel.close()
    ctx.term()
    return out


def test_stalled_subscriber_does_not_change_the_loop():
    a = lockstep_run(False)
    b = lockstep_run(True)
    assert a[0] == b[0] == 20_000 and a[1] == b[1] == 0
    for k in a[2]:
        assert np.array_equal(a[2][k], b[2][k]), k
    assert b[3] + b[4] == 20_000  # every cycle either sent or counted as dropped


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
                          lease_timeout_s=1.0, on_lease_lost=lost.append, context=ctx)
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
    assert lost == ["console-A"] and tel.lease_lost and tel.holder is None
    assert not roundtrip(tel, a, "heartbeat")["ok"]
    assert roundtrip(tel, b, "acquire")["ok"] and not tel.lease_lost
    assert not roundtrip(tel, a, "release")["ok"]
    assert roundtrip(tel, b, "release")["ok"] and tel.holder is None
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
