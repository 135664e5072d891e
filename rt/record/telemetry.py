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
  cap, the counts of requests, refused ones, rate-limited ones, CURVE refusals and revoked
  keys' requests, whether CURVE is on (then the number of authorised consoles and of key
  reloads), and ``identity`` (the stand's name and file, host, pid); ``ping``;
* ``reload_keys`` — with CURVE, read the authorised consoles' directory again (off this
  thread; a ``keys_reloaded`` event follows). Any authorised console may ask: it only re-reads
  what the stand's administrator put there.

**Security** — with ``curve`` (:class:`rt.record.curve.CurveServer`) both sockets are CURVE
servers and the ZAP authenticator (its own thread) admits only the authorised consoles' keys;
a refused key gets nothing (no telemetry, no reply), and each refusal becomes an
``auth_denied`` event (``on_auth_denied``: the controller records it). A handshake that fails
before the authenticator is asked (a client without CURVE, a forged or malformed key) is seen
by a socket monitor on both sockets and is an ``auth_denied`` event too (``stage:
"handshake"``). Each request's CURVE user id (the sender's public key) is checked against the
keys of the last reload: a console whose key was removed since it connected is answered
"revoked" and counted (``revoked``); if it held the lease, the lease is dropped at the reload
(``on_lease_lost(holder, "key revoked")``). Without ``curve`` a socket may bind only to
loopback or ipc: a ``tcp://`` endpoint on any other address raises ``ValueError`` naming the
missing ``[telemetry] server_secret_key``.

