"""The docking mechanism's own signals over its Modbus link (drivers.mechanism_io; docs/platforms.md,
"Mechanism I/O"), as the controller uses them.

With ``[mechanism_io]`` in the stand file the controller starts a :class:`drivers.mechanism_io.MechanismIO`
poller (its own thread) and, every cycle, looks at its newest state (one attribute read; the
work below only on a new poll):

* the edges as events, with the run clock: ``latch_closed`` / ``latch_opened``, ``hook_closed``
  / ``hook_opened``, ``ring_in_position`` / ``ring_out_of_position``, ``capture`` (the first of a
  run is its capture time, ``summary`` and the console show it) / ``capture_released``, and
  ``mechanism_link_lost`` / ``mechanism_link_restored``;
* a fault code on the unit's fault register trips MECHANISM_FAULT with the fault's name while the
  platform is engaged or a run is armed (otherwise an event; ARM is refused until it clears);
* ARM is refused while the link is silent, the unit reports a fault, or anything holds the
  units together ("mechanism latched: undock first");
* ``undock`` (console u, ``dockstand ctl undock``) sets the release output, waits for every latch
  and hook to report open (``[mechanism_io] release_timeout_s``), then retracts
  (rt.control.recovery) and clears the output once the units are apart.

Without ``[mechanism_io]`` nothing here runs and the mechanism's state is what the platform's
digital inputs say (rt.control.mechanism_inputs), or unknown.

Real time: :func:`cycle` runs in the loop thread every cycle (an attribute read and a compare;
its events only on a change, a handful per run); the rest runs on commands.
"""
from __future__ import annotations

from rt.control import mechanism_inputs as MI
from rt.control.phases import ENGAGED_PHASES, Phase
from rt.control.supervisor import State
from rt.stand.safety import Reason

HOW_UNDOCK = "undock (console u, `dockstand ctl undock`)"


def start(ctl):
    """The stand's mechanism link, started (None when the stand has no ``[mechanism_io]``). Not
    real-time (starts the poller thread)."""
    mp = ctl.stand.mechanism_io
    if mp is None:
        return None
    from drivers.mechanism_io import MechanismIO
    io = MechanismIO(mp)
    io.start()
    return io


def cycle(ctl) -> None:
    """The loop's look at the mechanism link (the module docstring)."""
    io = ctl.mechanism_io
    st = io.state
    if st.seq == ctl._mio_seq:
        return
    prev = ctl._mio_state
    ctl._mio_seq = st.seq
    ctl._mio_state = st
    running = ctl.phase in (Phase.RUNUP, Phase.DYNAMICS)
    evs = []
    if st.ok != prev.ok and prev.seq:
        evs.append({"kind": "mechanism_link_restored" if st.ok else "mechanism_link_lost",
                    **({} if st.ok else {"why": st.error})})
    if st.ok:
        for name, was, now in (("latch", prev.latches, st.latches), ("hook", prev.hooks, st.hooks)):
            for k, on in enumerate(now):
                if k >= len(was) or was[k] != on:
                    if prev.seq or on:
                        evs.append({"kind": f"{name}_closed" if on else f"{name}_opened", name: k + 1})
        if st.ring_in_position is not None and st.ring_in_position != prev.ring_in_position and prev.seq:
            evs.append({"kind": "ring_in_position" if st.ring_in_position else "ring_out_of_position"})
        if st.capture is not None and bool(st.capture) != bool(prev.capture) and (prev.seq or st.capture):
            evs.append({"kind": "capture" if st.capture else "capture_released"})
    for ev in evs:
        ev["source"] = "mechanism_io"
        ev["phase"] = ctl.phase.name
        if running:
            ev["t_run"] = ctl.t_run
            MI.capture_signal_edge(ctl, ev["kind"])
        ctl._event(ev)
    if st.ok and st.fault and st.fault != prev.fault:
        engaged = ctl.phase in ENGAGED_PHASES or ctl.phase is Phase.ENGAGE or \
            ctl.supervisor.state in (State.ARMED, State.RUNNING)
        text = (f"the docking mechanism reports a fault: {st.fault_name} (code {st.fault} on its fault register, "
                f"{ctl.mechanism_io.describe()})")
        if engaged and ctl.trip_code == 0:
            ctl._trip(Reason.MECHANISM_FAULT, text)
        else:
            ctl._event({"kind": "mechanism_fault", "fault": st.fault, "name": st.fault_name})


def arm_refusal(ctl) -> str | None:
    """Why the mechanism link refuses an ARM now, or None (no link: None)."""
    io = ctl.mechanism_io
    if io is None:
        return None
    st = io.state
    if not st.ok:
        return f"the mechanism's I/O link is silent ({st.error}): its latches cannot be seen"
    if st.fault:
        return f"the docking mechanism reports a fault: {st.fault_name} (code {st.fault}); clear it at its control unit"
    if st.latched:
        what = ", ".join(f"{n} {k + 1}" for n, vals in (("latch", st.latches), ("hook", st.hooks))
                         for k, on in enumerate(vals) if on) or "soft capture"
        return f"mechanism latched ({what} closed): {HOW_UNDOCK} first"
    return None


def latched(ctl) -> bool:
    """The link reports the units held together (False without a link or a good poll)."""
    io = ctl.mechanism_io
    return io is not None and io.state.ok and io.state.latched


def describe(ctl) -> dict | None:
    """The link's state for ``status`` and the console (None: no link)."""
    io = ctl.mechanism_io
    if io is None:
        return None
    st = io.state
    return {"link": io.describe(), "ok": st.ok, "error": st.error, "capture": st.capture,
            "latches": list(st.latches), "hooks": list(st.hooks), "ring_in_position": st.ring_in_position,
            "fault": st.fault, "fault_name": st.fault_name, "release_on": st.release_on,
            "age_s": None, "counters": dict(io.counters)}


# ---------------------------------------------------------------------- undock (the way back: rt.control.recovery)
def undock_released(ctl) -> bool | None:
    """The retract's release stage: True once every latch reports open, False while waiting,
    None when it took longer than ``release_timeout_s`` (the retract stops)."""
    r = ctl._retract
    if r.get("released"):
        return True
    st = ctl.mechanism_io.state
    if st.ok and st.open:
        r["released"] = True
        ctl._event({"kind": "mechanism_released", "after_s": ctl.phase_t - r["t_release"]})
        return True
    if ctl.phase_t - r["t_release"] > ctl.stand.undock_release_timeout_s:
        return None
    return False


def undock_finished(ctl) -> None:
    """The retreat is over (or stopped): the release output off."""
    ctl.mechanism_io.release(False)
