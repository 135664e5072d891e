"""The supervisor state machine of the controller.

::

    IDLE --load_case--> CONFIGURED --arm--> ARMED --start--> RUNNING --stop / finish--> DONE
     ^                   |  ^  |              |                                        |
     |                   |  |  +--load_case   +--stop (disarm) --> CONFIGURED           |
     +------reset--------+  +-------------------------reset / load_case---------------+
    any state --trip(reason)--> SAFE          any state --abort--> ABORTED (SAFE stays SAFE, DONE stays DONE)
    SAFE / ABORTED --reset--> CONFIGURED (case kept) or IDLE (no case)

* ``load_case`` (IDLE, CONFIGURED, DONE): the case is validated by the ``load_case`` guard.
* ``arm`` (CONFIGURED): the controller's arming procedure (drivers up, sensor streaming, tare
  done, platform ENGAGED and moved slowly to the case's initial pose) runs as the ``arm``
  guard or before the command is issued; ``start`` is refused until the ``start`` guard says
  the platform is ready.
* ``tare`` (CONFIGURED, ARMED): no state change; an event.
* ``reset_fault``, ``retract``, ``park`` (any state but ARMED and RUNNING): the ways back after
  a trip (rt.control.recovery); no state change.
* ``abort``: accepted in **every** state, always; never refused by a guard. In DONE the run's
  outcome is kept (the state stays DONE; the controller stops whatever still moves).
* ``trip(reason)``: from the safety monitor, any state -> SAFE (ABORTED stays ABORTED).
* ``finish(reason)``: end criteria met while RUNNING -> DONE.
* ``reset``: DONE/SAFE/ABORTED -> CONFIGURED if a case is loaded, else IDLE; CONFIGURED -> IDLE
  (unloads the case). From SAFE/ABORTED the ``reset`` guard can refuse until the platform has
  come to rest and is frozen.

Every accepted command, refusal, trip and transition is an :class:`Event` passed to each
listener (run log, telemetry) and kept in a bounded history. The supervisor is driven from
the loop thread only (commands are polled there), so it needs no locks.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Callable


class State(IntEnum):
    IDLE = 0
    CONFIGURED = 1
    ARMED = 2
    RUNNING = 3
    DONE = 4
    SAFE = 5
    ABORTED = 6


SAFE_STATES = (State.SAFE, State.ABORTED)
COMMANDS = ("load_case", "arm", "start", "stop", "abort", "tare", "reset", "reset_fault", "retract", "park")
#: the ways back (rt.control.recovery): legal whenever no run is armed or running; no state change
_WAY_BACK = {s: s for s in (State.IDLE, State.CONFIGURED, State.DONE, State.SAFE, State.ABORTED)}

# command -> {from_state: to_state}; absent = illegal in that state ("tare" keeps the state)
_TABLE: dict[str, dict[State, State]] = {
    "load_case": {State.IDLE: State.CONFIGURED, State.CONFIGURED: State.CONFIGURED, State.DONE: State.CONFIGURED},
    "arm": {State.CONFIGURED: State.ARMED},
    "start": {State.ARMED: State.RUNNING},
    "stop": {State.RUNNING: State.DONE, State.ARMED: State.CONFIGURED},
    "tare": {State.CONFIGURED: State.CONFIGURED, State.ARMED: State.ARMED},
    "reset": {State.DONE: State.CONFIGURED, State.SAFE: State.CONFIGURED, State.ABORTED: State.CONFIGURED,
              State.CONFIGURED: State.IDLE},
    "reset_fault": _WAY_BACK,
    "retract": _WAY_BACK,
    "park": _WAY_BACK,
}
#: the operator's step from a state towards CONFIGURED (a refusal of a command legal there says it)
_REACH_CONFIGURED: dict[State, str] = {State.IDLE: "load a case", State.DONE: "reset", State.SAFE: "reset",
                                       State.ABORTED: "reset"}


@dataclass(frozen=True)
class Event:
    """Something the supervisor saw. ``kind``: "command" (accepted), "refused", "transition",
    "trip", "finish"."""

    kind: str
    cycle: int
    t_ns: int
    state: str               # state after the event
    previous: str | None = None
    command: str | None = None
    reason: str | None = None
    client: str | None = None
    detail: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Reply:
    ok: bool
    state: State
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "state": self.state.name, "reason": self.reason}


Guard = Callable[..., "str | None"]  # returns None to allow, or the refusal reason


@dataclass
class Supervisor:
    """State machine; see the module docstring. ``guards[command](**args)`` may refuse with a
    reason; ``listeners`` receive every :class:`Event`."""

    guards: dict[str, Guard] = field(default_factory=dict)
    listeners: list[Callable[[Event], None]] = field(default_factory=list)
    history_size: int = 1000
    state: State = State.IDLE
    case: Any = None
    trip_reason: str | None = None
    cycle: int = 0          # set by the controller each cycle (stamps the events)
    t_ns: int = 0

    def __post_init__(self):
        self.history: deque[Event] = deque(maxlen=self.history_size)

    # ---------------------------------------------------------------- queries
    @property
    def running(self) -> bool:
        return self.state is State.RUNNING

    @property
    def safe(self) -> bool:
        return self.state in SAFE_STATES

    def allowed(self) -> list[str]:
        """Commands legal in the current state (abort always)."""
        return [c for c in COMMANDS if c == "abort" or self.state in _TABLE[c]]

    # ---------------------------------------------------------------- inputs
    def command(self, name: str, client: str | None = None, **args: Any) -> Reply:
        """Apply an operator command; refused commands change nothing and say why."""
        if name == "abort":
            return self._abort(client, args.get("reason"))
        if name not in _TABLE:
            return self._refuse(name, client, f"unknown command {name!r}; known: {', '.join(COMMANDS)}")
        table = _TABLE[name]
        if self.state not in table:
            legal = ", ".join(s.name for s in table)
            why = f"{name} is not allowed in state {self.state.name} (only in {legal})"
            step = _REACH_CONFIGURED.get(self.state) if State.CONFIGURED in table else None
            if step:
                why += f": {step} first"
                guard = self.guards.get(name)   # what would refuse it next: said now, not after the reset
                try:
                    then = guard(**args) if guard is not None else None
                except Exception:  # noqa: BLE001 - a hint, never a crash
                    then = None
                if then:
                    why += f"; then it would still be refused: {then}"
            return self._refuse(name, client, why)
        guard = self.guards.get(name)
        if guard is not None:
            try:
                why = guard(**args)
            except Exception as e:  # a guard that fails refuses, it never crashes the loop
                why = f"{type(e).__name__}: {e}"
            if why:
                return self._refuse(name, client, why)
        target = table[self.state]
        if name == "load_case":
            self.case = args.get("case")
        if name == "reset":
            if self.state is State.CONFIGURED:
                self.case = None
            elif self.case is None:
                target = State.IDLE
            self.trip_reason = None
        self._emit(Event("command", self.cycle, self.t_ns, self.state.name, command=name, client=client))
        self._go(target, command=name)
        return Reply(True, self.state)

    def trip(self, reason: str, detail: str | None = None) -> Reply:
        """A safety trip: any state -> SAFE (ABORTED stays ABORTED; the first reason is kept)."""
        self._emit(Event("trip", self.cycle, self.t_ns, self.state.name, reason=reason, detail=detail))
        if self.state is State.SAFE or self.state is State.ABORTED:
            return Reply(True, self.state, self.trip_reason)
        self.trip_reason = reason
        self._go(State.SAFE, reason=reason)
        return Reply(True, self.state, reason)

    def finish(self, reason: str) -> Reply:
        """End criteria met (time limit, captured and settled, separated): RUNNING -> DONE."""
        if self.state is not State.RUNNING:
            return Reply(False, self.state, f"finish only while RUNNING (state {self.state.name})")
        self._emit(Event("finish", self.cycle, self.t_ns, self.state.name, reason=reason))
        self._go(State.DONE, reason=reason)
        return Reply(True, self.state)

    # ---------------------------------------------------------------- internals
    def _abort(self, client, reason) -> Reply:
        self._emit(Event("command", self.cycle, self.t_ns, self.state.name, command="abort", client=client,
                         reason=reason))
        if self.state is State.SAFE or self.state is State.ABORTED:
            return Reply(True, self.state, "already in a safe state")
        if self.state is State.DONE:
            # the run has finished and the stand stops (or has stopped) on its own: the abort
            # is honoured (the controller stops whatever still moves) and the outcome is kept
            return Reply(True, self.state, "the run had already finished: its outcome is kept, the stand stops")
        self.trip_reason = "operator abort"
        self._go(State.ABORTED, command="abort", reason=reason)
        return Reply(True, self.state)

    def _refuse(self, name, client, why) -> Reply:
        self._emit(Event("refused", self.cycle, self.t_ns, self.state.name, command=name, client=client, reason=why))
        return Reply(False, self.state, why)

    def _go(self, target: State, command: str | None = None, reason: str | None = None) -> None:
        prev = self.state
        self.state = target
        if prev is not target:
            self._emit(Event("transition", self.cycle, self.t_ns, target.name, previous=prev.name,
                             command=command, reason=reason))

    def _emit(self, ev: Event) -> None:
        self.history.append(ev)
        for f in self.listeners:
            try:
                f(ev)
            except Exception:  # a broken listener must not break the supervisor
                pass
