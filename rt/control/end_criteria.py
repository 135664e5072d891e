"""How a run ends, once for every kind of run (docs/controller.md, "End criteria"): the HIL
loop (rt.control.kernels.run_statistics), the all-digital reference
(sim_stand.digital_model) and campaigns (sim_stand.campaign.outcome) judge and name the end of
a run with this table and :func:`end_of_run`.

Each end has a code (the kernels' ``stats[ST_END]`` and the reference's ``J_END``), a key (the
run log's and a campaign's ``end_reason``: a snake_case word), the words an operator reads
(the controller's ``finish_reason``), and what it means for a campaign sample that did not
capture. The criteria are checked in this order, the first that holds ends the run:

1. ``capture_settled`` — the mechanism has held capture for the case's ``end.capture_settle_s``:
   the reference from its mechanism's soft capture; the HIL loop from the mechanism's capture
   signal where the stand wires one (:func:`capture_signal_settled`: the same instant as the
   reference's, plus the signal's transport), and otherwise from what it measures — after the
   first contact the units have stayed together at relative rest for ``end.capture_settle_s``;
2. ``separated`` — the relative distance exceeds the case's start distance plus
   ``end.separation_m``;
3. ``time_limit`` — the case's ``duration_s`` is over.

The reference has three more, each a failure of the model rather than of the docking:
``penetration_limit``, ``mechanism_error``, ``diverged``.
"""
from __future__ import annotations

from typing import NamedTuple

from numba import njit

from rt.jit import KERNEL

END_NONE, END_TIME_LIMIT, END_SEPARATED, END_CAPTURE_SETTLED, END_PENETRATION, END_MECHANISM, END_DIVERGED = range(7)


class End(NamedTuple):
    key: str            # the run log's and a campaign row's end_reason
    words: str          # what the operator reads (the controller's finish_reason)
    no_capture: str     # a campaign sample that ended so without capture: why


ENDS: dict[int, End] = {
    END_TIME_LIMIT: End("time_limit", "time limit", "no capture within the duration"),
    END_SEPARATED: End("separated", "separated", "the units separated"),
    END_CAPTURE_SETTLED: End("capture_settled", "capture settled", "captured"),
    END_PENETRATION: End("penetration_limit", "penetration limit", "the contact penetrated beyond its limit"),
    END_MECHANISM: End("mechanism_error", "mechanism error", "the mechanism model failed"),
    END_DIVERGED: End("diverged", "diverged", "the integration diverged"),
}
#: key -> code, words -> code (a log or a row read back)
BY_KEY: dict[str, int] = {e.key: c for c, e in ENDS.items()}
BY_WORDS: dict[str, int] = {e.words: c for c, e in ENDS.items()}


def no_capture_reason(end: str | None) -> str:
    """Why a sample that ended with ``end`` (a key or the words) did not capture."""
    code = BY_KEY.get(end or "", BY_WORDS.get(end or "", END_NONE))
    return ENDS[code].no_capture if code in ENDS else (end or "the run did not end")


def capture_signal_settled(t_run: float, held_since: float | None, settle_s: float) -> bool:
    """Whether the mechanism's capture signal, high since run time ``held_since`` (None: not
    held), has held for ``settle_s`` at run time ``t_run`` (criterion 1 on a stand that wires
    the signal; ``rt.control.procedures.capture_signal_check``). Real time: two comparisons.

    Parameters
    ----------
    t_run : float
        Run time now (s, the case's clock).
    held_since : float or None
        Run time (s) at which the capture signal rose and has stayed high since; None while
        it is low.
    settle_s : float
        The case's ``end.capture_settle_s`` (s).
    """
    return held_since is not None and t_run - held_since >= settle_s - 1e-9


@njit(inline="always", **KERNEL)
def end_of_run(t, duration, distance, separation, settled):
    """The end that holds at run time ``t`` (s), in the module's order: ``settled`` (the
    capture-settled conditions held), ``distance`` (m) beyond ``separation`` (m), ``t`` at
    ``duration`` (s); END_NONE while none does.

    Parameters
    ----------
    t : float
        Run time, s.
    duration : float
        The run's time limit, s.
    distance : float
        Distance of A's origin from P's, |r_DPA|, m.
    separation : float
        The separation distance that ends the run, m.
    settled : bool
        The capture-settled conditions have held long enough.
    """
    if settled:
        return END_CAPTURE_SETTLED
    if distance > separation:
        return END_SEPARATED
    if t >= duration - 1e-9:
        return END_TIME_LIMIT
    return END_NONE
