"""Device-side peer for the real-PTY tests and the serial benchmark (run as a subprocess).

Holds the master ends of two PTYs (inherited fds): on ``--sensor-fd`` it streams framed
SENSOR_SAMPLE frames at ``--rate`` Hz with injected faults (bit flips, garbage bursts,
duplicates, a frame from the past); on ``--platform-fd`` it answers every platform command
with a STATUS frame. It uses the drivers' own device-side codecs. At the end it prints a JSON
summary of what it injected. Modes: ``stream`` (N frames after the host's ENGAGE, then run
until PARK) and ``echo`` (platform only, for round-trip timing; exits on PARK or EOF).
"""
from __future__ import annotations

import argparse
import json
import os
import select
import sys
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

from drivers.framing import HEADER_SIZE, StreamDecoder  # noqa: E402
from drivers.ft_sensor import encode_sensor_frame  # noqa: E402
from drivers.motion_platform import (Command, Mode, PlatformState, decode_command,  # noqa: E402
                                     encode_status)


def plan(n: int):
    """Which seqs get which fault (disjoint, never at the ends)."""
    corrupt, garbage, dup, back = set(), {}, set(), set()
    for s in range(20, n - 20):
        if s % 97 == 50:
            corrupt.add(s)
        elif s % 211 == 100:
            dup.add(s)
        elif s % 131 == 7:
            garbage[s] = 3 + (s * 7) % 17          # garbage bytes written before frame s
        elif s == n // 2 + 1:
            back.add(s)                             # after s, resend s - 5
    return corrupt, garbage, dup, back


class Platform:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.dec = StreamDecoder()
        self.state = PlatformState.IDLE
        self.mode = Mode.NONE
        self.pose = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
        self.lengths = (1.0,) * 6
        self.last = 0
        self.seq = 0
        self.commands = 0
        self.parked = False
        self.eof = False

    def service(self) -> None:
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            self.eof = True
            return
        if not data:
            self.eof = True
            return
        for f in self.dec.feed(data):
            c = decode_command(f, checked=True)
            if c is None:
                continue
            self.commands += 1
            k = c.command
            if k == Command.ENGAGE:
                self.state = PlatformState.ENGAGED
            elif k == Command.PARK:
                self.state = PlatformState.IDLE
                self.parked = True
            elif k == Command.FREEZE:
                self.state = PlatformState.FROZEN
            elif k == Command.E_STOP:
                self.state = PlatformState.E_STOPPED
            elif k == Command.RESET_FAULT:
                self.state = PlatformState.IDLE
            elif k == Command.POSE:
                self.pose, self.mode = c.values, Mode.POSE
            elif k == Command.LENGTHS:
                self.lengths, self.mode = c.values, Mode.LENGTHS
            if k != Command.HEARTBEAT:
                self.last = c.seq
            os.write(self.fd, encode_status(self.seq, time.monotonic_ns(), self.state, 0, self.last,
                                            self.pose, self.lengths, self.mode))
            self.seq += 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sensor-fd", type=int, default=-1)
    ap.add_argument("--platform-fd", type=int, required=True)
    ap.add_argument("--frames", type=int, default=3000)
    ap.add_argument("--rate", type=float, default=2000.0)
    ap.add_argument("--channels", type=int, default=6)
    ap.add_argument("--mode", choices=("stream", "echo", "forever"), default="stream")
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()
    os.set_blocking(a.platform_fd, False)
    plat = Platform(a.platform_fd)
    t_end = time.monotonic() + a.timeout
    if a.mode == "echo":
        while not plat.parked and not plat.eof and time.monotonic() < t_end:
            select.select([a.platform_fd], [], [], 0.5)
            plat.service()
        print(json.dumps({"commands": plat.commands}), flush=True)
        return
    while plat.state != PlatformState.ENGAGED and not plat.eof and time.monotonic() < t_end:
        select.select([a.platform_fd], [], [], 0.05)
        plat.service()
    corrupt, garbage, dup, back = plan(a.frames) if a.mode == "stream" else (set(), {}, set(), set())
    sent_frames: dict[int, bytes] = {}
    period = 1.0 / a.rate
    t0 = time.monotonic()
    s = 0
    sfd = a.sensor_fd
    n_garbage = 0
    while (a.mode == "forever" or s < a.frames) and time.monotonic() < t_end and not plat.eof:
        deadline = t0 + s * period
        wait = deadline - time.monotonic()
        if wait > 0:
            select.select([a.platform_fd], [], [], wait)
        plat.service()
        if time.monotonic() < deadline:
            continue
        counts = [(s * 13 + 1000 * k) % 200001 - 100000 for k in range(a.channels)]
        frame = encode_sensor_frame(s, time.monotonic_ns(), counts, 0)
        out = bytearray()
        if s in garbage:
            g = bytes((0x11 + 29 * (s + i)) % 256 for i in range(garbage[s]))
            g = g.replace(b"\xa5", b"\x00")
            n_garbage += len(g)
            out += g
        if s in corrupt:
            bad = bytearray(frame)
            bad[HEADER_SIZE + 5] ^= 0x10
            out += bad
        else:
            out += frame
        if s in dup:
            out += frame
        if s in back:
            out += sent_frames[s - 5]
        sent_frames[s] = frame
        sent_frames.pop(s - 10, None)
        os.write(sfd, bytes(out))
        s += 1
    while not plat.parked and not plat.eof and time.monotonic() < t_end:
        select.select([a.platform_fd], [], [], 0.05)
        plat.service()
    print(json.dumps({"sent": s, "corrupt": sorted(corrupt), "garbage_bytes": n_garbage,
                      "duplicates": len(dup), "backwards": len(back), "frame_len": len(frame),
                      "commands": plat.commands}), flush=True)


if __name__ == "__main__":
    main()
