import os

import rt  # noqa: F401  (numba's cache location is set before any test module imports numba)

import hypothesis
import pytest

# the helper modules tests share (imported by name) report a failed assert's operands as a test does
pytest.register_assert_rewrite("campaign_helpers", "config_edits", "reference_agreement", "rig_steps")

# Deterministic property tests: fixed seed (derandomize), no deadline (numba compiles on first call).
hypothesis.settings.register_profile("dockstand", derandomize=True, deadline=None, max_examples=200,
                                     print_blob=True)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dockstand"))


# A cold kernel cache (fresh clone, CI): compile the heaviest kernels on the second core while
# the first runs the tests (tests/_precompile.py). Lowest priority, so wall-clock tests keep
# their CPU; set DOCKSTAND_NO_PRECOMPILE=1 to leave it out.
_precompiler = None


def pytest_sessionstart(session):
    global _precompiler
    import subprocess
    import sys
    import tempfile

    from _precompile import marker_path      # tests/ is on sys.path (rootdir conftest)

    if os.environ.get("DOCKSTAND_NO_PRECOMPILE") or marker_path().exists() \
            or hasattr(session.config, "workerinput"):
        return
    tmp = tempfile.mkdtemp(prefix="dockstand-precompile-")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TMPDIR=tmp,
               PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    log = marker_path().with_name("precompile.log")
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        _precompiler = subprocess.Popen(
            [sys.executable, os.path.join(os.path.dirname(__file__), "_precompile.py")], env=env,
            cwd=root,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "w"),
            preexec_fn=lambda: os.nice(19), start_new_session=True)
    except OSError:
        _precompiler = None
    _precompiler_tmp.append(tmp)


_precompiler_tmp: list = []


def pytest_sessionfinish(session, exitstatus):
    import shutil
    import signal

    if _precompiler is not None and _precompiler.poll() is None:
        try:
            os.killpg(_precompiler.pid, signal.SIGTERM)
            _precompiler.wait(timeout=10)
        except Exception:      # noqa: BLE001 -- gone already, or slow to go: the session ends anyway
            pass
    for t in _precompiler_tmp:
        shutil.rmtree(t, ignore_errors=True)
