"""Config loading: every shipped preset loads; a corpus of malformed files is rejected with the
file, the key and the reason; `dockstand check-config` exits accordingly."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rt.config import ConfigError, load_any
from rt.config.case import load_case
from rt.config.vehicle import load_vehicle

ROOT = Path(__file__).resolve().parents[3]
BAD = Path(__file__).parent / "bad_configs"

# file -> (key expected in the message, words expected in the reason)
EXPECTED = {
    "vehicles/negative_mass.toml": ("mass_kg", "> 0.0"),
    "vehicles/inertia_not_spd.toml": ("inertia_kgm2", "not positive definite"),
    "vehicles/inertia_triangle.toml": ("inertia_kgm2", "triangle inequality"),
    "vehicles/inertia_asymmetric.toml": ("inertia_kgm2", "not symmetric"),
    "vehicles/inertia_shape.toml": ("inertia_kgm2", "shape 3x3"),
    "vehicles/unknown_key.toml": ("port.colour", "unknown key"),
    "vehicles/missing_mass.toml": ("mass_kg", "missing"),
    "vehicles/mass_is_string.toml": ("mass_kg", "expected a number"),
    "vehicles/quat_not_unit.toml": ("port.orientation.quaternion_wxyz", "not a unit quaternion"),
    "vehicles/quat_degenerate.toml": ("port.orientation.quaternion_wxyz", "degenerate"),
    "vehicles/dcm_reflection.toml": ("port.orientation.dcm", "reflection"),
    "vehicles/dcm_not_orthonormal.toml": ("port.orientation.dcm", "not orthonormal"),
    "vehicles/bad_sequence.toml": ("port.orientation.sequence", "repeats an axis"),
    "vehicles/two_orientations.toml": ("port.orientation", "exactly one"),
    "vehicles/mode_negative_damping.toml": ("modes[0].damping_ratio", ">= 0.0"),
    "vehicles/mode_zero_frequency.toml": ("modes[0].frequency_hz", "> 0.0"),
    "vehicles/mode_short_shape.toml": ("modes[0].shape", "shape 6"),
    "vehicles/hold_without_gains.toml": ("control.attitude_hold", "required"),
    "vehicles/bad_axis_mode.toml": ("control.rotation", "'spin'"),
    "vehicles/thrust_stop_before_start.toml": ("control.thrust.stop_s", "after start_s"),
    "vehicles/invalid_toml.toml": ("", "invalid TOML"),
    "vehicles/nan_value.toml": ("mass_kg", "finite"),
    "cases/missing_vehicle_file.toml": ("vehicles.active", "file not found"),
    "cases/modal_length.toml": ("initial.modes.active_eta", "3 modes"),
    "cases/misalignment_huge.toml": ("initial.misalignment_deg", "±90°"),
    "cases/zero_duration.toml": ("duration_s", "> 0.0"),
    "cases/lateral_three.toml": ("initial.lateral_velocity_mps", "shape 2"),
    "cases/rod_zero_stiffness.toml": ("contact.stiffness_n_per_m", "> 0.0"),
    "cases/rod_overdamped.toml": ("contact.damping_ratio", "must be < 1"),
}


def test_corpus_is_complete():
    files = {str(p.relative_to(BAD)) for p in BAD.rglob("*.toml")}
    assert files == set(EXPECTED)
    assert len(files) >= 15


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_file_is_rejected_with_file_key_and_reason(name):
    key, words = EXPECTED[name]
    path = BAD / name
    with pytest.raises(ConfigError) as e:
        load_any(path)
    msg = str(e.value)
    assert msg.startswith(str(path) + ":"), msg
    if key:
        assert f": {key}:" in msg or f": {key}" in msg, msg
    assert words in msg, msg


def presets():
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "config").rglob("*.toml"))


def test_shipped_presets_load():
    st = load_vehicle(ROOT / "config/vehicles/station.toml")
    assert st.mass_kg == pytest.approx(419455.0)
    assert len(st.modes) >= 2 and all(0.1 <= m.frequency_hz <= 5 for m in st.modes)
    so = load_vehicle(ROOT / "config/vehicles/soyuz_class.toml")
    assert 7000 <= so.mass_kg <= 20000
    c = load_case(ROOT / "config/cases/nominal.toml")
    assert c.initial.velocity_mps[0] > 0 and c.initial.position_m[0] < 0
    assert np.allclose(c.initial.R_PA @ c.initial.R_PA.T, np.eye(3), atol=1e-12)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "rt.cli", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.slow
def test_check_config_cli_exit_codes():
    r = cli("check-config", *presets())
    assert r.returncode == 0, r.stderr
    bad = sorted(str(p) for p in BAD.rglob("*.toml"))
    r = cli("check-config", *bad)
    assert r.returncode == 1
    assert r.stderr.count("error:") == len(bad)
    for p in bad:
        assert p in r.stderr


def test_version():
    r = cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("dockstand ")


def test_check_config_takes_directories_and_names_a_file_of_another_kind():
    r = cli("check-config", str(ROOT / "config"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("ok: ") == len(list((ROOT / "config").rglob("*.toml")))
    r = cli("check-config", "--kind", "vehicle", str(ROOT / "config" / "cases" / "nominal.toml"))
    assert r.returncode == 1 and "this is a case file" in r.stderr and "Traceback" not in r.stderr
