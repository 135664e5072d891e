"""The emulated stand with no docking hardware in contact: the motion platform (servo, delay,
limits; sim_stand/platform_model.py) carrying the active unit through free space, the passive
unit on the sensor untouched. The wrench on the passive unit is zero (the emulator adds its
weight). Used for platform-only checks, link and fault tests and the emulator's realtime pacing;
it has the world interface of sim_stand/world.py (``reset``, ``advance``, ``wrench_P``,
``wrench_hist``, ``hist_steps``, ``top_pose``, ``top_twist``, ``lengths``, ``platform_fault``, ``captured``, ``events``,
``stats``, ``relative_pose_PA``).
"""
from __future__ import annotations

import numpy as np

from rt.dynamics import spatial as SP
from rt.stand.frames import active_in_passive
from rt.config.stand import Stand
from sim_stand.platform_model import PlatformModel, PlatformParams, PlatformReadings


class FreeSpaceWorld(PlatformReadings):
    def __init__(self, stand: Stand, params: PlatformParams | None = None):
        self.stand = stand
        self.params = params or PlatformParams(bandwidth_hz=60.0, damping_ratio=0.85, transport_delay_s=0.0005,
                                               acceleration_max_mps2=10.0)
        self.platform = PlatformModel(stand.hexapod, self.params)
        self.dt = self.params.physics_dt_s
        self.wrench_P = np.zeros(6)
        self.wrench_hist = np.zeros((1, 6))      # the wrench at an advance's start and steps: zero
        self.hist_steps = 0
        self.t = 0.0
        self.captured = False
        self.events: list = []
        self._start = np.zeros(3)
        self.stats = {"peak_force_n": 0.0, "peak_moment_nm": 0.0, "max_penetration_m": 0.0,
                      "energy_absorbed_j": 0.0, "time_to_capture_s": None, "max_excursion_m": 0.0}

    def reset(self, top_pose: np.ndarray) -> None:
        self.platform.reset_to_pose(np.asarray(top_pose, dtype=np.float64))
        self._start[:] = top_pose[:3]
        self.t = 0.0

    def advance(self, cmd_lengths: np.ndarray, dt: float) -> None:
        n = max(1, int(round(dt / self.dt)))
        if self.wrench_hist.shape[0] != n + 1:
            self.wrench_hist = np.zeros((n + 1, 6))
        self.hist_steps = n
        for _ in range(n):
            self.platform.step(cmd_lengths)
        self.t += n * self.dt
        e = float(np.linalg.norm(self.platform.pose[:3] - self._start))
        if e > self.stats["max_excursion_m"]:
            self.stats["max_excursion_m"] = e

    def input_word(self, inputs) -> int:
        """No mechanism: no status signal is ever set."""
        return 0

    def relative_pose_PA(self) -> np.ndarray:
        """A in P from the platform pose and the stand geometry (B, P in W; A in T)."""
        R_BT = np.zeros((3, 3))
        SP.quat_to_dcm(self.platform.pose[3:7], R_BT)
        p_PA, R_PA = active_in_passive(self.stand, self.platform.pose[:3], R_BT)
        out = np.zeros(7)
        out[:3] = p_PA
        SP.dcm_to_quat(np.ascontiguousarray(R_PA), out[3:7])
        if out[3] < 0:
            out[3:7] *= -1.0
        return out

