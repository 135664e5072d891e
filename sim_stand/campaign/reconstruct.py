"""Flight reconstruction ([Yaskevich 2018b, validation]; ``dockstand reconstruct``;
docs/campaigns.md §reconstruct): the initial conditions of a docking recovered from its telemetry by
least squares over repeated all-digital simulations (``scipy.optimize.least_squares``, multi-start,
the starts optionally on a Dask cluster). Not for the real-time loop.

Telemetry: CSV or Parquet with the column names of ``dockstand export`` (a unit suffix
``" [N]"`` is ignored): ``t`` (s) and any subset of the contact wrench on P ``w_P.fx .. w_P.mz``,
the leg strokes ``stroke.leg1 ..``, the ring's pose ``ring_state.0 .. ring_state.5`` and the
active craft's angular rates ``x.A.w_x .. x.A.w_z``. Other columns are ignored (listed in the fit).

Time: the telemetry's ``t`` is the case's time (``align_contact``: plus a fitted offset
``time_offset_s``, started from the offset of the first contacts). First contact is the first
instant the force magnitude exceeds ``threshold_n`` (else a stroke departs from its first value
by ``threshold_m``), interpolated between samples. The residuals are the fitted channels from
``pre_s`` before the telemetry's first contact to ``window_s`` after it, each divided by its
standard deviation there (all channels weigh alike), and the first-contact time (in units of
10 ms). The contact wrench is fitted only on request (:func:`fitted_channels`): sampled at
1 kHz it rings at the contact's kHz frequencies, its residual jumps with the parameters and
stalls a local fit; it still times the first contact.

Parameters: the campaign parameters of the case's initial conditions (defaults
:data:`FIT_PARAMETERS`), fitted in units of :data:`SCALES`; the uncertainty is the
Gauss-Newton covariance ``s^2 (J^T J)^-1`` at the solution, ``s^2`` the residual variance.
The result also gives the relative state at the fitted run's first contact.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rt.config.case import Case, load_case
from sim_stand.campaign.apply import apply_case
from sim_stand.campaign.spec import nominal_value
from sim_stand.campaign.telemetry import CHANNEL_PREFIXES, Telemetry, TelemetryError, contact_time, read_telemetry

FIT_PARAMETERS = ("position_y_m", "position_z_m", "misalignment_1_deg", "misalignment_2_deg", "misalignment_3_deg",
                  "closing_velocity_mps", "lateral_velocity_y_mps", "lateral_velocity_z_mps",
                  "active_rate_x_dps", "active_rate_y_dps", "active_rate_z_dps")
#: the fit's unit of each parameter (its finite-difference step is 5 % of it, the fit's box +-4 of it)
SCALES = {"position": 0.01, "misalignment": 0.5, "closing": 0.005, "lateral": 0.002, "active": 0.05,
          "passive": 0.05, "time": 0.005}
#: the fitted offset of the telemetry's clock from the case's (``align_contact``), s
OFFSET = "time_offset_s"
#: the plot's axis label of each channel group (telemetry.CHANNEL_PREFIXES)
CHANNEL_LABELS = {"w_P.": "contact wrench on P (N, N m)", "stroke.": "leg stroke (m)",
                  "ring_state.": "ring pose (m, rad)", "x.A.w_": "active craft rate (rad/s)",
                  "rel_pose.": "A in P: position (m), attitude (quaternion)", "rel_twist.": "A in P: velocity, rate"}


def scale_of(name: str) -> float:
    return SCALES[name.split("_")[0]]


class Simulator:
    """Runs the case with given parameter values up to ``t_end_s`` (and its first contact) and
    returns the telemetry's channels (the run-log column names of :func:`rt.analysis.run.field_columns`)."""

    def __init__(self, case: Case, emu, names: list[str], threshold_n: float, threshold_m: float, t_end_s: float,
                 sim_kw: dict | None = None):
        self.case, self.emu, self.names = case, emu, names
        self.threshold_n, self.threshold_m, self.t_end_s = threshold_n, threshold_m, t_end_s
        self.sim_kw = dict(sim_kw or {})        # DigitalSim's: the stand's conditions for a HIL run's telemetry
        self.runs = 0

    def run(self, values: dict[str, float]) -> tuple[np.ndarray, dict[str, np.ndarray], float | None, dict]:
        from rt.analysis.run import field_columns
        from sim_stand.digital import DigitalSim
        self.runs += 1
        sim = DigitalSim(apply_case(self.case, values), self.emu, **self.sim_kw)
        index = {}
        for f, size in sim.fields.items():
            names, _ = field_columns(f, size)
            for i, n in enumerate(names):
                index[f if size == 1 else f"{f}.{n}"] = sim.offsets[f] + i
        missing = [k for k in self.names if k not in index]
        if missing:
            raise TelemetryError(f"channels {', '.join(missing)} are not outputs of this case's model")
        # first contact from the same kind of channel as the telemetry's (force, else strokes)
        det = [k for k in self.names if k in ("w_P.fx", "w_P.fy", "w_P.fz")] or \
            [k for k in self.names if k.startswith("stroke.")]
        buf = np.zeros((250, sim.width))
        blocks, tc = [], None
        while not sim.ended:
            n = sim.advance_rows(buf)
            if n == 0:
                break
            blocks.append(buf[:n].copy())
            if tc is None and det:
                rows = np.concatenate(blocks)
                tc = contact_time(rows[:, 0], {k: rows[:, index[k]] for k in det}, self.threshold_n,
                                  self.threshold_m)
            if sim.t > self.t_end_s and (tc is not None or not det):
                break
        rows = np.concatenate(blocks) if blocks else np.zeros((0, sim.width))
        out = {k: rows[:, index[k]] for k in self.names}
        state = {}
        if tc is not None and rows.shape[0]:
            k = int(np.searchsorted(rows[:, 0], tc))
            r = rows[min(k, rows.shape[0] - 1)]
            p = r[index["rel_pose.x"]:index["rel_pose.x"] + 3]
            q = r[index["rel_pose.x"] + 3:index["rel_pose.x"] + 7]
            v = r[index["rel_twist.vx"]:index["rel_twist.vx"] + 3]
            state = {"t_s": tc, "position_m": p.tolist(), "lateral_offset_m": float(math.hypot(p[1], p[2])),
                     "misalignment_deg": math.degrees(2.0 * math.acos(min(1.0, abs(float(q[0]))))),
                     "velocity_mps": v.tolist(), "closing_speed_mps": float(v[0])}
        return rows[:, 0], out, tc, state


