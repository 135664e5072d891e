"""The stand's envelope: the contacts a delayed loop can reproduce (docs/validation.md §3.3).

On the stand the vehicles feel the force the hardware produces at the platform's pose, and the
platform is where the predictor put it one lead ``tau`` earlier. No causal predictor knows that
a contact begins before its force is measured, nor that it ends: over the first and the last
``tau`` of each contact the prediction follows the motion without (with) the contact force.
Integrated over one contact of frequency ``w = sqrt(k / m*)`` this changes the coefficient of
restitution by

    dCoR ~ -(w tau)^4 / 12

whatever the compensator, unless it is told the contact's geometry (the onset/release limit).
The ideal delayed loop (a pure delay, the state exact, the force unsampled, the constant-jerk
predictor; ``sim_stand/loop_theory.py``) gives -0.05 .. -0.08 % at ``w tau = 0.3``, -0.4 ..
-0.7 % at 0.5 and -0.5 .. -1.5 % at 0.6 for delays of 2 .. 20 ms; beyond ~0.7 it leaves the
formula (the predictor's own loop gain ``(w tau)^2 (tau / dt) / 3`` passes 1 at long delays and
the prediction rings: +7.9 % at 0.8, 20 ms). A contact is therefore *outside the stand's
envelope* where this limit exceeds the stand's fidelity bound ``B`` (``[delays]
envelope_cor_error_pct``, 1 % by default): ``w tau > (12 B)^(1/4)`` (0.589 for 1 %). No tuning
of the compensator moves that line; a faster platform (smaller ``tau``) or a softer contact does.

``w`` is that of the stiffest contact the case declares (``[loop] contact_stiffness_n_per_m``,
or its ``[contact]`` model's own stiffness) on the vehicles' reduced mass along the docking axis
(a berthing case: the end effector against the payload, the lighter and so the conservative
side). Without a declared stiffness the envelope is not checked (the verdict says so).

Not for the real-time loop's cycle: evaluated at ARM and by the run's verdict.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: [delays] envelope: what an ARM outside the envelope does
ENVELOPE_ACTIONS = ("warn", "refuse")


def omega_tau_limit(bound_pct: float) -> float:
    """The largest ``w tau`` whose onset/release limit ``(w tau)^4 / 12`` stays within
    ``bound_pct`` of the CoR (module docstring).

    Parameters
    ----------
    bound_pct : float
        The fidelity bound on the coefficient of restitution, % (> 0).
    """
    return (12.0 * bound_pct / 100.0) ** 0.25


def onset_limit_pct(omega_tau: float) -> float:
    """The onset/release limit ``(w tau)^4 / 12`` of the CoR, % (module docstring).

    Parameters
    ----------
    omega_tau : float
        The contact's angular frequency times the loop's lead, rad.
    """
    return 100.0 * omega_tau ** 4 / 12.0


def case_reduced_mass_kg(case) -> float:
    """The vehicles' reduced mass m* along the docking axis, kg (a berthing case: the end
    effector's mass against the payload's; module docstring).

    Parameters
    ----------
    case : rt.config.case.Case
        The loaded case.
    """
    ma = case.berthing.arm.end_effector.mass_kg if case.berthing is not None else case.active.mass_kg
    mb = case.passive.mass_kg
    return ma * mb / (ma + mb)


@dataclass(frozen=True)
class Envelope:
    """One case at one lead against the envelope: ``inside`` None when the case declares no
    contact stiffness (not checked)."""
    stiffness_n_per_m: float | None
    reduced_mass_kg: float
    lead_s: float
    bound_pct: float
    omega_radps: float | None
    omega_tau: float | None
    limit: float
    onset_limit_pct: float | None
    inside: bool | None
    reason: str

    def as_event(self) -> dict:
        """The run log's ``envelope`` event (rt.analysis reads it into the run's verdict)."""
        return {"kind": "envelope", "inside": self.inside, "w_tau": self.omega_tau, "limit": self.limit,
                "omega_radps": self.omega_radps, "lead_s": self.lead_s, "stiffness_n_per_m": self.stiffness_n_per_m,
                "reduced_mass_kg": self.reduced_mass_kg, "bound_pct": self.bound_pct,
                "onset_limit_pct": self.onset_limit_pct, "reason": self.reason}


def check_envelope(case, lead_s: float, bound_pct: float) -> Envelope:
    """The case's stiffest declared contact at the lead ``lead_s`` against the envelope.

    Parameters
    ----------
    case : rt.config.case.Case
        The loaded case (``case.loop.contact_stiffness_n_per_m``).
    lead_s : float
        The loop's lead (the delay compensated), s.
    bound_pct : float
        The stand's fidelity bound on the CoR, % (``[delays] envelope_cor_error_pct``).
    """
    k = case.loop.contact_stiffness_n_per_m
    m = case_reduced_mass_kg(case)
    lim = omega_tau_limit(bound_pct)
    if not k:
        return Envelope(None, m, lead_s, bound_pct, None, None, lim, None, None,
                        "the case declares no contact stiffness ([loop] contact_stiffness_n_per_m): "
                        "the envelope is not checked")
    w = math.sqrt(k / m)
    wt = w * lead_s
    onset = onset_limit_pct(wt)
    inside = wt <= lim
    what = (f"w tau = {wt:.3f} (w = {w:.1f} rad/s: {k:.3g} N/m on m* = {m:.4g} kg; lead {1e3 * lead_s:.2f} ms)")
    if inside:
        reason = f"{what} within the envelope's {lim:.3f}: the onset/release limit {onset:.3g} % of the CoR"
    else:
        reason = (f"{what} beyond the envelope's {lim:.3f}: no causal compensator reproduces this contact within "
                  f"{bound_pct:g} % of its CoR (the onset/release limit is {onset:.3g} %); a faster platform "
                  f"(lead below {1e3 * lim / w:.2f} ms) or a softer contact would be inside")
    return Envelope(float(k), m, lead_s, bound_pct, w, wt, lim, onset, inside, reason)
