"""A closed-loop HIL docking in one process: the stand emulator in a thread, in lockstep with
the controller, over real ZeroMQ sockets on private ipc endpoints (docs/campaigns.md, "HIL
campaigns"). What ``dockstand demo`` runs with the emulator as its own process, here for
callers that build the run from objects, not files: a campaign's dispersed case, emulator
config (its platform delay) and mechanism, and a noise seed per sample.

The controller is configured for the nominal emulator (``nominal_emu``): its compensated delay
is that emulator's (``sim_stand.cli.lockstep_stand``), while the emulated platform runs with
``emu``'s — a platform whose delay differs from the stand file's, as a real one does.

Not for the real-time loop (it is a whole run).
"""
from __future__ import annotations

import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np


@dataclass
class ClosedLoopResult:
    """The controller's summary (``Controller.summary``) and the emulator's (``Emulator.summary``),
    with the emulator's capture referred to the case's initial state on the model's clock
    (sim_stand/model_clock.py)."""
    controller: dict
    emulator: dict
    time_to_capture_s: float | None
    cpu_s: float


def platform_delay_s(emu, rate_hz: float = 1000.0) -> float:
    """The emulated platform's delay as the controller sees it in lockstep at ``rate_hz``:
    transport + servo lag (+ half a cycle when it interpolates set-points) — ``lockstep_stand``'s sum."""
    from sim_stand.cli import servo_lag_s
    return emu.platform.transport_delay_s + servo_lag_s(emu, rate_hz)


def with_platform_delay(emu, delay_s: float, rate_hz: float = 1000.0):
    """``emu`` with the transport delay that makes its platform delay ``delay_s`` (rounded to a
    whole number of physics steps). ValueError if the servo lag alone exceeds it."""
    from sim_stand.cli import servo_lag_s
    lag = servo_lag_s(emu, rate_hz)
    transport = delay_s - lag
    if transport < -1e-12:
        raise ValueError(f"a platform delay of {delay_s * 1e3:.3f} ms is below the emulated servo's own lag "
                         f"({lag * 1e3:.3f} ms)")
    dt = emu.physics_dt_s
    steps = max(0, int(round(transport / dt)))
    return replace(emu, platform=replace(emu.platform, transport_delay_s=steps * dt))


def run_closed_loop(stand, case, emu, *, nominal_emu=None, mechanism=None, seed: int = 1, log_dir=None,
                    compensate: bool = True, header: dict | None = None, timeout_s: float = 600.0) -> ClosedLoopResult:
    """One docking of ``case`` (a Case) on the emulated stand ``emu`` (an EmulatorConfig for the
    case; ``mechanism``: a parallel mechanism config replacing its file's), the controller
    configured for ``nominal_emu`` (default ``emu``), sensor noise seeded with ``seed``; the
    run log goes to ``log_dir`` (default: the stand's), ``header`` joins its header. Raises
    RuntimeError if the emulator fails or a command is refused."""
    from rt.analysis.audit import run_audit
    from rt.control.controller import Controller
    from sim_stand.cli import LOCKSTEP_TIMEOUT_S, _endpoint_override, drive_docking, lockstep_stand
    from sim_stand.model_clock import capture_on_model_clock, stand_event_on_model_clock
    from sim_stand.emulator import Emulator
    from sim_stand.world import StandWorld

    tmp = Path(tempfile.mkdtemp(prefix="dockstand-loop-"))
    s_ep, p_ep = f"ipc://{tmp}/sensor", f"ipc://{tmp}/platform"
    dev_stand = replace(stand, sensor_link=_endpoint_override(stand.sensor_link, s_ep),
                        platform_link=_endpoint_override(stand.platform_link, p_ep))
    ctl_stand = lockstep_stand(dev_stand, nominal_emu or emu)
    ready, stop = threading.Event(), threading.Event()
    box: dict = {}

    def emulate() -> None:
        em = None
        try:
            em = Emulator(dev_stand, StandWorld(dev_stand, emu, mechanism=mechanism), emu=emu, seed=seed)
            box["emulator"] = em
            ready.set()
            em.run_lockstep(stop=stop.is_set)
        except BaseException as e:  # noqa: BLE001 - reported to the caller
            box["error"] = e
            ready.set()
        finally:
            if em is not None:
                box["summary"] = em.summary()
                em.close()

    t_cpu = time.process_time()
    th = threading.Thread(target=emulate, name="emulator", daemon=True)
    th.start()
    ctl = None
    try:
        if not ready.wait(timeout_s) or "error" in box:
            raise RuntimeError(f"the emulator did not start: {box.get('error', 'timeout')}")
        ctl = Controller(ctl_stand, compensate=compensate, lockstep=True, telemetry=False,
                         log_dir=log_dir if log_dir is not None else stand.runlog_dir,
                         lockstep_timeout_s=LOCKSTEP_TIMEOUT_S,
                         auditor=run_audit)
        ctl.log_extra = dict(header or {})
        cs = drive_docking(ctl, case, case, client="campaign")
    finally:
        if ctl is not None:
            ctl.close()
        stop.set()
        th.join(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    if "error" in box:
        raise RuntimeError(f"the emulator failed: {type(box['error']).__name__}: {box['error']}")
    emu_sum = box.get("summary", {})
    ttc = capture_on_model_clock(
        cs["log"], emu_sum.get("capture_position_m"),
        stand_event_on_model_clock(emu_sum.get("time_to_capture_s"), cs.get("t_dynamics_start_s"), ctl_stand,
                                   compensate))
    return ClosedLoopResult(cs, emu_sum, ttc, time.process_time() - t_cpu)


def sample_seed(seed: int, index: int) -> int:
    """The sensor-noise seed of a campaign's sample ``index``: from (seed, index) only."""
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1)[0] & 0x7FFFFFFF)


__all__ = ["run_closed_loop", "ClosedLoopResult", "platform_delay_s", "with_platform_delay", "sample_seed"]
