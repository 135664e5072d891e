"""Six-axis force/torque sensor: ATI Net F/T RDT over UDP and the framed serial format.

Host side: ``FtSensor`` (protocol ``"rdt"`` or ``"serial"`` by config) whose ``poll()`` returns
``FtSample(seq, device_time, host_time, counts, status)`` newest-last.
Device side (used by the emulator): ``RdtDevice`` and ``SerialSensorDevice``, and the codec
functions ``encode_rdt_request/records``, ``decode_rdt_request/records``,
``encode_sensor_frame``, ``decode_sensor_frame``. Every decoder returns None for input it
refuses and never raises. Byte layouts: docs/protocols.md.
"""
from __future__ import annotations

import struct
import time
from enum import IntEnum
from typing import NamedTuple

import numpy as np

from drivers.framing import (CRC, FrameType, HEADER_SIZE, OK, SYNC, VERSION, SeqTracker,
                             check_frame, crc32)
from drivers.hardware import SensorInterface
from drivers.transport import Transport, TransportConfigError, make_transport

__all__ = ["RDT_PORT", "RdtCommand", "FtSample", "SensorFrame", "RdtRecord", "encode_rdt_request",
           "decode_rdt_request", "encode_rdt_record", "encode_rdt_records", "decode_rdt_records",
           "encode_sensor_frame", "decode_sensor_frame", "FtSensor", "RdtDevice",
           "SerialSensorDevice", "MAX_CHANNELS"]

# ----------------------------------------------------------------------------- ATI RDT

RDT_PORT = 49152
RDT_HEADER = 0x1234
RDT_REQUEST = struct.Struct(">HHI")       # 0x1234, command, sample_count   (8 bytes)
RDT_RECORD = struct.Struct(">III6i")      # rdt_sequence, ft_sequence, status, Fx..Tz (36 bytes)
RDT_RECORD_SIZE = RDT_RECORD.size


class RdtCommand(IntEnum):
    STOP = 0x0000
    REALTIME = 0x0002
    BUFFERED = 0x0003
    MULTI_UNIT = 0x0004
    RESET_THRESHOLD_LATCH = 0x0041
    SET_BIAS = 0x0042


class RdtRecord(NamedTuple):
    rdt_sequence: int
    ft_sequence: int
    status: int
    counts: tuple


def encode_rdt_request(command: int, sample_count: int = 0) -> bytes:
    return RDT_REQUEST.pack(RDT_HEADER, int(command), int(sample_count))


def decode_rdt_request(data) -> tuple[int, int] | None:
    """(command, sample_count), or None if not an 8-byte request with header 0x1234."""
    if len(data) != RDT_REQUEST.size:
        return None
    head, command, count = RDT_REQUEST.unpack(data)
    if head != RDT_HEADER:
        return None
    return command, count


def encode_rdt_record(rdt_sequence: int, ft_sequence: int, status: int, counts) -> bytes:
    return RDT_RECORD.pack(rdt_sequence & 0xFFFFFFFF, ft_sequence & 0xFFFFFFFF, status & 0xFFFFFFFF,
                           *counts)


def encode_rdt_records(records) -> bytes:
    """Several (rdt_sequence, ft_sequence, status, counts) in one datagram (buffered mode)."""
    return b"".join(encode_rdt_record(*r) for r in records)


def decode_rdt_records(data) -> list[RdtRecord] | None:
    """The records of one RDT datagram, or None if its length is not a positive multiple of 36."""
    n = len(data)
    if n == 0 or n % RDT_RECORD_SIZE:
        return None
    if n == RDT_RECORD_SIZE:
        r = RDT_RECORD.unpack(data)
        return [RdtRecord(r[0], r[1], r[2], r[3:])]
    return [RdtRecord(r[0], r[1], r[2], r[3:]) for r in RDT_RECORD.iter_unpack(data)]


# ----------------------------------------------------------------------------- serial sensor frame

