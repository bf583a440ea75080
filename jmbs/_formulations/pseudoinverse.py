"""Pseudoinverse: the minimum-norm multipliers of `C M^-1 C^T lambda = C M^-1 F - Gamma`."""

from collections.abc import Mapping

import jax.numpy as jnp
import numpy as np

from .._model import Model
from .base import AbstractFormulation, DynamicsTerms, constraint_rank, min_norm_solve, row_values


class Pseudoinverse(AbstractFormulation):
    """`lambda = (C M^-1 C^T)^+ (C M^-1 F - Gamma)`, `v_dot = M^-1 (F - C^T lambda)`
    (paper 004, eq. 38, with the inverse replaced by the pseudoinverse).

    Among all multipliers that produce the motion, this picks the one of
    least norm `lambda^T W lambda`.

    **Arguments:**
    - `weights`: `None` (plain norm), a positive number per element or per
      `"element.component"` (a mapping), giving `W = diag(weights)`: a larger
      weight makes that component carry less of the redundant load.
    - `rtol`: tolerance of the rank of `C`, decided once by `prepare` at the
      initial state and kept for the run (see `NullSpaceProjection`): the
      `rank` largest eigenvalues of `C M^-1 C^T` are inverted.
    - `rank`: set by `prepare`, or given (e.g. under `jax.vmap` over models).
    """

    weights: Mapping[str, float] | None = None
    rtol: float = 1e-8
    rank: int | None = None
    row_weights: tuple[float, ...] | None = None  # resolved by `prepare`

    def prepare(self, model: Model, q, t) -> "Pseudoinverse":
        r = constraint_rank(model, q, t, self.rtol)
        if self.weights is None:
            return Pseudoinverse(None, self.rtol, r)
        w = row_values(model, self.weights, "Pseudoinverse(weights=...)")
        if np.any(w <= 0):
            bad = sorted({model.element_of_row(i) for i in np.flatnonzero(w <= 0)})
            raise ValueError(f"Pseudoinverse(weights=...): weights must be positive; "
                             f"check the elements {', '.join(bad)}")
        return Pseudoinverse(self.weights, self.rtol, r, tuple(float(x) for x in w))

    @property
    def prepared(self) -> bool:
        return self.rank is not None and (self.weights is None or self.row_weights is not None)

    def solve(self, terms: DynamicsTerms):
        C, Minv, F = terms.C, terms.Minv, terms.F
        s = 1.0 if self.row_weights is None else 1.0 / jnp.sqrt(jnp.asarray(self.row_weights))
        Cs = C * jnp.reshape(s, (-1, 1)) if self.row_weights is not None else C
        mu = min_norm_solve(Cs @ Minv @ Cs.T, Cs @ (Minv @ F) - s * terms.gamma, self.rtol**2,
                            self.rank)
        lam = s * mu
        return Minv @ (F - C.T @ lam), lam
