"""The controller's operator API: commands, their preparation off the loop, and what the
controller says of itself (docs/controller.md, "Commands"; the request path:
rt.control.operator_port).

* :func:`command` — the direct API (the demo, tests, ``dockstand run --case``): reads a case
  file and opens the run log in the caller's thread, then :func:`execute`;
* :func:`execute` — a prepared command, in the loop thread: the supervisor's table and guards,
  then the controller's part (rt.control.procedures.after_command); ARM is atomic (everything
  that can fail before the supervisor accepts it);
* the arm's preparation: :func:`prepare_arm_log` (the free space, the file, its header) and its
  refusal texts; :func:`health_refusal` (the pre-flight check, the loop's recent misses);
* :func:`status`, :func:`summary`, :func:`health`, :func:`recorder_health`, :func:`mechanism`.

Each function takes the controller (``ctl``); the Controller exposes them as its methods.
Real time: :func:`execute` and :func:`reply_dict` run in the loop thread (no I/O);
:func:`status`, :func:`health`, :func:`recorder_health` run on the command thread (reads of the
loop's state; a statvfs); the rest is not real-time.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from rt.config.case import Case
from rt.control import kernels as CK
from rt.control import mechanism_inputs as MI
from rt.control.operator_port import read_case_file
from rt.control.phases import Phase
from rt.control.supervisor import State
from rt.dynamics import spacecraft as SCM
from rt.dynamics.berthing_flight import flight_from_case
from rt.record.requests import plain_text
from rt.control import mechanism_link as ML
from rt.control import procedures as PR


def command(ctl, name: str, client: str | None = "local", **args: Any):
    """Apply an operator command now; returns the supervisor Reply. The direct API (the
    demo, tests, ``dockstand run --case``): it reads a case file and opens the run log in
    the caller's thread, so it is not for the real-time loop — requests over the command
    socket are prepared off the loop (rt.control.operator_port) and end in :meth:`execute`."""
    if name == "load_case" and "case" in args and not isinstance(args["case"], Case):
        if not isinstance(args["case"], (str, Path)) or not str(args["case"]):
            return ctl.supervisor._refuse("load_case", client, "case must be the path of a case file (a string), "
                                                                f"got {type(args['case']).__name__}")
        if not load_allowed(ctl):
            args = {"case_unread": str(args["case"])}
        else:
            case, path, why = read_case_file(str(args["case"]))
            args = {"case": case, "path": path} if why is None else {"case_error": why, "path": path}
    writer = None
    if name == "arm" and "_log" not in args and "_log_error" not in args and arm_allowed(ctl):
        try:
            writer = prepare_arm_log(ctl)
            args = {**args, "_log": writer}
        except Exception as e:  # noqa: BLE001 - an arm that cannot record is refused
            args = {**args, "_log_error": log_error_text(e)}
    reply = execute(ctl, name, client, args)
    if writer is not None and ctl.recorder.writer is not writer:
        discard_log(ctl, writer)
    return reply


def execute(ctl, name: str, client: str | None, args: dict):
    """Carry out a prepared command (loop thread; no file I/O, no parsing): the supervisor's
    state table and guards, then the controller's part. A refused command changes nothing:
    for ``arm`` everything that can fail (the run log, opened before; the flight model,
    built here) is done before the supervisor accepts it (ARM is atomic)."""
    if name == "arm" and ctl.case is not None and ctl.supervisor.state is State.CONFIGURED:
        # the command socket's worker built the flight model off the loop (rt.control.operator_port);
        # the direct API builds it here
        why = args.get("_flight_error")
        if why is None and "_flight" in args and args.get("_flight_case") is not ctl.case:
            return ctl.supervisor._refuse(name, client, "the case changed while the arm was prepared: send arm again")
        if why is None and "_flight" not in args:
            try:
                args = {**args, "_flight": flight_from_case(ctl.case)}     # fresh state at every arm
            except Exception as e:  # noqa: BLE001 - refused, nothing armed
                why = f"{type(e).__name__}: {e}"
        if why is not None:
            return ctl.supervisor._refuse(name, client, plain_text(
                f"the flight model of the case could not be built ({why}); nothing was armed", 500))
    reply = ctl.supervisor.command(name, client, **args)
    if reply.ok:
        PR.after_command(ctl, name, args)
    return reply


def reply_dict(ctl, reply) -> dict:
    """A command's reply as the command socket sends it."""
    out = reply.as_dict()
    out["phase"] = ctl.phase.name
    return out


