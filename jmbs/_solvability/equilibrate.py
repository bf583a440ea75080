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


def characteristic_lengths(model: Model) -> Float[Array, " nb"]:
    """Per body: the RMS distance from its centre of mass to the points of the
    elements attached to it (reference configuration).

    A body without such points (or with all of them at its centre) gets the
    RMS of the other bodies' lengths, then the RMS spread of the bodies'
    positions, then 1.
    """
    p = model.params()
    nb = model.n_bodies
    r0 = jnp.stack([jnp.asarray(p[f"{b}.position"], dtype=float) for b in model.body_names])
    sums, counts = jnp.zeros(nb), jnp.zeros(nb)
    for spec in model.element_specs:
        for key, which in (("point", (0, 1)), ("point_i", (0,)), ("point_j", (1,))):
            if key not in spec.params:
                continue
            P = jnp.asarray(p[f"{spec.name}.{key}"], dtype=float)
            for w in which:
                b = spec.bodies[w]
                if b < nb:
                    sums = sums.at[b].add(jnp.sum((P - r0[b]) ** 2))
                    counts = counts.at[b].add(1.0)
    L = jnp.sqrt(sums / jnp.maximum(counts, 1.0))
    has = L > 0
    model_length = jnp.sqrt(jnp.sum(jnp.where(has, L**2, 0.0)) / jnp.maximum(jnp.sum(has), 1))
    spread = jnp.sqrt(jnp.mean(jnp.sum((r0 - r0.mean(axis=0)) ** 2, axis=1)))
    fallback = jnp.where(model_length > 0, model_length, jnp.where(spread > 0, spread, 1.0))
    return jnp.where(has, L, fallback)


def _safe(x: Array) -> Array:
    return jnp.where(x > 0, x, 1.0)


def equilibrate(model: Model, C: Float[Array, "nc nv"]) -> Float[Array, "nc nv"]:
    """`D_r C D_c`, unit-free and balanced (see the module docstring)."""
    dim, nvb = model.dim, NV[model.dim]
    L = characteristic_lengths(model)
    col = jnp.concatenate([jnp.ones((model.n_bodies, dim)),
                           jnp.broadcast_to(L[:, None], (model.n_bodies, nvb - dim))], axis=1)
    X = C * col.ravel()[None, :]
    X = X / _safe(jnp.max(jnp.abs(X), axis=1))[:, None]
    for _ in range(RUIZ_ITERATIONS):
        X = X / jnp.sqrt(_safe(jnp.max(jnp.abs(X), axis=0)))[None, :]
        X = X / jnp.sqrt(_safe(jnp.max(jnp.abs(X), axis=1)))[:, None]
    return X
