"""SVD method: the left singular vectors of `C` beyond its rank span `null(C^T)`."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._formulations.base import as_float
from .base import AbstractSolvabilityMethod, columns_from, nullspace_decisions, rank_from_values


class SVD(AbstractSolvabilityMethod):
    """`C = U S V^T`; `N = U[:, r:]`; set `X` unique iff `C_X^T N_X = 0`.

    **Arguments:**
    - `rtol`: singular values below `rtol * sigma_max` count as zero.
    - `ctol`: tolerance of the uniqueness criteria.
    """

    rtol: float = eqx.field(converter=as_float, default=1e-8)
    ctol: float = eqx.field(converter=as_float, default=1e-6)
    name: ClassVar[str] = "svd"

    def decide(self, C, sets):
        U, s, _ = jnp.linalg.svd(C, full_matrices=True)
        rank, rel, margin = rank_from_values(s, self.rtol)
        N = U * columns_from(C.shape[0], rank)[None, :]
        return nullspace_decisions(self, C, N, sets, rank, rel, margin)
