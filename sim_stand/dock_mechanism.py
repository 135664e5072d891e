"""One docking-mechanism slot for both kinds of mechanism: compiled dispatch between the
parallel mechanism ([Golubev & Yaskevich], ``sim_stand.mechanism``: the ring's 12-state) and a tree
mechanism ([Yaskevich 2018a], ``sim_stand.tree``: ``[p, pd]``), so the emulated stand
(``sim_stand.world``) and the digital reference (``sim_stand.digital``) carry either in the same
arrays (``mp``, ``mw``, ``mout``, state ``xr``) with one code path.

Each function takes the kind first (:data:`KIND_PARALLEL` or :data:`KIND_TREE`, the codes of
``sim_stand.mechanism_kinds``). For a tree,
:func:`mech_contact` runs the tree's kinematics (pass 1 of [Yaskevich 2018a, open chains], with
the base's angular velocity from ``kin``) before the contact evaluation and :func:`mech_derivatives`
finishes that evaluation: call them in this order, on the same state. Python helpers:
:func:`load_dock_mechanism`, :func:`mechanism_code` and :func:`mechanism_rest_state`.

The slot's arrays
-----------------
Described here once, for the kernels below and for those that pass the arrays on
(``sim_stand.world.world_advance``, ``sim_stand.digital_model.digital_eval``,
``sim_stand.digital.digital_run``); a kernel's ``Parameters`` name them and say what it reads or
writes.

kin : float64[KIN_LEN]
    Kinematic record of the base A in P (``sim_stand.kin`` ``K_*``): position ``K_P`` (m), DCM
    ``K_R``, A's absolute velocity ``K_V`` (m/s) and angular velocity ``K_W`` (rad/s), P's absolute
    twist ``K_VP``; P components.
xr : float64[12] or float64[2n]
    The mechanism's state: the ring's 12-state relative to frame 0 = A
    (``sim_stand.mechanism.kernels`` ``ring_state``: r_C (m), y-z-x angles (rad), v_C (m/s),
    omega_C (rad/s, frame C)), or a tree's ``[p, pd]``.
com : float64[3]
    The ring's centre of mass from the ring frame E's origin (the ring plane centre), C
    components (m); zeros for a tree.
mp : float64[:]
    The mechanism's packed parameters: a parallel mechanism's ``params``
    (``sim_stand.mechanism.layout``), or a tree's ``[P | D | E]`` (``sim_stand.tree.kernels``).
mw : float64[:]
    The mechanism's workspace: a parallel mechanism's ``workspace``, or a tree's ``[W | scratch]``,
    into which :func:`mech_contact` writes the tree's kinematics.
mout : float64[:]
    The mechanism's outputs of the last evaluation: the state derivative first, the wrench on the
    base at :func:`base_wrench_offset`, the devices' forces and powers.
bm : float64[12]
    Base motion ``[a_0 (m/s^2), omega_0 (rad/s), eps_0 (rad/s^2), g_0 (m/s^2)]``, frame 0 = A
    (``sim_stand.world.dock_base_motion``).
cw : float64[6]
    The contact wrench ``[f; m]`` on the buffer link, the mechanism's input (N, N m): frame C
    about the ring's centre of mass (parallel), frame E about E's origin (tree).
aC : float64[3, 3]
    alpha_C = R_C0 (parallel); scratch, row 0 = omega_0 in frame 0 (tree).
R_PE : float64[3, 3]
    DCM E -> P of the buffer link.
feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links, latch_p, info, info_f, Rl, cscr
    The contact evaluation's inputs, outputs and workspace, as
    :func:`sim_stand.contact.kernel.evaluate` documents them (``cst_in``, ``cst_out`` and ``cscr``
    are its ``state_in``, ``state_out`` and ``scratch``): the packed interface's ``feat``,
    ``pairs``, ``mat``, ``lat`` and the buffers of :func:`sim_stand.world.contact_buffers`.
link_pose : float64[n_links, 7]
    Row 0: the buffer link frame E's pose ``[p_PE (m), q_PE]`` in P (for the parallel mechanism,
    E is the ring frame).
link_twist : float64[n_links, 6]
    Row 0: E's absolute twist ``[v (m/s), omega (rad/s)]``, P components.
"""
from __future__ import annotations

from pathlib import Path

