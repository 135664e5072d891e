"""A campaign's statistics from its results (``dockstand campaign summary``; docs/campaigns.md
§summary): outcome counts, the capture probability with its 95 % Wilson interval
(``scipy.stats.binomtest``), peak loads against the mechanism's limits (over the runs that did
not fail: a failed run's peaks are no loads), the worst samples with their inputs. A failure
counts as no capture in the probability (conservative); an infeasible start (end reason
``initial_interpenetration``: the sampled initial pose already interpenetrates, no docking
was tried) counts in neither: the probability is over the feasible samples, and the infeasible
ones are counted apart.

The worst samples, in this order: **every** sample with a load over its limit (however many:
a qualification reviewer must see each one; by its largest load over limit), then the failures,
the no captures, and the highest loads relative to their limits, up to ``worst`` beyond the
exceedances. A ratio to a limit is written so that an exceedance never rounds onto the limit
(``1.004×``, not ``1.00×``: rt.analysis.numbers.ratio). Computations return a
:class:`Summary`; the figures are :mod:`sim_stand.campaign.figures`. Not for the real-time loop.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.stats import binomtest

from rt.analysis import numbers as NUM
from sim_stand.campaign.store import ResultStore
from sim_stand.mechanism_kinds import model_has_mechanism

INFEASIBLE = "initial_interpenetration"     # sim_stand.campaign.outcome: the start, not the docking
LOADS = (("peak_force_n", "force_n", "N"), ("peak_moment_nm", "moment_nm", "N m"),
         ("peak_stroke_m", "stroke_m", "m"), ("peak_stroke_rate_mps", "stroke_rate_mps", "m/s"))


@dataclass
class Summary:
    name: str
    samples: int                 # N of the campaign
    completed: int               # rows stored
    captures: int
    no_captures: int
    failures: int                # infeasible starts included
    capture_probability: float | None    # over the feasible samples (completed - infeasible)
    wilson_95: tuple[float, float] | None
    limits: dict
    loads: dict                  # column -> {max, p99, mean, over_limit}
    failure_reasons: dict        # end reason -> {count, example}
    worst: list = field(default_factory=list)     # rows: every one over a limit, then the K worst others
    note: str = ""
    infeasible: int = 0          # failures with end reason INFEASIBLE: not in the probability
    over_limit: list = field(default_factory=list)    # sample indices with a load over its limit, worst first

    def as_dict(self) -> dict:
        return asdict(self)


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion k / n."""
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def campaign_limits(store: ResultStore) -> tuple[dict, str]:
    """The limits of the campaign file's ``[limits]`` (stroke: the mechanism's end stops by
    default), and a note if the campaign file could not be read."""
    from rt.config import ConfigError
    from sim_stand.campaign.spec import load_campaign
    try:
        c = load_campaign(store.manifest["campaign_file"])
    except (ConfigError, OSError) as e:
        return {"force_n": 7200.0, "moment_nm": 1400.0, "stroke_m": None, "stroke_rate_mps": None}, \
            f"campaign file unreadable ({e}): default limits"
    lim = {"force_n": c.limits.force_n, "moment_nm": c.limits.moment_nm, "stroke_m": c.limits.stroke_m,
           "stroke_rate_mps": c.limits.stroke_rate_mps}
    if lim["stroke_m"] is None and c.case.berthing is None and model_has_mechanism(c.case.contact.model):
        try:
            from sim_stand.campaign.apply import _emulator, _mechanism_config
            emu = _emulator(str(c.emulator_path) if c.emulator_path else None).for_case(c.case)
            if emu.kind.leg_dispersions:            # a parallel mechanism's legs (sim_stand.mechanism_kinds)
                cfg = _mechanism_config(str(emu.mechanism_path))
                stops = [d.end_stops for d in cfg.devices if d.end_stops is not None]
                if stops:
                    lim["stroke_m"] = float(min(min(s.stroke_max, -s.stroke_min) for s in stops))
        except (ConfigError, OSError, ValueError):
            pass
    return lim, ""


