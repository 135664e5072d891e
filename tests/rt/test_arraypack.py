"""rt.arraypack and the packed cycle kernel: the table refuses what the kernel could not read
safely, and rt.control_kernels.hil_cycle_packed computes bit for bit what hil_cycle computes
with its 55 array arguments, cycle after cycle, on a controller's real arrays."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from rt import arraypack as AP
from rt import control_kernels as CK
from rt import wire_kernels as WK
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


def test_packed_cycle_is_the_unpacked_cycle_bit_for_bit(tmp_path):
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
        for n in range(50):
            w = 0.0 if n < 20 else 800.0 * (n - 19)     # a force ramp on the raw counts
            A[11][2] = B[11][2] = A[11][2] + w          # raw (HIL_ARRAYS[11])
            # the link inputs hil_cycle_packed takes as arguments, set by hand for hil_cycle
            dt, streak, missed, ti, bad, crc, gaps, hb = 1e-3 + 1e-6 * n, n % 3, n // 7, n, n // 5, n // 9, n // 4, n == 30
            for k, v in ((CK.IN_DT, dt), (CK.IN_CYCLE, n), (CK.IN_STREAK, streak), (CK.IN_MISSED, missed),
                         (CK.IN_TIMING_I, ti), (CK.IN_BAD_TOTAL, bad), (CK.IN_CRC_ERRORS, crc), (CK.IN_GAPS, gaps),
                         (CK.IN_HB, hb)):
                A[0][k] = v
            had = A[-4][CK.ST_FIRST_CONTACT] >= 0.0          # stats (HIL_ARRAYS[-4])
            ca = CK.hil_cycle(sbuf if n == 0 else b"", pbuf if n == 0 else b"", 40 + n, 10**12 + n, 0.5 + 1e-3 * n,
                              c._ftype, *A[:24], c.tau, c._mode, *A[24:])
            cb, s_acc, p_acc, flags = CK.hil_cycle_packed(
                sbuf if n == 0 else b"", pbuf if n == 0 else b"", 40 + n, 10**12 + n, 0.5 + 1e-3 * n, c._ftype, c.tau,
                c._mode, pk.table, dt, n, streak, missed, ti, bad, crc, gaps, hb)
            assert ca == cb and bool(flags & CK.F_TRIP) == (ca != 0)
            ins = A[0]
            assert (s_acc, p_acc) == (int(ins[CK.IN_LK_S + WK.LK_ACC]), int(ins[CK.IN_LK_P + WK.LK_ACC]))
            assert n == 0 or (s_acc, p_acc) == (0, 0)
            assert bool(flags & CK.F_FIRST_CONTACT) == (not had and A[-4][CK.ST_FIRST_CONTACT] >= 0.0)
            assert bool(flags & CK.F_END) == (A[-4][CK.ST_END] != 0.0)
            for (name, _), a, b in zip(CK.HIL_ARRAYS, A, B):
                assert np.array_equal(a, b, equal_nan=True), (n, name)
        assert A[3][c.rix[CK.RX_WP] + 2] != base[3][c.rix[CK.RX_WP] + 2]   # the cycles did work
    finally:
        rig.close()


def test_hil_arrays_are_the_controllers_arrays_by_name(tmp_path):
    """The table's order pairs every HIL_ARRAYS name with the controller's array of that name
    (a swap of two same-shaped arrays would pass the bit-for-bit test above)."""
    rig = Rig(tmp_path)
    try:
        c = rig.ctl
        rig.arm_and_start()
        s, sm, sc = c.sensing, c.safety, c.sc
        w = sc.ws
        named = {"ins": c.ins, "meas": c.meas, "tx": c.tx, "row": c.row, "rix": c.rix, "timing": c.loop.timing.data,
                 "sent_pose": c.sent_pose, "sent_twist": c.sent_twist, "C_eff": s.C_eff, "R_PS": s.R_PS,
                 "p_PS_P": s.p_PS_P, "raw": s.raw, "bias": s.bias, "acc_t": s.acc, "sctr": s.ctr, "coef": s.coef,
                 "fstate": s.fstate, "w_S": s.w_S, "w_P_raw": s.w_P_raw, "w_P": s.w_P, "par": sc.par, "env": sc.env,
                 "x": sc.x, "w_in": c.w_in, "geo": c.geo, "out": c.out, "k": w.k, "xt": w.xt, "ws": w.ws,
                 "rel": w.rel, "cmd_pose": c.v["cmd_pose"], "prev_pose": c.prev_pose, "prev_vel": c.prev_vel,
                 "cmd_twist": c.v["cmd_twist"], "cmd_acc": c.v["cmd_acc"], "cmd_lengths": c.v["cmd_lengths"],
                 "scr": c.scr, "lim": sm.lim, "base": sm.g.base, "top": sm.g.top, "leg_lim": sm.leg_lim,
                 "box": sm.g.box, "ctr": sm.ctr, "crc_ring": sm.crc_ring, "gap_ring": sm.gap_ring,
                 "detail": sm.detail, "xlim": c.xlim, "xctr": c.xctr, "trk_ring": c.trk_ring,
                 "raw_prev": c.raw_prev, "meas_pose": c.v["meas_pose"], "stats": c.stats, "endp": c.endp,
                 "ring": c.writer.ring, "cursor": c.writer.cursor}
        assert [n for n, _ in CK.HIL_ARRAYS] == list(named)
        packed = c._hil_pack.arrays                          # packed when the run started
        for (name, _), a in zip(CK.HIL_ARRAYS, packed):
            assert a is named[name], name
        # the row's command and measurement fields are views of the row (one record, no copies)
        for name in ("cmd_pose", "cmd_twist", "cmd_acc", "cmd_lengths", "meas_pose"):
            assert np.shares_memory(named[name], c.row), name
    finally:
        rig.close()
