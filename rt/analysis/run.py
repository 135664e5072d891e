"""A run log for the analyst: :func:`load_run` (docs/analysis.md, "The API").

``load_run(path)`` indexes the log once (``rt.record.logscan.scan``: header, events, footer,
where each block's records lie) and reads nothing else; every field read afterwards streams
from the file, only the selected columns are copied, so one field of a 1 h 1 kHz log costs
its own memory. Fields come in SI units (:data:`UNITS`; each column has a name and a unit,
:meth:`Run.columns`), times in s since the case's initial state (NaN outside the run,
negative during the HIL run-up).

    run = load_run("runs/20261124-101500-nominal.dslog")
    run.kind, run.case_name, run.verdict, run.truncated
    sel = run.select(["w_P", "rel_pose"], t0=0.0, t1=2.0, every=10)   # dict of arrays
    table = run.to_table(["t", "w_P"])                                   # pyarrow.Table

Not real-time: for tools beside or after a run, never the loop.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from rt.record.logscan import LogError, LogIndex, read_columns, rows_in_time, scan

_W = ("N", "N", "N", "N*m", "N*m", "N*m")
_WN = ("fx", "fy", "fz", "mx", "my", "mz")
_POSE = ("x", "y", "z", "qw", "qx", "qy", "qz")
_POSE_U = ("m", "m", "m", "1", "1", "1", "1")
_TWIST = ("vx", "vy", "vz", "wx", "wy", "wz")
_TWIST_U = ("m/s", "m/s", "m/s", "rad/s", "rad/s", "rad/s")
_ACC_U = ("m/s^2", "m/s^2", "m/s^2", "rad/s^2", "rad/s^2", "rad/s^2")
_LEG = tuple(f"leg{i + 1}" for i in range(6))

# field -> (column names, units), for the fields of the controller's record
# (rt.control.recorder.record_fields) and of the digital reference (sim_stand.digital); a
# field of one column has one name: its own. Sizes that vary (raw, x, stroke) are generated.
UNITS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "t": (("t",), ("s",)),
    "cycle": (("cycle",), ("1",)),
    "state": (("state",), ("code",)),
    "phase": (("phase",), ("code",)),
    "trip": (("trip",), ("code",)),
    "timing_ns": (("wake_late", "read", "update", "write"), ("ns",) * 4),
    "new_sample": (("new_sample",), ("1",)),
    "w_S": (_WN, _W), "w_P": (_WN, _W), "base_wrench": (_WN, _W),
    "rel_pose": (_POSE, _POSE_U), "cmd_pose": (_POSE, _POSE_U), "meas_pose": (_POSE, _POSE_U),
    "rel_twist": (_TWIST, _TWIST_U), "cmd_twist": (_TWIST, _TWIST_U),
    "rel_acc": (_TWIST, _ACC_U), "cmd_acc": (_TWIST, _ACC_U),
    "cmd_lengths": (_LEG, ("m",) * 6), "meas_lengths": (_LEG, ("m",) * 6),
    "platform_state": (("platform_state",), ("code",)), "platform_fault": (("platform_fault",), ("code",)),
    "platform_last_seq": (("platform_last_seq",), ("1",)), "platform_inputs": (("platform_inputs",), ("bits",)),
    "crc_errors": (("crc_errors",), ("count",)), "seq_gaps": (("seq_gaps",), ("count",)),
    "missed": (("missed",), ("count",)),
    "captured": (("captured",), ("1",)), "penetration": (("penetration",), ("m",)),
    "contacts": (("contacts",), ("count",)), "energy_absorbed": (("energy_absorbed",), ("J",)),
    "rod_force": (("rod_force",), ("N",)), "rod_rate": (("rod_rate",), ("m/s",)),
    # rt.stand.delay_id's record: the platform delay identified, the lead used, the acceleration offset
    "delay": (("identified", "lead", "kappa"), ("s", "s", "s^2")),
}
_STATE = (("r_x", "m"), ("r_y", "m"), ("r_z", "m"), ("v_x", "m/s"), ("v_y", "m/s"), ("v_z", "m/s"),
          ("q_w", "1"), ("q_x", "1"), ("q_y", "1"), ("q_z", "1"), ("w_x", "rad/s"), ("w_y", "rad/s"),
          ("w_z", "rad/s"))


def field_columns(name: str, size: int, flight: str | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Column names and SI units of a log field of ``size`` columns; ``flight`` the state's
    layout (the header's ``flight``: "spacecraft", default, or "berthing")."""
    known = UNITS.get(name)
    if known is not None and len(known[0]) == size:
        return known
    if name == "delay" and size < 3:                  # logs before kappa: two columns
        return UNITS["delay"][0][:size], UNITS["delay"][1][:size]
    if name == "raw":
        return tuple(f"ch{i}" for i in range(size)), ("count",) * size
    if name == "x" and flight == "berthing" and size % 2 == 0 and size // 2 >= len(_STATE):
        # rt.dynamics.berthing_flight: row 0 the arm's [q | u] (joint angles and flexible
        # coordinates, then their rates: docs/models/berthing.md), row 1 the payload as a spacecraft
        ns = size // 2
        nm = (ns - len(_STATE)) // 2
        cols = [f"arm.{i}" for i in range(ns)] + [f"payload.{c}" for c, _ in _STATE] + \
            [f"payload.eta{i}" for i in range(nm)] + [f"payload.eta_dot{i}" for i in range(nm)]
        units = ["arm state"] * ns + [u for _, u in _STATE] + ["1"] * (2 * nm)
        return tuple(cols), tuple(units)
    if name == "x" and size % 2 == 0 and size // 2 >= len(_STATE):
        ns = size // 2
        nm = (ns - len(_STATE)) // 2
        cols, units = [], []
        for v in ("A", "P"):         # rt.dynamics.spacecraft state layout, row 0 active, row 1 passive
            cols += [f"{v}.{c}" for c, _ in _STATE] + [f"{v}.eta{i}" for i in range(nm)] + \
                [f"{v}.eta_dot{i}" for i in range(nm)]
            units += [u for _, u in _STATE] + ["1"] * (2 * nm)
        return tuple(cols), tuple(units)
    if name == "stroke":
        return tuple(f"leg{i + 1}" for i in range(size)), ("m",) * size
    return tuple(f"{i}" for i in range(size)) if size > 1 else (name,), ("1",) * size


