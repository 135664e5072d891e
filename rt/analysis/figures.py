"""The report's figures (matplotlib, no display): one function per page, each returning a
``matplotlib.figure.Figure`` drawn from a :class:`rt.analysis.report.Report`. Not real-time.

How a page reads (the same on every time plot):

* the run is drawn thin and dark; the reference (when there is one) wide and pale in the same
  colour *under* it, so that where the two agree the reference shows as a halo around the run,
  never hidden by it;
* the time after the reference's end (a digital reference ends when its capture settles; the
  run may go on) is shaded grey and says so: those loads have no reference;
* events are dotted vertical lines through every axes and are named in a strip above the
  plots, horizontally, in as many rows as they need so that no two labels overlap: the run's
  in black, the reference's in green, each with its time; events closer than a reader can tell
  apart share one label (:func:`event_groups`); the events page lists every one.

Numbers are written by :mod:`rt.analysis.numbers` (the same formats as ``compare``).
"""
from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from rt.analysis import numbers as N
from rt.analysis.fidelity import check_figure
from rt.analysis.report import Report, Series

PAGE = (11.69, 8.27)        # A4 landscape, inches
AXES3 = ("x", "y", "z")
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
RUN_STYLE = dict(lw=0.9, alpha=1.0, zorder=3)
REF_STYLE = dict(lw=3.4, alpha=0.33, zorder=2, solid_capstyle="butt")
RUN_EVENT, REF_EVENT = "0.15", "darkgreen"
NO_REF_SHADE = "0.88"
OVER = "#b00000"            # anything over a limit
FIDELITY_COLOURS = {"PASS": "#1a7f37", "WARN": "#b07000", "FAIL": OVER}   # the fidelity verdict's status

LABEL_GAP = 0.015           # events closer than this share of the time axis share one label
LABEL_CHARS = 56            # a longer group label is shortened (event_groups)
LABEL_FONT = 7.5            # points
STRIP_ROW_IN = 0.17         # height of one row of event labels (inches)


def event_groups(events, gap_s: float) -> list[tuple[float, str]]:
    """Events ``(t, name)`` in time order, grouped where each is within ``gap_s`` of the one
    before; one label per group at its first time: the names in order of appearance, a
    repeated one counted (``latch_deflected ×3, sensor_triggered``), or, where that is longer
    than :data:`LABEL_CHARS`, the first name and how many more (the report's events page lists
    them all)."""
    groups: list[list] = []
    for t, what in sorted(events, key=lambda e: e[0]):
        if groups and t - groups[-1][2] <= gap_s:
            groups[-1][1].append(what)
            groups[-1][2] = t
        else:
            groups.append([t, [what], t])
    out = []
    for t0, names, _ in groups:
        counts: dict[str, int] = {}
        for n in names:
            counts[n] = counts.get(n, 0) + 1
        text = ", ".join(n if c == 1 else f"{n} ×{c}" for n, c in counts.items())
        if len(text) > LABEL_CHARS:
            text = f"{names[0]} +{len(names) - 1} more"
        out.append((t0, text))
    return out


def place_labels(groups, x0: float, x1: float, axes_width_in: float, fontsize: float = LABEL_FONT
                 ) -> list[tuple[float, str, int, str]]:
    """Rows for horizontal labels ``(t, text)`` over a time axis ``[x0, x1]`` drawn
    ``axes_width_in`` inches wide, so that no two labels in a row overlap: each label goes to
    the first row where it fits after the last label there (a label that would run past the
    right edge is right-aligned on its time). Returns ``(t, text, row, ha)``; the text's width
    is estimated from its length (0.55 em per character)."""
    span = max(x1 - x0, 1e-12)
    per_char = 0.55 * fontsize / 72.0 / axes_width_in * span
    pad = 1.5 * per_char
    rows: list[float] = []            # the right end of the last label in each row
    out = []
    for t, text in groups:
        w = (len(text) + 1) * per_char
        ha, a, b = ("left", t, t + w) if t + w <= x1 else ("right", t - w, t)
        row = next((i for i, end in enumerate(rows) if a >= end + pad), None)
        if row is None:
            rows.append(b)
            row = len(rows) - 1
        else:
            rows[row] = b
        out.append((t, text, row, ha))
    return out


