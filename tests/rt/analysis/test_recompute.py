"""``dockstand recompute`` on a real lockstep demo run: the logged commands reproduced bit for
bit, a changed sample found, a what-if that differs where, and only where, it should."""
from __future__ import annotations

import json
import shutil
import struct

import numpy as np
import pytest

from rt.analysis.recompute import PHASE_DYNAMICS, cmd_recompute, recompute
from rt.analysis.run import load_run
from rt.cli import build_parser
from rt.record.logscan import scan
from rt.record.runlog import read_log


def _args(*argv):
    return build_parser().parse_args(["recompute", *argv])


def test_the_logged_commands_are_reproduced_bit_for_bit(demo_log, capsys):
    res = recompute(load_run(demo_log))
    ph = read_log(demo_log, ["phase"]).fields["phase"]
    assert res.rows == int(np.sum(ph == PHASE_DYNAMICS)) - 1      # all but the run-up's last step
    assert res.reproduced and all(v == 0.0 for v in res.max_abs.values()) and res.first_diff is None
    assert cmd_recompute(_args(demo_log, "--json")) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["reproduced"] and rep["identical"] == rep["cycles"] == res.rows


def test_an_altered_sample_is_found(demo_log, tmp_path, capsys):
    bad = tmp_path / "altered.dslog"
    shutil.copy(demo_log, bad)
    idx = scan(bad)
    log = read_log(bad, ["phase", "t"])
    i = int(np.nonzero(log.fields["phase"] == PHASE_DYNAMICS)[0][2000])
    b = int(np.searchsorted(idx.block_i0, i, side="right")) - 1
    off = int(idx.block_offset[b]) + 8 * (idx.width * (i - int(idx.block_i0[b])) + idx.offsets["raw"] + 2)
    with open(bad, "r+b") as f:      # one count more on channel 2 of one sample: framing intact
        f.seek(off)
        v = struct.unpack("<d", f.read(8))[0]
        f.seek(off)
        f.write(struct.pack("<d", v + 1.0))
    assert cmd_recompute(_args(str(bad))) == 1
    out = capsys.readouterr().out
    assert f"first difference at record {i} " in out and "in w_P" in out
    res = recompute(load_run(bad))
    assert res.first_diff["record"] == i and res.first_diff["t"] == log.fields["t"][i]
    assert res.identical == i - int(res.kernel[0])       # every cycle before it still identical


def test_what_if_without_compensation_differs_only_in_the_command(demo_log, tmp_path):
    out = tmp_path / "whatif.dslog"
    assert cmd_recompute(_args(demo_log, "--set", "compensate=false", "-o", str(out))) == 0
    a, b = read_log(demo_log), read_log(out)
    assert b.header["kind"] == "recompute" and b.header["set"] == {"compensate": False}
    assert a.n_records == b.n_records
    for f in ("t", "raw", "meas_pose", "meas_lengths", "w_P", "x", "rel_pose", "rel_twist", "phase"):
        assert np.array_equal(a.fields[f], b.fields[f], equal_nan=True), f      # open loop: same wrench, same motion
    res = recompute(load_run(demo_log), {"compensate": False})
    k = res.kernel
    moved = np.any(a.fields["cmd_pose"][k] != b.fields["cmd_pose"][k], axis=1)
    assert moved.all()                      # the prediction acts from the first kernel cycle on
    rest = np.setdiff1d(np.arange(a.n_records), k)
    assert np.array_equal(a.fields["cmd_pose"][rest], b.fields["cmd_pose"][rest], equal_nan=True)
    # the prediction leads by tau: without it the command lags by about v tau (0.1 m/s x ~5 ms)
    lag = np.linalg.norm(a.fields["cmd_pose"][k, :3] - b.fields["cmd_pose"][k, :3], axis=1)
    tau = a.header["tau_s"]
    assert 0.5 * 0.1 * tau < np.median(lag[:1000]) < 1.5 * 0.1 * tau


def test_a_longer_filter_changes_the_wrench_and_everything_downstream(demo_log):
    from rt.stand.sensing import lowpass_group_delay_s
    res = recompute(load_run(demo_log), {"filter_cutoff_hz": 20.0})
    assert not res.reproduced and res.max_abs["w_P"] > 1.0 and res.max_abs["x"] > 0.0
    # and the lead with it, as the controller derives it from the filter (100 Hz -> 20 Hz)
    assert res.lead_shift_s == pytest.approx(lowpass_group_delay_s(20.0, 0.5 ** 0.5, 1000.0)
                                             - lowpass_group_delay_s(100.0, 0.5 ** 0.5, 1000.0), rel=1e-12)
    assert res.lead_shift_s > 0.005
    none = recompute(load_run(demo_log), {"filter_cutoff_hz": None, "tau_s": 0.003})
    assert none.lead_shift_s == 0.0                       # a lead given: kept as given


@pytest.mark.parametrize("argv, msg", [(["--set", "foo=1"], "unknown key"), (["--set", "tau_s=abc"], "expected seconds"),
                                       (["--set", "tau_s=-0.001"], "expected seconds >= 0"),
                                       (["--set", "tau_s=5"], "is no loop delay"),
                                       (["--set", "compensate"], "KEY=VALUE")])
def test_bad_overrides_are_one_line_exit_2(demo_log, capsys, argv, msg):
    assert cmd_recompute(_args(demo_log, *argv)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]


@pytest.mark.slow
def test_a_digital_log_is_refused(digital_log, capsys):
    assert cmd_recompute(_args(digital_log)) == 2
    assert "recompute replays a HIL run's log" in capsys.readouterr().err


def test_a_zero_cutoff_is_no_filter():
    from rt.analysis.recompute import parse_overrides
    assert parse_overrides(["filter_cutoff_hz=0"]) == {"filter_cutoff_hz": None}
    assert parse_overrides(["filter_cutoff_hz=none", "tau_s=0.004"]) == {"filter_cutoff_hz": None, "tau_s": 0.004}
