"""Fidelity of a HIL run against the all-digital reference (``dockstand compare``; issue 7
item 7; docs/validation.md).

Both run logs (rt/record/runlog.py format) carry ``t`` (s since the case's initial state; NaN outside
the run), ``w_P`` (contact wrench on the passive unit, P, about P's origin), ``rel_pose``
(A in P: r, q_PA) and ``rel_twist`` (v, w of A relative to P, in P). The metrics, each computed
the same way on both logs:

* **peak force**: max |f| over the run; error in N and in % of the digital peak;
* **post-impact relative velocity**: the relative velocity at the end of the first impact —
  the first instant after the first force peak where |f| falls below 10 % of that peak
  (or 0.5 s after the peak if it never does); error = |v_HIL - v_digital| (m/s) and its
  axial component;
* **capture**: first contact = first |f| > ``contact_n`` (50 N); captured = the run lasts
  at least 1 s past first contact and the axial distance never opens more than 0.05 m beyond
  its value at first contact (without latches the units rebound and separate; with them
  they stay within the mechanism's stroke);
* **RMS relative-pose error** over the common time span: position (m) and attitude (deg),
  the digital log interpolated (linearly; quaternions normalised) onto the HIL samples.

The HIL wrench is what the controller measured: through the sensing low-pass when the run had
one (header ``sensing_filter``). The digital wrench is then observed through the same filter
(same coefficients, :func:`rt.stand.sensing.lowpass2_coefficients`, on the digital log resampled at
the HIL rate, starting at rest) before any metric is taken, so both sides are seen by the same
instrument (docs/validation.md §2); ``observe=False`` compares the digital wrench as it is.
Like is compared with like: a reference that already carries a sensing filter (another HIL
log) is taken as logged, so a log compared with itself shows zero error on every channel; the
report says which filtering each side carries (``filtering``).

The fidelity table (:func:`fidelity`), over the common time span, the reference interpolated
onto the run's samples: peak force and moment errors, the impulse error (``|∫ f dt|`` over the
common span), the difference of the first-contact times, and per channel (w_P: fx .. mz, rel_pose: x,
y, z, rel_twist: vx .. wz) the NRMSE, the RMS difference over the reference channel's range
(max - min; None for a constant channel).
"""
from __future__ import annotations

import math

import numpy as np

from rt.analysis import numbers as N
from rt.record.runlog import read_log

CONTACT_N = 50.0
OPEN_MARGIN_M = 0.05


def _run(log):
    f = log.fields
    t = f["t"]
    ok = np.isfinite(t)
    if "phase" in f:  # HIL: the dynamics phase only (the run-up has t < 0)
        ok &= t >= 0.0
    t = t[ok]
    order = np.argsort(t, kind="stable")
    return (t[order], f["w_P"][ok][order], f["rel_pose"][ok][order], f["rel_twist"][ok][order])


def crossing_time(t, f, i, level: float) -> float:
    """When ``f`` first rose through ``level``, between the samples ``i - 1`` (below) and ``i``
    (at or above), by linear interpolation: the sample's own time quantises a crossing by up to
    one sample period (1 ms in a HIL log, 0.1 ms in a reference at the physics rate), the size
    of the first contact's one-cycle goal. ``t[i]`` when there is no sample before ``i``.

    Parameters
    ----------
    t : float64[n]
        Sample times, s, increasing.
    f : float64[n]
        The signal (|f| on the passive unit, N).
    i : int
        The first sample at or above ``level``.
    level : float
        The level, in ``f``'s unit.
    """
    if i < 1 or not f[i] > f[i - 1]:
        return float(t[i])
    s = (level - f[i - 1]) / (f[i] - f[i - 1])
    return float(t[i - 1] + min(max(s, 0.0), 1.0) * (t[i] - t[i - 1]))


