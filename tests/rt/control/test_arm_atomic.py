"""ARM is atomic (issue 38): a failure injected at each step of ARM — the run log's file, the
free disk space, the flight model, a guard — refuses the arm, leaves the supervisor
CONFIGURED and the phase IDLE, leaves no log file behind, and the platform never sees an
ENGAGE. Then an arm with nothing injected engages it. The controller on the kinematic rig
(memory transports, real device ends)."""
from __future__ import annotations

import errno
import shutil

import pytest

from drivers.motion_platform import PlatformState
from rt.control import operator_api as OA
from rt.control.recorder import Recorder
from sim_stand.kinematic_rig import NOMINAL, Rig

from rig_steps import arm_refused_cleanly as _refused_cleanly, engages as _engages


@pytest.fixture
def rig(tmp_path):
    r = Rig(tmp_path / "logs")
    r.run(3)
    assert r.ctl.command("load_case", case=str(NOMINAL)).ok
    yield r
    r.close()


def test_a_failure_at_each_step_of_arm_leaves_the_platform_untouched(rig, tmp_path, monkeypatch):
    c = rig.ctl
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)

    # 1. the log file cannot be made
    def no_file(self, *a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(logs / "x.dslog"))
    with monkeypatch.context() as m:
        m.setattr(Recorder, "prepare", no_file)
        _refused_cleanly(rig, logs, c.command("arm"), "the run log cannot be opened: Permission denied")

    # 2. the disk has less room than the run needs
    real = shutil.disk_usage
    with monkeypatch.context() as m:
        m.setattr(shutil, "disk_usage", lambda p: real(p)._replace(free=3 << 20))
        r = c.command("arm")
        _refused_cleanly(rig, logs, r, "3 MB free in")
        assert "the run log needs up to" in r.reason and "Nothing was armed" in r.reason

    # 3. the flight model cannot be built (after the log was opened: the log goes again)
    def broken(case):
        raise ValueError("a broken vehicle")
    with monkeypatch.context() as m:
        m.setattr(OA, "flight_from_case", broken)
        _refused_cleanly(rig, logs, c.command("arm"), "flight model of the case could not be built")

    # 4. a guard refuses (the platform reports a drive fault): the log opened for it goes again
    rig.state, rig.fault = PlatformState.FAULT, 6
    rig.run(5)
    _refused_cleanly(rig, logs, c.command("arm"), "the platform reports FAULT (fault 6); reset_fault first")
    rig.state, rig.fault = PlatformState.IDLE, 0
    rig.run(5)

    # nothing injected: the arm engages the platform and its log is open
    r = c.command("arm")
    assert r.ok, r.reason
    rig.run(5)
    assert _engages(rig) == 1 and c.writer is not None and c.writer.path.exists()
    assert c.recorder_health()["state"] == "recording"
