"""Regenerate docs/img/berthing_series.png (docs/models/berthing.md §7): the berthing case
all-digitally (arm + payload + snare) and on the emulated stand (lockstep demo, the controller
integrating the arm under the measured wrench): joint angles, the links' tip deflections, the
main spacecraft's attitude drift and the snare's force, before and after capture:

    .venv/bin/python docs/scripts/berthing_figure.py

matplotlib, docs only."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _arm_series(run, fl):
    """Joint angles (deg), tip deflections (mm, |phi(L) b| per link) and the attitude drift of the
    main spacecraft (deg) from the logged flight state."""
    arm = fl.arm
    x = run.field("x")[:, :fl.nq]
    th = np.degrees(x[:, [arm.i_t2 + 1, arm.i_t3 + 1, arm.i_t4 + 1]])
    defl = []
    for link, i_b, m in ((arm.la, arm.i_b2, arm.ma), (arm.lb, arm.i_b3, arm.mb)):
        b = x[:, i_b + 1:i_b + 1 + 2 * m]
        defl.append(1e3 * np.hypot(b[:, :m] @ link[3], b[:, m:] @ link[3]))
    att = np.degrees(2.0 * np.arccos(np.clip(np.abs(x[:, 3]), 0.0, 1.0)))
    return th, np.column_stack(defl), att


def main() -> int:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rt.analysis.run import load_run
    from rt.config.case import load_case
    from rt.dynamics.berthing_flight import BerthingFlight
    from sim_stand.cli import REPO, run_demo
    from sim_stand.digital import DigitalSim

    case_path = REPO / "config" / "cases" / "berthing.toml"
    case = load_case(case_path)
    fl = BerthingFlight(case)
    with tempfile.TemporaryDirectory(prefix="dockstand-docs-") as d:
        dig = DigitalSim(case, duration_s=8.0).run(Path(d) / "digital.dslog")
        hil = run_demo(case_path, log_dir=Path(d))
        D, H = load_run(dig.log_path), load_run(hil["log"])
        tD = D.t
        tH = H.t
        okH = np.isfinite(tH) & (tH >= 0.0)
        thD, dfD, atD = _arm_series(D, fl)
        thH, dfH, atH = _arm_series(H, fl)
        fig, ax = plt.subplots(4, 1, figsize=(8, 10), sharex=True)
        for j, name in enumerate(("shoulder", "elbow", "wrist")):
            ax[0].plot(tD, thD[:, j] - thD[0, j], label=f"{name} (digital)")
            ax[0].plot(tH[okH], thH[okH, j] - thH[okH][0, j], "--", label=f"{name} (HIL)")
        ax[0].set_ylabel("joint angle change (deg)")
        for j, name in enumerate(("upper boom", "lower boom")):
            ax[1].plot(tD, dfD[:, j], label=f"{name} (digital)")
            ax[1].plot(tH[okH], dfH[okH, j], "--", label=f"{name} (HIL)")
        ax[1].set_ylabel("tip deflection (mm)")
        ax[2].plot(tD, atD, label="digital")
        ax[2].plot(tH[okH], atH[okH], "--", label="HIL")
        ax[2].set_ylabel("main spacecraft\nattitude drift (deg)")
        ax[3].plot(tD, np.linalg.norm(D.field("w_P")[:, :3], axis=1), label="digital")
        ax[3].plot(tH[okH], np.linalg.norm(H.field("w_P")[okH, :3], axis=1), "--", label="HIL (measured)")
        ax[3].set_ylabel("snare force (N)")
        ax[3].set_xlabel("time (s)")
        for a in ax:
            a.axvline(dig.time_to_capture_s, color="k", lw=0.8, ls=":")
            a.grid(True, alpha=0.3)
            a.legend(fontsize=7, ncol=2)
        ax[0].set_title(f"Berthing: HTV-class payload at 2 cm/s, capture at {dig.time_to_capture_s:.3f} s (dotted)")
        fig.tight_layout()
        out = ROOT / "docs" / "img" / "berthing_series.png"
        fig.savefig(out, dpi=110)
        print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
