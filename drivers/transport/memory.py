"""The in-memory backend: an in-process pair of bounded queues (tests and in-process rigs: ``memory_pair``)."""
from __future__ import annotations

import collections
import threading
import time

from drivers.transport.base import Option, Transport, TransportError

__all__ = ["MemoryTransport", "memory_pair"]


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
    option_schema = (
        Option("name", "string", required=True),      # the channel: the first two opens of a name are its ends
        Option("capacity", "integer", 1024, lo=1),    # messages each direction holds
    )
    default_framing = "frame"

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

    def wait_readable(self, timeout_s: float) -> bool:
        """True at once when a frame is queued for this end; else a 20 µs nap and False."""
        ch = self._ch
        if ch is not None and ch.queues[self._end]:
            return True
        return super().wait_readable(timeout_s)

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
    a = MemoryTransport.from_options({"name": name, **options})
    b = MemoryTransport.from_options({"name": name, **options})
    a.open()
    try:
        b.open()
    except BaseException:
        a.close()
        raise
    return a, b
