"""Campaign summary: the Wilson interval against its closed form, counts and worst samples from
a results store, the PDF's pages, the CLI."""
from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest

from sim_stand.campaign.spec import load_campaign
from sim_stand.campaign.store import ResultStore
from sim_stand.campaign.summary import format_summary, summarize, wilson_interval

from campaign_helpers import ROOT, short_campaign


def wilson_closed_form(k, n, z=1.959963984540054):
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return c - h, c + h


@pytest.mark.parametrize("k,n", [(0, 10), (7, 10), (10, 10), (230, 256), (1, 1000)])
def test_wilson_interval(k, n):
    lo, hi = wilson_interval(k, n)
    wl, wh = wilson_closed_form(k, n)
    assert lo == pytest.approx(wl, abs=1e-12) and hi == pytest.approx(wh, abs=1e-12)


def _store(tmp_path):
    c = load_campaign(short_campaign(tmp_path, 5))
    st = ResultStore.create(tmp_path / "out", c, 5)
    base = {n: 0.0 for n in c.names}
    rows = [
        {"sample": 0, **base, "outcome": "capture", "peak_force_n": 3000.0, "peak_moment_nm": 500.0,
         "lateral_offset_m": 0.01, "angular_misalignment_deg": 0.5, "closing_speed_mps": 0.1},
        {"sample": 1, **base, "outcome": "capture", "peak_force_n": 8000.0, "peak_moment_nm": 600.0,
         "lateral_offset_m": 0.02, "angular_misalignment_deg": 1.0, "closing_speed_mps": 0.12},
        {"sample": 2, **base, "outcome": "no_capture", "reason": "the units separated", "peak_force_n": 1000.0,
         "peak_moment_nm": 100.0, "lateral_offset_m": 0.09, "angular_misalignment_deg": 3.0,
         "closing_speed_mps": 0.06},
        {"sample": 3, **base, "outcome": "failure", "reason": "pair x: penetration 9 mm", "end_reason":
         "penetration_limit", "peak_force_n": 20000.0,
         "peak_moment_nm": 900.0, "lateral_offset_m": 0.08, "angular_misalignment_deg": 2.0,
         "closing_speed_mps": 0.11},
    ]
    assert st.append(rows) == 4
    assert st.append(rows[:2]) == 0                       # a sample is never stored twice
    return st


def test_summary_counts_probability_loads_worst(tmp_path):
    s = summarize(_store(tmp_path), worst=3)
    assert (s.completed, s.captures, s.no_captures, s.failures) == (4, 2, 1, 1)
    assert s.capture_probability == 0.5
    assert s.wilson_95 == pytest.approx(wilson_closed_form(2, 4))
    assert s.loads["peak_force_n"]["max"] == 8000.0              # the failed run's 20 kN is no load
    assert s.loads["peak_force_n"]["over_limit"] == 1            # 8000 over the 7200 N default
    # the one over a limit first (however many K), then failure, no capture, highest load
    assert [r["sample"] for r in s.worst] == [1, 3, 2, 0] and s.over_limit == [1]
    assert s.failure_reasons == {"penetration_limit": {"count": 1, "example": "pair x: penetration 9 mm"}}
    text = format_summary(s)
    assert "incomplete" in text and "95 % Wilson" in text


def test_infeasible_starts_are_not_in_the_capture_probability(tmp_path):
    """A sample whose start already interpenetrates (end reason initial_interpenetration) tried
    no docking: it is a failure, counted apart, and the probability is over the other samples."""
    st = _store(tmp_path)
    c = load_campaign(short_campaign(tmp_path, 5))
    row = {"sample": 4, **{n: 0.0 for n in c.names}, "outcome": "failure", "end_reason": "initial_interpenetration",
           "reason": "the sampled initial pose already interpenetrates", "peak_force_n": 50000.0,
           "lateral_offset_m": 0.1, "angular_misalignment_deg": 4.0, "closing_speed_mps": 0.1}
    assert st.append([row]) == 1
    s = summarize(st, worst=3)
    assert (s.completed, s.failures, s.infeasible) == (5, 2, 1)
    assert s.capture_probability == 0.5                           # 2 of the 4 feasible
    assert s.wilson_95 == pytest.approx(wilson_closed_form(2, 4))
    text = format_summary(s)
    assert "1 infeasible starts" in text and "over 4 feasible samples" in text
    # its 50 kN are the overlap springing apart, no docking's: not among the worst samples
    assert 4 not in [r["sample"] for r in s.worst] and len(s.worst) == 4       # 1 over a limit + 3


