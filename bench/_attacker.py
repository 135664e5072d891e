"""A hostile local process against a controller's command socket: the fixed corpus of
malformed, deep, huge, mistyped and flooding requests that ``dockstand bench``'s
``hostile_requests_survived`` and tests/rt/control/test_hostile_requests.py send mid-docking
(docs/controller.md, "Commands").

Run as its own process (``python -m bench._attacker ENDPOINT OUT.json [--flood N] [--files DIR]``):
it sends every item of :func:`corpus` from its own DEALER socket, waits for the reply (or its
absence, for what libzmq drops), then floods ``N`` requests as fast as one socket takes them,
and writes what came back to ``OUT.json``. Each item says what a correct server does with it:
``refused`` (a reply with ``ok`` false), ``answered`` (a reply), ``dropped`` (no reply: libzmq
closes the sender's connection).
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import msgpack
import zmq


def _nest(depth: int, leaf: bytes = b"\x90") -> bytes:
    """msgpack of a list nested ``depth`` deep (built as bytes: the packer itself refuses it)."""
    return b"\x91" * depth + leaf


def _map(**kv) -> bytes:
    """A msgpack map whose values are given as ready msgpack bytes (so they can be hostile)."""
    out = bytearray()
    n = len(kv)
    out += bytes([0x80 | n]) if n < 16 else b"\xde" + n.to_bytes(2, "big")
    for k, v in kv.items():
        out += msgpack.packb(k)
        out += v
    return bytes(out)


def hostile_files(d: Path) -> dict[str, str]:
    """The files a hostile ``load_case`` names: a FIFO nobody writes (opening it for reading
    blocks forever) and a 300 MB sparse file."""
    d.mkdir(parents=True, exist_ok=True)
    fifo = d / "case.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    big = d / "huge_case.toml"
    with open(big, "wb") as f:
        f.truncate(300 << 20)
    return {"fifo": str(fifo), "huge": str(big)}


def corpus(files: dict[str, str]) -> list[tuple[str, bytes, str]]:
    """(name, request bytes, what a correct server does) — see the module docstring."""
    P = msgpack.packb
    wide = {f"k{i}": i for i in range(3000)}
    return [
        ("client_nested_1000", _map(cmd=P("status"), client=_nest(1000)), "refused"),
        ("args_nested_1000", _map(cmd=P("tare"), args=_map(x=_nest(1000))), "refused"),
        ("id_nested_1000", _map(cmd=P("ping"), id=_nest(1000)), "refused"),
        ("nested_5000", _map(cmd=P("status"), client=_nest(5000)), "refused"),
        ("reason_nested_1000_unleased", _map(cmd=P("stop"), args=_map(reason=_nest(1000))), "refused"),
        ("huge_100k", P({"cmd": "status", "args": {"x": "x" * (100 << 10)}}), "dropped"),
        ("long_client_60k", P({"cmd": "status", "client": "c" * (60 << 10)}), "refused"),
        ("wide_args_3000", P({"cmd": "tare", "args": wide}), "refused"),
        ("wide_list_10000", P({"cmd": "status", "args": {"x": list(range(10000))}}), "refused"),
        ("cmd_int", P({"cmd": 5}), "refused"),
        ("cmd_nested", _map(cmd=_nest(100)), "refused"),
        ("cmd_bool", P({"cmd": True}), "refused"),
        ("cmd_long", P({"cmd": "x" * 5000}), "refused"),
        ("args_list", P({"cmd": "status", "args": [1, 2]}), "refused"),
        ("args_int_keys", P({"cmd": "status", "args": {1: 2}}), "refused"),
        ("not_a_map", P([1, 2, 3]), "refused"),
        ("a_string", P("status"), "refused"),
        ("garbage", bytes(range(256)) * 4, "refused"),
        ("truncated", P({"cmd": "status", "args": {"since": 5}})[:-3], "refused"),
        ("invalid_utf8", b"\x81\xa3cmd\xa4\xff\xfe\xfd\xfc", "refused"),
        ("ext_type", _map(cmd=P("status"), client=b"\xd4\x05\x00"), "refused"),
        ("nil", P(None), "refused"),
        ("unknown_cmd", P({"cmd": "fly"}), "refused"),
        ("unknown_arg", P({"cmd": "tare", "args": {"force": True}}), "refused"),
        ("events_since_negative", P({"cmd": "events", "args": {"since": -1}}), "refused"),
        ("events_since_text", P({"cmd": "events", "args": {"since": "all"}}), "refused"),
        ("events_since_huge", P({"cmd": "events", "args": {"since": 2 ** 64 - 1}}), "refused"),
        ("acquire_takeover_live", P({"cmd": "acquire", "args": {"takeover": True}, "client": "intruder"}), "refused"),
        ("heartbeat_not_holder", P({"cmd": "heartbeat", "client": "intruder"}), "refused"),
        ("release_not_holder", P({"cmd": "release", "client": "intruder"}), "refused"),
        ("arm_not_holder", P({"cmd": "arm"}), "refused"),
        ("stop_not_holder", P({"cmd": "stop"}), "refused"),
        ("reset_not_holder", P({"cmd": "reset"}), "refused"),
        ("load_fifo_not_holder", P({"cmd": "load_case", "args": {"case": files["fifo"]}}), "refused"),
        ("load_huge_not_holder", P({"cmd": "load_case", "args": {"case": files["huge"]}}), "refused"),
        ("load_case_number", P({"cmd": "load_case", "args": {"case": 42}}), "refused"),
        ("reload_keys_no_curve", P({"cmd": "reload_keys"}), "refused"),
        ("describe_with_args", P({"cmd": "describe", "args": {"x": 1}}), "refused"),
        ("nan_id", P({"cmd": "ping", "id": float("nan")}), "answered"),
    ]


def attack(endpoint: str, files: dict[str, str], flood: int = 10000, timeout_s: float = 3.0) -> dict:
    """Send the corpus, then the flood; return each item's outcome and the flood's figures."""
    ctx = zmq.Context()
    results = []
    try:
        for name, body, expect in corpus(files):
            s = ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.connect(endpoint)
            s.send_multipart([b"", body])
            got = None
            if s.poll(int((0.5 if expect == "dropped" else timeout_s) * 1000)):
                got = msgpack.unpackb(s.recv_multipart()[-1], raw=False)
            s.close(0)
            if got is None:
                outcome = "dropped"
            else:
                outcome = "refused" if got.get("ok") is False else "answered"
            ok = outcome == expect or (expect == "answered" and got is not None)
            results.append({"name": name, "expect": expect, "outcome": outcome, "ok": ok,
                            "reason": (got or {}).get("reason")})
        # the flood: one socket, as fast as it takes them (libzmq holds it back at the server's
        # high-water mark), replies drained as they come
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.SNDHWM, 100000)
        s.connect(endpoint)
        bodies = [msgpack.packb({"cmd": c, "id": i}) for i, c in enumerate(("ping", "status", "describe", "fly"))]
        t0 = time.monotonic()
        sent = replies = 0
        for i in range(flood):
            s.send_multipart([b"", bodies[i & 3]])
            sent += 1
            while s.poll(0):
                s.recv_multipart()
                replies += 1
        t_send = time.monotonic() - t0
        end = time.monotonic() + 10.0
        while replies < sent and time.monotonic() < end:
            if s.poll(100):
                s.recv_multipart()
                replies += 1
        s.close(0)
        return {"items": results, "flood_sent": sent, "flood_replies": replies,
                "flood_send_s": round(t_send, 3), "flood_rate_hz": round(sent / max(t_send, 1e-9), 1)}
    finally:
        ctx.term()


def main(argv: list[str]) -> int:
    endpoint, out = argv[0], Path(argv[1])
    flood = int(argv[argv.index("--flood") + 1]) if "--flood" in argv else 10000
    files = hostile_files(Path(argv[argv.index("--files") + 1]) if "--files" in argv else out.parent / "hostile")
    res = attack(endpoint, files, flood)
    out.write_text(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
