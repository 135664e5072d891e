"""``check-config`` tells a file's kind from what it holds when neither its folder nor its name
says (issue 38: ``check-config my-stand.toml`` said it could not tell)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rt.config import ConfigError, kind_of

REPO = Path(__file__).resolve().parents[3]


def test_kind_from_content(tmp_path):
    shutil.copy(REPO / "config" / "stand.toml", tmp_path / "my-stand.toml")
    assert kind_of(tmp_path / "my-stand.toml") == "stand"
    case = (REPO / "config" / "cases" / "nominal.toml").read_text().replace("../vehicles/", f"{REPO}/config/vehicles/")
    (tmp_path / "docking-42.toml").write_text(case)
    assert kind_of(tmp_path / "docking-42.toml") == "case"
    (tmp_path / "odd.toml").write_text("x = 1\n")
    with pytest.raises(ConfigError, match="cannot tell the kind"):
        kind_of(tmp_path / "odd.toml")
    r = subprocess.run([sys.executable, "-m", "rt.cli", "check-config", str(tmp_path / "my-stand.toml")],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0 and "ok:" in r.stdout, r.stdout + r.stderr
