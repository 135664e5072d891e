"""The transports' frame checks delegated to the compiled scan (drivers.transport
``delegate_checks`` / ``poll_messages``; rt.stand.wire_kernels ``_walk``): over real memory
channels, real PTYs and a real UDP socket on 127.0.0.1, a damaged stream leaves exactly the
counters and delivers exactly the frames that the transport's own checks do."""
from __future__ import annotations

import os
import socket
import time
import tty

import numpy as np
import pytest

from drivers.framing import SEQ_STATE_LEN
from drivers.motion_platform import encode_status
from drivers.transport import TransportConfigError, make_transport, memory_pair, open_transport
from rt.stand import wire_kernels as WK

from frame_damage import damage

COUNTERS = ("bytes_rx", "frames_rx", "crc_errors", "malformed", "seq_gaps", "frames_lost", "duplicates",
            "seq_backwards", "seq_restarts", "resyncs", "bytes_discarded", "oversize")


def _status(seq: int) -> bytes:
    return encode_status(seq, seq * 1000, 1, 0, seq, [0.1 * (seq % 7), 0, 1.9, 1, 0, 0, 0], [1.2] * 6, 1)


def damaged_stream(seed: int, n: int) -> list[bytes]:
    """STATUS frames with gaps, duplicates, steps back, a sender restart, bit flips, cut and
    grown messages, another version (CRC valid) and empty messages (fixed seed)."""
    rng = np.random.default_rng(seed)
    out, seq = [], 1000
    for k in range(n):
        r = rng.random()
        if r < 0.05:
            seq += int(rng.integers(2, 5))            # gap
        elif r < 0.08:
            seq -= 1                                  # duplicate
        elif r < 0.10:
            seq -= int(rng.integers(2, 6))            # from the past
        elif k == n // 2:
            seq = 7                                   # the sender restarted
        else:
            seq += 1
        out.append(damage(_status(seq & 0xFFFFFFFF), rng, 0.10))
    return out


class Delegated:
    """The controller's way of reading one link (rt.control.links and rt.control.controller: read, ingest, add_counts)."""

    def __init__(self, tr):
        self.tr = tr
        self.lk = np.zeros(WK.LK_LEN)
        self.lk[WK.LK_SEQ_ON] = tr.seq_check
        self.lk[WK.LK_RESTART_AFTER] = WK.RESTART_AFTER
        tr.delegate_checks(self.lk[WK.LK_TRACK:WK.LK_TRACK + SEQ_STATE_LEN])
        self.out = np.zeros(WK.ST_LEN)
        self.seqs: list[int] = []

    def poll(self) -> int:
        buf = self.tr.poll_messages()
        good, bad = WK.scan_status(buf, self.out, self.lk, 0)
        if self.lk[WK.LK_ACC]:
            self.tr.accepted(int(self.lk[WK.LK_ACC]), time.monotonic())
        WK.add_link_errors(self.tr.counters, self.lk, 0)
        assert bad == 0
        if good:
            self.seqs.append(int(self.out[WK.ST_SEQ]))
        return good


def _bad_crc(frame: bytes) -> bytes:
    f = bytearray(frame)
    f[-1] ^= 0xFF
    return bytes(f)


def poll_until(d: "Delegated", cond, timeout: float = 5.0) -> None:
    """Poll the delegated link until ``cond()`` holds (real sockets: frames take a moment)."""
    t_end = time.monotonic() + timeout
    while not cond() and time.monotonic() < t_end:
        d.poll()
        time.sleep(1e-3)


def _counts(tr) -> dict:
    return {k: getattr(tr.counters, k) for k in COUNTERS}


