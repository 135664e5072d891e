"""The stand's loop envelope: can this contact be reproduced through this loop delay at all
(issue 40 item 2; docs/validation.md §3.5)?

A HIL stand measures the contact force and moves the hardware to where the simulated vehicles
will be one loop delay ``tau`` later. For a contact of frequency ``w = sqrt(k / m*)`` two limits
follow from the theory of docs/validation.md §3.3, whatever the compensator's tuning:

* **the causal limit.** No causal compensator knows that a contact has begun before its force
  is measured, nor (without a model of the contact) that it ends: over the first and the last
  ``tau`` of each contact the platform moves as without (with) the contact force. The vehicles'
  rebound is then off by ``dE / E ~ (w tau)^4 / 12`` at each end [to leading order: the platform
  runs ahead of the vehicles by ``w^2 v0 s^3 / 6`` over the onset, ``-k int e x' ds``], i.e. a
  coefficient of restitution off by about ``(w tau)^4 / 12`` for both ends together
  (:func:`causal_limit_pct`; the ideal delayed loop of sim_stand/loop_theory.py reaches it to
  within its own jerk estimate's lag). Where it exceeds the stand's bound, no compensator
  reproduces the contact's energy to that bound;
* **the sampled loop's stability.** The best predictor a 1 kHz loop can run (constant jerk,
  rt/dynamics/coupling.py) feeds the force's rate back into the command with a gain of about
  ``(w tau)^2 (tau / dt) / 3`` (:func:`jerk_gain`); from 1 it rings, and the predictor weighs its
  jerk down to the constant-acceleration prediction, whose own error is ``pi (w tau)^3 / 24`` of
  the CoR (:func:`acceleration_error_pct`). Where that exceeds the bound too, the stand cannot
  run the contact to the bound.

* **the sampling of a damped contact.** A damper's force steps at the first touch (by ``2 zeta``
  of the undamped peak). The force is sampled once a cycle ``dt`` and held: the step reaches the
  vehicles up to half a cycle early or late, which moves ``c v0^2 dt / 2`` of energy: about
  ``2 zeta w dt`` of the CoR at worst (:func:`sampling_limit_pct`; the ideal delayed loop of
  sim_stand/loop_theory.py over the touch's phase within the sample shows it). It adds to the
  others.

A third check is the platform's: the contact's peak relative acceleration ``v w`` (a spring
met at the closing speed ``v``) and the command's step at its onset, where the predictor learns
of the contact one measurement late and moves the command onto its path in one cycle (``c J /
dt^2``, ``J = v w^2`` the onset's jerk, ``c = tau^3 / 6 + dt tau^2 / 2``), against the command
acceleration the stand trips at (``accel_margin x a_max``): above it the run trips
COMMAND_ACCELERATION at the first touch.

:func:`loop_envelope` is pure (no I/O): the controller calls it at ARM with the contact the
case declares (rt.config.case ``[loop]``), the reduced mass, the loop delay (the identified
platform delay when there is one, else the configured one, plus the measurement's part) and the
stand's ``[envelope]`` settings; the run log's header carries its result and the fidelity verdict
(rt/analysis/fidelity.py) says why a run outside is not certifiable.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field


def causal_limit_pct(omega_tau: float) -> float:
    """The CoR error (%, both ends of a contact) no causal compensator without a model of the
    contact avoids: ``(w tau)^4 / 12`` (module docstring)."""
    return 100.0 * omega_tau ** 4 / 12.0


def acceleration_error_pct(omega_tau: float) -> float:
    """The constant-acceleration predictor's CoR error: ``pi (w tau)^3 / 24`` (half its energy
    error ``pi (w tau)^3 / 12``; docs/validation.md §3.3)."""
    return 100.0 * math.pi * omega_tau ** 3 / 24.0


def sampling_limit_pct(damping_ratio: float, omega_radps: float, period_s: float) -> float:
    """A damped contact's CoR error from the touch's phase within the sample, at worst:
    ``2 zeta w dt`` (module docstring)."""
    return 100.0 * 2.0 * damping_ratio * omega_radps * period_s


def jerk_gain(omega_tau: float, tau_s: float, period_s: float) -> float:
    """The constant-jerk path's loop gain ``(w tau)^2 (tau / dt) / 3`` (docs/validation.md §3.3)."""
    return omega_tau ** 2 * (tau_s / period_s) / 3.0


