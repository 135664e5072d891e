from pathlib import Path

import numpy as np
import pytest

from sim_stand.contact import build_interface, load_interface

PRESET = Path(__file__).resolve().parents[3] / "config" / "interfaces" / "peripheral_androgynous.toml"


@pytest.fixture(scope="session")
def preset():
    return load_interface(PRESET)


@pytest.fixture(scope="session")
def packed(preset):
    return build_interface(preset)


def quat_x(angle):
    return np.array([np.cos(angle / 2), np.sin(angle / 2), 0.0, 0.0])
