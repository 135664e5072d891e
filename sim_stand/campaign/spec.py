"""The campaign file (``config/campaigns/*.toml``, docs/campaigns.md) -> frozen :class:`Campaign`.

A campaign is a base case, the dispersed parameters with their distributions, the number of
samples N, a seed and a sampling method. Every error names the file, the key and the reason
(:class:`rt.config.ConfigError`), and all of them are raised by :func:`load_campaign`, before
any sample runs. Not for the real-time loop.

Parameters (:data:`PARAMETERS`) are scalars with absolute values: an initial-condition parameter
is the value the case's key takes (its ``mean`` defaults to the case's own value), a ``*_scale``
parameter multiplies a vehicle's or the mechanism's coefficient (``mean`` defaults to 1).
"""
from __future__ import annotations

import difflib
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

from rt.config._schema import ConfigError, Table, expect_kind
from rt.config.case import Case, load_case

SAMPLINGS = ("random", "lhs", "sobol")
MODES = ("digital", "hil")
DISTRIBUTIONS = ("uniform", "normal", "truncated_normal")

#: name -> (what it sets, unit); ``initial.*`` values replace the case's, ``*_scale`` multiply
PARAMETERS: dict[str, str] = {
    "position_x_m": "initial position of A in P, x (along the approach; negative = short of P), m",
    "position_y_m": "initial position of A in P, y (lateral), m",
    "position_z_m": "initial position of A in P, z (lateral), m",
    "misalignment_1_deg": "first misalignment angle, in the case's misalignment_sequence, deg",
    "misalignment_2_deg": "second misalignment angle, deg",
    "misalignment_3_deg": "third misalignment angle, deg",
    "closing_velocity_mps": "closing velocity (+x_P), m/s",
    "lateral_velocity_y_mps": "lateral velocity along y_P, m/s",
    "lateral_velocity_z_mps": "lateral velocity along z_P, m/s",
    "active_rate_x_dps": "active vehicle's angular rate about its x body axis, deg/s",
    "active_rate_y_dps": "active vehicle's angular rate about y, deg/s",
    "active_rate_z_dps": "active vehicle's angular rate about z, deg/s",
    "passive_rate_x_dps": "passive vehicle's angular rate about its x body axis, deg/s",
    "passive_rate_y_dps": "passive vehicle's angular rate about y, deg/s",
    "passive_rate_z_dps": "passive vehicle's angular rate about z, deg/s",
    "active_mass_scale": "factor on the active vehicle's mass",
    "active_inertia_scale": "factor on the active vehicle's inertia tensor",
    "passive_mass_scale": "factor on the passive vehicle's mass",
    "passive_inertia_scale": "factor on the passive vehicle's inertia tensor",
    "damper_scale": "factor on every leg's damping (viscous damper and electromechanical damper)",
    "spring_scale": "factor on every leg's spring stiffness table",
    "spring_preload_scale": "factor on every leg's spring preload",
    "friction_scale": "factor on every leg's brake friction (Coulomb and breakaway)",
    "stand_delay_s": "the emulated platform's delay (transport + servo lag), s; mode = 'hil' only: the "
                     "controller keeps the delay of the campaign's emulator config",
}
MECHANISM_PARAMETERS = ("damper_scale", "spring_scale", "spring_preload_scale", "friction_scale")
STAND_PARAMETERS = ("stand_delay_s",)      # the HIL loop's, not the flight's: mode = "hil" only


def nominal_value(case: Case, name: str, emu=None) -> float:
    """The case's own value of parameter ``name`` (1 for a ``*_scale``; the stand's delay: that
    of ``emu``, the campaign's emulator config)."""
    if name.endswith("_scale"):
        return 1.0
    if name == "stand_delay_s":
        from sim_stand.closed_loop import platform_delay_s
        return platform_delay_s(emu)
    i = case.initial
    axis = {"x": 0, "y": 1, "z": 2}
    if name.startswith("position_"):
        return float(i.position_m[axis[name[9]]])
    if name.startswith("misalignment_"):
        return float(i.misalignment_deg[int(name[13]) - 1])
    if name == "closing_velocity_mps":
        return float(i.velocity_mps[0])
    if name.startswith("lateral_velocity_"):
        return float(i.velocity_mps[axis[name[17]]])
    if name.startswith("active_rate_"):
        return math.degrees(float(i.active_rate_radps[axis[name[12]]]))
    if name.startswith("passive_rate_"):
        return math.degrees(float(i.passive_rate_radps[axis[name[13]]]))
    raise KeyError(name)


