"""Packed array layouts shared by the mechanism kernels and their Python wrappers.

``params`` (immutable, float64, 1-D): a header of ``HDR`` entries followed by one block of
``LP`` entries per leg (offset ``HDR + k * LP``).  ``workspace`` (mutable scratch, float64,
1-D) and ``out`` (results, float64, 1-D) have sizes that depend only on the number of legs;
see :func:`ws_size`, :func:`out_size` and :class:`OutView`.

Integer data (types, axes, counts) are stored as exact small floats.
"""
from __future__ import annotations

import numpy as np

# ------------------------------------------------------------------ leg types and joints
UPS, SPU, UCU, RUS, RSU = 0, 1, 2, 3, 4
LEG_TYPES = {"UPS": UPS, "SPU": SPU, "UCU": UCU, "RUS": RUS, "RSU": RSU}
LEG_TYPE_NAMES = {v: k for k, v in LEG_TYPES.items()}
JOINT_P, JOINT_R = 0, 1
NMAX = 4            # at most 4 bodies / joints per leg ([Golubev & Yaskevich, §1, §7])
NDEV = 6            # devices per leg
DEV_SPRING, DEV_DAMPER, DEV_BRAKE, DEV_EMD, DEV_DRIVE, DEV_STOP = range(NDEV)
DEVICE_NAMES = ("spring", "damper", "brake", "emd", "drive", "end_stop")
NTAB = 8            # max entries of the spring stiffness table

# ------------------------------------------------------------------ params header
H_NLEGS = 0
H_MC = 1            # ring mass
H_IC = 2            # 9: ring inertia about its centre of mass, frame C (row-major)
H_NEWTON = 11       # Newton polish iterations after the closed-form IK (0 = none)
H_WS = 16           # 32 slots: workspace offsets, in ws_layout order
H_OUT = 48          # 16 slots: out offsets, in out_offsets order
HDR = 64

# ------------------------------------------------------------------ per-leg params block
L_TYPE = 0
L_N = 1             # bodies / joints n_k
L_M = 2             # constraints m_k (= n_k)
L_DJ = 3            # index (0-based) of the device joint (stroke or crank)
L_LAST = 4          # x-offset of the cut-joint centre on the last body (l^L = [L_LAST, 0, 0])
L_IKA = 5           # UPS family: L_S0 (reference centre distance); Hunt: crank length l12
L_IKB = 6           # Hunt: coupler length l23
L_IKS = 7           # Hunt: branch sign sigma of the crank angle
L_JT = 8            # 4: joint types (JOINT_P / JOINT_R)
L_JA = 12           # 4: joint axes (0, 1, 2) in the joint frame
L_JL = 16           # 4x3: l_{j-1}: joint-frame origin on body j-1, frame j-1
L_JG = 28           # 4x9: gamma_{j-1}: DCM body j-1 -> joint frame (row-major)
L_BM = 64           # 4: body masses
L_BC = 68           # 4x3: first moments c_j = m_j d_j, frame j
L_BI = 80           # 4x9: inertia about O_j, frame j
L_LC = 116          # 3: ring joint centre l_{C,k}, frame C (from the ring's centre of mass)
L_GC = 119          # 9: gamma_{C,k}: DCM C -> ring-side cut-joint frame
# devices
L_SP_F0 = 128       # spring preload (force along +stroke at stroke 0)
L_SP_NT = 129       # number of table entries (0 = no spring)
L_SP_S = 130        # NTAB strokes
L_SP_K = 138        # NTAB stiffnesses
L_SP_KC = 146       # NTAB cumulative  K(s_i) = int_0^{s_i} k
L_SP_VC = 154       # NTAB cumulative  int_0^{s_i} K
L_DA_C = 162        # viscous damping
L_BR_FC = 163       # brake Coulomb force
L_BR_FB = 164       # brake break-away force
L_BR_VS = 165       # Stribeck velocity
L_BR_VR = 166       # regularisation velocity
L_EM_C = 167        # electromechanical damper: back-EMF damping G^2 k_t k_e / R
L_EM_M = 168        # reflected rotor inertia J G^2
L_DR_ON = 169       # drive enabled
L_DR_KP = 170
L_DR_KD = 171
L_DR_FMAX = 172
L_ST_ON = 173       # end stops enabled
L_ST_MIN = 174
L_ST_MAX = 175
L_ST_K = 176
L_ST_C = 177
LP = 180

# ------------------------------------------------------------------ workspace
W_CMD = 0           # (nl, 2): drive command [stroke, stroke rate] per leg (set by the caller)


