"""The peripheral androgynous preset: action/reaction, 120 deg symmetry, record overflow,
the ring-frame wrench helper, penetration abort, config errors."""
import math
import re

import numpy as np
import pytest

from rt.dynamics import spatial
from rt.config import ConfigError
from sim_stand.contact import ContactModel, PenetrationLimitExceeded, load_interface
from sim_stand.contact import kernel as K

from conftest import PRESET


def random_state(rng, spread=1.0):
    """Ring pose near capture with guide, rim and latch contacts, random twist."""
    pose = np.zeros((1, 7))
    pose[0, 0] = rng.uniform(-0.15, 0.0)
    r, a = rng.uniform(0, 0.05 * spread), rng.uniform(0, 2 * np.pi)
    pose[0, 1:3] = r * np.cos(a), r * np.sin(a)
    rv = rng.normal(size=3) * math.radians(2.0) * spread
    spatial.quat_from_rotvec(rv, pose[0, 3:7])
    tw = np.concatenate((rng.normal(size=3) * 0.1, rng.normal(size=3) * 0.05))[None, :]
    return pose, tw


def test_newtons_third_law_random_configurations(packed):
    """Wrench on the passive unit + wrench on the ring, both about P's origin, is zero to
    1e-12 relative to the wrench scale sum |f| (1 + |x_C|) (round-off), over 300 random
    configurations, most with several contacts (also with a moving passive unit)."""
    rng = np.random.default_rng(5)
    model = ContactModel(packed, check=False)
    n_multi = 0
    for i in range(300):
        pose, tw = random_state(rng)
        ptw = rng.normal(size=6) * 0.02 if i % 2 else None
        model.state[:] = 0
        n = model.evaluate(pose, tw, ptw, commit=False)
        n_multi += n >= 3
        wl = model.wrench_links[0]
        p = pose[0, :3]
        total_f = model.wrench_P[:3] + wl[:3]
        total_m = model.wrench_P[3:] + wl[3:] + np.cross(p, wl[:3])
        r = model.records
        scale = np.sum(np.linalg.norm(r[:, K.C_F:K.C_F + 3], axis=1)
                       * (1 + np.linalg.norm(r[:, K.C_XC:K.C_XC + 3], axis=1))) if n else 1.0
        assert np.abs(total_f).max() <= 1e-12 * scale
        assert np.abs(total_m).max() <= 1e-12 * scale
        # the records add up to the passive wrench
        if n:
            f = r[:, K.C_F:K.C_F + 3]
            assert np.allclose(f.sum(0), model.wrench_P[:3], rtol=0, atol=1e-12 * scale)
            assert np.allclose(np.cross(r[:, K.C_XC:K.C_XC + 3], f).sum(0), model.wrench_P[3:],
                               rtol=0, atol=1e-12 * scale)
    assert n_multi > 60


def Rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def test_rotating_the_ring_by_120_deg_rotates_every_force(packed):
    """Rotating the ring's pose and twist by 120 deg about x_P rotates every contact (point and
    force) and the total wrench by 120 deg: 1e-9 relative (the geometry is built with
    trigonometric functions of different angles, so round-off is not bit-identical)."""
    rng = np.random.default_rng(11)
    Q = Rx(2 * math.pi / 3)
    m1 = ContactModel(packed, check=False)
    m2 = ContactModel(packed, check=False)
    checked = 0
    for _ in range(100):
        pose, tw = random_state(rng)
        R = np.empty((3, 3))
        spatial.quat_to_dcm(pose[0, 3:7], R)
        pose2 = pose.copy()
        pose2[0, :3] = Q @ pose[0, :3]
        spatial.dcm_to_quat(Q @ R, pose2[0, 3:7])
        tw2 = np.concatenate((Q @ tw[0, :3], Q @ tw[0, 3:]))[None, :]
        m1.state[:] = 0
        m2.state[:] = 0
        n1 = m1.evaluate(pose, tw, commit=False)
        n2 = m2.evaluate(pose2, tw2, commit=False)
        assert n1 == n2
        scale = 1.0 + np.abs(m1.wrench_P).max()
        assert np.allclose(m2.wrench_P[:3], Q @ m1.wrench_P[:3], rtol=0, atol=1e-9 * scale)
        assert np.allclose(m2.wrench_P[3:], Q @ m1.wrench_P[3:], rtol=0, atol=1e-9 * scale)
        a = m1.records
        b = m2.records
        for r in a:
            xc = Q @ r[K.C_XC:K.C_XC + 3]
            j = np.argmin(np.linalg.norm(b[:, K.C_XC:K.C_XC + 3] - xc, axis=1))
            assert np.linalg.norm(b[j, K.C_XC:K.C_XC + 3] - xc) < 1e-9
            assert np.allclose(b[j, K.C_F:K.C_F + 3], Q @ r[K.C_F:K.C_F + 3], rtol=0, atol=1e-9 * scale)
            assert abs(b[j, K.C_PEN] - r[K.C_PEN]) < 1e-9
        # each latch rides with the ring: same deflection, now against the next striker
        assert np.allclose(m2.latch_p, m1.latch_p, rtol=0, atol=1e-9)
        assert np.array_equal(m2.state_out, m1.state_out)
        checked += n1 > 0
    assert checked > 30


