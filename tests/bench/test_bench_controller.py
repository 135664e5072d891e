"""The controller benchmark runs end to end on a fresh machine and measures what it says:
every timed cycle a DYNAMICS cycle fed by the replayed devices, then by the rig. No
wall-clock limits here (docs/bench.md: figures are printed, not asserted)."""
from __future__ import annotations

import pytest
import math

import bench.controller as BC


@pytest.mark.slow
def test_controller_cycle_figures_come_from_dynamics_cycles(monkeypatch):
    # fewer cycles than --quick's 10 000 / 5 000 (the rig makes each device frame in Python: most
    # of the test's time): the figures' making is what is tested, not their precision
    out = BC._controller_cycle(quick=True, cycles=(3000, 1500))
    assert out["controller_cycle_ran_dynamics"] is True, out.get("controller_cycle_note")
    assert out["controller_cycle_cycles"] == 3000
    assert "controller_cycle_note" not in out
    for k in ("controller_cycle_us_p50", "controller_cycle_us_p99", "controller_cycle_rig_us_p50",
              "controller_cycle_rig_us_p99", "controller_cycle_noise_floor_us_p99", "controller_read_us_p50",
              "controller_update_us_p50", "controller_write_us_p50", "controller_kernel_call_us_packed",
              "controller_kernel_compiled_us", "controller_cycle_block_p50_us_min",
              "controller_cycle_block_p50_us_max"):
        assert math.isfinite(out[k]) and out[k] > 0.0, k
    assert out["controller_cycle_us_p99"] >= out["controller_cycle_us_p50"]
    assert out["controller_cycle_block_p50_us_min"] <= out["controller_cycle_us_p50"] \
        <= out["controller_cycle_block_p50_us_max"]


def test_block_p50_range_is_the_spread_of_the_blocks_medians():
    import numpy as np

    cycle = np.array([1000] * 3 + [5000] * 2 + [2000] * 3 + [9000] * 2 + [7000] * 5 + [1], dtype=np.int64)
    # blocks of 5: medians 1000, 2000, 7000 ns; the 16th cycle makes no whole block
    assert BC._block_p50_range(cycle, 5) == {"controller_cycle_block_p50_us_min": 1.0,
                                             "controller_cycle_block_p50_us_max": 7.0}
    assert BC._block_p50_range(cycle[:4], 5) == {}


def test_replayed_device_frames_continue_the_rigs():
    """The replayed frames are what the devices would send next: consecutive sequence numbers
    after the rig's, valid frames the drivers decode, sensor counts that change every frame."""
    import tempfile

    from drivers.framing import OK, check_frame, frame_seq
    from drivers.ft_sensor import decode_sensor_frame
    from drivers.motion_platform import decode_status
    from rt.control.controller import Phase
    from sim_stand.kinematic_rig import Rig

    with tempfile.TemporaryDirectory() as d:
        rig = Rig(d)
        try:
            rig.ctl.warm_up()
            rig.arm_and_start(BC._hold_case(100, rig.ctl.period_s))
            rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 5000)
            s_seq, p_seq = rig.sdev.seq, rig.pdev.seq
            S, P = BC._device_frames(rig, 5)
        finally:
            rig.close()
    assert all(check_frame(f) == OK for f in S + P)
    assert [frame_seq(f) for f in S] == [(s_seq + 1 + i) & 0xFFFFFFFF for i in range(5)]
    assert [frame_seq(f) for f in P] == [(p_seq + 1 + i) & 0xFFFFFFFF for i in range(5)]
    counts = [decode_sensor_frame(f).counts.tolist() for f in S]
    assert all(a != b for a, b in zip(counts, counts[1:]))
    assert all(decode_status(f) is not None for f in P)


def test_lateness_figures_use_the_default_stands_wait():
    """``loop_lateness_*`` is measured with config/stand.toml's wait (hybrid, adaptive margin,
    the loop thread's timer slack); the fixed-margin and spin variants differ only in that."""
    from rt.config.stand import load_stand

    st = load_stand(BC.DEFAULT_STAND)
    c, slack = BC._default_clock()
    assert (c.policy, c.margin_ns, c.adaptive, c.half_life_ns) == (
        st.wait_policy, st.spin_margin_ns, st.adaptive_margin, st.margin_half_life_ns)
    assert slack == st.realtime.timer_slack_ns
    f, _ = BC._default_clock(adaptive=False)
    assert not f.adaptive and f.margin_ns == st.spin_margin_ns
    s = BC._lateness(c, slack, 0.2)
    assert s["missed"] >= 0 and 0.0 <= s["sleep_share"] <= 1.0 and s["late_sleeps"] <= c.sleeps
    assert c.sleeps > 0 or c.margin_now_ns() >= BC.PERIOD_NS // 2   # it slept, or the OS made it spin