class _Events:
    """The events of a page: the label rows of the run and of the reference, laid out once for
    the page's time span and axes width."""

    def __init__(self, rep: Report, axes_width_in: float):
        s, r = rep.series, rep.reference
        ts = [a for a in (s.t[:1], s.t[-1:], *((r.t[:1], r.t[-1:]) if r is not None else ())) if len(a)]
        self.x0 = float(min(a[0] for a in ts)) if ts else 0.0
        self.x1 = float(max(a[0] for a in ts)) if ts else 1.0
        gap = LABEL_GAP * (self.x1 - self.x0)
        self.sources = []
        for series, color in ((s, RUN_EVENT), (r, REF_EVENT)):
            if series is None or not series.events:
                continue
            groups = [(t, f"{text} {t:.3f} s") for t, text in event_groups(series.events, gap)]
            placed = place_labels(groups, self.x0, self.x1, axes_width_in)
            self.sources.append((series, color, placed, 1 + max(p[2] for p in placed)))
        self.rows = sum(n for *_, n in self.sources)

    def strip(self, ax) -> None:
        """Draw the labels into the strip axes ``ax`` (shares x with the plots below)."""
        ax.set_ylim(0, max(1, self.rows))
        ax.set_yticks([])
        ax.tick_params(axis="x", labelbottom=False, length=0)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
        top = self.rows
        for series, color, placed, n in self.sources:
            for t, text, row, ha in placed:
                y = top - row - 0.5
                ax.vlines(t, 0, y, color=color, lw=0.6, ls=":")
                ax.text(t, y, (" " + text) if ha == "left" else (text + " "), ha=ha, va="center",
                        fontsize=LABEL_FONT, color=color, clip_on=False)
            top -= n
        names = "events: run" + (" (black) · reference (green)" if len(self.sources) > 1 and
                                 self.sources[1][0].label == "reference" else "")
        if self.sources and self.sources[0][0].label == "reference":
            names = "events: reference (green)"
        ax.set_title(names, fontsize=8, loc="left", color="0.3")

    def lines(self, ax) -> None:
        """Each event as a dotted vertical line through the plot ``ax``."""
        for series, color, _, _ in self.sources:
            for t, _ in series.events:
                ax.axvline(t, color=color, lw=0.6, ls=":", alpha=0.8, zorder=1)


def _time_page(rep: Report, title: str, nrows: int, ncols: int, axes_width_in: float,
               height_ratios=None, with_reference: bool = True):
    """A page of time plots under an events strip (one per column): ``(fig, events, axes)``
    with ``axes`` an (nrows, ncols) array, all sharing the time axis. ``with_reference``:
    the page overlays the reference (its events, its span); else the run's alone."""
    if not with_reference and rep.reference is not None:
        from dataclasses import replace
        rep = replace(rep, reference=None)
    ev = _Events(rep, axes_width_in)
    fig = Figure(figsize=PAGE, layout="constrained")
    data_h = (PAGE[1] - 1.0) / nrows
    strip_h = max(0.25, STRIP_ROW_IN * ev.rows + 0.2)
    gs = fig.add_gridspec(nrows + 1, ncols, height_ratios=[strip_h, *(height_ratios or [data_h] * nrows)])
    axes = np.empty((nrows, ncols), dtype=object)
    first = None
    for c in range(ncols):
        for r in range(nrows):
            axes[r, c] = fig.add_subplot(gs[r + 1, c], sharex=first)
            first = first or axes[r, c]
        strip = fig.add_subplot(gs[0, c], sharex=first)
        ev.strip(strip)
    for a in axes.flat:
        ev.lines(a)
        a.grid(True, lw=0.3)
        a.set_xlim(ev.x0 - 0.01 * (ev.x1 - ev.x0), ev.x1 + 0.01 * (ev.x1 - ev.x0))
        _no_reference(a, rep)
    for a in axes[:-1].flat:
        a.tick_params(labelbottom=False)
    for a in axes[-1]:
        a.set_xlabel("time since the case's initial state (s)")
    if rep.reference is not None:
        ref_end = rep.reference.end_s
        if ref_end is not None and rep.series.end_s is not None and ref_end < rep.series.end_s - 1e-9:
            for a in axes[0]:
                a.text(ref_end, 0.02, f" no reference after {ref_end:.3f} s (it ended: {rep.reference.end}) ",
                       transform=a.get_xaxis_transform(), ha="left", va="bottom", fontsize=8, style="italic",
                       color="0.25", zorder=5)
        title += " — run: thin lines; reference: wide pale lines under them"
    fig.suptitle(title)
    return fig, ev, axes


