"""Renders docs/models/contact_interface.png from the preset (needs matplotlib; not used by the
package or the tests): ``.venv/bin/python docs/models/render_interface.py``."""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from mpl_toolkits.mplot3d.art3d import Poly3DCollection  # noqa: E402

from sim_stand.contact import build_interface, load_interface  # noqa: E402
from sim_stand.contact import geometry as G  # noqa: E402

HERE = Path(__file__).resolve().parent
CFG = HERE.parents[1] / "config" / "interfaces" / "peripheral_androgynous.toml"


def _clip_x(V, x0, side):
    """The convex polygon ``V`` cut to side * (x - x0) >= 0 (one plane of Sutherland-Hodgman)."""
    out = []
    for a, b in zip(V, np.roll(V, -1, axis=0)):
        ga, gb = side * (a[0] - x0), side * (b[0] - x0)
        if ga >= 0.0:
            out.append(a)
        if ga * gb < 0.0:
            out.append(a + (ga / (ga - gb)) * (b - a))
    return np.array(out)


def main(x_ring=-0.12):
    itf = load_interface(CFG)
    pk = build_interface(itf)
    F = pk.feat.copy()
    act = F[:, G.F_SIDE] == 1.0
    for k in (G.F_A, G.F_B):
        F[act, k] += x_ring
    F[act, G.F_V:G.F_V + 3 * G.MAXV:3] += np.where(np.arange(G.MAXV)[None, :] < F[act, G.F_NV][:, None], x_ring, 0)
    fig = plt.figure(figsize=(13, 6.2))
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    polys, colors = [], []
    for i, name in enumerate(pk.feature_names):
        f = F[i]
        if f[G.F_KIND] == G.K_POLYGON and (name.endswith(".outer") or "striker" in name):
            V = f[G.F_V:G.F_V + 3 * int(f[G.F_NV])].reshape(-1, 3).copy()
            if name.endswith(".outer"):
                # the contact faces reach into the ring body (§2.1); draw the plate from the
                # ring face on (active petals point to +x, passive ones to -x)
                V = _clip_x(V, x_ring, +1.0) if name.startswith("a") else _clip_x(V, 0.0, -1.0)
            polys.append(V[:, [1, 2, 0]])
            colors.append("#d95f02" if "striker" in name else ("#1b9e77" if name.startswith("a") else "#7570b3"))
    ax.add_collection3d(Poly3DCollection(polys, facecolors=colors, edgecolors="k", linewidths=0.3, alpha=0.75))
    th = np.linspace(0, 2 * np.pi, 200)
    for x0, col in ((x_ring, "#1b9e77"), (0.0, "#7570b3")):
        for r in (itf.ring.passage_radius_m, itf.ring.outer_radius_m):
            ax.plot(r * np.cos(th), r * np.sin(th), x0, color=col, lw=1)
    for l in range(pk.lat.shape[0]):
        tip = pk.lat[l, 3:6] + np.array([x_ring, 0, 0])
        ax.scatter(tip[1], tip[2], tip[0], color="red" if pk.lat[l, 0] == 0 else "k", s=18)
    ax.set_xlabel("y_P [m]")
    ax.set_ylabel("z_P [m]")
    ax.set_zlabel("x_P [m] (approach)")
    ax.set_box_aspect((1, 1, 0.6))
    ax.view_init(elev=18, azim=-58)
    ax.set_title(f"active ring (green) at x = {x_ring:.2f} m, passive unit (violet),\n"
                 "strikers (orange), latch tips (red), ring sensors (black)", fontsize=9)
    # section through a passive petal: latch, striker, petal, rims
    ax2 = fig.add_subplot(1, 2, 2)
    pet, lt, st = itf.petals, itf.latches, itf.strikers
    tb = math.tan(pet.inclination_rad)
    h = pet.height_m
    xs = np.array([0.0, -h])
    ax2.plot(xs, pet.base_radius_m + xs * tb, color="#7570b3", lw=4, label="passive petal (mid-plane)")
    xa = np.array([x_ring, x_ring + h])
    ax2.plot(xa, pet.base_radius_m - (xa - x_ring) * tb, color="#1b9e77", lw=4, alpha=0.4,
             label="active petal (at 60 deg from this section)")
    ax2.plot([0, 0], [itf.ring.passage_radius_m, itf.ring.outer_radius_m], color="#7570b3", lw=6)
    ax2.plot([x_ring, x_ring], [itf.ring.passage_radius_m, itf.ring.outer_radius_m], color="#1b9e77", lw=6)
    # striker 0 (passive features, already in P): the ramp runs foot -> crest, the catch
    # crest -> crest base; in the section (x, r) both are segments, the striker their triangle
    def xr(f):
        V = f[G.F_V:G.F_V + 3 * int(f[G.F_NV])].reshape(-1, 3)
        return np.column_stack((V[:, 0], np.hypot(V[:, 1], V[:, 2])))
    ramp = xr(F[pk.feature_names.index("striker0.ramp")])
    catch = xr(F[pk.feature_names.index("striker0.back")])
    foot, crest = ramp[ramp[:, 1].argmin()], ramp[ramp[:, 1].argmax()]
    base = catch[catch[:, 1].argmin()]            # crest base (on the petal's outer surface)
    ax2.fill([foot[0], crest[0], base[0]], [foot[1], crest[1], base[1]], color="#d95f02",
             label="striker: ramp (front), catch (back, square to the petal)")
    tip_x = x_ring + lt.axial_m
    ax2.add_patch(plt.Circle((tip_x, lt.free_radius_m), lt.tip_radius_m, color="red", label="latch tip (free)"))
    # the free tip where its rounding clears the catch plane: the latch engages (ring centred)
    fb = pk.feat[pk.feature_names.index("striker0.back")]
    psi = lt.azimuth_rad
    tip0 = np.array([lt.axial_m, lt.free_radius_m * math.cos(psi), lt.free_radius_m * math.sin(psi)])
    nu, o = fb[G.F_NU:G.F_NU + 3], fb[G.F_A:G.F_A + 3]
    x_eng = (lt.tip_radius_m - nu @ (tip0 - o)) / nu[0]
    ax2.add_patch(plt.Circle((x_eng + lt.axial_m, lt.free_radius_m), lt.tip_radius_m, fill=False, ls="--",
                             color="red", label=f"tip at engagement (ring at x = {1e3 * x_eng:.1f} mm)"))
    ax2.annotate("", xy=(tip_x, lt.free_radius_m + lt.stroke), xytext=(tip_x, lt.free_radius_m),
                 arrowprops=dict(arrowstyle="->", color="red"))
    ax2.text(tip_x + 0.004, lt.free_radius_m + 0.5 * lt.stroke, "deflection p", color="red", fontsize=8)
    ax2.annotate("approach", xy=(x_ring + 0.06, 0.62), xytext=(x_ring - 0.02, 0.62),
                 arrowprops=dict(arrowstyle="->"))
    ax2.set_xlabel("x_P [m]")
    ax2.set_ylabel("radius [m] (section at the latch azimuth, 60 deg)")
    ax2.set_xlim(-0.28, 0.03)
    ax2.set_ylim(0.38, 0.64)
    ax2.set_aspect("equal")
    ax2.legend(fontsize=7, loc="lower left")
    ax2.set_title(f"section: passive petal with striker, crest at x = {st.crest_x_m:.3f} m", fontsize=9)
    fig.tight_layout()
    fig.savefig(HERE / "contact_interface.png", dpi=110)


if __name__ == "__main__":
    main()
