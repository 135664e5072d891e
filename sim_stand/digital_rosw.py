"""The all-digital reference's Rosenbrock-W step (``rosw``, docs/models/world.md §6): ROS34PW2
with W the mechanism's device damping on the ring's velocities, dense-output rows. ``@njit``
kernels over :mod:`sim_stand.digital_model`."""
from __future__ import annotations

import math

from numba import njit

from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from sim_stand.contact import kernel as K
from sim_stand.digital_model import (_JIT, D_COM, D_DT, D_GA, D_H, D_HMAX, D_HMIN, D_KIND, D_RWH, D_RWPEN, D_RWT,
                                     D_SETTLE, D_SPR, D_TEND, D_TOL, D_TTOL, END_DIVERGED, END_MECHANISM,
                                     END_PENETRATION, J_END, J_EVALS, J_FINE_STEPS, J_NEV, J_REJECTED, J_STATUS,
                                     J_STEPS, _end_from_relative, _write_row, digital_eval)
from sim_stand.digital_rk import _err_scale_r, _err_scale_x
from sim_stand.dock_mechanism import mech_absorbed_power
from sim_stand.mechanism_kinds import KIND_TREE
from sim_stand.mechanism.kernels import damping_jacobian
from sim_stand.world import I_NEV, ST_EABS, ST_PEN, ST_TCAP, max_class1_penetration, record_events, step_stats

# ROS34PW2 (Rang & Angermann 2005, BIT 45: a Rosenbrock-W method of order 3 for any W, embedded
# order 2, L-stable): (I - h gamma W) K_i = h f(y + sum_j a_ij K_j) + h W sum_j g_ij K_j
RW_GAMMA = 0.43586652150845900
RW_A = ((0.0, 0.0, 0.0), (0.87173304301691801, 0.0, 0.0), (0.84457060015369423, -0.11299064236484185, 0.0),
        (0.0, 0.0, 1.0))
RW_G = ((0.0, 0.0, 0.0), (-0.87173304301691801, 0.0, 0.0), (-0.90338057013044082, 0.054180672388095326, 0.0),
        (0.24212380706095346, -1.2232505839045147, 0.54526025533510214))
RW_B = (0.24212380706095346, -1.2232505839045147, 1.5452602553351020, 0.43586652150845900)
RW_BHAT = (0.37810903145819369, -0.096042292212423178, 0.5, 0.21793326075422950)

# rosw scratch (rw) layout, after the 2 x NS + NX of the step's start derivative
RW_G0 = 0          # W's ring-velocity block G (36)
RW_LU = 36         # I - h gamma G, LU (36)
RW_PIV = 72        # its pivots (6)
RW_SUM = 78        # sum_j g_ij K_j on the ring's velocities (6)
RW_F0 = 84         # f(y_n): 2 x NS vehicles, then NX mechanism


def rosw_scratch_len(ns: int, nx: int) -> int:
    return RW_F0 + 2 * ns + nx + nx       # + the step start's mechanism state


@njit(**_JIT)
def _w_solve(rw, v0, v1, v2, v3, v4, v5, u):
    """u <- (I - h gamma G)^-1 [v0..v5] with the LU in ``rw``."""
    y = rw[RW_SUM:RW_SUM + 6]       # reused as scratch after the sum is consumed
    vals = (v0, v1, v2, v3, v4, v5)
    for i in range(6):
        y[i] = vals[int(rw[RW_PIV + i])]
    for i in range(6):
        acc = y[i]
        for j in range(i):
            acc -= rw[RW_LU + 6 * i + j] * y[j]
        y[i] = acc
    for i in range(5, -1, -1):
        acc = y[i]
        for j in range(i + 1, 6):
            acc -= rw[RW_LU + 6 * i + j] * y[j]
        y[i] = acc / rw[RW_LU + 6 * i + i]
    for i in range(6):
        u[i] = y[i]


