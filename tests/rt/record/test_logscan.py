"""The run-log index and streaming reads (rt/record/logscan.py) on logs written by the real
writer, on truncated and corrupt files, and on blocks written in another key order."""
from __future__ import annotations

import msgpack
import numpy as np
import pytest

from rt.record.logscan import LogError, UnknownField, read_columns, rows_in_time, scan
from rt.record.runlog import RunLogWriter, read_log

FIELDS = {"t": 1, "w": 6, "k": 3}


def _write(path, n, flush_every=37, events=(), close=True):
    rng = np.random.default_rng(5)
    data = rng.normal(size=(n, 10))
    data[:, 0] = np.arange(n) * 1e-3
    w = RunLogWriter(path, FIELDS, header={"kind": "test"}, threaded=False, capacity=4096)
    for i in range(n):
        w.staging[:] = data[i]
        w.commit()
        if (i + 1) % flush_every == 0:
            w.flush()
        for at, kind in events:
            if at == i:
                w.event(kind, i=i)
    if close:
        w.close()
    else:
        w.flush()
    return data


def test_index_and_columns_equal_what_was_written(tmp_path):
    p = tmp_path / "a.dslog"
    data = _write(p, 1000, events=[(10, "x"), (500, "y")])
    idx = scan(p)
    assert idx.n_records == 1000 and not idx.truncated and idx.footer["records"] == 1000
    assert [e["kind"] for e in idx.events] == ["x", "y"]
    assert len(idx.block_n) == int(np.ceil(1000 / 37))
    cols = read_columns(idx, ["w", "t"])
    assert np.array_equal(cols["w"], data[:, 1:7]) and np.array_equal(cols["t"], data[:, 0])
    part = read_columns(idx, ["k"], 30, 700, 7)          # crosses block boundaries, stride 7
    assert np.array_equal(part["k"], data[30:700:7, 7:10])
    assert read_columns(idx, ["t"], 990, 2000)["t"].shape == (10,)
    assert read_columns(idx, ["t"], 500, 500)["t"].shape == (0,)


def test_read_log_is_the_same_reader(tmp_path):
    p = tmp_path / "a.dslog"
    data = _write(p, 300)
    log = read_log(p, ["k"])
    assert np.array_equal(log.fields["k"], data[:, 7:10]) and log.n_records == 300


@pytest.mark.parametrize("cut", [0.5, 0.77, 0.999])
def test_truncated_file_reads_to_its_last_complete_block(tmp_path, cut):
    p = tmp_path / "a.dslog"
    data = _write(p, 1000, close=False)
    raw = p.read_bytes()
    q = tmp_path / "cut.dslog"
    q.write_bytes(raw[:int(len(raw) * cut)])
    idx = scan(q)
    assert idx.truncated and idx.truncation
    n = idx.n_records
    assert 0 < n < 1000 and n % 37 == 0                      # whole blocks only
    assert np.array_equal(read_columns(idx, ["w"])["w"], data[:n, 1:7])


def test_unclosed_file_is_complete_but_says_no_footer(tmp_path):
    p = tmp_path / "a.dslog"
    _write(p, 100, close=False)
    idx = scan(p)
    assert idx.n_records == 100 and idx.truncated and "footer" in idx.truncation


def test_block_in_another_key_order_is_decoded(tmp_path):
    p = tmp_path / "a.dslog"
    _write(p, 74, flush_every=74, close=False)
    extra = np.arange(20, dtype="<f8").reshape(2, 10)
    with open(p, "ab") as f:
        f.write(msgpack.packb({"n": 2, "d": extra.tobytes(), "k": "rec", "i0": 74}, use_bin_type=True))
        f.write(msgpack.packb({"k": "end", "records": 76}))
    idx = scan(p)
    assert idx.n_records == 76 and not idx.truncated
    assert np.array_equal(read_columns(idx, ["k"], 74)["k"], extra[:, 7:10])


def test_corrupt_block_stops_the_index_there(tmp_path):
    p = tmp_path / "a.dslog"
    _write(p, 74, flush_every=37, close=False)
    with open(p, "ab") as f:   # a block that skips records
        f.write(msgpack.packb({"k": "rec", "i0": 999, "n": 1, "d": np.zeros(10).tobytes()}, use_bin_type=True))
    idx = scan(p)
    assert idx.n_records == 74 and idx.truncated and "corrupt" in idx.truncation


@pytest.mark.parametrize("content, what", [(b"", "empty"), (b"hello world\n", "not a run log"),
                                           (msgpack.packb({"k": "header", "schema": 99}), "schema 99"),
                                           (msgpack.packb({"k": "header", "schema": 1, "fields": 3}), "field list")])
def test_not_a_log_is_one_line_naming_the_file(tmp_path, content, what):
    p = tmp_path / "x.dslog"
    p.write_bytes(content)
    with pytest.raises(LogError) as e:
        scan(p)
    msg = str(e.value)
    assert str(p) in msg and what in msg and "\n" not in msg


def test_missing_file_and_unknown_field(tmp_path):
    with pytest.raises(LogError, match="no such file"):
        scan(tmp_path / "nope.dslog")
    p = tmp_path / "a.dslog"
    _write(p, 10)
    with pytest.raises(UnknownField) as e:
        read_columns(scan(p), ["w_Q"])
    assert "no field 'w_Q'" in str(e.value) and isinstance(e.value, KeyError)


def test_rows_in_time():
    t = np.array([np.nan, np.nan, -0.2, -0.1, 0.0, 0.1, 0.2, np.nan])
    assert rows_in_time(t, 0.0, 0.1) == (4, 6)
    assert rows_in_time(t, None, -0.15) == (2, 3)
    assert rows_in_time(t, 5.0, None) == (0, 0)
