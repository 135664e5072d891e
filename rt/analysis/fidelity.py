"""The run's fidelity verdict (issue 40 item 4; docs/validation.md §3.5): one PASS / WARN / FAIL
line with its reason, from checks that each weigh one way the stand's loop can make a run
unlike the docking it emulates. Computed off the loop from the run log, in the same pass as the
energy audit (rt/analysis/audit.py :func:`~rt.analysis.audit.run_audit`, called by the run
log's writer thread once the last record is on disk; ``dockstand report`` computes it again
for page 1).

The one scale: every check states its effect in % of the run's **approach energy** and is
judged against the stand's energy bound ``B`` (``[runlog] energy_audit_bound_pct``, 1 % by
default), the bound the energy audit certifies. A check that cannot be weighed WARNs: a run
whose fidelity cannot be shown is not shown faithful.

========  =====================================================  ============  ===========  ===========
check     figure (% of the approach energy)                      PASS          WARN         FAIL
========  =====================================================  ============  ===========  ===========
energy    the energy audit's loop share (mechanism − vehicles)   ≤ B           not judged   > B
delay     the share the lead's error gives: ε S / E (below)      ≤ B/2         ≤ B          > B
gate      what the contact gate lost of the contact: 2 δJ / p    ≤ B/2         ≤ B          > B
noise     the sensor noise's 1σ walk of the outcome: 2 σ_J / p   ≤ B           > B          never
envelope  the run log's ``envelope`` event (below)               inside        its status   outside
========  =====================================================  ============  ===========  ===========

* **energy** — :func:`energy_verdict_of` (the existing audit, unchanged): PASS / FAIL as its
  ``verdict``; ``NONE`` (no approach energy, no measured pose) is a WARN.
* **delay** — the lead the predictor used against the platform delay the run identified
  (rt/stand/delay_id.py, the run log's ``delay`` record). A lead ε longer than the delay (its
  platform part: the lead less the measurement's part, sensing, filter and compute) moves the
  force the vehicles meet to the state ε later, ``F + ε dF/dt``: the vehicles lose
  ``ε S`` more energy, ``S = ∫ p(dF/dt) dt`` over the contact (``p`` the contact power of
  rt/analysis/energy.py on the simulated motion). For the undamped spring contact of
  frequency w, ``S = π w E``: ``ε S / E = π w ε``, twice the CoR's ``-π w ε / 2``
  (docs/validation.md §3.3) as energy goes with the square of the velocity; ``w_eff = S / (π E)``
  is the run's own contact frequency in that sense (reported). Measured on the nominal docking
  demo: a lead 0.142 ms long predicts −0.10 % where the audit measures −0.11 %. PASS within half
  the bound (the rest is left to everything else the loop does), FAIL beyond the bound (a known
  error: no run, however lucky, certifies it). No contact in the run: judged on time,
  ``|ε| <= DELAY_TIME_BOUND_S`` PASS, else WARN (nothing in this run felt it; the next contact
  will). WARN when the delay was never identified (``identify = "off"``, or too little uniform
  motion: the lead is unchecked).
* **gate** — the contact gate (rt/stand/contact_gate.py) withholds the samples below its
  threshold; what it withholds is not in the log, but its input (``w_P``, ``new_sample``) and
  its settings (the header) are, so the gate is replayed here, by its own kernel. Lost: the
  withheld impulse of the rise before each opening (the samples above ``off_n`` the gate held
  back) less what it passes of it from the opening on (the rise it recovers, spread over the
  following cycles), and of any force above ``off_n`` held back for
  ``release_s`` or longer without the gate opening (a contact it never passed; a shorter excursion
  is noise, which the gate is there to withhold). The figure: ``2 δJ / p`` (a momentum error
  δJ on the approach momentum p is ``2 δJ / p`` of its energy); the reason gives δJ against the
  impulse exchanged through the open gate. A gate that is off loses nothing: PASS.
* **noise** — the sensor noise's impulse on the vehicles over the time it reaches them (the
  whole dynamics without the gate, the gate's open time with it), ``σ_J = σ_F sqrt(T dt)``
  (:func:`cor_noise_floor_pct`, the calibration's noise floor; ``σ_F`` per axis of the sensor's
  own unfiltered force ``w_S``, from the differences of its successive samples before the
  contact: a low-pass keeps the noise's DC content, which is what integrates), in % of the
  approach momentum ``p = 2 E / v`` (v the closing speed at the dynamics' start), doubled for
  energy. Above the bound a single run cannot show its fidelity (WARN, never FAIL: the loop did
  no wrong; judge the mean of several runs, or a quieter sensor).
* **envelope** (extension point) — a run-log event of kind ``envelope`` (the last one counts),
  written by whoever judges whether the contact was within what a causal compensator can
  reproduce (contact frequency × delay), with the fields ``w_tau`` (float, the run's w τ),
  ``limit`` (float, the largest w τ reproducible), ``inside`` (bool) and ``reason`` (str), and
  optionally ``status`` ("PASS" / "WARN" / "FAIL"; default PASS when inside, FAIL outside);
  ``inside`` null: not checked (rt.stand.envelope: the case declares no contact stiffness), no check.
  Its check: name ``envelope``, figure ``w_tau``, bound ``limit``, unit "rad". A malformed event
  WARNs. A check that needs the run's figures instead is a function ``f(facts) -> dict | None``
  (``facts``: :class:`Facts`, filled by :func:`measure`; the dict made by :func:`check`)
  appended to :data:`CHECKS`.

Each check is a dict ``{"name", "status", "figure", "bound", "unit", "reason"}`` (figure and
bound may be None); the verdict ``{"status", "reason", "bound_pct", "checks"}``: the worst
status, and the reason of the first check with it (all PASS: the check nearest its bound).
:func:`format_fidelity` gives the one line, ``fidelity PASS: ...``. Not real-time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

STATUSES = ("PASS", "WARN", "FAIL")
DELAY_TIME_BOUND_S = 0.5e-3     # no contact to weigh the lead's error by: half a cycle at 1 kHz
NOISE_MIN_SAMPLES = 50          # differences of free-flight samples the noise's σ needs
CHUNK = 1 << 17                 # records per chunk (bounded memory on long logs)


# ---------------------------------------------------------------------- the shared figures
def energy_verdict_of(a, note: str, bound_pct: float) -> dict:
    """The energy audit's verdict dict (rt/analysis/audit.py's module docstring) from an
    :class:`rt.analysis.energy.EnergyAudit` ``a`` (None: no audit, ``note`` says why)."""
    out = {"bound_pct": float(bound_pct), "approach_j": None, "vehicles_j": None, "mechanism_j": None,
           "stand_injected_j": None, "injected_pct": None, "verdict": "NONE", "note": note}
    if a is None:
        return out
    out.update(approach_j=_f(a.approach_j), vehicles_j=_f(a.vehicles_j), mechanism_j=_f(a.mechanism_j),
               stand_injected_j=_f(a.stand_injected_j), injected_pct=_f(a.injected_pct_of_approach))
    if out["injected_pct"] is not None:
        out["verdict"] = "PASS" if abs(out["injected_pct"]) <= bound_pct else "FAIL"
    elif not note:
        out["note"] = ("no measured platform pose: the loop's share cannot be told" if out["mechanism_j"] is None
                       else "no approach energy to judge against")
    return out


def cor_noise_floor_pct(sigma_force_n: float, contact_s: float, dt_s: float, momentum_ns: float,
                        cor_ideal: float = 1.0) -> float:
    """One sigma of the measured CoR's scatter that the sensor's white noise alone gives, in %
    of the ideal CoR: the noise's impulse over the time it reaches the vehicles (the contact
    with the contact gate, else the whole run), ``sigma_F sqrt(T dt)``, over the approach
    momentum ``m* v`` (docs/validation.md §3.3). Below it a single run cannot tell the loop's
    error from the noise's."""
    return 100.0 * sigma_force_n * math.sqrt(contact_s * dt_s) / (momentum_ns * cor_ideal)


