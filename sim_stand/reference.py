"""The all-digital reference of a logged run (``dockstand report --simulate``): registered with
rt's analysis tools through the ``dockstand.references`` entry points, so rt never imports
sim_stand (docs/architecture.md, "Registries"). Not real-time.
"""
from __future__ import annotations

from pathlib import Path

from sim_stand.mechanism_kinds import model_has_mechanism


def reference_of_run(case, stand, emu, out, run_log=None, *, require_state: bool = False, on_rows=None):
    """The all-digital reference a HIL run of ``case`` on ``stand`` / ``emu`` is judged against,
    run into the log ``out`` (DigitalResult): under the stand's conditions, and for a run whose
    log ``run_log`` holds its arming, from the mechanism state the arming left and logged at the
    physics rate, so that ``compare`` gives the peak force over the run's sampling phase
    (docs/validation.md §2). Without the arming in the log the mechanism starts at rest, or
    ``require_state`` raises the PrehistoryError. Its header names the run (``reference_of``:
    the run log's path and start time), so a tool can tell it is this run's reference and reuse
    it; ``on_rows`` sees each block of rows (progress)."""
    from sim_stand.digital import DigitalSim, stand_conditions
    from sim_stand.prehistory import PrehistoryError, mechanism_state_from_run

    kw = stand_conditions(stand, emu)
    if run_log is not None:
        kw["log_rate_hz"] = 1.0 / emu.physics_dt_s
    if run_log is not None and model_has_mechanism(emu.model):
        try:
            kw["mechanism_state"] = mechanism_state_from_run(run_log, stand, emu, case=case)
        except PrehistoryError:
            kw.pop("log_rate_hz")        # as before: a run without its arming, its rate
            if require_state:
                raise
    header = None
    if run_log is not None:
        from rt.record.logscan import scan
        header = {"reference_of": {"log": str(Path(run_log).resolve()),
                                   "start_time_ns": scan(run_log).header.get("start_time_ns")}}
    return DigitalSim(case, emu, **kw).run(Path(out), header=header, on_rows=on_rows)


def simulate_reference(case_path: str | Path, stand_config: dict | None, out: str | Path,
                       origin: str = "run-log header", run_log: str | Path | None = None, on_rows=None) -> Path:
    """Run the digital reference of the case at ``case_path`` into the log ``out``: a HIL run's
    (``stand_config``, its stand configuration snapshot, given) by :func:`reference_of_run`, in
    orbit otherwise; the default emulator models. ``on_rows``: sees each block of the
    reference's rows (column 0 its time; progress). Returns the log's path."""
    from rt.config.case import load_case
    from rt.config.stand import stand_from_snapshot
    from sim_stand.cli import DEFAULT_EMULATOR
    from sim_stand.digital import DigitalSim
    from sim_stand.world_config import load_emulator

    case = load_case(case_path)
    emu = load_emulator(DEFAULT_EMULATOR).for_case(case)
    if stand_config:
        res = reference_of_run(case, stand_from_snapshot(stand_config, origin), emu, out, run_log, on_rows=on_rows)
    else:
        res = DigitalSim(case, emu).run(Path(out), on_rows=on_rows)
    return Path(res.log_path)