def metrics(t, w, pose, twist, contact_n: float = CONTACT_N) -> dict:
    fn = np.linalg.norm(w[:, :3], axis=1)
    mn = np.linalg.norm(w[:, 3:], axis=1)
    out = {"peak_force_n": float(fn.max()) if len(fn) else 0.0,
           "peak_moment_nm": float(mn.max()) if len(mn) else 0.0, "duration_s": float(t[-1]) if len(t) else 0.0}
    hit = np.nonzero(fn > contact_n)[0]
    if not len(hit):
        out.update(first_contact_s=None, captured=False, post_impact_t_s=None, post_impact_velocity=None)
        return out
    i0 = hit[0]
    ip = i0 + int(np.argmax(fn[i0:]))
    # the first impact's peak: the largest force before the force first falls below 10 % of it
    peak = fn[i0]
    ip = i0
    i = i0
    while i < len(fn) and fn[i] >= 0.1 * peak:
        if fn[i] > peak:
            peak, ip = fn[i], i
        i += 1
    i_post = i if i < len(fn) else min(len(fn) - 1, int(np.searchsorted(t, t[ip] + 0.5)))
    x = pose[:, 0]
    captured = bool(t[-1] - t[i0] >= 1.0 and np.all(x[i0:] >= x[i0] - OPEN_MARGIN_M))
    out.update(first_contact_s=crossing_time(t, fn, i0, contact_n), first_peak_force_n=float(peak), captured=captured,
               post_impact_t_s=float(t[i_post]), post_impact_velocity=[float(v) for v in twist[i_post, :3]])
    return out


def lowpass(t, w, cutoff_hz: float, damping: float, rate_hz: float):
    """``w`` (n x 6, samples at times ``t``) resampled at ``rate_hz`` and passed through the
    stand's second-order low-pass from rest; returns (t_uniform, w_filtered)."""
    from rt.stand.sensing import lowpass2_coefficients
    b0, b1, b2, a1, a2 = lowpass2_coefficients(cutoff_hz, damping, rate_hz)
    n = int(math.floor((t[-1] - t[0]) * rate_hz + 1e-9)) + 1
    tu = t[0] + np.arange(n) / rate_hz
    x = np.column_stack([np.interp(tu, t, w[:, k]) for k in range(w.shape[1])])
    y = np.empty_like(x)
    s1 = (b1 - a1) * x[0] + (b2 - a2) * x[0]   # at rest at the first sample (unity DC gain)
    s2 = (b2 - a2) * x[0]
    for i in range(n):
        yi = b0 * x[i] + s1
        s1 = b1 * x[i] - a1 * yi + s2
        s2 = b2 * x[i] - a2 * yi
        y[i] = yi
    return tu, y


def _filter_of(header: dict) -> dict | None:
    flt = (header or {}).get("sensing_filter") or {}
    return {"cutoff_hz": float(flt["cutoff_hz"]), "damping": float(flt.get("damping", 1.0 / math.sqrt(2.0)))} \
        if flt.get("cutoff_hz") else None


def filtering_text(flt: dict | None, seen: dict | None = None) -> str:
    if seen:
        lead = f", {1e3 * seen['lead_s']:.2f} ms earlier (its group delay, which the run compensated)" \
            if seen.get("lead_s") else ""
        return (f"unfiltered as logged, seen through the run's {seen['cutoff_hz']:g} Hz low-pass at "
                f"{seen['rate_hz']:g} Hz{lead}")
    return f"{flt['cutoff_hz']:g} Hz sensing low-pass (as logged)" if flt else "unfiltered (as logged)"


