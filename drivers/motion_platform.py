"""Motion platform (hexapod) protocol: commands host -> device, STATUS device -> host.

Same frame bytes over serial and ZMQ (drivers.framing). Host side: ``MotionPlatform``;
device side (the emulator): ``MotionPlatformDevice`` and the codec functions
``encode_command`` / ``decode_command`` / ``encode_status`` / ``decode_status``. Decoders
return None for input they refuse (wrong type, wrong payload length, non-finite numbers,
unknown enum values) and never raise. Byte layouts: docs/protocols.md.
"""
from __future__ import annotations

import math
import struct
import time
from enum import IntEnum
from typing import NamedTuple

import numpy as np

from drivers.framing import (CRC, BODY_HEADER, HEADER_SIZE, OK, SYNC, VERSION, FrameType,
                             check_frame, crc32)
from drivers.hardware import PlatformInterface
from drivers.transport import Transport, TransportConfigError, make_transport

__all__ = ["Command", "PlatformState", "Mode", "FaultCode", "PlatformCommand", "PlatformStatus",
           "encode_command", "decode_command", "encode_status", "decode_status", "MotionPlatform",
           "MotionPlatformDevice", "STATUS_TYPE"]


class Command(IntEnum):
    ENGAGE = FrameType.ENGAGE             # IDLE -> ENGAGED (servos on, hold the present pose)
    PARK = FrameType.PARK                 # ENGAGED/FROZEN -> IDLE (move to the park pose, servos off)
    POSE = FrameType.POSE                 # DOF mode set-point: p (m) and q = [w x y z]
    LENGTHS = FrameType.LENGTHS           # length mode set-point: 6 actuator lengths (m)
    FREEZE = FrameType.FREEZE             # ENGAGED -> FROZEN (hold, ignore set-points)
    E_STOP = FrameType.E_STOP             # any -> E_STOPPED (brakes; needs RESET_FAULT)
    RESET_FAULT = FrameType.RESET_FAULT   # FAULT/E_STOPPED -> IDLE
    HEARTBEAT = FrameType.HEARTBEAT       # keeps the device's command watchdog fed


STATUS_TYPE = FrameType.STATUS


class PlatformState(IntEnum):
    IDLE = 0
    ENGAGED = 1
    FROZEN = 2
    FAULT = 3
    E_STOPPED = 4


class Mode(IntEnum):
    NONE = 0      # no set-point applied yet
    POSE = 1      # DOF mode
    LENGTHS = 2   # actuator-length mode


class FaultCode(IntEnum):
    """Device fault codes (u16). A device may report codes not listed; they decode as int."""
    NONE = 0
    WATCHDOG = 1            # no command or heartbeat within the device's timeout
    POSE_LIMIT = 2          # set-point outside the workspace
    LENGTH_LIMIT = 3        # actuator stroke limit
    FOLLOWING_ERROR = 4     # servo cannot track
    VELOCITY_LIMIT = 5
    DRIVE_FAULT = 6
    BAD_COMMAND = 7         # command not allowed in the present state / invalid values
    E_STOP_INPUT = 8        # hardware E-stop chain opened
    # an industrial robot's adapter (drivers.robot_platform; docs/platforms.md)
    ROBOT_CYCLE_MISSED = 9  # a run of the robot's cycles passed without an exchange (the controller trips
                            # ROBOT_CYCLE_MISSED before the robot's own late-packet limit stops it)
    ROBOT_STOPPED = 10      # the robot's external-motion interface reports it stopped (RSI off, EGM not running)
    CORRECTION_LIMIT = 11   # the set-point needs a correction beyond the robot's configured limits


