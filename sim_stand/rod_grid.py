"""The elastic-rod calibration over a grid of contacts and loop delays (docs/validation.md §3.3):
reduced mass m* from 100 kg to 20 t, rod stiffness k from 1e4 to 3e6 N/m, platform delay tau
from 2 ms to 20 ms (an industrial robot's), rod damping ratio 0, 0.1 and 0.3, the sensor's noise
3 sigma = 8 N; the stand at its shipped defaults.

Each point's goal (:func:`goal_pct`): ``|CoR error| <= max(0.05 %, 1.5 x the ideal delayed
loop's error at that point)`` (``sim_stand.loop_theory.ideal_rebound``: a pure delay, the state
exact, the jerk from a 1 ms difference; what the compensator can do when nothing else is wrong;
at a damped point the undamped rod's at the same ``w tau``: :func:`ideal_error_pct`).
A point whose ``w tau`` lies beyond the stand's envelope (``rt.stand.envelope``: the onset/release
limit of any causal compensator above 1 % of the CoR) is reported as outside, not run.

One grid point is written as its own configuration set in a directory (the calibration
vehicles scaled to m*, the rod case, the emulator's platform with that delay, the stand with
limits that allow the contact) and run by :func:`sim_stand.calibration.rod_hil` on the
lockstep emulator. The closing speed is chosen as a crew chooses it: the peak force
``v sqrt(k m*)`` at ``peak_force_n`` or a 0.1 m compression, the lower (the sensor's noise is then the smallest share of the
impulse), the speed kept within 0.02..0.3 m/s, the start at least :data:`APPROACH_S` of free
flight before the contact (the delay identification counts uniform motion only and settles in
0.2 s) and at least 50 mm short of it, the touch on a whole cycle of the loop (:func:`touch_time`:
a loop sampling the force begins a damper's step at a cycle boundary, which changes the CoR by
``2 zeta w phi`` for a touch ``phi`` off one, ``sim_stand.rod.restitution_sampled``; on a cycle
boundary the sampled loop's CoR is the closed form's); the platform's acceleration limits follow the
peak relative acceleration ``F / m*`` and the lead: the prediction's lead turns a step of the
force -- a damper's ``2 zeta w v`` at the first touch, the onset's jerk -- into a spike of the
command's acceleration, ``tau^2 / (2 dt^2)`` times the step (200 at 20 ms), which the stand's
command trip (10 ``a_max``) must pass; the emulated platform's own limit 10 times the stand's.

The platform delay ``tau`` is what the controller must lead by on the lockstep emulator:
``transport + 2 zeta_s / w_n + dt / 2`` (a second-order servo, set-points interpolated over the
cycle; :func:`sim_stand.cli.lockstep_stand`). The grid's transport is half of ``tau - dt/2`` in
whole 0.1 ms steps of the emulator, its servo (zeta_s = 0.8) lags the rest.

The expected scatter of the measured CoR from the sensor's noise alone
(:func:`noise_floor_pct`): the noise integrated over the contact, ``sigma_F sqrt(T_c dt)``
against the momentum ``m* v``, ``T_c = pi / w``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SERVO_ZETA = 0.8
DT = 1e-3
APPROACH_S = 0.6       # free flight before the contact, at least: the delay's identification settles


@dataclass(frozen=True)
class GridPoint:
    """One calibration contact: reduced mass (kg), rod stiffness (N/m), platform delay (s),
    rod damping ratio."""
    m_star_kg: float
    stiffness_n_per_m: float
    delay_s: float
    damping_ratio: float = 0.0

    @property
    def label(self) -> str:
        return (f"m*={self.m_star_kg:g}kg k={self.stiffness_n_per_m:.0e} tau={1e3 * self.delay_s:g}ms "
                f"zeta={self.damping_ratio:g}")

    @property
    def omega_radps(self) -> float:
        return math.sqrt(self.stiffness_n_per_m / self.m_star_kg)


# the grid: corners and middles of m*, k and tau, each undamped and damped
GRID = tuple(GridPoint(m, k, tau, z) for m in (100.0, 1600.0, 20000.0) for k in (1e4, 2e5, 3e6)
             for tau in (0.002, 0.005, 0.020) for z in (0.0, 0.1, 0.3))
# the coarse grid the test suite runs: the stiffest contact inside the envelope at 2 ms (w tau
# 0.35), damped; an industrial robot's 20 ms on the shipped vehicles, damped; a
# heavy stiff contact at 5 ms; and one beyond the envelope (flagged, not run)
COARSE = (GridPoint(100.0, 3e6, 0.002, 0.1), GridPoint(1600.0, 2e5, 0.020, 0.1),
          GridPoint(20000.0, 3e6, 0.005, 0.0), GridPoint(100.0, 3e6, 0.020, 0.0))
ENVELOPE_BOUND_PCT = 1.0     # config/stand.toml [delays] envelope_cor_error_pct


def ideal_error_pct(p: GridPoint) -> float:
    """The ideal delayed loop's CoR error at ``p``'s ``w tau``, % (module docstring): the undamped
    rod's, also for a damped point. The ideal loop is continuous (the force unsampled), and a
    continuous loop cannot carry a damper: the prediction's acceleration holds the damper's force,
    whose step at the first touch the platform's exact following of the prediction turns into an
    impulse of the damper at once -- a feedback of gain ``c tau^2 / (2 m* dt)``, unbounded as the
    loop's step goes to zero. The stand samples at 1 kHz, which bounds it; the onset/release limit
    the goal stands for is the spring's (the damper's force the prediction carries), so the
    undamped limit at the same ``w tau`` is the damped point's goal: the stricter one."""
    from sim_stand.loop_theory import ideal_rebound
    return 100.0 * (ideal_rebound(p.m_star_kg, p.stiffness_n_per_m, p.delay_s, "jerk") - 1.0)


