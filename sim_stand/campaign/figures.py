"""The campaign summary's figures (matplotlib, no display; ``dockstand campaign summary -o
FILE.pdf``): a first page with the counts, the probability and the loads against their limits
(every exceedance in red, by sample), the capture envelopes (capture / no capture / failure over
lateral offset x closing speed and angular misalignment x closing speed; a sample over a load
limit ringed in red), histograms of the peak loads with the mechanism's limits (the bins past a
limit in red, integer counts), a HIL campaign's stand delay against peak force and capture
time, and the worst samples (every one over a limit first). One function per page, each
returning a Figure. Not for the real-time loop.
"""
from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from rt.analysis import numbers as NUM

from sim_stand.campaign.store import ResultStore
from sim_stand.campaign.summary import INFEASIBLE, LOAD_NAMES, LOAD_UNITS, LOADS, Summary, load_ratios, max_ratio

PAGE = (11.69, 8.27)        # A4 landscape, inches (as rt.analysis.figures)
OVER = "#b00000"            # anything over a limit (as rt.analysis.figures)
STYLE = {"capture": dict(marker="o", color="tab:green"), "no_capture": dict(marker="x", color="tab:red"),
         "failure": dict(marker="^", color="black"), "infeasible start": dict(marker="s", color="0.65")}


def _category(r: dict) -> str:
    """The marker a sample gets: its outcome, an infeasible start apart from the failures."""
    return "infeasible start" if r.get("end_reason") == INFEASIBLE else r["outcome"]


def summary_page(s: Summary) -> Figure:
    """The first page: counts, probability, the loads against their limits and every sample
    over a limit, in red (what a reviewer must not miss comes first)."""
    fig = Figure(figsize=PAGE)
    fig.text(0.04, 0.94, f"campaign {s.name}: summary", fontsize=18, weight="bold")
    y = 0.89
    if s.over_limit:
        fig.text(0.04, y, f" {len(s.over_limit)} SAMPLE{'S' if len(s.over_limit) != 1 else ''} OVER A LOAD LIMIT: "
                 + ", ".join(str(i) for i in s.over_limit[:30]) + (" …" if len(s.over_limit) > 30 else "") + " ",
                 fontsize=12, weight="bold", color="white", bbox=dict(boxstyle="square,pad=0.3", fc=OVER, ec="none"))
        y -= 0.06
    lines = [f"{s.completed} of {s.samples} samples" + ("" if s.completed == s.samples else " (incomplete)"),
             f"capture {s.captures}, no capture {s.no_captures}, failure {s.failures}"
             + (f" ({s.infeasible} infeasible starts, counted apart)" if s.infeasible else "")]
    if s.capture_probability is not None:
        lo, hi = s.wilson_95
        lines.append(f"P(capture) = {s.capture_probability:.3f}, 95 % Wilson interval [{lo:.3f}, {hi:.3f}]"
                     + (f" over {s.completed - s.infeasible} feasible samples" if s.infeasible else ""))
    for ln in lines:
        fig.text(0.05, y, ln, fontsize=11)
        y -= 0.035
    y -= 0.02
    fig.text(0.05, y, "peak loads of the runs that did not fail", fontsize=12, weight="bold")
    y -= 0.04
    for col, d in s.loads.items():
        u = LOAD_UNITS[col]
        text = (f"{LOAD_NAMES[col]:<12} max {NUM.quantity(d['max'], u):>11}   p99 {NUM.quantity(d['p99'], u):>11}"
                f"   mean {NUM.quantity(d['mean'], u):>11}")
        bad = bool(d["over_limit"])
        if d["limit"]:
            text += f"   limit {NUM.quantity(d['limit'], u):>10}   max {NUM.ratio(d['max'] / d['limit'])}"
            text += f"   {d['over_limit']} OVER" if bad else "   none over"
        fig.text(0.05, y, text, fontsize=10, family="monospace", color=OVER if bad else "black",
                 weight="bold" if bad else "normal")
        y -= 0.032
    for end, d in s.failure_reasons.items():
        y -= 0.01
        fig.text(0.05, y, f"failure ×{d['count']}: {end} (e.g. {str(d['example'])[:120]})", fontsize=9)
        y -= 0.03
    if s.over_limit:
        y -= 0.02
        fig.text(0.05, y, "samples over a limit (the worst-samples page gives each one's inputs)", fontsize=12,
                 weight="bold", color=OVER)
        y -= 0.035
        for r in [r for r in s.worst if r["sample"] in set(s.over_limit)]:
            text = f"sample {r['sample']:>5}  " + "   ".join(
                f"{LOAD_NAMES[c]} {NUM.quantity(r[c], LOAD_UNITS[c])} = {NUM.ratio(x)}"
                for c, x in load_ratios(r, s.limits).items() if x > 1.0)
            fig.text(0.06, y, text, fontsize=9.5, family="monospace", color=OVER)
            y -= 0.027
            if y < 0.04:
                fig.text(0.06, y, "… (the worst-samples page lists the rest)", fontsize=9, color=OVER)
                break
    if s.note:
        fig.text(0.05, 0.02, f"note: {s.note}", fontsize=8, color="darkred")
    return fig


