"""Index and streaming reads of a run log (rt/record/runlog.py format, schema 1).

:func:`scan` walks the file once and returns a :class:`LogIndex`: the header, the events, the
footer, and for every record block the file offset of its data, its first record index and
its record count — without copying the blocks' data. A record block is written by
:class:`rt.record.runlog.RunLogWriter` as the msgpack map ``{"k": "rec", "i0": int, "n": int,
"d": bin}`` in that key order; its framing is parsed directly (a few bytes) and its data
skipped, so indexing a 1 GB log costs a pass over its ~10^4 block headers. Any other object
(header, event, footer, or a block written in another key order) is decoded by msgpack.

:func:`read_columns` then copies the selected fields of a range of records (every ``every``-th
one) out of the file, block by block (each block's rows read into one reused buffer): memory is that of the selection, and the
rest of each row is never copied.

A truncated file (the writer killed mid-block, or no footer) is indexed to its last complete
block and says so (``LogIndex.truncated`` and ``truncation``, a sentence). Not real-time: used
by readers after (or beside) a run, never by the loop.
"""
from __future__ import annotations

import mmap
from dataclasses import dataclass, field
from pathlib import Path

import msgpack
import numpy as np

SCHEMA_VERSION = 1
_REC_PREFIX = b"\x84\xa1k\xa3rec"      # fixmap(4), "k", "rec"


class LogError(ValueError):
    """A file that is not a readable run log, or a request it cannot answer; the message names
    the file and the problem in one line."""


class UnknownField(LogError, KeyError):
    """A field name the log does not have."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass
class LogIndex:
    path: Path
    size: int
    header: dict
    fields: dict[str, int]              # name -> size, in row order
    offsets: dict[str, int]             # name -> first column
    width: int
    events: list[dict]
    footer: dict | None
    block_offset: np.ndarray            # (B,) int64: file offset of each block's data
    block_i0: np.ndarray                # (B,) int64: first record index of each block
    block_n: np.ndarray                 # (B,) int64: records in each block
    truncated: bool
    truncation: str = ""                # why the index stopped early, or why no footer
    n_records: int = field(init=False)

    def __post_init__(self):
        self.n_records = int(self.block_n.sum()) if len(self.block_n) else 0

    def check_fields(self, names) -> list[str]:
        names = list(self.fields) if names is None else list(names)
        for n in names:
            if n not in self.fields:
                raise UnknownField(f"{self.path}: no field {n!r}; fields: {', '.join(self.fields)}")
        return names


def _uint(buf, o, size: int) -> int:
    return int.from_bytes(buf[o:o + size], "big")


def _int_at(buf, o):
    """A msgpack non-negative integer at ``o``: (value, next offset) or None."""
    b = buf[o]
    if b <= 0x7F:
        return b, o + 1
    if b == 0xCC:
        return _uint(buf, o + 1, 1), o + 2
    if b == 0xCD:
        return _uint(buf, o + 1, 2), o + 3
    if b == 0xCE:
        return _uint(buf, o + 1, 4), o + 5
    if b == 0xCF:
        return _uint(buf, o + 1, 8), o + 9
    return None


def _keyed_int(buf, p, key: bytes):
    """``key`` (a msgpack fixstr, its bytes) then a non-negative integer at ``p``: (value,
    next offset) or None."""
    if buf[p:p + len(key)] != key:
        return None
    return _int_at(buf, p + len(key))


def _rec_at(buf, o, size):
    """The framing of a record block at ``o``: (i0, n, data offset, data length) or None when
    the bytes there are not a block in the writer's layout (or run past the end)."""
    try:
        if buf[o:o + 7] != _REC_PREFIX:
            return None
        r = _keyed_int(buf, o + 7, b"\xa2i0")
        if r is None:
            return None
        i0, p = r
        r = _keyed_int(buf, p, b"\xa1n")
        if r is None:
            return None
        n, p = r
        if buf[p:p + 2] != b"\xa1d":
            return None
        p += 2
        size_bytes = {0xC4: 1, 0xC5: 2, 0xC6: 4}.get(buf[p])
        if size_bytes is None:
            return None
        ln, p = _uint(buf, p + 1, size_bytes), p + 1 + size_bytes
    except IndexError:
        return None
    return i0, n, p, ln


def scan(path: str | Path) -> LogIndex:
    """Index the run log at ``path`` (module docstring). Raises :class:`LogError` for a file
    that is missing, empty, not a run log or of another schema."""
    path = Path(path)
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise LogError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise LogError(f"{path}: is a directory, not a run log") from None
    except OSError as e:
        raise LogError(f"{path}: cannot open ({e.strerror})") from None
    with f:
        size = path.stat().st_size
        if size == 0:
            raise LogError(f"{path}: not a run log (empty file)")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _scan(path, mm, size)


def _decode_at(buf, o, size):
    """One msgpack object at ``o``: (object, next offset), or None if it is cut off or corrupt."""
    chunk = 1 << 16
    while True:
        up = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=max(chunk, 1 << 20))
        end = min(size, o + chunk)
        up.feed(buf[o:end])
        try:
            obj = up.unpack()
            return obj, o + up.tell()
        except msgpack.OutOfData:
            if end >= size:
                return None
            chunk *= 4
        except (ValueError, msgpack.UnpackException):
            return None


