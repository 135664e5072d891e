"""The berthing-arm config (config/arms/*.toml): the preset loads; bad input names file, key and
reason (issue 25: EI <= 0, zero modes, reversed joint limits, a payload inertia that is not
positive definite)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rt.config import load_any
from rt.config.arm import load_arm

from config_edits import config_error

ROOT = Path(__file__).resolve().parents[3]
ARM = ROOT / "config/arms/berthing_arm.toml"


def test_preset_loads():
    a = load_arm(ARM)
    assert [l.name for l in a.links] == ["upper_boom", "lower_boom"]
    assert np.allclose(a.links[0].ei_nm2, [8.5e6, 8.5e6]) and a.links[1].modes_per_plane == 2
    assert [j.name for j in a.joints] == ["shoulder", "elbow", "wrist"]
    assert a.joints[1].limits_rad[0] == pytest.approx(np.radians(-170.0))
    assert load_any(ARM).name == "berthing_arm"          # the kind comes from the folder


@pytest.mark.parametrize("old,new,key,reason", [
    ("ei_nm2 = 8.5e6                  # both", "ei_nm2 = -1.0                  # both", "links[0].ei_nm2", "> 0"),
    ("ei_nm2 = 8.5e6\n", "ei_nm2 = [8.5e6, 0.0]\n", "links[1].ei_nm2", "> 0"),
    ("modes_per_plane = 2\n\n[[links]]", "modes_per_plane = 0\n\n[[links]]", "links[0].modes_per_plane", ""),
    ("limits_deg = [-170.0, 170.0]", "limits_deg = [170.0, -170.0]", "joints[1].limits_deg", "lower limit"),
    ("initial_deg = -100.0", "initial_deg = -200.0", "joints[1].initial_deg", "outside the limits"),
    ("inertia_kgm2 = [[1.5e4, 0.0, 0.0], [0.0, 6.0e4, 0.0], [0.0, 0.0, 6.0e4]]",
     "inertia_kgm2 = [[1.5e4, 0.0, 0.0], [0.0, -6.0e4, 0.0], [0.0, 0.0, 6.0e4]]",
     "payload.inertia_kgm2", "not positive definite"),
    ('axis = "z"\nposition_m', 'axis = "w"\nposition_m', "joints[0].axis", "must be one of"),
])
def test_bad_input_names_file_key_reason(tmp_path, old, new, key, reason):
    p = tmp_path / "arm.toml"
    e = config_error(load_arm, ARM.read_text(), old, new, p)
    assert e.file == str(p) and e.key == key, str(e)
    assert reason in e.reason