@dataclass
class Fit:
    telemetry: str
    case: str
    parameters: dict                 # name -> {"value", "sigma", "start"}
    cost: float
    rms_residual: float              # in units of each channel's RMS
    channels: list
    ignored_columns: list
    samples: int
    simulations: int
    starts: list                     # per start: {"start": {...}, "cost", "nfev", "status"}
    contact_state: dict
    success: bool                    # the optimiser converged and the fit reaches the telemetry's noise
    message: str = ""
    residual_to_noise: float = math.nan     # RMS over channels of (fit residual / the channel's noise)
    untimed_rows: int = 0            # telemetry rows without a run time, left out (a HIL log's arming)
    stand_conditions: bool = False   # simulated under a stand's conditions (a HIL run's telemetry)
    series: dict = field(default_factory=dict, repr=False)     # for the plot: t, telemetry, fit

    def as_dict(self) -> dict:
        d = dict(vars(self))
        d.pop("series")
        return d


def _residual_fn(sim: Simulator, tt: np.ndarray, y: dict, w: dict, base: dict, names, t_c, sigma_tc):
    """Residuals of the telemetry at its times ``tt`` (the case's time plus ``time_offset_s``
    when that is a fitted parameter) against the simulation, and of the first-contact time
    ``t_c`` (in units of ``sigma_tc``): the contact time informs the fit even while the
    simulation's contact lies outside the window (a run without contact counts its end)."""
    def values_of(theta):
        return {n: base[n] + scale_of(n) * th for n, th in zip(names, theta)}

    def f(theta):
        v = values_of(theta)
        off = v.pop(OFFSET, 0.0)
        t, out, tc, _ = sim.run(v)
        res = [(np.interp(tt - off, t, out[k]) - y[k]) / w[k] / math.sqrt(tt.size) for k in y]
        if t_c is not None:
            tcs = (tc if tc is not None else (float(t[-1]) if t.size else 0.0)) + off
            res.append(np.array([(tcs - t_c) / sigma_tc]))
        return np.concatenate(res)
    return f, values_of


