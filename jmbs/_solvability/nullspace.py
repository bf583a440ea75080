"""Null-space method: a basic (Gauss–Jordan-like) basis of `null(C^T)` from the
independent rows of `C`, found by a column-pivoted QR of `C^T`."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import jax.scipy.linalg as jsl

from .._linalg import CRITERION_TOL, RANK_RTOL, rank_decision
from .._misc import as_float
from .base import AbstractSolvabilityMethod, columns_from, nullspace_decisions


class NullSpace(AbstractSolvabilityMethod):
    """Null-space method (Pękal & Frączek): unique components are the zero rows
    of a null-space matrix `N` of `C^T`; a set `X` is unique iff `C_X^T N_X = 0`.

    `C^T P = Q [R11 R12; 0 0]` picks `r` independent rows of `C`; every other
    row `k` gives the null vector `P [-R11^{-1} R12 e_k; e_k]` (its
    dependency on the independent rows), normalised. The basis is not
    orthogonal; any basis serves the criterion.

    **Arguments:**
    - `rtol`: diagonal entries of `R` below `rtol * |R_11|` count as zero.
    - `ctol`: tolerance of the uniqueness criteria.
    """

    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    ctol: float = eqx.field(converter=as_float, default=CRITERION_TOL)
    name: ClassVar[str] = "nullspace"

    def decide(self, C, sets):
        nc, nv = C.shape
        R, perm = jsl.qr(C.T, mode="r", pivoting=True)
        rd = rank_decision(jnp.abs(jnp.diagonal(R)), self.rtol)
        R = jnp.zeros((nc, nc)).at[: min(nc, nv)].set(R[: min(nc, nv)])
        free = columns_from(nc, rd.rank)
        # Rows past the rank become identity rows: the triangular system then
        # reads R11 x1 + R12 x2 = 0, x2 = e_k.
        R = jnp.where(free[:, None], jnp.eye(nc), R)
        X = jsl.solve_triangular(R, jnp.diag(free.astype(C.dtype)), lower=False)
        N = jnp.zeros_like(X).at[perm].set(X)
        norms = jnp.linalg.norm(N, axis=0)
        N = N / jnp.where(norms > 0, norms, 1.0)[None, :]
        return nullspace_decisions(self, C, N, sets, rd)
