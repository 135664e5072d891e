"""Independent oracles for the mechanism kernels (numpy, test-only).

Dense DAE oracle: every body (the ring and every leg body, massless fictitious ones included)
in absolute coordinates relative to frame 0 -- origin velocity v_i and angular velocity w_i, both
in frame-0 components -- Newton-Euler about O_i with the transport terms of the moving base,
every joint (base joints, leg joints, cut joints) as acceleration-level constraints, and one
dense KKT solve  [M -G^T; G 0] [acc; lam] = [rhs; gamma].  It shares no code with the kernels
(it uses ``model.fk_numpy`` for the leg frames and numpy linear algebra).
"""
from __future__ import annotations

import numpy as np

from sim_stand.mechanism import layout as Lay
from sim_stand.mechanism.model import closure_numpy, fk_numpy


def sk(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0.0]])


def ring_dcm(psi, th, ph):
    from sim_stand.mechanism.model import _elem
    return _elem(0, ph) @ _elem(2, th) @ _elem(1, psi)


def perp_pair(e):
    a = np.eye(3)[int(np.argmin(np.abs(e)))]
    u1 = np.cross(e, a)
    u1 /= np.linalg.norm(u1)
    return u1, np.cross(e, u1)


class Dense:
    """Builds and solves the dense DAE at one state."""

    def __init__(self, mech, x, bm, cw, p_all, cmd=None, check_closure=1e-10):
        self.mech = mech
        legs = mech.legs
        cfg = mech.cfg
        rC, ang, vC, wC = x[0:3], x[3:6], x[6:9], x[9:12]
        aC = ring_dcm(*ang)
        a0, om0, eps0, g = bm[0:3], bm[3:6], bm[6:9], bm[9:12]
        wC0 = aC.T @ wC
        # ---- bodies: 0 = ring, then legs
        bodies = []   # dict: m, c0, J0, x, v, w
        ring = dict(m=cfg.ring_mass_kg, c0=np.zeros(3), J0=aC.T @ cfg.ring_inertia_kgm2 @ aC,
                    x=rC.copy(), v=vC.copy(), w=wC0.copy())
        bodies.append(ring)
        self.leg_info = []
        for k, leg in enumerate(legs):
            p = np.asarray(p_all[k][:leg.n], float)
            f, J = closure_numpy(leg, p, rC, aC)
            assert np.abs(f).max() < check_closure, f"leg {k}: closure residual {f}"
            # p' from the velocity constraints (own Jacobian)
            rL = rC + aC.T @ leg.l_C
            rhs = np.zeros(leg.n)
            rhs[:3] = vC + np.cross(wC0, aC.T @ leg.l_C)
            frames, axes, centres = fk_numpy(leg, p)
            tau_n = frames[-1][0]
            e1 = tau_n[1]
            e2 = (leg.gamma_C @ aC)[2]
            nR = np.cross(e1, e2)
            if leg.n == 4:
                rhs[3] = nR @ wC0
            pd = np.linalg.solve(J, rhs)
            idx = []
            w = np.zeros(3)
            for j in range(leg.n):
                tau, O = frames[j]
                if leg.jtypes[j] == Lay.JOINT_R:
                    w = w + axes[j] * pd[j]
                v = np.zeros(3)
                for i in range(j + 1):
                    if leg.jtypes[i] == Lay.JOINT_P:
                        v += axes[i] * pd[i]
                    else:
                        v += np.cross(axes[i], O - frames[i][1]) * pd[i]
                bodies.append(dict(m=leg.mass[j], c0=tau.T @ (leg.mass[j] * np.asarray(leg.com[j])),
                                   J0=tau.T @ np.asarray(leg.inertia_O[j]) @ tau, x=O.copy(),
                                   v=v, w=w.copy()))
                idx.append(len(bodies) - 1)
            self.leg_info.append(dict(idx=idx, p=p, pd=pd, frames=frames, axes=axes,
                                      centres=centres, rL=rL, e1=e1, e2=e2, nR=nR))
        nb = len(bodies)
        N = 6 * nb
        M = np.zeros((N, N))
        rhs = np.zeros(N)
        for i, b in enumerate(bodies):
            s = slice(6 * i, 6 * i + 6)
            m, c, J = b["m"], b["c0"], b["J0"]
            Mi = np.zeros((6, 6))
            Mi[:3, :3] = m * np.eye(3)
            Mi[:3, 3:] = -sk(c)
            Mi[3:, :3] = sk(c)
            Mi[3:, 3:] = J
            M[s, s] = Mi
            xx, v, w = b["x"], b["v"], b["w"]
            atr = a0 - g + np.cross(eps0, xx) + np.cross(om0, np.cross(om0, xx)) + 2 * np.cross(om0, v)
            etr = eps0 + np.cross(om0, w)
            Om = om0 + w
            F = -m * atr - np.cross(etr, c) - np.cross(Om, np.cross(Om, c))
            Mo = -J @ etr - np.cross(c, atr) - np.cross(Om, J @ Om)
            rhs[6 * i:6 * i + 3] += F
            rhs[6 * i + 3:6 * i + 6] += Mo
        # contact wrench on the ring (frame C, about the CoM) -> frame 0
        rhs[0:3] += aC.T @ cw[:3]
        rhs[3:6] += aC.T @ cw[3:]
        self.bodies = bodies
        rows, gam = [], []
        self.row_tags = []

        def add(row, gval, tag):
            rows.append(row)
            gam.append(gval)
            self.row_tags.append(tag)

        def point_rows(ib, rho_b, ia, rho_a, tag):
            # a_P(b) - a_P(a) = 0 ; ia = -1 for the ground
            for r in range(3):
                row = np.zeros(N)
                row[6 * ib + r] = 1.0
                row[6 * ib + 3:6 * ib + 6] = -sk(rho_b)[r]
                gv = -np.cross(bodies[ib]["w"], np.cross(bodies[ib]["w"], rho_b))[r]
                if ia >= 0:
                    row[6 * ia + r] -= 1.0
                    row[6 * ia + 3:6 * ia + 6] += sk(rho_a)[r]
                    gv += np.cross(bodies[ia]["w"], np.cross(bodies[ia]["w"], rho_a))[r]
                add(row, gv, tag)

        def W(i):
            return bodies[i]["w"] if i >= 0 else np.zeros(3)

        def V(i):
            return bodies[i]["v"] if i >= 0 else np.zeros(3)

        def X(i):
            return bodies[i]["x"] if i >= 0 else np.zeros(3)

        self.pdd_rows = []   # per leg: list of (row over acc, kappa) with pdd = row @ acc + kappa
        for k, leg in enumerate(legs):
            info = self.leg_info[k]
            idx = info["idx"]
            lrows = []
            for j in range(leg.n):
                ib = idx[j]
                ia = idx[j - 1] if j > 0 else -1
                e = info["axes"][j]
                Ob = X(ib)
                wa = W(ia)
                tag = ("base" if j == 0 else "joint", k, j)
                if leg.jtypes[j] == Lay.JOINT_R:
                    point_rows(ib, np.zeros(3), ia, Ob - X(ia), tag)
                    for u in perp_pair(e):
                        row = np.zeros(N)
                        row[6 * ib + 3:6 * ib + 6] = u
                        if ia >= 0:
                            row[6 * ia + 3:6 * ia + 6] = -u
                        add(row, -np.cross(wa, u) @ (W(ib) - wa), tag)
                    row = np.zeros(N)
                    row[6 * ib + 3:6 * ib + 6] = e
                    if ia >= 0:
                        row[6 * ia + 3:6 * ia + 6] = -e
                    lrows.append((row, 0.0))
                else:
                    for r in range(3):
                        row = np.zeros(N)
                        row[6 * ib + 3 + r] = 1.0
                        if ia >= 0:
                            row[6 * ia + 3 + r] = -1.0
                        add(row, 0.0, tag)
                    Q = info["centres"][j]          # joint-frame origin on body a
                    rho_a = Q - X(ia)
                    d = Ob - Q
                    dd = V(ib) - (V(ia) + np.cross(wa, rho_a))
                    for u in list(perp_pair(e)) + [e]:
                        row = np.zeros(N)
                        row[6 * ib:6 * ib + 3] = u
                        if ia >= 0:
                            row[6 * ia:6 * ia + 3] = -u
                            row[6 * ia + 3:6 * ia + 6] = np.cross(u, Ob - X(ia))
                        kap = (u @ (-np.cross(wa, np.cross(wa, rho_a))) + 2 * np.cross(wa, u) @ dd
                               + np.cross(wa, np.cross(wa, u)) @ d)
                        if u is e:
                            lrows.append((row, kap))
                        else:
                            add(row, -kap, tag)
            # cut joint: ring (body 0) minus last body
            n_ = idx[-1]
            rL = info["rL"]
            rho_C = rL - rC
            rho_n = rL - X(n_)
            for r in range(3):
                row = np.zeros(N)
                row[r] = 1.0
                row[3:6] = -sk(rho_C)[r]
                row[6 * n_ + r] -= 1.0
                row[6 * n_ + 3:6 * n_ + 6] += sk(rho_n)[r]
                gv = (-np.cross(wC0, np.cross(wC0, rho_C)) + np.cross(W(n_), np.cross(W(n_), rho_n)))[r]
                add(row, gv, ("cut", k, r))
            if leg.n == 4:
                e1, e2, nR = info["e1"], info["e2"], info["nR"]
                wn = W(n_)
                ndot = np.cross(np.cross(wn, e1), e2) + np.cross(e1, np.cross(wC0, e2))
                row = np.zeros(N)
                row[3:6] = nR
                row[6 * n_ + 3:6 * n_ + 6] = -nR
                add(row, -ndot @ (wC0 - wn), ("cut", k, 3))
            self.pdd_rows.append(lrows)
            # devices: generalized joint force on the device joint, reflected inertia
            dj = leg.dj
            grow, kap = lrows[dj]
            s, v = info["p"][dj], info["pd"][dj]
            lo = Lay.HDR + k * Lay.LP
            Pm = mech.params
            from sim_stand.mechanism import devices as dv
            sc, vc = (0.0, 0.0) if cmd is None else cmd[k]
            Q = (dv.spring_force(Pm, lo, s) + dv.damper_force(Pm, lo, v) + dv.brake_force(Pm, lo, v)
                 + dv.emd_force(Pm, lo, v) + dv.drive_force(Pm, lo, s, v, sc, vc) + dv.stop_force(Pm, lo, s, v))
            mr = Pm[lo + Lay.L_EM_M]
            rhs += grow * Q
            M += mr * np.outer(grow, grow)
            rhs -= mr * grow * kap
        G = np.array(rows)
        gam = np.array(gam)
        nc = G.shape[0]
        K = np.zeros((N + nc, N + nc))
        K[:N, :N] = M
        K[:N, N:] = -G.T
        K[N:, :N] = G
        sol = np.linalg.solve(K, np.concatenate([rhs, gam]))
        self.acc = sol[:N]
        self.lam = sol[N:]
        self.M, self.G, self.rhs = M, G, rhs
        self.aC = aC
        self.om0, self.eps0, self.a0, self.g = om0, eps0, a0, g
        self.cw = cw

    # ------------------------------------------------------------------ results
    def ring_udot(self):
        return np.concatenate([self.acc[0:3], self.aC @ self.acc[3:6]])

    def pdd(self, k):
        return np.array([r @ self.acc + kap for r, kap in self.pdd_rows[k]])

    def lam_cut(self, k):
        sel = [i for i, t in enumerate(self.row_tags) if t[0] == "cut" and t[1] == k]
        return self.lam[sel]

    def base_wrench_momentum(self):
        """Wrench on the base at O_0 (frame 0) = external forces (contact + gravity) minus the rate
        of change of the whole mechanism's momentum (Newton-Euler of the whole system)."""
        F = np.zeros(3)
        Mo = np.zeros(3)
        for i, b in enumerate(self.bodies):
            vd = self.acc[6 * i:6 * i + 3]
            wd = self.acc[6 * i + 3:6 * i + 6]
            xx, v, w, m, c, J = b["x"], b["v"], b["w"], b["m"], b["c0"], b["J0"]
            om0, eps0 = self.om0, self.eps0
            aO = vd + self.a0 + np.cross(eps0, xx) + np.cross(om0, np.cross(om0, xx)) + 2 * np.cross(om0, v)
            Od = wd + eps0 + np.cross(om0, w)
            Om = om0 + w
            fi = m * aO + np.cross(Od, c) + np.cross(Om, np.cross(Om, c))      # dP_i/dt
            mi = J @ Od + np.cross(c, aO) + np.cross(Om, J @ Om)                # dH_i/dt about O_i
            # external: gravity m g at the centre of mass
            fi_ext = m * self.g
            mi_ext = np.cross(c, self.g)
            F += fi - fi_ext
            Mo += mi - mi_ext + np.cross(xx, fi - fi_ext)
        aC = self.aC
        fc = aC.T @ self.cw[:3]
        mc = aC.T @ self.cw[3:] + np.cross(self.bodies[0]["x"], fc)
        # mechanism: dP/dt = F_ext + F_base->mech ; wrench on base = -(F_base->mech)
        return np.concatenate([-(F - fc), -(Mo - mc)])

    def kinetic_energy(self):
        T = 0.0
        for b in self.bodies:
            v, w, m, c, J = b["v"], b["w"], b["m"], b["c0"], b["J0"]
            T += 0.5 * m * v @ v + v @ np.cross(w, c) + 0.5 * w @ J @ w
        return T

    def gravity_potential(self):
        V = 0.0
        for b in self.bodies:
            V -= self.g @ (b["m"] * b["x"] + b["c0"])
        return V