@njit(**_JIT)
def _w_factor(rw, hg):
    """LU with partial pivoting of I - hg G (G in rw) into rw; False if singular."""
    for i in range(6):
        for j in range(6):
            rw[RW_LU + 6 * i + j] = (1.0 if i == j else 0.0) - hg * rw[RW_G0 + 6 * i + j]
        rw[RW_PIV + i] = i
    for k in range(6):
        p = k
        big = abs(rw[RW_LU + 6 * k + k])
        for i in range(k + 1, 6):
            if abs(rw[RW_LU + 6 * i + k]) > big:
                big = abs(rw[RW_LU + 6 * i + k])
                p = i
        if big < 1e-12:
            return False
        if p != k:
            for j in range(6):
                tmp = rw[RW_LU + 6 * k + j]
                rw[RW_LU + 6 * k + j] = rw[RW_LU + 6 * p + j]
                rw[RW_LU + 6 * p + j] = tmp
            tmp = rw[RW_PIV + k]
            rw[RW_PIV + k] = rw[RW_PIV + p]
            rw[RW_PIV + p] = tmp
        for i in range(k + 1, 6):
            f = rw[RW_LU + 6 * i + k] / rw[RW_LU + 6 * k + k]
            rw[RW_LU + 6 * i + k] = f
            for j in range(k + 1, 6):
                rw[RW_LU + 6 * i + j] -= f * rw[RW_LU + 6 * k + j]
    return True


@njit(**_JIT)
def _rosw_stage_k(stg, hh, kind, x, xr, xdot, mout, kx, kr, rw):
    """K_stg = (I - hh gamma W)^-1 (hh f + hh W sum_j g_ij K_j): f in ``xdot`` / ``mout[:nx]``,
    W nonzero only on the ring's velocities (ring_state 6..11) of a parallel mechanism."""
    ns = x.shape[1]
    nx = xr.shape[0]
    for s in range(2):
        for i in range(ns):
            kx[stg, s, i] = hh * xdot[s, i]
    for i in range(nx):
        kr[stg, i] = hh * mout[i]
    if kind == KIND_TREE:
        return
    # hh G (sum_j g_ij K_j), on the ring's velocities
    sm = rw[RW_SUM:RW_SUM + 6]
    for i in range(6):
        acc = 0.0
        for j in range(stg):
            acc += RW_G[stg][j] * kr[j, 6 + i]
        sm[i] = acc
    w0 = kr[stg, 6]
    w1 = kr[stg, 7]
    w2 = kr[stg, 8]
    w3 = kr[stg, 9]
    w4 = kr[stg, 10]
    w5 = kr[stg, 11]
    acc0 = acc1 = acc2 = acc3 = acc4 = acc5 = 0.0
    for j in range(6):
        acc0 += rw[RW_G0 + j] * sm[j]
        acc1 += rw[RW_G0 + 6 + j] * sm[j]
        acc2 += rw[RW_G0 + 12 + j] * sm[j]
        acc3 += rw[RW_G0 + 18 + j] * sm[j]
        acc4 += rw[RW_G0 + 24 + j] * sm[j]
        acc5 += rw[RW_G0 + 30 + j] * sm[j]
    _w_solve(rw, w0 + hh * acc0, w1 + hh * acc1, w2 + hh * acc2, w3 + hh * acc3, w4 + hh * acc4,
             w5 + hh * acc5, kr[stg, 6:12])


@njit(**_JIT)
def _interp_row(kind, row, lay, t, th, hh, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs, xrs, ws, rel13,
                rows2, mp):
    """The log row at ``t`` = t_n + th hh inside an accepted step: the state by the cubic Hermite
    through (y_n, f_n) and (y_n+1, f_n+1) (third order, as the method), quaternions normalised;
    the outputs (wrench, strokes, base wrench, penetration, energy) linear between the rows at the
    step's ends (``rows2[0]``, ``rows2[1]``), the contact flags of its start."""
    ns = x.shape[1]
    nx = xr.shape[0]
    h00 = (1.0 + 2.0 * th) * (1.0 - th) * (1.0 - th)
    h10 = th * (1.0 - th) * (1.0 - th)
    h01 = th * th * (3.0 - 2.0 * th)
    h11 = th * th * (th - 1.0)
    for s in range(2):
        for i in range(ns):
            xs[s, i] = h00 * x0[s, i] + h10 * hh * fx0[s * ns + i] + h01 * x[s, i] + h11 * hh * xdot[s, i]
        SP.quat_normalize(xs[s, S.S_Q:S.S_Q + 4])
    for i in range(nx):
        xrs[i] = h00 * xr0[i] + h10 * hh * fr0[i] + h01 * xr[i] + h11 * hh * mout[i]
    a = rows2[0]
    b = rows2[1]
    S.relative_state(par, env, xs, rel13, ws)
    for i in range(row.shape[0]):
        row[i] = a[i] + th * (b[i] - a[i])
    row[lay[0]] = t
    for i in range(7):
        row[lay[2] + i] = rel13[i]
    for i in range(6):
        row[lay[3] + i] = rel13[7 + i]
    for s in range(2):
        for i in range(ns):
            row[lay[4] + s * ns + i] = xs[s, i]
    row[lay[5]] = a[lay[5]]          # captured
    row[lay[7]] = a[lay[7]]          # contacts
    row[lay[12]] = a[lay[12]]        # phase
    for i in range(nx):
        row[lay[8] + i] = xrs[i]