def load_allowed(ctl) -> bool:
    """Would ``load_case`` be taken in this state (read before a case file is opened)."""
    return ctl.supervisor.state in (State.IDLE, State.CONFIGURED, State.DONE) and ctl.phase is not Phase.STOP


def arm_allowed(ctl) -> bool:
    """Would ``arm`` get past the state table (read before its run log is opened)."""
    return ctl.supervisor.state is State.CONFIGURED and ctl.phase not in (Phase.STOP, Phase.RETRACT)


def health_refusal(ctl) -> str | None:
    """Why the loop's health refuses an ARM now (rt.control.phases.guard_arm), or None: the
    pre-flight timing check failed (and the stand does not allow it), or the loop missed
    more deadlines than its budget within ``[limits] arm_health_window_s``."""
    if ctl.preflight_failure and not ctl.stand.realtime.allow_failed_preflight:
        return (f"the pre-flight timing check failed at start-up ({ctl.preflight_failure}): this computer "
                "cannot hold the loop's rate (dockstand check-host; docs/deploy.md). Fix it, or set [realtime] "
                "allow_failed_preflight = true to arm anyway")
    lp = ctl.loop
    if lp is None or ctl.lockstep:
        return None
    lim = ctl.stand.limits
    ring = lp.timing
    n = min(ring.count, ring.capacity)
    if n == 0:
        return None
    k = np.arange(ring.count - n, ring.count) % ring.capacity
    slots = ring.slot[k]
    recent = slots >= slots.max() - int(lim.arm_health_window_s / ctl.period_s)
    missed = int(ring.missed[k][recent].sum())
    budget = lim.miss_budget * lim.arm_health_window_s / lim.miss_window_s
    if missed > budget:
        return (f"the loop missed {missed} deadlines in the last {lim.arm_health_window_s:g} s (budget "
                f"{lim.miss_budget} per {lim.miss_window_s:g} s): this computer cannot hold the loop's rate now "
                "(dockstand check-host; docs/deploy.md)")
    return None


def log_header(ctl) -> dict:
    """The run log's header for an arm now (the stand snapshot, the case, the loop's settings)."""
    return {"config": ctl.stand.raw, "case": str(ctl.case_path) if ctl.case_path else None,
            "case_digest": ctl.case.digest if ctl.case else None,
            "kind": "hil", "compensate": ctl.compensate, "tau_s": ctl.tau, "lockstep": ctl.lockstep,
            "rate_hz": ctl.stand.rate_hz,
            # the sensing low-pass in effect (the config snapshot may be overridden, e.g. by the demo)
            "sensing_filter": {"cutoff_hz": ctl.stand.sensing.filter_cutoff_hz,
                               "damping": ctl.stand.sensing.filter_damping},
            # likewise the contact gate and the delay identification in effect
            "contact_gate": dataclasses.asdict(ctl.stand.contact_gate),
            "delay_identify": ctl.stand.delays.identify,
            # the run's predictor: the case's own (with its reason) or the stand's
            **dict(zip(("delay_predictor", "delay_predictor_reason"), PR.run_predictor(ctl)[1:])),
            # tau's platform part in effect (what the identification measures; the rest is the
            # measurement's: the fidelity verdict compares the lead's platform part)
            "delay_platform_s": ctl.stand.delays.platform_s,
            # the state x's layout: two spacecraft, or the berthing arm (row 0) and its payload
            "flight": "berthing" if ctl.sc is not None and ctl.sc.env[SCM.E_FLIGHT] != 0.0 else "spacecraft",
            **ctl.log_extra}


def expected_log_bytes(ctl) -> int:
    """What a run log of the loaded case takes, at most: the records over the case's duration
    plus the arming time limit and a minute of stopping and holding, and its events."""
    dur = (ctl.case.duration_s if ctl.case is not None else 60.0) + ctl.stand.limits.arm_timeout_s + 60.0
    return int(8 * ctl.row.size * ctl.stand.rate_hz * dur * 1.1) + (1 << 20)