_POSE = struct.Struct("<7d")
_LENGTHS = struct.Struct("<6d")
_STATUS = struct.Struct("<BBHI7d6dI")     # state, mode, fault, last_cmd_seq, pose, lengths, inputs (116 B)
_FRAME_HEAD = struct.Struct("<2sBBBBIQ")
_HEAD_FIELDS = struct.Struct("<IQ")
_PAYLOAD_LEN = {Command.POSE: _POSE.size, Command.LENGTHS: _LENGTHS.size}
_COMMANDS = {int(c): c for c in Command}
_STATES = {int(s): s for s in PlatformState}
_MODES = {int(m): m for m in Mode}
_FAULTS = {int(f): f for f in FaultCode}
_isfinite = math.isfinite


class PlatformCommand(NamedTuple):
    command: Command
    seq: int
    host_time_ns: int
    values: tuple | None      # POSE: (x, y, z, qw, qx, qy, qz); LENGTHS: 6 lengths; else None


class PlatformStatus(NamedTuple):
    seq: int
    device_time: float        # s (device clock)
    state: PlatformState
    mode: Mode
    fault: int                # FaultCode when known
    last_cmd_seq: int         # seq of the last command the device applied
    pose: np.ndarray          # [x y z qw qx qy qz]: platform top in its base frame, m
    lengths: np.ndarray       # 6 measured actuator lengths, m
    host_time: float = 0.0    # s, time.monotonic() when received (0 when decoded by the codec)
    inputs: int = 0           # the controller's digital inputs, bit k = input k (the stand wires
                              # the docking mechanism's status signals to them: [platform.inputs])


def _frame(ftype: int, seq: int, time_ns: int, payload_struct=None, values=()) -> bytes:
    n = payload_struct.size if payload_struct is not None else 0
    body_len = BODY_HEADER + n
    head = _FRAME_HEAD.pack(SYNC, body_len, body_len ^ 0xFF, ftype, VERSION, seq & 0xFFFFFFFF,
                            time_ns & 0xFFFFFFFFFFFFFFFF)
    if n:
        head += payload_struct.pack(*values)
    return head + CRC.pack(crc32(memoryview(head)[2:]))


def encode_command(command: Command | int, seq: int, host_time_ns: int, values=None) -> bytes:
    """A command frame. POSE needs 7 values (x y z qw qx qy qz), LENGTHS 6, others none."""
    command = Command(command)
    if command == Command.POSE:
        if values is None or len(values) != 7:
            raise ValueError("POSE needs 7 values: x y z (m) qw qx qy qz")
        return _frame(command, seq, host_time_ns, _POSE, values)
    if command == Command.LENGTHS:
        if values is None or len(values) != 6:
            raise ValueError("LENGTHS needs 6 actuator lengths (m)")
        return _frame(command, seq, host_time_ns, _LENGTHS, values)
    if values is not None:
        raise ValueError(f"{command.name} carries no values")
    return _frame(command, seq, host_time_ns)


def decode_command(frame, checked: bool = False) -> PlatformCommand | None:
    """Device side: a command frame -> PlatformCommand, None if not a valid command."""
    if not checked and check_frame(frame) != OK:
        return None
    if len(frame) < HEADER_SIZE + 4:
        return None
    cmd = _COMMANDS.get(frame[4])
    if cmd is None:
        return None
    payload = len(frame) - HEADER_SIZE - 4
    if payload != _PAYLOAD_LEN.get(cmd, 0):
        return None
    seq, t_ns = _HEAD_FIELDS.unpack_from(frame, 6)
    values = None
    if payload:
        st = _POSE if cmd == Command.POSE else _LENGTHS
        values = st.unpack_from(frame, HEADER_SIZE)
        for v in values:
            if not _isfinite(v):
                return None
    return PlatformCommand(cmd, seq, t_ns, values)


def encode_status(seq: int, device_time_ns: int, state: PlatformState | int, fault: int,
                  last_cmd_seq: int, pose, lengths, mode: Mode | int = Mode.NONE, inputs: int = 0) -> bytes:
    """Device side: a STATUS frame (``inputs``: the digital-input word, u32)."""
    if len(pose) != 7 or len(lengths) != 6:
        raise ValueError("pose needs 7 values, lengths 6")
    return _frame(STATUS_TYPE, seq, device_time_ns, _STATUS,
                  (int(state), int(mode), int(fault) & 0xFFFF, last_cmd_seq & 0xFFFFFFFF,
                   *pose, *lengths, int(inputs) & 0xFFFFFFFF))


