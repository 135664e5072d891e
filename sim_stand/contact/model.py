"""Imperative shell around the contact kernel: owns the preallocated arrays, commits latch
states, logs events with times and raises :class:`PenetrationLimitExceeded`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim_stand.contact import kernel as K
from sim_stand.contact.build import Packed

EVENT_NAMES = {
    K.EV_FIRST_CONTACT: "first_contact",
    K.EV_LATCH_DEFLECTED: "latch_deflected",
    K.EV_LATCH_ENGAGED: "latch_engaged",
    K.EV_SOFT_CAPTURE: "soft_capture",
    K.EV_SENSOR: "sensor_triggered",
}
LATCH_STATE_NAMES = {K.LAT_FREE: "free", K.LAT_DEFLECTED: "deflected",
                     K.LAT_BOTTOMED: "bottomed", K.LAT_ENGAGED: "engaged", K.LAT_RELEASED: "released"}


def latch_state_names(packed: Packed, state: np.ndarray) -> list[str]:
    """The state of every latch of a packed interface, by name, from a contact state array
    (``kernel.S_LATCH0`` on): "triggered" / "idle" for a capture sensor, else
    :data:`LATCH_STATE_NAMES`."""
    out = []
    for l in range(packed.lat.shape[0]):
        s = int(state[K.S_LATCH0 + l])
        if packed.lat[l, K.L_KIND] == 1.0:
            out.append("triggered" if s == K.SEN_TRIGGERED else "idle")
        else:
            out.append(LATCH_STATE_NAMES[s])
    return out


class PenetrationLimitExceeded(RuntimeError):
    """A contact penetrated deeper than its limit (the abort rule
    of [Yaskevich 2018b, contact forces]). The message is::

        contact pair 'NAME': penetration X.XXX mm exceeds the limit Y.YYY mm at t = T.TTTTTT s
    """

    def __init__(self, pair: str, penetration_m: float, limit_m: float, time_s: float):
        self.pair = pair
        self.penetration_m = penetration_m
        self.limit_m = limit_m
        self.time_s = time_s
        super().__init__(f"contact pair {pair!r}: penetration {penetration_m * 1e3:.3f} mm exceeds "
                         f"the limit {limit_m * 1e3:.3f} mm at t = {time_s:.6f} s")


@dataclass(frozen=True)
class Event:
    time_s: float
    kind: str          # EVENT_NAMES value
    detail: str        # which latch / sensor / contact pair


class ContactModel:
    """Preallocated state and outputs for one interface.

    ``evaluate(link_pose, link_twist, passive_twist=None, t=0.0, commit=True)`` runs the kernel
    and, with ``commit``, makes the new latch/sensor states current and appends events to
    :attr:`events` (an integrator calls it with ``commit=False`` at its intermediate stages and
    commits once per accepted step). Outputs are views that the next call overwrites:
    :attr:`records` (n x CW), :attr:`wrench_P` (6), :attr:`wrench_links` (n_links x 6).
    """

    def __init__(self, packed: Packed, check: bool = True):
        self.packed = packed
        self.check = check
        nl = packed.lat.shape[0]
        self.featP = packed.feat.copy()
        self.rec = np.zeros((packed.max_contacts, K.CW))
        self.wrench_P = np.zeros(6)
        self.wrench_links = np.zeros((packed.n_links, 6))
        self.state = np.zeros(K.S_LATCH0 + nl, dtype=np.int64)
        self.state_out = np.zeros_like(self.state)
        self.latch_p = np.zeros(nl)
        self.info = np.zeros(4, dtype=np.int64)
        self.info_f = np.zeros(2)
        self.Rl = np.zeros((packed.n_links, 3, 3))
        self.scratch = np.zeros(K.SCRATCH)
        self.zero_twist = np.zeros(6)
        self.n = 0
        self._pose = np.zeros((packed.n_links, 7))
        self.events: list[Event] = []

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, link_pose, link_twist, passive_twist=None, t: float = 0.0,
                 commit: bool = True) -> int:
        pk = self.packed
        pt = self.zero_twist if passive_twist is None else passive_twist
        self._pose = link_pose
        self.n = K.evaluate(pk.feat, self.featP, pk.pairs, pk.mat, pk.lat, link_pose, link_twist, pt,
                            self.state, self.rec, self.wrench_P, self.wrench_links, self.state_out,
                            self.latch_p, self.info, self.info_f, self.Rl, self.scratch)
        if self.check and self.info[0] & K.ST_PENETRATION:
            raise PenetrationLimitExceeded(pk.contact_name(self.info[1]), float(self.info_f[0]),
                                           float(self.info_f[1]), t)
        if commit:
            self.commit(t)
        return self.n

    def commit(self, t: float = 0.0) -> None:
        ev = int(self.info[3])
        nl = self.packed.lat.shape[0]
        if ev:
            for bit, name in EVENT_NAMES.items():
                if not ev & bit:
                    continue
                if bit == K.EV_FIRST_CONTACT:
                    detail = ", ".join(sorted({self.packed.contact_name(c)
                                               for c in self.rec[:min(self.n, len(self.rec)), K.C_PAIR]}))
                    self.events.append(Event(t, name, detail))
                elif bit == K.EV_SOFT_CAPTURE:
                    self.events.append(Event(t, name, "all latches engaged"))
                else:
                    for l in range(nl):
                        prev, new = self.state[K.S_LATCH0 + l], self.state_out[K.S_LATCH0 + l]
                        sensor = self.packed.lat[l, K.L_KIND] == 1.0
                        hit = ((bit == K.EV_LATCH_DEFLECTED and not sensor and prev == K.LAT_FREE
                                and new in (K.LAT_DEFLECTED, K.LAT_BOTTOMED))
                               or (bit == K.EV_LATCH_ENGAGED and not sensor and new == K.LAT_ENGAGED
                                   and prev != K.LAT_ENGAGED)
                               or (bit == K.EV_SENSOR and sensor and new == K.SEN_TRIGGERED
                                   and prev != K.SEN_TRIGGERED))
                        if hit:
                            self.events.append(Event(t, name, self.packed.latch_names[l]))
        self.state[:] = self.state_out

    # ------------------------------------------------------------------ views
    @property
    def records(self) -> np.ndarray:
        return self.rec[:min(self.n, len(self.rec))]

    @property
    def status(self) -> int:
        return int(self.info[0])

    def latch_states(self) -> list[str]:
        return latch_state_names(self.packed, self.state)

    @property
    def captured(self) -> bool:
        return bool(self.state[K.S_CAPTURED])

    def ring_wrench(self, link: int = 0) -> np.ndarray:
        """Wrench on buffer link ``link`` in its own frame about its origin (the mechanism's
        ``contact_wrench`` input), from the last evaluation."""
        out = np.empty(6)
        K.link_wrench_in_link_frame(self._pose[link], self.wrench_links[link], np.empty((3, 3)), out)
        return out


def pose_array(p_PE, R_PE=None, q_PE=None) -> np.ndarray:
    """One link pose row [p (3), q_PE (4)] from a position and a DCM or quaternion."""
    from rt.dynamics import spatial
    row = np.zeros(7)
    row[:3] = p_PE
    if q_PE is None:
        q = np.empty(4)
        spatial.dcm_to_quat(np.ascontiguousarray(R_PE, dtype=np.float64), q)
        row[3:] = q
    else:
        row[3:] = q_PE
    return row