def ws_layout(nl: int) -> dict[str, tuple[int, tuple[int, ...]]]:
    """name -> (offset, shape) of every workspace array."""
    shapes = [
        ("cmd", (nl, 2)),
        ("tau", (nl, NMAX + 1, 3, 3)),   # DCM 0 -> body j (index 0 = base)
        ("beta", (nl, NMAX, 3, 3)),      # DCM body j-1 -> body j  (index j-1)
        ("rloc", (nl, NMAX, 3)),         # r_{j-1,j} in frame j-1 (index j-1)
        ("r0", (nl, NMAX + 1, 3)),       # O_j in frame 0 (index 0 = base origin)
        ("e0", (nl, NMAX, 3)),           # joint axes in frame 0
        ("Cd", (nl, NMAX, NMAX)),        # C^(d)
        ("LU", (nl, NMAX, NMAX)),        # LU factors of C^(d) (partial pivoting)
        ("piv", (nl, NMAX)),
        ("Ci", (nl, NMAX, 6)),           # C^(i)
        ("H", (nl, NMAX, 6)),
        ("hv", (nl, NMAX)),
        ("cv", (nl, NMAX)),
        ("A", (nl, NMAX, NMAX)),
        ("b", (nl, NMAX)),
        ("fn0", (nl, NMAX, 3)),          # velocity-dependent d'Alembert force, frame j
        ("mn0", (nl, NMAX, 3)),
        ("wab", (nl, NMAX, 3)),          # absolute kinematics (body frames): w_j, eps_j, omega_j
        ("eab", (nl, NMAX, 3)),
        ("oab", (nl, NMAX, 3)),
        ("rL", (nl, 3)),                 # cut-joint centre from the leg, frame 0
        ("lL0", (nl, 3)),                # tau_n^T l^L
        ("nR", (nl, 3)),                 # reaction-moment axis (m_k = 4)
        ("e1", (nl, 3)),
        ("e2", (nl, 3)),
        ("tmp", (16, 6)),                # small scratch
        ("As", (6, 6)),                  # reduced 6x6 matrix (Cholesky in place)
        ("bs", (6,)),
        ("AH", (NMAX, 6)),
        ("kin", (30,)),                  # C-contiguous scratch: alpha_C (9), IK Z (9), IK T (9), w_0 (3)
    ]
    out = {}
    off = 0
    for name, shp in shapes:
        out[name] = (off, shp)
        off += int(np.prod(shp))
    out["_size"] = (off, ())
    return out


def ws_size(nl: int) -> int:
    return ws_layout(nl)["_size"][0]


# ------------------------------------------------------------------ out
# out[0:12]: ring state derivative; then the blocks below, offsets from out_offsets(nl).
O_XDOT = 0
STATUS_OK = 0
STATUS_UNREACHABLE = 1      # closed-form IK has no real solution (leg cannot reach the ring joint)
STATUS_SINGULAR = 2         # C^(d) (or the reduced 6x6 matrix) is numerically singular
STATUS_JOINT_LIMIT = 3      # a U/S joint angle left its chart (|angle| >= 90 deg) or a leg is too short
STATUS_NAMES = {0: "ok", 1: "unreachable pose", 2: "singular configuration",
                3: "joint outside its chart (|angle| >= 90 deg) or zero leg length"}


def out_offsets(nl: int) -> dict[str, tuple[int, tuple[int, ...]]]:
    shapes = [
        ("xdot", (12,)),            # [r_C', (psi, theta, phi)', v_C', omega_C']
        ("udot", (6,)),             # [v_C' (frame 0); omega_C' (frame C)]
        ("p", (nl, NMAX)),          # leg joint coordinates (padded with 0)
        ("pd", (nl, NMAX)),
        ("pdd", (nl, NMAX)),
        ("lam", (nl, NMAX)),        # Lagrange multipliers (leg reactions on the ring)
        ("base_wrench", (6,)),      # wrench of the mechanism on its base: [f; m about O_0], frame 0
        ("stroke", (nl,)),          # device-joint coordinate (m or rad)
        ("stroke_rate", (nl,)),
        ("dev_force", (nl, NDEV)),  # generalized force of each device on its joint (+ along the axis)
        ("dev_power", (nl, NDEV)),  # power the device delivers to the mechanism (W; < 0 absorbed)
        ("status", (2,)),           # [code, leg]
    ]
    out = {}
    off = 0
    for name, shp in shapes:
        out[name] = (off, shp)
        off += int(np.prod(shp)) if shp else 1
    out["_size"] = (off, ())
    return out


def out_size(nl: int) -> int:
    return out_offsets(nl)["_size"][0]


class OutView:
    """Named views into an ``out`` array (no copies)."""

    def __init__(self, out: np.ndarray, nl: int):
        for name, (off, shp) in out_offsets(nl).items():
            if name == "_size":
                continue
            n = int(np.prod(shp))
            setattr(self, name, out[off:off + n].reshape(shp))
        self.nl = nl


class WsView:
    def __init__(self, ws: np.ndarray, nl: int):
        for name, (off, shp) in ws_layout(nl).items():
            if name == "_size":
                continue
            n = int(np.prod(shp))
            setattr(self, name, ws[off:off + n].reshape(shp))
