"""The serial backend: a pyserial port in raw mode, non-blocking, whole dockstand frames cut out
of the byte stream (drivers.framing.StreamDecoder); a port that disappears is reopened."""
from __future__ import annotations

import errno
import os
import select
import termios
import time

from drivers.framing import StreamDecoder
from drivers.transport.base import Option, Transport, TransportConfigError, TransportError

__all__ = ["SerialTransport"]


class SerialTransport(Transport):
    """pyserial port, raw mode, non-blocking; reads/writes go straight to the fd (POSIX)."""

    kind = "serial"
    option_schema = (
        Option("port", "string", required=True),                  # the device, /dev/ttyUSB0
        Option("baud", "integer", 921600, lo=50, hi=50_000_000),
        Option("reopen_interval_s", "number", 0.5, lo=0.0),         # a lost port is tried again this often
        Option("max_tx_buffer", "integer", 65536, lo=512),          # bytes waiting to be written
        Option("read_chunk", "integer", 65536, lo=64),              # bytes one read takes
    )
    default_framing = "frame"

    @classmethod
    def check_options(cls, o: dict) -> None:
        super().check_options(o)
        if o["framing"] != "frame":
            raise TransportConfigError("framing", "a serial line carries dockstand frames: must be 'frame'")

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

    def wait_readable(self, timeout_s: float) -> bool:
        """``select`` on the tty's descriptor (a port opened without one: the base's nap)."""
        if self._fd is None:
            return super().wait_readable(timeout_s)
        r, _, _ = select.select([self._fd], [], [], timeout_s)
        return bool(r)

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
