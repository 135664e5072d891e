"""``dockstand export``: a run log for other tools (docs/analysis.md, "Export").

* **csv** — one header row of ``field.column [unit]``, one row per record, every value as
  ``%.17g`` (a float64 reads back bit for bit); NaN as ``nan``.
* **parquet** — one float64 column per column of each field (``field.column``), its unit in
  the column's metadata, the log's header, events and truncation in the schema metadata
  (as :meth:`rt.analysis.run.Run.to_table`); written in row groups.
* **mcap** — JSON messages with a JSON schema per channel, so Foxglove and other MCAP viewers
  open the run: one channel per group (``/wrench``, ``/relative``, ``/platform``, ``/timing``,
  ``/state``, ``/other`` for the remaining selected fields, ``/events``), each record one
  message ``{"t": s, field: value or [values]}``, log time = the run's start (header
  ``start_time_ns``) plus its cycle times the period; the header is the metadata record
  ``dockstand.header``, each channel's units its metadata.

All three stream: ``CHUNK`` records at a time, memory bounded whatever the log's length. The
output never replaces the input log. Not real-time.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from rt.analysis.run import Run, load_run

CHUNK = 1 << 16
FORMATS = ("csv", "parquet", "mcap")
GROUPS = (("/wrench", ("w_P", "w_S", "base_wrench")),
          ("/relative", ("rel_pose", "rel_twist", "rel_acc")),
          ("/platform", ("cmd_pose", "meas_pose", "cmd_twist", "cmd_acc", "cmd_lengths", "meas_lengths",
                         "platform_state", "platform_fault", "platform_last_seq", "platform_inputs")),
          ("/timing", ("timing_ns", "missed", "crc_errors", "seq_gaps")),
          ("/state", ("state", "phase", "trip", "captured", "contacts", "penetration")))


def _chunks(run: Run, names, lo: int, hi: int, every: int, progress=None):
    """The selection ``CHUNK`` records at a time; ``progress(done, total)`` (records of the log
    passed) after each."""
    step = CHUNK * every
    for a in range(lo, hi, step):
        yield run.read(names, a, min(hi, a + step), every)
        if progress is not None:
            progress(min(hi, a + step) - lo, hi - lo)


def _write_csv(run: Run, names, lo, hi, every, out: Path, progress=None) -> int:
    cols = run.columns(names)
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        f.write(",".join(f"{c.name} [{c.unit}]" for c in cols) + "\n")
        for d in _chunks(run, names, lo, hi, every, progress):
            m = len(d[names[0]])
            block = np.column_stack([d[k].reshape(m, -1) for k in names])
            np.savetxt(f, block, fmt="%.17g", delimiter=",")
            n += m
    return n


def _write_parquet(run: Run, names, lo, hi, every, out: Path, progress=None) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = run.columns(names)
    meta = {"dockstand.header": json.dumps(run.header, default=str),
            "dockstand.truncated": json.dumps(run.truncation or False),
            "dockstand.events": json.dumps(run.events_on_run_clock(), default=str)}
    schema = pa.schema([pa.field(c.name, pa.float64(), metadata={"unit": c.unit, "field": c.field}) for c in cols],
                       metadata=meta)
    n = 0
    with pq.ParquetWriter(out, schema) as w:
        for d in _chunks(run, names, lo, hi, every, progress):
            arrays = [pa.array(np.ascontiguousarray(d[c.field] if d[c.field].ndim == 1 else d[c.field][:, c.index]))
                      for c in cols]
            w.write_table(pa.Table.from_arrays(arrays, schema=schema))
            n += len(arrays[0]) if arrays else 0
    return n


def _groups(names) -> list[tuple[str, list[str]]]:
    out, used = [], set()
    for topic, fields in GROUPS:
        sel = [f for f in names if f in fields and f != "t"]
        if sel:
            out.append((topic, sel))
            used.update(sel)
    rest = [f for f in names if f not in used and f != "t"]
    if rest:
        out.append(("/other", rest))
    return out


def _json_schema(run: Run, fields) -> dict:
    props = {"t": {"type": "number", "description": "s since the case's initial state"}}
    for f in fields:
        units = run.units(f)
        props[f] = ({"type": "number", "description": units[0]} if run.fields[f] == 1 else
                    {"type": "array", "items": {"type": "number"}, "description": ", ".join(units)})
    return {"type": "object", "properties": props}


def _finite(v):
    return v if np.isfinite(v) else None


def _write_mcap(run: Run, names, lo, hi, every, out: Path, progress=None) -> int:
    from mcap.writer import Writer

    groups = _groups(names)
    h = run.header
    t0_ns = int(h.get("start_time_ns") or 0)
    period_ns = int(round(1e9 / float(h.get("rate_hz") or 1000.0))) if "cycle" in run.fields else \
        int(round(1e9 * float(h.get("log_period_s") or 1e-3)))
    need = sorted({"t", *(["cycle"] if "cycle" in run.fields else []), *[f for _, fs in groups for f in fs]},
                  key=list(run.fields).index)
    n = 0
    with open(out, "wb") as fh:
        w = Writer(fh)
        w.start(profile="", library="dockstand")
        w.add_metadata("dockstand.header", {"json": json.dumps(h, default=str),
                                            "truncated": run.truncation or "no"})
        chans = {}
        for topic, fields in groups:
            sid = w.register_schema(name=f"dockstand{topic.replace('/', '.')}", encoding="jsonschema",
                                    data=json.dumps(_json_schema(run, fields)).encode())
            chans[topic] = w.register_channel(topic=topic, message_encoding="json", schema_id=sid,
                                              metadata={f: ",".join(run.units(f)) for f in fields})
        esid = w.register_schema(name="dockstand.event", encoding="jsonschema",
                                 data=json.dumps({"type": "object"}).encode())
        ech = w.register_channel(topic="/events", message_encoding="json", schema_id=esid)
        seq = 0
        rec = lo
        for d in _chunks(run, need, lo, hi, every, progress):
            t = d["t"]
            cyc = d.get("cycle")
            for i in range(len(t)):
                k = int(cyc[i]) if cyc is not None else rec
                stamp = t0_ns + k * period_ns
                for topic, fields in groups:
                    msg = {"t": _finite(float(t[i]))}
                    for f in fields:
                        v = d[f][i]
                        msg[f] = _finite(float(v)) if np.ndim(v) == 0 else [_finite(float(x)) for x in v]
                    w.add_message(chans[topic], log_time=stamp, publish_time=stamp, sequence=seq,
                                  data=json.dumps(msg).encode())
                    seq += 1
                rec += every
                n += 1
        cyc = run.cycles
        last = t0_ns + (int(cyc[-1]) if cyc is not None and len(cyc) else max(run.n_records - 1, 0)) * period_ns
        for e in run.events_on_run_clock():
            # on the records' stamps: its cycle's; an event without one (the energy audit,
            # written once the log is complete) at the last record's
            if e.get("cycle") is not None:
                stamp = t0_ns + int(e["cycle"]) * period_ns
            elif run.kind == "digital" and e.get("t_run") is not None:      # its rows: one per log period
                stamp = t0_ns + int(round(float(e["t_run"]) * 1e9 / period_ns)) * period_ns
            else:
                stamp = last
            w.add_message(ech, log_time=stamp, publish_time=stamp, sequence=seq,
                          data=json.dumps({k2: v for k2, v in e.items() if k2 != "k"}, default=str).encode())
            seq += 1
        w.finish()
    return n


def export_run(run: Run, fmt: str, out: str | Path | None = None, fields=None, t0: float | None = None,
               t1: float | None = None, every: int = 1, progress=None) -> tuple[Path, int]:
    """Write the selection as ``fmt``; returns (path, records written). ``progress(done,
    total)``: told after each chunk (records of the log passed)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    if every < 1:
        raise ValueError(f"--every must be >= 1, got {every}")
    out = Path(out) if out else run.path.with_suffix("." + fmt)
    if out.resolve() == run.path.resolve():
        raise ValueError(f"{out}: would overwrite the run log")
    if fields is not None:
        run.columns(fields)                      # an unknown name raises, naming it
    names = list(run.fields) if fields is None else [n for n in run.fields if n in set(fields)]
    if "t" not in names:
        names = ["t", *names]
    lo, hi = run.rows(t0, t1)
    writer = {"csv": _write_csv, "parquet": _write_parquet, "mcap": _write_mcap}[fmt]
    return out, writer(run, names, lo, hi, every, out, progress)


