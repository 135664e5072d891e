"""The transports' common part: the ``Transport`` base class (counters, frame and sequence
checks, link state, delegated checks), the errors, and the option schema every backend declares
its options in (:class:`Option`). The interface and the backends: the package's docstring.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from drivers.framing import BAD_CRC, MAX_FRAME, OK, SEQ_STATE_LEN, Counters, SeqTracker, check_frame, frame_seq

__all__ = ["Transport", "TransportError", "TransportConfigError", "Option", "COMMON_OPTIONS", "SEQ_RESET_MARK",
           "check_number", "check_string"]

SEQ_RESET_MARK = 0xFFFF   # poll_messages: a "length" that marks a sequence reset at its place


class TransportConfigError(ValueError):
    """A bad transport option. ``key`` is the option's name; str() is ``"key: reason"``."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


class TransportError(OSError):
    """A port or endpoint that cannot be opened; the message names it."""


# ----------------------------------------------------------------------------- options

def check_number(key: str, value, *, integer: bool = False, lo=None, hi=None):
    """``value`` if it is a number (an int with ``integer``; never a bool) within ``[lo, hi]``
    (either bound None: open); else TransportConfigError naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, (int, float) if not integer else int):
        raise TransportConfigError(key, f"must be {'an integer' if integer else 'a number'}, got {value!r}")
    if lo is not None and value < lo:
        raise TransportConfigError(key, f"must be >= {lo}, got {value!r}")
    if hi is not None and value > hi:
        raise TransportConfigError(key, f"must be <= {hi}, got {value!r}")
    return value


def check_string(key: str, value, choices=()):
    """``value`` if it is a non-empty string (one of ``choices`` when given); else
    TransportConfigError naming ``key``."""
    if not isinstance(value, str) or not value:
        raise TransportConfigError(key, f"must be a non-empty string, got {value!r}")
    if choices and value not in choices:
        raise TransportConfigError(key, f"must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


@dataclass(frozen=True)
class Option:
    """One option of a transport's schema (a row of ``Transport.option_schema``).

    Parameters
    ----------
    key : str
        The option's name (the keyword of ``open_transport``, the stand file's key).
    type : str
        ``"number"`` (int or float), ``"integer"``, ``"string"`` (non-empty), ``"text"`` (any
        string, empty too) or ``"flag"`` (true or false).
    default : object
        The value when the option is not given; None: no default (see ``required``).
    lo, hi : float or None
        A number's bounds, both included; None: open.
    choices : tuple of str
        A string's allowed values; empty: any.
    required : bool
        None (not given, no default) is refused with "required for transport ...", before any
        value is checked.
    optional : bool
        None is a value (not checked); a backend whose options depend on each other says which
        must go together (``Transport.check_options``).
    check : callable or None
        ``check(key, value)``, a further rule for a value that passed its type's (raises
        TransportConfigError).
    """

    key: str
    type: str
    default: Any = None
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()
    required: bool = False
    optional: bool = False
    check: Callable[[str, Any], None] | None = None

    def validate(self, value):
        """``value`` checked against this row; TransportConfigError naming the key."""
        if value is None and self.optional:
            return None
        t = self.type
        if t == "number" or t == "integer":
            check_number(self.key, value, integer=t == "integer", lo=self.lo, hi=self.hi)
        elif t == "string":
            check_string(self.key, value, self.choices)
        elif t == "text":
            if not isinstance(value, str):
                raise TransportConfigError(self.key, f"must be a string, got {value!r}")
        elif t == "flag":
            if not isinstance(value, bool):
                raise TransportConfigError(self.key, f"must be true or false, got {value!r}")
        else:
            raise ValueError(f"option {self.key!r}: unknown type {t!r}")
        if self.check is not None:
            self.check(self.key, value)
        return value


# link_timeout_s: the link is up while a frame arrived within this time; framing: None is the
# kind's default; seq_check (drop duplicates and frames from the past): None is framing == "frame"
_LINK_TIMEOUT = Option("link_timeout_s", "number", 0.25, lo=1e-4)
_FRAMING = Option("framing", "string", None, choices=("frame", "raw"))
_SEQ_CHECK = Option("seq_check", "flag", None, optional=True)
#: the options every transport takes, before its own
COMMON_OPTIONS = (_LINK_TIMEOUT, _FRAMING, _SEQ_CHECK)

_PREFIX = tuple(n.to_bytes(2, "little") for n in range(MAX_FRAME + 1))   # poll_messages' length prefixes
_RESET_PREFIX = SEQ_RESET_MARK.to_bytes(2, "little")
_SEQ_RESET = type("_SeqReset", (bytes,), {})()   # poll()'s place holder for it (an empty message)


# ----------------------------------------------------------------------------- base

class Transport:
    """Common part: counters, framing checks, sequence checks, link state.

    A backend sets ``kind`` (its name in the registry and the stand file), ``option_schema``
    (its own options, in the order they are checked and returned) and ``default_framing``,
    and overrides :meth:`check_options` only for rules across options.
    """

    kind = "?"
    option_schema: tuple[Option, ...] = ()
    default_framing = "frame"

    @classmethod
    def option_defaults(cls) -> dict:
        """Every option this kind takes (the common ones first) with its default."""
        return {o.key: o.default for o in COMMON_OPTIONS + cls.option_schema}

    @classmethod
    def validate_options(cls, options: dict) -> dict:
        """Check this kind's options; return them complete with defaults (``options`` is not
        changed). Raises TransportConfigError (ValueError) naming the key for an unknown
        option, a missing one or a bad value."""
        known = cls.option_defaults()
        for key in options:
            if key not in known:
                raise TransportConfigError(key, f"unknown option for transport {cls.kind!r}; "
                                                f"known: {', '.join(sorted(known))}")
        o = {**known, **options}
        for opt in cls.option_schema:
            if opt.required and o[opt.key] is None:
                raise TransportConfigError(opt.key, f"required for transport {cls.kind!r}")
        o["link_timeout_s"] = _LINK_TIMEOUT.validate(o["link_timeout_s"])
        o["framing"] = _FRAMING.validate(o["framing"] or cls.default_framing)
        if o["seq_check"] is None:
            o["seq_check"] = o["framing"] == "frame"
        else:
            _SEQ_CHECK.validate(o["seq_check"])
        if o["seq_check"] and o["framing"] != "frame":
            raise TransportConfigError("seq_check", "needs framing = 'frame'")
        cls.check_options(o)
        return o

    @classmethod
    def check_options(cls, o: dict) -> None:
        """This kind's own options of ``o`` (complete; the common ones checked), row by row in
        ``option_schema``'s order. A backend with rules across options overrides this and
        calls it where its rules go first or after."""
        for opt in cls.option_schema:
            opt.validate(o[opt.key])

    @classmethod
    def from_options(cls, options: dict) -> "Transport":
        """A transport of this kind from checked options, not yet opened."""
        return cls(cls.validate_options(options))


    def __init__(self, o: dict) -> None:
        self.options = o
        self.counters = Counters()
        self.framing = o["framing"]
        self.link_timeout_s = float(o["link_timeout_s"])
        self.seq_check = bool(o["seq_check"])
        self.tracker = SeqTracker(self.counters) if self.seq_check else None
        self._seq_state = None   # delegate_checks: the consumer's sequence state (SEQ_STATE_LEN)
        self.last_error: str | None = None
        self._open = False
        self._peer_ok = False   # the backend's own view of the peer (port open, connected ...)

    # -- API
    def open(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def send(self, frame: bytes) -> bool:
        raise NotImplementedError

    def poll(self) -> list[bytes]:
        raise NotImplementedError

    def wait_readable(self, timeout_s: float) -> bool:
        """Block at most ``timeout_s`` (s) until there is something to read; True if there is.
        Each backend waits on what it owns (a descriptor, a socket's poll, a queue); this
        default, for a link with nothing to wait on, naps 20 µs and says no. Not real-time:
        the lockstep gate, the emulator and tests use it (``rt.control.links.wait_readable``)."""
        time.sleep(min(timeout_s, 20e-6))
        return False

    def delegate_checks(self, seq_state) -> None:
        """From now on the consumer checks the frames (CRC, version, sequence) and keeps the
        counters of what it refuses: ``poll`` and ``poll_messages`` deliver every message
        unchecked, except where the transport must check (a serial stream is cut into
        CRC-checked frames; a listening UDP socket learns its peer from valid frames only),
        and never check sequences. ``seq_state`` (float64, SEQ_STATE_LEN) is the consumer's
        sequence-tracker state: the transport zeroes it whenever it would reset its own
        tracker. Only for ``framing="frame"``."""
        if self.framing != "frame":
            raise TransportConfigError("framing", f"checks can only be delegated with framing 'frame', "
                                                  f"not {self.framing!r}")
        if len(seq_state) != SEQ_STATE_LEN:
            raise ValueError(f"seq_state must have {SEQ_STATE_LEN} slots, not {len(seq_state)}")
        self._seq_state = seq_state
        self.tracker = None
        self._reset_seq()

    def accepted(self, n: int, now: float) -> None:
        """Delegated checks: the consumer accepted ``n`` > 0 frames (at time.monotonic ``now``):
        frames received, and the peer is there."""
        c = self.counters
        c.frames_rx += n
        c.last_rx_time = now
        if not self._peer_ok:
            self._valid_frames_seen()

    def _valid_frames_seen(self) -> None:
        """Valid frames arrived (what a backend concludes about its peer from them)."""

    def poll_messages(self) -> bytes:
        """``poll()``'s messages as one bytes object, each preceded by its length (u16 LE);
        b"" if none. With delegated checks a message longer than any frame is counted as
        malformed here (its length would not fit the prefix of a frame)."""
        out = self.poll()
        return self._join_messages(out) if out else b""

    def _join_messages(self, msgs) -> bytes:
        if len(msgs) == 1:                  # the usual cycle: one frame, nothing to join
            m = msgs[0]
            if m is not _SEQ_RESET and len(m) <= MAX_FRAME:
                return _PREFIX[len(m)] + m
        parts = []
        for m in msgs:
            if m is _SEQ_RESET:
                parts.append(_RESET_PREFIX)
                continue
            n = len(m)
            if n > MAX_FRAME:
                self.counters.malformed += 1
                continue
            parts.append(_PREFIX[n])
            parts.append(m)
        return b"".join(parts)

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def link_up(self) -> bool:
        t = self.counters.last_rx_time
        return (self._open and self._peer_ok and t is not None
                and time.monotonic() - t <= self.link_timeout_s)

    @property
    def status(self) -> str:
        if not self._open:
            return "closed"
        if not self._peer_ok:
            return f"down: {self.last_error or 'no peer'}"
        t = self.counters.last_rx_time
        if t is None:
            return "waiting for first frame"
        age = time.monotonic() - t
        return "up" if age <= self.link_timeout_s else f"stale: nothing received for {age:.3f} s"

    def describe(self) -> str:
        return self.kind

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()} {self.status}>"

    # -- helpers for subclasses
    def _reset_seq(self) -> None:
        if self.tracker is not None:
            self.tracker.reset()
        st = self._seq_state
        if st is not None:
            for i in range(SEQ_STATE_LEN):
                st[i] = 0

    def _delivered(self, n: int, now: float) -> None:
        """``n`` messages delivered: counted as received frames unless the consumer checks
        them (it reports what it accepted: :meth:`accepted`)."""
        if self._seq_state is None:
            c = self.counters
            c.frames_rx += n
            c.last_rx_time = now

    def _deliver_checked(self, frames: list, now: float) -> list:
        """Frames already CRC-checked (stream decoder): sequence check, counters."""
        tr = self.tracker
        if tr is not None:
            frames = [f for f in frames if tr.accept(frame_seq(f))]
        if frames:
            self._delivered(len(frames), now)
        return frames

    def _check_message(self, msg) -> bool:
        """One message that should be one whole frame: CRC / sequence check, counters
        (nothing with delegated checks)."""
        if self.framing == "frame" and self._seq_state is None:
            r = check_frame(msg)
            if r != OK:
                if r == BAD_CRC:
                    self.counters.crc_errors += 1
                else:
                    self.counters.malformed += 1
                return False
            if self.tracker is not None and not self.tracker.accept(frame_seq(msg)):
                return False
        return True