def decode_status(frame, checked: bool = False, host_time: float = 0.0) -> PlatformStatus | None:
    """Host side: a STATUS frame -> PlatformStatus, None if not a valid one."""
    if not checked and check_frame(frame) != OK:
        return None
    if len(frame) != HEADER_SIZE + _STATUS.size + 4 or frame[4] != STATUS_TYPE:
        return None
    seq, t_ns = _HEAD_FIELDS.unpack_from(frame, 6)
    v = _STATUS.unpack_from(frame, HEADER_SIZE)
    state = _STATES.get(v[0])
    mode = _MODES.get(v[1])
    if state is None or mode is None:
        return None
    for x in v[4:17]:
        if not _isfinite(x):            # a NaN measured pose never reaches the controller
            return None
    arr = np.array(v[4:17], dtype=np.float64)
    return PlatformStatus(seq, t_ns * 1e-9, state, mode, _FAULTS.get(v[2], v[2]), v[3], arr[:7],
                          arr[7:], host_time, v[17])


# ----------------------------------------------------------------------------- host driver

class MotionPlatform(PlatformInterface):
    """The motion platform as the controller sees it.

    Every command method sends one frame (never blocks) and returns its seq, or -1 if the
    transport could not take it. ``poll()`` reads STATUS frames, updates ``latest_status``
    and sends a HEARTBEAT when nothing was sent for ``heartbeat_s``.
    """

    def __init__(self, transport: Transport, *, heartbeat_s: float = 0.05,
                 status_timeout_s: float = 0.1) -> None:
        if transport.framing != "frame":
            raise TransportConfigError("framing", "the motion-platform protocol needs framing = 'frame' (every "
                                                  "message a whole, CRC-checked dockstand frame)")
        self.transport = transport
        self.fast_read = transport.poll_messages     # the wire is the canonical frames (drivers.hardware)
        self.fast_write = self.send_encoded
        self.heartbeat_s = heartbeat_s
        self.status_timeout_s = status_timeout_s
        self.seq = 0
        self.latest_status: PlatformStatus | None = None
        self.statuses_rx = 0
        self._last_send = 0.0

    @classmethod
    def from_config(cls, cfg: dict) -> "MotionPlatform":
        """From a stand-config table: ``transport`` (kind), its options, ``heartbeat_s``,
        ``status_timeout_s``. Not yet opened."""
        cfg = dict(cfg)
        kind = cfg.pop("transport", "serial")
        opts = {k: cfg.pop(k) for k in ("heartbeat_s", "status_timeout_s") if k in cfg}
        return cls(make_transport(kind, **cfg), **opts)

    @property
    def status_age(self) -> float:
        """Seconds since the last STATUS arrived (inf if none yet)."""
        s = self.latest_status
        return math.inf if s is None else time.monotonic() - s.host_time

    @property
    def status_fresh(self) -> bool:
        return self.status_age <= self.status_timeout_s

    def _send(self, command: Command, values=None, host_time: float | None = None) -> int:
        now = time.monotonic()
        t = now if host_time is None else host_time
        seq = self.seq
        frame = encode_command(command, seq, int(t * 1e9), values)
        if not self.transport.send(frame):
            return -1
        self.seq = (seq + 1) & 0xFFFFFFFF
        self._last_send = now
        return seq

    def send_encoded(self, frame) -> int:
        """Send a command frame encoded elsewhere (the controller's compiled encoder,
        rt.stand.wire_kernels) that carries this driver's next seq, ``self.seq``; returns that seq, or
        -1 if the transport could not take it (the seq is then not used up, as in the other
        command methods)."""
        if not self.transport.send(frame):
            return -1
        seq = self.seq
        self.seq = (seq + 1) & 0xFFFFFFFF
        self._last_send = time.monotonic()
        return seq

    # -- the hardware interface (drivers.hardware): the wire is the canonical frames
    protocol = "dockstand"

    def read(self) -> bytes:
        """The STATUS frames received since the last call, as received (the controller's compiled
        scan checks and decodes them). Real-time."""
        return self.transport.poll_messages()

    def write(self, frame) -> None:
        """One command frame encoded by the controller's compiled encoder with :attr:`seq`.
        Real-time."""
        self.send_encoded(frame)

    def engage(self) -> int:
        return self._send(Command.ENGAGE)

    def park(self) -> int:
        return self._send(Command.PARK)

    def freeze(self) -> int:
        return self._send(Command.FREEZE)

    def e_stop(self) -> int:
        return self._send(Command.E_STOP)

    def reset_fault(self) -> int:
        return self._send(Command.RESET_FAULT)

    def heartbeat(self) -> int:
        return self._send(Command.HEARTBEAT)

    def pose(self, p, q, host_time: float | None = None) -> int:
        """DOF set-point: p = [x y z] (m), q = [w x y z] of the platform top in its base frame."""
        return self._send(Command.POSE, (p[0], p[1], p[2], q[0], q[1], q[2], q[3]), host_time)

    def lengths(self, lengths, host_time: float | None = None) -> int:
        return self._send(Command.LENGTHS, tuple(lengths), host_time)

    def poll(self) -> list[PlatformStatus]:
        frames = self.transport.poll()
        now = time.monotonic()
        out = []
        for f in frames:
            s = decode_status(f, checked=True, host_time=now)
            if s is None:
                self.transport.counters.malformed += 1
                continue
            out.append(s)
        if out:
            self.statuses_rx += len(out)
            self.latest_status = out[-1]
        if self.heartbeat_s and now - self._last_send >= self.heartbeat_s and self.transport.is_open:
            self._send(Command.HEARTBEAT)
        return out


