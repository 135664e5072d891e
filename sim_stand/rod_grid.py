"""The elastic-rod calibration over a grid of contacts and loop delays (issue 40 item 2;
docs/validation.md §3.5): reduced mass m* from 100 kg to 20 t, rod stiffness k from 1e4 to
3e6 N/m, the platform's delay from 2 to 20 ms (the upper end an industrial robot's), undamped
and zeta = 0.1 / 0.3, the sensor's noise at 3 sigma = 8 N -- at the stand's shipped defaults
(config/stand.toml: its predictor, delay identification, contact gate and sensing low-pass).

Each point is judged against the physical limit there: its loop delay ``tau`` is the
platform's plus the measurement's (the sensor's own filter, its chain in the emulator file, and
the stand's sensing low-pass); :func:`sim_stand.loop_theory.ideal_error_pct` gives the CoR error
of an ideal delayed loop (no servo, no noise, no filter, the vehicles' state exact, sampled at
the stand's rate, the worst over where the first touch falls in a sample); the goal is
``|error| <= max(0.05 %, 1.5 x`` that ``)`` (:func:`goal_pct`). Where no causal compensator
reproduces the contact to the stand's ``[envelope] bound_pct`` (rt.stand.loop_envelope, from the
theory), the point is outside the stand's envelope: reported as such, not run.

One grid point is written as its own configuration set in a directory (:func:`write_point`:
the calibration vehicles scaled to m*, the rod case, the emulator's platform with that delay
and the sensor's noise, the stand file as shipped with only the platform's limits raised to
what the contact needs) and run by :func:`sim_stand.calibration.rod_hil` on the lockstep
emulator. The closing speed is chosen as a crew chooses it: as fast as the rod's stroke
(:data:`STROKE_M`), the sensor's rating (a peak of :data:`PEAK_FORCE_N`) and the stand's speed
(:data:`SPEED_MAX`) allow, so that the sensor's noise is the smallest share of the impulse; the
start at least :data:`APPROACH_S` of free flight before the contact (the delay identification
counts uniform motion only and settles in 0.2 s; the gate measures the noise). The platform's
limits follow the peak relative acceleration ``F / m*`` and the command's step at the contact's
onset (rt.stand.loop_envelope.onset_command_acceleration): the stand's ``a_max`` is raised to
them (and its trip margin to 2.5 x), the emulated platform's own limit to 5 x.

The platform delay is what the controller must lead by on the lockstep emulator:
``transport + 2 zeta_s / w_n + dt / 2`` (a second-order servo, set-points interpolated over the
cycle; :func:`sim_stand.cli.lockstep_stand`): a servo of :data:`SERVO_LAG_S` (zeta_s = 0.8), the
rest transport in whole 0.1 ms steps of the emulator, the servo taking the remainder.

The expected scatter of the measured CoR from the sensor's noise alone
(:func:`noise_floor_pct`): the noise integrated over the contact, ``sigma_F sqrt(T_c dt)``
against the momentum ``m* v``, ``T_c = pi / w``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SERVO_ZETA = 0.8
SERVO_LAG_S = 0.8e-3        # the emulated platform's servo lag 2 zeta / w_n (w_n = 2000 rad/s), the rest transport
DT = 1e-3
APPROACH_S = 0.6            # free flight before the contact, at least: the delay's identification settles
PEAK_FORCE_N = 6000.0       # the contact's peak, at most (the sensor: 18 kN axial, less the unit's weight and a margin)
STROKE_M = 0.1              # the rod's compression, at most (the platform's box: 0.4 m from home)
SPEED_MAX = 0.3             # closing speed, at most (the stand's v_max: 0.5 m/s)
SPEED_MIN = 0.005
GOAL_FLOOR_PCT = 0.05       # the goal's floor, and its multiple of the ideal loop's error
GOAL_FACTOR = 1.5


@dataclass(frozen=True)
class GridPoint:
    """One calibration contact: reduced mass (kg), rod stiffness (N/m), the platform's delay (s),
    rod damping ratio."""
    m_star_kg: float
    stiffness_n_per_m: float
    delay_s: float
    damping_ratio: float = 0.0

    @property
    def label(self) -> str:
        return (f"m*={self.m_star_kg:g}kg k={self.stiffness_n_per_m:.0e} tau_p={1e3 * self.delay_s:g}ms "
                f"zeta={self.damping_ratio:g}")

    @property
    def omega_radps(self) -> float:
        return math.sqrt(self.stiffness_n_per_m / self.m_star_kg)


MASSES = (100.0, 1600.0, 20000.0)
STIFFNESSES = (1e4, 1e5, 1e6, 3e6)
DELAYS = (0.002, 0.005, 0.010, 0.020)
DAMPINGS = (0.0, 0.1, 0.3)
GRID = tuple(GridPoint(m, k, tau, z) for m in MASSES for k in STIFFNESSES for tau in DELAYS for z in DAMPINGS)
# the coarse grid the test suite runs: a stiff contact at the shortest delay (the onset limit),
# damped; the shipped rod's vehicles at a long delay; a heavy soft one at an industrial robot's
COARSE = (GridPoint(100.0, 1e5, 0.002, 0.1), GridPoint(1600.0, 1e5, 0.010, 0.0),
          GridPoint(20000.0, 1e6, 0.020, 0.3))


def measurement_delay_s(stand=None, emu=None) -> float:
    """The measurement's part of the loop delay on the lockstep stand: the emulated sensor's
    chain (its filter setting) plus the shipped stand's sensing low-pass."""
    from rt.config.stand import load_stand
    from sim_stand.world_config import load_emulator
    stand = stand or load_stand(REPO / "config" / "stand.toml")
    emu = emu or load_emulator(REPO / "config" / "emulator" / "elastic_rod.toml")
    return emu.sensor_chain.group_delay_s + stand.delays.filter_s


