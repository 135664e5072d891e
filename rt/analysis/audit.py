"""The per-run energy audit with its verdict (issue 26 item 3; docs/validation.md §3.4): what the
controller writes into the run log before its footer (event ``energy_audit``) and into the
run's summary.

The audit is rt/analysis/energy.py's, over the run's dynamics (rt/analysis/report.py
:func:`~rt.analysis.report.energy_of_run`, the same figures ``dockstand report`` shows):

* ``approach_j`` — the kinetic energy of the approach (the vehicles' relative motion);
* ``mechanism_j`` — the net work the contact did on the docking hardware (the measured wrench
  on the platform's actual motion: stored in its springs and dissipated);
* ``vehicles_j`` — the net work the contact took from the simulated vehicles;
* ``stand_injected_j`` = mechanism − vehicles — what the loop injected (> 0) or removed (< 0);
* ``injected_pct`` — that, in % of the approach energy, and the ``verdict``: ``PASS`` when
  ``|injected_pct| <= bound_pct`` (the stand's ``[runlog] energy_audit_bound_pct``), ``FAIL``
  beyond, ``NONE`` when it cannot be judged (no contact energy, no measured pose: ``note``).

:func:`run_audit` adds the run's fidelity verdict (rt/analysis/fidelity.py, event
``fidelity_verdict``) from the same reading of the log.

Not real-time: the writer thread calls it once the run's records are on disk.
"""
from __future__ import annotations

from pathlib import Path

from rt.analysis.fidelity import energy_verdict_of


def energy_verdict(path: str | Path, bound_pct: float) -> dict:
    """The audit of the run log at ``path`` and its verdict against ``bound_pct`` (module
    docstring); a dict of plain floats and strings (msgpack, JSON)."""
    from rt.analysis.report import dynamics_rows, energy_of_run
    from rt.analysis.run import load_run

    run = load_run(path)
    lo, hi = dynamics_rows(run)
    return energy_verdict_of(*energy_of_run(run, lo, hi), bound_pct)


def run_audit(path: str | Path, bound_pct: float) -> dict:
    """The run log's energy audit and its fidelity verdict (rt/analysis/fidelity.py) in one
    pass: ``{"energy_audit": <energy_verdict's dict>, "fidelity": <the verdict>}``. What the
    shells give the controller as its ``auditor``: the recorder writes each as an event
    (``energy_audit``, ``fidelity_verdict``) before the log's footer."""
    from rt.analysis.report import dynamics_rows, energy_of_run, fidelity_of_run
    from rt.analysis.run import load_run

    run = load_run(path)
    lo, hi = dynamics_rows(run)
    energy = energy_verdict_of(*energy_of_run(run, lo, hi), bound_pct)
    # the writer audits the run it has just ended, before the footer: the whole run
    return {"energy_audit": energy, "fidelity": fidelity_of_run(run, lo, hi, energy, bound_pct, whole_run=True)}


def format_verdict(v: dict) -> str:
    """One line for the operator: ``energy audit: approach 8.000 J, net work on the mechanism 7.99 J,
    loop +0.012 J (+0.15 %, bound ±1 %): PASS``."""
    from rt.analysis.numbers import percent, quantity

    def j(x):
        return "—" if x is None else quantity(x, "J")
    inj = "—" if v.get("stand_injected_j") is None else quantity(v["stand_injected_j"], "J", sign=True)
    pct = "" if v.get("injected_pct") is None else f" ({percent(v['injected_pct'], sign=True)}, bound ±{v['bound_pct']:g} %)"
    s = f"energy audit: approach {j(v.get('approach_j'))}, net work on the mechanism {j(v.get('mechanism_j'))}, loop {inj}{pct}: {v['verdict']}"
    return s + (f" ({v['note']})" if v.get("note") else "")
