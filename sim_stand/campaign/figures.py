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
from sim_stand.campaign.summary import INFEASIBLE, LOADS, Summary

PAGE = (11.69, 8.27)        # A4 landscape, inches (as rt.analysis.figures)
STYLE = {"capture": dict(marker="o", color="tab:green"), "no_capture": dict(marker="x", color="tab:red"),
         "failure": dict(marker="^", color="black"), "infeasible start": dict(marker="s", color="0.65")}


def _category(r: dict) -> str:
    """The marker a sample gets: its outcome, an infeasible start apart from the failures."""
    return "infeasible start" if r.get("end_reason") == INFEASIBLE else r["outcome"]


def envelope_page(rows: list[dict], s: Summary) -> Figure:
    fig = Figure(figsize=PAGE)
    axes = fig.subplots(1, 2)
    for ax, xcol, xlabel, scale in ((axes[0], "lateral_offset_m", "lateral offset at start (mm)", 1e3),
                                    (axes[1], "angular_misalignment_deg", "angular misalignment at start (deg)", 1.0)):
        for outcome, st in STYLE.items():
            pts = [(r[xcol], r["closing_speed_mps"]) for r in rows if _category(r) == outcome]
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
            pts = [(r["stand_delay_s"], r[col]) for r in rows if _category(r) == outcome and r.get(col) is not None]
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
    """The worst samples (the summary's order), each: its outcome and loads against the limits
    on one line, its sampled inputs and the reason below, wrapped to the page."""
    import textwrap
    fig = Figure(figsize=PAGE)
    fig.suptitle(f"{s.name}: worst samples (failures, no captures, then the highest load over its limit; "
                 "infeasible starts apart)")
    y = 0.92
    loads = {col: (lkey, unit) for col, lkey, unit in LOADS}
    for r in s.worst:
        parts = [f"sample {r['sample']}: {r['outcome'].replace('_', ' ')}"]
        for col, (lkey, unit) in loads.items():
            v, L = r.get(col), s.limits.get(lkey)
            if v is not None:
                name = col.removeprefix("peak_").rsplit("_", 1)[0].replace("_", " ")
                parts.append(f"{name} {v:.4g} {unit}" + (f" ({v / L:.2f}× limit)" if L else ""))
        fig.text(0.03, y, ";  ".join(parts), fontsize=8.5, weight="bold", va="top")
        y -= 0.03
        inputs = ", ".join(f"{k} = {v:.4g}" for k, v in r.items()
                           if k not in {"sample", "worker", "cpu_s", "reason", "outcome", "end_reason", "t_end_s",
                                        *loads} and isinstance(v, float))
        for ln in textwrap.wrap(inputs, 160) + textwrap.wrap(f"reason: {r['reason']}" if r.get("reason") else "", 160):
            fig.text(0.05, y, ln, fontsize=7.5, family="monospace", va="top")
            y -= 0.024
        y -= 0.015
        if y < 0.05:
            break
    if not s.worst:
        fig.text(0.03, y, "no samples", fontsize=10, va="top")
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