def _observed(D, header: dict):
    """The digital run as the HIL run's sensing chain would have seen it: its wrench through the
    run's low-pass. A compensated run's platform led the model's state by the filter's group
    delay (it is part of the compensated delay), so its filtered wrench is on the state's clock;
    the observed wrench is put back on it by the same delay (else every force event of the run
    reads ~2.2 ms early against the reference)."""
    from rt.stand.sensing import lowpass_group_delay_s
    flt = (header or {}).get("sensing_filter") or {}
    fc = flt.get("cutoff_hz")
    if not fc:
        return D, None
    rate = float(header.get("rate_hz", 1000.0))
    damping = float(flt.get("damping", 1.0 / math.sqrt(2.0)))
    t, w, pose, twist = D
    tu, wf = lowpass(t, w, float(fc), damping, rate)
    lead = lowpass_group_delay_s(float(fc), damping, rate) if header.get("compensate") else 0.0
    ts = tu - lead
    pose_u = _interp_pose(t, pose, ts)
    twist_u = np.column_stack([np.interp(ts, t, twist[:, k]) for k in range(6)])
    return (ts, wf, pose_u, twist_u), {"cutoff_hz": float(fc), "rate_hz": rate, "lead_s": lead}


def _peak_band(D, header: dict):
    """``[min, max]`` of the reference's observed peak force over the run's sampling phase, or
    None. A reference logged finer than the run (``dockstand simulate --log-rate``) is seen at
    each of the instants the run's 1 kHz sensor could have sampled it: a short impact's
    filtered peak depends on where the samples fall (the nominal case's 3 ms latch impact:
    3248..3298 N, +-0.75 %), which no loop can be judged more finely than."""
    t = D[0]
    rate = float((header or {}).get("rate_hz", 1000.0))
    if len(t) < 3:
        return None
    m = int(round(1.0 / (rate * float(np.median(np.diff(t))))))
    if m < 2:
        return None
    peaks = []
    for k in range(m):
        sel = slice(k, None)
        Dk, _ = _observed((t[sel], D[1][sel], D[2][sel], D[3][sel]), header)
        peaks.append(float(np.linalg.norm(Dk[1][:, :3], axis=1).max()))
    return [min(peaks), max(peaks)]


def _mismatches(h: dict, d: dict, hil_path, band, observed: bool) -> list[str]:
    """What makes the reference (header ``d``) not the one the run (header ``h``, log
    ``hil_path``) should be judged against."""
    from pathlib import Path
    out = []
    if d.get("kind") == "hil":
        out.append("the reference is a HIL run's log, not an all-digital reference: dockstand simulate "
                   "--stand-conditions --mechanism-from HIL_LOG --log-rate 10000 makes one")
    if d.get("start_time_ns") is not None and (d.get("start_time_ns"), d.get("pid")) == (h.get("start_time_ns"), h.get("pid")):
        out.append("the reference is the run itself: every error is zero by construction")
    if h.get("case_digest") and d.get("case_digest") and h["case_digest"] != d["case_digest"]:
        out.append(f"the reference is of case {d.get('case')!r}, the run of {h.get('case')!r} (their digests differ)")
    if h.get("kind") == "hil" and d.get("stand_conditions") is False:
        out.append("the reference ran in orbit (0 g, the mechanism's inertia coupled), not under the stand's "
                   "conditions: dockstand simulate --stand-conditions")
    if h.get("kind") == "hil" and d.get("mechanism_state") == "rest" and d.get("model", "mechanism") == "mechanism":
        out.append("the reference's mechanism started at rest, not where the run's arming left it: "
                   "dockstand simulate --stand-conditions --mechanism-from HIL_LOG")
    elif d.get("mechanism_from") and d["mechanism_from"] != str(Path(hil_path).resolve()):
        out.append(f"the reference's mechanism state came from another run ({d['mechanism_from']})")
    if observed and band is None and h.get("kind") == "hil":
        out.append("the reference is logged at the run's rate: its peak force is one sampling phase's "
                   "(dockstand simulate --log-rate 10000 gives the band over every phase)")
    return out


def _band_error_pct(value: float, band) -> float | None:
    """``value``'s distance from ``band`` in % of the nearer edge (0 inside), or None."""
    if band is None or band[0] <= 0.0:
        return None
    if value > band[1]:
        return 100.0 * (value - band[1]) / band[1]
    if value < band[0]:
        return 100.0 * (value - band[0]) / band[0]
    return 0.0