MAX_CHANNELS = 16
_SENSOR_FRAME = {n: struct.Struct(f"<2sBBBBIQI{n}i") for n in range(1, MAX_CHANNELS + 1)}
_SENSOR_PAYLOAD = {n: struct.Struct(f"<I{n}i") for n in range(1, MAX_CHANNELS + 1)}
_HEAD_FIELDS = struct.Struct("<IQ")       # seq, time_ns at offset 6
_I32 = np.dtype("<i4")


class SensorFrame(NamedTuple):
    seq: int
    time_ns: int
    status: int
    counts: np.ndarray      # int32, one per gauge channel (6 or 8 ...)


def encode_sensor_frame(seq: int, time_ns: int, counts, status: int = 0) -> bytes:
    """A SENSOR_SAMPLE frame: status u32 then one int32 per channel (1..16; 6 or 8 gauges)."""
    n = len(counts)
    st = _SENSOR_FRAME.get(n)
    if st is None:
        raise ValueError(f"{n} channels: must be 1..{MAX_CHANNELS}")
    body_len = st.size - 4
    head = st.pack(SYNC, body_len, body_len ^ 0xFF, FrameType.SENSOR_SAMPLE, VERSION,
                   seq & 0xFFFFFFFF, time_ns & 0xFFFFFFFFFFFFFFFF, status & 0xFFFFFFFF, *counts)
    return head + CRC.pack(crc32(memoryview(head)[2:]))


def decode_sensor_frame(frame, checked: bool = False) -> SensorFrame | None:
    """Decode a SENSOR_SAMPLE frame; None if it is not a valid one. ``checked=True`` skips the
    CRC check when the transport has already done it."""
    if not checked and check_frame(frame) != OK:
        return None
    n_bytes = len(frame)
    if n_bytes < HEADER_SIZE + 8 or frame[4] != FrameType.SENSOR_SAMPLE:
        return None
    payload = n_bytes - HEADER_SIZE - 4
    n = (payload - 4) >> 2
    if payload & 3 or not 1 <= n <= MAX_CHANNELS:
        return None
    seq, time_ns = _HEAD_FIELDS.unpack_from(frame, 6)
    status = int.from_bytes(frame[HEADER_SIZE:HEADER_SIZE + 4], "little")
    counts = np.frombuffer(frame, _I32, n, HEADER_SIZE + 4)
    return SensorFrame(seq, time_ns, status, counts)


# ----------------------------------------------------------------------------- host driver

class FtSample(NamedTuple):
    seq: int                 # RDT rdt_sequence, or the serial frame's seq
    device_time: float       # s: serial frame time_ns * 1e-9; RDT ft_sequence / ft_rate_hz
    host_time: float         # s, time.monotonic() when poll() received it
    counts: np.ndarray       # int32: RDT Fx Fy Fz Tx Ty Tz counts; serial: raw gauge counts
    status: int              # device status word (0 = healthy)


_SENSOR_KEYS = {"protocol": None, "channels": 6, "ft_rate_hz": 7000.0, "counts_per_force": 1.0,
                "counts_per_torque": 1.0, "rerequest_s": 0.5, "rdt_command": "realtime"}