def onset_command_acceleration(closing_speed_mps: float, omega_radps: float, tau_s: float, period_s: float) -> float:
    """The command's acceleration at a contact's onset (module docstring), m/s^2: the larger of
    the contact's own peak ``v w`` and the onset step ``(tau^3 / 6 + dt tau^2 / 2) v w^2 / dt^2``."""
    v, w = abs(closing_speed_mps), omega_radps
    c = tau_s ** 3 / 6.0 + period_s * tau_s ** 2 / 2.0
    return max(v * w, c * v * w * w / period_s ** 2)


@dataclass(frozen=True)
class Envelope:
    """The judgement of one contact through one loop (module docstring). ``inside`` None: no
    contact stiffness declared (nothing to judge)."""
    inside: bool | None
    reasons: tuple = ()                  # why outside (sentences), empty when inside
    stiffness_n_per_m: float | None = None
    mass_kg: float | None = None
    damping_ratio: float = 0.0
    sampling_limit_pct: float | None = None
    omega_radps: float | None = None
    tau_s: float | None = None
    tau_source: str = ""                 # "identified" | "configured"
    period_s: float | None = None
    omega_tau: float | None = None
    causal_limit_pct: float | None = None
    jerk_gain: float | None = None
    best_error_pct: float | None = None  # what the stand's best stable predictor leaves (theory)
    bound_pct: float | None = None
    onset_acceleration_m_s2: float | None = None
    acceleration_limit_m_s2: float | None = None
    refuse: bool = False                 # the stand asks for runs outside to be refused
    notes: tuple = field(default=())

    def as_dict(self) -> dict:
        d = asdict(self)
        d["reasons"] = list(self.reasons)
        d["notes"] = list(self.notes)
        return d

    def sentence(self) -> str:
        """One line for the operator."""
        if self.inside is None:
            return "loop envelope: not judged (the case declares no contact stiffness: [loop] contact_stiffness_n_per_m)"
        head = (f"w tau = {self.omega_tau:.3f} (w {self.omega_radps:.3g} rad/s from k {self.stiffness_n_per_m:.3g} N/m "
                f"on {self.mass_kg:.4g} kg, zeta {self.damping_ratio:g}, tau {1e3 * self.tau_s:.3f} ms {self.tau_source})")
        if self.inside:
            return (f"loop envelope: inside, {head}; causal limit {self.causal_limit_pct:.3g} %, the stand's best "
                    f"{self.best_error_pct:.3g} % of the CoR (bound {self.bound_pct:g} %)")
        return f"loop envelope: OUTSIDE, {head}: " + "; ".join(self.reasons)