def prepare_arm_log(ctl):
    """Open the run log of the next arm, off the loop (the command's worker thread, or the
    caller of :meth:`command`): the free disk space checked against
    :meth:`expected_log_bytes`, the file created, its header written, its writer started.
    None when recording is off. Raises OSError (said by :meth:`log_error_text`)."""
    rec = ctl.recorder
    if not rec.enabled:
        return None
    rec.log_dir.mkdir(parents=True, exist_ok=True)
    import shutil
    free = shutil.disk_usage(rec.log_dir).free
    need = expected_log_bytes(ctl)
    if free < need:
        import errno
        raise OSError(errno.ENOSPC, f"{free / 1e6:.0f} MB free in {rec.log_dir}, the run log needs up to "
                                    f"{need / 1e6:.0f} MB")
    return rec.prepare(log_name(ctl), ctl.fields, ctl.row, log_header(ctl))


def log_name(ctl) -> str:
    """A run log's name after its time: the host, the stand and the case
    (``<host>-<stand>-<case>``: logs gathered from several stands keep saying where each ran),
    each cut to file-name characters."""
    import re
    import socket

    def word(x: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.]+", "_", x).strip("_.")[:40] or "x"
    return "-".join(word(x) for x in (socket.gethostname().split(".")[0], ctl.stand.name,
                                      ctl.case.name if ctl.case else "run"))


def log_error_text(e: BaseException) -> str:
    why = getattr(e, "strerror", None) or str(e) or type(e).__name__
    where = getattr(e, "filename", None)
    return plain_text(f"the run log cannot be opened: {why}{f' ({where})' if where else ''}. Nothing was "
                      "armed; free disk space or fix [runlog] directory, then arm again", 600)


def discard_log(ctl, writer) -> None:
    """Close and remove a run log opened for an arm that was refused (off the loop)."""
    ctl.recorder.discard(writer)


def run_id(ctl) -> str | None:
    """The current (or last) run: its log's name without the extension, e.g.
    ``20261125-021335-nominal`` (None before the first arm or without a log)."""
    return Path(ctl.log_path).stem if ctl.log_path else None


def status(ctl) -> dict:
    s = ctl.supervisor
    return {"state": s.state.name, "phase": ctl.phase.name, "t": ctl.t, "t_run": ctl.t_run,
            "trip_reason": s.trip_reason, "trip": ctl.trip_text, "case": str(ctl.case_path) if ctl.case_path else None,
            "allowed": s.allowed(), "cycles": ctl.loop.cycles if ctl.loop else 0,
            "missed": ctl.loop.missed if ctl.loop else 0, "log": str(ctl.log_path) if ctl.log_path else None,
            "sensor_link": ctl.sensor.transport.status, "platform_link": ctl.platform.transport.status,
            "links": {"sensor": ctl.links.link_report(ctl.sensor.transport),
                      "platform": ctl.links.link_report(ctl.platform.transport)},
            "platform_state": ctl.platform_state().name if ctl.platform_state() is not None else None,
            "ready": ctl.phase is Phase.READY, "finish_reason": ctl.finish_reason, "wait": wait_report(ctl),
            "run_id": run_id(ctl), "limits": console_limits(ctl), "mechanism": mechanism(ctl),
            "tared": ctl.sensing.tared, "taring": ctl.sensing.taring, "event_seq": ctl.recorder.event_seq,
            "instance": ctl.instance, "recorder": recorder_health(ctl), "health": health(ctl),
            "fidelity": last_verdict(ctl)}


def last_verdict(ctl) -> dict | None:
    """The last closed run's fidelity verdict for the console (its run id, status and reason;
    rt.analysis.fidelity), None while its log is open or before it was judged. A dict lookup:
    the command thread's."""
    v = ctl.recorder.verdict_of(ctl.log_path) if ctl.recorder.writer is None else None
    return None if v is None else {"run_id": run_id(ctl), "status": v.get("status"), "reason": v.get("reason")}


def recorder_health(ctl) -> dict:
    """The run log's state (rt.control.recorder.Recorder.health) and the free space where
    logs go. Off the loop (a statvfs)."""
    h = ctl.recorder.health()
    try:
        import shutil
        h["free_mb"] = round(shutil.disk_usage(ctl.recorder.log_dir).free / 1e6, 1)
    except OSError:
        h["free_mb"] = None
    if ctl.case is not None:
        h["run_needs_mb"] = round(expected_log_bytes(ctl) / 1e6, 1)
    h["on_failure"] = ctl.stand.runlog_on_failure
    return h


