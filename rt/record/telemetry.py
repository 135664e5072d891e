"""Telemetry (PUB) and commands (ROUTER) over ZeroMQ; both bound to loopback by default.

**State stream** — :meth:`TelemetryServer.publish` is called every cycle and sends every
``decimation``-th one (default: 1000 Hz / 20 = 50 Hz) as two frames ``[b"state", msgpack
{"c": cycle, "t": t_ns, "s": supervisor state code, "d": <bin: the record row, W float64
little-endian>}]``; the row layout is the run log's (fields and sizes), returned by the
``describe`` command, and :func:`decode_state` turns a message into a dict of arrays. Events
(state changes, trips, commands) go out as ``[b"event", msgpack {...}]``. Sends are
``NOBLOCK`` on a PUB socket with a small ``SNDHWM``: a slow or stalled subscriber loses
messages, never the loop its time. libzmq drops per-subscriber overflow silently; the
``drops`` counter counts the sends the socket refused (``zmq.Again``) or failed.

**Commands** — a ROUTER socket; clients are DEALER (send ``[b"", request]``) or REQ sockets.
A request is msgpack ``{"cmd": name, "args": {...}, "client": "console name", "id": any}``, the
reply ``{"ok": bool, "reason": str | None, "id": ..., ...}``. Built-in commands:

* ``acquire`` — take the control lease (free or already yours); a lease that *lapsed* (its
  holder went silent for ``lease_timeout_s``) is taken over only with ``{"takeover": true}``
  (the console asks its operator first) or by the holder that lost it; ``release``;
  ``heartbeat`` — renew it (any request from the holder also renews it);
* ``describe`` — the record layout, PUB endpoint, decimation, lease timeout, the request size
  cap, the counts of requests, refused ones, CURVE refusals and revoked keys' requests,
  whether CURVE is on (then the number of authorised consoles and of key reloads), and
  ``identity`` (the stand's name and file, host, pid); ``ping``;
* ``reload_keys`` — with CURVE, read the authorised consoles' directory again (off this
  thread; a ``keys_reloaded`` event follows). Any authorised console may ask: it only re-reads
  what the stand's administrator put there.

**Security** — with ``curve`` (:class:`rt.record.curve.CurveServer`) both sockets are CURVE
servers and the ZAP authenticator (its own thread) admits only the authorised consoles' keys;
a refused key gets nothing (no telemetry, no reply), and each refusal becomes an
``auth_denied`` event (published to the authorised consoles, ``on_auth_denied``: the run log).
Each request's CURVE user id (the sender's public key) is checked against the keys of the
last reload: a console whose key was removed since it connected is answered "revoked" and
counted (``revoked``); if it held the lease, the lease is dropped at the reload
(``on_lease_lost(holder, "key revoked")``: the controller's lease-lost handling and event).
Without ``curve`` a socket may bind only to loopback or ipc: a ``tcp://`` endpoint on any other
address raises ``ValueError`` naming the missing ``[telemetry] server_secret_key``.

A request larger than ``max_request_bytes`` (64 KiB) never reaches the server: libzmq's
``ZMQ_MAXMSGSIZE`` drops the sender's connection. A request that is not msgpack, or not a
map with a string ``cmd`` and a map ``args``, is answered ``bad request`` and counted
(``refused``); so is a command that is neither built in nor in ``commands`` (when given).

Everything else goes to the ``handler(cmd, args, client) -> dict`` given by the controller
(the supervisor's commands, ``status``). ``load_case``, ``arm``, ``start``, ``stop``, ``tare``
and ``reset`` need the lease; ``abort`` and read-only commands do not. One client holds the
lease; any number may watch. When the holder sends nothing for ``lease_timeout_s`` the lease
expires: ``lease_lost`` becomes True and ``on_lease_lost(holder, "silent")`` is called (the controller
reports HEARTBEAT_LOST to the safety monitor, configurable). A successful ``acquire`` clears
``lease_lost`` and calls ``on_lease_acquired(client)`` (the controller forgets an old expiry:
it belonged to a lease that no longer exists).

:meth:`poll` is non-blocking and handles at most ``max_requests`` per call; call it from the
loop thread (every cycle or every few) so the supervisor stays single-threaded.
"""
from __future__ import annotations

import os
import socket
import time
from typing import Any, Callable

import msgpack
import numpy as np
import zmq

from rt.config.stand import endpoint_is_local

LEASED = frozenset({"load_case", "arm", "start", "stop", "tare", "reset"})
DEFAULT_PUB = "tcp://127.0.0.1:5561"
DEFAULT_CMD = "tcp://127.0.0.1:5560"


def _pack(o: Any) -> bytes:
    return msgpack.packb(o, use_bin_type=True, default=lambda x: x.tolist() if isinstance(x, np.ndarray) else str(x))


