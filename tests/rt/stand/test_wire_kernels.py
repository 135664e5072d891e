"""Compiled frame codecs and link checks (rt.stand.wire_kernels) against the drivers' Python codecs
and checks, which are the reference: same bytes out, same verdict and values in, frame by
frame; the same counters, message by message (hypothesis, plus fixed-seed batches of
corrupted frames)."""
from __future__ import annotations

import math
import struct
import zlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.framing import (BAD_CRC, OK, SEQ_STATE_LEN, Counters, SeqTracker, check_frame)
from drivers.framing import encode_frame as py_encode_frame
from drivers.ft_sensor import decode_sensor_frame, encode_sensor_frame
from drivers.motion_platform import Command, decode_status, encode_command, encode_status
from rt.stand import wire_kernels as WK

from frame_damage import damage

u32 = st.integers(0, 2**32 - 1)
i63 = st.integers(0, 2**63 - 1)   # time_ns as the controller passes it (int64)
i32 = st.integers(-2**31, 2**31 - 1)
f64 = st.floats(allow_nan=False, allow_infinity=False, width=64)
anyf = st.floats(width=64)


def _msgs(*frames) -> bytes:
    """Messages as Transport.poll_messages delivers them: each preceded by its length."""
    return b"".join(len(f).to_bytes(2, "little") + bytes(f) for f in frames)


def _lk(seq_on=False) -> np.ndarray:
    lk = np.zeros(WK.LK_LEN)
    lk[WK.LK_SEQ_ON] = seq_on
    lk[WK.LK_RESTART_AFTER] = WK.RESTART_AFTER
    return lk


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
       st.lists(anyf, min_size=13, max_size=13), u32)
@settings(max_examples=300)
def test_scan_status_agrees_with_decode_status(seq, t, state, mode, fault, last, vals, inputs):
    f = encode_status(seq, t, state, fault, last, vals[:7], vals[7:], mode, inputs)
    ref = decode_status(f)
    out = np.full(WK.ST_LEN, -1.0)
    good, bad = WK.scan_status(_msgs(f), out, _lk(), 0)
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
    assert out[WK.ST_INPUTS] == ref.inputs == inputs


def _status(seq, x, state=1, mode=1):
    return encode_status(seq, seq * 1000, state, 0, seq, [x, 0, 1, 1, 0, 0, 0], [1.0] * 6, mode)


def test_scan_status_takes_the_newest_valid_frame_and_counts_the_rest():
    bad_state = bytearray(_status(3, 0.3))
    bad_state[18] = 9                       # unknown state; fix the CRC so only the decoder refuses it
    bad_state[-4:] = struct.pack("<I", zlib.crc32(bytes(bad_state[2:-4])))
    frames = [_status(1, 0.1), _status(2, 0.2), bytes(bad_state), py_encode_frame(0x10, 4, 0, b"\0" * 28)]
    assert decode_status(bytes(bad_state)) is None
    out = np.zeros(WK.ST_LEN)
    lk = _lk()
    assert WK.scan_status(_msgs(*frames), out, lk, 0) == (2, 2)
    assert out[WK.ST_SEQ] == 2 and out[WK.ST_POSE] == 0.2
    assert lk[WK.LK_ACC] == 4 and lk[WK.LK_MAL] == 0 and lk[WK.LK_CRC] == 0
    assert WK.scan_status(b"", out, lk, 0) == (0, 0) and out[WK.ST_SEQ] == 2 and lk[WK.LK_ACC] == 0
    # a message cut short (not a frame: malformed for the link), a bad CRC: the whole frames still count
    bad_crc = bytearray(_status(6, 0.6))
    bad_crc[-1] ^= 0xFF
    msgs = _msgs(frames[0], _status(5, 0.5)[:40], bytes(bad_crc), frames[1])
    assert WK.scan_status(msgs, out, lk, 0) == (2, 0)
    assert (lk[WK.LK_ACC], lk[WK.LK_MAL], lk[WK.LK_CRC]) == (2, 1, 1)
    # a buffer whose last message overruns it (not from poll_messages): one malformed, then stop
    assert WK.scan_status(msgs[:-10], out, lk, 0) == (1, 0) and lk[WK.LK_MAL] == 2


@given(u32, i63, u32, st.sampled_from([6, 8]).flatmap(lambda n: st.lists(i32, min_size=n, max_size=n)))
def test_scan_sensor_agrees_with_decode_sensor_frame(seq, t, status, counts):
    f = encode_sensor_frame(seq, t, counts, status)
    ref = decode_sensor_frame(f)
    for nch in (6, 8):
        raw = np.full(nch, 0.5)
        good, bad, st_word = WK.scan_sensor(_msgs(f), raw, _lk(), 0)
        if nch == len(counts):
            assert (good, bad) == (1, 0) and raw.tolist() == ref.counts.tolist()
            assert st_word == ref.status == status
        else:                                # the driver counts another channel count as malformed
            assert (good, bad, st_word) == (0, 1, 0) and np.all(raw == 0.5)


