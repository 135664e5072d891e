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
"""
from __future__ import annotations

import math

import numpy as np

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
    out.update(first_contact_s=float(t[i0]), first_peak_force_n=float(peak), captured=captured,
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


def _observed(D, header: dict):
    """The digital run as the HIL run's sensing chain would have seen it."""
    flt = (header or {}).get("sensing_filter") or {}
    fc = flt.get("cutoff_hz")
    if not fc:
        return D, None
    rate = float(header.get("rate_hz", 1000.0))
    t, w, pose, twist = D
    tu, wf = lowpass(t, w, float(fc), float(flt.get("damping", 1.0 / math.sqrt(2.0))), rate)
    pose_u = _interp_pose(t, pose, tu)
    twist_u = np.column_stack([np.interp(tu, t, twist[:, k]) for k in range(6)])
    return (tu, wf, pose_u, twist_u), {"cutoff_hz": float(fc), "rate_hz": rate}


def _interp_pose(t_src, pose_src, t):
    p = np.column_stack([np.interp(t, t_src, pose_src[:, k]) for k in range(7)])
    q = p[:, 3:7]
    q /= np.linalg.norm(q, axis=1)[:, None]
    return p


def compare_logs(hil_path, digital_path, observe: bool = True) -> dict:
    hl = read_log(hil_path)
    H = _run(hl)
    D = _run(read_log(digital_path))
    seen = None
    if observe:
        D, seen = _observed(D, hl.header)
    mh, md = metrics(*H), metrics(*D)
    rep = {"hil": mh, "digital": md, "hil_log": str(hil_path), "digital_log": str(digital_path),
           "digital_observed_through": seen}
    rep["peak_force_error_n"] = mh["peak_force_n"] - md["peak_force_n"]
    rep["peak_force_error_pct"] = (100.0 * rep["peak_force_error_n"] / md["peak_force_n"]
                                   if md["peak_force_n"] > 0 else None)
    if mh["post_impact_velocity"] is not None and md["post_impact_velocity"] is not None:
        dv = np.subtract(mh["post_impact_velocity"], md["post_impact_velocity"])
        rep["post_impact_velocity_error_mps"] = float(np.linalg.norm(dv))
        rep["post_impact_axial_velocity_error_mps"] = float(dv[0])
    else:
        rep["post_impact_velocity_error_mps"] = None
        rep["post_impact_axial_velocity_error_mps"] = None
    rep["capture_agreement"] = mh["captured"] == md["captured"]
    tH, _, pH, _ = H
    tD, _, pD, _ = D
    lo, hi = max(tH[0], tD[0]), min(tH[-1], tD[-1])
    sel = (tH >= lo) & (tH <= hi)
    if sel.sum() >= 2:
        pd = _interp_pose(tD, pD, tH[sel])
        ph = pH[sel]
        dr = ph[:, :3] - pd[:, :3]
        dots = np.abs(np.sum(ph[:, 3:7] * pd[:, 3:7], axis=1)).clip(0.0, 1.0)
        ang = 2.0 * np.degrees(np.arccos(dots))
        rep["rms_position_error_m"] = float(math.sqrt(np.mean(np.sum(dr * dr, axis=1))))
        rep["rms_attitude_error_deg"] = float(math.sqrt(np.mean(ang * ang)))
        rep["common_span_s"] = [float(lo), float(hi)]
    else:
        rep["rms_position_error_m"] = rep["rms_attitude_error_deg"] = None
        rep["common_span_s"] = None
    return rep


def _seen(s) -> str:
    return "no filter (as logged)" if not s else f"the HIL's {s['cutoff_hz']:g} Hz low-pass at {s['rate_hz']:g} Hz"


def format_report(rep: dict) -> str:
    def f(v, unit=""):
        return "n/a" if v is None else (f"{v:.6g}{unit}" if isinstance(v, float) else f"{v}{unit}")
    h, d = rep["hil"], rep["digital"]
    lines = [f"HIL     {rep['hil_log']}", f"digital {rep['digital_log']}",
             f"peak force           HIL {f(h['peak_force_n'], ' N')}  digital {f(d['peak_force_n'], ' N')}  "
             f"error {f(rep['peak_force_error_n'], ' N')} ({f(rep['peak_force_error_pct'], ' %')})",
             f"post-impact velocity error {f(rep['post_impact_velocity_error_mps'], ' m/s')} "
             f"(axial {f(rep['post_impact_axial_velocity_error_mps'], ' m/s')})",
             f"capture              HIL {h['captured']}  digital {d['captured']}  agree {rep['capture_agreement']}",
             f"digital wrench seen through {_seen(rep.get('digital_observed_through'))}",
             f"RMS relative pose    {f(rep['rms_position_error_m'], ' m')}, {f(rep['rms_attitude_error_deg'], ' deg')}"]
    return "\n".join(lines)
