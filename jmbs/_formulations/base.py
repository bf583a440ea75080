"""The dynamics formulations' family: `v_dot` and `lambda` from one state.

Every formulation solves `M v_dot + C^T lambda = F` together with the
constraints (`C v_dot = Gamma`, or a compliance law for `Penalty`). They
differ where the constraints are redundant: in how `v_dot` is found and
which of the infinitely many multiplier vectors they report.
"""

import abc
import contextlib
from collections.abc import Mapping

import equinox as eqx
import jax
import numpy as np
from jaxtyping import Array, Float

from .._assembly import (
    element_forces,
    reads_reactions,
)
from .._misc import check_positive, is_traced, staging
from .._model import Model
from .._terms import DynamicsTerms, dynamics_terms

# Fixed-point sweeps between the multipliers and the friction forces they cause: the
# friction force changes the reactions by a fraction of itself (the coefficient times
# a pin radius over a lever arm), so each sweep gains that factor.
FRICTION_ITERATIONS = 4


def solve_dynamics(model: Model, prepared: "Prepared", terms: DynamicsTerms, q: Array, v: Array,
                   t) -> tuple[Array, Array]:
    """`(v_dot, lambda)` at one state: the formulation's solve, and where force
    elements read the reactions (joint friction), `FRICTION_ITERATIONS` sweeps of
    solving with the friction forces of the previous multipliers."""
    v_dot, lam = prepared.solve(terms)
    if not reads_reactions(model):
        return v_dot, lam

    def sweep(_, state):
        F = terms.F + element_forces(model, q, v, t, state[1])
        return prepared.solve(eqx.tree_at(lambda x: x.F, terms, F))

    # A loop, not unrolled: the solve is traced once.
    return jax.lax.fori_loop(0, FRICTION_ITERATIONS, sweep, (v_dot, lam))


def row_values(model: Model, values, what: str, default: float | None = None) -> np.ndarray:
    """Per-row values `(nc,)` from a scalar or a mapping keyed by element name or
    `"element.component"` (a component entry overrides its element's)."""
    if not isinstance(values, Mapping):
        return np.full(model.nc, float(values))
    out = np.full(model.nc, np.nan if default is None else default)
    for key in sorted(values, key=lambda k: "." in k):  # elements first, then components
        out[model.key_rows(key, what)] = float(values[key])
    missing = sorted({model.element_of_row(i) for i in np.flatnonzero(np.isnan(out))})
    if missing:
        raise ValueError(f"{what} gives no value for the elements {', '.join(missing)}; give one "
                         "for every element (or a single number for all of them)")
    return out


class AbstractFormulationState(eqx.Module):
    """What a formulation's `init` decided from values at the initial state, and what
    its `solve` reads (lineax's settings/state split: the formulation holds the user's
    settings, its own state type the value-dependent choices). Every state says

    - `rigid`: the rows treated as rigid constraints (their reactions' uniqueness is
      decided by the solvability analysis); the others' reactions are set by a
      compliance law and are unique;
    - `rank`: the rank of the rigid rows of `C` (`None` where the formulation does
      not use it).
    """

    rigid: eqx.AbstractVar[tuple[bool, ...]]
    rank: eqx.AbstractVar[int | None]


# The name the docs used before each formulation had its own state type.
FormulationState = AbstractFormulationState


class RankState(AbstractFormulationState):
    """The rigid rows and their rank, nothing else (`NullSpaceProjection`,
    `AugmentedLagrangian`)."""

    rigid: tuple[bool, ...] = eqx.field(static=True)
    rank: int | None = eqx.field(static=True, default=None)


