"""Every subcommand given a user's mistake answers one line and a non-zero status, never a
traceback (issue 21 item 6), run as a new user would: a real process, from a folder that is
not the source tree."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rt import SOURCE_ROOT

CASES = [
    (["check-config", "nope.toml"], 1, "cannot tell the kind"),
    (["run", "--stand", "nope.toml"], 2, "file not found"),
    (["ctl", "status", "--endpoint", "foo"], 2, "not a usable ZeroMQ endpoint"),
    (["ctl", "status", "--timeout", "-1"], 2, "must be a positive number of seconds"),
    (["ctl", "status", "--timeout", "0.2", "--endpoint", "tcp://127.0.0.1:1"], 3, "no answer from tcp://127.0.0.1:1"),
    (["ctl", "status", "--stand", "nope.toml"], 2, "file not found"),
    (["ctl", "load", "--endpoint", "tcp://127.0.0.1:1", "--timeout", "0.2"], 2, "load needs CASE"),
    (["emulate", "--stand", "nope.toml"], 2, "file not found"),
    (["simulate", "--case", "nope.toml"], 2, "file not found"),
    (["demo", "--case", "nope.toml"], 2, "file not found"),
    (["compare", "README.md", "README.md"], 2, "not a run log"),
    (["compare", "nope.dslog", "x"], 2, "no such file"),
    (["report", "nope.dslog"], 2, "no such file"),
    (["export", "nope.dslog", "--format", "csv"], 2, "no such file"),
    (["recompute", "nope.dslog"], 2, "no such file"),
    (["recompute", "x.dslog", "--set", "foo=1"], 2, "unknown key"),
    (["bench", "--only", "nope"], 1, "unknown area nope"),
]


@pytest.mark.parametrize("argv, rc, msg", CASES, ids=[" ".join(a) for a, _, _ in CASES])
def test_a_user_mistake_is_one_line(tmp_path, argv, rc, msg):
    (tmp_path / "README.md").write_text("# not a log\n")
    (tmp_path / "bad_stand.toml").write_text('name = "x"\n[loop]\nrate_hzz = 1000\n')
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT}
    env.pop("DOCKSTAND_STAND", None)
    p = subprocess.run([sys.executable, "-m", "rt.cli", *argv], capture_output=True, text=True, cwd=tmp_path,
                       env=env, timeout=60)
    assert p.returncode == rc, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("usage:")
             and not ln.startswith(" ") and "(the installed default" not in ln]
    assert len(lines) == 1 and msg in lines[0], p.stderr


def test_ctl_names_the_stand_it_uses_from_outside_the_source_tree(tmp_path):
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT}
    env.pop("DOCKSTAND_STAND", None)
    p = subprocess.run([sys.executable, "-m", "rt.cli", "ctl", "status", "--timeout", "0.2"], capture_output=True,
                       text=True, cwd=tmp_path, env=env, timeout=60)
    assert f"stand {SOURCE_ROOT}/config/stand.toml (the installed default" in p.stderr
    env["DOCKSTAND_STAND"] = str(tmp_path / "mine.toml")
    p = subprocess.run([sys.executable, "-m", "rt.cli", "ctl", "status"], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=60)
    assert p.returncode == 2 and "($DOCKSTAND_STAND" in p.stderr and "mine.toml: file not found" in p.stderr


def test_check_config_reports_every_unknown_key_and_the_first_wrong_value(tmp_path):
    good = open(os.path.join(SOURCE_ROOT, "config", "stand.toml")).read()
    bad = good.replace("servo_s", "serv_s").replace("length_max_m", "lenght_max_m")
    bad = bad.replace("[loop]", "[loop]\nrate_hzz = 5", 1)
    f = tmp_path / "stand.toml"
    f.write_text(bad)
    p = subprocess.run([sys.executable, "-m", "rt.cli", "check-config", str(f)], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": SOURCE_ROOT}, timeout=60)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert f"error: {f}: loop.rate_hzz: unknown key (did you mean 'rate_hz'?)" in lines
    # every unknown key up to the first wrong or missing value (the loader cannot go on past
    # it: [delays] comes after [hexapod] and is not reached)
    assert len(lines) == 2
    assert any("hexapod.length_max_m: required key is missing (is 'lenght_max_m' a misspelling?)" in ln
               for ln in lines)


def test_help_lists_every_command_once_by_who_uses_it():
    """``dockstand --help`` groups the commands for the operator, the analyst and the
    integrator; every registered command appears exactly once, none outside a heading."""
    from rt.cli import GROUPS, build_parser
    p = build_parser()
    text = p.format_help()
    sub = next(a for a in p._actions if a.dest == "command")
    names = list(sub.choices)
    heads = [h for h, _ in GROUPS]
    assert [ln[:-1] for ln in text.splitlines() if ln[:-1] in heads] == heads
    lines = text.splitlines()
    for n in names:
        hits = [ln for ln in lines if ln.startswith(f"  {n} ")]
        assert len(hits) == 1, (n, hits)
    assert "dispatch only" not in text and "COMMAND ..." in text.splitlines()[0]
    assert max(len(ln) for ln in lines) <= 100
    assert not [n for n in names if not any(n in g for _, g in GROUPS)]     # no command left "other"


def test_a_commands_help_names_it_after_dockstand():
    from rt.cli import build_parser
    p = build_parser()
    sub = next(a for a in p._actions if a.dest == "command")
    assert sub.choices["run"].format_usage().startswith("usage: dockstand run [-h]")
