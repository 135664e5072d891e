"""Compiled frame codecs (rt.wire_kernels) against the drivers' Python codecs, which are the
reference: same bytes out, same verdict and values in, frame by frame (hypothesis, plus a
fixed-seed batch of corrupted frames)."""
from __future__ import annotations

import math
import struct
import zlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.framing import encode_frame as py_encode_frame
from drivers.ft_sensor import decode_sensor_frame, encode_sensor_frame
from drivers.motion_platform import Command, decode_status, encode_command, encode_status
from rt import wire_kernels as WK

u32 = st.integers(0, 2**32 - 1)
i63 = st.integers(0, 2**63 - 1)   # time_ns as the controller passes it (int64)
i32 = st.integers(-2**31, 2**31 - 1)
f64 = st.floats(allow_nan=False, allow_infinity=False, width=64)
anyf = st.floats(width=64)


@given(st.binary(max_size=300))
def test_crc32_is_zlibs(data):
    b = np.frombuffer(data, np.uint8) if data else np.zeros(0, np.uint8)
    assert int(WK.crc32(b, 0, len(data))) == zlib.crc32(data)


@given(st.sampled_from([Command.POSE, Command.LENGTHS, Command.HEARTBEAT, Command.FREEZE]), u32, i63, st.data())
def test_encode_frame_is_the_drivers_encoding(cmd, seq, t, data):
    n = {Command.POSE: 7, Command.LENGTHS: 6}.get(cmd, 0)
    vals = data.draw(st.lists(f64, min_size=n, max_size=n))
    out = np.zeros(300, np.uint8)
    m = WK.encode_frame(out, int(cmd), seq, t, np.array(vals + [0.0]), n)
    assert out[:m].tobytes() == encode_command(cmd, seq, t, tuple(vals) if n else None)


@given(u32, i63, st.integers(0, 4), st.integers(0, 2), st.integers(0, 0xFFFF), u32,
       st.lists(anyf, min_size=13, max_size=13))
@settings(max_examples=300)
def test_scan_status_agrees_with_decode_status(seq, t, state, mode, fault, last, vals):
    f = encode_status(seq, t, state, fault, last, vals[:7], vals[7:], mode)
    ref = decode_status(f)
    out = np.full(WK.ST_LEN, -1.0)
    good, bad = WK.scan_status(f, out)
    if ref is None:
        assert (good, bad) == (0, 1) and np.all(out == -1.0)
        assert not all(math.isfinite(v) for v in vals)
        return
    assert (good, bad) == (1, 0)
    assert out[WK.ST_STATE] == ref.state and out[WK.ST_MODE] == ref.mode and out[WK.ST_FAULT] == ref.fault
    assert out[WK.ST_LAST_SEQ] == ref.last_cmd_seq and out[WK.ST_SEQ] == ref.seq == seq
    assert out[WK.ST_TIME] == ref.device_time
    assert out[WK.ST_POSE:WK.ST_POSE + 7].tolist() == ref.pose.tolist()
    assert out[WK.ST_LENGTHS:WK.ST_LENGTHS + 6].tolist() == ref.lengths.tolist()


def _status(seq, x, state=1, mode=1):
    return encode_status(seq, seq * 1000, state, 0, seq, [x, 0, 1, 1, 0, 0, 0], [1.0] * 6, mode)


def test_scan_status_takes_the_newest_valid_frame_and_counts_the_rest():
    bad_state = bytearray(_status(3, 0.3))
    bad_state[18] = 9                       # unknown state; fix the CRC so only the decoder refuses it
    bad_state[-4:] = struct.pack("<I", zlib.crc32(bytes(bad_state[2:-4])))
    frames = [_status(1, 0.1), _status(2, 0.2), bytes(bad_state), py_encode_frame(0x10, 4, 0, b"\0" * 28)]
    assert decode_status(bytes(bad_state)) is None
    out = np.zeros(WK.ST_LEN)
    assert WK.scan_status(b"".join(frames), out) == (2, 2)
    assert out[WK.ST_SEQ] == 2 and out[WK.ST_POSE] == 0.2
    assert WK.scan_status(b"", out) == (0, 0) and out[WK.ST_SEQ] == 2
    # a concatenation cut short: the whole frames before the cut still count
    cut = b"".join(frames[:2]) + _status(5, 0.5)[:40]
    assert WK.scan_status(cut, out) == (2, 1)


