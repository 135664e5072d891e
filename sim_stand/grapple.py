"""Capture of a grapple fixture by the end effector's snare, as a finite-stiffness contact
(issue 25 item 2b; docs/models/berthing.md §6): what the stand's measuring platform feels in a
berthing run, and what the all-digital reference integrates.

Frames as for docking (``sim_stand.kin``): A = the capture point of the end effector's snare,
P = the grapple fixture's base (the payload's port). Before capture nothing touches (the
fixture's pin passes into the open snare). When A's origin comes within ``capture_radius_m`` of
the pin's grasp point ``pin_point_m`` (in P; checked once per physics step, at its end) the
snare closes on the pin where it is: the anchor ``d_0 = p_PA`` at that instant,
so no spring energy is created by the capture itself. From then on the snare holds the pin with
the contact law of [Yaskevich 2018b, eq. 7] applied to the separation ``d = p_PA - d_0``:

    f_A = -(k d + c d'),  f_P = -f_A,  acting at A's origin (one point for action and reaction),
    d' = v_A - (v_P + omega_P x p_PA)     (P components: A's velocity relative to P's material
                                            point at A)

i.e. eq. 7's normal law |f_R| = k Delta + c Delta' along n = d/|d| (Delta = |d|) with the
snare wires' viscous drag c on the tangential motion too (our choice: the wires surround the
pin, so the snare is bilateral and isotropic). Only a force passes (the plastic impact of
[Zhu, Wang & Zheng, §5.1] has no impulsive moment); rigidization (the snare pulling the pin home,
then a rigid joint) is after the capture this model is about and is not modelled. As ``k`` grows
with ``c = 2 zeta sqrt(k m*)``, the velocities after the transient converge to the plastic
impact of [Zhu, Wang & Zheng] (``rt.dynamics.capture``), tested in tests/sim_stand/test_grapple.py.

Kernels ``@njit(cache=True)``, allocation-free.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from sim_stand.kin import K_P, K_V, K_VP, K_WP

# parameters
G_K, G_C, G_RCAP, G_PIN = 0, 1, 2, 3   # G_PIN: the pin's grasp point in P (3)
GP_LEN = 6
# state: captured (0/1), capture time, anchor d_0 (3, P)
GS_CAP, GS_T, GS_D0 = 0, 1, 2
GS_LEN = 5
# output: |d|, |f|, the power the snare dissipates
GO_D, GO_F, GO_POW = 0, 1, 2
GO_LEN = 3


@dataclass(frozen=True)
class GrappleContact:
    """A case's ``[contact] model = "grapple"`` section (docs/config.md)."""
    model: str = "grapple"
    stiffness_n_per_m: float = 0.0
    damping_ns_per_m: float = 0.0
    capture_radius_m: float = 0.0
    pin_point_m: tuple = (0.0, 0.0, 0.0)

    def pack(self) -> np.ndarray:
        p = np.zeros(GP_LEN)
        p[G_K] = self.stiffness_n_per_m
        p[G_C] = self.damping_ns_per_m
        p[G_RCAP] = self.capture_radius_m
        p[G_PIN:G_PIN + 3] = self.pin_point_m
        return p


def parse_contact(c, reduced_mass_kg: float) -> GrappleContact:
    """The ``dockstand.contact_models`` entry ``grapple``: parses a case's ``[contact]`` table."""
    k = c.float("stiffness_n_per_m", gt=0.0)
    d = c.float("damping_ns_per_m", ge=0.0)
    r = c.float("capture_radius_m", gt=0.0, le=0.5)
    pin = c.vector("pin_point_m", 3)
    if np.linalg.norm(pin) > 2.0:
        raise c.error("pin_point_m", f"the grasp point is {np.linalg.norm(pin):.2f} m from the fixture's frame; "
                                     "expected within 2 m")
    return GrappleContact(stiffness_n_per_m=k, damping_ns_per_m=d, capture_radius_m=r,
                          pin_point_m=tuple(float(v) for v in pin))


def new_state() -> np.ndarray:
    return np.zeros(GS_LEN)