def _f(v):
    return None if v is None or not math.isfinite(v) else float(v)


@dataclass
class Facts:
    """What the checks read: measured once from the run (:func:`measure`)."""
    bound_pct: float
    energy: dict                                 # energy_verdict_of's dict
    events: list = field(default_factory=list)   # the run log's events
    contact: bool = False                        # a force above contact_n in the dynamics
    contact_n: float = 50.0
    closing_speed_m_s: float | None = None
    # the delay: identification mode (None: not logged), the last valid estimate, the lead's
    # platform part (over the contact, weighted by S; else at the end), the predicted share
    identify: str | None = None
    compensate: bool = True                      # the predictor led (the header's compensate)
    delay_logged: bool = False
    identified_s: float | None = None
    lead_platform_s: float | None = None
    sensitivity_j_s: float | None = None          # S = ∫ p(dF/dt) dt over the contact
    delay_share_pct: float | None = None          # -ε S / E, % (the loop's share it predicts)
    # the contact gate (None: off or not logged)
    gate_on: bool = False
    gate_lost_ns: float = 0.0
    gate_exchanged_ns: float = 0.0
    gate_open_s: float = 0.0
    # the noise
    noise_sigma_n: float | None = None
    noisy_s: float | None = None
    sample_dt_s: float | None = None
    noise_note: str = ""

    @property
    def approach_j(self) -> float | None:
        e = self.energy.get("approach_j")
        return float(e) if e is not None and e > 0.0 else None

    @property
    def momentum_ns(self) -> float | None:
        """The approach momentum m* v = 2 E / v (N s); None without either."""
        e, v = self.approach_j, self.closing_speed_m_s
        return 2.0 * e / v if e is not None and v is not None and v > 1e-9 else None

    @property
    def noise_floor_pct(self) -> float | None:
        """The noise's 1σ impulse in % of the approach momentum (:func:`cor_noise_floor_pct`)."""
        p = self.momentum_ns
        if p is None or self.noise_sigma_n is None or self.noisy_s is None or self.sample_dt_s is None:
            return None
        return cor_noise_floor_pct(self.noise_sigma_n, self.noisy_s, self.sample_dt_s, p)


