"""Coupling of the measured contact wrench with the spacecraft dynamics, delay compensation, and
the map from the relative pose of the docking units to the motion platform's command
(issue 6 item 4; docs/controller.md).

Per cycle (one compiled call, :func:`coupling_update`):

1. RK4 step of both vehicles under the wrench on the passive unit (P components, moment about
   P's origin), its reaction on the active unit (``rt.dynamics.spacecraft``, ``react = 1``);
2. relative state of A in P: r_DPA, q_PA, rate of r_DPA seen in P, angular velocity of A
   relative to P (P components), and their time derivatives from the dynamics themselves
   (a forward difference of the relative state along the exact state derivative, step ``h``);
3. delay compensation: the pose predicted at ``t + tau``
   ``r(t+tau) = r + v tau + a tau^2/2 [+ j tau^3/6]`` and
   ``q_PA(t+tau) = exp((w tau + alpha tau^2/2 [+ alpha' tau^3/6]) in P) (x) q_PA``;
   ``mode = MODE_PREDICT`` (constant acceleration: exact for a constant contact force) or
   ``MODE_JERK`` (constant jerk: the bracketed terms; :func:`jerk_estimate`); the energy error of the constant-acceleration predictor, ``-pi (w tau)^3 / 12`` of
   the impact energy on a contact of frequency w, drops to O((w tau)^5): docs/validation.md
   §3.3); ``mode = MODE_OFF`` commands the current pose (compensation off). Other compensators
   (Smith predictor, passivity observer/controller) plug in at this point: they consume the
   same relative state and produce the same commanded pose;
4. stand geometry: the platform-top pose in the platform base frame B
   ``T_BT = T_BP . T_PA(pred) . T_AT`` with T_BP the passive unit frame P in B (measuring
   platform fixed on the stand) and T_AT the platform top frame T in A (the active unit is
   mounted on the top).

Output record ``out`` (OUT_LEN): the predicted relative pose, the current relative state and
its rates, the platform-top command (position in B, quaternion q_BT), and the accelerations of
the last two cycles with their count (MODE_JERK's memory: :func:`reset_memory` at the start of
each run), the wrench's share of the acceleration (MODE_JERK's input) and its scratch.

MODE_JERK's jerk is the rate of the *measured wrench's* share of the relative acceleration
(:func:`wrench_share`: the acceleration at the state less the acceleration at the same state
without the wrench), not of the whole: what the wrench does not make -- a flexible arm's or a
mount's modes, the vehicles' own control forces -- is predicted at constant acceleration. The
jerk term exists for the contact's rate (docs/validation.md §3.3); a berthing arm's modes passed
through it commanded the platform's angular acceleration over its limit.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from rt.dynamics import berthing_flight as BF
from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from rt.jit import KERNEL

# output record layout
O_RPRED, O_QPRED = 0, 3          # predicted r_DPA (3), q_PA (4)
O_REL = 7                        # current relative state (S.REL_LEN = 13)
O_ACC = O_REL + S.REL_LEN        # d/dt of the relative velocity (3) and angular velocity (3)
O_PCMD, O_QCMD = O_ACC + 6, O_ACC + 9   # platform top in B: position (3), q_BT (4)
# MODE_JERK's memory: the last cycle's accelerations (6), the last two backward differences of
# the accelerations (6 each), how many of those three are held (0..3), the jerk estimate (6)
O_A1, O_D1, O_D2 = O_QCMD + 4, O_QCMD + 10, O_QCMD + 16
O_ANUM = O_D2 + 6
O_JERK = O_ANUM + 1
# MODE_JERK's input: the share of the relative acceleration (6) that the measured wrench makes
# (:func:`wrench_share`), and the scratch of the wrench-free relative state and rates (19)
O_ACCW = O_JERK + 6
O_FREE = O_ACCW + 6
# MODE_JERK's last per-cycle jerk estimates (JERK_SPAN_MAX x 6, a ring) and the ring's head:
# the jerk predicted with is their mean over the last n (:func:`jerk_span`)
JERK_SPAN_MAX = 8
O_JRING = O_FREE + S.REL_LEN + 6
O_JHEAD = O_JRING + 6 * JERK_SPAN_MAX
O_JDT = O_JHEAD + 1              # the cycle of the last difference, s
# MODE_JERK's limits on the jerk's change per cycle, linear (m/s^3) and angular (rad/s^3); 0: none
# (:func:`set_jerk_limits`, set at the start of a run from the stand's command limits)
O_JLIM = O_JDT + 1
# The lead's shaper (:func:`shape_lead`): the lead offset commanded (6: the position's, m, and the
# rotation vector's, rad), its rate (6), this cycle's target (6, the predictor's offset), the last
# cycle's (6), how many cycles it holds (0, 1, 2: its offset, then its rate), and its acceleration bounds per axis, linear (m/s^2)
# and angular (rad/s^2); 0: off (:func:`set_lead_limits`, set at the start of a run from the
# stand's command limits)
O_LEAD = O_JLIM + 2
O_LEADV = O_LEAD + 6
O_LEADT = O_LEADV + 6
O_LEADP = O_LEADT + 6
O_LEADN = O_LEADP + 6
O_LEADA = O_LEADN + 1
O_LEADR = O_LEADA + 2            # the target's rate from the model (6: a tau + j h, per s)
O_LEADDT = O_LEADR + 6           # the last cycle's dt, s
OUT_LEN = O_LEADDT + 1

MODE_OFF, MODE_PREDICT, MODE_JERK = 0, 1, 2
LAG_CYCLES = 1.0                 # MODE_JERK: the acceleration of the held wrench is this many cycles older than the state
JERK_SPAN_LEAD = 4.0             # MODE_JERK: the jerk is averaged over one cycle per this many cycles of lead
JERK_JITTER = 0.25               # MODE_JERK: a cycle this much longer or shorter than the last restarts the jerk
JERK_SHARE = 0.25                # MODE_JERK: the jerk's change may move the command's acceleration by this share of its trip
AGREE = 0.5                      # MODE_JERK: consecutive differences this close are a jerk (jerk_estimate)
PREDICTORS = {"acceleration": MODE_PREDICT, "jerk": MODE_JERK}   # [delays] predictor


@njit(**KERNEL)
def _qexp(x, y, z):
    a = math.sqrt(x * x + y * y + z * z)
    if a < 1e-12:
        return 1.0, 0.5 * x, 0.5 * y, 0.5 * z
    s = math.sin(0.5 * a) / a
    return math.cos(0.5 * a), s * x, s * y, s * z


@njit(**KERNEL)
def relative_rates(par, env, x, t, w_in, h, out, o, xdot, xt, ws, rel):
    """out[o:o+13] = relative state; out[o+13:o+19] = its acceleration (linear, angular) from
    the dynamics: forward difference of the relative state along the exact derivative with
    step h (error O(h * jerk)). The relative state at x comes from the port states that the
    derivative evaluation at x leaves in ``ws`` (it changes only their force rows).

    Parameters
    ----------
    par, env : float64 arrays
        Both vehicles' parameter rows and the environment (``rt.dynamics.spacecraft`` module
        docstring, "The kernels' arguments").
    x : float64[2, NS]
        State rows of both vehicles (``rt.dynamics.spacecraft`` ``S_*``).
    t : float
        Time of x, s.
    w_in : float64[2, 6]
        Held inputs, N and N·m: row 0 the measured wrench on the passive unit, P, about P's origin.
    h : float
        Step of the forward difference, s.
    out : float64[o + 19]
        Written: out[o:o+13] the relative state (``rt.dynamics.spacecraft`` ``REL_*``: m, -, m/s,
        rad/s; P), out[o+13:o+19] its linear and angular acceleration, m/s^2 and rad/s^2, P.
    o : int
        Offset of the relative state in out (``O_REL``).
    xdot : float64[2, NS]
        Workspace: the state derivative at x.
    xt : float64[2, NS]
        Workspace: the state stepped by h.
    ws : float64[2, nws]
        Workspace of the flight model; left holding the ports of the stepped state.
    rel : float64[nrel]
        Workspace: the relative state.
    """
    S.derivatives(par, env, x, t, w_in, 1, xdot, ws, rel)
    S.relative_from_ports(ws, rel)
    for i in range(S.REL_LEN):
        out[o + i] = rel[i]
    for s in range(2):
        for i in range(x.shape[1]):
            xt[s, i] = x[s, i] + h * xdot[s, i]
    S.relative_state(par, env, xt, rel, ws)
    for i in range(3):
        out[o + S.REL_LEN + i] = (rel[S.REL_V + i] - out[o + S.REL_V + i]) / h
        out[o + S.REL_LEN + 3 + i] = (rel[S.REL_W + i] - out[o + S.REL_W + i]) / h


def reset_memory(out) -> None:
    """Forget the last cycles' accelerations (a new run: MODE_JERK starts with zero jerk).
    Not for the real-time loop's cycle (called between runs)."""
    out[O_ANUM] = 0.0
    out[O_JRING:O_JDT + 1] = 0.0
    out[O_JERK:O_JERK + 6] = 0.0
    out[O_LEADN] = 0.0


