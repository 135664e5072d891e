"""Latch release and engagement at the crest of a striker (seed 002 §4.8 latch logic).

A pawl that has ridden up a striker ramp snaps back once it is past the crest; it is engaged
once its tip (rounding included) stands in front of the catch face, so that the tip/catch
contact that becomes live at engagement starts at zero penetration (no force step)."""
import math

import numpy as np
import pytest

from sim_stand.contact import Builder, ContactModel
from sim_stand.contact import kernel as K

R_TIP = 0.003
STEP = 1e-4          # ring advance per evaluation, m


def undercut_striker():
    """2-D striker in the x-y plane (width along z): a ramp from (-50, 0) mm up to the crest
    at (0, 20) mm facing the approaching pawl, and a catch through the crest square to the
    ramp (normal along the ramp, +x +y), so the ramp's prism ends exactly at the catch plane.
    The pawl tip (rounding 3 mm) sits 10 mm above the base at its free position and deflects
    along +y; it rides on link 0, which moves along +x."""
    b = Builder()
    mat = b.material("latch", 5e6, 2e3, 0.0, max_penetration=0.01)
    wz = np.array([0.0, 0.0, 0.03])
    foot, crest = np.array([-0.05, 0.0, 0.0]), np.array([0.0, 0.02, 0.0])
    along = (crest - foot) / np.linalg.norm(crest - foot)
    nu_ramp = np.array([-along[1], along[0], 0.0])                   # (-x, +y): towards the pawl
    ramp = b.polygon("ramp", [foot - wz, foot + wz, crest + wz, crest - wz], nu_ramp, 0.03)
    base = crest - (crest[1] / -nu_ramp[1]) * -nu_ramp              # catch plane meets y = 0
    catch = b.polygon("catch", [base - wz, base + wz, crest + wz, crest - wz], along, 0.05)
    tip = (0.0, 0.01, 0.0)
    li = b.latch("latch", 0, tip, (0, 1, 0), 0.02, 40.0, 4000.0, R_TIP, ramp, mat, tol=1e-7,
                 back=catch)
    tf = b.point("latch.tip", tip, R_TIP, 0)
    b.pair("latch.tip/catch", tf, catch, mat, gate=li)
    return ContactModel(b.pack(), check=False), crest, along


def _pose(x):
    return np.array([[x, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]])


def test_latch_engages_only_once_its_rounding_clears_the_catch():
    model, crest, nu_c = undercut_striker()
    tw = np.array([[0.1, 0, 0, 0, 0, 0]])
    held_free = []          # evaluations with the tip past the crest but its rounding on it
    engaged_at = None
    deflected = False
    for i in range(int(0.12 / STEP)):
        x = -0.09 + i * STEP
        model.evaluate(_pose(x), tw, t=i * 1e-3)
        st = model.state[K.S_LATCH0]
        db = (np.array([x, 0.01, 0.0]) - crest) @ nu_c          # free tip centre before the catch
        deflected |= st == K.LAT_DEFLECTED
        if st == K.LAT_ENGAGED:
            engaged_at = db
            # the tip/catch pair is live from now on and starts without overlap
            assert not any(r[K.C_PEN] > 0 for r in model.records)
            break
        if deflected and 0.0 < db < R_TIP:
            assert st == K.LAT_DEFLECTED and model.latch_p[0] == 0.0 and model.n == 0
            held_free.append(db)
    assert deflected and engaged_at is not None
    assert R_TIP <= engaged_at < R_TIP + STEP                 # engaged within one step
    assert len(held_free) >= int(0.8 * R_TIP / (STEP * nu_c[0]))
    events = [e.kind for e in model.events]
    assert events.count("latch_deflected") == 1 and events.count("latch_engaged") == 1
    assert "soft_capture" in events
    # pulled back by 1 mm, the engaged latch bears on the catch: the passive unit is pulled
    model.evaluate(_pose(x - 0.001), -tw, t=1.0)
    (r,) = model.records
    assert r[K.C_PEN] == pytest.approx(R_TIP - (engaged_at - 0.001 * nu_c[0]), abs=1e-12)
    assert r[K.C_F:K.C_F + 3] @ nu_c < 0


