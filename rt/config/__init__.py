"""Config files: TOML loaded once into frozen, typed objects (docs/config.md).

Each kind of file has one loader ``load(path) -> object`` that raises :class:`ConfigError`
naming the file, the key path and the reason. ``KINDS`` maps the kinds of ``rt.config`` to
their loaders as ``"module:function"`` strings, resolved lazily; the kinds that belong to a
model above this layer (mechanism, interface, emulator: sim_stand) register their loaders
through the ``dockstand.config_kinds`` entry points (pyproject.toml), so config never imports
a model (docs/architecture.md, "Layers").
"""
from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from pathlib import Path

from rt.config._schema import ConfigError, Table

__all__ = ["ConfigError", "Table", "KINDS", "kind_of", "load_any"]

KINDS: dict[str, str] = {
    "vehicle": "rt.config.vehicle:load_vehicle",
    "case": "rt.config.case:load_case",
    "stand": "rt.config.stand:load_stand",
    "arm": "rt.config.arm:load_arm",
}

#: entry-point group of the config kinds that models above rt.config own: ``kind = "module:load"``
CONFIG_KINDS_GROUP = "dockstand.config_kinds"


def kinds() -> dict[str, str]:
    """Every config kind and its loader (``"module:function"``): ``KINDS`` and the
    ``dockstand.config_kinds`` entry points."""
    out = dict(KINDS)
    for ep in entry_points(group=CONFIG_KINDS_GROUP):
        out.setdefault(ep.name, ep.value)
    return out

# folder name -> kind, for files that do not say ``kind = "..."`` themselves
_FOLDERS = {"vehicles": "vehicle", "cases": "case", "mechanisms": "mechanism",
            "interfaces": "interface", "stands": "stand", "emulator": "emulator", "arms": "arm",
            "campaigns": "campaign"}


def kind_of(path: str | Path) -> str:
    """The kind of a config file: from its folder (``config/vehicles/x.toml`` -> vehicle), for
    ``stand*.toml`` ``stand``, else from what it holds (two or more of a kind's top-level
    tables and keys, ``rt.config._schema.KIND_KEYS``: ``my-stand.toml`` with ``[loop]`` and
    ``[hexapod]`` is a stand file)."""
    p = Path(path)
    if p.parent.name in _FOLDERS:
        return _FOLDERS[p.parent.name]
    if p.name.startswith("stand"):
        return "stand"
    from rt.config._schema import KIND_KEYS
    keys = set(Table.load(p).data) if p.is_file() else set()
    score = sorted(((len(keys & marks), kind) for kind, marks in KIND_KEYS.items()), reverse=True)
    if score and score[0][0] >= 2 and (len(score) == 1 or score[1][0] < score[0][0]):
        return score[0][1]
    raise ConfigError(p, "", "cannot tell the kind of this file from its folder, its name or what it holds: put it "
                      "in one of the folders " + ", ".join(f"{k}/" for k in _FOLDERS)
                      + ", name it stand*.toml, or pass --kind")


def loader(kind: str):
    known = kinds()
    if kind not in known:
        raise ValueError(f"unknown config kind {kind!r}; known: {', '.join(sorted(known))}")
    mod, fn = known[kind].split(":")
    try:
        return getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"no loader for config kind {kind!r} yet ({e})") from None


def load_any(path: str | Path, kind: str | None = None):
    """Load and validate a config file of any kind."""
    return loader(kind or kind_of(path))(path)
