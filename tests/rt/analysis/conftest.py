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


@pytest.fixture(scope="session")
def early_reference(tmp_path_factory):
    """A digital reference of the demo's case that ends before the run does (its duration cut
    to 3 s: it ends on its time limit, the run at its capture settling, 4.54 s): what a run that
    goes on after its reference's end shows (a stand without a capture signal runs to its time
    limit while the reference ends when its capture settles)."""
    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from sim_stand.cli import DEFAULT_EMULATOR, DEFAULT_STAND, REPO
    from sim_stand.digital import DigitalSim, stand_conditions
    from sim_stand.world_config import load_emulator
    case = load_case(REPO / "config" / "cases" / "nominal.toml")
    emu = load_emulator(DEFAULT_EMULATOR).for_case(case)
    sim = DigitalSim(case, emu, duration_s=3.0, **stand_conditions(load_stand(DEFAULT_STAND), emu))
    return str(sim.run(tmp_path_factory.mktemp("early") / "early.dslog").log_path)
