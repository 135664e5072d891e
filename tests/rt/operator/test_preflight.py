"""The pre-flight timing check (rt/operator/preflight.py): verdicts from a scripted clock whose
sleeps come back late by a known amount, and the real check on this machine."""
from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from rt import SOURCE_ROOT
from rt.control.clock import WallClock
from rt.operator.preflight import check_timing, judge


class ScriptedTime:
    """Virtual time: each read advances 1 us; a sleep of s seconds takes s plus ``over_ns``."""

    def __init__(self, over_ns: int, every: int = 1):
        self.t = 0
        self.over_ns = over_ns
        self.every = every
        self.sleeps = 0

    def now_ns(self) -> int:
        self.t += 1000
        return self.t

    def sleep(self, s: float) -> None:
        self.sleeps += 1
        self.t += int(s * 1e9) + (self.over_ns if self.sleeps % self.every == 0 else 0)


STAND = SimpleNamespace(rate_hz=1000.0)


@pytest.mark.parametrize("over_ns, every, verdict, missed", [
    (0, 1, "ok", 0),                 # wakes in time: only the 1 us clock reads
    (250_000, 1, "marginal", 0),     # every sleep 250 us late: 150 us past the 100 us margin, 15 % of a period
    (2_500_000, 500, "fails", 2),    # one sleep in 500 comes back 2.5 ms late: two deadlines missed each time
])
def test_verdicts_from_a_scripted_clock(over_ns, every, verdict, missed):
    st = ScriptedTime(over_ns, every)
    clock = WallClock("hybrid", 100_000, sleep=st.sleep, now_ns=st.now_ns)
    r = check_timing(STAND, 1.0, clock)
    assert r.wakeups == 1000 and r.verdict == verdict, r.line()
    assert (r.missed > 0) == (missed > 0)
    if verdict == "marginal":
        assert 140.0 < r.lateness_us_p99 < 160.0
    assert (r.advice == []) == (verdict == "ok")
    if verdict != "ok":
        assert any("spin" in a for a in r.advice)


def test_judge_thresholds():
    P = 1_000_000
    assert judge(np.full(100, 0.09 * P), 0, P) == "ok"
    assert judge(np.full(100, 0.2 * P), 0, P) == "marginal"
    late = np.zeros(1000)
    late[0] = 0.6 * P
    assert judge(late, 0, P) == "marginal"
    assert judge(np.zeros(10), 1, P) == "fails"
    assert judge(np.full(100, 0.6 * P), 0, P) == "fails"


def test_check_host_on_this_machine():
    p = subprocess.run([sys.executable, "-m", "rt.cli", "check-host", "--seconds", "0.5", "--json"],
                       capture_output=True, text=True, cwd=SOURCE_ROOT, timeout=60)
    r = json.loads(p.stdout)
    assert r["wakeups"] == 500 and r["verdict"] in ("ok", "marginal", "fails")
    assert p.returncode == (1 if r["verdict"] == "fails" else 0)
    assert 0.0 <= r["lateness_us_p50"] <= r["lateness_us_p99"] <= r["lateness_us_max"]
