"""The event log's lines for key management (rt.console.view.fmt_event): a reload names who
came and went and what could not be read; a lease dropped with its revoked key is not shown as
a silent holder's lapse."""
from rt.console.view import fmt_event


def test_keys_reloaded_line_names_the_change():
    line = fmt_event({"kind": "keys_reloaded", "t": 1.5, "authorized": ["bob", "carol"], "added": ["carol"],
                      "removed": ["alice"], "unreadable": []})
    assert "console keys reloaded: 2 authorised, added carol, removed alice" in line and "unreadable" not in line
    line = fmt_event({"kind": "keys_reloaded", "authorized": ["bob"], "added": [], "removed": [],
                      "unreadable": ["k/junk.key is not a ZeroMQ certificate"]})
    assert "1 authorised" in line and "unreadable: k/junk.key" in line
    line = fmt_event({"kind": "keys_reloaded", "error": "k/authorized: No such file; keys unchanged"})
    assert "not reloaded" in line and "keys unchanged" in line


def test_a_revoked_holder_is_not_a_silent_one():
    assert "its key was revoked" in fmt_event({"kind": "lease_lost", "holder": "alice", "why": "key revoked"})
    assert "lapsed" in fmt_event({"kind": "lease_lost", "holder": "alice", "why": "silent"})
    assert "lapsed" in fmt_event({"kind": "lease_lost", "holder": "alice"})       # logs written before "why"


def test_a_wrench_plot_says_its_range():
    from rt.console.view import spark_label
    assert spark_label("Fx", [-3.2, 0.4, 2.9]) == "Fx   +2.9 N\n     -3.2 N"
    assert spark_label("Tz", [0.0, 1234.0]) == "Tz  +1.2k N·m\n     +0.0 N·m"
    assert spark_label("Fy", [-45000.0, 12.0]) == "Fy    +12 N\n     -45k N"
    assert spark_label("Fz", []) == "Fz"


def test_a_plot_column_keeps_a_negative_peak():
    from rt.console.view import extreme
    assert extreme([1.0, -5.0, 3.0]) == -5.0 and extreme([1.0, 4.0, -3.0]) == 4.0 and extreme([]) == 0.0


def test_the_energy_audit_line_gives_the_verdict():
    line = fmt_event({"kind": "energy_audit", "bound_pct": 1.0, "approach_j": 34.99, "vehicles_j": 32.66,
                      "mechanism_j": 32.62, "stand_injected_j": -0.0407, "injected_pct": -0.116, "verdict": "PASS",
                      "note": ""})
    assert "[green]energy audit: approach 34.99 J, net work on the mechanism 32.62 J, loop -0.04 J" in line
    assert "(-0.12 %, bound ±1 %): PASS" in line
    line = fmt_event({"kind": "energy_audit", "bound_pct": 1.0, "injected_pct": 13.8, "stand_injected_j": 1.0,
                      "verdict": "FAIL", "note": ""})
    assert "[bold red]" in line and "FAIL" in line


def test_the_delay_line():
    import math
    from rt.console.view import fmt_delay
    assert fmt_delay([0.0033004, 0.0035, 6.5e-7]) == "delay    platform 3.300 ms identified  loop lead 3.500 ms  κ +6.50e-07 s²"
    assert fmt_delay([math.nan, math.nan, math.nan]) == "delay    platform — identified  loop lead —"
    assert fmt_delay([0.003, math.nan]) == "delay    platform 3.000 ms identified  loop lead —"      # a log before kappa


def test_the_force_and_torque_bars_are_the_trips_own_measure():
    """The bars judge the sensor-frame wrench per axis against that axis's trip level, as
    rt.stand.safety does (a P-frame wrench against S-frame levels read 84 % at a torque trip)."""
    from rt.console.view import margins
    lim = {"force_trip_n": [6480.0, 6480.0, 16200.0], "torque_trip_nm": [1260.0, 1260.0, 1440.0],
           "length_min_m": 1.5, "length_max_m": 2.6, "v_max_m_s": 0.5, "omega_max_rad_s": 0.5}
    sample = {"w_S": [100.0, -3240.0, 4000.0, 1260.0, 0.0, -720.0], "w_P": [4000.0, 0, 0, -1, 0, 0],
              "cmd_lengths": [2.05] * 6, "cmd_twist": [0.0] * 6}
    m = dict(margins(sample, lim))
    assert m["force Sy"] == 0.5 and m["torque Sx"] == 1.0


