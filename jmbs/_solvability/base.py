"""The solvability methods' common interface and the decisions they return.

A method takes the equilibrated matrix `C` (`nc x nv`; rows are the unknown
reaction components) and a set of boolean row masks (the studied elements or
groups), and decides for each mask whether the resultant of those components
is unique, and for each single component whether its value is unique
(Wojtyra & Frączek): with `N` a basis of `null(C^T)`, the set `X` is unique
iff `C_X^T N_X = 0`, a component iff its row of `N` is zero.
"""

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from .._assembly import constraint_matrix
from .._linalg import MARGINAL_DECADES as MARGINAL_DECADES
from .._linalg import RankDecision, decades
from .._misc import RunOnce, check_positive
from .._model import Model
from .._rank import characteristic_lengths, equilibrate, scale


class Decisions(eqx.Module):
    """What a method decided for one configuration (arrays; vmappable).

    - `rank`: numerical rank of `C`.
    - `rank_values`: the method's rank-revealing values relative to the largest
      (singular values, or `|R_ii|` of a pivoted QR), `(min(nc, nv),)`.
    - `rank_margin`: decimal digits between the tolerance and the nearest
      rank-revealing value on either side (the singular-value gap).
    - `unique`, `criterion`, `margin`: per studied set; the criterion is
      compared with the method's tolerance, the margin is the number of
      decimal digits between them.
    - `set_rank`: rank of `C_X` per set (`-1` where the method does not
      compute it).
    - `component_unique`, `component_criterion`, `component_margin`: per row.
    """

    rank: Int[Array, ""]
    rank_values: Float[Array, " k"]
    rank_margin: Float[Array, ""]
    unique: Bool[Array, " s"]
    criterion: Float[Array, " s"]
    margin: Float[Array, " s"]
    set_rank: Int[Array, " s"]
    component_unique: Bool[Array, " nc"]
    component_criterion: Float[Array, " nc"]
    component_margin: Float[Array, " nc"]


class AbstractSolvabilityMethod(eqx.Module):
    """A way of deciding uniqueness (a member of the pluggable family).

    Every method answers the same calls, so that no caller asks which kind it is:
    `bind(model)` (the method ready for the model: a copy holding what it planned from
    the model's structure, or itself), the traced `evaluate(model, q, t, sets)`, and
    the host-side `decisions_at` (one configuration) and `decisions_batch` (a batch).
    Concrete methods set `name`, the relative rank tolerance `rtol` and the
    criterion tolerance `ctol`, and implement `decide` on a dense matrix; `matrix`
    says which matrix that is (`C`, the constraint route, unless overridden). A
    method that works from the model's structure overrides `evaluate` and the two
    host calls.
    """

    rtol: eqx.AbstractVar[float]
    ctol: eqx.AbstractVar[float]
    name: ClassVar[str]

    def __check_init__(self):
        # A zero, negative or NaN tolerance decides every rank or criterion the same way.
        for name in ("rtol", "ctol"):
            check_positive(type(self).__name__, name, getattr(self, name))

    @staticmethod
    def matrix(model: Model, q: Array, t: Array, C: Array | None = None) -> Float[Array, "nc nv"]:
        """The matrix whose transpose maps the unknowns to generalized forces: `C` (the
        given one where the caller has already evaluated it at `(q, t)`). A static
        method: methods that analyse the same matrix share its compiled programs."""
        return constraint_matrix(model, q, t) if C is None else C

    def bind(self, model: Model) -> "AbstractSolvabilityMethod":
        """The method ready for `model` (a method that plans from the model's structure
        returns a copy holding the plan; the others return themselves)."""
        return self

    def evaluate(self, model: Model, q: Array, t: Array, sets: Bool[Array, "s nc"] | None = None,
                 C: Array | None = None) -> Decisions:
        """Traced: the decisions at `(q, t)` for the studied sets (default: one per element),
        from the method's matrix, equilibrated; `C`: the constraint matrix at `(q, t)` where
        the caller has it."""
        sets = element_sets(model) if sets is None else sets
        return self.decide(equilibrate(model, self.matrix(model, q, t, C)), jnp.asarray(sets))

    def decisions_at(self, model: Model, q: Array, t: Array, sets: np.ndarray | None = None
                     ) -> Decisions:
        """Host-side: the decisions at one configuration as NumPy arrays. The matrix is
        compiled once per model, the decisions once per method and size, so trying several
        methods is cheap."""
        sets = element_sets(model) if sets is None else sets
        C = self.matrix(model, q, t)
        return jax.device_get(_decide(self, C, characteristic_lengths(model), model.dim, sets))

    def decisions_batch(self, model: Model, qs: Array, ts: Array) -> Decisions:
        """The decisions for the elements at a batch of configurations (on the device)."""
        Cs = _matrices(self.matrix, model, qs, ts)
        return _decide_batch(self, Cs, characteristic_lengths(model), model.dim,
                             element_sets(model))

    def criterion(self) -> str:
        """What the reported criterion is, in words (the report's legend)."""
        return f"criterion vs tolerance {self.ctol:g}"

    @abc.abstractmethod
    def decide(self, C: Float[Array, "nc nv"], sets: Bool[Array, "s nc"]) -> Decisions:
        """Decisions for the equilibrated matrix `C` and the studied sets."""


