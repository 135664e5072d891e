"""One campaign sample on the all-digital reference (:class:`sim_stand.digital.DigitalSim`), or
for a ``mode = "hil"`` campaign on the emulated stand with the controller in the loop
(:mod:`sim_stand.closed_loop`), reduced to one result row (docs/campaigns.md §results). Not for the real-time loop: each call
builds a simulation (its kernels come compiled from numba's cache).

Row: ``sample``; every sampled input by its parameter name; the derived start conditions
(``lateral_offset_m``, ``angular_misalignment_deg``, ``closing_speed_mps``); the outcome
(``capture`` | ``no_capture`` | ``failure``) with ``reason``; ``capture_time_s``,
``first_contact_s``; peak contact force and moment; peak leg stroke and stroke rate (over the
legs, from the log rows); energy absorbed by the mechanism; maximum penetration; minimum margin
of the leg strokes to their end stops; the run's end reason, end time and CPU time.
"""
from __future__ import annotations

import math
import os
import time
from pathlib import Path

import numpy as np

from rt.control import end_criteria as EC
from sim_stand.campaign.apply import angular_misalignment_deg, lateral_offset_m, sample_inputs
from sim_stand.campaign.spec import Campaign

OUTCOMES = ("capture", "no_capture", "failure")
#: result columns besides the inputs, in order; ``cpu_s`` and ``worker`` differ between machines
OUTCOME_COLUMNS = ("lateral_offset_m", "angular_misalignment_deg", "closing_speed_mps", "outcome", "reason",
                   "capture_time_s", "first_contact_s", "peak_force_n", "peak_moment_nm", "peak_stroke_m",
                   "peak_stroke_rate_mps", "energy_absorbed_j", "max_penetration_m", "min_stroke_margin_m",
                   "end_reason", "t_end_s", "cpu_s", "worker")
NONDETERMINISTIC = ("cpu_s", "worker")
#: a penetration-limit abort this early is the sampled start's, not the contact's (end reason
#: ``initial_interpenetration``)
START_S = 1e-3


