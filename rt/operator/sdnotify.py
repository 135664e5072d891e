"""systemd notify protocol with the standard library only (sd_notify(3)).

``notify("READY=1")`` sends one datagram to ``$NOTIFY_SOCKET`` (a filesystem path, or an
abstract-namespace name written with a leading ``@``). Without ``$NOTIFY_SOCKET`` (not run by
systemd) every call is a cheap no-op returning False. Never raises: a failed send returns False.

    ready()            READY=1 (Type=notify: the unit is started)
    watchdog()         WATCHDOG=1 (send at least every watchdog_interval_s() / 2)
    status("RUNNING")  STATUS=... (shown by systemctl status)
    stopping()         STOPPING=1
"""
from __future__ import annotations

import os
import socket


class Notifier:
    def __init__(self, address: str | None = None):
        addr = os.environ.get("NOTIFY_SOCKET") if address is None else address
        self.address = None
        if addr:
            self.address = "\0" + addr[1:] if addr.startswith("@") else addr
        self._sock = None
        self.errors = 0

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, message: str) -> bool:
        if self.address is None:
            return False
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._sock.setblocking(False)
            self._sock.sendto(message.encode(), self.address)
            return True
        except OSError:
            self.errors += 1
            return False

    def ready(self) -> bool:
        return self.notify("READY=1")

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def status(self, text: str) -> bool:
        return self.notify("STATUS=" + text.replace("\n", " "))

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def watchdog_interval_s() -> float | None:
    """``$WATCHDOG_USEC`` in seconds if the watchdog is meant for this process, else None."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        v = int(usec)
    except ValueError:
        return None
    return v / 1e6 if v > 0 else None


_default: Notifier | None = None


def notify(message: str) -> bool:
    """Module-level convenience over a process-wide :class:`Notifier`."""
    global _default
    if _default is None:
        _default = Notifier()
    return _default.notify(message)