@lru_cache(maxsize=1)
def _shipped():
    from rt.config.stand import load_stand
    from sim_stand.world_config import load_emulator
    return load_stand(REPO / "config" / "stand.toml"), load_emulator(REPO / "config" / "emulator" / "elastic_rod.toml")


def loop_delay_s(p: GridPoint) -> float:
    """The point's whole loop delay: the platform's and the measurement's."""
    return p.delay_s + measurement_delay_s(*_shipped())


def envelope(p: GridPoint):
    """The point judged by the stand's loop envelope (rt.stand.loop_envelope), from the theory."""
    from rt.stand.loop_envelope import loop_envelope
    stand, _ = _shipped()
    return loop_envelope(p.stiffness_n_per_m, p.m_star_kg, loop_delay_s(p), 1.0 / stand.rate_hz,
                         stand.envelope.bound_pct, damping_ratio=p.damping_ratio)


def goal_pct(p: GridPoint) -> tuple[float, float]:
    """``(goal, ideal)``: the ideal delayed loop's CoR error at the point (sim_stand.loop_theory)
    and the goal ``max(0.05 %, 1.5 x |ideal|)``, both in % of the closed form."""
    from sim_stand.loop_theory import ideal_error_pct
    ideal = ideal_error_pct(p.m_star_kg, p.stiffness_n_per_m, loop_delay_s(p), p.damping_ratio)
    return max(GOAL_FLOOR_PCT, GOAL_FACTOR * abs(ideal)), ideal


def closing_speed(p: GridPoint) -> float:
    w = p.omega_radps
    return max(SPEED_MIN, min(SPEED_MAX, PEAK_FORCE_N / math.sqrt(p.stiffness_n_per_m * p.m_star_kg), STROKE_M * w))


def noise_floor_pct(p: GridPoint, sigma_force_n: float) -> float:
    """One sigma of the CoR's scatter from the sensor noise inside the contact (module docstring), %."""
    from sim_stand.calibration import cor_noise_floor_pct
    return cor_noise_floor_pct(sigma_force_n, math.pi / p.omega_radps, DT, p.m_star_kg * closing_speed(p))


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