def goal_pct(p: GridPoint) -> float:
    """The point's bound on |CoR error|: max(0.05 %, 1.5 x the ideal loop's), %."""
    return max(0.05, 1.5 * abs(ideal_error_pct(p)))


def inside_envelope(p: GridPoint, bound_pct: float = ENVELOPE_BOUND_PCT) -> bool:
    """``w tau`` within the stand's envelope (``rt.stand.envelope.omega_tau_limit``)."""
    from rt.stand.envelope import omega_tau_limit
    return p.omega_radps * p.delay_s <= omega_tau_limit(bound_pct)


MAX_COMPRESSION_M = 0.1   # the rod's compression at the peak, at most (the platform's stroke)


def closing_speed(p: GridPoint, peak_force_n: float) -> float:
    """The closing speed for a peak of ``peak_force_n`` (or the force of a 0.1 m compression, if
    lower), within 0.02..0.3 m/s, m/s."""
    peak = min(peak_force_n, MAX_COMPRESSION_M * p.stiffness_n_per_m)
    return min(0.3, max(0.02, peak / math.sqrt(p.stiffness_n_per_m * p.m_star_kg)))


def touch_time(p: GridPoint, peak_force_n: float) -> float:
    """When the rod touches, s after the run's start: at least :data:`APPROACH_S` and 50 mm of
    free flight, rounded up to a whole cycle of the loop (module docstring). A 50 mm start on the
    heavy, soft points (20 t at 2e5 N/m: 0.79057 s) put the touch 0.43 ms before a cycle's end,
    which the sampled loop turned into +0.082 % of CoR at zeta 0.3 (docs/validation.md §3.3)."""
    v = closing_speed(p, peak_force_n)
    return DT * math.ceil(max(APPROACH_S, 0.05 / v) / DT - 1e-6)


