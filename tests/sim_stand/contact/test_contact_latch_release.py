"""Latch release and engagement at the crest of a striker (the latch logic
of [Yaskevich 2018b, latches and sensors]).

A pawl that has ridden up a striker ramp rolls over the crest edge and slides down the catch
face while its rounding still overlaps the catch plane (a class-2 contact on the catch, whose
deflection the spring lets fall as the ring advances); it is engaged once its tip (rounding
included) stands clear in front of the catch face, so that the tip/catch contact that becomes
live at engagement starts at zero penetration (no force step)."""
import math
import tomllib

import numpy as np
import pytest

from sim_stand.contact import Builder, ContactModel
from sim_stand.contact import kernel as K

from conftest import PRESET

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
    """Past the crest line (0 < db < r_tip: the free tip centre db in front of the catch plane)
    the tip slides down the catch face: the bisection puts its rounding on the catch plane,
    p = (r_tip - db) / (nu_c . a) with a the deflection direction (within the bisection
    tolerance, from below), one class-2 record whose reaction normal is -nu_c; it engages
    within one step of db reaching r_tip."""
    model, crest, nu_c = undercut_striker()
    tol = model.packed.lat[0, K.L_TOL]
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
            assert st == K.LAT_DEFLECTED
            p_exact = (R_TIP - db) / nu_c[1]          # deflection along +y
            assert 0.0 <= p_exact - model.latch_p[0] <= tol, (db, model.latch_p[0], p_exact)
            (r,) = model.records
            assert r[K.C_CLASS] == 2
            np.testing.assert_allclose(r[K.C_N:K.C_N + 3], -nu_c, atol=1e-12)
            assert 0.0 <= r[K.C_PEN] <= tol * nu_c[1] + 1e-15
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


def test_preset_pawl_is_released_at_the_crest(packed):
    """Centred approach of the preset ring: no class-2 latch contact overlaps its striker by
    more than the bisection tolerance -- on the ramp, over the crest edge and down the catch
    (the exact wedge: a tip pinned on a virtual wall overlapped by up to its rounding) -- and
    each latch engages within two steps of its tip's rounding clearing its catch plane."""
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
                assert r[K.C_PEN] <= lat[0, K.L_TOL], (x, r[K.C_PEN])
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


def test_ring_sensor_balls_stand_the_configured_protrusion_proud(preset, packed):
    """Each ring sensor's ball has its front (centre + tip radius along +x_E) exactly
    ``protrusion_mm`` in front of the active ring face (not protrusion + tip radius): it
    touches the passive face when the ring is ``protrusion_mm`` short of seating, and its
    deflection is then the ring's advance past that point, p = x + protrusion (bisection: within
    the tolerance below it). It triggers at x = trigger - protrusion."""
    se = preset.sensors
    with open(PRESET, "rb") as fh:                          # the number in the config file
        assert se.protrusion_m == pytest.approx(tomllib.load(fh)["sensors"]["protrusion_mm"] * 1e-3, abs=1e-15)
    lat = packed.lat
    sensors = [l for l in range(lat.shape[0]) if lat[l, K.L_KIND] == 1.0]
    assert len(sensors) == se.count == 3
    for l in sensors:
        front = lat[l, K.L_TIP] + lat[l, K.L_RTIP]           # E frame, the ring face at x_E = 0
        assert front == pytest.approx(se.protrusion_m, abs=1e-15)
        assert lat[l, K.L_RTIP] == se.tip_radius_m
        assert lat[l, K.L_AX:K.L_AX + 3].tolist() == [-1.0, 0.0, 0.0]   # deflects straight back
    tol = lat[sensors[0], K.L_TOL]
    model = ContactModel(packed, check=False)
    tw = np.zeros((1, 6))
    # just short of touching (1 um): no sensor deflects
    model.evaluate(_pose(-se.protrusion_m - 1e-6), tw, commit=False)
    assert all(model.latch_p[l] == 0.0 for l in sensors)
    assert not any(r[K.C_CLASS] == 2 for r in model.records)
    for x in (-se.protrusion_m + 1e-4, -se.protrusion_m + se.trigger_m - 1e-5,
              -se.protrusion_m + se.trigger_m + 1e-5, -5e-4):
        model.evaluate(_pose(x), tw, commit=False)
        for l in sensors:
            assert 0.0 <= (x + se.protrusion_m) - model.latch_p[l] <= tol, (x, l, model.latch_p[l])
            trig = model.state_out[K.S_LATCH0 + l] == K.SEN_TRIGGERED
            assert trig == (x > -se.protrusion_m + se.trigger_m), (x, l)