def _no_reference(ax, rep: Report) -> None:
    """Shade the time the run has and the reference has not (after the reference's end)."""
    if rep.reference is None or rep.reference.end_s is None or rep.series.end_s is None:
        return
    if rep.reference.end_s < rep.series.end_s - 1e-9:
        ax.axvspan(rep.reference.end_s, rep.series.end_s, color=NO_REF_SHADE, zorder=0, lw=0)


def _plot(ax, rep: Report, field: str, cols, scale=1.0, labels=None, transform=None) -> None:
    """The run's columns ``cols`` of ``field`` (thin) over the reference's (wide, pale)."""
    for s, style in ((rep.reference, REF_STYLE), (rep.series, RUN_STYLE)):
        if s is None or field not in s.data:
            continue
        d = s.data[field] if transform is None else transform(s.data[field])
        for k, j in enumerate(cols):
            ax.plot(s.t, d[:, j] * scale, "-", color=COLORS[k % len(COLORS)], **style)
    _legend(ax, labels or [str(j) for j in cols], rep.reference is not None)


def _legend(ax, names, with_reference: bool, loc="upper right") -> None:
    handles = [Line2D([], [], color=COLORS[k % len(COLORS)], lw=1.6, label=n) for k, n in enumerate(names)]
    if with_reference:
        handles += [Line2D([], [], color="0.2", **{**RUN_STYLE, "zorder": 0}, label="run"),
                    Line2D([], [], color="0.2", **{**REF_STYLE, "zorder": 0}, label="reference")]
    ax.legend(handles=handles, fontsize=7, ncol=len(handles), loc=loc, framealpha=0.85)


def _rotvec_deg(q):
    q = q / np.linalg.norm(q, axis=1)[:, None]
    q = q * np.sign(q[:, :1] + (q[:, :1] == 0))
    s = np.linalg.norm(q[:, 1:4], axis=1)
    ang = 2.0 * np.arctan2(s, q[:, 0])
    k = np.where(s > 1e-12, ang / np.where(s > 1e-12, s, 1.0), 2.0)
    return np.degrees(q[:, 1:4] * k[:, None])


# ---------------------------------------------------------------------- page 1
def limit_rows(rep: Report) -> list[tuple[str, str, bool]]:
    """The stand's limits the run came nearest: ``(what, peak against the limit, over)``."""
    out = []
    for u in rep.limits:
        when = f" at t = {u.t_s:.3f} s" if u.t_s is not None else ""
        text = f"{N.quantity(u.peak, u.unit)} of {N.quantity(u.limit, u.unit)} = {N.percent(100.0 * u.used)}{when}"
        out.append((u.what, ("OVER THE LIMIT: " if u.over else "") + text, u.over))
    return out


BOTTOM = 0.03           # page 1's lowest baseline (figure fraction): below it the text continues on a new page


class _Flow:
    """Page 1's lines laid down from the top, continued on a page of its own when the next block
    does not fit above :data:`BOTTOM` (a banner and an over-limit note pushed the fidelity checks
    off a single page)."""

    def __init__(self, title: str):
        self.title = title
        self.pages: list[Figure] = []
        self.y = 0.0
        self.new_page()

    @property
    def fig(self) -> Figure:
        return self.pages[-1]

    def new_page(self) -> None:
        fig = Figure(figsize=PAGE)
        if self.pages:
            fig.text(0.05, 0.94, f"{self.title} (page 1, continued)", fontsize=14, weight="bold")
        self.pages.append(fig)
        self.y = 0.88

    def need(self, h: float = 0.0) -> None:
        """Room for a line at the current baseline and ``h`` (figure fraction) more below it,
        else a new page."""
        if self.y - h < BOTTOM:
            self.new_page()


