"""The rank of a mechanism's constraints: the unit-independent scaling of `C`
(equilibration) that every rank decision starts from, and the one host function
for the rank at a configuration (`constraint_rank`).

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

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._assembly import check_terms, constraint_matrix
from ._bodies import NV
from ._linalg import RANK_RTOL, numerical_rank, structured
from ._misc import RunOnce
from ._model import Model

RUIZ_ITERATIONS = 1
# Entries below this, relative to their row's largest, are rounding noise (e.g.
# the spin column of a rod whose joints lie on its axis): they are set to zero
# so that the column scaling cannot blow them up into spurious directions.
NOISE = 1e-12


def positive_or_one(x: Array) -> Array:
    """`x` where positive, else 1 (a divisor for an all-zero row or column)."""
    return (np if isinstance(x, np.ndarray) else jnp).where(x > 0, x, 1.0)


def equilibrate(model: Model, C: Float[Array, "nc nv"]) -> Float[Array, "nc nv"]:
    """`D_r C D_c`, unit-free and balanced (see the module docstring)."""
    return scale(C, model.characteristic_lengths(), model.dim)


characteristic_lengths = RunOnce(lambda model: model.characteristic_lengths())  # on the host


def scale(C: Float[Array, "nc nv"], L: Float[Array, " nb"], dim: int) -> Float[Array, "nc nv"]:
    """`equilibrate` given the bodies' characteristic lengths `L`."""
    return scaled(C, L, dim)[0]


def scaled(C: Float[Array, "nc nv"], L: Float[Array, " nb"], dim: int):
    """`(X, row, col)`: `X = scale(C, L, dim)` and its row and column factors, `X = row C col`
    (but for the entries set to zero as rounding noise)."""
    xp = np if isinstance(C, np.ndarray) else jnp  # the host's rank: no device program
    nb, nrot = L.shape[0], NV[dim] - dim
    col = xp.concatenate([xp.ones((nb, dim)), xp.broadcast_to(1.0 / L[:, None], (nb, nrot))],
                         axis=1).ravel()
    X = C * col[None, :]
    row = 1.0 / positive_or_one(xp.max(xp.abs(X), axis=1, initial=0.0))
    X = X * row[:, None]
    X = xp.where(xp.abs(X) < NOISE, 0.0, X)
    for _ in range(RUIZ_ITERATIONS):
        c = 1.0 / xp.sqrt(positive_or_one(xp.max(xp.abs(X), axis=0, initial=0.0)))
        X, col = X * c[None, :], col * c
        r = 1.0 / xp.sqrt(positive_or_one(xp.max(xp.abs(X), axis=1, initial=0.0)))
        X, row = X * r[:, None], row * r
    return X, row, col


def equilibrated_matrix(model: Model, q, t) -> np.ndarray:
    """Host-side: the equilibrated `C` at `(q, t)` (NumPy), the matrix every rank
    decision at a configuration is made on. Below `STRUCTURED_MIN_NV` `C` and the
    characteristic lengths come from the program of the host's checks at a
    configuration (`check_terms`), compiled once for them all."""
    if structured(model):
        C, L = constraint_matrix(model, q, t), characteristic_lengths(model)
    else:
        _, _, C, L = check_terms(model, q, np.zeros(model.nv), np.asarray(t, dtype=float))
    return scale(np.asarray(C), np.asarray(L), model.dim)


def constraint_rank(model: Model, q, t, *, rows=None, rtol: float = RANK_RTOL) -> int:
    """Host-side: the rank of the constraints at a configuration, by the rank rule
    (`rank_decision`) on the singular values of the equilibrated `C`, restricted to
    `rows` (indices or a mask) when given. Every host decision of a rank at a
    configuration (the formulations' `init`, the statics, the kinematics, the
    sweeps, the report's generic rank) is this one, so that they agree with each
    other and with the uniqueness methods, which decide on the same matrix."""
    X = equilibrated_matrix(model, q, t)
    return numerical_rank(X if rows is None else X[np.asarray(rows)], float(rtol))
