"""Operator requests as the command thread takes them: decoded, checked and made plain before
anything acts on them (docs/controller.md, "Commands").

A request is a msgpack map ``{"cmd": str, "args": map, "client": str, "id": int | str}``.
What a request may be, and what this module refuses with one line that says why (never an
exception out of :func:`parse_request`):

* the shape: a map nested at most :data:`MAX_DEPTH` deep (a request is flat: its top map and
  one map of arguments), at most :data:`MAX_ITEMS` entries in any map or array, no string over
  :data:`MAX_TEXT` characters (a case file's path is the longest thing a request carries);
* ``cmd`` a known command's name; ``client`` a name of at most :data:`MAX_CLIENT` printable
  characters (or absent: the sender's identity names it); ``id`` an integer or a short string
  (anything else is dropped, the reply goes out without it);
* ``args``: each command's own arguments (:data:`ARGUMENTS`: name, type, range); an argument
  the command does not take is refused by name.

``abort`` is never refused here: a malformed abort still aborts, its unusable reason replaced
by a note. Everything a request leaves behind (events, reasons, client names) is a bounded
plain string (:func:`plain_text`, :func:`plain_event`), so that nothing a client sends can
make a later reply or log record fail to encode.

Not real-time: the command thread runs this (rt.record.telemetry).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgpack

MAX_DEPTH = 3           # the request map (1), its args map (2), a value inside (3)
MAX_ITEMS = 32          # entries in any map or array
MAX_TEXT = 4096         # characters in any string (a case path)
MAX_CLIENT = 64         # characters of a client's name
MAX_REASON = 200        # characters of an abort's reason kept
MAX_EVENT_TEXT = 1000   # characters of any string an event keeps
MAX_EVENT_ITEMS = 256   # entries of any list or map an event keeps
MAX_EVENT_DEPTH = 4


@dataclass(frozen=True)
class Request:
    """A checked request: every field a plain, bounded value."""

    cmd: str
    args: dict
    client: str | None       # None: the sender did not name itself
    id: int | str | None


def _bool(v) -> str | None:
    return None if isinstance(v, bool) else "must be true or false"


def _text(limit: int):
    def check(v) -> str | None:
        if not isinstance(v, str):
            return f"must be a string, got {_kind(v)}"
        if not v or len(v) > limit or "\x00" in v:
            return f"must be a non-empty string of at most {limit} characters"
        return None
    return check


def _count(v) -> str | None:
    if isinstance(v, bool) or not isinstance(v, int):
        return f"must be an integer event number, got {_kind(v)}"
    if not 0 <= v < 2 ** 62:
        return "must be an event number >= 0"
    return None


#: command -> {argument: check(value) -> None or why not}; a command absent here takes none
ARGUMENTS: dict[str, dict[str, Any]] = {
    "acquire": {"takeover": _bool},
    "load_case": {"case": _text(MAX_TEXT)},
    "events": {"since": _count},
    "abort": {"reason": _text(MAX_REASON)},
}

#: arguments a command needs (the rest of ARGUMENTS' are optional)
REQUIRED: dict[str, tuple[str, ...]] = {"load_case": ("case",)}


def _kind(v) -> str:
    return {dict: "a map", list: "a list", str: "a string", bytes: "bytes", bool: "a boolean",
            int: "an integer", float: "a number", type(None): "nil"}.get(type(v), type(v).__name__)


def check_shape(obj: Any, max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS,
                max_text: int = MAX_TEXT) -> str | None:
    """Why ``obj`` is too deep, too wide or too long (None: within the limits). Iterative:
    a hostile nesting cannot exhaust the stack."""
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, (dict, list, tuple)):
            if d > max_depth:
                return f"nested deeper than {max_depth} levels"
            if len(o) > max_items:
                return f"a map or list of {len(o)} entries (at most {max_items})"
            items = list(o.keys()) + list(o.values()) if isinstance(o, dict) else o
            stack.extend((x, d + 1) for x in items)
        elif isinstance(o, (str, bytes)) and len(o) > max_text:
            return f"a string of {len(o)} characters (at most {max_text})"
    return None


def parse_request(body: bytes, known: frozenset[str] | None = None) -> Request | str:
    """``body`` as a :class:`Request`, or the reason it is refused (a string). ``known``: the
    commands this server answers (None: any name; the arguments of those in
    :data:`ARGUMENTS` are still checked)."""
    twice: list = []                     # a key a map holds twice (msgpack allows it; the last would win)

    def pairs(items):
        d = dict(items)
        if len(d) != len(items) and not twice:
            seen = set()
            for k, v in items:
                if k in seen:
                    twice.append((k, [w for x, w in items if x == k]))
                    break
                seen.add(k)
        return d
    try:
        req = msgpack.unpackb(body, raw=False, strict_map_key=True, object_pairs_hook=pairs)
    except Exception as e:  # noqa: BLE001 - not msgpack, a stack too deep, bad UTF-8: refused
        return f"not a msgpack request ({type(e).__name__})"
    why = check_shape(req)
    if not why and twice:
        key, values = twice[0]
        if key == "cmd" and "abort" in values:     # an abort is carried out however it came
            why = "a map with 'cmd' given twice"
            req = {"cmd": "abort", "client": req.get("client") if isinstance(req, dict) else None}
        else:
            return f"request has the key {plain_text(repr(key), 40)} twice (a map's keys must be unique)"
    if why:
        if isinstance(req, dict) and req.get("cmd") == "abort":    # an abort is carried out however it came
            c = req.get("client")
            ok_name = isinstance(c, str) and 0 < len(c) <= MAX_CLIENT and c.isprintable()
            return Request("abort", {"reason": f"(the abort request was {why}: its reason was not kept)"},
                           c if ok_name else None, None)
        return f"request {why}"
    if not isinstance(req, dict):
        return f"a request is a map with a string 'cmd', got {_kind(req)}"
    cmd = req.get("cmd")
    if not isinstance(cmd, str) or not cmd or len(cmd) > 32:
        return "a request is a map with a string 'cmd'"
    client = req.get("client")
    if client is not None:
        if not isinstance(client, str) or not client or len(client) > MAX_CLIENT or not client.isprintable():
            return f"'client' must be a name of at most {MAX_CLIENT} printable characters, got {_kind(client)}"
    rid = req.get("id")
    if not (rid is None or (isinstance(rid, int) and not isinstance(rid, bool) and abs(rid) < 2 ** 63)
            or (isinstance(rid, str) and len(rid) <= 64)):
        rid = None
    args = req.get("args")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return f"'args' must be a map with string keys, got {_kind(args)}"
    if known is not None and cmd not in known:
        return f"unknown command {plain_text(cmd, 32)!r}; known: {', '.join(sorted(known))}"
    if not all(isinstance(k, str) for k in args):
        return "'args' must be a map with string keys"
    if cmd == "abort":      # never refused: a reason that is not a short string is replaced
        r = args.get("reason")
        if r is not None and _text(MAX_REASON)(r) is not None:
            r = f"(the abort's reason was not a string of at most {MAX_REASON} characters: not kept)"
        return Request(cmd, {} if r is None else {"reason": r}, client, rid)
    return Request(cmd, dict(args), client, rid)


def check_arguments(req: Request) -> str | None:
    """Why ``req``'s arguments are not its command's (:data:`ARGUMENTS`), or None. Separate
    from :func:`parse_request` so that a server answers "needs the control lease" before it
    judges a leased command's arguments."""
    schema = ARGUMENTS.get(req.cmd, {})
    for k, v in req.args.items():
        check = schema.get(k)
        if check is None:
            takes = f"takes {', '.join(sorted(schema))}" if schema else "takes no arguments"
            return f"{req.cmd} {takes}, not {plain_text(k, 40)!r}"
        why = check(v)
        if why:
            return f"{req.cmd}: {k} {why}"
    for k in REQUIRED.get(req.cmd, ()):
        if k not in req.args:
            return f"{req.cmd} needs {k}"
    return None