import math

import numpy as np
from numba import njit

from sim_stand.contact import kernel as K
from rt.dynamics import spatial as SP
from sim_stand.kin import K_P, K_R, K_V, K_VP, K_W
from sim_stand.mechanism_kinds import KIND_PARALLEL, KIND_TREE
from sim_stand.mechanism import layout as LAY
from sim_stand.mechanism.kernels import mechanism_derivatives, ring_dcm
from sim_stand.tree import kernels as TK

# allocation-free kernels: no NRT reference counting (rt/jit.py)
_JIT = dict(cache=True, error_model="numpy", _nrt=False)


# ====================================================================== the parallel mechanism's ring
@njit(**_JIT)
def ring_link_state(kin, xr, com, link_pose, link_twist, aC, R_PE):
    """Pose and absolute twist in P of the ring frame E (= the mechanism's ring frame R, origin
    at the ring plane centre, axes of C) from the ring state ``xr`` (relative to frame 0 = A) and
    A's state ``kin`` ([Yaskevich 2018b, contact forces]). Fills ``aC`` (= R_C0) and ``R_PE``.

    Parameters
    ----------
    kin : float64[KIN_LEN]
        A's kinematic record in P (module docstring, "The slot's arrays", as for the rest).
    xr : float64[12]
        The ring's state.
    com : float64[3]
        The ring's centre of mass in C (m).
    link_pose : float64[>= 1, 7]
        Output: row 0 = the ring frame E's pose in P.
    link_twist : float64[>= 1, 6]
        Output: row 0 = E's absolute twist.
    aC, R_PE : float64[3, 3]
        Output: alpha_C = R_C0, and the DCM E -> P.
    """
    ring_dcm(xr[3], xr[4], xr[5], aC)
    # E's origin in frame 0: r_E = r_C - aC^T com
    e0 = xr[0] - (aC[0, 0] * com[0] + aC[1, 0] * com[1] + aC[2, 0] * com[2])
    e1 = xr[1] - (aC[0, 1] * com[0] + aC[1, 1] * com[1] + aC[2, 1] * com[2])
    e2 = xr[2] - (aC[0, 2] * com[0] + aC[1, 2] * com[1] + aC[2, 2] * com[2])
    # omega_C in frame 0 and the relative velocity of E's origin (frame 0)
    wc0 = aC[0, 0] * xr[9] + aC[1, 0] * xr[10] + aC[2, 0] * xr[11]
    wc1 = aC[0, 1] * xr[9] + aC[1, 1] * xr[10] + aC[2, 1] * xr[11]
    wc2 = aC[0, 2] * xr[9] + aC[1, 2] * xr[10] + aC[2, 2] * xr[11]
    d0 = e0 - xr[0]
    d1 = e1 - xr[1]
    d2 = e2 - xr[2]
    vr0 = xr[6] + wc1 * d2 - wc2 * d1
    vr1 = xr[7] + wc2 * d0 - wc0 * d2
    vr2 = xr[8] + wc0 * d1 - wc1 * d0
    # A's twist in frame 0
    R = kin[K_R:K_R + 9]
    va0 = R[0] * kin[K_V] + R[3] * kin[K_V + 1] + R[6] * kin[K_V + 2]
    va1 = R[1] * kin[K_V] + R[4] * kin[K_V + 1] + R[7] * kin[K_V + 2]
    va2 = R[2] * kin[K_V] + R[5] * kin[K_V + 1] + R[8] * kin[K_V + 2]
    w0 = R[0] * kin[K_W] + R[3] * kin[K_W + 1] + R[6] * kin[K_W + 2]
    w1 = R[1] * kin[K_W] + R[4] * kin[K_W + 1] + R[7] * kin[K_W + 2]
    w2 = R[2] * kin[K_W] + R[5] * kin[K_W + 1] + R[8] * kin[K_W + 2]
    v0 = va0 + w1 * e2 - w2 * e1 + vr0
    v1 = va1 + w2 * e0 - w0 * e2 + vr1
    v2 = va2 + w0 * e1 - w1 * e0 + vr2
    for i in range(3):
        link_pose[0, i] = kin[K_P + i] + R[3 * i] * e0 + R[3 * i + 1] * e1 + R[3 * i + 2] * e2
        link_twist[0, i] = R[3 * i] * v0 + R[3 * i + 1] * v1 + R[3 * i + 2] * v2
        link_twist[0, 3 + i] = kin[K_W + i] + R[3 * i] * wc0 + R[3 * i + 1] * wc1 + R[3 * i + 2] * wc2
        for j in range(3):
            # R_PE = R_PA aC^T
            R_PE[i, j] = R[3 * i] * aC[j, 0] + R[3 * i + 1] * aC[j, 1] + R[3 * i + 2] * aC[j, 2]
    SP.dcm_to_quat(R_PE, link_pose[0, 3:7])


