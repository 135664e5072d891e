"""The campaign summary's figures (matplotlib, no display; ``dockstand campaign summary -o
FILE.pdf``): the capture envelopes (capture / no capture / failure over lateral offset x closing
speed and angular misalignment x closing speed), histograms of the peak loads with the
mechanism's limits, a HIL campaign's stand delay against peak force and capture time, and the
worst samples' inputs. One function per page, each returning a
Figure. Not for the real-time loop.
"""
from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from sim_stand.campaign.store import ResultStore
from sim_stand.campaign.summary import LOADS, Summary

PAGE = (11.69, 8.27)        # A4 landscape, inches (as rt.analysis.figures)
STYLE = {"capture": dict(marker="o", color="tab:green"), "no_capture": dict(marker="x", color="tab:red"),
         "failure": dict(marker="^", color="black")}


def envelope_page(rows: list[dict], s: Summary) -> Figure:
    fig = Figure(figsize=PAGE)
    axes = fig.subplots(1, 2)
    for ax, xcol, xlabel, scale in ((axes[0], "lateral_offset_m", "lateral offset at start (mm)", 1e3),
                                    (axes[1], "angular_misalignment_deg", "angular misalignment at start (deg)", 1.0)):
        for outcome, st in STYLE.items():
            pts = [(r[xcol], r["closing_speed_mps"]) for r in rows if r["outcome"] == outcome]
            if pts:
                p = np.array(pts, dtype=float)
                ax.scatter(p[:, 0] * scale, p[:, 1], s=14, label=f"{outcome.replace('_', ' ')} ({len(pts)})",
                           **st)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("closing speed (m/s)")
        ax.grid(True, lw=0.3)
        ax.legend(fontsize=8)
    title = f"{s.name}: capture envelope, {s.completed} samples"
    if s.capture_probability is not None:
        title += (f"; P(capture) = {s.capture_probability:.3f} "
                  f"[{s.wilson_95[0]:.3f}, {s.wilson_95[1]:.3f}] (95 % Wilson)")
        if s.infeasible:
            title += f" over {s.completed - s.infeasible} feasible"
    fig.suptitle(title)
    return fig


def loads_page(rows: list[dict], s: Summary) -> Figure:
    fig = Figure(figsize=PAGE)
    axes = fig.subplots(2, 2).ravel()
    for ax, (col, lkey, unit) in zip(axes, LOADS):
        v = np.array([r[col] for r in rows if r[col] is not None and r["outcome"] != "failure"], dtype=float)
        v = v[np.isfinite(v)]
        if v.size:
            ax.hist(v, bins=min(40, max(5, v.size // 4)), color="tab:blue", alpha=0.8)
        L = s.limits.get(lkey)
        if L:
            ax.axvline(L, color="tab:red", lw=1.2, label=f"limit {L:.4g} {unit}")
            ax.legend(fontsize=8)
        ax.set_xlabel(f"{col} ({unit})")
        ax.set_ylabel("samples")
        ax.grid(True, lw=0.3)
    fig.suptitle(f"{s.name}: peak loads of the runs that did not fail")
    return fig


def delay_page(rows: list[dict], s: Summary) -> Figure:
    """A HIL campaign's stand delay against what it changes: the peak contact force and the
    capture time, each sample by its outcome (``stand_delay_s`` dispersed)."""
    fig = Figure(figsize=PAGE)
    axes = fig.subplots(1, 2)
    for ax, col, label, scale in ((axes[0], "peak_force_n", "peak contact force (N)", 1.0),
                                  (axes[1], "capture_time_s", "capture time (s)", 1.0)):
        for outcome, st in STYLE.items():
            pts = [(r["stand_delay_s"], r[col]) for r in rows if r["outcome"] == outcome and r.get(col) is not None]
            if pts:
                p = np.array(pts, dtype=float)
                ax.scatter(p[:, 0] * 1e3, p[:, 1] * scale, s=14, label=f"{outcome.replace('_', ' ')} ({len(pts)})",
                           **st)
        ax.set_xlabel("stand (platform) delay (ms)")
        ax.set_ylabel(label)
        ax.grid(True, lw=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{s.name}: the stand's delay against the outcome (HIL; the controller configured for the "
                 f"emulator's nominal delay)")
    return fig


def worst_page(s: Summary) -> Figure:
    fig = Figure(figsize=PAGE)
    ax = fig.subplots()
    ax.axis("off")
    skip = {"worker", "cpu_s", "reason"}
    lines = []
    for r in s.worst:
        lines.append(", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in r.items() if k not in skip and v not in (None, "")))
        if r.get("reason"):
            lines.append(f"    reason: {r['reason']}")
    ax.text(0.0, 1.0, "\n".join(lines) or "no samples", va="top", ha="left", family="monospace", fontsize=6,
            wrap=True, transform=ax.transAxes)
    fig.suptitle(f"{s.name}: worst samples (failures, no captures, then the highest load over its limit)")
    return fig


def write_pdf(store: ResultStore, s: Summary, path) -> None:
    rows = store.read().to_pylist()
    with PdfPages(path) as pdf:
        pages = [envelope_page(rows, s), loads_page(rows, s)]
        if rows and "stand_delay_s" in rows[0]:
            pages.append(delay_page(rows, s))
        for fig in pages + [worst_page(s)]:
            pdf.savefig(fig)


__all__ = ["write_pdf", "envelope_page", "loads_page", "delay_page", "worst_page"]
