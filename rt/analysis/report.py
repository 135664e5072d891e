"""The post-test report of one run (``dockstand report``; docs/analysis.md): what is computed.
Figures and the PDF / HTML output live in rt/analysis/figures.py and rt/analysis/document.py.

:func:`build_report` reads the run (and a reference run, when given) through the analysis API
and returns a :class:`Report`: the run's identity, the channels to plot (the dynamics only,
decimated to at most ``max_points`` samples; the computations use every record), the events,
the loop timing, the energy audit (rt/analysis/energy.py) and, with a reference, the fidelity
comparison (rt/analysis/compare.py). Not real-time.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rt.analysis.compare import compare_logs
from rt.analysis.energy import EnergyAudit, audit_from_powers, held_step_power, neighbours, powers
from rt.analysis.run import Run

MAX_POINTS = 20000
PHASE_DYNAMICS = 6          # rt.control.phases.Phase.DYNAMICS


@dataclass
class Series:
    """One run's plotted channels over the dynamics (decimated); ``end_s`` its last record's
    time and ``end`` how it ended (the verdict: an end criterion or a trip)."""
    label: str
    t: np.ndarray
    data: dict[str, np.ndarray]
    events: list[tuple[float, str]]
    end_s: float | None = None
    end: str = ""


@dataclass(frozen=True)
class LimitUse:
    """How near a run came to one of the stand's limits: the peak of ``what`` over the records
    read, at ``t_s`` (run time; None outside the run), against ``limit`` (same unit)."""
    what: str
    peak: float
    limit: float
    unit: str
    t_s: float | None

    @property
    def used(self) -> float:
        return self.peak / self.limit if self.limit else float("inf")

    @property
    def over(self) -> bool:
        return self.peak > self.limit


@dataclass
class Report:
    run: Run
    identity: list[tuple[str, str]]
    series: Series
    reference: Series | None
    energy: EnergyAudit | None
    energy_note: str
    timing: dict | None                  # work / lateness arrays (us) and counts, HIL only
    leg_limits: tuple[float, float] | None
    comparison: dict | None
    notes: list[str] = field(default_factory=list)
    limits: list[LimitUse] = field(default_factory=list)
    event_table: list[tuple[float | None, str, str, str]] = field(default_factory=list)   # t, run|reference, kind, detail
    fidelity: dict | None = None         # the run's fidelity verdict (rt/analysis/fidelity.py), HIL only


_PLOT_FIELDS = ("w_P", "rel_pose", "rel_twist", "cmd_pose", "meas_pose", "cmd_lengths", "meas_lengths",
                "energy_absorbed")


def dynamics_rows(run: Run) -> tuple[int, int]:
    """Records of the dynamics: the DYNAMICS phase of a HIL run, every timed record of a
    digital one (``t`` finite and >= 0)."""
    t = run.t
    ok = np.isfinite(t) & (t >= 0.0)
    if run.kind != "digital" and "phase" in run.fields:
        ok &= run.field("phase") == PHASE_DYNAMICS
    idx = np.nonzero(ok)[0]
    return (int(idx[0]), int(idx[-1]) + 1) if len(idx) else (0, 0)


def _events(run: Run, end_s: float | None = None) -> list[tuple[float, str]]:
    """The events drawn on the time axes: ``(t, name)``, the name the log's own (``first_contact``,
    ``latch_closed``: which latch is on the events page) with its reason; the run's end (which the controller logs
    without a cycle) at the last record's time ``end_s``."""
    out = []
    for e in run.events:
        k = str(e.get("kind", ""))
        if k in ("phase", "supervisor_command", "lease", "supervisor_transition", "energy_audit",
                 "fidelity_verdict"):
            continue
        t = run.event_run_time(e)
        if t is None and k in ("supervisor_finish", "end") and end_s is not None:
            t = end_s
        if t is None:
            continue
        label = "end" if k == "supervisor_finish" else k.replace("supervisor_", "")
        if e.get("reason"):
            label += f": {e['reason']}"
        elif e.get("state") and k not in ("first_contact", "capture", "latch_closed", "latch_opened"):
            label += f" {e['state']}"
        out.append((t, label))
    return out


