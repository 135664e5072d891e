"""Operator requests between the command thread and the loop (docs/controller.md, "Commands").

The telemetry server (rt.record.telemetry) receives, decodes and checks every request on its
command thread and hands the controller's commands to :meth:`OperatorPort.handle` there.
What happens next depends on the command:

* ``status`` and ``events`` are answered on the command thread from the controller's state
  (read-only; the loop is not asked);
* ``abort`` goes straight to the loop's urgent lane: it is carried out at the next cycle,
  whatever else waits;
* every other command (``load_case``, ``arm``, ``start``, ...) joins a bounded queue served in
  order by the port's **worker thread**, one at a time: the worker prepares what needs I/O —
  ``load_case`` reads and parses the case file (a regular file of at most
  :data:`MAX_CASE_BYTES`), ``arm`` opens the run log and checks the free disk space — and
  hands the finished command to the loop; it waits for the loop's answer before it takes the
  next (so an ``arm`` is prepared with the case the loop has loaded). A log prepared for an
  ``arm`` the loop then refuses is removed again by the worker.

The loop takes what is ready in :meth:`OperatorPort.drain`, called once per cycle at the end
of ``write``: the urgent lane first (aborts, and the notices of the command thread: lease
lost or taken, CURVE refusals), then prepared commands while the cycle's command budget
(``[telemetry] command_budget_us``) lasts. The loop does no file I/O and no parsing for a
request; a file that blocks (a FIFO, a hung mount) stalls only the worker.

Real time: :meth:`drain` is the loop thread's (two deque checks when nothing waits); the rest
runs on the command thread or the worker.
"""
from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable

from rt.dynamics.berthing_flight import flight_from_case
from rt.record.requests import plain_text

log = logging.getLogger("dockstand.commands")

MAX_CASE_BYTES = 1 << 20        # a case file is a few kB
MAX_WAITING = 16                # commands queued behind the one in progress
MAX_URGENT = 64                 # aborts and notices waiting for the loop


def read_case_file(path_text: str):
    """Parse the case file at ``path_text`` off the loop: ``(case, path, None)`` or ``(None,
    path, why)``. Only a regular file of at most :data:`MAX_CASE_BYTES` is read (a FIFO or a
    device would block; a huge file is not a case). Not real-time."""
    from rt.config._schema import ConfigError
    from rt.config.case import load_case

    path = Path(path_text)
    try:
        st = os.stat(path)
    except OSError as e:
        return None, path, f"cannot read the case file {path}: {e.strerror or e}"
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a device or socket"
        return None, path, f"{path} is {what}, not a case file (a .toml file)"
    if st.st_size > MAX_CASE_BYTES:
        return None, path, (f"{path} is {st.st_size / 1e6:.1f} MB: not a case file (a case is a few kB; at most "
                            f"{MAX_CASE_BYTES >> 10} kB are read)")
    try:
        return load_case(path), path, None
    except ConfigError as e:
        return None, path, str(e)
    except Exception as e:  # noqa: BLE001 - the reason goes back to the operator
        return None, path, plain_text(f"{type(e).__name__}: {e}", 500)


#: how long a prepared command waits for a loop that has not started before it is withdrawn (s)
NOT_RUNNING_S = 2.0