class _StrokeWatch:
    """Running maxima of the leg strokes and their rates over the log rows (``on_rows``)."""

    def __init__(self, sim):
        self.sl = None
        if "stroke" in sim.offsets:
            o = sim.offsets["stroke"]
            self.sl = slice(o, o + sim.fields["stroke"])
        elif "joint_state" in sim.offsets:            # a tree: its joint coordinates
            o = sim.offsets["joint_state"]
            self.sl = slice(o, o + sim.fields["joint_state"] // 2)
        self.period = sim.spr * sim.dt
        self.last = None
        self.peak = 0.0
        self.peak_rate = 0.0
        self.lo = math.inf
        self.hi = -math.inf

    def __call__(self, rows: np.ndarray) -> None:
        if self.sl is None or rows.shape[0] == 0:
            return
        s = rows[:, self.sl]
        self.peak = max(self.peak, float(np.abs(s).max()))
        self.lo = min(self.lo, float(s.min()))
        self.hi = max(self.hi, float(s.max()))
        full = s if self.last is None else np.vstack([self.last, s])
        if full.shape[0] > 1:
            self.peak_rate = max(self.peak_rate, float(np.abs(np.diff(full, axis=0)).max()) / self.period)
        self.last = s[-1:].copy()


def _stroke_margin(sim, watch: _StrokeWatch) -> float | None:
    mech = getattr(sim, "mech", None)
    cfg = getattr(mech, "cfg", None)
    if cfg is None or watch.sl is None or not math.isfinite(watch.lo):
        return None
    stops = [d.end_stops for d in cfg.devices if d.end_stops is not None]
    if not stops:
        return None
    return float(min(min(st.stroke_max - watch.hi, watch.lo - st.stroke_min) for st in stops))


def simulate_sample(c: Campaign, values: dict[str, float], log_path: str | Path | None = None):
    """Run one sample (``values`` by parameter name); returns (DigitalResult, stroke watch, sim).
    ``log_path``: write its full run log (``dockstand campaign rerun``)."""
    from sim_stand.digital import DigitalSim
    case, emu, mech = sample_inputs(c, values)
    sim = DigitalSim(case, emu, mechanism=mech)
    watch = _StrokeWatch(sim)
    header = {"campaign": str(c.file), "campaign_digest": c.digest, "sample_values": values}
    res = sim.run(log_path, header=header, on_rows=watch)
    return res, watch, sim


def simulate_hil_sample(c: Campaign, index: int, values: dict[str, float], log_path: str | Path | None = None):
    """Run one sample of a ``mode = "hil"`` campaign: the dispersed case on the emulated stand
    (its platform delay ``stand_delay_s``, its mechanism coefficients), the controller in
    lockstep configured for the campaign's emulator, sensor noise seeded from (seed, index)
    (``sim_stand.closed_loop``). ``log_path``: where the controller's run log goes (else it is
    removed). Returns the ClosedLoopResult."""
    import shutil
    import tempfile

    from sim_stand.campaign.apply import nominal_emulator
    from sim_stand.cli import DEFAULT_STAND
    from sim_stand.closed_loop import platform_delay_s, run_closed_loop, sample_seed

    case, emu, mech = sample_inputs(c, values)
    stand = _stand(str(c.stand_path or DEFAULT_STAND))
    tmp = Path(tempfile.mkdtemp(prefix="dockstand-sample-"))
    try:
        header = {"campaign": str(c.file), "campaign_digest": c.digest, "sample_values": values, "sample": index,
                  "emulated_platform_delay_s": platform_delay_s(emu)}
        res = run_closed_loop(stand, case, emu, nominal_emu=nominal_emulator(c, case), mechanism=mech,
                              seed=sample_seed(c.seed, index), log_dir=tmp, header=header)
        log = res.controller.get("log")
        if log_path is not None and log:
            Path(log_path).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(log, log_path)
            res.controller["log"] = str(log_path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return res


_STANDS: dict = {}


def _stand(path: str):
    if path not in _STANDS:
        from rt.config.stand import load_stand
        _STANDS[path] = load_stand(path)
    return _STANDS[path]


def _hil_row(c: Campaign, index: int, values: dict[str, float], row: dict, log_path) -> dict:
    """A HIL sample's outcome: capture from the emulated mechanism (its soft capture), loads as
    the controller measured them, a safety trip as a failure with its named reason."""
    t0 = time.process_time()
    try:
        res = simulate_hil_sample(c, index, values, log_path)
    except Exception as e:                                   # noqa: BLE001 (a run that cannot run is a result)
        row.update(outcome="failure", reason=f"{type(e).__name__}: {e}", end_reason="exception",
                   cpu_s=time.process_time() - t0)
        return row
    cs, em = res.controller, res.emulator
    if cs.get("trip_reason"):
        outcome, reason, end = "failure", f"{cs['trip_reason']}: {cs.get('trip') or ''}", cs["trip_reason"]
    elif em.get("captured"):
        outcome, reason, end = "capture", "", cs.get("finish_reason")
    else:
        outcome, end = "no_capture", cs.get("finish_reason")
        reason = EC.no_capture_reason(end)
    row.update(outcome=outcome, reason=reason, capture_time_s=res.time_to_capture_s,
               first_contact_s=cs.get("first_contact_s"), peak_force_n=cs.get("peak_force_n"),
               peak_moment_nm=cs.get("peak_moment_nm"), energy_absorbed_j=em.get("energy_absorbed_j"),
               max_penetration_m=em.get("max_penetration_m"), end_reason=end, t_end_s=cs.get("t_run_s"),
               cpu_s=res.cpu_s)
    return row


def run_sample(c: Campaign, index: int, values: dict[str, float], log_path: str | Path | None = None) -> dict:
    """The result row of sample ``index`` (never raises for a diverging sample: its row says
    ``failure`` and why). A ``mode = "hil"`` campaign's sample is a closed-loop run on the
    emulated stand; its leg strokes are the emulator's, not recorded (their columns stay empty)."""
    case, _, _ = sample_inputs(c, values)
    row: dict = {"sample": int(index), **{k: float(v) for k, v in values.items()},
                 "lateral_offset_m": lateral_offset_m(case), "angular_misalignment_deg": angular_misalignment_deg(case),
                 "closing_speed_mps": float(case.initial.velocity_mps[0])}
    empty = {k: None for k in OUTCOME_COLUMNS if k not in row}
    row.update(empty)
    row["worker"] = f"{os.uname().nodename}:{os.getpid()}"
    if c.mode == "hil":
        return _hil_row(c, index, values, row, log_path)
    t0 = time.process_time()
    try:
        res, watch, sim = simulate_sample(c, values, log_path)
    except Exception as e:                                   # noqa: BLE001 (any model failure is a result)
        row.update(outcome="failure", reason=f"{type(e).__name__}: {e}", end_reason="exception",
                   cpu_s=time.process_time() - t0)
        return row
    stats = [res.peak_force_n, res.peak_moment_nm, res.energy_absorbed_j, res.max_penetration_m, watch.peak,
             watch.peak_rate]
    end_reason = res.end_reason
    if res.end_reason == "penetration_limit" and res.t_end_s <= START_S:
        # no closing speed penetrates millimetres within a millisecond: the sampled start does
        outcome, end_reason = "failure", "initial_interpenetration"
        reason = (f"the sampled initial pose already interpenetrates ({res.message or 'penetration limit'}, "
                  f"at t = {res.t_end_s:g} s): an infeasible start, not a failure of the mechanism")
    elif res.first_contact_s is not None and res.first_contact_s <= START_S:
        # in contact from the first step: the loads are the overlap springing apart, not a docking's
        outcome, end_reason = "failure", "initial_interpenetration"
        pen = res.max_penetration_m
        reason = (f"the sampled initial pose is already in contact (first contact at t = {res.first_contact_s:g} s"
                  + (f", penetration up to {1e3 * pen:.2f} mm" if pen is not None and math.isfinite(pen) else "")
                  + "): an infeasible start, not a failure of the mechanism")
    elif res.end_reason in ("mechanism_error", "penetration_limit", "diverged"):
        outcome, reason = "failure", res.message or res.end_reason
    elif not all(math.isfinite(x) for x in stats):
        outcome, reason = "failure", "non-finite state (the integration diverged)"
    elif res.captured:
        outcome, reason = "capture", ""
    else:
        outcome = "no_capture"
        reason = EC.no_capture_reason(res.end_reason)
    row.update(outcome=outcome, reason=reason, capture_time_s=res.time_to_capture_s,
               first_contact_s=res.first_contact_s, peak_force_n=res.peak_force_n, peak_moment_nm=res.peak_moment_nm,
               peak_stroke_m=watch.peak if watch.sl is not None else None,
               peak_stroke_rate_mps=watch.peak_rate if watch.sl is not None else None,
               energy_absorbed_j=res.energy_absorbed_j, max_penetration_m=res.max_penetration_m,
               min_stroke_margin_m=_stroke_margin(sim, watch), end_reason=end_reason, t_end_s=res.t_end_s,
               cpu_s=res.cpu_s)
    return row


__all__ = ["run_sample", "simulate_sample", "simulate_hil_sample", "OUTCOMES", "OUTCOME_COLUMNS", "NONDETERMINISTIC"]
