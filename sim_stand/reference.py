"""The all-digital reference of a logged run (``dockstand report --simulate``): registered with
rt's analysis tools through the ``dockstand.references`` entry points, so rt never imports
sim_stand (docs/architecture.md, "Registries"). Not real-time.
"""
from __future__ import annotations

from pathlib import Path


def simulate_reference(case_path: str | Path, stand_config: dict | None, out: str | Path,
                       origin: str = "run-log header", run_log: str | Path | None = None) -> Path:
    """Run the digital reference of the case at ``case_path`` into the log ``out``: under the
    stand's conditions (the mechanism in 1 g, carried by the platform) when the run's stand
    configuration snapshot ``stand_config`` is given (a HIL run), in orbit otherwise; the
    default emulator models. For a HIL run whose log ``run_log`` holds its arming, the
    mechanism starts in the state the arming left it (sim_stand/prehistory.py) and the
    reference is logged at the physics rate, so that ``compare`` gives the peak force over the
    run's sampling phase (docs/validation.md §2). Returns the log's path."""
    from rt.config.case import load_case
    from rt.config.stand import stand_from_snapshot
    from sim_stand.cli import DEFAULT_EMULATOR
    from sim_stand.digital import DigitalSim, stand_conditions
    from sim_stand.prehistory import PrehistoryError, mechanism_state_from_run
    from sim_stand.world_config import load_emulator

    case = load_case(case_path)
    emu = load_emulator(DEFAULT_EMULATOR).for_case(case)
    kw = {}
    if stand_config:
        stand = stand_from_snapshot(stand_config, origin)
        kw = stand_conditions(stand, emu)
        if run_log is not None and emu.model == "mechanism":
            try:
                kw["mechanism_state"] = mechanism_state_from_run(run_log, stand, emu)
                kw["log_rate_hz"] = 1.0 / emu.physics_dt_s
            except PrehistoryError:
                pass                    # a log without its arming: the mechanism at rest
    res = DigitalSim(case, emu, **kw).run(Path(out))
    return Path(res.log_path)
