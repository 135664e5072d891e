"""Peripheral docking mechanism as a parallel manipulator ([Golubev & Yaskevich]); see
docs/models/mechanism.md.

Public API: :func:`load_mechanism` (config), :class:`Mechanism` (params/workspace/out and
checked calls), the compiled kernels :func:`mechanism_derivatives` and
:func:`mechanism_step_rk4`, :func:`base_motion`, :func:`contact_wrench_on_ring`, and the
array layouts in :mod:`sim_stand.mechanism.layout`.
"""
from sim_stand.mechanism.config import MechanismConfig
from sim_stand.mechanism.model import (Mechanism, MechanismError, base_motion,
                                       contact_wrench_on_ring, load_mechanism, pack_params)


def __getattr__(name):
    if name in ("mechanism_derivatives", "mechanism_step_rk4"):
        from sim_stand.mechanism import kernels
        return getattr(kernels, name)
    raise AttributeError(name)


__all__ = ["MechanismConfig", "load_mechanism", "Mechanism", "MechanismError", "base_motion",
           "contact_wrench_on_ring", "pack_params", "mechanism_derivatives",
           "mechanism_step_rk4"]
