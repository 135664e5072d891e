"""Coupling: the measured wrench into the spacecraft dynamics, prediction, stand geometry."""
import math

import numpy as np
import pytest

from rt.dynamics import coupling as CP
from rt.dynamics import spacecraft as S
from rt.config.case import load_case
from rt.config.vehicle import Control, Vehicle
from rt.dynamics.spatial import quat_to_dcm


def dcm(q):
    R = np.empty((3, 3))
    quat_to_dcm(np.asarray(q, float), R)
    return R


def unit(q):
    q = np.asarray(q, float)
    return q / np.linalg.norm(q)


GEO = CP.pack_geometry([0.1, -0.2, 1.5], unit([0.9, 0.1, -0.2, 0.3]), [-0.3, 0.05, 0.0], unit([0.8, 0.0, 0.5, 0.1]))


def test_constant_wrench_reproduces_the_spacecraft_kernel_exactly():
    case = load_case("config/cases/nominal.toml")
    ref = S.Spacecraft.from_case(case)
    cp = CP.Coupling(S.Spacecraft.from_case(case), GEO, tau_s=0.005)
    w = np.array([200.0, -30.0, 15.0, 4.0, -8.0, 2.0])
    w_in = np.zeros((2, 6))
    w_in[0] = w
    dt = 1e-3
    for i in range(2000):
        ref.step(i * dt, dt, w_in)
        cp.update(i * dt, dt, w)
    # the same kernel: equal to rounding (compiled inside coupling_update, LLVM's FMA contraction
    # may fuse differently than in the standalone step: observed 1 ulp on the quaternion; the
    # controller and `dockstand recompute` both go through coupling_update, bit for bit)
    assert np.max(np.abs(ref.x - cp.sc.x)) <= 1e-13 * np.max(np.abs(ref.x))
    rel = ref.relative()
    assert np.allclose(cp.out[CP.O_REL:CP.O_REL + S.REL_LEN], rel, rtol=0.0, atol=1e-12)


def test_prediction_is_exact_for_constant_acceleration():
    """Rigid vehicles without modes or rotation under a constant wrench through both centres of
    mass: the relative acceleration is constant, so r(t + tau) predicted = r after tau."""
    veh = lambda m, port: Vehicle("v", m, np.diag([1e3, 1e3, 1e3]), np.array(port, float), np.eye(3), (), Control())
    sc = S.Spacecraft(veh(5000.0, [0.0, 0.0, 0.0]), veh(80000.0, [0.0, 0.0, 0.0]))
    sc.x[0, S.S_R:S.S_R + 3] = [-0.3, 0.02, 0.01]
    sc.x[0, S.S_V:S.S_V + 3] = [0.1, -0.01, 0.02]
    cp = CP.Coupling(sc, GEO, tau_s=0.012)
    w = np.array([150.0, 20.0, -40.0, 0.0, 0.0, 0.0])
    dt = 1e-3
    cp.update(0.0, dt, w)
    pred = cp.out[CP.O_RPRED:CP.O_RPRED + 3].copy()
    acc = cp.out[CP.O_ACC:CP.O_ACC + 3]
    assert np.allclose(acc, -w[:3] / 5000.0 - w[:3] / 80000.0, rtol=1e-9)
    for i in range(12):
        cp.update((i + 1) * dt, dt, w)
    assert np.allclose(cp.out[CP.O_REL + S.REL_R:CP.O_REL + S.REL_R + 3], pred, atol=1e-12, rtol=0)
    # compensation off commands the current pose
    cp.mode = CP.MODE_OFF
    cp.update(0.013, dt, w)
    assert np.array_equal(cp.out[CP.O_RPRED:CP.O_RPRED + 3], cp.out[CP.O_REL:CP.O_REL + 3])


def test_predicted_rotation_for_constant_rate():
    out = np.zeros(CP.OUT_LEN)
    q0 = unit([0.95, 0.1, 0.2, -0.1])
    out[CP.O_REL + S.REL_Q:CP.O_REL + S.REL_Q + 4] = q0
    w = np.array([0.02, -0.05, 0.03])
    out[CP.O_REL + S.REL_W:CP.O_REL + S.REL_W + 3] = w
    tau = 0.5
    CP.predict_pose(out, tau, CP.MODE_PREDICT, 0.0)
    # rotating at constant w (P components) for tau: R(t+tau) = exp([w]x tau) R(t)
    a = np.linalg.norm(w) * tau
    u = w / np.linalg.norm(w)
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    Rexp = np.eye(3) + math.sin(a) * K + (1 - math.cos(a)) * K @ K
    assert np.allclose(dcm(out[CP.O_QPRED:CP.O_QPRED + 4]), Rexp @ dcm(q0), atol=1e-14)