def _t_end(tt, base, opts) -> float:
    """The case time a simulation must reach to cover the window at any allowed offset."""
    off = base.get(OFFSET)
    return float(tt.max()) + 0.01 + (0.0 if off is None else -off + opts["box"] * SCALES["time"])


def _costs(case: Case, emu, tel: Telemetry, names, base, thetas, opts, progress=None) -> list[float]:
    """The cost at each of ``thetas`` (the scan that picks the starts); ``progress(k)``: told
    after each (the local scan's bar)."""
    tt, y, w = _window(tel, opts)
    sim = Simulator(case, emu, list(tel.channels), opts["threshold_n"], opts["threshold_m"], _t_end(tt, base, opts),
                    opts.get("sim_kw"))
    t_c = contact_time(tel.t, tel.channels, opts["threshold_n"], opts["threshold_m"])
    f, _ = _residual_fn(sim, tt, y, w, base, names, t_c, opts["sigma_tc"])
    out = []
    for th in thetas:
        r = f(np.asarray(th, dtype=np.float64))
        out.append(float(0.5 * r @ r))
        if progress is not None:
            progress(len(out))
    return out


def _one_start(case: Case, emu, tel: Telemetry, names, base, theta0, opts, progress=None) -> dict:
    """One local fit: Nelder-Mead from ``theta0`` (derivative-free: it crosses the cost's kinks
    where another feature of the interface touches first), then ``least_squares`` from its
    result (the optimum's polish and the Jacobian for the uncertainty). ``progress(k)``: told
    the simulations run so far after each (the local fit's bar)."""
    from scipy.optimize import least_squares, minimize
    tt, y, w = _window(tel, opts)
    sim = Simulator(case, emu, list(tel.channels), opts["threshold_n"], opts["threshold_m"], _t_end(tt, base, opts),
                    opts.get("sim_kw"))
    t_c = contact_time(tel.t, tel.channels, opts["threshold_n"], opts["threshold_m"])
    f_sim, _ = _residual_fn(sim, tt, y, w, base, names, t_c, opts["sigma_tc"])

    def f(th):
        r = f_sim(th)
        if progress is not None:
            progress(sim.runs)
        return r
    p = len(names)
    lo, hi = np.full(p, -opts["box"]), np.full(p, opts["box"])
    x0 = np.clip(np.asarray(theta0, dtype=np.float64), lo * 0.999, hi * 0.999)
    nfev = 0
    if opts["simplex_fev"] > 0:
        m = minimize(lambda th: 0.5 * float(np.sum(f(np.clip(th, lo, hi)) ** 2)), x0, method="Nelder-Mead",
                     options=dict(maxfev=opts["simplex_fev"], initial_simplex=np.vstack([x0, x0 + np.eye(p)]),
                                  xatol=0.02, fatol=1e-3))
        x0, nfev = np.clip(m.x, lo * 0.999, hi * 0.999), int(m.nfev)
    r = least_squares(f, x0, bounds=(lo, hi), diff_step=0.05, x_scale=1.0, xtol=1e-6, ftol=1e-8, gtol=1e-8,
                      max_nfev=opts["max_nfev"])
    return {"theta": r.x.tolist(), "cost": float(r.cost), "jac": r.jac.tolist(), "m": int(r.fun.size),
            "nfev": nfev + int(r.nfev), "status": int(r.status), "message": r.message, "sims": sim.runs,
            "theta0": list(map(float, theta0))}


