"""CURVE on the telemetry PUB and command ROUTER, over real tcp://127.0.0.1 sockets: keys made
by ``dockstand keys init``, an authorised console sees telemetry and gets answers, an unknown
key gets neither and its attempt becomes an ``auth_denied`` event; nothing binds beyond
loopback without keys (the server, ``check-config`` and ``dockstand run`` refuse it)."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import numpy as np
import pytest
import zmq
import zmq.auth

from rt.config import ConfigError
from rt.config.stand import endpoint_is_local, load_stand
from rt.record.curve import CurveServer, client_keys, init_keys
from rt.record.telemetry import CommandClient, TelemetryServer, decode_state

REPO = Path(__file__).resolve().parents[3]
ANY = "tcp://127.0.0.1:*"
FIELDS = {"t": 1, "wrench_P": 6}


def test_keys_init_layout_and_modes(tmp_path):
    r = subprocess.run([sys.executable, "-m", "rt.cli", "keys", "init", str(tmp_path / "k"), "--console", "alice",
                        "--console", "bob"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 0, r.stderr
    k = tmp_path / "k"
    assert "server_secret_key" in r.stdout and str(k / "server" / "server.key_secret") in r.stdout
    for f in ("server/server.key", "server/server.key_secret", "consoles/alice.key_secret", "authorized/alice.key",
              "authorized/bob.key"):
        assert (k / f).is_file(), f
    for f in ("server/server.key_secret", "consoles/alice.key_secret"):
        assert stat.S_IMODE(os.stat(k / f).st_mode) == 0o600
    before = (k / "server" / "server.key_secret").read_bytes()
    again = init_keys(k, ["carol"])       # a second call keeps the server's pair, adds a console
    assert (k / "server" / "server.key_secret").read_bytes() == before
    assert str(k / "server" / "server.key_secret") in again["kept"] and (k / "authorized" / "carol.key").is_file()


def _pair(tmp_path, name):
    pub, sec = zmq.auth.create_certificates(tmp_path, name)
    return sec


def _wait(pred, tel, timeout=5.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        tel.poll()
        v = pred()
        if v:
            return v
        time.sleep(0.005)
    return None


def test_authorised_key_works_unknown_key_gets_nothing(tmp_path):
    keys = init_keys(tmp_path / "keys", ["alice"])
    stranger = _pair(tmp_path, "mallory")       # a valid key pair the controller does not know
    ctx = zmq.Context()
    curve = CurveServer(Path(keys["server_secret_key"]), Path(keys["authorized_consoles_dir"]))
    tel = TelemetryServer(FIELDS, pub_endpoint=ANY, cmd_endpoint=ANY, decimation=1, sndhwm=100, context=ctx,
                          curve=curve, handler=lambda c, a, who: {"ok": True, "reason": None, "state": "IDLE"},
                          commands=("status",))
    try:
        good = client_keys(tmp_path / "keys" / "consoles" / "alice.key_secret", keys["server_public_key"])
        bad = client_keys(stranger, keys["server_public_key"])
        subs = {}
        for name, k in (("good", good), ("bad", bad)):
            s = ctx.socket(zmq.SUB)
            s.setsockopt(zmq.LINGER, 0)
            k.apply(s)
            s.setsockopt(zmq.SUBSCRIBE, b"")
            s.connect(tel.pub_endpoint)
            subs[name] = s
        plain = ctx.socket(zmq.SUB)              # no CURVE at all: the handshake fails
        plain.setsockopt(zmq.LINGER, 0)
        plain.setsockopt(zmq.SUBSCRIBE, b"")
        plain.connect(tel.pub_endpoint)
        a = CommandClient(tel.cmd_endpoint, name="alice", context=ctx, keys=good)
        m = CommandClient(tel.cmd_endpoint, name="mallory", context=ctx, keys=bad)
        row = np.arange(7, dtype=float)
        got = {"good": [], "bad": [], "plain": []}
        t0 = time.monotonic()
        k = 0
        while time.monotonic() - t0 < 1.5:
            tel.publish(k, k, 0, row)
            k += 1
            tel.poll()
            for name, s in (*subs.items(), ("plain", plain)):
                while s.poll(0):
                    got[name].append(s.recv_multipart())
            time.sleep(0.002)
        states = [f for f in got["good"] if f[0] == b"state"]
        assert states and decode_state(states[-1], FIELDS)["wrench_P"].tolist() == [1, 2, 3, 4, 5, 6]
        assert got["bad"] == [] and got["plain"] == []
        m.timeout_ms = 200
        m.sock.setsockopt(zmq.SNDTIMEO, 200)
        try:
            m.send("status")
        except TimeoutError:
            pass                                                    # refused before the send
        assert _wait(lambda: m.sock.poll(0), tel, 1.0) is None      # no answer, ever
        rid = a.send("describe")
        d = _wait(lambda: a.sock.poll(0) and a.recv(), tel)
        assert d["id"] == rid and d["curve"] is True and d["auth_denied"] >= 2, d
        # each refusal was published as an event to the authorised console, naming the key
        t0 = time.monotonic()
        while time.monotonic() - t0 < 0.5:
            tel.poll()
            while subs["good"].poll(10):
                got["good"].append(subs["good"].recv_multipart())
        events = [msgpack.unpackb(f[1]) for f in got["good"] if f[0] == b"event"]
        mallory_pub = zmq.auth.load_certificate(stranger)[0].decode()
        assert any(e["kind"] == "auth_denied" and e["client_key"] == mallory_pub for e in events), events
        assert got["bad"] == [] and not m.sock.poll(0)
        for s in (*subs.values(), plain):
            s.close(0)
        a.close()
        m.close()
    finally:
        tel.close()
        ctx.destroy(linger=0)


@pytest.mark.parametrize("ep,local", [("tcp://127.0.0.1:5560", True), ("tcp://localhost:1", True),
                                      ("tcp://[::1]:5", True), ("ipc:///run/x", True), ("tcp://0.0.0.0:5560", False),
                                      ("tcp://*:5560", False), ("tcp://eth0:5560", False),
                                      ("tcp://192.168.1.4:5560", False)])
def test_endpoint_is_local(ep, local):
    assert endpoint_is_local(ep) is local


def test_no_bind_beyond_loopback_without_curve(tmp_path):
    with pytest.raises(ValueError, match=r"server_secret_key"):
        TelemetryServer(FIELDS, pub_endpoint="tcp://0.0.0.0:*", cmd_endpoint=ANY)
    text = (REPO / "config" / "stand.toml").read_text().replace("tcp://127.0.0.1:5560", "tcp://0.0.0.0:5560")
    stand = tmp_path / "stand.toml"
    stand.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_stand(stand)
    assert e.value.key == "telemetry.server_secret_key" and "0.0.0.0" in e.value.reason
    r = subprocess.run([sys.executable, "-m", "rt.cli", "check-config", str(stand)], capture_output=True, text=True,
                       cwd=REPO, timeout=60)
    assert r.returncode == 1 and f"{stand}: telemetry.server_secret_key: required" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "rt.cli", "run", "--stand", str(stand), "--no-preflight"],
                       capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "telemetry.server_secret_key" in r.stderr and "Traceback" not in r.stderr


def _with_keys(tmp_path, secret, folder, endpoint="tcp://0.0.0.0:5560"):
    text = (REPO / "config" / "stand.toml").read_text().replace("tcp://127.0.0.1:5560", endpoint)
    text = text.replace("lease_timeout_s = 2.0", f"lease_timeout_s = 2.0\nserver_secret_key = \"{secret}\"\n"
                                                 f"authorized_consoles_dir = \"{folder}\"")
    p = tmp_path / "stand.toml"
    p.write_text(text)
    return p


def test_stand_key_settings_errors_name_file_key_reason(tmp_path):
    init_keys(tmp_path / "keys", ["alice"])
    st = load_stand(_with_keys(tmp_path, "keys/server/server.key_secret", "keys/authorized"))
    assert st.telemetry["curve"]["secret_file"] == tmp_path / "keys/server/server.key_secret"
    for secret, folder, key, words in (
            ("keys/server/nope.key_secret", "keys/authorized", "server_secret_key", "cannot read"),
            ("keys/server/server.key", "keys/authorized", "server_secret_key", "holds no secret key"),
            ("keys/server/server.key_secret", "keys/nowhere", "authorized_consoles_dir", "not a directory"),
            ("keys/server/server.key_secret", "keys/server/..", "authorized_consoles_dir", "holds no console")):
        p = _with_keys(tmp_path, secret, folder)
        with pytest.raises(ConfigError) as e:
            load_stand(p)
        assert e.value.file == str(p) and e.value.key == f"telemetry.{key}" and words in e.value.reason, e.value
    p = tmp_path / "half.toml"
    p.write_text((REPO / "config" / "stand.toml").read_text().replace(
        "lease_timeout_s = 2.0", 'lease_timeout_s = 2.0\nauthorized_consoles_dir = "keys/authorized"'))
    with pytest.raises(ConfigError, match="telemetry.server_secret_key: required with authorized_consoles_dir"):
        load_stand(p)
