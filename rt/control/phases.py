"""The controller's phase sequence and command guards, as tables (docs/controller.md,
"Controller").

The supervisor (:mod:`rt.control.supervisor`) says what the operator may do (IDLE, CONFIGURED,
ARMED, RUNNING, DONE, SAFE, ABORTED); the phase says what the platform is being told this
cycle. ``TRANSITIONS`` lists every phase change the controller makes, with its cause;
``Controller._set_phase`` refuses any other (a programming error, never an operator's).

========  ========================================================================  ======================
phase     command to the platform                                                   goes to (cause)
========  ========================================================================  ======================
IDLE      none (platform not commanded; HEARTBEAT only)                             ENGAGE (arm)
ENGAGE    ARMED: ENGAGE sent, waiting for the platform to report ENGAGED            TARE (ENGAGED)
TARE      ARMED: holding the present pose while the sensor tare averages            MOVE (tared)
MOVE      ARMED: quintic rest-to-rest move to the run-up start pose                 READY (arrived)
READY     ARMED: holding the run-up start pose; ``start`` is accepted               RUNUP / DYNAMICS (start)
RUNUP     RUNNING: uniform acceleration into the case's initial relative state      DYNAMICS (run-up done)
DYNAMICS  RUNNING: sensing -> spacecraft step -> prediction at t + tau -> pose      STOP (trip, end, stop)
STOP      after a trip, abort, stop or finish: ``SafeStop`` along the current path  FROZEN (at rest)
FROZEN    FREEZE sent; the platform holds                                           ENGAGE (arm), RETRACT,
                                                                                    IDLE (park, reset_fault)
RETRACT   ENGAGE, then a slow move away from the passive unit (rt.control.recovery)  FROZEN (done), STOP (trip)
========  ========================================================================  ======================

Any engaged phase (TARE ... DYNAMICS) goes to STOP on a trip, abort, stop or disarm, and
ENGAGE or an engaged phase that never sent a set-point goes straight to FROZEN. A disarm
leaves the supervisor CONFIGURED while the platform still stops, so ``arm`` may come in STOP.

The guards (``GUARDS``) are the controller's conditions on operator commands, checked by the
supervisor before it accepts one: each takes the controller and the command's arguments and
returns None (accepted) or the reason for the refusal.

Real time: everything here is called from the loop thread (commands are polled there); the
guards do no I/O.
"""
from __future__ import annotations

import math
from enum import IntEnum
from typing import Any, Callable

from drivers.motion_platform import PlatformState
from rt.config.case import Case
from rt.stand.envelope import check_envelope
from rt.control import mechanism_inputs as MI
from rt.stand import wire_kernels as WK


class Phase(IntEnum):
    IDLE = 0
    ENGAGE = 1
    TARE = 2
    MOVE = 3
    READY = 4
    RUNUP = 5
    DYNAMICS = 6
    STOP = 7
    FROZEN = 8
    RETRACT = 9


#: phases in which the platform is engaged and follows set-points
ENGAGED_PHASES = (Phase.TARE, Phase.MOVE, Phase.READY, Phase.RUNUP, Phase.DYNAMICS, Phase.STOP, Phase.RETRACT)

_STOPPING = frozenset({Phase.STOP, Phase.FROZEN})

#: phase -> the phases it may go to (the table of the module docstring)
TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.IDLE: frozenset({Phase.ENGAGE, Phase.RETRACT}),
    Phase.ENGAGE: frozenset({Phase.TARE, Phase.FROZEN}),
    Phase.TARE: frozenset({Phase.MOVE}) | _STOPPING,
    Phase.MOVE: frozenset({Phase.READY}) | _STOPPING,
    Phase.READY: frozenset({Phase.RUNUP, Phase.DYNAMICS}) | _STOPPING,
    Phase.RUNUP: frozenset({Phase.DYNAMICS}) | _STOPPING,
    Phase.DYNAMICS: _STOPPING,
    Phase.STOP: frozenset({Phase.FROZEN, Phase.ENGAGE}),
    Phase.FROZEN: frozenset({Phase.ENGAGE, Phase.RETRACT, Phase.IDLE}),
    Phase.RETRACT: _STOPPING,
}


class PhaseError(RuntimeError):
    """A phase change that ``TRANSITIONS`` does not have."""


def check_transition(current: Phase, nxt: Phase) -> None:
    if nxt is not current and nxt not in TRANSITIONS[current]:
        raise PhaseError(f"no phase transition {current.name} -> {nxt.name} "
                         f"(allowed: {', '.join(sorted(p.name for p in TRANSITIONS[current]))})")


#: how the operator reaches each command (console key, dockstand ctl action); the console's keys
#: (rt.console.view.COMMAND_KEYS) are checked against these by tests/rt/console/test_console_ways_back.py
HOW = {"reset": "reset (console r, `dockstand ctl reset`)",
       "reset_fault": "reset_fault (console f, `dockstand ctl reset-fault`)",
       "retract": "retract (console b, `dockstand ctl retract`)",
       "park": "park (console k, `dockstand ctl park`)",
       "arm": "arm (console a, `dockstand ctl arm`)"}