@njit(**_JIT)
def _rosw_emit(nrow, maxrows, t, hh, kind, dpar, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs, xrs, ws, rel13,
               rows2, mp, stats, istate, logbuf, lay):
    """The log's rows on the grid in (J_STEPS dt, t + hh] of the accepted step [t, t + hh], up to
    ``maxrows``: its end row ``rows2[1]`` where a row falls on it, :func:`_interp_row` inside;
    the end criteria at every row (a separation inside the step leaves the state at that row)."""
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    period = spr * dt
    ns = x.shape[1]
    nx = xr.shape[0]
    tn = t + hh
    k = istate[J_STEPS] // spr + 1
    while nrow < maxrows and k * period <= tn + 1e-9 * period:
        tr = k * period
        row = logbuf[nrow]
        exact = tn - tr <= 1e-9 * period
        if exact:
            for i in range(row.shape[0]):
                row[i] = rows2[1, i]
            row[lay[0]] = tr
            S.relative_state(par, env, x, rel13, ws)
        else:
            _interp_row(kind, row, lay, tr, (tr - t) / hh, hh, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs,
                        xrs, ws, rel13, rows2, mp)
        istate[J_STEPS] = k * spr
        nrow += 1
        _end_from_relative(tr, rel13, dpar, stats, istate)
        if istate[J_END] != 0:
            if not exact:
                for s in range(2):
                    for i in range(ns):
                        x[s, i] = xs[s, i]
                for i in range(nx):
                    xr[i] = xrs[i]
            return nrow
        k += 1
    return nrow


@njit(**_JIT)
def _rosw_penetration_end(nrow, maxrows, tn, dpar, istate, rows2, logbuf):
    """A penetration beyond its limit at the step ending ``tn``, once the grid rows up to it are
    written: its own row at ``tn`` (``rows2[1]``) unless a grid row fell on it (written on the
    next call if the block is full), then the run ends there (:func:`run_clock`)."""
    dt = dpar[D_DT]
    period = dpar[D_SPR] * dt
    if istate[J_STEPS] * dt < tn - 1e-9 * period:
        if nrow >= maxrows:
            return nrow
        row = logbuf[nrow]
        for i in range(row.shape[0]):
            row[i] = rows2[1, i]
        nrow += 1
    istate[J_END] = END_PENETRATION
    istate[J_STEPS] = int(math.ceil(tn / dt - 1e-9))
    dpar[D_RWH] = 0.0
    dpar[D_RWPEN] = 0.0
    return nrow


