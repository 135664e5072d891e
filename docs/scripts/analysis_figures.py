"""Regenerate the example figures of docs/analysis.md from a lockstep demo run (the nominal
case, compensation on) and its simulated digital reference:

    .venv/bin/python docs/scripts/analysis_figures.py

writes docs/img/analysis/*.png and prints the numbers the page quotes. Takes about two minutes
the first time (the kernels compile)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from rt.analysis import figures as F
    from rt.analysis.commands import simulate_reference
    from rt.analysis.report import build_report
    from rt.analysis.run import load_run
    from sim_stand.cli import REPO, run_demo

    out = ROOT / "docs" / "img" / "analysis"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dockstand-docs-") as d:
        res = run_demo(REPO / "config" / "cases" / "nominal.toml", log_dir=Path(d))
        run = load_run(res["log"])
        ref = load_run(simulate_reference(run, Path(d) / "digital.dslog"))
        rep = build_report(run, ref)
        for name, page in (("title", F.title_page), ("wrench", F.wrench_page), ("relative", F.relative_page),
                           ("platform", F.platform_page), ("timing", F.timing_page), ("energy", F.energy_page),
                           ("fidelity", F.fidelity_page)):
            fig = page(rep)
            fig.savefig(out / f"{name}.png", dpi=70)
            print(f"wrote {out / (name + '.png')}")
        for k, v in F.energy_rows(rep):
            print(f"{k}: {v}")
        for k, v in F.fidelity_rows(rep.comparison):
            print(f"{k}: {v}")
        from rt.analysis.compare import span_note
        print(span_note(rep.comparison["fidelity"]))
        for k, v, _ in F.limit_rows(rep):
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
