"""The docking mechanism's own signals over Modbus TCP (docs/platforms.md, "Mechanism I/O").

A lab reads a docking mechanism's control unit (its PLC or DAQ) the conventional way: discrete
inputs for the capture latches, the hooks, ring-in-position and soft capture; an input register
for the mechanism's fault code; a coil for the release output. ``pymodbus`` speaks the protocol
(its client here, its server in the emulator): a well-kept implementation of Modbus's framing,
exception responses and transaction ids beats a hand-written one.

:class:`MechanismIO` polls the unit from a thread of its own (``poll_hz``), never from the loop:
each poll reads the map's discrete inputs and its fault register and publishes the result as one
immutable :class:`MechanismState` (``state``: a single attribute the loop reads, swapped whole by
the poller). A failed poll — a timeout, a refused connection, a Modbus exception response — is
counted by kind (``counters``), named in ``state.error``, and leaves ``state.ok`` False; it never
raises into the caller. The release output is written by the poller too (:meth:`release`: a
request, not a call that waits).

The map (``[mechanism_io]`` of the stand file, :class:`MechanismMap`): Modbus data addresses
(0-based, as on the wire) of each signal.

Real time: :attr:`MechanismIO.state` and :meth:`MechanismIO.release` may be used by the loop
thread (an attribute read; a flag set); the rest is not real-time.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

log = logging.getLogger("dockstand.mechanism_io")


@dataclass(frozen=True)
class MechanismMap:
    """Where each signal is on the mechanism's Modbus unit (0-based data addresses)."""

    host: str = "127.0.0.1"
    port: int = 502
    device_id: int = 1
    poll_hz: float = 200.0
    timeout_s: float = 0.05
    capture: int | None = None                 # discrete input: soft capture
    latches: tuple[int, ...] = ()              # discrete inputs: each capture latch closed
    hooks: tuple[int, ...] = ()                # discrete inputs: each structural hook closed
    ring_in_position: int | None = None        # discrete input: the ring retracted / aligned
    fault_register: int | None = None          # input register: the unit's fault code (0: none)
    faults: dict = field(default_factory=dict)  # fault code -> its name
    release_coil: int | None = None            # coil: the release output (latches and hooks open)

    def discrete(self) -> list[int]:
        """Every discrete input the map reads."""
        return sorted({a for a in ((self.capture,) + self.latches + self.hooks + (self.ring_in_position,))
                       if a is not None})

    def fault_name(self, code: int) -> str:
        return self.faults.get(int(code), f"fault code {int(code)} (not in the stand's [mechanism_io] faults)")


@dataclass(frozen=True)
class MechanismState:
    """One poll of the mechanism. ``ok``: the poll succeeded (else ``error`` says why and the
    signals are the last good ones); ``seq``: polls published; ``t``: time.monotonic() of it."""

    seq: int = 0
    t: float = 0.0
    ok: bool = False
    error: str | None = "not polled yet"
    capture: bool | None = None
    latches: tuple = ()
    hooks: tuple = ()
    ring_in_position: bool | None = None
    fault: int = 0
    fault_name: str | None = None
    release_on: bool = False

    @property
    def latched(self) -> bool:
        """Any latch or hook closed, or soft capture (the units held together)."""
        return bool(self.capture) or any(self.latches) or any(self.hooks)

    @property
    def open(self) -> bool:
        """Every latch and hook reported open and no capture (a good poll)."""
        return self.ok and not self.latched


