"""Every number in a config file has a physical range (issue 38): each numeric key of every
shipped file of every kind is read with a lower and an upper bound — the reader's own, or its
unit's (rt.config._schema.UNIT_RANGES) — and a number outside it is refused by name with the
range (1e300 for a closing velocity, 1e14 stale cycles)."""
from __future__ import annotations

from pathlib import Path

import pytest

from rt.config import ConfigError, load_any
from rt.config._schema import RANGES

REPO = Path(__file__).resolve().parents[3]
SHIPPED = sorted(p for p in (REPO / "config").rglob("*.toml"))


def test_every_number_read_from_a_shipped_file_has_a_range():
    seen = []
    token = RANGES.set(seen)
    try:
        for p in SHIPPED:
            load_any(p)
    finally:
        RANGES.reset(token)
    assert len(seen) > 200
    open_ended = sorted({f"{Path(f).relative_to(REPO)}: {k} [{lo}, {hi}]" for f, k, lo, hi in seen
                         if lo is None or hi is None})
    assert not open_ended, "numbers read without a physical range:\n" + "\n".join(open_ended)


@pytest.mark.parametrize("edit, key, words", [
    (("closing_velocity_mps = 0.10", "closing_velocity_mps = 1e300"), "closing_velocity_mps", "[-100, 100]"),
    (("duration_s = 3.0", "duration_s = 1e200"), "duration_s", ""),
])
def test_an_absurd_case_number_is_refused_with_its_range(tmp_path, edit, key, words):
    src = (REPO / "config" / "cases" / "elastic_rod.toml").read_text().replace("../vehicles/",
                                                                                f"{REPO}/config/vehicles/")
    assert edit[0] in src
    p = tmp_path / "cases" / "c.toml"
    p.parent.mkdir()
    p.write_text(src.replace(edit[0], edit[1]))
    with pytest.raises(ConfigError) as e:
        load_any(p)
    assert key in str(e.value) and words in str(e.value), str(e.value)


def test_absurd_stand_counts_are_refused(tmp_path):
    src = (REPO / "config" / "stand.toml").read_text()
    p = tmp_path / "stand.toml"
    p.write_text(src.replace("stale_cycles = 5 ", "stale_cycles = 100000000000000 ", 1))
    with pytest.raises(ConfigError) as e:
        load_any(p)
    assert "stale_cycles" in str(e.value), str(e.value)
