"""The all-digital reference of a logged run (``dockstand report --simulate``): registered with
rt's analysis tools through the ``dockstand.references`` entry points, so rt never imports
sim_stand (docs/architecture.md, "Registries"). Not real-time.
"""
from __future__ import annotations

from pathlib import Path


def simulate_reference(case_path: str | Path, stand_config: dict | None, out: str | Path,
                       origin: str = "run-log header") -> Path:
    """Run the digital reference of the case at ``case_path`` into the log ``out``: under the
    stand's conditions (the mechanism in 1 g, carried by the platform) when the run's stand
    configuration snapshot ``stand_config`` is given (a HIL run), in orbit otherwise; the
    default emulator models. Returns the log's path."""
    from rt.config.case import load_case
    from rt.config.stand import stand_from_snapshot
    from sim_stand.cli import DEFAULT_EMULATOR
    from sim_stand.digital import DigitalSim, stand_conditions
    from sim_stand.world_config import load_emulator

    case = load_case(case_path)
    emu = load_emulator(DEFAULT_EMULATOR).for_case(case)
    kw = stand_conditions(stand_from_snapshot(stand_config, origin), emu) if stand_config else {}
    res = DigitalSim(case, emu, **kw).run(Path(out))
    return Path(res.log_path)
