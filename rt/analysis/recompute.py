"""``dockstand recompute``: the controller's cycle re-run from what a HIL run logged
(docs/analysis.md, "Recompute").

From the run's start (the ``run_start`` event: the sensing bias the run used; the filter
restarts at rest there) every record's logged raw counts go through the sensing chain
(``rt.stand.sensing.sense``) and, in each cycle the DYNAMICS kernel ran, through the coupling
step (``rt.dynamics.coupling.coupling_update``, ``berthing_update`` for a berthing case) from the case's initial state, with the run's
stand geometry, delay and compensation mode — the same compiled functions the kernel
(``rt.control.kernels.hil_cycle_packed``) calls, in the same order, on the same inputs:

* the kernel's cycles are the DYNAMICS records but the first one after a run-up (that record
  is the run-up's last step; when its time is past 0, deadlines were skipped and the run-up
  overshot: the state is carried free over the overshoot first, as the controller did);
* cycle k starts at ``t_run = t_{k-1}`` (the previous record's time) and steps
  ``dt = n * 1e-9`` s with ``n`` the whole nanoseconds between the loop's wake-ups (the loop
  measures its period in ns), recovered from ``t_k - t_{k-1}`` and checked to give ``t_k``
  back exactly.

Reproduced means every recomputed ``w_P``, ``x``, ``rel_pose``/``rel_twist``/``rel_acc`` and
``cmd_pose`` equals the logged one bit for bit. With overrides (``compensate``, ``tau_s``,
``filter_cutoff_hz``) it answers what the controller would have commanded, written as a new
log that ``dockstand report --reference`` overlays: the same records with ``w_P``, the
vehicles' state, the relative state, the command and its leg lengths recomputed. The
measured platform motion is what it was: a what-if is open loop. Not real-time.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rt.analysis.run import Run, load_run
from rt.record.logscan import LogError

PHASE_RUNUP, PHASE_DYNAMICS = 5, 6        # rt.control.phases.Phase
CHECKED = ("w_P", "x", "rel", "cmd_pose")
KEYS = {"compensate": "true|false", "tau_s": "seconds >= 0", "filter_cutoff_hz": "Hz > 0, or none"}
MAX_TAU_S = 0.1            # as the stand file's identify band: no platform's delay is longer
UNITS = {"w_P": "N, N m", "x": "SI, the state's", "rel": "m, 1, m/s, rad/s, ...", "cmd_pose": "m, quaternion"}


@dataclass
class RecomputeResult:
    rows: int                                  # kernel cycles recomputed
    identical: int                             # of them, equal in every checked field
    max_abs: dict[str, float]                  # largest |recomputed - logged| per field
    first_diff: dict | None                    # {"record", "t", "field"} of the first difference
    overrides: dict
    lo: int                                    # first record replayed (the run's start)
    lead_shift_s: float                        # the lead moved with an overridden filter's group delay
    kernel: np.ndarray                         # record indices of the kernel's cycles
    out: dict[str, np.ndarray] = field(repr=False)   # recomputed fields over records lo..hi

    @property
    def reproduced(self) -> bool:
        return self.rows > 0 and self.identical == self.rows


def parse_overrides(items) -> dict:
    out = {}
    for it in items or ():
        if "=" not in it:
            raise ValueError(f"--set {it!r}: expected KEY=VALUE")
        k, v = (s.strip() for s in it.split("=", 1))
        if k not in KEYS:
            raise ValueError(f"--set {k}: unknown key; known: {', '.join(f'{a} ({b})' for a, b in KEYS.items())}")
        try:
            if k == "compensate":
                if v.lower() not in ("true", "false", "on", "off", "1", "0"):
                    raise ValueError
                out[k] = v.lower() in ("true", "on", "1")
            elif k == "filter_cutoff_hz" and v.lower() in ("none", "off"):
                out[k] = None
            else:
                out[k] = float(v)
                if not np.isfinite(out[k]) or out[k] < 0.0:
                    raise ValueError
                if k == "filter_cutoff_hz" and out[k] == 0.0:
                    out[k] = None                      # no filter, as "none"
        except ValueError:
            raise ValueError(f"--set {k}={v}: expected {KEYS[k]}") from None
        if k == "tau_s" and out[k] > MAX_TAU_S:
            raise ValueError(f"--set tau_s={v}: {out[k]:g} s is no loop delay (at most {MAX_TAU_S:g} s; in seconds)")
    return out


def _dt(t_prev: float, t: float, period: float) -> float:
    for dt in (round((t - t_prev) * 1e9) * 1e-9, period):
        if t_prev + dt == t:
            return dt
    return t - t_prev


def recompute(run: Run, overrides: dict | None = None, progress=None) -> RecomputeResult:
    """Replay the run (module docstring); ``overrides`` as :func:`parse_overrides` returns;
    ``progress(done, total)`` told every 8192 records (a long log's recompute takes minutes)."""
    from rt.config.stand import stand_from_snapshot
    from rt.control.controller import stand_geometry
    from rt.dynamics import coupling as CP
    from rt.dynamics.berthing_flight import flight_from_case
    from rt.analysis.report import contact_gate_of
    from rt.stand import contact_gate as CG
    from rt.stand.sensing import Sensing

    ov = dict(overrides or {})
    h = run.header
    if run.kind != "hil" or "raw" not in run.fields:
        raise LogError(f"{run.path}: a {run.kind} log; recompute replays a HIL run's log")
    start = next((e for e in run.events if e.get("kind") == "run_start"), None)
    if start is None:
        raise LogError(f"{run.path}: no run_start event (the run never started, or the log predates recompute)")
    stand = stand_from_snapshot(h["config"], f"{run.path}: header config")
    case, warn = run.load_case()
    if warn:
        raise LogError(f"{run.path}: {warn}; recompute needs the case as it was")
    flt = h.get("sensing_filter") or {}
    cutoff = ov.get("filter_cutoff_hz", flt.get("cutoff_hz"))
    sp = dataclasses.replace(stand.sensing, filter_cutoff_hz=cutoff or None,
                             filter_damping=float(flt.get("damping", stand.sensing.filter_damping)))
    sens = Sensing(sp)
    sens.bias[:] = start["sensing_bias"]
    sens.ctr[2] = 1                                            # tared (CTR_TARED)
    tau = float(ov.get("tau_s", start.get("tau_s", h.get("tau_s", 0.0))))
    mode = int(start.get("mode", CP.MODE_PREDICT if h.get("compensate") else CP.MODE_OFF))
    if "compensate" in ov:
        mode = CP.MODE_PREDICT if ov["compensate"] else CP.MODE_OFF
    geo = stand_geometry(stand)
    period = 1.0 / float(h.get("rate_hz") or stand.rate_hz)

    ph = run.field("phase")
    t_all = run.t
    runs = np.nonzero((ph == PHASE_RUNUP) | (ph == PHASE_DYNAMICS))[0]
    if not len(runs):
        raise LogError(f"{run.path}: no run-up or dynamics records")
    lo = int(runs[0])
    dyn = np.nonzero(ph == PHASE_DYNAMICS)[0]
    hi = int(dyn[-1]) + 1 if len(dyn) else lo
    kernel = np.array([i for i in dyn if not (i > 0 and ph[i - 1] == PHASE_RUNUP)], dtype=np.int64)
    extra = [f for f in ("new_sample", "delay") if f in run.fields]
    d = run.read(["t", "raw", "w_P", "x", "rel_pose", "rel_twist", "rel_acc", "cmd_pose"] + extra, lo, hi)
    # the lead the predictor used, cycle by cycle (the identified delay when fed: rt.stand.delay_id),
    # and what of the measured wrench the dynamics received (rt.stand.contact_gate)
    tau_rows = d["delay"][:, 1] if "delay" in d and "tau_s" not in ov else None
    # the controller derives its lead from the filter (rt.config.stand: Delays.filter_s): another
    # cutoff moves the lead by the difference of the two group delays, unless tau_s is set too
    shift = 0.0
    if "filter_cutoff_hz" in ov and "tau_s" not in ov:
        from rt.stand.sensing import lowpass_group_delay_s
        rate = float(h.get("rate_hz") or stand.rate_hz)
        damp = float(flt.get("damping", stand.sensing.filter_damping))
        old_c, new_c = flt.get("cutoff_hz"), ov["filter_cutoff_hz"]
        shift = ((lowpass_group_delay_s(new_c, damp, rate) if new_c else 0.0)
                 - (lowpass_group_delay_s(old_c, damp, rate) if old_c else 0.0))
        tau += shift
        if tau_rows is not None:
            tau_rows = tau_rows + shift
    cg = contact_gate_of(run)
    gate = CG.pack_gate(cg.enabled, cg.on_n, cg.off_n, cg.persist, cg.release_s, period)
    new_sample = d["new_sample"] if "new_sample" in d else np.ones(hi - lo)
    sc = flight_from_case(case)
    step = CP.update_kernel(sc.env)
    w_in = np.zeros((2, 6))
    cp_out = np.zeros(CP.OUT_LEN)
    cp_out[CP.O_JLIM:CP.O_JLIM + 2] = start.get("jerk_limits") or (0.0, 0.0)   # the run's (rt.control.procedures)
    cp_out[CP.O_LEADA:CP.O_LEADA + 2] = start.get("lead_limits") or (0.0, 0.0)
    n = hi - lo
    rel_w = d["rel_pose"].shape[1] + d["rel_twist"].shape[1] + d["rel_acc"].shape[1]
    out = {"w_P": d["w_P"].copy(), "x": d["x"].copy(), "rel": np.column_stack([d["rel_pose"], d["rel_twist"],
                                                                              d["rel_acc"]]),
           "cmd_pose": d["cmd_pose"].copy()}
    logged = {k: v.copy() for k, v in out.items()}
    is_kernel = np.zeros(n, dtype=bool)
    is_kernel[kernel - lo] = True
    ws = sc.ws
    if len(kernel) and kernel[0] > lo and np.isfinite(t_all[kernel[0] - 1]) and t_all[kernel[0] - 1] > 0.0:
        # the run-up overshot t_run = 0 (deadlines skipped): the controller carried the case's
        # state free over the overshoot (rt.control.controller, _step_runup)
        sc.step(0.0, float(t_all[kernel[0] - 1]), np.zeros((2, 6)))
    for i in range(n):
        if progress is not None and i % 8192 == 0:
            progress(i, n)
        sens.step(np.ascontiguousarray(d["raw"][i]))
        out["w_P"][i] = sens.w_P
        if not is_kernel[i]:
            continue
        t_run = float(t_all[lo + i - 1]) if lo + i > 0 and np.isfinite(t_all[lo + i - 1]) else 0.0
        dt = _dt(t_run, float(d["t"][i]), period)
        CG.gate(gate, sens.w_P, w_in[0], bool(new_sample[i]))
        tau_i = float(tau_rows[i]) if tau_rows is not None and np.isfinite(tau_rows[i]) else tau
        step(sc.par, sc.env, sc.x, t_run, dt, w_in, tau_i, mode, geo, cp_out, ws.k, ws.xt, ws.ws, ws.rel)
        out["x"][i] = sc.x.ravel()
        out["rel"][i] = cp_out[CP.O_REL:CP.O_REL + rel_w]
        out["cmd_pose"][i] = cp_out[CP.O_PCMD:CP.O_PCMD + 7]
    rows = int(is_kernel.sum())
    same = np.ones(n, dtype=bool)
    max_abs = {}
    first = None
    for k in CHECKED:
        a, b = out[k][is_kernel], logged[k][is_kernel]
        diff = np.abs(a - b).reshape(len(a), -1)
        eq = np.all((a == b).reshape(len(a), -1), axis=1)
        max_abs[k] = float(np.nanmax(diff)) if diff.size else 0.0
        same_k = np.ones(n, dtype=bool)
        same_k[is_kernel] = eq
        same &= same_k
    bad = np.nonzero(~same)[0]
    if len(bad):
        i = int(bad[0])
        fld = next(k for k in CHECKED if not np.array_equal(out[k][i], logged[k][i]))
        first = {"record": lo + i, "t": float(d["t"][i]), "field": fld}
    return RecomputeResult(rows, int(np.sum(same[is_kernel])), max_abs, first, ov, lo, shift, kernel, out)


def write_whatif(run: Run, res: RecomputeResult, out_path: Path) -> Path:
    """The run's log with the recomputed fields in place (module docstring)."""
    from rt.config.stand import stand_from_snapshot
    from rt.record.runlog import RunLogWriter
    from rt.stand.hexapod import Hexapod

    hexa = Hexapod(stand_from_snapshot(run.header["config"], f"{run.path}: header config").hexapod)
    hdr = {k: v for k, v in run.header.items() if k not in ("k", "schema", "fields", "width", "version", "git",
                                                             "host", "pid", "start_time", "start_time_ns")}
    hdr.update({"kind": "recompute", "recomputed_from": str(run.path), "set": res.overrides,
                "start_time": run.header.get("start_time"), "start_time_ns": run.header.get("start_time_ns")})
    if "filter_cutoff_hz" in res.overrides:
        hdr["sensing_filter"] = {**(run.header.get("sensing_filter") or {}),
                                 "cutoff_hz": res.overrides["filter_cutoff_hz"]}
    if "tau_s" in res.overrides:
        hdr["tau_s"] = res.overrides["tau_s"]
    elif res.lead_shift_s and run.header.get("tau_s") is not None:
        hdr["tau_s"] = float(run.header["tau_s"]) + res.lead_shift_s
    names = list(run.fields)
    sl = {}
    o = 0
    for f in names:
        sl[f] = slice(o, o + run.fields[f])
        o += run.fields[f]
    hi = res.lo + len(res.out["w_P"])
    kernel = set(int(k) for k in res.kernel)
    rel_names = ("rel_pose", "rel_twist", "rel_acc")
    w = RunLogWriter(out_path, dict(run.fields), header=hdr, threaded=False, capacity=1 << 14)
    for e in run.events:
        w.event(e.get("kind", "event"), **{k: v for k, v in e.items() if k not in ("k", "kind", "seq")})
    step = 1 << 13
    for a in range(0, run.n_records, step):
        b = min(run.n_records, a + step)
        d = run.read(names, a, b)
        for i in range(a, b):
            row = w.staging
            for f in names:
                row[sl[f]] = d[f][i - a]
            if res.lo <= i < hi:
                j = i - res.lo
                row[sl["w_P"]] = res.out["w_P"][j]
                if i in kernel:
                    row[sl["x"]] = res.out["x"][j]
                    r = res.out["rel"][j]
                    o = 0
                    for f in rel_names:
                        row[sl[f]] = r[o:o + run.fields[f]]
                        o += run.fields[f]
                    row[sl["cmd_pose"]] = res.out["cmd_pose"][j]
                    if "cmd_lengths" in sl:
                        hexa.inverse(np.ascontiguousarray(res.out["cmd_pose"][j]), row[sl["cmd_lengths"]])
            w.commit()
        w.flush()
    w.close(fsync=False)
    return out_path


def cmd_recompute(args: argparse.Namespace) -> int:
    from rt.analysis.progress import Stages
    from rt.config._schema import ConfigError
    bar = None

    def progress(done, total):          # a bar on stderr once the recompute takes more than 2 s
        nonlocal bar
        if bar is None:
            bar = Stages("recompute").bar(total, "cycles", unit="records", delay_s=2.0)
        bar.update(done)
    try:
        ov = parse_overrides(args.set)
        run = load_run(args.log)
        res = recompute(run, ov, progress)
        if bar is not None:
            bar.update(float("inf"))
            bar.close()
            bar = None
        out = None
        if ov or args.output:
            out = Path(args.output) if args.output else run.path.with_name(run.path.stem + "-whatif.dslog")
            if out.resolve() == run.path.resolve():
                raise ValueError(f"{out}: would overwrite the run log")
            write_whatif(run, res, out)
    except (LogError, ConfigError, ValueError, OSError) as e:
        if bar is not None:
            bar.close()
        print(f"dockstand recompute: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
        return 2
    rep = {"log": str(run.path), "cycles": res.rows, "identical": res.identical, "reproduced": res.reproduced,
           "max_abs_difference": res.max_abs, "first_difference": res.first_diff, "set": ov,
           "whatif_log": str(out) if out else None, "lead_shift_s": res.lead_shift_s}
    if args.json:
        print(json.dumps(rep))
    else:
        print(f"{run.path}: {res.rows} DYNAMICS cycles recomputed, {res.identical} identical")
        for k, v in res.max_abs.items():
            print(f"  largest |difference| {k:<9} {v:.3g}  ({UNITS.get(k, 'SI')})")
        if res.lead_shift_s:
            print(f"  the lead moved by {1e3 * res.lead_shift_s:+.3f} ms with the filter's group delay "
                  "(the controller derives its lead from the filter; --set tau_s=S fixes it instead)")
        if res.first_diff:
            f = res.first_diff
            print(f"  first difference at record {f['record']} (t = {f['t']:.6g} s) in {f['field']}")
        if out:
            print(f"what-if log ({', '.join(f'{k}={v}' for k, v in ov.items())}): {out}")
    if ov:
        return 0
    return 0 if res.reproduced else 1


def add_parser(sub) -> None:
    r = sub.add_parser("recompute", help="re-run the cycle's kernels from a HIL log's inputs; what-if with --set")
    r.add_argument("log")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="what if: compensate=true|false, tau_s=S, filter_cutoff_hz=HZ|none (repeatable); "
                        "writes a new log")
    r.add_argument("-o", "--output", help="the what-if log (default <log>-whatif.dslog)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_recompute)
