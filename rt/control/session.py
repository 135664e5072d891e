"""The controller's real-time session: what the process does to the Python runtime while a run
lasts ([realtime] in the stand config; docs/controller.md, "Real-time settings").

At ARM the garbage collector is collected, frozen and disabled (``gc_freeze``), so no
collection pauses the loop while the platform moves; the collection itself (tens of ms) falls
on the arm, while the platform is only being engaged, never on the start of the run (where a
skipped deadline would cost the run-up's first period). Leaving ARMED/RUNNING (or closing)
undoes it. Scheduling,
CPU affinity and timer slack of the loop thread are applied by ``dockstand run``
(:mod:`rt.operator.commands`, :mod:`rt.realtime`) before the loop starts.

Real time: :meth:`RealtimeSession.on_transition` runs in the loop thread on a supervisor
transition (once per run, not per cycle); :meth:`RealtimeSession.leave` also at close.
"""
from __future__ import annotations

import logging

from rt import realtime as RT

log = logging.getLogger("dockstand.controller")


class RealtimeSession:
    """gc frozen while ARMED or RUNNING; ``reports`` keeps what each change did."""

    def __init__(self, gc_freeze: bool):
        self._gc = RT.GcPause(gc_freeze)
        self.reports: list[RT.Report] = []

    def on_transition(self, previous: str, state: str) -> None:
        """A supervisor transition ``previous -> state`` (state names)."""
        engaged = ("ARMED", "RUNNING")
        if state in engaged and previous not in engaged:
            self.enter()
        elif previous in engaged and state not in engaged:
            self.leave()

    def enter(self) -> None:
        """Armed: gc collected, frozen and disabled."""
        self._note(self._gc.enter())

    def leave(self) -> None:
        """Leaving ARMED/RUNNING (or closing): gc unfrozen and re-enabled."""
        self._note(self._gc.leave())

    def _note(self, r) -> None:
        if r is not None:
            self.reports.append(r)
            log.info("realtime: %s", r)