@njit(**_JIT)
def _rosw_rows(maxrows, nrow, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, rel13, kin,
               feat, featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p, info,
               info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, x0, rw, rows2, istate,
               stats, ev, evst, logbuf, lay):
    """Integrate the coupled system with the Rosenbrock-W method ROS34PW2 (constants ``RW_*``),
    W = the mechanism's device damping on the ring's velocities (``damping_jacobian``: the brakes'
    regularised cores, which cap an explicit step near 1 ms, are treated implicitly), writing the
    log's rows up to ``maxrows``; returns the rows written. Steps of the error control's choosing
    (up to ``D_HMAX``; cut at the duration and the capture-settle end); rows inside a step are
    interpolated (:func:`_interp_row`), those beyond ``maxrows`` left for the next call
    (``D_RWT``, ``D_RWH``, ``rows2``, the step's start in ``x0`` / ``rw``). Events, statistics, latches: accepted
    steps only; a step whose end finds a contact event is halved down to the physics step; a
    mechanism failure or a non-finite state is retried at a quarter of the step down to it."""
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    period = spr * dt
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
    h = dpar[D_H] if dpar[D_H] > 0.0 else dt
    fx0 = rw[RW_F0:RW_F0 + 2 * ns]
    fr0 = rw[RW_F0 + 2 * ns:RW_F0 + 2 * ns + nx]
    xr0 = rw[RW_F0 + 2 * ns + nx:RW_F0 + 2 * ns + 2 * nx]
    if dpar[D_RWH] > 0.0:
        # rows of the last step the previous call had no room for
        t = dpar[D_RWT]
        hh = dpar[D_RWH]
        nrow = _rosw_emit(nrow, maxrows, t, hh, kind, dpar, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs, xrs,
                          ws, rel13, rows2, mp, stats, istate, logbuf, lay)
        t = t + hh
        if istate[J_END] != 0 or (istate[J_STEPS] // spr + 1) * period <= t + 1e-9 * period:
            return nrow         # still rows of that step pending (or the run ended at one)
        if dpar[D_RWPEN] != 0.0:
            return _rosw_penetration_end(nrow, maxrows, t, dpar, istate, rows2, logbuf)
        for i in range(rows2.shape[1]):
            rows2[0, i] = rows2[1, i]
    else:
        t = istate[J_STEPS] * dt
        # the row of the current state (the start of the first step's interpolation)
        _write_row(kind, rows2[0], lay, t, wrench_P, par, env, x, ws, rel13, cst_in, stats[ST_PEN], info[2], xr,
                   mout, mp, stats[ST_EABS], 1)
    while nrow < maxrows and istate[J_END] == 0:
        # where this step may end at the latest: the duration, the settle end
        tcap = dpar[D_TEND]
        if stats[ST_TCAP] >= 0.0:
            # the settle end is found at the first row at or after it: end the step there
            ts = math.ceil((stats[ST_TCAP] + dpar[D_SETTLE]) / period - 1e-9) * period
            if ts < tcap:
                tcap = ts
        if tcap <= t + 1e-12:
            tcap = t + period
        # W at the step's start, the start saved
        for i in range(36):
            rw[RW_G0 + i] = 0.0
        if kind != KIND_TREE:
            damping_jacobian(mp, mw, mout, rw[RW_G0:RW_G0 + 36].reshape((6, 6)))
        for s in range(2):
            for i in range(ns):
                x0[s, i] = x[s, i]
                fx0[s * ns + i] = xdot[s, i]
        for i in range(nx):
            xr0[i] = xr[i]
            fr0[i] = mout[i]
        for i in range(6):
            bwp0[i] = bwp[i]
        while True:
            hh = h if h < hmax else hmax
            cut = False
            if hh > tcap - t:
                hh = tcap - t
                cut = True
            if not _w_factor(rw, hh * RW_GAMMA):
                hh *= 0.25
                h = hh
                continue
            st = 0
            for stg in range(4):
                if stg > 0:
                    c = 0.0
                    for s in range(2):
                        for i in range(ns):
                            acc = x0[s, i]
                            for j in range(stg):
                                acc += RW_A[stg][j] * kx[j, s, i]
                            xs[s, i] = acc
                    for i in range(nx):
                        acc = xr0[i]
                        for j in range(stg):
                            acc += RW_A[stg][j] * kr[j, i]
                        xrs[i] = acc
                    for j in range(stg):
                        c += RW_A[stg][j]
                    st = digital_eval(kind, par, env, xs, t + c * hh, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in,
                                      xdot, ws, rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P,
                                      wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
                    istate[J_EVALS] += 1
                    if st != 0:
                        break
                else:
                    for s in range(2):
                        for i in range(ns):
                            xdot[s, i] = fx0[s * ns + i]
                    for i in range(nx):
                        mout[i] = fr0[i]
                _rosw_stage_k(stg, hh, kind, x, xr, xdot, mout, kx, kr, rw)
            en = 0.0
            if st == 0:
                for s in range(2):
                    for i in range(ns):
                        acc = x0[s, i]
                        e = 0.0
                        for j in range(4):
                            acc += RW_B[j] * kx[j, s, i]
                            e += (RW_B[j] - RW_BHAT[j]) * kx[j, s, i]
                        x[s, i] = acc
                        r = abs(e) / _err_scale_x(i, nm, tol, ttol)
                        if not r <= en:
                            en = r
                    SP.quat_normalize(x[s, S.S_Q:S.S_Q + 4])
                for i in range(nx):
                    acc = xr0[i]
                    e = 0.0
                    for j in range(4):
                        acc += RW_B[j] * kr[j, i]
                        e += (RW_B[j] - RW_BHAT[j]) * kr[j, i]
                    xr[i] = acc
                    r = abs(e) / _err_scale_r(kind, i, nx, tol, ttol)
                    if not r <= en:
                        en = r
                st = digital_eval(kind, par, env, x, t + hh, xr, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws,
                                  rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links,
                                  latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
                istate[J_EVALS] += 1
            bad = st != 0 or not math.isfinite(en)
            if not bad:
                for s in range(2):
                    for i in range(ns):
                        if not math.isfinite(xdot[s, i]):
                            bad = True
                for i in range(nx):
                    if not math.isfinite(mout[i]):
                        bad = True
            event = not bad and info[3] != 0 and hh > dt
            if bad or event or (en > 1.0 and hh > hmin):
                for s in range(2):
                    for i in range(ns):
                        x[s, i] = x0[s, i]
                        xdot[s, i] = fx0[s * ns + i]
                for i in range(nx):
                    xr[i] = xr0[i]
                    mout[i] = fr0[i]
                for i in range(6):
                    bwp[i] = bwp0[i]
                if bad and hh <= dt:
                    if st != 0:
                        istate[J_STATUS] = st
                        istate[J_END] = END_MECHANISM
                    else:
                        istate[J_END] = END_DIVERGED
                    return nrow
                istate[J_REJECTED] += 1
                if bad:
                    h = 0.25 * hh
                elif event:
                    h = 0.5 * hh
                else:
                    fac = 0.9 * en ** (-1.0 / 3.0)
                    h = hh * (fac if fac > 0.2 else 0.2)
                if h < hmin:
                    h = hmin
                continue
            break
        # accepted
        tn = t + hh
        istate[J_FINE_STEPS] += 1
        evst[I_NEV] = istate[J_NEV]
        record_events(tn, lat, cst_in, cst_out, info, info_f, rec, ev, evst)
        istate[J_NEV] = evst[I_NEV]
        step_stats(tn, wrench_P, max_class1_penetration(rec, info[2]), mech_absorbed_power(kind, mp, mout), hh, stats,
                   cst_in[K.S_CAPTURED])
        pen_end = info[0] & K.ST_PENETRATION
        _write_row(kind, rows2[1], lay, tn, wrench_P, par, env, x, ws, rel13, cst_in, stats[ST_PEN], info[2], xr,
                   mout, mp, stats[ST_EABS], 1)
        fac = 0.9 * en ** (-1.0 / 3.0) if en > 1e-12 else 5.0
        hn = hh * (fac if fac < 5.0 else 5.0)
        if cut and hn < h:
            hn = h              # cut short by an end: keep the step the error allows
        if hn > hmax:
            hn = hmax
        h = hn if hn > hmin else hmin
        dpar[D_H] = h
        # the rows in (t, tn]
        dpar[D_RWT] = t
        dpar[D_RWH] = hh
        nrow = _rosw_emit(nrow, maxrows, t, hh, kind, dpar, par, env, x0, xr0, fx0, fr0, x, xr, xdot, mout, xs, xrs,
                          ws, rel13, rows2, mp, stats, istate, logbuf, lay)
        dpar[D_RWPEN] = 1.0 if pen_end else 0.0
        if istate[J_END] == 0 and (istate[J_STEPS] // spr + 1) * period <= tn + 1e-9 * period:
            return nrow         # the batch is full: the rest of this step's rows on the next call
        if istate[J_END] == 0 and pen_end:
            return _rosw_penetration_end(nrow, maxrows, tn, dpar, istate, rows2, logbuf)
        t = tn
        for i in range(rows2.shape[1]):
            rows2[0, i] = rows2[1, i]
    dpar[D_H] = h
    return nrow