@dataclass(frozen=True)
class Column:
    field: str
    index: int          # column within the field
    name: str           # "w_P.fx"; a one-column field: its own name
    unit: str


class Run:
    """One run log, indexed (module docstring). Construct with :func:`load_run`."""

    def __init__(self, idx: LogIndex):
        self._idx = idx
        self.path = idx.path
        self.header = idx.header
        self.events = idx.events
        self.footer = idx.footer
        self.truncated = idx.truncated
        self.truncation = idx.truncation
        self.n_records = idx.n_records
        self.fields = dict(idx.fields)

    # ------------------------------------------------------------------ identity
    @property
    def kind(self) -> str:
        """``"hil"`` (a controller run) or ``"digital"`` (the all-digital reference)."""
        return str(self.header.get("kind") or ("hil" if "phase" in self.fields and "cmd_pose" in self.fields
                                                else "digital"))

    @property
    def case_path(self) -> Path | None:
        c = self.header.get("case")
        return Path(c) if c else None

    @property
    def case_name(self) -> str:
        p = self.case_path
        return p.stem if p else "(no case)"

    @cached_property
    def config_digest(self) -> str:
        """sha256 of the header's configuration snapshot (canonical JSON), 12 hex digits."""
        text = json.dumps(self.header.get("config"), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def load_case(self):
        """The run's case (``rt.config.case.Case``) from the path in the header, and a warning
        (or None) when the file changed since the run (its sha256 differs from the one logged)."""
        from rt.config.case import load_case

        p = self.case_path
        if p is None:
            raise LogError(f"{self.path}: the log names no case")
        if not p.exists():
            raise LogError(f"{self.path}: its case file {p} no longer exists")
        case = load_case(p)
        logged = self.header.get("case_digest")
        warn = None
        if logged and logged != case.digest:
            warn = f"the case file {p} changed since the run (sha256 {case.digest[:12]}, logged {logged[:12]})"
        return case, warn

    @property
    def verdict(self) -> str:
        """How the run ended, from its events: the trip reason, the end criterion, or the last
        state the log saw (``"truncated"`` when it stops early)."""
        trip = None
        end = None
        last_state = None
        for e in self.events:
            k = e.get("kind", "")
            if k == "supervisor_trip" and trip is None:
                trip = e.get("reason") or "trip"
            elif k in ("run_end", "finish", "end") or (k == "supervisor_transition" and e.get("state") == "DONE"):
                end = e.get("reason") or e.get("why") or end
            if k == "supervisor_transition":
                last_state = e.get("state")
        if trip:
            return f"tripped: {trip}"
        if end:
            return f"done: {end}"
        if last_state:
            return str(last_state) + (" (log truncated)" if self.truncated else "")
        return "truncated" if self.truncated else "complete"

    # ------------------------------------------------------------------ data
    def columns(self, fields=None) -> list[Column]:
        out = []
        for f in self._idx.check_fields(fields):
            names, units = field_columns(f, self.fields[f], self.flight)
            for i, (n, u) in enumerate(zip(names, units)):
                out.append(Column(f, i, f if self.fields[f] == 1 else f"{f}.{n}", u))
        return out

    def units(self, field: str) -> tuple[str, ...]:
        self._idx.check_fields([field])
        return field_columns(field, self.fields[field], self.flight)[1]

    @property
    def flight(self) -> str:
        """The state's layout: the header's ``flight``, else "berthing" for a grapple run."""
        h = self.header
        return h.get("flight") or ("berthing" if h.get("model") == "grapple" else "spacecraft")

    def rows(self, t0: float | None = None, t1: float | None = None) -> tuple[int, int]:
        """The record range ``[start, stop)`` of the time window ``[t0, t1]`` (all records when
        both are None); an empty window raises :class:`LogError`."""
        if t0 is None and t1 is None:
            return 0, self.n_records
        if t0 is not None and t1 is not None and t1 < t0:
            raise LogError(f"{self.path}: empty time window: --to {t1:g} s is before --from {t0:g} s")
        lo, hi = rows_in_time(self.t, t0, t1)
        if hi <= lo:
            t = self.t[np.isfinite(self.t)]
            span = f"{t[0]:g} s .. {t[-1]:g} s" if len(t) else "no timed records"
            raise LogError(f"{self.path}: empty time window [{_s(t0)}, {_s(t1)}]: the run spans {span}")
        return lo, hi

    @cached_property
    def t(self) -> np.ndarray:
        return read_columns(self._idx, ["t"])["t"]

    @cached_property
    def cycles(self) -> np.ndarray | None:
        """Each record's controller cycle (a HIL log; None for a digital one)."""
        return read_columns(self._idx, ["cycle"])["cycle"] if "cycle" in self.fields else None

    def event_run_time(self, e: dict) -> float | None:
        """An event's time on the records' clock ``t`` (s since the case's initial state): its
        ``t_run``, a digital run's ``t``, else the ``t`` of the record of its ``cycle`` (a
        controller event's own ``t`` is the controller's clock); None if it has neither."""
        t = e.get("t_run")
        if t is None and self.kind == "digital":
            t = e.get("t")
        if t is None and e.get("cycle") is not None and self.cycles is not None and len(self.cycles):
            i = min(int(np.searchsorted(self.cycles, int(e["cycle"]))), len(self.cycles) - 1)
            t = self.t[i] if np.isfinite(self.t[i]) else None
        return None if t is None else float(t)

    def events_on_run_clock(self) -> list[dict]:
        """The events, each with ``t_run`` (:meth:`event_run_time`) where it can be had: what
        the exports write, so that an event and the records share one time axis."""
        return [{**e, "t_run": self.event_run_time(e)} if "t_run" not in e else e for e in self.events]

    def field(self, name: str) -> np.ndarray:
        """One field, all records: (n,) or (n, size)."""
        return self.select([name])[name]

    def read(self, fields=None, start: int = 0, stop: int | None = None, every: int = 1) -> dict[str, np.ndarray]:
        """The fields of records ``start, start + every, ... < stop`` (record indices)."""
        return read_columns(self._idx, fields, start, stop, every)

    def select(self, fields=None, t0: float | None = None, t1: float | None = None,
               every: int = 1) -> dict[str, np.ndarray]:
        """The fields (all by default) of the records in ``[t0, t1]``, every ``every``-th."""
        names = self._idx.check_fields(fields)
        lo, hi = self.rows(t0, t1)
        return read_columns(self._idx, names, lo, hi, every)

    def to_table(self, fields=None, t0: float | None = None, t1: float | None = None, every: int = 1):
        """The selection as a ``pyarrow.Table``: one float64 column per column of each field,
        named ``field.column``, the unit in each column's metadata (``unit``) and the log's
        header (JSON) and truncation in the schema metadata."""
        import pyarrow as pa

        names = self._idx.check_fields(fields)
        data = self.select(names, t0, t1, every)
        cols, arrays = [], []
        for c in self.columns(names):
            a = data[c.field]
            arrays.append(pa.array(a if a.ndim == 1 else np.ascontiguousarray(a[:, c.index]), type=pa.float64()))
            cols.append(pa.field(c.name, pa.float64(), metadata={"unit": c.unit, "field": c.field}))
        meta = {"dockstand.header": json.dumps(self.header, default=str),
                "dockstand.truncated": json.dumps(self.truncation or False),
                "dockstand.events": json.dumps(self.events_on_run_clock(), default=str)}
        return pa.Table.from_arrays(arrays, schema=pa.schema(cols, metadata=meta))

    def __repr__(self) -> str:
        return (f"Run({str(self.path)!r}, kind={self.kind!r}, case={self.case_name!r}, records={self.n_records}"
                f"{', truncated' if self.truncated else ''})")


def _s(v) -> str:
    return "-inf" if v is None else f"{v:g} s"


def load_run(path: str | Path) -> Run:
    """Index the run log at ``path``; :class:`rt.record.logscan.LogError` (a one-line message
    naming the file) when it is not a readable run log."""
    return Run(scan(path))