def set_jerk_limits(out, accel_trip: float, angular_accel_trip: float, tau: float, dt: float) -> tuple:
    """MODE_JERK's limits on the jerk's change per cycle (:func:`jerk_estimate`) from the stand's
    command trip levels (m/s^2, rad/s^2; ``[limits]`` ``accel_margin`` x ``a_max_m_s2``, likewise
    angular) at the lead ``tau``: ``JERK_SHARE x trip x dt^2 / (tau^3 / 6 + LAG_CYCLES dt tau^2 /
    2)``. Returns them (linear, angular). Not for the real-time loop's cycle (a run's start).

    Parameters
    ----------
    out : float64[OUT_LEN]
        The output record: ``O_JLIM`` written.
    accel_trip, angular_accel_trip : float
        The command's acceleration trip levels, m/s^2 and rad/s^2 (0: no limit).
    tau : float
        The lead, s.
    dt : float
        The cycle, s.
    """
    c = tau ** 3 / 6.0 + LAG_CYCLES * dt * tau * tau / 2.0
    lims = tuple(JERK_SHARE * a * dt * dt / c if c > 0.0 and a > 0.0 else 0.0 for a in (accel_trip, angular_accel_trip))
    out[O_JLIM], out[O_JLIM + 1] = lims
    return lims