def test_platform_pose_composes_stand_frames():
    out = np.zeros(CP.OUT_LEN)
    r = np.array([-0.25, 0.03, -0.02])
    q = unit([0.99, 0.02, -0.03, 0.05])
    out[CP.O_RPRED:CP.O_RPRED + 3] = r
    out[CP.O_QPRED:CP.O_QPRED + 4] = q
    CP.platform_pose(GEO, out)

    def T(p, qq):
        M = np.eye(4)
        M[:3, :3], M[:3, 3] = dcm(qq), p
        return M

    ref = T(GEO[0:3], GEO[3:7]) @ T(r, q) @ T(GEO[7:10], GEO[10:14])
    assert np.allclose(out[CP.O_PCMD:CP.O_PCMD + 3], ref[:3, 3], atol=1e-14)
    assert np.allclose(dcm(out[CP.O_QCMD:CP.O_QCMD + 4]), ref[:3, :3], atol=1e-14)


def _feed_cubic(out, j, t, dt):
    """The relative state of x(t) = j t^3 / 6 (each axis its own j) at t, with the acceleration
    of one cycle earlier (the held wrench's: rt.dynamics.coupling.LAG_CYCLES)."""
    out[CP.O_REL + S.REL_R:CP.O_REL + S.REL_R + 3] = j * t ** 3 / 6.0
    out[CP.O_REL + S.REL_V:CP.O_REL + S.REL_V + 3] = j * t ** 2 / 2.0
    out[CP.O_REL + S.REL_Q] = 1.0
    out[CP.O_ACC:CP.O_ACC + 3] = j * (t - CP.LAG_CYCLES * dt)
    out[CP.O_ACCW:CP.O_ACCW + 3] = out[CP.O_ACC:CP.O_ACC + 3]      # all of it the wrench's


def test_jerk_predictor_is_exact_for_a_cubic_motion():
    """MODE_JERK: a contact force ramping at a constant rate (a cubic relative motion) is
    predicted exactly, once three differences of the accelerations are held; until then the
    prediction is the constant-acceleration one. The constant-acceleration predictor misses
    j tau^3 / 6 + (its acceleration's cycle of lag) j dt tau^2 / 2."""
    out = np.zeros(CP.OUT_LEN)
    ca = np.zeros(CP.OUT_LEN)
    j = np.array([120.0, -40.0, 7.5])
    dt, tau = 1e-3, 4.8e-3
    for k in range(6):
        t = 0.01 + k * dt
        _feed_cubic(out, j, t, dt)
        _feed_cubic(ca, j, t, dt)
        CP.predict_pose(out, tau, CP.MODE_JERK, dt)
        CP.predict_pose(ca, tau, CP.MODE_PREDICT, dt)
        exact = j * (t + tau) ** 3 / 6.0
        if k < 3:
            assert np.array_equal(out[CP.O_RPRED:CP.O_RPRED + 3], ca[CP.O_RPRED:CP.O_RPRED + 3])
        else:
            assert np.allclose(out[CP.O_RPRED:CP.O_RPRED + 3], exact, rtol=0, atol=1e-15)
    miss = j * (tau ** 3 / 6.0 + dt * tau ** 2 / 2.0)
    assert np.allclose(exact - ca[CP.O_RPRED:CP.O_RPRED + 3], miss, rtol=1e-9, atol=0)
    # a new run forgets the memory: constant-acceleration prediction again
    CP.reset_memory(out)
    _feed_cubic(out, j, 0.5, dt)
    _feed_cubic(ca, j, 0.5, dt)
    CP.predict_pose(out, tau, CP.MODE_JERK, dt)
    CP.predict_pose(ca, tau, CP.MODE_PREDICT, dt)
    assert np.array_equal(out[CP.O_RPRED:CP.O_RPRED + 3], ca[CP.O_RPRED:CP.O_RPRED + 3])