def title_pages(rep: Report) -> list[Figure]:
    """Page 1 -- the verdicts first (a limit passed, a trip, the fidelity verdict), the run's
    identity, the limits it came nearest, the energy audit, the notes, the fidelity checks --
    on as many pages as it needs."""
    title = f"dockstand run report — {rep.run.case_name}"
    flow = _Flow(title)
    fig = flow.fig
    fig.text(0.05, 0.94, title, fontsize=18, weight="bold")
    over = [u for u in rep.limits if u.over]
    tripped = rep.run.verdict.startswith("tripped")
    if over or tripped:
        what = "; ".join(dict.fromkeys(u.what.split(":")[0] for u in over))
        banner = ("OVER A LIMIT: " + what if over else "") + (" — " if over and tripped else "") + \
            (f"THE RUN TRIPPED: {rep.run.verdict.split(': ', 1)[-1]}" if tripped else "")
        fig.text(0.05, 0.895, " " + banner + " ", fontsize=13, weight="bold", color="white",
                 bbox=dict(boxstyle="square,pad=0.3", fc=OVER, ec="none"))
    flow.y = 0.85
    if rep.fidelity is not None:        # the run's fidelity verdict: its status in its colour, the reason beside
        yf = 0.905 if not (over or tripped) else 0.855
        st = rep.fidelity.get("status")
        fig.text(0.05, yf, f" fidelity {st} ", fontsize=12, weight="bold", color="white", va="top",
                 bbox=dict(boxstyle="square,pad=0.3", fc=FIDELITY_COLOURS.get(st, "#b07000"), ec="none"))
        lines = textwrap.wrap(str(rep.fidelity.get("reason", "")), 125)[:3]
        for k, line in enumerate(lines):
            fig.text(0.19, yf - 0.001 - 0.021 * k, line, fontsize=9, va="top",
                     color=FIDELITY_COLOURS.get(st, "black") if st != "PASS" else "black")
        flow.y = min(flow.y, yf - 0.021 * max(1, len(lines)) - 0.03)

    def row(k, v, step, kw_k=None, kw_v=None, x_v=0.45):
        flow.need()
        flow.fig.text(0.06, flow.y, k, fontsize=9, **(kw_k or {}))
        flow.fig.text(x_v, flow.y, v, fontsize=9, **(kw_v or {}))
        flow.y -= step

    def heading(text):              # kept with the first line under it
        flow.y -= 0.012
        flow.need(0.032)
        flow.fig.text(0.06, flow.y, text, fontsize=11, weight="bold")
        flow.y -= 0.032

    for k, v in rep.identity:
        row(k, v, 0.024, dict(weight="bold"),
            dict(family="monospace", color=OVER if k == "verdict" and tripped else "black"), x_v=0.24)
    rows = limit_rows(rep)
    if rows:
        heading("limits: the nearest the run came (over the dynamics)")
        for k, v, bad in rows:
            style = dict(color=OVER if bad else "black", weight="bold" if bad else "normal")
            row(k, v, 0.025, style, dict(family="monospace", **style))
    if rep.energy is not None:
        heading("energy audit")
        for k, v in energy_rows(rep):
            row(k, v, 0.025, {}, dict(family="monospace"))
    for n in rep.notes:
        flow.y -= 0.008
        lines = textwrap.wrap("note: " + n, 150)
        flow.need(0.024 * (len(lines) - 1))          # a note's lines kept together
        for line in lines:
            flow.need()
            flow.fig.text(0.06, flow.y, line, fontsize=8.5, color=OVER if n.startswith("OVER") else "darkred")
            flow.y -= 0.024
    rows = verdict_rows(rep)
    if rows:              # the checks in one line, after the notes (each with its reason: the HTML report)
        b = rep.fidelity.get("bound_pct")
        heading(f"fidelity checks: % of the approach energy, bound ±{b:g} % (docs/validation.md §3.5)")
        for line in textwrap.wrap("  ·  ".join(f"{name} {st} {fig_text}" for name, st, fig_text in rows), 125):
            flow.need()
            flow.fig.text(0.06, flow.y, line, fontsize=9, family="monospace")
            flow.y -= 0.022
    return flow.pages