# ---------------------------------------------------------------------- measuring the run
def measure(run, lo: int, hi: int, bound_pct: float, energy: dict, *, measurement_s: float | None,
            gate=None, contact_n: float = 50.0) -> Facts:
    """The :class:`Facts` of records ``lo:hi`` (the dynamics) of a HIL run: ``energy`` the energy
    audit's dict, ``measurement_s`` the lead's non-platform part (None: unknown), ``gate`` the
    :class:`rt.config.stand.ContactGate` in effect (None: unknown), ``contact_n`` the stand's
    contact threshold (N, on the filtered force). In chunks of :data:`CHUNK` records."""
    from rt.analysis.energy import contact_power

    h = run.header
    fx = Facts(float(bound_pct), energy, events=list(run.events), contact_n=float(contact_n))
    fx.identify = h.get("delay_identify")
    need = ("t", "w_P", "rel_pose", "rel_twist")
    if hi - lo < 3 or any(n not in run.fields for n in need):
        fx.noise_note = ("fewer than three records in the dynamics" if hi - lo < 3 else
                         "the log lacks " + ", ".join(n for n in need if n not in run.fields))
        fx.delay_logged = "delay" in run.fields
        return fx
    dt = 1.0 / float(h.get("rate_hz") or 1000.0)
    have = run.fields
    fx.delay_logged = "delay" in have
    compensate = fx.compensate = bool(h.get("compensate", True))
    names = [n for n in ("t", "w_P", "w_S", "rel_pose", "rel_twist", "new_sample", "delay") if n in have]
    gstate = None
    if gate is not None and gate.enabled and "new_sample" in have:
        from rt.stand import contact_gate as CG
        gstate = CG.pack_gate(True, gate.on_n, gate.off_n, gate.persist, gate.release_s, dt)
        release = int(gstate[CG.G_RELEASE])
        fx.gate_on = True
        w_out = np.zeros(6)
        pending = np.zeros(3)       # the withheld impulse of the current excursion above off_n
        pending_n = 0
    s_sum = lead_s_sum = 0.0        # Σ p dt and Σ lead p dt over the contact
    first_contact = None
    noise_sq = np.zeros(3)
    noise_n = 0
    new_total = 0
    last_w = None                   # the previous new sample's w_S (the noise's differences)
    last_id = None
    last_lead = None
    prev = None                     # the record before the chunk (its w_P, for dF/dt)
    for a in range(lo, hi, CHUNK):
        b = min(hi, a + CHUNK)
        d = run.read(names, a, b)
        n = b - a
        wP = d["w_P"]
        f = np.linalg.norm(wP[:, :3], axis=1)
        hit = f > contact_n
        if first_contact is None and hit.any():
            first_contact = a + int(np.argmax(hit))
            fx.contact = True
        new = d["new_sample"] != 0.0 if "new_sample" in d else np.ones(n, bool)
        new_total += int(np.sum(new))
        # the delay's sensitivity S over the contact (each record's force rate, on its step's motion)
        if fx.delay_logged:
            dl = d["delay"]
            ok = np.isfinite(dl[:, 0])
            if ok.any():
                last_id = float(dl[ok][-1, 0])
            used = dl[:, 1]
            if np.isfinite(used).any():
                last_lead = float(used[np.isfinite(used)][-1])
        wprev = np.vstack([prev[0][None, :], wP[:-1]]) if prev is not None else np.vstack([wP[:1], wP[:-1]])
        rprev = np.vstack([prev[1][None, :], d["rel_pose"][:-1]]) if prev is not None else \
            np.vstack([d["rel_pose"][:1], d["rel_pose"][:-1]])
        tprev = np.vstack([prev[2][None, :], d["rel_twist"][:-1]]) if prev is not None else \
            np.vstack([d["rel_twist"][:1], d["rel_twist"][:-1]])
        rate = (wP - wprev) / dt
        r = 0.5 * (d["rel_pose"][:, :3] + rprev[:, :3])
        tw = 0.5 * (d["rel_twist"] + tprev)
        p = contact_power(rate, r, tw[:, :3], tw[:, 3:6]) * dt
        if prev is None:
            p[0] = 0.0
        hprev = np.concatenate([[prev[3] if prev is not None else False], hit[:-1]])
        inc = hit | hprev               # the contact's records and the step after each
        s_sum += float(np.sum(p[inc]))
        if fx.delay_logged:
            lead = d["delay"][:, 1] if compensate else np.zeros(n)
            okl = inc & np.isfinite(lead)
            lead_s_sum += float(np.sum(lead[okl] * p[okl]))
        prev = (wP[-1].copy(), d["rel_pose"][-1].copy(), d["rel_twist"][-1].copy(), bool(hit[-1]))
        # the noise: successive new samples of w_S before the contact (5 records of margin)
        if "w_S" in d:
            stop = n if first_contact is None else max(0, min(n, first_contact - 5 - a))
            ws = d["w_S"][:stop, :3][new[:stop]]
            if len(ws):
                seq = ws if last_w is None else np.vstack([last_w[None, :], ws])
                dd = np.diff(seq, axis=0)
                noise_sq += np.sum(dd * dd, axis=0)
                noise_n += len(dd)
                last_w = ws[-1].copy()
        # the contact gate, replayed by its kernel
        if gstate is not None:
            for i in range(n):
                was_open = gstate[CG.G_OPEN] != 0.0
                CG.gate(gstate, wP[i], w_out, bool(new[i]))
                is_open = gstate[CG.G_OPEN] != 0.0
                if is_open:
                    fx.gate_open_s += dt
                    fx.gate_exchanged_ns += float(np.linalg.norm(w_out[:3])) * dt
                held = (wP[i, :3] - w_out[:3]) * dt
                if not was_open and is_open:             # the opening: the rise's loss is known
                    # what the gate passes of the withheld rise: this cycle's share and the
                    # shares still to come (rt.stand.contact_gate: the rise recovered, spread)
                    passed = -held + gstate[CG.G_DEBT:CG.G_DEBT + 3] * gstate[CG.G_DEBT_N] * dt
                    fx.gate_lost_ns += max(0.0, float(np.linalg.norm(pending)) - float(np.linalg.norm(passed)))
                    pending[:] = 0.0
                    pending_n = 0
                elif not is_open:
                    if f[i] > gate.off_n:
                        pending += held
                        pending_n += 1
                    else:
                        if pending_n >= release:          # a contact the gate never passed
                            fx.gate_lost_ns += float(np.linalg.norm(pending))
                        pending[:] = 0.0
                        pending_n = 0
    if gstate is not None and pending_n >= release:
        fx.gate_lost_ns += float(np.linalg.norm(pending))
    # the noise: too few free-flight samples in the dynamics → the records before it
    if noise_n < NOISE_MIN_SAMPLES and "w_S" in have and lo > 1:
        a0 = max(0, lo - 1000)
        d0 = run.read([n for n in ("w_S", "new_sample") if n in have], a0, lo)
        ws = d0["w_S"][:, :3]
        if "new_sample" in d0:
            ws = ws[d0["new_sample"] != 0.0]
        if len(ws) > NOISE_MIN_SAMPLES:
            dd = np.diff(ws, axis=0)
            noise_sq, noise_n = np.sum(dd * dd, axis=0), len(dd)
            fx.noise_note = "before the dynamics (too little free flight in it)"
    if noise_n >= NOISE_MIN_SAMPLES:
        fx.noise_sigma_n = float(math.sqrt(np.mean(noise_sq / (2.0 * noise_n))))
    elif "w_S" not in have:
        fx.noise_note = "the log has no sensor wrench w_S"
    else:
        fx.noise_note = f"fewer than {NOISE_MIN_SAMPLES} sensor samples before the contact"
    t0, t1 = run.read(["t"], lo, lo + 1)["t"][0], run.read(["t"], hi - 1, hi)["t"][0]
    span = float(t1 - t0) + dt
    fx.sample_dt_s = span / new_total if new_total else None
    fx.noisy_s = fx.gate_open_s if fx.gate_on else span
    tw0 = run.read(["rel_twist"], lo, lo + 1)["rel_twist"][0]
    fx.closing_speed_m_s = float(np.linalg.norm(tw0[:3]))
    # the delay
    fx.identified_s = last_id
    if fx.delay_logged and measurement_s is not None:
        if fx.contact and s_sum != 0.0:
            lead_eff = lead_s_sum / s_sum                      # the lead over the contact, weighted by S
        else:
            lead_eff = (last_lead if compensate else 0.0) if last_lead is not None else None
        fx.lead_platform_s = None if lead_eff is None else lead_eff - measurement_s
    if fx.contact:
        fx.sensitivity_j_s = s_sum
        e = fx.approach_j
        if e is not None and fx.lead_platform_s is not None and fx.identified_s is not None:
            fx.delay_share_pct = -100.0 * (fx.lead_platform_s - fx.identified_s) * s_sum / e
    return fx


