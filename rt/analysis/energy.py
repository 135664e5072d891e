"""Energy audit of a docking run: what the vehicles brought, what the mechanism absorbed, and
what the stand's loop added or removed (docs/analysis.md, "Energy audit").

The contact wrench ``w_P = [f; m]`` acts on the passive unit P (P components, moment about P's
origin); the mechanism passes it from the active unit A. The power it takes from a relative
motion of A in P with twist ``(v, w)`` (v: rate of ``r = p_PA`` seen in P, w: angular velocity
of A relative to P, P components) is

    p = f . (v - w x r) + m . w

(``v - w x r`` is the velocity, relative to P, of A's material point at P's origin, where the
moment is taken). Two relative motions exist in a HIL run:

* the **simulated** one (``rel_pose``, ``rel_twist``: the vehicles' dynamics under the
  measured wrench): ``E_vehicles = ∫ p_sim dt`` is the energy the contact took from the
  vehicles' motion;
* the **actual** one on the stand, from the measured platform pose ``meas_pose`` (top T in
  base B) through the stand geometry, ``T_PA = T_BP^-1 T_BT T_AT^-1``, differentiated in
  time: ``E_mechanism = ∫ p_act dt`` is the energy the hardware absorbed.

With a perfect stand the two are equal; the loop (delay, servo lag, filtering) makes them
differ. A wrench measured through the stand's sensing low-pass is that of the motion its
group delay earlier (``filter_s``, rt.config.stand.Delays; the prediction leads by it): the
actual motion is taken that much earlier (interpolated), so that each force meets the motion
that produced it (else a 2.2 ms shift of the force against the motion reads as ~2 % of the
approach energy on the docking cases). Then and ``E_stand = E_mechanism - E_vehicles = ∫ w_P . (twist_act - twist_sim) dt`` is the
energy the stand injected into the docking (positive: the vehicles come out of the contact
with more energy than a real docking would leave them). For an all-digital log the actual
motion is the simulated one (``E_stand = 0``).

The approach energy is the kinetic energy of the two vehicles' rigid motion at the start of
the run in their common mass-centre frame (:func:`approach_energy`; needs the case's masses).
Not real-time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EnergyAudit:
    approach_j: float | None          # kinetic energy of the approach (None: no case)
    vehicles_j: float                 # energy the contact took from the simulated motion
    mechanism_j: float | None         # energy absorbed on the stand (None: no measured pose)
    stand_injected_j: float | None    # mechanism - vehicles
    logged_absorbed_j: float | None   # the model's own figure (digital logs: energy_absorbed)
    t: np.ndarray                     # times of the cumulative series below
    vehicles_cum_j: np.ndarray
    mechanism_cum_j: np.ndarray | None

    @property
    def injected_pct_of_approach(self) -> float | None:
        if self.stand_injected_j is None or not self.approach_j:
            return None
        return 100.0 * self.stand_injected_j / self.approach_j


def contact_power(w, r, v, om) -> np.ndarray:
    """``f . (v - w x r) + m . w`` per sample (module docstring); all (n, 3) / (n, 6)."""
    vo = v - np.cross(om, r)
    return np.einsum("ij,ij->i", w[:, :3], vo) + np.einsum("ij,ij->i", w[:, 3:6], om)


def _quat_mul(p, q):
    pw, px, py, pz = p.T
    qw, qx, qy, qz = q.T
    return np.stack([pw * qw - px * qx - py * qy - pz * qz, pw * qx + px * qw + py * qz - pz * qy,
                     pw * qy - px * qz + py * qw + pz * qx, pw * qz + px * qy - py * qx + pz * qw], axis=1)


def _rotate(q, v):
    u = q[:, 1:4]
    t = 2.0 * np.cross(u, v)
    return v + q[:, :1] * t + np.cross(u, t)


def _conj(q):
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def relative_from_platform(meas_pose: np.ndarray, geo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(r, q_PA)`` of A in P from platform-top poses ``meas_pose`` ((n, 7): p_BT_B, q_BT) and
    the stand geometry ``geo`` (rt.dynamics.coupling.pack_geometry: p_BP_B, q_BP, p_AT_A,
    q_AT): the inverse of ``rt.dynamics.coupling.platform_pose``."""
    n = meas_pose.shape[0]
    p_BP = np.broadcast_to(geo[0:3], (n, 3))
    q_BP = np.broadcast_to(geo[3:7], (n, 4))
    p_AT = np.broadcast_to(geo[7:10], (n, 3))
    q_AT = np.broadcast_to(geo[10:14], (n, 4))
    q_BT = meas_pose[:, 3:7] / np.linalg.norm(meas_pose[:, 3:7], axis=1)[:, None]
    # T_BA = T_BT T_AT^-1: q_BA = q_BT q_AT^*, p_BA = p_BT - R_BA p_AT
    q_BA = _quat_mul(q_BT, _conj(q_AT))
    p_BA = meas_pose[:, :3] - _rotate(q_BA, p_AT)
    # T_PA = T_BP^-1 T_BA
    q_PB = _conj(q_BP)
    r = _rotate(q_PB, p_BA - p_BP)
    q = _quat_mul(q_PB, q_BA)
    q *= np.sign(q[:, :1] + (q[:, :1] == 0))
    return r, q


