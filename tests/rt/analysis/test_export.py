"""``dockstand export`` read back by the formats' own readers (numpy's CSV reader, pyarrow,
the mcap reader) equals what ``read_log`` reads, on a real lockstep demo run."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pyarrow.parquet as pq
import pytest
from mcap.reader import make_reader

from rt.analysis import export as E
from rt.analysis.export import cmd_export
from rt.analysis.run import load_run
from rt.cli import build_parser
from rt.record.runlog import read_log


def _args(*argv):
    return build_parser().parse_args(["export", *argv])


@pytest.mark.slow
def test_parquet_reads_back_equal_with_units_and_header(demo_log, tmp_path, monkeypatch):
    monkeypatch.setattr(E, "CHUNK", 3000)                 # several row groups
    out = tmp_path / "r.parquet"
    assert cmd_export(_args(demo_log, "--format", "parquet", "-o", str(out))) == 0
    log = read_log(demo_log)
    tab = pq.read_table(out)
    assert tab.num_rows == log.n_records and pq.ParquetFile(out).num_row_groups == -(-log.n_records // 3000) > 1
    for c in load_run(demo_log).columns():
        a = log.fields[c.field]
        want = a if a.ndim == 1 else a[:, c.index]
        assert np.array_equal(tab.column(c.name).to_numpy(), want, equal_nan=True), c.name
        assert tab.schema.field(c.name).metadata[b"unit"] == c.unit.encode()
    meta = tab.schema.metadata
    assert json.loads(meta[b"dockstand.header"])["kind"] == "hil"
    assert len(json.loads(meta[b"dockstand.events"])) == len(log.events)


def test_csv_reads_back_bit_for_bit_with_window_and_stride(demo_log, tmp_path, monkeypatch):
    monkeypatch.setattr(E, "CHUNK", 500)
    out = tmp_path / "r.csv"
    assert cmd_export(_args(demo_log, "--format", "csv", "-o", str(out), "--fields", "w_P,rel_pose",
                            "--from", "1.0", "--to", "3.0", "--every", "7")) == 0
    head = out.read_text().splitlines()[0].split(",")
    assert head[0] == "t [s]" and head[1] == "w_P.fx [N]" and head[-1] == "rel_pose.qz [1]"
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    log = read_log(demo_log)
    t = log.fields["t"]
    idx = np.nonzero(np.isfinite(t) & (t >= 1.0) & (t <= 3.0))[0]
    rows = np.arange(idx[0], idx[-1] + 1, 7)
    want = np.column_stack([t[rows], log.fields["w_P"][rows], log.fields["rel_pose"][rows]])
    assert np.array_equal(data, want)


@pytest.mark.slow
def test_mcap_channels_messages_and_values(demo_log, tmp_path):
    out = tmp_path / "r.mcap"
    assert cmd_export(_args(demo_log, "--format", "mcap", "-o", str(out))) == 0
    log = read_log(demo_log)
    counts = Counter()
    wrench = []
    with open(out, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        topics = {c.topic for c in summary.channels.values()}
        assert {"/wrench", "/relative", "/platform", "/timing", "/state", "/other", "/events"} <= topics
        meta = [m for m in reader.iter_metadata()]
        assert meta[0].name == "dockstand.header" and json.loads(meta[0].metadata["json"])["kind"] == "hil"
        for schema, channel, msg in reader.iter_messages():
            counts[channel.topic] += 1
            if channel.topic == "/wrench":
                wrench.append(json.loads(msg.data)["w_P"])
    assert counts["/wrench"] == counts["/platform"] == log.n_records
    assert counts["/events"] == len(log.events)
    assert np.array_equal(np.array(wrench, dtype=float), log.fields["w_P"], equal_nan=True)


def test_bad_requests_are_one_line_and_the_input_is_kept(demo_log, tmp_path, capsys):
    before = open(demo_log, "rb").read()
    assert cmd_export(_args(demo_log, "--format", "csv", "-o", demo_log)) == 2
    assert cmd_export(_args(demo_log, "--format", "csv", "-o", str(tmp_path / "a.csv"), "--fields", "w_Q")) == 2
    assert cmd_export(_args(demo_log, "--format", "csv", "-o", str(tmp_path / "b.csv"), "--from", "50")) == 2
    assert cmd_export(_args(str(tmp_path / "nope.dslog"), "--format", "csv")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(e.startswith("dockstand export: ") for e in err)
    assert "would overwrite" in err[0] and "no field 'w_Q'" in err[1] and "empty time window" in err[2]
    assert open(demo_log, "rb").read() == before


def test_truncated_log_exports_to_its_last_block(demo_log, tmp_path, capsys):
    cut = tmp_path / "cut.dslog"
    raw = open(demo_log, "rb").read()
    cut.write_bytes(raw[:len(raw) // 2])
    out = tmp_path / "cut.parquet"
    assert cmd_export(_args(str(cut), "--format", "parquet", "-o", str(out))) == 0
    n = load_run(cut).n_records
    assert 0 < n < read_log(demo_log).n_records and pq.read_table(out).num_rows == n
    assert "log truncated" in capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["csv", "parquet", "mcap"])
def test_default_output_is_next_to_the_log(demo_log, tmp_path, fmt):
    import shutil
    log = tmp_path / "run.dslog"
    shutil.copy(demo_log, log)
    assert cmd_export(_args(str(log), "--format", fmt, "--fields", "w_P", "--every", "100")) == 0
    assert (tmp_path / f"run.{fmt}").stat().st_size > 0


def test_units_of_the_delay_record_and_a_berthing_state():
    from rt.analysis.run import field_columns
    assert field_columns("delay", 3) == (("identified", "lead", "kappa"), ("s", "s", "s^2"))
    assert field_columns("delay", 2) == (("identified", "lead"), ("s", "s"))       # logs before kappa
    names, units = field_columns("x", 70, "berthing")     # row 0 the arm's [q | u], row 1 the payload
    assert names[0] == "arm.0" and names[34] == "arm.34" and names[35] == "payload.r_x" and units[35] == "m"
    assert field_columns("x", 70)[0][0] == "A.r_x"        # two spacecraft (the default)


def test_events_carry_their_time_on_the_records_clock(demo_log, tmp_path):
    """A controller event's own t is the controller's clock (arming included); the exports give
    t_run, the records' t of its cycle, so that events and rows share one axis."""
    run = load_run(demo_log)
    cyc, t = run.field("cycle"), run.t
    seen = 0
    for e in run.events_on_run_clock():
        if e.get("cycle") is not None and e["kind"] == "phase" and e.get("t_run") is not None:
            i = int(np.searchsorted(cyc, e["cycle"]))
            assert e["t_run"] == t[i] and e["t_run"] != e["t"]
            seen += 1
    assert seen >= 1
    out, _ = E.export_run(run, "parquet", tmp_path / "e.parquet", fields=["t"])
    ev = json.loads(pq.read_schema(out).metadata[b"dockstand.events"])
    assert all("t_run" in e for e in ev)


def test_a_long_export_and_recompute_report_their_progress(demo_log, tmp_path, monkeypatch):
    """Export and recompute tell a progress callback (the CLI's bar on stderr) as they go, and
    end at the whole selection."""
    from rt.analysis.recompute import recompute
    monkeypatch.setattr(E, "CHUNK", 1000)
    run = load_run(demo_log)
    seen = []
    _, n = E.export_run(run, "csv", tmp_path / "x.csv", fields=["w_P"], progress=lambda d, t: seen.append((d, t)))
    assert n == run.n_records and seen[-1] == (run.n_records, run.n_records)
    assert len(seen) == -(-run.n_records // 1000) and all(a[0] < b[0] for a, b in zip(seen, seen[1:]))
    ticks = []
    res = recompute(run, progress=lambda d, t: ticks.append((d, t)))
    assert res.reproduced and ticks and ticks[0][0] == 0 and all(t == ticks[0][1] for _, t in ticks)