def plain_text(v: Any, limit: int = MAX_EVENT_TEXT) -> str:
    """``v`` as a printable string of at most ``limit`` characters (never recurses into it)."""
    if isinstance(v, str):
        s = v
    elif v is None or isinstance(v, (bool, int, float)):
        s = repr(v)
    else:
        s = f"<{_kind(v)}>"
    if len(s) > limit:
        s = s[:limit - 1] + "…"
    return s


def plain_event(ev: dict) -> dict:
    """A copy of an event with only plain, bounded values: strings cut to
    :data:`MAX_EVENT_TEXT`, lists and maps to :data:`MAX_EVENT_ITEMS` entries and
    :data:`MAX_EVENT_DEPTH` levels (so the recursion is bounded), numbers as they are
    (non-finite kept: msgpack encodes them), anything else named by its type."""
    return _plain(ev, 1)


def _plain(v: Any, depth: int) -> Any:
    if v is None or isinstance(v, (bool, int, float)):
        if isinstance(v, int) and not isinstance(v, bool) and not -2 ** 63 <= v < 2 ** 64:
            return plain_text(float(v)) if math.isfinite(float(v)) else "<integer out of range>"
        return v
    if isinstance(v, str):
        return v if len(v) <= MAX_EVENT_TEXT else plain_text(v)
    if hasattr(v, "item") and hasattr(v, "dtype") and getattr(v, "ndim", 1) == 0:   # a numpy scalar
        return v.item()
    if depth >= MAX_EVENT_DEPTH:
        return f"<{_kind(v)} nested too deep>"
    if isinstance(v, dict):
        out = {}
        for k, x in list(v.items())[:MAX_EVENT_ITEMS]:
            out[k if isinstance(k, str) else plain_text(k, 64)] = _plain(x, depth + 1)
        return out
    if isinstance(v, (list, tuple)) or (hasattr(v, "tolist") and hasattr(v, "dtype")):
        seq = v.tolist() if hasattr(v, "tolist") else v
        if not isinstance(seq, list):
            return _plain(seq, depth)
        return [_plain(x, depth + 1) for x in seq[:MAX_EVENT_ITEMS]]
    return plain_text(v)
