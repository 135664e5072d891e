"""The docking mechanism's state at the start of a HIL run's dynamics, for the all-digital
reference that judges it (docs/validation.md §2).

On the stand the mechanism rides on the platform from the emulator's reset at the home pose
through the arming move, the tare and the run-up before the dynamics begin. Where it then sits
depends on that history: springs follow the platform's tilt (the probe's gimbal sags 0.6 mrad
under a 1° misalignment), friction holds (the peripheral ring stays within its friction band,
millimetres from its rest). A reference started at *a* rest state meets the first contact up to
20 ms (offset case) or 115 ms (low-energy case) away from the stand's, and every later figure
carries that difference, not the loop's.

:func:`mechanism_state_from_run` replays the platform commands the controller logged before the
dynamics on the emulated stand (``sim_stand.world.StandWorld``, the emulator's own physics,
reset at home as the emulator is) and returns the mechanism's state at the first cycle of the
dynamics: the reference then starts from the state the stand's mechanism had.

Not for the real-time loop (a whole replay, seconds of physics).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sim_stand.mechanism_kinds import model_has_mechanism


def _kind(log_path) -> str | None:
    from rt.record.runlog import read_log
    try:
        return read_log(log_path, ["t"]).header.get("kind")
    except (KeyError, ValueError, OSError):
        return None


class PrehistoryError(ValueError):
    """The run log cannot give the mechanism's state (no records before the dynamics, a log of
    another kind, a mechanism the emulator config does not have)."""


def mechanism_state_from_run(log_path: str | Path, stand, emu, mechanism=None, case=None) -> np.ndarray:
    """The mechanism state (``StandWorld.xr``: the ring's 12-state or a tree's ``[p, pd]``) at the
    first record of the dynamics of the HIL run logged at ``log_path``, from its commanded
    actuator lengths (``cmd_lengths``) before it, one controller period each, on the emulated
    stand ``stand`` / ``emu`` (an EmulatorConfig for the run's case; ``mechanism``: a parallel
    mechanism config replacing its file's, as in a campaign). ``case`` (optional): the case the
    reference will run, refused if the log is another case's run."""
    from rt.record.runlog import read_log
    from sim_stand.world import StandWorld

    if not Path(log_path).is_file():
        raise PrehistoryError(f"{log_path}: no such file")
    try:
        log = read_log(log_path, ["t", "cmd_lengths"])
    except (KeyError, ValueError) as e:
        kind = _kind(log_path)
        what = f"a {kind} log" if kind else "not a run log"
        raise PrehistoryError(f"{log_path}: {what}, not a HIL run's (no commanded actuator lengths)") from None
    digest = log.header.get("case_digest")
    if case is not None and digest and getattr(case, "digest", None) and digest != case.digest:
        raise PrehistoryError(f"{log_path}: a run of case {log.header.get('case')!r}, not of {case.source or case.name}"
                              f" (the case digests differ): its arming is not this case's")
    f = log.fields
    t = f["t"]
    started = np.flatnonzero(np.isfinite(t) & (t >= 0.0))
    if started.size == 0 or started[0] == 0:
        raise PrehistoryError(f"{log_path}: no records before the dynamics (the arming is not in the log)")
    if not model_has_mechanism(emu.model):
        raise PrehistoryError(f"the emulator config's model is {emu.model!r}: no docking mechanism to replay")
    world = StandWorld(stand, emu, mechanism=mechanism)
    period = 1.0 / float(stand.rate_hz)
    world.advance(world.lengths.copy(), period)          # the emulator's first period after its reset
    for L in f["cmd_lengths"][:started[0]]:
        world.advance(np.ascontiguousarray(L), period)
    return world.xr.copy()
