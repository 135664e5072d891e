"""CURVE security of the telemetry PUB and command ROUTER (ZeroMQ CURVE through ``zmq.auth``).

* :func:`init_keys` — ``dockstand keys init DIR``: the controller's key pair and one pair per
  console, laid out as the stand config and the consoles expect (docs/console.md, "Keys")::

      DIR/server/server.key            the controller's public key (give it to every console)
      DIR/server/server.key_secret     its secret key (0600; [telemetry] server_secret_key)
      DIR/authorized/NAME.key          the consoles allowed in ([telemetry] authorized_consoles_dir)
      DIR/consoles/NAME.key_secret     each console's own pair (copy to the operator's machine)

* :class:`CurveServer` — the server side's keys and its ZAP authenticator
  (:class:`zmq.auth.thread.ThreadAuthenticator`: its own thread, never the loop's). A client
  whose public key is not in the authorised directory gets nothing: libzmq closes its
  connection during the handshake, before any message. Each refusal is queued here
  (thread-safe) and the loop thread takes them with :meth:`CurveServer.take_denied` (the
  telemetry server turns them into ``auth_denied`` events).
* :func:`client_keys` — a console's side: its key pair and the server's public key.
* Key changes without a restart: add or remove ``.key`` files in the authorised directory
  (``dockstand keys init DIR --console NAME`` adds, ``dockstand keys revoke DIR NAME``
  removes and retires the pair: a re-added NAME gets a new one), then ``systemctl reload dockstand-controller`` (SIGHUP) or ``dockstand ctl
  reload-keys``. :meth:`CurveServer.request_reload` only sets an event; the reader thread
  (started with the authenticator) reads the directory and swaps the authenticator's key set
  and :attr:`CurveServer.names` in one assignment each. Its outcome is queued as a
  ``keys_reloaded`` event (added and removed consoles by file name, files it could not read).
  A removed key cannot open a new connection, and the command server refuses every request
  whose CURVE user id (its public key) left the set (rt.record.telemetry); a telemetry
  subscription already open stays open until that console disconnects (libzmq cannot drop
  one peer of a PUB socket): restart the controller to cut it at once (docs/console.md).

Nothing here may be called in the real-time loop except :meth:`CurveServer.take_denied`,
:meth:`CurveServer.take_notices`, :meth:`CurveServer.is_authorized` and
:meth:`CurveServer.request_reload` (deque pops, a set lookup, an event set; no I/O).
"""
from __future__ import annotations

import logging
import os
import shutil
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils import z85

log = logging.getLogger("dockstand.curve")
ZAP_DOMAIN = "dockstand"


def init_keys(directory: str | Path, consoles: list[str] | tuple[str, ...] = ("console",)) -> dict:
    """Make the controller's key pair (unless it exists: a second call only adds consoles) and
    one pair per console name, authorised. Returns what was written and what was kept. Not
    real-time."""
    d = Path(directory)
    made, kept = [], []
    for sub, mode in (("server", 0o700), ("consoles", 0o700), ("authorized", 0o755)):
        (d / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(d / sub, mode)
    srv = d / "server" / "server.key_secret"
    if srv.exists():
        kept.append(str(srv))
    else:
        pub, sec = zmq.auth.create_certificates(d / "server", "server")
        os.chmod(sec, 0o600)
        made += [pub, sec]
    for name in consoles:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"console name {name!r}: a plain file name is needed")
        sec = d / "consoles" / f"{name}.key_secret"
        if sec.exists():
            kept.append(str(sec))
        else:
            pub, sec_path = zmq.auth.create_certificates(d / "consoles", name)
            os.chmod(sec_path, 0o600)
            made += [pub, sec_path]
        shutil.copyfile(d / "consoles" / f"{name}.key", d / "authorized" / f"{name}.key")
    return {"made": [str(p) for p in made], "kept": kept, "server_public_key": str(d / "server" / "server.key"),
            "server_secret_key": str(srv), "authorized_consoles_dir": str(d / "authorized")}


def revoke_key(directory: str | Path, name: str) -> tuple[Path, list[Path]]:
    """``dockstand keys revoke DIR NAME``: remove ``DIR/authorized/NAME.key`` and retire the
    console's pair (``DIR/consoles/NAME.key*`` moved to ``DIR/consoles/revoked/NAME-<time>.*``),
    so that a later ``keys init DIR --console NAME`` makes a new pair instead of letting the
    revoked key back in. Returns the removed file and the retired ones; ValueError says why
    not. Not real-time."""
    import time
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"console name {name!r}: a plain file name is needed")
    d = Path(directory)
    f = d / "authorized" / f"{name}.key"
    if not f.is_file():
        have = sorted(p.stem for p in (d / "authorized").glob("*.key"))
        raise ValueError(f"{f}: no such authorised console (authorised: {', '.join(have) or 'none'})")
    f.unlink()
    retired = []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for src in (d / "consoles" / f"{name}.key", d / "consoles" / f"{name}.key_secret"):
        if src.exists():
            (d / "consoles" / "revoked").mkdir(mode=0o700, exist_ok=True)
            dst = d / "consoles" / "revoked" / f"{name}-{stamp}{src.suffix}"
            src.replace(dst)
            retired.append(dst)
    return f, retired


