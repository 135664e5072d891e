"""What the controller does when its own cycle fails (docs/controller.md, "Cycle failures").

The loop (rt.control.loop) calls the work's ``cycle_failed(exc, cycle)`` whenever ``read``,
``update`` or ``write`` raises — a defect, a state nobody foresaw, a request that got through
everything else. The loop never exits for it. The controller then:

1. records a ``cycle_failure`` event (the exception, where it was raised, the phase) and trips
   CYCLE_FAILURE: the safe stop decelerates the platform along its path within its limits and
   freezes it, the run log is closed, the operator gets the trip's text and its next step. The
   next cycles run the normal code, which now stops the platform;
2. if the cycle keeps failing (:data:`FAILSAFE_AFTER` in a row: the stop itself fails), it
   enters the **fail-safe hold** (:func:`enter`): from then on each cycle only reads the links,
   tells the platform ``[limits] failsafe_action`` (FREEZE: hold where it is; or E_STOP) once and
   a HEARTBEAT every cycle after (the device's watchdog sees a live controller), publishes
   telemetry and serves the operator's requests. ``reset`` leaves the hold (:func:`leave`) and
   the normal cycle resumes; if it fails again, the hold comes back.

Real time: all of it runs in the loop thread; the hold's cycle is a few Python calls.
"""
from __future__ import annotations

import logging
import traceback

from rt.control import kernels as CK
from rt.record.requests import plain_text
from rt.stand.safety import Reason

log = logging.getLogger("dockstand.failsafe")

FAILSAFE_AFTER = 3      # consecutive failing cycles before the hold


def describe_exception(exc: BaseException) -> str:
    """``Type: message (at file:line in function)``, bounded; never raises."""
    try:
        msg = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose str fails
        msg = "<unprintable>"
    where = ""
    try:
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            f = frames[-1]
            where = f" (at {'/'.join(f.filename.split('/')[-2:])}:{f.lineno} in {f.name})"
    except Exception:  # noqa: BLE001 - a hint only
        pass
    return plain_text(f"{type(exc).__name__}: {plain_text(msg, 200)}{where}", 400)


def cycle_failed(ctl, exc: BaseException, cycle: int) -> None:
    """The loop's hook (see the module docstring). Never raises."""
    ctl.cycle_failures += 1
    ctl._failing += 1
    what = describe_exception(exc)
    log.error("cycle %d failed: %s", cycle, what)
    if ctl.failsafe is not None:
        return
    if ctl._failing >= FAILSAFE_AFTER:
        enter(ctl, f"the cycle failed {ctl._failing} times in a row: {what}")
        return
    try:
        ctl._event({"kind": "cycle_failure", "error": what, "phase": ctl.phase.name, "cycle": int(cycle),
                    "count": ctl.cycle_failures})
        if ctl.trip_code != Reason.CYCLE_FAILURE:
            ctl._trip(Reason.CYCLE_FAILURE, f"the controller's cycle failed: {what}; the platform is brought to a "
                                             "stop")
    except Exception as e2:  # noqa: BLE001 - the stop itself failed: hold
        enter(ctl, f"{what}; the safe stop failed too: {describe_exception(e2)}")


def enter(ctl, why: str) -> None:
    """The fail-safe hold (module docstring). Never raises."""
    ctl.failsafe = plain_text(why, 600)
    ctl._failsafe_sent = False
    log.critical("fail-safe hold: %s", ctl.failsafe)
    for step in (lambda: ctl.supervisor.trip(Reason.CYCLE_FAILURE.name, ctl.failsafe),
                 lambda: setattr(ctl, "trip_code", int(Reason.CYCLE_FAILURE)),
                 lambda: ctl._event({"kind": "failsafe_hold", "reason": ctl.failsafe,
                                     "action": ctl.stand.limits.failsafe_action}),
                 lambda: ctl.recorder.close(block=False)):
        try:
            step()
        except Exception:  # noqa: BLE001 - each step on its own
            pass


def leave(ctl) -> None:
    """``reset``: back to the normal cycle (the platform frozen or idle, the trip cleared)."""
    ctl._event({"kind": "failsafe_left", "reason": ctl.failsafe})
    ctl.failsafe = None
    ctl._failing = 0
    from rt.control.phases import Phase
    if ctl.phase not in (Phase.FROZEN, Phase.IDLE):
        ctl.phase = Phase.FROZEN          # the hold froze it (no transition check: the hold skipped the phases)
        ctl.ins[CK.IN_PHASE] = int(Phase.FROZEN)


def hold_read(ctl, cycle: int, t_ns: int) -> None:
    try:
        ctl.links.read(ctl.sensing.raw)
    except Exception:  # noqa: BLE001 - the hold goes on
        pass


def hold_write(ctl, cycle: int, t_ns: int) -> None:
    p = ctl.links.platform
    try:
        if not ctl._failsafe_sent:
            (p.e_stop if ctl.stand.limits.failsafe_action == "e_stop" else p.freeze)()
            ctl._failsafe_sent = True
        else:
            p.heartbeat()
        ctl.links.outstanding = 1
    except Exception:  # noqa: BLE001 - nothing more to do than the device's own watchdog
        pass
    tm = ctl.telemetry
    if tm is not None:
        try:
            tm.publish(cycle, t_ns, int(ctl.supervisor.state), ctl.row)
        except Exception:  # noqa: BLE001
            pass
    try:
        ctl.port.drain()
    except Exception:  # noqa: BLE001
        pass
    if ctl.stop_when is not None and ctl.loop is not None:
        try:
            if ctl.stop_when(ctl):
                ctl.loop.stop()
        except Exception:  # noqa: BLE001
            pass
