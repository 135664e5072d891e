"""Compiled codecs of the dockstand frame for the controller's cycle (docs/protocols.md;
docs/controller.md, "Cycle").

The byte layouts are the drivers' (``drivers.framing``, ``drivers.motion_platform``,
``drivers.ft_sensor``); the Python codecs there stay the reference and the device side's
codecs, and ``tests/rt/test_wire_kernels.py`` checks these against them frame by frame.
``drivers`` may not import numba (architecture.md), so the compiled twins live here.

* :func:`crc32` — CRC-32/ISO-HDLC (zlib.crc32), table driven.
* :func:`encode_frame` — one frame whose payload is ``n`` little-endian float64 (POSE: 7,
  LENGTHS: 6, state commands: 0) into a preallocated uint8 buffer; returns its length.
* :func:`scan_status` / :func:`scan_sensor` — walk the messages of one poll
  (``transport.poll_messages()``: each preceded by its length, u16 LE; the transport's
  checks delegated to this scan, ``Transport.delegate_checks``), check each as the transport
  would (:func:`frame_check`: ``drivers.framing.check_frame``; :func:`seq_accept`:
  ``drivers.framing.SeqTracker.accept``, its state in the link slots ``LK_*``), validate the
  accepted ones as the Python decoders do (type, payload length; STATUS: known state and
  mode, finite numbers), count the ones refused and decode the newest valid one into a
  float64 array.

Link slots (a float64 array ``lk`` from offset ``b``; the controller keeps both links' in its
``ins``): ``LK_SEQ_ON`` (the link's ``seq_check``), ``LK_RESTART_AFTER`` (SeqTracker's
``restart_after``), ``LK_TRACK`` (drivers.framing SEQ_STATE_LEN slots, zeroed by the
transport whenever it resets) and what the last scan counted, for the shell to add to the
link's Counters: ``LK_ACC`` (frames accepted: frames_rx), ``LK_CRC`` (crc_errors),
``LK_MAL`` (malformed: length, sync, header, version), ``LK_GAPS`` / ``LK_LOST`` /
``LK_DUP`` / ``LK_BACK`` / ``LK_RESTARTS`` (seq_gaps, frames_lost, duplicates,
seq_backwards, seq_restarts).

All little-endian reads/writes go byte by byte through integer bit casts, so they work on
read-only ``bytes`` as numba sees them (no ``view``).
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from drivers.framing import (BAD_CRC, BAD_HEADER, BAD_LENGTH, BAD_SYNC, BAD_VERSION, HEADER_SIZE, MAX_FRAME,
                             MIN_BODY, MIN_FRAME, OK, SEQ_STATE_LEN, SYNC0, SYNC1, VERSION, FrameType, SeqTracker)
from drivers.motion_platform import Mode, PlatformState, encode_status
from drivers.transport import SEQ_RESET_MARK
from rt.jit import KERNEL

SENSOR_SAMPLE = int(FrameType.SENSOR_SAMPLE)
STATUS = int(FrameType.STATUS)
POSE, LENGTHS, HEARTBEAT = int(FrameType.POSE), int(FrameType.LENGTHS), int(FrameType.HEARTBEAT)
STATUS_FRAME_LEN = len(encode_status(0, 0, 0, 0, 0, [0.0] * 7, [0.0] * 6))
N_STATES, N_MODES = len(PlatformState), len(Mode)     # each numbered 0 .. n-1 (a code < n is known)
assert [int(s) for s in PlatformState] == list(range(N_STATES)) and [int(m) for m in Mode] == list(range(N_MODES))
# decoded STATUS (scan_status): state, mode, fault, last_cmd_seq, seq, device time (s), pose (7), lengths (6),
# digital inputs (the u32 word, exact in a float64)
ST_STATE, ST_MODE, ST_FAULT, ST_LAST_SEQ, ST_SEQ, ST_TIME, ST_POSE, ST_LENGTHS, ST_INPUTS = 0, 1, 2, 3, 4, 5, 6, 13, 19
ST_LEN = 20
# a link's check slots (module docstring)
LK_SEQ_ON, LK_RESTART_AFTER, LK_TRACK = 0, 1, 2
LK_HAVE_LAST, LK_LAST, LK_REJ_RUN, LK_HAVE_REJ, LK_REJ_LAST = range(LK_TRACK, LK_TRACK + SEQ_STATE_LEN)
(LK_ACC, LK_CRC, LK_MAL, LK_GAPS, LK_LOST, LK_DUP, LK_BACK, LK_RESTARTS) = range(LK_TRACK + SEQ_STATE_LEN,
                                                                             LK_TRACK + SEQ_STATE_LEN + 8)
LK_LEN = LK_RESTARTS + 1
LK_ERRORS = (("crc_errors", LK_CRC), ("malformed", LK_MAL), ("seq_gaps", LK_GAPS), ("frames_lost", LK_LOST),
             ("duplicates", LK_DUP), ("seq_backwards", LK_BACK), ("seq_restarts", LK_RESTARTS))
RESTART_AFTER = SeqTracker.__init__.__defaults__[0]


def add_link_errors(counters, lk, b: int) -> None:
    """What the last scan refused (lk[b + LK_CRC ...]) added to a link's drivers.framing
    Counters, as the transport's own checks would have counted it (the accepted frames go
    through ``Transport.accepted``)."""
    for name, i in LK_ERRORS:
        v = lk[b + i]
        if v:
            setattr(counters, name, getattr(counters, name) + int(v))


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


@njit(**KERNEL, inline="always")
def crc32(buf, start, end):
    """CRC-32 of buf[start:end] (zlib.crc32).

    Parameters
    ----------
    buf : uint8[:] or bytes
        The bytes to checksum.
    start, end : int
        The range buf[start:end] to checksum.
    """
    c = np.uint32(0xFFFFFFFF)
    for i in range(start, end):
        c = CRC_TABLE[(c ^ np.uint32(buf[i])) & np.uint32(0xFF)] ^ (c >> np.uint32(8))
    return c ^ np.uint32(0xFFFFFFFF)


@njit(**KERNEL, inline="always")
def rd_u(buf, off, n):
    """Unsigned little-endian integer of n bytes at off.

    Parameters
    ----------
    buf : uint8[:] or bytes
        The bytes.
    off : int
        Offset of the integer's first (least significant) byte.
    n : int
        Its size in bytes (at most 8).
    """
    u = np.uint64(0)
    for i in range(n):
        u |= np.uint64(buf[off + i]) << np.uint64(8 * i)
    return u


@njit(**KERNEL, inline="always")
def rd_i32(buf, off):
    """Signed little-endian 32-bit integer at off (as int64): the four bytes :func:`rd_u` reads
    there, taken as two's complement.

    Parameters
    ----------
    buf : uint8[:] or bytes
        The bytes.
    off : int
        Offset of the integer, as for :func:`rd_u`.
    """
    u = np.int64(rd_u(buf, off, 4))
    return u - 4294967296 if u >= 2147483648 else u


@njit(**KERNEL, inline="always")
def rd_f64(buf, off):
    """Little-endian float64 at off.

    Parameters
    ----------
    buf : uint8[:] or bytes
        The bytes.
    off : int
        Offset of the number's first byte.
    """
    return _u64_as_f64(rd_u(buf, off, 8))


@njit(**KERNEL, inline="always")
def wr_u(buf, off, u, n):
    """Write the unsigned integer u as n little-endian bytes at off.

    Parameters
    ----------
    buf : uint8[:]
        The buffer written.
    off : int
        Offset of the first (least significant) byte.
    u : int
        The value (taken as uint64; bytes beyond n dropped).
    n : int
        Number of bytes (at most 8).
    """
    u = np.uint64(u)
    for i in range(n):
        buf[off + i] = np.uint8((u >> np.uint64(8 * i)) & np.uint64(0xFF))


@njit(**KERNEL)
def encode_frame(out, ftype, seq, t_ns, values, n):
    """The frame of type ``ftype`` with seq and time_ns, payload values[:n] as float64 LE,
    into out[0:len]; returns len (drivers.framing layout).

    Parameters
    ----------
    out : uint8[MAX_FRAME]
        Written: the frame, out[0:len].
    ftype : int
        Frame type (drivers.framing.FrameType: POSE, LENGTHS, a state command).
    seq : int
        Sequence number (its low 32 bits are sent).
    t_ns : int
        Host time, ns.
    values : float64[:]
        The payload values (POSE: m and -, T in B; LENGTHS: m).
    n : int
        How many of values to send.
    """
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


@njit(**KERNEL)
def _finite(x):
    return x - x == 0.0


@njit(**KERNEL)
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


@njit(**KERNEL, inline="always")
def frame_check(buf, m, n):
    """drivers.framing.check_frame of the message buf[m:m + n] (the same codes, in the same
    order of tests).

    Parameters
    ----------
    buf : uint8[:] or bytes
        The poll's messages.
    m : int
        Offset of the message's first byte.
    n : int
        Its length in bytes.
    """
    if n < MIN_FRAME or n > MAX_FRAME:
        return BAD_LENGTH
    if buf[m] != SYNC0 or buf[m + 1] != SYNC1:
        return BAD_SYNC
    body = int(buf[m + 2])
    if int(buf[m + 3]) != body ^ 0xFF or body < MIN_BODY:
        return BAD_HEADER
    if n != 4 + body + 4:
        return BAD_LENGTH
    end = m + 4 + body
    if crc32(buf, m + 2, end) != np.uint32(rd_u(buf, end, 4)):
        return BAD_CRC
    if buf[m + 5] != VERSION:
        return BAD_VERSION
    return OK


@njit(**KERNEL, inline="always")
def seq_accept(lk, b, seq):
    """drivers.framing.SeqTracker.accept(seq) on the tracker state lk[b + LK_TRACK ...],
    counting into lk[b + LK_GAPS ...]: True to deliver the frame.

    Parameters
    ----------
    lk : float64[b + LK_LEN]
        Link slots from offset b (module docstring): the tracker's state and the sequence
        counters, updated.
    b : int
        Offset of the link's slots in lk.
    seq : int
        The frame's sequence number (u32).
    """
    if lk[b + LK_HAVE_LAST] == 0.0:
        lk[b + LK_HAVE_LAST] = 1.0
        lk[b + LK_LAST] = seq
        return True
    d = (seq - np.int64(lk[b + LK_LAST])) & 0xFFFFFFFF
    if 0 < d < 0x80000000:
        if d != 1:
            lk[b + LK_GAPS] += 1.0
            lk[b + LK_LOST] += d - 1
        lk[b + LK_LAST] = seq
        lk[b + LK_REJ_RUN] = 0.0
        return True
    if d == 0:
        lk[b + LK_DUP] += 1.0
    else:
        lk[b + LK_BACK] += 1.0
    if lk[b + LK_REJ_RUN] != 0.0 and lk[b + LK_HAVE_REJ] != 0.0 and \
            ((seq - np.int64(lk[b + LK_REJ_LAST])) & 0xFFFFFFFF) == 1:
        lk[b + LK_REJ_RUN] += 1.0
    else:
        lk[b + LK_REJ_RUN] = 1.0
    lk[b + LK_HAVE_REJ] = 1.0
    lk[b + LK_REJ_LAST] = seq
    if lk[b + LK_REJ_RUN] >= lk[b + LK_RESTART_AFTER]:
        lk[b + LK_RESTARTS] += 1.0
        lk[b + LK_LAST] = seq
        lk[b + LK_REJ_RUN] = 0.0
        return True
    return False


@njit(**KERNEL)
def _walk(buf, ftype, flen_want, status, lk, b):
    """Walk the messages of one poll (``Transport.poll_messages``) -> (frames of type
    ``ftype`` and length ``flen_want`` that pass (``status``: also :func:`_status_ok`),
    frames refused by content, offset of the newest accepted one or -1). Each message is
    first checked as the transport would (:func:`frame_check`, :func:`seq_accept` if
    ``lk[b + LK_SEQ_ON]``); what that refuses is counted in the link slots, from zero. A
    length of ``SEQ_RESET_MARK`` resets the sequence state at that place (a new ROUTER peer)."""
    for i in range(LK_ACC, LK_LEN):
        lk[b + i] = 0.0
    n = len(buf)
    off = 0
    good = 0
    bad = 0
    newest = -1
    seq_on = lk[b + LK_SEQ_ON] != 0.0
    while off + 2 <= n:
        mlen = int(buf[off]) | (int(buf[off + 1]) << 8)
        m = off + 2
        if mlen == SEQ_RESET_MARK:  # the transport's tracker would have been reset here
            for i in range(SEQ_STATE_LEN):
                lk[b + LK_TRACK + i] = 0.0
            off = m
            continue
        off = m + mlen
        if off > n:                 # a message cut short: not from poll_messages
            lk[b + LK_MAL] += 1.0
            break
        r = frame_check(buf, m, mlen)
        if r != OK:
            if r == BAD_CRC:
                lk[b + LK_CRC] += 1.0
            else:
                lk[b + LK_MAL] += 1.0
            continue
        if seq_on and not seq_accept(lk, b, np.int64(rd_u(buf, m + 6, 4))):
            continue
        lk[b + LK_ACC] += 1.0
        if mlen == flen_want and buf[m + 4] == ftype and (not status or _status_ok(buf, m)):
            good += 1
            newest = m
        else:
            bad += 1
    if off < n:
        lk[b + LK_MAL] += 1.0       # a stray byte after the last message
    return good, bad, newest


@njit(**KERNEL)
def scan_status(buf, out, lk, b):
    """Messages of one poll (``Transport.poll_messages``) -> (valid STATUS frames, frames
    refused by content); the newest valid one decoded into ``out`` (ST_*); the link's checks
    counted in lk[b + LK_*] (:func:`_walk`). A frame is refused, as
    ``drivers.motion_platform.decode_status`` refuses it, for another type or length, an
    unknown state or mode, or a non-finite pose or length.

    Parameters
    ----------
    buf : uint8[:] or bytes
        The poll's messages, each preceded by its length (u16 LE).
    out : float64[ST_LEN]
        Written when a valid STATUS arrived: the newest one, layout ``ST_*`` (time in s, pose m
        and -, T in B, lengths m).
    lk : float64[b + LK_LEN]
        Link slots from offset b (module docstring): the sequence tracker's state, updated, and
        what this scan counts, zeroed first.
    b : int
        Offset of the link's slots in lk.
    """
    good, bad, newest = _walk(buf, STATUS, STATUS_FRAME_LEN, True, lk, b)
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
        out[ST_INPUTS] = rd_u(buf, p + 112, 4)
    return good, bad


@njit(**KERNEL)
def scan_sensor(buf, raw, lk, b):
    """Messages of one poll (``Transport.poll_messages``) -> (valid SENSOR_SAMPLE frames of
    ``raw.shape[0]`` channels, frames refused by content, the newest valid one's status word
    (0 if none)); the newest valid one's counts into ``raw`` (float64); the link's checks
    counted in lk[b + LK_*]. Refused, as ``drivers.ft_sensor.FtSensor.poll`` refuses them:
    another type, or another channel count.

    Parameters
    ----------
    buf : uint8[:] or bytes
        The poll's messages, each preceded by its length (u16 LE).
    raw : float64[n_channels]
        Written when a valid sample arrived: the newest one's counts; its length is the channel
        count the frames must have.
    lk : float64[b + LK_LEN]
        Link slots from offset b, as for :func:`scan_status`.
    b : int
        Offset of the link's slots in lk.
    """
    good, bad, newest = _walk(buf, SENSOR_SAMPLE, HEADER_SIZE + 4 + 4 * raw.shape[0] + 4, False, lk, b)
    status = 0
    if newest >= 0:
        status = np.int64(rd_u(buf, newest + HEADER_SIZE, 4))
        p = newest + HEADER_SIZE + 4
        for k in range(raw.shape[0]):
            raw[k] = rd_i32(buf, p + 4 * k)
    return good, bad, status
