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
