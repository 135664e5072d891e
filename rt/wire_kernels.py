"""Compiled codecs of the dockstand frame for the controller's cycle (docs/protocols.md;
docs/controller.md, "Cycle").

The byte layouts are the drivers' (``drivers.framing``, ``drivers.motion_platform``,
``drivers.ft_sensor``); the Python codecs there stay the reference and the device side's
codecs, and ``tests/rt/test_wire_kernels.py`` checks these against them frame by frame.
``drivers`` may not import numba (architecture.md), so the compiled twins live here.

* :func:`crc32` — CRC-32/ISO-HDLC (zlib.crc32), table driven.
* :func:`encode_frame` — one frame whose payload is ``n`` little-endian float64 (POSE: 7,
  LENGTHS: 6, state commands: 0) into a preallocated uint8 buffer; returns its length.
* :func:`scan_status` / :func:`scan_sensor` — walk the frames of one poll, concatenated
  (``b"".join(transport.poll())``: whole frames that the transport has CRC- and
  sequence-checked), validate each as the Python decoders do (type, payload length; STATUS:
  known state and mode, finite numbers), count the ones refused and decode the newest valid
  one into a float64 array.

All little-endian reads/writes go byte by byte through integer bit casts, so they work on
read-only ``bytes`` as numba sees them (no ``view``).
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from drivers.framing import HEADER_SIZE, MIN_BODY, SYNC0, SYNC1, VERSION, FrameType
from drivers.motion_platform import Mode, PlatformState, encode_status

SENSOR_SAMPLE = int(FrameType.SENSOR_SAMPLE)
STATUS = int(FrameType.STATUS)
POSE, LENGTHS, HEARTBEAT = int(FrameType.POSE), int(FrameType.LENGTHS), int(FrameType.HEARTBEAT)
STATUS_FRAME_LEN = len(encode_status(0, 0, 0, 0, 0, [0.0] * 7, [0.0] * 6))
N_STATES, N_MODES = len(PlatformState), len(Mode)     # each numbered 0 .. n-1 (a code < n is known)
assert [int(s) for s in PlatformState] == list(range(N_STATES)) and [int(m) for m in Mode] == list(range(N_MODES))
# decoded STATUS (scan_status): state, mode, fault, last_cmd_seq, seq, device time (s), pose (7), lengths (6)
ST_STATE, ST_MODE, ST_FAULT, ST_LAST_SEQ, ST_SEQ, ST_TIME, ST_POSE, ST_LENGTHS = 0, 1, 2, 3, 4, 5, 6, 13
ST_LEN = 19


def _crc_table() -> np.ndarray:
    t = np.zeros(256, dtype=np.uint32)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        t[n] = c
    return t


CRC_TABLE = _crc_table()


@intrinsic
def _u64_as_f64(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.uint64), codegen


@intrinsic
def _f64_as_u64(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.uint64))
    return types.uint64(types.float64), codegen


@njit(cache=True, inline="always")
def crc32(buf, start, end):
    """CRC-32 of buf[start:end] (zlib.crc32)."""
    c = np.uint32(0xFFFFFFFF)
    for i in range(start, end):
        c = CRC_TABLE[(c ^ np.uint32(buf[i])) & np.uint32(0xFF)] ^ (c >> np.uint32(8))
    return c ^ np.uint32(0xFFFFFFFF)


@njit(cache=True, inline="always")
def rd_u(buf, off, n):
    """Unsigned little-endian integer of n bytes at off."""
    u = np.uint64(0)
    for i in range(n):
        u |= np.uint64(buf[off + i]) << np.uint64(8 * i)
    return u


@njit(cache=True, inline="always")
def rd_i32(buf, off):
    u = np.int64(rd_u(buf, off, 4))
    return u - 4294967296 if u >= 2147483648 else u


@njit(cache=True, inline="always")
def rd_f64(buf, off):
    return _u64_as_f64(rd_u(buf, off, 8))


@njit(cache=True, inline="always")
def wr_u(buf, off, u, n):
    u = np.uint64(u)
    for i in range(n):
        buf[off + i] = np.uint8((u >> np.uint64(8 * i)) & np.uint64(0xFF))


@njit(cache=True)
def encode_frame(out, ftype, seq, t_ns, values, n):
    """The frame of type ``ftype`` with seq and time_ns, payload values[:n] as float64 LE,
    into out[0:len]; returns len (drivers.framing layout)."""
    body = MIN_BODY + 8 * n
    out[0] = SYNC0
    out[1] = SYNC1
    out[2] = body
    out[3] = body ^ 0xFF
    out[4] = ftype
    out[5] = VERSION
    wr_u(out, 6, np.uint64(seq) & np.uint64(0xFFFFFFFF), 4)
    wr_u(out, 10, t_ns, 8)
    for k in range(n):
        wr_u(out, HEADER_SIZE + 8 * k, _f64_as_u64(values[k]), 8)
    end = 4 + body
    wr_u(out, end, crc32(out, 2, end), 4)
    return end + 4


@njit(cache=True)
def _finite(x):
    return x - x == 0.0


@njit(cache=True)
def _status_ok(buf, off):
    """STATUS content as drivers.motion_platform.decode_status accepts it: a known state and
    mode, finite pose and lengths."""
    p = off + HEADER_SIZE
    if buf[p] >= N_STATES or buf[p + 1] >= N_MODES:
        return False
    for k in range(13):
        if not _finite(rd_f64(buf, p + 8 + 8 * k)):
            return False
    return True


@njit(cache=True)
def _walk(buf, ftype, flen_want, status):
    """Walk the frames of one poll (concatenated, transport-checked) by their length byte ->
    (frames of type ``ftype`` and length ``flen_want`` that pass (``status``: also
    :func:`_status_ok`), refused frames, offset of the newest accepted one or -1). A tail
    too short for a frame, or one that the length byte would overrun, counts as one refused
    frame."""
    n = len(buf)
    off = 0
    good = 0
    bad = 0
    newest = -1
    while off < n:
        if n - off < 4 + MIN_BODY + 4:
            bad += 1
            break
        flen = 4 + buf[off + 2] + 4
        if off + flen > n:
            bad += 1
            break
        if flen == flen_want and buf[off + 4] == ftype and (not status or _status_ok(buf, off)):
            good += 1
            newest = off
        else:
            bad += 1
        off += flen
    return good, bad, newest


@njit(cache=True)
def scan_status(buf, out):
    """Frames of one poll (concatenated, transport-checked) -> (valid STATUS frames, refused
    frames); the newest valid one decoded into ``out`` (ST_*). A frame is refused, as
    ``drivers.motion_platform.decode_status`` refuses it, for another type or length, an
    unknown state or mode, or a non-finite pose or length."""
    good, bad, newest = _walk(buf, STATUS, STATUS_FRAME_LEN, True)
    if newest >= 0:
        p = newest + HEADER_SIZE
        out[ST_STATE] = buf[p]
        out[ST_MODE] = buf[p + 1]
        out[ST_FAULT] = rd_u(buf, p + 2, 2)
        out[ST_LAST_SEQ] = rd_u(buf, p + 4, 4)
        out[ST_SEQ] = rd_u(buf, newest + 6, 4)
        out[ST_TIME] = rd_u(buf, newest + 10, 8) * 1e-9
        for k in range(13):
            out[ST_POSE + k] = rd_f64(buf, p + 8 + 8 * k)
    return good, bad


@njit(cache=True)
def scan_sensor(buf, raw):
    """Frames of one poll (concatenated, transport-checked) -> (valid SENSOR_SAMPLE frames
    of ``raw.shape[0]`` channels, refused frames); the newest valid one's counts into ``raw``
    (float64). Refused, as ``drivers.ft_sensor.FtSensor.poll`` refuses them: another type, or
    another channel count."""
    good, bad, newest = _walk(buf, SENSOR_SAMPLE, HEADER_SIZE + 4 + 4 * raw.shape[0] + 4, False)
    if newest >= 0:
        p = newest + HEADER_SIZE + 4
        for k in range(raw.shape[0]):
            raw[k] = rd_i32(buf, p + 4 * k)
    return good, bad
