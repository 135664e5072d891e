"""Contact model figures.

``contact_eval_us``: median time of one full evaluation of the peripheral androgynous interface
(every primitive pair through the broad phase, the three latches by bisection, the three ring
sensors) as the emulator runs it, i.e. called from compiled code, in a near-capture
configuration with several active contacts: ring 36 mm out, 26 mm off-axis towards a passive
petal, closing at 0.1 m/s (guide rims on two petals, two latches on their strikers).
``contact_call_us``: the same call from Python (adds numba's argument unboxing).
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

CONFIG = Path(__file__).resolve().parents[1] / "config" / "interfaces" / "peripheral_androgynous.toml"


def near_capture_state():
    pose = np.zeros((1, 7))
    a = math.radians(60.0)
    pose[0, :3] = [-0.036, 0.026 * math.cos(a), 0.026 * math.sin(a)]
    pose[0, 3] = 1.0
    tw = np.array([[0.1, -0.01, 0.005, 0.0, 0.002, 0.001]])
    return pose, tw


def _loop():
    from numba import njit

    from sim_stand.contact import kernel as K

    @njit(cache=False)
    def loop(n, feat, featP, pairs, mat, lat, pose, tw, ptw, st, rec, wP, wl, so, lp, info, infof, Rl, sc):
        s = 0
        for _ in range(n):
            s += K.evaluate(feat, featP, pairs, mat, lat, pose, tw, ptw, st, rec, wP, wl, so, lp,
                            info, infof, Rl, sc)
        return s
    return loop


def run(quick: bool = False) -> dict:
    from sim_stand.contact import ContactModel, build_interface, load_interface
    from sim_stand.contact import kernel as K

    packed = build_interface(load_interface(CONFIG))
    m = ContactModel(packed, check=False)
    pose, tw = near_capture_state()
    args = (packed.feat, m.featP, packed.pairs, packed.mat, packed.lat, pose, tw, m.zero_twist,
            m.state, m.rec, m.wrench_P, m.wrench_links, m.state_out, m.latch_p, m.info, m.info_f,
            m.Rl, m.scratch)
    n = K.evaluate(*args)
    assert m.info[0] == 0, "bench configuration must stay within the penetration limits"
    loop = _loop()
    loop(1, *args)
    reps, inner = (20, 500) if quick else (100, 2000)
    t_in = np.empty(reps)
    t_py = np.empty(reps)
    ev = K.evaluate
    for r in range(reps):
        t0 = time.perf_counter()
        loop(inner, *args)
        t_in[r] = (time.perf_counter() - t0) / inner
        t0 = time.perf_counter()
        for _ in range(inner // 10):
            ev(*args)
        t_py[r] = (time.perf_counter() - t0) / (inner // 10)
    n_latch = int(sum(1 for rec in m.rec[:n] if rec[K.C_CLASS] == 2))
    return {
        "contact_eval_us": round(float(np.median(t_in)) * 1e6, 3),
        "contact_call_us": round(float(np.median(t_py)) * 1e6, 3),
        "contact_eval_pairs": int(packed.pairs.shape[0]),
        "contact_eval_active_contacts": int(n),
        "contact_eval_latch_contacts": n_latch,
    }


if __name__ == "__main__":
    print(run())
