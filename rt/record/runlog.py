"""Run log: a msgpack stream written from a preallocated ring by a background thread.

File format (schema 1; docs/controller.md, "Run log") — a sequence of msgpack maps, each with
a kind ``"k"``:

* ``{"k": "header", "schema": 1, "fields": [[name, size], ...], "width": W, "config": {...},
  "case": ..., "version": "0.1.0", "git": "<git describe>", "host": ..., "pid": ...,
  "start_time": "<ISO 8601 UTC>", "start_time_ns": <time.time_ns()>, ...extra}`` — first.
* ``{"k": "rec", "i0": first record index, "n": n, "d": <bin: n x W float64, little-endian,
  row-major>}`` — a block of ``n`` consecutive per-cycle records. Each record is one row of
  ``W`` float64: the declared fields concatenated in declaration order (a field of size s
  occupies s columns). One block per flush (every ``flush_interval_s`` <= 0.1 s).
* ``{"k": "ev", "seq": n, ...event fields}`` — an event (state change, trip, command).
* ``{"k": "end", "records": N, "dropped": D, "events_dropped": E, "end_time_ns": ...}`` — on a
  clean close only. Just before it, the writer's ``before_end`` hook may add events computed
  from the file so far (the controller's energy audit, kind ``energy_audit``, and the run's
  fidelity verdict, kind ``fidelity_verdict``).

Closing: :meth:`RunLogWriter.close` blocks (final flush, footer, fsync, close; the caller's
thread waits for the writer thread); :meth:`RunLogWriter.request_close` does not: it stops
accepting records and the writer thread itself writes the rest, the footer, fsyncs and closes
the file (the controller uses it from the loop thread; :meth:`wait_closed` joins later).

The writer thread starts with :func:`rt.realtime.demote_helper_thread` (``thread_setup``): it
may be started by the loop thread at ARM and would otherwise inherit the loop's SCHED_FIFO
priority and CPU mask. Its reports are in ``thread_reports``; refusals are logged.

The loop thread calls :meth:`RunLogWriter.commit` once per cycle: it copies the bound arrays
into the staging row and the row into the ring — no allocation, no lock, no I/O; if the ring
is full (the disk stalled for ``capacity`` cycles) the record is dropped and counted, the
loop never waits. A compiled kernel may commit instead (:func:`rt.control.kernels.commit_row`,
the controller's cycle): the ring and the counters it needs are arrays, ``cursor`` holds
``[head, tail, dropped, closed]`` (CUR_*); records are written before ``head`` moves, and the
writer thread reads ``head`` before the rows, so a row is never read half written. The
writer thread wakes every ``flush_interval_s``, writes the new rows as one block plus the
pending events, and flushes the file to the OS, so a crashed (even
SIGKILLed) process leaves every record up to its last flush. :func:`read_log` tolerates a
truncated tail and returns numpy arrays per field.

Size: ``8 W`` bytes per record plus ~40 bytes per block; one hour at 1 kHz with W = 150 is
3.6e6 x 1200 B ≈ 4.3 GB. Reading streams block by block into arrays preallocated from the
file size, so memory is that of the selected fields and time is linear in the file size.
"""
from __future__ import annotations

import datetime as _dt
import logging
import os
import socket
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import msgpack
import numpy as np

import rt

log = logging.getLogger("dockstand.runlog")

SCHEMA_VERSION = 1
CUR_HEAD, CUR_TAIL, CUR_DROPPED, CUR_CLOSED = 0, 1, 2, 3   # RunLogWriter.cursor
_REPO = Path(rt.SOURCE_ROOT)


_GIT_CACHE: dict[Path, str] = {}


def git_describe(cwd: Path = _REPO) -> str:
    """``git describe --always --dirty --tags`` of ``cwd``, run once per process and cached (the
    controller calls it at start-up, so arming never starts a subprocess)."""
    cwd = Path(cwd)
    hit = _GIT_CACHE.get(cwd)
    if hit is None:
        hit = _GIT_CACHE[cwd] = _git_describe(cwd)
    return hit


def _git_describe(cwd: Path) -> str:
    try:
        r = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], cwd=cwd, capture_output=True,
                           text=True, timeout=5)
        return r.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _default(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer, np.bool_)):
        return o.item()
    if isinstance(o, (Path, _dt.datetime)):
        return str(o)
    if hasattr(o, "__dict__"):
        return {k: v for k, v in vars(o).items() if not k.startswith("_")}
    return repr(o)


