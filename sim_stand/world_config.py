"""Emulator config (``config/emulator/*.toml``) -> frozen :class:`EmulatorConfig` (kind
``"emulator"``; docs/models/world.md §7 lists every key).

The stand config (``config/stand.toml``) describes the stand as the controller sees it; this
file describes the emulated physics behind it: the physics rate and integrator, the motion
platform's servo (bandwidth, damping, transport delay, limits), the F/T sensor's noise and its
own chain (internal sample rate, low-pass setting, output phase), the passive unit's mass (its
weight on the sensor), and what sits between the units: the docking mechanism and interface
presets, or an elastic calibration rod.

Every error is ``FILE: KEY: reason`` (:class:`rt.config.ConfigError`); unknown keys are
rejected. ``load_emulator(None)`` (or :meth:`EmulatorConfig.default`) gives the defaults, which
are those of ``config/emulator/default.toml``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from rt.config._schema import ConfigError, Table, expect_kind
from sim_stand.ft_sensor_model import NETFT_INTERNAL_RATE_HZ, NETFT_LOW_PASS_HZ, SensorChain, SensorNoise
from sim_stand.mechanism_kinds import EMULATOR_MODELS, MechanismKind, by_contact_model, kind_of, model_has_mechanism
from sim_stand.platform_model import PlatformParams
from sim_stand.rod import RodParams

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FILE = ROOT / "config" / "emulator" / "default.toml"
DEFAULT_MECHANISM = ROOT / "config" / "mechanisms" / "peripheral_ups.toml"
DEFAULT_INTERFACE = ROOT / "config" / "interfaces" / "peripheral_androgynous.toml"

MODELS = EMULATOR_MODELS                       # ("mechanism", "elastic_rod"); a berthing case brings "grapple" (for_case)
INTEGRATORS = ("semi_implicit_euler", "rk4")
DIGITAL_INTEGRATORS = ("auto", "rosw", "rk23", "semi_implicit_euler", "rk4")
G0 = 9.80665

# Default servo: second-order per actuator with a low-frequency lag 2 zeta / wn = 2.0 ms
# (config/stand.toml [delays] servo_s), well damped; plus the 0.5 ms transport delay.
DEFAULT_PLATFORM = PlatformParams(bandwidth_hz=127.3, damping_ratio=0.8, velocity_max_mps=0.6,
                                  acceleration_max_mps2=10.0, transport_delay_s=0.0005,
                                  physics_dt_s=1e-4)
DEFAULT_NOISE = SensorNoise(sigma_force_n=8.0 / 3.0, sigma_torque_nm=0.5, drift_force_n_per_sqrt_s=0.05,
                            drift_torque_nm_per_sqrt_s=0.005, rating_n=(7200.0, 7200.0, 18000.0),
                            rating_nm=(1400.0, 1400.0, 1400.0))


@dataclass(frozen=True)
class EmulatorConfig:
    """The emulated stand's physics (module docstring)."""

    file: Path | None = None
    name: str = "default"
    model: str = "mechanism"                     # a contact model of sim_stand.mechanism_kinds (MODELS, or a case's)
    physics_rate_hz: float = 10000.0
    integrator: str = "semi_implicit_euler"      # "semi_implicit_euler" | "rk4"
    digital_integrator: str = "auto"             # the all-digital reference's (sim_stand.digital)
    digital_tolerance_m: float = 1e-7            # rosw / rk23: local error tolerance (positions, m)
    gravity_m_per_s2: float = G0                 # along -z of the lab frame W
    platform: PlatformParams = DEFAULT_PLATFORM
    watchdog_s: float = 0.1                      # platform command watchdog (emulator shell)
    sensor_noise: SensorNoise = DEFAULT_NOISE
    sensor_chain: SensorChain = SensorChain()    # the sensor's sampling, low-pass and decimation
    sensor_seed: int = 1
    passive_mass_kg: float = 150.0               # its weight loads the F/T sensor (tared out)
    passive_com_m: tuple[float, float, float] = (0.15, 0.0, 0.0)   # in P
    mechanism_path: Path = DEFAULT_MECHANISM
    interface_path: Path = DEFAULT_INTERFACE
    rod: RodParams | None = None
    grapple: object | None = None                 # sim_stand.grapple.GrappleContact (a berthing case's)
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def physics_dt_s(self) -> float:
        return 1.0 / self.physics_rate_hz

    @classmethod
    def default(cls) -> "EmulatorConfig":
        return cls()

    @property
    def kind(self) -> MechanismKind:
        """The mechanism kind this config puts between the units (``sim_stand.mechanism_kinds``;
        for a docking mechanism, by its file's structure). Reads the mechanism file."""
        if not model_has_mechanism(self.model):
            return kind_of(self.model)
        from sim_stand.dock_mechanism import mechanism_code
        return kind_of(self.model, mechanism_code(self.mechanism_path))

    def for_case(self, case) -> "EmulatorConfig":
        """This config with the case's contact model: a case with ``[contact] model =
        "elastic_rod"`` puts its rod on the stand (the hardware a calibration run mounts), a
        berthing case's ``"grapple"`` its snare; a case that names a mechanism / interface file
        uses those presets. A contact model without a handler here raises
        ``UnknownMechanismKind`` naming it."""
        spec = getattr(case, "contact", None)
        model = spec.model if spec is not None else "mechanism"
        with_spec = by_contact_model({"mechanism": self._with_mechanism_files, "elastic_rod": self._with_rod,
                                      "grapple": self._with_snare}, model, "the emulator config (sim_stand.world_config)")
        return with_spec(case, spec)

    def _with_rod(self, case, spec) -> "EmulatorConfig":
        return replace(self, model="elastic_rod", rod=spec.rod_params())

    def _with_snare(self, case, spec) -> "EmulatorConfig":
        return replace(self, model="grapple", grapple=spec)

    def _with_mechanism_files(self, case, spec) -> "EmulatorConfig":
        kw = {}
        if getattr(case, "mechanism_path", None) is not None:
            kw["mechanism_path"] = Path(case.mechanism_path)
        if getattr(case, "interface_path", None) is not None:
            kw["interface_path"] = Path(case.interface_path)
        return replace(self, model="mechanism", **kw) if kw else self


