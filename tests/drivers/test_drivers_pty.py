"""Real serial: PTY pairs, pyserial on the slave paths, a device-side subprocess on the masters
streaming sensor frames at 2 kHz with injected faults and answering platform commands."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tty
from pathlib import Path

import numpy as np
import pytest

from drivers.ft_sensor import FtSensor
from drivers.motion_platform import MotionPlatform, Mode, PlatformState

PEER = Path(__file__).with_name("pty_peer.py")
ROOT = Path(__file__).resolve().parents[2]


class Peer:
    """Two PTY pairs and the device subprocess; always reaped by PID."""

    def __init__(self, *args: str) -> None:
        self.sm, self.ss = os.openpty()
        self.pm, self.ps = os.openpty()
        for fd in (self.ss, self.ps):
            tty.setraw(fd)          # before the peer writes: no echo, no line discipline
        self.sensor_path = os.ttyname(self.ss)
        self.platform_path = os.ttyname(self.ps)
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, str(PEER), "--sensor-fd", str(self.sm), "--platform-fd", str(self.pm), *args],
            pass_fds=(self.sm, self.pm), stdout=subprocess.PIPE, env=env)
        os.close(self.sm)
        os.close(self.pm)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        if self.proc.stdout:
            self.proc.stdout.close()
        for fd in (self.ss, self.ps):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
def peer_factory():
    peers = []

    def make(*args):
        p = Peer(*args)
        peers.append(p)
        return p

    yield make
    for p in peers:
        p.stop()


def _wait_state(platform, state, timeout=10.0):
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        platform.poll()
        s = platform.latest_status
        if s is not None and s.state == state:
            return s
        time.sleep(0.001)
    raise AssertionError(f"platform never reported {state!r}; latest {platform.latest_status}")


@pytest.mark.parametrize("channels", [6, 8])
def test_pty_stream_2khz_every_frame_and_exact_fault_counts(peer_factory, channels):
    n = 3000 if channels == 6 else 1200
    peer = peer_factory("--frames", str(n), "--rate", "2000", "--channels", str(channels))
    sensor = FtSensor.from_config({"protocol": "serial", "transport": "serial", "port": peer.sensor_path,
                                   "baud": 921600, "channels": channels})
    platform = MotionPlatform.from_config({"transport": "serial", "port": peer.platform_path,
                                           "baud": 921600})
    sensor.open()
    platform.open()
    try:
        assert platform.engage() == 0
        _wait_state(platform, PlatformState.ENGAGED)
        seqs, dev_times = [], []
        sent_poses = {}
        answered = {}
        t_end = time.monotonic() + 20.0
        next_cmd = time.monotonic()
        k = 0
        while time.monotonic() < t_end:
            for s in sensor.poll():
                seqs.append(s.seq)
                dev_times.append(s.device_time)
                assert s.counts.dtype == np.int32 and len(s.counts) == channels
                assert s.counts[0] == (s.seq * 13) % 200001 - 100000
            for st in platform.poll():
                answered[st.last_cmd_seq] = st
            if time.monotonic() >= next_cmd:
                p, q = (0.001 * k, -0.002 * k, 1.0 + 1e-6 * k), (1.0, 0.0, 0.0, 0.0)
                seq = platform.pose(p, q)
                assert seq >= 0
                sent_poses[seq] = (*p, *q)
                k += 1
                next_cmd += 0.005
            if seqs and seqs[-1] == n - 1:
                break
            time.sleep(0.0002)
        assert seqs and seqs[-1] == n - 1, f"stream incomplete: last seq {seqs[-1] if seqs else None}"
        # let the last commands be answered, then park
        t_wait = time.monotonic() + 5.0
        while max(sent_poses) not in answered and time.monotonic() < t_wait:
            for st in platform.poll():
                answered[st.last_cmd_seq] = st
            time.sleep(0.0005)
        platform.park()
        _wait_state(platform, PlatformState.IDLE)
        out, _ = peer.proc.communicate(timeout=10)
        summary = json.loads(out)
    finally:
        sensor.close()
        platform.close()

    corrupt = set(summary["corrupt"])
    assert summary["sent"] == n
    assert len(corrupt) >= 2 and summary["duplicates"] >= 1 and summary["backwards"] == 1
    # every good frame, in order, exactly once
    assert seqs == [s for s in range(n) if s not in corrupt]
    assert all(b >= a for a, b in zip(dev_times, dev_times[1:]))
    c = sensor.counters
    assert c.crc_errors == len(corrupt)
    assert c.seq_gaps == len(corrupt) and c.frames_lost == len(corrupt)
    assert c.duplicates == summary["duplicates"]
    assert c.seq_backwards == summary["backwards"]
    assert c.bytes_discarded == summary["garbage_bytes"] + len(corrupt) * summary["frame_len"]
    assert c.malformed == 0 and c.seq_restarts == 0
    assert c.frames_rx == n - len(corrupt)
    # every POSE answered with its own values echoed
    assert set(sent_poses) <= set(answered)
    for seq, values in sent_poses.items():
        st = answered[seq]
        assert st.mode == Mode.POSE
        np.testing.assert_array_equal(st.pose, values)
    pc = platform.counters
    assert pc.crc_errors == 0 and pc.seq_gaps == 0 and pc.duplicates == 0


def test_pty_peer_vanishes_link_down_no_exceptions(peer_factory):
    peer = peer_factory("--mode", "forever", "--rate", "1000")
    sensor = FtSensor.from_config({"protocol": "serial", "transport": "serial", "port": peer.sensor_path,
                                   "link_timeout_s": 0.05, "reopen_interval_s": 0.05})
    platform = MotionPlatform.from_config({"transport": "serial", "port": peer.platform_path,
                                           "link_timeout_s": 0.05, "heartbeat_s": 0.01})
    with sensor, platform:
        platform.engage()
        _wait_state(platform, PlatformState.ENGAGED)
        got = 0
        t_end = time.monotonic() + 5
        while got < 50 and time.monotonic() < t_end:
            got += len(sensor.poll())
            platform.poll()
            time.sleep(0.001)
        assert got >= 50 and sensor.link_up and platform.link_up
        os.kill(peer.proc.pid, signal.SIGKILL)
        peer.proc.wait(timeout=10)
        t_end = time.monotonic() + 0.5
        while time.monotonic() < t_end:          # polling and sending go on without raising
            sensor.poll()
            platform.poll()
            platform.pose((0, 0, 1), (1, 0, 0, 0))
            time.sleep(0.001)
        assert not sensor.link_up and not platform.link_up
        assert not platform.status_fresh
        assert peer.sensor_path in sensor.transport.status or "stale" in sensor.transport.status


def test_missing_serial_port_error_names_it(tmp_path):
    from drivers.transport import TransportError, open_transport
    port = str(tmp_path / "ttyNOPE0")
    with pytest.raises(TransportError, match="ttyNOPE0"):
        open_transport("serial", port=port, baud=115200)
    sensor = FtSensor.from_config({"protocol": "serial", "port": port})
    with pytest.raises(TransportError, match="ttyNOPE0"):
        sensor.open()


def test_serial_send_never_blocks_and_drops_whole_frames_when_nobody_reads():
    from drivers.framing import StreamDecoder
    from drivers.motion_platform import Command, encode_command
    from drivers.transport import open_transport
    m, s = os.openpty()
    tty.setraw(s)
    t = open_transport("serial", port=os.ttyname(s), max_tx_buffer=4096)
    try:
        frames = [encode_command(Command.POSE, k, k, (k, 0, 1, 1, 0, 0, 0)) for k in range(5000)]
        t0 = time.monotonic()
        ok = [t.send(f) for f in frames]
        assert time.monotonic() - t0 < 2.0                 # 390 kB into a ~4 kB PTY: no blocking
        assert t.tx_pending <= 4096 and t.counters.tx_dropped == ok.count(False) > 0
        # what did go out is whole frames, in order, nothing partial
        os.set_blocking(m, False)
        d = StreamDecoder()
        got = []
        t_end = time.monotonic() + 5
        while time.monotonic() < t_end:
            try:
                got += d.feed(os.read(m, 65536))
            except BlockingIOError:
                t.poll()                                    # flushes the pending tail
                if not t.tx_pending:
                    try:
                        got += d.feed(os.read(m, 65536))
                    except BlockingIOError:
                        break
        sent = [f for f, k in zip(frames, ok) if k]
        assert got == sent and d.counters.bytes_discarded == 0
    finally:
        t.close()
        os.close(m)
        os.close(s)