def test_at_a_long_lead_the_jerk_is_the_mean_of_several_and_its_noise_that_much_smaller():
    """At a robot's 20 ms lead MODE_JERK averages the last 5 per-cycle estimates (one per 4 ms of
    lead; 1 up to 6 ms): a constant jerk is still predicted exactly, once they are held, and the
    jerk of white noise on the accelerations is at least twice smaller than at a 3 ms lead."""
    assert [CP.jerk_span(t, 1e-3) for t in (0.003, 0.0048, 0.02, 0.1)] == [1, 1, 5, CP.JERK_SPAN_MAX]
    out = np.zeros(CP.OUT_LEN)
    j = np.array([120.0, -40.0, 7.5])
    dt, tau = 1e-3, 0.02
    for k in range(10):
        t = 0.01 + k * dt
        _feed_cubic(out, j, t, dt)
        CP.predict_pose(out, tau, CP.MODE_JERK, dt)
    assert np.allclose(out[CP.O_RPRED:CP.O_RPRED + 3], j * (t + tau) ** 3 / 6.0, rtol=0, atol=1e-14)
    rng = np.random.default_rng(3)
    noise = rng.normal(0.0, 0.03, (4000, 6))
    spread = []
    for lead in (0.003, 0.02):
        o = np.zeros(CP.OUT_LEN)
        o[CP.O_REL + S.REL_Q] = 1.0
        js = []
        for a in noise:
            o[CP.O_ACCW:CP.O_ACCW + 6] = a
            CP.predict_pose(o, lead, CP.MODE_JERK, dt)
            js.append(o[CP.O_JERK])
        spread.append(np.std(js[10:]))
    # the per-cycle rule already takes the median where successive differences disagree (white
    # noise's do, often): the mean of 5 of them halves what is left
    assert spread[1] / spread[0] < 0.5, spread


def test_the_jerks_change_per_cycle_is_limited_to_a_share_of_the_command_trip():
    """With the stand's trip levels set (rt.control.procedures at a run's start), a contact
    whose jerk appears at once (a latch strike) reaches the prediction over several cycles, each
    cycle's change moving the command's acceleration by at most JERK_SHARE of the trip; a
    constant jerk is then predicted exactly again."""
    out = np.zeros(CP.OUT_LEN)
    dt, tau = 1e-3, 0.007
    lin, ang = CP.set_jerk_limits(out, 10.0, 5.0, tau, dt)
    c = tau ** 3 / 6.0 + CP.LAG_CYCLES * dt * tau ** 2 / 2.0
    assert lin * c / dt ** 2 == pytest.approx(CP.JERK_SHARE * 10.0) and ang == pytest.approx(lin / 2.0)
    j = np.array([2000.0, 0.0, 0.0])            # 2000 m/s^3 from t = 0.01 on
    seen = []
    for k in range(100):                        # 31 m/s^3 a cycle: 66 cycles to 2000
        t = 0.01 + k * dt
        _feed_cubic(out, j, t, dt)
        CP.predict_pose(out, tau, CP.MODE_JERK, dt)
        seen.append(out[CP.O_JERK])
    assert np.all(np.diff(seen) <= lin * (1 + 1e-12)) and max(np.diff(seen)) == pytest.approx(lin)
    assert seen[-1] == pytest.approx(2000.0, rel=1e-12)
    CP.reset_memory(out)                        # a new run: memory cleared, the limits kept
    assert out[CP.O_JLIM] == lin and not out[CP.O_JERK:CP.O_JERK + 6].any()


def test_jerk_predictor_ignores_a_step_of_the_force():
    """A step of the acceleration (a damper's force at the first touch, the contact gate
    passing its withheld impulse) is no jerk: a difference that disagrees with the one before
    gives way to the median of three, and the prediction stays the constant-acceleration one,
    the right one after a step. So does a pulse (the gate's withheld impulse) before a step."""
    out = np.zeros(CP.OUT_LEN)
    out[CP.O_REL + S.REL_Q] = 1.0
    dt, tau = 1e-3, 4.8e-3
    for k in range(10):
        # m/s^2, rad/s^2: a step at k = 4, a pulse and a step at k = 7
        out[CP.O_ACC:CP.O_ACC + 6] = 0.0 if k < 4 else (3.0 if k < 7 else (9.0 if k == 7 else 6.0))
        out[CP.O_ACCW:CP.O_ACCW + 6] = out[CP.O_ACC:CP.O_ACC + 6]
        CP.predict_pose(out, tau, CP.MODE_JERK, dt)
        assert np.array_equal(out[CP.O_JERK:CP.O_JERK + 6], np.zeros(6)), k
        a = out[CP.O_ACC]
        assert out[CP.O_RPRED] == a * tau * tau / 2.0


