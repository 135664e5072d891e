"""Spacecraft-dynamics figures (issue 2): one RK4 step of both vehicles with 6 port modes each.

* ``spacecraft_step_us_loop``: median per step, steps looped inside compiled code;
* ``spacecraft_step_us_call``: median per step, one call from Python per step (the controller's
  situation);
* ``spacecraft_step_over_mujoco`` / ``spacecraft_step_over_basilisk``: our RK4 step of the two
  vehicles as rigid bodies (no port modes: the work the peers do) against MuJoCo's ``mj_step``
  (two bodies on free joints, RK4, no gravity, no geometry) and Basilisk's two spacecraft hubs
  (``svIntegratorRK4``), at the same dt from the same state, each stepping in its own compiled
  loop (``rk4_steps``; ``mj_step(m, d, nstep)``; Basilisk's ``ExecuteSimulation``), interleaved
  (bench/interleave.py) -- the median of the per-round ratios with its IQR. Before timing, the
  three trajectories are run side by side for ``CHECK_STEPS`` and compared
  (``spacecraft_trajectory_max_diff_mujoco`` / ``_basilisk``: the largest difference in
  position (m), velocity (m/s), attitude (rad) and angular velocity (rad/s)); the bench refuses a
  ratio whose trajectories differ by more than 1e-9. A missing peer gives ``None`` and a note.
* ``basilisk_step_us``, ``mujoco_step_us``: the peers' medians per step in those rounds;
  ``basilisk_ratio`` = Basilisk / ours (the inverse of the ratio above, kept for history).
"""
from __future__ import annotations

import math
import statistics
import time

import numpy as np

from rt.dynamics import spacecraft as S
from rt.config.vehicle import Control, Mode, Vehicle

DT = 1e-3


def six_mode_pair() -> S.Spacecraft:
    rng = np.random.default_rng(3)

    def veh(mass, J, port):
        modes = tuple(Mode(f, 0.02, rng.normal(size=6) * 0.01) for f in (0.3, 0.5, 1.1, 2.0, 3.3, 4.8))
        return Vehicle("bench", mass, np.asarray(J, float), np.asarray(port, float), np.eye(3), modes, Control())

    sc = S.Spacecraft(veh(7080.0, np.diag([4.6e3, 3.5e4, 3.5e4]), [3.6, 0, 0]),
                      veh(419455.0, np.diag([1.27e8, 1.07e8, 2.01e8]), [32.0, 0, 3.0]))
    sc.x[0, S.S_R] = -36.0
    sc.x[0, S.S_W:S.S_W + 3] = [0.001, 0.002, -0.001]
    return sc


def _loop_us(sc: S.Spacecraft, n: int, reps: int) -> float:
    w = np.zeros((2, 6))
    w[0] = [50.0, 5.0, -3.0, 1.0, 2.0, -1.0]
    ws = sc.ws
    S.rk4_steps(sc.par, sc.env, sc.x, 0.0, DT, 10, w, 1, ws.k, ws.xt, ws.ws, ws.rel)  # compile / warm
    out = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        S.rk4_steps(sc.par, sc.env, sc.x, 0.0, DT, n, w, 1, ws.k, ws.xt, ws.ws, ws.rel)
        out.append((time.perf_counter_ns() - t0) / n / 1e3)
    return statistics.median(out)


def _call_us(sc: S.Spacecraft, n: int, reps: int) -> float:
    w = np.zeros((2, 6))
    w[0] = [50.0, 5.0, -3.0, 1.0, 2.0, -1.0]
    ws = sc.ws
    par, env, x, k, xt, wsa, rel = sc.par, sc.env, sc.x, ws.k, ws.xt, ws.ws, ws.rel
    step = S.rk4_step
    step(par, env, x, 0.0, DT, w, 1, k, xt, wsa, rel)
    out = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        for i in range(n):
            step(par, env, x, i * DT, DT, w, 1, k, xt, wsa, rel)
        out.append((time.perf_counter_ns() - t0) / n / 1e3)
    return statistics.median(out)


CHECK_STEPS = 2000
W0 = np.array([[0.001, 0.002, -0.001], [-0.0005, 0.0003, 0.0008]])      # initial body rates (rad/s)
V0 = np.array([[0.1, 0.01, -0.02], [0.0, 0.0, 0.0]])                    # initial velocities (m/s)
R0 = np.array([[-36.0, 0.0, 0.0], [0.0, 0.0, 0.0]])