def attitude_error_deg(qa, qb):
    """Angle of ``qa^* (x) qb`` per row, ``2 atan2(|vec|, |w|)`` in degrees (exactly 0 for equal
    rows, accurate near 0 where ``arccos`` of the dot product is not)."""
    from rt.analysis.energy import _conj, _quat_mul
    d = _quat_mul(_conj(qa), qb)
    return np.degrees(2.0 * np.arctan2(np.linalg.norm(d[:, 1:4], axis=1), np.abs(d[:, 0])))


def _interp_pose(t_src, pose_src, t):
    p = np.column_stack([np.interp(t, t_src, pose_src[:, k]) for k in range(7)])
    q = p[:, 3:7]
    q /= np.linalg.norm(q, axis=1)[:, None]
    return p


def compare_logs(hil_path, digital_path, observe: bool = True) -> dict:
    hl = _read(hil_path)
    dl = _read(digital_path)
    if hl.header.get("kind") == "digital" and dl.header.get("kind") == "hil":   # two runs, or two references, compare
        raise ValueError(f"{hil_path} is an all-digital reference's log and {digital_path} a HIL run's: "
                         f"the HIL run's log comes first, the reference second")
    H = _run(hl)
    D = D0 = _run(dl)
    seen = None
    ref_filter = _filter_of(dl.header)
    if observe and ref_filter is None:       # like with like: only an unfiltered reference is observed
        D, seen = _observed(D, hl.header)
    mh, md = metrics(*H), metrics(*D)
    band = _peak_band(D0, hl.header) if (observe and ref_filter is None) else None
    rep = {"hil": mh, "digital": md, "hil_log": str(hil_path), "digital_log": str(digital_path),
           "digital_observed_through": seen,
           "filtering": {"run": filtering_text(_filter_of(hl.header)),
                         "reference": filtering_text(ref_filter, seen)},
           "fidelity": fidelity(H, D, mh, md)}
    if len(D0[0]):       # where the reference's own log ends: an observed reference is moved earlier by the
        rep["fidelity"]["reference_end_s"] = float(D0[0][-1])   # run's group delay, which leaves no run unjudged
    rep["peak_force_error_n"] = mh["peak_force_n"] - md["peak_force_n"]
    rep["peak_force_error_pct"] = (100.0 * rep["peak_force_error_n"] / md["peak_force_n"]
                                   if md["peak_force_n"] > 0 else None)
    rep["reference_peak_force_band_n"] = band
    rep["peak_force_error_band_pct"] = _band_error_pct(mh["peak_force_n"], band)
    rep["warnings"] = _mismatches(hl.header, dl.header, hil_path, band, observe and ref_filter is None)
    # both velocities at the reference's post-impact instant (the run's own may fall elsewhere,
    # or past the reference's end: a berthing's snare closes with no rebound)
    tp = md["post_impact_t_s"]
    tH0 = H[0]
    if tp is not None and mh["post_impact_velocity"] is not None and len(tH0) and tH0[0] <= tp <= tH0[-1]:
        vh = np.array([np.interp(tp, tH0, H[3][:, j]) for j in range(3)])
        dv = vh - np.asarray(md["post_impact_velocity"])
        rep["post_impact_velocity_error_mps"] = float(np.linalg.norm(dv))
        rep["post_impact_axial_velocity_error_mps"] = float(dv[0])
    else:
        rep["post_impact_velocity_error_mps"] = None
        rep["post_impact_axial_velocity_error_mps"] = None
    rep["post_impact_t_s"] = tp
    rep["capture_agreement"] = mh["captured"] == md["captured"]
    tH, _, pH, _ = H
    tD, _, pD, _ = D
    lo, hi = max(tH[0], tD[0]), min(tH[-1], tD[-1])
    sel = (tH >= lo) & (tH <= hi)
    if sel.sum() >= 2:
        pd = _interp_pose(tD, pD, tH[sel])
        ph = pH[sel]
        dr = ph[:, :3] - pd[:, :3]
        ang = attitude_error_deg(ph[:, 3:7], pd[:, 3:7])
        rep["rms_position_error_m"] = float(math.sqrt(np.mean(np.sum(dr * dr, axis=1))))
        rep["rms_attitude_error_deg"] = float(math.sqrt(np.mean(ang * ang)))
        rep["common_span_s"] = [float(lo), float(hi)]
    else:
        rep["rms_position_error_m"] = rep["rms_attitude_error_deg"] = None
        rep["common_span_s"] = None
    return rep