def cmd_export(args: argparse.Namespace) -> int:
    from rt.config._schema import ConfigError
    from rt.record.logscan import LogError
    from rt.analysis.progress import Stages
    bar = None

    def progress(done, total):          # a bar on stderr once the export takes more than 2 s
        nonlocal bar
        if bar is None:
            bar = Stages("export").bar(total, f"{args.format}", unit="records", delay_s=2.0)
        bar.update(done)
    try:
        run = load_run(args.log)
        fields = [f.strip() for f in args.fields.split(",") if f.strip()] if args.fields else None
        out, n = export_run(run, args.format, args.output, fields, args.t_from, args.t_to, args.every, progress)
    except (LogError, ConfigError, ValueError, OSError) as e:
        print(f"dockstand export: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
    print(f"{out}: {n} records, {out.stat().st_size} bytes ({args.format})")
    if run.truncated:
        print(f"log truncated: {run.truncation}; exported to its last block")
    return 0


def add_parser(sub) -> None:
    e = sub.add_parser("export", help="a run log as CSV, Parquet or MCAP (Foxglove)")
    e.add_argument("log")
    e.add_argument("--format", required=True, choices=FORMATS)
    e.add_argument("-o", "--output", help="default: the log's path with the format's suffix")
    e.add_argument("--fields", help="comma-separated field names (default: all); t is always included")
    e.add_argument("--from", dest="t_from", type=float, metavar="T", help="first time (s)")
    e.add_argument("--to", dest="t_to", type=float, metavar="T", help="last time (s)")
    e.add_argument("--every", type=int, default=1, metavar="N", help="every N-th record")
    e.set_defaults(func=cmd_export)
