"""config/stand.toml and rt.config.stand: the default loads; every bad value names file and key."""
import math
from pathlib import Path

import numpy as np
import pytest

from rt.stand import hexapod as HX
from rt.config import ConfigError, load_any
from rt.config.stand import default_runlog_dir, load_stand

from config_edits import config_error

REPO = Path(__file__).resolve().parents[3]
DEFAULT = REPO / "config" / "stand.toml"
TEXT = DEFAULT.read_text()


def test_default_stand_loads():
    s = load_any(DEFAULT)
    assert s.name == "default" and s.rate_hz == 1000 and s.period_ns == 1_000_000
    assert s.wait_policy == "hybrid" and s.spin_margin_ns == 200_000
    assert s.adaptive_margin and s.margin_half_life_ns == 1_000_000_000 and s.realtime.timer_slack_ns == 1
    assert s.sensor_link["transport"] == "zmq" and s.sensor_link["endpoint"].startswith("tcp://127.0.0.1:")
    assert s.platform_link["endpoint"].startswith("tcp://127.0.0.1:")
    assert s.telemetry["pub_endpoint"].startswith("tcp://127.0.0.1:") and s.telemetry["decimation"] == 20
    assert s.sensing.calibration.shape == (6, 6) and s.sensing.tare_samples == 500
    assert s.limits.sensor_rating == (7200.0, 7200.0, 18000.0, 1400.0, 1400.0, 1400.0)
    assert math.isclose(s.limits.omega_max_rad_s, math.radians(20.0))
    assert s.limits.contact_force_n == 50.0 and s.limits.capture_speed_max_m_s == 0.005
    assert math.isclose(s.limits.capture_rate_max_rad_s, math.radians(0.2))
    # the filter's group delay is part of the compensated delay
    assert 0.002 < s.delays.filter_s < 0.0023
    assert math.isclose(s.delays.total_s, 0.0005 + 0.001 + 0.0005 + 0.002 + s.delays.filter_s)
    # the active unit's x axis is the platform top's z; P's x is the lab's z (approach upwards)
    assert np.allclose(s.active_mount.R[:, 0], [0, 0, 1]) and np.allclose(s.passive_mount.R[:, 0], [0, 0, 1])
    assert HX.Hexapod(s.hexapod).check_pose(s.hexapod.home)[0] == HX.Workspace.OK
    assert s.raw["loop"]["rate_hz"] == 1000
    assert s.runlog_dir == default_runlog_dir()       # the shipped stand names none: the user's data directory
    mi = s.mechanism_inputs                           # the mechanism's signals on the platform's inputs
    assert (mi.capture, mi.latches) == (0, (1, 2, 3)) and mi.wired
    assert mi.word(True, (True, True, True)) == 0b1111 and mi.word(False, (False, True)) == 0b100