def noise_floor_pct(p: GridPoint, sigma_force_n: float, peak_force_n: float) -> float:
    """One sigma of the CoR's scatter from the sensor noise inside the contact (module docstring), %."""
    from sim_stand.calibration import cor_noise_floor_pct
    return cor_noise_floor_pct(sigma_force_n, math.pi / p.omega_radps, DT, p.m_star_kg * closing_speed(p, peak_force_n))


def _vehicle(name: str, mass: float, inertia: tuple, port_x: float) -> str:
    return f"""name = "{name}"
mass_kg = {mass!r}
inertia_kgm2 = [[{inertia[0]!r}, 0.0, 0.0], [0.0, {inertia[1]!r}, 0.0], [0.0, 0.0, {inertia[2]!r}]]

[port]
position_m = [{port_x!r}, 0.0, 0.0]
orientation = {{ quaternion_wxyz = [1.0, 0.0, 0.0, 0.0] }}

[control]
rotation = ["free", "free", "free"]
translation = ["free", "free", "free"]
"""


def write_point(p: GridPoint, directory, peak_force_n: float = 4000.0, sigma_force_n: float | None = None) -> dict:
    """Write the configuration set of grid point ``p`` into ``directory``; returns the paths
    (case, emulator, stand) and the chosen closing speed. ``sigma_force_n`` overrides the
    emulator's sensor noise (default: the shipped rod emulator's)."""
    import tomllib

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    s = p.m_star_kg / 1600.0                       # the calibration vehicles (2 t, 8 t) scaled
    (d / "active.toml").write_text(_vehicle("grid_active", 2000.0 * s, (600.0 * s, 1500.0 * s, 1500.0 * s), 1.5))
    (d / "passive.toml").write_text(_vehicle("grid_passive", 8000.0 * s, (4000.0 * s, 9000.0 * s, 9000.0 * s), -2.0))
    v = closing_speed(p, peak_force_n)
    t_c = math.pi / p.omega_radps
    touch = touch_time(p, peak_force_n)
    gap = touch * v
    duration = 2.0 * gap / v + 1.5 * t_c + 0.5
    (d / "case.toml").write_text(f"""name = "rod_grid"
description = "elastic-rod grid point {p.label}"
duration_s = {duration!r}

[vehicles]
active = "active.toml"
passive = "passive.toml"

[initial]
position_m = [{-0.55 - gap!r}, 0.0, 0.0]
closing_velocity_mps = {v!r}

[contact]
model = "elastic_rod"
stiffness_n_per_m = {p.stiffness_n_per_m!r}
damping_ratio = {p.damping_ratio!r}
tip_offset_m = 0.55

[end]
separation_m = 0.05
""")
    emu = (REPO / "config" / "emulator" / "elastic_rod.toml").read_text()
    transport = math.floor((p.delay_s - DT / 2.0) / 2.0 / 1e-4 + 1e-9) * 1e-4   # whole emulator steps
    servo = p.delay_s - DT / 2.0 - transport
    wn = 2.0 * SERVO_ZETA / servo
    a_rel = v * math.sqrt(p.stiffness_n_per_m * p.m_star_kg) / p.m_star_kg     # the run's peak, undamped
    sigma = tomllib.loads(emu)["sensor"]["sigma_force_n"] if sigma_force_n is None else sigma_force_n
    # the lead turns a step of the force -- the damper's 2 zeta w v (relative acceleration) at the
    # first touch, the contact's onset -- into a step of the command, tau^2 / 2 times the step:
    # an acceleration over one cycle of step * tau^2 / (2 dt^2), twice that where the contact
    # gate passes its withheld sample with the opening one (module docstring). The stand's a_max
    # (also its safe stop) covers a quarter of it, so the command trip (10 a_max) 2.5 times it;
    # the emulated platform's own limit 10 times the stand's
    # (and the contact gate's opening: a step to its threshold, 40 N, and a share of the rise)
    step = 2.0 * (2.0 * p.damping_ratio * p.omega_radps * v + a_rel * p.omega_radps * DT) + 2.0 * 40.0 / p.m_star_kg
    # and the sensor's noise, which the prediction carries over the lead: per cycle sigma / m* of
    # acceleration, tau^2 / 2 of it (and tau^3 / 6 of its jerk, averaged over jerk_span cycles)
    # in the command's position, a second difference of it in the command's acceleration
    from rt.dynamics.coupling import jerk_span
    noise = (sigma / p.m_star_kg * math.sqrt(6.0) / (DT * DT)
             * (p.delay_s ** 2 / 2.0 + p.delay_s ** 3 / 6.0 * math.sqrt(2.0) / (jerk_span(p.delay_s, DT) * DT)))
    a_max = max(5.0, 1.25 * a_rel, step * p.delay_s ** 2 / (2.0 * DT * DT) / 4.0, 6.0 * noise / 10.0)
    emu = _set(emu, {"bandwidth_hz": wn / (2.0 * math.pi), "damping_ratio": SERVO_ZETA, "transport_delay_s": transport,
                     "acceleration_max_m_s2": max(10.0 * a_max, 20.0 * a_rel), "sigma_force_n": sigma,
                     "velocity_max_m_s": 2.0,
                     "stiffness_n_per_m": p.stiffness_n_per_m})
    (d / "emulator.toml").write_text(emu)
    # the force on the port, off the vehicles' centres of mass, turns them as well: the angular
    # limit scaled with the linear one (the shipped 150 deg/s^2 at 5 m/s^2)
    stand = _set((REPO / "config" / "stand.toml").read_text(), {"a_max_m_s2": a_max, "accel_margin": 10.0,
                                                                  "alpha_max_deg_s2": 150.0 * a_max / 5.0,
                                                                  "v_max_m_s": 1.0})
    (d / "stand.toml").write_text(stand)
    return {"case": d / "case.toml", "emulator": d / "emulator.toml", "stand": d / "stand.toml",
            "closing_speed_mps": v, "sigma_force_n": sigma, "touch_s": touch}


