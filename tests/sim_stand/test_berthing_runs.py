"""The berthing case end to end (issue 25 item 4): the all-digital reference (arm + payload +
snare, sim_stand/digital.py) conserves the system's momentum through the capture and never gains
energy; the HIL run (the controller's berthing flight against the emulated stand in lockstep)
agrees with it as the docking cases do (docs/models/berthing.md §7)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rt.analysis.compare import compare_logs
from rt.analysis.run import load_run
from rt.config._schema import ConfigError
from rt.config.case import load_case
from rt.dynamics import spacecraft as S
from sim_stand.cli import REPO, run_demo
from sim_stand.digital import DigitalSim

from reference_agreement import check_hil_agrees

pytestmark = pytest.mark.slow

CASE = REPO / "config" / "cases" / "berthing.toml"


@pytest.fixture(scope="module")
def digital(tmp_path_factory):
    d = tmp_path_factory.mktemp("berthing_digital")
    sim = DigitalSim(CASE)
    inv0 = sim.sc.invariants()
    res = sim.run(d / "digital.dslog")
    return sim, res, inv0, sim.sc.invariants()


def test_digital_berthing_captures_and_conserves_momentum(digital):
    """Snare and joint servos are internal to the system (main spacecraft, arm, payload): its
    linear and angular momentum stay what they were, through the capture; the energy only falls
    (servo and snare dampers)."""
    sim, res, inv0, inv1 = digital
    assert res.captured and res.end_reason == "capture_settled", res
    assert res.time_to_capture_s == pytest.approx(1.5, abs=2e-3)
    assert [n for _, n in res.events] == ["first_contact", "soft_capture"]
    P0, L0 = inv0[S.I_P:S.I_P + 3], inv0[S.I_L:S.I_L + 3]
    P1, L1 = inv1[S.I_P:S.I_P + 3], inv1[S.I_L:S.I_L + 3]
    assert np.linalg.norm(P1 - P0) <= 1e-9 * np.linalg.norm(P0), (P0, P1)
    assert np.linalg.norm(L1 - L0) <= 1e-9 * np.linalg.norm(L0), (L0, L1)
    assert inv1[S.I_TOTAL] < inv0[S.I_TOTAL]
    assert 0.0 < res.energy_absorbed_j < inv0[S.I_TOTAL]
    run = load_run(res.log_path)
    cap = run.field("captured")
    assert cap[0] == 0.0 and cap[-1] == 1.0
    assert res.max_penetration_m < 2e-3        # the snare's stretch


@pytest.fixture(scope="module")
def pair(tmp_path_factory, digital):
    d = tmp_path_factory.mktemp("berthing_hil")
    hil = run_demo(CASE, log_dir=d)
    return hil, digital[1], compare_logs(hil["log"], digital[1].log_path)


def test_hil_berthing_agrees_with_the_reference(pair):
    hil, dig, rep = pair
    check_hil_agrees(hil, dig, rep)
    assert rep["rms_position_error_m"] < 1e-3, rep
    ch = {c["channel"]: c["nrmse"] for c in rep["fidelity"]["channels"]}
    # the snare's force along the approach and the closing motion, channel by channel
    assert ch["w_P.fx"] < 0.05 and ch["rel_pose.x"] < 0.01 and ch["rel_twist.vx"] < 0.02, ch


def test_berthing_case_errors_name_file_and_key(tmp_path):
    text = CASE.read_text()
    cases = {
        "active": (text.replace('[vehicles]\n', '[vehicles]\nactive = "../vehicles/atv_class.toml"\n'), "active"),
        "gains": (text.replace("joint_damping_nms_per_rad = [5.0e4, 2.0e4, 3.0e3]",
                               "joint_damping_nms_per_rad = [5.0e4, -2.0e4, 3.0e3]"), "joint_damping_nms_per_rad"),
        "arm": (text.replace('arm = "../arms/berthing_arm.toml"', 'arm = "../arms/missing.toml"'), "arm"),
        "pin": (text.replace("pin_point_m = [-0.50, 0.0, 0.0]", "pin_point_m = [-5.0, 0.0, 0.0]"), "pin_point_m"),
    }
    d = tmp_path / "config" / "cases"
    d.mkdir(parents=True)
    (tmp_path / "config" / "arms").mkdir()
    (tmp_path / "config" / "vehicles").mkdir()
    for sub in ("arms/berthing_arm.toml", "vehicles/htv_class.toml", "vehicles/atv_class.toml"):
        (tmp_path / "config" / sub).write_text((REPO / "config" / sub).read_text())
    for name, (body, key) in cases.items():
        p = d / f"{name}.toml"
        p.write_text(body)
        with pytest.raises(ConfigError) as e:
            load_case(p)
        msg = str(e.value)
        assert str(p) in msg and key in msg, msg
