"""The repository's promises: .ci/run runs exactly README's test command."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"Run the tests.*?```sh\n(.+?)\n```", text, re.S)
    assert m, "README must show the test command in a sh block after 'Run the tests'"
    return m.group(1).strip()


def test_ci_runs_readme_test_command_verbatim():
    cmd = readme_test_command()
    lines = [ln.strip() for ln in (ROOT / ".ci/run").read_text().splitlines()]
    assert cmd in lines
    assert "pytest" in cmd and "venv" in cmd


def test_numba_cache_lives_outside_the_tree_whichever_package_is_imported_first(tmp_path):
    """numba reads NUMBA_CACHE_DIR once, when it is imported: every package with kernels sets it
    (rt's import) before numba is imported, or numba caches next to the sources, where a
    kernel is checked only against its own file and keeps stale callees (rt/__init__.py)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["DOCKSTAND_CACHE"] = str(tmp_path)
    for mod in ("bench.controller", "sim_stand.world", "rt.control.kernels"):
        out = subprocess.run([sys.executable, "-c", f"import {mod}; from numba.core import config; "
                              "print(config.CACHE_DIR)"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().startswith(str(tmp_path / "numba")), (mod, out.stdout)
