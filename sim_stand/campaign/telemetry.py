"""Telemetry of a docking for :mod:`sim_stand.campaign.reconstruct`: CSV or Parquet with the
column names of ``dockstand export`` (a unit suffix ``" [N]"`` is ignored): ``t`` (s) and any
subset of the contact wrench on P ``w_P.fx .. w_P.mz``, the leg strokes ``stroke.leg1 ..``, the
ring's pose ``ring_state.0 .. ring_state.5`` and the active craft's angular rates
``x.A.w_x .. x.A.w_z``; other columns are ignored (and listed). Also the first-contact time of a
set of channels, the same rule for the telemetry and for a simulation. Not for the real-time loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

CHANNEL_PREFIXES = ("w_P.", "stroke.", "ring_state.", "x.A.w_")


class TelemetryError(ValueError):
    """The telemetry file cannot be used (says which file and why)."""


@dataclass
class Telemetry:
    file: str
    t: np.ndarray
    channels: dict[str, np.ndarray]
    ignored: list[str]


def read_telemetry(path: str | Path) -> Telemetry:
    """The telemetry file's time and usable channels (module docstring)."""
    import pyarrow as pa
    path = Path(path)
    try:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq
            table = pq.read_table(path)
        elif path.suffix.lower() == ".csv":
            import pyarrow.csv as pc
            table = pc.read_csv(path)
        else:
            raise TelemetryError(f"{path}: expected a .csv or .parquet file")
    except (OSError, pa.ArrowInvalid) as e:
        raise TelemetryError(f"{path}: cannot read ({e})") from None
    cols = {}
    for name in table.column_names:
        base = name.split(" [")[0].strip()
        cols[base] = name
    if "t" not in cols:
        raise TelemetryError(f"{path}: no time column 't' (seconds)")
    t = np.asarray(table.column(cols["t"]).to_numpy(), dtype=np.float64)
    if t.size < 10 or not np.all(np.diff(t) > 0):
        raise TelemetryError(f"{path}: column 't' must hold at least 10 strictly increasing times")
    ch, ignored = {}, []
    for base, name in cols.items():
        if base == "t":
            continue
        if base.startswith(CHANNEL_PREFIXES) and not (base.startswith("ring_state.") and int(base.split(".")[1]) > 5):
            v = np.asarray(table.column(name).to_numpy(), dtype=np.float64)
            if not np.all(np.isfinite(v)):
                raise TelemetryError(f"{path}: column {name!r} has non-finite values")
            ch[base] = v
        else:
            ignored.append(base)
    if not ch:
        raise TelemetryError(f"{path}: none of the known channels (w_P.*, stroke.leg*, ring_state.0-5, x.A.w_*) "
                             f"is in the file; columns: {', '.join(cols)}")
    return Telemetry(str(path), t, ch, ignored)


def _crossing(t: np.ndarray, v: np.ndarray, level: float) -> float | None:
    """The first time ``v`` exceeds ``level``, interpolated linearly between samples (a
    contact time that moves continuously with the parameters, finer than the sampling)."""
    hit = np.nonzero(v > level)[0]
    if not hit.size:
        return None
    k = int(hit[0])
    if k == 0:
        return float(t[0])
    a = (level - v[k - 1]) / (v[k] - v[k - 1])
    return float(t[k - 1] + a * (t[k] - t[k - 1]))


def contact_time(t: np.ndarray, ch: dict[str, np.ndarray], threshold_n: float, threshold_m: float) -> float | None:
    """The first time the force magnitude exceeds ``threshold_n`` (else a stroke departs from
    its first value by ``threshold_m``); None if neither happens or no such channel exists."""
    f = [ch[k] for k in ("w_P.fx", "w_P.fy", "w_P.fz") if k in ch]
    if f:
        return _crossing(t, np.sqrt(sum(x * x for x in f)), threshold_n)
    s = [ch[k] for k in ch if k.startswith("stroke.")]
    if s:
        return _crossing(t, np.max(np.abs(np.stack(s) - np.stack(s)[:, :1]), axis=0), threshold_m)
    return None


__all__ = ["Telemetry", "TelemetryError", "read_telemetry", "contact_time", "CHANNEL_PREFIXES"]