def rigid_pair() -> S.Spacecraft:
    """The two vehicles of :func:`six_mode_pair` without port modes, moving and tumbling."""
    def veh(mass, J, port):
        return Vehicle("bench", mass, np.asarray(J, float), np.asarray(port, float), np.eye(3), (), Control())

    sc = S.Spacecraft(veh(7080.0, np.diag([4.6e3, 3.5e4, 3.5e4]), [3.6, 0, 0]),
                      veh(419455.0, np.diag([1.27e8, 1.07e8, 2.01e8]), [32.0, 0, 3.0]))
    for s in range(2):
        sc.x[s, S.S_R:S.S_R + 3] = R0[s]
        sc.x[s, S.S_V:S.S_V + 3] = V0[s]
        sc.x[s, S.S_W:S.S_W + 3] = W0[s]
    return sc


def _state_rows(r, v, q, w):
    return np.concatenate([r, v, q, w])


def _ours_runner(sc):
    w = np.zeros((2, 6))
    ws = sc.ws
    x0 = sc.x.copy()

    def step(n):
        S.rk4_steps(sc.par, sc.env, sc.x, 0.0, DT, n, w, 1, ws.k, ws.xt, ws.ws, ws.rel)

    def state():
        return [sc.x[s, :13].copy() for s in range(2)]

    def reset():
        sc.x[:] = x0
    return step, state, reset


def _mujoco_runner(sc):
    import mujoco
    bodies = []
    for s in range(2):
        J = [float(v) for v in np.diag(sc.par[s, S.P_J:S.P_J + 9].reshape(3, 3))]
        bodies.append(f'<body name="b{s}" pos="{R0[s][0]} {R0[s][1]} {R0[s][2]}"><freejoint/>'
                      f'<inertial pos="0 0 0" mass="{float(sc.par[s, S.P_MASS])!r}" '
                      f'diaginertia="{J[0]!r} {J[1]!r} {J[2]!r}"/></body>')
    xml = (f'<mujoco><option timestep="{DT!r}" integrator="RK4" gravity="0 0 0"/>'
           f'<worldbody>{"".join(bodies)}</worldbody></mujoco>')
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)

    def reset():
        mujoco.mj_resetData(m, d)
        for s in range(2):
            d.qpos[7 * s:7 * s + 3] = R0[s]
            d.qpos[7 * s + 3:7 * s + 7] = [1.0, 0.0, 0.0, 0.0]
            d.qvel[6 * s:6 * s + 3] = V0[s]            # free joint: linear velocity in the world frame,
            d.qvel[6 * s + 3:6 * s + 6] = W0[s]        # angular in the body frame (as ours)
        mujoco.mj_forward(m, d)

    def step(n):
        mujoco.mj_step(m, d, nstep=n)

    def state():
        return [_state_rows(d.qpos[7 * s:7 * s + 3], d.qvel[6 * s:6 * s + 3], d.qpos[7 * s + 3:7 * s + 7],
                            d.qvel[6 * s + 3:6 * s + 6]) for s in range(2)]
    reset()
    return step, state, reset


def _mrp_to_quat(sig):
    s2 = float(sig @ sig)
    return np.concatenate([[(1.0 - s2) / (1.0 + s2)], 2.0 * np.asarray(sig) / (1.0 + s2)])


def _basilisk_runner(sc):
    from Basilisk.simulation import spacecraft as bsk_sc
    from Basilisk.simulation import svIntegrators
    from Basilisk.utilities import SimulationBaseClass, macros

    state = {}

    def build():
        sim = SimulationBaseClass.SimBaseClass()
        proc = sim.CreateNewProcess("p")
        proc.addTask(sim.CreateNewTask("t", macros.sec2nano(DT)))
        hubs = []
        for s in range(2):
            b = bsk_sc.Spacecraft()
            b.ModelTag = f"b{s}"
            b.hub.mHub = float(sc.par[s, S.P_MASS])
            b.hub.IHubPntBc_B = sc.par[s, S.P_J:S.P_J + 9].reshape(3, 3).tolist()
            b.hub.r_CN_NInit = R0[s].tolist()
            b.hub.v_CN_NInit = V0[s].tolist()
            b.hub.omega_BN_BInit = [[W0[s][0]], [W0[s][1]], [W0[s][2]]]
            integ = svIntegrators.svIntegratorRK4(b)
            b.setIntegrator(integ)
            sim.AddModelToTask("t", b)
            hubs.append((b, integ))
        sim.InitializeSimulation()
        state.update(sim=sim, hubs=hubs, steps=0)

    def step(n):
        state["steps"] += n
        state["sim"].ConfigureStopTime(macros.sec2nano(state["steps"] * DT))
        state["sim"].ExecuteSimulation()

    def read():
        out = []
        for b, _ in state["hubs"]:
            m = b.scStateOutMsg.read()
            out.append(_state_rows(np.array(m.r_CN_N), np.array(m.v_CN_N), _mrp_to_quat(np.array(m.sigma_BN)),
                                   np.array(m.omega_BN_B)))
        return out
    build()
    return step, read, build


