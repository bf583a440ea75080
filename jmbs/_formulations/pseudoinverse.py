"""Pseudoinverse: the minimum-norm multipliers of `C M^-1 C^T lambda = C M^-1 F - Gamma`."""

from collections.abc import Mapping

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._linalg import RANK_RTOL, min_norm_solve
from .._misc import as_float
from .._model import Model
from .._rank import constraint_rank
from .._terms import DenseTerms
from .base import AbstractFormulation, AbstractFormulationState, all_rigid, require_values, row_values


def _frozen(weights):
    """Weights in a hashable form: a number, or sorted `(key, value)` pairs."""
    if weights is None or not isinstance(weights, Mapping | tuple):
        return None if weights is None else float(weights)
    return tuple(sorted((str(k), float(v)) for k, v in dict(weights).items()))


class PseudoinverseState(AbstractFormulationState):
    """`Pseudoinverse`'s decisions: the rank and the row weights (an array: a new value
    does not recompile; `None`: unweighted)."""

    rigid: tuple[bool, ...] = eqx.field(static=True)
    rank: int | None = eqx.field(static=True)
    weights: Float[Array, " nc"] | None = None


class Pseudoinverse(AbstractFormulation[PseudoinverseState]):
    """`lambda = (C M^-1 C^T)^+ (C M^-1 F - Gamma)`, `v_dot = M^-1 (F - C^T lambda)`
    (paper 004, eq. 38, with the inverse replaced by the pseudoinverse).

    Among all multipliers that produce the motion, this picks the one of
    least norm `lambda^T W lambda`.

    **Arguments:**
    - `weights`: `None` (plain norm), a positive number per element or per
      `"element.component"` (a mapping), giving `W = diag(weights)`: a larger
      weight makes that component carry less of the redundant load.
    - `rtol`: tolerance of the rank of `C`, decided once by `init` at the
      initial state and kept for the run (see `NullSpaceProjection`): the
      `rank` largest eigenvalues of `C M^-1 C^T` are inverted.
    - `rank`: the rank of `C`, if known (then `init` does not look at values).
    """

    weights: float | tuple[tuple[str, float], ...] | None = eqx.field(static=True, converter=_frozen,
                                                              default=None)
    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    rank: int | None = eqx.field(static=True, default=None)

    def init(self, model: Model, q, t) -> PseudoinverseState:
        r = self.rank
        if r is None:
            require_values(self, model, q, t)
            r = constraint_rank(model, q, t, rtol=self.rtol)
        if self.weights is None:
            return PseudoinverseState(all_rigid(model), r)
        w = self.weights
        w = row_values(model, dict(w) if isinstance(w, tuple) else w, "Pseudoinverse(weights=...)")
        if np.any(w <= 0):
            bad = sorted({model.element_of_row(i) for i in np.flatnonzero(w <= 0)})
            raise ValueError(f"Pseudoinverse(weights=...): weights must be positive; "
                             f"check the elements {', '.join(bad)}")
        return PseudoinverseState(all_rigid(model), r, weights=np.asarray(w))

    def solve(self, state: PseudoinverseState, terms: DenseTerms):
        C, Minv, F = terms.C, terms.Minv, terms.F
        if state.weights is None:
            s, Cs = 1.0, C
        else:
            s = 1.0 / jnp.sqrt(state.weights)
            Cs = C * s[:, None]
        # The rank is given, so the eigenvalue tolerance only guards exact zeros.
        mu = min_norm_solve(Cs @ Minv @ Cs.T, Cs @ (Minv @ F) - s * terms.gamma, 0.0, state.rank)
        lam = s * mu
        return Minv @ (F - C.T @ lam), lam