def test_overflowing_records_keep_the_wrench_complete(packed):
    import dataclasses
    small = dataclasses.replace(packed, max_contacts=2)
    rng = np.random.default_rng(3)
    m_small, m_big = ContactModel(small, check=False), ContactModel(packed, check=False)
    for _ in range(50):
        pose, tw = random_state(rng)
        n = m_small.evaluate(pose, tw, commit=False)
        m_big.evaluate(pose, tw, commit=False)
        if n > 2:
            assert m_small.status & K.ST_OVERFLOW
            assert len(m_small.records) == 2
            assert np.allclose(m_small.wrench_P, m_big.wrench_P, rtol=0, atol=1e-9)
            return
    pytest.fail("no configuration with more than 2 contacts")


def test_ring_wrench_helper_gives_ring_frame_about_ring_origin(packed):
    rng = np.random.default_rng(8)
    model = ContactModel(packed, check=False)
    for _ in range(50):
        pose, tw = random_state(rng)
        if model.evaluate(pose, tw, commit=False):
            break
    R = np.empty((3, 3))
    spatial.quat_to_dcm(pose[0, 3:7], R)          # R_PE
    p = pose[0, :3]
    # independent: sum of -F over the records, moments about the ring origin, then into E
    r = model.records
    f = -r[:, K.C_F:K.C_F + 3]
    m = np.cross(r[:, K.C_XC:K.C_XC + 3] - p, f).sum(0)
    w = model.ring_wrench(0)
    assert np.allclose(w[:3], R.T @ f.sum(0), atol=1e-9)
    assert np.allclose(w[3:], R.T @ m, atol=1e-9)


def test_excess_penetration_aborts_with_the_documented_message(packed):
    model = ContactModel(packed)
    # ring 50 mm off-axis towards azimuth 30 deg, 100 mm out: a passive rim cuts ~10 mm into
    # the outer face of active petal a0 (the guides would have centred it by 40 mm)
    a = math.radians(30)
    pose = np.array([[-0.1, 0.050 * math.cos(a), 0.050 * math.sin(a), 1.0, 0, 0, 0]])
    with pytest.raises(PenetrationLimitExceeded) as e:
        model.evaluate(pose, np.zeros((1, 6)), t=1.25)
    msg = str(e.value)
    assert re.fullmatch(r"contact pair '[^']+/[^']+': penetration \d+\.\d{3} mm exceeds the limit "
                        r"5\.000 mm at t = 1\.250000 s", msg), msg
    assert e.value.penetration_m > e.value.limit_m == pytest.approx(5e-3)
    assert e.value.pair in packed.pair_names
    # below the limit: no exception, status clear
    pose[0, 1:3] *= 0.042 / 0.050
    model.state[:] = 0
    assert model.evaluate(pose, np.zeros((1, 6)), t=0.0) > 0
    assert not model.status & K.ST_PENETRATION


def test_preset_loads_and_is_symmetric(preset, packed):
    assert preset.petals.count == 3 and preset.latches.count == 3
    assert math.isclose(math.degrees(preset.petals.passive_azimuth_rad - preset.petals.active_azimuth_rad), 60)
    assert packed.lat.shape[0] == 6   # 3 latches + 3 sensors
    assert 2 * preset.ring.outer_radius_m == pytest.approx(1.2)


@pytest.mark.parametrize("edit, key, reason", [
    (("[ring]", "[ring]\nbogus = 1"), "ring.bogus", "unknown key"),
    (("passive_azimuth_deg = 60.0", "passive_azimuth_deg = 50.0"), "petals.passive_azimuth_deg", "interleave"),
    (("friction = 0.15", "friction = -0.1"), "materials.petal_face.friction", ">= 0.0"),
    (("stroke_mm = 35.0", 'stroke_mm = "x"'), "latches.stroke_mm", "expected a number"),
    (('dof = "translational"', 'dof = "rotational"'), "latches.dof", "rotational pawls are not supported"),
])
def test_config_errors_name_file_key_reason(tmp_path, edit, key, reason):
    text = PRESET.read_text().replace(*edit, 1)
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_interface(f)
    assert str(e.value).startswith(f"{f}: {key}: ") and reason in str(e.value), str(e.value)


def test_rim_meets_a_petal_root_continuously_from_seated_to_backed_off(packed):
    """The ring shifted 5 mm towards a passive petal's side (its rim then overlaps that petal's
    root, 2.4 mm clear when centred), moved from pressed 1 mm into the passive ring face to
    5 mm backed off in 0.02 mm steps: the rim/petal-root penetration is there already when
    seated and changes by no more than the ring moved. The petal faces continue into
    the ring body (docs/models/contact.md §2.1); with faces ending at the plate's offset root
    edge, 1.25 mm in front of the ring face, the rim met the face only on backing off past that
    edge, already 0.8-2.2 mm deep (a 1.7-4.4 kN step in the closed-loop offset case)."""
    model = ContactModel(packed, check=False)
    psi = math.radians(300.0)                        # a passive petal
    shift = -0.005 * np.array([math.cos(psi), math.sin(psi)])
    names = [packed.contact_name(k) for k in range(packed.pairs.shape[0])]
    root = {k for k, n in enumerate(names) if n.startswith("a.rim") and n.endswith("/p300.outer")}
    assert root
    step = 2e-5
    pens = []
    for x in np.arange(1e-3, -5e-3 - step / 2, -step):
        pose = np.array([[x, shift[0], shift[1], 1.0, 0.0, 0.0, 0.0]])
        model.evaluate(pose, np.zeros((1, 6)), commit=False)
        pens.append(max([r[K.C_PEN] for r in model.records if int(r[K.C_PAIR]) in root], default=0.0))
    pens = np.array(pens)
    assert pens[0] > 5e-4                             # seated: the rim bears on the root
    # a depth that moves no faster than the ring (it was a 0.8-2.2 mm step, 40-110 steps' worth)
    assert np.max(np.abs(np.diff(pens))) <= step
