"""The mechanism's state at the start of a HIL run's dynamics, replayed from the run log
(sim_stand/prehistory.py): it must be the state the emulated stand's mechanism really had then
(recorded here from the emulator's own world, run in a thread), and the reference started from
it must meet the first contact when the stand did."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rt.config.case import load_case
from rt.config.stand import load_stand
from sim_stand.cli import DEFAULT_STAND, REPO, _emulator_config
from sim_stand.closed_loop import run_closed_loop
from sim_stand.prehistory import PrehistoryError, mechanism_state_from_run
from sim_stand.world import StandWorld

CASE = REPO / "config" / "cases" / "probe_cone.toml"


@pytest.fixture(scope="module")
def run(tmp_path_factory, monkeypatch_module):
    d = tmp_path_factory.mktemp("prehistory")
    seen = []
    advance = StandWorld.advance

    def recording(self, cmd, dt):
        advance(self, cmd, dt)
        seen.append((self.t, self.xr.copy()))
    monkeypatch_module.setattr(StandWorld, "advance", recording)
    stand = load_stand(DEFAULT_STAND)
    case = replace(load_case(CASE), duration_s=0.2)
    emu = _emulator_config(None, CASE)
    res = run_closed_loop(stand, case, emu, log_dir=d)
    monkeypatch_module.undo()
    return stand, emu, res, seen


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_replay_gives_the_emulated_mechanisms_state_at_the_start_of_the_dynamics(run):
    stand, emu, res, seen = run
    t0 = res.controller["t_dynamics_start_s"]
    xr = mechanism_state_from_run(res.controller["log"], stand, emu)
    # the same physics under the same commands: the emulator's state after the last command
    # before the dynamics (its clock names the period after it the dynamics' start), to rounding
    t_match, xr_emu = min(seen, key=lambda s: float(np.abs(s[1] - xr).max()))
    np.testing.assert_allclose(xr, xr_emu, rtol=0, atol=1e-12)
    assert abs(t_match - t0) <= 1.0 / stand.rate_hz + 1e-9, (t_match, t0)
    # not the rest state at home (gimbal centred): the arming tilted the platform by the case's
    # 1 deg (static sag (12 kg x 0.25 m + 5 kg x 0.8 m) g sin(1 deg) / 2000 N m/rad ~ 0.6 mrad)
    # and the run-up swung it, so a state one period away would not match either
    assert np.abs(xr[0:2]).max() > 3e-4 and np.abs(xr[3:5]).max() > 1e-3, xr


def test_a_log_without_the_arming_is_refused(tmp_path, run):
    from rt.record.runlog import RunLogWriter
    stand, emu, _, _ = run
    p = tmp_path / "short.dslog"
    with RunLogWriter(p, {"t": 1, "cmd_lengths": 6}, threaded=False) as w:
        w.view("t")[0] = 0.0
        w.commit()
    with pytest.raises(PrehistoryError, match="no records before the dynamics"):
        mechanism_state_from_run(p, stand, emu)
    with pytest.raises(PrehistoryError, match="no such file"):
        mechanism_state_from_run(tmp_path / "missing.dslog", stand, emu)