def _read(path):
    from rt.record.logscan import scan
    have = scan(path).fields
    return read_log(path, [f for f in ("t", "phase", "w_P", "rel_pose", "rel_twist") if f != "phase" or f in have])


# below this range the reference's channel is flat and an error relative to it (NRMSE) says
# nothing: the sensor's noise (3 sigma = 8 N, 1.5 N m) or less
FLAT_RANGE = {"N": 10.0, "N*m": 2.0, "m": 1e-4, "m/s": 1e-4, "rad/s": 1e-4}
CHANNELS = (("w_P", 1, ("fx", "fy", "fz", "mx", "my", "mz"), "N|N|N|N*m|N*m|N*m"),
            ("rel_pose", 2, ("x", "y", "z"), "m|m|m"),
            ("rel_twist", 3, ("vx", "vy", "vz", "wx", "wy", "wz"), "m/s|m/s|m/s|rad/s|rad/s|rad/s"))


def _impulse(t, w):
    if len(t) < 2:
        return np.zeros(3)
    return np.sum(0.5 * (w[1:, :3] + w[:-1, :3]) * np.diff(t)[:, None], axis=0)


def fidelity(H, D, mh: dict, md: dict) -> dict:
    """The fidelity table (module docstring) of run ``H`` against reference ``D`` (each ``(t,
    w_P, rel_pose, rel_twist)``) and their :func:`metrics`."""
    tH, tD = H[0], D[0]
    out = {"peak_force_error_n": mh["peak_force_n"] - md["peak_force_n"],
           "peak_moment_error_nm": mh["peak_moment_nm"] - md["peak_moment_nm"]}
    lo, hi = (max(tH[0], tD[0]), min(tH[-1], tD[-1])) if len(tH) and len(tD) else (0.0, -1.0)
    mH, mD = (tH >= lo) & (tH <= hi), (tD >= lo) & (tD <= hi)
    iH, iD = _impulse(tH[mH], H[1][mH]), _impulse(tD[mD], D[1][mD])
    out["span_s"] = [float(lo), float(hi)] if hi >= lo else None      # the impulse's and the channels' span
    out["reference_end_s"] = float(tD[-1]) if len(tD) else None
    out["run_end_s"] = float(tH[-1]) if len(tH) else None
    out["impulse_ns"] = float(np.linalg.norm(iH))
    out["reference_impulse_ns"] = float(np.linalg.norm(iD))
    out["impulse_error_ns"] = float(np.linalg.norm(iH - iD))
    fc_h, fc_d = mh.get("first_contact_s"), md.get("first_contact_s")
    out["first_contact_difference_s"] = None if fc_h is None or fc_d is None else fc_h - fc_d
    rows = []
    if len(tH) and len(tD):
        lo, hi = max(tH[0], tD[0]), min(tH[-1], tD[-1])
        sel = (tH >= lo) & (tH <= hi)
        for name, k, cols, units in CHANNELS:
            a, b = H[k], D[k]
            for j, (c, u) in enumerate(zip(cols, units.split("|"))):
                x = a[sel, j]
                y = np.interp(tH[sel], tD, b[:, j]) if sel.any() else np.zeros(0)
                rng = float(np.ptp(b[:, j])) if len(b) else 0.0
                rms = float(np.sqrt(np.mean((x - y) ** 2))) if len(x) else None
                rows.append({"channel": f"{name}.{c}", "unit": u, "rms_error": rms,
                             "nrmse": None if rms is None or rng <= FLAT_RANGE.get(u, 0.0) else rms / rng})
    out["channels"] = rows
    return out


