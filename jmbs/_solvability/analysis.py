"""The solvability analysis as pure functions of arrays: traceable (jit, vmap, grad),
for use inside your own transformed code. `jmbs.solvability` and the sweeps are
their host-side front ends."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import ArrayLike, Bool

from .._model import Model
from .base import AbstractSolvabilityMethod, Decisions, element_sets  # noqa: F401 (public here)
from .registry import default_uniqueness, resolve_method


def component_names(model: Model) -> list[str]:
    """`"element.component"` for every row of `C` (and of `Phi`, the multipliers and
    the reactions), in row order, e.g. `["O.Fx", "O.Fy", ...]`."""
    return [f"{s.name}.{c}" for s in model.element_specs for c in s.components]


def solvability_decisions(model: Model, q: ArrayLike, t: ArrayLike = 0.0,
                          method: "str | AbstractSolvabilityMethod | None" = None, *,
                          sets: Bool[ArrayLike, "s nc"] | None = None) -> Decisions:
    """The uniqueness decisions at one configuration, as one pure function of arrays.

    The method's matrix at `(q, t)` (`C`, or `A^T` for `"kinetostatic"`),
    equilibrated (`jmbs.internal.equilibrate`), decided. Traceable: `jax.jit`, `jax.vmap`
    over `q`/`t`/the model's parameters, `jmbs.batch_map`. `jmbs.solvability` is
    the host-side report of the same decisions.

    **Arguments:**
    - `model`: the model.
    - `q`: configuration `(nq,)`; it should satisfy the constraints.
    - `t`: time (drivers).
    - `method`: a name (`"nullspace"`, `"qr"`, `"svd"`, `"rank"`,
      `"kinetostatic"`, `"dca"`) or a method instance such as `jmbs.QR(rtol=1e-6)`; which
      method is static, its tolerances are array leaves (traceable, no recompilation).
      Default: as `jmbs.solvability`'s.
    - `sets`: studied row masks `(s, nc)`; default `jmbs.element_sets(model)`,
      one per element.

    **Returns:** `jmbs.Decisions` (rank, rank margin, and per set and per component
    the decisions, criteria and margins).

    **Raises:** `ValueError` for an unknown method name.
    """
    method = default_uniqueness(model) if method is None else method
    return _decisions(resolve_method(method, model), model, jnp.asarray(q), jnp.asarray(t), sets)


@eqx.filter_jit
def _decisions(method: AbstractSolvabilityMethod, model: Model, q, t, sets) -> Decisions:
    """One program (inlined where the caller traces): called eagerly, the analysis would
    dispatch and compile its operations one by one (the DCA on a 48-coordinate ladder:
    12.9 s for the first call, against 0.9 s compiled whole)."""
    return method.evaluate(model, q, t, sets)
