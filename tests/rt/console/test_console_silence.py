"""A console whose controller stops answering (killed, stuck, unreachable) says so: the source
counts the silence from the last reply, and a command (abort included) that gets no answer
comes back as "not answered" instead of vanishing. Real sockets on loopback: the controller's
TelemetryServer polled by a thread, then stopped."""
from __future__ import annotations

import pytest
import threading
import time

import zmq

from rt.console.source import SILENT_S, UNANSWERED_S, LiveSource
from rt.record.telemetry import TelemetryServer

FIELDS = {"t": 1, "w_P": 6}


@pytest.mark.slow
def test_a_silent_controller_is_named_and_an_unanswered_abort_reported():
    ctx = zmq.Context()
    tel = TelemetryServer(FIELDS, pub_endpoint="tcp://127.0.0.1:*", cmd_endpoint="tcp://127.0.0.1:*", context=ctx,
                          handler=lambda c, a, who: {"ok": True, "reason": None, "state": "IDLE"},
                          commands=("status", "abort"))
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            tel.poll()
            time.sleep(0.002)
    th = threading.Thread(target=serve)
    th.start()
    src = LiveSource(tel.cmd_endpoint, name="op", context=ctx, timeout_s=2.0)
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.0:
            src.poll()
            time.sleep(0.01)
        assert src.status.get("ok") and src.silent_s() < 0.6           # the status polls are answered
        stop.set()                                                     # the controller stops answering
        th.join()
        src.send("abort")
        got, t0 = [], time.monotonic()
        while time.monotonic() - t0 < UNANSWERED_S + 1.0 and not got:
            got = [r for r in src.poll()[2] if r.get("cmd") == "abort"]
            time.sleep(0.01)
        assert got and got[0]["ok"] is False and got[0]["unanswered"] and "no answer" in got[0]["reason"], got
        assert src.silent_s() > SILENT_S
    finally:
        stop.set()
        src.close()
        tel.close()
        ctx.destroy(linger=0)