def test_run_start_and_a_revoked_console_read_as_sentences():
    assert fmt_event({"kind": "run_start", "t": 1.657, "t_run": -0.045, "tau_s": 0.004676627, "mode": 1}) == \
        "    1.657 run start: t_run -0.045 s, loop lead τ 4.677 ms"
    line = fmt_event({"kind": "auth_denied", "client_key": "K", "address": "10.0.0.2", "console": "bob"})
    assert "revoked console bob refused" in line and "10.0.0.2" in line


def test_the_replay_plot_window_is_log_time(tmp_path):
    """The replay's plots cover the last 10 s of the log up to the record shown, whatever the
    playback does (they were the last 300 console refreshes: flat after a pause, mixed across a
    seek). A run log written by the real writer, read back."""
    import numpy as np
    from rt.console.source import ReplaySource
    from rt.record.runlog import RunLogWriter
    fields = {"cycle": 1, "state": 1, "w_P": 6}
    row = np.zeros(8)
    w = RunLogWriter(tmp_path / "r.dslog", fields, header={"rate_hz": 1000.0}, staging=row, flush_interval_s=0.05)
    import time
    for c in range(30000):                          # 30 s at 1 kHz; Fx = the record's time in s
        row[0] = c
        row[2] = c / 1000.0
        while not w.commit():                       # the ring is full: let the writer thread drain it
            time.sleep(0.01)
    w.close()
    src = ReplaySource(tmp_path / "r.dslog")
    src.index = 20000                               # a seek to t = 20 s
    win = src.wrench_window(10.0, 500)
    assert win.shape[1] == 6 and 480 <= win.shape[0] <= 520
    assert abs(win[0, 0] - 10.0) < 0.03 and win[-1, 0] == 20.0
    src.index = 500                                 # near the start: what there is
    assert src.wrench_window(10.0, 500)[0, 0] == 0.0


def test_the_mechanism_line_and_its_events():
    """The mechanism's signals (platform_inputs, wired by [platform.inputs]) and their events."""
    from rt.console.view import fmt_mechanism
    lim = {"capture_bit": 0, "latch_bits": [1, 2, 3]}
    assert fmt_mechanism({"platform_inputs": 0.0}, lim, None) == "mechanism  capture open   latches 1○ 2○ 3○"
    assert fmt_mechanism({"platform_inputs": 10.0}, lim, None) == "mechanism  capture open   latches 1● 2○ 3●"
    line = fmt_mechanism({"platform_inputs": 15.0}, lim, 2.54)
    assert "CAPTURED[/] at t_run 2.540 s" in line and "1● 2● 3●" in line
    assert "unknown" in fmt_mechanism({"platform_inputs": 0.0}, {"capture_bit": -1, "latch_bits": []}, None)
    assert "older log" in fmt_mechanism({}, lim, None)                      # a log written before the field
    assert "capture[/]: the mechanism reports soft capture t_run 2.540 s" in fmt_event(
        {"kind": "capture", "t": 4.2, "t_run": 2.54, "bit": 0, "phase": "DYNAMICS"})
    assert "latch 2 closed t_run 2.476 s" in fmt_event({"kind": "latch_closed", "latch": 2, "t_run": 2.476})
    assert "capture released" in fmt_event({"kind": "capture_released", "phase": "IDLE"})   # outside a run: its phase


def test_a_silent_platform_link_marks_its_state_stale():
    from rt.console.view import fmt_links
    sample = {"crc_errors": 0, "seq_gaps": 0, "new_sample": 1, "platform_state": 1, "platform_fault": 0}
    fresh = {"links": {"platform": {"last_frame_age_s": 0.001, "status": "connected"}}}
    assert "stale" not in fmt_links(sample, fresh)
    silent = {"links": {"platform": {"last_frame_age_s": 2.5, "status": "connected"}}}
    assert "platform ENGAGED  no fault  (stale: the last STATUS came 2.5 s ago)" in fmt_links(sample, silent)