def write_point(p: GridPoint, directory, sigma_force_n: float | None = None) -> dict:
    """Write the configuration set of grid point ``p`` into ``directory`` (module docstring);
    returns the paths (case, emulator, stand), the closing speed and the sensor noise.
    ``sigma_force_n`` overrides the emulator's sensor noise (default: the shipped rod
    emulator's)."""
    import tomllib

    from rt.stand.loop_envelope import onset_command_acceleration

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    s = p.m_star_kg / 1600.0                       # the calibration vehicles (2 t, 8 t) scaled
    (d / "active.toml").write_text(_vehicle("grid_active", 2000.0 * s, (600.0 * s, 1500.0 * s, 1500.0 * s), 1.5))
    (d / "passive.toml").write_text(_vehicle("grid_passive", 8000.0 * s, (4000.0 * s, 9000.0 * s, 9000.0 * s), -2.0))
    v = closing_speed(p)
    w = p.omega_radps
    t_c = math.pi / w
    gap = max(0.05, APPROACH_S * v)
    duration = gap / v + 1.5 * t_c + max(0.5, gap / v)
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
    rest = p.delay_s - DT / 2.0 - SERVO_LAG_S
    if rest < 0.0:
        raise ValueError(f"{p.label}: the platform's delay is below the servo's lag and half a cycle")
    transport = math.floor(rest / 1e-4 + 1e-9) * 1e-4     # whole emulator steps
    servo = p.delay_s - DT / 2.0 - transport
    wn = 2.0 * SERVO_ZETA / servo
    tau = loop_delay_s(p)
    zeta_c = p.damping_ratio
    a_need = max(v * w * (1.0 + 2.0 * zeta_c), onset_command_acceleration(v, w, tau, DT))
    sigma = tomllib.loads(emu)["sensor"]["sigma_force_n"] if sigma_force_n is None else sigma_force_n
    emu = _set(emu, {"bandwidth_hz": wn / (2.0 * math.pi), "damping_ratio": SERVO_ZETA, "transport_delay_s": transport,
                     "acceleration_max_m_s2": max(10.0, 5.0 * a_need), "velocity_max_m_s": max(0.6, 2.0 * v),
                     "sigma_force_n": sigma, "stiffness_n_per_m": p.stiffness_n_per_m})
    (d / "emulator.toml").write_text(emu)
    stand = _set((REPO / "config" / "stand.toml").read_text(),
                 {"a_max_m_s2": max(5.0, 1.25 * a_need), "accel_margin": 2.5})
    (d / "stand.toml").write_text(stand)
    return {"case": d / "case.toml", "emulator": d / "emulator.toml", "stand": d / "stand.toml",
            "closing_speed_mps": v, "sigma_force_n": sigma}


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


# the sensor noise of the goals and of the SJTU stand (reference-data.md): 3 sigma = 8 N
SIGMA_3SIGMA_8N = 8.0 / 3.0


def run_point(p: GridPoint, directory, sigma_force_n: float | None = SIGMA_3SIGMA_8N, **overrides) -> dict:
    """One grid point's HIL run (:func:`sim_stand.calibration.rod_hil`) at the stand's defaults
    (``overrides``: rod_hil's, e.g. ``predictor="acceleration"`` for a comparison), with its
    goal, the ideal loop's error, the envelope and the noise floor."""
    from sim_stand.calibration import rod_hil

    paths = write_point(p, directory, sigma_force_n)
    m = rod_hil(paths["case"], True, log_dir=directory, emulator_path=paths["emulator"], stand_path=paths["stand"],
                **overrides)
    goal, ideal = goal_pct(p)
    env = envelope(p)
    m.update(point=p.label, closing_speed_mps=paths["closing_speed_mps"], omega_tau=p.omega_radps * loop_delay_s(p),
             loop_delay_s=loop_delay_s(p), goal_pct=goal, ideal_pct=ideal, ratio_to_goal=abs(m["error_pct"]) / goal,
             inside=env.inside, noise_floor_pct=noise_floor_pct(p, paths["sigma_force_n"]))
    return m
