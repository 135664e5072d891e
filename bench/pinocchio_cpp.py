"""Pinocchio's C++ ABA without Python: bench/pinocchio_aba_loop.cpp compiled against the ``pin``
wheel's headers and linked to its ``libpinocchio_default.so``, loaded with ctypes.

The loop calls the instantiation of ``pinocchio::aba`` that the wheel ships (declared ``extern
template`` by Pinocchio's headers under ``PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION``): the machine
code that ``pin.aba(model, data, q, v, tau, fext)`` runs, built by Pinocchio's maintainers with
their flags, with the same argument types, minus the Python binding. The build needs a C++17
compiler (``c++``/``g++``) and Eigen's headers (``cmeel-eigen``, in the ``bench`` extra); it is
cached under ``$XDG_CACHE_HOME/dockstand`` (or ``~/.cache/dockstand``) by the hash of the source
and the wheel's version, so the ~15 s compile happens once per machine and version.

:func:`load` returns ``(PinCppAba, None)`` or ``(None, reason)`` when something is missing.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import numpy as np

SRC = Path(__file__).with_name("pinocchio_aba_loop.cpp")
DEFINES = ["PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION", "BOOST_MPL_LIMIT_LIST_SIZE=30",
           "BOOST_MPL_LIMIT_VECTOR_SIZE=30", "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
           "BOOST_FUSION_INVOKE_MAX_ARITY=12"]      # the wheel's pinocchioTargets.cmake


def _prefix() -> Path | None:
    for base in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        p = Path(base) / "cmeel.prefix"
        if (p / "lib" / "libpinocchio_default.so").exists():
            return p
    return None


def _cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "dockstand"


def build() -> tuple[Path | None, str | None]:
    """The compiled loop's shared library, building it if needed; or (None, why not)."""
    try:
        import pinocchio as pin
    except ImportError as e:
        return None, f"pinocchio not installed ({e}); pip install -e '.[bench]'"
    prefix = _prefix()
    if prefix is None:
        return None, "the pin wheel's libpinocchio_default.so not found (cmeel.prefix/lib)"
    eigen = prefix / "include" / "eigen3"
    if not (eigen / "Eigen").exists():
        return None, "Eigen's headers not found (cmeel.prefix/include/eigen3); pip install -e '.[bench]' (cmeel-eigen)"
    cxx = shutil.which(os.environ.get("CXX", "")) or shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        return None, "no C++ compiler (c++ / g++) to build the compiled loop"
    key = hashlib.sha256(SRC.read_bytes() + pin.__version__.encode() + str(prefix).encode()).hexdigest()[:16]
    out = _cache_dir() / f"pinocchio_aba_loop-{key}.so"
    if out.exists():
        return out, None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    # -O2 and no -march: the handle's Eigen types must have the layout the wheel was built with
    cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", *[f"-D{d}" for d in DEFINES],
           f"-I{prefix / 'include'}", f"-I{eigen}", str(SRC), "-o", str(tmp),
           f"-L{prefix / 'lib'}", "-lpinocchio_default", f"-Wl,-rpath,{prefix / 'lib'}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"building the compiled loop failed: {r.stderr.strip().splitlines()[-1:]}"
    os.replace(tmp, out)
    return out, None


_d = ctypes.POINTER(ctypes.c_double)
_i = ctypes.POINTER(ctypes.c_int)


def _ptr(a: np.ndarray, t=_d):
    return a.ctypes.data_as(t)


class PinCppAba:
    """Pinocchio's ABA on a :class:`rt.dynamics.tree_pinocchio.PinTree`-equivalent fixed-base
    model, in a compiled loop. ``run(n)`` -> seconds per call (timed inside the loop)."""

    def __init__(self, lib: ctypes.CDLL, tree, gravity, order):
        self.lib = lib
        self.order = list(order)
        n = len(self.order)
        pos = {j: k for k, j in enumerate(self.order)}
        bodies = [tree.bodies[j] for j in self.order]
        self._keep = arrs = dict(
            parent=np.array([-1 if b.parent < 0 else pos[b.parent] for b in bodies], dtype=np.intc),
            type=np.array([1 if b.joint == "R" else 0 for b in bodies], dtype=np.intc),
            axis=np.array([b.axis for b in bodies], dtype=np.intc),
            R=np.ascontiguousarray([np.asarray(b.gamma, float).T for b in bodies]).reshape(n, 9),
            t=np.ascontiguousarray([np.asarray(b.l, float) for b in bodies]),
            mass=np.array([float(b.mass) for b in bodies]),
            com=np.ascontiguousarray([np.asarray(b.com, float) for b in bodies]),
            I=np.ascontiguousarray([np.asarray(b.inertia_com, float) for b in bodies]).reshape(n, 9),
            g=np.asarray(gravity, dtype=float).copy())
        lib.pab_new.restype = ctypes.c_void_p
        lib.pab_new.argtypes = [ctypes.c_int, _i, _i, _i, _d, _d, _d, _d, _d, _d]
        lib.pab_set.argtypes = [ctypes.c_void_p, _d, _d, _d, _d]
        lib.pab_run.restype = ctypes.c_longlong
        lib.pab_run.argtypes = [ctypes.c_void_p, ctypes.c_longlong]
        lib.pab_ddq.argtypes = [ctypes.c_void_p, _d]
        lib.pab_free.argtypes = [ctypes.c_void_p]
        self.n = n
        self.h = lib.pab_new(n, _ptr(arrs["parent"], _i), _ptr(arrs["type"], _i), _ptr(arrs["axis"], _i),
                             _ptr(arrs["R"]), _ptr(arrs["t"]), _ptr(arrs["mass"]), _ptr(arrs["com"]),
                             _ptr(arrs["I"]), _ptr(arrs["g"]))

    def set(self, p, pd, g, fext) -> None:
        """Inputs in our body order (as :class:`rt.dynamics.tree_pinocchio.PinTree` takes them)."""
        o = self.order
        self._in = [np.ascontiguousarray(np.asarray(x, float)[o]) for x in (p, pd, g)]
        self._in.append(np.ascontiguousarray(np.asarray(fext, float)[o]))
        self.lib.pab_set(self.h, *[_ptr(a) for a in self._in])

    def run(self, n: int) -> float:
        return self.lib.pab_run(self.h, n) * 1e-9 / n

    def ddq(self) -> np.ndarray:
        """The last result, in our body order."""
        out = np.empty(self.n)
        self.lib.pab_ddq(self.h, _ptr(out))
        res = np.empty(self.n)
        res[self.order] = out
        return res

    def __del__(self):
        h, self.h = getattr(self, "h", None), None
        if h:
            self.lib.pab_free(h)


def load(tree, gravity, order) -> tuple[PinCppAba | None, str | None]:
    path, why = build()
    if path is None:
        return None, why
    try:
        import pinocchio  # noqa: F401  (loads libpinocchio_default.so with the wheel's own dependencies first)
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        return None, f"loading the compiled loop failed ({e})"
    return PinCppAba(lib, tree, gravity, order), None