def _rod(t: Table, required: bool) -> RodParams | None:
    if not t.has("rod"):
        if required:
            raise t.error("rod", 'required when model = "elastic_rod"')
        return None
    r = t.table("rod")
    rod = RodParams(stiffness_n_per_m=r.float("stiffness_n_per_m", gt=0.0),
                    damping_ns_per_m=r.float("damping_ns_per_m", 0.0, ge=0.0),
                    tip_offset_m=r.float("tip_offset_m", 0.0, ge=-1.0, le=1.0))
    r.done()
    return rod


def parse_emulator(t: Table) -> EmulatorConfig:
    name = t.str("name", t.file.stem)
    model = t.str("model", "mechanism", choices=MODELS)
    mech = _file(t, "mechanism", DEFAULT_MECHANISM)
    iface = _file(t, "interface", DEFAULT_INTERFACE)

    ph = t.table("physics", {})
    rate = ph.float("rate_hz", 10000.0, ge=1000.0, le=100000.0)
    integ = ph.str("integrator", "semi_implicit_euler", choices=INTEGRATORS)
    dinteg = ph.str("digital_integrator", "auto", choices=DIGITAL_INTEGRATORS)
    dtol = ph.float("digital_tolerance_m", 1e-7, gt=0.0, le=1e-3)
    g = ph.float("gravity_m_per_s2", G0, ge=0.0, le=20.0)
    ph.done()

    pf = t.table("platform", {})
    dp = DEFAULT_PLATFORM
    bw = pf.float("bandwidth_hz", dp.bandwidth_hz, gt=0.0)
    zeta = pf.float("damping_ratio", dp.damping_ratio, gt=0.0, le=2.0)
    delay = pf.float("transport_delay_s", dp.transport_delay_s, ge=0.0, le=1.0)
    vmax = pf.float("velocity_max_m_s", dp.velocity_max_mps, gt=0.0)
    amax = pf.float("acceleration_max_m_s2", dp.acceleration_max_mps2, gt=0.0)
    wd = pf.float("watchdog_s", 0.1, ge=0.0)
    interp = pf.str("interpolation", "hold", choices=("hold", "linear"))
    dt = 1.0 / rate
    wn_dt = 2.0 * math.pi * bw * dt
    if wn_dt > 0.2:
        raise pf.error("bandwidth_hz", f"{bw:g} Hz is too high for the physics rate {rate:g} Hz "
                       f"(wn dt = {wn_dt:.3g} > 0.2: the servo's semi-implicit Euler step is inaccurate)")
    steps = delay / dt
    if abs(steps - round(steps)) > 1e-6:
        raise pf.error("transport_delay_s", f"must be a whole number of physics steps ({dt:g} s); got {delay:g} s")
    pf.done()
    platform = PlatformParams(bandwidth_hz=bw, damping_ratio=zeta, velocity_max_mps=vmax, acceleration_max_mps2=amax,
                              transport_delay_s=delay, physics_dt_s=dt, interpolation=interp)

    st = t.table("sensor", {})
    dn = DEFAULT_NOISE
    for old, new in (("rating_force_n", "rating_n = [Fx, Fy, Fz]"), ("rating_torque_nm", "rating_nm = [Tx, Ty, Tz]")):
        if old in st.data:
            raise st.error(old, f"the sensor saturates per axis of S: use {new} (N, N m; the stand's "
                                f"[sensor] ratings, e.g. [7200, 7200, 18000] N for an Omega190-class sensor)")
    noise = SensorNoise(sigma_force_n=st.float("sigma_force_n", dn.sigma_force_n, ge=0.0),
                        sigma_torque_nm=st.float("sigma_torque_nm", dn.sigma_torque_nm, ge=0.0),
                        drift_force_n_per_sqrt_s=st.float("drift_force_n_per_sqrt_s", dn.drift_force_n_per_sqrt_s, ge=0.0),
                        drift_torque_nm_per_sqrt_s=st.float("drift_torque_nm_per_sqrt_s",
                                                            dn.drift_torque_nm_per_sqrt_s, ge=0.0),
                        rating_n=tuple(float(v) for v in st.vector("rating_n", 3, dn.rating_n, gt=0.0)),
                        rating_nm=tuple(float(v) for v in st.vector("rating_nm", 3, dn.rating_nm, gt=0.0)))
    seed = st.int("seed", 1, ge=0)
    chain = _sensor_chain(st)
    st.done()

    pu = t.table("passive_unit", {})
    pm = pu.float("mass_kg", 150.0, ge=0.0)
    pc = pu.vector("com_m", 3, (0.15, 0.0, 0.0))
    pu.done()

    rod = _rod(t, model == "elastic_rod")
    t.done()
    return EmulatorConfig(file=t.file, name=name, model=model, physics_rate_hz=rate, integrator=integ,
                          digital_integrator=dinteg, digital_tolerance_m=dtol,
                          gravity_m_per_s2=g, platform=platform, watchdog_s=wd, sensor_noise=noise,
                          sensor_chain=chain, sensor_seed=seed, passive_mass_kg=pm,
                          passive_com_m=tuple(float(x) for x in pc), mechanism_path=mech, interface_path=iface,
                          rod=rod, raw=t.data)