@dataclass(frozen=True)
class Dispersion:
    """One dispersed parameter: ``distribution`` with ``mean``, ``sigma`` (normal, truncated
    normal) and ``bounds`` (uniform, truncated normal), absolute values in the parameter's unit."""
    name: str
    distribution: str
    mean: float
    sigma: float | None = None
    lower: float | None = None
    upper: float | None = None


@dataclass(frozen=True)
class Limits:
    """The mechanism's limits drawn on the summary's histograms (N, N m, m, m/s)."""
    force_n: float
    moment_nm: float
    stroke_m: float | None = None
    stroke_rate_mps: float | None = None


@dataclass(frozen=True)
class Campaign:
    name: str
    description: str
    file: Path
    digest: str                     # sha256 of the campaign file
    case_path: Path
    case: Case
    emulator_path: Path | None
    samples: int
    seed: int
    sampling: str
    dispersions: tuple[Dispersion, ...]
    limits: Limits
    duration_s: float | None = None
    settle_s: float | None = None
    mode: str = "digital"           # "digital": the all-digital reference; "hil": emulator + controller in lockstep
    stand_path: Path | None = None  # mode = "hil": the controller's stand file

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.dispersions]


def _dispersion(t: Table, name: str, case: Case, emu=None) -> Dispersion:
    dist = t.str("distribution", choices=DISTRIBUTIONS)
    mean = t.float("mean", nominal_value(case, name, emu))
    sigma = lower = upper = None
    if dist in ("normal", "truncated_normal"):
        if t.has("sigma") and t.has("three_sigma"):
            raise t.error("three_sigma", "give sigma or three_sigma, not both")
        if t.has("three_sigma"):
            sigma = t.float("three_sigma") / 3.0
            key = "three_sigma"
        elif t.has("sigma"):
            sigma = t.float("sigma")
            key = "sigma"
        else:                       # a misspelt spread is named as such, not as a missing sigma
            if dist == "truncated_normal" and t.has("bounds"):
                t.vector("bounds", 2)
            t.done()
            raise t.error("sigma", f"a {dist} distribution needs sigma or three_sigma")
        if sigma <= 0.0:
            raise t.error(key, f"must be > 0 (a standard deviation), got {sigma * (3 if key == 'three_sigma' else 1):g}")
    if dist in ("uniform", "truncated_normal"):
        b = t.vector("bounds", 2)
        lower, upper = float(b[0]), float(b[1])
        if not lower < upper:
            raise t.error("bounds", f"bounds reversed or empty: lower {lower:g} must be < upper {upper:g}")
        if dist == "truncated_normal" and not lower <= mean <= upper:
            raise t.error("mean", f"{mean:g} lies outside the bounds [{lower:g}, {upper:g}]")
    if name.endswith("_scale"):
        lo = lower if lower is not None else mean - 6.0 * sigma
        if lo <= 0.0:
            raise t.error("bounds" if lower is not None else key,
                          f"a scale factor must stay > 0: the distribution reaches {lo:g}"
                          + ("" if lower is not None else " at 6 sigma (use truncated_normal with bounds > 0)"))
    if name.startswith("misalignment_"):
        lo = lower if lower is not None else mean - 6.0 * sigma
        hi = upper if upper is not None else mean + 6.0 * sigma
        if lo < -90.0 or hi > 90.0:
            raise t.error("bounds" if lower is not None else key,
                          f"misalignment angles beyond ±90° are not a docking case (reaches {lo:g} .. {hi:g})")
    if name == "stand_delay_s":
        from sim_stand.cli import servo_lag_s
        lag = servo_lag_s(emu)
        lo = lower if lower is not None else mean - 6.0 * sigma
        if lo < lag - 1e-12:
            raise t.error("bounds" if lower is not None else key,
                          f"the stand's delay cannot be shorter than the emulated servo's own lag ({lag * 1e3:.3f} ms); "
                          f"the distribution reaches {lo * 1e3:.3f} ms" + ("" if lower is not None else " at 6 sigma"))
    t.done()
    return Dispersion(name, dist, mean, sigma, lower, upper)