@njit(**_JIT)
def dock_contact(kin, xr, com, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P, wrench_links,
                 latch_p, info, info_f, Rl, cscr, link_pose, link_twist, cw, aC, R_PE):
    """Contact evaluation for the ring at ``xr`` on a base at ``kin`` ([Yaskevich 2018b, eq. 7],
    latches and sensors): wrench on the passive unit ``wrench_P`` (P, about P's origin) and
    the ring's contact wrench ``cw`` in the mechanism's input convention (frame C, about the ring's
    centre of mass). Returns the number of contacts.

    Parameters
    ----------
    kin : float64[KIN_LEN]
        The base A's kinematic record in P, with P's twist (module docstring, "The slot's
        arrays", as for the rest).
    xr : float64[12]
        The ring's state.
    com : float64[3]
        The ring's centre of mass in C (m).
    feat, featP : float64[nf, FW]
        The interface's feature rows, and their workspace in P.
    pairs : int64[n_pairs, PW]
        The pair table.
    mat, lat : float64[:, :]
        Materials; latch and sensor rows.
    cst_in, cst_out : int64[S_LATCH0 + n_lat]
        The interface state before this evaluation (read only), and after it (output).
    rec, wrench_P, wrench_links, latch_p : float64 arrays
        Output: the contact records, the wrenches on P and on each buffer link, the deflections.
    info : int64[4]
        Output: status bits, offending pair, contacts found, event bits.
    info_f, Rl, cscr : float64 arrays
        Output: the offending penetration and its limit; workspace.
    link_pose, link_twist : float64[n_links, :]
        Output: row 0 = the ring frame E's pose and absolute twist in P.
    cw : float64[6]
        Output: the ring's contact wrench, frame C, about its centre of mass.
    aC, R_PE : float64[3, 3]
        Output: alpha_C = R_C0, and the DCM E -> P.
    """
    ring_link_state(kin, xr, com, link_pose, link_twist, aC, R_PE)
    n = K.evaluate(feat, featP, pairs, mat, lat, link_pose, link_twist, kin[K_VP:K_VP + 6], cst_in, rec,
                    wrench_P, wrench_links, cst_out, latch_p, info, info_f, Rl, cscr)
    # wrench_links[0]: P components, moment about E's origin -> C components about C's origin
    f0 = R_PE[0, 0] * wrench_links[0, 0] + R_PE[1, 0] * wrench_links[0, 1] + R_PE[2, 0] * wrench_links[0, 2]
    f1 = R_PE[0, 1] * wrench_links[0, 0] + R_PE[1, 1] * wrench_links[0, 1] + R_PE[2, 1] * wrench_links[0, 2]
    f2 = R_PE[0, 2] * wrench_links[0, 0] + R_PE[1, 2] * wrench_links[0, 1] + R_PE[2, 2] * wrench_links[0, 2]
    m0 = R_PE[0, 0] * wrench_links[0, 3] + R_PE[1, 0] * wrench_links[0, 4] + R_PE[2, 0] * wrench_links[0, 5]
    m1 = R_PE[0, 1] * wrench_links[0, 3] + R_PE[1, 1] * wrench_links[0, 4] + R_PE[2, 1] * wrench_links[0, 5]
    m2 = R_PE[0, 2] * wrench_links[0, 3] + R_PE[1, 2] * wrench_links[0, 4] + R_PE[2, 2] * wrench_links[0, 5]
    # about C: m_C = m_E - (C - E) x f, with C - E = com (C components)
    cw[0] = f0
    cw[1] = f1
    cw[2] = f2
    cw[3] = m0 - (com[1] * f2 - com[2] * f1)
    cw[4] = m1 - (com[2] * f0 - com[0] * f2)
    cw[5] = m2 - (com[0] * f1 - com[1] * f0)
    return n