def _request_id(body: bytes):
    """The ``id`` of a request, or None if it has none or is not one."""
    try:
        req = msgpack.unpackb(body, raw=False)
        return req.get("id") if isinstance(req, dict) else None
    except Exception:  # noqa: BLE001 - a refusal's reply goes out with or without it
        return None


MAX_REQUEST_BYTES = 64 * 1024     # a command request is a few hundred bytes


class TelemetryServer:
    def __init__(self, fields: dict[str, int], *, pub_endpoint: str = DEFAULT_PUB, cmd_endpoint: str = DEFAULT_CMD,
                 decimation: int = 20, sndhwm: int = 4, lease_timeout_s: float = 2.0,
                 handler: Callable[[str, dict, str], dict] | None = None,
                 now_ns: Callable[[], int] = time.monotonic_ns,
                 on_lease_lost: Callable[[str], None] | None = None,
                 on_lease_acquired: Callable[[str], None] | None = None, context: zmq.Context | None = None,
                 max_request_bytes: int = MAX_REQUEST_BYTES, identity: dict | None = None,
                 curve=None, commands=None, on_auth_denied: Callable[[dict], None] | None = None):
        if decimation < 1:
            raise ValueError("decimation must be >= 1")
        if curve is None:
            for key, ep in (("pub_endpoint", pub_endpoint), ("cmd_endpoint", cmd_endpoint)):
                if not endpoint_is_local(ep):
                    raise ValueError(f"[telemetry] {key} = {ep!r} listens beyond loopback without CURVE: set "
                                     "[telemetry] server_secret_key and authorized_consoles_dir "
                                     "(dockstand keys init DIR; docs/console.md)")
        self.curve = curve
        self.commands = frozenset(commands) if commands is not None else None
        self.on_auth_denied = on_auth_denied
        self.fields = dict(fields)
        self.width = sum(self.fields.values())
        self.decimation = int(decimation)
        self.handler = handler
        self.now_ns = now_ns
        self.on_lease_lost = on_lease_lost
        self.on_lease_acquired = on_lease_acquired
        self.lease_timeout_ns = int(lease_timeout_s * 1e9)
        self.ctx = context or zmq.Context.instance()
        if curve is not None:
            curve.start(self.ctx)          # the ZAP handler runs before anything binds
        self.pub = self.ctx.socket(zmq.PUB)
        if curve is not None:
            curve.apply(self.pub)
        self.pub.setsockopt(zmq.SNDHWM, int(sndhwm))
        self.pub.setsockopt(zmq.LINGER, 0)
        self.pub.bind(pub_endpoint)
        self.cmd = self.ctx.socket(zmq.ROUTER)
        self.cmd.setsockopt(zmq.LINGER, 0)
        if curve is not None:
            curve.apply(self.cmd)
        # libzmq itself refuses a larger message (it drops the sender's connection): a 20 MB
        # request is never read into memory, let alone decoded in the loop
        self.cmd.setsockopt(zmq.MAXMSGSIZE, int(max_request_bytes))
        self.max_request_bytes = int(max_request_bytes)
        # who answers: the stand's name and file, host, pid, start time (describe; ctl shows it)
        self.identity = {"host": socket.gethostname(), "pid": os.getpid(), **(identity or {})}
        self.cmd.bind(cmd_endpoint)
        self.pub_endpoint = self.pub.getsockopt_string(zmq.LAST_ENDPOINT)
        self.cmd_endpoint = self.cmd.getsockopt_string(zmq.LAST_ENDPOINT)
        self.sent = 0
        self.drops = 0
        self.requests = 0
        self.refused = 0            # requests answered "bad request" (not msgpack, wrong types)
        self.holder: bytes | None = None
        self.holder_name: str | None = None
        self.holder_key: str | None = None      # its CURVE user id (public key), with CURVE
        self.holder_seen_ns = 0
        self.lease_lost = False
        self.lapsed_from: str | None = None      # the silent holder whose lease lapsed (takeover needs consent)
        self._lapsed_ident: bytes | None = None
        self.auth_denied = 0
        self.revoked = 0            # requests from a key removed at a reload, refused
        self._countdown = 0
        self._msg = {"c": 0, "t": 0, "s": 0, "d": b""}

    # ------------------------------------------------------------------ state stream
    def publish(self, cycle: int, t_ns: int, state: int, row: np.ndarray) -> bool:
        """Every cycle; sends every ``decimation``-th. Never blocks. True if sent this call."""
        if self._countdown > 0:
            self._countdown -= 1
            return False
        self._countdown = self.decimation - 1
        m = self._msg
        m["c"] = cycle
        m["t"] = t_ns
        m["s"] = int(state)
        m["d"] = row.tobytes()
        try:
            self.pub.send_multipart((b"state", msgpack.packb(m, use_bin_type=True)), flags=zmq.NOBLOCK)
        except zmq.ZMQError:  # Again (HWM) or anything else: drop
            self.drops += 1
            return False
        self.sent += 1
        return True

    def publish_event(self, event: dict) -> bool:
        try:
            self.pub.send_multipart((b"event", _pack(event)), flags=zmq.NOBLOCK)
        except zmq.ZMQError:
            self.drops += 1
            return False
        return True

    # ------------------------------------------------------------------ commands
    def poll(self, max_requests: int = 8) -> int:
        """Handle up to ``max_requests`` pending requests without blocking; check the lease;
        report CURVE refusals and key reloads (the loop thread; bounded work)."""
        self._check_lease()
        if self.curve is not None and (self.curve.denied or self.curve.notices):
            self._auth_events()
        n = 0
        while n < max_requests:
            try:
                frames = self.cmd.recv_multipart(flags=zmq.NOBLOCK, copy=self.curve is None)
            except zmq.Again:
                break
            n += 1
            self.requests += 1
            if len(frames) < 2:
                continue
            uid = None
            if self.curve is not None:      # the CURVE user id: the sender's public key (zmq.auth)
                uid = frames[-1].get("User-Id")
                frames = [f.bytes for f in frames]
            ident, body = frames[0], frames[-1]
            envelope = frames[:-1]  # identity (+ empty delimiter for REQ/DEALER-with-delimiter)
            if uid is not None and not self.curve.is_authorized(uid):
                self.revoked += 1
                reply = {"ok": False, "reason": "this console's key was revoked (it left the authorised consoles' "
                                                "directory at the last key reload)", "id": _request_id(body),
                         "lease": self.holder_name}
            else:
                reply = self._handle(ident, body, uid)
            try:
                self.cmd.send_multipart(envelope + [_pack(reply)], flags=zmq.NOBLOCK)
            except zmq.ZMQError:
                pass  # the client is gone; nothing to do
        return n

    def _auth_events(self) -> None:
        emit = self.on_auth_denied if self.on_auth_denied is not None else self.publish_event
        for d in self.curve.take_denied():
            self.auth_denied += 1
            emit({"kind": "auth_denied", **d})
        for ev in self.curve.take_notices():
            emit(ev)
            if self.holder_key is not None and not self.curve.is_authorized(self.holder_key):
                name = self.holder_name or self.holder.hex()
                self.holder = self.holder_name = self.holder_key = None
                self.lease_lost = True
                if self.on_lease_lost is not None:
                    self.on_lease_lost(name, "key revoked")
                else:
                    emit({"kind": "lease_lost", "holder": name, "why": "key revoked"})

    def _check_lease(self) -> None:
        if self.holder is not None and self.now_ns() - self.holder_seen_ns > self.lease_timeout_ns:
            name = self.holder_name or self.holder.hex()
            self._lapsed_ident = self.holder
            self.holder = None
            self.holder_name = self.holder_key = None
            self.lease_lost = True
            self.lapsed_from = name
            if self.on_lease_lost is not None:
                self.on_lease_lost(name, "silent")

    def _handle(self, ident: bytes, body: bytes, user_id: str | None = None) -> dict:
        try:
            req = msgpack.unpackb(body, raw=False)
            if not isinstance(req, dict) or not isinstance(req.get("cmd"), str):
                raise ValueError("a request is a map with a string 'cmd'")
            args = req.get("args") or {}
            if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
                raise ValueError("'args' must be a map with string keys")
        except Exception as e:
            self.refused += 1
            return {"ok": False, "reason": f"bad request: {e}"}
        cmd = req["cmd"]
        rid = req.get("id")
        client = str(req.get("client") or ident.hex())
        now = self.now_ns()
        is_holder = self.holder == ident
        if is_holder:
            self.holder_seen_ns = now
        if cmd == "acquire":
            takeover = args.get("takeover") is True
            if self.holder is not None and not is_holder:
                quiet = (now - self.holder_seen_ns) / 1e9
                out = {"ok": False, "reason": f"the control lease is held by {self.holder_name} "
                                              f"(last heard {quiet:.1f} s ago)"}
            elif self.lapsed_from is not None and not takeover and ident != self._lapsed_ident:
                out = {"ok": False, "takeover_needed": True,
                       "reason": f"the control lease of {self.lapsed_from} lapsed (silent for more than "
                                 f"{self.lease_timeout_ns / 1e9:g} s): taking it over needs confirmation "
                                 "(acquire with takeover)"}
            else:
                self.holder, self.holder_name, self.holder_seen_ns = ident, client, now
                self.holder_key = user_id
                self.lease_lost = False
                self.lapsed_from = self._lapsed_ident = None
                out = {"ok": True, "reason": None}
                if self.on_lease_acquired is not None:
                    self.on_lease_acquired(client)
        elif cmd == "release":
            if is_holder:
                self.holder = self.holder_name = self.holder_key = None
                out = {"ok": True, "reason": None}
            else:
                out = {"ok": False, "reason": "you do not hold the control lease"}
        elif cmd == "heartbeat":
            out = {"ok": is_holder, "reason": None if is_holder else "you do not hold the control lease"}
        elif cmd == "ping":
            out = {"ok": True, "reason": None}
        elif cmd == "reload_keys":
            if self.curve is None:
                out = {"ok": False, "reason": "CURVE is off on this controller: there are no keys to reload"}
            else:
                self.curve.request_reload()
                out = {"ok": True, "reason": None, "note": "reload requested: a keys_reloaded event follows"}
        elif cmd == "describe":
            out = {"ok": True, "reason": None, "fields": [[k, v] for k, v in self.fields.items()],
                   "pub_endpoint": self.pub_endpoint, "decimation": self.decimation,
                   "lease_timeout_s": self.lease_timeout_ns / 1e9, "max_request_bytes": self.max_request_bytes,
                   "requests": self.requests, "refused": self.refused, "auth_denied": self.auth_denied,
                   "revoked": self.revoked, "curve": self.curve is not None, "identity": self.identity}
            if self.curve is not None:
                out["authorized_consoles"] = len(self.curve.names)
                out["key_reloads"] = self.curve.reloads
        elif self.commands is not None and cmd not in self.commands:
            self.refused += 1
            out = {"ok": False, "reason": f"unknown command {cmd!r}; known: {', '.join(sorted(self.commands))}"}
        elif cmd in LEASED and not is_holder:
            who = f"held by {self.holder_name}" if self.holder is not None else "free; send acquire first"
            out = {"ok": False, "reason": f"{cmd} needs the control lease ({who})"}
        elif self.handler is None:
            out = {"ok": False, "reason": f"unknown command {cmd!r}"}
        else:
            try:
                out = dict(self.handler(cmd, args, client))
            except Exception as e:  # a handler bug must not kill the loop
                out = {"ok": False, "reason": f"{type(e).__name__}: {e}"}
        out["id"] = rid
        out["lease"] = self.holder_name
        if self.lapsed_from is not None:
            out["lease_lapsed"] = self.lapsed_from
        return out

    def close(self) -> None:
        self.pub.close(0)
        self.cmd.close(0)
        if self.curve is not None:
            self.curve.stop()


