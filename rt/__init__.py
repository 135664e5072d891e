"""dockstand real-time controller: numerical kernels and the real-time shell.

Importing this package points numba's on-disk cache outside the source tree, before numba is
imported, so compiled kernels survive between runs and never land in the repository:
``$DOCKSTAND_CACHE/numba/<key>`` (``$DOCKSTAND_CACHE`` defaults to ``~/.cache/dockstand``).

``<key>`` is a digest of the path, size and modification time of every source file of the
packages that hold kernels (rt, drivers, sim_stand, bench). numba checks a cached function
against its own file only, but compiles its callees into it: after an edit of
``sim_stand/contact/kernel.py`` a cached ``sim_stand/world.py`` kernel would still run the old
contact code. With the key, any source edit starts a fresh cache (one full compile, about a
minute); directories of older keys are not removed (``rm -r $DOCKSTAND_CACHE/numba`` reclaims
them). An explicit ``NUMBA_CACHE_DIR`` is respected as given.
"""
import os as _os

__version__ = "0.1.0"

#: the source tree (its config/ holds the shipped stand, cases and vehicles)
SOURCE_ROOT = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))


def _source_key() -> str:
    import hashlib

    root = SOURCE_ROOT
    h = hashlib.sha1()
    for pkg in ("rt", "drivers", "sim_stand", "bench"):
        top = _os.path.join(root, pkg)
        for d, dirs, files in _os.walk(top):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            for f in sorted(files):
                if f.endswith(".py"):
                    p = _os.path.join(d, f)
                    st = _os.stat(p)
                    h.update(f"{_os.path.relpath(p, root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:16]


if "NUMBA_CACHE_DIR" not in _os.environ:
    _os.environ["NUMBA_CACHE_DIR"] = _os.path.join(
        _os.environ.get("DOCKSTAND_CACHE", _os.path.join(_os.path.expanduser("~"), ".cache", "dockstand")),
        "numba", _source_key(),
    )
