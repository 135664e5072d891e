"""Transports with one non-blocking interface: serial, zmq, udp, memory.

    t = open_transport("serial", port="/dev/ttyUSB0", baud=2_000_000)
    t.send(frame)              # never blocks; False (and counters.tx_dropped) if it could not
    for frame in t.poll():     # whatever whole frames arrived, never waits
        ...
    t.link_up, t.status, t.counters

The backend is picked by configuration (``kind`` plus options, the stand TOML's
``transport = "serial"``, ``port``, ``baud``, ``endpoint`` ...). Bad options raise
``TransportConfigError`` (a ValueError whose ``key`` names the option); a port or endpoint
that cannot be opened raises ``TransportError`` naming it. After ``open()`` nothing raises:
a peer that vanishes, a port that disappears, a full queue all show in ``link_up``,
``status``, ``last_error`` and the counters.

Framing: with ``framing="frame"`` (default for serial, zmq and memory) every received unit
is a dockstand frame (drivers.framing), CRC-checked and sequence-checked before delivery;
serial, a byte stream, runs a ``StreamDecoder``; zmq and memory carry one frame per
message. With ``framing="raw"`` (default for udp) messages/datagrams are delivered as they
are, for protocols with their own format (ATI RDT).

Delegated checks (``delegate_checks``): a consumer that checks every frame itself (the
controller's compiled scan, rt.stand.wire_kernels) takes the messages unchecked with
``poll_messages()`` -- one bytes object, each message preceded by its length (u16 LE) --
and reports back what it accepted and refused (``accepted``, the error counters). The
transport still does what only it can: cutting a byte stream into CRC-checked frames
(serial), learning a listening UDP socket's peer only from a frame the consumer will accept
(it foresees the verdict: ``SeqTracker.from_state``), and resetting the consumer's sequence
state whenever it would reset its own tracker: on open or reconnect it zeroes the state; a
new ROUTER peer in the middle of a poll is marked in the stream at its place (a length of
``SEQ_RESET_MARK``: the consumer resets there, so the frames before it are judged against
the old peer's sequence, as the transport would have judged them).
"""
from __future__ import annotations

import collections
import errno
import os
import socket
import termios
import threading
import time

from drivers.framing import (BAD_CRC, MAX_FRAME, OK, SEQ_STATE_LEN, Counters, SeqTracker, StreamDecoder,
                             check_frame, frame_seq)

SEQ_RESET_MARK = 0xFFFF   # poll_messages: a "length" that marks a sequence reset at its place

__all__ = ["Transport", "SerialTransport", "ZmqTransport", "UdpTransport", "MemoryTransport",
           "TransportError", "TransportConfigError", "open_transport", "make_transport",
           "validate_options", "memory_pair", "KINDS"]


