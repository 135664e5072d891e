"""Frame envelope, stream decoder and sequence tracker: round trips, bad input, bounds."""
from __future__ import annotations

import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers import framing as fr
from drivers.framing import (CRC_CHECK, MAX_FRAME, MIN_FRAME, OK, Counters, SeqTracker,
                             StreamDecoder, check_frame, encode_frame, frame_fields, payload_of)


def test_crc_check_value_and_layout():
    assert zlib.crc32(b"123456789") == CRC_CHECK == 0xCBF43926
    f = encode_frame(0x22, 0x01020304, 0x1122334455667788, b"\x01\x02")
    assert f[:2] == b"\xa5\xc3" and f[2] == 16 and f[3] == 16 ^ 0xFF and f[4] == 0x22 and f[5] == 1
    assert f[6:10] == bytes([4, 3, 2, 1]) and f[10:18] == bytes.fromhex("8877665544332211")
    assert f[18:20] == b"\x01\x02" and len(f) == 18 + 2 + 4
    assert int.from_bytes(f[-4:], "little") == zlib.crc32(f[2:-4])
    assert fr.HEADER_SIZE == 18 and MIN_FRAME == 22 and MAX_FRAME == 263


frames_st = st.builds(lambda t, s, ns, p: encode_frame(t, s, ns, p),
                      st.integers(0, 255), st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1),
                      st.binary(max_size=fr.MAX_PAYLOAD))


@given(st.integers(0, 255), st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1),
       st.binary(max_size=fr.MAX_PAYLOAD))
def test_frame_round_trip(t, seq, ns, payload):
    f = encode_frame(t, seq, ns, payload)
    assert check_frame(f) == OK
    assert frame_fields(f) == (t, 1, seq, ns)
    assert bytes(payload_of(f)) == payload
    assert StreamDecoder().feed(f) == [f]


def test_encode_rejects_oversized_payload():
    with pytest.raises(ValueError):
        encode_frame(1, 0, 0, bytes(fr.MAX_PAYLOAD + 1))


garbage_st = st.binary(max_size=40)


@given(st.lists(st.tuples(garbage_st | st.sampled_from([fr.SYNC, fr.SYNC * 2, fr.SYNC + b"\xa5\x5a",
                                                           fr.SYNC + bytes([40, 40 ^ 0xFF])]),
                          frames_st), min_size=1, max_size=8), st.data())
@settings(max_examples=150)
def test_stream_any_split_any_garbage_recovers_every_frame(items, data):
    """Garbage between frames (even sync bytes, fake headers) and arbitrary read splits: every
    frame comes out once, in order, nothing else does, and the buffer stays bounded. (A fake
    header in the garbage may hold a frame back until MAX_FRAME more bytes have arrived: the
    idle-line tail flushes it.)"""
    stream = b"".join(g + f for g, f in items) + bytes(MAX_FRAME)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    d = StreamDecoder()
    out = []
    prev = 0
    for c in cuts + [len(stream)]:
        out += d.feed(stream[prev:c])
        assert d.buffered < MAX_FRAME
        prev = c
    assert out == [f for _, f in items]
    assert d.counters.bytes_discarded + sum(len(f) for f in out) + d.buffered == len(stream)


def test_many_frames_in_one_read_and_one_byte_reads():
    fs = [encode_frame(0x10, i, i, bytes([i % 256]) * (i % 30)) for i in range(200)]
    assert StreamDecoder().feed(b"".join(fs)) == fs
    d = StreamDecoder()
    out = []
    for b in b"".join(fs):
        out += d.feed(bytes([b]))
    assert out == fs and d.counters.bytes_discarded == 0 and d.counters.resyncs == 0