def decode_state(frames: list[bytes], fields: list[list] | dict[str, int]) -> dict:
    """``[b"state", payload]`` -> ``{"cycle", "t_ns", "state", name: array}``."""
    m = msgpack.unpackb(frames[1], raw=False)
    row = np.frombuffer(m["d"], dtype="<f8")
    out = {"cycle": m["c"], "t_ns": m["t"], "state": m["s"]}
    items = fields.items() if isinstance(fields, dict) else fields
    off = 0
    for name, size in items:
        out[name] = row[off:off + size] if size > 1 else float(row[off])
        off += size
    return out


class CommandClient:
    """A small DEALER client (``dockstand ctl``): :meth:`request` sends and waits for the reply."""

    def __init__(self, endpoint: str = DEFAULT_CMD, name: str = "console", timeout_s: float = 2.0,
                 context: zmq.Context | None = None, keys=None):
        """``keys``: :class:`rt.record.curve.ClientKeys` when the controller runs CURVE."""
        self.ctx = context or zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        if keys is not None:
            keys.apply(self.sock)
        self.timeout_ms = int(timeout_s * 1000)
        # a send never blocks for longer than the timeout (no peer: e.g. a CURVE handshake refused)
        self.sock.setsockopt(zmq.SNDTIMEO, self.timeout_ms)
        self.sock.connect(endpoint)
        self.name = name
        self._id = 0

    def send(self, cmd: str, **args: Any) -> int:
        self._id += 1
        try:
            self.sock.send_multipart([b"", _pack({"cmd": cmd, "args": args, "client": self.name, "id": self._id})])
        except zmq.Again:
            raise TimeoutError(f"could not send {cmd} within {self.timeout_ms} ms (no connection)") from None
        return self._id

    def recv(self, timeout_s: float | None = None) -> dict:
        ms = self.timeout_ms if timeout_s is None else int(timeout_s * 1000)
        if not self.sock.poll(ms, zmq.POLLIN):
            raise TimeoutError(f"no reply within {ms} ms")
        return msgpack.unpackb(self.sock.recv_multipart()[-1], raw=False)

    def request(self, cmd: str, **args: Any) -> dict:
        rid = self.send(cmd, **args)
        while True:
            r = self.recv()
            if r.get("id") == rid:
                return r

    def close(self) -> None:
        self.sock.close(0)
