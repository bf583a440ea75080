"""SVD method: the left singular vectors of `C` beyond its rank span `null(C^T)`."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._linalg import CRITERION_TOL, RANK_RTOL, rank_decision
from .._misc import as_float
from .base import AbstractSolvabilityMethod, columns_from, nullspace_decisions


class SVD(AbstractSolvabilityMethod):
    """`C = U S V^T`; `N = U[:, r:]`; set `X` unique iff `C_X^T N_X = 0`.

    **Arguments:**
    - `rtol`: singular values below `rtol * sigma_max` count as zero.
    - `ctol`: tolerance of the uniqueness criteria.
    """

    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    ctol: float = eqx.field(converter=as_float, default=CRITERION_TOL)
    name: ClassVar[str] = "svd"

    def decide(self, C, sets):
        U, s, _ = jnp.linalg.svd(C, full_matrices=True)
        rd = rank_decision(s, self.rtol)
        N = U * columns_from(C.shape[0], rd.rank)[None, :]
        return nullspace_decisions(self, C, N, sets, rd)
