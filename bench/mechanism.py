"""Mechanism figures (issue 4): the full derivative call of the 6-UPS peripheral mechanism, an
RK4 step, and the peers side by side in the same run: the same Stewart mechanism as a MuJoCo
model (legs as bodies, loop closures as equality constraints) stepped at the same dt, and
Pinocchio's CRBA on one leg chain.  A missing peer gives ``None`` plus a ``*_note``."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
from numba import njit

from sim_stand.mechanism.kernels import mechanism_derivatives, mechanism_step_rk4

ROOT = Path(__file__).resolve().parent.parent
PRESET = ROOT / "config/mechanisms/peripheral_ups.toml"
DT = 1e-4


def median_us(fn, reps: int, batches: int) -> float:
    fn()
    out = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        out.append((time.perf_counter() - t0) / reps * 1e6)
    return statistics.median(out)


@njit(cache=True)    # safe: the cache directory is keyed on every kernel source (rt/__init__.py)
def _loop(P, W, x, bm, cw, out, n):
    s = 0
    for _ in range(n):
        s += mechanism_derivatives(P, W, x, bm, cw, out)
    return s


@njit(cache=True)
def _rk4_loop(P, W, x, bm, cw, dt, out, ka, xt, n):
    """n RK4 steps from the same state (bench/kernel_instructions.py)."""
    from_x = x.copy()
    s = 0.0
    for _ in range(n):
        x[:] = from_x
        mechanism_step_rk4(P, W, x, bm, cw, dt, out, ka, xt)
        s += x[0]
    x[:] = from_x
    return s


def _state(mech):
    x = mech.home_state()
    x[0:3] += [0.01, 0.005, -0.004]
    x[3:6] = [0.02, -0.01, 0.015]
    x[6:12] = [0.05, 0.02, -0.01, 0.03, -0.02, 0.01]
    return x


def _mujoco_model(cfg, legs):
    import mujoco
    parts = [f'<mujoco model="stewart"><option timestep="{DT}" integrator="RK4" '
             f'gravity="{cfg.gravity_0[0]} {cfg.gravity_0[1]} {cfg.gravity_0[2]}"/><worldbody>']
    eq = []
    for k, leg in enumerate(legs):
        R = np.asarray(leg.gamma[0]).T            # body axes in frame 0
        q = np.empty(4)
        mujoco.mju_mat2Quat(q, R.ravel())
        b = cfg.base_joints_0[k]
        c1 = leg.com[1][0]
        c2 = leg.com[2][0]
        m1, m2 = cfg.link1, cfg.link2
        parts.append(
            f'<body name="cyl{k}" pos="{b[0]} {b[1]} {b[2]}" quat="{q[0]} {q[1]} {q[2]} {q[3]}">'
            f'<joint name="u{k}a" type="hinge" axis="0 1 0"/><joint name="u{k}b" type="hinge" axis="0 0 1"/>'
            f'<inertial pos="{c1} 0 0" mass="{m1.mass_kg}" diaginertia="{m1.inertia_axial_kgm2} '
            f'{m1.inertia_transverse_kgm2} {m1.inertia_transverse_kgm2}"/>'
            f'<body name="rod{k}"><joint name="p{k}" type="slide" axis="1 0 0" damping="0"/>'
            f'<inertial pos="{c2} 0 0" mass="{m2.mass_kg}" diaginertia="{m2.inertia_axial_kgm2} '
            f'{m2.inertia_transverse_kgm2} {m2.inertia_transverse_kgm2}"/></body></body>')
        eq.append(f'<connect body1="rod{k}" body2="ring" anchor="{leg.L_last} 0 0"/>')
    rc = cfg.ring_home_0 + cfg.ring_com_R
    I = np.diag(cfg.ring_inertia_kgm2)
    parts.append(f'<body name="ring" pos="{rc[0]} {rc[1]} {rc[2]}"><freejoint/>'
                 f'<inertial pos="0 0 0" mass="{cfg.ring_mass_kg}" diaginertia="{I[0]} {I[1]} {I[2]}"/>'
                 f'</body></worldbody><equality>{"".join(eq)}</equality></mujoco>')
    model = mujoco.MjModel.from_xml_string("".join(parts))
    return mujoco, model


def run(quick: bool = False) -> dict:
    from sim_stand.mechanism import Mechanism, load_mechanism
    from sim_stand.mechanism.kernels import mechanism_step_rk4

    reps, batches = (2000, 5) if quick else (20000, 15)
    cfg = load_mechanism(PRESET)
    mech = Mechanism(cfg)
    x = _state(mech)
    bm = mech.base_motion_static()
    cw = np.zeros(6)
    P, W, O = mech.params, mech.workspace, mech.out
    fig: dict = {}
    fig["mechanism_derivative_us"] = median_us(
        lambda: mechanism_derivatives(P, W, x, bm, cw, O), reps, batches)
    _loop(P, W, x, bm, cw, O, 10)
    ts = []
    for _ in range(batches):
        t0 = time.perf_counter()
        _loop(P, W, x, bm, cw, O, reps)
        ts.append((time.perf_counter() - t0) / reps * 1e6)
    fig["mechanism_derivative_in_njit_loop_us"] = statistics.median(ts)
    xs = x.copy()
    ka, xt = np.zeros(12), np.zeros(12)

    def rk4():
        xs[:] = x
        mechanism_step_rk4(P, W, xs, bm, cw, DT, O, ka, xt)
    fig["mechanism_rk4_step_us"] = median_us(rk4, reps // 4, batches)
    fig["mechanism_rk4_realtime_factor_at_10khz"] = (DT * 1e6) / fig["mechanism_rk4_step_us"]

    # MuJoCo peer
    try:
        mujoco, model = _mujoco_model(cfg, mech.legs)
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        fig["mujoco_mechanism_step_us"] = median_us(lambda: mujoco.mj_step(model, data),
                                                     reps // 4, batches)
        fig["mujoco_mechanism_step_note"] = ("6-UPS Stewart, legs as bodies (2 hinges + slide), "
                                             "6 connect equality constraints, RK4, dt = 1e-4 s")
        fig["mujoco_step_over_mechanism_rk4_step"] = (fig["mujoco_mechanism_step_us"]
                                                      / fig["mechanism_rk4_step_us"])
        fig["mujoco_step_over_mechanism_derivative"] = (fig["mujoco_mechanism_step_us"]
                                                        / fig["mechanism_derivative_us"])
    except ImportError as e:
        fig["mujoco_mechanism_step_us"] = None
        fig["mujoco_mechanism_step_note"] = f"mujoco not installed ({e}); pip install -e '.[bench]'"
        fig["mujoco_step_over_mechanism_rk4_step"] = None
        fig["mujoco_step_over_mechanism_derivative"] = None

    # Pinocchio peer: CRBA of one UPS leg chain (3 joints)
    try:
        import pinocchio as pin
        leg = mech.legs[0]
        model = pin.Model()
        jid = 0
        names = {(1, 0): pin.JointModelRX, (1, 1): pin.JointModelRY, (1, 2): pin.JointModelRZ,
                 (0, 0): pin.JointModelPX, (0, 1): pin.JointModelPY, (0, 2): pin.JointModelPZ}
        for j in range(leg.n):
            M = pin.SE3(np.asarray(leg.gamma[j]).T.copy(), np.asarray(leg.l[j], float).copy())
            jid = model.addJoint(jid, names[(leg.jtypes[j], leg.axes[j])](), M, f"j{j}")
            m = leg.mass[j]
            if m > 0:
                d = np.asarray(leg.com[j], float)
                Ic = np.asarray(leg.inertia_O[j]) - m * (d @ d * np.eye(3) - np.outer(d, d))
                model.appendBodyToJoint(jid, pin.Inertia(m, d, Ic), pin.SE3.Identity())
        data = model.createData()
        q = mech.evaluate(x).p[0, :leg.n].copy()
        fig["pinocchio_crba_leg_us"] = median_us(lambda: pin.crba(model, data, q), reps, batches)
        fig["pinocchio_crba_leg_note"] = "pin.crba on one UPS leg chain (3 joints), Python call"
        fig["mechanism_derivative_over_pinocchio_crba_leg"] = (fig["mechanism_derivative_us"]
                                                               / fig["pinocchio_crba_leg_us"])
    except ImportError as e:
        fig["pinocchio_crba_leg_us"] = None
        fig["pinocchio_crba_leg_note"] = f"pinocchio not installed ({e}); pip install -e '.[bench]'"
        fig["mechanism_derivative_over_pinocchio_crba_leg"] = None
    return fig