def test_run_logs_default_to_the_data_directory_not_the_source_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKSTAND_DATA", str(tmp_path / "data"))
    assert load_stand(REPO / "config" / "stand.toml").runlog_dir == tmp_path / "data" / "runs"
    monkeypatch.delenv("DOCKSTAND_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_runlog_dir() == tmp_path / "xdg" / "dockstand" / "runs"
    text = (REPO / "config" / "stand.toml").read_text().replace("[runlog]\n", '[runlog]\ndirectory = "logs"\n')
    f = tmp_path / "stand.toml"
    f.write_text(text)
    assert load_stand(f).runlog_dir == tmp_path / "logs"           # named in the file: relative to it


def bad(tmp_path, old, new):
    return config_error(load_stand, TEXT, old, new, tmp_path / "stand.toml")


@pytest.mark.parametrize("old, new, key, words", [
    ('rate_hz = 1000   ', 'rate_hz = -5   ', "loop.rate_hz", "> 0"),
    ('wait_policy = "hybrid"', 'wait_policy = "sleep"', "loop.wait_policy", "must be one of"),
    ('spin_margin_us = 200', 'spin_margin_us = 2000', "loop.spin_margin_us", "shorter than the period"),
    ('sched_fifo_priority = 0', 'sched_fifo_priority = 120', "realtime.sched_fifo_priority", "<= 99"),
    ('adaptive_margin = true', 'adaptive_margin = "yes"', "loop.adaptive_margin", "true or false"),
    ('adaptive_margin_half_life_s = 1.0', 'adaptive_margin_half_life_s = 1e-10', "loop.adaptive_margin_half_life_s",
     ">= 0.001"),
    ('timer_slack_ns = 1 ', 'timer_slack_ns = -1 ', "realtime.timer_slack_ns", ">= 0"),
    ('timer_slack_ns = 1 ', 'timer_slack_ns = 5000000000 ', "realtime.timer_slack_ns", "<= 1000000"),
    ('    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],\n]', '    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],\n]', "sensor.calibration", "ragged"),
    ('cutoff_hz = 100.0', 'cutoff_hz = 700.0', "sensor.filter.cutoff_hz", "half the loop rate"),
    ('transport = "zmq"\nendpoint = "tcp://127.0.0.1:5570"', 'transport = "can"\nendpoint = "tcp://127.0.0.1:5570"',
     "sensor.link.transport", "must be one of"),
    ('command_mode = "pose"', 'command_mode = "dof"', "platform.command_mode", "must be one of"),
    ('home_height_m = 1.95', 'home_height_m = 2.9', "hexapod.home_height_m", "not reachable"),
    ('length_max_m = 2.6', 'length_max_m = 1.0', "hexapod.length_max_m", "must exceed"),
    ('rotation_max_deg = [20.0, 20.0, 28.0]', 'rotation_max_deg = [20.0, -30.0, 28.0]', "hexapod.box.rotation_max_deg", "exceed"),
    ('orientation = { sequence = "yzx", angles_deg = [90.0, 0.0, 0.0] }', 'orientation = { dcm = [[1, 0, 0], [0, 1, 0], [0, 0, 2]] }',
     "geometry.sensor_mount.orientation.dcm", "orthonormal"),
    ('rating_fraction = 0.9', 'rating_fraction = 1.5', "limits.rating_fraction", "<= 1.0"),
    ('rate_hz = 50', 'rate_hz = 5000', "telemetry.rate_hz", "cannot exceed"),
    ('cmd_endpoint = "tcp://127.0.0.1:5560"', 'cmd_endpoint = "127.0.0.1:5560"', "telemetry.cmd_endpoint", "endpoint"),
    ('servo_s = 0.002', 'servo_s = 0.002\nserv_s = 1', "delays.serv_s", "unknown key"),
    ('capture_speed_max_m_s = 0.005', 'capture_speed_max_m_s = 0.0', "limits.capture_speed_max_m_s", "> 0"),
    ('capture_speed_max_m_s = 0.005', 'capture_speed_max_m_s = 0.9', "limits.capture_speed_max_m_s", "v_max_m_s"),
    ('capture_rate_max_deg_s = 0.2', 'capture_rate_max_deg_s = -1.0', "limits.capture_rate_max_deg_s", "> 0"),
    ('contact_force_n = 50.0', 'contact_force_n = 7000.0', "limits.contact_force_n", "force trip level"),
    # the compiled cycle walks a poll's frames by their length byte: framed protocols need checked frames
    ('endpoint = "tcp://127.0.0.1:5571"', 'endpoint = "tcp://127.0.0.1:5571"\nframing = "raw"', "platform.link.framing",
     "motion-platform protocol"),
    ('endpoint = "tcp://127.0.0.1:5570"', 'endpoint = "tcp://127.0.0.1:5570"\nframing = "raw"', "sensor.link.framing",
     "serial sensor protocol"),
    ('protocol = "serial"  ', 'protocol = "rdt"  ', "sensor.link.framing", "ATI RDT"),
    ('latches = [1, 2, 3]', 'latches = [1, 2, 40]', "platform.inputs.latches", "outside the 32-bit"),
    ('latches = [1, 2, 3]', 'latches = [1, 0, 3]', "platform.inputs.latches", "bit 0 carries two signals"),
    ('latches = [1, 2, 3]', 'latches = ["a"]', "platform.inputs.latches", "bit numbers"),
    ('capture = 0 ', 'capture = 32 ', "platform.inputs.capture", "<= 31"),
    ('capture = 0 ', 'capture = 0\ncapture_bit = 1 ', "platform.inputs.capture_bit", "unknown key"),
])
def test_bad_values_name_the_key(tmp_path, old, new, key, words):
    e = bad(tmp_path, old, new)
    assert e.key == key, str(e)
    assert words in e.reason and str(tmp_path) in e.file


def test_transport_options_validated_by_the_drivers(tmp_path):
    pytest.importorskip("drivers.transport")
    from drivers import transport
    if not hasattr(transport, "validate_options"):
        pytest.skip("drivers.transport has no validate_options yet")
    line = 'a second one is refused and named (docs/protocols.md)\n'    # the sensor link's pattern line
    e = bad(tmp_path, line, line + 'baudrate = 9600\n')
    assert e.key == "sensor.link.baudrate" and "unknown option" in e.reason
    e = bad(tmp_path, 'endpoint = "tcp://127.0.0.1:5571"', 'endpoint = "tcp:/oops"')
    assert e.key == "platform.link.endpoint"


def test_missing_file():
    with pytest.raises(ConfigError, match="file not found"):
        load_stand("/nonexistent/stand.toml")


@pytest.mark.parametrize("loader,path,words", [
    ("stand", "config/emulator/default.toml", "this is an emulator file"),
    ("emulator", "config/stand.toml", "this is a stand file"),
    ("case", "config/stand.toml", "give it as --stand"),
    ("campaign", "config/cases/nominal.toml", "this is a case file"),
    ("case", "config/campaigns/nominal_dispersed.toml", "this is a campaign file"),
])
def test_a_config_of_another_kind_is_named_as_such(loader, path, words):
    """Given where another kind belongs (--emulator config/stand.toml), the error says which
    kind of file it is, not a list of its keys as unknown."""
    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from sim_stand.campaign.spec import load_campaign
    from sim_stand.world_config import load_emulator
    load = {"stand": load_stand, "emulator": load_emulator, "case": load_case, "campaign": load_campaign}[loader]
    root = Path(__file__).resolve().parents[3]
    with pytest.raises(ConfigError) as e:
        load(root / path)
    assert words in str(e.value) and str(root / path) in str(e.value), str(e.value)
