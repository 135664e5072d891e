"""Campaign files: the shipped one loads (and check-config accepts it); bad files fail before any
work with the file, the key and the reason."""
from __future__ import annotations

import subprocess
import sys

import pytest

from rt.config import ConfigError
from sim_stand.campaign.spec import PARAMETERS, load_campaign

from campaign_helpers import NOMINAL, ROOT

SHIPPED = ROOT / "config" / "campaigns" / "nominal_dispersed.toml"


def test_shipped_campaign_loads():
    c = load_campaign(SHIPPED)
    assert c.samples >= 100 and c.sampling in ("random", "lhs", "sobol")
    assert set(c.names) <= set(PARAMETERS)
    # initial conditions, mass properties and mechanism coefficients are all dispersed
    assert {"position_y_m", "closing_velocity_mps", "misalignment_1_deg", "active_rate_x_dps",
            "active_mass_scale", "damper_scale", "spring_scale", "friction_scale"} <= set(c.names)
    pos = next(d for d in c.dispersions if d.name == "position_y_m")
    assert pos.mean == pytest.approx(0.02)               # the case's own value
    assert len(c.digest) == 64


def test_check_config_validates_campaigns():
    r = subprocess.run([sys.executable, "-m", "rt.cli", "check-config", str(SHIPPED)], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "ok:" in r.stdout


BASE = f'''case = "{NOMINAL}"
samples = 10
seed = 1
'''

BAD = {
    "unknown_key": (BASE + "sampels = 3\n", "sampels", "unknown key"),
    "unknown_parameter": (BASE + '[dispersions.position_q_m]\ndistribution = "normal"\nsigma = 0.1\n',
                          "dispersions.position_q_m", "unknown parameter"),
    "unknown_key_in_dispersion": (BASE + '[dispersions.position_y_m]\ndistribution = "normal"\nsigma = 0.1\n'
                                  'sgima = 2\n', "dispersions.position_y_m.sgima", "unknown key"),
    "negative_sigma": (BASE + '[dispersions.position_y_m]\ndistribution = "normal"\nsigma = -0.01\n',
                       "dispersions.position_y_m.sigma", "must be > 0"),
    "negative_three_sigma": (BASE + '[dispersions.position_y_m]\ndistribution = "normal"\nthree_sigma = -0.03\n',
                             "dispersions.position_y_m.three_sigma", "must be > 0"),
    "zero_samples": (BASE.replace("samples = 10", "samples = 0"), "samples", ">= 1"),
    "bounds_reversed": (BASE + '[dispersions.closing_velocity_mps]\ndistribution = "uniform"\n'
                        'bounds = [0.2, 0.05]\n', "dispersions.closing_velocity_mps.bounds", "reversed"),
    "bounds_missing": (BASE + '[dispersions.closing_velocity_mps]\ndistribution = "truncated_normal"\n'
                       'sigma = 0.01\n', "dispersions.closing_velocity_mps.bounds", "required key is missing"),
    "bad_distribution": (BASE + '[dispersions.position_y_m]\ndistribution = "gauss"\nsigma = 0.1\n',
                         "dispersions.position_y_m.distribution", "must be one of"),
    "bad_sampling": (BASE + 'sampling = "halton"\n', "sampling", "must be one of"),
    "scale_not_positive": (BASE + '[dispersions.damper_scale]\ndistribution = "normal"\nsigma = 0.3\n',
                           "dispersions.damper_scale.sigma", "must stay > 0"),
    "missing_case": ('case = "nowhere.toml"\nsamples = 3\nseed = 1\n', "case", "file not found"),
    "tree_mechanism_dispersed": (BASE.replace("nominal.toml", "probe_cone.toml")
                                 + '[dispersions.damper_scale]\ndistribution = "uniform"\nbounds = [0.9, 1.1]\n',
                                 "dispersions", "tree mechanism"),
    "misspelt_three_sigma": (BASE + '[dispersions.position_y_m]\ndistribution = "normal"\nthree_sigmaa = 0.03\n',
                             "dispersions.position_y_m.three_sigmaa", "did you mean 'three_sigma'"),
    "no_spread": (BASE + '[dispersions.position_y_m]\ndistribution = "truncated_normal"\nbounds = [0.0, 0.04]\n',
                  "dispersions.position_y_m.sigma", "needs sigma or three_sigma"),
    "misalignment_beyond_90_names_three_sigma": (
        BASE + '[dispersions.misalignment_1_deg]\ndistribution = "normal"\nthree_sigma = 900.0\n',
        "dispersions.misalignment_1_deg.three_sigma", "beyond ±90°"),
    "sigma_and_three_sigma": (BASE + '[dispersions.position_y_m]\ndistribution = "normal"\nsigma = 0.1\n'
                              'three_sigma = 0.3\n', "dispersions.position_y_m.three_sigma", "not both"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_campaign_file_names_file_key_reason(tmp_path, name):
    text, key, words = BAD[name]
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_campaign(p)
    msg = str(e.value)
    assert msg.startswith(str(p) + ":"), msg
    assert f": {key}:" in msg, msg
    assert words in msg, msg


def test_campaign_run_refuses_a_bad_file_before_any_work(tmp_path):
    text, _, _ = BAD["negative_sigma"]
    p = tmp_path / "bad.toml"
    p.write_text(text)
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "rt.cli", "campaign", "run", str(p), "-o", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2
    assert r.stderr.startswith("error: ") and "sigma" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()                      # nothing started, nothing written
