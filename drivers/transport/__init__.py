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

**One module per backend** (``base``: the common part, the errors and the option schema;
``serial_port``, ``zmq_socket``, ``udp_socket``, ``memory``). Each backend class declares its
options (``option_schema``: key, type, range or choices, default) and checks them itself
(``check_options`` for rules across options); :func:`validate_options` only finds the class.
**A new backend** is a new module with its ``Transport`` subclass and one line in
:data:`TRANSPORTS` below; the stand file's ``transport`` keys (rt.config.stand) are this
registry's. It is a table in the code, not an entry-point group like ``dockstand.platforms``:
a vendor's protocol is a plugin that speaks over one of these links (drivers.hardware), while a
transport is how the controller's real-time loop reaches the operating system (never blocks,
never raises after ``open``), a part of the controller that is reviewed and tested with it.
"""
from __future__ import annotations

from drivers.transport.base import (COMMON_OPTIONS, SEQ_RESET_MARK, Option, Transport, TransportConfigError,
                                    TransportError)
from drivers.transport.memory import MemoryTransport, memory_pair
from drivers.transport.serial_port import SerialTransport
from drivers.transport.udp_socket import UdpTransport
from drivers.transport.zmq_socket import BUSY, ZmqTransport

__all__ = ["Transport", "SerialTransport", "ZmqTransport", "UdpTransport", "MemoryTransport",
           "TransportError", "TransportConfigError", "open_transport", "make_transport",
           "validate_options", "memory_pair", "KINDS", "TRANSPORTS", "transport_class", "Option",
           "COMMON_OPTIONS", "SEQ_RESET_MARK", "BUSY"]

#: the registry: the stand file's ``transport`` key -> its backend (one line per backend)
TRANSPORTS: dict[str, type[Transport]] = {
    "serial": SerialTransport,
    "zmq": ZmqTransport,
    "udp": UdpTransport,
    "memory": MemoryTransport,
}
KINDS = tuple(TRANSPORTS)


def transport_class(kind: str) -> type[Transport]:
    """The backend registered as ``kind``; TransportConfigError (key ``transport``) naming the
    known ones."""
    if kind not in TRANSPORTS:
        raise TransportConfigError("transport", f"unknown transport kind {kind!r}; known: {', '.join(TRANSPORTS)}")
    return TRANSPORTS[kind]


def validate_options(kind: str, options: dict) -> dict:
    """Check a transport's options; return them complete with defaults.

    Raises TransportConfigError (ValueError) naming the key for an unknown kind
    (key ``transport``), an unknown option, a missing one or a bad value. The backend's class
    checks them (``Transport.validate_options``).
    """
    return transport_class(kind).validate_options(options)


def make_transport(kind: str, **options) -> Transport:
    """A transport built from validated options, not yet opened."""
    return transport_class(kind).from_options(options)


def open_transport(kind: str, **options) -> Transport:
    """A transport built from validated options and opened (TransportError names the port/endpoint)."""
    t = make_transport(kind, **options)
    t.open()
    return t
