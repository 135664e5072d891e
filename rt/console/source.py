"""Where the console's samples come from: a running controller (:class:`LiveSource`: telemetry
SUB + command DEALER) or a run log (:class:`ReplaySource`). Both give the panels the same
sample dicts (``{"cycle", "t_ns", "state", field: value}``, the record layout of ``describe`` /
the log) through a non-blocking :meth:`poll`; neither adds work to the controller's loop
beyond what telemetry already does (the controller publishes whether anyone listens).

Not real-time (the console's own process).
"""
from __future__ import annotations

import time
from collections import deque
from pathlib import Path

import msgpack
import numpy as np
import zmq

from rt.record.telemetry import LEASED, CommandClient, decode_state

HEARTBEAT_S = 0.5
SILENT_S = 1.5          # no reply to the status polls for this long: the controller is not answering
UNANSWERED_S = 2.0      # a command with no reply after this long is reported as not answered
HISTORY_EVENTS = 50     # a console attaching shows this many of the controller's recent events


class WatchOnly(Exception):
    """A leased command from a console started with ``--watch``: never sent."""


class LiveSource:
    """Attach to a controller: ``describe`` (layout, PUB endpoint), then subscribe. ``watch``:
    leased commands and ``acquire`` are refused here and never sent. The console polls
    ``status`` every :data:`HEARTBEAT_S` (it renews the lease while this console holds it)."""

    live = True

    def __init__(self, cmd_endpoint: str, *, name: str = "console", watch: bool = False, keys=None,
                 timeout_s: float = 2.0, context: zmq.Context | None = None):
        self.ctx = context or zmq.Context.instance()
        self.watch = bool(watch)
        self.keys = keys
        self.cli = CommandClient(cmd_endpoint, name=name, timeout_s=timeout_s, context=self.ctx, keys=keys)
        self.name = name
        d = self.cli.request("describe")
        self.describe = d
        self._set_layout(d)
        self.identity = d.get("identity") or {}
        self.sub = self.ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.RCVHWM, 64)
        if keys is not None:
            keys.apply(self.sub)
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")
        pub = d["pub_endpoint"]
        if cmd_endpoint.startswith("tcp://") and pub.startswith("tcp://"):
            # the PUB's own address may be 0.0.0.0/*: reach it at the host we reached the commands on
            host = cmd_endpoint[6:].rsplit(":", 1)[0]
            pub = f"tcp://{host}:{pub.rsplit(':', 1)[1]}"
        self.sub.connect(pub)
        self.status: dict = {}
        self.replies_seen: deque = deque(maxlen=64)     # the newest command replies (not status)
        self._pending: dict[int, str] = {}
        self._next_status = 0.0
        self.holds_lease = False
        self.received = 0
        self._sent_at: dict[int, float] = {}
        self._expired: dict[int, str] = {}           # requests reported unanswered: a late reply is named
        self.last_reply_t = time.monotonic()         # describe just answered
        # the controller's events by their number (eseq, 1, 2, ...): every one up to _ev_floor
        # was delivered (or is gone from its history), the others delivered are in _ev_seen; a
        # gap (the subscription dropped some at its high-water mark) is asked for with "events"
        self._ev_floor: int | None = None
        self._ev_seen: set[int] = set()
        self._ev_asking = False
        self._ev_prev_seq = 0          # the event count of the previous status
        self._notes: list[dict] = []   # the console's own lines for the event log
        self._ev_instance = None       # the controller whose events these are (status "instance")
        self._ev_history_upto = 0      # the first controller's events up to this one came before this console
        self._ev_first_instance = None
        self._ev_settled = 0           # events up to this number should have arrived by now
        self.events_recovered = 0
        self._fidelity_seen = None     # the run whose fidelity verdict the event log has had

    def _set_layout(self, d: dict) -> None:
        self.fields = [(str(k), int(n)) for k, n in d["fields"]]
        self.width = sum(n for _, n in self.fields)
        self._describing = False

    # ---------------------------------------------------------------- commands
    def send(self, cmd: str, **args) -> int:
        """Queue a command (non-blocking); the reply arrives through :meth:`poll`."""
        if self.watch and (cmd in LEASED or cmd in ("acquire", "release")):
            raise WatchOnly(f"{cmd}: this console watches only (--watch); it never sends leased commands")
        rid = self.cli.send(cmd, **args)
        self._pending[rid] = cmd
        self._sent_at[rid] = time.monotonic()
        return rid

    def silent_s(self, now: float | None = None) -> float:
        """Seconds since the controller last answered anything (the status polls go out every
        HEARTBEAT_S: more than SILENT_S means it is gone, stuck or unreachable)."""
        return (time.monotonic() if now is None else now) - self.last_reply_t

    def poll(self, max_messages: int = 200) -> tuple[dict | None, list[dict], list[dict]]:
        """(newest state sample or None, events, command replies) since the last call."""
        now = time.monotonic()
        if now >= self._next_status:
            self._next_status = now + HEARTBEAT_S
            try:
                self.send("status")
            except TimeoutError:
                pass
        newest, events, replies = None, [], []
        n = 0
        while n < max_messages and self.sub.poll(0):
            frames = self.sub.recv_multipart()
            n += 1
            if frames[0] == b"state":
                newest = frames
            elif frames[0] == b"event":
                ev = msgpack.unpackb(frames[1], raw=False)
                if self._take_event(ev):
                    events.append(ev)
        while self.cli.sock.poll(0):
            r = msgpack.unpackb(self.cli.sock.recv_multipart()[-1], raw=False)
            self.last_reply_t = time.monotonic()
            cmd = self._pending.pop(r.get("id"), None)
            self._sent_at.pop(r.get("id"), None)
            if cmd is None:                           # a late answer to a request reported unanswered
                cmd = self._expired.pop(r.get("id"), None)
                if cmd is None:
                    continue
                r["late"] = True
            r["cmd"] = cmd
            if cmd == "describe" and r.get("ok"):
                self.describe = r
                self.identity = r.get("identity") or self.identity
                self._set_layout(r)
            elif cmd == "status":
                self._note_fidelity(r.get("fidelity"), attaching=not self.status)
                self.status = r
                had_lease = self.holds_lease
                self.holds_lease = r.get("lease") == self.name
                self._check_events(r.get("event_seq"), r.get("instance"), had_lease)
            elif cmd == "events":
                self._ev_asking = False
                got = [e for e in r.get("events") or [] if isinstance(e, dict)]
                if got and self._ev_floor is not None and got[0].get("eseq", 0) > self._ev_floor + 1:
                    self._advance_floor(got[0]["eseq"] - 1)      # older ones left its history: gone
                for e in got:
                    if e.get("eseq", 0) <= self._ev_settled and self._take_event(e):
                        if self._ev_instance == self._ev_first_instance and e["eseq"] <= self._ev_history_upto:
                            e["history"] = True
                        else:
                            e["recovered"] = True
                            self.events_recovered += 1
                        events.append(e)
            else:
                if cmd in ("acquire", "release"):
                    self.holds_lease = bool(r.get("ok")) and cmd == "acquire"
                replies.append(r)
                self.replies_seen.append(r)
        for rid, t in list(self._sent_at.items()):        # commands the controller never answered
            if now - t > UNANSWERED_S:
                del self._sent_at[rid]
                cmd = self._pending.pop(rid, None)
                if cmd == "events":
                    self._ev_asking = False
                if cmd not in (None, "status", "events"):
                    self._expired[rid] = cmd
                    r = {"ok": False, "cmd": cmd, "id": rid, "unanswered": True,
                         "reason": f"no answer from the controller within {UNANSWERED_S:g} s: "
                                   "it may not have been delivered or executed"}
                    replies.append(r)
                    self.replies_seen.append(r)
        if self._notes:
            events.extend(self._notes)
            self._notes.clear()
        sample = None
        if newest is not None:
            m = msgpack.unpackb(newest[1], raw=False)
            if len(m["d"]) != 8 * self.width:
                # the record layout changed (a case with other vehicle states was loaded): ask again
                if not self._describing:
                    self._describing = True
                    self.send("describe")
            else:
                sample = decode_state(newest, self.fields)
        if sample is not None:
            self.received += 1
        return sample, events, replies

    def _note_fidelity(self, fid, attaching: bool) -> None:
        """A status brings the last closed run's fidelity verdict (``fidelity``: its run id,
        status and reason; judged by the controller's log writer once the run's log is closed):
        a line of the event log, once per run (``history`` when it came before this console)."""
        if not isinstance(fid, dict) or fid.get("run_id") == self._fidelity_seen:
            return
        self._fidelity_seen = fid.get("run_id")
        self._notes.append({"kind": "fidelity_verdict", "t": None, **fid, **({"history": True} if attaching else {})})

    # ---------------------------------------------------------------- events by number
    def _take_event(self, ev: dict) -> bool:
        """Whether ``ev`` is new (not delivered yet); notes it as delivered."""
        k = ev.get("eseq")
        if not isinstance(k, int):
            return True                               # a controller that does not number them
        if self._ev_floor is not None and (k <= self._ev_floor or k in self._ev_seen):
            return False
        self._ev_seen.add(k)
        return True

    def _advance_floor(self, floor: int) -> None:
        self._ev_floor = floor if self._ev_floor is None else max(self._ev_floor, floor)
        while self._ev_floor + 1 in self._ev_seen:
            self._ev_floor += 1
        self._ev_seen = {k for k in self._ev_seen if k > self._ev_floor}

    def _check_events(self, seq, instance=None, had_lease: bool = False) -> None:
        """A status says the controller (``instance``) has recorded ``seq`` events: ask for
        the ones this console has not had and will not get any more — below the newest it
        received, or counted by the previous status already (half a second to arrive); at
        attach, its HISTORY_EVENTS newest. Another instance is a new controller (restarted):
        its numbering starts again. (A status may count fewer events than the subscription
        already brought: it was answered before them.)"""
        if not isinstance(seq, int):
            return
        if instance != self._ev_instance:
            if self._ev_instance is not None:
                self._notes.append({"kind": "controller_restarted", "t": None, "lease_lost": had_lease})
            else:
                self._ev_history_upto = seq       # attaching: these happened before this console
                self._ev_first_instance = instance
            self._ev_instance = instance
            self._ev_floor, self._ev_seen, self._ev_prev_seq = None, set(), 0   # numbered afresh
        if self._ev_floor is None:
            self._advance_floor(max(0, seq - HISTORY_EVENTS))
            self._ev_settled = seq                        # history: nothing of it is in flight
        else:
            self._advance_floor(self._ev_floor)
            self._ev_settled = max(self._ev_prev_seq, max(self._ev_seen, default=0))
        self._ev_prev_seq = seq
        if self._ev_settled > self._ev_floor and not self._ev_asking:
            try:
                self.send("events", since=self._ev_floor)
                self._ev_asking = True
            except TimeoutError:
                pass

    def close(self) -> None:
        self.sub.close(0)
        self.cli.close()