class MechanismIO:
    """The mechanism's Modbus link (the module docstring). ``client_factory(map)`` builds the
    Modbus client (tests may give their own; default pymodbus's ModbusTcpClient)."""

    def __init__(self, mp: MechanismMap, client_factory=None):
        self.map = mp
        self._factory = client_factory
        self.state = MechanismState()
        self.counters = {"polls": 0, "errors": 0, "timeouts": 0, "exceptions": 0, "disconnects": 0,
                         "releases_written": 0}
        self._release_req: bool | None = None
        self._release_on = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._client = None

    def describe(self) -> str:
        return f"modbus tcp {self.map.host}:{self.map.port} unit {self.map.device_id}"

    # ------------------------------------------------------------------ lifecycle (not real-time)
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="dockstand-mechanism-io", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        if self._client is not None:
            try:
                self._client.close()
            except Exception:  # noqa: BLE001 - closing goes on
                pass

    # ------------------------------------------------------------------ the loop's side
    def release(self, on: bool) -> None:
        """Ask the poller to set the release output (``on``) at its next poll. A flag: never waits."""
        self._release_req = bool(on)

    # ------------------------------------------------------------------ the poller
    def _make_client(self):
        if self._factory is not None:
            return self._factory(self.map)
        from pymodbus.client import ModbusTcpClient
        return ModbusTcpClient(self.map.host, port=self.map.port, timeout=self.map.timeout_s, retries=0)

    def _run(self) -> None:
        try:
            from rt.realtime import demote_helper_thread
            demote_helper_thread()
        except Exception:  # noqa: BLE001 - it polls anyway
            pass
        period = 1.0 / self.map.poll_hz
        nxt = time.monotonic()
        while not self._stop.is_set():
            self.poll_once()
            nxt += period
            rest = nxt - time.monotonic()
            if rest < -1.0:
                nxt = time.monotonic()          # far behind (a long timeout): no burst
            elif rest > 0:
                self._stop.wait(rest)

    def poll_once(self) -> MechanismState:
        """One poll (the poller thread; tests call it directly): the release output if asked,
        the discrete inputs, the fault register; the new state published and returned."""
        mp = self.map
        c = self.counters
        c["polls"] += 1
        prev = self.state
        try:
            if self._client is None:
                self._client = self._make_client()
            cl = self._client
            if not getattr(cl, "connected", True) and not cl.connect():
                raise ConnectionError(f"cannot connect to {self.describe()}")
            req = self._release_req
            if req is not None and mp.release_coil is not None:
                r = cl.write_coil(mp.release_coil, req, device_id=mp.device_id)
                self._check(r, f"write coil {mp.release_coil} (release)")
                self._release_on = req
                self._release_req = None
                c["releases_written"] += 1
            bits: dict[int, bool] = {}
            addrs = mp.discrete()
            if addrs:
                lo, hi = addrs[0], addrs[-1]
                r = cl.read_discrete_inputs(lo, count=hi - lo + 1, device_id=mp.device_id)
                self._check(r, f"read discrete inputs {lo}..{hi}")
                for a in addrs:
                    bits[a] = bool(r.bits[a - lo])
            fault = 0
            if mp.fault_register is not None:
                r = cl.read_input_registers(mp.fault_register, count=1, device_id=mp.device_id)
                self._check(r, f"read input register {mp.fault_register} (fault)")
                fault = int(r.registers[0])
            st = MechanismState(
                seq=prev.seq + 1, t=time.monotonic(), ok=True, error=None,
                capture=bits.get(mp.capture) if mp.capture is not None else None,
                latches=tuple(bits[a] for a in mp.latches), hooks=tuple(bits[a] for a in mp.hooks),
                ring_in_position=bits.get(mp.ring_in_position) if mp.ring_in_position is not None else None,
                fault=fault, fault_name=mp.fault_name(fault) if fault else None, release_on=self._release_on)
        except Exception as e:  # noqa: BLE001 - a failed poll is counted and named, never raised
            c["errors"] += 1
            kind = type(e).__name__
            if "Timeout" in kind or isinstance(e, TimeoutError):
                c["timeouts"] += 1
            if isinstance(e, ModbusExceptionResponse):
                c["exceptions"] += 1
            if isinstance(e, (ConnectionError, OSError)) or "Connection" in kind:
                c["disconnects"] += 1
                try:
                    if self._client is not None:
                        self._client.close()
                except Exception:  # noqa: BLE001
                    pass
                self._client = None
            why = str(e) or kind
            st = MechanismState(seq=prev.seq + 1, t=time.monotonic(), ok=False, error=f"{self.describe()}: {why}",
                                capture=prev.capture, latches=prev.latches, hooks=prev.hooks,
                                ring_in_position=prev.ring_in_position, fault=prev.fault, fault_name=prev.fault_name,
                                release_on=self._release_on)
        self.state = st
        return st

    @staticmethod
    def _check(r, what: str) -> None:
        if r is None:
            raise TimeoutError(f"{what}: no answer")
        if hasattr(r, "isError") and r.isError():
            code = getattr(r, "exception_code", None)
            if code is not None:
                raise ModbusExceptionResponse(what, int(code))
            raise ConnectionError(f"{what}: {r}")


class ModbusExceptionResponse(RuntimeError):
    """The unit answered with a Modbus exception (its code named)."""

    NAMES = {1: "illegal function", 2: "illegal data address", 3: "illegal data value", 4: "server device failure",
             5: "acknowledge", 6: "server device busy", 8: "memory parity error", 10: "gateway path unavailable",
             11: "gateway target device failed to respond"}

    def __init__(self, what: str, code: int):
        self.code = code
        super().__init__(f"{what}: Modbus exception {code} ({self.NAMES.get(code, 'unknown')})")