@pytest.mark.xfail(strict=True, reason=(
    "kernel.latch_depth takes a striker as its ramp face alone: a tip counts as inside it "
    "anywhere in the ramp's prism, also past the crest (in front of the catch plane). In the "
    "preset the pawl then slides down a virtual wall square to the ramp for ~11 mm past the "
    "crest (Delta up to 33 mm, spring force along the ramp normal pushing the ring back) and "
    "engages ~10 mm late. Fix: treat striker k as a solid wedge, Delta_k = min(Delta on ramp "
    "k, r_tip - distance in front of catch L_BACK + k), face = the one giving the min. Remove "
    "this marker when the kernel is fixed."))
def test_preset_pawl_is_released_at_the_crest(packed):
    """Centred approach of the preset ring: no class-2 latch contact overlaps its striker by
    more than the tip rounding (on a ramp face Delta(p) is within the bisection tolerance; up
    to the rounding only while the tip rolls over the crest edge), and each latch engages
    within two steps of its tip's rounding clearing its catch plane."""
    model = ContactModel(packed, check=False)
    tw = np.array([[0.1, 0, 0, 0, 0, 0]])
    lat = packed.lat
    tmp = np.zeros(7)
    engaged_db = {}
    for i in range(int(0.08 / STEP)):
        x = -0.085 + i * STEP
        prev = model.state.copy()
        model.evaluate(_pose(x), tw, t=i * 1e-3)
        for r in model.records:
            if r[K.C_CLASS] == 2 and lat[int(r[K.C_PAIR]) - packed.pairs.shape[0], K.L_KIND] == 0:
                assert r[K.C_PEN] <= lat[0, K.L_RTIP], (x, r[K.C_PEN])
        for l in range(3):
            if model.state[K.S_LATCH0 + l] == K.LAT_ENGAGED and prev[K.S_LATCH0 + l] != K.LAT_ENGAGED:
                K.latch_tip(lat, l, 0.0, _pose(x), model.Rl, tmp)
                dbs = []
                for kb in range(int(lat[l, K.L_NFACE])):
                    fb = model.featP[int(lat[l, K.L_BACK]) + kb]
                    dbs.append(((tmp[:3] - fb[K.F_A:K.F_A + 3]) @ fb[K.F_NU:K.F_NU + 3], fb[K.F_DEPTH]))
                engaged_db[l] = max(d for d, depth in dbs if d <= depth)
    assert sorted(engaged_db) == [0, 1, 2]
    for db in engaged_db.values():
        assert lat[0, K.L_RTIP] <= db < lat[0, K.L_RTIP] + 2 * STEP


def test_ring_sensors_report_their_trigger_as_events(packed):
    """Centred straight approach of the preset ring to 0.5 mm before seating: the three
    ring-contact sensors (class-2 plungers on the active face) each report one
    ``sensor_triggered`` event, after soft capture, once their deflection reaches the trigger
    deflection; a sensor never reports a latch event."""
    model = ContactModel(packed, check=False)
    tw = np.array([[0.1, 0, 0, 0, 0, 0]])
    lat = packed.lat
    sensors = [l for l in range(lat.shape[0]) if lat[l, K.L_KIND] == 1.0]
    assert len(sensors) == 3
    first_trig = {}
    for i in range(int(0.0845 / STEP) + 1):
        x = -0.085 + i * STEP
        model.evaluate(_pose(x), tw, t=i * 1e-3)
        for l in sensors:
            if l not in first_trig and model.latch_p[l] >= lat[l, K.L_TRIG]:
                first_trig[l] = i * 1e-3
    ev = model.events
    trig = {e.detail: e.time_s for e in ev if e.kind == "sensor_triggered"}
    names = {packed.latch_names[l] for l in sensors}
    assert set(trig) == names
    assert {packed.latch_names[l]: t for l, t in first_trig.items()} == trig
    cap = [e.time_s for e in ev if e.kind == "soft_capture"]
    assert len(cap) == 1 and all(t > cap[0] for t in trig.values())
    assert not any(e.detail in names for e in ev if e.kind.startswith("latch"))
    assert model.latch_states()[3:] == ["triggered"] * 3