def _set(text: str, values: dict) -> str:
    """``key = value`` lines of a TOML text replaced (each key must be there once)."""
    lines = text.splitlines()
    for key, val in values.items():
        hits = [i for i, ln in enumerate(lines) if ln.split("=")[0].strip() == key]
        if len(hits) != 1:
            raise ValueError(f"{key}: {len(hits)} lines to replace")
        comment = lines[hits[0]].partition("#")[2]
        lines[hits[0]] = f"{key} = {val!r}" + (f"  # {comment.strip()}" if comment else "")
    return "\n".join(lines) + "\n"


# the sensor noise of the goals and of the SJTU stand: 3 sigma = 8 N ([Li 2026] in
# docs/references.md)
SIGMA_3SIGMA_8N = 8.0 / 3.0


def run_point(p: GridPoint, directory, peak_force_n: float = 4000.0, sigma_force_n: float | None = SIGMA_3SIGMA_8N,
              identify: str | None = None, contact_gate: bool | None = None, predictor: str | None = None) -> dict:
    """One grid point's HIL run (:func:`sim_stand.calibration.rod_hil`) at the stand's defaults
    (``identify``, ``contact_gate``, ``predictor`` override them), with its noise floor and the
    touch's phase against the loop's cycles (``onset_phase_s``: 0 by :func:`touch_time`)."""
    from sim_stand.calibration import rod_hil
    from sim_stand.rod import onset_phase

    paths = write_point(p, directory, peak_force_n, sigma_force_n)
    m = rod_hil(paths["case"], True, log_dir=directory, emulator_path=paths["emulator"], stand_path=paths["stand"],
                identify=identify, contact_gate=contact_gate, predictor=predictor)
    m.update(point=p.label, closing_speed_mps=paths["closing_speed_mps"], omega_tau=p.omega_radps * p.delay_s,
             noise_floor_pct=noise_floor_pct(p, paths["sigma_force_n"], peak_force_n),
             touch_s=paths["touch_s"], onset_phase_s=onset_phase(paths["touch_s"], DT))
    return m
