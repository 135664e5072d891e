"""Telemetry of a docking for :mod:`sim_stand.campaign.reconstruct`: CSV or Parquet with the
column names of ``dockstand export`` (a unit suffix ``" [N]"`` is ignored): ``t`` (s) and any
subset of the channels of :data:`CHANNELS`; other columns are ignored (and listed). ``dockstand
export``'s own file is read as it is: its rows without a run time (a HIL log's arming, ``t``
NaN) are left out and counted (``Telemetry.untimed``). Also the first-contact time of a set of
channels, the same rule for the telemetry and for a simulation. Not for the real-time loop.

Which of a run log's fields are telemetry: an all-digital run (``dockstand simulate``, a
campaign's ``rerun``) logs every channel; a HIL run (``dockstand run``, ``demo``) logs the
contact wrench, the relative pose and twist of A in P and the simulated vehicles' states (the
active craft's rates among them), not the mechanism's strokes or ring pose (the hardware's).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

CHANNEL_PREFIXES = ("w_P.", "stroke.", "ring_state.", "x.A.w_", "rel_pose.", "rel_twist.")
#: what each channel group is, in the order the fit lists them
CHANNELS = {"w_P.": "the contact wrench on P, w_P.fx .. w_P.mz (N, N m): times the first contact; fitted with "
                    "--fit-forces",
            "rel_pose.": "the relative pose of A in P, rel_pose.x .. z (m) and rel_pose.qx .. qz (the attitude's "
                         "vector part; qw is left out)",
            "rel_twist.": "the relative velocity and rate of A in P, rel_twist.vx .. wz (m/s, rad/s)",
            "stroke.": "the mechanism's leg strokes, stroke.leg1 .. (m; a digital run's)",
            "ring_state.": "the capture ring's pose, ring_state.0 .. 5 (m, rad; a digital run's)",
            "x.A.w_": "the active craft's body rates, x.A.w_x .. w_z (rad/s)"}


class TelemetryError(ValueError):
    """The telemetry file cannot be used (says which file and why)."""


@dataclass
class Telemetry:
    file: str
    t: np.ndarray
    channels: dict[str, np.ndarray]
    ignored: list[str]
    untimed: int = 0           # rows left out: no run time (t NaN: a HIL log's arming)


def usable(base: str) -> bool:
    """Whether a column (its name without the unit) is a channel the fit can use."""
    if not base.startswith(CHANNEL_PREFIXES):
        return False
    if base.startswith("ring_state."):
        return base.split(".")[1].isdigit() and int(base.split(".")[1]) <= 5
    return base != "rel_pose.qw"


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
    t = np.asarray(table.column(cols["t"]).to_numpy(zero_copy_only=False), dtype=np.float64)
    timed = np.isfinite(t)          # dockstand export's rows of a HIL log's arming have no run time
    untimed = int(t.size - timed.sum())
    t = t[timed]
    if t.size < 10:
        raise TelemetryError(f"{path}: column 't' has {t.size} finite times"
                             + (f" ({untimed} rows without one)" if untimed else "") + ": at least 10 are needed")
    bad = np.nonzero(np.diff(t) <= 0)[0]
    if bad.size:
        k = int(bad[0])
        raise TelemetryError(f"{path}: column 't' must increase: row {int(np.nonzero(timed)[0][k + 1]) + 1} "
                             f"({t[k + 1]:g} s) does not come after the one before ({t[k]:g} s)")
    ch, ignored = {}, []
    for base, name in cols.items():
        if base == "t":
            continue
        if usable(base):
            v = np.asarray(table.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)[timed]
            if not np.all(np.isfinite(v)):
                raise TelemetryError(f"{path}: column {name!r} has non-finite values in the run")
            ch[base] = v
        else:
            ignored.append(base)
    if not ch:
        raise TelemetryError(f"{path}: none of the known channels (w_P.*, rel_pose.*, rel_twist.*, stroke.leg*, "
                             f"ring_state.0-5, x.A.w_*) is in the file; columns: {', '.join(list(cols)[:20])}"
                             + (" ..." if len(cols) > 20 else ""))
    return Telemetry(str(path), t, ch, ignored, untimed)


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


__all__ = ["Telemetry", "TelemetryError", "read_telemetry", "contact_time", "CHANNEL_PREFIXES", "CHANNELS", "usable"]
