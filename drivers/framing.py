"""The dockstand frame: the byte envelope shared by the serial and ZMQ links.

Layout (little-endian; full tables in ``docs/protocols.md``)::

    off size type  field
    0   2    u8[2] sync 0xA5 0xC3 (not a (L, ~L) pair: a doubled sync is refused at once)
    2   1    u8    L = body length (bytes 4 .. 4+L-1), 14 <= L <= 255
    3   1    u8    L ^ 0xFF (header check: a corrupt length is rejected at once)
    4   1    u8    type (drivers.platform.Command, STATUS, SENSOR_SAMPLE)
    5   1    u8    version = 1
    6   4    u32   seq: per sender and link, +1 for every frame the sender sends
    10  8    u64   time_ns: the sender's clock (device time or host time), ns
    18  L-14 ...   payload
    4+L 4    u32   CRC-32 (IEEE 802.3, zlib.crc32) over bytes 2 .. 4+L-1

Everything here is pure and never raises on bad input: ``check_frame`` answers a reason
code, ``StreamDecoder.feed`` returns the whole valid frames and counts what it dropped.
"""
from __future__ import annotations

import struct
import time
import zlib
from enum import IntEnum

SYNC = b"\xa5\xc3"
SYNC0, SYNC1 = 0xA5, 0xC3
VERSION = 1
HEADER = struct.Struct("<2sBBBBIQ")     # sync, L, ~L, type, version, seq, time_ns
HEADER_SIZE = HEADER.size                # 18
BODY_HEADER = HEADER_SIZE - 4            # 14: type, version, seq, time_ns
CRC = struct.Struct("<I")
CRC_SIZE = 4
MIN_BODY = BODY_HEADER
MAX_BODY = 255
MAX_PAYLOAD = MAX_BODY - BODY_HEADER     # 241
MIN_FRAME = 4 + MIN_BODY + CRC_SIZE      # 22
MAX_FRAME = 4 + MAX_BODY + CRC_SIZE      # 263
OVERHEAD = HEADER_SIZE + CRC_SIZE        # 22
CRC_NAME = "CRC-32/ISO-HDLC (IEEE 802.3, zlib.crc32): poly 0x04C11DB7 reflected, init/xorout 0xFFFFFFFF"
CRC_CHECK = 0xCBF43926                   # crc32(b"123456789")
_SEQ_OFF = 6
_SEQ = struct.Struct("<I")
_FIELDS = struct.Struct("<BBIQ")         # type, version, seq, time_ns at offset 4

crc32 = zlib.crc32

# check_frame reasons
OK = 0
BAD_LENGTH = 1      # message too short/long, or length field disagrees with it
BAD_SYNC = 2
BAD_HEADER = 3      # L / ~L disagree or L out of range
BAD_CRC = 4
BAD_VERSION = 5
REASONS = {OK: "ok", BAD_LENGTH: "bad length", BAD_SYNC: "bad sync", BAD_HEADER: "bad header",
           BAD_CRC: "bad crc", BAD_VERSION: "bad version"}


def encode_frame(ftype: int, seq: int, time_ns: int, payload: bytes = b"") -> bytes:
    """Build one frame. Raises ValueError for out-of-range fields (an encoder bug, not input)."""
    n = len(payload)
    if n > MAX_PAYLOAD:
        raise ValueError(f"payload of {n} bytes exceeds {MAX_PAYLOAD}")
    body_len = BODY_HEADER + n
    head = HEADER.pack(SYNC, body_len, body_len ^ 0xFF, ftype, VERSION, seq & 0xFFFFFFFF,
                       time_ns & 0xFFFFFFFFFFFFFFFF)
    crc = crc32(payload, crc32(memoryview(head)[2:]))
    return b"".join((head, payload, CRC.pack(crc)))


