"""The mechanism's Modbus link (drivers.mechanism_io) against pymodbus's own server, and the
emulated unit (sim_stand.mechanism_unit) against pymodbus's own client, on real loopback
sockets: the signals by the stand's map, the release coil, a Modbus exception response and a
unit that is not there counted and named, never raised."""
from __future__ import annotations

import socket
import time

from drivers.mechanism_io import MechanismIO, MechanismMap
from sim_stand.mechanism_unit import MechanismUnit


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def _map(port: int, **kw) -> MechanismMap:
    base = dict(host="127.0.0.1", port=port, device_id=1, poll_hz=100.0, timeout_s=0.5, capture=0,
                latches=(1, 2, 3), hooks=(4,), ring_in_position=5, fault_register=0,
                faults={1: "latch drive overcurrent"}, release_coil=0)
    base.update(kw)
    return MechanismMap(**base)


def test_the_link_reads_the_unit_writes_the_release_and_names_a_fault():
    mp = _map(_free_port())
    unit = MechanismUnit(mp)
    unit.start()
    io = MechanismIO(mp)
    try:
        unit.update(False, (True, False, True), (False,), True)
        st = io.poll_once()
        assert st.ok and st.capture is False and st.latches == (True, False, True) and st.hooks == (False,)
        assert st.ring_in_position is True and st.fault == 0 and st.latched and not st.open
        io.release(True)
        st = io.poll_once()
        assert st.release_on and unit.update(False, (False, False, False), (False,), True) is True
        st = io.poll_once()
        assert st.ok and st.open and not st.latched
        unit.fault = 1
        unit.update(True, (True, True, True), (True,), True)
        st = io.poll_once()
        assert st.fault == 1 and st.fault_name == "latch drive overcurrent" and st.capture and st.latched
        assert io.counters["errors"] == 0 and io.counters["releases_written"] == 1
    finally:
        io.close()
        unit.close()


def test_an_exception_response_and_a_missing_unit_are_counted_and_named():
    port = _free_port()
    unit = MechanismUnit(_map(port))
    unit.start()
    try:
        # a map that reads beyond what the unit serves: the unit answers "illegal data address"
        io = MechanismIO(_map(port, latches=(1, 2, 300)))
        st = io.poll_once()
        assert not st.ok and "Modbus exception 2 (illegal data address)" in st.error, st.error
        assert io.counters["exceptions"] == 1 and io.counters["errors"] == 1
        io.close()
    finally:
        unit.close()
    io = MechanismIO(_map(_free_port(), timeout_s=0.2))     # nobody there
    t0 = time.monotonic()
    st = io.poll_once()
    assert not st.ok and "127.0.0.1" in st.error and io.counters["errors"] == 1
    assert time.monotonic() - t0 < 5.0
    io.close()


def test_the_emulated_unit_answers_pymodbus_own_client():
    from pymodbus.client import ModbusTcpClient
    mp = _map(_free_port())
    unit = MechanismUnit(mp)
    unit.start()
    cl = ModbusTcpClient("127.0.0.1", port=mp.port, timeout=1)
    try:
        assert cl.connect()
        unit.update(True, (True, True, True), (True,), False)
        r = cl.read_discrete_inputs(0, count=6, device_id=1)
        assert not r.isError() and r.bits[:6] == [True, True, True, True, True, False]
        assert cl.write_coil(0, True, device_id=1).isError() is False
        assert unit.update(True, (True, True, True), (True,), False) is True
        r = cl.read_discrete_inputs(0, count=4, device_id=9)       # another unit id: no answer or an error
        assert r is None or r.isError()
    finally:
        cl.close()
        unit.close()
