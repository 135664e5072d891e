"""Regenerate docs/img/probe_cone_series.png (docs/models/probe_cone.md §4-5): the probe-cone
case on the emulated stand (lockstep demo, compensation on) and its digital reference under the
stand's conditions; the axial force on the passive unit and the rod's stroke:

    .venv/bin/python docs/scripts/probe_cone_figure.py

matplotlib, docs only."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> int:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rt.analysis.commands import simulate_reference
    from rt.analysis.run import load_run
    from sim_stand.cli import REPO, run_demo

    with tempfile.TemporaryDirectory(prefix="dockstand-docs-") as d:
        res = run_demo(REPO / "config" / "cases" / "probe_cone.toml", log_dir=Path(d))
        hil = load_run(res["log"])
        ref = load_run(simulate_reference(hil, Path(d) / "digital.dslog"))
        ok = np.isfinite(hil.t)
        fig, ax = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
        ax[0].plot(hil.t[ok], hil.field("w_P")[ok, 0], lw=0.8, label="HIL: measured (100 Hz sensing filter)")
        ax[0].plot(ref.t, ref.field("w_P")[:, 0], lw=0.8, label="digital reference, stand conditions")
        ax[0].set_ylabel("axial force on P, F_x (N)")
        ax[0].legend(loc="lower left")
        ax[1].plot(ref.t, ref.field("joint_state")[:, 2] * 1e3, lw=0.8)
        ax[1].set_ylabel("rod stroke (mm)")
        ax[1].set_xlabel("t (s)")
        fig.suptitle("probe-cone: cone, edge, capture, bottom (spring, brake), release, latches on the stops")
        fig.tight_layout()
        out = ROOT / "docs" / "img" / "probe_cone_series.png"
        fig.savefig(out, dpi=90)
        print(out, "captured", res["captured"], "at", res["time_to_capture_s"], "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
