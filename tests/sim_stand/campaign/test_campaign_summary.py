"""Campaign summary: the Wilson interval against its closed form, counts and worst samples from
a results store, the PDF's pages, the CLI."""
from __future__ import annotations

import math
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
    assert [r["sample"] for r in s.worst] == [3, 2, 1]           # failure, no capture, highest load
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
    assert 4 not in [r["sample"] for r in s.worst] and len(s.worst) == 3


def test_summary_pdf_and_cli(tmp_path):
    st = _store(tmp_path)
    pdf = tmp_path / "s.pdf"
    r = subprocess.run([sys.executable, "-m", "rt.cli", "campaign", "summary", str(st.root), "-o", str(pdf)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "capture probability 0.5000" in r.stdout
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    assert data.count(b"/Type /Page") - data.count(b"/Type /Pages") == 3     # envelopes, loads, worst
    for argv in ([str(tmp_path / "nothing")], [str(st.root), "--worst", "-2"],
                 [str(st.root), "-o", str(tmp_path / "no" / "dir" / "s.pdf")]):
        r = subprocess.run([sys.executable, "-m", "rt.cli", "campaign", "summary", *argv],
                           capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr, (argv, r.stderr)
