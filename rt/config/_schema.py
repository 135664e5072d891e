"""Typed, validating reader over a parsed TOML table.

Every config loader in the project reads its file through :class:`Table`, so every error has
the same shape ``FILE: KEY.PATH: reason`` and unknown keys are always rejected::

    t = Table.load(path)                     # ConfigError on unreadable / bad TOML
    mass = t.float("mass_kg", gt=0.0)
    port = t.table("port")
    pos = port.vector("position_m", 3)
    port.done(); t.done()                    # unknown keys -> ConfigError

Physical checks that need several values at once use :meth:`Table.error` to raise with the
right key path.

**Every number has a physical range.** A reader gives a key's bounds (``gt``, ``ge``, ``lt``,
``le``); where it gives no lower or no upper bound, the key's unit suffix does
(:data:`UNIT_RANGES`: ``_m`` a length on a test stand, ±10 km; ``_mps`` a speed, ±100 m/s;
``_kg`` a spacecraft's mass, up to 10⁷ kg; ``_cycles`` up to 10⁷ …), so that ``1e300`` for a
closing velocity or ``1e14`` stale cycles is refused by name with the range, never carried
into a computation. :data:`RANGES` (a context variable, set by tests) records the range each
numeric key was read with: tests/rt/config/test_ranges.py loads every shipped file and fails
on a number read without one.
"""
from __future__ import annotations

import contextvars
import difflib
import math
import tomllib
from pathlib import Path
from typing import Any, Iterable

import numpy as np

_MISSING = object()


class ConfigError(ValueError):
    """A config file is wrong. ``str(e)`` is ``FILE: KEY: reason``."""

    def __init__(self, file: str | Path, key: str, reason: str):
        self.file = str(file)
        self.key = key
        self.reason = reason
        super().__init__(f"{self.file}: {key}: {reason}" if key else f"{self.file}: {reason}")


def _type_name(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string", list: "array",
            dict: "table"}.get(type(v), type(v).__name__)


#: physical ranges by a key's unit suffix (the longest suffix that matches): (suffix, low, high,
#: what it is). Generous and symmetric: they refuse magnitudes no docking stand, spacecraft or
#: campaign can mean; signs and finer limits are each reader's (``gt=0`` for a mass ...).
UNIT_RANGES: tuple[tuple[str, float, float, str], ...] = tuple(sorted((
    ("_m", -1e4, 1e4, "a length (m)"), ("_mm", -1e7, 1e7, "a length (mm)"),
    ("_m_s", -100.0, 100.0, "a speed (m/s)"), ("_mps", -100.0, 100.0, "a speed (m/s)"),
    ("_m_s2", -1e4, 1e4, "an acceleration (m/s²)"), ("_mps2", -1e4, 1e4, "an acceleration (m/s²)"),
    ("_rad", -100.0, 100.0, "an angle (rad)"), ("_deg", -3600.0, 3600.0, "an angle (deg)"),
    ("_rad_s", -100.0, 100.0, "an angular rate (rad/s)"), ("_deg_s", -6000.0, 6000.0, "an angular rate (deg/s)"),
    ("_rad_s2", -1e4, 1e4, "an angular acceleration (rad/s²)"),
    ("_deg_s2", -1e6, 1e6, "an angular acceleration (deg/s²)"),
    ("_s", -1e6, 1e6, "a time (s)"), ("_ms", -1e9, 1e9, "a time (ms)"), ("_us", -1e12, 1e12, "a time (µs)"),
    ("_ns", -1e15, 1e15, "a time (ns)"),
    ("_hz", -1e7, 1e7, "a frequency (Hz)"), ("_kg", -1e7, 1e7, "a mass (kg)"),
    ("_kgm2", -1e10, 1e10, "a moment of inertia (kg·m²)"), ("_kg_m2", -1e10, 1e10, "a moment of inertia (kg·m²)"),
    ("_n", -1e8, 1e8, "a force (N)"), ("_nm", -1e8, 1e8, "a moment (N·m)"),
    ("_n_per_m", -1e12, 1e12, "a stiffness (N/m)"), ("_nm_per_rad", -1e12, 1e12, "a rotational stiffness (N·m/rad)"),
    ("_n_s_per_m", -1e10, 1e10, "a damping (N·s/m)"), ("_nms_per_rad", -1e10, 1e10, "a rotational damping (N·m·s/rad)"),
    ("_pct", -1e4, 1e4, "a percentage"), ("_j", -1e9, 1e9, "an energy (J)"), ("_w", -1e9, 1e9, "a power (W)"),
    ("_cycles", -1e7, 1e7, "a number of cycles"), ("_samples", -1e7, 1e7, "a number of samples"),
    ("_ratio", -1e3, 1e3, "a ratio"), ("_fraction", -1.0, 1.0, "a fraction"), ("_mb", -1e7, 1e7, "a size (MB)"),
    ("_dps", -6000.0, 6000.0, "an angular rate (deg/s)"), ("_m_per_s2", -1e4, 1e4, "an acceleration (m/s²)"),
    ("_nm2", -1e12, 1e12, "a flexural rigidity (N·m²)"), ("_n_per_m2", -1e15, 1e15, "a stiffness slope (N/m²)"),
    ("_mrad", -1e5, 1e5, "an angle (mrad)"), ("_ohm", -1e6, 1e6, "a resistance (Ω)"),
    ("_nm_per_a", -1e4, 1e4, "a torque constant (N·m/A)"), ("_scale", -100.0, 100.0, "a scale factor"),
), key=lambda r: -len(r[0])))

