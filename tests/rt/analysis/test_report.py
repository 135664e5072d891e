"""The analysis API, compare's fidelity table and ``dockstand report`` on a real lockstep demo
run and its digital reference (the fixtures of conftest.py)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from rt.analysis.commands import cmd_report
from rt.analysis.compare import compare_logs, format_report
from rt.analysis.report import PHASE_DYNAMICS, build_report
from rt.analysis.run import load_run
from rt.cli import build_parser
from rt.record.logscan import LogError, UnknownField
from rt.record.runlog import read_log


def _args(*argv):
    return build_parser().parse_args(list(argv))


# ---------------------------------------------------------------------- the API
def test_load_run_identity_units_and_streaming_select(demo_log):
    run = load_run(demo_log)
    log = read_log(demo_log)
    assert run.kind == "hil" and run.case_name == "nominal" and not run.truncated
    assert run.n_records == log.n_records and run.verdict.startswith("done")
    assert run.units("w_P") == ("N", "N", "N", "N*m", "N*m", "N*m")
    cols = run.columns(["rel_twist"])
    assert [c.name for c in cols][:2] == ["rel_twist.vx", "rel_twist.vy"] and cols[3].unit == "rad/s"
    sel = run.select(["w_P", "t"], t0=1.0, t1=2.0, every=3)
    t = log.fields["t"]
    idx = np.nonzero(np.isfinite(t) & (t >= 1.0) & (t <= 2.0))[0]
    rows = np.arange(idx[0], idx[-1] + 1, 3)
    assert np.array_equal(sel["t"], t[rows]) and np.array_equal(sel["w_P"], log.fields["w_P"][rows])
    table = run.to_table(["t", "w_P"], t0=1.0, t1=2.0)
    assert table.num_columns == 7 and table.schema.field("w_P.fz").metadata[b"unit"] == b"N"
    assert np.array_equal(table.column("w_P.fx").to_numpy(), log.fields["w_P"][idx[0]:idx[-1] + 1, 0])


def test_bad_requests_are_one_line_errors(demo_log):
    run = load_run(demo_log)
    with pytest.raises(UnknownField, match="no field 'w_Q'"):
        run.select(["w_Q"])
    with pytest.raises(LogError, match="empty time window"):
        run.select(["t"], t0=100.0, t1=200.0)
    with pytest.raises(LogError, match="before"):
        run.select(["t"], t0=2.0, t1=1.0)


# ---------------------------------------------------------------------- compare
def test_a_log_compared_with_itself_shows_zero_error_on_every_channel(demo_log):
    rep = compare_logs(demo_log, demo_log)
    assert rep["digital_observed_through"] is None            # like with like: both as logged
    assert "as logged" in rep["filtering"]["run"] and "as logged" in rep["filtering"]["reference"]
    assert rep["peak_force_error_n"] == 0.0 and rep["rms_position_error_m"] == 0.0
    assert rep["rms_attitude_error_deg"] < 1e-12
    fi = rep["fidelity"]
    assert fi["impulse_error_ns"] == 0.0 and fi["first_contact_difference_s"] == 0.0
    assert len(fi["channels"]) == 15 and all(r["rms_error"] == 0.0 for r in fi["channels"])
    # and says so: a HIL log given as the reference, and the run itself (named first in the text)
    w = rep["warnings"]
    assert any("HIL run's log, not an all-digital" in x for x in w) and any("the run itself" in x for x in w)
    assert format_report(rep).splitlines()[2].startswith("warning:")


def test_fidelity_table_against_an_independent_computation(demo_log, digital_log):
    rep = compare_logs(demo_log, digital_log, observe=False)
    H, D = read_log(demo_log), read_log(digital_log)
    ok = np.isfinite(H.fields["t"]) & (H.fields["t"] >= 0.0)
    th, wh, ph = H.fields["t"][ok], H.fields["w_P"][ok], H.fields["rel_pose"][ok]
    td, wd, pd = D.fields["t"], D.fields["w_P"], D.fields["rel_pose"]
    fi = rep["fidelity"]
    peak_m = np.linalg.norm(wh[:, 3:], axis=1).max() - np.linalg.norm(wd[:, 3:], axis=1).max()
    assert fi["peak_moment_error_nm"] == pytest.approx(peak_m, rel=1e-12)
    # the impulse over the common span only (a run that lasts longer must not count its tail)
    span = (th >= max(th[0], td[0])) & (th <= min(th[-1], td[-1]))
    sd = (td >= max(th[0], td[0])) & (td <= min(th[-1], td[-1]))
    imp_h = np.trapezoid(wh[span, :3], th[span], axis=0)
    imp_d = np.trapezoid(wd[sd, :3], td[sd], axis=0)
    assert fi["impulse_error_ns"] == pytest.approx(np.linalg.norm(imp_h - imp_d), rel=1e-9)
    for j, c in enumerate("xyz"):
        ref = np.interp(th[span], td, pd[:, j])
        nrmse = np.sqrt(np.mean((ph[span, j] - ref) ** 2)) / np.ptp(pd[:, j])
        row = next(r for r in fi["channels"] if r["channel"] == f"rel_pose.{c}")
        assert row["nrmse"] == pytest.approx(nrmse, rel=1e-9)
    # the stand reproduces the docking: the approach axis within 1 % of its range, the small
    # lateral offsets within 5 % of theirs
    nr = {r["channel"]: r["nrmse"] for r in fi["channels"]}
    assert nr["rel_pose.x"] < 0.01 and max(nr["rel_pose.y"], nr["rel_pose.z"]) < 0.05


# ---------------------------------------------------------------------- the report
def _pdf_pages(path) -> int:
    return len(re.findall(rb"/Type\s*/Page\b", path.read_bytes()))


@pytest.mark.slow
def test_report_pdf_and_html_with_and_without_reference(demo_log, digital_log, tmp_path, capsys):
    out = tmp_path / "r.pdf"
    assert cmd_report(_args("report", demo_log, "-o", str(out))) == 0
    assert _pdf_pages(out) == 7          # identity + wrench, relative, platform, timing, energy, events
    out2 = tmp_path / "r2.pdf"
    assert cmd_report(_args("report", demo_log, "--reference", digital_log, "-o", str(out2))) == 0
    assert _pdf_pages(out2) == 8         # + the fidelity table
    html = tmp_path / "r.html"
    assert cmd_report(_args("report", demo_log, "--reference", digital_log, "-o", str(html))) == 0
    text = html.read_text()
    assert text.count("<svg") == 5 and "Fidelity against the reference" in text and "src=" not in text
    assert "<h2>Events</h2>" in text and "latch_closed" in text and "Limits: the nearest the run came" in text
    assert "7 pages" in capsys.readouterr().out.splitlines()[0]
    # page 1: the lead in ms, the delay identified online and the lead at the run's end
    assert re.search(r"tau = \d+\.\d{3} ms", text) and re.search(r"identified \d+\.\d{3} ms; lead at the end \d+\.\d{3} ms \(its platform part", text)
    # the reference of a HIL run starts from the mechanism state the run's arming left and is
    # logged at the physics rate: the table gives the peak force over the run's sampling phase
    assert "peak force over the sampling phase" in text


@pytest.mark.slow
def test_report_simulate_keeps_no_reference_unless_asked(demo_log, digital_log, tmp_path, monkeypatch, capsys):
    """``report --simulate`` runs the reference into a scratch directory and removes it (a 10 s
    case's reference at the physics rate is ~33 MB); ``--reference-log`` keeps it where asked."""
    import tempfile
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    out = tmp_path / "s.pdf"
    assert cmd_report(_args("report", demo_log, "--simulate", "-o", str(out))) == 0
    assert _pdf_pages(out) == 8 and list(scratch.iterdir()) == []
    err = capsys.readouterr().err
    assert "not kept" in err and "digital reference" in err and "drawing wrench page" in err     # progress, on stderr
    html = tmp_path / "s.html"       # the fidelity page names no file that is gone
    assert cmd_report(_args("report", demo_log, "--simulate", "-o", str(html))) == 0
    assert "simulated by report --simulate, not kept" in html.read_text() and list(scratch.iterdir()) == []
    assert cmd_report(_args("report", digital_log, "--simulate", "-o", str(out))) == 2      # a digital run: refused
    assert "all-digital run: --simulate makes the reference of a HIL run" in capsys.readouterr().err
    kept = tmp_path / "ref.dslog"
    assert cmd_report(_args("report", demo_log, "--simulate", "--reference-log", str(kept), "-o", str(out))) == 0
    assert kept.stat().st_size > 0 and list(scratch.iterdir()) == []
    # asked again with the same --reference-log: this run's reference is reused, not simulated again
    mtime = kept.stat().st_mtime_ns
    capsys.readouterr()
    assert cmd_report(_args("report", demo_log, "--simulate", "--reference-log", str(kept), "-o", str(out))) == 0
    assert "reusing the digital reference" in capsys.readouterr().err and kept.stat().st_mtime_ns == mtime
    # a file there that is not this run's reference is neither reused nor overwritten
    other = tmp_path / "other.dslog"
    other.write_bytes(b"not a run log")
    assert cmd_report(_args("report", demo_log, "--simulate", "--reference-log", str(other), "-o", str(out))) == 2
    assert "is not this run's reference" in capsys.readouterr().err and other.read_bytes() == b"not a run log"


def test_simulated_reference_of_a_hil_run_is_judged_over_its_sampling_phase(demo_log, digital_log):
    from rt.analysis.compare import compare_logs, format_report
    ref = load_run(digital_log)
    assert np.median(np.diff(ref.t[:200])) == pytest.approx(1e-4)          # the physics rate
    rep = compare_logs(demo_log, digital_log)
    lo, hi = rep["reference_peak_force_band_n"]
    assert lo < hi and rep["peak_force_error_band_pct"] is not None
    # default settings (constant-jerk predictor, identified delay fed, contact gate): within the 8 % tolerance,
    # and nearer the band than the one phase the reference's log alone shows
    assert abs(rep["peak_force_error_band_pct"]) <= min(8.0, abs(rep["peak_force_error_pct"]))


def test_report_energy_audit_and_events(demo_log):
    rep = build_report(load_run(demo_log))
    ident = dict(rep.identity)          # the loop's settings: which fidelity settings the run had
    assert ident["delay compensation"].endswith("jerk predictor")        # the shipped defaults
    assert ident["delay identification"].startswith("feed: platform delay identified") and ident["contact gate"] == "on"
    e = rep.energy
    # the stand's loop injects or removes at most a few % of the approach energy (compensated)
    assert e.approach_j > 0 and abs(e.injected_pct_of_approach) < 5.0
    assert e.mechanism_j == pytest.approx(e.vehicles_j + e.stand_injected_j, rel=1e-12)
    assert any(lab.startswith("first_contact") for _, lab in rep.series.events)
    run = load_run(demo_log)
    ph = run.field("phase")
    assert len(rep.timing["work_us"]) == int(np.sum(ph == PHASE_DYNAMICS))


def test_the_chunked_energy_audit_is_the_whole_series_audit(demo_log, monkeypatch):
    from rt.analysis import report as R
    from rt.analysis.energy import audit, held_step_power
    from rt.config.stand import stand_from_snapshot
    from rt.control.controller import stand_geometry
    run = load_run(demo_log)
    whole = build_report(run).energy
    monkeypatch.setattr(R, "CHUNK", 997)
    chunked = build_report(run).energy
    # the same per-sample formulas; only the last bits of vectorised loops over other lengths differ
    assert np.allclose(chunked.vehicles_cum_j, whole.vehicles_cum_j, rtol=1e-12, atol=1e-12)
    assert np.allclose(chunked.mechanism_cum_j, whole.mechanism_cum_j, rtol=1e-12, atol=1e-12)
    lo, hi = R.dynamics_rows(run)
    d = run.read(["t", "w_P", "rel_pose", "rel_twist", "meas_pose", "new_sample"], lo - 1, hi)
    st = stand_from_snapshot(run.header["config"], "x")
    geo = stand_geometry(st)
    shift = R.filter_delay_of(run, st)          # the demo's 100 Hz sensing low-pass: 2.2 ms
    assert shift == pytest.approx(st.delays.filter_s) and shift > 2e-3
    # the shipped stand's contact gate: the hardware met only the contact's force (the report
    # replays the gate over the records, rt/stand/contact_gate.py)
    from rt.stand import contact_gate as CG
    cg = st.contact_gate
    assert cg.enabled
    gate = CG.pack_gate(True, cg.on_n, cg.off_n, cg.persist, cg.release_s, 1e-3)
    w = np.zeros_like(d["w_P"])
    for i in range(1, len(w)):
        CG.gate(gate, d["w_P"][i], w[i], bool(d["new_sample"][i]))
    ref = audit(d["t"][1:], w[1:], d["rel_pose"][1:], d["rel_twist"][1:], d["meas_pose"][1:], geo,
                shift_s=shift)
    # the whole series from lo: its first 2.2 ms of actual motion are clamped at the series' start,
    # where the report reads the records before (1.2e-6 J of 32.6)
    assert chunked.mechanism_j == pytest.approx(ref.mechanism_j, rel=1e-7)
    # a HIL log's vehicles side: each wrench over the step it was held for (held_step_power)
    p = held_step_power(w, d["rel_pose"], d["rel_twist"])[1:]
    assert chunked.vehicles_j == pytest.approx(float(np.sum(p[1:] * np.diff(d["t"][1:]))), rel=1e-12)


@pytest.mark.slow
def test_truncated_log_is_reported_to_its_last_block(demo_log, tmp_path, capsys):
    cut = tmp_path / "cut.dslog"
    raw = open(demo_log, "rb").read()
    cut.write_bytes(raw[:int(len(raw) * 0.6)])
    out = tmp_path / "cut.pdf"
    assert cmd_report(_args("report", str(cut), "-o", str(out))) == 0
    # page 1 (its note of the truncation may carry the fidelity checks onto a page of their own), then 6
    from rt.analysis.figures import title_pages
    n1 = len(title_pages(build_report(load_run(cut))))
    printed = capsys.readouterr().out
    assert "truncated" in printed and _pdf_pages(out) == n1 + 6 and n1 <= 2
    # the terminal gives the verdict and a line per check, the truncation's among them
    assert "\n  log      WARN" in printed and "\n  energy   " in printed
    # its fidelity verdict is never a PASS of a run it saw a part of
    v = build_report(load_run(cut)).fidelity
    assert v["status"] != "PASS" and any(c["name"] == "log" and "truncated" in c["reason"] for c in v["checks"])


@pytest.mark.parametrize("argv, msg", [
    (["report", "README.md"], "not a run log"),
    (["report", "nope.dslog"], "no such file"),
    (["report", "{log}", "-o", "{log}"], "would overwrite"),
    (["report", "{log}", "-o", "x.png"], ".pdf or .html"),
    (["report", "{log}", "-o", "no/such/dir/r.pdf"], "does not exist"),
    (["compare", "README.md", "README.md"], "not a run log"),
    (["compare", "nope.dslog", "x"], "no such file"),
])
def test_cli_user_errors_are_one_line_and_exit_2(demo_log, tmp_path, argv, msg):
    log = tmp_path / "copy.dslog"
    shutil.copy(demo_log, log)
    before = log.read_bytes()
    argv = [a.format(log=log) for a in argv]
    p = subprocess.run([sys.executable, "-m", "rt.cli", *argv], capture_output=True, text=True, cwd=tmp_path.parent
                       if argv[1] != "README.md" else None)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and msg in lines[0] and "Traceback" not in p.stderr
    assert log.read_bytes() == before


def test_compare_refuses_swapped_logs_and_names_a_mismatched_reference(demo_log, digital_log, tmp_path, capsys):
    """The HIL run's log first, the reference second; a reference of another case, in orbit or
    from a mechanism at rest is compared but named as such."""
    from rt.analysis.commands import cmd_compare
    from rt.analysis.compare import compare_logs, format_report
    from rt.config.case import load_case
    from sim_stand.cli import REPO
    from sim_stand.digital import DigitalSim
    assert cmd_compare(_args("compare", digital_log, demo_log)) == 2
    assert "the HIL run's log comes first" in capsys.readouterr().err
    assert compare_logs(demo_log, digital_log)["warnings"] == []     # report --simulate's reference
    other = DigitalSim(load_case(REPO / "config" / "cases" / "offset.toml"), duration_s=0.5).run(tmp_path / "o.dslog")
    w = compare_logs(demo_log, other.log_path)["warnings"]
    assert any("case" in x and "digests differ" in x for x in w)
    assert any("in orbit" in x for x in w) and any("started at rest" in x for x in w)
    assert any("--log-rate 10000" in x for x in w)


# ---------------------------------------------------------------------- what a reviewer reads
def test_energy_curves_named_absorbed_or_dissipated_never_fall(demo_log, digital_log):
    """The contact's work on the vehicles rises and falls (the springs store and give back): it
    is drawn and named as *net* work; a curve named absorbed or dissipated is monotonic."""
    from rt.analysis.figures import energy_page, energy_rows
    rep = build_report(load_run(demo_log), load_run(digital_log))
    fig = energy_page(rep)
    lines = [ln for ax in fig.axes for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    named = {ln.get_label(): np.asarray(ln.get_ydata(), dtype=float) for ln in lines}
    net = [k for k in named if k.startswith("net work")]
    assert len(net) == 2
    drop = [float(np.max(np.maximum.accumulate(named[k]) - named[k])) for k in net]
    assert min(drop) > 1.0                          # the demo's springs give ~5 J back at 2.4 s
    monotone = [k for k in named if "absorbed" in k or "dissipated" in k]
    assert monotone                                                 # the reference's dampers and brakes
    for k in monotone:
        assert np.all(np.diff(named[k]) >= -1e-9), k
    assert not any("absorbed" in k for k, _ in energy_rows(rep))


def test_the_reference_span_is_shown_and_said(demo_log, early_reference):
    """The digital reference ends before the run (here: its duration cut to 3 s), the run goes
    on: the report says so (a note, a shaded span, the span of the impulse), and compare says
    the same span."""
    from rt.analysis.figures import fidelity_rows, wrench_page
    digital_log = early_reference
    run, ref = load_run(demo_log), load_run(digital_log)
    rep = build_report(run, ref)
    assert rep.reference.end_s < rep.series.end_s - 1.0 and rep.reference.end == "time_limit"
    assert any("has no reference" in n for n in rep.notes)
    fig = wrench_page(rep)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any(f"no reference after {rep.reference.end_s:.3f} s" in t for t in texts)
    shaded = [p for ax in fig.axes for p in ax.patches]
    assert shaded                                                     # the span without a reference
    rows = dict(fidelity_rows(rep.comparison))
    span = rep.comparison["fidelity"]["span_s"]
    key = next(k for k in rows if k.startswith("impulse |∫f dt| over"))
    assert f"{span[0]:.3f}–{span[1]:.3f} s" in key
    text = format_report(compare_logs(demo_log, digital_log))
    assert f"common span {span[0]:.3f}–{span[1]:.3f} s" in text and "has no reference" in text
    # one format per quantity: no long mantissas
    assert not re.search(r"\d\.\d{5,}", "\n".join(v for _, v in fidelity_rows(rep.comparison)))


def test_a_reference_that_reaches_the_runs_end_leaves_nothing_unjudged(demo_log, digital_log):
    """The reference --simulate makes ends on its capture settling with the run (4.542 s, the
    run 4.541 s): nothing is said to have no reference -- the reference seen through the run's
    low-pass moves 2.18 ms earlier (its group delay), and that shift alone read 'the run's
    4.540–4.541 s has no reference (it ended at 4.540 s)' beside 'the reference ends at 4.542 s'."""
    rep = compare_logs(demo_log, digital_log)
    fi = rep["fidelity"]
    assert fi["reference_end_s"] >= fi["run_end_s"] > fi["span_s"][1], fi
    assert "has no reference" not in format_report(rep)
    assert not any("has no reference" in n for n in build_report(load_run(demo_log), load_run(digital_log)).notes)


def test_a_limit_exceedance_is_on_page_one_in_red(demo_log):
    """A run whose sensor load passed its rating: the first page says so in a banner, the limits
    table marks the row, and the notes start with it."""
    from rt.analysis.figures import OVER, title_page
    run = load_run(demo_log)
    run.header["config"]["sensor"]["rating_nm"] = [450.0, 450.0, 450.0]      # the demo's torque peaks at ~500 N m
    rep = build_report(run)
    over = [u for u in rep.limits if u.over]
    assert over and all(u.what.startswith("sensor torque") for u in over) and rep.notes[0].startswith("OVER A LIMIT")
    texts = title_page(rep).texts
    banner = [t for t in texts if t.get_text().strip().startswith("OVER A LIMIT")]
    assert banner and banner[0].get_bbox_patch().get_facecolor()[:3] == pytest.approx((0xb0 / 255, 0.0, 0.0))
    marked = [t for t in texts if t.get_text().startswith("OVER THE LIMIT")]
    assert len(marked) == len(over) and all(t.get_color() == OVER for t in marked)
    # within its limits, nothing is marked
    clean = build_report(load_run(demo_log))
    assert clean.limits and not any(u.over for u in clean.limits)
    assert not [t for t in title_page(clean).texts if "OVER" in t.get_text()]


def test_page_one_never_runs_off_its_page(demo_log, tmp_path):
    """A banner and an over-limit note pushed page 1's fidelity checks below the page's bottom
    edge (drawn at y < 0: not printed); now what does not fit continues on a page of its own,
    every line on a page, a note's lines together, and the PDF counts it."""
    from rt.analysis import document
    from rt.analysis.figures import BOTTOM, title_pages
    clean = build_report(load_run(demo_log))
    assert len(title_pages(clean)) == 1                      # the nominal run's page 1 fits
    run = load_run(demo_log)
    run.header["config"]["sensor"]["rating_nm"] = [450.0, 450.0, 450.0]
    run.header["config"]["sensor"]["rating_n"] = [1000.0, 1000.0, 1000.0]      # two notes' worth of exceedances
    rep = build_report(run)
    pages = title_pages(rep)
    texts = [(k, t) for k, fig in enumerate(pages) for t in fig.texts]
    assert all(t.get_position()[1] >= BOTTOM for _, t in texts), [(t.get_text()[:40], t.get_position()[1])
                                                                  for _, t in texts if t.get_position()[1] < BOTTOM]
    assert any(t.get_text().startswith("fidelity checks") for _, t in texts)
    assert any(t.get_text().startswith("energy PASS") for _, t in texts)
    note = [k for k, t in texts if t.get_fontsize() == 8.5]           # the over-limit note, two lines
    assert len(note) >= 2 and len(set(note)) == 1, note
    assert len(pages) == 2 and pages[1].texts[0].get_text().endswith("(page 1, continued)")
    out = tmp_path / "over.pdf"
    assert document.write_pdf(rep, out) == len(pages) + 6 == _pdf_pages(out)
