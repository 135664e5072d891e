"""The docking mechanism's status signals, read from the motion platform's digital inputs
(docs/controller.md, "Mechanism inputs").

A stand wires the mechanism control unit's discrete outputs — soft capture, each capture latch
closed — to the platform controller's digital inputs; every STATUS carries the input word
(docs/protocols.md) and the stand config's ``[platform.inputs]`` says which bit is which
(``rt.config.stand.MechanismInputs``). The compiled ingest notices a change of the word
(``rt.control.kernels`` ``IN_INPUTS_CHG``); the functions here name its edges as events and
answer "does the mechanism report capture?".

Real time: :func:`edges` runs in the loop thread only on the cycle whose STATUS changed the
word (a handful per run); :func:`captured` and :func:`describe` are for guards, summaries and
consoles (no I/O, small allocations); :func:`capture_signal_edge` keeps a run's capture time
and hold on the controller (loop thread, on the cycle of an edge).
"""
from __future__ import annotations

__all__ = ["edges", "captured", "describe", "capture_signal_edge", "EVENT_KINDS"]

#: event kind -> what it says (consoles, reports)
EVENT_KINDS = {
    "capture": "the mechanism reports soft capture",
    "capture_released": "the mechanism's capture signal dropped",
    "latch_closed": "a capture latch reports closed",
    "latch_opened": "a capture latch reports open",
}


def _bit(word: int, b: int) -> bool:
    return b >= 0 and bool((word >> b) & 1)


def edges(inputs, old: int, new: int) -> list[dict]:
    """The wired signals that changed from word ``old`` to ``new``, as events (latches first,
    in the mechanism's order, then capture: a capture follows its last latch)."""
    out = []
    for k, b in enumerate(inputs.latches):
        was, now = _bit(old, b), _bit(new, b)
        if was != now:
            out.append({"kind": "latch_closed" if now else "latch_opened", "latch": k + 1, "bit": b})
    b = inputs.capture
    if b >= 0 and _bit(old, b) != _bit(new, b):
        out.append({"kind": "capture" if _bit(new, b) else "capture_released", "bit": b})
    return out


def captured(inputs, word: int) -> bool | None:
    """Whether the mechanism reports capture in ``word``; None when no capture signal is wired."""
    if inputs.capture < 0:
        return None
    return _bit(word, inputs.capture)


def describe(inputs, word: int) -> dict:
    """The wired signals in ``word``, by name: ``{"capture": bool | None, "latches": [bool, ...]}``
    (a console's panel, ``status``)."""
    return {"capture": captured(inputs, word), "latches": [_bit(word, b) for b in inputs.latches]}


def capture_signal_edge(ctl, kind: str) -> None:
    """A run's capture-signal edge (``kind``: an event kind of the mechanism's signals) from
    the authoritative source (the mechanism's own link where the stand has one, else the
    platform's digital inputs): the first capture of the run is its capture time; the signal
    held since its last rise ends the run by ``rt.control.procedures.capture_signal_check``.
    Loop thread, on the cycle of an edge.

    Parameters
    ----------
    ctl : rt.control.controller.Controller
        The controller: its ``capture_t_run`` and ``capture_held_since`` (run time, s) are set.
    kind : str
        The edge's event kind (``capture``, ``capture_released``; others change nothing).
    """
    if kind == "capture":
        if ctl.capture_t_run is None:
            ctl.capture_t_run = ctl.t_run
        ctl.capture_held_since = ctl.t_run
    elif kind == "capture_released":
        ctl.capture_held_since = None
