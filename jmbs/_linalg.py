"""Linear algebra shared by every analysis: rank decisions, tolerances, small solves.

One home for what used to be decided in many places with different literals:

- the one rank rule (traced: `rank_decision` -> `RankDecision(rank, rel, margin)`;
  host: `numerical_rank`), relative to the largest rank-revealing value, with one
  default `RANK_RTOL`, and the uniqueness criteria's `CRITERION_TOL` (the rank of a
  mechanism's constraints at a configuration is `jmbs/_rank.py`'s `constraint_rank`,
  on the equilibrated `C`);
- the minimum-norm solve of a positive semidefinite system with its
  derivative (`min_norm_solve`), a solve on a static-shape subset of unknowns
  (`solve_masked`) and the 3x3 inverse (`inverse3`).

Tolerances that differ from `RANK_RTOL` on purpose are named here with the
reason; modules import them rather than writing literals.
"""

import collections
import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import checkpoint_name
from jaxtyping import Array, ArrayLike, Float, Int

from ._rotations import cross

# Rank of `C` (or of a related matrix) at a configuration on the constraints:
# singular values below RANK_RTOL * sigma_max count as zero. Redundant rows there
# give singular values at rounding level (1e-16 relative), independent ones stay
# above 1e-8 except within about 1e-8 of a singular configuration.
RANK_RTOL = 1e-8

# Below any positive float64 singular value that matters: guards divisions by the
# largest singular value (zero for an empty or zero matrix) and logarithms.
TINY = 1e-300

# Mass-weighted corrections `M^-1 C^T (C M^-1 C^T)^+ e` (projection onto the
# constraints, consistent velocities): the rank is decided on the eigenvalues of
# `C M^-1 C^T`, the squares of `C`'s (mass-weighted) singular values, so these
# are relative to sigma_max^2. Off the manifold (inside the projection's
# iterations) redundant rows separate from the others by the distance to it;
# 1e-10 (sigma ~ 1e-5 sigma_max) keeps such nearly dependent directions out of
# the correction rather than amplifying the inconsistent part of the residual.
PROJECTION_RTOL = 1e-10
# Consistent velocities are computed on the constraints, where redundant rows
# are dependent to rounding: a tighter 1e-12 (sigma ~ 1e-6 sigma_max) keeps
# nearly singular configurations' independent rows.
VELOCITY_RTOL = 1e-12

# The same two tolerances where a solve cuts singular values rather than eigenvalues
# (the tree's connections, `C B` of the consistent velocity): their square roots.
PROJECTION_SV_RTOL = PROJECTION_RTOL**0.5
VELOCITY_SV_RTOL = VELOCITY_RTOL**0.5

# Gauss-Newton steps of `jmbs.assemble` (pseudoinverse of `C` itself, so relative
# to sigma_max): steps start off the manifold, where redundant rows are only
# nearly dependent; 1e-10 drops them while keeping every independent direction
# of a mechanism that is not within 1e-10 of a singular configuration.
GAUSS_NEWTON_RTOL = 1e-10

# The projection of an initial state onto the constraints (inside `jmbs.simulate`):
# tighter than a step's projection (`jmbs.Projection().tol`, 1e-12) since it runs
# once, with more iterations since the start may be farther off than a step.
INITIAL_PROJECTION_TOL = 1e-13
INITIAL_PROJECTION_ITERATIONS = 50

# An initial state within this (relative to the mechanism's size, or to the largest
# speed) of the constraints is on them to the accuracy of the data: `jmbs.simulate`
# projects it without a warning.
ON_CONSTRAINTS_TOL = 1e-10

# `Elimination`'s diagnosis: a kept row takes part in a dependency where its entry in
# a unit basis vector of null(C_keep^T) exceeds this (the other entries are at
# rounding level).
DEPENDENCY_TOL = 1e-8


# The uniqueness criteria (`||C_X^T N_X||`, the rows of a null-space basis) are zero
# for a unique reaction up to rounding amplified by the conditioning of the kept
# part of `C`: 1e-6 leaves room for a condition number of 1e10 on the equilibrated
# `C` while no non-unique pattern (of norm one per basis vector) falls below it.
CRITERION_TOL = 1e-6

# Decimal digits between a value and its tolerance below which a decision is
# reported as marginal (close to a singular configuration): the solvability reports
# and sweeps, and the samples of `jmbs.sample_configurations`.
MARGINAL_DECADES = 2.0