# ----------------------------------------------------------------------------- device side

class MotionPlatformDevice:
    """Device end (the emulator's platform): ``poll()`` returns the valid commands received,
    ``send_status(...)`` sends one STATUS frame (seq +1 each)."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.seq = 0
        self.commands_rx = 0

    def poll(self) -> list[PlatformCommand]:
        out = []
        for f in self.transport.poll():
            c = decode_command(f, checked=True)
            if c is None:
                self.transport.counters.malformed += 1
                continue
            out.append(c)
        self.commands_rx += len(out)
        return out

    def encode_next_status(self, state, fault, last_cmd_seq, pose, lengths, mode=Mode.NONE,
                           device_time: float | None = None, inputs: int = 0) -> bytes:
        t_ns = time.monotonic_ns() if device_time is None else int(round(device_time * 1e9))
        frame = encode_status(self.seq, t_ns, state, fault, last_cmd_seq, pose, lengths, mode, inputs)
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        return frame

    def send_status(self, state, fault, last_cmd_seq, pose, lengths, mode=Mode.NONE,
                    device_time: float | None = None, inputs: int = 0) -> bool:
        return self.transport.send(self.encode_next_status(state, fault, last_cmd_seq, pose, lengths,
                                                           mode, device_time, inputs))


class DockstandPlatform(MotionPlatform):
    """The stand's own platform protocol (docs/protocols.md) as the registry builds it
    (``[platform] protocol = "dockstand"``, the ``dockstand.platforms`` entry point): configured
    from the stand file's ``[platform.link]``."""

    def __init__(self, transport: Transport | None = None, **kw) -> None:
        if transport is not None:
            super().__init__(transport, **kw)

    def configure(self, link: dict, stand) -> None:
        """The link's transport (``[platform.link]``, validated by drivers.transport). The
        controller sends one frame every cycle itself: no heartbeat of the driver's own."""
        cfg = dict(link)
        super().__init__(make_transport(cfg.pop("transport"), **cfg), heartbeat_s=0.0)