def _scan(path: Path, mm, size: int) -> LogIndex:
    got = _decode_at(mm, 0, size)
    header = got[0] if got else None
    if not isinstance(header, dict) or header.get("k") != "header":
        raise LogError(f"{path}: not a run log (the file does not begin with a run-log header)")
    if header.get("schema") != SCHEMA_VERSION:
        raise LogError(f"{path}: run-log schema {header.get('schema')!r}; this reader knows schema {SCHEMA_VERSION}")
    try:
        fields = {str(n): int(s) for n, s in header["fields"]}
        if not fields or min(fields.values()) < 1:
            raise ValueError
    except (KeyError, TypeError, ValueError):
        raise LogError(f"{path}: run-log header without a valid field list") from None
    offsets, width = {}, 0
    for n, s in fields.items():
        offsets[n] = width
        width += s
    o = got[1]
    offs, i0s, ns = [], [], []
    events: list[dict] = []
    footer = None
    truncation = ""
    expected = 0
    while o < size:
        rec = _rec_at(mm, o, size)
        if rec is not None:
            i0, n, p, ln = rec
            if p + ln > size:
                truncation = f"the file ends inside the block of records {i0}..{i0 + n - 1}"
                break
            if ln != 8 * n * width or i0 != expected:
                truncation = f"a corrupt record block at byte {o} (records from {i0}, {n} of them)"
                break
            offs.append(p)
            i0s.append(i0)
            ns.append(n)
            expected += n
            o = p + ln
            continue
        got = _decode_at(mm, o, size)
        if got is None:
            truncation = f"the file ends inside an object at byte {o} (a write cut off)"
            break
        start = o
        obj, o = got
        k = obj.get("k") if isinstance(obj, dict) else None
        if k == "rec":           # a block in another key order: decoded as an object
            d = obj.get("d")
            n = int(obj.get("n", -1))
            if not isinstance(d, bytes) or len(d) != 8 * n * width or int(obj.get("i0", -1)) != expected:
                truncation = f"a corrupt record block before byte {o}"
                break
            offs.append(mm.find(d, start, o))   # where the data lie inside the object
            i0s.append(expected)
            ns.append(n)
            expected += n
        elif k == "ev":
            events.append(obj)
        elif k == "end":
            footer = obj
    if not truncation and footer is None:
        truncation = "no end-of-run footer (the writer did not close the file)"
    return LogIndex(path, size, header, fields, offsets, width, events, footer,
                    np.asarray(offs, dtype=np.int64), np.asarray(i0s, dtype=np.int64),
                    np.asarray(ns, dtype=np.int64), bool(truncation), truncation)


def read_columns(idx: LogIndex, names, start: int = 0, stop: int | None = None,
                 every: int = 1) -> dict[str, np.ndarray]:
    """Fields ``names`` of records ``start, start + every, ... < stop`` (all by default) as
    ``{name: (m,) or (m, size)}`` float64 arrays, copied block by block from the
    file (only the blocks that hold selected records are touched)."""
    names = idx.check_fields(names)
    if every < 1:
        raise LogError(f"{idx.path}: every must be >= 1, got {every}")
    n_all = idx.n_records
    stop = n_all if stop is None else max(0, min(int(stop), n_all))
    start = max(0, int(start))
    m = max(0, (stop - start + every - 1) // every)
    out = {n: np.empty((m, idx.fields[n])) for n in names}
    if m == 0:
        return {n: (a[:, 0] if idx.fields[n] == 1 else a) for n, a in out.items()}
    W = idx.width
    buf = bytearray(8 * W * int(idx.block_n.max()))
    with open(idx.path, "rb", buffering=0) as f:
        b0 = int(np.searchsorted(idx.block_i0, start, side="right")) - 1
        j = 0
        for b in range(max(b0, 0), len(idx.block_i0)):
            i0, n = int(idx.block_i0[b]), int(idx.block_n[b])
            if i0 >= stop:
                break
            # first selected record in this block
            first = max(start, i0)
            r = (first - start) % every
            if r:
                first += every - r
            last = min(stop, i0 + n)
            if first >= last:
                continue
            # only the rows [first, last) of the block are read (pread into one reused buffer,
            # so the file's pages never count as this process's memory)
            nb = 8 * W * (last - first)
            f.seek(int(idx.block_offset[b]) + 8 * W * (first - i0))
            got = f.readinto(memoryview(buf)[:nb])
            if got != nb:
                raise LogError(f"{idx.path}: the file shrank while it was read")
            sel = np.frombuffer(buf, dtype="<f8", count=nb // 8).reshape(last - first, W)[::every]
            k = sel.shape[0]
            for name in names:
                o = idx.offsets[name]
                out[name][j:j + k] = sel[:, o:o + idx.fields[name]]
            j += k
    return {n: (a[:j, 0] if idx.fields[n] == 1 else a[:j]) for n, a in out.items()}


def rows_in_time(t: np.ndarray, t0: float | None, t1: float | None) -> tuple[int, int]:
    """The record range ``[start, stop)`` whose times lie in ``[t0, t1]`` for a time column ``t``
    that increases where it is finite (NaN records, outside the run, are kept inside the range
    only between selected times)."""
    ok = np.isfinite(t)
    idx = np.nonzero(ok & ((t >= t0) if t0 is not None else ok) & ((t <= t1) if t1 is not None else ok))[0]
    if not len(idx):
        return 0, 0
    return int(idx[0]), int(idx[-1]) + 1

