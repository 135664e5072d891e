"""The docking mechanism's own signals end to end (issue 41 item 5; docs/platforms.md, "Mechanism
I/O"): a stand with ``[mechanism_io]`` (config/stands/mechanism_io.toml) docks the nominal case
against the emulator, whose mechanism control unit is pymodbus's own TCP server serving the
emulated latches; the controller polls it with pymodbus's client. The capture comes from the
unit (an event with the run clock, the summary's ``captured``); ARM after the capture is
refused ("mechanism latched: undock first"); UNDOCK sets the release output, the emulated latches
open, the platform backs the units apart and the output is cleared — then the stand docks
again. A unit whose latch inputs never close reports no capture (nothing inferred), and a fault
code on its register trips MECHANISM_FAULT by the fault's name. Real sockets on loopback, the
emulator and the controller's loop in threads of this process (sim_stand/recovery_drill.py)."""
from __future__ import annotations

import pytest

from sim_stand.cli import REPO
from sim_stand.recovery_drill import DrillStand

STAND = REPO / "config" / "stands" / "mechanism_io.toml"
NOMINAL = REPO / "config" / "cases" / "nominal.toml"

pytestmark = pytest.mark.slow


def _short_case(tmp):
    """The nominal docking cut to 4 s (contact at ~0.9 s, capture, the units at rest)."""
    text = NOMINAL.read_text().replace("../vehicles/", f"{REPO}/config/vehicles/")
    text = text.replace("duration_s = 10.0", "duration_s = 4.0")
    p = tmp / "nominal_4s.toml"
    p.write_text(text)
    return p


def _stand(tmp):
    """The mechanism-I/O stand with a brisker retreat (30 mm/s, 0.2 m/s²; the shipped 5 mm/s
    takes half a minute of emulated time over UNDOCK's 0.15 m): what is tested is the sequence."""
    text = STAND.read_text().replace("[limits]\n", "[limits]\nretract_speed_m_s = 0.03\nretract_accel_m_s2 = 0.2\n", 1)
    assert "retract_speed_m_s = 0.03" in text
    p = tmp / "mechanism_io.toml"
    p.write_text(text)
    return p


def _kinds(ctl, since=0):
    return [e for e in list(ctl.events)[since:] if e.get("source") == "mechanism_io"]


@pytest.fixture
def st(tmp_path):
    """The mechanism-I/O stand up for drills (the short case, the brisker retreat), closed after."""
    st = DrillStand(tmp_path / "runs", lease_timeout_s=10.0, case=_short_case(tmp_path), emulator=None, stand=_stand(tmp_path))
    try:
        yield st
    finally:
        st.close()


def _start_docking(st):
    """The docking started once the controller has polled the mechanism's unit."""
    st.wait(lambda: st.ctl.mechanism_io.state.ok, 10, "the mechanism link's first poll")
    st.start_docking()


def test_capture_from_the_unit_then_arm_refused_then_undock_and_dock_again(st):
    c = st.ctl
    _start_docking(st)
    out = st.finish_docking()
    assert out["state"] == "DONE", out
    s = c.summary()
    assert s["captured"] is True and s["capture_signal_s"] is not None, s
    caps = [e for e in _kinds(c) if e["kind"] == "capture"]
    assert caps and caps[0]["t_run"] == s["capture_signal_s"]
    assert len([e for e in _kinds(c) if e["kind"] == "latch_closed"]) == 3
    assert st.em.world.latch_states().count("engaged") == 3

    # ARM with the units latched: refused, nothing moves
    assert st.op.req("reset")["ok"]
    r = st.op.req("arm")
    assert not r["ok"] and "mechanism latched" in r["reason"] and "undock" in r["reason"], r
    assert c.phase.name in ("FROZEN", "IDLE")

    # UNDOCK: the release output, the latches open, the retreat, the output cleared
    n0 = len(c.events)
    assert st.op.req("undock")["ok"]
    st.wait(lambda: c.phase.name == "RETRACT", 10, "the undock's retract")
    st.wait(lambda: st.em.unit.release_on, 10, "the release output at the unit")
    st.wait(lambda: c.phase.name == "FROZEN", 120, "the retract's end")
    st.wait(lambda: not c.mechanism_io.state.release_on and not st.em.unit.release_on, 10, "the output cleared")
    ev = list(c.events)[n0:]
    kinds = [e["kind"] for e in ev]
    assert "mechanism_released" in kinds and kinds.count("latch_opened") == 3, kinds
    assert c.trip_text is None and c.supervisor.trip_reason is None
    assert "engaged" not in st.em.world.latch_states()
    assert not c.mechanism_io.state.latched

    # and the stand docks again, captured again
    st.must(st.op.req("arm"), "arm after undock")
    st.wait(lambda: c.phase.name == "READY", 120, "READY")
    st.must(st.op.req("start"), "start")
    out = st.finish_docking()
    assert out["state"] == "DONE" and c.summary()["captured"] is True, out


def test_latch_inputs_that_never_close_report_no_capture(st):
    c = st.ctl
    st.em.faults.start("latch_inputs_stuck", 0.0)
    _start_docking(st)
    out = st.finish_docking()
    assert st.em.world.captured            # the emulated mechanism did latch ...
    s = c.summary()
    assert s["captured"] is False and s["capture_signal_s"] is None, (out, s)   # ... the unit never said so
    assert not [e for e in _kinds(c) if e["kind"] in ("capture", "latch_closed")]


def test_a_fault_on_the_units_register_trips_by_its_name(st):
    c = st.ctl
    _start_docking(st)
    st.wait(lambda: c.phase.name == "DYNAMICS", 60, "the dynamics")
    st.em.faults.start("mechanism_fault", st.em.t)
    st.wait(lambda: c.supervisor.safe, 10, "the trip")
    assert c.supervisor.trip_reason == "MECHANISM_FAULT", c.trip_text
    assert "latch drive overcurrent" in c.trip_text
    st.wait(st.stopped, 30, "the platform frozen")
    st.em.faults.end("mechanism_fault")
    st.wait(lambda: c.mechanism_io.state.fault == 0, 10, "the fault cleared at the unit")
    assert st.op.req("reset")["ok"]
