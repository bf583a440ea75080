"""Kinetostatic (free-body-diagram) method of Pękal & Frączek: the null space of
the equilibrium matrix `A`, built body by body from the reaction wrenches."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from .._kinetostatics import kinetostatic_matrix
from .._linalg import CRITERION_TOL, RANK_RTOL, TINY, rank_decision
from .._misc import as_float
from .base import AbstractSolvabilityMethod, columns_from, nullspace_decisions


class Kinetostatic(AbstractSolvabilityMethod):
    """`A x = b` with `A` from the free-body diagrams (`jmbs.kinetostatic_matrix`);
    `N` spans `null(A)` (SVD); studied element `S` is unique iff
    `A_S N_S = 0` (and `rank(A_S)` is full, reported as `set_rank`).

    **Arguments:**
    - `rtol`: singular values below `rtol * sigma_max` count as zero.
    - `ctol`: tolerance of the uniqueness criteria.
    """

    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    ctol: float = eqx.field(converter=as_float, default=CRITERION_TOL)
    name: ClassVar[str] = "kinetostatic"

    @staticmethod
    def matrix(model, q, t, C=None):
        """`A^T`, from the free-body diagrams (a given `C` is not this matrix)."""
        return kinetostatic_matrix(model, q, t).T

    def decide(self, C, sets):
        A = C.T  # the equilibrated A (balance equations x unknowns)
        _, s, Vt = jnp.linalg.svd(A, full_matrices=True)
        rd = rank_decision(s, self.rtol)
        N = Vt.T * columns_from(A.shape[1], rd.rank)[None, :]
        thresh = self.rtol * jnp.maximum(s[0], TINY)
        set_rank = jax.vmap(lambda m: jnp.sum(jnp.linalg.svd(A * m[None, :], compute_uv=False)
                                              > thresh))(sets.astype(A.dtype))
        return nullspace_decisions(self, C, N, sets, rd, set_rank)