@pytest.mark.slow
def test_summary_pdf_and_cli(tmp_path):
    st = _store(tmp_path)
    pdf = tmp_path / "s.pdf"
    r = subprocess.run([sys.executable, "-m", "rt.cli", "campaign", "summary", str(st.root), "-o", str(pdf)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "capture probability 0.5000" in r.stdout
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    # summary, envelopes, loads, the worst samples' loads and their inputs, why they ended
    assert data.count(b"/Type /Page") - data.count(b"/Type /Pages") == 6
    for argv in ([str(tmp_path / "nothing")], [str(st.root), "--worst", "-2"],
                 [str(st.root), "-o", str(tmp_path / "no" / "dir" / "s.pdf")]):
        r = subprocess.run([sys.executable, "-m", "rt.cli", "campaign", "summary", *argv],
                           capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr, (argv, r.stderr)


def _campaign_with_exceedances(tmp_path, n=40):
    """A store whose failures and no captures outnumber the worst list's K, and whose loads pass
    their limits in several samples, one of them by less than 0.5 % (rounds to 1.00×)."""
    c = load_campaign(short_campaign(tmp_path, n))
    st = ResultStore.create(tmp_path / "many", c, n)
    base = {k: 0.0 for k in c.names}
    rows = []
    for i in range(n):
        r = {"sample": i, **base, "outcome": "capture", "peak_force_n": 2000.0 + 10.0 * i, "peak_moment_nm": 400.0,
             "lateral_offset_m": 0.01, "angular_misalignment_deg": 0.5, "closing_speed_mps": 0.1}
        if i < 8:
            r.update(outcome="failure", reason="pair x: penetration 9 mm", end_reason="penetration_limit")
        elif i < 20:
            r.update(outcome="no_capture", reason="no capture within the duration")
        rows.append(r)
    rows[25]["peak_force_n"] = 15488.0            # 2.15 x the 7200 N default
    rows[31]["peak_moment_nm"] = 1405.0           # 1.0036 x the 1400 N m default
    rows[12]["peak_moment_nm"] = 2300.0           # a no capture over a limit
    rows[3]["peak_force_n"] = 50000.0             # a failure: its peak is no load
    assert st.append(rows) == n
    return st


def test_the_worst_list_holds_every_sample_over_a_limit(tmp_path):
    """However many failures and no captures there are, every sample with a load over its limit
    is on the worst list (first, the largest over its limit first), its ratio never rounded onto
    the limit; a failed run's peak is not counted as a load."""
    st = _campaign_with_exceedances(tmp_path)
    s = summarize(st, worst=5)
    rows = st.read().to_pylist()
    over = {r["sample"] for r in rows if r["outcome"] != "failure" and (
        r["peak_force_n"] > s.limits["force_n"] or r["peak_moment_nm"] > s.limits["moment_nm"])}
    assert over == {25, 31, 12}
    listed = [r["sample"] for r in s.worst]
    assert over <= set(listed) and listed[:3] == [25, 12, 31] == s.over_limit
    assert len(listed) == 3 + 5 and 3 not in listed[:3]          # then the K = 5 worst of the rest: failures
    text = format_summary(s)
    assert "3 samples OVER A LOAD LIMIT: 25, 12, 31" in text
    assert re.search(r"moment +1405\.0 N·m +1\.004× its limit 1400\.0 N·m +OVER", text) and "1.00×" not in text
    assert "50000.0 N" in text and "6.94×" not in text             # a failure's peak, not judged as a load
    assert max(len(ln) for ln in text.splitlines()) <= 100        # readable in a terminal
    for i in (25, 12, 31):
        assert f"sample {i}: " in text
    # --worst 0 still lists every exceedance
    assert [r["sample"] for r in summarize(st, worst=0).worst] == [25, 12, 31]


def test_summary_pdf_marks_exceedances_and_counts_in_whole_samples(tmp_path):
    from sim_stand.campaign.figures import OVER, loads_page, summary_page, worst_page
    st = _campaign_with_exceedances(tmp_path)
    s = summarize(st, worst=5)
    rows = st.read().to_pylist()
    page = summary_page(s)
    banner = [t for t in page.texts if "OVER A LOAD LIMIT" in t.get_text()]
    assert banner and banner[0].get_bbox_patch().get_facecolor()[:3] == pytest.approx((0xb0 / 255, 0.0, 0.0))
    fig = loads_page(rows, s)
    force, moment = fig.axes[0], fig.axes[1]
    for ax in (force, moment):
        ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
        assert all(float(t).is_integer() for t in ticks), ticks
    red = [p for p in force.patches if p.get_facecolor()[:3] == pytest.approx((0xb0 / 255, 0.0, 0.0))
           and p.get_height() > 0]
    assert sum(p.get_height() for p in red) == 1                    # sample 25's bar, past the limit
    assert "1 sample OVER THE LIMIT" in force.get_title()
    pages = worst_page(s)
    cells = pages[0].axes[0].tables[0].get_celld()
    assert [cells[(i, 0)].get_text().get_text() for i in (1, 2, 3)] == ["25", "12", "31"]
    assert all(cells[(i, 0)].get_text().get_color() == OVER for i in (1, 2, 3))
    assert cells[(4, 0)].get_text().get_color() != OVER                 # a failure: not over a limit
    force = next(c for (r, c), cell in cells.items() if r == 0 and cell.get_text().get_text().startswith("force"))
    assert cells[(1, force)].get_text().get_text() == "15488.0 N  2.15×" and cells[(1, force)].get_text().get_color() == OVER


def _extent(fig, artist):
    """Where ``artist`` is drawn on ``fig`` (drawn once: axis labels take their place in a draw)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig).draw()
    return artist.get_window_extent(fig.canvas.get_renderer())


def test_the_load_histograms_read_in_the_summarys_units_and_do_not_overlap(tmp_path):
    """Each histogram's axis, limit line and limit label in one unit, the summary text's (a
    stroke in mm against 'limit 220.00 mm', not an axis in m); a lower plot's red title clear of
    the upper plot's axis label (a reviewer read 'peak moment' through '2 samples OVER')."""
    from sim_stand.campaign.figures import loads_page
    st = _campaign_with_exceedances(tmp_path)
    s = summarize(st, worst=5)
    s.limits["stroke_rate_mps"] = 0.3                   # as the shipped campaign's [limits]
    rows = st.read().to_pylist()
    for r in rows:
        r.update(peak_stroke_m=0.08, peak_stroke_rate_mps=0.1)
    rows[27]["peak_stroke_rate_mps"] = 0.4               # over the 0.3 m/s default
    fig = loads_page(rows, s)
    stroke, rate = fig.axes[2], fig.axes[3]
    for ax, unit, limit in ((stroke, "mm", s.limits["stroke_m"] * 1e3), (rate, "mm/s", 300.0)):
        assert ax.get_xlabel().endswith(f"({unit})"), ax.get_xlabel()
        line = next(ln for ln in ax.get_lines() if ln.get_label().startswith("limit"))
        assert line.get_xdata()[0] == pytest.approx(limit) and f"{limit:.2f} {unit}" in line.get_label(), line.get_label()
    assert "1 sample OVER THE LIMIT" in rate.get_title()
    for upper, lower in ((fig.axes[0], fig.axes[2]), (fig.axes[1], fig.axes[3])):
        if lower.get_title():
            assert not _extent(fig, lower.title).overlaps(_extent(fig, upper.xaxis.label)), (lower.get_title(),
                                                                                            upper.get_xlabel())


def test_the_inputs_table_fits_its_cells_in_the_summarys_units(tmp_path):
    """The worst samples' sampled inputs: every header fits its cell (a long word hyphenated, the
    unit below it), values in fixed decimals of mm, mm/s, deg, deg/s or a factor -- never
    -9.896e-05 m/s next to 0.1021."""
    from sim_stand.campaign.figures import input_column, worst_page
    st = _campaign_with_exceedances(tmp_path)
    s = summarize(st, worst=5)
    for r in s.worst:
        r.update(position_y_m=0.07716, closing_velocity_mps=0.1021, misalignment_2_deg=-0.4664,
                 damper_scale=1.028)
    s.worst[0]["position_y_m"] = -9.896e-05
    assert input_column("misalignment_2_deg")[0] == "misalign-\nment 2\n(deg)"
    assert input_column("lateral_velocity_z_mps")[:2] == ("lateral\nvelocity z\n(mm/s)", "mm/s")
    page = worst_page(s)[1]
    cells = page.axes[0].tables[0].get_celld()
    head = {cell.get_text().get_text(): c for (r, c), cell in cells.items() if r == 0}
    for (r, c), cell in cells.items():
        if r == 0:
            assert _extent(page, cell.get_text()).width <= _extent(page, cell).width, cell.get_text().get_text()
    col = {n: head[input_column(n)[0]] for n in ("position_y_m", "closing_velocity_mps", "misalignment_2_deg",
                                                 "damper_scale")}
    assert [cells[(1, col[n])].get_text().get_text() for n in col] == ["-0.1", "102.10", "-0.466", "1.0280"]
    assert [cells[(2, col[n])].get_text().get_text() for n in col] == ["77.2", "102.10", "-0.466", "1.0280"]
