"""A campaign's statistics from its results (``dockstand campaign summary``; docs/campaigns.md
§summary): outcome counts, the capture probability with its 95 % Wilson interval
(``scipy.stats.binomtest``), peak loads against the mechanism's limits (over the runs that did
not fail: a failed run's peaks are no loads), the worst samples with their inputs. A failure
counts as no capture in the probability (conservative); an infeasible start (end reason
``initial_interpenetration``: the sampled initial pose already interpenetrates, no docking
was tried) counts in neither: the probability is over the feasible samples, and the infeasible
ones are counted apart. Computations
return a :class:`Summary`; the figures are :mod:`sim_stand.campaign.figures`. Not for the
real-time loop.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.stats import binomtest

from sim_stand.campaign.store import ResultStore

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
    worst: list = field(default_factory=list)     # rows
    note: str = ""
    infeasible: int = 0          # failures with end reason INFEASIBLE: not in the probability

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
    if lim["stroke_m"] is None and c.case.contact.model == "mechanism" and c.case.berthing is None:
        try:
            from sim_stand.campaign.apply import _emulator, _mechanism_config
            emu = _emulator(str(c.emulator_path) if c.emulator_path else None).for_case(c.case)
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
        rank = {"failure": 0, "no_capture": 1}.get(r["outcome"], 2)
        ratios = [(r[col] or 0.0) / lim[lkey] for col, lkey, _ in LOADS if lim.get(lkey) and r.get(col) is not None]
        return (rank, -max(ratios, default=0.0))
    # the infeasible starts are counted apart (failure_reasons): they tried no docking
    worst_rows = sorted((r for r in rows if r.get("end_reason") != INFEASIBLE), key=severity)[:worst]
    return Summary(name=store.manifest["name"], samples=store.samples, completed=n, captures=k, no_captures=nc,
                   failures=nf, capture_probability=k / nfeas if nfeas else None,
                   wilson_95=wilson_interval(k, nfeas) if nfeas else None, limits=lim, loads=loads,
                   failure_reasons=reasons, worst=worst_rows, note=note, infeasible=ni)


def format_summary(s: Summary) -> str:
    lines = [f"campaign {s.name}: {s.completed} of {s.samples} samples"
             + ("" if s.completed == s.samples else " (incomplete: continue with campaign run --resume)")]
    lines.append(f"  capture {s.captures}, no capture {s.no_captures}, failure {s.failures}"
                 + (f" (of which {s.infeasible} infeasible starts: {INFEASIBLE})" if s.infeasible else ""))
    if s.capture_probability is not None:
        lo, hi = s.wilson_95
        over = f" over {s.completed - s.infeasible} feasible samples" if s.infeasible else ""
        lines.append(f"  capture probability {s.capture_probability:.4f}  (95 % Wilson interval {lo:.4f} .. {hi:.4f}){over}")
    for col, d in s.loads.items():
        lim = f", limit {d['limit']:.4g}, {d['over_limit']} over" if d["limit"] else ""
        lines.append(f"  {col:<22} max {d['max']:.4g}  p99 {d['p99']:.4g}  mean {d['mean']:.4g}{lim}")
    for end, d in s.failure_reasons.items():
        lines.append(f"  failure x{d['count']}: {end} (e.g. {d['example']})")
    if s.worst:
        lines.append("  worst samples:")
        skip = {"worker", "cpu_s"}
        for r in s.worst:
            body = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                             for k, v in r.items() if k not in skip and v not in (None, ""))
            lines.append(f"    {body}")
    if s.note:
        lines.append(f"  note: {s.note}")
    return "\n".join(lines)


__all__ = ["Summary", "summarize", "wilson_interval", "format_summary", "campaign_limits"]