def parse_campaign(t: Table) -> Campaign:
    name = t.str("name", t.file.stem)
    desc = t.str("description", "")
    case_path = t.relative(t.str("case"))
    try:
        case = load_case(case_path)
    except ConfigError as e:
        raise t.error("case", f"case file is invalid: {e}") from None
    emu_path = t.relative(t.str("emulator")) if t.has("emulator") else None
    if emu_path is not None and not emu_path.is_file():
        raise t.error("emulator", f"file not found: {emu_path}")
    n = t.int("samples", ge=1, le=10_000_000)
    seed = t.int("seed", ge=0, le=2 ** 63 - 1)
    sampling = t.str("sampling", "random", choices=SAMPLINGS)
    duration = t.float("duration_s", None, gt=0.0)
    settle = t.float("capture_settle_s", None, ge=0.0)
    mode = t.str("mode", "digital", choices=MODES)
    stand_path = None
    if t.has("stand"):
        if mode != "hil":
            raise t.error("stand", "a stand file is for mode = 'hil' (the digital reference has no stand in the loop)")
        stand_path = t.relative(t.str("stand"))
        if not stand_path.is_file():
            raise t.error("stand", f"file not found: {stand_path}")
    emu = None
    disp: list[Dispersion] = []
    if t.has("dispersions"):
        d = t.table("dispersions")
        for key in list(d.data):
            if key not in PARAMETERS:
                near = difflib.get_close_matches(key, list(PARAMETERS), n=1, cutoff=0.6)
                raise d.error(key, "unknown parameter" + (f" (did you mean '{near[0]}'?)" if near else "")
                              + "; known: " + ", ".join(PARAMETERS))
            if key in STAND_PARAMETERS:
                if mode != "hil":
                    raise d.error(key, "the stand's delay is a parameter of HIL runs: set mode = 'hil' (the digital "
                                       "reference has no platform in the loop)")
                if emu is None:
                    from sim_stand.world_config import load_emulator
                    emu = load_emulator(emu_path).for_case(case)
            disp.append(_dispersion(d.table(key), key, case, emu))
        d.done()

    if any(x.name in MECHANISM_PARAMETERS for x in disp):
        # the kinds whose legs a campaign may disperse: sim_stand.mechanism_kinds (leg_dispersions)
        from sim_stand.mechanism_kinds import kinds_of_model
        if case.berthing is not None or not any(k.leg_dispersions for k in kinds_of_model(case.contact.model)):
            raise t.error("dispersions", f"mechanism dispersions need a docking-mechanism case; "
                          f"{case_path.name} uses the {case.contact.model!r} contact model")
        from sim_stand.world_config import load_emulator
        emu_case = load_emulator(emu_path).for_case(case)
        kind = emu_case.kind
        if not kind.leg_dispersions:
            raise t.error("dispersions", f"mechanism dispersions (damper, spring, friction factors) apply to a "
                          f"parallel mechanism's legs; {Path(emu_case.mechanism_path).name} is a {kind.structure} "
                          f"mechanism")
    force, moment, stroke, rate = 7200.0, 1400.0, None, None
    if t.has("limits"):
        li = t.table("limits")
        force = li.float("force_n", force, gt=0.0)
        moment = li.float("moment_nm", moment, gt=0.0)
        stroke = li.float("stroke_m", None, gt=0.0)
        rate = li.float("stroke_rate_mps", None, gt=0.0)
        li.done()
    t.done()
    return Campaign(name=name, description=desc, file=t.file, digest="", case_path=case_path, case=case,
                    emulator_path=emu_path, samples=n, seed=seed, sampling=sampling, dispersions=tuple(disp),
                    limits=Limits(force, moment, stroke, rate), duration_s=duration, settle_s=settle, mode=mode,
                    stand_path=stand_path)


def load_campaign(path: str | Path) -> Campaign:
    """Load and validate a campaign file, its case and the files the case names
    (``dockstand check-config``; the ``campaign`` config kind)."""
    from dataclasses import replace
    path = Path(path).resolve()
    t = Table.load(path)
    expect_kind(t, "campaign")
    c = parse_campaign(t)
    return replace(c, digest=hashlib.sha256(path.read_bytes()).hexdigest())


__all__ = ["Campaign", "Dispersion", "Limits", "PARAMETERS", "MECHANISM_PARAMETERS", "STAND_PARAMETERS", "MODES",
           "SAMPLINGS", "DISTRIBUTIONS",
           "load_campaign", "nominal_value"]