def set_lead_limits(out, accel_trip: float, angular_accel_trip: float, share: float) -> tuple:
    """The lead shaper's acceleration bounds (:func:`shape_lead`) from the stand's
    command trip levels: ``share x trip``, on the magnitude of the lead's acceleration (the rest of
    the trip is the vehicles' own relative acceleration's; ``[delays] lead_acceleration_share``).
    Returns them (linear m/s^2, angular rad/s^2). Not for the real-time loop's cycle (a run's
    start).

    Parameters
    ----------
    out : float64[OUT_LEN]
        The output record: ``O_LEADA`` written.
    accel_trip, angular_accel_trip : float
        The command's acceleration trip levels, m/s^2 and rad/s^2 (0: no shaping).
    share : float
        The share of the trip the lead's own acceleration may take (0, 1].
    """
    lims = tuple(share * a if a > 0.0 else 0.0 for a in (accel_trip, angular_accel_trip))
    out[O_LEADA], out[O_LEADA + 1] = lims
    return lims


@njit(**KERNEL)
def shape_lead(out, dt):
    """The lead offset the command carries, ``out[O_LEAD:O_LEAD+6]``, made to follow the
    predictor's (``out[O_LEADT:O_LEADT+6]``, this cycle's target; its rate from the model
    ``O_LEADR``) with the magnitude of its own acceleration bounded by ``O_LEADA``
    (:func:`set_lead_limits`; the position's and the rotation's each).

    The prediction at ``t + tau`` adds to the relative pose the offset ``v tau + a tau^2 / 2 +
    j c`` (and its rotation vector). A step ``da`` of the contact force's acceleration -- a
    latch's strike, a damper's first touch -- steps that offset by ``da tau^2 / 2`` and its rate
    by ``da tau``: a command acceleration ``tau^2 / (2 dt^2)`` and ``tau / dt`` times the step
    (264 and 23 at a robot's 23 ms lead), which no platform follows and the stand's command
    trip stops. Where the target moves within the bound the offset is the target, exactly
    (the shaper is transparent); otherwise it closes on the target as fast as the bound allows:
    its rate approaches the target's rate *from the model* (``a tau + j h``: smooth where the
    motion is; a rate taken from the target's own last difference would feed its sample-to-sample
    chatter forward and walk the offset away) plus the braking speed of the gap ``e`` to the last
    target (``v dt / 2 + v^2 / (2 A) = |e|``: it stops on it decelerating by ``A dt`` a cycle). A
    step or a ramp is so passed by at most ``A dt^2``; a target that itself accelerates beyond
    the bound for a while (a strike's pulse at a robot's lead) is followed with a lag and passed
    by up to the lag. The rate's change is bounded by ``A (dt + dt_last) / 2``, the mean of the
    two cycles as the command's acceleration is measured (``rt.control.kernels``), so a late
    cycle stays within the bound too. A target that is not finite passes as it is and restarts
    the shaper (the cycle's own checks trip on it).

    Parameters
    ----------
    out : float64[OUT_LEN]
        The output record: reads the target ``O_LEADT``, its model rate ``O_LEADR`` and the
        bounds ``O_LEADA``; reads and writes the shaper's state ``O_LEAD``, ``O_LEADV`` (per s),
        ``O_LEADP``, ``O_LEADN``, ``O_LEADDT``.
    dt : float
        The cycle, s (> 0).
    """
    finite = True
    for i in range(6):
        x = out[O_LEADT + i]
        if not (x - x == 0.0):
            finite = False
    if out[O_LEADN] <= 0.0 or not finite:     # a run's first cycle: the offset and the model's rate
        for i in range(6):
            out[O_LEAD + i] = out[O_LEADT + i]
            out[O_LEADP + i] = out[O_LEADT + i]
            out[O_LEADV + i] = out[O_LEADR + i]
        out[O_LEADN] = 1.0 if finite else 0.0
        out[O_LEADDT] = dt
        return
    h = 0.5 * (dt + out[O_LEADDT])             # the span the command's acceleration is taken over
    out[O_LEADDT] = dt
    for g in range(2):                         # the position's offset, then the rotation vector's
        o = 3 * g
        A = out[O_LEADA + g]
        step = A * h
        ex2 = 0.0                              # |the rate change that lands on the target now|^2
        tr2 = 0.0                              # |that landing rate less the model's rate|^2
        for i in range(o, o + 3):
            v_exact = (out[O_LEADT + i] - out[O_LEAD + i]) / dt
            ex2 += (v_exact - out[O_LEADV + i]) ** 2
            tr2 += (v_exact - out[O_LEADR + i]) ** 2
        # on the target this cycle where the bound allows it and the target's rate can be kept
        # from there (landing at a rate the target does not have would pass it)
        if A <= 0.0 or (ex2 <= step * step and tr2 <= step * step):
            for i in range(o, o + 3):
                out[O_LEADV + i] = (out[O_LEADT + i] - out[O_LEAD + i]) / dt
                out[O_LEAD + i] = out[O_LEADT + i]
                out[O_LEADP + i] = out[O_LEADT + i]
            continue
        dv2 = 0.0
        for i in range(o, o + 3):
            last = out[O_LEADP + i]
            e = last - out[O_LEAD + i]
            brake = math.sqrt(0.25 * (A * dt) ** 2 + 2.0 * A * abs(e)) - 0.5 * A * dt
            lin = abs(e) / dt
            vr = lin if lin < brake else brake
            dv = out[O_LEADR + i] + (vr if e >= 0.0 else -vr) - out[O_LEADV + i]
            out[O_LEADP + i] = dv               # (scratch: the wanted change, until it is scaled)
            dv2 += dv * dv
        scale = 1.0 if dv2 <= step * step else step / math.sqrt(dv2)   # |the change| <= A h
        for i in range(o, o + 3):
            sv = out[O_LEADV + i] + scale * out[O_LEADP + i]
            out[O_LEADV + i] = sv
            out[O_LEAD + i] += sv * dt
            out[O_LEADP + i] = out[O_LEADT + i]