@given(u32, i63, u32, st.sampled_from([6, 8]).flatmap(lambda n: st.lists(i32, min_size=n, max_size=n)))
def test_scan_sensor_agrees_with_decode_sensor_frame(seq, t, status, counts):
    f = encode_sensor_frame(seq, t, counts, status)
    ref = decode_sensor_frame(f)
    for nch in (6, 8):
        raw = np.full(nch, 0.5)
        good, bad = WK.scan_sensor(f, raw)
        if nch == len(counts):
            assert (good, bad) == (1, 0) and raw.tolist() == ref.counts.tolist()
        else:                                # the driver counts another channel count as malformed
            assert (good, bad) == (0, 1) and np.all(raw == 0.5)


def test_scan_sensor_newest_of_several_and_wrong_types():
    rng = np.random.default_rng(7)
    counts = [rng.integers(-2**31, 2**31, 6).tolist() for _ in range(5)]
    frames = [encode_sensor_frame(k, k, c) for k, c in enumerate(counts)]
    frames.insert(2, encode_status(0, 0, 1, 0, 0, [0.0] * 7, [0.0] * 6))
    raw = np.zeros(6)
    assert WK.scan_sensor(b"".join(frames), raw) == (5, 1)
    assert raw.tolist() == counts[-1]


def test_corrupted_frames_get_the_drivers_verdict():
    """Fixed seed: 3000 valid STATUS and SENSOR_SAMPLE frames with 1-4 random bytes changed
    after the header's length (type, version, seq, time, payload: unknown states and modes,
    NaN/Inf bit patterns, another frame type) and the CRC made valid again, so the transport
    passes what its check passes; the scan accepts exactly what the drivers' decoders accept,
    with the same values."""
    from drivers.framing import OK, check_frame
    rng = np.random.default_rng(20261123)
    home = [0.1, -0.2, 1.9, 1.0, 0.0, 0.0, 0.0]
    seen = {"status_ok": 0, "status_refused": 0, "sensor_ok": 0, "sensor_refused": 0}
    for n in range(3000):
        if n % 2:
            f = bytearray(encode_status(n, n * 1000, int(rng.integers(0, 5)), 3, n, home, [1.2] * 6,
                                        int(rng.integers(0, 3))))
        else:
            f = bytearray(encode_sensor_frame(n, n, rng.integers(-2**31, 2**31, 6).tolist()))
        for _ in range(int(rng.integers(1, 5))):
            i = int(rng.integers(4, len(f) - 4))
            f[i] = int(rng.integers(0, 256))
        f[-4:] = struct.pack("<I", zlib.crc32(bytes(f[2:-4])))
        f = bytes(f)
        if check_frame(f) != OK:          # the transport refuses it (another version byte)
            continue
        if n % 2:
            ref = decode_status(f)
            out = np.zeros(WK.ST_LEN)
            got = WK.scan_status(f, out)
            if ref is None:
                assert got == (0, 1), (n, f.hex())
                seen["status_refused"] += 1
            else:
                assert got == (1, 0), (n, f.hex())
                assert out[WK.ST_STATE] == ref.state and out[WK.ST_MODE] == ref.mode and out[WK.ST_FAULT] == ref.fault
                assert out[WK.ST_POSE:WK.ST_POSE + 7].tolist() == ref.pose.tolist()
                assert out[WK.ST_LENGTHS:WK.ST_LENGTHS + 6].tolist() == ref.lengths.tolist()
                seen["status_ok"] += 1
        else:
            ref = decode_sensor_frame(f)
            raw = np.zeros(6)
            got = WK.scan_sensor(f, raw)
            if ref is None or len(ref.counts) != 6:
                assert got == (0, 1), (n, f.hex())
                seen["sensor_refused"] += 1
            else:
                assert got == (1, 0) and raw.tolist() == ref.counts.tolist(), (n, f.hex())
                seen["sensor_ok"] += 1
    assert min(seen.values()) > 50, seen       # both verdicts exercised for both kinds