def test_memory_link_counts_as_the_transport_does():
    msgs = damaged_stream(3, 3000)
    ra, rb = memory_pair("chk-ref", capacity=100)
    da, db = memory_pair("chk-del", capacity=100)
    try:
        d = Delegated(db)
        ref_seqs = []
        for k in range(0, len(msgs), 3):              # a few messages per cycle
            for m in msgs[k:k + 3]:
                ra.send(m)
                da.send(m)
            got = [int.from_bytes(f[6:10], "little") for f in rb.poll()]
            ref_seqs += got[-1:]                      # the newest accepted frame of the cycle
            d.poll()
        assert d.seqs == ref_seqs
        assert _counts(db) == _counts(rb)
        c = rb.counters
        assert min(c.crc_errors, c.malformed, c.seq_gaps, c.duplicates, c.seq_backwards, c.seq_restarts) > 0, c
        assert db.counters.last_rx_time is not None
    finally:
        for t in (ra, rb, da, db):
            t.close()


def test_memory_reopen_resets_the_delegated_sequence():
    a, b = memory_pair("chk-reopen", capacity=10)
    try:
        d = Delegated(b)
        for s in (5, 6):
            a.send(_status(s))
        d.poll()
        assert d.lk[WK.LK_HAVE_LAST] == 1 and d.lk[WK.LK_LAST] == 6
        b.close()
        b.open()
        assert np.all(d.lk[WK.LK_TRACK:WK.LK_TRACK + SEQ_STATE_LEN] == 0)
        a.send(_status(1))                            # from the past, but the tracker was reset
        assert d.poll() == 1 and b.counters.seq_backwards == 0
    finally:
        a.close()
        b.close()


def test_delegation_needs_frames_and_a_state_of_the_right_size():
    t = make_transport("udp", host="127.0.0.1", port=9)
    with pytest.raises(TransportConfigError) as e:
        t.delegate_checks(np.zeros(SEQ_STATE_LEN))
    assert e.value.key == "framing"
    m = make_transport("memory", name="chk-size")
    with pytest.raises(ValueError, match="slots"):
        m.delegate_checks(np.zeros(3))


def _pty_transport():
    master, slave = os.openpty()
    tty.setraw(slave)
    tr = open_transport("serial", port=os.ttyname(slave), baud=115200)
    return master, slave, tr


def test_serial_link_counts_as_the_transport_does():
    """Real PTYs: the same byte stream (frames, damaged frames, garbage between them) into a
    checking and a delegating serial transport; the stream decoder cuts and CRC-checks in
    both, the scan does the rest."""
    rng = np.random.default_rng(5)
    chunks = []
    for m in damaged_stream(9, 1500):
        if rng.random() < 0.03:
            chunks.append(bytes(rng.integers(0, 256, int(rng.integers(1, 9))).astype(np.uint8)))
        chunks.append(m)
    pm, ps, ref = _pty_transport()
    dm, ds, dtr = _pty_transport()
    try:
        d = Delegated(dtr)
        ref_n = d_n = 0
        for k in range(0, len(chunks), 20):
            data = b"".join(chunks[k:k + 20])
            os.write(pm, data)
            os.write(dm, data)
            t_end = time.monotonic() + 5.0
            want = ref.counters.bytes_rx + len(data)
            while ref.counters.bytes_rx < want and time.monotonic() < t_end:
                ref_n += len(ref.poll())
            t_end = time.monotonic() + 5.0
            want = dtr.counters.bytes_rx + len(data)
            while dtr.counters.bytes_rx < want and time.monotonic() < t_end:
                d.poll()
                d_n = dtr.counters.frames_rx
        assert _counts(dtr) == _counts(ref)
        c = ref.counters
        assert ref_n == d_n == c.frames_rx
        assert min(c.crc_errors, c.seq_gaps, c.duplicates, c.seq_backwards, c.resyncs) > 0, c
    finally:
        for t in (ref, dtr):
            t.close()
        for fd in (pm, ps, dm, ds):
            os.close(fd)


