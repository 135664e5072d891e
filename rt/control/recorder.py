"""The controller's recorder: the run log of one run and the event stream (docs/controller.md,
"Run log").

A run's :class:`rt.record.runlog.RunLogWriter` is opened before its arm is accepted
(:meth:`Recorder.prepare`, off the loop: the file, its header, its writer thread) and adopted
when the supervisor arms (:meth:`Recorder.adopt`, the loop: no I/O); the cycle's compiled
kernels commit the record row into its ring and cursor (``commit_row``); the loop closes it
without waiting (the writer thread writes the rest, the footer, fsyncs and closes the file).
Every event (phase changes, supervisor transitions and trips, first contact, lease changes)
goes to a bounded in-memory history, the open log and the telemetry publisher, as a plain
copy with bounded strings and lists (:func:`rt.record.requests.plain_event`): nothing a
client sent can make a later reply or record fail to encode.

A writer that cannot write (a full disk) says so in ``failure`` (:meth:`Recorder.health`);
the controller turns it into an event and, by ``[runlog] on_failure``, a trip.

Real time: :meth:`Recorder.event`, :meth:`Recorder.adopt`, :meth:`Recorder.health` and
:meth:`Recorder.close` with ``block=False`` may be called by the loop thread (they do not
wait and do no I/O); :meth:`Recorder.prepare`, :meth:`Recorder.open`,
:meth:`Recorder.discard` and :meth:`Recorder.wait_closed` are not real-time.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import numpy as np

from rt.record.requests import plain_event
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
        # run_audit with the stand's bound: the energy audit and the fidelity verdict; an
        # auditor that returns the energy audit alone, energy_verdict, is taken too), by its
        # writer thread before the footer
        self.auditor = auditor
        self.audits: dict[Path, dict] = {}
        self.verdicts: dict[Path, dict] = {}
        self.last_failure: str | None = None    # why the last log could not be written (until the next)

    # ------------------------------------------------------------------ events (loop thread)
    def event(self, ev: dict) -> None:
        t, cycle = self.clock()
        self._n_events += 1
        ev = {"t": t, "cycle": cycle, "eseq": self._n_events, **plain_event(ev)}
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
    def prepare(self, name: str, fields: dict[str, int], row: np.ndarray, header: dict) -> RunLogWriter:
        """Open ``<log_dir>/<time>-<name>.dslog`` whose writer stages ``row`` (not adopted yet:
        :meth:`adopt`). Off the loop: creates the file, writes the header, starts its writer
        thread. Raises OSError when the file cannot be made."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{name}"
        path = self.log_dir / f"{stem}.dslog"
        k = 1
        while path.exists():
            path = self.log_dir / f"{stem}-{k}.dslog"
            k += 1
        w = RunLogWriter(path, fields, header=header, staging=row, flush_interval_s=self.flush_interval_s,
                         before_end=self._audit if self.auditor is not None else None)
        assert w.kernel_commit_ok and w.staging is row
        return w

    def adopt(self, w: RunLogWriter) -> None:
        """Make ``w`` the open log (the loop, at the arm): the previous one closes without
        waiting, and the events that led to this arm (the case loaded, by whom, the arm
        command) go in first, marked ``before_log``. No I/O."""
        self.close(block=False)
        self.writer = w
        self.log_path = w.path
        self.last_failure = None
        k = min(self._n_events - self._n_logged, len(self.events), PROLOGUE_EVENTS)
        for ev in self.events[len(self.events) - k:]:
            w.event(ev["kind"], **{kk: v for kk, v in ev.items() if kk != "kind"}, before_log=True)
        self._n_logged = self._n_events

    def open(self, name: str, fields: dict[str, int], row: np.ndarray, header: dict) -> RunLogWriter | None:
        """:meth:`prepare` and :meth:`adopt` in one (not for the loop); None when recording is off."""
        if not self.enabled:
            self.close(block=False)
            return None
        w = self.prepare(name, fields, row, header)
        self.adopt(w)
        return w

    def discard(self, w: RunLogWriter) -> None:
        """Close and delete a prepared log that was never adopted (its arm was refused). Not
        real-time."""
        try:
            w.close(fsync=False)
        finally:
            try:
                w.path.unlink()
            except OSError:
                pass

    def health(self) -> dict:
        """The recorder's state for ``status`` and the console: ``recording``, ``failed`` (with
        why), ``closing``, ``idle`` or ``off``; the open log's records written and dropped."""
        w = self.writer
        if not self.enabled:
            return {"state": "off"}
        if w is None:
            if self.last_failure is not None:
                return {"state": "failed", "failure": self.last_failure,
                        "log": str(self.log_path) if self.log_path else None}
            return {"state": "closing" if self._closing else "idle", "log": str(self.log_path) if self.log_path else None}
        return {"state": "failed" if w.failure is not None else "recording", "failure": w.failure,
                "log": str(w.path), "records": w.tail, "dropped": w.dropped}

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

    def _audit(self, path: Path) -> list[dict]:
        """The writer thread's last act on a log (off the loop): its energy audit and fidelity
        verdict as events (``energy_audit``, ``fidelity_verdict``)."""
        v = self.auditor(path)
        fid = None
        if "energy_audit" in v:          # run_audit's: both
            v, fid = v["energy_audit"], v.get("fidelity")
        self.audits[path] = v
        out = [{"kind": "energy_audit", **v}]
        if fid is not None:
            self.verdicts[path] = fid
            out.append({"kind": "fidelity_verdict", **fid})
        return out

    def audit_of(self, path: Path | None) -> dict | None:
        """The energy audit of a closed log (None: not audited, or still open). Not real-time."""
        return self.audits.get(path) if path is not None else None

    def verdict_of(self, path: Path | None) -> dict | None:
        """The fidelity verdict of a closed log (rt.analysis.fidelity; None: not judged, or
        still open). Read by the command thread (a dict lookup)."""
        return self.verdicts.get(path) if path is not None else None

    def wait_closed(self) -> bool:
        """Join the writers whose close was requested; True when every file is closed."""
        for w in self._closing:
            w.close()
        ok = all(w.finished for w in self._closing)
        self._closing.clear()
        return ok
