"""Flight reconstruction: the initial conditions of a digital run recovered from its telemetry
(exported with the run-log exporter, sensor noise added) by least squares over simulations."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.csv as pc
import pytest

from rt.analysis.export import export_run
from rt.analysis.run import load_run
from rt.config.case import load_case
from sim_stand.campaign.apply import apply_case
from sim_stand.campaign.reconstruct import plot_fit, read_telemetry, reconstruct, TelemetryError, format_fit
from sim_stand.digital import DigitalSim

from campaign_helpers import NOMINAL, ROOT

pytestmark = pytest.mark.slow

# the flight's true initial conditions, 0.6 to 1.2 fit scales from the case's (nominal.toml)
TRUE = {"position_y_m": 0.028, "position_z_m": -0.016, "closing_velocity_mps": 0.106, "misalignment_2_deg": 0.2}
# stated tolerances of the recovery
TOL = {"position_y_m": 1e-3, "position_z_m": 1e-3, "closing_velocity_mps": 1e-3, "misalignment_2_deg": 0.1}
# sensor noise (1 sigma): the F/T sensor's (config/emulator/default.toml), 0.1 mm on the leg
# strokes, 1e-5 rad/s on the craft's rate gyros
NOISE = {"w_P.f": 2.67, "w_P.m": 0.5, "stroke.": 1e-4, "x.A.w_": 1e-5}


@pytest.fixture(scope="module")
def telemetry(tmp_path_factory):
    d = tmp_path_factory.mktemp("flight")
    case = load_case(NOMINAL)
    DigitalSim(apply_case(case, TRUE)).run(d / "flight.dslog")
    export_run(load_run(d / "flight.dslog"), "csv", d / "all.csv")
    table = pc.read_csv(d / "all.csv")
    rng = np.random.default_rng(2026)
    cols = {}
    for name in table.column_names:
        base = name.split(" [")[0]
        v = table.column(name).to_numpy().astype(float)
        if base == "t":
            cols[name] = v
        for prefix, sigma in NOISE.items():
            if base.startswith(prefix):
                cols[name] = v + rng.normal(0.0, sigma, v.size)
    pc.write_csv(pa.table(cols), d / "telemetry.csv")
    return d / "telemetry.csv"


@pytest.fixture(scope="module")
def fit(telemetry):
    return reconstruct(telemetry, NOMINAL, parameters=list(TRUE), starts=1)


def test_reconstruction_recovers_the_initial_conditions(fit):
    for name, true in TRUE.items():
        p = fit.parameters[name]
        assert abs(p["value"] - true) < TOL[name], (name, p, true)
        assert 0.0 < p["sigma"] < TOL[name]
        assert abs(p["value"] - true) < 5.0 * p["sigma"] + 1e-6, (name, p, true)
    assert fit.parameters["position_y_m"]["start"] == pytest.approx(0.02)        # started from the case
    assert fit.rms_residual < 0.3                       # near the noise: the fit explains the telemetry
    assert fit.success and 0.8 < fit.residual_to_noise < 1.5, fit.residual_to_noise
    cs = fit.contact_state
    assert cs["closing_speed_mps"] == pytest.approx(TRUE["closing_velocity_mps"], abs=1e-3)
    assert "w_P.fx" not in fit.channels and "stroke.leg1" in fit.channels and "x.A.w_x" in fit.channels


def test_a_fit_that_does_not_explain_the_telemetry_says_so(telemetry):
    """Stopped at the case's own values (no optimisation), 0.6 to 1.2 scales from the truth: the
    residual is far above the telemetry's noise, so the result is no success and says why."""
    bad = reconstruct(telemetry, NOMINAL, parameters=list(TRUE), starts=1, max_nfev=1, simplex_fev=0)
    assert not bad.success and bad.residual_to_noise > 10.0, bad.residual_to_noise
    assert "does not explain the telemetry" in format_fit(bad)


def test_plot_overlays_fit_and_telemetry(fit, tmp_path):
    plot_fit(fit, tmp_path / "fit.png")
    assert (tmp_path / "fit.png").stat().st_size > 10_000


