"""The controller's parts, each alone (rt.control.phases, links, recorder, session): the phase
table refuses what it does not list, the guards judge a stand-in controller, the links move
bytes and counts between real memory channels and the cycle's inputs, the recorder writes a
log that the reader reads back and bounds its history, and the session freezes gc exactly
while RUNNING."""
from __future__ import annotations

import gc
from types import SimpleNamespace

import numpy as np
import pytest

from drivers.ft_sensor import FtSensor, SerialSensorDevice
from drivers.motion_platform import MotionPlatform, MotionPlatformDevice, PlatformState
from drivers.transport import memory_pair
from rt.config.case import load_case
from rt.config.stand import MechanismInputs, load_stand
from rt.control import kernels as CK
from rt.control import phases as PH
from rt.control.links import Links
from rt.control.phases import Phase
from rt.control.recorder import MAX_EVENTS, Recorder, closed_sink, record_fields
from rt.control.session import RealtimeSession
from rt.record.runlog import read_log
from rt.stand import wire_kernels as WK
from sim_stand.kinematic_rig import NOMINAL, STAND


# ---------------------------------------------------------------------- phases
def test_every_phase_has_a_row_and_a_nominal_run_is_a_path_of_the_table():
    assert set(PH.TRANSITIONS) == set(Phase)
    path = [Phase.IDLE, Phase.ENGAGE, Phase.TARE, Phase.MOVE, Phase.READY, Phase.RUNUP, Phase.DYNAMICS,
            Phase.STOP, Phase.FROZEN, Phase.ENGAGE]
    for a, b in zip(path, path[1:]):
        PH.check_transition(a, b)
    PH.check_transition(Phase.DYNAMICS, Phase.DYNAMICS)     # staying is not a change


@pytest.mark.parametrize("a,b", [(Phase.IDLE, Phase.DYNAMICS), (Phase.FROZEN, Phase.READY),
                                 (Phase.DYNAMICS, Phase.READY), (Phase.ENGAGE, Phase.STOP),
                                 (Phase.STOP, Phase.DYNAMICS), (Phase.IDLE, Phase.STOP)])
def test_a_change_outside_the_table_is_refused_with_its_name(a, b):
    with pytest.raises(PH.PhaseError, match=f"{a.name} -> {b.name}"):
        PH.check_transition(a, b)


def _ctl(phase=Phase.IDLE, open_=True, samples=5, stale=False, pstate=PlatformState.IDLE, fault=0, inputs=0,
         wired=MechanismInputs(capture=0, latches=(1, 2, 3)), status_age=0.001, lockstep=False):
    meas = np.zeros(WK.ST_LEN)
    meas[WK.ST_FAULT] = fault
    meas[WK.ST_INPUTS] = inputs
    links = SimpleNamespace(is_open=open_, samples=samples, s_tr=SimpleNamespace(status="s-status"),
                            p_tr=SimpleNamespace(status="p-status"), silence=lambda tr: f"silent: {tr.status}",
                            platform_age_s=lambda: status_age)
    stand = SimpleNamespace(mechanism_inputs=wired, limits=SimpleNamespace(platform_stale_cycles=20),
                            delays=SimpleNamespace(envelope="warn", envelope_cor_error_pct=1.0))
    return SimpleNamespace(phase=phase, links=links, meas=meas, stale_sensor=lambda: stale,
                           platform_state=lambda: pstate, stand=stand, lockstep=lockstep, period_s=0.001,
                           health_refusal=lambda: None, mechanism_refusal=lambda: None,
                           sensing=SimpleNamespace(tared=False))