def read_authorized(directory: str | Path) -> tuple[dict[bytes, str], list[str]]:
    """The authorised directory's keys: ``({z85 public key: file stem}, [files it could not
    read, with why])``. Every ``*.key`` file counts, as for zmq.auth. Not real-time."""
    if not Path(directory).is_dir():           # not "no consoles": the directory is gone or unreadable
        raise FileNotFoundError(2, "not a directory (or gone)", str(directory))
    keys: dict[bytes, str] = {}
    bad: list[str] = []
    for f in sorted(Path(directory).glob("*.key")):
        try:
            keys[load_public(f)] = f.stem
        except ValueError as e:
            bad.append(str(e))
    return keys, bad


def _exists(path: str | Path, what: str) -> None:
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such file ({what})")


def load_secret(path: str | Path) -> tuple[bytes, bytes]:
    """(public, secret) z85 keys of a ``.key_secret`` file; ValueError says why not."""
    _exists(path, "a .key_secret file: dockstand keys init DIR --console NAME makes one")
    try:
        pub, sec = zmq.auth.load_certificate(str(path))
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 - zmq.auth raises plain ValueError / others on garbage
        raise ValueError(f"{path} is not a ZeroMQ certificate ({e})") from None
    if not sec:
        raise ValueError(f"{path} holds no secret key (a .key file is the public half; the secret "
                         "one is the .key_secret beside it)")
    return pub, sec


def load_public(path: str | Path) -> bytes:
    _exists(path, "a public .key file")
    try:
        pub, _ = zmq.auth.load_certificate(str(path))
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001
        raise ValueError(f"{path} is not a ZeroMQ certificate ({e})") from None
    return pub


@dataclass(frozen=True)
class ClientKeys:
    public: bytes
    secret: bytes
    server_public: bytes

    def apply(self, sock: zmq.Socket) -> None:
        """Make ``sock`` a CURVE client of the controller (before connect)."""
        sock.curve_publickey = self.public
        sock.curve_secretkey = self.secret
        sock.curve_serverkey = self.server_public


def client_keys(secret_file: str | Path, server_public_file: str | Path) -> ClientKeys:
    pub, sec = load_secret(secret_file)
    return ClientKeys(pub, sec, load_public(server_public_file))


DEFAULT_CONSOLE_KEY = Path.home() / ".config" / "dockstand" / "console.key_secret"


def keys_for_client(key: str | None, server_key: str | None, stand_curve: dict | None) -> ClientKeys | None:
    """A console's or ``ctl``'s CURVE keys from ``--key``/``--server-key``; when the stand runs
    CURVE (``stand_curve``, the stand's ``[telemetry]`` curve settings) the defaults are
    ``~/.config/dockstand/console.key_secret`` and the ``server.key`` beside the stand's
    ``server_secret_key``. None without CURVE; ValueError says what is missing. Not real-time."""
    if stand_curve and not key:
        key = str(DEFAULT_CONSOLE_KEY)
    if stand_curve and not server_key:
        server_key = str(Path(stand_curve["secret_file"]).with_suffix(".key"))
    if not (key or server_key):
        return None
    if not (key and server_key):
        raise ValueError("CURVE needs both --key (this console's .key_secret) and --server-key "
                         "(the controller's public server.key)")
    return client_keys(key, server_key)


class _Auth(ThreadAuthenticator):
    """The ZAP handler: zmq.auth's, and each refusal queued for the loop thread."""

    def __init__(self, context, denied: deque):
        super().__init__(context, log=logging.getLogger("dockstand.curve.zap"))
        self._denied = denied
        self._address = ""

    async def handle_zap_message(self, msg):
        try:
            self._address = msg[3].decode("utf-8", "replace")
        except Exception:  # noqa: BLE001 - a malformed ZAP request: zmq.auth answers it
            self._address = "?"
        return await super().handle_zap_message(msg)

    async def _authenticate_curve(self, domain, client_key):
        allowed, reason = await super()._authenticate_curve(domain, client_key)
        if not allowed:
            key = z85.encode(client_key).decode("ascii") if len(client_key) == 32 else client_key.hex()
            self._denied.append({"client_key": key, "address": self._address,
                                 "reason": reason.decode("utf-8", "replace")})
        return allowed, reason