@njit(**KERNEL)
def _median3(a, b, c):
    if a > b:
        a, b = b, a
    if b > c:
        b = c
    return a if a > b else b


@njit(**KERNEL)
def jerk_span(tau, dt):
    """How many per-cycle jerk estimates MODE_JERK averages at the lead ``tau``: one per
    ``JERK_SPAN_LEAD`` cycles of it, 1 to ``JERK_SPAN_MAX`` (:func:`jerk_estimate`).

    Parameters
    ----------
    tau : float
        The lead, s.
    dt : float
        The cycle, s.
    """
    n = int(tau / (JERK_SPAN_LEAD * dt) + 0.5)
    return 1 if n < 1 else (JERK_SPAN_MAX if n > JERK_SPAN_MAX else n)


@njit(**KERNEL)
def jerk_estimate(out, tau, dt):
    """The relative jerk (linear 3, angular 3) of the measured wrench's share of the
    acceleration into out[O_JERK:O_JERK+6] for MODE_JERK, and the acceleration it extrapolates
    from (docs/validation.md §3.3):

    * each axis's jerk is this cycle's backward difference of the accelerations, that of half
      a cycle ago (which moves the prediction in phase with the position, not the velocity: no
      energy to first order), while it agrees with the one before (within :data:`AGREE` of the
      larger); otherwise the median of the last three: a step of the force -- a damper's
      force at the first touch, the contact gate passing its withheld impulse as one sample --
      is no jerk (after a step the constant-acceleration prediction is the right one). A
      contact's jerk that begins or ends at once (a spring's first touch, its release) is so
      taken a cycle late;
    * the acceleration comes from the wrench measured at the start of the step that ended in
      the state, a cycle older than the state: the predictor extrapolates it by ``LAG_CYCLES``
      cycles of jerk (predict_pose).

    * over a long lead the per-cycle estimate's noise dominates (its share of the prediction,
      ``tau^3 / 6`` times a difference of the sensor's noise over a cycle, grows as ``tau^3``):
      the jerk predicted with is the mean of the last ``n`` per-cycle estimates
      (:func:`jerk_span`: one per ``JERK_SPAN_LEAD`` cycles of lead; 1 up to 6 ms, 5 at a robot's
      20 ms), its noise ``n`` times smaller; the mean lags ``(n - 1) / 2`` cycles more, which
      costs nothing to first order (above), and a step is still no jerk (each estimate's rule).

    * a cycle more than ``JERK_JITTER`` longer or shorter than the one before (a loop that
      missed its deadline, a loaded computer's wake-up) restarts the estimate: the sensor's
      samples then no longer arrive one per cycle, a difference holds none or two of them, and
      the median cannot tell that from a contact's rate. The prediction is the
      constant-acceleration one until three regular differences are held (on the lockstep
      stand every cycle is regular).

    * the jerk's change per cycle is limited so that it alone moves the command's acceleration by
      at most ``JERK_SHARE`` of the stand's trip level (:func:`set_jerk_limits`: a change ``dj``
      moves the command by ``dj (tau^3 / 6 + LAG_CYCLES dt tau^2 / 2)`` in one cycle, an
      acceleration of that over ``dt^2``). A contact whose force rises faster than the platform
      could follow its prediction (a latch strike at a 7 ms lead: 450 N/ms on the docking
      vehicles commanded 13 m/s^2 on the wall-clock stand, trip level 10) is predicted with a
      jerk that catches up over a few cycles instead of a command the platform cannot follow.

    Until three differences are held the jerk is zero.

    Parameters
    ----------
    out : float64[OUT_LEN]
        The output record: reads the wrench's share of the accelerations ``O_ACCW``
        (:func:`wrench_share`); writes the jerk ``O_JERK`` (m/s^3, rad/s^3, P) and updates the
        memory ``O_A1``, ``O_D1``, ``O_D2``, ``O_ANUM``, ``O_JRING``, ``O_JHEAD``, ``O_JDT``; reads
        the limits ``O_JLIM``.
    tau : float
        The lead, s (how many estimates are averaged: :func:`jerk_span`).
    dt : float
        The cycle, s.
    """
    n = out[O_ANUM]
    if n >= 1.0 and abs(dt - out[O_JDT]) > JERK_JITTER * out[O_JDT]:
        n = 0.0
        out[O_JRING:O_JHEAD] = 0.0
    out[O_JDT] = dt
    head = int(out[O_JHEAD])
    slot = O_JRING + 6 * head
    for i in range(6):
        a = out[O_ACCW + i]
        d0 = (a - out[O_A1 + i]) / dt
        d1 = out[O_D1 + i]
        if n < 3.0:
            out[slot + i] = 0.0
        elif abs(d0 - d1) <= AGREE * max(abs(d0), abs(d1)):
            out[slot + i] = d0
        else:
            out[slot + i] = _median3(d0, d1, out[O_D2 + i])
        if n >= 1.0:
            out[O_D2 + i] = out[O_D1 + i]
            out[O_D1 + i] = d0
        out[O_A1 + i] = a
    out[O_ANUM] = min(n + 1.0, 3.0)
    span = jerk_span(tau, dt)
    for i in range(6):
        acc = 0.0
        for m in range(span):
            acc += out[O_JRING + 6 * ((head - m) % JERK_SPAN_MAX) + i]
        j = acc / span
        lim = out[O_JLIM + (0 if i < 3 else 1)]
        if lim > 0.0:
            prev = out[O_JERK + i]
            if j > prev + lim:
                j = prev + lim
            elif j < prev - lim:
                j = prev - lim
        out[O_JERK + i] = j
    out[O_JHEAD] = (head + 1) % JERK_SPAN_MAX


@njit(**KERNEL)
def predict_pose(out, tau, mode, dt):
    """Predicted relative pose at t + tau into out[O_RPRED:O_QPRED+4] from the current relative
    state and accelerations already in ``out`` (module docstring, step 3); ``dt`` the cycle
    (MODE_JERK's difference; 0 outside the loop's cycle: no jerk, memory untouched).

    Parameters
    ----------
    out : float64[OUT_LEN]
        The output record: reads the relative state ``O_REL`` and accelerations ``O_ACC``; writes
        the predicted r_DPA (m, P) and q_PA at ``O_RPRED``, ``O_QPRED``.
    tau : float
        The delay the prediction leads by, s (0 used for MODE_OFF).
    mode : int
        ``MODE_OFF``, ``MODE_PREDICT`` or ``MODE_JERK``.
    dt : float
        The cycle, s; 0 outside the loop's cycle (no jerk, memory untouched).
    """
    r = O_REL + S.REL_R
    v = O_REL + S.REL_V
    w = O_REL + S.REL_W
    q = O_REL + S.REL_Q
    a = O_ACC
    if mode == MODE_OFF:
        tau = 0.0
    h = 0.5 * tau * tau
    c = 0.0                       # tau^3/6 + (the acceleration's lag) tau^2/2: the jerk's terms
    if mode == MODE_JERK and dt > 0.0:
        jerk_estimate(out, tau, dt)
        c = tau * tau * tau / 6.0 + LAG_CYCLES * dt * h
    j = O_JERK
    lt = O_LEADT
    for i in range(3):
        out[lt + i] = out[v + i] * tau + out[a + i] * h + out[j + i] * c
        out[lt + 3 + i] = out[w + i] * tau + out[a + 3 + i] * h + out[j + 3 + i] * c
        out[O_LEADR + i] = out[a + i] * tau + out[j + i] * h          # d/dt of the offset (model)
        out[O_LEADR + 3 + i] = out[a + 3 + i] * tau + out[j + 3 + i] * h
    if mode != MODE_OFF and dt > 0.0:
        shape_lead(out, dt)
        lt = O_LEAD
    for i in range(3):
        if out[lt + i] == out[O_LEADT + i]:     # unshaped: the prediction's own sum, term by term
            out[O_RPRED + i] = out[r + i] + out[v + i] * tau + out[a + i] * h + out[j + i] * c
        else:
            out[O_RPRED + i] = out[r + i] + out[lt + i]
    p0, p1, p2, p3 = _qexp(out[lt + 3], out[lt + 4], out[lt + 5])
    q0, q1, q2, q3 = SP.quat_mul_entries(p0, p1, p2, p3, out[q], out[q + 1], out[q + 2], out[q + 3])
    q0, q1, q2, q3, _ = SP.quat_normalize_entries(q0, q1, q2, q3)
    out[O_QPRED], out[O_QPRED + 1], out[O_QPRED + 2], out[O_QPRED + 3] = q0, q1, q2, q3