class RankDecision(eqx.Module):
    """The one rank rule, decided on non-increasing rank-revealing values (singular
    values, or `|R_ii|` of a pivoted QR):

    - `rank`: how many values exceed `rtol` times the reference (the largest value
      unless another is given);
    - `rel`: the values relative to the reference;
    - `margin`: decimal digits between `rtol` and the nearest relative value on
      either side of it (the gap that separates kept from dropped; small near a
      singular configuration).
    """

    rank: Int[Array, ""]
    rel: Float[Array, " k"]
    margin: Float[Array, ""]


def decades(value: Array, tol) -> Array:
    """Decimal digits between a non-negative value and a tolerance."""
    return jnp.abs(jnp.log10(jnp.maximum(value, TINY) / tol))


def rank_decision(values: Float[Array, " k"], rtol: float | Array = RANK_RTOL,
                  ref: float | Array | None = None) -> RankDecision:
    """Traced: `RankDecision` of the non-increasing `values` (see there); `ref` the
    reference they are measured against (default `values[0]`). Values past the end
    (a matrix with more rows than columns) count as zero."""
    values = jnp.asarray(values)
    if values.shape[0] == 0:
        return RankDecision(jnp.asarray(0), values, jnp.asarray(jnp.inf))
    ref = values[0] if ref is None else ref
    rel = values / jnp.maximum(ref, TINY)
    k = rel.shape[0]
    rank = jnp.sum(rel > rtol)
    kept = jnp.where(rank > 0, rel[jnp.maximum(rank - 1, 0)], jnp.inf)
    dropped = jnp.where(rank < k, rel[jnp.minimum(rank, k - 1)], 0.0)
    return RankDecision(rank, rel, jnp.minimum(decades(kept, rtol), decades(dropped, rtol)))


def numerical_rank(A: ArrayLike, rtol: float = RANK_RTOL) -> int:
    """Host-side: the numerical rank of a concrete matrix `A` by the rank rule
    (`rank_decision` on its singular values); 0 for an empty or zero matrix. The rank
    of a mechanism's constraints is `constraint_rank`, on the equilibrated `C`.

    **Returns:** the rank, a Python `int`.
    """
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > rtol * s[0])) if s[0] > 0 else 0


def solve_masked(A: Float[Array, "n n"], b: Float[Array, " n"], keep: Array) -> Float[Array, " n"]:
    """Solve `A x = b` on the kept unknowns (the others are zero): the dropped
    rows and columns are replaced by the identity, so shapes stay static."""
    A = jnp.where(keep[:, None] & keep[None, :], A, jnp.diag(jnp.where(keep, 0.0, 1.0)))
    return jnp.where(keep, jnp.linalg.solve(A, jnp.where(keep, b, 0.0)), 0.0)


def inverse3(J: Float[Array, "3 3"]) -> Float[Array, "3 3"]:
    """Inverse of a 3x3 matrix by its adjugate: a few fused multiply-adds, which
    XLA inlines into the surrounding program (vmapped over bodies), where a
    LAPACK `getrf`/`getri` pair is a custom call per batch with its own
    dispatch and pivoting."""
    adj = cross(J[np.array([1, 2, 0])], J[np.array([2, 0, 1])]).T  # column i: row i+1 x row i+2
    return adj / jnp.dot(J[0], adj[:, 0])


# The name (`jax.ad_checkpoint.checkpoint_name`) of the factorizations that a gradient's
# backward pass keeps: it recomputes the rest of the vector field rather than storing
# every intermediate of every stage (`integrate.vector_field_for_gradient`).
FACTORIZATION = "jmbs.factorization"


def kept(x):
    """`x` (arrays, or a tuple of them), named a factorization the backward pass keeps."""
    return checkpoint_name(x, FACTORIZATION)


def top_mask(n: int, rank: int | None) -> np.ndarray:
    """`(n,)` mask of the `rank` leading positions (all when `rank` is None)."""
    return np.arange(n) < (n if rank is None else rank)


