"""Either kind of docking interface: a peripheral androgynous one (``sim_stand.contact.config``,
``build.build_peripheral``) or a probe-cone one (``sim_stand.contact.probe_cone``, recognised by
its ``[cone]`` table). The emulated stand, the digital reference and ``dockstand check-config``
load interfaces through here."""
from __future__ import annotations

from pathlib import Path

from rt.config._schema import Table
from sim_stand.contact.build import Packed, build_peripheral
from sim_stand.contact.config import parse_interface
from sim_stand.contact.probe_cone import ProbeConeInterface, build_probe_cone, parse_probe_cone


def load_interface(path: str | Path):
    """Load and validate an interface file of either kind; raises ``ConfigError`` (file, key,
    reason)."""
    t = Table.load(path)
    if "cone" in t.data:
        return parse_probe_cone(t)
    return parse_interface(t)


def build_interface(itf) -> Packed:
    """The packed kernel parameters of a loaded interface of either kind."""
    if isinstance(itf, ProbeConeInterface):
        return build_probe_cone(itf)
    return build_peripheral(itf)