@dataclass
class CurveServer:
    """The controller's CURVE keys and authorised directory; :meth:`start` runs the ZAP
    authenticator (before any socket binds), :meth:`apply` makes a socket a CURVE server."""

    secret_file: Path
    authorized_dir: Path
    public: bytes = b""
    secret: bytes = b""
    denied: deque = field(default_factory=lambda: deque(maxlen=256))
    denied_total: int = 0
    auth: ThreadAuthenticator | None = None
    names: dict = field(default_factory=dict)    # z85 key (str) -> file stem: the CURVE user ids let in
    former: dict = field(default_factory=dict)   # keys removed at a reload -> their file stem
    notices: deque = field(default_factory=lambda: deque(maxlen=64))
    reloads: int = 0
    _wake: threading.Event = field(default_factory=threading.Event)
    _reader: threading.Thread | None = None
    _closing: bool = False

    def start(self, context: zmq.Context) -> None:
        """Load the keys, start the authenticator and the key reader threads. Not real-time."""
        self.public, self.secret = load_secret(self.secret_file)
        if not Path(self.authorized_dir).is_dir():
            raise ValueError(f"{self.authorized_dir}: the authorised consoles' directory does not exist")
        self.auth = _Auth(context, self.denied)
        self.auth.start()
        self._load()
        self._closing = False
        self._reader = threading.Thread(target=self._read_on_request, name="dockstand-keys", daemon=True)
        self._reader.start()

    def _load(self) -> dict:
        keys, bad = read_authorized(self.authorized_dir)
        before = self.names
        # zmq.auth's own form: {public key: True}; one assignment each, so the ZAP thread and
        # the loop thread see the old set or the new one
        self.auth.certs[ZAP_DOMAIN] = {k: True for k in keys}
        self.auth.allow_any = False
        names = {k.decode("ascii"): v for k, v in keys.items()}
        self.former.update({k: v for k, v in before.items() if k not in names})     # revoked: named when refused
        for k in names:
            self.former.pop(k, None)
        self.names = names
        return {"authorized": sorted(names.values()),
                "added": sorted(v for k, v in names.items() if k not in before),
                "removed": sorted(v for k, v in before.items() if k not in names), "unreadable": bad}

    def reload(self) -> dict:
        """Read the authorised directory again (a console added or removed) and queue a
        ``keys_reloaded`` notice; returns it. Not real-time (the key reader thread calls it)."""
        if self.auth is None:
            return {}
        try:
            ev = {"kind": "keys_reloaded", **self._load()}
        except OSError as e:          # the directory vanished: keep the keys we have
            ev = {"kind": "keys_reloaded", "error": f"{self.authorized_dir}: {e.strerror or e}; keys unchanged",
                  "authorized": sorted(self.names.values()), "added": [], "removed": [], "unreadable": []}
        self.reloads += 1
        self.notices.append(ev)
        log.info("CURVE keys reloaded: %s", ev)
        return ev

    def request_reload(self) -> None:
        """Ask the key reader thread to reload (safe from a signal handler or the loop: sets
        an event)."""
        self._wake.set()

    def _read_on_request(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._closing:
                return
            self.reload()

    @property
    def authorized(self) -> frozenset:
        """The z85 public keys let in (not real-time: a new set)."""
        return frozenset(self.names)

    def is_authorized(self, user_id: str) -> bool:
        """Is this CURVE user id (a client's z85 public key) still authorised? (The loop: a
        dict lookup on the set swapped in by the last reload.)"""
        return user_id in self.names

    def take_notices(self, n: int = 4) -> list[dict]:
        """Up to ``n`` reload outcomes since the last call (the loop thread; no I/O)."""
        out = []
        while self.notices and len(out) < n:
            out.append(self.notices.popleft())
        return out

    def apply(self, sock: zmq.Socket) -> None:
        sock.zap_domain = ZAP_DOMAIN.encode()
        sock.curve_secretkey = self.secret
        sock.curve_publickey = self.public
        sock.curve_server = True

    def take_denied(self, n: int = 4) -> list[dict]:
        """Up to ``n`` refusals since the last call (the loop thread; no I/O)."""
        out = []
        while self.denied and len(out) < n:
            d = self.denied.popleft()
            if d["client_key"] in self.former:
                d["console"] = self.former[d["client_key"]]
            out.append(d)
        self.denied_total += len(out)
        return out

    def stop(self) -> None:
        self._closing = True
        self._wake.set()
        if self._reader is not None:
            self._reader.join(timeout=2.0)
            self._reader = None
        if self.auth is not None:
            self.auth.stop()
            self.auth = None