PHASE_TARE = 2              # rt.control.phases.Phase.TARE (the console's view.PHASES)


def load_log(path, progress=None, chunk: int = 1 << 16):
    """The whole run log (rt.record.runlog.RunLog) read in chunks of records, ``progress(done,
    total)`` told after each: a long log's loading shows on stderr instead of a blank pane."""
    from rt.record.logscan import read_columns, scan
    from rt.record.runlog import RecordLayout, RunLog
    idx = scan(path)
    n = idx.n_records
    cols = {k: np.empty((n, size)) if size > 1 else np.empty(n) for k, size in idx.fields.items()}
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        for k, v in read_columns(idx, None, a, b).items():
            cols[k][a:b] = v
        if progress is not None:
            progress(b, n)
    return RunLog(idx.header, cols, idx.events, n, idx.truncated, idx.footer, RecordLayout(idx.fields))


class ReplaySource:
    """A run log played through the same panels: :meth:`poll` gives the record at the playback
    clock (``speed`` x wall time; ``paused``; :meth:`seek`). A truncated log plays to its last
    complete record; ``truncated`` says so and ``ended`` becomes True at the end."""

    live = False
    SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)

    def __init__(self, path: str | Path, *, clock=time.monotonic, progress=None):
        self.path = Path(path)
        self.log = load_log(path, progress)
        self.clock = clock
        self.fields = [(k, int(n)) for k, n in self.log.layout.as_list()] if self.log.layout else []
        self.truncated = bool(self.log.truncated)
        self.n = self.log.n_records
        rate = float(self.log.header.get("rate_hz") or 1000.0)
        # the playback clock runs on the cycle count (t is NaN outside the run)
        self.t = np.asarray(self.log.fields["cycle"], dtype=float) / rate if self.n else np.zeros(0)
        self._rate = rate
        # an event without a cycle was written after the records (the writer's energy audit,
        # before the footer): it plays at the end
        last = int(self.log.fields["cycle"][-1]) if self.n else 0
        first = int(self.log.fields["cycle"][0]) if self.n else 0
        # an event's time as the console shows it: s since the log's first record (the arm), by
        # its cycle (the controller's own clock counts from the loop's start); events from
        # before the log (the case loaded, the arm command: ``before_log``) come out negative
        self.events_t = sorted(({**e, "cycle": e["cycle"] if "cycle" in e else last,
                                 **({"t": (e["cycle"] - first) / rate, "t_controller": e.get("t")}
                                    if "cycle" in e else {})} for e in self.log.events),
                               key=lambda e: e["cycle"])
        self.describe = {"fields": self.fields, "identity": {"stand": (self.log.header.get("config") or {}).get("name"),
                                                            "run_id": self.path.stem}}
        self.identity = self.describe["identity"]
        tn = self.log.fields.get("timing_ns")
        self.status = {"state": None, "case": self.log.header.get("case"), "lease": None, "replay": True,
                       # a stepped run (lockstep, a test rig) records no wall-clock timing: all zero
                       "timing_recorded": bool(tn is not None and np.any(np.asarray(tn) != 0))}
        try:                      # the margins' limits from the log's own config snapshot
            from rt.config.stand import console_limits, stand_from_snapshot
            self.status["limits"] = console_limits(stand_from_snapshot(self.log.header["config"],
                                                                       f"{self.path}: header.config"))
        except (KeyError, ValueError, TypeError):
            self.status["limits"] = None
        # where each tare ends (the phase leaves TARE): the plots start after the last one before the record shown
        ph = np.asarray(self.log.fields["phase"]) if "phase" in self.log.fields and self.n else np.zeros(0)
        tare = int(PHASE_TARE)
        self.tare_ends = np.nonzero((ph[:-1] == tare) & (ph[1:] != tare))[0] + 1 if ph.size > 1 else np.zeros(0, int)
        self.events_reset = False  # a seek: the app rewrites the event log up to the new time
        self.speed = 1.0
        self.paused = False
        self.index = 0
        self._ev = 0
        self._t_play = float(self.t[0]) if self.n else 0.0
        self._last: float | None = None     # the playback clock starts at the first poll, not at loading
        self.ended = self.n == 0
        self.holds_lease = False
        self.watch = True

    def set_speed(self, s: float) -> None:
        self.speed = float(min(10.0, max(0.1, s)))

    def faster(self, up: bool) -> None:
        i = min(range(len(self.SPEEDS)), key=lambda k: abs(self.SPEEDS[k] - self.speed))
        self.set_speed(self.SPEEDS[max(0, min(len(self.SPEEDS) - 1, i + (1 if up else -1)))])

    def seek(self, dt_s: float) -> None:
        """Move the playback clock by ``dt_s`` (negative: back)."""
        if self.n:
            self._t_play = float(np.clip(self._t_play + dt_s, self.t[0], self.t[-1]))
            self._ev = 0
            self.events_reset = True
            self.ended = False

    def sample_at(self, i: int) -> dict:
        out = {"cycle": int(self.log.fields["cycle"][i]), "t_ns": 0, "state": int(self.log.fields["state"][i])}
        for name, size in self.fields:
            a = self.log.fields[name]
            out[name] = a[i] if size > 1 else float(a[i])
        return out

    def wrench_window(self, seconds: float, n: int, after_tare: bool = False) -> np.ndarray:
        """The contact wrench ``w_P`` over the last ``seconds`` of log time up to the record
        shown, at most about ``n`` rows (every k-th record): the replay's plots follow the log's
        clock, whatever the playback speed, pause or seek. ``after_tare``: not before the end of
        the last tare (the untared values would hold the plot's range for its whole window)."""
        if not self.n:
            return np.zeros((0, 6))
        i1 = self.index + 1
        i0 = int(np.searchsorted(self.t, self.t[self.index] - seconds, side="left"))
        if after_tare and len(self.tare_ends):
            k = int(np.searchsorted(self.tare_ends, self.index, side="right")) - 1
            if k >= 0:
                i0 = max(i0, int(self.tare_ends[k]))
        step = max(1, (i1 - i0) // max(1, n))
        return np.asarray(self.log.fields["w_P"][i0:i1:step], dtype=float)

    def send(self, cmd: str, **args) -> int:
        raise WatchOnly(f"{cmd}: a replay sends no commands")

    def poll(self, max_messages: int = 0) -> tuple[dict | None, list[dict], list[dict]]:
        now = self.clock()
        if not self.paused and not self.ended and self._last is not None:
            self._t_play += (now - self._last) * self.speed
        self._last = now
        if not self.n:
            return None, [], []
        i = int(np.searchsorted(self.t, self._t_play, side="right")) - 1
        i = max(0, min(self.n - 1, i))
        if i >= self.n - 1:
            self.ended = True
            self._t_play = float(self.t[-1])
        events = []
        while self._ev < len(self.events_t) and self.events_t[self._ev].get("cycle", 0) / self._rate <= self._t_play:
            events.append(self.events_t[self._ev])
            self._ev += 1
        self.index = i
        return self.sample_at(i), events, []

    def close(self) -> None:
        pass
