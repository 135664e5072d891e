"""The elimination steps shared by the hexapod's solve6 and the mechanism's LU
(rt/dynamics/linalg.py) against plain numpy."""
import numpy as np
import pytest

from rt.dynamics import linalg as LA


def _eliminate(A, b):
    """Gaussian elimination with LA.partial_pivot and LA.back_substitute (the shape of solve6)."""
    n = len(b)
    for k in range(n):
        if not LA.partial_pivot(A, b, k, n, 1e-14 * np.abs(A).max()):
            return False
        for i in range(k + 1, n):
            f = A[i, k] / A[k, k]
            A[i, k:] -= f * A[k, k:]
            b[i] -= f * b[k]
    x = np.empty(n)
    LA.back_substitute(A, b, x, n)
    return x


@pytest.mark.parametrize("n", [1, 2, 4, 6])
def test_elimination_solves_like_numpy(n):
    rng = np.random.default_rng(n)
    for _ in range(50):
        A = rng.normal(size=(n, n))
        b = rng.normal(size=n)
        x = _eliminate(A.copy(), b.copy())
        assert np.allclose(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-9)


def test_pivot_is_the_largest_magnitude_below_the_diagonal_first_on_ties():
    A = np.array([[1.0, 0.0, 0.0], [-3.0, 1.0, 0.0], [3.0, 0.0, 1.0]])
    v = np.array([10.0, 20.0, 30.0])
    assert LA.partial_pivot(A, v, 0, 3, 0.0)
    assert np.array_equal(A[0], [-3.0, 1.0, 0.0]) and np.array_equal(A[1], [1.0, 0.0, 0.0])
    assert np.array_equal(v, [20.0, 10.0, 30.0])
    # rows above k are not candidates
    B = np.array([[9.0, 0.0], [0.5, 1.0]])
    w = np.array([0.0, 1.0])
    assert LA.partial_pivot(B, w, 1, 2, 0.0)
    assert np.array_equal(B, [[9.0, 0.0], [0.5, 1.0]]) and np.array_equal(w, [0.0, 1.0])


def test_singular_pivot_refused_and_nothing_touched():
    A = np.array([[1e-20, 1.0], [-2e-20, 1.0]])
    v = np.array([1.0, 2.0])
    A0, v0 = A.copy(), v.copy()
    assert not LA.partial_pivot(A, v, 0, 2, 1e-14)
    assert np.array_equal(A, A0) and np.array_equal(v, v0)
    # a NaN column is never chosen: the pivot stays on the diagonal
    C = np.array([[1.0, 0.0], [np.nan, 1.0]])
    u = np.array([0.0, 1.0])
    assert LA.partial_pivot(C, u, 0, 2, 0.0)
    assert C[0, 0] == 1.0 and np.isnan(C[1, 0])


def test_back_substitution_upper_triangle_in_place():
    rng = np.random.default_rng(3)
    U = np.triu(rng.normal(size=(5, 5))) + 5 * np.eye(5)
    L = np.tril(rng.normal(size=(5, 5)), -1)       # ignored
    y = rng.normal(size=5)
    x = y.copy()
    LA.back_substitute(U + L, x, x, 5)               # x may be y itself
    assert np.allclose(U @ x, y, atol=1e-12)
