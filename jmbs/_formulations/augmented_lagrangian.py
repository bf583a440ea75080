"""Index-1 augmented Lagrangian: penalty iterations with multiplier updates."""

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl

from .._linalg import kept
from .._misc import as_float
from .._model import Model
from .._terms import DenseTerms
from .base import AbstractFormulation, RankState, all_rigid


class AugmentedLagrangian(AbstractFormulation[RankState]):
    """Iterated penalty on the acceleration constraints (Bayo's index-1 form):

    `(M + alpha C^T C) v_dot_k+1 = F - C^T lambda_k + alpha C^T Gamma`,
    `lambda_k+1 = lambda_k + alpha (C v_dot_k+1 - Gamma)`, from `lambda_0 = 0`.

    The leading matrix is positive definite even when `C` is rank deficient,
    so one Cholesky factorisation per evaluation serves all iterations. The
    rows of `C` are normalised to unit length first; the multiplier updates
    stay in the range of the normalised `C`, so starting from zero they
    converge to the multipliers of least norm after that scaling (those of
    `Pseudoinverse` weighted by the squared row norms). Unique reactions are
    the same as with every other formulation.

    **Arguments:**
    - `penalty`: `alpha` relative to the largest mass (rows of `C` are
      normalised first, so it is dimensionless); larger converges faster but
      conditions the leading matrix worse.
    - `iterations`: number of multiplier updates.
    """

    penalty: float = eqx.field(converter=as_float, default=1e7)
    iterations: int = eqx.field(static=True, default=6)

    def init(self, model: Model, q, t) -> RankState:
        return RankState(all_rigid(model))  # nothing to decide from values

    def solve(self, state: RankState, terms: DenseTerms):
        C, M, F = terms.C, terms.M, terms.F
        n = jnp.linalg.norm(C, axis=1)
        d = 1.0 / jnp.where(n > 0, n, 1.0)
        Cn, gamma = C * d[:, None], terms.gamma * d
        alpha = self.penalty * jnp.max(jnp.diagonal(M))
        c, lower = jsl.cho_factor(M + alpha * Cn.T @ Cn)
        factor = (kept(c), lower)

        def update(_, lam):
            v_dot = jsl.cho_solve(factor, F - Cn.T @ lam + alpha * Cn.T @ gamma)
            return lam + alpha * (Cn @ v_dot - gamma)

        lam = jax.lax.fori_loop(0, self.iterations, update, jnp.zeros(C.shape[0]))
        v_dot = jsl.cho_solve(factor, F - Cn.T @ lam + alpha * Cn.T @ gamma)
        return v_dot, lam * d