@njit(**KERNEL)
def platform_pose(geo, out):
    """Platform-top command T_BT = T_BP . T_PA . T_AT into out[O_PCMD:O_QCMD+4].

    ``geo`` (14): p_BP_B (3), q_BP (4), p_AT_A (3), q_AT (4).

    Parameters
    ----------
    geo : float64[14]
        The stand's frame chain (:func:`pack_geometry`): p_BP_B (m), q_BP, p_AT_A (m), q_AT.
    out : float64[OUT_LEN]
        The output record: reads the predicted pose ``O_RPRED``, ``O_QPRED``; writes the top
        command p_BT_B (m) and q_BT at ``O_PCMD``, ``O_QCMD``.
    """
    # T_BA = T_BP . T_PA
    qb0, qb1, qb2, qb3 = geo[3], geo[4], geo[5], geo[6]
    rx, ry, rz = SP.quat_rotate_entries(qb0, qb1, qb2, qb3, out[O_RPRED], out[O_RPRED + 1], out[O_RPRED + 2])
    a0, a1, a2, a3 = SP.quat_mul_entries(qb0, qb1, qb2, qb3, out[O_QPRED], out[O_QPRED + 1], out[O_QPRED + 2],
                                         out[O_QPRED + 3])
    px, py, pz = geo[0] + rx, geo[1] + ry, geo[2] + rz
    # T_BT = T_BA . T_AT
    tx, ty, tz = SP.quat_rotate_entries(a0, a1, a2, a3, geo[7], geo[8], geo[9])
    c0, c1, c2, c3 = SP.quat_mul_entries(a0, a1, a2, a3, geo[10], geo[11], geo[12], geo[13])
    n = 1.0 / math.sqrt(c0 * c0 + c1 * c1 + c2 * c2 + c3 * c3)
    out[O_PCMD], out[O_PCMD + 1], out[O_PCMD + 2] = px + tx, py + ty, pz + tz
    out[O_QCMD], out[O_QCMD + 1], out[O_QCMD + 2], out[O_QCMD + 3] = c0 * n, c1 * n, c2 * n, c3 * n