def _eig_pinv(A: Array, rtol, rank: int | None):
    """`(U, inverse eigenvalues, kept)` of the symmetric positive semidefinite `A`."""
    w, U = kept(jnp.linalg.eigh(A))  # ascending
    if rank is None:
        keep = w > rtol * jnp.max(jnp.abs(w), initial=0.0)
    else:
        keep = jnp.asarray(top_mask(w.shape[0], rank)[::-1]) & (w > 0)
    return U, jnp.where(keep, 1.0 / jnp.where(keep, w, 1.0), 0.0), keep


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _min_norm_solve(A: Array, b: Array, rtol: Array, rank: int | None) -> Array:
    U, inv, _ = _eig_pinv(A, rtol, rank)
    return U @ (inv * (U.T @ b))


@_min_norm_solve.defjvp
def _min_norm_solve_jvp(rank, primals, tangents):
    A, b, rtol = primals
    dA, db, _ = tangents
    U, inv, keep = _eig_pinv(A, rtol, rank)

    def pinv(y):
        return U @ (inv * (U.T @ y))

    x = pinv(b)
    # d(A^+) b for symmetric A and dA: -A^+ dA A^+ b + A^+ A^+ dA (I - A A^+) b
    # + (I - A^+ A) dA A^+ A^+ b.
    u = dA @ pinv(x)
    dx = pinv(db - dA @ x) + pinv(pinv(dA @ (b - A @ x))) + u - U @ (keep * (U.T @ u))
    return x, dx


def min_norm_solve(A: Float[Array, "n n"], b: Float[Array, " n"], rtol: float | Array,
                   rank: int | None = None) -> Float[Array, " n"]:
    """Minimum-norm least-squares solution of the symmetric positive semidefinite
    system `A x = b`: on its `rank` largest eigenvalues, or (`rank=None`) on those
    above `rtol * max`.

    Differentiable: the derivative is that of `A^+ b` at constant rank
    (Golub and Pereyra), so it never differentiates the eigenvectors, whose
    derivatives do not exist where eigenvalues repeat (e.g. several redundant
    constraints). `rtol` may be an array (a new value does not recompile); it
    gets no derivative.
    """
    return _min_norm_solve(A, b, jax.lax.stop_gradient(jnp.asarray(rtol, float)), rank)