def envelope_page(rows: list[dict], s: Summary) -> Figure:
    fig = Figure(figsize=PAGE)
    axes = fig.subplots(1, 2)
    for ax, xcol, xlabel, scale in ((axes[0], "lateral_offset_m", "lateral offset at start (mm)", 1e3),
                                    (axes[1], "angular_misalignment_deg", "angular misalignment at start (deg)", 1.0)):
        for outcome, st in STYLE.items():
            pts = [(r[xcol], r["closing_speed_mps"]) for r in rows if _category(r) == outcome]
            if pts:
                p = np.array(pts, dtype=float)
                ax.scatter(p[:, 0] * scale, p[:, 1] * 1e3, s=14, label=f"{outcome.replace('_', ' ')} ({len(pts)})",
                           **st)
        over = [(r[xcol], r["closing_speed_mps"]) for r in rows if max_ratio(r, s.limits) > 1.0
                and r.get(xcol) is not None]
        if over:
            p = np.array(over, dtype=float)
            ax.scatter(p[:, 0] * scale, p[:, 1] * 1e3, s=90, facecolors="none", edgecolors=OVER, linewidths=1.6,
                       label=f"over a load limit ({len(over)})", zorder=5)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("closing speed at start (mm/s)")
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
    """Histograms of the peak loads of the runs that did not fail, each against its limit, in
    the units the summary's text gives them (mm, mm/s: the axis, the limit's label and the
    worst-samples tables read alike); the bars past a limit red, the counts whole samples."""
    fig = Figure(figsize=PAGE)
    axes = fig.subplots(2, 2, gridspec_kw=dict(hspace=0.42, wspace=0.22)).ravel()
    for ax, (col, lkey, _si) in zip(axes, LOADS):
        unit, scale = NUM.DISPLAY[LOAD_UNITS[col]][:2]
        v = scale * np.array([r[col] for r in rows if r[col] is not None and r["outcome"] != "failure"], dtype=float)
        v = v[np.isfinite(v)]
        L = s.limits.get(lkey)
        L = scale * L if L else L
        if v.size:
            lo, hi = float(v.min()), float(max(v.max(), L or v.max()))
            edges = np.linspace(lo, hi if hi > lo else lo + 1.0, min(40, max(5, v.size // 4)) + 1)
            if L and L < v.max():       # a bin edge on the limit: a bar is wholly under or over it
                k = int(np.searchsorted(edges, L))
                edges = np.unique(np.concatenate([edges[:k], [L], edges[k:]]))
            counts, edges, patches = ax.hist(v, bins=edges, color="tab:blue", alpha=0.8)
            for c, a, p in zip(counts, edges[:-1], patches):
                if L and a >= L and c > 0:
                    p.set_facecolor(OVER)
                    p.set_alpha(1.0)
        n_over = int((v > L).sum()) if (L and v.size) else 0
        if L:
            limit = NUM.quantity(L / scale, LOAD_UNITS[col])
            ax.axvline(L, color=OVER, lw=1.4, ls="--",
                       label=f"limit {limit}: {n_over} over" if n_over else f"limit {limit}: none over")
            ax.legend(fontsize=8)
        ax.set_xlabel(f"peak {LOAD_NAMES[col]} ({unit})")
        ax.set_ylabel("samples")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))      # counts are whole samples
        ax.grid(True, lw=0.3)
        if n_over:
            ax.set_title(f"{n_over} sample{'s' if n_over != 1 else ''} OVER THE LIMIT", color=OVER, weight="bold",
                         fontsize=10)
    fig.suptitle(f"{s.name}: peak loads of the runs that did not fail (bars past a limit in red)")
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


WORST_ROWS = 28        # samples per page of the worst-samples tables

#: a campaign parameter's unit suffix -> (unit shown, factor from the parameter's unit, decimals):
#: the sampled inputs' table in the units the rest of the summary reads (mm, mm/s, ms)
INPUT_UNITS = {"_mps": ("mm/s", 1e3, 2), "_dps": ("deg/s", 1.0, 4), "_deg": ("deg", 1.0, 3), "_m": ("mm", 1e3, 1),
               "_scale": ("factor", 1.0, 4), "_s": ("ms", 1e3, 3)}


def input_column(name: str, width: int = 10) -> tuple[str, str, float, int]:
    """A sampled parameter as a table column: its header (the name's words wrapped to
    ``width`` characters, a longer word hyphenated, then the unit in brackets) and the unit,
    factor and decimals its values are written in; a name without a known unit suffix as it is."""
    base, (unit, k, d) = name, ("", 1.0, 4)
    for suffix, shown in INPUT_UNITS.items():
        if name.endswith(suffix):
            base, (unit, k, d) = name[: -len(suffix)], shown
            break
    words = []
    for w in base.split("_"):
        words += [w[: len(w) - 4] + "-", w[len(w) - 4:]] if len(w) > width else [w]
    lines: list[str] = []
    for w in words:            # greedy, a hyphenated word's first part ending its line
        if lines and not lines[-1].endswith("-") and len(lines[-1]) + 1 + len(w) <= width:
            lines[-1] += " " + w
        else:
            lines.append(w)
    return "\n".join(lines) + (f"\n({unit})" if unit else ""), unit, k, d


def _table(fig, rect, header, rows, widths, red=(), fontsize=7.5):
    """A matplotlib table in ``rect`` of ``fig``; cells ``(row, col)`` in ``red`` bold red."""
    ax = fig.add_axes(rect)
    ax.axis("off")
    tab = ax.table(cellText=rows, colLabels=header, loc="upper left", cellLoc="right", colWidths=widths)
    tab.auto_set_font_size(False)
    tab.set_fontsize(fontsize)
    for (r, c), cell in tab.get_celld().items():
        cell.set_linewidth(0.3)
        cell.PAD = 0.03
        if r == 0:
            cell.set_text_props(weight="bold")
            cell.set_facecolor("0.92")
            cell.set_height(cell.get_height() * (0.9 + 0.9 * max(str(h).count("\n") + 1 for h in header)))
        elif (r - 1, c) in red:
            cell.set_text_props(color=OVER, weight="bold")
    return tab


def worst_page(s: Summary) -> list[Figure]:
    """The worst samples in the summary's order (every one over a load limit first), as tables a
    reviewer reads down: one row per sample with its outcome, each load with its ratio to the
    limit (red where over), its start and how it ended; then one row per sample with its
    sampled inputs. As many pages as they need."""
    rows = s.worst
    if not rows:
        fig = Figure(figsize=PAGE)
        fig.suptitle(f"{s.name}: worst samples")
        fig.text(0.03, 0.9, "no samples", fontsize=10, va="top")
        return [fig]
    pages: list[Figure] = []
    cols = [c for c, _, _ in LOADS if any(r.get(c) is not None for r in rows)]
    for p0 in range(0, len(rows), WORST_ROWS):
        chunk = rows[p0:p0 + WORST_ROWS]
        fig = Figure(figsize=PAGE)
        fig.suptitle(f"{s.name}: worst samples ({p0 + 1}–{p0 + len(chunk)} of {len(rows)}) — every one over a load "
                     "limit first (red), then failures, no captures, the highest loads", fontsize=11)
        header = ["sample", "outcome"] + [f"{LOAD_NAMES[c]}\n(value, × limit)" for c in cols] + \
            ["lateral\noffset", "misalign-\nment", "closing\nspeed", "end"]
        body, red = [], set()
        for i, r in enumerate(chunk):
            ratios = load_ratios(r, s.limits) if r["outcome"] != "failure" else {}
            line = [str(r["sample"]), r["outcome"].replace("_", " ")]
            for j, c in enumerate(cols):
                v = r.get(c)
                if v is None:
                    line.append("—")
                    continue
                text = NUM.quantity(v, LOAD_UNITS[c])
                if c in ratios:
                    text += f"  {NUM.ratio(ratios[c])}"
                    if ratios[c] > 1.0:
                        red.add((i, 2 + j))
                line.append(text)
            if any(x > 1.0 for x in ratios.values()):
                red.update({(i, 0), (i, 1)})
            line += [NUM.quantity(r.get("lateral_offset_m"), "m"), NUM.quantity(r.get("angular_misalignment_deg"), "deg"),
                     NUM.quantity(r.get("closing_speed_mps"), "m/s"),
                     (r.get("end_reason") or "") + (f" {r['t_end_s']:.2f} s" if r.get("t_end_s") is not None else "")]
            body.append(line)
        _table(fig, (0.02, 0.03, 0.96, 0.88), header, body,
               [0.05, 0.08] + [0.115] * len(cols) + [0.075, 0.075, 0.085, 0.14], red)
        pages.append(fig)
    skip = {"sample", "worker", "cpu_s", "outcome", "reason", "end_reason", "t_end_s", "lateral_offset_m",
            "angular_misalignment_deg", "closing_speed_mps", "capture_time_s", "first_contact_s",
            "energy_absorbed_j", "max_penetration_m", "min_stroke_margin_m", *LOAD_NAMES}
    names = [k for k in rows[0] if k not in skip and isinstance(rows[0].get(k), float)]
    if names:
        for p0 in range(0, len(rows), WORST_ROWS):
            chunk = rows[p0:p0 + WORST_ROWS]
            fig = Figure(figsize=PAGE)
            fig.suptitle(f"{s.name}: the worst samples' sampled inputs ({p0 + 1}–{p0 + len(chunk)} of {len(rows)}), "
                         "in the order of the table before", fontsize=11)
            cols = [input_column(n) for n in names]
            header = ["sample"] + [c[0] for c in cols]
            body = [[str(r["sample"])] + [f"{r[n] * k:.{d}f}" if isinstance(r.get(n), float) else "—"
                                          for n, (_, _, k, d) in zip(names, cols)] for r in chunk]
            red = {(i, 0) for i, r in enumerate(chunk) if max_ratio(r, s.limits) > 1.0}
            _table(fig, (0.02, 0.03, 0.96, 0.88), header, body, [0.05] + [0.93 / len(names)] * len(names), red,
                   fontsize=6.8 if len(names) > 12 else 7.5)
            pages.append(fig)
    reasons = [r for r in rows if r.get("reason") and r["outcome"] == "failure"]
    if reasons:           # a failure's reason is a sentence (a no capture's is its end column)
        fig = Figure(figsize=PAGE)
        fig.suptitle(f"{s.name}: why the worst samples that failed ended so", fontsize=11)
        y = 0.92
        for r in reasons:
            for ln in textwrap.wrap(f"sample {r['sample']} ({r['outcome'].replace('_', ' ')}): {r['reason']}", 150):
                fig.text(0.03, y, ln, fontsize=8, family="monospace", va="top")
                y -= 0.024
            if y < 0.05:
                break
        pages.append(fig)
    return pages


def write_pdf(store: ResultStore, s: Summary, path) -> None:
    rows = store.read().to_pylist()
    with PdfPages(path) as pdf:
        pages = [summary_page(s), envelope_page(rows, s), loads_page(rows, s)]
        if rows and "stand_delay_s" in rows[0]:
            pages.append(delay_page(rows, s))
        for fig in pages + worst_page(s):
            pdf.savefig(fig)


__all__ = ["write_pdf", "summary_page", "envelope_page", "loads_page", "delay_page", "worst_page"]
