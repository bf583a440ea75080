"""Rank-comparison method: `rank(C_X) + rank(C_Y) = rank(C)` (direct sum)."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from .._linalg import CRITERION_TOL, RANK_RTOL, TINY, decades, rank_decision
from .._misc import as_float
from .base import AbstractSolvabilityMethod, Decisions


class RankComparison(AbstractSolvabilityMethod):
    """The reaction of set `X` is unique iff `span(C_X^T)` and `span(C_Y^T)` (`Y`
    the other rows) meet only in zero: `rank(C_X) + rank(C_Y) - rank(C) = 0`.
    A component `k` is unique iff removing its row lowers the rank.

    All ranks use the same absolute threshold `rtol * sigma_max(C)`. The
    margin of a decision is the smallest singular-value gap of the matrices it
    compared. It computes one SVD per studied set, per complement and per
    component: the most expensive method, kept as the reference.

    **Arguments:**
    - `rtol`: singular values below `rtol * sigma_max(C)` count as zero.
    - `ctol`: unused (the criterion is an integer rank defect); kept for the
      common interface.
    """

    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    ctol: float = eqx.field(converter=as_float, default=CRITERION_TOL)
    name: ClassVar[str] = "rank"

    def criterion(self) -> str:
        return "criterion: rank(C_X) + rank(C_Y) - rank(C), 0 when unique"

    def decide(self, C, sets):
        nc = C.shape[0]
        s = jnp.linalg.svd(C, compute_uv=False)
        rd = rank_decision(s, self.rtol)
        rank, rel, rank_margin = rd.rank, rd.rel, rd.margin
        thresh = self.rtol * jnp.maximum(s[0], TINY)

        def rank_of(mask):
            sv = jnp.linalg.svd(C * mask[:, None], compute_uv=False)
            r = jnp.sum(sv > thresh)
            kept = jnp.where(r > 0, sv[jnp.maximum(r - 1, 0)], jnp.inf)
            dropped = jnp.where(r < sv.shape[0], sv[jnp.minimum(r, sv.shape[0] - 1)], 0.0)
            return r, jnp.minimum(decades(kept, thresh), decades(dropped, thresh))

        m = sets.astype(C.dtype)
        rX, mX = jax.vmap(rank_of)(m)
        rY, mY = jax.vmap(rank_of)(1.0 - m)
        defect = rX + rY - rank
        margin = jnp.minimum(jnp.minimum(mX, mY), rank_margin)
        rK, mK = jax.vmap(rank_of)(1.0 - jnp.eye(nc, dtype=C.dtype))
        comp_defect = rK - (rank - 1)  # 0 when row k is independent of the others
        return Decisions(rank, rel, rank_margin, defect == 0, defect.astype(C.dtype), margin, rX,
                         comp_defect == 0, comp_defect.astype(C.dtype),
                         jnp.minimum(mK, rank_margin))
