"""rt.arraypack and the packed cycle kernel: the table refuses what the kernel could not read
safely, and rt.control_kernels.hil_cycle_packed computes bit for bit what its steps compute
when called one by one from Python with the 55 arrays as arguments, cycle after cycle, on a
controller's real arrays."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from rt import arraypack as AP
from rt import control_kernels as CK
from rt import coupling as CP
from rt import wire_kernels as WK
from rt.sensing import sense
from rt.controller import Phase
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
    a["w_in"][0, :] = a["w_P"]
    CP.coupling_update(a["par"], a["env"], a["x"], t, dt, a["w_in"], tau, mode, a["geo"], out, a["k"], a["xt"],
                       a["ws"], a["rel"])
    a["cmd_pose"][:] = out[CP.O_PCMD:CP.O_PCMD + 7]
    CK.command_rates(a["cmd_pose"], a["prev_pose"], a["prev_vel"], a["cmd_twist"], a["cmd_acc"], dt, False, a["scr"])
    code = CK.supervise(
        a["lim"], a["base"], a["top"], a["leg_lim"], a["box"], a["ctr"], a["crc_ring"], a["gap_ring"], a["cmd_pose"],
        a["cmd_twist"], a["cmd_acc"], a["w_S"], a["w_P"], out, ins[CK.IN_NEW_SAMPLE] != 0.0,
        int(ins[CK.IN_CRC_NEW]), int(ins[CK.IN_GAP_NEW]),
        bool(seen and pstate in (CK.PLATFORM_FAULT, CK.PLATFORM_IDLE)), bool(seen and pstate == CK.PLATFORM_E_STOPPED),
        int(ins[CK.IN_STREAK]), ins[CK.IN_HB] != 0.0, a["cmd_lengths"], a["detail"], a["xlim"], a["xctr"],
        a["trk_ring"], a["raw"], a["raw_prev"], ins[CK.IN_STATUS_NEW] != 0.0, a["meas_pose"])
    CK.run_statistics(a["w_P"], out, a["cmd_pose"], t, dt, stats, a["endp"])
    final = code == 0 and stats[CK.ST_END] == 0.0
    values = a["cmd_lengths"] if ftype == WK.LENGTHS else a["cmd_pose"]
    CK.emit(ftype, seq, t_ns, values, values.shape[0], t + dt, ins, a["tx"], a["row"], a["rix"], a["w_S"], a["w_P"],
            a["x"], out, a["timing"], a["ring"], a["cursor"], final)
    if final:
        a["sent_pose"][:] = a["cmd_pose"]
        a["sent_twist"][:] = a["cmd_twist"]
    return code


def test_packed_cycle_is_its_steps_bit_for_bit(tmp_path):
    rig = Rig(tmp_path, contact=(-0.52, 20000.0))
    try:
        c = rig.ctl
        c.warm_up()
        rig.arm_and_start()
        rig.run_until(lambda k: k.phase is Phase.DYNAMICS, 5000)
        rig.run(300)
        sbuf, pbuf = c._sbuf, c._pbuf
        assert sbuf and pbuf
        base = c._hil_arrays(c.sc)
        assert len(base) == len(CK.HIL_ARRAYS)
        A = tuple(a.copy() for a in base)
        B = tuple(a.copy() for a in A)   # from A, not base: the run-log writer thread moves the live cursor
        pk = c._pack(B)
        ends = codes = 0
        for n in range(60):
            w = 0.0 if n < 20 else 800.0 * (n - 19)     # a force ramp on the raw counts: contact, then a trip
            A[11][2] = B[11][2] = A[11][2] + w          # raw (HIL_ARRAYS[11])
            if n == 45:                                  # an end criterion: the case's time is up
                A[-3][CK.EP_DURATION] = B[-3][CK.EP_DURATION] = 0.0   # endp (HIL_ARRAYS[-3])
            link = (1e-3 + 1e-6 * n, n, n % 3, n // 7, n, n // 5, n // 9, n // 4, n == 30)
            frames = (sbuf, pbuf) if n == 0 else (b"", b"")
            had = A[-4][CK.ST_FIRST_CONTACT] >= 0.0          # stats (HIL_ARRAYS[-4])
            ca = reference_cycle(A, *frames, 40 + n, 10**12 + n, 0.5 + 1e-3 * n, c._ftype, c.tau, c._mode, link)
            cb, s_acc, p_acc, flags = CK.hil_cycle_packed(*frames, 40 + n, 10**12 + n, 0.5 + 1e-3 * n, c._ftype,
                                                          c.tau, c._mode, pk.table, *link)
            assert ca == cb and bool(flags & CK.F_TRIP) == (ca != 0)
            ins = A[0]
            assert (s_acc, p_acc) == (int(ins[CK.IN_LK_S + WK.LK_ACC]), int(ins[CK.IN_LK_P + WK.LK_ACC]))
            assert n == 0 or (s_acc, p_acc) == (0, 0)
            assert bool(flags & CK.F_FIRST_CONTACT) == (not had and A[-4][CK.ST_FIRST_CONTACT] >= 0.0)
            assert bool(flags & CK.F_END) == (A[-4][CK.ST_END] != 0.0)
            for (name, _), a, b in zip(CK.HIL_ARRAYS, A, B):
                assert np.array_equal(a, b, equal_nan=True), (n, name)
            codes += ca != 0
            ends += A[-4][CK.ST_END] != 0.0
        assert A[3][c.rix[CK.RX_WP] + 2] != base[3][c.rix[CK.RX_WP] + 2]   # the cycles did work
        assert codes and ends                                               # both rare outcomes were met
    finally:
        rig.close()
