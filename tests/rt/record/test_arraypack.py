"""rt.record.arraypack and the packed cycle kernel: the table refuses what the kernel could not read
safely, and rt.control.kernels.hil_cycle_packed computes bit for bit what its steps compute
when called one by one from Python with the 55 arrays as arguments, cycle after cycle, on a
controller's real arrays."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from rt.record import arraypack as AP
from rt.control import kernels as CK
from rt.control.cycle_store import cycle_arrays, pack_cycle
from rt.dynamics import coupling as CP
from rt.stand import contact_gate as CG
from rt.stand import delay_id as DY
from rt.stand import wire_kernels as WK
from rt.stand.sensing import sense
from rt.control.controller import Phase
from sim_stand.kinematic_rig import Rig


@njit(cache=False)
def _touch(t):
    a = AP.f8_2(t, 0)
    b = AP.i8_1(t, 1)
    c = AP.u1_1(t, 2)
    d = AP.f8_3(t, 3)
    a[1, 2] += 1.0
    b[-1] = 7
    c[0] = 9
    d[1, 0, 1] = -2.0
    return a.shape[0] * 1000 + a.shape[1] * 100 + b.shape[0] * 10 + c.shape[0]


def test_pack_views_write_through_to_the_arrays():
    a = np.zeros((2, 3))
    b = np.zeros(4, dtype=np.int64)
    c = np.zeros(5, dtype=np.uint8)
    d = np.zeros((2, 2, 2))
    pk = AP.pack((a, b, c, d), ("f8_2", "i8_1", "u1_1", "f8_3"))
    assert _touch(pk.table) == 2345
    assert a[1, 2] == 1.0 and b[3] == 7 and c[0] == 9 and d[1, 0, 1] == -2.0
    assert pk.arrays[0] is a                     # the arrays live as long as the table


@pytest.mark.parametrize("arr, kind, why", [
    (np.zeros(3, dtype=np.float32), "f8_1", "expected float64"),
    (np.zeros((2, 2)), "f8_1", "1 dimension"),
    (np.zeros(3, dtype=np.int32), "i8_1", "expected int64"),
    (np.zeros((4, 4))[:, 1], "f8_1", "C-contiguous"),
    ([0.0, 1.0], "f8_1", "got list"),
])
def test_pack_refuses_what_the_kernel_cannot_read(arr, kind, why):
    with pytest.raises((TypeError, ValueError), match=why):
        AP.pack((np.zeros(2), arr), ("f8_1", kind))
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        AP.pack((ro,), ("f8_1",))
    with pytest.raises(ValueError, match="2 arrays for 1 kinds"):
        AP.pack((np.zeros(1), np.zeros(1)), ("f8_1",))


def reference_cycle(A, sbuf, pbuf, seq, t_ns, t, ftype, tau, mode, link):
    """hil_cycle_packed's steps, in its docstring's order, called one by one from Python on the
    unpacked arrays ``A`` (CK.HIL_ARRAYS order). Returns the safety code."""
    a = dict(zip((name for name, _ in CK.HIL_ARRAYS), A))
    ins, meas, out, stats = a["ins"], a["meas"], a["out"], a["stats"]
    CK.set_link_inputs(ins, *link)
    dt = link[0]
    CK.ingest(sbuf, pbuf, a["raw"], meas, ins, a["row"], a["rix"])
    seen = ins[CK.IN_STATUS_SEEN] != 0.0
    pstate = meas[WK.ST_STATE]
    sense(*(a[k] for k in ("C_eff", "R_PS", "p_PS_P", "raw", "bias", "acc_t", "sctr", "coef", "fstate", "w_S",
                           "w_P_raw", "w_P")))
    CG.gate(a["gate"], a["w_P"], a["w_in"][0], ins[CK.IN_NEW_SAMPLE] != 0.0)
    tau_u = DY.compensated_delay(a["dly"], tau, a["drec"][DY.DR_USED], dt)
    a["drec"][DY.DR_USED] = tau_u
    CP.coupling_update(a["par"], a["env"], a["x"], t, dt, a["w_in"], tau_u, mode, a["geo"], out, a["k"], a["xt"],
                       a["ws"], a["rel"])
    a["cmd_pose"][:] = out[CP.O_PCMD:CP.O_PCMD + 7]
    CK.command_rates(a["cmd_pose"], a["prev_pose"], a["prev_vel"], a["cmd_twist"], a["cmd_acc"], dt, False, a["scr"])
    code = CK.supervise(
        a["lim"], a["base"], a["top"], a["leg_lim"], a["box"], a["ctr"], a["crc_ring"], a["gap_ring"], a["cmd_pose"],
        a["cmd_twist"], a["cmd_acc"], a["w_S"], a["w_P"], out, ins[CK.IN_NEW_SAMPLE] != 0.0,
        int(ins[CK.IN_CRC_NEW]), int(ins[CK.IN_GAP_NEW]),
        bool(seen and pstate in (CK.PLATFORM_FAULT, CK.PLATFORM_IDLE)), bool(seen and pstate == CK.PLATFORM_E_STOPPED),
        int(ins[CK.IN_STREAK]), ins[CK.IN_HB] != 0.0, a["cmd_lengths"], a["detail"], a["xlim"], a["xctr"],
        a["trk_ring"], a["dly"], a["drec"], a["raw"], a["raw_prev"], ins[CK.IN_STATUS_NEW] != 0.0, a["meas_pose"], int(ins[CK.IN_MISSED]), dt,
        int(ins[CK.IN_SENSOR_STATUS]))
    CK.run_statistics(a["w_P"], out, a["cmd_pose"], t, dt, stats, a["endp"])
    final = code == 0 and stats[CK.ST_END] == 0.0
    values = a["cmd_lengths"] if ftype == WK.LENGTHS else a["cmd_pose"]
    CK.emit(ftype, seq, t_ns, values, values.shape[0], t + dt, ins, a["tx"], a["row"], a["rix"], a["w_S"], a["w_P"],
            a["x"], out, a["timing"], a["ring"], a["cursor"], final)
    if final:
        a["sent_pose"][:] = a["cmd_pose"]
        a["sent_twist"][:] = a["cmd_twist"]
    return code


def clone(arrays):
    """Copies of ``arrays`` that keep their aliasing: an array that is a view into another one
    of them (the command arrays are views of the run-log row) becomes a view into that one's
    copy."""
    inside = {}
    for i, a in enumerate(arrays):
        hosts = [j for j, b in enumerate(arrays) if j != i and b.size > a.size and np.shares_memory(a, b)]
        if hosts:
            assert len(hosts) == 1 and a.ndim == arrays[hosts[0]].ndim == 1 and a.dtype == arrays[hosts[0]].dtype
            inside[i] = hosts[0]
    out = [a.copy() if i not in inside else None for i, a in enumerate(arrays)]
    for i, j in inside.items():
        first = (arrays[i].ctypes.data - arrays[j].ctypes.data) // arrays[i].itemsize
        out[i] = out[j][first:first + arrays[i].size]
    return tuple(out)


@pytest.mark.parametrize("mode", ["pose", "lengths"])
def test_packed_cycle_is_its_steps_bit_for_bit(tmp_path, mode):
    """60 cycles on copies of a running controller's arrays, the packed kernel on one set and
    its steps one by one on the other: identical outcomes and arrays after every cycle,
    through an end criterion with no trip, a first contact and a force-limit trip."""
    from dataclasses import replace

    from rt.stand import safety as SF
    from rt.config.stand import load_stand
    from sim_stand.kinematic_rig import STAND

    rig = Rig(tmp_path, stand=replace(load_stand(STAND), command_mode=mode), contact=(-0.52, 20000.0))
    try:
        c = rig.ctl
        c.warm_up()
        rig.arm_and_start()
        rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 5000)
        rig.run(300)
        sbuf, pbuf = c.links.sbuf, c.links.pbuf
        assert sbuf and pbuf
        base = cycle_arrays(c)
        assert len(base) == len(CK.HIL_ARRAYS)
        A = clone(base)
        B = clone(A)                 # from A, not base: the run-log writer thread moves the live cursor
        a, b = (dict(zip((name for name, _ in CK.HIL_ARRAYS), X)) for X in (A, B))
        assert np.shares_memory(a["cmd_pose"], a["row"]) and not np.shares_memory(a["row"], b["row"])
        for d in (a, b):             # no new frames after the first cycle: keep the staleness checks quiet
            d["lim"][SF.L_STALE] = 1e9
            d["xlim"][CK.XL_PSTALE] = 1e9
        pk = pack_cycle(c, arrays=B)
        duration = a["endp"][CK.EP_DURATION]
        outcomes = []
        for n in range(60):
            if n == 10:              # an end criterion: the case's time is up
                a["endp"][CK.EP_DURATION] = b["endp"][CK.EP_DURATION] = 0.0
            if n == 11:              # and again not (the kernel judges, the shell acts)
                a["endp"][CK.EP_DURATION] = b["endp"][CK.EP_DURATION] = duration
                a["stats"][CK.ST_END] = b["stats"][CK.ST_END] = 0.0
            if n >= 20:              # a force ramp on the raw counts (Fz, 1 kN per cycle): contact, then a trip
                a["raw"][2] += 1e6
                b["raw"][2] = a["raw"][2]
            link = (1e-3 + 1e-7 * n, n, 0, 0, n, 0, 0, 0, False)
            frames = (sbuf, pbuf) if n == 0 else (b"", b"")
            had = a["stats"][CK.ST_FIRST_CONTACT] >= 0.0
            ca = reference_cycle(A, *frames, 40 + n, 10**12 + n, 0.5 + 1e-3 * n, c._ftype, c.tau, c._mode, link)
            cb, s_acc, p_acc, flags = CK.hil_cycle_packed(*frames, 40 + n, 10**12 + n, 0.5 + 1e-3 * n, c._ftype,
                                                          c.tau, c._mode, pk.table, *link)
            assert ca == cb and bool(flags & CK.F_TRIP) == (ca != 0)
            ins = a["ins"]
            assert (s_acc, p_acc) == (int(ins[CK.IN_LK_S + WK.LK_ACC]), int(ins[CK.IN_LK_P + WK.LK_ACC]))
            assert n == 0 or (s_acc, p_acc) == (0, 0)
            assert bool(flags & CK.F_FIRST_CONTACT) == (not had and a["stats"][CK.ST_FIRST_CONTACT] >= 0.0)
            assert bool(flags & CK.F_END) == (a["stats"][CK.ST_END] != 0.0)
            for (name, _), x, y in zip(CK.HIL_ARRAYS, A, B):
                assert np.array_equal(x, y, equal_nan=True), (n, name)
            outcomes.append((ca, flags))
        assert all(code == 0 for code, _ in outcomes[:20])
        assert outcomes[10][1] & CK.F_END and not any(f & CK.F_END for _, f in outcomes[:10] + outcomes[11:20])
        first_contact = [n for n, (_, f) in enumerate(outcomes) if f & CK.F_FIRST_CONTACT]
        first_trip = next(n for n, (code, _) in enumerate(outcomes) if code)
        assert len(first_contact) == 1 and 20 <= first_contact[0] < first_trip
        assert outcomes[first_trip][0] == SF.Reason.FORCE_LIMIT, outcomes[first_trip]
        assert int(ins[CK.IN_TXLEN]) == 22 + 8 * (6 if mode == "lengths" else 7)
    finally:
        rig.close()