# ---------------------------------------------------------------------- the checks
def check(name: str, status: str, figure, bound, reason: str, unit: str = "%") -> dict:
    """One check's dict (module docstring): what a check function returns."""
    return {"name": name, "status": status, "figure": _f(figure) if figure is not None else None,
            "bound": _f(bound) if bound is not None else None, "unit": unit, "reason": reason}


def _pct(v, sign=True) -> str:
    from rt.analysis.numbers import percent
    return percent(v, sign=sign)


def _ms(s, sign=False) -> str:
    return f"{1e3 * s:{'+' if sign else ''}.3f} ms"


def _graded(x: float, b: float) -> str:
    """PASS within half the bound, WARN within it, FAIL beyond (the delay and the gate)."""
    return "PASS" if abs(x) <= 0.5 * b else ("WARN" if abs(x) <= b else "FAIL")


def check_energy(fx: Facts) -> dict:
    e, b = fx.energy, fx.bound_pct
    pct = e.get("injected_pct")
    if e.get("verdict") in ("PASS", "FAIL") and pct is not None:
        where = "within" if e["verdict"] == "PASS" else "beyond"
        return check("energy", e["verdict"], pct, b,
                     f"the loop injected {_pct(pct)} of the approach energy, {where} ±{b:g} % (the energy audit)")
    return check("energy", "WARN", None, b, "the energy audit could not judge the run"
                 + (f": {e['note']}" if e.get("note") else ""))


