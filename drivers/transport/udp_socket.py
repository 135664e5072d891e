"""The UDP backend: a non-blocking datagram socket, connected to one peer (host, port) or
listening (local_port) and answering whoever sent the last datagram."""
from __future__ import annotations

import select
import socket
import time

from drivers.framing import OK, SeqTracker, check_frame, frame_seq
from drivers.transport.base import Option, Transport, TransportConfigError, TransportError

__all__ = ["UdpTransport"]


class UdpTransport(Transport):
    """Non-blocking UDP socket, one datagram per message. With host/port the socket is
    connected (only that peer is heard; an ICMP port-unreachable shows as link down). With
    only local_port it is a device: it answers whoever sent the last datagram (``peer``)."""

    kind = "udp"
    option_schema = (
        Option("host", "string", optional=True),                  # the peer; with port, or neither
        Option("port", "integer", lo=1, hi=65535, optional=True),
        Option("local_port", "integer", lo=0, hi=65535, optional=True),   # bind here (0: any free port)
        Option("local_host", "text", ""),                          # "": every interface
        Option("max_datagram", "integer", 8192, lo=1, hi=65507),   # longer datagrams are counted and dropped
        Option("rcvbuf", "integer", 1 << 20, lo=0),                # SO_RCVBUF (bytes); 0: the system's
    )
    default_framing = "raw"

    @classmethod
    def check_options(cls, o: dict) -> None:
        if (o["host"] is None) != (o["port"] is None):
            raise TransportConfigError("port" if o["port"] is None else "host", "host and port go together")
        if o["host"] is None and o["local_port"] is None:
            raise TransportConfigError("host", "required (or local_port, for a device that answers its senders)")
        super().check_options(o)

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

    def wait_readable(self, timeout_s: float) -> bool:
        """``select`` on the socket (closed: the base's nap)."""
        if self._sock is None:
            return super().wait_readable(timeout_s)
        r, _, _ = select.select([self._sock], [], [], timeout_s)
        return bool(r)

    def receive_datagram(self):
        """One waiting datagram as ``(bytes, sender address)``; ``(None, address)`` for an
        oversize one (counted, dropped); None when nothing waits or the socket failed (a
        refused peer or an error: counted and kept in ``last_error``). Never raises, never
        blocks; the socket must be open."""
        try:
            n, addr = self._sock.recvfrom_into(self._buf, self.max_datagram, socket.MSG_TRUNC)
        except BlockingIOError:
            return None
        except ConnectionRefusedError as e:
            self._refused(e)
            return None
        except OSError as e:
            self.last_error = f"{self.describe()}: {e}"
            self.counters.link_errors += 1
            return None
        c = self.counters
        c.bytes_rx += n
        if n > self.max_datagram:
            c.oversize += 1
            return None, addr
        return bytes(self._buf[:n]), addr

    def poll(self) -> list[bytes]:
        if self._sock is None:
            return []
        out = []
        connected = self.host is not None
        shadow = None
        for _ in range(100000):
            got = self.receive_datagram()
            if got is None:
                break
            msg, addr = got
            if msg is None:
                continue
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
        return self.send_to(frame, self.peer)

    def send_to(self, data: bytes, addr) -> bool:
        """One datagram to ``addr`` (a connected socket: to its peer, which is ``addr``); False,
        counted in ``tx_dropped``, when the socket is closed, ``addr`` is None or the socket
        refuses it (:meth:`_send_failed`). Never raises, never blocks."""
        sock = self._sock
        c = self.counters
        if sock is None or addr is None:
            c.tx_dropped += 1
            return False
        try:
            if self.host is not None:
                sock.send(data)
            else:
                sock.sendto(data, addr)
        except OSError as e:
            self._send_failed(e)
            c.tx_dropped += 1
            return False
        c.frames_tx += 1
        c.bytes_tx += len(data)
        c.last_tx_time = time.monotonic()
        return True

    def _send_failed(self, e: OSError) -> None:
        """What a refused send means: a full socket buffer, only the drop; a refused peer (ICMP
        port unreachable, connected sockets), a link error; any other, kept in ``last_error``."""
        if isinstance(e, BlockingIOError):
            return
        if isinstance(e, ConnectionRefusedError):
            self._refused(e)
            return
        self.last_error = f"{self.describe()}: send: {e}"