def test_jerk_predictor_rotation_uses_the_angular_jerk():
    """The angular part: a constant angular jerk about a fixed axis (angular velocity and
    acceleration along it) gives the rotation angle's cubic exactly."""
    out = np.zeros(CP.OUT_LEN)
    u = np.array([0.6, 0.0, 0.8])
    jw, dt, tau = 50.0, 1e-3, 4.0e-3
    for k in range(5):
        t = 0.02 + k * dt
        out[CP.O_REL + S.REL_Q:CP.O_REL + S.REL_Q + 4] = [1.0, 0.0, 0.0, 0.0]
        out[CP.O_REL + S.REL_W:CP.O_REL + S.REL_W + 3] = u * jw * t ** 2 / 2.0
        out[CP.O_ACC + 3:CP.O_ACC + 6] = u * jw * (t - CP.LAG_CYCLES * dt)
        out[CP.O_ACCW + 3:CP.O_ACCW + 6] = out[CP.O_ACC + 3:CP.O_ACC + 6]
        CP.predict_pose(out, tau, CP.MODE_JERK, dt)
    angle = jw * ((t + tau) ** 3 - t ** 3) / 6.0
    q = out[CP.O_QPRED:CP.O_QPRED + 4]
    assert math.isclose(2.0 * math.atan2(np.linalg.norm(q[1:]), q[0]), angle, rel_tol=1e-12)
    assert np.allclose(q[1:] / np.linalg.norm(q[1:]), u, atol=1e-14)


def _shaped(targets, A, dt=1e-3, rates=None):
    """The lead shaper's output for a sequence of target offsets (n x 6) with their model rates
    (n x 6; None: zero), bounds A (lin, ang); ``dt`` a number or a sequence of cycles."""
    out = np.zeros(CP.OUT_LEN)
    out[CP.O_LEADA:CP.O_LEADA + 2] = A
    dts = np.broadcast_to(np.asarray(dt, float), (len(targets),))
    rows = []
    for k, tgt in enumerate(targets):
        out[CP.O_LEADT:CP.O_LEADT + 6] = tgt
        out[CP.O_LEADR:CP.O_LEADR + 6] = 0.0 if rates is None else rates[k]
        CP.shape_lead(out, dts[k])
        rows.append(out[CP.O_LEAD:CP.O_LEAD + 6].copy())
    return np.array(rows)


def test_the_lead_shaper_is_transparent_where_the_lead_moves_within_its_bound():
    """A lead offset whose acceleration stays within the bound is commanded exactly, bit for
    bit: on the shipped stand's few ms of lead the shaper changes nothing."""
    dt = 1e-3
    t = np.arange(2000) * dt
    tgt = np.zeros((len(t), 6))
    rate = np.zeros((len(t), 6))
    w1, w2 = 2 * np.pi * 3.0, 2 * np.pi * 1.0
    tgt[:, 0], rate[:, 0] = 0.002 * np.sin(w1 * t), 0.002 * w1 * np.cos(w1 * t)      # 0.71 m/s^2 peak, bound 2
    tgt[:, 4], rate[:, 4] = 0.01 * np.cos(w2 * t), -0.01 * w2 * np.sin(w2 * t)       # 0.39 rad/s^2 peak, bound 1
    assert np.array_equal(_shaped(tgt, (2.0, 1.0), rates=rate), tgt)
@pytest.mark.parametrize("step", [3e-4, -2e-3])
def test_a_step_of_the_lead_is_taken_at_the_bound_without_passing_it(step):
    """A step of the lead's target (a latch strike's acceleration step times tau^2 / 2 at a
    robot's lead) is closed with the commanded offset's acceleration within the bound on every
    cycle, passing it by at most one cycle's quantum A dt^2 (a discrete tracker's last step),
    in about the bang-bang time 2 sqrt(|D| / A)."""
    dt, A = 1e-3, 2.0
    tgt = np.zeros((400, 6))
    tgt[5:, 1] = step
    y = _shaped(tgt, (A, 1.0))[:, 1]
    acc = np.diff(y, 2) / dt ** 2
    assert np.max(np.abs(acc)) <= A * (1 + 1e-9)
    assert np.all(np.abs(y) <= abs(step) + A * dt * dt)              # never past it by more than A dt^2
    reach = int(np.argmax(np.abs(y - step) < 1e-12)) - 5
    t_min = 2.0 * math.sqrt(abs(step) / A) / dt
    assert 0.9 * t_min <= reach <= 1.5 * t_min + 3, (reach, t_min)
    assert np.all(y[5 + reach:] == step)                             # then exact again


