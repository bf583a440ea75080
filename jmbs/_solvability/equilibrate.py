"""Unit-independent scaling of the constraint matrix before any rank decision.

Lengths and angles mix in `C`: a rotational column has the units of its row
times a length, relative to a translational one. Dividing each body's
rotational columns by the body's characteristic length `L` (that is, measuring
its angular velocity as the velocity `L omega`) gives every column the same
units, so a change of the length unit scales `C` by row factors only; an exact normalisation of the rows
then removes them. What follows (Ruiz's alternating square-root scaling of
rows and columns) starts from a unit-free matrix and therefore stays unit-free.
Masses never enter `C`. Scaling rows and columns by nonsingular diagonal
matrices changes neither the rank nor which rows of a null-space basis of
`C^T` vanish, so exact decisions are unchanged; the scaling only makes the
numerical ones independent of units.
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._bodies import NV
from .._model import Model

RUIZ_ITERATIONS = 1
# Entries below this, relative to their row's largest, are rounding noise (e.g.
# the spin column of a rod whose joints lie on its axis): they are set to zero
# so that the column scaling cannot blow them up into spurious directions.
NOISE = 1e-12


def _safe(x: Array) -> Array:
    return jnp.where(x > 0, x, 1.0)


def equilibrate(model: Model, C: Float[Array, "nc nv"]) -> Float[Array, "nc nv"]:
    """`D_r C D_c`, unit-free and balanced (see the module docstring)."""
    return scale(C, model.characteristic_lengths(), model.dim)


characteristic_lengths = eqx.filter_jit(lambda model: model.characteristic_lengths())  # compiled once


def scale(C: Float[Array, "nc nv"], L: Float[Array, " nb"], dim: int) -> Float[Array, "nc nv"]:
    """`equilibrate` given the bodies' characteristic lengths `L`."""
    return scaled(C, L, dim)[0]


def scaled(C: Float[Array, "nc nv"], L: Float[Array, " nb"], dim: int):
    """`(X, row, col)`: `X = scale(C, L, dim)` and its row and column factors, `X = row C col`
    (but for the entries set to zero as rounding noise)."""
    nb, nrot = L.shape[0], NV[dim] - dim
    col = jnp.concatenate([jnp.ones((nb, dim)), jnp.broadcast_to(1.0 / L[:, None], (nb, nrot))],
                          axis=1).ravel()
    X = C * col[None, :]
    row = 1.0 / _safe(jnp.max(jnp.abs(X), axis=1))
    X = X * row[:, None]
    X = jnp.where(jnp.abs(X) < NOISE, 0.0, X)
    for _ in range(RUIZ_ITERATIONS):
        c = 1.0 / jnp.sqrt(_safe(jnp.max(jnp.abs(X), axis=0)))
        X, col = X * c[None, :], col * c
        r = 1.0 / jnp.sqrt(_safe(jnp.max(jnp.abs(X), axis=1)))
        X, row = X * r[:, None], row * r
    return X, row, col