def title_page(rep: Report) -> Figure:
    """Page 1's first page (:func:`title_pages`): the verdicts, the identity and whatever fits."""
    return title_pages(rep)[0]


def verdict_rows(rep: Report) -> list[tuple[str, str, str]]:
    """The fidelity verdict's checks for page 1: ``(name, status, "figure")``, the bound said
    with a figure only where it is not the energy bound in % (which the heading gives)."""
    v = rep.fidelity
    if not v:
        return []
    out = []
    b = v.get("bound_pct")
    for c in v.get("checks") or []:
        unit = c.get("unit") or ""
        fig = check_figure(c)
        if c.get("bound") is not None and not (unit == "%" and c["bound"] == b):
            fig += f" (bound {c['bound']:g} {unit})".rstrip()
        out.append((str(c.get("name")), str(c.get("status")), fig))
    return out


def energy_rows(rep: Report) -> list[tuple[str, str]]:
    e = rep.energy
    if e is None:
        return []

    def j(v):
        return N.quantity(v, "J")
    rows = [("approach kinetic energy", j(e.approach_j)),
            ("net work taken from the vehicles (simulated motion)", j(e.vehicles_j)),
            ("net work done on the mechanism (measured motion)", j(e.mechanism_j)),
            ("injected by the stand loop (the difference)", N.quantity(e.stand_injected_j, "J", sign=True)
             + (f"  ({N.percent(e.injected_pct_of_approach, sign=True)} of the approach)"
                if e.injected_pct_of_approach is not None else ""))]
    if e.logged_absorbed_j is not None:
        rows.append(("dissipated by the mechanism's dampers and brakes (the model's own figure)",
                     j(e.logged_absorbed_j)))
    return rows


# ---------------------------------------------------------------------- time plots
def wrench_page(rep: Report) -> Figure:
    fig, ev, ax = _time_page(rep, "Contact wrench on the passive unit (P frame)", 2, 1, PAGE[0] - 1.2)
    _plot(ax[0, 0], rep, "w_P", (0, 1, 2), labels=("fx", "fy", "fz"))
    ax[0, 0].set_ylabel("force on P (N)")
    _plot(ax[1, 0], rep, "w_P", (3, 4, 5), labels=("mx", "my", "mz"))
    ax[1, 0].set_ylabel("moment on P about P (N·m)")
    return fig


def relative_page(rep: Report) -> Figure:
    fig, ev, ax = _time_page(rep, "Relative motion of the active unit A in P", 2, 2, PAGE[0] / 2 - 1.0)
    _plot(ax[0, 0], rep, "rel_pose", (0, 1, 2), labels=AXES3, scale=1e3)
    ax[0, 0].set_ylabel("position r_PA (mm)")
    _plot(ax[0, 1], rep, "rel_pose", (0, 1, 2), labels=AXES3, transform=lambda p: _rotvec_deg(p[:, 3:7]))
    ax[0, 1].set_ylabel("attitude of A in P, rotation vector (deg)")
    _plot(ax[1, 0], rep, "rel_twist", (0, 1, 2), labels=AXES3, scale=1e3)
    ax[1, 0].set_ylabel("relative velocity (mm/s)")
    _plot(ax[1, 1], rep, "rel_twist", (3, 4, 5), labels=AXES3, scale=np.degrees(1.0))
    ax[1, 1].set_ylabel("relative angular rate (deg/s)")
    return fig


