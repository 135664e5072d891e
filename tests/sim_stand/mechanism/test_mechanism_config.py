"""Mechanism config loader: presets load, CLI check-config dispatches to it, bad files fail with
FILE: KEY: reason."""
import subprocess
import sys
from pathlib import Path

import pytest
from config_edits import config_error
from conftest import HUNT_FILE, ROOT, UPS_FILE

from rt.config import ConfigError
from sim_stand.mechanism import load_mechanism


def test_presets_load():
    u = load_mechanism(UPS_FILE)
    h = load_mechanism(HUNT_FILE)
    assert u.leg_type == "UPS" and u.n_legs == 6
    assert h.leg_type == "RSU" and h.hunt
    # APAS/IDSS class: ring diameter 1.2-1.5 m (joint circle inside the guide ring)
    assert 0.5 <= abs(u.ring_joints_R[:, 1:]).max() <= 0.75


def test_cli_check_config():
    r = subprocess.run([sys.executable, "-m", "rt.cli", "check-config", str(UPS_FILE), str(HUNT_FILE)],
                       capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0 and "No module named rt.cli" in r.stderr:
        pytest.skip("rt.cli not runnable as a module")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("ok:") == 2


BAD = [
    ("[ring]\nmass_kg = 60.0", "[ring]\nmass_kg = -1.0", "ring.mass_kg", "> 0"),
    ("inertia_kgm2 = [[21.6, 0.0, 0.0], [0.0, 13.0, 0.0], [0.0, 0.0, 13.0]]",
     "inertia_kgm2 = [[31.6, 0.0, 0.0], [0.0, 13.0, 0.0], [0.0, 0.0, 13.0]]", "ring.inertia_kgm2",
     "triangle"),
    ("inertia_kgm2 = [[21.6, 0.0, 0.0], [0.0, 13.0, 0.0], [0.0, 0.0, 13.0]]",
     "inertia_kgm2 = [[21.6, 0.0, 0.0], [0.0, -13.0, 0.0], [0.0, 0.0, 13.0]]", "ring.inertia_kgm2",
     "positive definite"),
    ("stroke_min_m = -0.22", "stroke_min_m = 0.3", "devices.end_stops.stroke_max_m", "min <= 0 <= max"),
    ("stroke_table_m = [-0.20, 0.0, 0.20]", "stroke_table_m = [0.20, 0.0, -0.20]",
     "devices.spring.stroke_table_m", "increasing"),
    ("breakaway_n = 220.0", "breakaway_n = 100.0", "devices.brake.breakaway_n", ">= coulomb"),
    ('leg_type = "UPS"', 'leg_type = "PPP"', "leg_type", "must be one of"),
    ("mass_kg = 1.2\n", "mass_kg = 1.2\ncolour = 3\n", "legs.rod.colour", "unknown key"),
    ("damping_ns_per_m = 400.0", "damping_nms_per_rad = 400.0", "devices.damper.damping_ns_per_m",
     "missing"),
]


@pytest.mark.parametrize("old,new,key,reason", BAD)
def test_bad_configs(tmp_path, old, new, key, reason):
    f = tmp_path / "bad.toml"
    e = config_error(load_mechanism, Path(UPS_FILE).read_text(), old, new, f)
    assert e.key == key, str(e)
    assert reason in e.reason, str(e)
    assert str(e).startswith(str(f))


def test_bad_geometry_reported(tmp_path):
    text = Path(UPS_FILE).read_text().replace("home_position_m = [0.42, 0.0, 0.0]",
                                               "home_position_m = [0.0, 0.0, 0.0]")
    text = text.replace("ring_radius_m = 0.56", "ring_radius_m = 0.62").replace(
        "ring_half_spacing_deg = 10.0", "ring_half_spacing_deg = 14.0")
    f = tmp_path / "flat.toml"
    f.write_text(text)
    with pytest.raises(ConfigError):
        load_mechanism(f)