def check_delay(fx: Facts) -> dict:
    b = fx.bound_pct
    if not fx.delay_logged:
        return check("delay", "WARN", None, b, "the log has no delay record: the lead is unchecked")
    if fx.identify == "off":
        return check("delay", "WARN", None, b, "the platform's delay was not identified ([delays] identify = "
                     "\"off\"): the lead is unchecked")
    if fx.identified_s is None:
        return check("delay", "WARN", None, b, "the platform's delay never became identified (too little uniform "
                     "motion): the lead is unchecked")
    if fx.lead_platform_s is None:
        return check("delay", "WARN", None, b, "the lead's platform part is unknown (no tau or stand snapshot in "
                     "the header): the lead is unchecked")
    eps = fx.lead_platform_s - fx.identified_s
    what = (f"the lead's platform part {_ms(fx.lead_platform_s)} is {_ms(abs(eps))} "
            f"{'longer' if eps > 0 else 'shorter'} than the identified platform delay {_ms(fx.identified_s)}")
    fix = ("; correct the stand's [delays] or identify = \"feed\"" if fx.compensate else
           "; the run's delay compensation was off")
    if fx.delay_share_pct is None:
        if fx.contact and fx.approach_j is None:
            return check("delay", "WARN", None, b, what + ": no approach energy to weigh it against")
        st = "PASS" if abs(eps) <= DELAY_TIME_BOUND_S else "WARN"
        return check("delay", st, 1e3 * eps, 1e3 * DELAY_TIME_BOUND_S,
                     what + f": no contact in this run to weigh it; {'within' if st == 'PASS' else 'beyond'} "
                     f"±{_ms(DELAY_TIME_BOUND_S)}" + (fix if st != "PASS" else ""), unit="ms")
    x = fx.delay_share_pct
    st = _graded(x, b)
    w = fx.sensitivity_j_s / (math.pi * fx.approach_j) if fx.approach_j else float("nan")
    tail = {"PASS": f"within ±{0.5 * b:g} %", "WARN": f"more than half the ±{b:g} % bound",
            "FAIL": f"beyond ±{b:g} %"}[st]
    return check("delay", st, x, b, f"{what}: {_pct(x)} of the approach energy (the contact's w_eff "
                 f"{w:.3g} rad/s), {tail}" + (fix if st != "PASS" else ""))


