"""Fuzz every decoder of drivers/: ``python -m bench.fuzz_decoders --frames 1000000``.

Each tested frame is a genuine frame (sensor 6/8 channels, every platform command, STATUS,
RDT records and requests) mutated one way: bit flips, byte changes, truncation, extension,
a length field changed (with or without a recomputed CRC), two frames spliced, or pure
random bytes. Every decoder sees it:

- ``StreamDecoder.feed`` (followed by a genuine sentinel frame, split at a random point);
- ``check_frame``;
- ``decode_sensor_frame``, ``decode_command``, ``decode_status`` (CRC-checked and
  ``checked=True`` variants), ``decode_rdt_records``, ``decode_rdt_request``.

``crashes`` counts exceptions. ``false_accepts`` counts outputs that are not genuine: a frame
out of the stream decoder or passed by ``check_frame`` that is not byte-identical to a frame
that was really sent, or a decoded message whose re-encoding is not the input bytes (the
decoder invented or dropped information). Prints ``crashes``, ``false_accepts``,
``frames_tested`` (and a breakdown) and exits non-zero if either count is not zero.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import struct
import sys
import time
import traceback
import zlib

if not __package__:
    # Run as a script (``python bench/fuzz_decoders.py``): Python puts bench/ first on sys.path,
    # where bench/drivers.py would shadow the drivers package. Use the repository root instead.
    _BENCH = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _BENCH]
    sys.path.insert(0, os.path.dirname(_BENCH))

from drivers.framing import OK, StreamDecoder, check_frame
from drivers.ft_sensor import (decode_rdt_records, decode_rdt_request, decode_sensor_frame,
                               encode_rdt_records, encode_rdt_request, encode_sensor_frame)
from drivers.motion_platform import (Command, decode_command, decode_status, encode_command,
                                     encode_status)

RECRC = ("length_recrc", "payload_recrc")   # well-framed on purpose: the codecs must refuse them
MUTATIONS = ("flip", "bytes", "truncate", "extend", "length", "length_recrc", "payload_recrc",
             "splice", "random")


def genuine(rnd: random.Random) -> tuple[str, bytes]:
    k = rnd.randrange(6)
    seq = rnd.getrandbits(32)
    t = rnd.getrandbits(64)
    if k == 0:
        n = rnd.choice((6, 8))
        return "sensor", encode_sensor_frame(seq, t, [rnd.randint(-2**31, 2**31 - 1) for _ in range(n)],
                                             rnd.getrandbits(32))
    if k == 1:
        c = rnd.choice(list(Command))
        vals = None
        if c == Command.POSE:
            vals = [rnd.uniform(-2, 2) for _ in range(7)]
        elif c == Command.LENGTHS:
            vals = [rnd.uniform(0.5, 2) for _ in range(6)]
        return "command", encode_command(c, seq, t, vals)
    if k == 2:
        return "status", encode_status(seq, t, rnd.randrange(5), rnd.getrandbits(16), rnd.getrandbits(32),
                                       [rnd.uniform(-2, 2) for _ in range(7)],
                                       [rnd.uniform(0.5, 2) for _ in range(6)], rnd.randrange(3),
                                       rnd.getrandbits(32))
    if k == 3:
        recs = [(rnd.getrandbits(32), rnd.getrandbits(32), rnd.getrandbits(32),
                 [rnd.randint(-2**31, 2**31 - 1) for _ in range(6)]) for _ in range(rnd.randint(1, 4))]
        return "rdt", encode_rdt_records(recs)
    if k == 4:
        return "rdt_request", encode_rdt_request(rnd.choice((0, 2, 3, 0x42)), rnd.getrandbits(32))
    return "command", encode_command(Command.HEARTBEAT, seq, t)


def _recrc(b: bytearray) -> None:
    if len(b) >= 8:
        b[-4:] = struct.pack("<I", zlib.crc32(bytes(b[2:-4])))


def mutate(rnd: random.Random, f: bytes, other: bytes, how: str) -> bytes:
    b = bytearray(f)
    if how == "flip":
        for _ in range(rnd.randint(1, 8)):
            i = rnd.randrange(8 * len(b))
            b[i // 8] ^= 1 << (i % 8)
    elif how == "bytes":
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(len(b))] = rnd.getrandbits(8)
    elif how == "truncate":
        del b[rnd.randrange(len(b)):]
    elif how == "extend":
        b += bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 40)))
    elif how in ("length", "length_recrc"):
        if len(b) > 4:
            n = rnd.randrange(256)
            b[2], b[3] = n, n ^ 0xFF
            if how == "length_recrc":
                _recrc(b)
    elif how == "payload_recrc":            # a well-framed frame with a wrong payload length
        if len(b) > 22:
            cut = rnd.randint(1, min(16, len(b) - 22))
            del b[-4 - cut:-4]
            n = b[2] - cut
            b[2], b[3] = n & 0xFF, (n & 0xFF) ^ 0xFF
            _recrc(b)
    elif how == "splice":
        i, j = rnd.randrange(len(b)), rnd.randrange(len(other))
        b = b[:i] + other[j:]
    else:
        b = bytearray(rnd.getrandbits(8) for _ in range(rnd.randint(0, 300)))
    return bytes(b)


def _same(decoded, encode) -> bool:
    try:
        return encode(decoded)
    except Exception:  # noqa: BLE001 - an un-re-encodable result is not the input
        return False


def fuzz(frames: int, seed: int = 1, decoders: dict | None = None) -> dict:
    """Run ``frames`` mutated frames through every decoder; returns the counts."""
    rnd = random.Random(seed)
    dec = {
        "stream": lambda data: StreamDecoder().feed(data),
        "check_frame": check_frame,
        "sensor": decode_sensor_frame,
        "command": decode_command,
        "status": decode_status,
        "rdt_records": decode_rdt_records,
        "rdt_request": decode_rdt_request,
    }
    if decoders:
        dec.update(decoders)
    crashes = 0
    false_accepts = 0
    by: dict[str, int] = {}
    first_error = None
    sentinel = encode_command(Command.HEARTBEAT, 1, 2)
    _, other = genuine(rnd)
    for i in range(frames):
        kind, f = genuine(rnd)
        how = MUTATIONS[i % len(MUTATIONS)]
        m = mutate(rnd, f, other, how)
        sent = {f, other, sentinel}
        other = f
        for name in dec:
            try:
                if name == "stream":
                    data = m + sentinel
                    cut = rnd.randrange(len(data) + 1)
                    if decoders and "stream" in decoders:
                        out = dec[name](data)
                    else:
                        d = StreamDecoder()
                        out = d.feed(data[:cut]) + d.feed(data[cut:]) + d.feed(bytes(300))
                    allowed = sent | ({m} if how in RECRC else set())
                    bad = [o for o in out if o not in allowed]
                    if bad:
                        false_accepts += len(bad)
                        by[f"{name}:{how}"] = by.get(f"{name}:{how}", 0) + len(bad)
                    continue
                if name == "check_frame":
                    ok = dec[name](m) == OK
                    bad = ok and m not in sent and how not in RECRC
                elif name in ("sensor", "command", "status"):
                    enc = {"sensor": lambda s: encode_sensor_frame(s.seq, s.time_ns, list(s.counts), s.status),
                           "command": lambda c: encode_command(c.command, c.seq, c.host_time_ns, c.values),
                           "status": lambda s: encode_status(s.seq, round(s.device_time * 1e9), s.state, s.fault,
                                                             s.last_cmd_seq, s.pose, s.lengths, s.mode, s.inputs)}[name]
                    bad = False
                    dec[name](m, checked=True)      # trusts the transport's CRC: must not raise
                    r = dec[name](m)
                    if r is not None:
                        re = _same(r, enc)
                        bad = (re != m and not (name == "status" and re and _status_time_only(re, m))) \
                            or (m not in sent and how not in RECRC)
                elif name == "rdt_records":
                    r = dec[name](m)
                    bad = r is not None and encode_rdt_records(r) != m
                else:
                    r = dec[name](m)
                    bad = r is not None and encode_rdt_request(*r) != m
                if bad:
                    false_accepts += 1
                    by[f"{name}:{how}"] = by.get(f"{name}:{how}", 0) + 1
            except Exception:  # noqa: BLE001 - that is what we count
                crashes += 1
                by[f"crash:{name}:{how}"] = by.get(f"crash:{name}:{how}", 0) + 1
                if first_error is None:
                    first_error = traceback.format_exc()
    return {"crashes": crashes, "false_accepts": false_accepts, "frames_tested": frames,
            "breakdown": by, "first_error": first_error}


def _status_time_only(re: bytes, m: bytes) -> bool:
    """STATUS carries device time as float seconds after decoding: a time_ns beyond 2**53 ns
    may not survive the float; compare everything but the time field then."""
    return len(re) == len(m) and re[:10] == m[:10] and re[18:-4] == m[18:-4]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    r = fuzz(a.frames, a.seed)
    r["seconds"] = round(time.perf_counter() - t0, 2)
    err = r.pop("first_error")
    if a.json:
        print(json.dumps(r))
    else:
        for k in ("crashes", "false_accepts", "frames_tested", "seconds"):
            print(f"{k}: {r[k]}")
        if r["breakdown"]:
            print("breakdown:", r["breakdown"])
    if err:
        print(err, file=sys.stderr)
    return 0 if r["crashes"] == 0 and r["false_accepts"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
