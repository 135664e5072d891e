"""A sample's parameter values applied to the campaign's base case, its vehicles and the
mechanism (the meanings in :data:`sim_stand.campaign.spec.PARAMETERS`). Pure: returns new frozen
config objects. Not for the real-time loop.
"""
from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from rt.config.case import Case, EndCriteria, misalignment_dcm
from sim_stand.campaign.spec import MECHANISM_PARAMETERS, STAND_PARAMETERS, Campaign

_AXIS = {"x": 0, "y": 1, "z": 2}


def apply_case(case: Case, values: dict[str, float], duration_s: float | None = None,
               settle_s: float | None = None) -> Case:
    """The case with the sample's initial conditions and vehicle mass properties."""
    i = case.initial
    pos = i.position_m.copy()
    mis = i.misalignment_deg.copy()
    vel = i.velocity_mps.copy()
    wa = i.active_rate_radps.copy()
    wp = i.passive_rate_radps.copy()
    veh = {"active": case.active, "passive": case.passive}
    for name, v in values.items():
        if name.startswith("position_"):
            pos[_AXIS[name[9]]] = v
        elif name.startswith("misalignment_"):
            mis[int(name[13]) - 1] = v
        elif name == "closing_velocity_mps":
            vel[0] = v
        elif name.startswith("lateral_velocity_"):
            vel[_AXIS[name[17]]] = v
        elif name.startswith("active_rate_"):
            wa[_AXIS[name[12]]] = math.radians(v)
        elif name.startswith("passive_rate_"):
            wp[_AXIS[name[13]]] = math.radians(v)
        elif name.endswith("_mass_scale"):
            side = name.split("_")[0]
            veh[side] = replace(veh[side], mass_kg=veh[side].mass_kg * v)
        elif name.endswith("_inertia_scale"):
            side = name.split("_")[0]
            veh[side] = replace(veh[side], inertia_kgm2=veh[side].inertia_kgm2 * v)
        elif name not in MECHANISM_PARAMETERS and name not in STAND_PARAMETERS:
            raise KeyError(f"unknown campaign parameter {name!r}")
    ini = replace(i, position_m=pos, misalignment_deg=mis, R_PA=misalignment_dcm(mis, i.misalignment_sequence),
                  velocity_mps=vel, active_rate_radps=wa, passive_rate_radps=wp)
    out = replace(case, initial=ini, active=veh["active"], passive=veh["passive"])
    if duration_s is not None:
        out = replace(out, duration_s=duration_s)
    if settle_s is not None:
        out = replace(out, end=EndCriteria(separation_m=case.end.separation_m, capture_settle_s=settle_s))
    return out


def apply_mechanism(cfg, values: dict[str, float]):
    """A parallel mechanism's config with the sample's coefficient factors on every leg."""
    devs = []
    for d in cfg.devices:
        s = values.get("damper_scale")
        if s is not None:
            d = replace(d, damping=d.damping * s)
            if d.emd is not None:        # c = G^2 kt ke / R: the factor on c is 1/factor on R
                d = replace(d, emd=replace(d.emd, resistance_ohm=d.emd.resistance_ohm / s))
        if d.spring is not None and ("spring_scale" in values or "spring_preload_scale" in values):
            d = replace(d, spring=replace(d.spring, table_k=d.spring.table_k * values.get("spring_scale", 1.0),
                                          preload=d.spring.preload * values.get("spring_preload_scale", 1.0)))
        s = values.get("friction_scale")
        if s is not None and d.brake is not None:
            d = replace(d, brake=replace(d.brake, coulomb=d.brake.coulomb * s, breakaway=d.brake.breakaway * s))
        devs.append(d)
    return replace(cfg, devices=tuple(devs))


@lru_cache(maxsize=8)
def _mechanism_config(path: str):
    from sim_stand.mechanism import load_mechanism
    return load_mechanism(Path(path))


@lru_cache(maxsize=8)
def _emulator(path: str | None):
    from sim_stand.world_config import load_emulator
    return load_emulator(Path(path) if path else None)


def sample_inputs(c: Campaign, values: dict[str, float]):
    """(case, emulator config, mechanism config or None) of one sample: what
    :class:`sim_stand.digital.DigitalSim` runs, and what the emulated stand of a HIL sample
    carries (its platform delay: ``stand_delay_s``)."""
    case = apply_case(c.case, values, c.duration_s, c.settle_s)
    emu = nominal_emulator(c, case)
    mech = None
    if any(k in MECHANISM_PARAMETERS for k in values):
        mech = apply_mechanism(_mechanism_config(str(emu.mechanism_path)), values)
    if "stand_delay_s" in values:
        from sim_stand.closed_loop import with_platform_delay
        emu = with_platform_delay(emu, values["stand_delay_s"])
    return case, emu, mech


def nominal_emulator(c: Campaign, case: Case):
    """The campaign's emulator config for ``case``, undispersed (a HIL sample's controller is
    configured for its platform delay)."""
    return _emulator(str(c.emulator_path) if c.emulator_path else None).for_case(case)


def lateral_offset_m(case: Case) -> float:
    """Radial offset of A's origin from P's axis at the start (m)."""
    return float(np.hypot(case.initial.position_m[1], case.initial.position_m[2]))


def angular_misalignment_deg(case: Case) -> float:
    """The total angle between A's and P's axes at the start (deg): the rotation angle of R_PA."""
    c = (np.trace(case.initial.R_PA) - 1.0) / 2.0
    return math.degrees(math.acos(max(-1.0, min(1.0, c))))


__all__ = ["apply_case", "apply_mechanism", "sample_inputs", "nominal_emulator", "lateral_offset_m", "angular_misalignment_deg"]