def span_note(fi: dict) -> str:
    """Which span each fidelity metric covers, and what of the run has no reference: the
    impulse, the RMS errors and the NRMSE are taken over the common span only, the peaks and
    capture over each log whole; a reference that ends earlier than the run (a digital run ends
    when its capture settles) leaves the run's tail unjudged."""
    sp = fi.get("span_s")
    if not sp:
        return "no common time span: the impulse, RMS and NRMSE could not be taken"
    text = f"impulse, RMS and NRMSE over the common span {N.span(*sp)}; peaks and capture over each log whole"
    r_end, h_end = fi.get("reference_end_s"), fi.get("run_end_s")
    if r_end is not None and h_end is not None and h_end > r_end + 1e-9:
        text += f"; the run's {N.span(r_end, h_end)} has no reference (it ended at {r_end:.3f} s)"
    return text


def format_report(rep: dict) -> str:
    """``dockstand compare``'s text: the numbers in the report's formats (rt.analysis.numbers)."""
    Q = N.quantity
    h, d = rep["hil"], rep["digital"]
    lines = [f"HIL     {rep['hil_log']}", f"digital {rep['digital_log']}"]
    lines += [f"warning: {w}" for w in rep.get("warnings", [])]
    lines += [f"peak force           HIL {Q(h['peak_force_n'], 'N')}  digital {Q(d['peak_force_n'], 'N')}  "
              f"error {Q(rep['peak_force_error_n'], 'N', sign=True)} ({N.percent(rep['peak_force_error_pct'], sign=True)})"]
    band = rep.get("reference_peak_force_band_n")
    if band:
        e = rep["peak_force_error_band_pct"]
        lines.append(f"  over the run's sampling phase: digital {Q(band[0], 'N')} .. {Q(band[1], 'N')}, "
                     + ("the run's peak inside the band (error 0)" if e == 0.0
                        else f"error {N.percent(e, sign=True)} beyond the band"))
    tp = rep.get("post_impact_t_s")
    lines += [f"post-impact velocity error {Q(rep['post_impact_velocity_error_mps'], 'm/s')} "
              f"(axial {Q(rep['post_impact_axial_velocity_error_mps'], 'm/s', sign=True)})"
              + (f" at t = {tp:.3f} s, the reference's" if tp is not None else ""),
              f"capture              HIL {h['captured']}  digital {d['captured']}  agree {rep['capture_agreement']}",
              f"filtering            run: {rep['filtering']['run']}; reference: {rep['filtering']['reference']}",
              f"RMS relative pose    {Q(rep['rms_position_error_m'], 'm')}, {Q(rep['rms_attitude_error_deg'], 'deg')}"]
    fi = rep.get("fidelity")
    if fi:
        lines += [f"spans                {span_note(fi)}",
                  f"peak moment error    {Q(fi['peak_moment_error_nm'], 'N*m', sign=True)}",
                  f"impulse |∫f dt|      run {Q(fi['impulse_ns'], 'N*s')}  reference {Q(fi['reference_impulse_ns'], 'N*s')}"
                  f"  |run − reference| {Q(fi['impulse_error_ns'], 'N*s')} (vectors; over the common span)",
                  "first contact        run − reference "
                  + ("n/a" if fi["first_contact_difference_s"] is None
                     else f"{1e3 * fi['first_contact_difference_s']:+.2f} ms (|f| > {CONTACT_N:g} N)"),
                  "channel          NRMSE        RMS error"]
        for r in fi["channels"]:
            nr = "n/a (flat)" if r["nrmse"] is None else N.percent(100.0 * r["nrmse"])
            lines.append(f"  {r['channel']:<15}{nr:<13}{Q(r['rms_error'], r['unit'])}")
    return "\n".join(lines)
