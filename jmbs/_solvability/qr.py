"""QR method of Wojtyra & Frączek: column-pivoted QR of `C`, `B_X = C_X^T Q_X^col`."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import jax.scipy.linalg as jsl

from .._linalg import CRITERION_TOL, RANK_RTOL, rank_decision
from .._misc import as_float
from .base import AbstractSolvabilityMethod, columns_from, nullspace_decisions


class QR(AbstractSolvabilityMethod):
    """`C E = Q R` with column pivoting; the last `p` columns of `Q` (`Q^col`) span
    `null(C^T)`; set `X` unique iff `B_X = C_X^T Q_X^col` vanishes.

    **Arguments:**
    - `rtol`: diagonal entries of `R` below `rtol * |R_11|` count as zero.
    - `ctol`: tolerance of the uniqueness criteria.
    """

    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    ctol: float = eqx.field(converter=as_float, default=CRITERION_TOL)
    name: ClassVar[str] = "qr"

    def decide(self, C, sets):
        Q, R, _ = jsl.qr(C, mode="full", pivoting=True)
        rd = rank_decision(jnp.abs(jnp.diagonal(R)), self.rtol)
        N = Q * columns_from(C.shape[0], rd.rank)[None, :]
        return nullspace_decisions(self, C, N, sets, rd)