def check_frame(frame) -> int:
    """Validate one whole frame (a ZMQ message, a memory message). Returns a reason code, OK=0."""
    n = len(frame)
    if n < MIN_FRAME or n > MAX_FRAME:
        return BAD_LENGTH
    if frame[0] != SYNC0 or frame[1] != SYNC1:
        return BAD_SYNC
    body_len = frame[2]
    if frame[3] != body_len ^ 0xFF or body_len < MIN_BODY:
        return BAD_HEADER
    if n != 4 + body_len + CRC_SIZE:
        return BAD_LENGTH
    end = 4 + body_len
    if crc32(memoryview(frame)[2:end]) != CRC.unpack_from(frame, end)[0]:
        return BAD_CRC
    if frame[5] != VERSION:
        return BAD_VERSION
    return OK


def frame_fields(frame) -> tuple[int, int, int, int]:
    """(type, version, seq, time_ns) of a checked frame."""
    return _FIELDS.unpack_from(frame, 4)


def frame_seq(frame) -> int:
    return _SEQ.unpack_from(frame, _SEQ_OFF)[0]


def frame_type(frame) -> int:
    return frame[4]


def payload_of(frame) -> memoryview:
    return memoryview(frame)[HEADER_SIZE:len(frame) - CRC_SIZE]


class Counters:
    """Link counters, shared by a transport, its framing layer and the driver above it."""

    __slots__ = ("bytes_rx", "bytes_tx", "frames_rx", "frames_tx", "crc_errors", "resyncs",
                 "bytes_discarded", "malformed", "oversize", "seq_gaps", "frames_lost", "duplicates",
                 "seq_backwards", "seq_restarts", "tx_dropped", "link_errors", "peers_refused",
                 "refused_by_device", "last_rx_time", "last_tx_time")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        for name in self.__slots__:
            setattr(self, name, 0)
        self.last_rx_time = None
        self.last_tx_time = None

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return "Counters(" + ", ".join(f"{k}={v}" for k, v in self.as_dict().items() if v) + ")"


# The state of a sequence tracker kept by a consumer that checks frames itself (the
# controller's compiled scan, rt.stand.wire_kernels; Transport.delegate_checks): float64 slots
# have_last, last, rej_run, have_rej_last, rej_last -- SeqTracker's fields, None as 0 in the
# have_ slot. All zero = a reset tracker.
SEQ_STATE_LEN = 5


class SeqTracker:
    """Sequence checking of one sender's u32 counter.

    ``accept(seq)`` returns False for a frame to drop: a duplicate (same seq as the last one
    accepted) or one from the past (seq behind, modulo 2**32). A forward jump counts one
    ``seq_gaps`` event and ``frames_lost`` += the missing count. If ``restart_after``
    consecutive frames are refused and each follows the previous refused one (seq + 1), the
    sender is taken to have restarted: the tracker re-locks on it (``seq_restarts``).
    """

    __slots__ = ("counters", "last", "restart_after", "_rej_run", "_rej_last")

    def __init__(self, counters: Counters, restart_after: int = 3) -> None:
        self.counters = counters
        self.restart_after = restart_after
        self.last = None
        self._rej_run = 0
        self._rej_last = None

    def reset(self) -> None:
        self.last = None
        self._rej_run = 0
        self._rej_last = None

    @classmethod
    def from_state(cls, seq_state, restart_after: int = 3) -> "SeqTracker":
        """A tracker in the state ``seq_state`` (SEQ_STATE_LEN slots) with counters of its own:
        to foresee a consumer's verdicts (Transport.delegate_checks)."""
        t = cls(Counters(), restart_after)
        if seq_state[0]:
            t.last = int(seq_state[1])
        t._rej_run = int(seq_state[2])
        if seq_state[3]:
            t._rej_last = int(seq_state[4])
        return t

    def accept(self, seq: int) -> bool:
        last = self.last
        if last is None:
            self.last = seq
            return True
        d = (seq - last) & 0xFFFFFFFF
        if 0 < d < 0x80000000:
            if d != 1:
                self.counters.seq_gaps += 1
                self.counters.frames_lost += d - 1
            self.last = seq
            self._rej_run = 0
            return True
        c = self.counters
        if d == 0:
            c.duplicates += 1
        else:
            c.seq_backwards += 1
        if self._rej_run and self._rej_last is not None and ((seq - self._rej_last) & 0xFFFFFFFF) == 1:
            self._rej_run += 1
        else:
            self._rej_run = 1
        self._rej_last = seq
        if self._rej_run >= self.restart_after:
            c.seq_restarts += 1
            self.last = seq
            self._rej_run = 0
            return True
        return False


