"""Progress on stderr (rt.analysis.progress): a stage line with the time since the start, a bar
that reads a count as a whole number and a time with its decimals, and a bar whose work ended
short of its total (a reference that ends on its capture settling, a fit that converged) ends
full where it stopped, not part-way."""
from __future__ import annotations

import io

from rt.analysis.progress import Bar, Stages


def _last_frame(text: str) -> str:
    return text.replace("\r", "\n").strip().splitlines()[-1]


def test_a_count_reads_whole_and_a_time_with_decimals():
    out = io.StringIO()
    b = Bar(780, "dockstand reconstruct: local fit 1 of 1", "simulations", out)
    b.update(12)
    b.close()
    assert "12/780 simulations" in _last_frame(out.getvalue()), out.getvalue()
    out = io.StringIO()
    b = Bar(10.0, "dockstand report: digital reference", "s of case time", out)
    b.update(2.5)
    b.close()
    assert "2.50/10.00 s of case time" in _last_frame(out.getvalue()), out.getvalue()


def test_work_that_ends_short_of_its_total_ends_the_bar_full():
    out = io.StringIO()
    b = Bar(10.0, "dockstand report: digital reference", "s of case time", out)
    b.update(4.54)
    b.close(ended=True)
    last = _last_frame(out.getvalue())
    assert "100%" in last and "4.54/4.54 s of case time" in last, last
    out = io.StringIO()                         # closed on an error: where it stopped, not full
    b = Bar(10.0, "x", "s", out)
    b.update(4.54)
    b.close()
    assert " 45%" in _last_frame(out.getvalue())


def test_stages_say_the_elapsed_time_and_quiet_says_nothing():
    out = io.StringIO()
    st = Stages("report", stream=out)
    st.say("drawing wrench page")
    assert out.getvalue().startswith("dockstand report: [") and out.getvalue().endswith("s] drawing wrench page\n")
    out = io.StringIO()
    st = Stages("report", stream=out, quiet=True)
    st.say("x")
    b = st.bar(10.0, "digital reference")
    b.update(5.0)
    b.close(ended=True)
    assert out.getvalue() == ""


def test_the_references_bar_starts_with_its_first_rows(monkeypatch, tmp_path):
    """report --simulate's bar of the reference's case time starts when the reference's first
    rows come, not before its kernels compile (a first run's minute of compiling, taken as the
    rate of 0.1 s of case time, read as two hours to go); it ends full where the reference ended."""
    from types import SimpleNamespace

    import numpy as np

    from rt.analysis import commands
    order = []

    def reference(case_source, cfg, out, where, run_log=None, on_rows=None):
        order.append("compiled")
        on_rows(np.array([[0.1]]))
        on_rows(np.array([[4.54]]))
        return out

    class Recorded(Stages):
        def bar(self, *a, **kw):
            order.append("bar")
            return super().bar(*a, **kw)
    monkeypatch.setattr(commands, "entry_points",
                        lambda group: [SimpleNamespace(name="digital", load=lambda: reference)])
    run = SimpleNamespace(load_case=lambda: (SimpleNamespace(duration_s=10.0, source="case.toml"), None),
                          header={}, kind="hil", path=tmp_path / "run.dslog")
    out = io.StringIO()
    commands.simulate_reference(run, tmp_path / "ref.dslog", Recorded("report", stream=out))
    assert order == ["compiled", "bar"]
    assert "100%" in _last_frame(out.getvalue()) and "4.54/4.54 s of case time" in _last_frame(out.getvalue())