class OperatorPort:
    """See the module docstring. ``ctl`` is the controller (its ``execute``, ``status``,
    ``recorder``, ``supervisor``, ``prepare_arm_log`` and ``discard_log``)."""

    def __init__(self, ctl, budget_us: float = 200.0):
        self.ctl = ctl
        self.budget_ns = int(budget_us * 1e3)
        self.urgent: deque = deque()     # ("abort"|notice) for the loop, from the command thread
        self.ready: deque = deque()      # prepared commands for the loop, from the worker
        self.waiting: deque = deque()    # commands for the worker, from the command thread
        self.busy_refused = 0
        self.executed = 0
        self.over_budget = 0             # cycles that left ready commands for the next cycle
        self._wake = threading.Event()
        self._closing = False
        # the loop has drained at least once: before that (the controller still compiling its
        # kernels) nothing it would carry out happens, and a command is answered as such
        self.loop_seen = False
        self._worker: threading.Thread | None = None

    # ------------------------------------------------------------------ command thread
    def handle(self, cmd: str, args: dict, client: str, reply_to: Callable[[dict], None] | None = None):
        """The telemetry server's handler. ``reply_to`` None (poll mode: the caller is the loop
        thread): carried out now. Else the reply, or None when it comes later."""
        ctl = self.ctl
        if cmd == "status":
            return {"ok": True, "reason": None, **ctl.status()}
        if cmd == "events":
            since = args.get("since", 0)
            return {"ok": True, "reason": None, "events": ctl.recorder.events_since(since),
                    "event_seq": ctl.recorder.event_seq}
        if reply_to is None:
            return ctl.reply_dict(ctl.command(cmd, client, **args))
        if cmd == "abort":
            if not self.loop_seen:
                return {"ok": True, "state": ctl.supervisor.state.name,
                        "reason": "nothing is armed or moving: the controller's loop has not started yet"}
            if len(self.urgent) >= MAX_URGENT:
                return {"ok": True, "reason": "an abort is already being carried out", "state": ctl.supervisor.state.name}
            self.urgent.append(("command", cmd, client, args, reply_to, None))
            return None
        if len(self.waiting) >= MAX_WAITING:
            self.busy_refused += 1
            return {"ok": False, "reason": f"busy: {len(self.waiting)} commands are waiting to be carried out; "
                                           "send it again once they are answered"}
        self.waiting.append((cmd, client, args, reply_to))
        self._start_worker()
        self._wake.set()
        return None

    def notice(self, fn: Callable[..., Any], *args: Any) -> None:
        """Have the loop call ``fn(*args)`` at its next cycle (the command thread's lease and
        CURVE news: the loop owns the supervisor, the recorder and the telemetry publisher)."""
        if len(self.urgent) < 4 * MAX_URGENT:
            self.urgent.append(("notice", fn, args))

    # ------------------------------------------------------------------ worker
    def _start_worker(self) -> None:
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="dockstand-requests", daemon=True)
            self._worker.start()

    def _work(self) -> None:
        from rt.realtime import demote_helper_thread
        try:
            demote_helper_thread()
        except Exception:  # noqa: BLE001 - it serves anyway
            pass
        while not self._closing:
            self._wake.wait(0.5)
            self._wake.clear()
            while self.waiting and not self._closing:
                cmd, client, args, reply_to = self.waiting.popleft()
                try:
                    self._carry_out(cmd, client, args, reply_to)
                except Exception as e:  # noqa: BLE001 - the worker outlives any request
                    log.exception("command %s", cmd)
                    reply_to({"ok": False, "reason": plain_text(f"{type(e).__name__}: {e}", 300),
                              "state": self.ctl.supervisor.state.name})

    def _carry_out(self, cmd: str, client: str, args: dict, reply_to: Callable[[dict], None]) -> None:
        """Prepare ``cmd`` (file I/O here, never in the loop), hand it to the loop, wait for its
        answer, send it, and clean up what the loop did not take."""
        ctl = self.ctl
        prepared = dict(args)
        writer = None
        if cmd == "load_case":
            # read only when the state allows it: a refused load_case reads nothing
            if ctl.load_allowed():
                case, path, why = read_case_file(args["case"])
                prepared = {"case": case, "path": path} if why is None else {"case_error": why, "path": path}
            else:
                prepared = {"case_unread": str(args["case"])}
        elif cmd == "arm" and ctl.arm_allowed():
            try:
                writer = ctl.prepare_arm_log()
                prepared = {"_log": writer}
            except Exception as e:  # noqa: BLE001 - an arm that cannot record is refused
                prepared = {"_log_error": ctl.log_error_text(e)}
            case = ctl.case
            try:                 # the flight model too (allocation, the case's vehicles): not in the loop
                prepared.update(_flight=flight_from_case(case), _flight_case=case)
            except Exception as e:  # noqa: BLE001 - execute refuses it with the reason, nothing armed
                prepared.update(_flight_error=f"{type(e).__name__}: {e}")
        done = threading.Event()
        box: dict = {}

        def answer(out: dict) -> None:
            box["out"] = out
            done.set()
        item = (cmd, client, prepared, answer)
        self.ready.append(item)
        t0 = time.monotonic()
        while not done.wait(0.25):
            if self._closing:
                return
            if not self.loop_seen and time.monotonic() - t0 > NOT_RUNNING_S:
                try:
                    self.ready.remove(item)      # the loop never took it: withdrawn, nothing happened
                except ValueError:
                    continue                     # taken this instant: its answer comes
                box["out"] = {"ok": False, "state": ctl.supervisor.state.name, "reason": (
                    f"the controller's loop is not running yet (it starts once its kernels are compiled: minutes "
                    f"on a first start); {cmd} was not carried out: send it again when status shows cycles")}
                break
        out = box["out"]
        if writer is not None and ctl.recorder.writer is not writer:
            ctl.discard_log(writer)      # the arm was refused: its log goes
        reply_to(out)

    # ------------------------------------------------------------------ loop thread
    def drain(self) -> None:
        """The loop's share, once per cycle: urgent items, then prepared commands while the
        budget lasts. Never raises (each item's failure is its own reply)."""
        self.loop_seen = True
        u, r = self.urgent, self.ready
        if not u and not r:
            return
        t0 = time.monotonic_ns()
        while u:
            self._run(u.popleft())
        while r:
            if time.monotonic_ns() - t0 > self.budget_ns:
                self.over_budget += 1
                return
            cmd, client, args, answer = r.popleft()
            self._run(("command", cmd, client, args, answer, None))

    def _run(self, item: tuple) -> None:
        if item[0] == "notice":
            _, fn, args = item
            try:
                fn(*args)
            except Exception:  # noqa: BLE001 - a notice never stops the loop
                log.exception("notice %s", getattr(fn, "__name__", fn))
            return
        _, cmd, client, args, answer, _ = item
        try:
            out = self.ctl.reply_dict(self.ctl.execute(cmd, client, args))
        except Exception as e:  # noqa: BLE001 - the top-level guard's job is the cycle; a command says why
            out = {"ok": False, "reason": plain_text(f"{type(e).__name__}: {e}", 300),
                   "state": self.ctl.supervisor.state.name}
        self.executed += 1
        answer(out)

    def close(self) -> None:
        """Stop the worker (a command it waits on is abandoned). Not real-time."""
        self._closing = True
        self._wake.set()
        if self._worker is not None:
            self._worker.join(timeout=2.0)
            self._worker = None