def test_guards_alone():
    case = load_case(NOMINAL)
    assert PH.guard_load(_ctl(), case=case) is None
    assert "needs a case" in PH.guard_load(_ctl(), case="config/cases/nominal.toml")
    assert "still stopping" in PH.guard_load(_ctl(Phase.STOP), case=case)
    assert PH.guard_arm(_ctl()) is None
    assert PH.guard_arm(_ctl(open_=False)) == "drivers are not open"
    assert PH.guard_arm(_ctl(samples=0)) == "the F/T sensor is not streaming (silent: s-status)"
    assert PH.guard_arm(_ctl(stale=True)) == "the F/T sensor is not streaming (silent: s-status)"
    assert PH.guard_arm(_ctl(pstate=None)) == "no STATUS from the motion platform yet (silent: p-status)"
    assert PH.guard_arm(_ctl(pstate=PlatformState.FAULT, fault=3)) == \
        "the platform reports FAULT (fault 3); reset_fault first"
    assert PH.guard_arm(_ctl(inputs=0b1110)) is None                 # latches closed, no capture yet
    assert "reports capture (platform input bit 0)" in PH.guard_arm(_ctl(inputs=0b1111))
    assert PH.guard_arm(_ctl(inputs=0b1111, wired=MechanismInputs())) is None   # not wired: not known
    # a STATUS older than platform_stale_cycles: neither its state nor the mechanism's signals are known
    assert "the motion platform is silent: its last STATUS (state, pose, the mechanism's signals) is 3.0 s old (silent: " \
        "p-status)" == PH.guard_arm(_ctl(status_age=3.0, inputs=0b1111))
    assert PH.guard_arm(_ctl(status_age=3.0, lockstep=True)) is None           # lockstep: the gate waits for it
    assert "a tare now would take the latched units' loads as zero" in PH.guard_tare(_ctl(Phase.FROZEN, inputs=1))
    assert PH.guard_start(_ctl(Phase.READY)) is None
    assert PH.guard_start(_ctl(Phase.MOVE)) == "not ready: arming is in phase MOVE"
    assert PH.guard_tare(_ctl(Phase.MOVE)) == "cannot tare while the platform moves"
    assert PH.guard_tare(_ctl(Phase.READY)) is None
    assert PH.guard_reset(_ctl(Phase.STOP)) == "the platform is still stopping; reset when it is frozen"
    assert PH.guard_reset(_ctl(Phase.FROZEN)) is None
    assert set(PH.GUARDS) == {"load_case", "arm", "start", "tare", "reset"}


# ---------------------------------------------------------------------- links
def test_links_move_frames_and_counts_between_real_channels_and_the_cycle_inputs():
    stand = load_stand(STAND)
    s_host, s_dev = memory_pair("parts-sensor", capacity=100)
    p_host, p_dev = memory_pair("parts-platform", capacity=100)
    n_raw = stand.sensing.calibration.shape[1]
    sensor = FtSensor(s_host, "serial", channels=n_raw)
    ins = np.zeros(CK.IN_LEN)
    links = Links(stand, ins, n_raw, sensor=sensor, platform=MotionPlatform(p_host, heartbeat_s=0.0))
    assert links.framed_sensor and ins[CK.IN_NCH] == n_raw and len(links.checked) == 2
    assert links.is_open and not links.seen() and links.samples == 0
    sdev, pdev = SerialSensorDevice(s_dev, n_raw), MotionPlatformDevice(p_dev)
    sdev.send_sample(list(range(n_raw)))
    sdev.send_sample(list(range(n_raw)))
    pdev.send_status(PlatformState.ENGAGED, 0, 0, stand.hexapod.home, np.full(6, 1.1))
    raw = np.zeros(n_raw)
    links.read(raw)
    # two length-prefixed sensor frames and one platform frame, undecoded (the kernels decode)
    assert len(links.sbuf) > 0 and len(links.pbuf) > 0
    meas = np.zeros(WK.ST_LEN)
    assert links.platform_state(meas) is None          # no STATUS decoded yet
    links.add_counts(2, 1, False, 123.0)
    assert s_host.counters.frames_rx >= 2 and p_host.counters.frames_rx >= 1
    ins[CK.IN_S_BAD] = 3
    links.count_refused()
    assert s_host.counters.malformed == 3 and ins[CK.IN_S_BAD] == 0
    ins[CK.IN_SAMPLES], ins[CK.IN_STATUS_SEEN] = 2, 1
    meas[WK.ST_STATE] = int(PlatformState.ENGAGED)
    assert links.seen() and links.samples == 2 and links.platform_state(meas) is PlatformState.ENGAGED
    links.read(raw)
    assert links.sbuf == b"" and links.pbuf == b""     # nothing new since the last read
    links.close()
    assert not links.is_open