def fitted_channels(tel: Telemetry, fit_forces: bool = False) -> list[str]:
    """The channels whose residuals are fitted: all but the contact wrench, unless
    ``fit_forces`` or the wrench is all there is (module docstring)."""
    other = [k for k in tel.channels if not k.startswith("w_P.")]
    return list(tel.channels) if (fit_forces or not other) else other


def _window(tel: Telemetry, opts):
    """The telemetry's samples from ``pre_s`` before its first contact to ``window_s`` after
    (all of it when no contact is detected), the fitted channels there, and each one's weight:
    its standard deviation over the window (a floor for a flat channel)."""
    t_c = contact_time(tel.t, tel.channels, opts["threshold_n"], opts["threshold_m"])
    m = np.ones(tel.t.size, bool) if t_c is None else (tel.t >= t_c - opts["pre_s"]) & (tel.t <= t_c + opts["window_s"])
    if m.sum() < 10:
        raise TelemetryError(f"{tel.file}: fewer than 10 samples in the fitted window")
    y = {k: tel.channels[k][m] for k in fitted_channels(tel, opts.get("fit_forces", False))}
    w = {}
    for k, v in y.items():
        floor = 1.0 if k.startswith("w_P.") else 1e-5
        w[k] = max(float(np.std(v)), floor)
    return tel.t[m], y, w