@njit(**_JIT)
def sie_ring_update(xr, xdot, dt):
    """Semi-implicit (symplectic) Euler step of the ring state: the velocities [v_C, omega_C]
    from the accelerations in ``xdot``, then r_C and the y-z-x angles from the new velocities
    (the angle rates of the ring in [Golubev & Yaskevich, §3]).

    Parameters
    ----------
    xr : float64[12]
        Ring state (``sim_stand.mechanism.kernels`` ``ring_state``), advanced in place.
    xdot : float64[>= 12]
        The ring state derivative (``out`` of ``mechanism_derivatives``); its accelerations
        ``xdot[6:12]`` are read.
    dt : float
        Step (s).
    """
    for i in range(3):
        xr[6 + i] += dt * xdot[6 + i]
        xr[9 + i] += dt * xdot[9 + i]
    for i in range(3):
        xr[i] += dt * xr[6 + i]
    th = xr[4]
    ph = xr[5]
    cph = math.cos(ph)
    sph = math.sin(ph)
    t = cph * xr[10] - sph * xr[11]
    d_psi = t / math.cos(th)
    d_th = sph * xr[10] + cph * xr[11]
    d_ph = xr[9] - math.tan(th) * t
    xr[3] += dt * d_psi
    xr[4] += dt * d_th
    xr[5] += dt * d_ph



# ====================================================================== either kind
@njit(**_JIT)
def mech_contact(kind, kin, xr, com, mp, mw, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P,
                 wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, cw, aC, R_PE):
    """Contact evaluation for the mechanism at ``xr`` on a base at ``kin``
    ([Yaskevich 2018b, eq. 7], latches and sensors): wrench on the passive unit ``wrench_P`` (P,
    about P's origin) and the buffer link's contact wrench ``cw`` in the mechanism's input
    convention. Returns the number of contacts.

    Parameters
    ----------
    kind : int
        :data:`KIND_PARALLEL` or :data:`KIND_TREE`.
    kin : float64[KIN_LEN]
        The base A's kinematic record in P, with P's twist (module docstring, "The slot's
        arrays", for every argument).
    xr : float64[12] or float64[2n]
        The mechanism's state.
    com : float64[3]
        The ring's centre of mass in C (m); zeros for a tree.
    mp, mw : float64[:]
        The mechanism's packed parameters, and its workspace (a tree's kinematics are written).
    feat, featP : float64[nf, FW]
        From here to ``cscr``: the contact evaluation's arrays, as :func:`dock_contact` takes
        them (``feat``, ``pairs``, ``mat``, ``lat`` and ``cst_in`` are read only).
    pairs : int64[n_pairs, PW]
        Pair table.
    mat, lat : float64[:, :]
        Materials, latches and sensors.
    cst_in, cst_out : int64[S_LATCH0 + n_lat]
        The interface state before and after this evaluation.
    rec, wrench_P, wrench_links, latch_p : float64 arrays
        Output: contacts, wrenches, deflections.
    info : int64[4]
        Output: the status.
    info_f, Rl, cscr : float64 arrays
        Output: the offending penetration and its limit; workspace.
    link_pose, link_twist : float64[n_links, :]
        Output: row 0 = the buffer link frame E's pose and absolute twist in P.
    cw : float64[6]
        Output: the buffer link's contact wrench, the mechanism's input.
    aC, R_PE : float64[3, 3]
        Output: alpha_C = R_C0 (parallel; scratch for a tree), and the DCM E -> P.
    """
    if kind != KIND_TREE:
        return dock_contact(kin, xr, com, feat, featP, pairs, mat, lat, cst_in, cst_out, rec, wrench_P,
                            wrench_links, latch_p, info, info_f, Rl, cscr, link_pose, link_twist, cw, aC, R_PE)
    R = kin[K_R:K_R + 9]
    for i in range(3):
        aC[0, i] = R[i] * kin[K_W] + R[3 + i] * kin[K_W + 1] + R[6 + i] * kin[K_W + 2]     # omega_0, frame 0
    TK.tree_kinematics_packed(mp, mw, xr, aC[0])
    TK.tree_link_state(mp, mw, kin, link_pose, link_twist, R_PE)
    n = K.evaluate(feat, featP, pairs, mat, lat, link_pose, link_twist, kin[K_VP:K_VP + 6], cst_in, rec,
                    wrench_P, wrench_links, cst_out, latch_p, info, info_f, Rl, cscr)
    # wrench_links[0]: P components about E's origin -> E components (the tree's input)
    for i in range(3):
        cw[i] = R_PE[0, i] * wrench_links[0, 0] + R_PE[1, i] * wrench_links[0, 1] + R_PE[2, i] * wrench_links[0, 2]
        cw[3 + i] = (R_PE[0, i] * wrench_links[0, 3] + R_PE[1, i] * wrench_links[0, 4]
                     + R_PE[2, i] * wrench_links[0, 5])
    return n


