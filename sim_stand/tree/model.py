"""Imperative shell of a tree mechanism: owns the packed arrays of :mod:`sim_stand.tree.kernels`
and gives named results. Not for the real-time loop (the emulator and the digital reference
call the kernels directly with these arrays)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rt.dynamics import tree as T
from rt.dynamics.tree_model import TreeModel
from rt.config._schema import ConfigError
from sim_stand.mechanism import devices as DV
from sim_stand.mechanism import layout as LAY
from sim_stand.mechanism.model import pack_devices
from sim_stand.tree import kernels as TK
from sim_stand.tree.config import TreeMechanismConfig, load_tree_mechanism


class TreeMechanismError(RuntimeError):
    def __init__(self, code: int):
        self.code = code
        super().__init__(f"tree mechanism status {code}: an articulated inertia about a joint axis is not "
                         "positive (a massless subtree)")


class TreeOut:
    """Named views into an ``out`` array (no copies)."""

    def __init__(self, out: np.ndarray, n: int):
        for name, (off, shp) in TK.out_offsets(n).items():
            if name != "_size":
                setattr(self, name, out[off:off + int(np.prod(shp))].reshape(shp))
        self.n = n
        self.pd = self.xdot[:n]
        self.pdd = self.xdot[n:]


class TreeMechanism:
    """A tree mechanism from its config: ``params`` (the tree), ``devices`` (D), ``link`` (E),
    ``work``, ``out`` and scratch, all preallocated."""

    def __init__(self, cfg: TreeMechanismConfig | str | Path):
        if not isinstance(cfg, TreeMechanismConfig):
            cfg = load_tree_mechanism(cfg)
        self.cfg = cfg
        for j, d in enumerate(cfg.devices):
            if d.emd is not None or d.drive is not None:
                raise ConfigError(cfg.source, f"bodies ({cfg.bodies[j].name})",
                                  "electromechanical dampers and drives are not modelled on tree joints")
        self.tree = TreeModel(list(cfg.bodies))
        n = self.n = self.tree.n
        psize, wsize = TK.packed_sizes(self.tree.params)
        mp = np.zeros(psize)
        ps = self.tree.params.shape[0]
        mp[:ps] = self.tree.params
        for j, (d, e) in enumerate(zip(cfg.devices, cfg.engagement)):
            B = mp[ps + j * LAY.LP:ps + (j + 1) * LAY.LP]
            pack_devices(B, d)
            B[TK.D_ENG_BELOW] = e.below
            B[TK.D_ENG_ONEWAY] = 1.0 if e.one_way else 0.0
        E = mp[ps + n * LAY.LP:]
        E[TK.E_BODY] = cfg.contact_body
        E[TK.E_POS:TK.E_POS + 3] = cfg.contact_position
        mp.flags.writeable = False
        self.params = mp                       # [P | D | E]
        self.workspace = np.zeros(wsize)       # [W | g | a0 | ext]
        self.devices = mp[ps:ps + n * LAY.LP]
        self.work = self.workspace[:self.tree.work_size]
        self.out = np.zeros(TK.out_offsets(n)["_size"][0])
        self.k = np.zeros((4, 2 * n))
        self.xt = np.zeros(2 * n)
        self.view = TreeOut(self.out, n)

    @property
    def names(self) -> tuple[str, ...]:
        return self.tree.names

    def home_state(self) -> np.ndarray:
        return np.zeros(2 * self.n)

    def base_motion_static(self) -> np.ndarray:
        """Base at rest under the config's gravity: [a_0, omega_0, eps_0, g_0]."""
        bm = np.zeros(12)
        bm[9:12] = self.cfg.gravity_0
        return bm

    def evaluate(self, x, bm=None, cw=None) -> TreeOut:
        bm = self.base_motion_static() if bm is None else np.asarray(bm, dtype=float)
        cw = np.zeros(6) if cw is None else np.asarray(cw, dtype=float)
        st = TK.tree_derivatives(self.params, self.workspace, np.asarray(x, dtype=float), bm, cw, self.out)
        if st:
            raise TreeMechanismError(st)
        return self.view

    def step_rk4(self, x: np.ndarray, dt: float, bm=None, cw=None, nsteps: int = 1) -> np.ndarray:
        """``nsteps`` RK4 steps of ``x`` in place (base motion and contact wrench held)."""
        bm = self.base_motion_static() if bm is None else np.asarray(bm, dtype=float)
        cw = np.zeros(6) if cw is None else np.asarray(cw, dtype=float)
        st = TK.tree_rk4_run(self.params, self.workspace, x, bm, cw, self.out, dt, nsteps, self.k, self.xt)
        if st:
            raise TreeMechanismError(st)
        return x

    def link_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Frame E relative to the base after the last evaluation: (pose [o_E, R_0E row-major],
        twist [v_E, omega] in frame 0)."""
        pose, tw = np.zeros(12), np.zeros(6)
        T.tree_frame_state(self.tree.params, self.work, self.cfg.contact_body, self.cfg.contact_position, pose, tw)
        return pose, tw

    def mass_matrix(self, x) -> np.ndarray:
        A = np.zeros((self.n, self.n))
        T.tree_kinematics(self.tree.params, self.work, np.asarray(x[:self.n], float), np.zeros(self.n), np.zeros(3))
        T.tree_crba(self.tree.params, self.work, A)
        return A

    def energy(self, x: np.ndarray, gravity_0=None) -> dict:
        """Kinetic (base at rest: pd^T A pd / 2), spring and gravitational potential energy (J);
        for the conservation tests (not for a moving base)."""
        n = self.n
        p, pd = np.asarray(x[:n], float), np.asarray(x[n:], float)
        kin = 0.5 * pd @ self.mass_matrix(x) @ pd
        spring = sum(DV.spring_potential(self.devices, j * LAY.LP, p[j]) for j in range(n))
        g0 = self.cfg.gravity_0 if gravity_0 is None else np.asarray(gravity_0, float)
        v = self.tree.work_views(self.work)
        grav = 0.0
        for j, b in enumerate(self.cfg.bodies):
            com0 = v["o"][j] + v["tau"][j].T @ b.com
            grav -= b.mass * g0 @ com0
        return {"kinetic": kin, "spring": spring, "gravity": grav, "total": kin + spring + grav}