def event_table(run: Run, source: str, end_s: float | None = None) -> list[tuple[float | None, str, str, str]]:
    """Every event of the log for the report's events page: ``(t_run or None, source, kind,
    detail)``, in the log's order (the supervisor's transitions and commands included: who
    did what, before and after the dynamics; the phases left out)."""
    out = []
    skip = {"t", "cycle", "kind", "seq", "k", "eseq", "t_ns", "sensing_bias", "t_run", "t_controller"}
    for e in run.events:
        k = str(e.get("kind", ""))
        if k == "phase":
            continue
        t = run.event_run_time(e)
        if t is None and k in ("supervisor_finish", "end") and end_s is not None:
            t = end_s
        detail = ", ".join(f"{a} {_short(v)}" for a, v in e.items() if a not in skip and v not in (None, ""))
        out.append((t, source, k, detail))
    return out


def _short(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    text = str(v)
    return text if len(text) <= 90 else text[:87] + "..."


def _series(run: Run, label: str, max_points: int) -> tuple[Series, tuple[int, int]]:
    lo, hi = dynamics_rows(run)
    every = max(1, -(-(hi - lo) // max_points))
    names = [f for f in _PLOT_FIELDS if f in run.fields]
    data = run.read(["t", *names], lo, hi, every)
    end_s = float(run.read(["t"], hi - 1, hi)["t"][0]) if hi > lo else None
    verdict = run.verdict
    end = verdict.split(": ", 1)[-1] if verdict.startswith(("done", "tripped")) else verdict
    return Series(label, data.pop("t"), data, _events(run, end_s), end_s, end), (lo, hi)


def limit_uses(run: Run, lo: int, hi: int) -> list[LimitUse]:
    """How near the run's dynamics (records ``lo:hi``) came to the stand's limits, from the
    stand snapshot in its header: the sensor axis nearest its trip level (``rating_fraction x
    rating``, rt.stand.safety's FORCE_LIMIT / TORQUE_LIMIT judge ``w_S`` per axis), for force
    and for torque, against that level and against the rating; the measured legs' travel from
    mid-stroke against half the travel (toward length_min and toward length_max). In chunks
    (bounded memory); empty for a log without those fields or the snapshot (all-digital)."""
    if not run.header.get("config") or hi <= lo:
        return []
    have = [f for f in ("w_S", "meas_lengths") if f in run.fields]
    if not have:
        return []
    from rt.config.stand import stand_from_snapshot
    st = stand_from_snapshot(run.header["config"], f"{run.path}: header config")
    rating = np.asarray(st.limits.sensor_rating, dtype=float)
    frac = float(st.limits.rating_fraction)
    peak_ws, t_ws = np.zeros(6), np.full(6, np.nan)
    lmin, lmax, t_lmin, t_lmax = np.inf, -np.inf, None, None
    for a in range(lo, hi, CHUNK):
        d = run.read(["t", *have], a, min(hi, a + CHUNK))
        if "w_S" in d:
            w = np.abs(d["w_S"])
            k = np.argmax(w, axis=0)
            top = w[k, np.arange(6)]
            better = top > peak_ws
            peak_ws[better] = top[better]
            t_ws[better] = d["t"][k][better]
        if "meas_lengths" in d:
            L = d["meas_lengths"]
            ok = np.any(L != 0.0, axis=1)        # a record before the platform reported lengths holds zeros
            if ok.any():
                Lk, tk = L[ok], d["t"][ok]
                i = int(np.argmin(Lk.min(axis=1)))
                if Lk[i].min() < lmin:
                    lmin, t_lmin = float(Lk[i].min()), float(tk[i])
                i = int(np.argmax(Lk.max(axis=1)))
                if Lk[i].max() > lmax:
                    lmax, t_lmax = float(Lk[i].max()), float(tk[i])
    out = []
    if "w_S" in have:
        for k0, kind, unit in ((0, "force", "N"), (3, "torque", "N*m")):
            ax = k0 + int(np.argmax(peak_ws[k0:k0 + 3] / rating[k0:k0 + 3]))
            name = f"sensor {kind} S{'xyz'[ax - k0]}"
            t = float(t_ws[ax]) if np.isfinite(t_ws[ax]) else None
            out.append(LimitUse(f"{name}: trip level ({frac:g} × rating)", float(peak_ws[ax]), frac * float(rating[ax]),
                                unit, t))
            out.append(LimitUse(f"{name}: rating", float(peak_ws[ax]), float(rating[ax]), unit, t))
    if np.isfinite(lmin):
        g = st.hexapod
        mid, half = 0.5 * (g.length_min_m + g.length_max_m), 0.5 * (g.length_max_m - g.length_min_m)
        out.append(LimitUse(f"shortest leg {lmin:.3f} m: travel toward length_min {g.length_min_m:g} m",
                            mid - lmin, half, "m", t_lmin))
        out.append(LimitUse(f"longest leg {lmax:.3f} m: travel toward length_max {g.length_max_m:g} m",
                            lmax - mid, half, "m", t_lmax))
    return out


def _identity(run: Run) -> list[tuple[str, str]]:
    h = run.header
    rows = [("log", str(run.path)), ("kind", run.kind), ("case", str(h.get("case"))),
            ("case sha256", str(h.get("case_digest") or "not logged")[:16]),
            ("config digest", run.config_digest), ("version", f"{h.get('version')} ({h.get('git')})"),
            ("host", f"{h.get('host')} (pid {h.get('pid')})"), ("start time", str(h.get("start_time"))),
            ("records", f"{run.n_records}" + (f" — truncated: {run.truncation}" if run.truncated else "")),
            ("verdict", run.verdict)]
    if run.kind != "digital":
        flt = h.get("sensing_filter") or {}
        gate = h.get("contact_gate") or {}
        tau = h.get("tau_s")
        rows += [("delay compensation", f"{'on' if h.get('compensate') else 'off'}, "
                  + (f"tau = {1e3 * float(tau):.3f} ms" if tau is not None else "tau not logged")
                  + (f", {h.get('delay_predictor', 'unlogged')} predictor" if h.get("compensate") else "")
                  + (f" (the case's: {h['delay_predictor_reason']})" if h.get("compensate") and h.get(
                      "delay_predictor_reason", "the stand's [delays] predictor") != "the stand's [delays] predictor" else "")),
                 ("delay identification", str(h.get("delay_identify") or "not logged") + _identified(run)),
                 ("contact gate", ("on" if gate.get("enabled") else "off") if gate else "not logged"),
                 ("sensing filter", f"{flt.get('cutoff_hz')} Hz" if flt.get("cutoff_hz") else "off"),
                 ("lockstep", str(h.get("lockstep")))]
    return rows


def _identified(run: Run) -> str:
    """The platform delay identified online and the lead the predictor used, at the run's last
    record that has them (rt.stand.delay_id; the run log's ``delay`` record)."""
    if "delay" not in run.fields:
        return ""
    d = run.read(["delay"], 0, run.n_records)["delay"]
    ok = np.isfinite(d[:, 0])
    used = d[:, 1][np.isfinite(d[:, 1])]
    if not ok.any():
        return ": no estimate (too little uniform motion)"
    text = f": platform delay identified {1e3 * float(d[ok][-1, 0]):.3f} ms"
    if len(used):
        text += f"; lead at the end {1e3 * float(used[-1]):.3f} ms"
        meas = _measurement_delay_s(run)
        if meas is not None:
            text += f" (its platform part {1e3 * (float(used[-1]) - meas):.3f} ms)"
    return text


def _measurement_delay_s(run: Run) -> float | None:
    """The part of the run's configured lead that is not the platform's (sensor, filter,
    compute: ``Delays.total_s - Delays.platform_s``), from the header: its ``delay_platform_s``
    (the platform part in effect), else the stand snapshot's; None if not logged."""
    from rt.config import ConfigError
    from rt.config.stand import stand_from_snapshot
    h = run.header
    if h.get("tau_s") is not None and h.get("delay_platform_s") is not None:
        return float(h["tau_s"]) - float(h["delay_platform_s"])
    if h.get("tau_s") is None or not h.get("config"):
        return None
    try:
        d = stand_from_snapshot(h["config"], f"{run.path}: header config").delays
    except (ConfigError, KeyError, TypeError, ValueError):
        return None
    return float(h["tau_s"]) - d.platform_s


def _timing(run: Run, lo: int, hi: int) -> dict | None:
    if "timing_ns" not in run.fields:
        return None
    d = run.read(["timing_ns", "missed"] if "missed" in run.fields else ["timing_ns"], lo, hi)
    tn = d["timing_ns"]
    work = (tn[:, 1] + tn[:, 2] + tn[:, 3]) / 1e3
    late = tn[:, 0] / 1e3
    missed = d.get("missed")
    n_missed = int(missed[-1] - missed[0]) if missed is not None and len(missed) else 0
    return {"work_us": work, "lateness_us": late, "missed": n_missed,
            "work_us_p50": float(np.percentile(work, 50)) if len(work) else None,
            "work_us_p99": float(np.percentile(work, 99)) if len(work) else None,
            "lateness_us_p99": float(np.percentile(late, 99)) if len(late) else None,
            "lateness_us_max": float(late.max()) if len(late) else None}


def contact_gate_of(run: Run):
    """The contact gate a HIL run's dynamics received the wrench through: the header's record
    of it (the one in effect), else the stand config's; None without either."""
    from rt.config.stand import ContactGate, stand_from_snapshot
    h = run.header
    if h.get("contact_gate") is not None:
        return ContactGate(**h["contact_gate"])
    if h.get("config"):
        return stand_from_snapshot(h["config"], f"{run.path}: header config").contact_gate
    return None


def filter_delay_of(run: Run, stand) -> float:
    """The group delay (s) of the sensing low-pass in effect in a HIL run: the header's
    ``sensing_filter`` (what the controller ran with), else the stand snapshot's."""
    sf = run.header.get("sensing_filter")
    if sf is None:
        return float(stand.delays.filter_s)
    if sf.get("cutoff_hz") is None:
        return 0.0
    from rt.stand.sensing import lowpass_group_delay_s
    return lowpass_group_delay_s(sf["cutoff_hz"], sf["damping"], float(run.header.get("rate_hz") or stand.rate_hz))


CHUNK = 1 << 17      # records per chunk of the energy audit (bounded memory on long logs)


def energy_of_run(run: Run, lo: int, hi: int) -> tuple[EnergyAudit | None, str]:
    """The energy audit (rt/analysis/energy.py) of records ``lo:hi`` of a run, in chunks of
    :data:`CHUNK`, with a note on what it could not compute (None: no audit, the note says why)."""
    names = ["t", "w_P", "rel_pose", "rel_twist"]
    if any(n not in run.fields for n in names):
        return None, "no energy audit: the log lacks " + ", ".join(n for n in names if n not in run.fields)
    if hi - lo < 3:
        return None, "no energy audit: fewer than three records in the dynamics"
    note = []
    case = None
    try:
        case, warn = run.load_case()
        if warn:
            note.append(warn)
    except Exception as e:       # the approach energy needs the case; the audit does not
        note.append(f"approach energy not computed: {e}")
    if case is not None:
        for role, vehicle in (("active", case.active), ("passive", case.passive)):
            th = vehicle.control.thrust
            if th is not None:
                note.append(f"the {role} vehicle's thrust ({float(np.linalg.norm(th.force_n)):g} N, "
                            f"{th.start_s:g}..{th.stop_s:g} s) also works on the vehicles: the mechanism may absorb "
                            "more than the approach energy; the loop's share is not affected")
    x0 = run.read(["x"], lo, lo + 1)["x"][0] if "x" in run.fields and case is not None else None
    geo = None
    shift = 0.0                 # the sensing filter's group delay: the force is that of the motion this much earlier
    if "meas_pose" in run.fields and run.header.get("config"):
        from rt.config.stand import stand_from_snapshot
        from rt.control.controller import stand_geometry
        st = stand_from_snapshot(run.header["config"], f"{run.path}: header config")
        geo = stand_geometry(st)
        shift = filter_delay_of(run, st)
    extra = ["meas_pose"] if geo is not None else []
    # a HIL log: each record's wrench was held over the step that ends in its state, and what the
    # dynamics received of it went through the stand's contact gate (replayed here)
    held = run.kind == "hil" and lo > 0
    gate = None
    if held and "new_sample" in run.fields:
        from rt.stand import contact_gate as CG
        cg = contact_gate_of(run)
        if cg is not None and cg.enabled:
            gate = CG.pack_gate(True, cg.on_n, cg.off_n, cg.persist, cg.release_s,
                                1.0 / float(run.header.get("rate_hz") or 1000.0))
            extra.append("new_sample")
    t_all, ps, pa = [], [], []
    nb = neighbours(shift, 1.0 / float(run.header.get("rate_hz") or 1000.0))
    for a in range(lo, hi, CHUNK):
        b = min(hi, a + CHUNK)
        a0, b0 = max(lo - 1 if held else lo, a - nb), min(hi, b + 1)   # the neighbours the differences and the shift need
        d = run.read(names + extra, a0, b0)
        p_sim, p_act = powers(d["t"], d["w_P"], d["rel_pose"], d["rel_twist"], d.get("meas_pose"), geo, shift)
        if held:
            w = d["w_P"]
            if gate is not None:
                w = np.zeros_like(d["w_P"])
                for i in range(a - a0, b - a0):        # each record once, in order, across chunks
                    CG.gate(gate, d["w_P"][i], w[i], bool(d["new_sample"][i]))
                if p_act is not None:       # noise outside the contact is no force on the hardware either
                    p_act = powers(d["t"], w, d["rel_pose"], d["rel_twist"], d["meas_pose"], geo, shift)[1]
            p_sim = held_step_power(w, d["rel_pose"], d["rel_twist"])
        k = slice(a - a0, (a - a0) + (b - a))
        t_all.append(d["t"][k])
        ps.append(p_sim[k])
        if p_act is not None:
            pa.append(p_act[k])
    absorbed = run.read(["energy_absorbed"], lo, hi)["energy_absorbed"] if "energy_absorbed" in run.fields else None
    a = audit_from_powers(np.concatenate(t_all), np.concatenate(ps), np.concatenate(pa) if pa else None, case, x0,
                          absorbed, held=held)
    return a, "; ".join(note)


def _snapshot_stand(run: Run):
    """The stand of the run's header snapshot; None without one or when it does not parse."""
    if not run.header.get("config"):
        return None
    from rt.config import ConfigError
    from rt.config.stand import stand_from_snapshot
    try:
        return stand_from_snapshot(run.header["config"], f"{run.path}: header config")
    except (ConfigError, KeyError, TypeError, ValueError):
        return None


def bound_of(run: Run) -> float:
    """The run's energy bound, %: its stand's ``[runlog] energy_audit_bound_pct`` (1 % without a
    snapshot)."""
    st = _snapshot_stand(run)
    return float(st.energy_audit_bound_pct) if st is not None else 1.0


def fidelity_of_run(run: Run, lo: int, hi: int, energy: dict, bound_pct: float | None = None,
                    whole_run: bool = False) -> dict:
    """The run's fidelity verdict (rt/analysis/fidelity.py) over records ``lo:hi`` (the
    dynamics), given its energy audit's dict (rt.analysis.fidelity.energy_verdict_of); with the
    run's own settings from its header: the lead's measurement part, the contact gate, the
    stand's contact threshold and (``bound_pct`` None) :func:`bound_of`. A truncated log's
    verdict is at best a WARN naming the truncation, unless ``whole_run`` (the run log's writer
    auditing the run it has just ended, before it writes the footer)."""
    from rt.analysis import fidelity as FI
    bound = bound_of(run) if bound_pct is None else float(bound_pct)
    try:
        st = _snapshot_stand(run)
        fx = FI.measure(run, lo, hi, bound, energy, measurement_s=_measurement_delay_s(run), gate=contact_gate_of(run),
                        contact_n=st.limits.contact_force_n if st is not None else 50.0)
        v = FI.verdict_of(fx)
        if run.truncated and not whole_run:    # judged from a part of the run: never a PASS of the whole
            v = FI.combine(v["checks"] + [FI.check("log", "WARN", None, None, f"the log is truncated "
                                                   f"({run.truncation}): these checks cover the run to its last "
                                                   "block only")], bound)
        return v
    except Exception as e:  # noqa: BLE001 - the log and its energy audit are never lost to the verdict
        return FI.combine([FI.check("verdict", "WARN", None, None, f"the fidelity verdict could not be computed "
                                     f"({type(e).__name__}: {e})")], bound)


def build_report(run: Run, reference: Run | None = None, max_points: int = MAX_POINTS) -> Report:
    """Everything the report shows (module docstring)."""
    series, (lo, hi) = _series(run, "run", max_points)
    ref = _series(reference, "reference", max_points)[0] if reference is not None else None
    table = event_table(run, "run", series.end_s)
    if ref is not None:
        table += event_table(reference, "reference", ref.end_s)
    energy, enote = energy_of_run(run, lo, hi)
    fidelity = None
    if run.kind == "hil":            # the run's own checks (the loop's): an all-digital run has no loop
        from rt.analysis.fidelity import energy_verdict_of
        fidelity = fidelity_of_run(run, lo, hi, energy_verdict_of(energy, enote, bound_of(run)))
    timing = _timing(run, lo, hi) if run.kind != "digital" else None
    legs = None
    if run.header.get("config") and "cmd_lengths" in run.fields:
        from rt.config.stand import stand_from_snapshot
        g = stand_from_snapshot(run.header["config"], f"{run.path}: header config").hexapod
        legs = (g.length_min_m, g.length_max_m)
    comparison = compare_logs(run.path, reference.path) if reference is not None else None
    notes = []
    if run.truncated:
        notes.append(f"The log is truncated ({run.truncation}); the report covers it to its last block.")
    if reference is not None and reference.truncated:
        notes.append(f"The reference log is truncated ({reference.truncation}).")
    if enote:
        notes.append(enote)
    if ref is not None and series.end_s is not None and ref.end_s is not None and ref.end_s < series.end_s - 1e-9:
        notes.append(f"The reference ends at {ref.end_s:.3f} s ({ref.end or 'its end'}), the run at {series.end_s:.3f} s "
                     f"({series.end or 'its end'}): the run after {ref.end_s:.3f} s has no reference (shaded grey on the "
                     "time plots), and the fidelity table covers the common span only.")
    limits = limit_uses(run, lo, hi) if run.kind != "digital" else []
    over = [u for u in limits if u.over]
    if over:
        from rt.analysis.numbers import quantity
        notes.insert(0, "OVER A LIMIT: " + "; ".join(f"{u.what}: {quantity(u.peak, u.unit)} > {quantity(u.limit, u.unit)}"
                                                    + (f" at t = {u.t_s:.3f} s" if u.t_s is not None else "")
                                                    for u in over))
    return Report(run, _identity(run), series, ref, energy, enote, timing, legs, comparison, notes, limits, table,
                  fidelity)

