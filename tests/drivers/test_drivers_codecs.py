"""Codecs: property round trips (hypothesis), refusals, and the bounded fuzz of every decoder."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.fuzz_decoders import fuzz
from drivers.framing import OK, StreamDecoder, check_frame, encode_frame
from drivers.ft_sensor import (RDT_RECORD_SIZE, RdtCommand, decode_rdt_records, decode_rdt_request,
                               decode_sensor_frame, encode_rdt_record, encode_rdt_records,
                               encode_rdt_request, encode_sensor_frame)
from drivers.motion_platform import (Command, FaultCode, Mode, PlatformState, decode_command,
                                     decode_status, encode_command, encode_status)

i32 = st.integers(-2**31, 2**31 - 1)
u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)
f64 = st.floats(allow_nan=False, allow_infinity=False, width=64)


@given(u32, u64, u32, st.sampled_from([6, 8]).flatmap(lambda n: st.lists(i32, min_size=n, max_size=n)))
def test_sensor_frame_round_trip(seq, t, status, counts):
    f = encode_sensor_frame(seq, t, counts, status)
    assert check_frame(f) == OK and len(f) == 22 + 4 + 4 * len(counts)
    s = decode_sensor_frame(f)
    assert (s.seq, s.time_ns, s.status) == (seq, t, status)
    assert s.counts.dtype == np.int32 and s.counts.tolist() == counts
    assert StreamDecoder().feed(f) == [f]


@given(st.sampled_from(list(RdtCommand)), u32)
def test_rdt_request_round_trip(cmd, count):
    b = encode_rdt_request(cmd, count)
    assert len(b) == 8 and b[:2] == b"\x12\x34"
    assert decode_rdt_request(b) == (cmd, count)


@given(st.lists(st.tuples(u32, u32, u32, st.lists(i32, min_size=6, max_size=6)), min_size=1, max_size=40))
def test_rdt_records_round_trip(recs):
    b = encode_rdt_records(recs)
    assert len(b) == 36 * len(recs)
    out = decode_rdt_records(b)
    assert [(r.rdt_sequence, r.ft_sequence, r.status, list(r.counts)) for r in out] == \
        [(a, b_, c, list(d)) for a, b_, c, d in recs]


def test_rdt_layout_is_big_endian():
    b = encode_rdt_record(1, 2, 3, [-1, 2, 3, 4, 5, 6])
    assert len(b) == RDT_RECORD_SIZE == 36
    assert b[:12] == bytes.fromhex("000000010000000200000003") and b[12:16] == b"\xff\xff\xff\xff"
    assert encode_rdt_request(RdtCommand.REALTIME, 0) == bytes.fromhex("1234000200000000")


@given(st.sampled_from(list(Command)), u32, u64, st.data())
def test_command_round_trip(cmd, seq, t, data):
    vals = None
    if cmd == Command.POSE:
        vals = tuple(data.draw(st.lists(f64, min_size=7, max_size=7)))
    elif cmd == Command.LENGTHS:
        vals = tuple(data.draw(st.lists(f64, min_size=6, max_size=6)))
    f = encode_command(cmd, seq, t, vals)
    c = decode_command(f)
    assert c == (cmd, seq, t, vals) and isinstance(c.command, Command)
    assert decode_status(f) is None and decode_sensor_frame(f) is None


@given(u32, st.integers(0, 2**53), st.sampled_from(list(PlatformState)), st.integers(0, 0xFFFF), u32,
       st.lists(f64, min_size=7, max_size=7), st.lists(f64, min_size=6, max_size=6),
       st.sampled_from(list(Mode)), u32)
def test_status_round_trip(seq, t, state, fault, last, pose, lengths, mode, inputs):
    f = encode_status(seq, t, state, fault, last, pose, lengths, mode, inputs)
    s = decode_status(f, host_time=5.0)
    assert (s.seq, s.state, s.mode, s.fault, s.last_cmd_seq, s.host_time) == (seq, state, mode, fault, last, 5.0)
    assert s.inputs == inputs
    assert s.device_time == t * 1e-9
    assert s.pose.tolist() == pose and s.lengths.tolist() == lengths
    assert isinstance(s.state, PlatformState)
    if fault == 1:
        assert s.fault is FaultCode.WATCHDOG
    assert decode_command(f) is None


def test_decoders_refuse_wrong_type_length_values():
    ok_pose = encode_command(Command.POSE, 1, 2, (0, 0, 1, 1, 0, 0, 0))
    # a well-framed POSE with a 6-value payload (wrong length for its type)
    bad = encode_frame(Command.POSE, 1, 2, bytes(48))
    assert check_frame(bad) == OK and decode_command(bad) is None
    assert decode_command(encode_frame(0x7E, 1, 2)) is None                     # unknown type
    nan = encode_command(Command.POSE, 1, 2, (0, 0, float("nan"), 1, 0, 0, 0))
    assert decode_command(nan) is None                                        # never a NaN set-point
    assert decode_command(encode_command(Command.LENGTHS, 1, 2, [1, 1, 1, float("inf"), 1, 1])) is None
    assert decode_command(ok_pose[:-1] + bytes([ok_pose[-1] ^ 1])) is None      # CRC
    st_bad = bytearray(encode_status(1, 2, PlatformState.IDLE, 0, 0, [0] * 7, [0] * 6))
    st_bad[18] = 9                                                             # unknown state
    from drivers.framing import crc32
    st_bad[-4:] = crc32(bytes(st_bad[2:-4])).to_bytes(4, "little")
    assert check_frame(bytes(st_bad)) == OK and decode_status(bytes(st_bad)) is None
    for i in (2, 12):                                                          # pose z, a length
        vals = [0.0, 0, 1, 1, 0, 0, 0, *[1.0] * 6]
        vals[i] = float("nan") if i == 2 else float("inf")
        f = encode_status(1, 2, PlatformState.ENGAGED, 0, 0, vals[:7], vals[7:])
        assert check_frame(f) == OK and decode_status(f) is None               # never a NaN pose
    assert decode_sensor_frame(encode_frame(0x10, 1, 2, bytes(3))) is None      # not 4 + 4n
    assert decode_sensor_frame(encode_frame(0x10, 1, 2, bytes(4 + 4 * 17))) is None  # > 16 channels
    assert decode_rdt_records(b"") is None and decode_rdt_records(bytes(35)) is None
    assert decode_rdt_records(bytes(37)) is None
    assert decode_rdt_request(bytes(8)) is None and decode_rdt_request(bytes(9)) is None
    with pytest.raises(ValueError):
        encode_command(Command.POSE, 1, 2, (1, 2))
    with pytest.raises(ValueError):
        encode_command(Command.ENGAGE, 1, 2, (1,))
    with pytest.raises(ValueError):
        encode_sensor_frame(1, 2, [0] * 17)


def test_fuzz_every_decoder_bounded():
    r = fuzz(6000, seed=3)
    assert r["first_error"] is None
    assert r["crashes"] == 0 and r["false_accepts"] == 0 and r["frames_tested"] == 6000


def test_fuzz_harness_catches_crashes_and_false_accepts():
    """The harness itself must be able to fail: a decoder that raises, one that accepts."""
    def raising(frame, checked=False):
        raise IndexError("boom")

    def accepting(frame, checked=False):
        return decode_command(frame, checked=True)    # skips the CRC: accepts corrupt frames

    r = fuzz(300, seed=4, decoders={"status": raising, "command": accepting,
                                    "stream": lambda data: [data]})
    assert r["crashes"] >= 300 // 2
    assert r["false_accepts"] > 0
    assert any(k.startswith("command:") for k in r["breakdown"])
    assert any(k.startswith("stream:") for k in r["breakdown"])
