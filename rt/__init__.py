"""dockstand real-time controller: numerical kernels and the real-time shell.

Importing this package points numba's on-disk cache outside the source tree, before numba is
imported, so compiled kernels survive between runs and never land in the repository:
``$DOCKSTAND_CACHE/numba/<key>`` (``$DOCKSTAND_CACHE`` defaults to ``~/.cache/dockstand``).
numba checks a cached function against its own file only, but compiles its callees and the
module-level constants it reads into it: after an edit of ``sim_stand/contact/kernel.py`` a
cached ``sim_stand/world.py`` kernel would still run the old contact code. ``<key>`` is
therefore a digest of the path, size and modification time of every **kernel source**: each
file of rt, drivers and sim_stand that compiles kernels (imports numba or uses ``@njit``) and
every project module those import, however indirectly (a constant they read). A bench's own
kernels are left to numba's check against their file. A change there starts a fresh cache (one full compile,
about a minute); an edit of the shell (the controller, its command path, the console, the
analysis tools, the benches' drivers) leaves the kernels cached. The import graph is found by
a text scan (``from|import rt.…`` lines), redone only when some source file's stamp changed
(its result is kept in ``$DOCKSTAND_CACHE/kernel_sources.json``). Directories of older keys
are not removed (``rm -r $DOCKSTAND_CACHE/numba`` reclaims them). An explicit
``NUMBA_CACHE_DIR`` is respected as given.
"""
import os as _os

__version__ = "0.1.0"

#: the source tree (its config/ holds the shipped stand, cases and vehicles)
SOURCE_ROOT = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
_PACKAGES = ("rt", "drivers", "sim_stand", "bench")


def _stamps() -> dict[str, str]:
    """Every source file of the packages: relative path -> "size:mtime_ns"."""
    out = {}
    for pkg in _PACKAGES:
        top = _os.path.join(SOURCE_ROOT, pkg)
        for d, dirs, files in _os.walk(top):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            for f in sorted(files):
                if f.endswith(".py"):
                    p = _os.path.join(d, f)
                    st = _os.stat(p)
                    out[_os.path.relpath(p, SOURCE_ROOT)] = f"{st.st_size}:{st.st_mtime_ns}"
    return out


def kernel_sources(stamps: dict[str, str]) -> list[str]:
    """The files whose change can change a compiled kernel (the module docstring): the files
    that compile kernels and the transitive project imports of those in rt, drivers, sim_stand."""
    import re
    texts = {}
    for rel in stamps:
        with open(_os.path.join(SOURCE_ROOT, rel), encoding="utf-8") as fh:
            texts[rel] = fh.read()
    imp = re.compile(r"^\s*(?:from\s+((?:rt|drivers|sim_stand|bench)(?:\.\w+)*)\s+import\s+([\w, ()*]+)"
                     r"|import\s+((?:rt|drivers|sim_stand|bench)(?:\.\w+)*))", re.M)
    kern = re.compile(r"^\s*(?:from numba|import numba)|@njit|numba\.njit|\bnjit\(", re.M)

    def files_of(mod: str) -> list[str]:
        base = mod.replace(".", "/")
        return [f for f in (base + ".py", base + "/__init__.py") if f in texts]

    deps = {}
    for rel, txt in texts.items():
        ds = set()
        for m in imp.finditer(txt):
            mod = m.group(1) or m.group(3)
            ds.update(files_of(mod))
            for name in re.split(r"[,\s()]+", m.group(2) or ""):
                if name and name != "*":
                    ds.update(files_of(f"{mod}.{name}"))
        deps[rel] = ds
    # the benches' own kernels are checked by numba against their own file (their callees, the
    # project's kernels, are in the key): an edit of a bench does not recompile the stand
    seen = {rel for rel, txt in texts.items()
            if kern.search(txt) and not rel.startswith("bench/") and rel != "rt/__init__.py"}
    deps = {rel: ds - {"rt/__init__.py"} for rel, ds in deps.items()}   # this file: the key, no kernel constant
    stack = list(seen)
    while stack:
        for d in deps[stack.pop()]:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return sorted(seen)


def _source_key() -> str:
    import hashlib
    import json
    stamps = _stamps()
    all_key = hashlib.sha1(json.dumps(stamps, sort_keys=True).encode()).hexdigest()[:16]
    memo = _os.path.join(_os.environ.get("DOCKSTAND_CACHE", _os.path.join(_os.path.expanduser("~"), ".cache",
                                                                           "dockstand")), "kernel_sources.json")
    try:
        with open(memo) as fh:
            known = json.load(fh)
    except (OSError, ValueError):
        known = {}
    key = known.get(f"{SOURCE_ROOT}:{all_key}")
    if key is None:
        h = hashlib.sha1()
        for rel in kernel_sources(stamps):
            h.update(f"{rel}\0{stamps[rel]}\0".encode())
        key = h.hexdigest()[:16]
        known = {k: v for k, v in list(known.items())[-63:]}       # bounded: the newest 64 trees
        known[f"{SOURCE_ROOT}:{all_key}"] = key
        try:
            _os.makedirs(_os.path.dirname(memo), exist_ok=True)
            tmp = f"{memo}.{_os.getpid()}"
            with open(tmp, "w") as fh:
                json.dump(known, fh)
            _os.replace(tmp, memo)
        except OSError:
            pass                    # a read-only home: the key is computed again next time
    return key


if "NUMBA_CACHE_DIR" not in _os.environ:
    _os.environ["NUMBA_CACHE_DIR"] = _os.path.join(
        _os.environ.get("DOCKSTAND_CACHE", _os.path.join(_os.path.expanduser("~"), ".cache", "dockstand")),
        "numba", _source_key(),
    )
