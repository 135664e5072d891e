"""Explicit Runge-Kutta steps of the all-digital reference (docs/models/world.md §6): one stage
(RK4 and rk23 share it), the error scales of the adaptive steps, and the adaptive Bogacki-Shampine
3(2) over one log period (``rk23``). ``@njit`` kernels over :mod:`sim_stand.digital_model`."""
from __future__ import annotations

import math

from numba import njit

from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from sim_stand.contact import kernel as K
from sim_stand.digital_model import (_JIT, D_COM, D_DT, D_GA, D_H, D_HMAX, D_HMIN, D_KIND, D_TOL, D_TTOL,
                                     END_DIVERGED, END_MECHANISM, END_NONE, END_PENETRATION, J_END, J_EVALS, J_FINE_STEPS,
                                     J_NEV, J_REJECTED, J_STATUS, J_STEPS, digital_eval)
from sim_stand.dock_mechanism import mech_absorbed_power
from sim_stand.mechanism_kinds import KIND_TREE
from sim_stand.world import I_NEV, max_class1_penetration, record_events, step_stats


@njit(**_JIT)
def _rk_stage(stg, c, t, x0, xr0, kind, par, env, xs, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel,
              kin, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f,
              Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, istate):
    """An explicit Runge-Kutta stage: the model at ``(x0, xr0) + c k[stg - 1]``, time ``t + c``,
    into ``kx[stg]``, ``kr[stg]``; the contact's states into scratch (nothing committed).
    Returns the mechanism status (0 ok; otherwise the run's end is set)."""
    ns = x0.shape[1]
    nx = xr0.shape[0]
    for s in range(2):
        for i in range(ns):
            xs[s, i] = x0[s, i] + c * kx[stg - 1, s, i]
    for i in range(nx):
        xrs[i] = xr0[i] + c * kr[stg - 1, i]
    st = digital_eval(kind, par, env, xs, t + c, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, kin,
                      feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P, wrench_links, latch_p, info,
                      info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
    istate[J_EVALS] += 1
    if st != 0:
        istate[J_STATUS] = st
        istate[J_END] = END_MECHANISM
        return st
    for s in range(2):
        for i in range(ns):
            kx[stg, s, i] = xdot[s, i]
    for i in range(nx):
        kr[stg, i] = mout[i]
    return 0


@njit(**_JIT)
def _err_scale_x(i, nm, tol, ttol):
    """The absolute tolerance of a vehicle's state component i (rt.dynamics.spacecraft layout):
    position tol, attitude (quaternion ~ half the angle) tol / 2 per metre of lever, velocities
    tol / ttol, modal coordinates as positions."""
    if i < S.S_V:
        return tol
    if i < S.S_Q:
        return tol / ttol
    if i < S.S_W:
        return 0.5 * tol
    if i < S.S_ETA:
        return tol / ttol
    if i < S.S_ETA + nm:
        return tol
    return tol / ttol


@njit(**_JIT)
def _err_scale_r(kind, i, nx, tol, ttol):
    """The same for the mechanism's state: a ring's [r, angles, v, omega], or a tree's [p, p']
    (joint coordinates, angles or strokes, per metre of lever)."""
    if kind == KIND_TREE:
        return tol if i < nx // 2 else tol / ttol
    return tol if i < 6 else tol / ttol


@njit(**_JIT)
def _step_back(x, x0, xdot, kx, xr, xr0, mout, kr, bwp, bwp0):
    """Back to a step's start: the states, their derivatives (k1) and the lagged base wrench."""
    for s in range(2):
        for i in range(x.shape[1]):
            x[s, i] = x0[s, i]
            xdot[s, i] = kx[0, s, i]
    for i in range(xr.shape[0]):
        xr[i] = xr0[i]
        mout[i] = kr[0, i]
    for i in range(6):
        bwp[i] = bwp0[i]


@njit(**_JIT)
def _rk23_period(nsteps, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, kin, feat,
                 featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f,
                 Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, istate, stats, ev, evst):
    """Integrate the coupled system over ``nsteps`` physics steps' time with the Bogacki-Shampine
    3(2) pair (Bogacki & Shampine 1989; MATLAB's ode23): three new evaluations per step, the last
    one at the new state (first-same-as-last), the step from the local error's estimate (the
    difference to the embedded second-order solution), max norm over every state component
    against an absolute tolerance (:func:`_err_scale_x`, :func:`_err_scale_r`). Steps land on the
    period's end, so the log's rows are states the integrator reached, never interpolated.
    Events, statistics and the contact's latch states are committed only for accepted steps
    (stages evaluate into ``cst_tmp``); a step whose end finds a contact event is retried at half
    its size until it is at most the physics step ``dt`` long, so events are timed to ``dt`` as with
    the fixed-step integrators. Returns the mechanism status (0 ok).

    On entry the model has been evaluated at the current state (``xdot``, ``mout``: k1)."""
    dt = dpar[D_DT]
    ns = x.shape[1]
    nm = (ns - S.N_RIGID) // 2
    nx = xr.shape[0]
    kind = int(dpar[D_KIND])
    com = dpar[D_COM:D_COM + 3]
    ga = dpar[D_GA:D_GA + 4]
    tol = dpar[D_TOL]
    ttol = dpar[D_TTOL]
    hmax = dpar[D_HMAX]
    hmin = dpar[D_HMIN]
    t = istate[J_STEPS] * dt
    tend = (istate[J_STEPS] + nsteps) * dt
    h = dpar[D_H] if dpar[D_H] > 0.0 else dt
    x0 = kx[3]
    xr0 = kr[3]
    while tend - t > 1e-3 * hmin:
        hh = h if h < hmax else hmax
        clamped = False
        if hh >= tend - t:
            hh = tend - t
            clamped = True
        for s in range(2):
            for i in range(ns):
                x0[s, i] = x[s, i]
                kx[0, s, i] = xdot[s, i]
        for i in range(nx):
            xr0[i] = xr[i]
            kr[0, i] = mout[i]
        for i in range(6):
            bwp0[i] = bwp[i]
        # stages 2 and 3 (contact states into scratch)
        st = 0
        for stg in range(1, 3):
            c = 0.5 * hh if stg == 1 else 0.75 * hh
            st = _rk_stage(stg, c, t, x0, xr0, kind, par, env, xs, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in,
                           xdot, ws, rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P,
                           wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr,
                           istate)
            if st != 0:
                break
        # the third-order solution, and the model at it (k4: the next step's k1)
        for s in range(2):
            for i in range(ns):
                x[s, i] = x0[s, i] + hh * (2.0 / 9.0 * kx[0, s, i] + 1.0 / 3.0 * kx[1, s, i]
                                           + 4.0 / 9.0 * kx[2, s, i])
            SP.quat_normalize(x[s, S.S_Q:S.S_Q + 4])
        for i in range(nx):
            xr[i] = xr0[i] + hh * (2.0 / 9.0 * kr[0, i] + 1.0 / 3.0 * kr[1, i] + 4.0 / 9.0 * kr[2, i])
        if st == 0:
            st = digital_eval(kind, par, env, x, t + hh, xr, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel,
                              kin, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links,
                              latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
            istate[J_EVALS] += 1
        if st != 0:
            # the mechanism failed at a trial state (out of reach, singular): a shorter step, down
            # to the physics step, before the run ends with the mechanism's reason
            _step_back(x, x0, xdot, kx, xr, xr0, mout, kr, bwp, bwp0)
            istate[J_STATUS] = st
            istate[J_END] = END_MECHANISM
            if hh <= dt:
                return st           # the run ends at the last accepted state (stats[ST_T])
            istate[J_STATUS] = 0
            istate[J_END] = END_NONE
            istate[J_REJECTED] += 1
            h = 0.25 * hh
            continue
        # error estimate: y3 - y2 = h (-5/72 k1 + 1/12 k2 + 1/9 k3 - 1/8 k4), max norm
        en = 0.0
        for s in range(2):
            for i in range(ns):
                e = hh * (-5.0 / 72.0 * kx[0, s, i] + 1.0 / 12.0 * kx[1, s, i] + 1.0 / 9.0 * kx[2, s, i]
                          - 0.125 * xdot[s, i])
                r = abs(e) / _err_scale_x(i, nm, tol, ttol)
                if r > en:
                    en = r
        for i in range(nx):
            e = hh * (-5.0 / 72.0 * kr[0, i] + 1.0 / 12.0 * kr[1, i] + 1.0 / 9.0 * kr[2, i] - 0.125 * mout[i])
            r = abs(e) / _err_scale_r(kind, i, nx, tol, ttol)
            if r > en:
                en = r
        if not math.isfinite(en):
            # the trial state is not finite: a shorter step, down to the physics step
            _step_back(x, x0, xdot, kx, xr, xr0, mout, kr, bwp, bwp0)
            if hh <= dt:
                istate[J_END] = END_DIVERGED
                return -1           # no row: the outputs are the failed trial's
            istate[J_REJECTED] += 1
            h = 0.25 * hh
            continue
        fac = 0.9 * (1.0 / en) ** (1.0 / 3.0) if en > 1e-12 else 5.0
        if fac > 5.0:
            fac = 5.0
        event = info[3] != 0 and hh > dt
        if (en > 1.0 and hh > hmin) or event:
            # rejected: back to the step's start (its derivative is k1; the lagged base wrench).
            # A contact event (first contact, a latch, capture) is placed to the physics step:
            # the step that finds one is halved until it is no longer than dt.
            _step_back(x, x0, xdot, kx, xr, xr0, mout, kr, bwp, bwp0)
            istate[J_REJECTED] += 1
            h = 0.5 * hh if event else hh * (fac if fac > 0.2 else 0.2)
            if h < hmin:
                h = hmin
            continue
        t = t + hh if not clamped else tend
        istate[J_FINE_STEPS] += 1
        evst[I_NEV] = istate[J_NEV]
        record_events(t, lat, cst_in, cst_out, info, info_f, rec, ev, evst)
        istate[J_NEV] = evst[I_NEV]
        step_stats(t, wrench_P, max_class1_penetration(rec, info[2]), mech_absorbed_power(kind, mp, mout), hh, stats,
                   cst_in[K.S_CAPTURED])
        if info[0] & K.ST_PENETRATION:
            istate[J_END] = END_PENETRATION
            break
        hn = hh * fac
        if clamped and hn < h:
            hn = h               # the period's end cut this step short: keep the step the error allows
        h = hn if hn > hmin else hmin
    dpar[D_H] = h
    return 0