def health(ctl) -> dict:
    """What may refuse an ARM or has stopped a cycle: the pre-flight check, the loop's
    recent misses, the cycle's failures and the fail-safe hold, the command path's counts."""
    port = ctl.port
    return {"preflight_failure": ctl.preflight_failure,
            "allow_failed_preflight": ctl.stand.realtime.allow_failed_preflight,
            "arm_refusal": health_refusal(ctl) if ctl.supervisor.state is State.CONFIGURED else None,
            "cycle_failures": ctl.cycle_failures, "failsafe": ctl.failsafe,
            "commands": {"executed": port.executed, "busy_refused": port.busy_refused,
                         "over_budget": port.over_budget}}


def mechanism(ctl) -> dict:
    """The mechanism's wired signals in the newest STATUS (``rt.control.mechanism_inputs``)
    and the run's capture time. Not real-time (allocates)."""
    cfg = ctl.stand.mechanism_inputs
    d = MI.describe(cfg, int(ctl.ins[CK.IN_INPUTS]))
    d.update(wired=cfg.wired, capture_bit=cfg.capture, latch_bits=list(cfg.latches),
             capture_t_run=ctl.capture_t_run)
    link = ML.describe(ctl)
    if link is not None:            # the mechanism's own link says it, not the platform's inputs
        d.update(wired=True, capture=link["capture"] if link["ok"] else None,
                 latches=link["latches"] if link["ok"] else [None] * len(link["latches"]), link=link)
    elif not cfg.wired:
        d["state"] = "unknown (no mechanism link and no platform inputs wired)"
    return d


def console_limits(ctl) -> dict:
    from rt.config.stand import console_limits
    return console_limits(ctl.stand)


def wait_report(ctl) -> dict | None:
    """The wall clock's wait (margin now, late sleeps); None in lockstep or before the loop."""
    report = getattr(ctl.loop.clock, "report", None) if ctl.loop else None
    return report() if report else None


def summary(ctl) -> dict:
    """The last run's figures; its energy audit and fidelity verdict (rt.analysis.audit) once
    its log is closed (waits for the writer thread to close it). Not real-time."""
    lp = ctl.loop
    audit = fidelity = None
    if ctl.log_path is not None and ctl.recorder.writer is None:
        ctl.recorder.wait_closed()
        audit = ctl.recorder.audit_of(ctl.log_path)
        fidelity = ctl.recorder.verdict_of(ctl.log_path)
    return {"energy_audit": audit, "fidelity": fidelity, "state": ctl.supervisor.state.name, "finish_reason": ctl.finish_reason,
            "trip_reason": ctl.supervisor.trip_reason, "trip": ctl.trip_text,
            "first_contact_s": (float(ctl.stats[CK.ST_FIRST_CONTACT]) if ctl.stats[CK.ST_FIRST_CONTACT] >= 0
                                else None),
            "capture_signal_s": ctl.capture_t_run,
            # did the mechanism say so: True (its capture signal rose in the run), False (it was
            # watched and never did), None (nothing watches it: no link, no wired input)
            "captured": (True if ctl.capture_t_run is not None else
                         False if (ctl.mechanism_io is not None or ctl.stand.mechanism_inputs.capture >= 0) else None),
            "peak_force_n": float(ctl.stats[CK.ST_PEAK_F]), "peak_moment_nm": float(ctl.stats[CK.ST_PEAK_M]),
            "max_platform_excursion_m": float(ctl.stats[CK.ST_MAX_EXC]),
            "cycles": lp.cycles if lp else 0, "overruns": lp.overruns if lp else 0,
            "missed_deadlines": lp.missed if lp else 0, "wait": wait_report(ctl),
            "timing": lp.timing.stats() if lp else {},
            "log": str(ctl.log_path) if ctl.log_path else None, "t_run_s": ctl.t_run, "t_dynamics_start_s": ctl.t_dynamics_start}


def stats_first_contact(ctl) -> float | None:
    """This run's first contact, s of run time (None: none yet)."""
    v = float(ctl.stats[CK.ST_FIRST_CONTACT])
    return v if v >= 0.0 else None
