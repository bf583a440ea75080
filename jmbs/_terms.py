"""The dynamics terms at one state, what every formulation and stabilization reads:
`M`, `F`, `C`, `Gamma`, `Phi` and `C v + b` (dense) or the blocks of `C` and of `M`
(structured), and Baumgarte's feedback in `Gamma`."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._assembly import (
    blocks_matvec,
    body_mass,
    constraint_terms,
    constraint_terms_blocks,
    generalized_forces,
    inverse_mass_matrix,
    mass_matrix,
    phi,
)
from ._model import Model


class DynamicsTerms(eqx.Module):
    """Everything a formulation needs at one state `(q, v, t)`.

    `gamma` already contains the stabilization terms; `phi` is zero on the
    Pfaffian rows; `velocity_error` is `C v + b`.
    """

    M: Float[Array, "nv nv"] | None
    Minv: Float[Array, "nv nv"] | None
    F: Float[Array, " nv"]
    C: Float[Array, "nc nv"] | None
    gamma: Float[Array, " nc"]
    phi: Float[Array, " nc"]
    velocity_error: Float[Array, " nc"]
    # The structured form (`dense=False`): `C`'s nonzero blocks (`constraint_blocks`'
    # layout) and the bodies' mass matrices; `M`, `Minv`, `C` are then None.
    blocks: Float[Array, "P nvb"] | None = None
    body_mass: Float[Array, "nb nvb nvb"] | None = None


def _is_zero(x) -> bool:
    """Whether `x` is a Python or NumPy zero (an array leaf may be traced: not known)."""
    return isinstance(x, (int, float, np.ndarray, np.number)) and not np.any(x)


def baumgarte_gamma(terms: DynamicsTerms, alpha, beta) -> DynamicsTerms:
    """`terms` with Baumgarte's feedback in `Gamma`: `Gamma - 2 alpha (C v + b) - beta^2 Phi`."""
    gamma = terms.gamma - 2.0 * alpha * terms.velocity_error - beta**2 * terms.phi
    return eqx.tree_at(lambda x: x.gamma, terms, gamma)


def dynamics_terms(model: Model, q: Array, v: Array, t: Array, alpha: float = 0.0,
                   beta: float = 0.0, with_phi: bool = True, dense: bool = True) -> DynamicsTerms:
    """The terms at `(q, v, t)`; `alpha, beta` are Baumgarte's gains:
    `C v_dot = Gamma - 2 alpha (C v + b) - beta^2 Phi`. With `with_phi=False`
    (and `beta = 0`) `Phi` is not evaluated and left at zero (less to compile
    inside an integrator). With `dense=False` no dense matrix is formed: `C` as
    its blocks, `M` as the bodies' blocks (for `jmbs.DivideAndConquer`)."""
    hol = jnp.asarray(model.holonomic_rows)
    residual = (jnp.where(hol, phi(model, q, t), 0.0) if with_phi or not _is_zero(beta)
                else jnp.zeros(model.nc))
    F = generalized_forces(model, q, v, t)
    if dense:
        C, b, gamma = constraint_terms(model, q, v, t)
        terms = DynamicsTerms(mass_matrix(model), inverse_mass_matrix(model), F, C, gamma,
                              residual, C @ v + b)
    else:
        blocks, b, gamma = constraint_terms_blocks(model, q, v, t)
        terms = DynamicsTerms(None, None, F, None, gamma, residual,
                              blocks_matvec(model, blocks, v) + b, blocks, body_mass(model))
    if _is_zero(alpha) and _is_zero(beta):
        return terms
    return baumgarte_gamma(terms, alpha, beta)