class AbstractFormulation[State: AbstractFormulationState](eqx.Module):
    """A way of solving the equations of motion of a (possibly redundantly)
    constrained system at one state.

    Settings (the fields) are kept apart from what is decided from values (`init`'s
    state, of the member's own type), as lineax's solvers do: `init` runs on the host
    once per run, `terms` and `solve` are traced at every evaluation.
    """

    def __check_init__(self):
        if hasattr(self, "rtol"):  # the members' relative rank tolerance
            check_positive(type(self).__name__, "rtol", self.rtol)

    @abc.abstractmethod
    def init(self, model: Model, q: Array, t) -> State:
        """Host-side, once per run: resolve element names into rows and decide the
        rank of `C` at `(q, t)` (a configuration on the constraints), checking the
        choice against the model.

        **Raises:** `ValueError` for settings that do not fit the model, or where
        a decision needs values and the model or `q` is traced (give `rank=`).
        """

    @abc.abstractmethod
    def solve(self, state: State, terms: DynamicsTerms
              ) -> tuple[Float[Array, " nv"], Float[Array, " nc"]]:
        """`(v_dot, lambda)` at one state."""

    def terms(self, model: Model, q: Array, v: Array, t, *, with_phi: bool = True) -> DynamicsTerms:
        """The dynamics terms `solve` reads at `(q, v, t)`: dense, with `Phi` where asked
        (a stabilization that feeds it back) or where `solve` needs it itself."""
        return dynamics_terms(model, q, v, t, with_phi=with_phi)

    def prepare(self, model: Model, q: Array, t) -> "Prepared":
        """`init` once, kept with the formulation: pass the result to
        `jmbs.simulate(formulation=...)` or `jmbs.reactions(...)` under `jax.vmap`
        or `jax.grad` over models, where the rank cannot be decided from values.
        Concrete values inside a caller's trace (`prepare` in a function under
        `jax.jit`) are still values: the decision is evaluated on them there,
        operation by operation (slower: outside a trace `init` runs compiled)."""
        with jax.ensure_compile_time_eval() if staging() else contextlib.nullcontext():
            return Prepared(self, self.init(model, q, t))


class Prepared(eqx.Module):
    """A formulation together with its state from `init` (what `prepare` returns)."""

    formulation: AbstractFormulation
    state: AbstractFormulationState

    def terms(self, model: Model, q: Array, v: Array, t, *, with_phi: bool = True) -> DynamicsTerms:
        """The dynamics terms the formulation reads at `(q, v, t)`."""
        return self.formulation.terms(model, q, v, t, with_phi=with_phi)

    def solve(self, terms: DynamicsTerms) -> tuple[Float[Array, " nv"], Float[Array, " nc"]]:
        """`(v_dot, lambda)` at one state."""
        return self.formulation.solve(self.state, terms)

    @property
    def rigid_rows(self) -> np.ndarray:
        """`(nc,)` mask of the rows treated as rigid constraints."""
        return np.asarray(self.state.rigid, bool)


def resolve(formulation: "AbstractFormulation | Prepared", model: Model, q: Array, t,
            where: str) -> Prepared:
    """`formulation` prepared at `(q, t)` unless it already is."""
    if isinstance(formulation, Prepared):
        return formulation
    if not isinstance(formulation, AbstractFormulation):
        raise ValueError(f"{where}: formulation must be a jmbs formulation (e.g. "
                         f"jmbs.NullSpaceProjection()) or one prepared with .prepare(...); got "
                         f"{formulation!r}")
    return formulation.prepare(model, q, t)


def require_values(formulation: AbstractFormulation, *trees) -> None:
    """In `init`, before a decision from values: refuse traced input with one clear error."""
    if is_traced(*trees):
        name = type(formulation).__name__
        raise ValueError(
            f"{name}: the model or the state is traced (jax.grad, jax.vmap or jax.jit over it), "
            f"so {name} cannot decide the rank of C from values here; prepare it on a concrete "
            f"model first and pass that, e.g. formulation = jmbs.{name}().prepare(model, "
            "model.q0, 0.0), or state the rank (rank=...)")


def all_rigid(model: Model) -> tuple[bool, ...]:
    """Every row rigid (formulations without a compliance law)."""
    return (True,) * model.nc
