"""The controller's recorder: the run log of one run and the event stream (docs/controller.md,
"Run log").

A :class:`Recorder` opens a :class:`rt.record.runlog.RunLogWriter` when a run is armed, whose
ring and cursor the cycle's compiled kernels commit the record row into (``commit_row``); it
closes the log from the loop thread without waiting (the writer thread writes the rest, the
footer, fsyncs and closes the file). Every event (phase changes, supervisor transitions and
trips, first contact, lease changes) goes to a bounded in-memory history, the open log and
the telemetry publisher.

Real time: :meth:`Recorder.event` and :meth:`Recorder.close` with ``block=False`` may be
called by the loop thread (they do not wait); :meth:`Recorder.open` opens a file and is called
on ``arm`` (a command, between cycles); :meth:`Recorder.wait_closed` joins threads and is not
real-time.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import numpy as np

from rt.record.runlog import CUR_CLOSED, RunLogWriter
from rt.stand.delay_id import DR_LEN

MAX_EVENTS = 10000      # the in-memory history keeps the newest half when it reaches this
PROLOGUE_EVENTS = 100   # at most this many of the events since the last log go into a new one


def record_fields(n_raw: int, ns: int) -> dict[str, int]:
    """Run-log (and telemetry) record layout of the controller (docs/controller.md)."""
    return {"t": 1, "cycle": 1, "state": 1, "phase": 1, "trip": 1, "timing_ns": 4, "new_sample": 1,
            "raw": n_raw, "w_S": 6, "w_P": 6, "x": 2 * ns, "rel_pose": 7, "rel_twist": 6, "rel_acc": 6,
            "cmd_pose": 7, "cmd_twist": 6, "cmd_acc": 6, "cmd_lengths": 6, "meas_pose": 7, "meas_lengths": 6,
            "platform_state": 1, "platform_fault": 1, "platform_last_seq": 1, "platform_inputs": 1,
            "crc_errors": 1, "seq_gaps": 1,
            "missed": 1, "delay": DR_LEN}


def closed_sink(width: int) -> tuple[np.ndarray, np.ndarray]:
    """A ring and cursor that accept no record: where the kernels commit while no log is open."""
    cursor = np.zeros(4, dtype=np.int64)
    cursor[CUR_CLOSED] = 1
    return np.zeros((1, width)), cursor


class Recorder:
    """Run log and events of a controller. ``clock()`` gives ``(t, cycle)`` for each event;
    ``publish(event)`` (the telemetry server's, once it exists) sends it to consoles."""

    def __init__(self, enabled: bool, log_dir: Path, flush_interval_s: float,
                 clock: Callable[[], tuple[float, int]], auditor: Callable[[Path], dict] | None = None):
        self.enabled = bool(enabled)
        self.log_dir = Path(log_dir)
        self.flush_interval_s = float(flush_interval_s)
        self.clock = clock
        self.publish: Callable[[dict], None] | None = None
        self.writer: RunLogWriter | None = None
        self.log_path: Path | None = None
        self.events: list[dict] = []
        self._n_events = 0          # events ever recorded; at the last log's opening: _n_logged
        self._n_logged = 0
        self._closing: list[RunLogWriter] = []   # close requested, the writer thread finishes it
        # the energy audit of each log (``auditor(path)``: the shell passes rt.analysis.audit's
        # energy_verdict with the stand's bound), by its writer thread before the footer
        self.auditor = auditor
        self.audits: dict[Path, dict] = {}

    # ------------------------------------------------------------------ events (loop thread)
    def event(self, ev: dict) -> None:
        t, cycle = self.clock()
        self._n_events += 1
        ev = {"t": t, "cycle": cycle, "eseq": self._n_events, **ev}
        self.events.append(ev)
        if len(self.events) > MAX_EVENTS:
            del self.events[:MAX_EVENTS // 2]
        if self.writer is not None:
            self.writer.event(ev["kind"], **{k: v for k, v in ev.items() if k != "kind"})
        if self.publish is not None:
            self.publish(ev)

    @property
    def event_seq(self) -> int:
        """The number of events recorded so far: the ``eseq`` of the newest (1, 2, … per process)."""
        return self._n_events

    def events_since(self, eseq: int, limit: int = 200) -> list[dict]:
        """The events after ``eseq`` still in the history, oldest first, at most ``limit`` (a
        console fills the gap of events its subscription lost). Bounded work, no I/O."""
        ev = self.events
        k = len(ev)
        while k > 0 and ev[k - 1]["eseq"] > eseq:
            k -= 1
        return ev[k:k + limit]

    # ------------------------------------------------------------------ the run log
    def open(self, name: str, fields: dict[str, int], row: np.ndarray, header: dict) -> RunLogWriter | None:
        """Close the previous log (without waiting) and open ``<log_dir>/<time>-<name>.dslog``
        whose writer stages ``row``; None when recording is off."""
        self.close(block=False)
        if not self.enabled:
            return None
        self.log_dir.mkdir(parents=True, exist_ok=True)
        stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{name}"
        path = self.log_dir / f"{stem}.dslog"
        k = 1
        while path.exists():
            path = self.log_dir / f"{stem}-{k}.dslog"
            k += 1
        w = self.writer = RunLogWriter(path, fields, header=header, staging=row,
                                       flush_interval_s=self.flush_interval_s,
                                       before_end=self._audit if self.auditor is not None else None)
        assert w.kernel_commit_ok and w.staging is row
        self.log_path = path
        # the log opens at the arm: what led to it (the case loaded, by whom, the arm command)
        # happened before; those events go in first, marked ``before_log``
        k = min(self._n_events - self._n_logged, len(self.events), PROLOGUE_EVENTS)
        for ev in self.events[len(self.events) - k:]:
            w.event(ev["kind"], **{kk: v for kk, v in ev.items() if kk != "kind"}, before_log=True)
        self._n_logged = self._n_events
        return w

    def close(self, block: bool = True) -> None:
        """Stop logging. ``block=False`` (from the loop thread): the writer thread writes the
        rest, the footer, fsyncs and closes the file on its own; :meth:`wait_closed` joins it."""
        w = self.writer
        if w is not None:
            self.writer = None
            w.request_close()
            self._closing.append(w)
            self._n_logged = self._n_events      # those went into it
        if block:
            self.wait_closed()
        elif self._closing:
            self._closing = [c for c in self._closing if not c.finished]

    def _audit(self, path: Path) -> dict:
        """The writer thread's last act on a log (off the loop): its energy audit as an event."""
        v = self.auditor(path)
        self.audits[path] = v
        return {"kind": "energy_audit", **v}

    def audit_of(self, path: Path | None) -> dict | None:
        """The energy audit of a closed log (None: not audited, or still open). Not real-time."""
        return self.audits.get(path) if path is not None else None

    def wait_closed(self) -> bool:
        """Join the writers whose close was requested; True when every file is closed."""
        for w in self._closing:
            w.close()
        ok = all(w.finished for w in self._closing)
        self._closing.clear()
        return ok
