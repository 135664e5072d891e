"""The console's event log is complete even when its subscription loses events (the PUB
drops at its high-water mark, 4 by default: a burst such as three latches and a capture in
one cycle, or a console reconnecting). Every event carries its number (``eseq``); ``status``
says how many there are; the console asks for the missing ones with ``events`` and shows them
once, marked. A console attaching shows the controller's recent events. Real sockets on
loopback, a controller on the kinematic rig (found by an operator's review: a reconnected
console never got the capture event)."""
from __future__ import annotations

import pytest
import threading
import time

import msgpack

from rt.config.stand import load_stand
from rt.console.source import HISTORY_EVENTS, LiveSource
from rt.console.view import fmt_event
from rt.control.controller import with_endpoints
from sim_stand.kinematic_rig import STAND, Rig


def _pump(rig, src, seconds, got):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        rig.run(5)
        _, events, _ = src.poll()
        got.extend(events)
        time.sleep(0.002)


@pytest.mark.slow
def test_lost_and_earlier_events_are_fetched_once(tmp_path):
    stand = with_endpoints(load_stand(STAND), telemetry={"pub_endpoint": "tcp://127.0.0.1:*",
                                                         "cmd_endpoint": "tcp://127.0.0.1:*"})
    rig = Rig(tmp_path, telemetry=True, stand=stand)
    src = None
    try:
        rig.run(20)
        for k in range(3):                                  # before any console: history
            rig.ctl._event({"kind": "test_early", "k": k})
        rig.run(5)
        attached = threading.Event()

        def serve():                                        # the loop answers describe meanwhile
            while not attached.is_set():
                rig.run(5)
                time.sleep(0.002)
        th = threading.Thread(target=serve)
        th.start()
        try:
            src = LiveSource(rig.ctl.telemetry.cmd_endpoint, name="op", timeout_s=5.0)
        finally:
            attached.set()
            th.join()
        got: list[dict] = []
        _pump(rig, src, 1.5, got)
        early = [e for e in got if e["kind"] == "test_early"]
        assert [e["k"] for e in early] == [0, 1, 2] and all(e["history"] for e in early)
        assert "from before this console attached" in fmt_event(early[0])

        # events the subscription loses: whatever reaches its socket in the next 0.3 s is read
        # off before the console sees it (the publisher, HWM 4, may drop some of the burst too)
        for k in range(3):
            rig.ctl._event({"kind": "test_lost", "k": k})
        rig.ctl._event({"kind": "test_kept"})
        rig.run(5)
        removed = set()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 0.3:
            if src.sub.poll(20):
                f = src.sub.recv_multipart()
                if f[0] == b"event":
                    removed.add(msgpack.unpackb(f[1], raw=False)["eseq"])
        assert removed                                       # the subscription lost some
        _pump(rig, src, 1.5, got)
        burst = [e for e in got if e["kind"] in ("test_lost", "test_kept")]
        assert sorted(e.get("k", 9) for e in burst) == [0, 1, 2, 9]      # each of the four, once
        assert all(e.get("recovered") for e in burst if e["eseq"] in removed)
        assert "the subscription had not delivered it" in fmt_event(next(e for e in burst if e["eseq"] in removed))
        seqs = [e["eseq"] for e in got]
        assert len(seqs) == len(set(seqs))                   # none shown twice
        assert src.events_recovered >= len(removed)
        n = rig.ctl.recorder.event_seq
        assert set(range(max(1, n - HISTORY_EVENTS + 1), n + 1)) <= set(seqs) | {
            e["eseq"] for e in rig.ctl.recorder.events if e["eseq"] > max(seqs)}
        # a malformed events request gets a reason, and the loop goes on answering
        def ask(**a):
            # the in-process rig answers only while its loop runs: run it until the reply is
            # there (the request's way over loopback may outlast a few quick cycles)
            rid = src.cli.send("events", **a)
            end = time.monotonic() + 5.0
            while time.monotonic() < end:
                rig.run(5)
                try:
                    r = src.cli.recv(timeout_s=0.02)
                except TimeoutError:
                    continue
                if r.get("id") == rid:                       # past a status poll's late reply
                    return r
            raise TimeoutError(f"no reply to events {a} within 5 s of the loop running")
        for since in ("x", True, None):
            r = ask(since=since)
            assert not r["ok"] and "an integer event number" in r["reason"], r
        r = ask(since=n - 2)
        assert r["ok"] and [e["eseq"] for e in r["events"]] == [n - 1, n] and r["event_seq"] == n
    finally:
        if src is not None:
            src.close()
        rig.close()


def test_a_restarted_controller_is_numbered_afresh():
    """The numbering starts again in a new controller (another ``instance`` in its status):
    the console's bookkeeping starts again (the new controller's events are not taken for
    duplicates); a status that counts fewer events than the subscription brought (answered
    before them) is no restart."""
    src = LiveSource.__new__(LiveSource)
    src._ev_floor, src._ev_seen, src._ev_asking = None, set(), True     # asking: sends nothing here
    src._ev_prev_seq = src._ev_settled = 0
    src._notes, src._ev_instance, src._ev_history_upto, src._ev_first_instance = [], None, 0, None
    src._check_events(0, "a")
    for k in range(1, 121):
        assert src._take_event({"eseq": k})
    src._check_events(100, "a")                                        # answered before the last 20
    assert src._ev_floor == 120 and not src._ev_seen and not src._notes
    assert not src._take_event({"eseq": 7}) and not src._take_event({"eseq": 120})   # duplicates
    src._check_events(5, "b", had_lease=True)                          # a new controller: 5 events so far
    assert src._ev_floor == 0 and src._take_event({"eseq": 3})
    assert [n["kind"] for n in src._notes] == ["controller_restarted"]  # said in the event log
    line = fmt_event(src._notes[0])
    assert "a new controller process answers" in line and "take control again (c)" in line
