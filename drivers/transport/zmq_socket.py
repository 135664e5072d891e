"""The ZMQ backend: a pyzmq PAIR, DEALER or ROUTER socket, one frame per message; the link's state
from a socket monitor; one peer per link (the class docstring)."""
from __future__ import annotations

import time

from drivers.transport.base import _SEQ_RESET, Option, Transport, TransportConfigError, TransportError

__all__ = ["ZmqTransport", "BUSY"]

# A ROUTER's answer to a peer it does not serve (ZmqTransport): this prefix, then a UTF-8 text.
# No dockstand frame starts with a zero byte followed by these letters.
BUSY = b"\x00DOCKSTAND-BUSY "


def _check_endpoint(key: str, ep: str) -> None:
    if not ep.startswith(("tcp://", "ipc://", "inproc://")) or ep.endswith("://"):
        raise TransportConfigError(key, f"must be tcp://HOST:PORT, ipc://PATH or inproc://NAME, got {ep!r}")


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
    option_schema = (
        Option("endpoint", "string", required=True, check=_check_endpoint),
        Option("role", "string", "connect", choices=("bind", "connect")),
        Option("pattern", "string", "pair", choices=("pair", "dealer", "router")),
        Option("hwm", "integer", 100, lo=1),                        # the send side's high-water mark (messages)
        Option("heartbeat_ms", "integer", 100, lo=0, hi=60_000),    # heartbeats of a connecting tcp socket; 0: none
        Option("peer_timeout_s", "number", 0.5, lo=0.0),            # ROUTER: a served peer silent this long is released
        Option("hello_s", "number", 0.1, lo=0.0),                   # DEALER: an empty hello this often when idle
    )
    default_framing = "frame"

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

    def wait_readable(self, timeout_s: float) -> bool:
        """The socket's own poll, in whole milliseconds (closed: the base's nap)."""
        if self._sock is None:
            return super().wait_readable(timeout_s)
        return bool(self._sock.poll(int(timeout_s * 1000) + 1))

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