@njit(**_JIT)
def mech_sie_update(kind, xr, mout, dt):
    """Semi-implicit Euler step of the mechanism's state from the derivative in ``mout``.

    Parameters
    ----------
    kind : int
        :data:`KIND_PARALLEL` or :data:`KIND_TREE`.
    xr : float64[12] or float64[2n]
        The mechanism's state, advanced in place (module docstring, "The slot's arrays").
    mout : float64[:]
        The mechanism's outputs of the last evaluation; the state derivative is read.
    dt : float
        Step (s).
    """
    if kind == KIND_TREE:
        TK.tree_sie_update(xr, mout, dt)
    else:
        sie_ring_update(xr, mout, dt)


@njit(**_JIT)
def mech_derivatives(kind, mp, mw, xr, bm, cw, mout):
    """The mechanism's state derivative into ``mout`` (after :func:`mech_contact` on the same
    state for a tree). Returns the status (0 ok).

    Parameters
    ----------
    kind : int
        :data:`KIND_PARALLEL` or :data:`KIND_TREE`.
    mp, mw : float64[:]
        The mechanism's packed parameters and workspace (module docstring, "The slot's arrays",
        for every argument).
    xr : float64[12] or float64[2n]
        The mechanism's state.
    bm : float64[12]
        The base motion, frame 0.
    cw : float64[6]
        The contact wrench on the buffer link from :func:`mech_contact`.
    mout : float64[:]
        Output: the mechanism's outputs, the state derivative first.
    """
    if kind == KIND_TREE:
        return TK.tree_finish(mp, mw, xr, bm, cw, mout)
    return mechanism_derivatives(mp, mw, xr, bm, cw, mout)


@njit(**_JIT)
def base_wrench_offset(kind, mp):
    """Offset in ``mout`` of the mechanism's wrench on its base ([f; m about O_0], frame 0).

    Parameters
    ----------
    kind : int
        :data:`KIND_PARALLEL` or :data:`KIND_TREE`.
    mp : float64[:]
        The mechanism's packed parameters (module docstring, "The slot's arrays").
    """
    if kind == KIND_TREE:
        return 2 * int(mp[0])
    return int(mp[LAY.H_OUT + 6])


@njit(**_JIT)
def mech_absorbed_power(kind, mp, mout):
    """Power the mechanism's dampers, brakes (and a tree's end stops) absorb (W, >= 0).

    Parameters
    ----------
    kind : int
        :data:`KIND_PARALLEL` or :data:`KIND_TREE`.
    mp : float64[:]
        The mechanism's packed parameters (module docstring, "The slot's arrays"): its joint or
        leg count and the outputs' layout are read.
    mout : float64[:]
        The mechanism's outputs of the last evaluation; its device powers are read.
    """
    if kind == KIND_TREE:
        return TK.absorbed_power(mp, mout)
    nl = int(mp[LAY.H_NLEGS])
    o = int(mp[LAY.H_OUT + 10])
    s = 0.0
    for k in range(nl):
        b = o + k * LAY.NDEV
        s -= mout[b + LAY.DEV_DAMPER] + mout[b + LAY.DEV_BRAKE] + mout[b + LAY.DEV_EMD]
    return s


# ====================================================================== Python helpers
def mechanism_code(path: str | Path) -> int:
    """The mechanism slot's code of a mechanism file: :data:`KIND_TREE` for a tree
    (``[[bodies]]``), else :data:`KIND_PARALLEL` (``sim_stand.mechanism_kinds``). Config errors
    are ``ConfigError`` (file, key, reason)."""
    from sim_stand.tree.config import is_tree_file
    return KIND_TREE if is_tree_file(path) else KIND_PARALLEL


