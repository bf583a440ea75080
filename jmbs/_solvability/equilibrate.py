"""Unit-independent scaling of the constraint matrix before any rank decision.

Lengths and angles mix in `C`: a rotational column has the units of its row
times a length. Multiplying each body's rotational columns by the body's
characteristic length makes every column a velocity, so a change of the
length unit scales `C` by row factors only; an exact normalisation of the rows
then removes them. What follows (Ruiz's alternating square-root scaling of
rows and columns) starts from a unit-free matrix and therefore stays unit-free.
Masses never enter `C`. Scaling rows and columns by nonsingular diagonal
matrices changes neither the rank nor which rows of a null-space basis of
`C^T` vanish, so exact decisions are unchanged; the scaling only makes the
numerical ones independent of units.
"""

import jax.numpy as jnp
from jaxtyping import Array, Float

from .._bodies import NV
from .._model import Model

RUIZ_ITERATIONS = 4


def _safe(x: Array) -> Array:
    return jnp.where(x > 0, x, 1.0)


def equilibrate(model: Model, C: Float[Array, "nc nv"]) -> Float[Array, "nc nv"]:
    """`D_r C D_c`, unit-free and balanced (see the module docstring)."""
    dim, nvb = model.dim, NV[model.dim]
    L = model.characteristic_lengths()
    col = jnp.concatenate([jnp.ones((model.n_bodies, dim)),
                           jnp.broadcast_to(L[:, None], (model.n_bodies, nvb - dim))], axis=1)
    X = C * col.ravel()[None, :]
    X = X / _safe(jnp.max(jnp.abs(X), axis=1))[:, None]
    for _ in range(RUIZ_ITERATIONS):
        X = X / jnp.sqrt(_safe(jnp.max(jnp.abs(X), axis=0)))[None, :]
        X = X / jnp.sqrt(_safe(jnp.max(jnp.abs(X), axis=1)))[:, None]
    return X
