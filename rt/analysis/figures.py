"""The report's figures (matplotlib, no display): one function per page, each returning a
``matplotlib.figure.Figure`` drawn from a :class:`rt.analysis.report.Report`. The run is
drawn solid, the reference (when there is one) dashed in the same colour; events are
vertical lines labelled on the first axes (the run's at the top, the reference's at the
bottom, crowded ones sharing a label). Not real-time.
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from rt.analysis.report import Report, Series

PAGE = (11.69, 8.27)        # A4 landscape, inches
AXES3 = ("x", "y", "z")
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


LABEL_GAP = 0.015           # events closer than this share of the time axis share one label
LABEL_CHARS = 32            # a longer group label is shortened (event_groups)


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


def _events(ax, s: Series, label: bool, ref: Series | None = None) -> None:
    """The run's events (grey, labelled at the top) and the reference's (e.g. the digital
    model's latch and capture events, green, labelled at the bottom), as vertical lines;
    events too close to be read apart share one label (:func:`event_groups`)."""
    y0, y1 = ax.get_ylim()
    x0, x1 = ax.get_xlim()
    for series, color, tag, y, va in ((s, "0.2", "", y1, "top"), (ref, "darkgreen", " (ref.)", y0, "bottom")):
        if series is None:
            continue
        for t, what in series.events:
            ax.axvline(t, color=color, lw=0.7, ls=":")
        if label:
            for t, text in event_groups(series.events, LABEL_GAP * (x1 - x0)):
                ax.text(t, y, " " + text + tag + " ", rotation=90, va=va, ha="left", fontsize=7, color=color,
                        bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.7))


def _plot(ax, rep: Report, field: str, cols, scale=1.0, labels=None, transform=None) -> None:
    for s, ls in ((rep.series, "-"), (rep.reference, "--")):
        if s is None or field not in s.data:
            continue
        d = s.data[field] if transform is None else transform(s.data[field])
        for k, j in enumerate(cols):
            name = labels[k] if labels else str(j)
            ax.plot(s.t, d[:, j] * scale, ls, color=COLORS[k % len(COLORS)], lw=0.9,
                    label=f"{name} ({s.label})" if rep.reference is not None else name)
    ax.grid(True, lw=0.3)
    ax.legend(fontsize=7, ncol=3, loc="best")


def _rotvec_deg(q):
    q = q / np.linalg.norm(q, axis=1)[:, None]
    q = q * np.sign(q[:, :1] + (q[:, :1] == 0))
    s = np.linalg.norm(q[:, 1:4], axis=1)
    ang = 2.0 * np.arctan2(s, q[:, 0])
    k = np.where(s > 1e-12, ang / np.where(s > 1e-12, s, 1.0), 2.0)
    return np.degrees(q[:, 1:4] * k[:, None])


def title_page(rep: Report) -> Figure:
    fig = Figure(figsize=PAGE)
    fig.text(0.05, 0.93, f"dockstand run report — {rep.run.case_name}", fontsize=18, weight="bold")
    y = 0.86
    for k, v in rep.identity:
        fig.text(0.06, y, k, fontsize=10, weight="bold")
        fig.text(0.26, y, v, fontsize=10, family="monospace")
        y -= 0.04
    e = rep.energy
    if e is not None:
        y -= 0.02
        fig.text(0.06, y, "energy audit", fontsize=12, weight="bold")
        y -= 0.04
        for k, v in energy_rows(rep):
            fig.text(0.06, y, k, fontsize=10)
            fig.text(0.40, y, v, fontsize=10, family="monospace")
            y -= 0.035
    for n in rep.notes:
        y -= 0.02
        fig.text(0.06, y, "note: " + n, fontsize=9, color="darkred", wrap=True)
        y -= 0.03
    return fig


def energy_rows(rep: Report) -> list[tuple[str, str]]:
    e = rep.energy
    if e is None:
        return []

    def j(v):
        return "n/a" if v is None else f"{v:.4g} J"
    rows = [("approach kinetic energy", j(e.approach_j)),
            ("taken from the vehicles' motion", j(e.vehicles_j)),
            ("absorbed by the mechanism (measured motion)", j(e.mechanism_j)),
            ("injected by the stand loop", j(e.stand_injected_j)
             + (f"  ({e.injected_pct_of_approach:+.2f} % of approach)" if e.injected_pct_of_approach is not None
                else ""))]
    if e.logged_absorbed_j is not None:
        rows.append(("absorbed, the model's own figure", j(e.logged_absorbed_j)))
    return rows


def wrench_page(rep: Report) -> Figure:
    fig = Figure(figsize=PAGE, layout="constrained")
    a1, a2 = fig.subplots(2, 1, sharex=True)
    _plot(a1, rep, "w_P", (0, 1, 2), labels=("fx", "fy", "fz"))
    a1.set_ylabel("force on P (N)")
    _plot(a2, rep, "w_P", (3, 4, 5), labels=("mx", "my", "mz"))
    a2.set_ylabel("moment on P about P (N·m)")
    a2.set_xlabel("time since the case's initial state (s)")
    for a, lab in ((a1, True), (a2, False)):
        _events(a, rep.series, lab, rep.reference)
    fig.suptitle("Contact wrench on the passive unit (P frame)")
    return fig


def relative_page(rep: Report) -> Figure:
    fig = Figure(figsize=PAGE, layout="constrained")
    ax = fig.subplots(2, 2, sharex=True)
    _plot(ax[0, 0], rep, "rel_pose", (0, 1, 2), labels=AXES3)
    ax[0, 0].set_ylabel("r_PA (m)")
    _plot(ax[0, 1], rep, "rel_pose", (0, 1, 2), labels=AXES3, transform=lambda p: _rotvec_deg(p[:, 3:7]))
    ax[0, 1].set_ylabel("attitude of A in P, rotation vector (deg)")
    _plot(ax[1, 0], rep, "rel_twist", (0, 1, 2), labels=AXES3)
    ax[1, 0].set_ylabel("relative velocity (m/s)")
    _plot(ax[1, 1], rep, "rel_twist", (3, 4, 5), labels=AXES3, scale=np.degrees(1.0))
    ax[1, 1].set_ylabel("relative angular rate (deg/s)")
    for a in ax[1]:
        a.set_xlabel("time (s)")
    _events(ax[0, 0], rep.series, True)
    fig.suptitle("Relative motion of the active unit A in P")
    return fig


def platform_page(rep: Report) -> Figure | None:
    s = rep.series
    if "cmd_pose" not in s.data or "meas_pose" not in s.data:
        return None
    fig = Figure(figsize=PAGE, layout="constrained")
    ax = fig.subplots(2, 2, sharex=True)
    c, m = s.data["cmd_pose"], s.data["meas_pose"]
    for k in range(3):
        ax[0, 0].plot(s.t, c[:, k], "-", color=COLORS[k], lw=0.9, label=f"{AXES3[k]} commanded")
        ax[0, 0].plot(s.t, m[:, k], ":", color=COLORS[k], lw=1.2, label=f"{AXES3[k]} measured")
    ax[0, 0].set_ylabel("platform top in B (m)")
    ax[0, 0].legend(fontsize=7, ncol=2)
    err = np.linalg.norm(m[:, :3] - c[:, :3], axis=1) * 1e3
    ax[0, 1].plot(s.t, err, color="k", lw=0.8)
    ax[0, 1].set_ylabel("|measured - commanded| position (mm)")
    if "cmd_lengths" in s.data:
        for k in range(6):
            ax[1, 0].plot(s.t, s.data["cmd_lengths"][:, k], color=COLORS[k], lw=0.8, label=f"leg {k + 1}")
        ax[1, 0].set_ylabel("commanded leg length (m)")
    if "meas_lengths" in s.data:
        for k in range(6):
            ax[1, 1].plot(s.t, s.data["meas_lengths"][:, k], color=COLORS[k], lw=0.8, label=f"leg {k + 1}")
        ax[1, 1].set_ylabel("measured leg length (m)")
    if rep.leg_limits is not None:
        for a in (ax[1, 0], ax[1, 1]):
            for v in rep.leg_limits:
                a.axhline(v, color="darkred", lw=1.0, ls="--")
            a.legend(fontsize=7, ncol=3)
    for a in ax.flat:
        a.grid(True, lw=0.3)
    for a in ax[1]:
        a.set_xlabel("time (s)")
    fig.suptitle("Motion platform: commanded vs measured, leg lengths against their limits (dashed)")
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
    a1.set_title(f"p50 {tm['work_us_p50']:.1f} µs, p99 {tm['work_us_p99']:.1f} µs")
    a2.hist(tm["lateness_us"], bins=100, color="tab:orange", log=True)
    a2.set_xlabel("wake-up lateness (µs)")
    a2.set_title(f"p99 {tm['lateness_us_p99']:.1f} µs, max {tm['lateness_us_max']:.1f} µs, "
                 f"missed deadlines {tm['missed']}")
    fig.suptitle("Loop timing over the dynamics")
    return fig


def energy_page(rep: Report) -> Figure | None:
    e = rep.energy
    if e is None:
        return None
    fig = Figure(figsize=PAGE, layout="constrained")
    ax = fig.subplots(1, 1)
    k = slice(None, None, max(1, -(-len(e.t) // 20000)))
    ax.plot(e.t[k], e.vehicles_cum_j[k], label="taken from the vehicles (simulated motion)")
    if e.mechanism_cum_j is not None:
        ax.plot(e.t[k], e.mechanism_cum_j[k], label="absorbed by the mechanism (measured motion)")
        ax.plot(e.t[k], (e.mechanism_cum_j - e.vehicles_cum_j)[k], label="injected by the stand loop")
    if e.approach_j is not None:
        ax.axhline(e.approach_j, color="0.3", ls="--", lw=0.8, label="approach kinetic energy")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cumulative energy (J)")
    ax.grid(True, lw=0.3)
    ax.legend(fontsize=8)
    fig.suptitle("Energy audit")
    return fig


def fidelity_page(rep: Report) -> Figure | None:
    c = rep.comparison
    if c is None:
        return None
    fig = Figure(figsize=PAGE)
    fig.text(0.05, 0.94, "Fidelity against the reference", fontsize=16, weight="bold")
    fig.text(0.05, 0.90, f"reference: {c['digital_log']}", fontsize=9, family="monospace")
    import textwrap
    note = textwrap.fill(f"filtering — run: {c['filtering']['run']}; reference: {c['filtering']['reference']}", 110)
    for w in c.get("warnings", []):
        note += "\n" + textwrap.fill(f"warning: {w}", 110)
    fig.text(0.05, 0.88, note, fontsize=8, va="top")
    ax = fig.add_axes((0.05, 0.05, 0.9, 0.74))
    ax.axis("off")
    rows = [[k, v] for k, v in fidelity_rows(c)]
    tab = ax.table(cellText=rows, colLabels=["quantity", "value"], loc="upper left", cellLoc="left",
                   colWidths=[0.45, 0.45])
    tab.auto_set_font_size(False)
    tab.set_fontsize(8)
    return fig


def fidelity_rows(c: dict) -> list[tuple[str, str]]:
    def f(v, unit=""):
        return "n/a" if v is None else f"{v:.5g}{unit}"
    fi = c["fidelity"]
    rows = [("peak force: run / reference", f"{f(c['hil']['peak_force_n'], ' N')} / {f(c['digital']['peak_force_n'], ' N')}"),
            ("peak force error", f"{f(c['peak_force_error_n'], ' N')} ({f(c['peak_force_error_pct'], ' %')})")]
    band = c.get("reference_peak_force_band_n")
    if band:
        rows.append(("peak force over the sampling phase",
                     f"reference {f(band[0])}..{f(band[1], ' N')}, error {f(c['peak_force_error_band_pct'], ' %')}"))
    rows += [("peak moment error", f(fi["peak_moment_error_nm"], " N·m")),
             ("impulse: run / reference", f"{f(fi['impulse_ns'], ' N·s')} / {f(fi['reference_impulse_ns'], ' N·s')}"),
             ("impulse error", f(fi["impulse_error_ns"], " N·s")),
             ("first-contact time difference", f(fi["first_contact_difference_s"], " s")),
             ("capture: run / reference", f"{c['hil']['captured']} / {c['digital']['captured']}"),
             ("post-impact velocity error", f(c["post_impact_velocity_error_mps"], " m/s")),
             ("RMS position / attitude error",
              f"{f(c['rms_position_error_m'], ' m')} / {f(c['rms_attitude_error_deg'], ' deg')}")]
    rows += [(f"NRMSE {r['channel']}", f"{f(r['nrmse'])}  (RMS {f(r['rms_error'], ' ' + r['unit'])})")
             for r in fi["channels"]]
    return rows


PAGES = (wrench_page, relative_page, platform_page, timing_page, energy_page, fidelity_page)