@njit(**KERNEL)
def wrench_share(out):
    """out[O_ACCW:O_ACCW+6] = the relative accelerations ``O_ACC`` less those of the same state
    without the measured wrench (``O_FREE``'s rates): the share the wrench makes (MODE_JERK's
    input, :func:`jerk_estimate`). The dynamics are linear in the wrench at a given state, so
    this is the wrench's own (the forward differences' O(h) terms cancel but for O(h^2)).

    Parameters
    ----------
    out : float64[OUT_LEN]
        The output record: reads ``O_ACC`` and the wrench-free rates at ``O_FREE + REL_LEN``;
        writes ``O_ACCW`` (m/s^2, rad/s^2, P).
    """
    for i in range(6):
        out[O_ACCW + i] = out[O_ACC + i] - out[O_FREE + S.REL_LEN + i]


@njit(**KERNEL)
def _hold_wrench(w_in, out, zero):
    """Zero row 0 of ``w_in`` keeping it in out[O_ACCW:O_ACCW+6] (``zero``), or put it back."""
    for i in range(6):
        if zero:
            out[O_ACCW + i] = w_in[0, i]
            w_in[0, i] = 0.0
        else:
            w_in[0, i] = out[O_ACCW + i]


@njit(**KERNEL)
def coupling_update(par, env, x, t, dt, w_in, tau, mode, geo, out, k, xt, ws, rel):
    """One controller cycle of the coupling (module docstring): step, relative state and rates,
    prediction, platform command. ``w_in`` row 0 is the measured wrench on the passive unit.

    Parameters
    ----------
    par : float64[2, L]
        Parameter rows of both vehicles (``rt.dynamics.spacecraft.pack_vehicle``).
    env : float64[ENV_LEN]
        Environment (``rt.dynamics.spacecraft.pack_env``).
    x : float64[2, NS]
        The flight state; advanced to t + dt in place.
    t : float
        Case time at the start of the step, s.
    dt : float
        The cycle, s.
    w_in : float64[2, 6]
        Held inputs, N and N·m: row 0 the measured wrench on the passive unit, P, about P's origin.
    tau : float
        The delay the prediction leads by, s.
    mode : int
        ``MODE_OFF``, ``MODE_PREDICT`` or ``MODE_JERK``.
    geo : float64[14]
        The stand's frame chain (:func:`pack_geometry`): p_BP_B (m), q_BP, p_AT_A (m), q_AT.
    out : float64[OUT_LEN]
        The output record (``O_*``): prediction, relative state and rates, platform command
        written; MODE_JERK's memory updated.
    k : float64[4, 2, NS]
        Workspace: the integrator's stage derivatives.
    xt : float64[2, NS]
        Workspace: the integrator's trial state.
    ws : float64[2, nws]
        Workspace of the flight model (ports, scratch).
    rel : float64[nrel]
        Workspace: the relative state.
    """
    S.rk4_step(par, env, x, t, dt, w_in, 1, k, xt, ws, rel)
    if mode == MODE_JERK:         # the same state without the wrench (first: ws as before after)
        _hold_wrench(w_in, out, True)
        relative_rates(par, env, x, t + dt, w_in, 1e-4, out, O_FREE, k[0], xt, ws, rel)
        _hold_wrench(w_in, out, False)
    relative_rates(par, env, x, t + dt, w_in, 1e-4, out, O_REL, k[0], xt, ws, rel)
    if mode == MODE_JERK:
        wrench_share(out)
    predict_pose(out, tau, mode, dt)
    platform_pose(geo, out)


