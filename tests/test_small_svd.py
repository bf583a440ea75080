"""The closed-form SVD of one- and two-row matrices (`jmbs.internal.small_svd`, which the
divide-and-conquer solves and the DCA analysis decompose every connection with) and the
one-sided Jacobi SVD of wider connections (`jmbs.internal.jacobi_svd`, the DCA's on an
accelerator) against NumPy's LAPACK SVD, for singular values from equal to 1e16 apart.

What a backward-stable SVD guarantees, and what is asserted: singular values within a
few roundings of the largest one (`eps * sigma_1`) of NumPy's, descending (to a rounding); `U diag(s) Vh`
equal to the input to a few roundings; `U` orthogonal and the rows of `Vh` that belong to
positive singular values orthonormal, to a few roundings. The last is the documented
failure mode of a single Jacobi sweep: with singular values 1e14 apart the small row
keeps the large one's rounding error and `Vh` is orthogonal only to about 1e-2.
"""

import jax.numpy as jnp
import numpy as np
import pytest

from jmbs.internal import jacobi_svd, small_svd

EPS = np.finfo(float).eps
RATIOS = [10.0**e for e in range(0, 17)]  # sigma_1 / sigma_2: 1 to 1e16


def _matrices(J: int, c: int, n: int, seed: int) -> np.ndarray:
    """`n` random `(J, c)` matrices for each ratio in RATIOS, `sigma_1` between 1e-3 and 1e3,
    the others geometrically down to `sigma_1 / ratio`, with random singular vectors."""
    rng = np.random.default_rng(seed)
    out = []
    for ratio in RATIOS:
        U = np.linalg.qr(rng.standard_normal((n, J, J)))[0]
        V = np.linalg.qr(rng.standard_normal((n, c, c)))[0][:, :, :J]
        scale = 10.0 ** rng.uniform(-3, 3, n)
        s = scale[:, None] * (ratio ** -np.linspace(0.0, 1.0, J))[None, :]
        out.append(np.einsum("nij,nj,nkj->nik", U, s, V))
    return np.concatenate(out)


def _check(F: np.ndarray, tol: float = 8.0, svd=small_svd):
    U, s, Vh = (np.asarray(x) for x in svd(jnp.asarray(F)))
    n, J, c = F.shape
    assert U.shape == (n, J, J) and s.shape == (n, J) and Vh.shape == (n, J, c)
    ref = np.linalg.svd(F, compute_uv=False)
    big = np.maximum(ref[:, :1], 1e-300)
    # descending (equal singular values may come out in either order, a rounding apart)
    assert np.all(np.diff(s, axis=1) <= 2 * EPS * big), "not descending"
    err = np.abs(s - ref) / big
    assert err.max() <= tol * EPS, (err.max() / EPS, F[np.argmax(err.max(axis=1))])
    rec = np.abs(np.einsum("nij,nj,njk->nik", U, s, Vh) - F).max(axis=(1, 2)) / big[:, 0]
    assert rec.max() <= tol * EPS, rec.max() / EPS
    eye = np.eye(J)
    assert np.abs(np.einsum("nji,njk->nik", U, U) - eye).max() <= tol * EPS
    positive = s > 0
    gram = np.einsum("nij,nkj->nik", Vh, Vh) - eye
    both = positive[:, :, None] & positive[:, None, :]
    assert np.abs(np.where(both, gram, 0.0)).max() <= tol * EPS, np.abs(np.where(both, gram, 0)).max() / EPS
    # A zero singular value (an exactly singular input) leaves its row of Vh zero: the
    # callers use only the rows of singular values above their rank tolerance.
    assert np.all(np.where(positive[:, :, None], 0.0, Vh) == 0.0)
    return s, ref


@pytest.mark.parametrize("J,c", [(1, 1), (1, 3), (2, 2), (2, 3), (2, 6)])
def test_small_svd_matches_numpy_across_singular_value_ratios(J, c):
    _check(_matrices(J, c, 40, seed=10 * J + c))


def test_small_svd_of_exactly_singular_and_zero_matrices():
    rows = np.array([[0.3, -1.2, 2.0], [1e-9, 4.0, 0.0]])
    F = np.stack([np.stack([rows[0], 2.5 * rows[0]]),           # proportional rows
                  np.stack([rows[1], np.zeros(3)]),             # a zero row
                  np.zeros((2, 3)),                              # the zero matrix
                  np.stack([rows[0], rows[0] * (1 + EPS)])])     # equal to a rounding
    s, ref = _check(F)
    assert np.all(s[:3, 1] <= 8 * EPS * np.maximum(s[:3, 0], 1e-300))
    assert np.all(s[2] == 0.0)


@pytest.mark.parametrize("J,c", [(3, 3), (3, 6), (5, 6), (7, 14)])
def test_jacobi_svd_matches_numpy_across_singular_value_ratios(J, c):
    _check(_matrices(J, c, 6, seed=100 + 10 * J + c), svd=jacobi_svd)


def test_jacobi_svd_of_exactly_singular_and_zero_matrices():
    rng = np.random.default_rng(3)
    r = rng.standard_normal((3, 5))
    F = np.stack([np.stack([r[0], 2.5 * r[0], r[1], -r[0]]),        # rank 2, repeated rows
                  np.stack([r[0], np.zeros(5), r[1], np.zeros(5)]),  # zero rows
                  np.zeros((4, 5)),                                  # the zero matrix
                  np.stack([r[0], r[1], r[0] + r[1], r[2]]),         # a row the sum of two
                  np.stack([r[0], r[0] * (1 + EPS), r[1], r[2]])])   # equal to a rounding
    s, ref = _check(F, svd=jacobi_svd)
    rank = [2, 2, 0, 3, 3]
    for k, r_k in enumerate(rank):
        assert np.all(s[k, r_k:] <= 8 * EPS * max(s[k, 0], 1e-300)), (k, s[k])