def loop_envelope(stiffness_n_per_m: float | None, mass_kg: float, tau_s: float, period_s: float,
                  bound_pct: float = 1.0, closing_speed_mps: float | None = None,
                  acceleration_limit_m_s2: float | None = None, tau_source: str = "configured",
                  refuse: bool = False, damping_ratio: float = 0.0) -> Envelope:
    """Judge a contact of stiffness ``stiffness_n_per_m`` and damping ratio ``damping_ratio`` on
    ``mass_kg`` (the reduced mass, or the lighter mass the contact acts on) through a loop of
    delay ``tau_s`` and period ``period_s`` against ``bound_pct`` (% of the CoR); with the case's
    closing speed and the stand's command acceleration trip level, also the platform's check
    (module docstring). Pure."""
    if stiffness_n_per_m is None or not stiffness_n_per_m > 0.0 or not mass_kg > 0.0:
        return Envelope(None, refuse=refuse, tau_s=tau_s, tau_source=tau_source, period_s=period_s, bound_pct=bound_pct)
    w = math.sqrt(stiffness_n_per_m / mass_kg)
    wt = w * tau_s
    causal = causal_limit_pct(wt)
    gain = jerk_gain(wt, tau_s, period_s)
    predictor = causal if gain < 1.0 else max(causal, acceleration_error_pct(wt))
    sampling = sampling_limit_pct(damping_ratio, w, period_s)
    best = predictor + sampling
    reasons = []
    if causal > bound_pct:
        reasons.append(f"no causal compensator reproduces this contact to {bound_pct:g} %: over the first and last "
                       f"{1e3 * tau_s:.3g} ms of the contact the force is not yet (no longer) measured, "
                       f"(w tau)^4 / 12 = {causal:.3g} % of the CoR")
    elif predictor > bound_pct:
        reasons.append(f"the constant-jerk prediction's loop gain (w tau)^2 (tau/dt) / 3 = {gain:.2f} is beyond 1 (it "
                       f"would ring) and the constant-acceleration prediction leaves pi (w tau)^3 / 24 = {predictor:.3g} % "
                       f"of the CoR, beyond {bound_pct:g} %")
    elif best > bound_pct:
        reasons.append(f"the damper's force steps at the first touch and the {1e3 * period_s:g} ms sampling places the "
                       f"step up to half a cycle off: 2 zeta w dt = {sampling:.3g} % of the CoR, with the prediction's "
                       f"{predictor:.3g} % beyond {bound_pct:g} %")
    onset = lim = None
    if closing_speed_mps is not None and acceleration_limit_m_s2 is not None:
        onset = onset_command_acceleration(closing_speed_mps, w, tau_s, period_s)
        lim = acceleration_limit_m_s2
        if onset > lim:
            reasons.append(f"the platform: the command accelerates by ~{onset:.3g} m/s^2 at the first touch (closing "
                           f"speed {abs(closing_speed_mps):.3g} m/s), beyond the stand's trip at {lim:.3g} m/s^2 "
                           "([limits] a_max_m_s2 x accel_margin): lower the closing speed or use a faster platform")
    return Envelope(not reasons, tuple(reasons), float(stiffness_n_per_m), float(mass_kg), float(damping_ratio),
                    sampling, w, float(tau_s), tau_source, float(period_s), wt, causal, gain, best, float(bound_pct), onset,
                    lim, refuse)


def envelope_of_case(case, stand, identified_platform_s: float | None = None) -> Envelope:
    """:func:`loop_envelope` of a loaded case on a stand, as the controller judges it at ARM:
    the case's ``[loop]`` contact (stiffness; the mass it acts on, else the vehicles' reduced
    mass), the loop delay the predictor will lead by (the measurement's part of the stand's
    ``[delays]`` plus the identified platform delay when one is given, else the configured
    one), the case's closing speed against the stand's command-acceleration trip, and the
    stand's ``[envelope]``. ``case`` and ``stand`` are rt.config's Case and Stand (read by
    attribute: this layer does not import rt.config)."""
    d = stand.delays
    if identified_platform_s is not None and math.isfinite(identified_platform_s):
        tau, src = d.measurement_s + float(identified_platform_s), "identified"
    else:
        tau, src = d.total_s, "configured"
    m_red = case.active.mass_kg * case.passive.mass_kg / (case.active.mass_kg + case.passive.mass_kg)
    loop = case.loop
    mass = loop.contact_mass_kg if loop.contact_mass_kg is not None else m_red
    lim = stand.limits
    v = float(case.initial.velocity_mps[0])
    return loop_envelope(loop.contact_stiffness_n_per_m, mass, tau, 1.0 / stand.rate_hz, stand.envelope.bound_pct,
                         closing_speed_mps=v, acceleration_limit_m_s2=lim.accel_margin * lim.a_max_m_s2,
                         tau_source=src, refuse=stand.envelope.refuse, damping_ratio=loop.contact_damping_ratio)
