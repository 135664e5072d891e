"""Driver figures, measured over real PTYs and loopback sockets.

- ``decode_frames_per_s``: StreamDecoder on a byte stream of 6-channel SENSOR_SAMPLE frames
  fed in 4 KiB reads (framing + CRC); ``decode_samples_per_s`` adds decode_sensor_frame.
- ``serial_roundtrip_us_p50/p99``: MotionPlatform.pose() on the slave of a PTY pair -> a device
  process (``python -m bench.drivers --peer serial-echo``) answers with STATUS -> the host's
  poll() sees it.
- ``zmq_roundtrip_us_p50/p99``: the same over a ZMQ PAIR on tcp://127.0.0.1.
- ``udp_rdt_samples_per_s``: an RDT device process streams 2 kHz on 127.0.0.1, the host polls
  FtSensor every 1 ms like the controller; ``udp_rdt_lost`` counts missing samples.
"""
from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
import tty
from pathlib import Path

import numpy as np

from drivers.framing import StreamDecoder
from drivers.ft_sensor import FtSensor, RdtDevice, decode_sensor_frame, encode_sensor_frame
from drivers.motion_platform import (Command, Mode, MotionPlatform, PlatformState, decode_command,
                                     encode_status)
from drivers.transport import make_transport, open_transport

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- device peer
# Run as ``python -m bench.drivers --peer MODE ARGS``: serial-echo FD (answer platform commands on
# a PTY master), zmq-echo ENDPOINT (same over a ZMQ PAIR it binds), rdt PORT RATE SECONDS (an
# ATI RDT device on 127.0.0.1). Echoes answer each command with a STATUS carrying its seq at
# once (blocking waits: the peer is the device, not the real-time host); exit on PARK, EOF or a
# 120 s guard.

LENGTHS = (1.0,) * 6


def serial_echo(fd: int) -> None:
    dec = StreamDecoder()
    seq = 0
    t_end = time.monotonic() + 120
    while time.monotonic() < t_end:
        select.select([fd], [], [], 1.0)
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        for f in dec.feed(data):
            c = decode_command(f, checked=True)
            if c is None:
                continue
            if c.command == Command.PARK:
                return
            pose = c.values if c.command == Command.POSE else (0, 0, 0, 1, 0, 0, 0)
            os.write(fd, encode_status(seq, time.monotonic_ns(), PlatformState.ENGAGED, 0, c.seq,
                                       pose, LENGTHS, Mode.POSE))
            seq += 1


def zmq_echo(endpoint: str) -> None:
    import zmq
    t = open_transport("zmq", endpoint=endpoint, role="bind")
    sock = t._sock
    seq = 0
    t_end = time.monotonic() + 120
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    print("ready", flush=True)
    while time.monotonic() < t_end:
        if not poller.poll(1000):
            continue
        for f in t.poll():
            c = decode_command(f, checked=True)
            if c is None:
                continue
            if c.command == Command.PARK:
                t.close()
                return
            pose = c.values if c.command == Command.POSE else (0, 0, 0, 1, 0, 0, 0)
            t.send(encode_status(seq, time.monotonic_ns(), PlatformState.ENGAGED, 0, c.seq,
                                 pose, LENGTHS, Mode.POSE))
            seq += 1
    t.close()


def rdt(port: int, rate: float, seconds: float) -> None:
    dev = RdtDevice(open_transport("udp", local_host="127.0.0.1", local_port=port))
    print("ready", flush=True)
    t_end = time.monotonic() + 30
    while not dev.streaming and time.monotonic() < t_end:
        select.select([dev.transport._sock], [], [], 0.05)
        dev.poll()
    period = 1.0 / rate
    n = int(round(rate * seconds))
    t0 = time.monotonic()
    sent = 0
    for k in range(n):
        deadline = t0 + k * period
        while True:
            now = time.monotonic()
            if now >= deadline:
                break
            if deadline - now > 0.0003:
                time.sleep(deadline - now - 0.0002)
        sent += dev.publish([k, -k, 2 * k, 3, 4, 5])
    print(f"sent {sent}", flush=True)
    time.sleep(0.2)
    dev.transport.close()



def _peer(args, pass_fds=()):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "bench.drivers", "--peer", *map(str, args)],
                            pass_fds=pass_fds, stdout=subprocess.PIPE, env=env, cwd=str(ROOT),
                            text=True)


def _reap(proc) -> None:
    if proc.poll() is None:
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
    if proc.stdout:
        proc.stdout.close()


def decode_rate(quick: bool) -> dict:
    n = 20000 if quick else 200000
    frames = [encode_sensor_frame(i, i * 500000, [i, -i, 3, 4, 5, 6], 0) for i in range(n)]
    data = b"".join(frames)
    chunks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    best = 0.0
    for _ in range(3):
        d = StreamDecoder()
        t = time.perf_counter()
        got = 0
        for c in chunks:
            got += len(d.feed(c))
        best = max(best, got / (time.perf_counter() - t))
        assert got == n
    d = StreamDecoder()
    t = time.perf_counter()
    for c in chunks:
        for f in d.feed(c):
            decode_sensor_frame(f, checked=True)
    full = n / (time.perf_counter() - t)
    return {"decode_frames_per_s": round(best), "decode_samples_per_s": round(full)}


