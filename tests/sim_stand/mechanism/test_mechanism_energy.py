"""Energy conservation without dampers or friction: 2 s at 10 kHz (RK4), ring + legs kinetic
energy (dense-oracle kinematics) + reflected rotor inertia + spring potential + gravitational
potential.  Bound: |E(t) - E(0)| <= 1e-9 x (kinetic + spring + gravity energy scale)."""
import numpy as np
import pytest
from conftest import make_mech, random_state
from mech_oracle import Dense

from sim_stand.mechanism import devices as dv
from sim_stand.mechanism import layout as L
from sim_stand.mechanism.config import EMDamper


def energy(mech, x):
    v = mech.evaluate(x)
    bm = mech.base_motion_static()
    d = Dense(mech, x, bm, np.zeros(6), v.p)
    E = d.kinetic_energy() + d.gravity_potential()
    for k in range(mech.nl):
        lo = L.HDR + k * L.LP
        E += dv.spring_potential(mech.params, lo, v.stroke[k])
        E += 0.5 * mech.params[lo + L.L_EM_M] * v.stroke_rate[k] ** 2
    return E, d.kinetic_energy()


@pytest.mark.parametrize("gravity", ("stand_1g", "orbit"))
@pytest.mark.parametrize("leg_type", ("UPS", "RSU"))
def test_energy_conserved_2s_10khz(leg_type, gravity):
    """On the stand (the preset's 1 g along -x0) the energy includes the gravitational
    potential; in orbit (g = 0) it is kinetic + spring energy only."""
    import dataclasses

    from sim_stand.mechanism import Mechanism
    emd = EMDamper(ratio_rad_per_unit=3770.0 if leg_type == "UPS" else 60.0,
                   torque_constant_nm_per_a=0.05, back_emf_v_s_per_rad=0.05,
                   resistance_ohm=1e300, rotor_inertia_kgm2=2e-6)   # inertia only
    mech = make_mech(leg_type, damping=0.0, brake=None, drive=None, end_stops=None, emd=emd)
    if gravity == "orbit":
        mech = Mechanism(dataclasses.replace(mech.cfg, gravity_0=np.zeros(3)))
    else:
        assert np.linalg.norm(mech.gravity_0) == pytest.approx(9.80665)
    rng = np.random.default_rng(3)
    x = random_state(mech, rng, pos=0.02, ang=0.04, vel=0.15, rate=0.2)
    E0, T0 = energy(mech, x)
    scale = T0 + abs(E0)
    worst = 0.0
    for _ in range(20):
        mech.step_rk4(x, 1e-4, n_steps=1000)
        E, _ = energy(mech, x)
        worst = max(worst, abs(E - E0))
    print(f"{leg_type} {gravity}: max |E - E0| = {worst:.3e} J, scale {scale:.3e} J")
    assert worst <= 1e-9 * scale, (worst, scale)