def test_the_wrench_title_says_whether_it_is_tared():
    from rt.console.view import PHASES, wrench_title
    assert "UNTARED (no tare yet" in wrench_title({"phase": 0}, {"tared": False})
    assert "taring now" in wrench_title({"phase": 2}, {"tared": False, "taring": True})
    assert wrench_title({"phase": 0}, {"tared": True}) == "contact wrench · on P, tared, filtered"
    replay = {"replay": True}
    assert "taring now" in wrench_title({"phase": PHASES.index("TARE")}, replay)
    assert "tared, filtered" in wrench_title({"phase": PHASES.index("DYNAMICS")}, replay)


def test_the_mechanism_line_goes_stale_with_its_status():
    from rt.console.view import fmt_mechanism
    lim = {"capture_bit": 0, "latch_bits": [1, 2, 3]}
    assert "stale" not in fmt_mechanism({"platform_inputs": 15.0}, lim, 2.5, 0.002)
    assert fmt_mechanism({"platform_inputs": 15.0}, lim, 2.5, 2.8).endswith(
        "[yellow](stale: the last STATUS came 2.8 s ago)[/]")


def test_the_capture_time_shown_is_the_controllers():
    """Live, the mechanism line's capture time is the controller's (status), an event newer
    than the last status standing in: a restarted controller clears it, a console attached
    after the capture shows it (found by an operator's review)."""
    from types import SimpleNamespace

    from rt.console.app import ConsoleApp
    app = ConsoleApp(SimpleNamespace(live=True, describe={}, identity={}))
    st = {"mechanism": {"capture_t_run": None}}
    assert app._capture_time(st) is None
    app._note_event({"kind": "capture", "t_run": 2.545})       # before the next status poll
    assert app._capture_time(st) == 2.545
    assert app._capture_time({"mechanism": {"capture_t_run": 2.546}}) == 2.546
    assert app._capture_time({"mechanism": {"capture_t_run": None}}) is None   # a restarted controller
    late = ConsoleApp(SimpleNamespace(live=True, describe={}, identity={}))   # attached after the capture
    assert late._capture_time({"mechanism": {"capture_t_run": 2.546}}) == 2.546
    replay = ConsoleApp(SimpleNamespace(live=False, describe={}, identity={}))
    replay._note_event({"kind": "capture", "t_run": 1.5})
    assert replay._capture_time({"replay": True}) == 1.5
    replay._note_event({"kind": "run_start"})
    assert replay._capture_time({"replay": True}) is None


def test_signals_found_at_start_are_not_new_closures():
    line = fmt_event({"kind": "latch_closed", "latch": 1, "phase": "IDLE", "at_start": True})
    assert "latch 1 closed (so when the controller started: its first STATUS)" in line


def test_the_fidelity_line_gives_the_verdict_in_its_colour():
    from rich.text import Text
    line = fmt_event({"kind": "fidelity_verdict", "t": None, "status": "FAIL",
                      "reason": "delay: the lead is 3.142 ms long; correct the stand's [delays] or identify = \"feed\""})
    assert line.count("[bold red]") == 1 and "fidelity FAIL: delay" in line
    assert "correct the stand's [delays] or" in Text.from_markup(line).plain     # its brackets are text, not markup
    assert "[bold yellow]fidelity WARN" in fmt_event({"kind": "fidelity_verdict", "status": "WARN", "reason": "noise"})
    assert "[bold green]fidelity PASS" in fmt_event({"kind": "fidelity_verdict", "status": "PASS", "reason": "ok"})


def test_a_live_console_notes_each_runs_verdict_once():
    """The controller's status carries the last closed run's verdict (operator_api.last_verdict):
    the console's event log gets it once per run, marked as history when it came before it."""
    from rt.console.source import LiveSource
    src = LiveSource.__new__(LiveSource)          # its status handling only: no controller
    src._fidelity_seen, src._notes = None, []
    fid = {"run_id": "20261129-075823-nominal", "status": "PASS", "reason": "4 checks within their bounds"}
    src._note_fidelity(fid, attaching=True)
    src._note_fidelity(dict(fid), attaching=False)
    src._note_fidelity(None, attaching=False)
    assert src._notes == [{"kind": "fidelity_verdict", "t": None, **fid, "history": True}]
    src._note_fidelity({**fid, "run_id": "20261129-080000-nominal", "status": "WARN"}, attaching=False)
    assert len(src._notes) == 2 and "history" not in src._notes[1] and src._notes[1]["status"] == "WARN"
    assert "(from before this console attached)" in fmt_event(src._notes[0])
