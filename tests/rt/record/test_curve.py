"""CURVE on the telemetry PUB and command ROUTER, over real tcp://127.0.0.1 sockets: keys made
by ``dockstand keys init``, an authorised console sees telemetry and gets answers, an unknown
key gets neither and its attempt becomes an ``auth_denied`` event; nothing binds beyond
loopback without keys (the server, ``check-config`` and ``dockstand run`` refuse it)."""
from __future__ import annotations

import os
import signal
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
from sim_stand.cli import stop_child

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


@pytest.mark.slow
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


def _events_until(tel, events, pred, timeout=5.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        tel.poll()
        hit = [e for e in events if pred(e)]
        if hit:
            return hit[-1]
        time.sleep(0.005)
    return None


def test_keys_reload_revokes_a_console_and_admits_a_new_one(tmp_path):
    """Keys change while the controller runs: alice (holding the lease) is revoked and bob
    authorised, alice asks for the reload; the reload is named as an event with who came and
    went, alice's lease is dropped (the controller's lease-lost handling, "key revoked"), her
    next request is refused as revoked, bob gets in on a new connection."""
    keys = init_keys(tmp_path / "keys", ["alice", "bob"])
    (tmp_path / "keys" / "authorized" / "bob.key").unlink()            # bob is not authorised yet
    ctx = zmq.Context()
    events, lost = [], []
    curve = CurveServer(Path(keys["server_secret_key"]), Path(keys["authorized_consoles_dir"]))
    tel = TelemetryServer(FIELDS, pub_endpoint=ANY, cmd_endpoint=ANY, decimation=1, context=ctx, curve=curve,
                          handler=lambda c, a, who: {"ok": True, "reason": None, "state": "IDLE"},
                          commands=("status", "arm"), on_auth_denied=events.append,
                          on_lease_lost=lambda *a: lost.append(a))
    ck = {n: client_keys(tmp_path / "keys" / "consoles" / f"{n}.key_secret", keys["server_public_key"])
          for n in ("alice", "bob")}
    clients = []
    try:
        def ask(cli, cmd, **kw):
            rid = cli.send(cmd, **kw)
            r = _wait(lambda: cli.sock.poll(0) and cli.recv(), tel)
            assert r is not None, f"no answer to {cmd}"
            assert r["id"] == rid, r
            return r

        alice = CommandClient(tel.cmd_endpoint, name="alice", context=ctx, keys=ck["alice"])
        clients.append(alice)
        assert ask(alice, "acquire")["ok"] and ask(alice, "arm")["ok"]
        assert curve.authorized == {ck["alice"].public.decode()}
        bob0 = CommandClient(tel.cmd_endpoint, name="bob", context=ctx, keys=ck["bob"], timeout_s=0.3)
        clients.append(bob0)
        try:
            bob0.send("status")
        except TimeoutError:
            pass
        assert _wait(lambda: bob0.sock.poll(0), tel, 1.0) is None                   # not yet
        # the administrator's change, then the reload the console asks for
        r = subprocess.run([sys.executable, "-m", "rt.cli", "keys", "revoke", str(tmp_path / "keys"), "alice"],
                           capture_output=True, text=True, cwd=REPO, timeout=60)
        assert r.returncode == 0 and "reload" in r.stdout, r
        (tmp_path / "keys" / "authorized" / "bob.key").write_bytes(
            (tmp_path / "keys" / "consoles" / "bob.key").read_bytes())
        assert ask(alice, "reload_keys")["ok"]              # still hers until the reload is read
        ev = _events_until(tel, events, lambda e: e["kind"] == "keys_reloaded")
        assert ev is not None and ev["added"] == ["bob"] and ev["removed"] == ["alice"] and ev["authorized"] == ["bob"]
        assert lost == [("alice", "key revoked")] and tel.holder is None and tel.lease_lost
        r = ask(alice, "status")
        assert r["ok"] is False and "revoked" in r["reason"] and tel.revoked == 1
        assert ask(alice, "acquire")["ok"] is False and tel.holder is None          # nor can she take it back
        again = CommandClient(tel.cmd_endpoint, name="alice", context=ctx, keys=ck["alice"], timeout_s=0.3)
        clients.append(again)                                   # a new connection with the revoked key
        try:
            again.send("status")
        except TimeoutError:
            pass
        den = _events_until(tel, events, lambda e: e["kind"] == "auth_denied"
                            and e["client_key"] == ck["alice"].public.decode())
        assert den is not None and den.get("console") == "alice", den      # named, not just a key
        bob = CommandClient(tel.cmd_endpoint, name="bob", context=ctx, keys=ck["bob"])
        clients.append(bob)
        d = ask(bob, "describe")
        assert d["ok"] and d["authorized_consoles"] == 1 and d["key_reloads"] == 1 and d["revoked"] == 2, d
        assert ask(bob, "acquire")["ok"] and tel.holder_name == "bob"
    finally:
        for c in clients:
            c.close()
        tel.close()
        ctx.destroy(linger=0)


def test_keys_cli_revoke_and_list_errors(tmp_path):
    init_keys(tmp_path / "k", ["alice"])
    run = lambda *a: subprocess.run([sys.executable, "-m", "rt.cli", "keys", *a], capture_output=True, text=True,
                                    cwd=REPO, timeout=60)
    r = run("list", str(tmp_path / "k"))
    pub = zmq.auth.load_certificate(tmp_path / "k" / "authorized" / "alice.key")[0].decode()
    assert r.returncode == 0 and r.stdout.split() == ["alice", pub], r
    r = run("revoke", str(tmp_path / "k"), "mallory")
    assert r.returncode == 2 and "no such authorised console (authorised: alice)" in r.stderr and "Traceback" not in r.stderr
    r = run("revoke", str(tmp_path / "k"), "../server/server")
    assert r.returncode == 2 and "plain file name" in r.stderr
    (tmp_path / "k" / "authorized" / "junk.key").write_text("not a certificate")
    r = run("list", str(tmp_path / "k"))
    assert r.returncode == 0 and "unreadable" in r.stderr and "junk.key" in r.stderr
    r = run("revoke", str(tmp_path / "k"), "alice")          # revoked for good: re-adding makes a new pair
    assert r.returncode == 0 and "retired" in r.stdout and not (tmp_path / "k" / "consoles" / "alice.key_secret").exists()
    init_keys(tmp_path / "k", ["alice"])
    assert zmq.auth.load_certificate(tmp_path / "k" / "authorized" / "alice.key")[0].decode() != pub
    r = subprocess.run([sys.executable, "-m", "rt.cli", "ctl", "status", "--endpoint", f"ipc://{tmp_path}/cmd",
                        "--key", str(tmp_path / "none.key_secret"), "--server-key", str(tmp_path / "k/server/server.key")],
                       capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "none.key_secret: no such file" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = run("list", str(tmp_path / "nowhere"))
    assert r.returncode == 2 and "no such directory" in r.stderr


def test_sighup_reloads_the_keys_of_a_running_controller(tmp_path):
    """``dockstand run`` with CURVE (ipc endpoints, no emulator: the controller idles with its
    links down): bob, connected, is revoked on disk; SIGHUP (``systemctl reload``) makes the
    controller read the keys again -- a keys_reloaded event on the telemetry naming bob, and
    bob's next request refused as revoked -- while the loop goes on."""
    keys = init_keys(tmp_path / "keys", ["alice", "bob"])
    text = (REPO / "config" / "stand.toml").read_text()
    for old, new in (("tcp://127.0.0.1:5570", f"ipc://{tmp_path}/sensor"),
                     ("tcp://127.0.0.1:5571", f"ipc://{tmp_path}/platform"),
                     ("tcp://127.0.0.1:5561", f"ipc://{tmp_path}/pub"), ("tcp://127.0.0.1:5560", f"ipc://{tmp_path}/cmd")):
        text = text.replace(old, new)
    text = text.replace("lease_timeout_s = 2.0", f"lease_timeout_s = 2.0\nserver_secret_key = \"{keys['server_secret_key']}\"\n"
                                                 f"authorized_consoles_dir = \"{keys['authorized_consoles_dir']}\"")
    stand = tmp_path / "stand.toml"
    stand.write_text(text)
    proc = subprocess.Popen([sys.executable, "-m", "rt.cli", "run", "--stand", str(stand), "--no-preflight"], cwd=REPO,
                            env={**os.environ, "DOCKSTAND_DATA": str(tmp_path / "data")}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ctx = zmq.Context()
    try:
        ck = {n: client_keys(tmp_path / "keys" / "consoles" / f"{n}.key_secret", keys["server_public_key"])
              for n in ("alice", "bob")}
        line = proc.stdout.readline()                      # after warm-up: the endpoints are bound
        assert "commands on" in line, (line, proc.poll())
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        ck["alice"].apply(sub)
        sub.setsockopt(zmq.SUBSCRIBE, b"event")
        sub.connect(f"ipc://{tmp_path}/pub")
        bob = CommandClient(f"ipc://{tmp_path}/cmd", name="bob", context=ctx, keys=ck["bob"], timeout_s=10.0)
        assert bob.request("status")["ok"]
        time.sleep(0.3)                                    # the subscription has reached the PUB
        (tmp_path / "keys" / "authorized" / "bob.key").unlink()
        os.kill(proc.pid, signal.SIGHUP)
        ev, t0 = None, time.monotonic()
        while ev is None and time.monotonic() - t0 < 10.0:
            if sub.poll(100):
                e = msgpack.unpackb(sub.recv_multipart()[1])
                ev = e if e.get("kind") == "keys_reloaded" else None
        assert ev is not None and ev["removed"] == ["bob"] and ev["authorized"] == ["alice"], ev
        r = bob.request("status")
        assert r["ok"] is False and "revoked" in r["reason"], r
        assert proc.poll() is None                          # the controller goes on
        sub.close(0)
        bob.close()
    finally:
        stop_child(proc)
        ctx.destroy(linger=0)


def test_a_vanished_directory_keeps_the_keys(tmp_path):
    """A reload that cannot read the authorised directory at all keeps the keys it had (it is
    not 'no console authorised') and says so in its event."""
    import shutil
    keys = init_keys(tmp_path / "keys", ["alice"])
    ctx = zmq.Context()
    curve = CurveServer(Path(keys["server_secret_key"]), Path(keys["authorized_consoles_dir"]))
    try:
        curve.start(ctx)
        before = curve.authorized
        shutil.rmtree(keys["authorized_consoles_dir"])
        ev = curve.reload()
        assert "keys unchanged" in ev["error"] and ev["authorized"] == ["alice"] and curve.authorized == before
    finally:
        curve.stop()
        ctx.destroy(linger=0)