class StreamDecoder:
    """Cuts a byte stream into whole, CRC-checked frames.

    Rules: hunt for the sync word; check L against ~L (a bad header costs one byte, not a wait
    for a bogus length); wait until the whole frame is there; check the CRC and the version.
    On any failure drop **one** byte and hunt again, so a real frame that starts inside a bad
    one is still found. Nothing here raises; every dropped byte is counted in
    ``bytes_discarded``, every loss of lock in ``resyncs``, every bad CRC in ``crc_errors``.
    The buffer holds at most one partial frame (< MAX_FRAME bytes) between calls.
    """

    __slots__ = ("counters", "_buf", "_hunting", "max_feed")

    def __init__(self, counters: Counters | None = None, max_feed: int = 1 << 20) -> None:
        self.counters = counters if counters is not None else Counters()
        self._buf = bytearray()
        self._hunting = False
        self.max_feed = max_feed

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def reset(self) -> None:
        self._buf.clear()
        self._hunting = False

    def _lose_lock(self) -> None:
        if not self._hunting:
            self._hunting = True
            self.counters.resyncs += 1

    def feed(self, data) -> list[bytes]:
        c = self.counters
        buf = self._buf
        if len(data) > self.max_feed:            # bound memory: keep only the newest bytes
            drop = len(data) - self.max_feed
            c.bytes_discarded += drop + len(buf)
            self._lose_lock()
            buf.clear()
            data = memoryview(data)[drop:]
        buf += data
        n = len(buf)
        out = []
        pos = 0
        discarded = 0
        find = buf.find
        while n - pos >= MIN_FRAME:
            if buf[pos] != SYNC0 or buf[pos + 1] != SYNC1:
                self._lose_lock()
                j = find(SYNC, pos + 1)
                if j < 0:
                    j = n - 1 if buf[n - 1] == SYNC0 else n
                discarded += j - pos
                pos = j
                continue
            body_len = buf[pos + 2]
            if buf[pos + 3] != body_len ^ 0xFF or body_len < MIN_BODY:
                self._lose_lock()
                pos += 1
                discarded += 1
                continue
            end = pos + 4 + body_len
            if end + CRC_SIZE > n:
                break
            if crc32(buf[pos + 2:end]) != CRC.unpack_from(buf, end)[0] or buf[pos + 5] != VERSION:
                if crc32(buf[pos + 2:end]) != CRC.unpack_from(buf, end)[0]:
                    c.crc_errors += 1
                else:
                    c.malformed += 1                # a valid frame of an unknown version
                self._lose_lock()
                pos += 1
                discarded += 1
                continue
            out.append(bytes(buf[pos:end + CRC_SIZE]))
            self._hunting = False
            pos = end + CRC_SIZE
        # a tail too short for a frame: keep it only if it can still be one
        if pos < n and n - pos < MIN_FRAME:
            j = find(SYNC, pos)
            if j < 0:
                j = n - 1 if buf[n - 1] == SYNC0 else n
            if j > pos:
                self._lose_lock()
                discarded += j - pos
                pos = j
        if pos:
            del buf[:pos]
        if discarded:
            c.bytes_discarded += discarded
        return out


def monotonic_ns() -> int:
    return time.monotonic_ns()


class FrameType(IntEnum):
    """Registry of frame type codes (byte 4). The platform's codes are also
    ``drivers.platform.Command`` (IntEnum) and ``STATUS``."""

    SENSOR_SAMPLE = 0x10
    ENGAGE = 0x20
    PARK = 0x21
    POSE = 0x22
    LENGTHS = 0x23
    FREEZE = 0x24
    E_STOP = 0x25
    RESET_FAULT = 0x26
    HEARTBEAT = 0x27
    STATUS = 0x30
