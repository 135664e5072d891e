"""Many arrays into one compiled call through a table of addresses (docs/controller.md, "Cycle").

numba unboxes every array argument of a call from Python one by one (type check, a MemInfo
per array): the controller's cycle kernel works on ~55 arrays, and passing them costs ~6 µs
per call on this project's machines before any work is done (bench/controller.py prints the
comparison). Instead the shell packs the arrays once, whenever they are (re)bound, into an
int64 table of rows ``(address, d0, d1, d2)``; the kernel takes the table and rebuilds each
array as a view with ``numba.carray`` (no copy, no allocation): one argument instead of 55.

Safety: :func:`pack` checks every array against its declared kind (dtype, ndim), and that it
is C-contiguous, aligned and writeable; the returned :class:`Packed` holds a reference to every
array, so the addresses stay valid for as long as the Packed object lives. A shell that rebinds
one of the arrays must pack again (a stale table would keep working on the old array).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

ROW = 4
KINDS = {"f8_1": (np.float64, 1), "f8_2": (np.float64, 2), "f8_3": (np.float64, 3),
         "i8_1": (np.int64, 1), "i8_2": (np.int64, 2), "u1_1": (np.uint8, 1)}


class Packed(NamedTuple):
    table: np.ndarray        # int64 (n, ROW): address, d0, d1, d2
    arrays: tuple            # the arrays, kept alive with the table


def pack(arrays, kinds) -> Packed:
    """The table of ``arrays`` (in order), each checked against its kind in ``kinds``
    (:data:`KINDS` keys); TypeError/ValueError name the array's position and what is wrong."""
    arrays = tuple(arrays)
    if len(arrays) != len(kinds):
        raise ValueError(f"{len(arrays)} arrays for {len(kinds)} kinds")
    t = np.zeros((len(arrays), ROW), dtype=np.int64)
    for k, (a, kind) in enumerate(zip(arrays, kinds)):
        dtype, ndim = KINDS[kind]
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != ndim:
            raise TypeError(f"array {k}: expected {np.dtype(dtype).name} with {ndim} dimension(s) ({kind}), got "
                            f"{type(a).__name__} {getattr(a, 'dtype', '')} {getattr(a, 'shape', '')}")
        f = a.flags
        if not (f.c_contiguous and f.aligned and f.writeable):
            raise ValueError(f"array {k} ({kind}): must be C-contiguous, aligned and writeable")
        t[k, 0] = a.ctypes.data
        t[k, 1:1 + ndim] = a.shape
    return Packed(t, arrays)


@intrinsic
def _voidptr(typingctx, addr):
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.int64), codegen


@njit(cache=True, inline="always")
def f8_1(t, k):
    """Array ``k`` of the table as a 1-D float64 view (no copy).

    Parameters
    ----------
    t : int64[n, ROW]
        The table (:func:`pack`): per array its address and shape.
    k : int
        The row in t of an array of kind ``f8_1`` (:data:`KINDS`).
    """
    return carray(_voidptr(t[k, 0]), (t[k, 1],), np.float64)


@njit(cache=True, inline="always")
def f8_2(t, k):
    """Array ``k`` of the table as a 2-D float64 view (no copy).

    Parameters
    ----------
    t : int64[n, ROW]
        The table (:func:`pack`): per array its address and shape.
    k : int
        The row in t of an array of kind ``f8_2`` (:data:`KINDS`).
    """
    return carray(_voidptr(t[k, 0]), (t[k, 1], t[k, 2]), np.float64)


@njit(cache=True, inline="always")
def f8_3(t, k):
    """Array ``k`` of the table as a 3-D float64 view (no copy).

    Parameters
    ----------
    t : int64[n, ROW]
        The table (:func:`pack`): per array its address and shape.
    k : int
        The row in t of an array of kind ``f8_3`` (:data:`KINDS`).
    """
    return carray(_voidptr(t[k, 0]), (t[k, 1], t[k, 2], t[k, 3]), np.float64)


@njit(cache=True, inline="always")
def i8_1(t, k):
    """Array ``k`` of the table as a 1-D int64 view (no copy).

    Parameters
    ----------
    t : int64[n, ROW]
        The table (:func:`pack`): per array its address and shape.
    k : int
        The row in t of an array of kind ``i8_1`` (:data:`KINDS`).
    """
    return carray(_voidptr(t[k, 0]), (t[k, 1],), np.int64)


@njit(cache=True, inline="always")
def i8_2(t, k):
    """Array ``k`` of the table as a 2-D int64 view (no copy).

    Parameters
    ----------
    t : int64[n, ROW]
        The table (:func:`pack`): per array its address and shape.
    k : int
        The row in t of an array of kind ``i8_2`` (:data:`KINDS`).
    """
    return carray(_voidptr(t[k, 0]), (t[k, 1], t[k, 2]), np.int64)


@njit(cache=True, inline="always")
def u1_1(t, k):
    """Array ``k`` of the table as a 1-D uint8 view (no copy).

    Parameters
    ----------
    t : int64[n, ROW]
        The table (:func:`pack`): per array its address and shape.
    k : int
        The row in t of an array of kind ``u1_1`` (:data:`KINDS`).
    """
    return carray(_voidptr(t[k, 0]), (t[k, 1],), np.uint8)