class FtSensor(SensorInterface):
    """The F/T sensor as the controller sees it.

    protocol ``"rdt"``: a UDP transport in raw framing; ``open()`` asks for real-time
    streaming (command 0x0002, sample_count 0) and the request is repeated (the sequence
    tracker re-armed) when nothing arrives for ``rerequest_s``. protocol ``"serial"``: a
    framed transport (serial, zmq, memory) carrying SENSOR_SAMPLE frames of ``channels``
    gauges; frames with another channel count count as ``counters.malformed``.
    """

    def __init__(self, transport: Transport, protocol: str = "rdt", *, channels: int = 6,
                 ft_rate_hz: float = 7000.0, counts_per_force: float = 1.0,
                 counts_per_torque: float = 1.0, rerequest_s: float = 0.5,
                 rdt_command: str = "realtime") -> None:
        if protocol not in ("rdt", "serial"):
            raise TransportConfigError("protocol", f"must be 'rdt' or 'serial', got {protocol!r}")
        if protocol == "rdt":
            if transport.framing != "raw":
                raise TransportConfigError("framing", "RDT datagrams need framing = 'raw'")
            if channels != 6:
                raise TransportConfigError("channels", "RDT carries 6 channels")
        elif transport.framing != "frame":
            raise TransportConfigError("framing", "the serial sensor protocol needs framing = 'frame' (every "
                                                  "message a whole, CRC-checked dockstand frame)")
        if not isinstance(channels, int) or isinstance(channels, bool) or not 1 <= channels <= MAX_CHANNELS:
            raise TransportConfigError("channels", f"must be an integer 1..{MAX_CHANNELS}, got {channels!r}")
        for key, v in (("ft_rate_hz", ft_rate_hz), ("counts_per_force", counts_per_force),
                       ("counts_per_torque", counts_per_torque), ("rerequest_s", rerequest_s)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise TransportConfigError(key, f"must be a positive number, got {v!r}")
        if rdt_command not in ("realtime", "buffered"):
            raise TransportConfigError("rdt_command", f"must be 'realtime' or 'buffered', got {rdt_command!r}")
        self.transport = transport
        self.protocol = protocol
        self.fast_read = transport.poll_messages if protocol == "serial" else None   # drivers.hardware
        self.channels = channels
        self.ft_rate_hz = float(ft_rate_hz)
        self.rerequest_s = float(rerequest_s)
        self.rdt_command = RdtCommand.REALTIME if rdt_command == "realtime" else RdtCommand.BUFFERED
        self._scale = 1.0 / np.array([counts_per_force] * 3 + [counts_per_torque] * 3, dtype=np.float64)
        self.latest: FtSample | None = None
        self.samples_rx = 0
        self._tracker = SeqTracker(transport.counters) if protocol == "rdt" else None
        self._streaming = False
        self._last_request = 0.0

    @classmethod
    def from_config(cls, cfg: dict) -> "FtSensor":
        """From a stand-config table: ``protocol``, ``channels``, ``ft_rate_hz``,
        ``counts_per_force``, ``counts_per_torque``, ``rerequest_s``, ``rdt_command``,
        ``transport`` (kind) and that transport's options. Not yet opened."""
        cfg = dict(cfg)
        kind = cfg.pop("transport", None)
        protocol = cfg.get("protocol")
        if protocol is None:
            raise TransportConfigError("protocol", "required: 'rdt' or 'serial'")
        if kind is None:
            kind = "udp" if protocol == "rdt" else "serial"
        sensor_opts = {k: cfg.pop(k) for k in list(cfg) if k in _SENSOR_KEYS}
        if protocol == "rdt" and kind == "udp":
            cfg.setdefault("port", RDT_PORT)
        t = make_transport(kind, **cfg)
        return cls(t, **sensor_opts)

    # -- the hardware interface (drivers.hardware)
    @property
    def framed(self) -> bool:
        """Serial: canonical SENSOR_SAMPLE frames for the compiled scan; RDT: decoded here."""
        return self.protocol == "serial"

    def read(self):
        """Serial: the frames received since the last call, as received (the controller's
        compiled scan checks and decodes them); RDT: the decoded, sequence-checked samples
        (:meth:`poll`). Real-time."""
        return self.transport.poll_messages() if self.protocol == "serial" else self.poll()

    # -- lifecycle
    def open(self) -> None:
        self.transport.open()
        if self.protocol == "rdt":
            self.start()

    def close(self) -> None:
        if self.protocol == "rdt" and self.transport.is_open:
            self.stop()
        self.transport.close()

    # -- RDT commands
    def start(self, sample_count: int = 0) -> bool:
        """Ask for streaming (RDT): real-time or buffered, ``sample_count`` 0 = endless."""
        self._streaming = True
        self._last_request = time.monotonic()
        if self._tracker is not None:
            self._tracker.reset()
        return self.transport.send(encode_rdt_request(self.rdt_command, sample_count))

    def stop(self) -> bool:
        self._streaming = False
        return self.transport.send(encode_rdt_request(RdtCommand.STOP, 0))

    def bias(self) -> bool:
        """RDT software bias (0x0042): the device subtracts its present reading from now on."""
        if self.protocol != "rdt":
            return False
        return self.transport.send(encode_rdt_request(RdtCommand.SET_BIAS, 0))

    # -- data
    def wrench(self, counts) -> np.ndarray:
        """RDT counts -> [Fx Fy Fz Tx Ty Tz] in N, N·m (counts per force / torque from config)."""
        return np.asarray(counts, dtype=np.float64) * self._scale

    def poll(self) -> list[FtSample]:
        frames = self.transport.poll()
        now = time.monotonic()
        out: list[FtSample] = []
        c = self.transport.counters
        if self.protocol == "rdt":
            tr = self._tracker
            rate = self.ft_rate_hz
            for dgram in frames:
                recs = decode_rdt_records(dgram)
                if recs is None:
                    c.malformed += 1
                    continue
                for r in recs:
                    if tr.accept(r.rdt_sequence):
                        out.append(FtSample(r.rdt_sequence, r.ft_sequence / rate, now,
                                            np.array(r.counts, dtype=np.int32), r.status))
            if (not out and self._streaming
                    and now - max(self._last_request, c.last_rx_time or 0.0) > self.rerequest_s):
                self.start()
        else:
            n = self.channels
            for f in frames:
                s = decode_sensor_frame(f, checked=True)
                if s is None or len(s.counts) != n:
                    c.malformed += 1
                    continue
                out.append(FtSample(s.seq, s.time_ns * 1e-9, now, s.counts, s.status))
        if out:
            self.samples_rx += len(out)
            self.latest = out[-1]
        return out


# ----------------------------------------------------------------------------- device side

class SerialSensorDevice:
    """Device end of the framed sensor protocol (for the emulator): one SENSOR_SAMPLE frame
    per ``send_sample``, seq +1 each, over any framed transport."""

    def __init__(self, transport: Transport, channels: int = 6) -> None:
        if not 1 <= channels <= MAX_CHANNELS:
            raise ValueError(f"channels: must be 1..{MAX_CHANNELS}")
        self.transport = transport
        self.channels = channels
        self.seq = 0

    def encode_next(self, counts, status: int = 0, device_time: float | None = None) -> bytes:
        t_ns = time.monotonic_ns() if device_time is None else int(round(device_time * 1e9))
        frame = encode_sensor_frame(self.seq, t_ns, counts, status)
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        return frame

    def send_sample(self, counts, status: int = 0, device_time: float | None = None) -> bool:
        if len(counts) != self.channels:
            raise ValueError(f"counts: {len(counts)} values for {self.channels} channels")
        return self.transport.send(self.encode_next(counts, status, device_time))

    def poll(self) -> list[bytes]:
        """Drain whatever the host sent (the framed sensor protocol has no host commands)."""
        return self.transport.poll()


class RdtDevice:
    """Device end of ATI RDT (for the emulator): answers requests on a UDP transport opened
    with ``local_port`` (49152 on a real sensor), streams to the address that asked.

    ``poll()`` handles requests (start real-time / buffered with a sample count, stop,
    set bias, reset threshold latch); ``publish(counts)`` sends one record when streaming
    (buffered mode: one datagram per ``records_per_packet`` records). rdt_sequence is 1 for
    the first record after a start request; ft_sequence is the device's internal sample counter,
    which runs at ``internal_rate_hz`` (7000 Hz on a Net F/T) whatever the output rate: each
    output sample (at ``output_rate_hz``) advances it by internal / output (7 at 1 kHz).
    """

    def __init__(self, transport: Transport, records_per_packet: int = 10, *, internal_rate_hz: float = 7000.0,
                 output_rate_hz: float = 7000.0) -> None:
        if transport.framing != "raw":
            raise ValueError("framing: RDT needs a raw transport")
        if not 0.0 < output_rate_hz <= internal_rate_hz:
            raise ValueError(f"output_rate_hz must be in (0, internal_rate_hz = {internal_rate_hz:g}], "
                             f"got {output_rate_hz!r}")
        self.transport = transport
        self.records_per_packet = records_per_packet
        self.internal_rate_hz = float(internal_rate_hz)
        self.output_rate_hz = float(output_rate_hz)
        self.samples = 0             # output samples since power-up
        self.mode = RdtCommand.STOP
        self.remaining = 0           # samples left to send; -1 = endless
        self.rdt_sequence = 0
        self.ft_sequence = 0
        self.bias = np.zeros(6, dtype=np.int64)
        self.last_counts = np.zeros(6, dtype=np.int64)
        self.requests = 0
        self.bad_requests = 0
        self._pending: list[bytes] = []

    @property
    def streaming(self) -> bool:
        return self.mode in (RdtCommand.REALTIME, RdtCommand.BUFFERED) and self.remaining != 0

    def poll(self) -> list[tuple[int, int]]:
        handled = []
        for dgram in self.transport.poll():
            req = decode_rdt_request(dgram)
            if req is None:
                self.bad_requests += 1
                continue
            cmd, count = req
            self.requests += 1
            if cmd in (RdtCommand.REALTIME, RdtCommand.BUFFERED, RdtCommand.MULTI_UNIT):
                self.mode = RdtCommand.BUFFERED if cmd == RdtCommand.BUFFERED else RdtCommand.REALTIME
                self.remaining = count if count else -1
                self.rdt_sequence = 0
                self._pending.clear()
            elif cmd == RdtCommand.STOP:
                self.mode = RdtCommand.STOP
                self.remaining = 0
                self._pending.clear()
            elif cmd == RdtCommand.SET_BIAS:
                self.bias = self.last_counts + self.bias
            elif cmd == RdtCommand.RESET_THRESHOLD_LATCH:
                pass
            else:
                self.bad_requests += 1
                continue
            handled.append(req)
        return handled

    def publish(self, counts, status: int = 0) -> int:
        """One sample from the emulated sensor; returns the number of records sent now."""
        raw = np.asarray(counts, dtype=np.int64)
        out = raw - self.bias
        self.last_counts = out
        self.samples += 1
        self.ft_sequence = int(round(self.samples * self.internal_rate_hz / self.output_rate_hz)) & 0xFFFFFFFF
        if not self.streaming:
            return 0
        self.rdt_sequence = (self.rdt_sequence + 1) & 0xFFFFFFFF
        clipped = np.clip(out, -0x80000000, 0x7FFFFFFF)
        rec = RDT_RECORD.pack(self.rdt_sequence, self.ft_sequence, status & 0xFFFFFFFF,
                              *(int(v) for v in clipped))
        if self.remaining > 0:
            self.remaining -= 1
        if self.mode == RdtCommand.BUFFERED:
            self._pending.append(rec)
            if len(self._pending) < self.records_per_packet and self.remaining != 0:
                return 0
            data = b"".join(self._pending)
            n = len(self._pending)
            self._pending.clear()
            return n if self.transport.send(data) else 0
        return 1 if self.transport.send(rec) else 0


class _StandSensor(FtSensor):
    """An F/T sensor as the registry builds it (``[sensor] protocol``): configured from the
    stand file's ``[sensor.link]`` and its sensing parameters."""

    PROTOCOL = "serial"

    def __init__(self, transport: Transport | None = None, **kw) -> None:
        if transport is not None:
            super().__init__(transport, **kw)

    def configure(self, link: dict, stand) -> None:
        cpu = stand.sensing.counts_per_unit
        cfg = {**link, "protocol": self.PROTOCOL, "channels": stand.sensing.calibration.shape[1],
               "ft_rate_hz": stand.sensor_internal_rate_hz, "counts_per_force": float(cpu[0]),
               "counts_per_torque": float(cpu[3])}
        kind = cfg.pop("transport")
        opts = {k: cfg.pop(k) for k in list(cfg) if k in _SENSOR_KEYS}
        if self.PROTOCOL == "rdt" and kind == "udp":
            cfg.setdefault("port", RDT_PORT)
        super().__init__(make_transport(kind, **cfg), **opts)


class FramedSensor(_StandSensor):
    """The stand's framed sensor protocol (SENSOR_SAMPLE frames over serial, ZeroMQ or memory)."""

    PROTOCOL = "serial"


class RdtSensor(_StandSensor):
    """ATI Net F/T's Raw Data Transfer over UDP (records decoded here)."""

    PROTOCOL = "rdt"
