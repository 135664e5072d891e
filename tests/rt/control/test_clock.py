"""WallClock's hybrid wait with a scripted OS: the sleeps it asks for, the adaptive margin's
peak and decay (exact, from the decay law), its counters, and that no wait ever returns before
its deadline. The OS is a fake clock whose sleeps come back late by a scripted oversleep and
whose spin reads advance it by 1 us, so every number here is deterministic."""
import math

import pytest

from rt.control.clock import WallClock

P = 1_000_000         # 1 ms period
HL = 1_000_000_000    # 1 s half-life


class ScriptedOS:
    """``now()`` advances ``read_ns`` (1 us) per read (a spin costs time); ``sleep(s)`` advances
    by the asked duration plus the next scripted oversleep and records what was asked."""

    def __init__(self, oversleeps=(), read_ns=1_000, held=(), held_every=None):
        self.t = 10 * P
        self.over = list(oversleeps)
        # (k, H): after the next wake, the k-th clock read finds the thread held up H ns
        self.held = list(held)
        self.held_every = held_every     # the same (k, H) after every wake once ``held`` is used up
        self.asked = []
        self.read_ns = read_ns
        self._hold = None
        self._reads = 0

    def now(self) -> int:
        self.t += self.read_ns
        self._reads += 1
        if self._hold is not None and self._reads == self._hold[0]:
            self.t += self._hold[1]
            self._hold = None
        return self.t

    def sleep(self, s: float) -> None:
        ns = round(s * 1e9)
        self.asked.append(ns)
        self.t += ns + (self.over.pop(0) if self.over else 0)
        self._reads = 0
        self._hold = self.held.pop(0) if self.held else self.held_every


def clock(os_, adaptive=True, margin=200_000, policy="hybrid"):
    return WallClock(policy, margin, adaptive=adaptive, half_life_ns=HL, sleep=os_.sleep, now_ns=os_.now)


def test_fixed_margin_sleeps_to_the_margin_and_counts_late_sleeps():
    os_ = ScriptedOS([50_000, 500_000, 0])
    c = clock(os_, adaptive=False)
    for k in range(3):
        d = os_.t + P
        t_call = os_.t + 1_000                  # what the wait's first now() reads
        woke = c.wait_until(d)
        assert woke >= d
        assert os_.asked[k] == d - 200_000 - t_call  # sleeps to 200 us before the deadline
    assert c.sleeps == 3 and c.late_sleeps == 1 and c.max_oversleep_ns == 501_000  # + the 1 us read
    assert c.margin_now_ns() == 200_000       # a fixed margin never moves
    r = c.report()
    assert r["late_sleeps"] == 1 and r["margin_us"] == 200.0 and not r["adaptive"]


def test_adaptive_margin_takes_the_oversleep_peak_and_halves_per_half_life():
    os_ = ScriptedOS([600_000])
    c = clock(os_)
    d = os_.t + P
    c.wait_until(d)                            # this sleep comes back 600 us late
    assert c.late_sleeps == 1
    t_peak = d - 200_000 + 601_000             # the wake time that set the peak (+ the 1 us read)
    assert c._peak == 601_000.0 and c._peak_t == t_peak
    for elapsed in (0.25 * HL, HL, 1.5 * HL):
        os_.t = t_peak + int(elapsed) - 1_000   # margin_now_ns reads now() once (+1 us)
        want = 601_000 * math.exp(-math.log(2.0) * (elapsed / HL))
        assert c.margin_now_ns() == max(200_000, int(want)), elapsed
    os_.t = t_peak + int(2 * HL)
    assert c.margin_now_ns() == 200_000        # decayed below the minimum: the minimum


def test_adaptive_wait_sleeps_to_the_widened_margin_and_spins_when_it_exceeds_the_period():
    os_ = ScriptedOS([1_500_000])              # one 1.5 ms oversleep: longer than the period
    c = clock(os_)
    c.wait_until(os_.t + P)
    n_sleeps = c.sleeps
    for _ in range(50):                        # the next 50 ms: the margin is above the period
        d = os_.t + P
        assert c.wait_until(d) >= d
    assert c.sleeps == n_sleeps                # no sleep at all: spun every period
    # once the peak has decayed to 0.6 ms, the wait sleeps again, to that margin
    os_.t += int(HL * math.log2(1_500_000 / 600_000))
    d = os_.t + P
    t_call = os_.t + 1_000
    margin = c._peak * 0.5 ** ((t_call - c._peak_t) / HL)   # the decay law, written out
    assert 550_000 < margin < 650_000
    c.wait_until(d)
    assert c.sleeps == n_sleeps + 1
    assert abs(os_.asked[-1] - (d - margin - t_call)) <= 1.0