def test_scan_sensor_newest_of_several_and_wrong_types():
    rng = np.random.default_rng(7)
    counts = [rng.integers(-2**31, 2**31, 6).tolist() for _ in range(5)]
    frames = [encode_sensor_frame(k, k, c, status=k) for k, c in enumerate(counts)]
    frames.insert(2, encode_status(0, 0, 1, 0, 0, [0.0] * 7, [0.0] * 6))
    raw = np.zeros(6)
    assert WK.scan_sensor(_msgs(*frames), raw, _lk(), 0) == (5, 1, 4)       # the newest one's status
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
            got = WK.scan_status(_msgs(f), out, _lk(), 0)
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
            got = WK.scan_sensor(_msgs(f), raw, _lk(), 0)
            if ref is None or len(ref.counts) != 6:
                assert got == (0, 1, 0), (n, f.hex())
                seen["sensor_refused"] += 1
            else:
                assert got == (1, 0, ref.status) and raw.tolist() == ref.counts.tolist(), (n, f.hex())
                seen["sensor_ok"] += 1
    assert min(seen.values()) > 50, seen       # both verdicts exercised for both kinds


def _mutated(rng, n):
    """n STATUS frames with consecutive seq, about a quarter of them damaged."""
    return [damage(_status(k, 0.1 * k), rng, 0.26) for k in range(n)]


@given(st.lists(st.binary(max_size=70), max_size=8))
def test_frame_check_is_check_frame_on_any_bytes(msgs):
    lk = _lk()
    WK.scan_status(_msgs(*msgs), np.zeros(WK.ST_LEN), lk, 0)
    crc = sum(check_frame(m) == BAD_CRC for m in msgs)
    mal = sum(check_frame(m) not in (OK, BAD_CRC) for m in msgs)
    assert (lk[WK.LK_CRC], lk[WK.LK_MAL], lk[WK.LK_ACC]) == (crc, mal, len(msgs) - crc - mal)


def test_frame_check_is_check_frame_on_mutated_frames():
    """Fixed seed: 4000 frames, a quarter of them damaged; each message alone through the scan
    gets check_frame's verdict (OK / CRC / the other reasons)."""
    rng = np.random.default_rng(11)
    verdicts = set()
    for m in _mutated(rng, 4000):
        lk = _lk()
        WK.scan_status(_msgs(m), np.zeros(WK.ST_LEN), lk, 0)
        r = check_frame(m)
        verdicts.add(r)
        assert (lk[WK.LK_ACC], lk[WK.LK_CRC], lk[WK.LK_MAL]) == (r == OK, r == BAD_CRC, r not in (OK, BAD_CRC)), m.hex()
    assert len(verdicts) >= 5, verdicts     # OK, CRC, sync, header, length, version all seen


seq_steps = st.lists(st.one_of(st.integers(1, 3), st.just(0), st.integers(-5, -1), st.integers(2**31 - 2, 2**31 + 2),
                               st.integers(0, 2**32 - 1)), max_size=60)


@given(u32, seq_steps, st.integers(1, 5))
@settings(max_examples=300)
def test_seq_accept_is_seq_tracker(start, steps, cut):
    """The compiled tracker against drivers.framing.SeqTracker over sequences with gaps,
    duplicates, steps back, restarts and wrap-around: the same verdict for every frame and the
    same counters; a reset (zeroed state, as the transport does) in the middle."""
    seqs = [start]
    for d in steps:
        seqs.append((seqs[-1] + d) & 0xFFFFFFFF)
    c = Counters()
    tr = SeqTracker(c)
    lk = _lk(True)
    totals = dict.fromkeys(("seq_gaps", "frames_lost", "duplicates", "seq_backwards", "seq_restarts"), 0)
    names = dict(WK.LK_ERRORS)
    out = np.zeros(WK.ST_LEN)
    for i, s_ in enumerate(seqs):
        if i == len(seqs) // cut:
            tr.reset()
            lk[WK.LK_TRACK:WK.LK_TRACK + SEQ_STATE_LEN] = 0.0
        ok = tr.accept(s_)
        good, _ = WK.scan_status(_msgs(_status(s_, 0.0)), out, lk, 0)
        assert bool(good) == ok, (i, seqs[:i + 1])
        for k in totals:
            totals[k] += int(lk[names[k]])
        assert totals == {k: getattr(c, k) for k in totals}, (i, seqs[:i + 1])
