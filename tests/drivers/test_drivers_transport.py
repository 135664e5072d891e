"""Transports and drivers over memory, real ZMQ (ipc:// and tcp://127.0.0.1) and real UDP RDT."""
from __future__ import annotations

import socket
import time

import numpy as np
import pytest

from drivers.framing import encode_frame
from drivers.ft_sensor import (FtSensor, RdtCommand, RdtDevice, SerialSensorDevice,
                               encode_sensor_frame)
from drivers.motion_platform import (Command, MotionPlatform, MotionPlatformDevice, Mode,
                                     PlatformState, encode_command)
from drivers.transport import (TransportConfigError, TransportError, make_transport, memory_pair,
                               open_transport, validate_options)


def free_port(kind=socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until(cond, timeout=5.0, step=None):
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if step:
            step()
        if cond():
            return True
        time.sleep(0.0005)
    return False


# ----------------------------------------------------------------------------- options

@pytest.mark.parametrize("kind, options, key", [
    ("carrier-pigeon", {}, "transport"),
    ("serial", {"port": "/dev/ttyS0", "baudrate": 9600}, "baudrate"),
    ("serial", {}, "port"),
    ("serial", {"port": "/dev/ttyS0", "baud": -5}, "baud"),
    ("serial", {"port": "/dev/ttyS0", "baud": "fast"}, "baud"),
    ("serial", {"port": "/dev/ttyS0", "framing": "raw"}, "framing"),
    ("zmq", {"endpoint": "http://x"}, "endpoint"),
    ("zmq", {"endpoint": "tcp://127.0.0.1:5"}, None),
    ("zmq", {"endpoint": "tcp://127.0.0.1:5", "role": "listen"}, "role"),
    ("zmq", {"endpoint": "tcp://127.0.0.1:5", "pattern": "pub"}, "pattern"),
    ("udp", {"host": "127.0.0.1"}, "port"),
    ("udp", {}, "host"),
    ("udp", {"host": "127.0.0.1", "port": 70000}, "port"),
    ("udp", {"local_port": 1, "seq_check": True}, "seq_check"),
    ("memory", {"name": "x", "link_timeout_s": 0}, "link_timeout_s"),
    ("memory", {"nam": "x"}, "nam"),
])
def test_bad_options_name_the_key(kind, options, key):
    if key is None:
        assert validate_options(kind, options)["role"] == "connect"
        return
    with pytest.raises(ValueError) as e:
        make_transport(kind, **options)
    assert isinstance(e.value, TransportConfigError) and e.value.key == key
    assert str(e.value).startswith(f"{key}: ")


def test_sensor_and_platform_config_errors_name_the_key():
    with pytest.raises(ValueError, match="^protocol: "):
        FtSensor.from_config({"transport": "udp", "host": "127.0.0.1"})
    with pytest.raises(ValueError, match="^channels: "):
        FtSensor.from_config({"protocol": "rdt", "host": "127.0.0.1", "channels": 8})
    with pytest.raises(ValueError, match="^counts_per_force: "):
        FtSensor.from_config({"protocol": "rdt", "host": "127.0.0.1", "counts_per_force": 0})
    with pytest.raises(ValueError, match="^bogus: "):
        MotionPlatform.from_config({"transport": "zmq", "endpoint": "tcp://127.0.0.1:1", "bogus": 1})
    # framed protocols over a link that would deliver unchecked messages
    with pytest.raises(ValueError, match="^framing: the motion-platform protocol"):
        MotionPlatform.from_config({"transport": "udp", "host": "127.0.0.1", "port": 9})
    with pytest.raises(ValueError, match="^framing: the serial sensor protocol"):
        FtSensor.from_config({"protocol": "serial", "transport": "zmq", "endpoint": "tcp://127.0.0.1:1",
                              "framing": "raw"})



def test_each_backend_declares_its_options_once_and_the_docs_name_them():
    """Every registered backend's schema: keys its own (none of the common ones, none twice),
    known types, defaults that pass their own row; docs/protocols.md's table row of the kind
    names every key; and validate_options returns exactly the common keys then the schema's."""
    from pathlib import Path

    from drivers.transport import COMMON_OPTIONS, KINDS, TRANSPORTS, Option
    assert KINDS == ("serial", "zmq", "udp", "memory") and tuple(TRANSPORTS) == KINDS
    common = [o.key for o in COMMON_OPTIONS]
    doc = (Path(__file__).resolve().parents[2] / "docs" / "protocols.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in doc.splitlines() if line.startswith("| ")}
    for kind, cls in TRANSPORTS.items():
        assert cls.kind == kind
        keys = [o.key for o in cls.option_schema]
        assert len(set(keys)) == len(keys) and not set(keys) & set(common), kind
        for o in cls.option_schema:
            assert isinstance(o, Option) and o.type in ("number", "integer", "string", "text", "flag"), o
            if o.default is not None:
                assert o.validate(o.default) == o.default, o
            assert f"`{o.key}`" in rows[kind], f"docs/protocols.md: the {kind} row does not name {o.key!r}"
        base = {"serial": {"port": "p"}, "zmq": {"endpoint": "inproc://x"}, "udp": {"local_port": 0},
                "memory": {"name": "n"}}[kind]
        assert list(validate_options(kind, base)) == common + keys


def test_validate_options_dispatches_to_the_registered_backend(monkeypatch):
    """A new backend is a class with its own schema and one registry entry: validate_options,
    make_transport and the unknown-kind message find it there, and its own rules apply."""
    import drivers.transport as TR
    from drivers.transport import Option, Transport

    class Carrier(Transport):
        kind = "pigeon"
        option_schema = (Option("loft", "string", required=True),
                         Option("birds", "integer", 2, lo=1, hi=12))
        default_framing = "raw"

        @classmethod
        def check_options(cls, o):
            super().check_options(o)
            if o["loft"] == "sea":
                raise TR.TransportConfigError("loft", "pigeons do not fly over the sea")

    with pytest.raises(TransportConfigError, match="^transport: unknown transport kind 'pigeon'; "
                                                   "known: serial, zmq, udp, memory$"):
        validate_options("pigeon", {})
    monkeypatch.setitem(TR.TRANSPORTS, "pigeon", Carrier)
    o = validate_options("pigeon", {"loft": "roof"})
    assert o == {"link_timeout_s": 0.25, "framing": "raw", "seq_check": False, "loft": "roof", "birds": 2}
    assert isinstance(make_transport("pigeon", loft="roof"), Carrier)
    for options, message in [({}, "loft: required for transport 'pigeon'"),
                             ({"loft": "roof", "birds": 13}, "birds: must be <= 12, got 13"),
                             ({"loft": "roof", "bird": 1}, "bird: unknown option for transport 'pigeon'; "
                                                           "known: birds, framing, link_timeout_s, loft, seq_check"),
                             ({"loft": "sea"}, "loft: pigeons do not fly over the sea")]:
        with pytest.raises(TransportConfigError) as e:
            validate_options("pigeon", options)
        assert str(e.value) == message
    with pytest.raises(TransportConfigError, match="known: serial, zmq, udp, memory, pigeon$"):
        validate_options("owl", {})


# ----------------------------------------------------------------------------- memory

def test_memory_pair_checks_crc_sequence_and_link():
    a, b = memory_pair("t-mem", link_timeout_s=0.05, capacity=4)
    try:
        assert not a.link_up and a.status == "waiting for first frame"
        f = [encode_frame(0x27, s, s) for s in range(6)]
        assert all(a.send(x) for x in f[:4]) and not a.send(f[4])      # bounded queue
        assert a.counters.tx_dropped == 1
        assert b.poll() == f[:4] and b.link_up
        b_corrupt = f[5][:-1] + bytes([f[5][-1] ^ 1])
        for x in (f[3], b_corrupt, f[5]):                                   # duplicate, corrupt, gap
            a.send(x)
        assert b.poll() == [f[5]]
        c = b.counters
        assert (c.duplicates, c.crc_errors, c.seq_gaps, c.frames_lost) == (1, 1, 1, 1)
        with pytest.raises(TransportError, match="t-mem"):
            open_transport("memory", name="t-mem")
        a.close()
        assert not b.link_up and not b.send(f[0]) and b.poll() == []
        assert "down" in b.status
    finally:
        a.close()
        b.close()


def test_platform_and_sensor_drivers_over_memory():
    a, b = memory_pair("t-drv")
    mp, dev = MotionPlatform(a, heartbeat_s=0.0), MotionPlatformDevice(b)
    assert mp.engage() == 0 and mp.pose((1, 2, 3), (1, 0, 0, 0)) == 1 and mp.lengths([1] * 6) == 2
    assert [mp.freeze(), mp.e_stop(), mp.reset_fault(), mp.park(), mp.heartbeat()] == [3, 4, 5, 6, 7]
    cmds = dev.poll()
    assert [c.command for c in cmds] == [Command.ENGAGE, Command.POSE, Command.LENGTHS, Command.FREEZE,
                                         Command.E_STOP, Command.RESET_FAULT, Command.PARK, Command.HEARTBEAT]
    assert cmds[1].values == (1, 2, 3, 1, 0, 0, 0)
    dev.send_status(PlatformState.FAULT, 4, 6, [0, 0, 1, 1, 0, 0, 0], [1.5] * 6, Mode.LENGTHS, device_time=2.5)
    st = mp.poll()[0]
    assert mp.latest_status is st and st.state == PlatformState.FAULT and st.fault == 4
    assert st.device_time == 2.5 and st.lengths.tolist() == [1.5] * 6 and mp.status_fresh
    a.close(), b.close()
    a, b = memory_pair("t-ft")
    sensor, sdev = FtSensor(a, "serial", channels=8), SerialSensorDevice(b, channels=8)
    for k in range(3):
        sdev.send_sample(list(range(k, k + 8)), status=k, device_time=0.001 * k)
    sdev.transport.send(encode_sensor_frame(3, 0, [0] * 6))                 # wrong channel count
    out = sensor.poll()
    assert [s.seq for s in out] == [0, 1, 2] and out[-1].counts.tolist() == list(range(2, 10))
    assert out[1].device_time == pytest.approx(0.001) and out[2].status == 2
    assert sensor.counters.malformed == 1 and sensor.latest is out[-1]
    a.close(), b.close()


def test_platform_heartbeat_when_idle():
    a, b = memory_pair("t-hb")
    mp, dev = MotionPlatform(a, heartbeat_s=0.01), MotionPlatformDevice(b)
    assert until(lambda: any(c.command == Command.HEARTBEAT for c in dev.poll()), 2.0, mp.poll)
    a.close(), b.close()


# ----------------------------------------------------------------------------- zmq

def _zmq_exchange(host_opts, dev_opts, n=200):
    dev = MotionPlatformDevice(open_transport("zmq", **dev_opts))
    mp = MotionPlatform.from_config({"transport": "zmq", **host_opts, "heartbeat_s": 0.0})
    mp.open()
    try:
        assert until(lambda: mp.engage() >= 0, 5.0)     # IMMEDIATE: refused until connected
        dropped_before_connect = mp.counters.tx_dropped
        for k in range(n):
            seq = mp.pose((0.01 * k, 0, 1), (1, 0, 0, 0))
            assert seq >= 0
            got = []
            assert until(lambda: got.extend(dev.poll()) or (got and got[-1].seq == seq), 5.0)
            c = got[-1]
            dev.send_status(PlatformState.ENGAGED, 0, c.seq, c.values, [1.0] * 6, Mode.POSE)
            assert until(lambda: mp.poll() and mp.latest_status.last_cmd_seq == seq, 5.0)
            assert mp.latest_status.pose[0] == 0.01 * k
        assert mp.link_up
        c = mp.counters
        assert c.crc_errors == c.seq_gaps == c.duplicates == c.tx_dropped - dropped_before_connect == 0
        # a corrupt message is counted and dropped, the link goes on (ZMQ keeps the order: the
        # garbage has been seen once the status sent after it is in)
        before = mp.statuses_rx
        dev.transport.send(b"\xa5\xc3garbage-garbage-garbage")
        dev.send_status(PlatformState.ENGAGED, 0, 0, [0] * 7, [1.0] * 6)
        assert until(lambda: mp.poll() is None or mp.statuses_rx == before + 1, 5.0)
        assert (c.malformed, c.crc_errors) == (1, 0) and mp.latest_status.last_cmd_seq == 0
        # the device vanishes: link down, no exceptions
        dev.transport.close()
        t_end = time.monotonic() + 1.0
        while time.monotonic() < t_end and mp.link_up:
            mp.poll()
            mp.pose((0, 0, 1), (1, 0, 0, 0))
            time.sleep(0.002)
        assert not mp.link_up
        for _ in range(100):
            mp.poll()
            mp.pose((0, 0, 1), (1, 0, 0, 0))
    finally:
        mp.close()
        dev.transport.close()


def test_zmq_pair_ipc(tmp_path):
    ep = f"ipc://{tmp_path}/platform.sock"
    _zmq_exchange({"endpoint": ep, "link_timeout_s": 0.1}, {"endpoint": ep, "role": "bind"})


def test_zmq_pair_tcp_loopback():
    ep = f"tcp://127.0.0.1:{free_port()}"
    _zmq_exchange({"endpoint": ep, "link_timeout_s": 0.1}, {"endpoint": ep, "role": "bind"})


def test_zmq_dealer_router_tcp_loopback():
    ep = f"tcp://127.0.0.1:{free_port()}"
    _zmq_exchange({"endpoint": ep, "pattern": "dealer", "link_timeout_s": 0.1},
                  {"endpoint": ep, "role": "bind", "pattern": "router"}, n=50)


def test_zmq_peer_down_shows_in_status_and_bad_endpoints_are_named(tmp_path):
    ep = f"tcp://127.0.0.1:{free_port()}"
    t = open_transport("zmq", endpoint=ep, link_timeout_s=0.05)      # nobody there
    try:
        assert until(lambda: t.poll() == [] and "retrying" in t.status, 3.0)
        assert ep in t.status and not t.link_up
        assert not t.send(encode_command(Command.HEARTBEAT, 0, 0)) and t.counters.tx_dropped == 1
    finally:
        t.close()
    bad = f"ipc://{tmp_path}/no/such/dir/x.sock"
    with pytest.raises(TransportError, match="no/such/dir"):
        open_transport("zmq", endpoint=bad, role="bind")
    with pytest.raises(TransportError, match="999.1.1.1"):
        open_transport("zmq", endpoint="tcp://999.1.1.1:5000", role="bind")
    ep = f"tcp://127.0.0.1:{free_port()}"
    first = open_transport("zmq", endpoint=ep, role="bind")
    try:
        with pytest.raises(TransportError, match=ep.replace(".", r"\.")):
            open_transport("zmq", endpoint=ep, role="bind")
    finally:
        first.close()


# ----------------------------------------------------------------------------- udp / RDT

@pytest.fixture
def rdt_pair():
    dev = RdtDevice(open_transport("udp", local_host="127.0.0.1", local_port=0), records_per_packet=5)
    port = dev.transport.local_address[1]
    sensor = FtSensor.from_config({"protocol": "rdt", "host": "127.0.0.1", "port": port,
                                   "counts_per_force": 1000000, "counts_per_torque": 2000000,
                                   "link_timeout_s": 0.05, "rerequest_s": 0.05})
    sensor.open()
    yield sensor, dev
    sensor.close()
    dev.transport.close()


def test_udp_rdt_2khz_zero_loss(rdt_pair):
    sensor, dev = rdt_pair
    assert until(lambda: dev.poll() or dev.streaming, 2.0)
    n, period = 1000, 0.0005
    t0 = time.monotonic()
    got = []
    for k in range(n):
        while time.monotonic() < t0 + k * period:
            got += sensor.poll()
        dev.publish([k, -k, 3 * k, 1000000, -2000000, 7])
        got += sensor.poll()
    until(lambda: got.extend(sensor.poll()) or len(got) >= n, 1.0)
    assert [s.seq for s in got] == list(range(1, n + 1))
    assert got[-1].counts.tolist() == [n - 1, 1 - n, 3 * (n - 1), 1000000, -2000000, 7]
    assert got[-1].device_time == pytest.approx(n / 7000.0)
    np.testing.assert_allclose(sensor.wrench(got[-1].counts)[3:5], [0.5, -1.0])
    c = sensor.counters
    assert c.seq_gaps == c.frames_lost == c.duplicates == c.oversize == c.malformed == 0
    assert sensor.link_up


def test_udp_rdt_bias_buffered_stop_and_bad_datagrams(rdt_pair):
    sensor, dev = rdt_pair
    until(lambda: dev.poll() or dev.streaming, 2.0)
    dev.publish([100, 200, 300, 400, 500, 600])
    assert until(lambda: sensor.poll() and sensor.latest.counts[0] == 100, 2.0)
    sensor.bias()
    assert until(lambda: dev.poll() and False or dev.bias[0] == 100, 2.0)
    dev.publish([101, 200, 300, 400, 500, 600])
    assert until(lambda: sensor.poll() and sensor.latest.counts.tolist() == [1, 0, 0, 0, 0, 0], 2.0)
    # buffered: 5 records per datagram, 12 samples asked for
    sensor.rdt_command = RdtCommand.BUFFERED
    sensor.start(sample_count=12)
    until(lambda: dev.poll() or dev.mode == RdtCommand.BUFFERED, 2.0)
    sent = sum(dev.publish([k] * 6) for k in range(20))
    assert sent == 12 and not dev.streaming
    got = []
    until(lambda: got.extend(sensor.poll()) or len(got) >= 12, 2.0)
    assert [s.seq for s in got] == list(range(1, 13)) and sensor.counters.frames_rx >= 3
    # oversized and malformed datagrams are counted and dropped
    dev.transport.send(bytes(9000))
    dev.transport.send(bytes(37))
    assert until(lambda: sensor.poll() == [] and sensor.counters.oversize == 1
                 and sensor.counters.malformed == 1, 2.0)
    sensor.stop()
    assert until(lambda: dev.poll() and False or dev.mode == RdtCommand.STOP, 2.0)


def test_udp_rdt_device_vanishes_and_returns(rdt_pair):
    sensor, dev = rdt_pair
    until(lambda: dev.poll() or dev.streaming, 2.0)
    dev.publish([1] * 6)
    assert until(lambda: sensor.poll() and sensor.link_up, 2.0)
    port = dev.transport.local_address[1]
    dev.transport.close()
    t_end = time.monotonic() + 0.4
    while time.monotonic() < t_end:               # re-requests hit a closed port: no exceptions
        sensor.poll()
        time.sleep(0.002)
    assert not sensor.link_up
    assert "refused" in sensor.transport.status or "stale" in sensor.transport.status
    dev2 = RdtDevice(open_transport("udp", local_host="127.0.0.1", local_port=port))
    try:
        # the driver re-asks for streaming; the new device's stream restarts at rdt_sequence 1
        assert until(lambda: sensor.poll() or dev2.poll() or dev2.streaming, 3.0)
        for k in range(5):
            dev2.publish([k] * 6)
        got = []
        assert until(lambda: got.extend(sensor.poll()) or len(got) >= 5, 2.0)
        assert got[0].seq == 1 and sensor.link_up
    finally:
        dev2.transport.close()


def test_udp_bad_host_and_busy_port_are_named():
    with pytest.raises(TransportError, match="no-such-host.invalid"):
        open_transport("udp", host="no-such-host.invalid", port=49152)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(TransportError, match=str(port)):
            open_transport("udp", local_host="127.0.0.1", local_port=port)


def test_zmq_router_serves_one_peer_refuses_and_names_another_then_releases_a_silent_one(tmp_path):
    """The device end (ROUTER) serves the first DEALER that speaks; a second one's frames are
    refused, counted and answered with BUSY, which it shows as its link error; a served peer
    silent for peer_timeout_s is released and the next one taken. A sensor-like DEALER that
    never sends keeps its device with hellos."""
    ep = f"ipc://{tmp_path}/dev.sock"
    dev = open_transport("zmq", endpoint=ep, role="bind", pattern="router", peer_timeout_s=0.3)
    a = open_transport("zmq", endpoint=ep, pattern="dealer", hello_s=0.05)
    b = open_transport("zmq", endpoint=ep, pattern="dealer", hello_s=0.05)
    refused = []
    dev.on_refused = refused.append
    try:
        seq = iter(range(1, 10 ** 6))

        def frame():
            return encode_command(Command.HEARTBEAT, next(seq), 0)
        assert until(lambda: a.poll() == [] and dev.poll() == [] and dev._ident is not None, 3.0)  # a's hello
        assert until(lambda: dev.send(frame()) and len(a.poll()) > 0, 3.0)      # the device answers a
        t_end = time.monotonic() + 0.6                 # b speaks while a keeps saying hello
        while time.monotonic() < t_end:
            b.send(frame())
            a.poll()
            b.poll()
            assert dev.poll() == []                    # hellos are not frames; b's frames are refused
            time.sleep(0.01)
        assert dev.counters.peers_refused >= 10 and dev.counters.frames_rx == 0
        assert len(refused) == 1 and "serves another peer" in refused[0] and dev.refused_peer
        assert b.counters.refused_by_device >= 1 and "device busy" in b.status and not b.link_up
        dev.send(frame())
        assert until(lambda: len(a.poll()) > 0, 2.0)   # still a's device
        a.close()                                      # a goes away: after the timeout b is served
        assert until(lambda: (b.send(frame()), b.poll(), dev.poll())[2] != [], 3.0)
        assert dev.counters.frames_rx >= 1
    finally:
        for t in (a, b, dev):
            t.close()