def platform_page(rep: Report) -> Figure | None:
    """The platform top's commanded (thin) and measured (wide, pale) position, one axes per
    coordinate on its own scale (x and y move millimetres where z moves decimetres), their
    distance, and the legs against their travel."""
    s = rep.series
    if "cmd_pose" not in s.data or "meas_pose" not in s.data:
        return None
    fig, ev, ax = _time_page(rep, "Motion platform: commanded (thin) and measured (wide, pale)", 3, 2,
                             PAGE[0] / 2 - 1.0, with_reference=False)
    c, m = s.data["cmd_pose"], s.data["meas_pose"]
    for k in range(3):
        a = ax[k, 0]
        a.plot(s.t, m[:, k] * 1e3, "-", color=COLORS[k], **REF_STYLE)
        a.plot(s.t, c[:, k] * 1e3, "-", color=COLORS[k], **RUN_STYLE)
        a.set_ylabel(f"top {AXES3[k]} in B (mm)")
    ax[0, 0].legend(handles=[Line2D([], [], color="0.2", **{**RUN_STYLE, "zorder": 0}, label="commanded"),
                             Line2D([], [], color="0.2", **{**REF_STYLE, "zorder": 0}, label="measured")],
                    fontsize=7, ncol=2, loc="upper left")
    err = np.linalg.norm(m[:, :3] - c[:, :3], axis=1) * 1e3
    ax[0, 1].plot(s.t, err, color="k", lw=0.8)
    ax[0, 1].set_ylabel("|measured − commanded| (mm)")
    ax[0, 1].set_ylim(bottom=0.0)
    gs = ax[1, 1].get_subplotspec().get_gridspec()
    ax[1, 1].remove()
    ax[2, 1].remove()
    legs = fig.add_subplot(gs[2:4, 1], sharex=ax[0, 0])
    legs.grid(True, lw=0.3)
    ev.lines(legs)
    if "meas_lengths" in s.data:
        for k in range(6):
            legs.plot(s.t, s.data["meas_lengths"][:, k], color=COLORS[k], **REF_STYLE)
    if "cmd_lengths" in s.data:
        for k in range(6):
            legs.plot(s.t, s.data["cmd_lengths"][:, k], color=COLORS[k], **RUN_STYLE, label=f"leg {k + 1}")
    legs.set_ylabel("leg length (m): commanded thin, measured wide")
    legs.set_xlabel("time since the case's initial state (s)")
    if rep.leg_limits is not None:
        for v, name in zip(rep.leg_limits, ("length_min", "length_max")):
            legs.axhline(v, color=OVER, lw=1.0, ls="--")
            legs.text(0.005, v, f" {name} {v:g} m ", transform=legs.get_yaxis_transform(), color=OVER, fontsize=7,
                      va="center", bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none"))
        lo, hi = rep.leg_limits
        pad = 0.05 * (hi - lo)
        legs.set_ylim(min(lo - pad, legs.get_ylim()[0]), max(hi + pad, legs.get_ylim()[1]))
    legs.legend(fontsize=7, ncol=6, loc="lower right", bbox_to_anchor=(1.0, 0.06))
    return fig


def timing_page(rep: Report) -> Figure | None:
    tm = rep.timing
    if tm is None or not len(tm["work_us"]):
        return None
    fig = Figure(figsize=PAGE, layout="constrained")
    if not np.any(tm["work_us"]) and not np.any(tm["lateness_us"]):
        fig.suptitle("Loop timing over the dynamics")
        why = ("a lockstep run: the emulator's frames set the loop's pace, and the cycle's work and wake-up "
               "are not timed" if rep.run.header.get("lockstep") else "the log's timing record is all zero")
        fig.text(0.05, 0.8, f"Not measured — {why}.", fontsize=12, wrap=True)
        fig.text(0.05, 0.74, "The loop's timing on the wall clock: dockstand run on the stand, or "
                 "dockstand bench --only controller.", fontsize=10)
        return fig
    a1, a2 = fig.subplots(1, 2)
    a1.hist(tm["work_us"], bins=100, color="tab:blue", log=True)
    a1.set_xlabel("cycle work: read + update + write (µs)")
    a1.set_ylabel("cycles")
    a1.set_title(f"p50 {tm['work_us_p50']:.1f} µs, p99 {tm['work_us_p99']:.1f} µs")
    a2.hist(tm["lateness_us"], bins=100, color="tab:orange", log=True)
    a2.set_xlabel("wake-up lateness (µs)")
    missed = tm["missed"]
    a2.set_title(f"p99 {tm['lateness_us_p99']:.1f} µs, max {tm['lateness_us_max']:.1f} µs, "
                 f"missed deadlines {missed}", color=OVER if missed else "black")
    fig.suptitle("Loop timing over the dynamics")
    return fig


def energy_page(rep: Report) -> Figure | None:
    """The energy audit over time. The contact's work on the vehicles is a *net* figure: it
    rises while the mechanism slows them and falls where its springs push them apart again
    (stored, then given back), so it is named so; only a dissipated energy (a digital run's own
    dampers and brakes, ``energy_absorbed``) can only rise and is drawn as such. The loop's
    injection, a few hundredths of the approach, has an axes of its own."""
    e = rep.energy
    if e is None:
        return None
    fig = Figure(figsize=PAGE, layout="constrained")
    a1, a2 = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    k = slice(None, None, max(1, -(-len(e.t) // 20000)))
    a1.plot(e.t[k], e.vehicles_cum_j[k], color="tab:blue", lw=4.0, alpha=0.35,
            label="net work the contact took from the vehicles (simulated motion)")
    if e.mechanism_cum_j is not None:
        a1.plot(e.t[k], e.mechanism_cum_j[k], color="tab:red", lw=1.0,
                label="net work the contact did on the mechanism (measured platform motion)")
    for s, name in ((rep.series, "this run's"), (rep.reference, "the reference's")):
        if s is not None and "energy_absorbed" in s.data and len(s.data["energy_absorbed"]):
            d = np.asarray(s.data["energy_absorbed"]).ravel()
            a1.plot(s.t, d - d[0], color="tab:green", lw=1.0, ls="-" if s is rep.series else "--",
                    label=f"dissipated by {name} dampers and brakes (its model's own figure)")
    if e.approach_j is not None:
        a1.axhline(e.approach_j, color="0.3", ls="--", lw=0.8, label=f"approach kinetic energy {N.quantity(e.approach_j, 'J')}")
    a1.set_ylabel("energy (J)")
    a1.grid(True, lw=0.3)
    a1.legend(fontsize=8, loc="center right")
    a1.text(0.01, 0.80, "The net work rises while the mechanism slows the vehicles and falls where its springs give "
            "energy back;\nthe two net-work curves agree where the stand follows the simulation (the red line over "
            "the wide blue one).", transform=a1.transAxes, va="top", fontsize=8, color="0.25")
    if e.mechanism_cum_j is not None:
        inj = e.mechanism_cum_j - e.vehicles_cum_j
        a2.plot(e.t[k], inj[k], color="tab:purple", lw=1.0)
        a2.axhline(0.0, color="0.4", lw=0.6)
        a2.set_ylabel("injected by the loop (J)")
        pct = e.injected_pct_of_approach
        a2.set_title("energy the stand's loop injected (mechanism − vehicles): "
                     f"{N.quantity(e.stand_injected_j, 'J', sign=True)} at the end"
                     + (f", {N.percent(pct, sign=True)} of the approach" if pct is not None else ""), fontsize=9)
    else:
        a2.text(0.02, 0.5, "no measured platform motion: the loop's share cannot be told", transform=a2.transAxes)
    a2.grid(True, lw=0.3)
    a2.set_xlabel("time since the case's initial state (s)")
    fig.suptitle("Energy audit: the contact's net work (stored in the mechanism's springs + dissipated)")
    return fig


# ---------------------------------------------------------------------- tables
def _table_page(title: str, header, rows, col_widths, subtitle: str = "", rows_per_page: int = 40) -> list[Figure]:
    pages = []
    for p0 in range(0, max(1, len(rows)), rows_per_page):
        fig = Figure(figsize=PAGE)
        fig.text(0.05, 0.94, title + (f" ({p0 // rows_per_page + 1})" if len(rows) > rows_per_page else ""),
                 fontsize=16, weight="bold")
        top = 0.90
        if subtitle:
            fig.text(0.05, top, subtitle, fontsize=8.5, va="top", color="0.2")
            top -= 0.022 * (subtitle.count("\n") + 1) + 0.015
        ax = fig.add_axes((0.05, 0.03, 0.9, top - 0.03))
        ax.axis("off")
        chunk = rows[p0:p0 + rows_per_page] or [["—"] * len(header)]
        tab = ax.table(cellText=chunk, colLabels=header, loc="upper left", cellLoc="left", colWidths=col_widths)
        tab.auto_set_font_size(False)
        tab.set_fontsize(8.5)
        for (r, _c), cell in tab.get_celld().items():
            cell.set_linewidth(0.3)
            cell.PAD = 0.01
            if r == 0:
                cell.set_text_props(weight="bold")
                cell.set_facecolor("0.92")
        pages.append(fig)
    return pages


def events_rows(rep: Report) -> list[list[str]]:
    return [["—" if t is None else f"{t:.3f}", src, kind, textwrap.shorten(detail, 110, placeholder=" …")]
            for t, src, kind, detail in rep.event_table]


def events_page(rep: Report) -> list[Figure]:
    """Every event of the run (and of the reference): time, source, kind, what it carries."""
    if not rep.event_table:
        return []
    return _table_page("Events", ["t (s)", "source", "event", "detail"], events_rows(rep), [0.07, 0.08, 0.17, 0.68],
                       "t: run time, s since the case's initial state (— : no run time: before the run, or "
                       "written once the log was complete)")


def fidelity_page(rep: Report) -> Figure | None:
    c = rep.comparison
    if c is None:
        return None
    from rt.analysis.compare import span_note
    sub = (f"reference: {c['digital_log']}\n"
           + textwrap.fill(f"filtering — run: {c['filtering']['run']}; reference: {c['filtering']['reference']}", 150)
           + "\n" + textwrap.fill(span_note(c["fidelity"]), 150))
    for w in c.get("warnings", []):
        sub += "\n" + textwrap.fill(f"warning: {w}", 150)
    return _table_page("Fidelity against the reference", ["quantity", "value"], [list(r) for r in fidelity_rows(c)],
                       [0.40, 0.50], sub)[0]


def fidelity_rows(c: dict) -> list[tuple[str, str]]:
    Q = N.quantity
    fi = c["fidelity"]
    rows = [("peak force: run / reference", f"{Q(c['hil']['peak_force_n'], 'N')} / {Q(c['digital']['peak_force_n'], 'N')}"),
            ("peak force error", f"{Q(c['peak_force_error_n'], 'N', sign=True)} ({N.percent(c['peak_force_error_pct'], sign=True)})")]
    band = c.get("reference_peak_force_band_n")
    if band:
        rows.append(("peak force over the sampling phase",
                     f"reference {Q(band[0], 'N')} .. {Q(band[1], 'N')}, error "
                     f"{N.percent(c['peak_force_error_band_pct'], sign=True)}"))
    sp = fi.get("span_s")
    over = f" over {N.span(*sp)}" if sp else ""
    rows += [("peak moment error", Q(fi["peak_moment_error_nm"], "N*m", sign=True)),
             (f"impulse |∫f dt|{over}: run / reference", f"{Q(fi['impulse_ns'], 'N*s')} / {Q(fi['reference_impulse_ns'], 'N*s')}"),
             ("impulse error |run − reference|", Q(fi["impulse_error_ns"], "N*s")),
             ("first-contact time: run − reference", Q(fi["first_contact_difference_s"], "s", sign=True)),
             ("capture: run / reference", f"{c['hil']['captured']} / {c['digital']['captured']}"),
             ("post-impact velocity error", Q(c["post_impact_velocity_error_mps"], "m/s")),
             ("RMS position / attitude error",
              f"{Q(c['rms_position_error_m'], 'm')} / {Q(c['rms_attitude_error_deg'], 'deg')}")]
    rows += [(f"NRMSE {r['channel']}", ("n/a (flat channel)" if r["nrmse"] is None else N.percent(100.0 * r["nrmse"]))
              + f"  (RMS {Q(r['rms_error'], r['unit'])})") for r in fi["channels"]]
    return rows


PAGES = (wrench_page, relative_page, platform_page, timing_page, energy_page, events_page, fidelity_page)
