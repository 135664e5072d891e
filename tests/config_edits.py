"""Config files edited for a test (imported by name: ``tests/`` is on ``sys.path``): a shipped
file's text with some of its lines replaced, each replacement checked to have found its text
(a test whose edit silently missed would test the unedited file)."""
from __future__ import annotations

from pathlib import Path

import pytest

from rt.config import ConfigError

REPO = Path(__file__).resolve().parents[1]
STAND = REPO / "config" / "stand.toml"


def edited(text: str, replacements, count: int = -1) -> str:
    """``text`` with each ``(old, new)`` of ``replacements`` made (the first ``count``
    occurrences of ``old``; -1: all); every ``old`` must be there."""
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, count)
    return text


def config_error(load, text: str, old: str, new: str, path: Path) -> ConfigError:
    """The ConfigError ``load(path)`` raises for ``text`` with its first ``old`` replaced by
    ``new``, written at ``path`` (``old`` must be in ``text``)."""
    path.write_text(edited(text, [(old, new)], 1))
    with pytest.raises(ConfigError) as e:
        load(path)
    return e.value


def ipc_stand(tmp_path: Path, name: str = "stand", cmd: str = "cmd", pub: str = "pub", more=()) -> Path:
    """The default stand (config/stand.toml) written at ``tmp_path/name.toml`` with its device
    links on ``ipc://tmp_path/sensor`` and ``/platform``, its telemetry on ``/pub`` and its
    commands on ``/cmd`` (``cmd``, ``pub``: other names), and the ``(old, new)`` edits ``more``."""
    text = edited(STAND.read_text(), [("tcp://127.0.0.1:5570", f"ipc://{tmp_path}/sensor"),
                                      ("tcp://127.0.0.1:5571", f"ipc://{tmp_path}/platform"),
                                      ("tcp://127.0.0.1:5561", f"ipc://{tmp_path}/{pub}"),
                                      ("tcp://127.0.0.1:5560", f"ipc://{tmp_path}/{cmd}")])
    p = tmp_path / f"{name}.toml"
    p.write_text(edited(text, more))
    return p
