"""The run's fidelity verdict (rt/analysis/fidelity.py; docs/validation.md §3.5) on the shared
lockstep demo run (conftest.py): written into its log next to the energy audit, PASS at the
defaults with every check listed; a copy of the log edited so its lead is 3 ms off the
identified delay FAILs naming the delay, one with a noisier sensor WARNs on the noise floor;
the console's replay and the report's page 1 show the line."""
from __future__ import annotations

import msgpack
import numpy as np
import pytest

from rt.analysis import fidelity as FI
from rt.analysis.audit import run_audit
from rt.record.runlog import read_log


def _edited(src, dst, edit) -> str:
    """A copy of the run log ``src`` at ``dst`` whose records went through ``edit(name ->
    column slice, block)`` (each block of records, n x W, edited in place)."""
    raw = open(src, "rb").read()
    out = []
    cols, width = None, 0
    up = msgpack.Unpacker(raw=False, max_buffer_size=len(raw) + 1)
    up.feed(raw)
    for obj in up:
        if obj.get("k") == "header":
            cols, k = {}, 0
            for name, size in obj["fields"]:
                cols[name] = slice(k, k + size)
                k += size
            width = k
        elif obj.get("k") == "rec":
            block = np.frombuffer(obj["d"], dtype="<f8").reshape(obj["n"], width).copy()
            edit(cols, block, obj["i0"])
            obj = {**obj, "d": block.astype("<f8").tobytes()}
        out.append(msgpack.packb(obj, use_bin_type=True))
    open(dst, "wb").write(b"".join(out))
    return str(dst)


def _checks(v):
    return {c["name"]: c for c in v["checks"]}


def test_the_demo_runs_verdict_is_written_next_to_its_energy_audit_and_passes(demo_log):
    evs = read_log(demo_log, ["t"]).events
    kinds = [e.get("kind") for e in evs]
    assert kinds[-2:] == ["energy_audit", "fidelity_verdict"]       # the writer's, before the footer
    v = evs[-1]
    c = _checks(v)
    assert v["status"] == "PASS" and list(c) == ["energy", "delay", "gate", "noise"], v
    assert all(x["status"] == "PASS" for x in c.values()) and v["bound_pct"] == 1.0
    assert v["reason"].startswith("4 checks within their bounds; nearest, ")
    assert FI.format_fidelity(v).startswith("fidelity PASS: 4 checks")
    # the energy audit as it was, and the same verdict computed again from the closed log
    assert evs[-2]["verdict"] == "PASS" and c["energy"]["figure"] == pytest.approx(evs[-2]["injected_pct"])
    again = run_audit(demo_log, 1.0)
    assert again["fidelity"]["status"] == "PASS" and _checks(again["fidelity"])["delay"] == c["delay"]
    # the shipped defaults (identified delay fed, constant-jerk predictor, contact gate): the
    # lead's platform part follows the identified delay to tens of microseconds, whose share
    # (ε S / E) is the audit's own to within 0.05 % of the approach energy; the gate passes the
    # contact whole (its rise recovered)
    d = c["delay"]
    assert "than the identified platform delay" in d["reason"] and abs(d["figure"]) < 0.1
    assert d["figure"] == pytest.approx(c["energy"]["figure"], abs=0.05)
    assert c["gate"]["figure"] < 0.05 and "exchanged through the gate" in c["gate"]["reason"]
    assert "over the gate's open time" in c["noise"]["reason"]
    assert 0.0 < c["noise"]["figure"] < 0.2


def test_a_lead_far_off_the_identified_delay_fails_naming_the_delay(demo_log, tmp_path):
    def lead_3ms_longer(cols, block, i0):
        block[:, cols["delay"].start + 1] += 3e-3          # DR_USED: the lead the predictor used
    bad = _edited(demo_log, tmp_path / "lead.dslog", lead_3ms_longer)
    v = run_audit(bad, 1.0)["fidelity"]
    c = _checks(v)
    assert v["status"] == "FAIL" and v["reason"].startswith("delay: the lead's platform part 5.3")
    assert "ms longer than the identified platform delay 2.3" in v["reason"]
    assert c["delay"]["status"] == "FAIL" and c["delay"]["figure"] < -1.0 and "identify = \"feed\"" in c["delay"]["reason"]
    assert c["energy"]["status"] == "PASS"        # the records' forces and motion are the run's own


def test_a_noise_floor_above_the_bound_warns(demo_log, tmp_path):
    rng = np.random.default_rng(1)

    def noisier(cols, block, i0):          # the sensor's own force, 150 N of white noise more per axis
        f = cols["w_S"].start
        block[:, f:f + 3] += rng.normal(0.0, 150.0, (len(block), 3))
    noisy = _edited(demo_log, tmp_path / "noisy.dslog", noisier)
    v = run_audit(noisy, 1.0)["fidelity"]
    c = _checks(v)
    assert c["noise"]["status"] == "WARN" and c["noise"]["figure"] > 1.0, c["noise"]
    assert v["status"] == "WARN" and v["reason"].startswith("noise: the sensor noise (σ 1")
    assert "this run cannot show its fidelity" in v["reason"]
    assert all(c[n]["status"] == "PASS" for n in ("energy", "delay", "gate"))


