"""Small dense linear-algebra steps shared by the kernels' Gaussian eliminations: the 6x6
solve of the hexapod (``rt.stand.hexapod.solve6``) and the LU factorisation of the mechanism's
closure matrices (``sim_stand.mechanism.kernels._lu`` / ``_lu_solve``).

Each elimination keeps its own multipliers and pivot tolerance; what they share is written
once here: the pivoting step (partial pivoting, Golub & Van Loan, "Matrix Computations",
§3.4: choice of the pivot row, singularity test, row exchange) and the back substitution of an
upper-triangular system. Every function is ``@njit(**rt.jit.KERNEL)``, works on the leading
``n x n`` block of the caller's arrays and allocates nothing.
"""
from __future__ import annotations

from numba import njit

from rt.jit import KERNEL


@njit(**KERNEL)
def partial_pivot(A, v, k, n, tol):
    """Step ``k`` of a Gaussian elimination with partial pivoting: the pivot is the entry of
    largest magnitude in column ``k`` on or below the diagonal (rows ``k .. n-1``; the first one
    on a tie; NaN entries are never chosen). Returns False, touching nothing, if its magnitude
    is ``<= tol`` (numerically singular); otherwise exchanges its row with row ``k`` in ``A``
    (columns ``0 .. n-1``) and the entries ``k`` and ``p`` of ``v`` (the right-hand side, or the
    permutation record), in place, and returns True.

    Parameters
    ----------
    A : float64[>=n, >=n]
        The matrix under elimination; rows k and p exchanged in place.
    v : float64[>=n]
        The right-hand side or the permutation record; entries k and p exchanged in place.
    k : int
        The elimination step (the pivot's column).
    n : int
        Size of the leading block worked on.
    tol : float
        Pivot magnitudes at or below this are singular.
    """
    p = k
    best = abs(A[k, k])
    for i in range(k + 1, n):
        a = abs(A[i, k])
        if a > best:
            best = a
            p = i
    if best <= tol:
        return False
    if p != k:
        for j in range(n):
            t = A[k, j]
            A[k, j] = A[p, j]
            A[p, j] = t
        u = v[k]
        v[k] = v[p]
        v[p] = u
    return True


@njit(**KERNEL)
def back_substitute(U, y, x, n):
    """Solve ``U x = y`` for the upper triangle of ``U`` (its diagonal included, the entries
    below it ignored): ``x[i] = (y[i] - sum_{j > i} U[i, j] x[j]) / U[i, i]`` from the last row
    up. ``x`` may be ``y`` itself (each ``y[i]`` is read before ``x[i]`` is written).

    Parameters
    ----------
    U : float64[>=n, >=n]
        Upper-triangular matrix (entries below the diagonal ignored).
    y : float64[>=n]
        Right-hand side.
    x : float64[>=n]
        Written: the solution (may be y).
    n : int
        Size of the leading block solved.
    """
    for i in range(n - 1, -1, -1):
        s = y[i]
        for j in range(i + 1, n):
            s -= U[i, j] * x[j]
        x[i] = s / U[i, i]
