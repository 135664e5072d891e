"""The emulated docking mechanism's control unit on Modbus TCP: the twin of what a lab's PLC or
DAQ serves (docs/platforms.md, "Mechanism I/O"; the controller's side: drivers.mechanism_io).

``pymodbus``'s own TCP server, in a thread with its asyncio loop, serves the stand's
``[mechanism_io]`` map: the emulated mechanism's soft capture, capture latches, hooks and
ring-in-position as discrete inputs, its fault code as an input register (0: none; the
emulator's ``mechanism_fault`` fault sets one), and the release output as a coil — which the
emulator hands to its world (``release_mechanism``): the latches are held open while it is on.
:meth:`MechanismUnit.update` copies the world's signals into the server's data store once per
emulator period (the emulator's thread; list stores under the GIL, no lock).

Not real-time: the emulator's shell.
"""
from __future__ import annotations

import asyncio
import threading

FAULT_CODE = 1     # the code the emulator's ``mechanism_fault`` fault sets (named in the emulator's stand)


class MechanismUnit:
    """The unit serving ``mp`` (drivers.mechanism_io.MechanismMap) on ``mp.host``:``mp.port``."""

    def __init__(self, mp):
        from pymodbus.datastore import ModbusDeviceContext, ModbusSequentialDataBlock, ModbusServerContext
        self.map = mp
        # one spare at each end: pymodbus's device context offsets a request's address by one
        n = 2 + max([0] + mp.discrete())
        n_ir = 2 + (mp.fault_register or 0)
        n_co = 2 + (mp.release_coil or 0)
        self.dev = ModbusDeviceContext(di=ModbusSequentialDataBlock(0, [0] * n),
                                       co=ModbusSequentialDataBlock(0, [0] * n_co),
                                       ir=ModbusSequentialDataBlock(0, [0] * n_ir),
                                       hr=ModbusSequentialDataBlock(0, [0]))
        self._ctx = ModbusServerContext(devices={mp.device_id: self.dev}, single=False)
        self._loop = asyncio.new_event_loop()
        self._server = None
        self.error: BaseException | None = None
        self.release_on = False
        self.fault = 0
        self._thread = threading.Thread(target=self._serve, name="mechanism-unit", daemon=True)

    def start(self, timeout_s: float = 5.0) -> None:
        """Serve; returns once the port takes connections (RuntimeError naming why it does not)."""
        import socket
        import time
        self._thread.start()
        end = time.monotonic() + timeout_s
        while time.monotonic() < end and self.error is None:
            try:
                with socket.create_connection((self.map.host, self.map.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"the mechanism unit could not serve {self.map.host}:{self.map.port}: "
                           f"{self.error or 'no connection within the time'}")

    def _serve(self) -> None:
        from pymodbus.server import ModbusTcpServer
        asyncio.set_event_loop(self._loop)

        async def main():
            self._server = ModbusTcpServer(self._ctx, address=(self.map.host, self.map.port))
            await self._server.serve_forever()
        try:
            self._loop.run_until_complete(main())
        except BaseException as e:  # noqa: BLE001 - said by start()
            self.error = e

    def update(self, captured: bool, latches_closed, hooks_closed=(), ring_in_position: bool | None = None) -> bool:
        """The world's signals into the data store; returns the release output (the coil)."""
        mp = self.map
        dev = self.dev
        if mp.capture is not None:
            dev.setValues(2, mp.capture, [bool(captured)])
        for a, on in zip(mp.latches, latches_closed):
            dev.setValues(2, a, [bool(on)])
        for a, on in zip(mp.hooks, hooks_closed):
            dev.setValues(2, a, [bool(on)])
        if mp.ring_in_position is not None and ring_in_position is not None:
            dev.setValues(2, mp.ring_in_position, [bool(ring_in_position)])
        if mp.fault_register is not None:
            dev.setValues(4, mp.fault_register, [int(self.fault)])
        if mp.release_coil is not None:
            self.release_on = bool(dev.getValues(1, mp.release_coil, 1)[0])
        return self.release_on

    def close(self) -> None:
        if self._server is not None and self._loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._server.shutdown(), self._loop).result(5)
            except Exception:  # noqa: BLE001 - closing goes on
                pass
        self._thread.join(timeout=5)