def test_the_peak_decays_while_the_loop_keeps_sleeping_and_only_late_wakes_restart_it():
    """One second of 1 ms periods after a 600 us oversleep, every sleep back 20 us late: the
    margin has halved (the on-time sleeps neither refresh nor raise the peak). Then a 250 us
    oversleep, between the minimum (200 us) and the widened margin (~300 us), is on time; a
    400 us one is late and restarts the peak."""
    os_ = ScriptedOS([600_000 - 10_000], read_ns=10_000)
    c = clock(os_)
    c.wait_until(os_.t + P)
    t_peak, peak = c._peak_t, c._peak
    assert peak == 600_000.0 and c.late_sleeps == 1
    while os_.t < t_peak + HL:                  # ~1000 periods, each sleep 20 us late
        os_.over.append(20_000)
        d = os_.t + P
        assert c.wait_until(d) >= d
    assert c.late_sleeps == 1 and c._peak_t == t_peak      # on-time sleeps leave the peak alone
    margin = c.margin_now_ns()
    want = peak * 0.5 ** ((os_.t - t_peak) / HL)    # os_.t: the time margin_now_ns read
    assert abs(margin - want) <= 1.0 and 280_000 < margin < 300_000
    # an oversleep between the minimum (200 us) and the widened margin: on time, no new peak
    os_.over.append(250_000 - 10_000)
    c.wait_until(os_.t + P)
    assert c.late_sleeps == 1 and c._peak_t == t_peak
    # one beyond the widened margin: late, and the peak restarts at it
    os_.over.append(400_000 - 10_000)
    c.wait_until(os_.t + P)
    assert c.late_sleeps == 2 and c._peak == 400_000.0


def test_a_wake_in_time_then_held_up_past_the_deadline_is_late_too():
    """On a VM the vCPU can be held up just after the sleep came back in time: the wait's cost
    runs to its first read at or past the deadline, so that wait is late and sets the peak;
    one held up less than the margin is not."""
    os_ = ScriptedOS([0, 0], held=[(1, 100_000), (1, 450_000)])
    c = clock(os_)
    d = os_.t + P
    c.wait_until(d)                            # held 100 us of a 200 us margin: in time
    assert c.sleeps == 1 and c.late_sleeps == 0 and c._peak == 0.0
    d = os_.t + P
    wake = d - 200_000
    woke = c.wait_until(d)
    assert woke == wake + 1_000 + 450_000      # the first read after the sleep, held 450 us
    assert c.late_sleeps == 1 and c._peak == woke - wake and c.max_oversleep_ns == woke - wake
    assert c.margin_now_ns() > 450_000


def test_a_hold_up_later_in_the_spin_sets_the_peak_to_the_minimum_plus_the_lateness():
    os_ = ScriptedOS([0], held=[(150, 120_000)])   # 150 us into the 200 us spin, held 120 us
    c = clock(os_)
    d = os_.t + P
    woke = c.wait_until(d)
    late = woke - d
    assert 60_000 < late < 80_000
    assert c.late_sleeps == 1 and c._peak == 200_000 + late
    assert c.max_oversleep_ns == 1_000             # the OS itself woke the thread in time


def test_hold_ups_that_no_margin_avoids_do_not_ratchet_the_margin():
    """Held up 30 us just before the deadline after every wake: each such wait is late by
    ~30 us whatever the margin, so the margin settles at the minimum plus that, instead of
    climbing by 30 us per late wait towards the whole period."""
    os_ = ScriptedOS(read_ns=5_000, held_every=(None, 30_000))
    c = clock(os_)
    for _ in range(2000):
        d = os_.t + P
        os_.held_every = ((c.margin_now_ns() - 5_000) // 5_000 - 1, 30_000)   # the read before the deadline
        c.wait_until(d)
    assert c.late_sleeps > 1000
    assert 200_000 < c.margin_now_ns() <= 200_000 + 30_000 + 2 * 5_000


def test_small_oversleeps_do_not_raise_the_peak_above_what_they_were():
    os_ = ScriptedOS([300_000] + [10_000] * 20)
    c = clock(os_)
    for _ in range(21):
        c.wait_until(os_.t + P)
    assert c._peak == 301_000.0                # later, smaller oversleeps leave the peak alone
    assert c.late_sleeps == 1 and c.sleeps == 21


def test_no_wait_returns_before_its_deadline_and_spin_never_sleeps():
    for policy in ("hybrid", "spin"):
        os_ = ScriptedOS([0, 900_000, 3_000_000, 0, 0])
        c = clock(os_, policy=policy)
        for _ in range(5):
            d = os_.t + P
            assert c.wait_until(d) >= d
        assert (c.sleeps == 0) == (policy == "spin")


def test_validation():
    with pytest.raises(ValueError, match="half_life_ns"):
        WallClock("hybrid", 100_000, adaptive=True, half_life_ns=0)
    with pytest.raises(ValueError, match="late_ns"):
        WallClock("hybrid", 100_000, late_ns=-1)
    c = WallClock("hybrid", 100_000, adaptive=True)
    t = c.now_ns() + 2_000_000
    assert c.wait_until(t) >= t
    assert c.report()["sleeps"] <= 1          # 0 if this thread was held up for 1.9 ms


def test_wall_clock_from_stand_takes_the_stands_wait_and_overrides():
    from types import SimpleNamespace

    st = SimpleNamespace(wait_policy="hybrid", spin_margin_ns=150_000, adaptive_margin=True,
                         margin_half_life_ns=2_000_000_000)
    c = WallClock.from_stand(st)
    assert (c.policy, c.margin_ns, c.adaptive, c.half_life_ns) == ("hybrid", 150_000, True, 2_000_000_000)
    s = WallClock.from_stand(st, policy="spin", adaptive=False)
    assert (s.policy, s.margin_ns, s.adaptive, s.half_life_ns) == ("spin", 150_000, False, 2_000_000_000)