def _packb(obj: Any) -> bytes:
    return msgpack.packb(obj, default=_default, use_bin_type=True)


class RecordLayout:
    """Named fixed-size float64 fields, concatenated into one row of ``width`` floats."""

    def __init__(self, fields: dict[str, int]):
        if not fields:
            raise ValueError("a record needs at least one field")
        self.fields = {}
        self.offsets = {}
        off = 0
        for name, size in fields.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"bad field name {name!r}")
            if int(size) < 1:
                raise ValueError(f"field {name!r}: size must be >= 1")
            self.fields[name] = int(size)
            self.offsets[name] = off
            off += int(size)
        self.width = off

    def slice(self, name: str) -> slice:
        return slice(self.offsets[name], self.offsets[name] + self.fields[name])

    def as_list(self) -> list[list]:
        return [[n, s] for n, s in self.fields.items()]


class RunLogWriter:
    """See the module docstring. ``header`` entries (``config``, ``case``, anything else) go into
    the header map next to the standard ones. ``before_end(path)``, called by whoever finishes
    the file (the writer thread, off the loop) once every record is written, returns an event
    (``kind`` and its fields), a list of them, or None: written before the footer; its
    exceptions are written as an event ``before_end_failed`` (a log is never lost to it)."""

    def __init__(self, path: str | Path, fields: dict[str, int], *, header: dict | None = None,
                 capacity: int = 1 << 14, flush_interval_s: float = 0.05, max_events: int = 4096,
                 on_flush: Callable[[int], None] | None = None, threaded: bool = True,
                 staging: np.ndarray | None = None, thread_setup: Callable[[], list] | None | str = "default",
                 before_end: Callable[[Path], dict | None] | None = None):
        if not 0.0 < flush_interval_s <= 0.1:
            raise ValueError("flush_interval_s must be in (0, 0.1]")
        self.path = Path(path)
        self.layout = RecordLayout(fields)
        W = self.layout.width
        self.capacity = int(capacity)
        self.ring = np.zeros((self.capacity, W))
        if staging is not None and (staging.shape != (W,) or staging.dtype != np.float64):
            raise ValueError(f"staging must be a float64 array of the record width {W}")
        # the loop may hand in its own record row (its fields laid out as ``fields``): commit()
        # then copies it once, with no per-field binding
        self.staging = np.zeros(W) if staging is None else staging
        self._bound: list[tuple[np.ndarray, np.ndarray]] = []
        # head: records committed (loop thread writes); tail: records written to the file
        # (writer thread writes); dropped; closed (no more records are accepted)
        self.cursor = np.zeros(4, dtype=np.int64)
        self.events_dropped = 0
        self._events: deque = deque()
        self._max_events = int(max_events)
        self._event_seq = 0
        self.flush_interval_s = float(flush_interval_s)
        self.on_flush = on_flush
        self.before_end = before_end
        self.flushes = 0
        self.finished = False       # footer written and file closed (or given up after a failure)
        self.failure: str | None = None     # why the file could not be written (a full disk), once it failed
        self.failure_errno = 0
        self._fsync = True
        self.thread_reports: list = []
        self.thread_ready = threading.Event()   # set once the writer thread has set itself up
        if thread_setup == "default":
            from rt.realtime import demote_helper_thread
            thread_setup = demote_helper_thread
        self._thread_setup = thread_setup
        self._io_lock = threading.Lock()  # writer thread vs. close(); never taken by the loop
        self._wake = threading.Event()
        self._f = open(self.path, "wb")
        h = {"k": "header", "schema": SCHEMA_VERSION, "fields": self.layout.as_list(), "width": W,
             "version": _version(), "git": git_describe(), "host": socket.gethostname(), "pid": os.getpid(),
             "start_time": _dt.datetime.now(_dt.timezone.utc).isoformat(), "start_time_ns": time.time_ns(),
             "config": None, "case": None}
        h.update(header or {})
        self._f.write(_packb(h))
        self._f.flush()
        self._thread = None
        self._closer: threading.Thread | None = None
        self._close_requested = False
        if threaded:
            self._thread = threading.Thread(target=self._run, name="runlog-writer", daemon=True)
            self._thread.start()

    head = property(lambda self: int(self.cursor[CUR_HEAD]))
    tail = property(lambda self: int(self.cursor[CUR_TAIL]))
    dropped = property(lambda self: int(self.cursor[CUR_DROPPED]))
    closed = property(lambda self: bool(self.cursor[CUR_CLOSED]), doc="close requested: no more records")

    @property
    def kernel_commit_ok(self) -> bool:
        """A kernel may commit the staging row itself (no arrays bound to copy first)."""
        return not self._bound

    # ------------------------------------------------------------------ loop side
    def view(self, name: str) -> np.ndarray:
        """A view of ``name`` in the staging row: kernels may write straight into it."""
        return self.staging[self.layout.slice(name)]

    def bind(self, name: str, array: np.ndarray) -> None:
        """Copy ``array`` (size of the field) into the staging row at every :meth:`commit`."""
        v = self.view(name)
        a = np.asarray(array)
        if a.size != v.size:
            raise ValueError(f"field {name!r} has size {v.size}, array has {a.size}")
        self._bound.append((v, a.reshape(-1) if a.ndim != 1 else a))

    def commit(self) -> bool:
        """Append the staging row (after copying bound arrays); False if dropped (ring full)
        or closed."""
        cur = self.cursor
        if cur[CUR_CLOSED]:
            return False
        for dst, src in self._bound:
            dst[:] = src
        h = int(cur[CUR_HEAD])
        if h - cur[CUR_TAIL] >= self.capacity:
            cur[CUR_DROPPED] += 1
            return False
        self.ring[h % self.capacity] = self.staging
        cur[CUR_HEAD] = h + 1
        return True

    def event(self, kind: str, **data: Any) -> None:
        """Queue an event (bounded; excess events, and events after a close request, are
        counted, never block)."""
        if self.closed or len(self._events) >= self._max_events:
            self.events_dropped += 1
            return
        self._event_seq += 1
        data["k"] = "ev"
        data["kind"] = kind
        data["seq"] = self._event_seq
        self._events.append(data)

    # ------------------------------------------------------------------ writer side
    def _run(self) -> None:
        if self._thread_setup is not None:
            try:
                self.thread_reports = list(self._thread_setup())
            except Exception as e:  # noqa: BLE001 - reported, the log goes on
                self.thread_reports = [f"thread setup failed: {type(e).__name__}: {e}"]
            for r in self.thread_reports:
                if not getattr(r, "ok", False):
                    log.warning("run-log writer thread: %s", r)
        self.thread_ready.set()
        while not self.closed:
            self._wake.wait(self.flush_interval_s)
            self._wake.clear()
            try:
                self.flush()
            except Exception as e:  # noqa: BLE001 - a full disk, an I/O error: said, never raised
                if self.closed and self.failure is None and isinstance(e, ValueError):
                    break                # closed under it by close()
                self._fail(e)
                break
        self._finish()

    def _fail(self, e: BaseException) -> None:
        """The file cannot be written: say so once (``failure``, the log), stop accepting
        records (they are counted as dropped by nobody: the controller stops recording)."""
        if self.failure is not None:
            return
        err = getattr(e, "errno", None) or 0
        what = getattr(e, "strerror", None) or str(e) or type(e).__name__
        self.failure_errno = int(err)
        self.failure = f"{what} (errno {err}) writing {self.path}" if err else f"{what} writing {self.path}"
        self.cursor[CUR_CLOSED] = 1
        log.error("run log: %s; %d records were written", self.failure, self.tail)

    def flush(self) -> int:
        """Write everything committed so far and flush to the OS; returns records written so far.
        Called by the writer thread (or by hand with ``threaded=False``)."""
        with self._io_lock:
            if self._f.closed:
                return self.tail
            head, tail, cap = self.head, self.tail, self.capacity
            parts = []
            while tail < head:
                i = tail % cap
                n = min(head - tail, cap - i)
                parts.append(_packb({"k": "rec", "i0": tail, "n": n, "d": self.ring[i:i + n].tobytes()}))
                tail += n
            while self._events:
                parts.append(_packb(self._events.popleft()))
            if parts:
                self._f.write(b"".join(parts))
                self._f.flush()
            self.cursor[CUR_TAIL] = tail
            self.flushes += 1
        if self.on_flush is not None and parts:
            self.on_flush(tail)
        return tail

    def request_close(self, fsync: bool = True) -> None:
        """Non-blocking close (idempotent): no more records are accepted; the writer thread
        writes what is left, the footer, fsyncs and closes the file. Without a writer thread
        (``threaded=False``) this closes in the caller's thread; a writer thread that is gone
        is replaced by a short-lived closer thread (the caller, the loop, never does file I/O)."""
        if self.finished:
            return
        if not self._close_requested:
            self._close_requested = True
            self._fsync = fsync
        self.cursor[CUR_CLOSED] = 1
        if self._thread is None:
            self._finish()
        elif self._thread.is_alive():
            self._wake.set()
        elif self._closer is None and not self.finished:
            self._closer = threading.Thread(target=self._finish, name="runlog-closer", daemon=True)
            self._closer.start()

    def wait_closed(self, timeout: float | None = 5.0) -> bool:
        """Join the writer thread after :meth:`request_close`; True when the file is closed."""
        if self._thread is not None:
            self._thread.join(timeout=timeout)
        if self._closer is not None:
            self._closer.join(timeout=timeout)
        return self.finished

    def close(self, fsync: bool = True) -> None:
        """Final flush, footer, fsync, close; blocks until done (idempotent)."""
        self.request_close(fsync)
        self.wait_closed(5.0)
        if not self.finished:  # the writer thread is stuck: finish here (under its I/O lock)
            self._finish()

    def _finish(self) -> None:
        """The rest of the records, the ``before_end`` event, the footer, fsync, close. Never
        raises: a file that cannot be written is closed as far as it goes (``failure``; the
        reader takes it as truncated) and ``finished`` is set all the same."""
        with self._io_lock:
            if self.finished:
                return
        if self.failure is None:
            try:
                self.flush()
            except Exception as e:  # noqa: BLE001 - said in failure
                self._fail(e)
        last = self._before_end_events() if self.failure is None else []
        with self._io_lock:
            if self.finished:
                return
            try:
                if self.failure is None:
                    for ev in last:
                        self._f.write(_packb(ev))
                    self._f.write(_packb({"k": "end", "records": self.tail, "dropped": self.dropped,
                                          "events_dropped": self.events_dropped, "end_time_ns": time.time_ns()}))
                    self._f.flush()
                    if self._fsync:
                        os.fsync(self._f.fileno())
            except Exception as e:  # noqa: BLE001 - said in failure
                self._fail(e)
            finally:
                try:
                    self._f.close()
                except Exception:  # noqa: BLE001 - its buffer could not go to a full disk: dropped
                    pass
                self.finished = True

    def _before_end_events(self) -> list[dict]:
        if self.before_end is None:
            return []
        try:
            evs = self.before_end(self.path)
        except Exception as e:  # noqa: BLE001 - the log is closed whatever the hook does
            evs = {"kind": "before_end_failed", "reason": f"{type(e).__name__}: {e}"}
        out = []
        for ev in [evs] if isinstance(evs, dict) else (evs or []):
            self._event_seq += 1
            out.append({**ev, "k": "ev", "seq": self._event_seq})
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _version() -> str:
    try:
        import rt
        return rt.__version__
    except Exception:  # pragma: no cover
        return "unknown"


@dataclass
class RunLog:
    header: dict
    fields: dict[str, np.ndarray]       # name -> (n,) for size-1 fields, else (n, size)
    events: list[dict]
    n_records: int
    truncated: bool                     # the file ended inside an object or without a footer
    footer: dict | None = None
    layout: RecordLayout | None = field(default=None, repr=False)


def read_log(path: str | Path, fields: list[str] | None = None) -> RunLog:
    """Read a run log; ``fields`` selects a subset (memory then scales with it only). A
    truncated file is read to its last complete block (``truncated``); a file that is not a run
    log raises ``ValueError`` (:class:`rt.record.logscan.LogError`), an unknown field
    ``KeyError`` (:class:`rt.record.logscan.UnknownField`), each naming the file."""
    from rt.record.logscan import read_columns, scan

    idx = scan(path)
    cols = read_columns(idx, fields)
    layout = RecordLayout(idx.fields)
    return RunLog(idx.header, {n: np.ascontiguousarray(a) for n, a in cols.items()}, idx.events, idx.n_records,
                  idx.truncated, idx.footer, layout)