def reconstruct(telemetry, case, *, emulator=None, parameters=None, starts: int = 4, workers: int | None = None,
                scheduler: str | None = None, seed: int = 1, window_s: float = 1.0, pre_s: float = 0.05,
                threshold_n: float = 20.0, threshold_m: float = 5e-4, box: float = 4.0, max_nfev: int = 60,
                align_contact: bool = False, scan: int | None = None, fit_forces: bool = False,
                simplex_fev: int = 60, progress=None, stand=None) -> Fit:
    """Fit the case's initial conditions to the telemetry (module docstring). The telemetry's
    ``t`` is the case's time, unless ``align_contact``: then the offset between the two clocks
    is fitted too (``time_offset_s``), started from the offset of the first contacts. Multi-start:
    the cost is evaluated at the case's own values and ``scan - 1`` Sobol points in the box of
    +-``box`` scales around them (default ``scan`` = 8 per parameter); local fits
    (:func:`_one_start`: ``simplex_fev`` Nelder-Mead evaluations, then ``least_squares``, bounded
    to the box) start from the case's own values and the ``starts - 1`` cheapest scan points;
    scan and fits run on a Dask cluster when ``workers`` or ``scheduler`` is given, else here.
    ``progress`` (rt.analysis.progress.Stages): a line per stage, a bar of the scan and of each
    local fit's simulations (run here; on Dask a line per stage), on stderr.
    ``stand`` (a Stand or its file): the telemetry is a HIL run's on that stand, and each
    simulation runs under the stand's conditions (sim_stand.digital.stand_conditions: its 1 g
    on the mechanism, the controller's coupling, the emulated stand's integrator), as the
    reference ``dockstand report --simulate`` judges such a run against; an orbit simulation
    does not reproduce a HIL run (the mechanism's sag under 1 g moves the first contact)."""
    from scipy.stats import qmc

    from sim_stand.world_config import load_emulator
    tel = telemetry if isinstance(telemetry, Telemetry) else read_telemetry(telemetry)
    case = case if isinstance(case, Case) else load_case(case)
    emu = load_emulator(emulator).for_case(case)
    sim_kw = {}
    if stand is not None:
        from rt.config.stand import Stand, load_stand
        from sim_stand.digital import stand_conditions
        sim_kw = stand_conditions(stand if isinstance(stand, Stand) else load_stand(stand), emu)
    names = list(parameters or FIT_PARAMETERS)
    scan = 8 * (len(names) + int(align_contact)) if scan is None else int(scan)
    bad = [n for n in names if n not in FIT_PARAMETERS and not n.startswith("passive_rate_")]
    if bad:
        raise TelemetryError(f"cannot fit {', '.join(bad)}: parameters are {', '.join(FIT_PARAMETERS)}")
    base = {n: nominal_value(case, n) for n in names}
    opts = dict(threshold_n=threshold_n, threshold_m=threshold_m, window_s=window_s, pre_s=pre_s, box=box,
                max_nfev=max_nfev, sigma_tc=0.01, fit_forces=fit_forces, simplex_fev=simplex_fev, sim_kw=sim_kw)
    tt, y, w = _window(tel, opts)
    if progress is not None:
        progress.say(f"{Path(tel.file).name}: {tel.t.size} timed rows"
                     + (f" ({tel.untimed} rows without a run time left out: the arming)" if tel.untimed else "")
                     + f"; fitting {len(y)} channels over {tt.size} samples ({', '.join(y)})")
    if align_contact:
        t_c = contact_time(tel.t, tel.channels, threshold_n, threshold_m)
        _, _, tc0, _ = Simulator(case, emu, list(tel.channels), threshold_n, threshold_m, float(tt.max()),
                                 opts["sim_kw"]).run(base)
        if t_c is None or tc0 is None:
            raise TelemetryError(f"{tel.file}: align_contact needs a first contact in the telemetry and in the "
                                 f"case's own run (force or stroke channels)")
        names.append(OFFSET)
        base[OFFSET] = t_c - tc0
    # the scan: the case's own values and Sobol points over the whole box; the `starts` cheapest
    # start the local fits (the cost has kinks where another feature touches first, so a local
    # fit from far away stalls: the scan puts the starts in the right basin)
    pts = [np.zeros(len(names))]
    if scan > 1 and starts > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)          # any number of scan points is fine
            u = qmc.Sobol(len(names), scramble=True, rng=np.random.default_rng(seed)).random(scan - 1)
        pts += [box * (2.0 * x - 1.0) * 0.95 for x in u]
    client = cluster = None
    if workers or scheduler:
        from sim_stand.campaign.engine import open_client
        client, cluster = open_client(workers, scheduler)
    try:
        if progress is not None and len(pts) > 1:
            progress.say(f"scan: the cost at {len(pts)} points of the ±{box:g}-unit box, for the {starts} starts"
                         + (" (on Dask)" if client is not None else ""))
        if len(pts) == 1:
            cost = [0.0]
        elif client is not None:
            nw = max(1, len(client.scheduler_info()["workers"]))
            chunks = [pts[i::nw] for i in range(nw)]
            futs = [client.submit(_costs, case, emu, tel, names, base, ch, opts, pure=False) for ch in chunks if ch]
            got = client.gather(futs)
            cost = [0.0] * len(pts)
            for i, ch in enumerate(c for c in chunks if c):
                for k, c in enumerate(got[i]):
                    cost[i + k * nw] = c
        else:
            bar = progress.bar(len(pts), "scan", unit="points") if progress is not None else None
            try:
                cost = _costs(case, emu, tel, names, base, pts, opts, None if bar is None else bar.update)
            finally:
                if bar is not None:
                    bar.close()
        # the case's own values always start a fit, the cheapest other scan points the rest
        thetas = [pts[0]] + [pts[i] for i in np.argsort(cost) if i != 0][:max(0, starts - 1)]
        if client is not None:
            if progress is not None:
                progress.say(f"{len(thetas)} local fits on Dask (Nelder-Mead, then least squares)")
            futs = [client.submit(_one_start, case, emu, tel, names, base, th, opts, pure=False) for th in thetas]
            results = client.gather(futs)
        else:
            results = []
            most = simplex_fev + max_nfev * (len(names) + 1)
            for k, th in enumerate(thetas):
                bar = None
                if progress is not None:
                    progress.say(f"local fit {k + 1} of {len(thetas)} (Nelder-Mead, then least squares; up to "
                                 f"{most} simulations)")
                    bar = progress.bar(most, f"local fit {k + 1} of {len(thetas)}", unit="simulations")
                try:
                    results.append(_one_start(case, emu, tel, names, base, th, opts,
                                              None if bar is None else bar.update))
                    if bar is not None:
                        bar.close(ended=True)
                finally:
                    if bar is not None:
                        bar.close()
    finally:
        if client is not None:
            client.close()
            if cluster is not None:
                cluster.close()
    best = min(results, key=lambda r: r["cost"])
    theta = np.array(best["theta"])
    J = np.array(best["jac"])
    dof = max(best["m"] - len(names), 1)
    s2 = 2.0 * best["cost"] / dof
    cov = s2 * np.linalg.pinv(J.T @ J)
    sig = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    params = {n: {"value": base[n] + scale_of(n) * th, "sigma": scale_of(n) * sg, "start": base[n]}
              for n, th, sg in zip(names, theta, sig)}
    # the fitted run once more: its state at first contact, and the curves for the plot
    values = {n: p["value"] for n, p in params.items()}
    off = values.pop(OFFSET, 0.0)
    sim = Simulator(case, emu, list(tel.channels), threshold_n, threshold_m, float(tt.max()) - off + 0.01,
                    opts["sim_kw"])
    t, out, _, state = sim.run(values)
    series = {"t": tt, "telemetry": y, "fit": {k: np.interp(tt - off, t, out[k]) for k in y}}
    rms = math.sqrt(2.0 * best["cost"] / len(y))
    rho = residual_to_noise(y, series["fit"], w)
    fits = rho <= NOISE_RATIO or rms <= EXPLAINED
    return Fit(telemetry=tel.file, case=case.name, parameters=params, cost=best["cost"], rms_residual=rms,
               channels=list(y), ignored_columns=tel.ignored, samples=int(tt.size),
               simulations=sum(r["sims"] for r in results) + len(pts) + 1 + int(align_contact),
               starts=[{"start": {n: base[n] + scale_of(n) * th for n, th in zip(names, r["theta0"])},
                        "cost": r["cost"], "nfev": r["nfev"], "status": r["status"]} for r in results],
               contact_state=state, success=best["status"] > 0 and fits, message=best["message"], series=series,
               residual_to_noise=rho, untimed_rows=tel.untimed, stand_conditions=bool(sim_kw))


