"""dockstand calibrate-loop (issue 26 item 4) as a crew runs it, in its own process: both rod
cases at the fidelity settings pass the 0.05 % bound or are within the noise floor of it; the identified delay and the energy
balance are printed; the exit code is the verdict."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sim_stand.cli import REPO


@pytest.mark.slow
def test_calibrate_loop_at_the_fidelity_settings(tmp_path):
    p = subprocess.run([sys.executable, "-m", "rt.cli", "calibrate-loop", "--identify", "feed", "--contact-gate",
                        "--json", "--log-dir", str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout)
    # PASS: within the 0.05 % bound; WITHIN_NOISE: above it but within 2 sigma of the run's noise
    # floor (~0.08 % 1 sigma at this rod's 8 N 1 sigma noise: one run cannot resolve 0.05 %)
    assert res["verdict"] in ("PASS", "WITHIN_NOISE") and res["identify"] == "feed" and res["contact_gate"] is True
    assert [r["case"] for r in res["cases"]] == ["elastic_rod", "elastic_rod_damped"]
    for r in res["cases"]:
        assert 0.04 < r["noise_floor_pct"] < 0.15, r["noise_floor_pct"]
        expect = "PASS" if abs(r["error_pct"]) <= 0.05 else "WITHIN_NOISE"
        assert abs(r["error_pct"]) <= 0.05 + 2.0 * r["noise_floor_pct"] and r["verdict"] == expect and r["trip"] is None
        assert r["delay_identified_s"] == pytest.approx(3.30e-3, rel=0.01)
        assert r["approach_j"] == pytest.approx(8.0, rel=1e-6)          # 1600 kg at 0.1 m/s
        assert r["injected_j"] == pytest.approx(r["approach_j"] * (r["cor"] ** 2 - r["cor_ideal"] ** 2), rel=1e-12)
        # the servo's acceleration offset, from the run log's delay record (its oracle is in
        # tests/rt/stand/test_delay_estimator.py): positive for zeta 0.8, of the order of 1/w_n^2
        assert 1e-7 < r["kappa_s2"] < 2e-6 and 0 < r["first_order_lag_s"] < r["delay_identified_s"]


def test_calibrate_loop_names_a_bad_stand(tmp_path):
    bad = tmp_path / "stand.toml"
    bad.write_text((REPO / "config" / "stand.toml").read_text().replace('identify = "feed"', 'identify = "always"'))
    p = subprocess.run([sys.executable, "-m", "rt.cli", "calibrate-loop", "--stand", str(bad)], cwd=REPO,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "delays.identify" in p.stderr and str(bad) in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.slow
def test_a_known_lead_error_fails_whatever_the_noise(tmp_path):
    """A stand that leads by its configured delay (identify = monitor: 3.5 ms, against the
    platform's 3.3 ms; no gate): FAIL on the lead alone, named with its expected error
    -pi w dtau / 2 and the fix; the noise floor counts the whole run without the gate."""
    p = subprocess.run([sys.executable, "-m", "rt.cli", "calibrate-loop", "--json", "--identify", "monitor",
                        "--no-contact-gate", "--log-dir", str(tmp_path)],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 1, p.stderr[-2000:]
    res = json.loads(p.stdout)
    assert res["verdict"] == "FAIL" and res["identify"] == "monitor" and res["contact_gate"] is False
    first_order = -100 * 3.141592653589793 * 12.5 * 0.2e-3 / 2     # w = sqrt(2.5e5 / 1600) = 12.5 rad/s, dtau 0.2 ms
    for r in res["cases"]:
        assert r["verdict"] == "FAIL" and r["trip"] is None
        assert r["lead_platform_s"] == pytest.approx(3.5e-3, rel=1e-3)
        assert r["noise_floor_pct"] > 0.15          # the whole run's noise, not the contact's
    und, damped = (r["lead_error_pct_expected"] for r in res["cases"])
    assert und == pytest.approx(first_order, rel=0.01)              # -pi w dtau / 2, undamped
    assert 0.95 * first_order < damped < 0.8 * first_order          # a damped rod is less sensitive to the lead
    # the audit's loop share is the lead's energy: 2 x -0.39 % of the approach energy, to the noise
    audit = res["cases"][0]["energy_audit"]
    assert audit["injected_pct"] == pytest.approx(2 * res["cases"][0]["lead_error_pct_expected"], abs=0.1)


@pytest.mark.slow
def test_calibrate_loop_takes_the_stand_from_the_environment_and_refuses_bad_options(tmp_path):
    feed = tmp_path / "stand.toml"
    feed.write_text((REPO / "config" / "stand.toml").read_text())      # the shipped stand: identify = "feed"
    assert 'identify = "feed"' in feed.read_text()
    env = {**__import__("os").environ, "DOCKSTAND_STAND": str(feed)}
    p = subprocess.run([sys.executable, "-m", "rt.cli", "calibrate-loop", "--json", "--contact-gate", "--log-dir",
                        str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout)["identify"] == "feed" and str(feed) in p.stderr and "$DOCKSTAND_STAND" in p.stderr
    for argv, msg in ((["--bound-pct", "0"], "--bound-pct must be > 0"),
                      (["--log-dir", "/proc/no/such"], "--log-dir /proc/no/such")):
        p = subprocess.run([sys.executable, "-m", "rt.cli", "calibrate-loop", *argv], cwd=REPO, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr
