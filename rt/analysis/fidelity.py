"""The fidelity verdict of one HIL run (issue 40 item 4; docs/validation.md §3.6): PASS, WARN or
FAIL with its reason, from what the run log holds, in one line for the operator.

Four things decide whether a run's numbers can be certified, each taken to the contact's
energy in % of the approach energy and judged against the stand's ``[runlog]
energy_audit_bound_pct`` (1 %: the bound of the energy audit, which is one of them):

* **the energy audit** (rt/analysis/audit.py): the energy the loop injected or removed, from the
  measured wrench on the platform's actual motion against the vehicles' (its own verdict);
* **the lead against the identified delay** (rt.stand.delay_id): a lead whose platform part
  differs from the platform's delay identified in the run by ``d tau`` changes a contact of
  frequency ``w`` by ``-pi w d tau`` of its energy (docs/validation.md §3.3; ``w`` from the
  contact the case declares, the run's loop envelope);
* **the contact gate's withheld impulse** (rt.stand.contact_gate): what of the measured force
  above the noise never reached the vehicles (the rise before the gate opened, a tail after it
  closed), ``J``; the energy it carries is ``v J`` of ``m* v^2 / 2``, i.e. ``2 J / (m* v)``;
* **the noise floor**: the sensor's noise integrated where it reaches the vehicles (the gate's
  open time; the whole run without a gate), ``sigma_F sqrt(T dt)``, against the approach
  momentum: a run cannot resolve its own fidelity below twice that (of the energy).

And the loop envelope judged at ARM (rt.stand.loop_envelope): a contact outside it is beyond
what the loop can reproduce to the bound, whatever the run shows.

FAIL: the energy audit fails, the contact is outside the envelope, or the lead's or the gate's
share exceeds the bound. WARN: the noise floor exceeds the bound (the run cannot tell), a share
exceeds half the bound, or something could not be judged (no contact, no declared contact
stiffness, no identified delay). PASS otherwise. Not real-time: the run log's writer thread
computes it once the run's records are on disk (through the energy audit's hook).
"""
from __future__ import annotations

import math

import numpy as np

PHASE_DYNAMICS = 6


def _f(v):
    return None if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) else float(v)