NOISE_RATIO = 3.0     # a fit whose residual is within this many times the telemetry's noise explains it
EXPLAINED = 0.05      # ... or leaves less than this share of each channel's RMS


def telemetry_noise(v: np.ndarray, weight: float) -> float:
    """A channel's white-noise sigma from its second differences (``var = 6 sigma^2``; the motion's
    own second difference at 1 kHz is far below), robust to the contact's jumps (the median's
    absolute deviation); at least 1e-3 of the channel's ``weight`` (a noise-free channel)."""
    if v.size < 5:
        return weight
    d2 = v[2:] - 2.0 * v[1:-1] + v[:-2]
    mad = float(np.median(np.abs(d2 - np.median(d2))))
    return max(1.4826 * mad / math.sqrt(6.0), 1e-3 * weight)


def residual_to_noise(y: dict, fit: dict, w: dict) -> float:
    """The fit's residual against the telemetry's own noise: the RMS over channels of each
    channel's RMS residual over its noise (:func:`telemetry_noise`). About 1 for a fit that
    explains the telemetry; far above it, a local minimum or a case that cannot produce it."""
    r = [float(np.sqrt(np.mean((fit[k] - y[k]) ** 2))) / telemetry_noise(y[k], w[k]) for k in y]
    return float(np.sqrt(np.mean(np.square(r)))) if r else math.nan