def load_dock_mechanism(path: str | Path, cfg=None):
    """(mechanism, kind, ring centre of mass in the ring frame) from a mechanism file: a tree
    (``[[bodies]]``, :class:`sim_stand.tree.model.TreeMechanism`) or a parallel mechanism
    (:class:`sim_stand.mechanism.Mechanism`; ``cfg``: its config given, e.g. a campaign's
    dispersed one, instead of the file's). Config errors are ``ConfigError`` (file, key, reason)."""
    from sim_stand.mechanism import Mechanism, load_mechanism
    from sim_stand.tree.model import TreeMechanism
    if mechanism_code(path) == KIND_TREE:
        return TreeMechanism(path), KIND_TREE, np.zeros(3)
    mech = Mechanism(cfg if cfg is not None else load_mechanism(path))
    return mech, KIND_PARALLEL, np.asarray(mech.cfg.ring_com_R, dtype=np.float64)


def mech_error(mech, status: int) -> Exception:
    """The exception a failed evaluation of ``mech`` raises (it names the cause)."""
    from sim_stand.mechanism import MechanismError
    from sim_stand.tree.model import TreeMechanism, TreeMechanismError
    if isinstance(mech, TreeMechanism):
        return TreeMechanismError(int(status))
    return MechanismError(int(status), int(mech.view.status[1]))


def mechanism_rest_state(mech, base_motion: np.ndarray, x0: np.ndarray | None = None, tol: float = 1e-11,
                         max_iter: int = 40) -> np.ndarray:
    """Static equilibrium on a base with the given (constant) base motion, no contact: the pose
    where the accelerations vanish at zero velocity (springs and stops against gravity; dampers
    and brakes exert nothing at rest). Newton on the pose coordinates (the ring's 6, or a tree's
    joint coordinates) with a central finite-difference Jacobian, started from the reference pose,
    halving the step while the residual does not drop."""
    from sim_stand.mechanism import MechanismError
    from sim_stand.tree.model import TreeMechanism, TreeMechanismError
    x = mech.home_state() if x0 is None else np.array(x0, dtype=np.float64)
    tree = isinstance(mech, TreeMechanism)
    m = mech.n if tree else 6
    x[m:] = 0.0
    cw = np.zeros(6)
    bm = np.asarray(base_motion, dtype=np.float64)

    def f(z):
        xx = x.copy()
        xx[:m] = z
        o = mech.evaluate(xx, bm, cw)
        return (o.pdd if tree else o.udot).copy()

    z = x[:m].copy()
    r = f(z)
    for _ in range(max_iter):
        if np.abs(r).max() < tol:
            break
        Jm = np.empty((m, m))
        for j in range(m):
            h = 1e-6 if not tree else 1e-8
            zp = z.copy()
            zm = z.copy()
            zp[j] += h
            zm[j] -= h
            Jm[:, j] = (f(zp) - f(zm)) / (2 * h)
        dz = np.linalg.solve(Jm, -r)
        lam = 1.0
        nr = np.abs(r).max()
        while lam > 1e-3:
            zn = z + lam * dz
            try:
                rn = f(zn)
            except (MechanismError, TreeMechanismError):
                lam *= 0.5
                continue
            if np.abs(rn).max() < nr or lam < 2e-3:
                break
            lam *= 0.5
        z, r = zn, rn
    else:
        raise RuntimeError(f"mechanism rest state: Newton did not converge (|acceleration| = {np.abs(r).max():.3g})")
    x[:m] = z
    return x


def load_mechanism_config(path: str | Path):
    """Load and validate a mechanism file of either kind (``dockstand check-config``): a tree
    (``[[bodies]]``, built once so a massless subtree or an unsupported device is reported) or a
    parallel mechanism; raises ``ConfigError`` (file, key, reason)."""
    from sim_stand.mechanism import load_mechanism
    from sim_stand.tree.config import is_tree_file, load_tree_mechanism
    from sim_stand.tree.model import TreeMechanism
    if is_tree_file(path):
        cfg = load_tree_mechanism(path)
        TreeMechanism(cfg)
        return cfg
    return load_mechanism(path)
