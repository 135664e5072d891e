"""What a HIL run of a case shares with its all-digital reference, as every case's end-to-end
test judges it (imported by name: the test's folder is on ``sys.path``)."""
from __future__ import annotations


def check_hil_agrees(hil: dict, dig, rep: dict) -> None:
    """The HIL run (``run_demo``'s result ``hil``) ends DONE without a trip, on its capture
    settling as the reference does (not on the time limit, past the reference's end); it and the
    reference ``dig`` capture, and the comparison ``rep`` (``compare_logs``) says so; the capture
    and the first contact within 20 ms of the reference's, the peak force within 8 %."""
    assert hil["final_state"] == "DONE" and hil["trip"] is None, hil
    assert hil["finish_reason"] == "capture settled" and dig.end_reason == "capture_settled", \
        (hil["finish_reason"], dig.end_reason)
    assert hil["captured"] and dig.captured and rep["capture_agreement"], rep
    assert abs(hil["time_to_capture_s"] - dig.time_to_capture_s) < 0.02
    fi = rep["fidelity"]
    assert abs(fi["first_contact_difference_s"]) < 0.02, fi
    assert abs(rep["peak_force_error_pct"]) <= 8.0, rep["peak_force_error_pct"]