def format_fit(fit: Fit) -> str:
    lines = [f"reconstruction of {fit.telemetry} with case {fit.case}"
             + (" under the stand's conditions" if fit.stand_conditions else " in orbit")
             + f": {len(fit.channels)} channels, {fit.samples} samples, {fit.simulations} simulations, "
             f"{len(fit.starts)} starts"]
    lines.append(f"  rms residual {fit.rms_residual:.4g} (of each channel's RMS), {fit.residual_to_noise:.3g} x the "
                 f"telemetry's noise; {fit.message}")
    if not fit.success:
        lines.append(f"  warning: the fit does not explain the telemetry (its residual is {fit.residual_to_noise:.3g} "
                     f"times the noise, {fit.rms_residual:.3g} of each channel's RMS): a local minimum or a case that "
                     "cannot produce this flight, and the ± below are not uncertainties. Try more --starts, fewer "
                     "--fit parameters, or --plot to see where it departs.")
    w = max(len(n) for n in fit.parameters)
    for n, p in fit.parameters.items():
        lines.append(f"  {n:<{w}}  {p['value']:+.6g} ± {p['sigma']:.2g}   (start {p['start']:+.6g})")
    cs = fit.contact_state
    if cs:
        lines.append(f"  at first contact (t = {cs['t_s']:.4f} s): lateral offset {cs['lateral_offset_m'] * 1e3:.2f} mm, "
                     f"misalignment {cs['misalignment_deg']:.3f} deg, closing speed {cs['closing_speed_mps']:.4f} m/s")
    for s in fit.starts:
        lines.append(f"  start cost {s['cost']:.4g} after {s['nfev']} evaluations (status {s['status']})")
    if fit.untimed_rows:
        lines.append(f"  {fit.untimed_rows} rows without a run time left out (t NaN: the arming of a HIL log)")
    if fit.ignored_columns:
        lines.append(f"  fitted channels: {', '.join(fit.channels)}")
        lines.append(f"  ignored columns: {len(fit.ignored_columns)} ({', '.join(fit.ignored_columns[:8])}"
                     + (" ..." if len(fit.ignored_columns) > 8 else "") + ")")
    return "\n".join(lines)


def plot_fit(fit: Fit, path) -> None:
    """Fit (lines) over telemetry (dots), one panel per channel group."""
    from matplotlib.figure import Figure
    groups = [g for g in CHANNEL_PREFIXES if any(k.startswith(g) for k in fit.channels)]
    fig = Figure(figsize=(11.69, 8.27))
    axes = np.atleast_1d(fig.subplots(len(groups), 1, sharex=True))
    s = fit.series
    for ax, g in zip(axes, groups):
        for i, k in enumerate(k for k in fit.channels if k.startswith(g)):
            c = f"C{i % 10}"
            ax.plot(s["t"], s["telemetry"][k], ".", ms=1.5, color=c, alpha=0.5)
            ax.plot(s["t"], s["fit"][k], "-", lw=1.0, color=c, label=k)
        ax.set_ylabel(CHANNEL_LABELS.get(g, g), fontsize=9)
        ax.legend(fontsize=8, ncol=3, markerscale=2)
        ax.grid(True, lw=0.3)
    axes[-1].set_xlabel("telemetry time (s)")
    fig.suptitle(f"reconstruction of {Path(fit.telemetry).name}: telemetry (dots) and fit (lines)")
    fig.savefig(path)


__all__ = ["reconstruct", "read_telemetry", "Fit", "Telemetry", "TelemetryError", "format_fit", "plot_fit",
           "FIT_PARAMETERS", "SCALES"]