#: when set to a list (a test), every numeric read appends (file, key, low, high) there: the
#: range the number was held to (None: unbounded on that side)
RANGES: contextvars.ContextVar[list | None] = contextvars.ContextVar("dockstand_config_ranges", default=None)


def unit_range(name: str) -> tuple[float, float, str] | None:
    """The physical range of a key by its unit suffix (:data:`UNIT_RANGES`), or None."""
    n = name.lower()
    for suffix, lo, hi, what in UNIT_RANGES:
        if n.endswith(suffix):
            return lo, hi, what
    return None


#: when set to a list (``dockstand check-config``), :meth:`Table.done` appends its error there and
#: lets the loader go on, so one run reports every misspelt key of a file, not only the first
COLLECT: contextvars.ContextVar[list | None] = contextvars.ContextVar("dockstand_config_collect", default=None)


#: the largest configuration file read (a case, a vehicle, a stand: a few kB each)
MAX_CONFIG_BYTES = 1 << 20


def read_config_bytes(file: Path) -> bytes:
    """The bytes of a configuration file: a regular file of at most :data:`MAX_CONFIG_BYTES`
    only -- a FIFO or a device named as a config file (a case's vehicle, say) would block the
    reader or feed it without end -- else a ConfigError naming the file and why. Not
    real-time (the command thread's worker, the CLI)."""
    import os
    import stat
    try:
        st = os.stat(file)
    except FileNotFoundError:
        raise ConfigError(file, "", "file not found") from None
    except OSError as e:
        raise ConfigError(file, "", f"cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a device or socket"
        raise ConfigError(file, "", f"is {what}, not a configuration file (a .toml file)")
    if st.st_size > MAX_CONFIG_BYTES:
        raise ConfigError(file, "", f"is {st.st_size / 1e6:.1f} MB: not a configuration file (at most "
                                    f"{MAX_CONFIG_BYTES >> 10} kB are read)")
    try:
        with open(file, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)        # a file that grew since: still bounded
    except OSError as e:
        raise ConfigError(file, "", f"cannot read: {e.strerror or e}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(file, "", f"grew beyond {MAX_CONFIG_BYTES >> 10} kB while it was read")
    return raw


class Table:
    """A TOML table with its file and key path; tracks which keys were read."""

    def __init__(self, data: dict, file: str | Path, path: str = ""):
        if not isinstance(data, dict):
            raise ConfigError(file, path, f"expected a table, got {_type_name(data)}")
        self.data = data
        self.file = Path(file)
        self.path = path
        self._used: set[str] = set()
        self._asked: set[str] = set()      # every key a reader asked for (present or not)

    # ------------------------------------------------------------------ construction
    @classmethod
    def load(cls, file: str | Path) -> "Table":
        file = Path(file)
        raw = read_config_bytes(file)
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise ConfigError(file, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(file, "", f"invalid TOML: {e}") from None
        return cls(data, file)

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def error(self, name: str, reason: str) -> ConfigError:
        """A ConfigError for key ``name`` of this table (``name=""`` for the table itself)."""
        return ConfigError(self.file, self.key(name) if name else self.path, reason)

    def has(self, name: str) -> bool:
        self._asked.add(name)
        return name in self.data

    def _get(self, name: str, default: Any) -> Any:
        self._asked.add(name)
        if name in self.data:
            self._used.add(name)
            return self.data[name]
        if default is _MISSING:
            near = difflib.get_close_matches(name, [str(k) for k in self.data], n=1, cutoff=0.6)
            raise self.error(name, "required key is missing" + (f" (is '{near[0]}' a misspelling?)" if near else ""))
        return default

    def done(self) -> None:
        """Reject keys that no reader asked for: every one of them in one error, each with the
        closest key the readers know (``did you mean``) when one is close."""
        unknown = sorted(set(self.data) - self._used)
        if not unknown:
            return
        absent = sorted(self._asked - set(self.data))      # a reader's key that is not there: the likeliest
        asked = sorted(self._asked)

        def hint(k: str) -> str:
            m = difflib.get_close_matches(k, absent, n=1, cutoff=0.6) or \
                difflib.get_close_matches(k, asked, n=1, cutoff=0.6)
            return f" (did you mean '{m[0]}'?)" if m else ""
        if len(unknown) == 1:
            err = self.error(unknown[0], "unknown key" + hint(unknown[0]))
        else:
            err = self.error("", "unknown keys " + ", ".join(f"'{k}'{hint(k)}" for k in unknown))
        sink = COLLECT.get()
        if sink is None:
            raise err
        sink.append(err)           # check-config: go on, and report every table's unknown keys

    def relative(self, p: str) -> Path:
        """A path written in this file, resolved relative to the file's folder."""
        q = Path(p)
        return q if q.is_absolute() else (self.file.parent / q)

    # ------------------------------------------------------------------ scalars
    def float(self, name: str, default: Any = _MISSING, *, gt: float | None = None,
              ge: float | None = None, lt: float | None = None, le: float | None = None) -> float:
        v = self._get(name, default)
        if v is default and default is not _MISSING:
            return v
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(name, f"expected a number, got {_type_name(v)}")
        v = float(v)
        if not math.isfinite(v):
            raise self.error(name, f"must be finite, got {v}")
        _check_bounds(self, name, v, gt, ge, lt, le)
        self._physical(name, v, gt if gt is not None else ge, lt if lt is not None else le)
        return v

    def int(self, name: str, default: Any = _MISSING, *, ge: int | None = None,
            le: int | None = None) -> int:
        v = self._get(name, default)
        if v is default and default is not _MISSING:
            return v
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(name, f"expected an integer, got {_type_name(v)}")
        _check_bounds(self, name, v, None, ge, None, le)
        self._physical(name, v, ge, le)
        return v

    def _physical(self, name: str, v: float, low: float | None, high: float | None) -> None:
        """The unit's range where the reader gave no bound on a side (module docstring); a key
        without a unit of its own inside a table named with one (a campaign's
        ``[dispersions.closing_velocity_mps]`` ``three_sigma``, ``bounds``) takes the table's."""
        ur = unit_range(name) or unit_range(self.path.rsplit(".", 1)[-1])
        if ur is not None:
            lo, hi, what = ur
            if (low is None and v < lo) or (high is None and v > hi):
                raise self.error(name, f"{v:g} is not {what} of a docking stand: it must lie within [{lo:g}, {hi:g}]")
            low = lo if low is None else low
            high = hi if high is None else high
        sink = RANGES.get()
        if sink is not None:
            sink.append((str(self.file), self.key(name), low, high))

    def bool(self, name: str, default: Any = _MISSING) -> bool:
        v = self._get(name, default)
        if not isinstance(v, bool):
            raise self.error(name, f"expected true or false, got {_type_name(v)}")
        return v

    def str(self, name: str, default: Any = _MISSING, *, choices: Iterable[str] | None = None) -> str:
        v = self._get(name, default)
        if v is default and default is not _MISSING:
            return v
        if not isinstance(v, str):
            raise self.error(name, f"expected a string, got {_type_name(v)}")
        if choices is not None:
            choices = list(choices)
            if v not in choices:
                raise self.error(name, f"must be one of {', '.join(repr(c) for c in choices)}; got {v!r}")
        return v

    def strings(self, name: str, default: Any = _MISSING, *, choices: Iterable[str] | None = None) -> list[str]:
        """An array of strings, each one of ``choices`` if given."""
        v = self._get(name, default)
        if v is default and default is not _MISSING:
            return v
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.error(name, f"expected an array of strings, got {v!r}")
        if choices is not None:
            choices = list(choices)
            bad = [x for x in v if x not in choices]
            if bad:
                raise self.error(name, f"{bad[0]!r} is not one of {', '.join(repr(c) for c in choices)}")
        return v

    # ------------------------------------------------------------------ arrays
    def array(self, name: str, shape: tuple[int, ...] | None = None, default: Any = _MISSING, *,
              gt: float | None = None, ge: float | None = None, lt: float | None = None,
              le: float | None = None) -> np.ndarray:
        """A numeric array (nested TOML arrays) as float64; ``shape`` entries of -1 are free."""
        v = self._get(name, default)
        if v is default and default is not _MISSING:
            return v if v is None else np.asarray(v, dtype=np.float64)
        arr = _to_array(self, name, v)
        if shape is not None:
            ok = arr.ndim == len(shape) and all(s == -1 or s == a for s, a in zip(shape, arr.shape))
            if not ok:
                want = "x".join("N" if s == -1 else str(s) for s in shape)
                got = "x".join(str(a) for a in arr.shape) if arr.ndim else "scalar"
                raise self.error(name, f"expected an array of shape {want}, got {got}")
        low, high = (gt if gt is not None else ge), (lt if lt is not None else le)
        for x in arr.ravel():
            _check_bounds(self, name, float(x), gt, ge, lt, le)
            self._physical(name, float(x), low, high)
        if not arr.size:
            self._physical(name, 0.0, low, high)
        return arr

    def vector(self, name: str, n: int, default: Any = _MISSING, **bounds: float) -> np.ndarray:
        return self.array(name, (n,), default, **bounds)

    # ------------------------------------------------------------------ sub-tables
    def table(self, name: str, default: Any = _MISSING) -> "Table":
        v = self._get(name, default)
        if v is None:
            return None  # type: ignore[return-value]
        if v is default and isinstance(default, dict):
            v = default
        if not isinstance(v, dict):
            raise self.error(name, f"expected a table, got {_type_name(v)}")
        return Table(v, self.file, self.key(name))

    def tables(self, name: str, default: Any = _MISSING) -> list["Table"]:
        """An array of tables (``[[name]]``)."""
        v = self._get(name, default)
        if v is default and default is not _MISSING:
            v = default
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            raise self.error(name, "expected an array of tables ([[...]])")
        return [Table(x, self.file, f"{self.key(name)}[{i}]") for i, x in enumerate(v)]


# the top-level keys that mark each kind of config file (two of them present: that kind)
KIND_KEYS = {"stand": {"loop", "hexapod", "delays", "limits", "geometry", "runlog"},
             "emulator": {"physics", "model", "mechanism", "interface"},
             "case": {"vehicles", "initial", "end", "duration_s"},
             "campaign": {"dispersions", "samples", "sampling", "seed"},
             "vehicle": {"mass_kg", "inertia_kgm2", "port", "modes"}}
WHAT_TAKES = {"stand": "--stand", "emulator": "--emulator", "case": "--case", "campaign": "dockstand campaign run",
              "vehicle": "a case's [vehicles]"}


def expect_kind(t: Table, kind: str) -> None:
    """A clear error when the file read as a ``kind`` is plainly another kind of config (two or
    more of that kind's top-level keys and none of this one's): "this is a stand file", not a
    list of unknown keys."""
    keys = set(t.data)
    if keys & KIND_KEYS[kind]:
        return
    def a(k: str) -> str:
        return f"an {k}" if k[0] in "aeiou" else f"a {k}"
    for other, marks in KIND_KEYS.items():
        if other != kind and len(keys & marks) >= 2:
            raise ConfigError(t.file, t.path, f"this is {a(other)} file (it has {', '.join(sorted(keys & marks))}), "
                                              f"not {a(kind)} file: give it as {WHAT_TAKES[other]}")


def _to_array(t: Table, name: str, v: Any) -> np.ndarray:
    def check(x: Any) -> None:
        if isinstance(x, list):
            for y in x:
                check(y)
        elif isinstance(x, bool) or not isinstance(x, (int, float)):
            raise t.error(name, f"expected numbers, found {_type_name(x)}")

    if not isinstance(v, list):
        raise t.error(name, f"expected an array, got {_type_name(v)}")
    check(v)
    try:
        arr = np.array(v, dtype=np.float64)
    except ValueError:
        raise t.error(name, "ragged array (rows of different lengths)") from None
    if arr.dtype == object:
        raise t.error(name, "ragged array (rows of different lengths)")
    if not np.all(np.isfinite(arr)):
        raise t.error(name, "all entries must be finite")
    return arr


def _check_bounds(t: Table, name: str, v: float, gt, ge, lt, le) -> None:
    if gt is not None and not v > gt:
        raise t.error(name, f"must be > {gt}, got {v}")
    if ge is not None and not v >= ge:
        raise t.error(name, f"must be >= {ge}, got {v}")
    if lt is not None and not v < lt:
        raise t.error(name, f"must be < {lt}, got {v}")
    if le is not None and not v <= le:
        raise t.error(name, f"must be <= {le}, got {v}")
