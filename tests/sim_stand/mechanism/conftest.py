import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).resolve().parents[3]
UPS_FILE = ROOT / "config/mechanisms/peripheral_ups.toml"
HUNT_FILE = ROOT / "config/mechanisms/hunt_rsu.toml"


def make_mech(leg_type: str, **devices_override):
    from sim_stand.mechanism import Mechanism, load_mechanism
    hunt = leg_type in ("RUS", "RSU")
    cfg = load_mechanism(HUNT_FILE if hunt else UPS_FILE)
    cfg = dataclasses.replace(cfg, leg_type=leg_type)
    if devices_override:
        devs = tuple(dataclasses.replace(d, **devices_override) for d in cfg.devices)
        cfg = dataclasses.replace(cfg, devices=devs)
    return Mechanism(cfg)


def random_state(mech, rng, pos=0.03, ang=0.06, vel=0.2, rate=0.3):
    x = mech.home_state()
    x[0:3] += rng.normal(0, pos, 3)
    x[3:6] += rng.normal(0, ang, 3)
    x[6:9] = rng.normal(0, vel, 3)
    x[9:12] = rng.normal(0, rate, 3)
    return x


@pytest.fixture(scope="session")
def mechs():
    return {t: make_mech(t) for t in ("UPS", "SPU", "UCU", "RUS", "RSU")}
