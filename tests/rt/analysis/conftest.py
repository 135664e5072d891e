"""One lockstep HIL demo run and its digital reference, shared by the analysis tests (the
emulator and the controller in lockstep: deterministic)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def demo_log(tmp_path_factory):
    """The run log of the nominal case's lockstep demo (controller + emulator, compensation on)."""
    from sim_stand.cli import REPO, run_demo
    d = tmp_path_factory.mktemp("demo")
    res = run_demo(REPO / "config" / "cases" / "nominal.toml", log_dir=d)
    return res["log"] if isinstance(res["log"], str) else str(res["log"])


@pytest.fixture(scope="session")
def digital_log(demo_log, tmp_path_factory):
    """The all-digital reference of the demo run, under the stand's conditions, from the run's
    own case and stand snapshot (the path ``dockstand report --simulate`` takes)."""
    from rt.analysis.commands import simulate_reference
    from rt.analysis.run import load_run
    return str(simulate_reference(load_run(demo_log), tmp_path_factory.mktemp("ref") / "digital.dslog"))
