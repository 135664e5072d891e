"""dockstand real-time controller: numerical kernels and the real-time shell.

Importing this package points numba's on-disk cache outside the source tree
(``$DOCKSTAND_CACHE`` or ``~/.cache/dockstand/numba``) before numba is imported, so
compiled kernels survive between runs and never land in the repository.
"""
import os as _os

__version__ = "0.1.0"

if "NUMBA_CACHE_DIR" not in _os.environ:
    _os.environ["NUMBA_CACHE_DIR"] = _os.path.join(
        _os.environ.get("DOCKSTAND_CACHE", _os.path.join(_os.path.expanduser("~"), ".cache", "dockstand")),
        "numba",
    )