def start_telemetry(ctl):
    """The controller's telemetry and command endpoints (rt.record.telemetry.TelemetryServer)
    from the stand's ``[telemetry]``, its handler this port, its command thread started: what
    the thread learns for the loop (a lease lost or taken, CURVE refusals) reaches the loop as
    notices. Not real-time (binds sockets, starts threads)."""
    from rt.control.supervisor import COMMANDS
    from rt.record.telemetry import TelemetryServer
    tc = ctl.stand.telemetry
    curve = None
    if tc.get("curve"):
        from rt.record.curve import CurveServer
        curve = CurveServer(tc["curve"]["secret_file"], tc["curve"]["authorized_dir"])
    port = ctl.port
    tel = TelemetryServer(ctl.fields, pub_endpoint=tc["pub_endpoint"], cmd_endpoint=tc["cmd_endpoint"], curve=curve,
                          commands=(*COMMANDS, "status", "events"), decimation=tc["decimation"], sndhwm=tc["sndhwm"],
                          lease_timeout_s=tc["lease_timeout_s"], handler=port.handle,
                          on_auth_denied=lambda ev: port.notice(ctl._event, ev),
                          on_lease_lost=lambda h, why="silent": port.notice(ctl._lease_lost, h, why),
                          on_lease_acquired=lambda c: port.notice(ctl._lease_acquired, c),
                          max_requests_per_s=tc.get("max_requests_per_s", 2000.0),
                          query_rate_hz=tc.get("query_rate_hz", 50.0),
                          identity={"stand": ctl.stand.name, "stand_file": str(ctl.stand.file)})
    tel.start()
    return tel