def _flip(f: bytes, bits) -> bytes:
    b = bytearray(f)
    for i in bits:
        b[i // 8] ^= 1 << (i % 8)
    return bytes(b)


@given(frames_st, st.lists(st.integers(0, 8 * MAX_FRAME), min_size=1, max_size=3, unique=True))
def test_bit_flips_never_accepted_and_counted(f, bits):
    bits = [b % (8 * len(f)) for b in bits]
    bad = _flip(f, set(bits))
    if bad == f:
        return
    good = encode_frame(0x10, 7, 7, b"next")
    d = StreamDecoder()
    out = d.feed(bad + good)
    assert out == [good]                     # the corrupt one is gone, the next one survives
    assert check_frame(bad) != OK
    c = d.counters
    assert c.bytes_discarded == len(bad)
    assert c.resyncs == 1


def test_wrong_crc_counted_once():
    f = encode_frame(0x10, 1, 2, b"abcdef")
    bad = f[:-1] + bytes([f[-1] ^ 0xFF])
    d = StreamDecoder()
    assert d.feed(bad) == []
    assert d.counters.crc_errors == 1 and d.counters.bytes_discarded == len(bad)


def test_wrong_length_field_rejected_without_waiting():
    f = bytearray(encode_frame(0x10, 1, 2, b"abcdef"))
    f[2] = 200                               # length no longer matches its complement
    good = encode_frame(0x10, 2, 3, b"x")
    d = StreamDecoder()
    assert d.feed(bytes(f) + good) == [good]
    assert d.counters.crc_errors == 0        # refused at the header, not by the CRC
    f[3] = 200 ^ 0xFF                        # consistent but wrong length: CRC refuses it
    d = StreamDecoder()
    tail = good * 10
    assert d.feed(bytes(f) + tail) == [good] * 10
    assert d.counters.crc_errors == 1


def test_truncated_frame_then_good_frames():
    f = encode_frame(0x10, 1, 2, b"abcdefgh")
    good = [encode_frame(0x10, i, i, b"z" * 5) for i in range(3)]
    d = StreamDecoder()
    assert d.feed(f[:15] + b"".join(good)) == good
    assert d.counters.bytes_discarded == 15


def test_unknown_version_refused():
    f = bytearray(encode_frame(0x10, 1, 2, b"ab"))
    f[5] = 2
    f[-4:] = zlib.crc32(bytes(f[2:-4])).to_bytes(4, "little")
    assert check_frame(bytes(f)) == fr.BAD_VERSION
    d = StreamDecoder()
    assert d.feed(bytes(f)) == [] and d.counters.malformed == 1


def test_check_frame_reasons():
    f = encode_frame(0x10, 1, 2, b"abc")
    assert check_frame(f) == OK
    assert check_frame(f[:-1]) == fr.BAD_LENGTH
    assert check_frame(f + b"\x00") == fr.BAD_LENGTH
    assert check_frame(b"\x00" + f[1:]) == fr.BAD_SYNC
    assert check_frame(f[:3] + b"\x00" + f[4:]) == fr.BAD_HEADER
    assert check_frame(f[:-1] + bytes([f[-1] ^ 1])) == fr.BAD_CRC
    assert check_frame(b"") == fr.BAD_LENGTH
    assert check_frame(bytes(10000)) == fr.BAD_LENGTH


def test_memory_bounded_on_endless_garbage_and_huge_feeds():
    rnd = random.Random(1)
    d = StreamDecoder(max_feed=4096)
    total = 0
    for _ in range(200):
        chunk = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 600)))
        total += len(chunk)
        assert d.feed(chunk) == []
        assert d.buffered < MAX_FRAME
    big = bytes(50000)
    assert d.feed(big) == [] and d.buffered < MAX_FRAME
    good = encode_frame(1, 1, 1, b"ok")
    assert d.feed(good) == [good]


def test_seq_tracker_gaps_duplicates_backwards_restart_and_wrap():
    c = Counters()
    t = SeqTracker(c, restart_after=3)
    acc = [t.accept(s) for s in [5, 6, 6, 9, 8, 10]]
    assert acc == [True, True, False, True, False, True]
    assert (c.duplicates, c.seq_backwards, c.seq_gaps, c.frames_lost) == (1, 1, 1, 2)
    # a restarted sender (0, 1, 2 ...) is re-locked after three consecutive refusals
    assert [t.accept(s) for s in [0, 1, 2, 3]] == [False, False, True, True]
    assert c.seq_restarts == 1
    # wrap-around is forward
    t.reset()
    assert t.accept(2**32 - 1) and t.accept(0) and c.seq_gaps == 1


def test_counters_dict():
    c = Counters()
    c.crc_errors += 2
    d = c.as_dict()
    assert d["crc_errors"] == 2 and d["last_rx_time"] is None and "seq_gaps" in d
    assert "crc_errors=2" in repr(c)