def test_pawl_passage_conserves_energy(packed):
    """Quasi-static centred approach of the preset ring from before the pawls meet their ramps
    to past engagement (0.01 mm steps): the work the ring does through each latch's class-2
    contact, W(x) = integral of f_x dx (f on the passive unit, trapezoid rule), equals the
    energy stored in that latch's spring, E(p) = preload p + k p^2 / 2, at every step within
    5 mJ (the class-2 contact is frictionless and the spring conservative; the peak is ~2.4 J
    at the crest), and returns to zero once the pawl has slid down the catch. A striker model
    that is not the exact wedge fails this (the ramp alone lost ~4 J per latch; min(ramp,
    catch) with the ramp's prism created ~1.3 J)."""
    model = ContactModel(packed, check=False)
    lat = packed.lat
    npair = packed.pairs.shape[0]
    latches = [l for l in range(lat.shape[0]) if lat[l, K.L_KIND] == 0.0]
    tw = np.array([[0.01, 0, 0, 0, 0, 0]])
    dx = 1e-5
    xs = np.arange(-0.070, -0.018, dx)
    fx = np.zeros((len(xs), len(latches)))
    p = np.zeros_like(fx)
    for i, x in enumerate(xs):
        model.evaluate(_pose(x), tw, t=i * 1e-3)
        for r in model.records:
            code = int(r[K.C_PAIR]) - npair
            if code in latches:
                fx[i, latches.index(code)] = r[K.C_F]
        p[i] = model.latch_p[latches]
    assert all(model.state[K.S_LATCH0 + l] == K.LAT_ENGAGED for l in latches)
    W = np.concatenate((np.zeros((1, len(latches))), np.cumsum(0.5 * (fx[1:] + fx[:-1]) * dx, axis=0)))
    E = lat[latches, K.L_PRELOAD] * p + 0.5 * lat[latches, K.L_KSPR] * p ** 2
    assert E.max() > 2.0
    assert np.max(np.abs(W - E)) < 5e-3, np.max(np.abs(W - E), axis=0)
    assert np.all(np.abs(W[-1]) < 5e-3)


def _striker(w_foot, w_crest, catch_normal=None):
    """The undercut striker with a ramp of half-width ``w_foot`` at its foot and ``w_crest`` at
    its crest; the catch (as wide as the crest) square to the ramp through the crest, or, with
    ``catch_normal(n_ramp)``, a plane of that normal through the crest edge continuing away
    from the ramp."""
    b = Builder()
    mat = b.material("latch", 5e6, 2e3, 0.0, max_penetration=0.01)
    ez = np.array([0.0, 0.0, 1.0])
    foot, crest = np.array([-0.05, 0.0, 0.0]), np.array([0.0, 0.02, 0.0])
    along = (crest - foot) / np.linalg.norm(crest - foot)
    nu_ramp = np.array([-along[1], along[0], 0.0])
    ramp = b.polygon("ramp", [foot - w_foot * ez, foot + w_foot * ez, crest + w_crest * ez,
                              crest - w_crest * ez], nu_ramp, 0.03)
    if catch_normal is None:
        nu_c, far = along, crest - 0.02 * nu_ramp
    else:
        nu_c = catch_normal(nu_ramp)
        far = crest + 0.02 * np.array([nu_c[1], -nu_c[0], 0.0])
    catch = b.polygon("catch", [far - w_crest * ez, far + w_crest * ez, crest + w_crest * ez,
                                crest - w_crest * ez], nu_c, 0.05)
    b.latch("latch", 0, (0.0, 0.01, 0.0), (0, 1, 0), 0.02, 40.0, 4000.0, R_TIP, ramp, mat, tol=1e-7,
            back=catch)
    return ContactModel(b.pack(), check=False)


@pytest.mark.parametrize("w_foot, w_crest", [(0.03, 0.03), (0.03, 0.015), (0.015, 0.03)])
def test_tip_beside_a_tapered_ramp_is_free(w_foot, w_crest):
    """A tip beside the striker (40 mm off its mid-plane: outside the ramp at every width
    here) meets nothing, whether the ramp narrows or widens towards its crest: only the
    crest edge (both ends on the catch plane) is dropped from the ramp's prism, never its
    sides (a side leaning towards the foot was dropped by a sign test alone before)."""
    model = _striker(w_foot, w_crest)
    for z in (0.0, 0.04):
        model.state[:] = 0
        model.evaluate(np.array([[-0.03, 0.0, z, 1.0, 0, 0, 0]]), np.zeros((1, 6)), commit=False)
        assert (model.latch_p[0] > 0.0) == (z == 0.0), (w_foot, w_crest, z, model.latch_p[0])


@pytest.mark.parametrize("tilt", [0.0, 1e-9, 1e-6])
def test_catch_continuing_the_ramp_flat_is_handled(tilt):
    """A "catch" that continues the ramp flat past the crest (its normal within ``tilt`` of
    the ramp's: 1 - c^2 rounds to 0): no division by zero, finite results, the ramp's prism
    keeps its sides (a tip 40 mm beside it is free) and a tip over the flat part is held at
    the ramp's height."""
    c, s = math.cos(tilt), math.sin(tilt)
    model = _striker(0.03, 0.03, lambda n1: np.array([c * n1[0] - s * n1[1], s * n1[0] + c * n1[1], 0.0]))
    for x, z in ((-0.03, 0.0), (0.0005, 0.0), (-0.03, 0.04)):
        model.state[:] = 0
        model.evaluate(np.array([[x, 0.0, z, 1.0, 0, 0, 0]]), np.zeros((1, 6)), commit=False)
        assert np.all(np.isfinite(model.wrench_P)) and np.isfinite(model.latch_p[0])
        assert (model.latch_p[0] > 0.0) == (z == 0.0), (tilt, x, z, model.latch_p[0])
