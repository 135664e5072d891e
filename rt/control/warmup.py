"""Warming up the controller before real time: every kernel the loop calls is compiled (or
loaded from numba's cache) by one call on scratch data or on copies of the controller's
arrays, with the argument types of the loop's calls, so no state is disturbed and no kernel
compiles in the loop (tests/rt/control/test_controller.py checks that no njit dispatcher gains
a signature during a whole run after this). Not real-time: called once, before the loop.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import rt
from drivers.framing import MAX_FRAME
from rt.config.case import load_case
from rt.control import kernels as CK
from rt.control.cycle_store import cycle_arrays, pack_cycle
from rt.control.supervision import supervise_args
from rt.dynamics import coupling as CP
from rt.dynamics.berthing_flight import flight_from_case
from rt.stand import contact_gate as CG
from rt.stand import wire_kernels as WK
from rt.stand.safety import SafeStop


def warm_up(ctl) -> None:
    """Every kernel ``ctl`` (a :class:`rt.control.controller.Controller`) calls in its loop,
    called once as the module docstring says."""
    ctl.sensing.warm_up()
    ctl.hexapod.warm_up()
    case = ctl.case
    if case is None:
        case = load_case(Path(rt.SOURCE_ROOT) / "config" / "cases" / "nominal.toml")
    sc = flight_from_case(case)           # scratch vehicles: ctl.sc is untouched
    # the energy audit's kernel: the run log's writer thread calls it after every run, and a
    # compilation there would hold the GIL against the loop for seconds
    sc.invariants()
    # the cycle's kernels on copies, with the argument types of the loop's calls
    cp = _copies
    fr = WK.encode_frame(np.zeros(MAX_FRAME, np.uint8), WK.POSE, 0, 0, np.zeros(7), 7)
    sbuf, pbuf = bytes(8), bytes(fr)
    ins, meas, row, rix, timing = cp((ctl.ins, ctl.meas, ctl.row, ctl.rix, ctl._timing))
    arrays = cp(cycle_arrays(ctl, sc))
    arrays[0][CK.IN_DT] = ctl.period_s          # its ins
    link = ctl._link_inputs(0)
    CK.hil_cycle_packed(sbuf, pbuf, 0, time.monotonic_ns(), 0.0, ctl._ftype, ctl.tau, ctl._mode,
                        pack_cycle(ctl, sc, arrays=arrays).table, *link)
    CK.set_link_inputs(ins, *link)
    # the contact gate as the run's energy audit replays it (rt.analysis.report, writer thread)
    CG.gate(ctl.gate.copy(), np.zeros(6), np.zeros(6), True)
    CK.ingest(sbuf, pbuf, ctl.sensing.raw.copy(), meas, ins, row, rix)
    CK.emit(WK.HEARTBEAT, 0, time.monotonic_ns(), np.zeros(7), 0, 0.0, ins, np.zeros(MAX_FRAME, np.uint8), row,
            rix, ctl.sensing.w_S.copy(), ctl.sensing.w_P.copy(), sc.x.copy(), ctl.out.copy(), timing,
            np.zeros((4, row.shape[0])), np.zeros(4, dtype=np.int64), True)
    home = ctl.stand.hexapod.home
    CK.supervise(*cp(supervise_args(ctl, home.copy())))
    pose = home.copy()
    scr = ctl.scr.copy()
    CK.quintic(0.5)
    mv = np.zeros(CK.MV_LEN)
    CK.move_setup(mv, pose, pose, 1.0, 1.0, 1.0, 1.0)
    CK.move_eval(mv, 0.0, np.zeros(7), scr)
    CK.move_waypoint(pose, pose, 0.03, 0.05, np.zeros(7), np.zeros(11))
    ru = np.zeros(CK.RU_LEN)
    ru[CK.RU_Q0] = 1.0
    out = np.zeros(CP.OUT_LEN)
    CK.runup_eval(ru, ctl.geo, -0.1, out, scr)
    for first in (True, False):
        CK.command_rates(pose, pose.copy(), np.zeros(CK.PV_DT + 1), np.zeros(6), np.zeros(6), 1e-3, first, scr)
    # the coupling's pieces as the controller calls them outside hil_cycle_packed (run-up
    # target: relative_rates) and as rt.dynamics.coupling.Coupling does (initial command, update)
    w = sc.ws
    CP.relative_rates_kernel(sc.env)(sc.par, sc.env, sc.x, 0.0, np.zeros((2, 6)), 1e-4, out, CP.O_REL, w.k[0],
                                     w.xt, w.ws, w.rel)
    CP.predict_pose(out, ctl.tau, ctl._mode, ctl.period_s)
    CP.platform_pose(ctl.geo, out)
    berthing = load_case(Path(rt.SOURCE_ROOT) / "config" / "cases" / "berthing.toml")
    for c in (case, berthing):       # both flight models: a berthing case may be loaded later
        cpl = CP.Coupling(flight_from_case(c), ctl.geo, ctl.tau, ctl.compensate)
        cpl.initial_command()
        cpl.update(0.0, ctl.period_s, np.zeros(6))
    # the safe stop (its own instance: ctl.safe_stop's state is untouched)
    lim = ctl.stand.limits
    ss = SafeStop(ctl.period_s, lim.a_max_m_s2, lim.alpha_max_rad_s2)
    tw = np.zeros(6)
    tw[0] = 1e-3
    ss.start(pose, tw)
    while not ss.step():
        pass


def _copies(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