def test_listening_udp_learns_its_peer_from_valid_frames_only():
    dev = open_transport("udp", local_host="127.0.0.1", local_port=0, framing="frame")
    good = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    bad = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        good.bind(("127.0.0.1", 0))
        bad.bind(("127.0.0.1", 0))
        d = Delegated(dev)
        good.sendto(_status(1), dev.local_address)
        poll_until(d, lambda: dev.counters.frames_rx == 1)
        assert dev.peer == good.getsockname()
        bad.sendto(_bad_crc(_status(2)), dev.local_address)
        poll_until(d, lambda: dev.counters.crc_errors == 1)
        assert dev.counters.crc_errors == 1 and dev.peer == good.getsockname()
        bad.sendto(_status(0), dev.local_address)   # valid, but from the past: refused, as without delegation
        poll_until(d, lambda: dev.counters.seq_backwards == 1)
        assert dev.counters.seq_backwards == 1 and dev.peer == good.getsockname()
    finally:
        dev.close()
        good.close()
        bad.close()


def test_router_new_peer_in_the_middle_of_a_poll(tmp_path):
    """Real ZMQ over ipc://: a ROUTER hears peer A, then a restarted device B (new identity,
    seq from 0) before the next poll; the delegated scan resets its sequence state where the
    transport would have (at B's first frame), so both see the same frames and counters."""
    def pair(name):
        host = open_transport("zmq", endpoint=f"ipc://{tmp_path}/{name}", role="bind", pattern="router",
                              peer_timeout_s=0)     # answer whoever spoke last (no single-peer hold)
        a = open_transport("zmq", endpoint=f"ipc://{tmp_path}/{name}", role="connect", pattern="dealer")
        b = make_transport("zmq", endpoint=f"ipc://{tmp_path}/{name}", role="connect", pattern="dealer")
        return host, a, b

    rh, ra, rb = pair("ref")
    dh, da, db = pair("del")
    d = Delegated(dh)
    ref_seqs = []
    try:
        def exchange(sends):
            n0 = rh.counters.bytes_rx // len(_status(0))
            for peer, seq in sends:
                (ra if peer == "a" else rb).send(_status(seq))
                (da if peer == "a" else db).send(_status(seq))
            time.sleep(0.3)                           # all of them there before the first poll
            t_end = time.monotonic() + 5.0
            want = n0 + len(sends)
            got_r = got_d = 0
            while (got_r < want or got_d < want) and time.monotonic() < t_end:
                fr = rh.poll()
                ref_seqs.extend(int.from_bytes(f[6:10], "little") for f in fr)
                got_r = rh.counters.bytes_rx // len(_status(0))
                d.poll()
                got_d = dh.counters.bytes_rx // len(_status(0))
                time.sleep(0.01)

        time.sleep(0.2)
        exchange([("a", 500), ("a", 501)])
        ra.send(_status(502))
        da.send(_status(502))
        rb.open()
        db.open()
        time.sleep(0.3)
        exchange([("b", s) for s in range(4)])
        assert _counts(dh) == _counts(rh)
        assert rh.counters.frames_rx == 7 and rh.counters.seq_backwards == 0
        assert d.seqs[-1] == 3
    finally:
        for t in (rh, ra, rb, dh, da, db):
            t.close()


def test_connected_udp_refused_stays_down_until_a_frame_is_accepted():
    """A connected UDP socket refused by ICMP stays 'down' while only damaged frames arrive
    (delegated checks: the transport no longer judges them), and comes up with the first frame
    the scan accepts."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()                                     # nobody listens there now
    tr = open_transport("udp", host="127.0.0.1", port=port, framing="frame")
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        d = Delegated(tr)
        poll_until(d, lambda: "refused" in tr.status or (tr.send(_status(0)) and False))
        assert "refused" in tr.status, tr.status
        peer.bind(("127.0.0.1", port))
        peer.sendto(_bad_crc(_status(1)), tr.local_address)
        poll_until(d, lambda: tr.counters.crc_errors == 1)
        assert tr.counters.crc_errors == 1 and "refused" in tr.status, tr.status
        peer.sendto(_status(2), tr.local_address)
        poll_until(d, lambda: tr.counters.frames_rx == 1)
        assert tr.link_up and tr.status == "up"
    finally:
        tr.close()
        peer.close()