def fidelity_verdict(run, audit: dict, bound_pct: float) -> dict:
    """The verdict (module docstring) of the HIL run ``run`` (rt.analysis.run.Run) whose energy
    audit is ``audit`` (rt.analysis.audit.energy_verdict's dict); plain floats and strings."""
    from rt.analysis.report import contact_gate_of, dynamics_rows

    h = run.header
    items: dict = {"bound_pct": float(bound_pct)}
    fails, warns, notes = [], [], []
    if run.kind != "hil":
        return {"verdict": "NONE", "reason": "not a HIL run", "line": "fidelity: not judged (not a HIL run)",
                "items": items}
    env = h.get("loop_envelope") or {}
    if env.get("inside") is False:
        fails.append("outside the stand's loop envelope: " + "; ".join(env.get("reasons") or []))
    lo, hi = dynamics_rows(run)
    if hi - lo < 3:
        reason = "; ".join(fails) or "no dynamics in the log"
        verdict = "FAIL" if fails else "NONE"
        return {"verdict": verdict, "reason": reason, "items": items,
                "line": f"fidelity {verdict}: {reason}" if fails else "fidelity: not judged (no dynamics)"}
    rate = float(h.get("rate_hz") or 1000.0)
    dt = 1.0 / rate
    names = [n for n in ("w_P", "rel_twist", "new_sample", "delay") if n in run.fields]
    d = run.read(names, lo, hi)
    w = d["w_P"]
    fn = np.linalg.norm(w[:, :3], axis=1)

    # ---- the loop envelope (judged at ARM; outside: failed above)
    omega = _f(env.get("omega_radps"))
    items["envelope_inside"] = env.get("inside")
    items["omega_tau"] = _f(env.get("omega_tau"))
    if env.get("inside") is None:
        notes.append("loop envelope not judged (no contact stiffness declared: the case's [loop])")

    # ---- the energy audit
    inj = _f(audit.get("injected_pct")) if audit else None
    items["energy_pct"] = inj
    if audit and audit.get("verdict") == "FAIL":
        fails.append(f"energy audit: the loop {'injected' if inj > 0 else 'removed'} {abs(inj):.3g} % of the approach "
                     f"energy (bound {bound_pct:g} %)")
    elif inj is None:
        notes.append("energy audit not judged" + (f" ({audit.get('note')})" if audit and audit.get("note") else ""))

    # approach: closing speed and momentum (from the audit's approach energy)
    v0 = float(np.linalg.norm(d["rel_twist"][0, :3])) if "rel_twist" in d else 0.0
    e_app = _f(audit.get("approach_j")) if audit else None
    momentum = 2.0 * e_app / v0 if e_app and v0 > 0.0 else None

    # ---- the lead against the identified delay
    items["lead_error_ms"] = items["lead_energy_pct"] = None
    if "delay" in d:
        dl = d["delay"]
        ok = np.isfinite(dl[:, 0]) & np.isfinite(dl[:, 1])
        delays = h.get("delays") or {}
        meas = sum(float(delays.get(k) or 0.0) for k in ("sensor_s", "filter_s", "compute_s")) if delays else None
        if ok.any() and meas is not None and h.get("compensate"):
            ident, used = float(dl[ok][-1, 0]), float(dl[ok][-1, 1])
            dtau = (used - meas) - ident
            items["lead_error_ms"] = 1e3 * dtau
            items["delay_identified_ms"] = 1e3 * ident
            if omega is not None:
                e = -100.0 * math.pi * omega * dtau
                items["lead_energy_pct"] = e
                if abs(e) > bound_pct:
                    fails.append(f"the lead's platform part is {1e3 * abs(dtau):.3f} ms {'longer' if dtau > 0 else 'shorter'} "
                                 f"than the platform's identified delay ({1e3 * ident:.3f} ms): {e:+.3g} % of the contact's "
                                 "energy ([delays] identify = \"feed\" follows it)")
                elif abs(e) > 0.5 * bound_pct:
                    warns.append(f"the lead is {1e3 * dtau:+.3f} ms off the identified delay: {e:+.3g} % of the energy")
        elif h.get("compensate"):
            notes.append("platform delay not identified (too little uniform motion)")

    # ---- noise: sigma of the force before the first contact
    i_c = int(np.argmax(fn > 50.0)) if (fn > 50.0).any() else len(fn)
    quiet = slice(0, max(0, i_c - 50))
    sigma = float(np.sqrt(np.mean(np.var(w[quiet, :3], axis=0)))) if i_c - 50 >= 100 else None
    items["noise_sigma_n"] = sigma

    # ---- the contact gate's withheld impulse, and where the noise reaches the vehicles
    cg = contact_gate_of(run)
    gated = cg is not None and cg.enabled and "new_sample" in d
    items["gate_withheld_ns"] = items["gate_energy_pct"] = None
    open_s = (hi - lo) * dt
    if gated:
        from rt.stand import contact_gate as CG
        g = CG.pack_gate(True, cg.on_n, cg.off_n, cg.persist, cg.release_s, dt)
        passed = np.zeros_like(w)
        CG.replay(g, w, d["new_sample"].astype(np.float64), passed, 0, len(w))
        opened = np.any(passed != 0.0, axis=1)
        open_s = float(opened.sum()) * dt
        if sigma is not None:
            real = fn > 4.0 * math.sqrt(3.0) * sigma         # force above the noise's reach
            withheld = ((w - passed)[real, :3]).sum(axis=0) * dt
            J = float(np.linalg.norm(withheld))
            items["gate_withheld_ns"] = J
            if momentum:
                e = 200.0 * J / momentum
                items["gate_energy_pct"] = e
                if e > bound_pct:
                    fails.append(f"the contact gate withheld {J:.3g} N s of force above the noise: {e:.3g} % of the "
                                 "energy ([sensor.contact_gate] on_n / off_n too high for this contact)")
                elif e > 0.5 * bound_pct:
                    warns.append(f"the contact gate withheld {J:.3g} N s ({e:.3g} % of the energy)")
    items["noise_reaches_s"] = open_s
    items["noise_floor_pct"] = None
    if sigma is not None and momentum:
        floor = 200.0 * sigma * math.sqrt(open_s * dt) / momentum      # of the energy: twice the CoR's
        items["noise_floor_pct"] = floor
        if floor > bound_pct:
            warns.append(f"the noise floor ({floor:.3g} % of the energy: {sigma:.3g} N over {open_s:.3g} s on "
                         f"{momentum:.4g} N s) is above the bound: the run cannot resolve its fidelity")
    elif momentum is None:
        notes.append("no approach momentum (no contact energy to judge against)")

    verdict = "FAIL" if fails else ("WARN" if warns or notes else "PASS")
    reason = "; ".join(fails or warns or notes) or "every share within the bound"
    return {"verdict": verdict, "reason": reason, "line": _line(verdict, reason, items), "items": items,
            "shares": _shares(items)}


def _shares(it: dict) -> str:
    """The shares in a few words (the report's first page)."""
    def pct(v):
        return "—" if v is None else f"{v:+.2g} %"
    s = (f"energy {pct(it.get('energy_pct'))}, lead {pct(it.get('lead_energy_pct'))}, gate "
         f"{pct(it.get('gate_energy_pct'))}, noise floor {pct(it.get('noise_floor_pct'))} of the energy "
         f"(bound {it['bound_pct']:g} %)")
    if it.get("omega_tau") is not None:
        s += f"; w tau {it['omega_tau']:.3g} {'inside' if it.get('envelope_inside') else 'OUTSIDE'}"
    return s


def _line(verdict: str, reason: str, it: dict) -> str:
    def pct(v):
        return "—" if v is None else f"{v:+.3g} %"
    parts = [f"energy {pct(it.get('energy_pct'))}"]
    if it.get("lead_error_ms") is not None:
        parts.append(f"lead − identified {it['lead_error_ms']:+.3f} ms ({pct(it.get('lead_energy_pct'))})")
    if it.get("gate_withheld_ns") is not None:
        parts.append(f"gate withheld {it['gate_withheld_ns']:.3g} N s ({pct(it.get('gate_energy_pct'))})")
    if it.get("noise_floor_pct") is not None:
        parts.append(f"noise floor {it['noise_floor_pct']:.3g} %")
    if it.get("omega_tau") is not None:
        parts.append(f"w tau {it['omega_tau']:.3g} ({'inside' if it.get('envelope_inside') else 'OUTSIDE'})")
    head = f"fidelity {verdict}"
    if verdict != "PASS":
        head += f": {reason}"
    return f"{head} — " + ", ".join(parts) + f" (bound {it['bound_pct']:g} % of the energy)"