def _roundtrips(mp: MotionPlatform, n: int) -> list[float]:
    out = []
    for k in range(n + 20):
        t0 = time.perf_counter_ns()
        seq = mp.pose((0.001 * k, 0.0, 1.0), (1.0, 0.0, 0.0, 0.0))
        if seq < 0:
            raise RuntimeError(f"send failed: {mp.transport.status}")
        t_end = time.monotonic() + 2.0
        while True:
            sts = mp.poll()
            if sts and sts[-1].last_cmd_seq == seq:
                break
            if time.monotonic() > t_end:
                raise RuntimeError(f"no answer to seq {seq}: {mp.transport.status}")
        if k >= 20:                                    # warm-up excluded
            out.append((time.perf_counter_ns() - t0) / 1000.0)
    return out


def _pct(x: list[float]) -> tuple[float, float]:
    a = np.asarray(x)
    return round(float(np.percentile(a, 50)), 1), round(float(np.percentile(a, 99)), 1)


def serial_roundtrip(quick: bool) -> dict:
    m, s = os.openpty()
    tty.setraw(s)
    proc = _peer(["serial-echo", m], pass_fds=(m,))
    os.close(m)
    mp = MotionPlatform(make_transport("serial", port=os.ttyname(s), baud=921600), heartbeat_s=0.0)
    try:
        mp.open()
        rt = _roundtrips(mp, 300 if quick else 3000)
        mp.park()
    finally:
        mp.close()
        _reap(proc)
        os.close(s)
    p50, p99 = _pct(rt)
    return {"serial_roundtrip_us_p50": p50, "serial_roundtrip_us_p99": p99}


def _free_port(kind=socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


def zmq_roundtrip(quick: bool) -> dict:
    ep = f"tcp://127.0.0.1:{_free_port()}"
    proc = _peer(["zmq-echo", ep])
    mp = MotionPlatform(make_transport("zmq", endpoint=ep), heartbeat_s=0.0)
    try:
        proc.stdout.readline()
        mp.open()
        t_end = time.monotonic() + 10
        while mp.engage() < 0 and time.monotonic() < t_end:
            time.sleep(0.005)
        rt = _roundtrips(mp, 300 if quick else 3000)
        mp.park()
    finally:
        mp.close()
        _reap(proc)
    p50, p99 = _pct(rt)
    return {"zmq_roundtrip_us_p50": p50, "zmq_roundtrip_us_p99": p99}


def udp_rdt(quick: bool) -> dict:
    rate, seconds = 2000.0, (1.0 if quick else 5.0)
    port = _free_port(socket.SOCK_DGRAM)
    proc = _peer(["rdt", port, rate, seconds])
    sensor = FtSensor.from_config({"protocol": "rdt", "host": "127.0.0.1", "port": port,
                                   "rerequest_s": 0.2})
    got = 0
    first = last = None
    try:
        proc.stdout.readline()
        sensor.open()
        t_end = time.monotonic() + seconds + 10
        next_tick = time.monotonic()
        while time.monotonic() < t_end:
            samples = sensor.poll()
            if samples:
                now = samples[-1].host_time
                if first is None:
                    first = now
                last = now
                got += len(samples)
            if proc.poll() is not None and not samples:
                break
            next_tick += 0.001                       # a 1 kHz host loop
            delay = next_tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        out = proc.stdout.read()
        sent = int(out.split()[-1]) if out.strip() else 0
    finally:
        sensor.close()
        _reap(proc)
    c = sensor.counters
    span = (last - first) if got > 1 else float("nan")
    return {"udp_rdt_samples_per_s": round((got - 1) / span, 1) if got > 1 else 0.0,
            "udp_rdt_rate_hz": rate, "udp_rdt_samples": got, "udp_rdt_sent": sent,
            "udp_rdt_lost": sent - got, "udp_rdt_seq_gaps": c.seq_gaps}


def run(quick: bool = False) -> dict:
    figures: dict = {}
    figures.update(decode_rate(quick))
    for name, fn in (("serial_roundtrip", serial_roundtrip), ("zmq_roundtrip", zmq_roundtrip),
                     ("udp_rdt", udp_rdt)):
        try:
            figures.update(fn(quick))
        except Exception as e:  # noqa: BLE001 - report, do not hide
            keys = {"serial_roundtrip": ["serial_roundtrip_us_p50", "serial_roundtrip_us_p99"],
                    "zmq_roundtrip": ["zmq_roundtrip_us_p50", "zmq_roundtrip_us_p99"],
                    "udp_rdt": ["udp_rdt_samples_per_s"]}[name]
            for k in keys:
                figures[k] = None
                figures[f"{k}_note"] = f"failed: {e}"
    return figures


def _main(argv: list[str]) -> None:
    if argv[:1] == ["--peer"]:
        mode, args = argv[1], argv[2:]
        if mode == "serial-echo":
            serial_echo(int(args[0]))
        elif mode == "zmq-echo":
            zmq_echo(args[0])
        elif mode == "rdt":
            rdt(int(args[0]), float(args[1]), float(args[2]))
        else:
            raise SystemExit(f"unknown peer mode {mode}")
        return
    import json
    print(json.dumps(run(quick="--quick" in argv), indent=1))


if __name__ == "__main__":
    _main(sys.argv[1:])
