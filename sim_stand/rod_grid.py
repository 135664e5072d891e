"""The elastic-rod calibration over a grid of contacts and loop delays (issue 26 goals;
docs/validation.md §3.3): reduced mass m* from 200 kg to 10 t, rod stiffness k from 1e5 to
1e6 N/m, platform delay tau from 2 to 5 ms, undamped and zeta = 0.1.

One grid point is written as its own configuration set in a directory (the calibration
vehicles scaled to m*, the rod case, the emulator's platform with that delay, the stand with
limits that allow the contact) and run by :func:`sim_stand.calibration.rod_hil` on the
lockstep emulator. The closing speed is chosen as a crew chooses it: the peak force
``v sqrt(k m*)`` at ``peak_force_n`` (the sensor's noise is then the smallest share of the
impulse), the speed kept within 0.02..0.3 m/s, the start at least :data:`APPROACH_S` of free
flight before the contact (the delay identification counts uniform motion only and settles in
0.2 s); the platform's acceleration limits follow the
peak relative acceleration ``F / m*`` (the stand's ``a_max`` 1.25 times it and its command trip
at 4 times that: the prediction's lead turns the contact's onset, a step in the jerk, into a
spike of the command's acceleration, ``tau^2 / (2 dt^2)`` times the step of the acceleration
per cycle; the emulated platform's own limit 5 times it).

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


# the grid's corners, the shipped rod's point in the middle, undamped and damped
GRID = tuple(GridPoint(m, k, tau, z) for m in (200.0, 1600.0, 10000.0) for k in (1e5, 1e6)
             for tau in (0.002, 0.005) for z in (0.0, 0.1))
# the coarse grid the test suite runs: the two extremes of w tau and of the noise's share
COARSE = (GridPoint(200.0, 1e6, 0.005, 0.0), GridPoint(200.0, 1e6, 0.005, 0.1),
          GridPoint(10000.0, 1e5, 0.002, 0.0), GridPoint(1600.0, 1e5, 0.005, 0.1))


def closing_speed(p: GridPoint, peak_force_n: float) -> float:
    return min(0.3, max(0.02, peak_force_n / math.sqrt(p.stiffness_n_per_m * p.m_star_kg)))


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
    gap = max(0.05, APPROACH_S * v)
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
    a_rel = peak_force_n / p.m_star_kg
    sigma = tomllib.loads(emu)["sensor"]["sigma_force_n"] if sigma_force_n is None else sigma_force_n
    emu = _set(emu, {"bandwidth_hz": wn / (2.0 * math.pi), "damping_ratio": SERVO_ZETA, "transport_delay_s": transport,
                     "acceleration_max_m_s2": max(10.0, 20.0 * a_rel), "sigma_force_n": sigma,
                     "stiffness_n_per_m": p.stiffness_n_per_m})
    (d / "emulator.toml").write_text(emu)
    stand = _set((REPO / "config" / "stand.toml").read_text(), {"a_max_m_s2": max(5.0, 1.25 * a_rel), "accel_margin": 10.0})
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


# the sensor noise of the goals and of the SJTU stand: 3 sigma = 8 N ([Li 2026] in
# docs/references.md)
SIGMA_3SIGMA_8N = 8.0 / 3.0


def run_point(p: GridPoint, directory, peak_force_n: float = 4000.0, sigma_force_n: float | None = SIGMA_3SIGMA_8N,
              identify: str | None = "feed", contact_gate: bool | None = True, predictor: str | None = None) -> dict:
    """One grid point's HIL run (:func:`sim_stand.calibration.rod_hil`), with its noise floor."""
    from sim_stand.calibration import rod_hil

    paths = write_point(p, directory, peak_force_n, sigma_force_n)
    m = rod_hil(paths["case"], True, log_dir=directory, emulator_path=paths["emulator"], stand_path=paths["stand"],
                identify=identify, contact_gate=contact_gate, predictor=predictor)
    m.update(point=p.label, closing_speed_mps=paths["closing_speed_mps"], omega_tau=p.omega_radps * p.delay_s,
             noise_floor_pct=noise_floor_pct(p, paths["sigma_force_n"], peak_force_n))
    return m