def _max_diff(a, b) -> float:
    """Largest difference between two lists of [r, v, q, w] rows: positions (m), velocities (m/s),
    the attitude angle between the quaternions (rad), angular velocities (rad/s)."""
    worst = 0.0
    for x, y in zip(a, b):
        p, q = x[6:10], y[6:10]
        # the rotation between them: vector part of p^-1 (x) q, whose norm is sin(angle / 2)
        vec = p[0] * q[1:] - q[0] * p[1:] - np.cross(p[1:], q[1:])
        ang = 2.0 * math.asin(min(1.0, float(np.linalg.norm(vec))))
        worst = max(worst, float(np.max(np.abs(x[0:6] - y[0:6]))), ang, float(np.max(np.abs(x[10:13] - y[10:13]))))
    return worst


def run(quick: bool = False) -> dict:
    from bench.interleave import interleaved_many

    n, reps = (2000, 3) if quick else (20000, 7)
    sc = six_mode_pair()
    loop = _loop_us(sc, n, reps)
    call = _call_us(six_mode_pair(), n // 2, reps)
    out = {"spacecraft_step_us_loop": round(loop, 4), "spacecraft_step_us_call": round(call, 4)}
    # the rigid pair against the peers: trajectories first, then interleaved rounds
    # batches of equal duration (a loaded machine interrupts a long batch more often than a short
    # one: batches of unequal length bias the ratio), long enough for Basilisk's: each
    # ExecuteSimulation call costs ~0.1-1 ms of Python before its C++ loop, spread over >= 200 steps
    rounds = 11 if quick else 31
    runners = {"ours": _ours_runner(rigid_pair())}
    notes = {}
    for name, make, pkg in (("mujoco", _mujoco_runner, "mujoco"), ("basilisk", _basilisk_runner, "bsk")):
        try:
            runners[name] = make(rigid_pair())
        except ImportError as e:
            notes[name] = f"{pkg} not installed ({e}); pip install -e '.[bench]'"
    ref_step, ref_state, ref_reset = runners["ours"]
    ref_step(CHECK_STEPS)
    ref = ref_state()
    ref_reset()
    for name in ("mujoco", "basilisk"):
        if name not in runners:
            continue
        step, state, reset = runners[name]
        step(CHECK_STEPS)
        diff = _max_diff(ref, state())
        out[f"spacecraft_trajectory_max_diff_{name}"] = diff
        reset()
        if not diff < 1e-9:
            notes[name] = f"trajectories differ by {diff:.3g} after {CHECK_STEPS} steps: no ratio"
            del runners[name]
    per_step = {k: min(_timed(runners[k][0], 200) for _ in range(3)) for k in runners}
    target = max(5e-3, 200 * per_step.get("basilisk", 0.0))
    batch = {k: max(1, int(round(target / per_step[k]))) for k in runners}
    names = list(runners)
    times = interleaved_many([(lambda st=runners[k][0], b=batch[k]: _timed(st, b)) for k in names], rounds)
    for i, name in enumerate(names[1:], start=1):
        key = f"spacecraft_step_over_{name}"
        out.update(times.ratio(0, i).figures(key))
        out[f"{name}_step_us"] = round(float(np.median(times.t[:, i])) * 1e6, 4)
    out["spacecraft_rigid_step_us_interleaved"] = round(float(np.median(times.t[:, 0])) * 1e6, 4)
    for name in ("mujoco", "basilisk"):
        if name not in runners:
            out[f"spacecraft_step_over_{name}"] = None
            out[f"{name}_step_us"] = None
            out[f"spacecraft_step_over_{name}_note"] = notes.get(name, "")
    out["spacecraft_peer_note"] = (
        f"two rigid bodies (masses, inertias, states of the bench pair), dt {DT:g} s, RK4, no gravity, no wrench; "
        f"trajectories compared over {CHECK_STEPS} steps; {rounds} interleaved rounds of "
        + ", ".join(f"{batch[k]} steps ({k})" for k in names))
    bsk = out.get("basilisk_step_us")
    out["basilisk_ratio"] = None if not bsk else round(bsk / out["spacecraft_rigid_step_us_interleaved"], 2)
    return out


def _timed(step, n: int) -> float:
    t0 = time.perf_counter_ns()
    step(n)
    return (time.perf_counter_ns() - t0) * 1e-9 / n