**Hostile input** — a request larger than ``max_request_bytes`` (64 KiB) never reaches the
server: libzmq's ``ZMQ_MAXMSGSIZE`` drops the sender's connection. Every other request is
decoded and checked by :func:`rt.record.requests.parse_request` (depth, widths, string
lengths, types; each command's arguments by :func:`rt.record.requests.check_arguments`)
before anything acts on it; what fails is answered ``bad request: <why>`` and counted
(``refused``). A server with ``commands`` answers only those (and the built-ins). Requests
are taken at most ``max_requests_per_s`` a second (a token bucket: beyond it they wait in
libzmq's queue, whose high-water mark then holds a flooding sender back), and ``status``,
``events`` and ``describe`` at most ``query_rate_hz`` a second per client (beyond:
"rate limited", counted in ``rate_limited``).

Everything else goes to the ``handler(cmd, args, client) -> dict`` given by the controller
(the supervisor's commands, ``status``). ``load_case``, ``arm``, ``start``, ``stop``, ``tare``,
``reset``, ``reset_fault``, ``retract`` and ``park`` need the lease; ``abort`` and read-only
commands do not. One client holds the lease; any number may watch. When the holder sends
nothing for ``lease_timeout_s`` the lease expires: ``lease_lost`` becomes True and
``on_lease_lost(holder, "silent")`` is called (the controller reports HEARTBEAT_LOST to the
safety monitor, configurable). A successful ``acquire`` clears ``lease_lost`` and calls
``on_lease_acquired(client)`` (the controller forgets an old expiry: it belonged to a lease
that no longer exists).

**Threads** — :meth:`publish` and :meth:`publish_event` are the loop thread's (the PUB
socket is its). The command side runs either

* on the **command thread** (:meth:`start`; the controller): receiving, decoding, checking,
  the lease and the built-ins, and the handler all run there, never in the loop. The
  handler is then called as ``handler(cmd, args, client, reply_to=f)``; it returns the reply,
  or None when the reply comes later (a command the loop carries out): ``f(reply)`` sends it,
  from any thread. The lease and CURVE callbacks are called on the command thread too; events
  the server itself publishes (no ``on_auth_denied``) are queued and sent by the next
  :meth:`publish`. The thread never dies of a request: whatever one raises is counted
  (``thread_errors``, ``last_thread_error``) and the thread goes on;
* or by :meth:`poll` (tests, tools: whoever calls it), non-blocking, at most
  ``max_requests`` per call, with the handler called as ``handler(cmd, args, client)``.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from collections import deque
from typing import Any, Callable

import msgpack
import numpy as np
import zmq

from rt.config.stand import endpoint_is_local
from rt.record.requests import check_arguments, parse_request, plain_event, plain_text

LEASED = frozenset({"load_case", "arm", "start", "stop", "tare", "reset", "reset_fault", "retract", "park"})
BUILTINS = frozenset({"acquire", "release", "heartbeat", "ping", "describe", "reload_keys"})
QUERIES = frozenset({"status", "events", "describe"})    # rate-limited per client
DEFAULT_PUB = "tcp://127.0.0.1:5561"
DEFAULT_CMD = "tcp://127.0.0.1:5560"
MAX_REQUEST_BYTES = 64 * 1024     # a command request is a few hundred bytes
_HANDSHAKE_FAILED = (getattr(zmq, "EVENT_HANDSHAKE_FAILED_NO_DETAIL", 0)
                     | getattr(zmq, "EVENT_HANDSHAKE_FAILED_PROTOCOL", 0))


def _pack(o: Any) -> bytes:
    return msgpack.packb(o, use_bin_type=True, default=lambda x: x.tolist() if isinstance(x, np.ndarray) else str(x))


def _pack_reply(o: dict) -> bytes:
    """A reply's bytes; one that cannot be encoded becomes a refusal that says so (never raised)."""
    try:
        return _pack(o)
    except Exception:  # noqa: BLE001 - e.g. a value nested too deep: the client still gets an answer
        try:
            return _pack(plain_event(o))
        except Exception as e:  # noqa: BLE001
            return _pack({"ok": False, "reason": f"the reply could not be encoded ({type(e).__name__})",
                          "id": o.get("id") if isinstance(o.get("id"), (int, str)) else None})


def _request_id(body: bytes):
    """The ``id`` of a request when it is a plain one, else None."""
    try:
        req = msgpack.unpackb(body, raw=False)
        rid = req.get("id") if isinstance(req, dict) else None
        return rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None
    except Exception:  # noqa: BLE001 - a refusal's reply goes out with or without it
        return None


class _Bucket:
    """A token bucket: ``rate`` per second, at most ``burst`` saved."""

    __slots__ = ("rate", "burst", "tokens", "t")

    def __init__(self, rate: float, burst: float, now_s: float):
        self.rate, self.burst, self.tokens, self.t = float(rate), float(burst), float(burst), now_s

    def refill(self, now_s: float) -> float:
        self.tokens = min(self.burst, self.tokens + (now_s - self.t) * self.rate)
        self.t = now_s
        return self.tokens

    def take(self, now_s: float) -> bool:
        if self.refill(now_s) >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class TelemetryServer:
    def __init__(self, fields: dict[str, int], *, pub_endpoint: str = DEFAULT_PUB, cmd_endpoint: str = DEFAULT_CMD,
                 decimation: int = 20, sndhwm: int = 4, lease_timeout_s: float = 2.0,
                 handler: Callable[..., dict | None] | None = None,
                 now_ns: Callable[[], int] = time.monotonic_ns,
                 on_lease_lost: Callable[[str], None] | None = None,
                 on_lease_acquired: Callable[[str], None] | None = None, context: zmq.Context | None = None,
                 max_request_bytes: int = MAX_REQUEST_BYTES, identity: dict | None = None,
                 curve=None, commands=None, on_auth_denied: Callable[[dict], None] | None = None,
                 max_requests_per_s: float = 2000.0, query_rate_hz: float = 50.0, rcvhwm: int = 1000):
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
        self.cmd = self.ctx.socket(zmq.ROUTER)
        self.cmd.setsockopt(zmq.LINGER, 0)
        self.cmd.setsockopt(zmq.RCVHWM, int(rcvhwm))
        if curve is not None:
            curve.apply(self.cmd)
        # libzmq itself refuses a larger message (it drops the sender's connection): a 20 MB
        # request is never read into memory, let alone decoded
        self.cmd.setsockopt(zmq.MAXMSGSIZE, int(max_request_bytes))
        self.max_request_bytes = int(max_request_bytes)
        # handshakes that fail before ZAP is asked (no CURVE, a forged key): seen by monitors
        self._monitors: list[tuple[str, zmq.Socket]] = []
        if _HANDSHAKE_FAILED:
            for name, sock in (("commands", self.cmd), ("telemetry", self.pub)):
                try:
                    self._monitors.append((name, sock.get_monitor_socket(_HANDSHAKE_FAILED)))
                except zmq.ZMQError:  # an old libzmq without monitors: the ZAP refusals remain
                    pass
        self.pub.bind(pub_endpoint)
        # who answers: the stand's name and file, host, pid, start time (describe; ctl shows it)
        self.identity = {"host": socket.gethostname(), "pid": os.getpid(), **(identity or {})}
        self.cmd.bind(cmd_endpoint)
        self.pub_endpoint = self.pub.getsockopt_string(zmq.LAST_ENDPOINT)
        self.cmd_endpoint = self.cmd.getsockopt_string(zmq.LAST_ENDPOINT)
        self.sent = 0
        self.drops = 0
        self.requests = 0
        self.refused = 0            # requests answered "bad request" (not msgpack, wrong types, unknown)
        self.rate_limited = 0       # queries beyond query_rate_hz per client
        self.holder: bytes | None = None
        self.holder_name: str | None = None
        self.holder_key: str | None = None      # its CURVE user id (public key), with CURVE
        self.holder_seen_ns = 0
        self.lease_lost = False
        self.lapsed_from: str | None = None      # the silent holder whose lease lapsed (takeover needs consent)
        self._lapsed_ident: bytes | None = None
        self.auth_denied = 0
        self.handshakes_failed = 0  # of auth_denied: handshakes that failed before ZAP
        self.revoked = 0            # requests from a key removed at a reload, refused
        self._countdown = 0
        self._msg = {"c": 0, "t": 0, "s": 0, "d": b""}
        # the command thread (start)
        self.max_requests_per_s = float(max_requests_per_s)
        self.query_rate_hz = float(query_rate_hz)
        self._thread: threading.Thread | None = None
        self._closing = False
        self._done: deque = deque()              # (envelope, reply) of deferred replies, any thread -> command thread
        self._events_out: deque = deque(maxlen=256)   # server events for the loop's next publish (threaded)
        self._wake_r = self._wake_w = -1
        self._query_buckets: dict[bytes, _Bucket] = {}
        self.thread_errors = 0
        self.last_thread_error: str | None = None
        self.thread_reports: list = []

    # ------------------------------------------------------------------ state stream (loop thread)
    def publish(self, cycle: int, t_ns: int, state: int, row: np.ndarray) -> bool:
        """Every cycle; sends every ``decimation``-th. Never blocks. True if sent this call."""
        if self._events_out:
            self._flush_events()
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
        """An event to every subscriber (the loop thread's; never blocks, never raises)."""
        try:
            body = _pack(event)
        except Exception:  # noqa: BLE001 - an unencodable event is sent as its plain copy
            body = _pack(plain_event(event))
        try:
            self.pub.send_multipart((b"event", body), flags=zmq.NOBLOCK)
        except zmq.ZMQError:
            self.drops += 1
            return False
        return True

    def _flush_events(self) -> None:
        for _ in range(8):
            if not self._events_out:
                break
            self.publish_event(self._events_out.popleft())

    def _emit(self, ev: dict) -> None:
        """A server event: to ``on_auth_denied`` (the controller records it), else published —
        by this thread in poll mode, by the loop's next publish in threaded mode."""
        if self.on_auth_denied is not None:
            self.on_auth_denied(ev)
        elif self._thread is not None:
            self._events_out.append(ev)
        else:
            self.publish_event(ev)

    # ------------------------------------------------------------------ commands: poll mode
    def poll(self, max_requests: int = 8) -> int:
        """Handle up to ``max_requests`` pending requests without blocking; check the lease;
        report CURVE refusals and key reloads (bounded work). Not with :meth:`start`."""
        if self._thread is not None:
            raise RuntimeError("the command thread serves the requests (start): poll is not for it")
        self._housekeeping()
        n = 0
        while n < max_requests and self._serve_one(threaded=False):
            n += 1
        return n

    # ------------------------------------------------------------------ commands: the command thread
    def start(self) -> None:
        """Serve the commands on a thread of their own (module docstring, "Threads"). The
        thread demotes itself (rt.realtime.demote_helper_thread): it may be started by a loop
        thread that runs SCHED_FIFO. Not real-time."""
        if self._thread is not None:
            return
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._thread = threading.Thread(target=self._run, name="dockstand-commands", daemon=True)
        self._thread.start()

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"\0")
        except (BlockingIOError, OSError):   # full: it is awake already; closed: shutting down
            pass

    def _run(self) -> None:
        from rt.realtime import demote_helper_thread
        try:
            self.thread_reports = demote_helper_thread()
        except Exception as e:  # noqa: BLE001 - reported; the thread serves anyway
            self.thread_reports = [f"thread setup failed: {type(e).__name__}: {e}"]
        poller = zmq.Poller()
        poller.register(self.cmd, zmq.POLLIN)
        poller.register(self._wake_r, zmq.POLLIN)
        for _, mon in self._monitors:
            poller.register(mon, zmq.POLLIN)
        bucket = _Bucket(self.max_requests_per_s, max(1.0, self.max_requests_per_s / 20), time.monotonic())
        reading = True
        while not self._closing:
            try:
                # out of tokens: leave the requests in libzmq's queue until one accrues
                timeout = 100 if reading else max(1, int(1e3 / self.max_requests_per_s) + 1)
                ready = dict(poller.poll(timeout))
                if self._closing:
                    break
                if self._wake_r in ready:
                    try:
                        while os.read(self._wake_r, 4096):
                            pass
                    except (BlockingIOError, OSError):
                        pass
                self._send_done()
                self._housekeeping()
                for name, mon in self._monitors:
                    if mon in ready:
                        self._handshake_events(name, mon)
                n = 0
                while n < 64 and bucket.take(time.monotonic()):
                    if not self._serve_one(threaded=True):
                        bucket.tokens += 1.0
                        break
                    n += 1
                    if self._done:
                        self._send_done()
                now_reading = bucket.refill(time.monotonic()) >= 1.0
                if now_reading != reading:
                    if now_reading:
                        poller.register(self.cmd, zmq.POLLIN)
                    else:
                        poller.unregister(self.cmd)
                    reading = now_reading
            except Exception as e:  # noqa: BLE001 - the command thread outlives any request
                self.thread_errors += 1
                self.last_thread_error = plain_text(f"{type(e).__name__}: {e}", 300)
                time.sleep(0.001)
        self._send_done()

    def _reply_to(self, envelope: list) -> Callable[[dict], None]:
        def reply(out: dict) -> None:
            self._done.append((envelope, out))
            self._wake()
        return reply

    def _send_done(self) -> None:
        while self._done:
            envelope, out = self._done.popleft()
            out["lease"] = self.holder_name
            if self.lapsed_from is not None:
                out["lease_lapsed"] = self.lapsed_from
            try:
                self.cmd.send_multipart(envelope + [_pack_reply(out)], flags=zmq.NOBLOCK)
            except zmq.ZMQError:
                pass  # the client is gone

    def _handshake_events(self, name: str, mon: zmq.Socket) -> None:
        from zmq.utils.monitor import recv_monitor_message
        for _ in range(16):
            try:
                m = recv_monitor_message(mon, flags=zmq.NOBLOCK)
            except zmq.Again:
                return
            self.handshakes_failed += 1
            self.auth_denied += 1
            ep = m.get("endpoint")
            ep = ep.decode(errors="replace") if isinstance(ep, bytes) else str(ep)
            self._emit({"kind": "auth_denied", "stage": "handshake", "socket": name, "endpoint": ep,
                        "why": ("the client's handshake failed before authentication (no CURVE, a forged or "
                                "malformed key, or another protocol)") if self.curve is not None else
                               "a client's handshake failed (it speaks CURVE or another protocol; this server has none)",
                        "zmq_event": int(m.get("event", 0)), "value": int(m.get("value", 0))})

    # ------------------------------------------------------------------ one request
    def _housekeeping(self) -> None:
        self._check_lease()
        if self.curve is not None and (self.curve.denied or self.curve.notices):
            self._auth_events()

    def _serve_one(self, threaded: bool) -> bool:
        """Take one request from the socket and answer it (or hand it on); False: none waiting."""
        try:
            frames = self.cmd.recv_multipart(flags=zmq.NOBLOCK, copy=self.curve is None)
        except zmq.Again:
            return False
        self.requests += 1
        if len(frames) < 2:
            return True
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
            reply = self._handle(ident, body, uid, self._reply_to(envelope) if threaded else None)
            if reply is None:
                return True      # the handler answers later (reply_to)
        try:
            self.cmd.send_multipart(envelope + [_pack_reply(reply)], flags=zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # the client is gone; nothing to do
        return True

    def _auth_events(self) -> None:
        for d in self.curve.take_denied():
            self.auth_denied += 1
            self._emit({"kind": "auth_denied", **d})
        for ev in self.curve.take_notices():
            self._emit(ev)
            if self.holder_key is not None and not self.curve.is_authorized(self.holder_key):
                name = self.holder_name or self.holder.hex()
                self.holder = self.holder_name = self.holder_key = None
                self.lease_lost = True
                if self.on_lease_lost is not None:
                    self.on_lease_lost(name, "key revoked")
                else:
                    self._emit({"kind": "lease_lost", "holder": name, "why": "key revoked"})

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

    def _query_allowed(self, ident: bytes) -> bool:
        now = time.monotonic()
        b = self._query_buckets.get(ident)
        if b is None:
            if len(self._query_buckets) >= 256:      # bounded: the oldest senders are forgotten
                for k in list(self._query_buckets)[:128]:
                    del self._query_buckets[k]
            b = self._query_buckets[ident] = _Bucket(self.query_rate_hz, max(2.0, self.query_rate_hz / 5), now)
        return b.take(now)

    def _handle(self, ident: bytes, body: bytes, user_id: str | None = None,
                reply_to: Callable[[dict], None] | None = None) -> dict | None:
        req = parse_request(body)
        if isinstance(req, str):
            self.refused += 1
            return {"ok": False, "reason": f"bad request: {req}", "id": _request_id(body)}
        cmd = req.cmd
        args = req.args
        rid = req.id
        client = req.client or ident.hex()
        now = self.now_ns()
        is_holder = self.holder == ident
        if is_holder:
            self.holder_seen_ns = now
        if cmd in QUERIES and not self._query_allowed(ident):
            self.rate_limited += 1
            out = {"ok": False, "reason": f"rate limited: at most {self.query_rate_hz:g} status, events and "
                                          "describe requests a second per client"}
        elif cmd in BUILTINS and (why := check_arguments(req)):
            self.refused += 1
            out = {"ok": False, "reason": f"bad request: {why}"}
        elif cmd == "acquire":
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
            out = {"ok": True, "reason": None, "fields": [[k, v] for k, v in dict(self.fields).items()],
                   "pub_endpoint": self.pub_endpoint, "decimation": self.decimation,
                   "lease_timeout_s": self.lease_timeout_ns / 1e9, "max_request_bytes": self.max_request_bytes,
                   "requests": self.requests, "refused": self.refused, "rate_limited": self.rate_limited,
                   "auth_denied": self.auth_denied, "revoked": self.revoked, "curve": self.curve is not None,
                   "identity": dict(self.identity)}
            if self.curve is not None:
                out["authorized_consoles"] = len(self.curve.names)
                out["key_reloads"] = self.curve.reloads
        elif self.commands is not None and cmd not in self.commands:
            self.refused += 1
            known = sorted(self.commands | BUILTINS)
            out = {"ok": False, "reason": f"bad request: unknown command {plain_text(cmd, 32)!r}; known: "
                                          f"{', '.join(known)}"}
        elif cmd in LEASED and not is_holder:
            who = f"held by {self.holder_name}" if self.holder is not None else "free; send acquire first"
            out = {"ok": False, "reason": f"{cmd} needs the control lease ({who})"}
        elif (why := check_arguments(req)) is not None:
            self.refused += 1
            out = {"ok": False, "reason": f"bad request: {why}"}
        elif self.handler is None:
            out = {"ok": False, "reason": f"unknown command {plain_text(cmd, 32)!r}"}
        else:
            try:
                if reply_to is None:
                    out = dict(self.handler(cmd, args, client))
                else:
                    def answer(o: dict, _rid=rid) -> None:
                        o = dict(o)
                        o["id"] = _rid
                        reply_to(o)
                    got = self.handler(cmd, args, client, reply_to=answer)
                    if got is None:
                        return None
                    out = dict(got)
            except Exception as e:  # noqa: BLE001 - a handler bug must not kill the server
                out = {"ok": False, "reason": plain_text(f"{type(e).__name__}: {e}", 300)}
        out["id"] = rid
        out["lease"] = self.holder_name
        if self.lapsed_from is not None:
            out["lease_lapsed"] = self.lapsed_from
        return out

    def close(self) -> None:
        """Stop the command thread (if any) and close both sockets. Not real-time."""
        th = self._thread
        if th is not None:
            self._closing = True
            self._wake()
            th.join(timeout=2.0)
            self._thread = None
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
        for _, mon in self._monitors:
            mon.close(0)
        self._monitors = []
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
