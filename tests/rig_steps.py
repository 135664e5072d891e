"""Steps of a docking on the kinematic rig (sim_stand.kinematic_rig) that tests of several
areas take (imported by name: ``tests/`` is on ``sys.path``)."""
from __future__ import annotations

from drivers.motion_platform import Command
from rt.control.controller import Phase


def engages(rig) -> int:
    """How many ENGAGE commands the rig's platform has received."""
    return sum(1 for _, cmd, _ in rig.commands if cmd is Command.ENGAGE)


def arm_refused_cleanly(rig, log_dir, reply, *words: str) -> None:
    """An ARM refused with ``words`` in its reason changed nothing (ARM is atomic): the
    supervisor still CONFIGURED and the phase IDLE, 20 cycles later no ENGAGE sent, no run log
    left in ``log_dir``, no writer."""
    c = rig.ctl
    assert not reply.ok and all(w in reply.reason for w in words), reply.reason
    assert c.supervisor.state.name == "CONFIGURED" and c.phase is Phase.IDLE
    rig.run(20)                               # whatever a late frame would do, it does now
    assert engages(rig) == 0 and c.phase is Phase.IDLE
    assert not list(log_dir.glob("*.dslog")), list(log_dir.glob("*"))
    assert c.writer is None


def arm_and_start_retrying(rig, attempts: int = 3):
    """``rig.arm_and_start()``, with the arm asked again after a few cycles if its guard found the
    stepped rig's platform "silent": it judges the STATUS's wall-clock age (20 ms), which a loaded
    machine can exceed between two rig steps; not what the tests using it are about."""
    from sim_stand.kinematic_rig import NOMINAL
    c = rig.ctl
    rig.run(3)
    assert c.command("load_case", case=str(NOMINAL)).ok
    for k in range(attempts):
        r = c.command("arm")
        if r.ok or "silent" not in str(r.reason) or k == attempts - 1:
            assert r.ok, r.reason
            break
        rig.run(5)
    rig.run_until(lambda x: x.phase is Phase.READY or x.supervisor.safe, 20000)
    assert c.phase is Phase.READY, (c.phase, c.trip_text)
    assert c.command("start").ok


def into_dynamics(rig, cycles: int, start=None, max_cycles: int = 5000) -> None:
    """The nominal case loaded, armed and started (``start(rig)``; None: the rig's own
    ``arm_and_start``), the rig stepped until the controller is in DYNAMICS (at most
    ``max_cycles`` cycles), then ``cycles`` cycles more."""
    if start is None:
        rig.arm_and_start()
    else:
        start(rig)
    rig.run_until(lambda k: k.phase is Phase.DYNAMICS, max_cycles)
    rig.run(cycles)


def record_until_frozen(rig, cycles: int, stop) -> tuple:
    """A run log of ``rig``: into DYNAMICS (:func:`arm_and_start_retrying`), ``cycles`` cycles
    of it, then ``stop(rig)`` and the rig stepped until the platform is frozen (5 cycles more);
    the rig closed. Returns (the log's path, the controller's summary)."""
    try:
        into_dynamics(rig, cycles, start=arm_and_start_retrying)
        stop(rig)
        rig.run_until(lambda c: c.phase is Phase.FROZEN, 5000)
        rig.run(5)
        summary = rig.ctl.summary()
    finally:
        rig.close()
    return rig.ctl.log_path, summary