class TransportConfigError(ValueError):
    """A bad transport option. ``key`` is the option's name; str() is ``"key: reason"``."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


class TransportError(OSError):
    """A port or endpoint that cannot be opened; the message names it."""


# ----------------------------------------------------------------------------- options

_COMMON = {
    "link_timeout_s": 0.25,   # link is up while a frame arrived within this time
    "framing": None,          # "frame" | "raw"; None = the kind's default
    "seq_check": None,        # drop duplicates / frames from the past; None = framing == "frame"
}
_KIND_OPTIONS = {
    "serial": {"port": None, "baud": 921600, "reopen_interval_s": 0.5, "max_tx_buffer": 65536,
               "read_chunk": 65536},
    "zmq": {"endpoint": None, "role": "connect", "pattern": "pair", "hwm": 100,
            "heartbeat_ms": 100, "peer_timeout_s": 0.5, "hello_s": 0.1},
    "udp": {"host": None, "port": None, "local_port": None, "local_host": "",
            "max_datagram": 8192, "rcvbuf": 1 << 20},
    "memory": {"name": None, "capacity": 1024},
}
_REQUIRED = {"serial": ("port",), "zmq": ("endpoint",), "udp": (), "memory": ("name",)}
_DEFAULT_FRAMING = {"serial": "frame", "zmq": "frame", "udp": "raw", "memory": "frame"}
KINDS = tuple(_KIND_OPTIONS)


def _num(key, value, *, integer=False, lo=None, hi=None, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float) if not integer else int):
        raise TransportConfigError(key, f"must be {'an integer' if integer else 'a number'}, got {value!r}")
    if lo is not None and value < lo:
        raise TransportConfigError(key, f"must be >= {lo}, got {value!r}")
    if hi is not None and value > hi:
        raise TransportConfigError(key, f"must be <= {hi}, got {value!r}")
    return value


def _str(key, value, choices=None):
    if not isinstance(value, str) or not value:
        raise TransportConfigError(key, f"must be a non-empty string, got {value!r}")
    if choices and value not in choices:
        raise TransportConfigError(key, f"must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def validate_options(kind: str, options: dict) -> dict:
    """Check a transport's options; return them complete with defaults.

    Raises TransportConfigError (ValueError) naming the key for an unknown kind
    (key ``transport``), an unknown option, a missing one or a bad value.
    """
    if kind not in _KIND_OPTIONS:
        raise TransportConfigError("transport", f"unknown transport kind {kind!r}; known: {', '.join(KINDS)}")
    known = {**_COMMON, **_KIND_OPTIONS[kind]}
    for key in options:
        if key not in known:
            raise TransportConfigError(key, f"unknown option for transport {kind!r}; known: {', '.join(sorted(known))}")
    o = {**known, **options}
    for key in _REQUIRED[kind]:
        if o[key] is None:
            raise TransportConfigError(key, f"required for transport {kind!r}")
    o["link_timeout_s"] = _num("link_timeout_s", o["link_timeout_s"], lo=1e-4)
    o["framing"] = _str("framing", o["framing"] or _DEFAULT_FRAMING[kind], ("frame", "raw"))
    if o["seq_check"] is None:
        o["seq_check"] = o["framing"] == "frame"
    elif not isinstance(o["seq_check"], bool):
        raise TransportConfigError("seq_check", f"must be true or false, got {o['seq_check']!r}")
    if o["seq_check"] and o["framing"] != "frame":
        raise TransportConfigError("seq_check", "needs framing = 'frame'")
    if kind == "serial":
        _str("port", o["port"])
        _num("baud", o["baud"], integer=True, lo=50, hi=50_000_000)
        _num("reopen_interval_s", o["reopen_interval_s"], lo=0.0)
        _num("max_tx_buffer", o["max_tx_buffer"], integer=True, lo=512)
        _num("read_chunk", o["read_chunk"], integer=True, lo=64)
        if o["framing"] != "frame":
            raise TransportConfigError("framing", "a serial line carries dockstand frames: must be 'frame'")
    elif kind == "zmq":
        ep = _str("endpoint", o["endpoint"])
        if not ep.startswith(("tcp://", "ipc://", "inproc://")) or ep.endswith("://"):
            raise TransportConfigError("endpoint", f"must be tcp://HOST:PORT, ipc://PATH or inproc://NAME, got {ep!r}")
        _str("role", o["role"], ("bind", "connect"))
        _str("pattern", o["pattern"], ("pair", "dealer", "router"))
        _num("hwm", o["hwm"], integer=True, lo=1)
        _num("heartbeat_ms", o["heartbeat_ms"], integer=True, lo=0, hi=60_000)
        _num("peer_timeout_s", o["peer_timeout_s"], lo=0.0)
        _num("hello_s", o["hello_s"], lo=0.0)
    elif kind == "udp":
        if (o["host"] is None) != (o["port"] is None):
            raise TransportConfigError("port" if o["port"] is None else "host", "host and port go together")
        if o["host"] is None and o["local_port"] is None:
            raise TransportConfigError("host", "required (or local_port, for a device that answers its senders)")
        if o["host"] is not None:
            _str("host", o["host"])
            _num("port", o["port"], integer=True, lo=1, hi=65535)
        _num("local_port", o["local_port"], integer=True, lo=0, hi=65535, allow_none=True)
        if not isinstance(o["local_host"], str):
            raise TransportConfigError("local_host", f"must be a string, got {o['local_host']!r}")
        _num("max_datagram", o["max_datagram"], integer=True, lo=1, hi=65507)
        _num("rcvbuf", o["rcvbuf"], integer=True, lo=0)
    elif kind == "memory":
        _str("name", o["name"])
        _num("capacity", o["capacity"], integer=True, lo=1)
    return o


def make_transport(kind: str, **options) -> "Transport":
    """A transport built from validated options, not yet opened."""
    o = validate_options(kind, options)
    return _CLASSES[kind](o)


def open_transport(kind: str, **options) -> "Transport":
    """A transport built from validated options and opened (TransportError names the port/endpoint)."""
    t = make_transport(kind, **options)
    t.open()
    return t


# ----------------------------------------------------------------------------- base

class Transport:
    """Common part: counters, framing checks, sequence checks, link state."""

    kind = "?"

    def __init__(self, o: dict) -> None:
        self.options = o
        self.counters = Counters()
        self.framing = o["framing"]
        self.link_timeout_s = float(o["link_timeout_s"])
        self.seq_check = bool(o["seq_check"])
        self.tracker = SeqTracker(self.counters) if self.seq_check else None
        self._seq_state = None   # delegate_checks: the consumer's sequence state (SEQ_STATE_LEN)
        self.last_error: str | None = None
        self._open = False
        self._peer_ok = False   # the backend's own view of the peer (port open, connected ...)

    # -- API
    def open(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def send(self, frame: bytes) -> bool:
        raise NotImplementedError

    def poll(self) -> list[bytes]:
        raise NotImplementedError

    def delegate_checks(self, seq_state) -> None:
        """From now on the consumer checks the frames (CRC, version, sequence) and keeps the
        counters of what it refuses: ``poll`` and ``poll_messages`` deliver every message
        unchecked, except where the transport must check (a serial stream is cut into
        CRC-checked frames; a listening UDP socket learns its peer from valid frames only),
        and never check sequences. ``seq_state`` (float64, SEQ_STATE_LEN) is the consumer's
        sequence-tracker state: the transport zeroes it whenever it would reset its own
        tracker. Only for ``framing="frame"``."""
        if self.framing != "frame":
            raise TransportConfigError("framing", f"checks can only be delegated with framing 'frame', "
                                                  f"not {self.framing!r}")
        if len(seq_state) != SEQ_STATE_LEN:
            raise ValueError(f"seq_state must have {SEQ_STATE_LEN} slots, not {len(seq_state)}")
        self._seq_state = seq_state
        self.tracker = None
        self._reset_seq()

    def accepted(self, n: int, now: float) -> None:
        """Delegated checks: the consumer accepted ``n`` > 0 frames (at time.monotonic ``now``):
        frames received, and the peer is there."""
        c = self.counters
        c.frames_rx += n
        c.last_rx_time = now
        if not self._peer_ok:
            self._valid_frames_seen()

    def _valid_frames_seen(self) -> None:
        """Valid frames arrived (what a backend concludes about its peer from them)."""

    def poll_messages(self) -> bytes:
        """``poll()``'s messages as one bytes object, each preceded by its length (u16 LE);
        b"" if none. With delegated checks a message longer than any frame is counted as
        malformed here (its length would not fit the prefix of a frame)."""
        out = self.poll()
        return self._join_messages(out) if out else b""

    def _join_messages(self, msgs) -> bytes:
        if len(msgs) == 1:                  # the usual cycle: one frame, nothing to join
            m = msgs[0]
            if m is not _SEQ_RESET and len(m) <= MAX_FRAME:
                return _PREFIX[len(m)] + m
        parts = []
        for m in msgs:
            if m is _SEQ_RESET:
                parts.append(_RESET_PREFIX)
                continue
            n = len(m)
            if n > MAX_FRAME:
                self.counters.malformed += 1
                continue
            parts.append(_PREFIX[n])
            parts.append(m)
        return b"".join(parts)

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def link_up(self) -> bool:
        t = self.counters.last_rx_time
        return (self._open and self._peer_ok and t is not None
                and time.monotonic() - t <= self.link_timeout_s)

    @property
    def status(self) -> str:
        if not self._open:
            return "closed"
        if not self._peer_ok:
            return f"down: {self.last_error or 'no peer'}"
        t = self.counters.last_rx_time
        if t is None:
            return "waiting for first frame"
        age = time.monotonic() - t
        return "up" if age <= self.link_timeout_s else f"stale: nothing received for {age:.3f} s"

    def describe(self) -> str:
        return self.kind

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()} {self.status}>"

    # -- helpers for subclasses
    def _reset_seq(self) -> None:
        if self.tracker is not None:
            self.tracker.reset()
        st = self._seq_state
        if st is not None:
            for i in range(SEQ_STATE_LEN):
                st[i] = 0

    def _delivered(self, n: int, now: float) -> None:
        """``n`` messages delivered: counted as received frames unless the consumer checks
        them (it reports what it accepted: :meth:`accepted`)."""
        if self._seq_state is None:
            c = self.counters
            c.frames_rx += n
            c.last_rx_time = now

    def _deliver_checked(self, frames: list, now: float) -> list:
        """Frames already CRC-checked (stream decoder): sequence check, counters."""
        tr = self.tracker
        if tr is not None:
            frames = [f for f in frames if tr.accept(frame_seq(f))]
        if frames:
            self._delivered(len(frames), now)
        return frames

    def _check_message(self, msg) -> bool:
        """One message that should be one whole frame: CRC / sequence check, counters
        (nothing with delegated checks)."""
        if self.framing == "frame" and self._seq_state is None:
            r = check_frame(msg)
            if r != OK:
                if r == BAD_CRC:
                    self.counters.crc_errors += 1
                else:
                    self.counters.malformed += 1
                return False
            if self.tracker is not None and not self.tracker.accept(frame_seq(msg)):
                return False
        return True


# ----------------------------------------------------------------------------- serial

class SerialTransport(Transport):
    """pyserial port, raw mode, non-blocking; reads/writes go straight to the fd (POSIX)."""

    kind = "serial"

    def __init__(self, o: dict) -> None:
        super().__init__(o)
        self.port = o["port"]
        self.baud = o["baud"]
        self.decoder = StreamDecoder(self.counters, max_feed=max(4 * o["read_chunk"], 4096))
        self._ser = None
        self._fd = None
        self._tx = bytearray()
        self._next_reopen = 0.0

    def describe(self) -> str:
        return f"serial {self.port} @ {self.baud}"

    def _open_port(self) -> None:
        import serial  # pyserial
        try:
            ser = serial.Serial(port=self.port, baudrate=self.baud, timeout=0, write_timeout=0)
        except (serial.SerialException, OSError, ValueError) as e:
            raise TransportError(f"serial port {self.port!r}: cannot open: {e}") from e
        self._ser = ser
        fd = getattr(ser, "fd", None)
        self._fd = fd if isinstance(fd, int) else None
        if self._fd is not None:
            # VMIN=1, VTIME=0 with O_NONBLOCK: "no data" is EAGAIN and a 0-byte read means
            # hang-up (pyserial's VMIN=0 would make both look alike).
            try:
                attrs = termios.tcgetattr(self._fd)
                attrs[6][termios.VMIN] = 1
                attrs[6][termios.VTIME] = 0
                termios.tcsetattr(self._fd, termios.TCSANOW, attrs)
            except (AttributeError, OSError, termios.error):
                self._fd = None           # not a tty we can tune: use pyserial's read
        self._tx.clear()
        self.decoder.reset()
        self._reset_seq()
        self._peer_ok = True
        self.last_error = None

    def open(self) -> None:
        if self._open:
            return
        self._open_port()
        self._open = True

    def close(self) -> None:
        self._drop_port()
        self._open = False
        self._peer_ok = False

    def _drop_port(self) -> None:
        ser, self._ser, self._fd = self._ser, None, None
        if ser is not None:
            try:
                ser.close()
            except Exception:  # noqa: BLE001 - closing a dead port must not raise
                pass

    def _lost(self, err) -> None:
        self.last_error = f"serial port {self.port!r}: {err}"
        self.counters.link_errors += 1
        self._peer_ok = False
        self._drop_port()
        self._next_reopen = time.monotonic() + self.options["reopen_interval_s"]

    def _try_reopen(self) -> None:
        now = time.monotonic()
        if now < self._next_reopen:
            return
        self._next_reopen = now + self.options["reopen_interval_s"]
        try:
            self._open_port()
        except TransportError as e:
            self.last_error = str(e)

    def _read(self) -> bytes:
        chunk = self.options["read_chunk"]
        fd = self._fd
        if fd is None:
            n = self._ser.in_waiting
            return self._ser.read(min(n, chunk)) if n else b""
        parts = []
        total = 0
        while total < 4 * chunk:
            try:
                b = os.read(fd, chunk)
            except BlockingIOError:
                break
            if not b:           # hang-up (the other end of a PTY closed)
                if parts:
                    break
                raise OSError(errno.EIO, "hang-up: the other end closed")
            parts.append(b)
            total += len(b)
            if len(b) < chunk:
                break
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def poll(self) -> list[bytes]:
        if not self._open:
            return []
        if self._ser is None:
            self._try_reopen()
            if self._ser is None:
                return []
        try:
            if self._tx:
                self._flush()
            data = self._read()
        except Exception as e:  # noqa: BLE001 - OSError, SerialException: the link is gone
            self._lost(e)
            return []
        if not data:
            return []
        self.counters.bytes_rx += len(data)
        frames = self.decoder.feed(data)
        if not frames:
            return frames
        return self._deliver_checked(frames, time.monotonic())

    def _flush(self) -> None:
        tx = self._tx
        if self._fd is not None:
            try:
                n = os.write(self._fd, tx)
            except BlockingIOError:
                n = 0
        else:
            n = self._ser.write(bytes(tx)) or 0
        if n:
            del tx[:n]
            self.counters.bytes_tx += n

    def send(self, frame: bytes) -> bool:
        c = self.counters
        if self._ser is None:
            c.tx_dropped += 1
            return False
        try:
            if not self._tx and self._fd is not None:
                try:
                    n = os.write(self._fd, frame)
                except BlockingIOError:
                    n = 0
                c.bytes_tx += n
                if n < len(frame):
                    self._tx += memoryview(frame)[n:]
            else:
                if len(self._tx) + len(frame) > self.options["max_tx_buffer"]:
                    self._flush()
                    if len(self._tx) + len(frame) > self.options["max_tx_buffer"]:
                        c.tx_dropped += 1     # never a partial frame: drop the whole new one
                        return False
                self._tx += frame
                self._flush()
        except Exception as e:  # noqa: BLE001
            self._lost(e)
            c.tx_dropped += 1
            return False
        c.frames_tx += 1
        c.last_tx_time = time.monotonic()
        return True

    @property
    def tx_pending(self) -> int:
        return len(self._tx)


# ----------------------------------------------------------------------------- zmq

# A ROUTER's answer to a peer it does not serve (ZmqTransport): this prefix, then a UTF-8 text.
# No dockstand frame starts with a zero byte followed by these letters.
BUSY = b"\x00DOCKSTAND-BUSY "


class ZmqTransport(Transport):
    """pyzmq socket, one frame per message. PAIR, or DEALER/ROUTER. Connection state comes
    from a socket monitor; ZMTP heartbeats make a silently dead TCP peer disconnect. A
    connecting socket uses ZMQ_IMMEDIATE, so commands are never queued for a peer that is not
    there (and delivered late).

    **One peer per link** (DEALER/ROUTER, the shipped stand's pattern; docs/protocols.md): a
    ROUTER serves the first peer that speaks and keeps it while it speaks at least every
    ``peer_timeout_s``; another peer's messages are dropped, counted (``peers_refused``),
    named (``refused_peer``, its address) and answered with a BUSY notice, which the other
    DEALER counts (``refused_by_device``) and shows as its link's error. A served peer silent
    for ``peer_timeout_s`` is released (a restarted controller or device takes over);
    ``peer_timeout_s = 0``: answer whoever spoke last. A DEALER says an empty hello every
    ``hello_s`` when it has sent nothing else, so a device it only listens to (a sensor)
    learns it and keeps serving it. Why not PAIR: a PAIR refuses a second peer by cutting its
    connection off from the socket, and such a connection was one of the ways into the abort
    below; a ROUTER accepts any number of connections and leaves the choice to us.

    **Never the libzmq abort** ``Assertion failed: !_io_error (src/stream_engine_base.cpp:310)``
    (libzmq 4.3.5, docs/emulator.md "Start-up on busy ports"). A connection's engine marks
    ``_io_error`` only when its input is stopped -- the socket took no more messages from it: the
    receive pipe was full (RCVHWM), or the socket refused the connection (PAIR's second peer) --
    and the peer then resets; it asserts when it is asked to write after that: by its own ZMTP
    heartbeat timer, or, when the pipe drains, by a PING it still had to decode. So the
    receive side has no high-water mark (``RCVHWM = 0``: input never stops for a full pipe; we
    read every cycle, so what waits is what a peer sent while we did not read), ``hwm`` bounds
    the send side only, and only a *connecting* socket sends heartbeats (``heartbeat_ms``;
    it is the side that must notice a dead peer to reconnect): its PINGs carry a TTL of
    ``3 * heartbeat_ms``, after which a bound socket drops a silent connection by a timer
    that closes it and never writes.
    """

    kind = "zmq"

    def __init__(self, o: dict) -> None:
        super().__init__(o)
        self.endpoint = o["endpoint"]
        self.role = o["role"]
        self.pattern = o["pattern"]
        self._sock = None
        self._mon = None
        self._peers = 0
        self._ident = None
        self._ident_seen = 0.0
        self.peer_timeout_s = float(o["peer_timeout_s"])
        self.hello_s = float(o["hello_s"])
        self._last_send = 0.0
        self.refused_peer: str | None = None     # ROUTER: the address of the last peer refused
        self.on_refused = None                   # ROUTER: f(text) at a new refused peer (not real-time)
        self._refused_idents: dict = {}

    def describe(self) -> str:
        return f"zmq {self.pattern} {self.role} {self.endpoint}"

    def open(self) -> None:
        if self._open:
            return
        import zmq
        self._zmq = zmq
        ctx = zmq.Context.instance()
        kind = {"pair": zmq.PAIR, "dealer": zmq.DEALER, "router": zmq.ROUTER}[self.pattern]
        sock = ctx.socket(kind)
        o = self.options
        try:
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDHWM, o["hwm"])
            sock.setsockopt(zmq.RCVHWM, 0)          # never a stopped input (class docstring)
            if self.role == "connect":
                sock.setsockopt(zmq.IMMEDIATE, 1)
                sock.setsockopt(zmq.RECONNECT_IVL, 50)
                sock.setsockopt(zmq.RECONNECT_IVL_MAX, 500)
            if self.pattern == "router":
                sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
            if o["heartbeat_ms"] and self.endpoint.startswith("tcp://") and self.role == "connect":
                # heartbeats from the connecting side only; the TTL lets the bound side drop us
                sock.setsockopt(zmq.HEARTBEAT_IVL, o["heartbeat_ms"])
                sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3 * o["heartbeat_ms"])
                sock.setsockopt(zmq.HEARTBEAT_TTL, 3 * o["heartbeat_ms"])
            mon = None
            if not self.endpoint.startswith("inproc://"):
                mon = sock.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_ACCEPTED
                                              | zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECT_RETRIED
                                              | zmq.EVENT_BIND_FAILED | zmq.EVENT_ACCEPT_FAILED)
            if self.role == "bind":
                sock.bind(self.endpoint)
            else:
                sock.connect(self.endpoint)
        except zmq.ZMQError as e:
            self._close_socks(sock, locals().get("mon"))
            raise TransportError(f"zmq endpoint {self.endpoint!r} ({self.role}): {e}") from e
        self._sock, self._mon = sock, mon
        self._peers = 0
        self._ident = None
        self._refused_idents = {}
        self._peer_ok = mon is None
        self.last_error = None if mon is None else "no peer connected yet"
        self._reset_seq()
        self._open = True

    def _close_socks(self, sock, mon) -> None:
        try:
            if mon is not None:
                sock.disable_monitor()
                mon.close(0)
        except Exception:  # noqa: BLE001
            pass
        try:
            sock.close(0)
        except Exception:  # noqa: BLE001
            pass

    def close(self) -> None:
        if self._sock is not None:
            self._close_socks(self._sock, self._mon)
        self._sock = self._mon = None
        self._open = False
        self._peer_ok = False

    def _monitor_events(self) -> None:
        zmq = self._zmq
        from zmq.utils.monitor import recv_monitor_message
        mon = self._mon
        while mon.getsockopt(zmq.EVENTS) & zmq.POLLIN:
            try:
                ev = recv_monitor_message(mon, zmq.NOBLOCK)
            except zmq.ZMQError:
                break
            e = ev["event"]
            if e in (zmq.EVENT_CONNECTED, zmq.EVENT_ACCEPTED):
                self._peers += 1
                self.last_error = None
            elif e == zmq.EVENT_DISCONNECTED:
                self._peers = max(0, self._peers - 1)
                if not self._peers:
                    self.last_error = f"zmq endpoint {self.endpoint!r}: peer disconnected"
                    self.counters.link_errors += 1
            elif e == zmq.EVENT_CONNECT_RETRIED:
                if not self._peers:
                    self.last_error = f"zmq endpoint {self.endpoint!r}: no peer there (retrying)"
            else:
                self.last_error = f"zmq endpoint {self.endpoint!r}: event {e} value {ev.get('value')}"
            self._peer_ok = self._peers > 0

    def poll(self) -> list[bytes]:
        sock = self._sock
        if sock is None:
            return []
        zmq = self._zmq
        if self._mon is not None and self._mon.getsockopt(zmq.EVENTS) & zmq.POLLIN:
            self._monitor_events()
        out = []
        c = self.counters
        router = self.pattern == "router"
        dealer = self.pattern == "dealer"
        try:
            while sock.getsockopt(zmq.EVENTS) & zmq.POLLIN:
                if router:
                    parts = sock.recv_multipart(zmq.NOBLOCK, copy=False)
                    if len(parts) != 2:
                        c.malformed += 1
                        continue
                    ident, msg = parts[0].bytes, parts[1]
                    if ident != self._ident and not self._take_peer(ident, msg, sock, out):
                        continue
                    self._ident_seen = time.monotonic()
                    msg = msg.bytes
                    if not msg:                     # a DEALER's hello
                        continue
                else:
                    msg = sock.recv(zmq.NOBLOCK)
                    if dealer and (not msg or msg.startswith(BUSY)):
                        if msg:
                            self._device_busy(msg)
                        continue
                c.bytes_rx += len(msg)
                if self._check_message(msg):
                    out.append(msg)
                if len(out) >= 10000:
                    break
            if dealer and self.hello_s and time.monotonic() - self._last_send > self.hello_s:
                self.hello()
        except zmq.ZMQError as e:
            if e.errno != zmq.EAGAIN:
                self.last_error = f"zmq endpoint {self.endpoint!r}: {e}"
                c.link_errors += 1
        if out and self._seq_state is None:
            self._delivered(len(out), time.monotonic())
            self._valid_frames_seen()
        return out

    def hello(self) -> bool:
        """DEALER: tell the device we are here (an empty message; a ROUTER device learns and keeps
        its peer from it). False when it could not be sent (no connection yet)."""
        if self._sock is None or self.pattern != "dealer":
            return False
        try:
            self._sock.send(b"", self._zmq.NOBLOCK)
        except self._zmq.ZMQError:
            return False
        self._last_send = time.monotonic()
        return True

    def _take_peer(self, ident: bytes, msg, sock, out: list) -> bool:
        """ROUTER: a message from a peer other than the one served. Taken (it becomes the
        served peer) when none is served, the served one has been silent for
        ``peer_timeout_s``, or ``peer_timeout_s`` is 0; else refused: counted, named, answered."""
        now = time.monotonic()
        timeout = self.peer_timeout_s
        if self._ident is None or not timeout or now - self._ident_seen > timeout:
            self._ident = ident
            self._ident_seen = now
            if self._seq_state is not None:
                out.append(_SEQ_RESET)      # the consumer resets at this place
            else:
                self._reset_seq()
            return True
        c = self.counters
        c.peers_refused += 1
        try:
            addr = msg.get("Peer-Address") or "a local peer"
        except Exception:  # noqa: BLE001 - the property is transport-dependent
            addr = "a peer"
        last = self._refused_idents.get(ident)
        if last is None or now - last > 1.0:    # answer (and report) each intruder once a second
            self._refused_idents[ident] = now
            if len(self._refused_idents) > 64:
                self._refused_idents = {ident: now}
            text = (f"{self.endpoint} serves another peer; refused {addr} "
                    f"({c.peers_refused} message(s) refused so far)")
            self.refused_peer = addr
            try:
                sock.send_multipart((ident, BUSY + text.encode()), self._zmq.NOBLOCK)
            except self._zmq.ZMQError:
                pass
            if self.on_refused is not None and last is None:
                self.on_refused(text)
        return False

    def _device_busy(self, msg: bytes) -> None:
        """DEALER: the device refused us (it serves another peer): counted, shown as the link's
        error, the link is down for us."""
        self.counters.refused_by_device += 1
        self.last_error = f"device busy: {msg[len(BUSY):].decode(errors='replace')}"
        self._peer_ok = False

    def _valid_frames_seen(self) -> None:
        if self._mon is None or self._peers:
            self._peer_ok = True

    def send(self, frame: bytes) -> bool:
        sock = self._sock
        c = self.counters
        if sock is None:
            c.tx_dropped += 1
            return False
        zmq = self._zmq
        try:
            if self.pattern == "router":
                if self._ident is None:
                    c.tx_dropped += 1
                    return False
                sock.send_multipart((self._ident, frame), zmq.NOBLOCK)
            else:
                sock.send(frame, zmq.NOBLOCK, copy=False if len(frame) > 1024 else True)
                self._last_send = time.monotonic()
        except zmq.ZMQError as e:
            c.tx_dropped += 1
            if e.errno != zmq.EAGAIN:
                self.last_error = f"zmq endpoint {self.endpoint!r}: send: {e}"
            return False
        c.frames_tx += 1
        c.bytes_tx += len(frame)
        c.last_tx_time = time.monotonic()
        return True


# ----------------------------------------------------------------------------- udp

class UdpTransport(Transport):
    """Non-blocking UDP socket, one datagram per message. With host/port the socket is
    connected (only that peer is heard; an ICMP port-unreachable shows as link down). With
    only local_port it is a device: it answers whoever sent the last datagram (``peer``)."""

    kind = "udp"

    def __init__(self, o: dict) -> None:
        super().__init__(o)
        self.host, self.port = o["host"], o["port"]
        self.local_host, self.local_port = o["local_host"], o["local_port"]
        self.max_datagram = o["max_datagram"]
        self._buf = bytearray(self.max_datagram)
        self._sock = None
        self.peer = None
        self.local_address = None

    def describe(self) -> str:
        if self.host is not None:
            return f"udp {self.host}:{self.port}"
        return f"udp listening on {self.local_host or '*'}:{self.local_port}"

    def open(self) -> None:
        if self._open:
            return
        family, addr = socket.AF_INET, None
        if self.host is not None:
            try:
                info = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_DGRAM)
            except (OSError, UnicodeError) as e:
                raise TransportError(f"udp endpoint {self.host}:{self.port}: cannot resolve: {e}") from e
            family, addr = info[0][0], info[0][4]
        sock = socket.socket(family, socket.SOCK_DGRAM)
        try:
            sock.setblocking(False)
            if self.options["rcvbuf"]:
                try:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.options["rcvbuf"])
                except OSError:
                    pass
            if self.local_port is not None:
                try:
                    sock.bind((self.local_host, self.local_port))
                except OSError as e:
                    raise TransportError(f"udp local address {self.local_host or '*'}:{self.local_port}: cannot bind: {e}") from e
            if addr is not None:
                try:
                    sock.connect(addr)
                except OSError as e:
                    raise TransportError(f"udp endpoint {self.host}:{self.port}: {e}") from e
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self.local_address = sock.getsockname()
        self.peer = addr
        self._peer_ok = True
        self.last_error = None
        self._reset_seq()
        self._open = True

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock = None
        self._open = False
        self._peer_ok = False

    def _refused(self, e) -> None:
        if self._peer_ok:
            self.counters.link_errors += 1
        self._peer_ok = False
        self.last_error = f"udp endpoint {self.host}:{self.port}: {e.strerror or e}"

    def poll(self) -> list[bytes]:
        sock = self._sock
        if sock is None:
            return []
        out = []
        c = self.counters
        buf = self._buf
        cap = self.max_datagram
        connected = self.host is not None
        shadow = None
        for _ in range(100000):
            try:
                n, addr = sock.recvfrom_into(buf, cap, socket.MSG_TRUNC)
            except BlockingIOError:
                break
            except ConnectionRefusedError as e:
                self._refused(e)
                break
            except OSError as e:
                self.last_error = f"{self.describe()}: {e}"
                c.link_errors += 1
                break
            c.bytes_rx += n
            if n > cap:
                c.oversize += 1
                continue
            msg = bytes(buf[:n])
            if not self._check_message(msg):
                continue
            if not connected:
                if self._seq_state is None:
                    self.peer = addr
                else:             # only a frame the consumer will accept names the peer
                    if shadow is None:
                        shadow = SeqTracker.from_state(self._seq_state) if self.seq_check else False
                    if check_frame(msg) == OK and (shadow is False or shadow.accept(frame_seq(msg))):
                        self.peer = addr
            out.append(msg)
        if out and self._seq_state is None:
            self._delivered(len(out), time.monotonic())
            self._valid_frames_seen()
        return out

    def _valid_frames_seen(self) -> None:
        self._peer_ok = True

    def send(self, frame: bytes) -> bool:
        sock = self._sock
        c = self.counters
        if sock is None or self.peer is None:
            c.tx_dropped += 1
            return False
        try:
            if self.host is not None:
                sock.send(frame)
            else:
                sock.sendto(frame, self.peer)
        except BlockingIOError:
            c.tx_dropped += 1
            return False
        except ConnectionRefusedError as e:
            self._refused(e)
            c.tx_dropped += 1
            return False
        except OSError as e:
            self.last_error = f"{self.describe()}: send: {e}"
            c.tx_dropped += 1
            return False
        c.frames_tx += 1
        c.bytes_tx += len(frame)
        c.last_tx_time = time.monotonic()
        return True


# ----------------------------------------------------------------------------- memory

class _Channel:
    __slots__ = ("ends", "queues")

    def __init__(self) -> None:
        self.ends = [None, None]
        self.queues = (collections.deque(), collections.deque())


_channels: dict[str, _Channel] = {}
_channels_lock = threading.Lock()


class MemoryTransport(Transport):
    """An in-process pair of bounded queues (unit tests only). The first two opens of one
    name are its two ends."""

    kind = "memory"

    def __init__(self, o: dict) -> None:
        super().__init__(o)
        self.name = o["name"]
        self.capacity = o["capacity"]
        self._ch = None
        self._end = None

    def describe(self) -> str:
        return f"memory {self.name!r} end {self._end}"

    def open(self) -> None:
        if self._open:
            return
        with _channels_lock:
            ch = _channels.setdefault(self.name, _Channel())
            if ch.ends[0] is None:
                end = 0
            elif ch.ends[1] is None:
                end = 1
            else:
                raise TransportError(f"memory channel {self.name!r}: already has two open ends")
            ch.ends[end] = self
            ch.queues[end].clear()
        self._ch, self._end = ch, end
        self._reset_seq()
        self._open = True

    def close(self) -> None:
        ch = self._ch
        if ch is None:
            return
        with _channels_lock:
            ch.ends[self._end] = None
            ch.queues[self._end].clear()
            if ch.ends[0] is None and ch.ends[1] is None and _channels.get(self.name) is ch:
                del _channels[self.name]
        self._ch = None
        self._open = False

    @property
    def _peer_ok(self) -> bool:  # type: ignore[override]
        ch = self._ch
        return ch is not None and ch.ends[1 - self._end] is not None

    @_peer_ok.setter
    def _peer_ok(self, value) -> None:
        pass

    def send(self, frame: bytes) -> bool:
        ch = self._ch
        c = self.counters
        if ch is None or ch.ends[1 - self._end] is None:
            c.tx_dropped += 1
            return False
        q = ch.queues[1 - self._end]
        if len(q) >= self.capacity:
            c.tx_dropped += 1
            return False
        q.append(bytes(frame))
        c.frames_tx += 1
        c.bytes_tx += len(frame)
        c.last_tx_time = time.monotonic()
        return True

    def poll(self) -> list[bytes]:
        ch = self._ch
        if ch is None:
            return []
        q = ch.queues[self._end]
        out = []
        c = self.counters
        while q:
            msg = q.popleft()
            c.bytes_rx += len(msg)
            if self._check_message(msg):
                out.append(msg)
        if out:
            self._delivered(len(out), time.monotonic())
        return out

    def poll_messages(self) -> bytes:
        if self._seq_state is None or self._ch is None:
            return Transport.poll_messages(self)
        q = self._ch.queues[self._end]      # delegated checks: straight from the queue
        if not q:
            return b""
        msgs = list(q)
        q.clear()
        self.counters.bytes_rx += sum(map(len, msgs))
        return self._join_messages(msgs)


def memory_pair(name: str, **options) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected, opened ends of an in-process channel (unit tests)."""
    a = make_transport("memory", name=name, **options)
    b = make_transport("memory", name=name, **options)
    a.open()
    try:
        b.open()
    except BaseException:
        a.close()
        raise
    return a, b


_PREFIX = tuple(n.to_bytes(2, "little") for n in range(MAX_FRAME + 1))   # poll_messages' length prefixes
_RESET_PREFIX = SEQ_RESET_MARK.to_bytes(2, "little")
_SEQ_RESET = type("_SeqReset", (bytes,), {})()   # poll()'s place holder for it (an empty message)

_CLASSES = {"serial": SerialTransport, "zmq": ZmqTransport, "udp": UdpTransport,
            "memory": MemoryTransport}
