"""The all-digital reference: both spacecraft, the docking mechanism and the contacts in one
process with the same kernels as the emulator, no platform in the loop (issue 7 item 5;
docs/models/world.md §6).

Coupling ([Yaskevich 2018b, equations of motion]; the base's transport motion as in
[Yaskevich 2018a, modified CRBA] and [Golubev & Yaskevich, §5]; the evaluation order
of [Golubev & Yaskevich, §7]):

* both vehicles: ``rt.dynamics.spacecraft`` (rigid bodies with flexible port modes, their own control);
* the mechanism's base frame 0 = the active vehicle's (deflected) port frame A. Its base motion
  is the port's exact absolute motion: ``omega_0``, and ``a_0``, ``eps_0`` from the vehicle's
  state derivative (``a = v' + R_IC (w' x d + w x (w x d) + 2 w x d' + d'')`` with ``d`` the
  deflected port position in C; ``eps = R_IC (w' + w_f' + w x w_f)`` with ``w_f`` the mount's
  rotation rate), gravity zero (orbit) -- or, for judging a HIL run, the stand's conditions
  (``gravity_P``, ``hil_coupling``: :func:`stand_conditions`, docs/validation.md);
* the passive unit P moves with the passive vehicle's port; the contact model sees A's and P's
  absolute twists;
* the active vehicle receives the mechanism's **base wrench** (``w_in[1]``), not the contact
  wrench; the passive vehicle receives the contact wrench (``w_in[0]``, ``react = 0``).

The base acceleration depends on the base wrench (the mechanism's inertia loads the vehicle):
each evaluation computes the vehicles' derivative with the previous evaluation's base wrench,
the port acceleration from it, the mechanism with that base motion, and the vehicles' derivative
again with the new base wrench. The residual lag is ``m_mech / m_port`` (<= 3 % for the 90 kg
mechanism on the Soyuz-class 3 t axial port mode) of the base-wrench change over one step.

Steps: before the first contact the mechanism rests on its base (its equilibrium in 0 g) and
the interface's bounding spheres are apart along x_P, so the vehicles alone are integrated with
RK4 at the coarse step (default 1 ms) and the ring is carried rigidly; as soon as the gap falls
below ``gap_margin`` the coupled system is integrated with the emulator config's
``digital_integrator``: ``auto`` = the Rosenbrock-W ROS34PW2 for a leg mechanism
(:mod:`sim_stand.digital_rosw`: the legs' device damping implicit, steps up to 10 ms, rows
interpolated) and the adaptive Bogacki-Shampine 3(2) for a tree (:mod:`sim_stand.digital_rk`:
steps up to one log period, landing on the rows), or semi-implicit Euler / RK4 at the physics
step (docs/models/world.md §6 compares them). The coupled evaluation, the packed parameters and
the log rows are :mod:`sim_stand.digital_model`; this module runs them and is the Python shell. The run ends at the case's duration,
``capture_settle_s`` after soft capture, when the units are ``separation_m`` beyond their start
distance, or when a penetration exceeds its limit (the abort rule
of [Yaskevich 2018b, contact forces]).

The run log has the HIL run-log format (``rt.record.runlog``); fields in :data:`LOG_FIELDS_MECH` /
:data:`LOG_FIELDS_ROD` (docs/models/world.md §6).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import njit

from rt.dynamics import berthing_flight as BF
from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from rt.config.case import Case, load_case
from rt.stand.frames import active_in_passive, gravity_in_P
from rt.record.runlog import RunLogWriter
from sim_stand.contact import build_interface, load_interface
from sim_stand.contact import kernel as K
from sim_stand.dock_mechanism import (load_dock_mechanism, mech_absorbed_power, mech_contact, mech_error,
                                     mech_sie_update, mechanism_rest_state)
from sim_stand.mechanism_kinds import (KIND_PARALLEL, KIND_TREE, MODEL_GRAPPLE, MODEL_MECH, MODEL_ROD, by_world_model,
                                       kind_of, kinds_of_model)
from sim_stand.grapple import GO_D, GO_F, GO_LEN, GO_POW, GS_CAP, GS_LEN, grapple_capture, grapple_eval
from sim_stand.rod import RO_DELTA, RO_FORCE, RO_LEN, RO_RATE, R_C, rod_rk4_step, rod_scratch
from sim_stand.kin import KIN_LEN, kin_from_ports
from sim_stand.world import (EV_MAX, contact_buffers, EVENT_CODE_NAMES, EV_PENETRATION, I_LEN, I_NEV, ST_EABS, ST_LEN,
                             ST_MAXEXC, ST_MAXPEN, ST_PEAKF, ST_PEAKM, ST_PEN, ST_POW, ST_T, ST_TCAP,
                             max_class1_penetration, record_events, step_stats)
from sim_stand.world_config import EmulatorConfig, load_emulator

from sim_stand.digital_model import (_JIT, D_COARSE, D_COM, D_DT, D_DTC, D_GA, D_GAPM, D_HILC, D_HMAX, D_HMIN,
                                     D_INTEG, D_KIND, D_LEN, D_PMIN, D_R0, D_SEPR, D_SETTLE, D_SPR, D_TEND, D_TOL,
                                     D_TTOL, END_DIVERGED, END_MECHANISM, END_NAMES, END_NONE, END_PENETRATION,
                                     INTEG_RK23, INTEG_RK4, INTEG_ROSW, INTEGRATOR_CODES, J_END, J_EVALS,
                                     J_FINE_STEPS, J_LEN, J_NEV, J_PHASE, J_STATUS, J_STEPS, LOG_FIELDS_MECH,
                                     LOG_FIELDS_ROD, ST_FIRST, _end_from_relative, _excursion_and_end, _row_head,
                                     _write_row, digital_eval, passive_min_x, run_clock, sc_sie_update)
from sim_stand.digital_rk import _rk23_period, _rk_stage
from sim_stand.digital_rosw import _rosw_rows, rosw_scratch_len


#: why an integrator is for some mechanism kinds only (MechanismKind.digital_integrators refuses it)
_INTEGRATOR_SCOPE = {"rosw": "treats a leg mechanism's device damping implicitly"}


@njit(**_JIT)
def _fine_steps(nsteps, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, rel13, kin, feat,
                featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f,
                Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, istate, stats, ev, evst):
    """``nsteps`` physics steps of the coupled system (the model has been evaluated at the
    current state: derivatives in ``xdot``, ``mout``), or with ``rk23`` the same time in steps of
    its own choosing (:func:`_rk23_period`). Returns the mechanism status (0 ok)."""
    dt = dpar[D_DT]
    if dpar[D_INTEG] == INTEG_RK23:
        st = _rk23_period(nsteps, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, kin, feat,
                          featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p,
                          info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, istate,
                          stats, ev, evst)
        if istate[J_END] == END_NONE:
            istate[J_STEPS] += nsteps
        else:
            # ended inside the period, at stats[ST_T] (:func:`run_clock` gives that time)
            istate[J_STEPS] = int(math.ceil(stats[ST_T] / dt - 1e-9))
        return st
    rk4 = dpar[D_INTEG] == INTEG_RK4
    ns = x.shape[1]
    nx = xr.shape[0]
    kind = int(dpar[D_KIND])
    com = dpar[D_COM:D_COM + 3]
    ga = dpar[D_GA:D_GA + 4]
    for _ in range(nsteps):
        t = istate[J_STEPS] * dt
        if not rk4:
            sc_sie_update(par, env, x, xdot, dt)
            mech_sie_update(kind, xr, mout, dt)
        else:
            for s in range(2):
                for i in range(ns):
                    kx[0, s, i] = xdot[s, i]
            for i in range(nx):
                kr[0, i] = mout[i]
            for stg in range(1, 4):
                h = 0.5 * dt if stg < 3 else dt
                st = _rk_stage(stg, h, t, x, xr, kind, par, env, xs, xrs, com, ga, mp, mw, mout, bm, cw, bwp, w_in,
                               xdot, ws, rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec, wrench_P,
                               wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr,
                               istate)
                if st != 0:
                    return st
            for s in range(2):
                for i in range(ns):
                    x[s, i] += SP.rk4_increment(dt / 6.0, kx[0, s, i], kx[1, s, i], kx[2, s, i], kx[3, s, i])
                SP.quat_normalize(x[s, S.S_Q:S.S_Q + 4])
            for i in range(nx):
                xr[i] += SP.rk4_increment(dt / 6.0, kr[0, i], kr[1, i], kr[2, i], kr[3, i])
        istate[J_STEPS] += 1
        istate[J_FINE_STEPS] += 1
        t = istate[J_STEPS] * dt
        st = digital_eval(kind, par, env, x, t, xr, com, ga, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, kin,
                          feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links, latch_p,
                          info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
        istate[J_EVALS] += 1
        if st != 0:
            istate[J_STATUS] = st
            istate[J_END] = END_MECHANISM
            return st
        ncont = info[2]
        evst[I_NEV] = istate[J_NEV]
        record_events(t, lat, cst_in, cst_out, info, info_f, rec, ev, evst)
        istate[J_NEV] = evst[I_NEV]
        step_stats(t, wrench_P, max_class1_penetration(rec, ncont), mech_absorbed_power(kind, mp, mout), dt, stats,
                   cst_in[K.S_CAPTURED])
        if info[0] & K.ST_PENETRATION:
            istate[J_END] = END_PENETRATION
            break
    return 0


@njit(**_JIT)
def digital_run(maxrows, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, rel13, kin, feat,
                featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f,
                Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0, k4, xt4, zero_w, rw, rows2, istate,
                stats, ev, evst, logbuf, lay):
    """Integrate up to ``maxrows`` log periods, writing one row per period into ``logbuf``.
    Returns the number of rows written; ``istate[J_END]`` says whether the run ended.

    Parameters
    ----------
    maxrows : int
        Most log rows (periods) to integrate in this call.
    dpar : float64[D_LEN]
        The run's parameters and adaptive-step state (``sim_stand.digital_model`` ``D_*``): steps
        (s), integrator, duration, end criteria, ring centre of mass, gravity, HIL coupling,
        tolerances.
    par : float64[2, L]
        Both vehicles' packed parameters; this and the vehicles' other arrays (``env``, ``x``,
        ``w_in``, ``xdot``, ``ws``, ``rel``) as in ``rt.dynamics.spacecraft`` ("The kernels'
        arguments").
    env : float64[ENV_LEN]
        The environment.
    x : float64[2, NS]
        Both vehicles' state, advanced in place.
    xr : float64[12] or float64[2n]
        The mechanism's state, advanced in place (``sim_stand.dock_mechanism`` module docstring,
        "The slot's arrays", as for ``mp`` .. ``cw`` and ``feat`` .. ``R_PE``).
    mp, mw, mout, bm, cw : float64[:]
        The mechanism's parameters, workspace, outputs of the last evaluation, base motion and
        contact wrench (the last two written).
    bwp : float64[6]
        The base wrench carried from one evaluation to the next
        (:func:`sim_stand.digital_model.digital_eval`).
    w_in : float64[2, 6]
        Output: the vehicles' inputs, the contact and base wrenches.
    xdot : float64[2, NS]
        Both vehicles' state derivative at the current state (the last evaluation's).
    ws, rel : float64 arrays
        Workspace of ``rt.dynamics.spacecraft.derivatives``.
    rel13 : float64[REL_LEN]
        Workspace: the relative state of A in P (``rt.dynamics.spacecraft.relative_state``) for
        the log rows and the end criteria.
    kin : float64[KIN_LEN]
        Output: A's and P's absolute kinematics in P (``sim_stand.kin`` ``K_*``).
    feat, featP : float64[nf, FW]
        The interface's features, and their workspace in P: from here to ``R_PE`` the arrays
        of the contact evaluation, passed on to :func:`sim_stand.digital_model.digital_eval`.
    pairs : int64[n_pairs, PW]
        The pair table.
    mat, lat : float64[:, :]
        Materials; latch and sensor rows.
    cst_in : int64[S_LATCH0 + n_lat]
        The committed interface state, updated at each committed step.
    cst_out, cst_tmp : int64[S_LATCH0 + n_lat]
        Scratch: the state a step's end evaluation produced, before it is committed; the state
        of stage and probe evaluations (never committed).
    rec, wrench_P, wrench_links, latch_p : float64 arrays
        Output of the last evaluation: contact records, wrenches, deflections.
    info : int64[4]
        Output of the last evaluation: its status (a penetration beyond the limit ends the run).
    info_f, Rl, cscr, link_pose, link_twist : float64 arrays
        Output of the last evaluation (the penetration, the buffer link's pose and twist) and
        workspace.
    aC, R_PE : float64[3, 3]
        As for :func:`sim_stand.digital_model.digital_eval`.
    kx : float64[4, 2, NS]
        Scratch: the vehicles' stage derivatives (RK4, rk23, rosw).
    kr : float64[4, len(xr)]
        Scratch: the mechanism's stage derivatives.
    xs : float64[2, NS]
        Scratch: the vehicles' stage state, and the last clear state of the coarse phase.
    xrs : float64[len(xr)]
        Scratch: the mechanism's stage state.
    bwp0 : float64[6]
        Scratch: the base wrench at an adaptive step's start (restored on a rejected step).
    k4 : float64[4, 2, NS]
        Workspace of the coarse phase's RK4 (``rt.dynamics.spacecraft.rk4_step``).
    xt4 : float64[2, NS]
        Workspace: the coarse RK4's stage state; the rosw step's start state.
    zero_w : float64[2, 6]
        Zeros: the vehicles' held inputs in the coarse phase (no contact).
    rw : float64[rosw_scratch_len(NS, len(xr))]
        Scratch of the Rosenbrock-W step (``sim_stand.digital_rosw`` ``RW_*``), kept between calls.
    rows2 : float64[2, width]
        The log rows at a rosw step's start and end (interpolation), kept between calls.
    istate : int64[J_LEN]
        The run's integer state (``J_*``): phase, step clock, end reason, mechanism status,
        event count, fine steps, evaluations, rejected steps.
    stats : float64[ST_LEN]
        Run statistics (``sim_stand.world`` ``ST_*``; ``ST_FIRST``: first contact time, s).
    ev : float64[EV_MAX, 4]
        Output: event rows ``[t (s), code, detail, value]`` (``sim_stand.world``).
    evst : int64[I_LEN]
        Scratch: the world-layout integer state ``record_events`` keeps the event count in
        (mirrors ``istate[J_NEV]``).
    logbuf : float64[>= maxrows, width]
        Output: the log rows, one per log period.
    lay : int64[n_fields]
        Offset of each log field in a row (the run's field set, ``LOG_FIELDS_*``).
    """
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    dtc = dpar[D_DTC]
    ns = x.shape[1]
    kind = int(dpar[D_KIND])
    com = dpar[D_COM:D_COM + 3]
    ga = dpar[D_GA:D_GA + 4]
    nrow = 0
    while nrow < maxrows and istate[J_END] == 0:
        t0 = istate[J_STEPS] * dt
        if istate[J_PHASE] == 0:
            # ---------------- coarse phase: the vehicles alone, the mechanism carried rigidly at
            # rest; after every coarse step a probe evaluation of the contact kernel (nothing
            # committed): at the first contact, step back and go fine from the last clear state
            nc = int(round(spr * dt / dtc))
            nm = (ns - S.N_RIGID) // 2
            hw = env[S.E_N] if env[S.E_HILL] != 0.0 else 0.0
            go_fine = dpar[D_COARSE] == 0.0
            for _ in range(nc):
                if go_fine:
                    break
                for s in range(2):
                    for i in range(ns):
                        xs[s, i] = x[s, i]
                S.rk4_step(par, env, x, istate[J_STEPS] * dt, dtc, zero_w, 0, k4, xt4, ws, rel)
                S._port(par, x, 0, nm, hw, ws)
                S._port(par, x, 1, nm, hw, ws)
                kin_from_ports(ws, kin)
                ncp = mech_contact(kind, kin, xr, com, mp, mw, feat, featP, pairs, mat, lat, cst_in, cst_tmp, rec,
                                   wrench_P, wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist,
                                   cw, aC, R_PE)
                if ncp > 0:
                    for s in range(2):
                        for i in range(ns):
                            x[s, i] = xs[s, i]
                    go_fine = True
                    break
                istate[J_STEPS] += int(round(dtc / dt))
            for i in range(6):
                wrench_P[i] = 0.0
            if go_fine:
                istate[J_PHASE] = 1
                for i in range(6):
                    bwp[i] = 0.0
                st = digital_eval(kind, par, env, x, istate[J_STEPS] * dt, xr, com, ga, mp, mw, mout, bm, cw, bwp, w_in,
                                  xdot, ws, rel, kin, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P,
                                  wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE)
                istate[J_EVALS] += 1
                if st != 0:
                    istate[J_STATUS] = st
                    istate[J_END] = END_MECHANISM
                    return nrow
                t = istate[J_STEPS] * dt
                evst[I_NEV] = istate[J_NEV]
                record_events(t, lat, cst_in, cst_out, info, info_f, rec, ev, evst)
                istate[J_NEV] = evst[I_NEV]
                stats[ST_POW] = mech_absorbed_power(kind, mp, mout)
                step_stats(t, wrench_P, max_class1_penetration(rec, info[2]), stats[ST_POW], 0.0, stats,
                           cst_in[K.S_CAPTURED])
                if dpar[D_INTEG] == INTEG_ROSW:
                    continue        # the Rosenbrock-W branch writes this period's row
                # finish this log period with fine steps
                rem = spr - (istate[J_STEPS] - int(round(t0 / dt)))
                if rem > 0:
                    st = _fine_steps(rem, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel,
                                     rel13, kin, feat, featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P,
                                     wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE,
                                     kx, kr, xs, xrs, bwp0, istate, stats, ev, evst)
                    if st != 0:
                        return nrow
        elif dpar[D_INTEG] == INTEG_ROSW:
            nrow = _rosw_rows(maxrows, nrow, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel,
                              rel13, kin, feat, featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P,
                              wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs,
                              xrs, bwp0, xt4, rw, rows2, istate, stats, ev, evst, logbuf, lay)
            continue
        else:
            # ---------------- fine phase: the coupled system at the physics step
            st = _fine_steps(spr, dpar, par, env, x, xr, mp, mw, mout, bm, cw, bwp, w_in, xdot, ws, rel, rel13, kin,
                             feat, featP, pairs, mat, lat, cst_in, cst_out, cst_tmp, rec, wrench_P, wrench_links,
                             latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE, kx, kr, xs, xrs, bwp0,
                             istate, stats, ev, evst)
            if st != 0:
                return nrow
        t = run_clock(dpar, istate, stats)
        _excursion_and_end(t, par, env, x, ws, rel13, dpar, stats, istate)
        _write_row(kind, logbuf[nrow], lay, t, wrench_P, par, env, x, ws, rel13, cst_in, stats[ST_PEN], info[2] if
                   istate[J_PHASE] == 1 else 0, xr, mout, mp, stats[ST_EABS], istate[J_PHASE])
        nrow += 1
    return nrow


@njit(**_JIT)
def rod_run(maxrows, dpar, par, env, rp, x, w_in, k4, xt4, ws, rel, rel13, ro, tmp, istate, stats, logbuf, lay):
    """The elastic-rod case: RK4 with the rod force at every stage, one log row per period.

    Parameters
    ----------
    maxrows : int
        Most log rows (periods) to integrate in this call.
    dpar : float64[D_LEN]
        The run's parameters (``D_*``) as for :func:`digital_run`; the physics step, steps per
        row, duration and end criteria are read.
    par, env, rp, x, w_in, k4, xt4, ws, rel : float64 arrays
        As :func:`sim_stand.rod.rod_rk4_step` takes them (``k4``, ``xt4`` its ``k``, ``xt``):
        both vehicles' parameters, the environment, the rod's parameters, the state (advanced in
        place), the inputs (written: row 0 the rod's wrench on P, row 1 zero), workspace.
    rel13 : float64[REL_LEN]
        Workspace: the relative state of A in P, for the log rows and the end criteria.
    ro : float64[RO_LEN]
        Output: the rod's penetration, its rate, force and contact point (``sim_stand.rod``).
    tmp : float64[KIN_LEN]
        Scratch: A's and P's motion in P (``sim_stand.rod.rod_scratch``).
    istate : int64[J_LEN]
        The run's integer state (``J_*``): step clock and end reason.
    stats, logbuf : float64 arrays
        The run's statistics, updated, and its log rows, written.
    lay : int64[n_fields]
        Offset of each log field in a row (:func:`digital_run`).
    """
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    nrow = 0
    while nrow < maxrows and istate[J_END] == 0:
        for _ in range(spr):
            rod_rk4_step(par, env, rp, x, istate[J_STEPS] * dt, dt, w_in, k4, xt4, ws, rel, ro, tmp)
            istate[J_STEPS] += 1
            t = istate[J_STEPS] * dt
            f = ro[RO_FORCE]
            pw = rp[R_C] * ro[RO_RATE] * ro[RO_RATE] if f > 0.0 else 0.0
            if f > 0.0 and stats[ST_FIRST] < 0.0:
                stats[ST_FIRST] = t
            step_stats(t, w_in[0], ro[RO_DELTA] if ro[RO_DELTA] > 0.0 else 0.0, pw, dt, stats, 0)
        t = istate[J_STEPS] * dt
        _excursion_and_end(t, par, env, x, ws, rel13, dpar, stats, istate)
        row = logbuf[nrow]
        _row_head(row, lay, t, w_in[0], rel13, x)
        row[lay[5]] = 0.0
        row[lay[6]] = ro[RO_DELTA] if ro[RO_DELTA] > 0.0 else 0.0
        row[lay[7]] = ro[RO_FORCE]
        row[lay[8]] = ro[RO_RATE]
        row[lay[9]] = stats[ST_EABS]
        nrow += 1
    return nrow


@njit(**_JIT)
def _grapple_derivatives(a, gp, gs, go, x, w_in, xdot, ws, rel, kin):
    """The berthing flight coupled by the snare: the ports at this state (the kinematic half of
    the evaluation), the snare's wrench from them, then the flight's dynamics under it."""
    BF.flight_ports(a, x, ws, rel)
    kin_from_ports(ws, kin)
    grapple_eval(gp, kin, gs, w_in[0], go)
    return BF.flight_dynamics(a, x, w_in, xdot, ws)


@njit(**_JIT)
def grapple_rk4_step(a, gp, gs, go, x, dt, w_in, k4, xt4, ws, rel, kin):
    """One RK4 step of the flight with the snare's wrench at every stage (the capture state
    ``gs`` held); afterwards ``ws``, ``rel``, ``kin``, ``w_in[0]`` and ``go`` hold the new state's
    ports, relative state and snare. Returns False if an evaluation failed (x unchanged).

    Parameters
    ----------
    a : float64[L]
        The berthing flight's packed model (``rt.dynamics.berthing_flight.pack_flight``).
    gp : float64[GP_LEN]
        Snare parameters (``sim_stand.grapple``): stiffness (N/m), damping (N s/m), capture
        radius (m), pin point (m, P).
    gs : float64[GS_LEN]
        Snare capture state (``GS_*``), held over the step. Read only.
    go : float64[GO_LEN]
        Output: the snare's separation (m), force (N) and dissipated power (W).
    x : float64[2, ns]
        The flight's state (``rt.dynamics.berthing_flight``): row 0 the arm's ``[q | u]``, row 1
        the payload (spacecraft layout); advanced in place.
    dt : float
        Step (s).
    w_in : float64[2, 6]
        Output: row 0 the snare's wrench on P (P components, about P's origin; N, N m).
    k4 : float64[4, 2, ns]
        Scratch: the RK4 stage derivatives.
    xt4 : float64[2, ns]
        Scratch: the RK4 stage state.
    ws : float64[2, >= WS_LEN]
        Workspace: the two ports' inertial states (``rt.dynamics.spacecraft`` ``W_*``; row 0 =
        A, row 1 = P), the arm's scratch past them in row 0.
    rel : float64[REL_LEN + 6]
        Output: the relative state of A in P in ``rel[:13]`` (``rt.dynamics.spacecraft``).
    kin : float64[KIN_LEN]
        Output: A's and P's absolute kinematics in P (``sim_stand.kin``).
    """
    ns = x.shape[1]
    ok = _grapple_derivatives(a, gp, gs, go, x, w_in, k4[0], ws, rel, kin)
    for st in range(1, 4):
        h = 0.5 * dt if st < 3 else dt
        for r in range(2):
            for i in range(ns):
                xt4[r, i] = x[r, i] + h * k4[st - 1, r, i]
        ok = _grapple_derivatives(a, gp, gs, go, xt4, w_in, k4[st], ws, rel, kin) and ok
    if not ok:
        return False
    for r in range(2):
        for i in range(ns):
            x[r, i] += SP.rk4_increment(dt / 6.0, k4[0, r, i], k4[1, r, i], k4[2, r, i], k4[3, r, i])
    BF.normalize_quaternions(x)
    _grapple_derivatives(a, gp, gs, go, x, w_in, k4[0], ws, rel, kin)
    return True


@njit(**_JIT)
def grapple_run(maxrows, dpar, a, gp, gs, go, x, w_in, k4, xt4, ws, rel, kin, istate, stats, logbuf, lay):
    """The berthing case: RK4 of the flight (``rt.dynamics.berthing_flight``) with the snare's
    wrench (``sim_stand.grapple``) at every stage, the capture checked at each step's end, one
    log row per period.

    Parameters
    ----------
    maxrows : int
        Most log rows (periods) to integrate in this call.
    dpar : float64[D_LEN]
        The run's parameters (``D_*``): physics step, steps per row, duration, end criteria.
    a, gp : float64 arrays
        The flight's packed model and the snare's parameters, as for :func:`grapple_rk4_step`.
    gs : float64[GS_LEN]
        Snare capture state (``GS_*``), set at the capture.
    go, x, w_in, k4, xt4, ws, rel, kin : float64 arrays
        As for :func:`grapple_rk4_step`: the snare's output, the flight's state (advanced in
        place), the snare's wrench (written), workspace, the relative state and kinematics of A
        in P (written).
    istate : int64[J_LEN]
        The run's integer state (``J_*``): step clock, end reason, status.
    stats, logbuf : float64 arrays
        Run statistics and the log rows, as for :func:`digital_run`.
    lay : int64[n_fields]
        Offset of each log field in a row.
    """
    dt = dpar[D_DT]
    spr = int(dpar[D_SPR])
    nrow = 0
    while nrow < maxrows and istate[J_END] == 0:
        for _ in range(spr):
            if not grapple_rk4_step(a, gp, gs, go, x, dt, w_in, k4, xt4, ws, rel, kin):
                istate[J_END] = END_MECHANISM
                istate[J_STATUS] = 1
                return nrow
            istate[J_STEPS] += 1
            t = istate[J_STEPS] * dt
            if grapple_capture(gp, kin, gs, t):
                stats[ST_FIRST] = t
                grapple_eval(gp, kin, gs, w_in[0], go)
            step_stats(t, w_in[0], go[GO_D], go[GO_POW], dt, stats, int(gs[GS_CAP]))
        t = istate[J_STEPS] * dt
        _end_from_relative(t, rel, dpar, stats, istate)
        row = logbuf[nrow]
        _row_head(row, lay, t, w_in[0], rel, x)
        row[lay[5]] = gs[GS_CAP]
        row[lay[6]] = go[GO_D]
        row[lay[7]] = go[GO_F]
        row[lay[8]] = stats[ST_EABS]
        nrow += 1
    return nrow


# ====================================================================== Python shell
@dataclass
class DigitalResult:
    """Outcome of :func:`simulate` (the world's statistics plus the run's bookkeeping)."""

    case: str
    model: str
    captured: bool
    time_to_capture_s: float | None
    peak_force_n: float
    peak_moment_nm: float
    max_penetration_m: float
    energy_absorbed_j: float
    max_excursion_m: float
    first_contact_s: float | None
    end_reason: str
    t_end_s: float
    rel_velocity_end_mps: list
    events: list = field(default_factory=list)
    log_path: Path | None = None
    cpu_s: float = 0.0
    steps: int = 0
    fine_steps: int = 0
    evaluations: int = 0
    integrator: str = ""
    dt_s: float = 0.0
    message: str = ""

    def as_dict(self) -> dict:
        d = dict(vars(self))
        d["log_path"] = str(self.log_path) if self.log_path is not None else None
        d["events"] = [list(e) for e in self.events]
        return d


class DigitalSim:
    """The coupled all-digital system for one case (module docstring). :meth:`run` integrates
    to the end criteria; :func:`simulate` is the one-call form.

    ``emu`` supplies the physics step, the integrator and the mechanism / interface presets (a
    case's own ``[vehicles] mechanism / interface`` or ``[contact] model = "elastic_rod"`` take
    precedence, :meth:`EmulatorConfig.for_case`); gravity on the mechanism is zero (orbit) unless
    ``gravity_P`` (m/s^2, components in P, constant) gives the stand's (:func:`stand_gravity_P`):
    on the stand the passive unit hangs fixed in the lab and the platform turns the active unit
    to the relative attitude, so the mechanism feels gravity fixed in P, not in A.
    ``rest_gravity_A`` (optional, components in A): the gravity the mechanism came to rest under
    (the emulated stand's reset, at the platform's home pose: :func:`stand_rest_gravity_A`);
    default ``gravity_P`` at the initial relative attitude. On the stand the arming move then
    tilts the platform to the initial attitude: springs follow, friction holds.
    ``mechanism_state`` (optional): the mechanism's state at the start instead of a rest state
    (a HIL run's, ``sim_stand.prehistory.mechanism_state_from_run``); the mechanism is then
    integrated from the start (no coarse phase carrying it rigidly: it need not be at rest).
    ``hil_coupling``: the active vehicle receives the contact wrench's reaction at A instead of
    the mechanism's base wrench (the mechanism's weight and inertia ride on the platform, as in
    a HIL run). ``stand_integrator``: the emulated stand's own integrator (``emu.integrator``) instead
    of the reference's (``emu.digital_integrator``, adaptive rk23 by default) unless ``integrator``
    names one. These together are the stand's conditions (:func:`stand_conditions`), the ideal
    loop a HIL run is judged against (docs/validation.md). ``mechanism`` (optional): a parallel
    mechanism's :class:`sim_stand.mechanism.config.MechanismConfig` used instead of the file
    (a campaign's dispersed damper, spring and friction coefficients).

    Not for the real-time loop (builds buffers, compiles on first use); :meth:`run` integrates
    in compiled kernels and may write a run log."""

    def __init__(self, case: Case | str | Path, emu: EmulatorConfig | str | Path | None = None, *,
                 dt: float | None = None, integrator: str | None = None, log_rate_hz: float = 1000.0,
                 coarse: bool = True, coarse_dt: float = 1e-3, gap_margin_m: float = 0.01,
                 duration_s: float | None = None, gravity_P=None, rest_gravity_A=None, hil_coupling: bool = False,
                 mechanism=None, mechanism_state=None, stand_integrator: bool = False, rk23_tol_m: float | None = None,
                 rk23_time_scale_s: float = 0.01, rk23_max_step_s: float | None = None, rk23_min_step_s: float = 1e-6):
        if not isinstance(case, Case):
            case = load_case(case)
        if emu is None or not isinstance(emu, EmulatorConfig):
            emu = load_emulator(emu)
        emu = emu.for_case(case)
        self.case, self.emu = case, emu
        self.mechanism_config = mechanism
        self.initial_mechanism_state = mechanism_state
        self.model = emu.model
        self.dt = float(dt if dt is not None else emu.physics_dt_s)
        if integrator is not None and integrator not in INTEGRATOR_CODES and integrator != "auto":
            raise ValueError(f"integrator must be 'auto', 'rosw', 'rk23', 'semi_implicit_euler' or 'rk4', "
                             f"got {integrator!r}")
        # the kinds of one contact model share its world model (sim_stand.mechanism_kinds); a
        # docking mechanism's kind is known once its file is loaded (_init_mechanism)
        model_kind = kinds_of_model(self.model)[0]
        if not model_kind.has_mechanism:
            self.kind = model_kind
            only = model_kind.digital_integrators
            if integrator not in (None, "auto", *only):
                raise ValueError(f"integrator {integrator!r} is for a docking mechanism's run; the {self.model} model "
                                 f"integrates with {' or '.join(i.upper() for i in only)} at the physics step")
            self.integrator = only[0]
        elif integrator is not None:
            self.integrator = integrator
        else:
            self.integrator = emu.integrator if stand_integrator else emu.digital_integrator
        for name, v in (("rk23_tol_m", rk23_tol_m if rk23_tol_m is not None else emu.digital_tolerance_m),
                        ("rk23_time_scale_s", rk23_time_scale_s), ("rk23_min_step_s", rk23_min_step_s)):
            if not (math.isfinite(v) and v > 0.0):
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        if rk23_max_step_s is not None and not (math.isfinite(rk23_max_step_s) and rk23_max_step_s > 0.0):
            raise ValueError(f"rk23_max_step_s must be a positive number, got {rk23_max_step_s!r}")
        if rk23_min_step_s > 0.25 * self.dt:
            raise ValueError(f"rk23_min_step_s ({rk23_min_step_s:g} s) must be at most a quarter of the physics step "
                             f"({self.dt:g} s): events are placed to the physics step by halving")
        spr = (1.0 / log_rate_hz) / self.dt
        if abs(spr - round(spr)) > 1e-9 or round(spr) < 1:
            raise ValueError(f"the log period 1/{log_rate_hz:g} s must be a whole number of physics steps ({self.dt:g} s)")
        self.spr = int(round(spr))
        nc = (self.spr * self.dt) / coarse_dt
        if coarse and round(nc) < 1:
            coarse = False          # logged finer than the coarse step: the coupled system from the start
        if coarse and abs(nc - round(nc)) > 1e-9:
            raise ValueError("the log period must be a whole number of coarse steps")
        ratio = coarse_dt / self.dt
        if coarse and abs(ratio - round(ratio)) > 1e-9:
            raise ValueError("the coarse step must be a whole number of physics steps")
        self.sc = BF.flight_from_case(case)
        self.ns = self.sc.ns
        d = np.zeros(D_LEN)
        d[D_DT] = self.dt
        d[D_DTC] = coarse_dt
        d[D_SPR] = self.spr
        d[D_INTEG] = INTEGRATOR_CODES.get(self.integrator, INTEG_RK23)     # "auto": resolved below
        d[D_TOL] = emu.digital_tolerance_m if rk23_tol_m is None else rk23_tol_m
        d[D_TTOL] = rk23_time_scale_s
        d[D_HMAX] = self.spr * self.dt if rk23_max_step_s is None else rk23_max_step_s
        d[D_HMIN] = rk23_min_step_s
        d[D_TEND] = case.duration_s if duration_s is None else duration_s
        d[D_SETTLE] = case.end.capture_settle_s
        r0 = self.sc.relative()[S.REL_R:S.REL_R + 3]
        d[D_SEPR] = float(np.linalg.norm(r0)) + case.end.separation_m
        d[D_GAPM] = gap_margin_m
        d[D_COARSE] = 1.0 if coarse and mechanism_state is None else 0.0
        d[D_R0:D_R0 + 3] = r0
        if gravity_P is not None:
            ga = np.asarray(gravity_P, dtype=np.float64)
            if ga.shape != (3,) or not np.all(np.isfinite(ga)):
                raise ValueError(f"gravity_P must be 3 finite numbers, got {gravity_P!r}")
            d[D_GA:D_GA + 3] = ga
        self.rest_gravity_A = None
        if rest_gravity_A is not None:
            self.rest_gravity_A = np.asarray(rest_gravity_A, dtype=np.float64)
            if self.rest_gravity_A.shape != (3,) or not np.all(np.isfinite(self.rest_gravity_A)):
                raise ValueError(f"rest_gravity_A must be 3 finite numbers, got {rest_gravity_A!r}")
        d[D_HILC] = 1.0 if hil_coupling else 0.0
        self.dpar = d
        self.istate = np.zeros(J_LEN, dtype=np.int64)
        self.evst = np.zeros(I_LEN, dtype=np.int64)
        self.stats = np.zeros(ST_LEN)
        self.stats[ST_TCAP] = -1.0
        self.stats[ST_FIRST] = -1.0
        self.ev = np.zeros((EV_MAX, 4))
        self.w_in = np.zeros((2, 6))
        self.xdot = np.zeros((2, self.ns))
        self.rel13 = np.zeros(S.REL_LEN)
        self.k4 = np.zeros((4, 2, self.ns))
        self.xt4 = np.zeros((2, self.ns))
        self.zero_w = np.zeros((2, 6))
        if model_kind.berthing and case.berthing is None:
            raise ValueError(f"case {case.name!r}: the {self.model} contact needs a berthing case ([berthing])")
        init, self._rows = by_world_model({MODEL_MECH: (self._init_mechanism, self._rows_mechanism),
                                           MODEL_GRAPPLE: (self._init_snare, self._rows_snare),
                                           MODEL_ROD: (self._init_rod, self._rows_rod)}, model_kind,
                                          "the digital reference (sim_stand.digital)")
        init()
        if self.kind.has_mechanism:
            if self.integrator == "auto":
                # the Rosenbrock-W step for a leg mechanism (its devices' damping in W), rk23 for a tree
                self.integrator = self.kind.digital_integrators[0]
            if self.integrator not in self.kind.digital_integrators:
                raise ValueError(f"integrator {self.integrator!r} {_INTEGRATOR_SCOPE.get(self.integrator, 'is not for it')}; "
                                 f"this mechanism is a {self.kind.structure}: use {self.kind.digital_integrators[0]!r}")
            d[D_INTEG] = INTEGRATOR_CODES[self.integrator]
            if rk23_max_step_s is None:
                d[D_HMAX] = 0.01 if self.integrator == "rosw" else self.spr * self.dt
        self._layout()
        self.events: list[tuple[float, str]] = []
        self.event_details: list[tuple[float, str, str]] = []
        self._ev_read = 0

    def _init_snare(self) -> None:
        self.gp = self.emu.grapple.pack()
        self.gs = np.zeros(GS_LEN)
        self.go = np.zeros(GO_LEN)
        self.kin = np.zeros(KIN_LEN)
        self.fields = {"t": 1, "w_P": 6, "rel_pose": 7, "rel_twist": 6, "x": 2 * self.ns, "captured": 1,
                       "penetration": 1, "snare_force": 1, "energy_absorbed": 1}

    def _init_rod(self) -> None:
        self.rp = self.emu.rod.pack()
        self.ro = np.zeros(RO_LEN)
        self.tmp = rod_scratch()
        self.fields = {"t": 1, "w_P": 6, "rel_pose": 7, "rel_twist": 6, "x": 2 * self.ns, "captured": 1,
                       "penetration": 1, "rod_force": 1, "rod_rate": 1, "energy_absorbed": 1}

    def _init_mechanism(self) -> None:
        emu = self.emu
        if self.mechanism_config is not None:
            # a parallel mechanism's config given directly (a campaign's dispersed coefficients)
            from sim_stand.mechanism import Mechanism
            self.mech, self.mech_kind = Mechanism(self.mechanism_config), KIND_PARALLEL
            com = np.asarray(self.mechanism_config.ring_com_R, dtype=np.float64)
        else:
            self.mech, self.mech_kind, com = load_dock_mechanism(emu.mechanism_path)
        self.kind = kind_of(self.model, self.mech_kind)
        self.packed = build_interface(load_interface(emu.interface_path))
        pk = self.packed
        self.dpar[D_KIND] = self.mech_kind
        self.dpar[D_COM:D_COM + 3] = com
        self.dpar[D_PMIN] = passive_min_x(pk.feat)
        vars(self).update(contact_buffers(pk))
        self.aC = np.zeros((3, 3))
        self.R_PE = np.zeros((3, 3))
        self.bm = np.zeros(12)
        self.cw = np.zeros(6)
        self.bwp = np.zeros(6)
        self.bwp0 = np.zeros(6)
        self.kin = np.zeros(KIN_LEN)
        self.kx = np.zeros((4, 2, self.ns))
        # the mechanism at rest on its base (no base acceleration; 0 g in orbit, else
        # rest_gravity_A or gravity_P seen in A at the initial relative attitude)
        bm0 = np.zeros(12)
        if self.rest_gravity_A is not None:
            bm0[9:12] = self.rest_gravity_A
        else:
            R_PA = np.empty((3, 3))
            q = self.sc.relative()[S.REL_Q:S.REL_Q + 4]
            SP.quat_to_dcm(q / np.linalg.norm(q), R_PA)
            bm0[9:12] = R_PA.T @ self.dpar[D_GA:D_GA + 3]
        self.xr = mechanism_rest_state(self.mech, bm0)
        if self.initial_mechanism_state is not None:
            xr0 = np.asarray(self.initial_mechanism_state, dtype=np.float64)
            if xr0.shape != self.xr.shape or not np.all(np.isfinite(xr0)):
                raise ValueError(f"mechanism_state must be {self.xr.shape[0]} finite numbers (this mechanism's "
                                 f"state), got shape {xr0.shape}")
            self.xr[:] = xr0
        nx = self.xr.shape[0]
        self.kr = np.zeros((4, nx))
        self.rw = np.zeros(rosw_scratch_len(self.ns, nx))
        self.xs = np.zeros((2, self.ns))
        self.xrs = np.zeros(nx)
        head = {"t": 1, "w_P": 6, "rel_pose": 7, "rel_twist": 6, "x": 2 * self.ns, "captured": 1,
                "penetration": 1, "contacts": 1}
        if self.mech_kind == KIND_TREE:
            self.fields = {**head, "joint_state": nx, "joint_force": nx // 2, "base_wrench": 6,
                           "energy_absorbed": 1, "phase": 1}
        else:
            self.fields = {**head, "ring_state": 12, "stroke": self.mech.nl, "base_wrench": 6,
                           "energy_absorbed": 1, "phase": 1}

    def _layout(self) -> None:
        off = 0
        self.offsets = {}
        for n, s in self.fields.items():
            self.offsets[n] = off
            off += s
        self.width = off
        self.lay = np.array([self.offsets[n] for n in self.fields], dtype=np.int64)
        self.rows2 = np.zeros((2, self.width))

    # ------------------------------------------------------------------ running
    @property
    def t(self) -> float:
        return float(run_clock(self.dpar, self.istate, self.stats))

    @property
    def ended(self) -> bool:
        return int(self.istate[J_END]) != END_NONE

    def advance_rows(self, buf: np.ndarray) -> int:
        """Integrate up to ``len(buf)`` log periods, one row each; returns the rows written."""
        return int(self._rows(buf))

    def _rows_mechanism(self, buf: np.ndarray) -> int:
        pk = self.packed
        mech = self.mech
        n = digital_run(buf.shape[0], self.dpar, self.sc.par, self.sc.env, self.sc.x, self.xr, mech.params,
                        mech.workspace, mech.out, self.bm, self.cw, self.bwp, self.w_in, self.xdot, self.sc.ws.ws,
                        self.sc.ws.rel, self.rel13, self.kin, pk.feat, self.featP, pk.pairs, pk.mat, pk.lat,
                        self.cst, self.cst_out, self.cst_tmp, self.rec, self.wrench_P, self.wrench_links,
                        self.latch_p, self.info, self.info_f, self.Rl, self.cscr, self.link_pose, self.link_twist,
                        self.aC, self.R_PE, self.kx, self.kr, self.xs, self.xrs, self.bwp0, self.k4, self.xt4,
                        self.zero_w, self.rw, self.rows2,
                        self.istate, self.stats, self.ev, self.evst, buf, self.lay)
        self._drain_events()
        return n

    def _rows_snare(self, buf: np.ndarray) -> int:
        n = grapple_run(buf.shape[0], self.dpar, self.sc.par[0], self.gp, self.gs, self.go, self.sc.x, self.w_in,
                        self.k4, self.xt4, self.sc.ws.ws, self.sc.ws.rel, self.kin, self.istate,
                        self.stats, buf, self.lay)
        if self.stats[ST_FIRST] >= 0.0 and not self.events:
            t = float(self.stats[ST_FIRST])
            self.events += [(t, "first_contact"), (t, "soft_capture")]
            self.event_details += [(t, "first_contact", self.kind.first_contact),
                                   (t, "soft_capture", self.kind.first_contact)]
        return n

    def _rows_rod(self, buf: np.ndarray) -> int:
        n = rod_run(buf.shape[0], self.dpar, self.sc.par, self.sc.env, self.rp, self.sc.x, self.w_in, self.k4, self.xt4,
                    self.sc.ws.ws, self.sc.ws.rel, self.rel13, self.ro, self.tmp, self.istate, self.stats, buf,
                    self.lay)
        if self.stats[ST_FIRST] >= 0.0 and not self.events:
            self.events.append((float(self.stats[ST_FIRST]), "first_contact"))
            self.event_details.append((float(self.stats[ST_FIRST]), "first_contact", self.kind.first_contact))
        return n

    def _drain_events(self) -> None:
        n = int(self.istate[J_NEV])
        pk = self.packed
        for k in range(self._ev_read, min(n, EV_MAX)):
            t, code, detail, value = self.ev[k]
            code = int(code)
            name = EVENT_CODE_NAMES.get(code, str(code))
            if code == K.EV_FIRST_CONTACT:
                det = pk.contact_name(int(detail)) if detail >= 0 else ""
            elif code in (K.EV_LATCH_DEFLECTED, K.EV_LATCH_ENGAGED, K.EV_SENSOR):
                det = pk.latch_names[int(detail)]
            elif code == EV_PENETRATION:
                det = (f"contact pair {pk.contact_name(int(detail))!r}: penetration {value * 1e3:.3f} mm exceeds "
                       f"the limit")
            else:
                det = ""
            self.events.append((float(t), name))
            self.event_details.append((float(t), name, det))
        self._ev_read = n

    def run(self, log_path: str | Path | None = None, header: dict | None = None, block_rows: int = 1000,
            on_rows=None) -> DigitalResult:
        """Integrate to the end criteria; write the run log when ``log_path`` is given;
        ``on_rows(rows)`` (optional) sees every block of log rows (an (n, width) array)."""
        t_cpu = time.process_time()
        buf = np.zeros((block_rows, self.width))
        writer = None
        if log_path is not None:
            log_path = Path(log_path)
            log_path.parent.mkdir(parents=True, exist_ok=True)
            hdr = {"case": self.case.source or self.case.name, "case_digest": self.case.digest, "kind": "digital", "model": self.model,
                   "integrator": self.integrator, "dt_s": self.dt, "log_period_s": self.spr * self.dt,
                   "config": {"emulator": str(self.emu.file) if self.emu.file else None,
                              "mechanism": str(self.emu.mechanism_path) if self.kind.has_mechanism else None,
                              "interface": str(self.emu.interface_path) if self.kind.has_mechanism else None,
                              "rod": vars(self.emu.rod) if self.emu.rod is not None and self.kind.world_model == MODEL_ROD
                              else None,
                              "grapple": vars(self.emu.grapple) if self.kind.world_model == MODEL_GRAPPLE else None},
                   "stand_conditions": bool(self.dpar[D_HILC] != 0.0),
                   "gravity_P": [float(v) for v in self.dpar[D_GA:D_GA + 3]],
                   "mechanism_state": ("given" if self.initial_mechanism_state is not None else "rest")
                   if self.kind.has_mechanism else None}
            hdr.update(header or {})
            writer = RunLogWriter(log_path, self.fields, header=hdr, threaded=False,
                                  capacity=max(1 << 14, 2 * block_rows), flush_interval_s=0.1)
        try:
            while not self.ended:
                n = self.advance_rows(buf)
                if writer is not None:
                    for i in range(n):
                        writer.staging[:] = buf[i]
                        writer.commit()
                    writer.flush()
                if on_rows is not None and n:
                    on_rows(buf[:n])
                if n == 0 and not self.ended:
                    raise RuntimeError("digital run made no progress")
            if writer is not None:
                for t, name, det in self.event_details:
                    writer.event(name, t=t, detail=det)
                writer.event("end", t=self.t, reason=END_NAMES.get(int(self.istate[J_END]), "?"))
        finally:
            if writer is not None:
                writer.close()
        cpu = time.process_time() - t_cpu
        return self.result(log_path, cpu)

    def result(self, log_path=None, cpu_s: float = 0.0) -> DigitalResult:
        s = self.stats
        end = int(self.istate[J_END])
        msg = ""
        if end == END_MECHANISM:
            msg = (str(mech_error(self.mech, int(self.istate[J_STATUS]))) if self.kind.has_mechanism
                   else "the arm's mass matrix is not positive definite (the berthing flight diverged)")
        elif end == END_DIVERGED:
            msg = (f"the state stopped being finite at t = {self.t:.6f} s even at the physics step (the "
                   f"integration diverged; the log ends at the last finite state)")
        elif end == END_PENETRATION:
            pens = [d for (_, n, d) in self.event_details if n == "penetration_limit"]
            msg = pens[-1] if pens else "penetration limit exceeded"
        rel = self.sc.relative()
        if self.kind.world_model != MODEL_ROD:          # a mechanism's or the snare's first-contact event
            first = next((t for t, n in self.events if n == "first_contact"), None)
        else:
            first = float(s[ST_FIRST]) if s[ST_FIRST] >= 0.0 else None
        return DigitalResult(
            case=self.case.name, model=self.model, captured=bool(s[ST_TCAP] >= 0.0),
            time_to_capture_s=float(s[ST_TCAP]) if s[ST_TCAP] >= 0.0 else None,
            peak_force_n=float(s[ST_PEAKF]), peak_moment_nm=float(s[ST_PEAKM]), max_penetration_m=float(s[ST_MAXPEN]),
            energy_absorbed_j=float(s[ST_EABS]), max_excursion_m=float(s[ST_MAXEXC]), first_contact_s=first,
            end_reason=END_NAMES.get(end, "running"), t_end_s=self.t,
            rel_velocity_end_mps=[float(v) for v in rel[S.REL_V:S.REL_V + 3]], events=list(self.events),
            log_path=Path(log_path) if log_path is not None else None, cpu_s=cpu_s, steps=int(self.istate[J_STEPS]),
            fine_steps=int(self.istate[J_FINE_STEPS]), evaluations=int(self.istate[J_EVALS]), integrator=self.integrator, dt_s=self.dt, message=msg)


def stand_gravity_P(stand, emu: EmulatorConfig | None = None) -> np.ndarray:
    """The stand's gravity in the passive unit's frame P (m/s^2), as the emulated stand has it
    (``rt.stand.frames.gravity_in_P``; -g x_P on the default stand, whose passive unit hangs
    above the platform with x_P up). In A it follows the platform's attitude, i.e. the relative
    attitude: a 1 deg misalignment puts 0.17 m/s^2 across the mechanism."""
    return gravity_in_P(stand, emu.gravity_m_per_s2 if emu is not None else 9.80665)


def stand_rest_gravity_A(stand, emu: EmulatorConfig | None = None) -> np.ndarray:
    """The stand's gravity in A at the platform's home pose (m/s^2): what the mechanism comes to
    rest under when the emulated stand resets (``StandWorld.reset`` at home), before the arming
    move tilts it to the case's initial attitude (``R_AW [0, 0, -g]``; -g x_A on the default stand)."""
    home = np.asarray(stand.hexapod.home, dtype=np.float64)
    R_BT = np.empty((3, 3))
    SP.quat_to_dcm(home[3:7] / np.linalg.norm(home[3:7]), R_BT)
    _, R_PA = active_in_passive(stand, home[:3], R_BT)
    return R_PA.T @ stand_gravity_P(stand, emu)


def stand_conditions(stand, emu: EmulatorConfig | None = None) -> dict:
    """Keyword arguments of :class:`DigitalSim` for the stand's conditions: the stand's 1 g on
    the mechanism (fixed in P; the mechanism at rest under it at the platform's home pose, as the
    emulated stand resets it), the HIL coupling (the controller's model of the vehicles' load) and,
    for a docking mechanism, the emulated stand's own integrator at its physics step (so that the
    difference between a HIL run and this reference is the loop's, not the discretisation's)."""
    return {"gravity_P": stand_gravity_P(stand, emu), "rest_gravity_A": stand_rest_gravity_A(stand, emu),
            "hil_coupling": True, "stand_integrator": True}


def simulate(case, stand=None, emu=None, log_path=None, **kw) -> DigitalResult:
    """Run the all-digital reference of ``case`` (a Case or a path) to its end criteria.

    ``stand`` (optional) only goes into the log header; ``emu`` (EmulatorConfig or path) supplies
    the physics step, integrator and presets; ``log_path`` writes the run log (rt.record.runlog format).
    Keyword arguments go to :class:`DigitalSim` (``dt``, ``integrator``, ``log_rate_hz``,
    ``coarse``, ``coarse_dt``, ``gap_margin_m``, ``duration_s``, ``gravity_P``, ``rest_gravity_A``, ``hil_coupling``)."""
    extra = kw.pop("header", None) or {}
    sim = DigitalSim(case, emu, **kw)
    header = {"stand": str(Path(stand.file).resolve()) if stand is not None and stand.file else None, **extra}
    return sim.run(log_path, header=header)


__all__ = ["DigitalSim", "DigitalResult", "simulate", "stand_gravity_P", "stand_rest_gravity_A", "stand_conditions", "LOG_FIELDS_MECH", "LOG_FIELDS_ROD", "END_NAMES"]
