"""The stand's loop envelope (rt/stand/loop_envelope.py; docs/validation.md §3.5): the pure
judgement against the theory's formulas, against the ideal delayed loop of sim_stand/loop_theory.py,
and at ARM: a case outside is said (event, run-log header) with its reason, and refused where
the stand file asks."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from rt.config.stand import EnvelopeSettings, load_stand
from rt.control.controller import Phase
from rt.record.runlog import read_log
from rt.stand import loop_envelope as LE
from sim_stand.kinematic_rig import NOMINAL, STAND, Rig
from sim_stand.loop_theory import ideal_error_pct

DT = 1e-3


def test_formulas():
    assert LE.causal_limit_pct(0.35) == pytest.approx(100 * 0.35 ** 4 / 12)
    assert LE.acceleration_error_pct(0.35) == pytest.approx(100 * math.pi * 0.35 ** 3 / 24)
    assert LE.jerk_gain(0.35, 5e-3, DT) == pytest.approx(0.35 ** 2 * 5 / 3)
    assert LE.sampling_limit_pct(0.1, 70.0, DT) == pytest.approx(100 * 2 * 0.1 * 70 * DT)
    # the onset: the larger of the contact's own v w and the prediction's one-cycle step
    c = 5e-3 ** 3 / 6 + DT * 5e-3 ** 2 / 2
    assert LE.onset_command_acceleration(0.28, 70.7, 5e-3, DT) == pytest.approx(c * 0.28 * 70.7 ** 2 / DT ** 2)


@pytest.mark.parametrize("m,k,tau,zeta,inside,why", [
    (1600.0, 2.5e5, 6.2e-3, 0.0, True, ""),                    # the shipped rod: w tau 0.08
    (200.0, 1e6, 5e-3, 0.0, True, ""),                         # the old grid's corner: w tau 0.35, limit 0.13 %
    (100.0, 3e6, 4.7e-3, 0.0, False, "no causal compensator"),  # w tau 0.81: (w tau)^4/12 = 3.6 %
    (1600.0, 1e6, 22.7e-3, 0.0, False, "loop gain"),          # w tau 0.57, gain 2.4: the jerk rings, acceleration 2.4 %
    (100.0, 1e5, 4.7e-3, 0.3, False, "damper"),                # 2 zeta w dt = 1.9 %
])
def test_judgement(m, k, tau, zeta, inside, why):
    e = LE.loop_envelope(k, m, tau, DT, 1.0, damping_ratio=zeta)
    assert e.inside is inside, e
    assert e.omega_tau == pytest.approx(math.sqrt(k / m) * tau)
    if not inside:
        assert why in e.reasons[0] and "OUTSIDE" in e.sentence()
    else:
        assert not e.reasons and "inside" in e.sentence()


def test_inside_the_ideal_loop_holds_the_bound_and_outside_it_does_not():
    """The theory against the independent oracle: where the envelope says inside, the ideal
    delayed loop (sampled like the stand, the worst over the touch's phase) is within the bound;
    at points it puts outside for the causal limit, the ideal loop is beyond it too."""
    for m, k, tau, z in [(200.0, 1e6, 5e-3, 0.0), (1600.0, 1e5, 12.7e-3, 0.1), (20000.0, 3e6, 12.7e-3, 0.1)]:
        assert LE.loop_envelope(k, m, tau, DT, 1.0, damping_ratio=z).inside
        assert abs(ideal_error_pct(m, k, tau, z)) <= 1.0
    for m, k, tau in [(100.0, 3e6, 4.7e-3), (100.0, 1e6, 7.7e-3)]:
        assert not LE.loop_envelope(k, m, tau, DT, 1.0).inside
        assert abs(ideal_error_pct(m, k, tau)) > 1.0


def test_undeclared_contact_is_not_judged():
    e = LE.loop_envelope(None, 1000.0, 5e-3, DT)
    assert e.inside is None and "not judged" in e.sentence()


def test_platform_check():
    e = LE.loop_envelope(1e6, 200.0, 5e-3, DT, 1.0, closing_speed_mps=0.28, acceleration_limit_m_s2=10.0)
    assert not e.inside and "the platform" in e.reasons[0] and e.onset_acceleration_m_s2 > 10.0


def _stiff_case(tmp_path):
    """The nominal case declaring a contact no loop can reproduce (w tau ~ 7)."""
    text = NOMINAL.read_text().replace("contact_stiffness_n_per_m = 1.0e6", "contact_stiffness_n_per_m = 1.0e10")
    text = text.replace('"../vehicles/', f'"{NOMINAL.parent.parent}/vehicles/')
    p = tmp_path / "stiff.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("outside", ["flag", "refuse"])
def test_a_case_outside_is_flagged_at_arm_and_refused_where_the_stand_asks(tmp_path, outside):
    stand = replace(load_stand(STAND), envelope=EnvelopeSettings(1.0, outside))
    rig = Rig(tmp_path, stand=stand)
    try:
        c = rig.ctl
        rig.run(3)
        assert c.command("load_case", case=str(_stiff_case(tmp_path))).ok
        rig.run(3)                            # the platform's STATUS fresh again after loading the case
        r = c.command("arm")
        if outside == "refuse":
            assert not r.ok and "outside the stand's loop envelope" in r.reason and "no causal compensator" in r.reason
            assert c.phase is Phase.IDLE
            return
        assert r.ok, r.reason
        ev = [e for e in c.events if e["kind"] == "loop_envelope"][-1]
        assert ev["inside"] is False and "OUTSIDE" in ev["text"] and "no causal compensator" in ev["reasons"][0]
        rig.run(5)
        c.close()
        h = read_log(c.log_path).header
        assert h["loop_envelope"]["inside"] is False and h["loop_envelope"]["omega_tau"] > 5.0
        assert h["delays"]["predictor"] == stand.delays.predictor
        # and the run's fidelity verdict (rt.analysis.fidelity, in the energy audit) says why
        fid = c.summary()["energy_audit"]["fidelity"]
        assert fid["verdict"] == "FAIL" and "outside the stand's loop envelope" in fid["line"], fid
    finally:
        rig.close()


def test_the_shipped_cases_are_inside(tmp_path):
    """Every shipped case, on the shipped stand at its configured delay, is inside the envelope."""
    from rt.config.case import load_case
    stand = load_stand(STAND)
    for p in sorted((NOMINAL.parent).glob("*.toml")):
        e = LE.envelope_of_case(load_case(p), stand)
        assert e.inside is True, (p.name, e.sentence())