@njit(**KERNEL)
def berthing_update(par, env, x, t, dt, w_in, tau, mode, geo, out, k, xt, ws, rel):
    """:func:`coupling_update` of the berthing flight (``rt.dynamics.berthing_flight``: arm and
    payload; ``par`` row 0 the packed arm). Returns False if the arm's evaluation failed.

    Parameters
    ----------
    par : float64[1, L]
        Row 0: the packed arm and payload (``rt.dynamics.berthing_flight.pack_flight``).
    env : float64[ENV_LEN]
        Not read (the flight's environment, ``E_FLIGHT`` set; the signature of the docking kernel).
    x : float64[2, NS]
        The flight state (arm row 0, payload row 1); advanced to t + dt in place.
    t : float
        Case time at the start of the step, s (not read: the berthing flight's step takes no time).
    dt : float
        The cycle, s.
    w_in : float64[2, 6]
        The held inputs; this and the rest as for :func:`coupling_update`.
    tau : float
        The prediction's lead, s.
    mode : int
        The predictor, ``MODE_*``.
    geo : float64[14]
        The stand's frame chain.
    out : float64[OUT_LEN]
        The output record, written.
    k, xt, ws, rel : float64 arrays
        Workspace of ``rt.dynamics.berthing_flight.flight_rk4_step`` (the arm's scratch past the
        ports in ``ws``).
    """
    ok = BF.flight_rk4_step(par[0], x, dt, w_in, k, xt, ws, rel)
    if mode == MODE_JERK:         # the same state without the wrench (coupling_update)
        _hold_wrench(w_in, out, True)
        BF.flight_relative_rates(par[0], x, w_in, 1e-4, out, O_FREE, k[0], xt, ws, rel)
        _hold_wrench(w_in, out, False)
    BF.flight_relative_rates(par[0], x, w_in, 1e-4, out, O_REL, k[0], xt, ws, rel)
    if mode == MODE_JERK:
        wrench_share(out)
    predict_pose(out, tau, mode, dt)
    platform_pose(geo, out)
    return ok


@njit(**KERNEL)
def berthing_relative_rates(par, env, x, t, w_in, h, out, o, xdot, xt, ws, rel):
    """:func:`relative_rates` of the berthing flight.

    Parameters
    ----------
    par, env : float64 arrays
        As for :func:`berthing_update`: row 0 the packed arm and payload; not read.
    x : float64[2, ns]
        The flight state (arm row 0, payload row 1; ``rt.dynamics.berthing_flight``).
    t : float
        Not read (the signature of :func:`relative_rates`).
    w_in : float64[2, 6]
        The held inputs; this and the rest as for :func:`relative_rates`.
    h : float
        The forward difference's step, s.
    out : float64[o + 19]
        Written: the relative state and its accelerations.
    o : int
        Offset of the relative state in out.
    xdot, xt, ws, rel : float64 arrays
        Workspace (``ws``: the flight model's, left holding the ports of the stepped state).
    """
    BF.flight_relative_rates(par[0], x, w_in, h, out, o, xdot, xt, ws, rel)


def update_kernel(env):
    """The compiled cycle step of a flight model (``env[E_FLIGHT]``): :func:`coupling_update`
    (two spacecraft) or :func:`berthing_update`. Kept apart rather than one compiled branch so
    the docking kernels compile exactly as before (FMA contraction depends on inlining)."""
    return berthing_update if env[S.E_FLIGHT] != 0.0 else coupling_update


def relative_rates_kernel(env):
    """:func:`relative_rates` or :func:`berthing_relative_rates` for a flight model."""
    return berthing_relative_rates if env[S.E_FLIGHT] != 0.0 else relative_rates


def pack_geometry(p_BP_B, q_BP, p_AT_A, q_AT) -> np.ndarray:
    """Stand geometry array for :func:`platform_pose` (positions m, quaternions scalar first)."""
    g = np.zeros(14)
    g[0:3], g[3:7], g[7:10], g[10:14] = p_BP_B, q_BP, p_AT_A, q_AT
    return g


class Coupling:
    """The coupling of one run: flight model (``Spacecraft`` or ``BerthingFlight``) + stand geometry +
    compensation settings."""

    def __init__(self, spacecraft, geometry: np.ndarray, tau_s: float, compensate: bool = True,
                 predictor: str = "acceleration"):
        self.sc = spacecraft
        self.geo = np.asarray(geometry, dtype=np.float64)
        self.tau = float(tau_s)
        self.mode = PREDICTORS[predictor] if compensate else MODE_OFF
        self.out = np.zeros(OUT_LEN)
        self.w_in = np.zeros((2, 6))

    def update(self, t: float, dt: float, wrench_P: np.ndarray) -> np.ndarray:
        self.w_in[0, :] = wrench_P
        w = self.sc.ws
        update_kernel(self.sc.env)(self.sc.par, self.sc.env, self.sc.x, t, dt, self.w_in, self.tau, self.mode,
                                   self.geo, self.out, w.k, w.xt, w.ws, w.rel)
        return self.out

    def initial_command(self) -> np.ndarray:
        """The platform command for the current state without stepping (ARM: move to the case's
        initial pose)."""
        w = self.sc.ws
        relative_rates_kernel(self.sc.env)(self.sc.par, self.sc.env, self.sc.x, 0.0, self.w_in, 1e-4, self.out,
                                           O_REL, w.k[0], w.xt, w.ws, w.rel)
        predict_pose(self.out, 0.0, MODE_OFF, 0.0)
        platform_pose(self.geo, self.out)
        return self.out