def check_gate(fx: Facts) -> dict:
    b = fx.bound_pct
    if not fx.gate_on:
        return check("gate", "PASS", 0.0, b, "contact gate off: the dynamics received every sample (the noise "
                     "outside the contact too: see the noise check)")
    if fx.gate_exchanged_ns <= 0.0 and fx.gate_lost_ns <= 0.0:
        return check("gate", "PASS", 0.0, b, "no force reached the contact gate's thresholds: nothing withheld")
    p = fx.momentum_ns
    of = (f"{fx.gate_lost_ns:.3g} N s of the contact's impulse "
          + (f"({_pct(100.0 * fx.gate_lost_ns / fx.gate_exchanged_ns, sign=False)} of the "
             f"{fx.gate_exchanged_ns:.4g} N s exchanged through the gate)" if fx.gate_exchanged_ns > 0.0
             else "(no impulse passed the gate)"))
    if p is None:
        return check("gate", "WARN", None, b,
                     f"the contact gate never passed {of}: no approach momentum to weigh it against")
    x = 200.0 * fx.gate_lost_ns / p
    st = _graded(x, b)
    tail = {"PASS": f"within ±{0.5 * b:g} %", "WARN": f"more than half the ±{b:g} % bound",
            "FAIL": f"beyond ±{b:g} %"}[st]
    return check("gate", st, x, b, f"the contact gate never passed {of}: {_pct(x, sign=False)} of the approach energy, "
                 + tail + ("; lower [sensor.contact_gate] on_n" if st != "PASS" else ""))


def check_noise(fx: Facts) -> dict:
    b = fx.bound_pct
    floor = fx.noise_floor_pct
    if floor is None:
        why = fx.noise_note if fx.noise_sigma_n is None else "no approach momentum to weigh it against"
        return check("noise", "WARN", None, b, f"the noise floor cannot be told ({why})")
    x = 2.0 * floor
    over = ("the gate's open time" if fx.gate_on else "the whole dynamics (gate off)")
    what = (f"the sensor noise (σ {fx.noise_sigma_n:.3g} N per axis{', ' + fx.noise_note if fx.noise_note else ''}) "
            f"over {over}, {fx.noisy_s:.3g} s: 1σ {_pct(floor, sign=False)} of the approach momentum, "
            f"{_pct(x, sign=False)} of its energy")
    if x <= b:
        return check("noise", "PASS", x, b, f"{what}, within ±{b:g} %")
    return check("noise", "WARN", x, b, f"{what}, above ±{b:g} %: this run cannot show its fidelity (judge the mean "
                 "of several runs, or a quieter sensor" + ("" if fx.gate_on else ", or the contact gate") + ")")