@RunOnce  # one configuration: see dca._evaluate
def _decide(method: AbstractSolvabilityMethod, C: Array, L: Array, dim: int, sets) -> Decisions:
    return method.decide(scale(C, L, dim), sets)


@eqx.filter_jit
def _matrices(matrix, model: Model, qs, ts):
    return jax.vmap(lambda q, t: matrix(model, q, t))(qs, ts)


@eqx.filter_jit
def _decide_batch(method: AbstractSolvabilityMethod, Cs, L, dim: int, sets) -> Decisions:
    return jax.vmap(lambda C: method.decide(scale(C, L, dim), sets))(Cs)


def element_sets(model: Model) -> np.ndarray:
    """Row masks of the elements: `(n_elements, nc)` bool, row `k` true on the rows of
    `C` (and of the multipliers) that belong to `model.element_names[k]`.

    The studied sets of `jmbs.solvability_decisions` by default; stack your own masks
    (e.g. `element_sets(model)[[i, j]].any(axis=0)` for the resultant of two
    elements) to study groups.
    """
    sets = np.zeros((len(model.element_specs), model.nc), bool)
    for k, (a, b) in enumerate(model.element_rows):
        sets[k, a:b] = True
    return sets


def nullspace_decisions(method: AbstractSolvabilityMethod, C: Array, N: Array, sets: Array,
                        rd: RankDecision, set_rank: Array | None = None) -> Decisions:
    """Decisions from a basis `N` of `null(C^T)` (columns of norm 1 or 0).

    Set `X`: criterion `||C_X^T N_X||_F`; component `k`: the norm of row `k` of `N`.
    """
    # ||C_X^T N_X||_F^2 = m^T ((C C^T) ∘ (N N^T)) m for the mask m of X: two small
    # products per configuration instead of one per set.
    m = sets.astype(C.dtype)
    K = jnp.einsum("ij,kj->ik", C, C) * jnp.einsum("ij,kj->ik", N, N)
    crit = jnp.sqrt(jnp.maximum(jnp.sum(jnp.einsum("si,ij->sj", m, K) * m, axis=1), 0.0))
    comp = jnp.sqrt(jnp.sum(N**2, axis=1))
    if set_rank is None:
        set_rank = jnp.full(sets.shape[:1], -1)
    return Decisions(rd.rank, rd.rel, rd.margin, crit <= method.ctol, crit, decades(crit, method.ctol),
                     set_rank, comp <= method.ctol, comp, decades(comp, method.ctol))


def columns_from(n: int, rank: Array) -> Array:
    """Mask of the columns `rank, rank + 1, ..., n - 1` (the null-space part)."""
    return jnp.arange(n) >= rank
