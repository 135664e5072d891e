"""Malformed requests to a running controller over real tcp://127.0.0.1 sockets (the kinematic
rig in lockstep): random bytes, wrong msgpack types, an unknown command and a 10 MB message
are answered with an error or dropped, and counted; ``status`` keeps answering and the loop
keeps its cycles (no missed deadline, the state unchanged)."""
from __future__ import annotations

import random
import time

import msgpack
import zmq

from rt.config.stand import load_stand
from rt.control.controller import with_endpoints
from rt.record.telemetry import CommandClient
from sim_stand.kinematic_rig import STAND, Rig


def test_malformed_requests_leave_status_answering(tmp_path):
    stand = with_endpoints(load_stand(STAND), telemetry={"pub_endpoint": "tcp://127.0.0.1:*",
                                                         "cmd_endpoint": "tcp://127.0.0.1:*"})
    rig = Rig(tmp_path, telemetry=True, stand=stand)
    ctx = zmq.Context()
    socks = []
    try:
        tel = rig.ctl.telemetry
        ep = tel.cmd_endpoint

        def dealer():
            s = ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.connect(ep)
            socks.append(s)
            return s
        rnd = random.Random(7)
        bodies = [bytes(rnd.randrange(256) for _ in range(n)) for n in (1, 7, 300)]
        bodies += [msgpack.packb(x) for x in ([1, 2], "status", {"cmd": 5}, {"cmd": "status", "args": [1]},
                                              {"cmd": "status", "args": {1: 2}}, {"cmd": "fly", "args": {}},
                                              {"cmd": "load_case", "args": {"case": 42}})]
        bad = [dealer() for _ in bodies]
        big = dealer()
        big.send_multipart([b"", b"\x00" * (10 << 20)])        # 10 MB: libzmq drops the connection
        for s, b in zip(bad, bodies):
            s.send_multipart([b"", b])
        replies = []
        t0 = time.monotonic()
        while len(replies) < len(bad) and time.monotonic() - t0 < 10:
            rig.run(20)
            for s in bad:
                while s.poll(0):
                    replies.append(msgpack.unpackb(s.recv_multipart()[-1], raw=False))
        assert len(replies) == len(bad)
        assert all(r["ok"] is False and r["reason"] for r in replies), replies
        reasons = " | ".join(r["reason"] for r in replies)
        assert "bad request" in reasons and "unknown command 'fly'" in reasons
        rig.run(200)
        assert not big.poll(0)                                   # the 10 MB got nothing back
        cli = CommandClient(ep, name="after", context=ctx)
        socks.append(cli.sock)
        rid = cli.send("status")
        r = None
        t0 = time.monotonic()
        while r is None and time.monotonic() - t0 < 5:
            rig.run(5)
            if cli.sock.poll(0):
                r = cli.recv()
        assert r is not None and r["id"] == rid and r["ok"] and r["state"] == "IDLE"
        # every malformed one counted (the 10 MB never reached the server); the loop kept time
        # (the load_case with a number for its path is well formed: refused without the lease, not counted)
        assert tel.refused == len(bodies) - 1 and "load_case needs the control lease" in reasons
        assert rig.ctl.loop.missed == 0 and rig.ctl.supervisor.state.name == "IDLE"
    finally:
        for s in socks:
            s.close(0)
        rig.close()
        ctx.term()
