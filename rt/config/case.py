"""Docking test case (``config/cases/*.toml``): the two vehicles by reference, the initial
relative state of the docking units as a user specifies it, orbit option, duration and end
criteria. See docs/config.md.

The initial relative pose is that of the active unit frame A in the passive unit frame P of
the *undeformed* ports (mount modes at their initial modal states add to it); x_P points along
the approach, so a unit short of contact has a negative ``position_m[0]`` and a positive
``closing_velocity_mps``.
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Callable

import numpy as np

from rt.dynamics import spatial
from rt.config._common import read_orientation
from rt.config._schema import ConfigError, Table, expect_kind, read_config_bytes
from rt.config.arm import ArmConfig, load_arm
from rt.config.vehicle import Vehicle, load_vehicle


@dataclass(frozen=True)
class InitialState:
    position_m: np.ndarray            # A's origin in P, P components
    R_PA: np.ndarray                  # A-components -> P-components
    misalignment_deg: np.ndarray
    misalignment_sequence: str
    velocity_mps: np.ndarray          # d/dt of position_m as seen in P (closing = +x)
    active_rate_radps: np.ndarray     # inertial angular velocity of the active vehicle, its body axes
    passive_rate_radps: np.ndarray    # same for the passive vehicle
    active_eta: np.ndarray
    active_eta_dot: np.ndarray
    passive_eta: np.ndarray
    passive_eta_dot: np.ndarray


@dataclass(frozen=True)
class Orbit:
    hill: bool = False                 # Hill / Clohessy–Wiltshire terms in the local-orbit frame
    mean_motion_radps: float = 0.0


@dataclass(frozen=True)
class EndCriteria:
    separation_m: float = 0.5          # stop when the units are this far beyond the start distance
    capture_settle_s: float = 2.0      # after capture, run this long, then stop


@dataclass(frozen=True)
class ContactSpec:
    """``[contact]``: what sits between the units in the emulator and the all-digital reference.
    ``model = "mechanism"`` (the default, no parameters): the docking mechanism and interface
    files of ``[vehicles]`` (or the emulator's presets). Any other model parses its own section
    (:func:`contact_models`) and returns its own frozen spec with a ``model`` field, e.g.
    ``model = "elastic_rod"``: :class:`sim_stand.rod.RodContact`."""
    model: str = "mechanism"


#: entry-point group of the contact models that parse a case's ``[contact]`` section: each
#: entry is ``name = "module:parser"``, ``parser(table, reduced_mass_kg) -> spec`` (pyproject.toml)
CONTACT_MODELS_GROUP = "dockstand.contact_models"


def contact_models() -> dict[str, Callable[[Table, float], object]]:
    """The parsers of a case's ``[contact]`` section by model name: ``"mechanism"`` (no
    parameters) and every ``dockstand.contact_models`` entry point, loaded on use. Config never
    imports a model: the model that owns a section registers its parser (docs/architecture.md)."""
    models: dict[str, Callable[[Table, float], object]] = {"mechanism": _mechanism_contact}
    for ep in entry_points(group=CONTACT_MODELS_GROUP):
        models.setdefault(ep.name, _lazy(ep))
    return models


def _lazy(ep) -> Callable[[Table, float], object]:
    def parse(t: Table, m_red: float):
        return ep.load()(t, m_red)
    return parse


def _mechanism_contact(t: Table, m_red: float) -> ContactSpec:
    return ContactSpec()


@dataclass(frozen=True)
class LoopSpec:
    """``[loop]``: where this case's HIL loop must differ from the stand file's, each with its
    reason (the stand file's settings are what every case runs otherwise; docs/validation.md
    §3.3):

    * ``predictor`` (``"acceleration"`` or ``"jerk"``: ``rt.dynamics.coupling``) in place of the
      stand's ``[delays] predictor``, with ``predictor_reason`` (required with it: a run log and
      a report say why this case is not run at the stand's setting);
    * ``contact_stiffness_n_per_m``: the stiffest contact the vehicles feel (for the envelope at
      ARM, ``rt.stand.envelope``); by default the ``[contact]`` model's own ``stiffness_n_per_m``
      where it declares one (an elastic rod, a grapple), otherwise none (not checked).
    """
    predictor: str | None = None
    predictor_reason: str = ""
    contact_stiffness_n_per_m: float | None = None


#: the predictors a case may name (``rt.dynamics.coupling.PREDICTORS``: config imports no kernel)
LOOP_PREDICTORS = ("acceleration", "jerk")


def _loop(t: Table, contact) -> LoopSpec:
    k_contact = getattr(contact, "stiffness_n_per_m", None)
    k_contact = float(k_contact) if k_contact else None
    if not t.has("loop"):
        return LoopSpec(contact_stiffness_n_per_m=k_contact)
    lp = t.table("loop")
    pred = lp.str("predictor", None, choices=LOOP_PREDICTORS)
    why = lp.str("predictor_reason", "")
    if pred is not None and not why.strip():
        raise lp.error("predictor_reason", "a case that runs another predictor than the stand's says why "
                       "(one line: the case's own dynamics that need it)")
    if pred is None and why:
        raise lp.error("predictor_reason", "given without a predictor")
    k = lp.float("contact_stiffness_n_per_m", k_contact, gt=0.0, le=1e9)
    lp.done()
    return LoopSpec(predictor=pred, predictor_reason=why.strip(), contact_stiffness_n_per_m=k)


@dataclass(frozen=True)
class Berthing:
    """``[berthing]``: the case is a berthing (issue 25): the active side is the arm of
    ``config/arms`` (its main spacecraft, two flexible links, the end effector) and the active
    unit A its capture tool; the passive vehicle is the payload and P its grapple fixture (the
    vehicle's ``[port]``). The joints are held by servos about their initial angles."""
    arm: ArmConfig
    arm_path: Path
    joint_stiffness_nm_per_rad: np.ndarray      # shoulder, elbow, wrist
    joint_damping_nms_per_rad: np.ndarray
    tool_position_m: np.ndarray                 # A in the end-effector frame (default: the grasp point)
    R_4A: np.ndarray                            # A-components -> end-effector components

    def total_mass_kg(self) -> float:
        a = self.arm
        return (a.base.mass_kg + a.end_effector.mass_kg
                + sum(lk.rho_kg_per_m * lk.length_m + lk.tip_mass_kg for lk in a.links))


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    duration_s: float
    active: Vehicle
    passive: Vehicle
    initial: InitialState
    orbit: Orbit = field(default_factory=Orbit)
    end: EndCriteria = field(default_factory=EndCriteria)
    mechanism_path: Path | None = None
    interface_path: Path | None = None
    contact: ContactSpec = field(default_factory=ContactSpec)   # or a model's own spec
    berthing: Berthing | None = None
    loop: LoopSpec = field(default_factory=LoopSpec)
    source: str = ""
    digest: str = ""            # sha256 of the case file's bytes (recorded in run logs)


def _modal(t: Table | None, name: str, n: int, owner: str) -> np.ndarray:
    if t is None or not t.has(name):
        return np.zeros(n)
    v = t.array(name, (-1,))
    if v.shape[0] != n:
        raise t.error(name, f"has {v.shape[0]} entries but the {owner} vehicle has {n} modes")
    return v


def _vehicle(t: Table, name: str) -> Vehicle:
    path = t.relative(t.str(name))
    try:
        return load_vehicle(path)
    except ConfigError as e:
        raise t.error(name, f"vehicle file is invalid: {e}") from None


def _optional_path(t: Table, name: str) -> Path | None:
    if not t.has(name):
        return None
    p = t.relative(t.str(name))
    if not p.is_file():
        raise t.error(name, f"file not found: {p}")
    return p


def misalignment_dcm(misalignment_deg, sequence: str) -> np.ndarray:
    """``R_PA`` of the misalignment angles (deg) about the current axes in ``sequence`` (e.g.
    ``"yzx"``); ValueError for a bad sequence. Not for the real-time loop (allocates)."""
    axes = spatial.sequence_codes(sequence)
    R_AP = np.empty((3, 3))
    spatial.dcm_from_sequence(axes, np.radians(np.asarray(misalignment_deg, dtype=np.float64)), R_AP)
    return R_AP.T.copy()


def parse_case(t: Table) -> Case:
    name = t.str("name", t.file.stem)
    desc = t.str("description", "")
    duration = t.float("duration_s", gt=0.0)
    berthing = _berthing(t.table("berthing")) if t.has("berthing") else None
    v = t.table("vehicles")
    if berthing is None:
        active = _vehicle(v, "active")
    else:
        if v.has("active"):
            raise v.error("active", "a berthing case's active side is the arm of [berthing] arm; remove this key")
        a = berthing.arm
        active = Vehicle(name=a.name, mass_kg=berthing.total_mass_kg(), inertia_kgm2=a.base.inertia_kgm2,
                         port_position_m=np.zeros(3), R_CD=np.eye(3), source=str(berthing.arm_path))
    passive = _vehicle(v, "passive")
    mech = _optional_path(v, "mechanism")
    iface = _optional_path(v, "interface")
    v.done()

    i = t.table("initial")
    pos = i.vector("position_m", 3)
    mis = i.vector("misalignment_deg", 3, (0.0, 0.0, 0.0))
    if np.any(np.abs(mis) > 90.0):
        raise i.error("misalignment_deg", f"angles beyond ±90° are not a docking case: {mis.tolist()}")
    seq = i.str("misalignment_sequence", "yzx")
    try:
        R_PA = misalignment_dcm(mis, seq)
    except ValueError as e:
        raise i.error("misalignment_sequence", str(e)) from None
    closing = i.float("closing_velocity_mps")
    lateral = i.vector("lateral_velocity_mps", 2, (0.0, 0.0))
    rate_a = np.radians(i.vector("active_rate_dps", 3, (0.0, 0.0, 0.0)))
    rate_p = np.radians(i.vector("passive_rate_dps", 3, (0.0, 0.0, 0.0)))
    m = i.table("modes") if i.has("modes") else None
    ia = InitialState(
        position_m=pos, R_PA=R_PA, misalignment_deg=mis, misalignment_sequence=seq,
        velocity_mps=np.array([closing, lateral[0], lateral[1]]),
        active_rate_radps=rate_a, passive_rate_radps=rate_p,
        active_eta=_modal(m, "active_eta", len(active.modes), "active"),
        active_eta_dot=_modal(m, "active_eta_dot", len(active.modes), "active"),
        passive_eta=_modal(m, "passive_eta", len(passive.modes), "passive"),
        passive_eta_dot=_modal(m, "passive_eta_dot", len(passive.modes), "passive"),
    )
    if m is not None:
        m.done()
    i.done()

    orbit = Orbit()
    if t.has("orbit"):
        o = t.table("orbit")
        hill = o.bool("hill", False)
        n = o.float("mean_motion_radps", 0.0011313, gt=0.0)
        o.done()
        orbit = Orbit(hill=hill, mean_motion_radps=n)
    end = EndCriteria()
    if t.has("end"):
        e = t.table("end")
        end = EndCriteria(separation_m=e.float("separation_m", 0.5, gt=0.0),
                          capture_settle_s=e.float("capture_settle_s", 2.0, ge=0.0))
        e.done()
    contact = _contact(t, active.mass_kg * passive.mass_kg / (active.mass_kg + passive.mass_kg))
    loop = _loop(t, contact)
    t.done()
    return Case(name=name, description=desc, duration_s=duration, active=active, passive=passive,
                initial=ia, orbit=orbit, end=end, mechanism_path=mech, interface_path=iface,
                contact=contact, berthing=berthing, loop=loop, source=str(t.file))


def _berthing(b: Table) -> Berthing:
    path = b.relative(b.str("arm"))
    try:
        arm = load_arm(path)
    except ConfigError as e:
        raise b.error("arm", f"arm file is invalid: {e}") from None
    kp = b.vector("joint_stiffness_nm_per_rad", 3)
    kd = b.vector("joint_damping_nms_per_rad", 3)
    for name, v in (("joint_stiffness_nm_per_rad", kp), ("joint_damping_nms_per_rad", kd)):
        if np.any(v < 0.0) or not np.all(np.isfinite(v)):
            raise b.error(name, f"servo gains must be finite and >= 0, got {v.tolist()}")
    tool = b.vector("tool_position_m", 3, np.asarray(arm.grasp_point_m, float))
    R_4A = np.eye(3)
    if b.has("tool_orientation"):
        R_4A = read_orientation(b, "tool_orientation")
    b.done()
    return Berthing(arm=arm, arm_path=path, joint_stiffness_nm_per_rad=kp, joint_damping_nms_per_rad=kd,
                    tool_position_m=tool, R_4A=R_4A)


def _contact(t: Table, m_red: float):
    if not t.has("contact"):
        return ContactSpec()
    c = t.table("contact")
    models = contact_models()
    model = c.str("model", "mechanism", choices=tuple(models))
    spec = models[model](c, m_red)
    c.done()
    return spec


def load_case(path: str | Path) -> Case:
    """Load and validate a case file and the vehicle files it names."""
    t = Table.load(path)
    expect_kind(t, "case")
    case = parse_case(t)
    return dataclasses.replace(case, digest=hashlib.sha256(read_config_bytes(Path(path))).hexdigest())


__all__ = ["misalignment_dcm", "Case", "ContactSpec", "contact_models", "CONTACT_MODELS_GROUP", "InitialState", "Orbit", "EndCriteria", "load_case"]