def band_plan(pattern: np.ndarray) -> tuple[np.ndarray, int] | None:
    """Host-side: a symmetric `(n, n)` sparsity pattern's rows in reverse Cuthill-McKee
    order, padded with -1 to whole blocks, and the block size (the smallest that makes
    the matrix block tridiagonal in that order, at most the ordered pattern's
    bandwidth); None where the blocks would not be at least three (a dense
    factorization is then as cheap)."""
    n = len(pattern)
    degree = pattern.sum(axis=1)
    seen, order = np.zeros(n, bool), []
    for start in np.argsort(degree, kind="stable"):  # one sweep per connected component
        if seen[start]:
            continue
        seen[start], queue = True, collections.deque([start])
        while queue:
            u = queue.popleft()
            order.append(u)
            new = [x for x in np.flatnonzero(pattern[u]) if not seen[x]]
            for x in sorted(new, key=lambda x: degree[x]):
                seen[x] = True
                queue.append(x)
    perm = np.array(order[::-1], int)
    i, j = np.nonzero(pattern[np.ix_(perm, perm)])
    # The smallest blocks that leave every nonzero in a diagonal block or next to one:
    # the ordered bandwidth always does; smaller ones where the order's groups align
    # (the Bricard's six joints of five rows: blocks of 5, bandwidth 9).
    bandwidth = max(int(np.max(np.abs(i - j), initial=0)), 1)
    width = next(w for w in range(1, bandwidth + 1) if np.all(np.abs(i // w - j // w) <= 1))
    blocks = -(-n // width)
    if blocks < 3:
        return None
    return np.concatenate([perm, np.full(blocks * width - n, -1)]), width


# Block size up to which `block_tridiagonal_solve` works on the blocks' entries one by
# one: under `jax.vmap` each entry is then a contiguous vector over the batch, fused
# into a few loops, where LAPACK factors one small matrix per call (A02, blocks of 5,
# 64 instances: 12 against 51 us per solve; compile 2.7 against 0.45 s, growing as w^3;
# the loop carrying whole blocks, unpacked inside each step, compiles 1.5-2x faster
# than one carrying every entry apart and runs ~10 % slower).
SCALAR_BLOCK = 6


def block_tridiagonal_solve(D: Float[Array, "k w w"], S: Float[Array, "k-1 w w"],
                            r: Float[Array, "k w"]) -> Float[Array, "k w"]:
    """Solve the symmetric positive definite block tridiagonal system with diagonal
    blocks `D` (their lower triangles are read) and subdiagonal blocks `S` by its
    block Cholesky factorization (a scan forward, factoring and substituting; one
    back): O(k w^3) instead of O((k w)^3)."""
    w = D.shape[-1]
    if w <= SCALAR_BLOCK:
        return _band_scan(_Entries, D, S, r, _unpack, _pack)
    return _band_scan(_Blocks, D, S, r)


class _Blocks:
    """The block operations on `(w, w)` and `(w,)` arrays (LAPACK's factorizations)."""

    cholesky = staticmethod(jnp.linalg.cholesky)

    @staticmethod
    def solve_lower(L, b, trans=False):
        return jax.scipy.linalg.solve_triangular(L, b, lower=True, trans=int(trans))

    @staticmethod
    def right_solve(L, S):  # S L^-T
        return jax.scipy.linalg.solve_triangular(L, S.T, lower=True).T

    @staticmethod
    def update(D, B, r, y):  # (D - B B^T, r - B y)
        return D - B @ B.T, r - B @ y

    @staticmethod
    def rmatvec(B, x):
        return B.T @ x


class _Entries:
    """The same operations on nested lists of scalars (entry by entry, unrolled)."""

    @staticmethod
    def cholesky(A):
        n = len(A)
        L = [[None] * n for _ in range(n)]
        for j in range(n):
            L[j][j] = jnp.sqrt(A[j][j] - sum(L[j][m] * L[j][m] for m in range(j)))
            for i in range(j + 1, n):
                L[i][j] = (A[i][j] - sum(L[i][m] * L[j][m] for m in range(j))) / L[j][j]
        return L

    @staticmethod
    def solve_lower(L, b, trans=False):
        n, x = len(L), [None] * len(L)
        for i in (reversed(range(n)) if trans else range(n)):
            others = range(i + 1, n) if trans else range(i)
            x[i] = (b[i] - sum((L[m][i] if trans else L[i][m]) * x[m] for m in others)) / L[i][i]
        return x

    @staticmethod
    def right_solve(L, S):  # S L^-T: row i of the result solves L x = S[i]
        return [_Entries.solve_lower(L, row) for row in S]

    @staticmethod
    def update(D, B, r, y):
        w = len(D)
        return ([[D[i][j] - sum(B[i][m] * B[j][m] for m in range(w)) for j in range(w)]
                 for i in range(w)], [r[i] - sum(B[i][m] * y[m] for m in range(w)) for i in range(w)])

    @staticmethod
    def rmatvec(B, x):
        return [sum(B[m][i] * x[m] for m in range(len(x))) for i in range(len(x))]


def _unpack(x):
    """A block's entries as nested lists of scalars (traced arrays of the batch's shape)."""
    return [_unpack(row) for row in x] if x.ndim > 1 else list(x)


def _pack(x):
    """`_unpack`'s inverse; the entries above a factor's diagonal (None) are zeros."""
    if not isinstance(x, list):
        return x
    zero = jnp.zeros_like(jax.tree.leaves(x)[0])
    return jnp.stack([zero if e is None else _pack(e) for e in x])


def _band_scan(ops, D, S, r, unpack=lambda x: x, pack=lambda x: x):
    """The block Cholesky solve of `block_tridiagonal_solve` with the block operations
    `ops`; `unpack` turns a block into what `ops` take and `pack` back, at each step's
    boundaries (a loop carrying every entry of the blocks apart compiles longer)."""

    def forward(carry, x):
        L_prev, y_prev, Dk, Sk, rk = (unpack(a) for a in (*carry, *x))
        Bk = ops.right_solve(L_prev, Sk)
        Ak, rk = ops.update(Dk, Bk, rk, y_prev)
        Lk = ops.cholesky(Ak)
        yk = ops.solve_lower(Lk, rk)
        Lk, Bk, yk = pack(Lk), pack(Bk), pack(yk)
        return (Lk, yk), (Lk, Bk, yk)

    L0 = ops.cholesky(unpack(D[0]))
    L0, y0 = pack(L0), pack(ops.solve_lower(L0, unpack(r[0])))
    _, (Ls, Bs, ys) = jax.lax.scan(forward, (L0, y0), (D[1:], S, r[1:]))
    Ls, ys = jnp.concatenate([L0[None], Ls]), jnp.concatenate([y0[None], ys])
    B_next = jnp.concatenate([Bs, jnp.zeros_like(Bs[:1])])

    def backward(x_next, x):
        Lk, Bn, yk, x_next = (unpack(a) for a in (*x, x_next))
        zk = jax.tree.map(lambda a, b: a - b, yk, ops.rmatvec(Bn, x_next))
        xk = pack(ops.solve_lower(Lk, zk, trans=True))
        return xk, xk

    return jax.lax.scan(backward, jnp.zeros_like(y0), (Ls, B_next, ys), reverse=True)[1]


# From this many velocity coordinates on, the structured solves (`jmbs/_tree_solve.py`:
# `DivideAndConquer`, the projection, the `DCA` uniqueness analysis) replace the dense
# ones by default. benchmarks/bench_structured.py: per evaluation the tree is as fast
# from nv ~ 30 and 4x faster at nv = 63, but each solve compiles ~1 s longer; for a run
# of a few thousand evaluations the first call is faster from nv ~ 100.
STRUCTURED_MIN_NV = 100


def structured(model) -> bool:
    """Whether `model` is large enough for the structured solves by default."""
    return model.nv >= STRUCTURED_MIN_NV


def pad_cols(X: Array, width: int) -> Array:
    """`X` zero-padded to `width` columns (its last axis)."""
    return jnp.pad(X, [(0, 0)] * (X.ndim - 1) + [(0, width - X.shape[-1])])


def compress_factor(X: Array, width: int, with_map: bool = False):
    """A factor with `width` columns and the same `X X^T` (a QR of `X^T`), zero-padded;
    `X` is a batch `(n, rows, cols)` (the divide-and-conquer passes). `with_map`: also
    the map `Q` (`(n, cols, width)`, orthonormal columns) with `X = X' Q^T`, which takes
    the factor's columns back to `X`'s."""
    n, _, cols = X.shape
    if not with_map:
        return pad_cols(jnp.linalg.qr(X.mT, mode="r").mT if cols > width else X, width)
    if cols > width:
        Q, R = jnp.linalg.qr(X.mT)
        return pad_cols(R.mT, width), pad_cols(Q, width)
    return pad_cols(X, width), jnp.broadcast_to(jnp.eye(cols, width), (n, cols, width))


def _rotation(r1: Array, r2: Array, c: int):
    """The plane rotation of the rows `r1`, `r2` (`(n, m)`) that makes their first `c`
    columns orthogonal, with the angle that maximises `|r1'|` (so the larger comes
    first): `(r1', r2', cos, sin, (a, b, g))`, `r1' = cos r1 - sin r2`, `r2' = sin r1 +
    cos r2`, and the squared norms and the dot product it was computed from."""
    a, b = jnp.sum(r1[:, :c] ** 2, axis=1), jnp.sum(r2[:, :c] ** 2, axis=1)
    g = jnp.sum(r1[:, :c] * r2[:, :c], axis=1)
    theta = 0.5 * jnp.arctan2(-2.0 * g, a - b)
    cs, sn = jnp.cos(theta), jnp.sin(theta)
    return cs[:, None] * r1 - sn[:, None] * r2, sn[:, None] * r1 + cs[:, None] * r2, cs, sn, (a, b, g)


def _rotate_rows(r1: Array, r2: Array):
    """One-sided Jacobi on the rows `r1`, `r2` (`(n, c)`): `(p1, p2, cos, sin)` with
    `p1 = cos r1 - sin r2`, `p2 = sin r1 + cos r2` orthogonal and `|p1| >= |p2|` (the
    angle is the one that maximises `|p1|`, so the order comes with it). Two sweeps:
    after one, rows whose singular values differ by a factor `k` are orthogonal only
    to `k` times the rounding (the small row carries the large one's rounding error;
    1e-2 at `k = 1e14`), after the second to rounding."""
    cos, sin = jnp.ones(r1.shape[0]), jnp.zeros(r1.shape[0])
    for _ in range(2):
        r1, r2, c, s, _ = _rotation(r1, r2, r1.shape[1])
        cos, sin = cos * c - sin * s, sin * c + cos * s
    return r1, r2, cos, sin


JACOBI_MAX_SWEEPS = 40


def jacobi_svd(F: Float[Array, "n J c"]) -> tuple[Array, Array, Array]:
    """The SVD of a batch of wide matrices (`J <= c`) by one-sided Jacobi (Hestenes) on their
    rows: cyclic sweeps over the row pairs, each pair rotated orthogonal (`_rotate_rows`'
    angle), until every pair is orthogonal to `J` roundings of its norms (quadratic
    convergence: 5-8 sweeps for 7 rows; at most `JACOBI_MAX_SWEEPS`). `U` (`J x J`) is the
    transpose of the accumulated rotations, `s` the rows' norms, `Vh` (`J x c`) the rows
    normalized (zero where `s` is), sorted by `s` descending. Backward stable, as LAPACK's;
    element-wise over the batch, so on a GPU a few fused kernels per rotation where the
    batched LAPACK-style SVD (cuSOLVER's Jacobi) costs 10x more (the mobile robot's 7 x 14
    connection, 131072 configurations: 91 ms on one H200). The number of sweeps depends
    on the data (a `while_loop`): not for reverse-mode differentiation."""
    n, J, c = F.shape
    X = jnp.concatenate([F, jnp.broadcast_to(jnp.eye(J, dtype=F.dtype), (n, J, J))], axis=2)
    pairs = [(i, j) for i in range(J) for j in range(i + 1, J)]
    tol = J * jnp.finfo(F.dtype).eps

    def sweep(state):  # the rows apart, so that a rotation reads and writes its two only
        rows, _, k = state
        rows, off = list(rows), jnp.zeros(n, F.dtype)
        for i, j in pairs:
            rows[i], rows[j], _, _, (a, b, g) = _rotation(rows[i], rows[j], c)
            ab = jnp.sqrt(a * b)
            off = jnp.maximum(off, jnp.abs(g) / jnp.where(ab > 0, ab, 1.0))
        return tuple(rows), jnp.max(off), k + 1

    rows = jax.lax.while_loop(lambda st: (st[1] > tol) & (st[2] < JACOBI_MAX_SWEEPS), sweep,
                              (tuple(X[:, i] for i in range(J)), jnp.array(jnp.inf, F.dtype), 0))[0]
    X = jnp.stack(rows, axis=1)
    s = jnp.sqrt(jnp.sum(X[:, :, :c] ** 2, axis=2))
    order = jnp.argsort(-s, axis=1)
    X, s = jnp.take_along_axis(X, order[:, :, None], axis=1), jnp.take_along_axis(s, order, axis=1)
    return X[:, :, c:].mT, s, X[:, :, :c] / jnp.where(s > 0, s, 1.0)[:, :, None]


def closed_form_svd(J: int, c: int) -> bool:
    """Whether `small_svd` decomposes `J x c` matrices in closed form (else LAPACK)."""
    return J <= 2 and J <= c


def small_svd(F: Float[Array, "n J c"], full_matrices: bool = False) -> tuple[Array, Array, Array]:
    """`jnp.linalg.svd(F, full_matrices)` of a batch of small matrices `(n, J, c)`,
    singular values descending.

    The divide-and-conquer passes decompose one small connection matrix per node,
    mostly of one or two rows (a planar joint). For wide ones of one or two rows it is
    closed-form: two sweeps of one-sided Jacobi (Hestenes) rotate the rows orthogonal
    to rounding, and their norms are the singular values (backward stable, as
    LAPACK's; `U` is then `J x J` and `Vh` `J x c` either way). These are a few fused
    element-wise operations over the whole batch, where LAPACK's `gesdd` is one call
    per matrix, which at this size costs far more than its arithmetic (A02 with
    N = 40: 81 two-row matrices, 137 us). Other shapes go to LAPACK."""
    n, J, c = F.shape
    if not closed_form_svd(J, c) or n == 0:
        return jnp.linalg.svd(F, full_matrices=full_matrices)
    if J == 1:
        s = jnp.sqrt(jnp.sum(F**2, axis=2))
        return jnp.ones((n, 1, 1)), s, F / jnp.where(s > 0, s, 1.0)[:, :, None]
    p1, p2, cos, sin = _rotate_rows(F[:, 0], F[:, 1])
    P = jnp.stack([p1, p2], axis=1)
    s = jnp.sqrt(jnp.sum(P**2, axis=2))
    U = jnp.stack([jnp.stack([cos, sin], axis=1), jnp.stack([-sin, cos], axis=1)], axis=1)
    return U, s, P / jnp.where(s > 0, s, 1.0)[:, :, None]