def loaded(ctl) -> tuple[bool, float, float]:
    """Whether the passive unit carries a contact load now (|f| or |m| of the tared, filtered
    wrench above the stand's contact levels), and the two magnitudes."""
    w = ctl.sensing.w_P
    f, m = math.hypot(w[0], w[1], w[2]), math.hypot(w[3], w[4], w[5])   # (Python: not a compile in the loop)
    lim = ctl.stand.limits
    return (f > lim.contact_force_n or m > lim.contact_moment_nm), f, m


# ---------------------------------------------------------------------- command guards
def guard_load(ctl, case=None, path=None, case_error=None, case_unread=None, **_: Any) -> str | None:
    if ctl.phase is Phase.STOP:
        return "the platform is still stopping (its run log is still being written): load once it is frozen"
    if case_error:
        return case_error
    if case_unread is not None:
        return "the case file was not read (the controller's state changed meanwhile): send load_case again"
    if not isinstance(case, Case):
        return "load_case needs a case: a path to config/cases/*.toml"
    return None


def guard_arm(ctl, _log=None, _log_error=None, **_: Any) -> str | None:
    links = ctl.links
    if not links.is_open:
        return "drivers are not open"
    if ctl.phase is Phase.RETRACT:
        return "a retract is under way: arm once the platform is frozen"
    if not links.samples or ctl.stale_sensor():
        return f"the F/T sensor is not streaming ({links.silence(links.s_tr)})"
    st = ctl.platform_state()
    if st is None:
        return f"no STATUS from the motion platform yet ({links.silence(links.p_tr)})"
    if not ctl.lockstep:          # lockstep: the gate waits for each STATUS (a silent one trips)
        age = links.platform_age_s()
        if age > ctl.stand.limits.platform_stale_cycles * ctl.period_s:
            return (f"the motion platform is silent: its last STATUS (state, pose, the mechanism's signals) is "
                    f"{age:.1f} s old ({links.silence(links.p_tr)})")
    if st in (PlatformState.FAULT, PlatformState.E_STOPPED):
        return f"the platform reports {st.name} (fault {int(ctl.meas[WK.ST_FAULT])}); reset_fault first"
    cfg = ctl.stand.mechanism_inputs
    if MI.captured(cfg, int(ctl.meas[WK.ST_INPUTS])):
        return (f"release the mechanism (undock) first: it reports capture (platform input bit {cfg.capture}), the "
                f"units are latched together and the arming move would pull them apart")
    why = ctl.mechanism_refusal()          # the mechanism's own link: latched, faulted, silent
    if why:
        return why
    if ctl.sensing.tared:                # the last tare holds: a load now is a contact (retract first)
        hit, f, m = loaded(ctl)
        if hit:
            return (f"the passive unit carries a load (|f| = {f:.0f} N, |m| = {m:.0f} N·m): the units are in "
                    f"contact; a tare now would take it as zero and the arming move would drag them. "
                    f"{HOW['retract']} first")
    why = ctl.health_refusal()
    if why:
        return why
    if ctl.stand.delays.envelope == "refuse" and ctl.case is not None:
        env = arm_envelope(ctl)
        if env.inside is False:
            return f"outside the stand's envelope ([delays] envelope = \"refuse\"): {env.reason}"
    if _log_error:
        return _log_error
    return None


def arm_envelope(ctl):
    """The loaded case against the stand's envelope at the configured lead
    (``rt.stand.envelope.check_envelope``): the guard's refusal and the run log's ``envelope``
    event (rt.control.procedures.begin_arm). Bounded arithmetic."""
    return check_envelope(ctl.case, ctl.tau, ctl.stand.delays.envelope_cor_error_pct)


def guard_start(ctl, **_: Any) -> str | None:
    if ctl.phase is not Phase.READY:
        return f"not ready: arming is in phase {ctl.phase.name}"
    return None


def guard_tare(ctl, **_: Any) -> str | None:
    if ctl.phase in (Phase.MOVE,):
        return "cannot tare while the platform moves"
    cfg = ctl.stand.mechanism_inputs
    if MI.captured(cfg, int(ctl.meas[WK.ST_INPUTS])):
        return (f"release the mechanism (undock) first: it reports capture (platform input bit {cfg.capture}), and a "
                f"tare now would take the latched units' loads as zero")
    return None


def guard_reset(ctl, **_: Any) -> str | None:
    if ctl.phase is Phase.STOP:
        return "the platform is still stopping; reset when it is frozen"
    if ctl.phase is Phase.RETRACT:
        return "a retract is under way; reset when the platform is frozen"
    return None


#: supervisor command -> its guard (the supervisor's own table says in which states it is legal)
GUARDS: dict[str, Callable[..., str | None]] = {
    "load_case": guard_load, "arm": guard_arm, "start": guard_start, "tare": guard_tare, "reset": guard_reset,
}
