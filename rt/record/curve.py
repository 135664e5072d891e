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

Nothing here may be called in the real-time loop except :meth:`CurveServer.take_denied`
(a bounded deque pop, no I/O).
"""
from __future__ import annotations

import logging
import os
import shutil
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


def load_secret(path: str | Path) -> tuple[bytes, bytes]:
    """(public, secret) z85 keys of a ``.key_secret`` file; ValueError says why not."""
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

    def start(self, context: zmq.Context) -> None:
        """Load the keys, start the authenticator thread. Not real-time."""
        self.public, self.secret = load_secret(self.secret_file)
        if not Path(self.authorized_dir).is_dir():
            raise ValueError(f"{self.authorized_dir}: the authorised consoles' directory does not exist")
        self.auth = _Auth(context, self.denied)
        self.auth.start()
        self.auth.configure_curve(domain=ZAP_DOMAIN, location=str(self.authorized_dir))

    def reload(self) -> None:
        """Read the authorised directory again (a console added or removed). Not real-time."""
        if self.auth is not None:
            self.auth.configure_curve(domain=ZAP_DOMAIN, location=str(self.authorized_dir))

    def apply(self, sock: zmq.Socket) -> None:
        sock.zap_domain = ZAP_DOMAIN.encode()
        sock.curve_secretkey = self.secret
        sock.curve_publickey = self.public
        sock.curve_server = True

    def take_denied(self, n: int = 4) -> list[dict]:
        """Up to ``n`` refusals since the last call (the loop thread; no I/O)."""
        out = []
        while self.denied and len(out) < n:
            out.append(self.denied.popleft())
        self.denied_total += len(out)
        return out

    def stop(self) -> None:
        if self.auth is not None:
            self.auth.stop()
            self.auth = None
