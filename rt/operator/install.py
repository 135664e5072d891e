"""``dockstand install-units --prefix DIR``: the systemd units of systemd/ written with this
installation's real paths (docs/deploy.md): the ``dockstand`` executable of this environment,
the source tree (working directory, documentation) and the stand file; optionally the user.
Then ``systemctl daemon-reload``. Not real-time.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import rt

UNITS = ("dockstand-controller.service", "dockstand-emulator.service")
TEMPLATE_ROOT = "/opt/dockstand"
TEMPLATE_EXE = "/opt/dockstand/.venv/bin/dockstand"
TEMPLATE_STAND = "/opt/dockstand/config/stand.toml"


def dockstand_executable() -> Path:
    """The ``dockstand`` script beside this interpreter (the venv's), else the one on PATH."""
    here = Path(sys.executable).parent / "dockstand"
    if here.exists():
        return here.absolute()
    found = shutil.which("dockstand")
    if found:
        return Path(found).absolute()
    raise FileNotFoundError("no dockstand executable beside this Python or on PATH (pip install -e . first)")


def render_units(stand: Path, exe: Path | None = None, root: Path | None = None, user: str | None = None,
                 source: Path | None = None) -> dict[str, str]:
    """Each unit's text with the real paths (a pure function of its arguments and the templates)."""
    exe = Path(exe or dockstand_executable())
    root = Path(root or rt.SOURCE_ROOT).absolute()
    source = Path(source or Path(rt.SOURCE_ROOT) / "systemd")
    out = {}
    for name in UNITS:
        text = (source / name).read_text()
        text = text.replace(TEMPLATE_EXE, str(exe)).replace(TEMPLATE_STAND, str(Path(stand).absolute()))
        text = text.replace(TEMPLATE_ROOT, str(root))
        text = text.replace("# Install: copy to /etc/systemd/system/, adjust the paths and CPUAffinity, "
                            "`systemctl daemon-reload`.",
                            f"# Installed by `dockstand install-units` for {root}; adjust CPUAffinity, then "
                            "`systemctl daemon-reload`.")
        if user:
            text = "\n".join(f"User={user}" if l.startswith("User=") else
                             f"Group={user}" if l.startswith("Group=") else l for l in text.splitlines()) + "\n"
        out[name] = text
    return out


def install_units(prefix: Path, stand: Path, user: str | None = None) -> list[Path]:
    prefix = Path(prefix)
    prefix.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_units(stand, user=user).items():
        p = prefix / name
        p.write_text(text)
        written.append(p)
    return written


def cmd_install_units(args) -> int:
    from rt.config import ConfigError
    from rt.config.stand import default_stand_path, load_stand
    stand = Path(args.stand) if args.stand else default_stand_path()[0]
    try:
        load_stand(stand)          # a unit that names a broken stand would only fail at boot
    except ConfigError as e:
        print(f"dockstand install-units: {e}", file=sys.stderr)
        return 2
    try:
        written = install_units(Path(args.prefix), stand, args.user)
    except (OSError, FileNotFoundError) as e:
        print(f"dockstand install-units: {e}", file=sys.stderr)
        return 2
    for p in written:
        print(f"wrote {p}")
    print("then: systemctl daemon-reload && systemctl enable --now dockstand-controller (docs/deploy.md)")
    return 0