def test_a_lead_that_starts_moving_at_once_is_caught_up_within_the_bound():
    """A ramp of the target (the lead's rate stepping: a force step times tau) is followed
    with bounded acceleration and then exactly, at the ramp's rate."""
    dt, A = 1e-3, 2.0
    tgt = np.zeros((600, 6))
    tgt[10:, 3] = 0.05 * np.arange(590) * dt                        # 0.05 rad/s from cycle 10
    rate = np.zeros((600, 6))
    rate[10:, 3] = 0.05
    y = _shaped(tgt, (1.0, A), rates=rate)[:, 3]
    assert np.max(np.abs(np.diff(y, 2))) / dt ** 2 <= A * (1 + 1e-9)
    assert np.array_equal(y[-100:], tgt[-100:, 3])
    assert np.max(y - tgt[:, 3]) <= A * dt * dt                       # never ahead by more than A dt^2


def test_lead_limits_come_from_the_command_trip_and_survive_a_new_run():
    out = np.zeros(CP.OUT_LEN)
    lin, ang = CP.set_lead_limits(out, 10.0, 5.0, 0.5)
    assert lin == pytest.approx(5.0) and ang == pytest.approx(2.5)
    out[CP.O_LEADN] = 1.0
    CP.reset_memory(out)
    assert out[CP.O_LEADN] == 0.0 and out[CP.O_LEADA] == lin


def test_a_step_along_two_axes_keeps_the_leads_acceleration_magnitude_within_the_bound():
    """The bound is on the magnitude of the lead's acceleration (the command trip's is a
    magnitude): a step along x and y at once is closed with |acceleration| <= A every cycle."""
    dt, A = 1e-3, 2.0
    tgt = np.zeros((400, 6))
    tgt[5:, 0], tgt[5:, 2] = 4e-4, -3e-4
    y = _shaped(tgt, (A, 1.0))[:, :3]
    acc = np.linalg.norm(np.diff(y, 2, axis=0), axis=1) / dt ** 2
    assert np.max(acc) <= A * (1 + 1e-9) and np.max(acc) > 0.99 * A
    assert np.array_equal(y[-50:], tgt[-50:, :3])


@pytest.mark.parametrize("amp", [1e-4, 1e-3, 1e-2])
def test_a_target_that_chatters_every_cycle_keeps_the_lead_near_it(amp):
    """Sample-to-sample chatter of the lead's target (Nyquist: +-amp every cycle), whose model
    rate is smooth, never walks the commanded offset away (a rate taken from the target's own
    last difference fed the chatter forward: 39x its amplitude at 1e-4 m, 40 m at 1e-2 m)."""
    dt, A = 1e-3, 5.0
    tgt = np.zeros((5000, 6))
    tgt[:, 1] = amp * (-1.0) ** np.arange(5000)
    tgt[:, 4] = amp * (-1.0) ** np.arange(5000)
    y = _shaped(tgt, (A, A))
    assert np.max(np.abs(y)) <= amp + A * dt * dt, np.max(np.abs(y))


def test_a_step_on_the_runs_second_cycle_is_not_taken_as_a_rate():
    """The shaper's rate starts from the model's, not from the difference of its first two
    targets: a step between them is closed like any other step."""
    dt, A = 1e-3, 5.0
    tgt = np.zeros((300, 6))
    tgt[1:, 0] = 2.6e-4                                              # 1 m/s^2 x (23 ms)^2 / 2
    y = _shaped(tgt, (A, A))[:, 0]
    assert np.max(y) <= 2.6e-4 + A * dt * dt and y[-1] == 2.6e-4


def test_a_late_cycle_keeps_the_commands_acceleration_within_the_bound():
    """The command's acceleration is its rate's change over the mean of the two cycles
    (rt.control.kernels.command_rates): one late cycle in a saturated catch-up stays within A."""
    A = 2.0
    dts = np.full(200, 1e-3)
    dts[20], dts[60] = 3e-3, 5e-3
    tgt = np.zeros((200, 6))
    tgt[5:, 2] = 1e-3
    y = _shaped(tgt, (A, A), dt=dts)[:, 2]
    t = np.concatenate([[0.0], np.cumsum(dts[1:])])
    v = np.diff(y) / np.diff(t)
    acc = np.diff(v) / (0.5 * (np.diff(t)[1:] + np.diff(t)[:-1]))
    assert np.max(np.abs(acc)) <= A * (1 + 1e-9), np.max(np.abs(acc))


def test_a_target_that_is_not_finite_passes_and_restarts_the_shaper():
    tgt = np.zeros((10, 6))
    tgt[3, 0] = np.nan
    y = _shaped(tgt, (2.0, 1.0))
    assert np.isnan(y[3, 0]) and np.all(np.isfinite(y[4:])) and np.all(y[4:] == 0.0)
