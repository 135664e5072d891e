"""The stand's capture on the model's clock (sim_stand/model_clock.py): found by where the
stand captured on the model's recorded path, not by the clocks (which differ by the
compensated platform's lead)."""
from __future__ import annotations

import numpy as np
from types import SimpleNamespace

from rt.record.runlog import RunLogWriter
from sim_stand.model_clock import MAX_MISS_M, SEARCH_S, capture_on_model_clock, stand_event_on_model_clock


def _log(path, t, r, v):
    with RunLogWriter(path, {"t": 1, "rel_pose": 7, "rel_twist": 6}, threaded=False, capacity=1 << 12) as w:
        for k in range(len(t)):
            w.view("t")[0] = t[k]
            w.view("rel_pose")[:3] = r[k]
            w.view("rel_pose")[3:] = (1.0, 0.0, 0.0, 0.0)
            w.view("rel_twist")[:3] = v[k]
            w.view("rel_twist")[3:] = 0.0
            w.commit()
    return path


def test_capture_found_where_the_model_passes_the_stands_capture_position(tmp_path):
    # a closing approach at 0.08 m/s with a lateral drift, logged at 1 kHz
    t = np.arange(0.0, 2.0, 1e-3)
    v = np.tile([0.08, -0.004, 0.002], (len(t), 1))
    r = np.array([-0.62, 0.04, -0.015]) + t[:, None] * v
    log = _log(tmp_path / "run.dslog", t, r, v)
    t_true = 1.6583                                   # between two records
    pos = np.array([-0.62, 0.04, -0.015]) + t_true * v[0]
    stand = SimpleNamespace(delays=SimpleNamespace(measurement_s=0.0022))
    guess = stand_event_on_model_clock(3.0, 1.3441, stand)       # emulator clock + lead estimate
    assert abs(guess - (3.0 - 1.3441 + 0.0022)) < 1e-12
    assert abs(capture_on_model_clock(log, pos, guess) - t_true) < 1e-9
    # without compensation the platform does not lead
    assert stand_event_on_model_clock(3.0, 1.0, stand, compensate=False) == 2.0
    # what the log cannot tell leaves the clock estimate: no position, a path that never comes
    # close, a capture outside the search window, no log
    assert capture_on_model_clock(log, None, guess) == guess
    assert capture_on_model_clock(log, pos + [0.0, 2 * MAX_MISS_M, 0.0], guess) == guess
    assert capture_on_model_clock(log, pos, t_true + 4 * SEARCH_S) == t_true + 4 * SEARCH_S
    assert capture_on_model_clock(tmp_path / "missing.dslog", pos, guess) == guess
    assert stand_event_on_model_clock(None, 1.0, stand) is None
