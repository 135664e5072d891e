"""rt.control.mechanism_inputs: the mechanism's signals on the platform's digital inputs, named
as events on their edges (the end-to-end path, emulator -> STATUS -> controller events -> console,
is in tests/rt/control/test_arming_contact.py and tests/rt/console/test_console_live.py)."""
from rt.config.stand import MechanismInputs
from rt.control import mechanism_inputs as MI

WIRED = MechanismInputs(capture=0, latches=(1, 2, 3))


def test_edges_name_each_signal_that_changed_latches_first():
    assert MI.edges(WIRED, 0, 0) == []
    assert MI.edges(WIRED, 0, 0b0010) == [{"kind": "latch_closed", "latch": 1, "bit": 1}]
    # the last latch and the capture in the same STATUS: the latch first
    assert [e["kind"] for e in MI.edges(WIRED, 0b0110, 0b1111)] == ["latch_closed", "capture"]
    assert MI.edges(WIRED, 0b1111, 0b0110) == [{"kind": "latch_opened", "latch": 3, "bit": 3},
                                               {"kind": "capture_released", "bit": 0}]
    # bits nobody wired change nothing
    assert MI.edges(WIRED, 0, 0xFFFF0000) == []
    assert MI.edges(MechanismInputs(), 0, 0xFFFFFFFF) == []


def test_captured_and_describe():
    assert MI.captured(WIRED, 0b1) is True and MI.captured(WIRED, 0b1110) is False
    assert MI.captured(MechanismInputs(latches=(1,)), 0b1) is None            # no capture signal wired
    assert MI.describe(WIRED, 0b1011) == {"capture": True, "latches": [True, False, True]}
    high = MechanismInputs(capture=31, latches=(30,))                         # the top of the u32 word
    assert MI.captured(high, 0x80000000) and MI.edges(high, 0, 0xC0000000)[-1]["kind"] == "capture"


def test_the_capture_signal_ends_a_run_once_held_for_the_settle_time():
    """A run's capture-signal edges (rt.control.mechanism_inputs.capture_signal_edge) and the end they
    make (rt.control.end_criteria.capture_signal_settled): the first capture is the run's capture
    time; a release restarts the hold; held for end.capture_settle_s the run ends."""
    from types import SimpleNamespace

    from rt.control import end_criteria as EC

    ctl = SimpleNamespace(capture_t_run=None, capture_held_since=None, t_run=2.5)
    MI.capture_signal_edge(ctl, "latch_closed")                 # not the capture signal
    assert ctl.capture_t_run is None and ctl.capture_held_since is None
    MI.capture_signal_edge(ctl, "capture")
    assert ctl.capture_t_run == 2.5 and ctl.capture_held_since == 2.5
    assert not EC.capture_signal_settled(4.499, ctl.capture_held_since, 2.0)
    ctl.t_run = 3.0
    MI.capture_signal_edge(ctl, "capture_released")              # it dropped: the hold is gone
    assert ctl.capture_held_since is None and not EC.capture_signal_settled(9.0, None, 2.0)
    ctl.t_run = 3.2
    MI.capture_signal_edge(ctl, "capture")                       # back: the capture time stays the first
    assert ctl.capture_t_run == 2.5 and ctl.capture_held_since == 3.2
    assert not EC.capture_signal_settled(5.19, 3.2, 2.0) and EC.capture_signal_settled(5.2, 3.2, 2.0)
    assert EC.capture_signal_settled(3.2, 3.2, 0.0)              # settle 0: the capture's own cycle
