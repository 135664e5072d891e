"""Recovery drills: every trip the emulated stand can produce mid-run, each followed by the
operator's way back to a completed docking, on one controller and one emulator that are never
restarted (docs/controller.md, "Ways back"; the figure ``recovery_paths_completed``).

The stand: the emulator in a thread of this process (lockstep, over private ipc sockets, as
:mod:`sim_stand.closed_loop`), the controller's loop in another with its command socket on, and
the operator in the calling thread — a console that holds the lease with a heartbeat and speaks
only through the command socket. The case is the elastic-rod calibration contact (approach,
contact, rebound, DONE on separation: a docking run without latches, so that one emulated
stand can be docked again and again; releasing a latched mechanism from the controller comes
with the mechanism's own link).

Each :class:`Drill` starts a docking, injects its cause at a point of the run (an emulator fault
switched on for a while, the console going silent, a cycle that raises), and waits for the trip
it must produce. Then the operator does what the trip's text says — its ``Next:`` sentence,
step by step (``reset_fault``, ``retract``, ``reset``, ``acquire``, ``arm``; the causes outside
the controller were the drill's own injection and are over) — and the drill counts as completed
when the docking after it ends DONE without a trip. A drill that cannot be carried out from the
text is a failure with the step that was missing.

Not for the real-time loop (a whole session of runs).
"""
from __future__ import annotations

import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROD_CASE = REPO / "config" / "cases" / "elastic_rod.toml"
ROD_EMULATOR = REPO / "config" / "emulator" / "elastic_rod.toml"


@dataclass(frozen=True)
class Drill:
    """One trip and its way back. ``inject``: ``fault:NAME`` (an emulator fault, on for
    ``duration_s``), ``silent_console`` (the lease holder stops its heartbeat), ``cycle`` (the
    cycle's compiled call raises once). ``when``: ``dynamics`` (``after_s`` into the dynamics,
    before contact), ``contact`` (``after_s`` after the first contact) or ``ready`` (armed at
    the run-up's start, before ``start``: the lockstep docking is over sooner than a lease lapses)."""

    reason: str
    inject: str
    when: str = "dynamics"
    after_s: float = 0.1
    duration_s: float = 0.05


DRILLS: tuple[Drill, ...] = (
    Drill("SENSOR_LINK_LOST", "fault:sensor_dropout"),
    Drill("CRC_BURST", "fault:garbage", duration_s=0.02),
    Drill("SENSOR_FROZEN", "fault:sensor_frozen", duration_s=0.2),
    Drill("SENSOR_STATUS", "fault:sensor_saturated", duration_s=0.01),
    Drill("PLATFORM_FAULT", "fault:platform_fault", duration_s=0.01),
    Drill("PLATFORM_LINK_LOST", "fault:status_loss", duration_s=0.1),
    Drill("TRACKING_ERROR", "fault:platform_lag", duration_s=0.5),
    Drill("FORCE_LIMIT", "fault:load_spike", when="contact", after_s=0.05, duration_s=0.01),
    Drill("HEARTBEAT_LOST", "silent_console", when="ready"),
    Drill("CYCLE_FAILURE", "cycle"),
)

#: trip reasons the emulated stand cannot produce with a shipped case, and why (said in the figure's note)
NOT_REACHABLE = {
    "OVERRUN_STREAK": "lockstep has no deadlines (the wall-clock loop: tests/bench realtime)",
    "OVERLOAD": "lockstep has no deadlines (the wall-clock loop: tests/bench realtime)",
    "RUNLOG_FAILED": "a full disk needs a small filesystem (tests/rt/control/test_disk_full.py)",
    "ARMING_CONTACT": "needs latched units: arming in contact is refused before it moves",
    "RETRACT_LOAD": "needs latched units (the mechanism's release comes with its own link)",
    "NONFINITE": "no input from the emulator makes the command non-finite",
    "MODEL_FAILURE": "the berthing arm's mass matrix stays positive definite on every shipped case",
    "DELAY_OUT_OF_BAND": "the shipped stand sets no identify_band_s",
    "PLATFORM_ESTOP": "the emulator's E-stop input is not wired to a fault",
    "ARM_TIMEOUT": "the emulated platform always engages",
}


