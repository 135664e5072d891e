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