def test_bad_telemetry_is_a_clear_error(telemetry, tmp_path):
    bad = tmp_path / "no_time.csv"
    pc.write_csv(pa.table({"stroke.leg1 [m]": np.zeros(20)}), bad)
    with pytest.raises(TelemetryError, match="no time column"):
        read_telemetry(bad)
    other = tmp_path / "x.csv"
    pc.write_csv(pa.table({"t": np.arange(20.0), "speed": np.zeros(20)}), other)
    with pytest.raises(TelemetryError, match="none of the known channels"):
        read_telemetry(other)
    r = subprocess.run([sys.executable, "-m", "rt.cli", "reconstruct", str(tmp_path / "t.txt"), "--case", str(NOMINAL)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "expected a .csv or .parquet" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "rt.cli", "reconstruct", str(telemetry), "--case", str(NOMINAL),
                        "--fit", "position_q_m"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "cannot fit position_q_m" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------- a HIL run's own export
@pytest.fixture(scope="module")
def hil_export(tmp_path_factory):
    """``dockstand export``'s CSV of a HIL demo run (the nominal case cut to 3 s), as written:
    its arming rows have no run time (t NaN)."""
    from sim_stand.cli import run_demo
    d = tmp_path_factory.mktemp("hil")
    text = NOMINAL.read_text().replace('duration_s = 10.0', 'duration_s = 3.0')
    text = text.replace('"../vehicles/', f'"{NOMINAL.parent.parent / "vehicles"}/')
    case = d / "nominal_3s.toml"
    case.write_text(text)
    res = run_demo(case, log_dir=d)
    out = d / "run.csv"
    export_run(load_run(res["log"]), "csv", out)
    return case, out


def test_reconstruct_reads_dockstand_exports_own_file(hil_export):
    """The documented input, ``dockstand export``'s file of a HIL run: the arming rows (t NaN)
    are left out and counted, the motion platform's and controller's columns ignored, the
    relative state and the vehicles' rates are channels."""
    _, csv = hil_export
    t_all = pc.read_csv(csv).column("t [s]").to_numpy()
    tel = read_telemetry(csv)
    assert tel.untimed == int(np.sum(~np.isfinite(t_all))) > 100
    assert tel.t.size == int(np.sum(np.isfinite(t_all))) and np.all(np.diff(tel.t) > 0)
    for k in ("w_P.fx", "rel_pose.x", "rel_pose.qz", "rel_twist.wz", "x.A.w_x"):
        assert k in tel.channels
    assert "rel_pose.qw" not in tel.channels and "cmd_pose.x" in tel.ignored


def test_reconstruct_of_a_hil_run_under_the_stands_conditions(hil_export):
    """Fitted under the stand's conditions (the stand's 1 g on the mechanism, the loop's
    coupling), the case's own initial conditions explain its HIL run: the fit stays within the
    loop's own differences (0.5 mm, 0.5 mm/s) of the case's values and explains the telemetry."""
    case, csv = hil_export
    fit = reconstruct(csv, case, parameters=["position_y_m", "closing_velocity_mps"], starts=1,
                      stand=ROOT / "config" / "stand.toml")
    assert fit.stand_conditions and fit.untimed_rows > 100 and fit.success, format_fit(fit)
    assert fit.parameters["position_y_m"]["value"] == pytest.approx(0.02, abs=5e-4)
    assert fit.parameters["closing_velocity_mps"]["value"] == pytest.approx(0.10, abs=5e-4)
    assert fit.rms_residual < 0.05 and "rel_pose.y" in fit.channels
    assert "under the stand's conditions" in format_fit(fit) and "rows without a run time" in format_fit(fit)


def test_a_local_fit_shows_its_simulations_on_stderr(telemetry):
    """A local fit runs for a minute on a HIL export: its bar counts the simulations (none of
    the fit is silent), and ends full where the fit stopped."""
    import io

    from rt.analysis.progress import Stages
    out = io.StringIO()
    fit = reconstruct(telemetry, NOMINAL, parameters=["position_y_m"], starts=1, max_nfev=2, simplex_fev=3,
                      progress=Stages("reconstruct", stream=out))
    frames = out.getvalue().replace("\r", "\n").splitlines()
    bar = [f for f in frames if f.startswith("dockstand reconstruct: local fit 1 of 1:")]
    assert bar, out.getvalue()
    sims = fit.simulations - 2           # less the scan's one point (the case's values) and the fitted run's
    assert sims >= 3 and f"{sims}/{sims} simulations" in bar[-1] and "100%" in bar[-1], bar[-1]
