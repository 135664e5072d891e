"""The probe-cone interface (config/interfaces/probe_cone.toml): revolved-surface primitives
against closed forms, the latch bisection to its tolerance, the engagement's event time, and the
contact series of a scripted axial insertion."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rt.config import ConfigError
from sim_stand.contact import ContactModel, build_interface, load_interface
from sim_stand.contact import geometry as G
from sim_stand.contact.build import Builder
from sim_stand.contact.probe_cone import cone_tangent_point

ROOT = Path(__file__).resolve().parents[3]
CFG = ROOT / "config/interfaces/probe_cone.toml"


@pytest.fixture(scope="module")
def itf():
    return load_interface(CFG)


def head_pose(x, y=0.0, z=0.0):
    return np.array([[x, y, z, 1.0, 0.0, 0.0, 0.0]])


def test_sphere_on_a_cone_closed_form():
    """Sphere (r) on a 45-degree cone band about x: the distance from the centre to the
    generator line, the normal in the meridian plane."""
    b = Builder()
    cone = b.revolved("cone", np.zeros(3), [1, 0, 0], (-0.3, 0.4), (0.0, 0.1), 0.02)
    s = b.point("s", np.zeros(3), 0.05, link=0)
    b.pair("s-cone", s, cone, b.material("m", 1e6, 0.0, 0.0, 0.01))
    pk = b.pack()
    cm = ContactModel(pk, check=False)
    # centre at axial a, radius rho in the meridian plane at azimuth 30 deg
    a, rho, psi = -0.15, 0.2, math.radians(30)
    p = np.array([a, rho * math.cos(psi), rho * math.sin(psi)])
    cm.evaluate(np.array([[*p, 1, 0, 0, 0]]), np.zeros((1, 6)))
    # generator: rho = 0.1 - a (for a in [-0.3, 0]); distance of (a, rho) to the line a + rho - 0.1 = 0
    d = abs(a + rho - 0.1) / math.sqrt(2)
    rec = cm.records[0]
    assert rec[11 + 1] == pytest.approx(0.05 - d, abs=1e-15)          # C_PEN = 12
    n = np.array([1.0, math.cos(psi), math.sin(psi)]) / math.sqrt(2)   # on the passive: out of the free side
    assert rec[9:12] == pytest.approx(n, abs=1e-15)


def test_sphere_on_a_rounded_edge_closed_form():
    b = Builder()
    edge = b.circle("edge", np.zeros(3), [1, 0, 0], 0.055, 0.005)
    s = b.point("s", np.zeros(3), 0.045, link=0)
    b.pair("s-edge", s, edge, b.material("m", 1e6, 0.0, 0.0, 0.01))
    cm = ContactModel(b.pack(), check=False)
    p = np.array([-0.03, 0.0, 0.02])
    cm.evaluate(np.array([[*p, 1, 0, 0, 0]]), np.zeros((1, 6)))
    q = np.array([0.0, 0.0, 0.055])
    assert cm.records[0][12] == pytest.approx(0.05 - np.linalg.norm(p - q), abs=1e-15)


def test_cone_meets_the_edge_tangentially(itf):
    a, r = cone_tangent_point((-itf.cone_depth_m, itf.cone_mouth_radius_m),
                              (0.0, itf.entry_radius_m + itf.edge_radius_m), itf.edge_radius_m)
    c = np.array([0.0, itf.entry_radius_m + itf.edge_radius_m])
    T = np.array([a, r])
    gen = T - np.array([-itf.cone_depth_m, itf.cone_mouth_radius_m])
    assert np.linalg.norm(T - c) == pytest.approx(itf.edge_radius_m, abs=1e-14)
    assert gen @ (T - c) == pytest.approx(0.0, abs=1e-14)


def _latch_angle_on_bore(itf):
    """Exact deflection of a latch whose tip slides on the lip's bore (head centred): in the
    meridian plane the tip centre is pivot + L (cos th, sin th); turning towards the axis moves th
    away from 90 deg; the bore holds its radius at entry radius - tip rounding."""
    (pa, pr), (ta, tr) = itf.latch_pivot, itf.latch_tip
    L = math.hypot(ta - pa, tr - pr)
    th0 = math.atan2(tr - pr, ta - pa)
    c = (itf.entry_radius_m - itf.latch_tip_rounding_m - pr) / L
    return (math.pi - math.asin(c)) - th0 if th0 > math.pi / 2 else th0 - math.asin(c)


def test_latch_bisection_to_its_tolerance(itf):
    cm = ContactModel(build_interface(itf), check=False)
    # head centred, 14 mm past the entry plane: the free tips inside the lip, the deflected ones
    # (turned back and in) on the lip's bore
    cm.evaluate(head_pose(0.014), np.zeros((1, 6)))
    p_exact = _latch_angle_on_bore(itf)
    assert cm.latch_states() == ["deflected"] * 3
    for l in range(3):
        assert abs(cm.latch_p[l] - p_exact) <= itf.latch_tolerance_rad
        assert cm.latch_p[l] <= p_exact          # the last admissible p with Delta > 0


def test_axial_insertion_series_and_engagement_time(itf):
    """Head driven along the axis at 0.1 m/s in 0.1 ms steps: latches deflected at the edge,
    engaged once their tips clear the lip plus the tip rounding (the event time to within one
    step), head on the bottom last; capture = all latches engaged."""
    cm = ContactModel(build_interface(itf), check=False)
    v, dt = 0.1, 1e-4
    tw = np.array([[v, 0, 0, 0, 0, 0]])
    x0 = -0.2
    first = {}
    for k in range(int(0.36 / (v * dt))):
        t = k * dt
        x = x0 + v * t
        cm.evaluate(head_pose(x), tw, t=t)
        for r in cm.records:
            first.setdefault(cm.packed.contact_name(r[0]), t)
        if x > itf.socket_depth_m - itf.head_radius_m + 0.002:
            break
    ev = {(e.kind, e.detail): e.time_s for e in cm.events}
    t_defl = ev[("latch_deflected", "latch0")]
    t_eng = ev[("latch_engaged", "latch0")]
    x_eng = itf.lip_thickness_m + itf.latch_tip_rounding_m - itf.latch_tip[0]
    assert abs(t_eng - (x_eng - x0) / v) <= dt + 1e-12
    assert ev[("soft_capture", "all latches engaged")] == t_eng
    assert t_defl < t_eng < first["head-bottom"]
    assert "head-cone" not in first            # centred: the head never touches the cone
    # latch tips first meet the cone (outer radius 60 mm > the tangent point's 51 mm)
    assert first["latch0"] == pytest.approx(t_defl)


@pytest.mark.parametrize("edit,key", [
    (lambda s: s.replace("entry_diameter_mm = 100.0", "entry_diameter_mm = 80.0"), "socket.entry_diameter_mm"),
    (lambda s: s.replace("tip_radius_mm = 57.0", "tip_radius_mm = 80.0"), "latches.tip_radius_mm"),
    (lambda s: s.replace("[materials.latch_stop]", "[materials.latch_stopp]"), "materials"),
])
def test_interface_config_errors(tmp_path, edit, key):
    p = tmp_path / "i.toml"
    p.write_text(edit(CFG.read_text()))
    with pytest.raises(ConfigError) as e:
        load_interface(p)
    assert e.value.key.startswith(key), str(e.value)


def test_revolved_band_rejects_bad_generators():
    b = Builder()
    with pytest.raises(ValueError, match="zero-length"):
        b.revolved("x", np.zeros(3), [1, 0, 0], (0.0, 0.1), (0.0, 0.1), 0.01)
    assert G.K_REVOLVED == 6
