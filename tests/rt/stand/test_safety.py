"""Every safety reason triggers (and only it); the safe-stop trajectory respects the
acceleration limits and stops along the current path."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from rt.stand import hexapod as HX
from rt.dynamics import spatial as SP
from rt.stand.safety import Reason, SafeStop, SafetyLimits, SafetyMonitor

G = HX.default_geometry()
LIM = SafetyLimits(stale_cycles=3, burst_window=10, crc_max=2, gap_max=2, overrun_streak_max=4)


def clean():
    return dict(pose_cmd=G.home.copy(), vel_cmd=np.zeros(6), acc_cmd=np.zeros(6), w_S=np.zeros(6),
                w_P=np.zeros(6), extra=np.zeros(5))


def run(mon, n=1, **kw):
    args = clean()
    flags = {}
    for k, v in kw.items():
        (args if k in args else flags)[k] = v
    code = 0
    for _ in range(n):
        code = mon.check(**args, **flags)
    return Reason(code)


def rot(rv):
    q = np.empty(4)
    SP.quat_from_rotvec(np.asarray(rv, float), q)
    return q


def test_all_clear():
    assert run(SafetyMonitor(LIM, G), n=20) is Reason.NONE


def with_(key, idx, val):
    a = clean()[key]
    a[idx] = val
    return a


CASES = [
    (Reason.NONFINITE, dict(pose_cmd=with_("pose_cmd", 2, np.nan))),
    (Reason.NONFINITE, dict(w_P=with_("w_P", 4, np.inf))),
    (Reason.NONFINITE, dict(extra=with_("extra", 3, np.nan))),
    (Reason.PLATFORM_ESTOP, dict(platform_estop=True)),
    (Reason.PLATFORM_FAULT, dict(platform_fault=True)),
    (Reason.FORCE_LIMIT, dict(w_S=with_("w_S", 2, -0.95 * 6250.0))),
    (Reason.TORQUE_LIMIT, dict(w_S=with_("w_S", 4, 390.0))),
    (Reason.POSITION_BOX, dict(pose_cmd=with_("pose_cmd", 0, 0.5))),
    (Reason.ORIENTATION_BOX, dict(pose_cmd=np.concatenate([G.home[:3], rot([0.0, 0.0, 0.6])]))),
    (Reason.COMMAND_VELOCITY, dict(vel_cmd=with_("vel_cmd", 1, 0.6))),
    (Reason.COMMAND_ANGULAR_VELOCITY, dict(vel_cmd=with_("vel_cmd", 5, -0.6))),
    (Reason.COMMAND_ACCELERATION, dict(acc_cmd=with_("acc_cmd", 0, 3.1))),
    (Reason.COMMAND_ANGULAR_ACCELERATION, dict(acc_cmd=with_("acc_cmd", 3, 3.1))),
    (Reason.OVERRUN_STREAK, dict(overrun_streak=4)),
    (Reason.HEARTBEAT_LOST, dict(heartbeat_lost=True)),
]


@pytest.mark.parametrize("reason, kw", CASES, ids=[f"{r.name}-{i}" for i, (r, _) in enumerate(CASES)])
def test_each_reason_trips_on_its_first_cycle(reason, kw):
    mon = SafetyMonitor(LIM, G)
    assert run(mon, n=2) is Reason.NONE
    assert run(mon, **kw) is reason
    assert mon.describe(int(reason))  # a sentence


def test_leg_range_trips():
    g = HX.HexapodGeometry(G.base, G.top, 2.0, 2.1, G.home, G.box)
    mon = SafetyMonitor(LIM, g)
    assert run(mon, pose_cmd=with_("pose_cmd", 2, G.home[2] + 0.2)) is Reason.LEG_TOO_LONG
    assert run(mon, pose_cmd=with_("pose_cmd", 2, G.home[2] - 0.15)) is Reason.LEG_TOO_SHORT
    assert "leg" in mon.describe(int(Reason.LEG_TOO_SHORT))


def test_stale_sensor_after_n_cycles():
    mon = SafetyMonitor(LIM, G)
    assert run(mon, n=2, new_sample=False) is Reason.NONE
    assert run(mon, new_sample=False) is Reason.SENSOR_LINK_LOST
    assert "3 cycles" in mon.describe(int(Reason.SENSOR_LINK_LOST))
    assert run(mon, new_sample=True) is Reason.NONE  # a fresh sample clears the count


def test_crc_and_gap_bursts_use_a_sliding_window():
    mon = SafetyMonitor(LIM, G)
    # 2 errors in a window of 10 are tolerated, spread-out errors never trip
    for k in range(50):
        assert run(mon, crc_new=1 if k % 6 == 0 else 0) is Reason.NONE
    assert run(mon, n=10) is Reason.NONE
    assert run(mon, crc_new=1) is Reason.NONE
    assert run(mon, crc_new=1) is Reason.NONE
    assert run(mon, crc_new=1) is Reason.CRC_BURST  # 3 within 10 cycles
    mon.reset()
    assert run(mon, gap_new=3) is Reason.SEQUENCE_GAP_BURST
    mon.reset()
    assert run(mon, gap_new=2) is Reason.NONE
    assert run(mon, n=10) is Reason.NONE  # the burst ages out of the window


def test_force_limit_reports_axis_and_threshold():
    mon = SafetyMonitor(LIM, G)
    assert run(mon, w_S=with_("w_S", 0, 2300.0)) is Reason.FORCE_LIMIT
    d = mon.describe(int(Reason.FORCE_LIMIT))
    assert d == "sensor-frame Fx = +2300.0 N, over the trip level ±2250.0 N (90% of the sensor's Fx rating)", d
    assert run(mon, w_S=with_("w_S", 0, 2200.0)) is Reason.NONE


def test_heartbeat_check_can_be_disabled():
    mon = SafetyMonitor(SafetyLimits(heartbeat_enabled=False), G)
    assert run(mon, heartbeat_lost=True) is Reason.NONE


# ------------------------------------------------------------------ safe stop

DT = 1e-3


def rv_rel(q, q0):
    """Rotation vector of q (x) q0^-1 (in B)."""
    c = np.empty(4)
    SP.quat_conj(q0, c)
    d = np.empty(4)
    SP.quat_mul(q, c, d)
    out = np.empty(3)
    SP.quat_to_rotvec(d, out)
    return out


@given(arrays(np.float64, 6, elements=st.floats(-0.5, 0.5)), st.floats(0.2, 3.0), st.floats(0.2, 3.0))
@settings(max_examples=60)
def test_safe_stop_respects_acceleration_limits_along_the_path(twist, a_max, alpha_max):
    ss = SafeStop(DT, a_max, alpha_max)
    pose0 = np.concatenate([G.home[:3] + [0.05, -0.02, 0.1], rot([0.1, -0.05, 0.2])])
    T = ss.start(pose0, twist)
    v0, w0 = twist[:3], twist[3:]
    assert T == pytest.approx(max(np.linalg.norm(v0) / a_max, np.linalg.norm(w0) / alpha_max))
    # the command history: the running command before the stop moved with the current twist
    ps = [pose0[:3] - v0 * DT, pose0[:3].copy()]
    phis = [-w0 * DT, np.zeros(3)]
    n = 0
    while not ss.step():
        ps.append(ss.pose[:3].copy())
        phis.append(rv_rel(ss.pose[3:], pose0[3:]))
        n += 1
        assert n < 10_000
    ps.append(ss.pose[:3].copy())
    phis.append(rv_rel(ss.pose[3:], pose0[3:]))
    for _ in range(3):  # at rest: the command holds still
        ss.step()
        ps.append(ss.pose[:3].copy())
        phis.append(rv_rel(ss.pose[3:], pose0[3:]))
    ps, phis = np.array(ps), np.array(phis)
    acc = np.linalg.norm(np.diff(ps, 2, axis=0), axis=1) / DT**2
    alpha = np.linalg.norm(np.diff(phis, 2, axis=0), axis=1) / DT**2
    assert acc.max() <= a_max * (1 + 1e-6) + 1e-7
    assert alpha.max() <= alpha_max * (1 + 1e-6) + 1e-7
    assert np.allclose(ss.twist, 0.0) and ss.done
    assert n == max(0, int(np.ceil(T / DT - 1e-9)) - 1)
    # along the current path: the displacement is parallel to v0 and covers |v0| T / 2
    d = ps[-1] - pose0[:3]
    assert np.allclose(d, v0 * T / 2, atol=1e-12)
    assert np.allclose(phis[-1], w0 * T / 2, atol=1e-9)


def test_safe_stop_from_rest_or_nonfinite_twist_is_immediate():
    ss = SafeStop(DT, 1.0, 1.0)
    assert ss.start(G.home, np.zeros(6)) == 0.0 and ss.done
    assert ss.step() and np.allclose(ss.pose, G.home)
    tw = np.zeros(6)
    tw[0] = np.nan
    assert ss.start(G.home, tw) == 0.0 and ss.step()
    assert np.all(np.isfinite(ss.pose)) and not ss.twist.any()