def test_an_envelope_event_adds_its_check_and_a_malformed_one_warns():
    fx = FI.Facts(1.0, {"verdict": "PASS", "injected_pct": 0.1, "approach_j": 10.0})
    assert FI.check_envelope(fx) is None
    fx.events = [{"kind": "envelope", "w_tau": 0.41, "limit": 0.35, "inside": False,
                  "reason": "w tau 0.41 beyond the 0.35 a causal compensator reproduces"}]
    c = FI.check_envelope(fx)
    assert (c["name"], c["status"], c["figure"], c["bound"]) == ("envelope", "FAIL", 0.41, 0.35)
    v = FI.combine([FI.check_energy(fx), c], 1.0)
    assert v["status"] == "FAIL" and v["reason"] == "envelope: w tau 0.41 beyond the 0.35 a causal compensator reproduces"
    fx.events = [{"kind": "envelope", "w_tau": 0.2, "limit": 0.35, "inside": True, "reason": "inside",
                  "status": "WARN"}]
    assert FI.check_envelope(fx)["status"] == "WARN"        # the event's own status counts
    fx.events = [{"kind": "envelope", "w_tau": 0.2, "inside": "yes"}]
    c = FI.check_envelope(fx)
    assert c["status"] == "WARN" and "malformed" in c["reason"]


def test_a_run_that_cannot_be_weighed_warns():
    fx = FI.Facts(1.0, {"verdict": "NONE", "note": "no measured platform pose"}, identify="monitor", delay_logged=True)
    c = {x["name"]: x for x in FI.verdict_of(fx)["checks"]}
    assert c["energy"]["status"] == "WARN" and "no measured platform pose" in c["energy"]["reason"]
    assert c["delay"]["status"] == "WARN" and "never became identified" in c["delay"]["reason"]
    assert c["noise"]["status"] == "WARN" and c["gate"]["status"] == "PASS"
    fx = FI.Facts(1.0, {}, identify="off", delay_logged=True)
    assert "identify = \"off\"" in FI.check_delay(fx)["reason"]
    # no contact: the lead is judged on time
    fx = FI.Facts(1.0, {}, identify="monitor", delay_logged=True, identified_s=2.0e-3, lead_platform_s=2.8e-3)
    c = FI.check_delay(fx)
    assert c["status"] == "WARN" and c["unit"] == "ms" and "no contact in this run" in c["reason"]


def test_a_checks_figure_reads_the_same_on_page_1_in_html_and_text(tmp_path):
    """One format per quantity (rt.analysis.numbers): a share of the approach energy with two
    decimals, signed where the loop injects or removes energy -- page 1 read '-0.0196 %  ·  +0 %
    ·  +0.0331 %' where the text said -0.02 %."""
    from types import SimpleNamespace

    from rt.analysis import document
    from rt.analysis import figures as F
    checks = [FI.check("energy", "PASS", -0.0196, 1.0, "e"), FI.check("gate", "PASS", 0.0, 1.0, "g"),
              FI.check("noise", "PASS", 0.0331, 1.0, "n"), FI.check("delay", "WARN", 0.1234, 0.5, "d", unit="ms"),
              FI.check("delay", "WARN", None, 1.0, "unknown")]
    assert [FI.check_figure(c) for c in checks] == ["-0.02 %", "0.00 %", "0.03 %", "+0.123 ms", "n/a"]
    v = {"status": "WARN", "reason": "x", "bound_pct": 1.0, "checks": checks}
    rows = F.verdict_rows(SimpleNamespace(fidelity=v))
    assert [r[2] for r in rows] == ["-0.02 %", "0.00 %", "0.03 %", "+0.123 ms (bound 0.5 ms)", "n/a"]
    html = document._fidelity_table(v)
    assert "<td>-0.02 %</td>" in html and "<td>0.00 %</td>" in html and "<td>+0.123 ms</td><td>0.5 ms</td>" in html
    assert "-0.02 % (bound 1 %)" in FI.format_checks(v)[0]


def test_the_report_page_1_and_the_html_report_carry_the_line(demo_log, tmp_path, monkeypatch):
    from rt.analysis import document
    from rt.analysis import figures as F
    from rt.analysis.report import build_report
    from rt.analysis.run import load_run
    rep = build_report(load_run(demo_log))
    assert rep.fidelity["status"] == "PASS"
    texts = [t.get_text() for t in F.title_page(rep).texts]
    assert " fidelity PASS " in texts and any(t.startswith("4 checks within their bounds") for t in texts)
    assert any(t.startswith("energy PASS ") and "delay PASS" in t and "noise PASS" in t for t in texts)
    monkeypatch.setattr(F, "PAGES", ())          # page 1's content, without the figures
    out = tmp_path / "r.html"
    document.write_html(rep, out)
    html = out.read_text()
    assert '<p class="fidelity pass"><strong>fidelity PASS</strong>: 4 checks within their bounds' in html
    assert "Fidelity verdict: the run's checks" in html and "<td>delay</td><td>PASS</td>" in html


def test_the_console_replay_ends_on_the_verdict(demo_log):
    """``dockstand console --replay``: the verdict, written after the records, plays at the end:
    a line of the event log in its colour, and the message line with the run's end."""
    import asyncio

    from rt.console.app import ConsoleApp
    from rt.console.source import ReplaySource

    src = ReplaySource(demo_log)
    app = ConsoleApp(src, refresh_hz=30)

    async def go():
        async with app.run_test(size=(180, 55)) as pilot:
            await pilot.pause(0.2)
            await pilot.press("plus", "plus", "plus", "plus")          # x10
            for _ in range(20):
                if src.ended:
                    break
                await pilot.press("right_square_bracket")           # +10 s
            await pilot.pause(0.3)
            lines = [str(s.text) for s in app.w["events"].lines]
            assert any("fidelity PASS: 4 checks within their bounds" in s for s in lines), lines[-5:]
            assert app.fidelity is not None and app.fidelity["status"] == "PASS"
            assert "fidelity PASS" in app.message and "replay ended" in app.message
    asyncio.run(go())