def twist_from_poses(t: np.ndarray, r: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rate of ``r`` and the angular velocity ``w = 2 (dq/dt q^*)_vec`` (P components, for
    ``q = q_PA``) by second-order finite differences in time (``numpy.gradient``); the
    quaternions are made continuous in sign first."""
    q = q.copy()
    flip = np.sign(np.einsum("ij,ij->i", q[1:], q[:-1]))
    flip[flip == 0] = 1.0
    q[1:] *= np.cumprod(flip)[:, None]
    v = np.gradient(r, t, axis=0)
    qd = np.gradient(q, t, axis=0)
    w = 2.0 * _quat_mul(qd, _conj(q))[:, 1:4]
    return v, w


def _cumsteps(t, p):
    c = np.zeros_like(p)
    if len(p) > 1:
        c[1:] = np.cumsum(p[1:] * np.diff(t))
    return c


def _cumtrapz(t, p):
    c = np.zeros_like(p)
    if len(p) > 1:
        c[1:] = np.cumsum(0.5 * (p[1:] + p[:-1]) * np.diff(t))
    return c


def approach_energy(x0: np.ndarray, case) -> float:
    """Kinetic energy of the two vehicles' rigid motion in their common mass-centre frame, from
    the logged state ``x0`` (2 x ns flattened, ``rt.dynamics.spacecraft`` layout): the rigid
    kinetic energies (``spacecraft_invariants``) minus ``|p|^2 / 2 (m_A + m_P)`` — what a
    docking can dissipate (the mass centre's motion it cannot)."""
    from rt.dynamics import spacecraft as S
    from rt.dynamics.berthing_flight import flight_from_case

    sc = flight_from_case(case)
    sc.x[:, :] = np.asarray(x0, dtype=np.float64).reshape(sc.x.shape)
    inv = sc.invariants()
    p = inv[S.I_P:S.I_P + 3]
    m = case.active.mass_kg + case.passive.mass_kg
    return float(inv[S.I_T0] + inv[S.I_T0 + 1] - 0.5 * float(p @ p) / m)


def held_step_power(w_P, rel_pose, rel_twist) -> np.ndarray:
    """A HIL log's contact power on the simulated motion, per step: the wrench of record k was
    measured before the step that ends in record k's state and held over it (the controller's
    DYNAMICS cycle), so it acts on the step's mean motion, that of records k - 1 and k. Rows 1..
    of the result (row 0, with no step before it, is 0); summed times the step, it is the work
    on the vehicles to second order in the step (the same row's twist, a step later, was off by
    ~dt ∫ F^2 / m* dt: 0.13 J of the rod's 8)."""
    p = np.zeros(len(w_P))
    if len(w_P) > 1:
        r = 0.5 * (rel_pose[1:, :3] + rel_pose[:-1, :3])
        v = 0.5 * (rel_twist[1:, :3] + rel_twist[:-1, :3])
        om = 0.5 * (rel_twist[1:, 3:6] + rel_twist[:-1, 3:6])
        p[1:] = contact_power(w_P[1:], r, v, om)
    return p


def powers(t, w_P, rel_pose, rel_twist, meas_pose=None, geo=None, shift_s: float = 0.0
           ) -> tuple[np.ndarray, np.ndarray | None]:
    """Contact power on the simulated motion and, with ``meas_pose`` and ``geo``, on the actual
    motion ``shift_s`` earlier (the sensing filter's group delay: module docstring), per
    sample. The actual twist comes from central differences and the shift from interpolation,
    so a caller that works in chunks passes :func:`neighbours` samples on each side and keeps
    the interior (the result is then that of the whole series)."""
    p_sim = contact_power(w_P, rel_pose[:, :3], rel_twist[:, :3], rel_twist[:, 3:6])
    if meas_pose is None or geo is None:
        return p_sim, None
    ra, qa = relative_from_platform(meas_pose, geo)
    va, wa = twist_from_poses(t, ra, qa)
    if shift_s > 0.0:
        ts = t - shift_s
        ra, va, wa = (np.column_stack([np.interp(ts, t, a[:, i]) for i in range(3)]) for a in (ra, va, wa))
    return p_sim, contact_power(w_P, ra, va, wa)


def neighbours(shift_s: float, dt: float) -> int:
    """Samples a chunk of :func:`powers` needs before its first one (one for the central
    difference, and those the shift reaches back)."""
    return 1 + int(np.ceil(shift_s / dt - 1e-9)) if shift_s > 0.0 else 1


def audit_from_powers(t, p_sim, p_act=None, case=None, x0=None, energy_absorbed=None, held: bool = False
                      ) -> EnergyAudit:
    """The audit from the per-sample powers of :func:`powers` (``t`` strictly increasing, the
    dynamics only); ``held``: ``p_sim`` is :func:`held_step_power`'s (each over the step that
    ends at its sample)."""
    veh = _cumsteps(t, p_sim) if held else _cumtrapz(t, p_sim)
    mech = None if p_act is None else _cumtrapz(t, p_act)
    e_veh = float(veh[-1]) if len(veh) else 0.0
    e_mech = None if mech is None else (float(mech[-1]) if len(mech) else 0.0)
    logged = None
    if energy_absorbed is not None and len(energy_absorbed):
        logged = float(energy_absorbed[-1] - energy_absorbed[0])
    return EnergyAudit(approach_j=approach_energy(x0, case) if case is not None and x0 is not None else None,
                       vehicles_j=e_veh, mechanism_j=e_mech, stand_injected_j=None if e_mech is None else e_mech - e_veh,
                       logged_absorbed_j=logged, t=t, vehicles_cum_j=veh, mechanism_cum_j=mech)


def audit(t, w_P, rel_pose, rel_twist, meas_pose=None, geo=None, case=None, x0=None,
          energy_absorbed=None, shift_s: float = 0.0) -> EnergyAudit:
    """The audit over the samples given (module docstring); ``t`` strictly increasing, the
    dynamics only. ``meas_pose`` and ``geo`` (HIL) give the actual motion; without them the
    simulated motion is the actual one."""
    p_sim, p_act = powers(t, w_P, rel_pose, rel_twist, meas_pose, geo, shift_s)
    return audit_from_powers(t, p_sim, p_act, case, x0, energy_absorbed)