def summarize(store: ResultStore, worst: int = 5) -> Summary:
    rows = store.read().to_pylist()
    outcome = [r["outcome"] for r in rows]
    k = outcome.count("capture")
    nc = outcome.count("no_capture")
    nf = outcome.count("failure")
    ni = sum(1 for r in rows if r["outcome"] == "failure" and r.get("end_reason") == INFEASIBLE)
    n = len(rows)
    nfeas = n - ni
    lim, note = campaign_limits(store)
    loads = {}
    valid = [r for r in rows if r["outcome"] != "failure"]      # a failed run's peaks are no loads
    for col, lkey, _unit in LOADS:
        v = np.array([r[col] for r in valid if r[col] is not None], dtype=float)
        v = v[np.isfinite(v)]
        if v.size == 0:
            continue
        L = lim.get(lkey)
        loads[col] = {"max": float(v.max()), "p99": float(np.percentile(v, 99)), "mean": float(v.mean()),
                      "limit": L, "over_limit": int((v > L).sum()) if L else None}
    reasons: dict[str, dict] = {}          # the run's end reason -> count and one example message
    for r in rows:
        if r["outcome"] == "failure":
            d = reasons.setdefault(r["end_reason"] or "failure", {"count": 0, "example": r["reason"]})
            d["count"] += 1

    def severity(r):
        m = max_ratio(r, lim)
        rank = 0 if r["outcome"] != "failure" and m > 1.0 else {"failure": 1, "no_capture": 2}.get(r["outcome"], 3)
        return (rank, -m, r["sample"])
    # the infeasible starts are counted apart (failure_reasons): they tried no docking
    ranked = sorted((r for r in rows if r.get("end_reason") != INFEASIBLE), key=severity)
    over = [r for r in ranked if severity(r)[0] == 0]
    worst_rows = over + [r for r in ranked if severity(r)[0] > 0][:worst]
    return Summary(name=store.manifest["name"], samples=store.samples, completed=n, captures=k, no_captures=nc,
                   failures=nf, capture_probability=k / nfeas if nfeas else None,
                   wilson_95=wilson_interval(k, nfeas) if nfeas else None, limits=lim, loads=loads,
                   failure_reasons=reasons, worst=worst_rows, note=note, infeasible=ni,
                   over_limit=[r["sample"] for r in over])


def load_ratios(r: dict, lim: dict) -> dict:
    """Each of the row's peak loads over its limit (the columns of :data:`LOADS` that have a
    limit and a value)."""
    return {col: float(r[col]) / float(lim[lkey]) for col, lkey, _ in LOADS
            if lim.get(lkey) and r.get(col) is not None and math.isfinite(float(r[col]))}


def max_ratio(r: dict, lim: dict) -> float:
    """The row's largest load over its limit (0 without any; a failed run's peaks are no
    loads)."""
    if r["outcome"] == "failure":
        return 0.0
    return max(load_ratios(r, lim).values(), default=0.0)


LOAD_NAMES = {"peak_force_n": "force", "peak_moment_nm": "moment", "peak_stroke_m": "stroke",
              "peak_stroke_rate_mps": "stroke rate"}
#: the display unit of each load column (rt.analysis.numbers)
LOAD_UNITS = {"peak_force_n": "N", "peak_moment_nm": "N*m", "peak_stroke_m": "m", "peak_stroke_rate_mps": "m/s"}
WIDTH = 100           # the terminal text is wrapped to this


def load_text(r: dict, lim: dict, col: str) -> str:
    """One load of a row as a table line: ``force   15488.0 N   2.15× its limit 7200.0 N   OVER``."""
    v = r.get(col)
    if v is None:
        return ""
    lkey = next(k for c, k, _ in LOADS if c == col)
    text = f"{LOAD_NAMES[col]:<12}{NUM.quantity(v, LOAD_UNITS[col]):>12}"
    L = lim.get(lkey)
    if L and r["outcome"] != "failure":
        ratio = float(v) / float(L)
        text += f"   {NUM.ratio(ratio):>7} its limit {NUM.quantity(L, LOAD_UNITS[col])}" + ("   OVER" if ratio > 1.0 else "")
    return text


