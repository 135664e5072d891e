"""The emulated stand's events on the model's clock (docs/validation.md §2).

A HIL run has two clocks. The emulator times what happens on the stand (soft capture) by its
own periods; the controller's run log times the model's state (``t``, seconds since the case's
initial state). They are not one clock shifted by the start of the dynamics: the compensated
platform runs *ahead* of the model's state, by the measurement's part of the loop delay (the
sensing low-pass's group delay, 2.2 ms in lockstep) plus the loop's own sampling offsets (a
command predicted from the state at the end of the cycle, held over the next one: measured
2.80 ms on the probe–cone approach for 2.23 ms of filter delay), so that the force the stand
meets reaches the model at the state it belongs to. An event on the stand therefore comes a
few milliseconds early on the emulator's clock, and comparing it with the all-digital
reference's time (the model's clock) would show that lead, not an error of the loop.

:func:`capture_on_model_clock` maps the capture by *where* it happened: the model time at
which the model's relative position reaches the position of A in P at which the stand
captured (the emulator reports it). :func:`stand_event_on_model_clock` is the clock estimate
it starts from (and the answer when the log cannot tell).

Not for the real-time loop (reads a run log after the run).
"""
from __future__ import annotations

import numpy as np

SEARCH_S = 0.05        # look for the capture position within this much of the clock estimate
MAX_MISS_M = 0.005     # the model's path must come this close to the stand's capture position


def stand_event_on_model_clock(t_event, t_dynamics_start, stand, compensate: bool = True):
    """An event the emulator timed (s of its clock), in s since the case's initial state on
    the model's clock, estimated from the clocks alone: the start of the dynamics, plus the
    measurement's delay (``Delays.measurement_s``) that the compensated platform leads by.
    None if either time is."""
    if t_event is None or t_dynamics_start is None:
        return None
    return t_event - t_dynamics_start + (stand.delays.measurement_s if compensate else 0.0)


def capture_on_model_clock(log_path, position_P, estimate):
    """The model time (s) at which the model's relative position ``rel_pose[:3]`` in the run
    log at ``log_path`` passes ``position_P`` (A in P at the stand's capture, m), searched
    within :data:`SEARCH_S` of ``estimate`` (:func:`stand_event_on_model_clock`) and refined
    along the model's relative velocity between log records. ``estimate`` if the position or
    the log is missing, or the model's path never comes within :data:`MAX_MISS_M` of it."""
    if estimate is None or position_P is None or log_path is None:
        return estimate
    from rt.record.runlog import read_log
    try:
        f = read_log(log_path, ["t", "rel_pose", "rel_twist"]).fields
    except (OSError, ValueError):
        return estimate
    t = f["t"]
    sel = np.isfinite(t) & (np.abs(t - estimate) <= SEARCH_S)
    if not sel.any():
        return estimate
    t, r, v = t[sel], f["rel_pose"][sel, :3], f["rel_twist"][sel, :3]
    d = r - np.asarray(position_P, dtype=np.float64)
    k = int(np.argmin(np.einsum("ij,ij->i", d, d)))
    if float(np.linalg.norm(d[k])) > MAX_MISS_M:
        return estimate
    vv = float(v[k] @ v[k])
    if vv <= 1e-12:
        return float(t[k])
    return float(t[k] - (d[k] @ v[k]) / vv)