@njit(cache=True, error_model="numpy")
def grapple_eval(gp, kin, gs, wrench_P, go):
    """The snare's wrench on P (``wrench_P``: [f; m] in P about P's origin) from the kinematic
    record ``kin`` of A in P and the capture state ``gs`` (module docstring); ``go`` receives
    |d|, |f| and the dissipated power. Returns |f|.

    Parameters
    ----------
    gp : float64[GP_LEN]
        Snare parameters (``GrappleContact.pack``): stiffness ``G_K`` (N/m), damping ``G_C``
        (N s/m); the capture radius and pin point are not read here.
    kin : float64[KIN_LEN]
        Kinematic record of A in P (``sim_stand.kin`` ``K_*`` layout): position ``K_P`` (m),
        A's and P's absolute velocities ``K_V``, ``K_VP`` (m/s) and P's angular velocity
        ``K_WP`` (rad/s), P components. Read only.
    gs : float64[GS_LEN]
        Capture state: captured flag ``GS_CAP`` (0/1), capture time, anchor ``d_0`` at
        ``GS_D0`` (m, P components). Read only; nothing acts before the capture.
    wrench_P : float64[6]
        Output: the snare's wrench ``[f; m]`` on the passive unit, P components, about P's
        origin (N, N m); zero before the capture.
    go : float64[GO_LEN]
        Output: separation ``|d|`` (m), force ``|f|`` (N) and the power the snare's damping
        dissipates (W).
    """
    for i in range(6):
        wrench_P[i] = 0.0
    go[GO_D] = 0.0
    go[GO_F] = 0.0
    go[GO_POW] = 0.0
    if gs[GS_CAP] == 0.0:
        return 0.0
    rx, ry, rz = kin[K_P], kin[K_P + 1], kin[K_P + 2]
    wx, wy, wz = kin[K_WP], kin[K_WP + 1], kin[K_WP + 2]
    dvx = kin[K_V] - (kin[K_VP] + wy * rz - wz * ry)
    dvy = kin[K_V + 1] - (kin[K_VP + 1] + wz * rx - wx * rz)
    dvz = kin[K_V + 2] - (kin[K_VP + 2] + wx * ry - wy * rx)
    dx, dy, dz = rx - gs[GS_D0], ry - gs[GS_D0 + 1], rz - gs[GS_D0 + 2]
    k = gp[G_K]
    c = gp[G_C]
    fx = k * dx + c * dvx            # on P (= -f_A)
    fy = k * dy + c * dvy
    fz = k * dz + c * dvz
    wrench_P[0], wrench_P[1], wrench_P[2] = fx, fy, fz
    wrench_P[3] = ry * fz - rz * fy
    wrench_P[4] = rz * fx - rx * fz
    wrench_P[5] = rx * fy - ry * fx
    f = math.sqrt(fx * fx + fy * fy + fz * fz)
    go[GO_D] = math.sqrt(dx * dx + dy * dy + dz * dz)
    go[GO_F] = f
    go[GO_POW] = c * (dvx * dvx + dvy * dvy + dvz * dvz)
    return f


@njit(cache=True, error_model="numpy")
def grapple_capture(gp, kin, gs, t):
    """At a step's end: the snare closes when A's origin is within the capture radius of P's.
    Returns True at the capture.

    Parameters
    ----------
    gp : float64[GP_LEN]
        Snare parameters (``GrappleContact.pack``): capture radius ``G_RCAP`` (m) and the pin's
        grasp point ``G_PIN`` (m, P components) are read.
    kin : float64[KIN_LEN]
        Kinematic record of A in P (``sim_stand.kin``); only A's position ``K_P`` (m, P
        components) is read.
    gs : float64[GS_LEN]
        Capture state; at the capture the flag ``GS_CAP`` is set, the time stored at ``GS_T`` and
        the anchor ``d_0 = p_PA`` at ``GS_D0`` (m, P components). Untouched once captured.
    t : float
        Time of this step's end (s), recorded as the capture time.
    """
    if gs[GS_CAP] != 0.0:
        return False
    rx, ry, rz = kin[K_P], kin[K_P + 1], kin[K_P + 2]
    ex, ey, ez = rx - gp[G_PIN], ry - gp[G_PIN + 1], rz - gp[G_PIN + 2]
    if ex * ex + ey * ey + ez * ez > gp[G_RCAP] * gp[G_RCAP]:
        return False
    gs[GS_CAP] = 1.0
    gs[GS_T] = t
    gs[GS_D0], gs[GS_D0 + 1], gs[GS_D0 + 2] = rx, ry, rz
    return True