def sample_lines(r: dict, lim: dict, inputs: list[str]) -> list[str]:
    """One worst sample for a reader: a heading (index, outcome, what is over), its loads one a
    line against their limits (a failed run's peaks are no loads: shown without), its start
    conditions, its sampled inputs wrapped, and how the run ended."""
    over = [LOAD_NAMES[c] for c, x in load_ratios(r, lim).items() if x > 1.0] if r["outcome"] != "failure" else []
    head = f"sample {r['sample']}: {r['outcome'].replace('_', ' ')}"
    if over:
        head += f" — OVER THE LIMIT: {', '.join(over)}"
    if r.get("reason"):
        head += f" — {r['reason']}"
    out = textwrap.wrap(head, WIDTH - 4, subsequent_indent="    ")
    loads = [load_text(r, lim, c) for c, _, _ in LOADS if r.get(c) is not None]
    if loads:
        out.append("  peaks" + (" (a failed run's: no loads)" if r["outcome"] == "failure" else ""))
        out += ["    " + t for t in loads]
    start = []
    if r.get("lateral_offset_m") is not None:
        start.append(f"lateral offset {NUM.quantity(r['lateral_offset_m'], 'm')}")
    if r.get("angular_misalignment_deg") is not None:
        start.append(f"misalignment {NUM.quantity(r['angular_misalignment_deg'], 'deg')}")
    if r.get("closing_speed_mps") is not None:
        start.append(f"closing speed {NUM.quantity(r['closing_speed_mps'], 'm/s')}")
    if start:
        out.append("  start  " + ", ".join(start))
    vals = [f"{k}={r[k]:.4g}" for k in inputs if isinstance(r.get(k), float)]     # a pair never wraps apart
    if vals:
        out += textwrap.wrap("inputs " + ", ".join(vals), WIDTH - 6, initial_indent="  ", subsequent_indent="         ")
    ends = []
    if r.get("first_contact_s") is not None:
        ends.append(f"first contact {r['first_contact_s']:.3f} s")
    if r.get("capture_time_s") is not None:
        ends.append(f"capture {r['capture_time_s']:.3f} s")
    if r.get("end_reason"):
        ends.append(f"ended: {r['end_reason']}" + (f" at {r['t_end_s']:.3f} s" if r.get("t_end_s") is not None else ""))
    if ends:
        out.append("  run    " + ", ".join(ends))
    return out


def format_summary(s: Summary, inputs: list[str] | None = None) -> str:
    """The summary for a terminal: counts and probability, the loads against their limits, the
    failures by reason, then the worst samples, each on a few lines of at most :data:`WIDTH`
    columns (``inputs``: the campaign's sampled parameters, shown per sample; default every
    column that is not an outcome)."""
    lines = [f"campaign {s.name}: {s.completed} of {s.samples} samples"
             + ("" if s.completed == s.samples else " (incomplete: continue with campaign run --resume)")]
    if s.over_limit:
        lines.append(f"  !! {len(s.over_limit)} sample{'s' if len(s.over_limit) != 1 else ''} OVER A LOAD LIMIT: "
                     + ", ".join(str(i) for i in s.over_limit) + " (each listed below)")
    lines.append(f"  capture {s.captures}, no capture {s.no_captures}, failure {s.failures}"
                 + (f" (of which {s.infeasible} infeasible starts: {INFEASIBLE})" if s.infeasible else ""))
    if s.capture_probability is not None:
        lo, hi = s.wilson_95
        over = f" over {s.completed - s.infeasible} feasible samples" if s.infeasible else ""
        lines.append(f"  capture probability {s.capture_probability:.4f}  (95 % Wilson interval {lo:.4f} .. {hi:.4f}){over}")
    lines.append("  peak loads over the runs that did not fail (limit: max / limit, samples over):")
    for col, d in s.loads.items():
        u = LOAD_UNITS.get(col, "")
        row = (f"    {LOAD_NAMES.get(col, col):<11} max {NUM.quantity(d['max'], u):>10}  p99 {NUM.quantity(d['p99'], u):>10}"
               f"  mean {NUM.quantity(d['mean'], u):>10}")
        if d["limit"]:
            row += f"  limit {NUM.quantity(d['limit'], u):>10} {NUM.ratio(d['max'] / d['limit']):>6}"
            row += f" {d['over_limit']} OVER" if d["over_limit"] else " none over"
        lines.append(row)
    for end, d in s.failure_reasons.items():
        lines += textwrap.wrap(f"failure ×{d['count']}: {end} (e.g. {d['example']})", WIDTH - 2,
                               initial_indent="  ", subsequent_indent="    ")
    if s.worst:
        lines.append("  worst samples: every one over a limit, then failures, no captures, the highest loads:")
        skip = {"sample", "worker", "cpu_s", "outcome", "reason", "end_reason", "t_end_s", "lateral_offset_m",
                "angular_misalignment_deg", "closing_speed_mps", "capture_time_s", "first_contact_s",
                "energy_absorbed_j", "max_penetration_m", "min_stroke_margin_m", *LOAD_NAMES}
        names = inputs if inputs is not None else [k for k in s.worst[0] if k not in skip]
        for r in s.worst:
            lines += ["    " + ln for ln in sample_lines(r, s.limits, names)]
    if s.note:
        lines.append(f"  note: {s.note}")
    return "\n".join(lines)


__all__ = ["Summary", "summarize", "wilson_interval", "format_summary", "campaign_limits", "load_ratios", "max_ratio",
           "sample_lines", "load_text"]