class Operator:
    """A console over the command socket that holds the lease and sends a heartbeat every
    ``beat_s`` from its own thread (:meth:`pause` stops it: the console gone silent)."""

    def __init__(self, endpoint: str, name: str = "drill-operator", beat_s: float = 0.2):
        from rt.record.telemetry import CommandClient
        self.cli = CommandClient(endpoint, name=name, timeout_s=10.0)
        self.lock = threading.Lock()
        self.quiet = threading.Event()
        self.stop = threading.Event()
        self.beat_s = beat_s
        self.th = threading.Thread(target=self._beat, name="drill-heartbeat", daemon=True)
        self.th.start()

    def req(self, cmd: str, **args) -> dict:
        with self.lock:
            return self.cli.request(cmd, **args)

    def _beat(self) -> None:
        while not self.stop.wait(self.beat_s):
            if not self.quiet.is_set():
                try:
                    self.req("heartbeat")
                except TimeoutError:
                    pass

    def pause(self) -> None:
        self.quiet.set()

    def resume(self) -> None:
        self.quiet.clear()

    def close(self) -> None:
        self.stop.set()
        self.th.join(5)
        self.cli.close()


class DrillStand:
    """The emulated stand, its controller and an operator, up for a session of drills."""

    def __init__(self, log_dir: Path | None = None, lease_timeout_s: float = 2.0, case: Path = ROD_CASE,
                 emulator: Path | None = ROD_EMULATOR, pace_s: float = 0.0, stand: Path | None = None):
        """``case`` and ``emulator`` (None: the default emulator) the stand docks; ``pace_s``
        the wall time the loop sleeps every cycle (0: lockstep as fast as it goes); ``stand``
        the stand file (None: the default; one with ``[mechanism_io]`` gets its mechanism's
        control unit served by the emulator on a private loopback port)."""
        from rt.config.case import load_case
        from rt.config.stand import load_stand
        from rt.control.controller import Controller, with_endpoints
        from sim_stand.cli import (DEFAULT_STAND, LOCKSTEP_TIMEOUT_S, _emulator_config, _endpoint_override,
                                   free_tcp_port, lockstep_stand, start_lockstep, with_mechanism_port)
        from sim_stand.emulator import Emulator
        from sim_stand.world import StandWorld
        from sim_stand.world_config import load_emulator

        self.tmp = Path(tempfile.mkdtemp(prefix="dockstand-drill-"))
        self.case_path = Path(case)
        self.case = load_case(self.case_path)
        emu = load_emulator(emulator).for_case(self.case) if emulator is not None else \
            _emulator_config(None, self.case_path, load_stand(stand or DEFAULT_STAND))
        self.pace_s = float(pace_s)
        stand = load_stand(stand or DEFAULT_STAND)
        stand = with_mechanism_port(stand, free_tcp_port() if stand.mechanism_io is not None else None)
        s_ep, p_ep = f"ipc://{self.tmp}/sensor", f"ipc://{self.tmp}/platform"
        dev = replace(stand, sensor_link=_endpoint_override(stand.sensor_link, s_ep),
                      platform_link=_endpoint_override(stand.platform_link, p_ep))
        self.cmd_ep = f"ipc://{self.tmp}/cmd"
        ctl_stand = with_endpoints(lockstep_stand(dev, emu), telemetry={
            "pub_endpoint": f"ipc://{self.tmp}/pub", "cmd_endpoint": self.cmd_ep, "lease_timeout_s": lease_timeout_s})
        self.lease_timeout_s = lease_timeout_s
        self.em = Emulator(dev, StandWorld(dev, emu), emu=emu, seed=7)
        self._em_stop = threading.Event()
        self.em_error: BaseException | None = None
        self._em_th = threading.Thread(target=self._emulate, name="drill-emulator", daemon=True)
        self._em_th.start()
        self.ctl = Controller(ctl_stand, lockstep=True, telemetry=True, lockstep_timeout_s=LOCKSTEP_TIMEOUT_S,
                              log_dir=log_dir if log_dir is not None else self.tmp / "runs")
        start_lockstep(self.ctl, links_cycles=500)
        self._loop_stop = threading.Event()
        self.loop_error: BaseException | None = None
        self._loop_th = threading.Thread(target=self._loop, name="drill-loop", daemon=True)
        self._loop_th.start()
        self.op = Operator(self.cmd_ep)
        self.must(self.op.req("acquire"), "acquire")
        self.must(self.op.req("load_case", case=str(self.case_path)), "load_case")

    def _emulate(self) -> None:
        try:
            self.em.run_lockstep(stop=self._em_stop.is_set)
        except BaseException as e:  # noqa: BLE001 - reported by the drill
            self.em_error = e

    def _loop(self) -> None:
        try:
            pace = self.pace_s

            def until(c) -> bool:
                if pace:
                    time.sleep(pace)
                return self._loop_stop.is_set()
            self.ctl.run_until(until, None)
        except BaseException as e:  # noqa: BLE001 - reported by the drill (the loop must never die)
            self.loop_error = e

    @staticmethod
    def must(reply: dict, what: str) -> dict:
        if not reply.get("ok"):
            raise DrillError(f"{what} refused: {reply.get('reason')}")
        return reply

    def wait(self, pred, timeout_s: float, what: str) -> None:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.loop_error is not None or self.em_error is not None:
                raise DrillError(f"while waiting for {what}: the loop or the emulator died "
                                 f"({self.loop_error or self.em_error!r})")
            if pred():
                return
            time.sleep(0.002)
        c = self.ctl
        raise DrillError(f"{what} did not come within {timeout_s:g} s (state {c.supervisor.state.name}, phase "
                         f"{c.phase.name}, trip {c.trip_text})")

    def stopped(self) -> bool:
        return self.ctl.phase.name in ("FROZEN", "IDLE")

    # ------------------------------------------------------------------ a docking
    def start_docking(self, start: bool = True) -> None:
        c = self.ctl
        if c.supervisor.state.name == "DONE":        # the last docking's outcome: reset to arm again
            self.must(self.op.req("reset"), "reset")
        self.must(self.op.req("arm"), "arm")
        self.wait(lambda: c.phase.name == "READY" or c.supervisor.safe, 120, "READY")
        if c.supervisor.safe:
            raise DrillError(f"the arm tripped: {c.trip_text}")
        if start:
            self.must(self.op.req("start"), "start")

    def finish_docking(self) -> dict:
        c = self.ctl
        self.wait(lambda: c.supervisor.state.name != "RUNNING", 120, "the end of the docking")
        self.wait(self.stopped, 60, "the platform frozen")
        return {"state": c.supervisor.state.name, "finish": c.finish_reason, "trip": c.trip_text}

    # ------------------------------------------------------------------ a drill
    def run(self, d: Drill) -> dict:
        c = self.ctl
        out = {"reason": d.reason, "tripped": None, "steps": [], "completed": False, "why": None}
        try:
            self.start_docking(start=d.when != "ready")
            if d.when != "ready":
                self.wait(lambda: c.phase.name == "DYNAMICS", 60, "the dynamics")
                if d.when == "contact":
                    self.wait(lambda: c.stats_first_contact() is not None, 30, "the first contact")
                    t0 = c.stats_first_contact() + d.after_s
                else:
                    t0 = d.after_s
                self.wait(lambda: c.t_run >= t0, 30, f"t_run = {t0:.3f} s")
            self._inject(d)
            self.wait(lambda: c.supervisor.safe, 10 + 3 * self.lease_timeout_s, f"the trip {d.reason}")
            out["tripped"] = c.supervisor.trip_reason
            text = c.trip_text or ""
            out["text"] = text
            self.wait(self.stopped, 30, "the platform frozen after the trip")
            self._clear(d)
            if out["tripped"] != d.reason:
                raise DrillError(f"tripped {out['tripped']}, not {d.reason}: {text}")
            self._follow(text, out["steps"])
            end = self.finish_docking()
            out["end"] = end
            out["completed"] = end["state"] == "DONE" and end["trip"] is None
            if not out["completed"]:
                out["why"] = f"the docking after the recovery ended {end}"
        except DrillError as e:
            out["why"] = str(e)
            self._clear(d)
            self._restore()
        return out

    def _inject(self, d: Drill) -> None:
        kind, _, name = d.inject.partition(":")
        if kind == "fault":
            self.em.faults.start(name, self.em.t, d.duration_s)
        elif kind == "silent_console":
            self.op.pause()
        elif kind == "cycle":
            from rt.control import kernels as CK
            real = CK.hil_cycle_packed
            fired = []

            def once(*a):
                if not fired:
                    fired.append(1)
                    CK.hil_cycle_packed = real
                    raise RuntimeError("a defect in the cycle (injected by the recovery drill)")
                return real(*a)
            self._real_cycle = real
            CK.hil_cycle_packed = once
        else:
            raise ValueError(f"unknown injection {d.inject!r}")

    def _clear(self, d: Drill) -> None:
        kind, _, name = d.inject.partition(":")
        if kind == "fault":
            self.em.faults.end(name)
        elif kind == "silent_console":
            self.op.resume()
        elif kind == "cycle" and getattr(self, "_real_cycle", None) is not None:
            from rt.control import kernels as CK
            CK.hil_cycle_packed = self._real_cycle
            self._real_cycle = None

    def _follow(self, text: str, steps: list) -> None:
        """Do what the trip's ``Next:`` sentence says, step by step, the last being the arm
        (followed by the start of the docking)."""
        m = re.search(r"Next: (.*)\.$", text.strip())
        if not m:
            raise DrillError(f"the trip's text says no next step: {text}")
        c = self.ctl
        for step in m.group(1).split(", then "):
            steps.append(step)
            if "release the mechanism" in step:
                raise DrillError("the next step is to release the mechanism: not possible from the controller here")
            if "take the control lease" in step:
                r = self.op.req("acquire")
                if not r.get("ok") and r.get("takeover_needed"):
                    r = self.op.req("acquire", takeover=True)
                self.must(r, "acquire")
            elif step.startswith("reset_fault"):
                self.must(self.op.req("reset_fault"), "reset_fault")
                self.wait(lambda: c.platform_state() is not None and c.platform_state().name == "IDLE", 10,
                          "the platform IDLE after reset_fault")
            elif step.startswith("retract"):
                self.must(self.op.req("retract"), "retract")
                self.wait(lambda: c.phase.name == "RETRACT", 10, "the retract")
                self.wait(lambda: c.phase.name != "RETRACT", 60, "the end of the retract")
                self.wait(self.stopped, 10, "the platform frozen after the retract")
                if c.trip_text:
                    raise DrillError(f"the retract tripped: {c.trip_text}")
            elif step.startswith("reset"):
                self.must(self.op.req("reset"), "reset")
            elif step.startswith("arm"):
                self.start_docking()
            # else: a cause outside the controller — the drill's injection, already over

    def _restore(self) -> None:
        """After a failed drill: the stand back to CONFIGURED and frozen, for the next one."""
        c = self.ctl
        try:
            self.op.resume()
            self.op.req("acquire", takeover=True)
            if c.supervisor.state.name in ("ARMED", "RUNNING"):
                self.op.req("abort", reason="drill failed")
            self.wait(self.stopped, 30, "the platform stopped")
            if c.platform_state() is not None and c.platform_state().name in ("FAULT", "E_STOPPED"):
                self.op.req("reset_fault")
            if c.supervisor.state.name in ("SAFE", "ABORTED", "DONE"):
                self.op.req("reset")
        except Exception:  # noqa: BLE001 - the next drill will say what is wrong
            pass

    def close(self) -> None:
        self.op.close()
        self._loop_stop.set()
        self._loop_th.join(10)
        self.ctl.close()
        self._em_stop.set()
        self._em_th.join(10)
        self.em.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


class DrillError(RuntimeError):
    """A drill that could not be carried out, and why."""


def run_drills(drills: tuple[Drill, ...] = DRILLS, log_dir: Path | None = None) -> dict:
    """Every drill on one stand; the figures: ``recovery_paths_completed`` of
    ``recovery_paths_reachable``, each drill's outcome, and the reasons not reachable here."""
    st = DrillStand(log_dir)
    results = []
    try:
        for d in drills:
            results.append(st.run(d))
        alive = st.loop_error is None and st.em_error is None
    finally:
        st.close()
    done = [r["reason"] for r in results if r["completed"]]
    return {"recovery_paths_completed": len(done) if alive else 0, "recovery_paths_reachable": len(drills),
            "recovery_paths_failed": {r["reason"]: r["why"] for r in results if not r["completed"]},
            "recovery_drills": results, "recovery_not_reachable": NOT_REACHABLE}


__all__ = ["Drill", "DRILLS", "DrillStand", "run_drills", "Operator", "NOT_REACHABLE"]