# ---------------------------------------------------------------------- recorder
def test_recorder_writes_a_log_the_reader_reads_and_publishes_every_event(tmp_path):
    now = [0.5, 7]
    published = []
    rec = Recorder(True, tmp_path / "logs", 0.05, clock=lambda: tuple(now))
    rec.publish = published.append
    fields = record_fields(6, 13)
    row = np.zeros(sum(fields.values()))
    rec.event({"kind": "phase", "phase": "IDLE"})          # no log open: history and publish only
    w = rec.open("nominal", fields, row, {"kind": "hil"})
    assert rec.writer is w and rec.log_path.parent == tmp_path / "logs" and rec.log_path.name.endswith("-nominal.dslog")
    for k in range(5):
        row[0] = k
        w.commit()
    now[:] = [1.25, 9]
    rec.event({"kind": "first_contact", "t_run": 0.1})
    rec.close(block=False)
    assert rec.writer is None
    assert rec.wait_closed()
    first = rec.log_path
    log = read_log(first)
    assert log.fields["t"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    # the event from before the log opened went in first, marked; the rest as they came
    assert [e["kind"] for e in log.events] == ["phase", "first_contact"] and log.events[1]["t"] == 1.25
    assert log.events[0]["before_log"] is True and "before_log" not in log.events[1]
    assert [e["kind"] for e in published] == ["phase", "first_contact"]
    assert published[1]["cycle"] == 9 and rec.events == published
    second = rec.open("nominal", fields, row, {"kind": "hil"})
    assert rec.log_path != first and rec.log_path.name.endswith(("-nominal.dslog", "-nominal-1.dslog"))
    rec.close(block=True)
    assert second.finished
    assert read_log(rec.log_path).events == []     # nothing since the first log: nothing written twice


def test_recorder_off_writes_nothing_and_bounds_its_history(tmp_path):
    rec = Recorder(False, tmp_path / "none", 0.05, clock=lambda: (0.0, 0))
    assert rec.open("x", {"t": 1}, np.zeros(1), {}) is None and not (tmp_path / "none").exists()
    for k in range(MAX_EVENTS + 1):
        rec.event({"kind": "e", "k": k})
    assert len(rec.events) == MAX_EVENTS // 2 + 1 and rec.events[-1]["k"] == MAX_EVENTS
    ring, cursor = closed_sink(4)
    assert ring.shape == (1, 4) and cursor.tolist() == [0, 0, 0, 1]


# ---------------------------------------------------------------------- session
def test_session_freezes_gc_exactly_while_armed_or_running():
    was = gc.isenabled()
    gc.enable()
    try:
        s = RealtimeSession(gc_freeze=True)
        s.on_transition("IDLE", "CONFIGURED")
        assert gc.isenabled() and not s.reports
        s.on_transition("CONFIGURED", "ARMED")
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        s.on_transition("ARMED", "RUNNING")             # no second collection at the start
        assert not gc.isenabled() and len(s.reports) == 1
        s.on_transition("RUNNING", "DONE")
        assert gc.isenabled() and gc.get_freeze_count() == 0
        assert [r.name for r in s.reports] == ["gc_freeze", "gc_freeze"]
        s.on_transition("CONFIGURED", "ARMED")
        s.on_transition("ARMED", "CONFIGURED")          # disarmed: as usual again
        assert gc.isenabled() and gc.get_freeze_count() == 0
        off = RealtimeSession(gc_freeze=False)
        off.on_transition("ARMED", "RUNNING")
        assert gc.isenabled()
        off.leave()
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()