def _sensor_chain(st: Table) -> SensorChain:
    """``[sensor] internal_rate_hz, low_pass, output_phase``: the sensor's own chain
    (sim_stand/ft_sensor_model.py; defaults: a Net F/T's 7000 Hz, no filter, the output at the
    frame). Whether the internal rate is a whole multiple of the frame rate is the stand's
    (``sim_stand.emulator.SensorDevice``)."""
    settings = ", ".join(f"{i} = {f:g} Hz" for i, f in enumerate(NETFT_LOW_PASS_HZ) if i)
    last = len(NETFT_LOW_PASS_HZ) - 1
    v = st.data.get("low_pass")
    if isinstance(v, int) and not isinstance(v, bool) and not 0 <= v <= last:
        raise st.error("low_pass", f"{v} is not a Net F/T low-pass setting: 0 (no filter) to {last} "
                                   f"({settings} cut-off)")
    low_pass = st.int("low_pass", 0, ge=0, le=last)
    v = st.data.get("output_phase")
    if isinstance(v, (int, float)) and not isinstance(v, bool) and not 0.0 <= v < 1.0:
        raise st.error("output_phase", f"{v:g} is not a phase: the sensor's output sample precedes the "
                                       f"controller's frame by this fraction of a frame, in [0, 1)")
    phase = st.float("output_phase", 0.0, ge=0.0, lt=1.0)
    v = st.data.get("internal_rate_hz")
    if isinstance(v, (int, float)) and not isinstance(v, bool) and not 1000.0 <= v <= 100000.0:
        raise st.error("internal_rate_hz", f"{v:g} Hz is not an F/T sensor's internal sample rate: it must lie "
                                           f"within [1000, 100000] Hz (an ATI Net F/T samples at 7000 Hz)")
    rate = st.float("internal_rate_hz", NETFT_INTERNAL_RATE_HZ, ge=1000.0, le=100000.0)
    cutoff = NETFT_LOW_PASS_HZ[low_pass]
    if cutoff >= rate / 2.0:
        raise st.error("low_pass", f"setting {low_pass} ({cutoff:g} Hz) is not below the Nyquist frequency "
                                   f"of internal_rate_hz = {rate:g} Hz")
    return SensorChain(internal_rate_hz=rate, low_pass=low_pass, output_phase=phase)


def _file(t: Table, name: str, default: Path) -> Path:
    if not t.has(name):
        return default
    p = t.relative(t.str(name))
    if not p.is_file():
        raise t.error(name, f"file not found: {p}")
    return p.resolve()


def load_emulator(path: str | Path | None = None) -> EmulatorConfig:
    """Load and validate an emulator config; ``None`` gives the defaults."""
    if path is None:
        return EmulatorConfig.default()
    t = Table.load(path)
    expect_kind(t, "emulator")
    return parse_emulator(t)


__all__ = ["EmulatorConfig", "load_emulator", "parse_emulator", "ConfigError", "MODELS", "INTEGRATORS", "DIGITAL_INTEGRATORS"]