def check_envelope(fx: Facts) -> dict | None:
    """The check of the run log's ``envelope`` event, if any (module docstring)."""
    evs = [e for e in fx.events if e.get("kind") == "envelope"]
    if not evs:
        return None
    e = evs[-1]
    if "inside" in e and e["inside"] is None:      # the case declares no stiffness: not checked
        return None
    try:
        w_tau, limit, inside = float(e["w_tau"]), float(e["limit"]), e["inside"]
        if not isinstance(inside, bool):
            raise TypeError("inside is not a bool")
        st = e.get("status") or ("PASS" if inside else "FAIL")
        if st not in STATUSES:
            raise ValueError(f"status {st!r}")
        return check("envelope", st, w_tau, limit, str(e.get("reason") or ("inside" if inside else "outside")),
                     unit="rad")
    except (KeyError, TypeError, ValueError) as err:
        return check("envelope", "WARN", None, None, f"the run log's envelope event is malformed ({err})", unit="rad")


CHECKS = (check_energy, check_delay, check_gate, check_noise, check_envelope)


def verdict_of(fx: Facts, checks=CHECKS) -> dict:
    """The verdict of ``checks`` (each ``check(fx) -> dict | None``) over ``fx`` (module
    docstring): plain floats, strings and lists (msgpack, JSON)."""
    got = [c for c in (chk(fx) for chk in checks) if c is not None]
    return combine(got, fx.bound_pct)


def combine(checks: list[dict], bound_pct: float) -> dict:
    """The verdict of a list of checks: the worst status and its first check's reason (all
    PASS: the check nearest its bound, with how many there are)."""
    rank = {s: k for k, s in enumerate(STATUSES)}
    worst = max((c["status"] for c in checks), key=rank.__getitem__, default="WARN")
    if not checks:
        return {"status": "WARN", "reason": "no check could be made", "bound_pct": float(bound_pct), "checks": []}
    bad = [c for c in checks if c["status"] == worst]
    if worst == "PASS":
        def used(c):
            return abs(c["figure"]) / abs(c["bound"]) if c["figure"] is not None and c["bound"] else 0.0
        near = max(checks, key=used)
        reason = f"{len(checks)} checks within their bounds; nearest, {near['name']}: {near['reason']}"
    else:
        reason = f"{bad[0]['name']}: {bad[0]['reason']}"
        if len(bad) > 1:
            reason += f" (also {worst}: {', '.join(c['name'] for c in bad[1:])})"
    return {"status": worst, "reason": reason, "bound_pct": float(bound_pct), "checks": checks}


def format_fidelity(v: dict | None) -> str:
    """The one line: ``fidelity PASS: 4 checks within their bounds; nearest, energy: ...``."""
    if not v:
        return "fidelity: not judged"
    return f"fidelity {v.get('status', '?')}: {v.get('reason', '')}"


def check_figure(c: dict) -> str:
    """A check's figure as every page writes it (page 1, the HTML table, the text): a share of
    the approach energy in % with two decimals (rt.analysis.numbers), signed where the loop
    injects (+) or removes (-) energy (energy, delay); a time in ms with three; ``n/a`` when the
    check has no figure."""
    from rt.analysis.numbers import percent
    x, unit = c.get("figure"), c.get("unit") or ""
    if x is None:
        return "n/a"
    signed = c.get("name") in ("energy", "delay")
    if unit == "%":
        return percent(x, sign=signed)
    if unit == "ms":
        return f"{x:{'+' if signed else ''}.3f} ms"
    return f"{x:.3g} {unit}".rstrip()


def format_checks(v: dict) -> list[str]:
    """One line per check: ``energy   PASS  -0.11 % (bound 1 %)  the loop injected ...``."""
    out = []
    for c in v.get("checks") or []:
        bound = "" if c.get("bound") is None else f" (bound {c['bound']:g} {c['unit']})"
        out.append(f"{c['name']:<9}{c['status']:<5} {check_figure(c)}{bound}: {c['reason']}")
    return out
