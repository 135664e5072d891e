"""The emulated stand world: the physics of the docking test stand with no wire protocol
(issue 7 item 2; docs/models/world.md).

* The hexapod (``sim_stand.platform_model``: per-actuator servo, transport delay, limits;
  geometry ``stand.hexapod``) carries the active docking unit A rigidly at
  ``stand.active_mount`` (A in T). The top's pose comes from forward kinematics, its twist from
  ``J^-1 L'`` and its acceleration from ``J^-1 (L'' - quadratic terms)`` (exact for the
  actuators' motion, docs/models/world.md §2).
* The docking mechanism (``sim_stand.mechanism``, [Golubev & Yaskevich]) has its base frame 0 = A.
  Its base motion ``[a_0, omega_0, eps_0, g_0]`` (frame 0, the transport terms
  of [Yaskevich 2018a, modified CRBA]) comes from the platform:
  ``a_0 = R_0B (a_T + eps x r + omega x (omega x r))`` with ``r = R_BT p_TA`` etc.; the stand is in
  1 g along -z of the lab frame W, so ``g_0 = R_0W [0, 0, -g]``.
* The passive unit P is fixed in W at ``stand.passive_mount``; the contacts and latches between
  the mechanism's ring (buffer link E = the ring frame R of the mechanism config) and P come
  from ``sim_stand.contact`` ([Yaskevich 2018b]).
* Or, with ``emu.model = "elastic_rod"``, no mechanism: a calibration rod (``sim_stand.rod``)
  between the active unit, rigid on the top, and the passive face.
* Or, for a berthing case (``emu.model = "grapple"``): the end effector's capture tool A rigid
  on the top, the grapple fixture P on the measuring platform, the snare's capture contact
  between them (``sim_stand.grapple``).

Which of these, and which mechanism, is the emulator config's kind (``sim_stand.mechanism_kinds``:
the compiled step's model code ``W_MODEL``, the mechanism slot's ``W_KIND``).

Integration (``emu.integrator``): ``semi_implicit_euler`` (one model evaluation per step:
velocities from the accelerations at the start of the step, then positions from the new
velocities) or ``rk4`` (the base pose at the stage times interpolated between the platform's
states at the ends of the step). Either way the contact kernel's latch states are committed
once per step, at the step's end state. One compiled call integrates a whole
:meth:`StandWorld.advance` (every physics step of one controller period).

Shared kernels (also used by the all-digital reference ``sim_stand.digital``): the kinematic
record ``kin`` of A in P (``K_*``, defined in ``sim_stand.kin``), :func:`dock_base_motion`,
:func:`record_events`, :func:`step_stats`; the mechanism slot (either a parallel mechanism or a
tree) is ``sim_stand.dock_mechanism``.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from numba import njit

from rt.stand import hexapod as HX
from rt.stand.frames import base_in_passive, gravity_in_P
from rt.jit import KERNEL
from rt.dynamics import spatial as SP
from rt.config.stand import Stand
from sim_stand.contact import build_interface, load_interface
from sim_stand.contact import kernel as K
from sim_stand.contact.model import EVENT_NAMES, latch_state_names
from sim_stand.kin import K_A, K_E, K_G, K_P, K_R, K_V, K_VP, K_W, K_WP, KIN_LEN  # the kinematic record of A in P
from sim_stand.dock_mechanism import (dock_contact, load_dock_mechanism, mech_absorbed_power,
                                     mech_contact, mech_derivatives, mech_error, mech_sie_update,
                                     mechanism_rest_state, ring_link_state, sie_ring_update)
from sim_stand.platform_model import FAULT_STROKE, FAULT_VELOCITY, PP_INTERP, PlatformModel, PlatformReadings, servo_step
from sim_stand.mechanism_kinds import MODEL_GRAPPLE, MODEL_MECH, MODEL_ROD, by_world_model, kind_of
from sim_stand.grapple import GO_D, GO_LEN, GO_POW, GP_LEN, GS_CAP, GS_LEN, grapple_capture, grapple_eval
from sim_stand.rod import RO_DELTA, RO_FORCE, RO_LEN, RO_RATE, R_C, rod_eval
from sim_stand.world_config import EmulatorConfig, load_emulator

# allocation-free kernels: no NRT reference counting (rt/jit.py; ~15 % of the digital case's time)
_JIT = dict(KERNEL, error_model="numpy")

# ------------------------------------------------------------------ world parameters (float64)
W_DT = 0
W_INTEG = 1    # 0 semi-implicit Euler, 1 RK4
W_MODEL = 2    # the kind's world model: MODEL_MECH, MODEL_ROD, MODEL_GRAPPLE (sim_stand.mechanism_kinds)
W_GP = 3       # gravity in P (3)
W_PPB = 6      # p_PB_P: B's origin in P (3)
W_RPB = 9      # R_PB (9)
W_PTA = 18     # p_TA_T (3)
W_RTA = 21     # R_TA (9)
W_COM = 30     # ring centre of mass in the ring frame R = E (3)
W_HTOL = 33    # forward-kinematics tolerance (m)
W_HMAXIT = 34
W_TOP0 = 35    # top position at reset (3)
W_KIND = 38    # mechanism slot code: KIND_PARALLEL, KIND_TREE (sim_stand.mechanism_kinds)
W_LEN = 40
INTEG_SIE, INTEG_RK4 = 0, 1

# integer state
I_HEAD = 0     # platform delay-ring head
I_FAULT = 1    # platform fault bits (FAULT_STROKE, FAULT_VELOCITY, FAULT_FK)
I_NEV = 2      # events recorded (total, may exceed the buffer)
I_PEN = 3      # penetration limit currently exceeded
I_STEPS = 4    # physics steps since reset
I_STATUS = 5   # mechanism status of the last evaluation (0 ok)
I_CONTACT = 6  # rod: in contact
I_LEN = 8
FAULT_FK = 4   # forward kinematics failed (the pose was kept)

# statistics (float64)
ST_T = 0
ST_PEAKF = 1
ST_PEAKM = 2
ST_MAXPEN = 3
ST_EABS = 4
ST_TCAP = 5    # -1: not captured
ST_MAXEXC = 6
ST_POW = 7     # dissipated power at the last evaluation
ST_PEN = 8     # max class-1 penetration at the last evaluation
ST_LEN = 10

# events: rows [t, code, detail, value]; codes 1..16 = contact kernel bits (EVENT_NAMES)
EV_PENETRATION = 32
EV_PLATFORM_FAULT = 64
EV_MAX = 1024
EVENT_CODE_NAMES = {**EVENT_NAMES, EV_PENETRATION: "penetration_limit", EV_PLATFORM_FAULT: "platform_fault"}


# ====================================================================== shared kernels
@njit(**_JIT)
def dock_base_motion(kin, bm):
    """The mechanism's base motion ``[a_0, omega_0, eps_0, g_0]`` in frame 0 = A from A's
    absolute kinematics in P ([Yaskevich 2018a, modified CRBA]; gravity zero in orbit).

    Parameters
    ----------
    kin : float64[KIN_LEN]
        Kinematic record of A in P (``sim_stand.kin`` ``K_*``): DCM R_PA, A's absolute
        acceleration (m/s^2), angular velocity (rad/s) and angular acceleration (rad/s^2), and
        gravity (m/s^2), P components. Read only.
    bm : float64[12]
        Output: ``[a_0 (m/s^2), omega_0 (rad/s), eps_0 (rad/s^2), g_0 (m/s^2)]``, frame 0 = A.
    """
    R = kin[K_R:K_R + 9]
    for blk in range(4):
        src = K_A if blk == 0 else (K_W if blk == 1 else (K_E if blk == 2 else K_G))
        x = kin[src]
        y = kin[src + 1]
        z = kin[src + 2]
        for i in range(3):
            bm[3 * blk + i] = R[i] * x + R[3 + i] * y + R[6 + i] * z


@njit(**_JIT)
def max_class1_penetration(rec, n):
    """The deepest penetration of the class-1 contacts among the first ``n`` contact records
    (m; 0.0 when there is none).

    Parameters
    ----------
    rec : float64[max_contacts, CW]
        Contact records of the last evaluation (``sim_stand.contact.kernel`` ``C_*``).
    n : int
        Contacts found by that evaluation (``info[2]``); rows beyond ``rec``'s are not read.
    """
    m = 0.0
    for k in range(min(n, rec.shape[0])):
        if rec[k, K.C_CLASS] == 1.0 and rec[k, K.C_PEN] > m:
            m = rec[k, K.C_PEN]
    return m


@njit(**_JIT)
def _event(ev, istate, t, code, detail, value):
    k = istate[I_NEV]
    if k < ev.shape[0]:
        ev[k, 0] = t
        ev[k, 1] = code
        ev[k, 2] = detail
        ev[k, 3] = value
    istate[I_NEV] = k + 1


@njit(**_JIT)
def record_events(t, lat, cst_in, cst_out, info, info_f, rec, ev, istate):
    """Events of a committed contact evaluation (the same rules as ContactModel.commit), the
    penetration-limit episodes; then the new latch states become current.

    Parameters
    ----------
    t : float
        Time of the evaluation (s), stamped on the events.
    lat : float64[n_lat, LW]
        Latch and sensor rows (``sim_stand.contact.kernel`` ``L_*``).
    cst_in : int64[S_LATCH0 + n_lat]
        The interface state before the evaluation; overwritten with ``cst_out`` on return.
    cst_out : int64[S_LATCH0 + n_lat]
        The interface state the evaluation produced.
    info : int64[4]
        The evaluation's [status bits, offending pair, contacts found, event bits].
    info_f : float64[2]
        The evaluation's [offending penetration (m), its limit (m)].
    rec : float64[max_contacts, CW]
        The evaluation's contact records; the first one's pair names the first contact.
    ev : float64[EV_MAX, 4]
        Output: event rows ``[t (s), code, detail, value]``, appended at ``istate[I_NEV]``.
    istate : int64[I_LEN]
        Integer state: the event count ``I_NEV`` and the penetration flag ``I_PEN`` are updated.
    """
    bits = info[3]
    if bits != 0:
        if bits & K.EV_FIRST_CONTACT:
            _event(ev, istate, t, K.EV_FIRST_CONTACT, rec[0, K.C_PAIR] if info[2] > 0 else -1.0, 0.0)
        for l in range(lat.shape[0]):
            prev = cst_in[K.S_LATCH0 + l]
            new = cst_out[K.S_LATCH0 + l]
            sensor = lat[l, K.L_KIND] == 1.0
            if (bits & K.EV_LATCH_DEFLECTED) and not sensor and prev == K.LAT_FREE and (
                    new == K.LAT_DEFLECTED or new == K.LAT_BOTTOMED):
                _event(ev, istate, t, K.EV_LATCH_DEFLECTED, l, 0.0)
            if (bits & K.EV_LATCH_ENGAGED) and not sensor and new == K.LAT_ENGAGED and prev != K.LAT_ENGAGED:
                _event(ev, istate, t, K.EV_LATCH_ENGAGED, l, 0.0)
            if (bits & K.EV_SENSOR) and sensor and new == K.SEN_TRIGGERED and prev != K.SEN_TRIGGERED:
                _event(ev, istate, t, K.EV_SENSOR, l, 0.0)
        if bits & K.EV_SOFT_CAPTURE:
            _event(ev, istate, t, K.EV_SOFT_CAPTURE, -1.0, 0.0)
    if info[0] & K.ST_PENETRATION:
        if istate[I_PEN] == 0:
            _event(ev, istate, t, EV_PENETRATION, info[1], info_f[0])
        istate[I_PEN] = 1
    else:
        istate[I_PEN] = 0
    for i in range(cst_in.shape[0]):
        cst_in[i] = cst_out[i]


# ====================================================================== the stand's platform
@njit(**_JIT)
def top_rates(base, top, pose, Ld, Ldd, twist, acc, J, J2, b6, Ltmp):
    """Twist ``[v; omega]`` (B) of the top from the actuator rates, ``J twist = L'``, and its
    acceleration from ``J [a; eps] = L'' - u . (omega x (omega x r)) - (|l'|^2 - L'^2) / L``
    (the second derivative of L_i = |p + R t_i - b_i|). Returns False if J is singular.

    Parameters
    ----------
    base : float64[6, 3]
        Hexapod joint centres on the base, B components (m).
    top : float64[6, 3]
        Hexapod joint centres on the top, T components (m).
    pose : float64[7]
        Top pose ``[p_BT_B (m), q_BT]``.
    Ld : float64[6]
        Actuator rates (m/s).
    Ldd : float64[6]
        Actuator accelerations (m/s^2).
    twist : float64[6]
        Output: ``[v (m/s); omega (rad/s)]`` of the top, B components.
    acc : float64[6]
        Output: ``[a (m/s^2); eps (rad/s^2)]`` of the top, B components.
    J : float64[6, 6]
        Output: the hexapod Jacobian at ``pose`` (``rt.stand.hexapod``).
    J2 : float64[6, 6]
        Scratch: a copy of J for the in-place solves.
    b6 : float64[6]
        Scratch: the right-hand sides.
    Ltmp : float64[6]
        Output: the leg lengths at ``pose`` (m).
    """
    HX.inverse(base, top, pose, Ltmp, J)
    for i in range(6):
        b6[i] = Ld[i]
        for j in range(6):
            J2[i, j] = J[i, j]
    if not HX.solve6(J2, b6, twist):
        return False
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = HX.pose_dcm(pose)
    vx, vy, vz = twist[0], twist[1], twist[2]
    wx, wy, wz = twist[3], twist[4], twist[5]
    for i in range(6):
        tx, ty, tz = top[i, 0], top[i, 1], top[i, 2]
        rx = r00 * tx + r01 * ty + r02 * tz
        ry = r10 * tx + r11 * ty + r12 * tz
        rz = r20 * tx + r21 * ty + r22 * tz
        ux, uy, uz = J[i, 0], J[i, 1], J[i, 2]
        # omega x (omega x r)
        cx = wy * rz - wz * ry
        cy = wz * rx - wx * rz
        cz = wx * ry - wy * rx
        qx_ = wy * cz - wz * cy
        qy_ = wz * cx - wx * cz
        qz_ = wx * cy - wy * cx
        lx = vx + cx
        ly = vy + cy
        lz = vz + cz
        Lr = ux * lx + uy * ly + uz * lz
        b6[i] = Ldd[i] - (ux * qx_ + uy * qy_ + uz * qz_) - (lx * lx + ly * ly + lz * lz - Lr * Lr) / Ltmp[i]
        for j in range(6):
            J2[i, j] = J[i, j]
    return HX.solve6(J2, b6, acc)


@njit(**_JIT)
def platform_kin(wpar, pose, twist, acc, kin):
    """A's absolute kinematics in P (the record ``K_*``) from the top's pose, twist and
    acceleration in B (A rides on T at p_TA_T, R_TA; B and P are fixed in the lab W):
    p_PA = p_PB + R_PB (p_BT + r), r = R_BT p_TA; R_PA = R_PB R_BT R_TA;
    v_A = R_PB (v_T + w x r); a_A = R_PB (a_T + eps x r + w x (w x r)); w, eps: R_PB w, R_PB eps.

    Parameters
    ----------
    wpar : float64[W_LEN]
        World parameters (``W_*``); read here: gravity in P ``W_GP`` (m/s^2), B's origin in P
        ``W_PPB`` (m) and R_PB ``W_RPB``, A's mount on T ``W_PTA`` (m) and R_TA ``W_RTA``.
    pose : float64[7]
        Top pose ``[p_BT_B (m), q_BT]``.
    twist : float64[6]
        Top twist ``[v (m/s); omega (rad/s)]``, B components.
    acc : float64[6]
        Top acceleration ``[a (m/s^2); eps (rad/s^2)]``, B components.
    kin : float64[KIN_LEN]
        Output: the kinematic record of A in P (``sim_stand.kin`` ``K_*``); P's own velocities
        are zero (fixed in the lab).
    """
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = HX.pose_dcm(pose)    # R_BT
    pta = wpar[W_PTA:W_PTA + 3]
    rta = wpar[W_RTA:W_RTA + 9]
    rpb = wpar[W_RPB:W_RPB + 9]
    r0 = b00 * pta[0] + b01 * pta[1] + b02 * pta[2]
    r1 = b10 * pta[0] + b11 * pta[1] + b12 * pta[2]
    r2 = b20 * pta[0] + b21 * pta[1] + b22 * pta[2]
    wx, wy, wz = twist[3], twist[4], twist[5]
    ex, ey, ez = acc[3], acc[4], acc[5]
    cx = wy * r2 - wz * r1
    cy = wz * r0 - wx * r2
    cz = wx * r1 - wy * r0
    vx = twist[0] + cx
    vy = twist[1] + cy
    vz = twist[2] + cz
    ax = acc[0] + ey * r2 - ez * r1 + wy * cz - wz * cy
    ay = acc[1] + ez * r0 - ex * r2 + wz * cx - wx * cz
    az = acc[2] + ex * r1 - ey * r0 + wx * cy - wy * cx
    pbx = pose[0] + r0
    pby = pose[1] + r1
    pbz = pose[2] + r2
    for j in range(3):
        # column j of R_BA = R_BT R_TA
        c0 = b00 * rta[j] + b01 * rta[3 + j] + b02 * rta[6 + j]
        c1 = b10 * rta[j] + b11 * rta[3 + j] + b12 * rta[6 + j]
        c2 = b20 * rta[j] + b21 * rta[3 + j] + b22 * rta[6 + j]
        for i in range(3):
            kin[K_R + 3 * i + j] = rpb[3 * i] * c0 + rpb[3 * i + 1] * c1 + rpb[3 * i + 2] * c2
    for i in range(3):
        a = rpb[3 * i]
        b = rpb[3 * i + 1]
        c = rpb[3 * i + 2]
        kin[K_P + i] = wpar[W_PPB + i] + a * pbx + b * pby + c * pbz
        kin[K_V + i] = a * vx + b * vy + c * vz
        kin[K_W + i] = a * wx + b * wy + c * wz
        kin[K_A + i] = a * ax + b * ay + c * az
        kin[K_E + i] = a * ex + b * ey + c * ez
        kin[K_G + i] = wpar[W_GP + i]
        kin[K_VP + i] = 0.0
        kin[K_WP + i] = 0.0


@njit(**_JIT)
def platform_step(wpar, ppar, base, top, L, Ld, Ldd, ring, cmd, pose, pose_g, twist, acc, J, J2, b6, Ltmp, fkw,
                  istate):
    """One physics step of the platform (the semantics of PlatformModel.step): servo with the
    transport delay line, forward kinematics warm-started at the last pose, top twist and
    acceleration. Fault bits accumulate in istate[I_FAULT].

    Parameters
    ----------
    wpar : float64[W_LEN]
        World parameters (``W_*``): physics step (s), integrator, model, gravity in P, B's pose in
        P, A's mount on T, ring centre of mass, forward-kinematics tolerance, top at reset, kind.
    ppar : float64[PP_LEN]
        Platform servo parameters (``sim_stand.platform_model.PlatformParams.pack``).
    base : float64[6, 3]
        Hexapod joint centres on the base, B components (m).
    top : float64[6, 3]
        Hexapod joint centres on the top, T components (m).
    L : float64[6]
        Actuator lengths (m), advanced in place.
    Ld : float64[6]
        Actuator rates (m/s), advanced in place.
    Ldd : float64[6]
        Output: actuator accelerations over the step (m/s^2).
    ring : float64[max(1, ndelay), 6]
        The platform's delay line of commanded lengths (m).
    cmd : float64[6]
        The commanded actuator lengths entering the delay line this step (m).
    pose : float64[7]
        Top pose ``[p_BT_B (m), q_BT]``: the warm start, replaced by the new pose.
    pose_g : float64[7]
        Scratch: the forward kinematics' guess.
    twist : float64[6]
        Output: the top's twist ``[v (m/s); omega (rad/s)]``, B components.
    acc : float64[6]
        Output: the top's acceleration ``[a (m/s^2); eps (rad/s^2)]``, B components.
    J, J2 : float64[6, 6]
        Scratch: the hexapod Jacobian and its copy (:func:`top_rates`).
    b6 : float64[6]
        Scratch (:func:`top_rates`).
    Ltmp : float64[6]
        Scratch: leg lengths at the new pose (m).
    fkw : float64[10, 6]
        Forward-kinematics workspace (``rt.stand.hexapod.fk_workspace``).
    istate : int64[I_LEN]
        Integer state: the delay-ring head ``I_HEAD`` is advanced, fault bits are OR-ed into
        ``I_FAULT``.
    """
    head, f = servo_step(ppar, L, Ld, Ldd, ring, istate[I_HEAD], cmd)
    istate[I_HEAD] = head
    istate[I_FAULT] |= f
    for i in range(7):
        pose_g[i] = pose[i]
    st, _ = HX.forward(base, top, L, pose_g, pose, fkw, wpar[W_HTOL], int(wpar[W_HMAXIT]))
    if st != 0:
        istate[I_FAULT] |= FAULT_FK
    if not top_rates(base, top, pose, Ld, Ldd, twist, acc, J, J2, b6, Ltmp):
        istate[I_FAULT] |= FAULT_FK


# ====================================================================== one world evaluation
@njit(**_JIT)
def _mech_eval(wpar, kin, xr, mp, mw, mout, bm, cw, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P,
               wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, aC, R_PE):
    kind = int(wpar[W_KIND])
    mech_contact(kind, kin, xr, wpar[W_COM:W_COM + 3], mp, mw, feat, featP, pairs, mat, lat, cst_in, cst_out, rec,
                 wrench_P, wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, cw, aC, R_PE)
    dock_base_motion(kin, bm)
    return mech_derivatives(kind, mp, mw, xr, bm, cw, mout)


@njit(**_JIT)
def _interp_kin(k0, k1, km):
    """Mid-step kinematics: the average of the step's end states (second order; R_PA averaged
    element-wise, its non-orthogonality is O(|omega dt|^2) ~ 1e-10)."""
    for i in range(KIN_LEN):
        km[i] = 0.5 * (k0[i] + k1[i])


@njit(**_JIT)
def step_stats(t, wrench_P, pen, power_new, dt, stats, captured):
    """The run statistics ``ST_*`` after a physics step to ``t`` (the emulated world's and the
    digital reference's): peak magnitudes of the force and the moment of the wrench on the
    passive unit (``wrench_P``, P, about P's origin), the penetration now and its maximum, the
    energy absorbed (trapezoid of the absorbed power over the step ``dt``: ``power_new`` at its
    end), the time of capture (the first step with ``captured`` != 0), and ``t``.

    Parameters
    ----------
    t : float
        Time at the step's end (s).
    wrench_P : float64[6]
        Wrench ``[f; m]`` on the passive unit, P components, about P's origin (N, N m).
    pen : float
        The penetration now (m).
    power_new : float
        The power the model absorbs at the step's end (W, >= 0).
    dt : float
        The physics step (s).
    stats : float64[ST_LEN]
        The run statistics (``ST_*``), updated in place.
    captured : int
        Non-zero once the units are captured.
    """
    f, m = SP.wrench_norms(wrench_P)
    if f > stats[ST_PEAKF]:
        stats[ST_PEAKF] = f
    if m > stats[ST_PEAKM]:
        stats[ST_PEAKM] = m
    stats[ST_PEN] = pen
    if pen > stats[ST_MAXPEN]:
        stats[ST_MAXPEN] = pen
    stats[ST_EABS] += 0.5 * dt * (stats[ST_POW] + power_new)
    stats[ST_POW] = power_new
    if captured != 0 and stats[ST_TCAP] < 0.0:
        stats[ST_TCAP] = t
    stats[ST_T] = t


@njit(**_JIT)
def _stats_update(t, wpar, pose, wrench_P, pen, power_new, dt, stats, cst_in):
    """:func:`step_stats` of the stand (captured: the contact state's flag, if it has one) and
    the platform top's largest excursion from its position at reset."""
    step_stats(t, wrench_P, pen, power_new, dt, stats,
               1 if cst_in.shape[0] > K.S_CAPTURED and cst_in[K.S_CAPTURED] != 0 else 0)
    d = math.sqrt((pose[0] - wpar[W_TOP0]) ** 2 + (pose[1] - wpar[W_TOP0 + 1]) ** 2
                  + (pose[2] - wpar[W_TOP0 + 2]) ** 2)
    if d > stats[ST_MAXEXC]:
        stats[ST_MAXEXC] = d


@njit(**_JIT)
def world_advance(nsteps, wpar, rp, ppar, base, top, L, Ld, Ldd, ring, cmd, pose, pose_g, twist, acc, J, J2, b6, Ltmp,
                  fkw, kin0, kin1, kinm, xr, mp, mw, mout, bm, cw, kst, xt, feat, featP, pairs, mat, lat, cst_in,
                  cst_out, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f, Rl, cscr, link_pose,
                  link_twist, aC, R_PE, ro, gp, gs, go, istate, stats, ev, w_hist):
    """``nsteps`` physics steps with the actuator command ``cmd[0]`` (it enters the platform's
    delay line every step): held, or with ``ppar[PP_INTERP]`` interpolated from the last
    advance's command ``cmd[1]`` over the steps (``cmd[2]`` the step's command; ``cmd[1]`` is
    the new command on exit). On entry the model has been evaluated at the current state (its
    derivative is in ``mout``, its kinematics in ``kin0``); on exit likewise at the new state.
    Returns 0, or the mechanism's non-zero status (the state is then that of the failing step).

    Parameters
    ----------
    nsteps : int
        Number of physics steps.
    wpar : float64[W_LEN]
        World parameters (``W_*``), as for :func:`platform_step`.
    rp : float64[ROD_LEN]
        Rod parameters (``sim_stand.rod``; the elastic-rod model).
    ppar, base, top, L, Ld, Ldd, ring : float64 arrays
        The platform: servo parameters, joint centres, actuator lengths and rates (advanced in
        place), accelerations (output) and delay line, as for :func:`platform_step`.
    cmd : float64[3, 6]
        Actuator-length commands (m): this advance's [0], the last advance's [1] (set to [0] on
        exit), scratch for the step's [2].
    pose, pose_g, twist, acc, J, J2, b6, Ltmp, fkw : float64 arrays
        The top's pose (advanced in place), twist and acceleration (output) and the platform's
        scratch, as for :func:`platform_step`.
    kin0 : float64[KIN_LEN]
        A's kinematic record in P at the current state on entry, at the new state on exit.
    kin1, kinm : float64[KIN_LEN]
        Scratch: the record at a step's end, and at its midpoint (RK4).
    xr : float64[12] or float64[2n]
        The mechanism's state, advanced in place (``sim_stand.dock_mechanism`` module docstring,
        "The slot's arrays", as for ``mp`` .. ``cw`` and ``feat`` .. ``R_PE``).
    mp, mw, mout, bm, cw : float64[:]
        The mechanism's parameters, workspace, outputs (of the evaluation at the current state on
        entry, at the new state on exit), base motion and contact wrench (written).
    kst : float64[4, len(xr)]
        Scratch: the RK4 stage derivatives.
    xt : float64[len(xr)]
        Scratch: the RK4 stage state.
    feat, featP : float64[nf, FW]
        The interface's features, and their workspace in P: from here to ``R_PE`` the contact
        evaluation's arrays, passed on to :func:`sim_stand.dock_mechanism.mech_contact`.
    pairs : int64[n_pairs, PW]
        Pair table (``P_*``).
    mat, lat : float64[:, :]
        Materials (``M_*``), latch and sensor rows (``L_*``).
    cst_in : int64[S_LATCH0 + n_lat]
        The committed interface state (contact seen, captured, latches), updated once per step.
    cst_out, cst_tmp : int64[S_LATCH0 + n_lat]
        Scratch: the state of a step's end evaluation before it is committed; the state of the
        RK4 stage evaluations (never committed).
    rec, wrench_P, wrench_links, latch_p : float64 arrays
        Output: the last evaluation's contact records, wrenches and deflections.
    info : int64[4]
        Output: the last evaluation's status and event bits (the events go to ``ev``).
    info_f, Rl, cscr, link_pose, link_twist : float64 arrays
        Output: the last evaluation's penetration and its limit, workspace, the buffer link's
        pose and twist.
    aC, R_PE : float64[3, 3]
        Scratch; output: DCM E -> P, as for :func:`sim_stand.dock_mechanism.mech_contact`.
    ro : float64[RO_LEN]
        Output (rod): penetration (m), its rate (m/s), force (N), contact point (m, P).
    gp : float64[GP_LEN]
        Snare parameters (``sim_stand.grapple``; the grapple model).
    gs : float64[GS_LEN]
        Snare capture state, updated at a capture.
    go : float64[GO_LEN]
        Output (grapple): separation (m), force (N), dissipated power (W).
    istate : int64[I_LEN]
        Integer state (``I_*``): delay-ring head, fault bits, event count, penetration flag,
        step count, mechanism status, rod / snare contact.
    stats : float64[ST_LEN]
        Run statistics (``ST_*``), updated every step.
    ev : float64[EV_MAX, 4]
        Output: event rows ``[t (s), code, detail, value]``, appended at ``istate[I_NEV]``.
    w_hist : float64[nsteps + 1, 6]
        Output: ``wrench_P`` (N, N m) on entry (row 0) and at the end of each step (row s + 1):
        what the emulated sensor samples between the steps (``sim_stand.ft_sensor_model.ft_chain``).
    """
    for i in range(6):
        w_hist[0, i] = wrench_P[i]
    dt = wpar[W_DT]
    model = int(wpar[W_MODEL])
    kind = int(wpar[W_KIND])
    nx = xr.shape[0]
    rk4 = int(wpar[W_INTEG]) == INTEG_RK4
    interp = ppar[PP_INTERP] != 0.0
    for s_ in range(nsteps):
        fault_before = istate[I_FAULT]
        a = (s_ + 1.0) / nsteps if interp else 1.0
        for i in range(6):
            cmd[2, i] = cmd[1, i] + a * (cmd[0, i] - cmd[1, i])
        platform_step(wpar, ppar, base, top, L, Ld, Ldd, ring, cmd[2], pose, pose_g, twist, acc, J, J2, b6, Ltmp, fkw,
                      istate)
        platform_kin(wpar, pose, twist, acc, kin1)
        istate[I_STEPS] += 1
        t = istate[I_STEPS] * dt
        if istate[I_FAULT] != fault_before:
            _event(ev, istate, t, EV_PLATFORM_FAULT, istate[I_FAULT], 0.0)
        if model == MODEL_MECH:
            if not rk4:
                mech_sie_update(kind, xr, mout, dt)
            else:
                for i in range(nx):
                    kst[0, i] = mout[i]
                _interp_kin(kin0, kin1, kinm)
                for s in range(1, 4):
                    h = 0.5 * dt if s < 3 else dt
                    for i in range(nx):
                        xt[i] = xr[i] + h * kst[s - 1, i]
                    st = _mech_eval(wpar, kinm if s < 3 else kin1, xt, mp, mw, mout, bm, cw, feat, featP, pairs,
                                    mat, lat, cst_in, cst_tmp, rec, wrench_P, wrench_links, latch_p, info, info_f,
                                    Rl, cscr, link_pose, link_twist, aC, R_PE)
                    if st != 0:
                        istate[I_STATUS] = st
                        return st
                    for i in range(nx):
                        kst[s, i] = mout[i]
                for i in range(nx):
                    xr[i] += SP.rk4_increment(dt / 6.0, kst[0, i], kst[1, i], kst[2, i], kst[3, i])
            n = _mech_eval(wpar, kin1, xr, mp, mw, mout, bm, cw, feat, featP, pairs, mat, lat, cst_in, cst_out,
                           rec, wrench_P, wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist,
                           aC, R_PE)
            istate[I_STATUS] = n
            if n != 0:
                return n
            ncont = info[2]
            record_events(t, lat, cst_in, cst_out, info, info_f, rec, ev, istate)
            _stats_update(t, wpar, pose, wrench_P, max_class1_penetration(rec, ncont), mech_absorbed_power(kind, mp, mout), dt,
                          stats, cst_in)
        elif model == MODEL_GRAPPLE:
            if grapple_capture(gp, kin1, gs, t):
                istate[I_CONTACT] = 1
                _event(ev, istate, t, K.EV_FIRST_CONTACT, -1.0, 0.0)
                _event(ev, istate, t, K.EV_SOFT_CAPTURE, -1.0, 0.0)
            grapple_eval(gp, kin1, gs, wrench_P, go)
            _stats_update(t, wpar, pose, wrench_P, go[GO_D], go[GO_POW], dt, stats, cst_in)
            if gs[GS_CAP] != 0.0 and stats[ST_TCAP] < 0.0:
                stats[ST_TCAP] = t
        else:
            f = rod_eval(rp, kin1, wrench_P, ro)
            if f > 0.0 and istate[I_CONTACT] == 0:
                istate[I_CONTACT] = 1
                _event(ev, istate, t, K.EV_FIRST_CONTACT, -1.0, 0.0)
            pw = rp[R_C] * ro[RO_RATE] * ro[RO_RATE] if f > 0.0 else 0.0
            _stats_update(t, wpar, pose, wrench_P, ro[RO_DELTA] if ro[RO_DELTA] > 0.0 else 0.0, pw, dt, stats,
                          cst_in)
        for i in range(6):
            w_hist[s_ + 1, i] = wrench_P[i]
        for i in range(KIN_LEN):
            kin0[i] = kin1[i]
    return 0


# ====================================================================== Python shell
def contact_buffers(pk) -> dict:
    """The preallocated arrays of one contact evaluation of a packed interface (inputs, records,
    wrenches, latch state in/out, scratch), shared by the emulated world and the reference."""
    nl = pk.lat.shape[0]
    cst = np.zeros(K.S_LATCH0 + nl, dtype=np.int64)
    return {"featP": pk.feat.copy(), "rec": np.zeros((pk.max_contacts, K.CW)), "wrench_P": np.zeros(6),
            "wrench_links": np.zeros((pk.n_links, 6)), "cst": cst, "cst_out": np.zeros_like(cst),
            "cst_tmp": np.zeros_like(cst), "latch_p": np.zeros(nl), "info": np.zeros(4, dtype=np.int64),
            "info_f": np.zeros(2), "Rl": np.zeros((pk.n_links, 3, 3)), "cscr": np.zeros(K.SCRATCH),
            "link_pose": np.zeros((pk.n_links, 7)), "link_twist": np.zeros((pk.n_links, 6))}


def _q(R: np.ndarray) -> np.ndarray:
    q = np.empty(4)
    SP.dcm_to_quat(np.ascontiguousarray(R, dtype=np.float64), q)
    return q


class StandWorld(PlatformReadings):
    """The emulated stand's physics (module docstring). Interface used by the emulator shell::

        world = StandWorld(stand, emu)         # emu: EmulatorConfig (None: defaults)
        world.reset(top_pose)                  # [p_BT_B, q_BT]; at rest, mechanism at rest, t = 0
        world.advance(cmd_lengths, dt)         # dt = a whole number of physics steps
        world.t, world.wrench_P, world.top_pose, world.top_twist, world.lengths,
        world.platform_fault, world.captured, world.events, world.stats, world.relative_pose_PA()
        world.wrench_hist[:world.hist_steps + 1]   # wrench_P at the last advance's start and steps
    """

    def __init__(self, stand: Stand, emu: EmulatorConfig | str | None = None, mechanism=None):
        """``mechanism``: a parallel mechanism's config (``sim_stand.mechanism.MechanismConfig``)
        instead of the one ``emu`` names (a campaign's dispersed coefficients)."""
        if emu is None or isinstance(emu, (str, bytes)) or hasattr(emu, "__fspath__"):
            emu = load_emulator(emu)
        self.stand = stand
        self.emu = emu
        self.dt = emu.physics_dt_s
        self.model = emu.model
        self.platform = PlatformModel(stand.hexapod, replace(emu.platform, physics_dt_s=self.dt))
        self.base = np.ascontiguousarray(stand.hexapod.base)
        self.top = np.ascontiguousarray(stand.hexapod.top)
        # ---- world parameters
        w = np.zeros(W_LEN)
        w[W_DT] = self.dt
        w[W_INTEG] = INTEG_RK4 if emu.integrator == "rk4" else INTEG_SIE
        w[W_GP:W_GP + 3] = gravity_in_P(stand, emu.gravity_m_per_s2)
        p_PB, R_PB = base_in_passive(stand)
        w[W_PPB:W_PPB + 3] = p_PB
        w[W_RPB:W_RPB + 9] = R_PB.ravel()
        w[W_PTA:W_PTA + 3] = stand.active_mount.p
        w[W_RTA:W_RTA + 9] = np.asarray(stand.active_mount.R).ravel()
        w[W_HTOL] = 1e-13
        w[W_HMAXIT] = 30
        self.wpar = w
        self.rod = emu.rod
        self.rp = (emu.rod.pack() if emu.rod is not None else np.zeros(3))
        # ---- mechanism and contact (allocated for every kind: the rod and the snare leave them unused)
        self.mech, self.mech_kind, com = load_dock_mechanism(emu.mechanism_path, mechanism)
        self.kind = kind_of(emu.model, self.mech_kind)          # sim_stand.mechanism_kinds
        self._reset_contact = by_world_model({MODEL_MECH: self._reset_mechanism, MODEL_ROD: self._reset_rod,
                                              MODEL_GRAPPLE: self._reset_snare}, self.kind,
                                             "the emulated stand (sim_stand.world)")
        w[W_MODEL] = self.kind.world_model
        w[W_KIND] = self.mech_kind
        self.gp = emu.grapple.pack() if self.kind.world_model == MODEL_GRAPPLE else np.zeros(GP_LEN)
        self.gs = np.zeros(GS_LEN)
        self.go = np.zeros(GO_LEN)
        w[W_COM:W_COM + 3] = com
        self.packed = build_interface(load_interface(emu.interface_path))
        pk = self.packed
        vars(self).update(contact_buffers(pk))
        self.xr = self.mech.home_state()
        nx = self.xr.shape[0]
        self.bm = np.zeros(12)
        self.cw = np.zeros(6)
        self.kst = np.zeros((4, nx))
        self.xt = np.zeros(nx)
        # ---- platform scratch
        self.cmd = np.zeros((3, 6))       # this advance's command, the last one's, the step's (world_advance)
        self.pose_g = np.zeros(7)
        self.acc = np.zeros(6)
        self.J = np.zeros((6, 6))
        self.J2 = np.zeros((6, 6))
        self.b6 = np.zeros(6)
        self.Ltmp = np.zeros(6)
        self.fkw = HX.fk_workspace()
        self.kin0 = np.zeros(KIN_LEN)
        self.kin1 = np.zeros(KIN_LEN)
        self.kinm = np.zeros(KIN_LEN)
        self.aC = np.zeros((3, 3))
        self.R_PE = np.zeros((3, 3))
        self.ro = np.zeros(RO_LEN)
        self.istate = np.zeros(I_LEN, dtype=np.int64)
        self.stats_arr = np.zeros(ST_LEN)
        self.ev = np.zeros((EV_MAX, 4))
        # wrench_P at the last advance's start and after each of its steps (the sensor's chain
        # samples between them); sized by the first advance, again only if its length changes
        self.wrench_hist = np.zeros((1, 6))
        self.hist_steps = 0
        self.events: list[tuple[float, str]] = []
        self.event_details: list[tuple[float, str, str]] = []
        self._ev_read = 0
        self.capture_position_P: list | None = None     # A in P at soft capture (m)
        self.reset(stand.hexapod.home.copy())

    # ------------------------------------------------------------------ control
    def reset(self, top_pose) -> None:
        """Platform at rest at ``top_pose`` ([p_BT_B, q_BT]), the mechanism at its static
        equilibrium under the stand's gravity there, no contact state, t = 0."""
        pm = self.platform
        pose = np.asarray(top_pose, dtype=np.float64).copy()
        pose[3:] /= np.linalg.norm(pose[3:])
        pm.reset_to_pose(pose)
        pm.head = 0
        pm.fault = 0
        pm.Ldd[:] = 0.0
        self.istate[:] = 0
        self.stats_arr[:] = 0.0
        self.stats_arr[ST_TCAP] = -1.0
        self.wpar[W_TOP0:W_TOP0 + 3] = pm.pose[:3]
        self.cmd[:, :] = pm.L
        self.acc[:] = 0.0
        platform_kin(self.wpar, pm.pose, pm.twist, self.acc, self.kin0)
        self.kin1[:] = self.kin0
        self.cst[:] = 0
        self.cst_out[:] = 0
        self.events.clear()
        self.event_details.clear()
        self._ev_read = 0
        self.capture_position_P = None
        self.wrench_P[:] = 0.0
        self.ro[:] = 0.0
        self.gs[:] = 0.0
        self.go[:] = 0.0
        self._reset_contact()
        self._drain_events()

    def _reset_mechanism(self) -> None:
        """The mechanism at its static equilibrium on the platform at rest, evaluated."""
        dock_base_motion(self.kin0, self.bm)
        self.xr[:] = mechanism_rest_state(self.mech, self.bm)
        self._evaluate_now()

    def _reset_rod(self) -> None:
        """The rod's force at the reset pose (in contact if it is compressed)."""
        rod_eval(self.rp, self.kin0, self.wrench_P, self.ro)   # P at rest: kin0's K_VP, K_WP are zero
        if self.ro[RO_FORCE] > 0.0:
            self.istate[I_CONTACT] = 1

    def _reset_snare(self) -> None:
        """The snare open (its state cleared by :meth:`reset`): nothing to evaluate."""

    def _evaluate_now(self) -> None:
        """Evaluate the model at the current state and commit (reset, or after a state edit)."""
        st = _mech_eval(self.wpar, self.kin0, self.xr, self.mech.params, self.mech.workspace, self.mech.out, self.bm,
                        self.cw, self.packed.feat, self.featP, self.packed.pairs, self.packed.mat, self.packed.lat,
                        self.cst, self.cst_out, self.rec, self.wrench_P, self.wrench_links, self.latch_p, self.info,
                        self.info_f, self.Rl, self.cscr, self.link_pose, self.link_twist, self.aC, self.R_PE)
        if st != 0:
            raise mech_error(self.mech, st)
        record_events(self.t, self.packed.lat, self.cst, self.cst_out, self.info, self.info_f, self.rec, self.ev,
                      self.istate)
        self.stats_arr[ST_POW] = mech_absorbed_power(self.mech_kind, self.mech.params, self.mech.out)
        pen = max_class1_penetration(self.rec, int(self.info[2]))
        self.stats_arr[ST_PEN] = pen
        self.stats_arr[ST_MAXPEN] = max(self.stats_arr[ST_MAXPEN], pen)
        f = float(np.linalg.norm(self.wrench_P[:3]))
        m = float(np.linalg.norm(self.wrench_P[3:]))
        self.stats_arr[ST_PEAKF] = max(self.stats_arr[ST_PEAKF], f)
        self.stats_arr[ST_PEAKM] = max(self.stats_arr[ST_PEAKM], m)

    def steps_for(self, dt: float) -> int:
        n = int(round(dt / self.dt))
        if n < 1 or abs(n * self.dt - dt) > 1e-9 * max(1.0, dt):
            raise ValueError(f"dt = {dt!r} s is not a whole number of physics steps of {self.dt:g} s")
        return n

    def advance(self, cmd_lengths, dt: float) -> None:
        """Hold the actuator-length command over ``dt`` (a whole number of physics steps; the
        command goes through the platform's delay line) and integrate everything."""
        n = self.steps_for(dt)
        if self.wrench_hist.shape[0] != n + 1:
            self.wrench_hist = np.zeros((n + 1, 6))
        self.hist_steps = n
        self.cmd[0] = cmd_lengths
        pm = self.platform
        self.istate[I_HEAD] = pm.head
        self.istate[I_FAULT] = pm.fault
        mech = self.mech
        pk = self.packed
        st = world_advance(n, self.wpar, self.rp, pm.par, self.base, self.top, pm.L, pm.Ld, pm.Ldd, pm.ring,
                           self.cmd, pm.pose, self.pose_g, pm.twist, self.acc, self.J, self.J2, self.b6, self.Ltmp,
                           self.fkw, self.kin0, self.kin1, self.kinm, self.xr, mech.params, mech.workspace, mech.out,
                           self.bm, self.cw, self.kst, self.xt, pk.feat, self.featP, pk.pairs, pk.mat, pk.lat,
                           self.cst, self.cst_out, self.cst_tmp, self.rec, self.wrench_P, self.wrench_links,
                           self.latch_p, self.info, self.info_f, self.Rl, self.cscr, self.link_pose, self.link_twist,
                           self.aC, self.R_PE, self.ro, self.gp, self.gs, self.go, self.istate, self.stats_arr,
                           self.ev, self.wrench_hist)
        self.cmd[1] = self.cmd[0]
        pm.head = int(self.istate[I_HEAD])
        pm.fault = int(self.istate[I_FAULT])
        pm.accel[:] = self.acc
        self._drain_events()
        if st != 0:
            raise mech_error(mech, st)

    def _drain_events(self) -> None:
        n = int(self.istate[I_NEV])
        for k in range(self._ev_read, min(n, EV_MAX)):
            t, code, detail, value = self.ev[k]
            if int(code) == K.EV_SOFT_CAPTURE and self.capture_position_P is None:
                # where A was in P at the capture: back from the period's end at its velocity
                k0 = self.kin0
                self.capture_position_P = [float(k0[K_P + i] - k0[K_V + i] * (self.t - t)) for i in range(3)]
            name = EVENT_CODE_NAMES.get(int(code), str(int(code)))
            self.events.append((float(t), name))
            self.event_details.append((float(t), name, self._detail(int(code), detail, value)))
        self._ev_read = n

    def _detail(self, code: int, detail: float, value: float) -> str:
        pk = self.packed
        if code == K.EV_FIRST_CONTACT:
            if self.kind.first_contact:
                return self.kind.first_contact
            return pk.contact_name(int(detail)) if detail >= 0 else ""
        if code in (K.EV_LATCH_DEFLECTED, K.EV_LATCH_ENGAGED, K.EV_SENSOR):
            return pk.latch_names[int(detail)]
        if code == K.EV_SOFT_CAPTURE:
            return "all latches engaged"
        if code == EV_PENETRATION:
            return f"contact pair {pk.contact_name(int(detail))!r}: penetration {value * 1e3:.3f} mm exceeds its limit"
        if code == EV_PLATFORM_FAULT:
            bits = int(detail)
            names = [n for b, n in ((FAULT_STROKE, "stroke"), (FAULT_VELOCITY, "velocity"), (FAULT_FK, "kinematics"))
                     if bits & b]
            return ", ".join(names)
        return ""

    # ------------------------------------------------------------------ state
    @property
    def t(self) -> float:
        return float(self.istate[I_STEPS] * self.dt)

    @property
    def top_accel(self) -> np.ndarray:
        return self.acc

    @property
    def captured(self) -> bool:
        if self.kind.world_model == MODEL_GRAPPLE:
            return bool(self.gs[GS_CAP])
        return self.kind.has_mechanism and bool(self.cst[K.S_CAPTURED])

    @property
    def ring_state(self) -> np.ndarray:
        """The mechanism's state: a parallel mechanism's ring [r_C, psi, theta, phi, v_C, omega_C]
        relative to frame 0 = A (mechanism layout), or a tree's [p, pd]."""
        return self.xr

    @property
    def base_motion(self) -> np.ndarray:
        """[a_0, omega_0, eps_0, g_0] (frame 0) of the last evaluation."""
        return self.bm

    @property
    def kinematics(self) -> np.ndarray:
        """A's absolute kinematics in P (``K_*`` layout) at the current state."""
        return self.kin0

    @property
    def contact_records(self) -> np.ndarray:
        return self.rec[:min(int(self.info[2]), len(self.rec))]

    def latch_states(self) -> list[str]:
        return latch_state_names(self.packed, self.cst)

    def input_word(self, inputs) -> int:
        """The mechanism's status signals as the stand wires them to the platform controller's
        digital inputs (``inputs``: rt.config.stand.MechanismInputs): soft capture, and each
        capture latch closed (engaged) in the interface's latch order (capture sensors are not
        latches). What the emulator's STATUS carries."""
        if not inputs.wired:
            return 0
        return inputs.word(self.captured, self.latches_closed())

    def latches_closed(self) -> tuple[bool, ...]:
        """Each capture latch closed (engaged), in the interface's latch order (capture sensors
        are not latches); () for a model without latches."""
        if not self.kind.has_mechanism:
            return ()
        lat = self.packed.lat
        return tuple(bool(self.cst[K.S_LATCH0 + l] == K.LAT_ENGAGED) for l in range(lat.shape[0])
                     if lat[l, K.L_KIND] == 0.0)

    def release_mechanism(self, on: bool) -> bool:
        """The mechanism's release output (its control unit's coil; the controller's UNDOCK):
        while on, every capture latch is held open (``LAT_RELEASED``: it touches nothing and never
        engages, so the units are free to part) and the soft capture ends; once off, a held-open
        latch is free again. Returns whether the latches changed. The emulator's shell, once per
        period, between two advances (never inside the compiled step)."""
        if not self.kind.has_mechanism:
            return False
        lat = self.packed.lat
        changed = False
        for l in range(lat.shape[0]):
            if lat[l, K.L_KIND] != 0.0:
                continue
            i = K.S_LATCH0 + l
            cur = self.cst[i]
            new = K.LAT_RELEASED if on else (K.LAT_FREE if cur == K.LAT_RELEASED else cur)
            if new != cur:
                self.cst[i] = self.cst_out[i] = new
                changed = True
        if on and self.cst[K.S_CAPTURED]:
            self.cst[K.S_CAPTURED] = self.cst_out[K.S_CAPTURED] = 0
            changed = True
        if changed:
            name = "latches released" if on else "release output cleared"
            self.events.append((self.t, name))
            self.event_details.append((self.t, name, "the mechanism's release output"))
        return changed

    @property
    def stats(self) -> dict:
        s = self.stats_arr
        return {"peak_force_n": float(s[ST_PEAKF]), "peak_moment_nm": float(s[ST_PEAKM]),
                "max_penetration_m": float(s[ST_MAXPEN]), "energy_absorbed_j": float(s[ST_EABS]),
                "time_to_capture_s": float(s[ST_TCAP]) if s[ST_TCAP] >= 0.0 else None,
                "capture_position_m": self.capture_position_P,
                "max_excursion_m": float(s[ST_MAXEXC])}

    def relative_pose_PA(self) -> np.ndarray:
        """Pose of A in P, ``[p_PA_P, q_PA]``, from the platform's current pose and the stand
        geometry (B in W, P in W, A in T)."""
        k = self.kin0
        out = np.empty(7)
        out[:3] = k[K_P:K_P + 3]
        out[3:] = _q(k[K_R:K_R + 9].reshape(3, 3))
        return out


__all__ = ["StandWorld", "EmulatorConfig", "load_emulator", "contact_buffers", "dock_contact", "dock_base_motion",
           "sie_ring_update", "record_events", "ring_link_state", "step_stats", "KIN_LEN"]
