"""The kinematic record of A in P from the vehicles' ports (sim_stand/kin.py) against the
spacecraft's own relative kinematics, and the run statistics shared by the emulated stand and
the digital reference (sim_stand.world.step_stats)."""
from __future__ import annotations

import numpy as np

from rt.config.case import load_case
from rt.dynamics import spacecraft as S
from rt.dynamics import spatial as SP
from sim_stand import world as W
from sim_stand.cli import REPO
from sim_stand.kin import K_G, K_P, K_R, K_V, K_VP, K_W, K_WP, KIN_LEN, kin_from_ports


def test_kin_from_ports_agrees_with_relative_state():
    sc = S.Spacecraft.from_case(load_case(REPO / "config" / "cases" / "offset.toml"))
    rng = np.random.default_rng(11)
    for s in range(2):
        sc.x[s, S.S_W:S.S_W + 3] = 0.05 * rng.normal(size=3)
        sc.x[s, S.S_ETA:] = 0.01 * rng.normal(size=sc.ns - S.S_ETA)
    rel = np.zeros(S.REL_LEN)
    S.relative_state(sc.par, sc.env, sc.x, rel, sc.ws.ws)     # leaves the port states in ws
    kin = np.full(KIN_LEN, np.nan)
    kin_from_ports(sc.ws.ws, kin)
    r = kin[K_P:K_P + 3]
    assert np.allclose(r, rel[S.REL_R:S.REL_R + 3], atol=1e-13, rtol=0)
    R = np.empty((3, 3))
    SP.quat_to_dcm(rel[S.REL_Q:S.REL_Q + 4], R)
    assert np.allclose(kin[K_R:K_R + 9], R.ravel(), atol=1e-13, rtol=0)
    w_P = kin[K_WP:K_WP + 3]
    # relative angular velocity, and the rate of r seen in P: v_A - v_P - w_P x r
    assert np.allclose(kin[K_W:K_W + 3] - w_P, rel[S.REL_W:S.REL_W + 3], atol=1e-13, rtol=0)
    assert np.allclose(kin[K_V:K_V + 3] - kin[K_VP:K_VP + 3] - np.cross(w_P, r), rel[S.REL_V:S.REL_V + 3],
                       atol=1e-13, rtol=0)
    assert np.array_equal(kin[K_G:K_G + 3], np.zeros(3))
    assert np.isnan(kin[W.K_A:W.K_A + 3]).all()                # accelerations untouched


def test_step_stats_peaks_energy_and_capture():
    st = np.zeros(W.ST_LEN)
    st[W.ST_TCAP] = -1.0
    W.step_stats(0.1, np.array([3.0, 4.0, 0.0, 0.0, 0.0, 2.0]), 0.001, 10.0, 0.1, st, 0)
    W.step_stats(0.2, np.array([1.0, 0.0, 0.0, 0.0, 6.0, 8.0]), 0.0005, 30.0, 0.1, st, 1)
    W.step_stats(0.3, np.zeros(6), 0.0, 0.0, 0.1, st, 1)
    assert st[W.ST_PEAKF] == 5.0 and st[W.ST_PEAKM] == 10.0
    assert st[W.ST_PEN] == 0.0 and st[W.ST_MAXPEN] == 0.001
    assert np.isclose(st[W.ST_EABS], 0.05 * 10.0 + 0.05 * 40.0 + 0.05 * 30.0)
    assert st[W.ST_TCAP] == 0.2 and st[W.ST_T] == 0.3
