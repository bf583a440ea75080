"""Penalty (compliant constraints): reactions from a spring-damper law."""

from collections.abc import Mapping

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._linalg import min_norm_solve
from .._misc import as_float, check_finite
from .._model import Model
from .._rank import constraint_rank
from .._terms import DenseTerms, dynamics_terms
from .base import AbstractFormulation, AbstractFormulationState, require_values, row_values


def _values(x):
    """A number, or a mapping of numbers, as array leaves (a new value does not recompile)."""
    return {str(k): as_float(v) for k, v in x.items()} if isinstance(x, Mapping) else as_float(x)


def _names(rigid) -> tuple[str, ...]:
    return (rigid,) if isinstance(rigid, str) else tuple(rigid)


class PenaltyState(AbstractFormulationState):
    """`Penalty`'s decisions: the rigid rows and their rank, the stiffness `k` and damping
    `d` of every row (arrays: a new value does not recompile)."""

    rigid: tuple[bool, ...] = eqx.field(static=True)
    rank: int | None = eqx.field(static=True)
    k: Float[Array, " nc"]
    d: Float[Array, " nc"]


class Penalty(AbstractFormulation[PenaltyState]):
    """Compliant constraints: `lambda = k Phi + d (C v + b)` row by row, and
    `M v_dot = F - C^T lambda`.

    Each compliant row is a linear spring and damper on its constraint
    function (a force for a translational row, a torque for a rotational
    one). Pfaffian rows have no position, so they are dampers only (`k` is
    ignored; give them a large damping or keep them `rigid`). The reactions are
    then unique, set by the compliance; as the stiffness grows, the unique
    reactions of the rigid model are recovered, while the non-unique ones
    depend on how the stiffness is distributed. Stiff springs make the
    equations stiff: use an implicit solver or small steps.

    **Arguments:**
    - `stiffness`, `damping`: a number for every row, or a mapping keyed by
      element name or `"element.component"` covering every compliant element.
    - `rigid`: names of elements kept as rigid constraints (solved with
      minimum-norm multipliers, like `Pseudoinverse`), e.g. drivers.
    - `rank`: the rank of the rigid rows of `C`, if known (then `init` does not
      look at values).
    """


    stiffness: float | Mapping[str, float] = eqx.field(converter=_values, default=1e6)
    damping: float | Mapping[str, float] = eqx.field(converter=_values, default=0.0)
    rigid: tuple[str, ...] = eqx.field(static=True, converter=_names, default=())
    rank: int | None = eqx.field(static=True, default=None)

    def __check_init__(self):
        # Signs are checked by `init`, which names the elements of the rows.
        for what in ("stiffness", "damping"):
            x = getattr(self, what)
            for key, value in (x.items() if isinstance(x, Mapping) else [(None, x)]):
                check_finite("Penalty", what if key is None else f"{what}[{key!r}]", value,
                             "give finite numbers")

    def init(self, model: Model, q, t) -> PenaltyState:
        mask = np.zeros(model.nc, bool)
        for name in self.rigid:
            mask[model.rows(name)] = True
        compliant = {n: None for n in model.element_names if n not in self.rigid}
        k = _fill(model, self.stiffness, "Penalty(stiffness=...)", compliant)
        d = _fill(model, self.damping, "Penalty(damping=...)", compliant)
        for what, x in (("stiffness", k), ("damping", d)):
            if np.any(x < 0):
                bad = sorted({model.element_of_row(i) for i in np.flatnonzero(x < 0)})
                raise ValueError(f"Penalty: {what} must be non-negative; check {', '.join(bad)}")
        pfaffian = ~np.asarray(model.holonomic_rows) & ~mask
        if np.any(pfaffian & (d <= 0)):
            bad = sorted({model.element_of_row(i) for i in np.flatnonzero(pfaffian & (d <= 0))})
            raise ValueError(f"Penalty: the Pfaffian elements {', '.join(bad)} have no position to "
                             "spring back to: give them a positive damping or list them in rigid=")
        rank = self.rank
        if rank is None:
            rank = 0
            if mask.any():
                require_values(self, model, q, t)
                rank = constraint_rank(model, q, t, rows=np.flatnonzero(mask))
        return PenaltyState(tuple(bool(x) for x in mask), rank, k=k, d=d)

    def terms(self, model: Model, q, v, t, *, with_phi: bool = True) -> DenseTerms:
        """Dense terms, always with `Phi` (the compliance law reads it)."""
        return dynamics_terms(model, q, v, t, with_phi=True)

    def solve(self, state: PenaltyState, terms: DenseTerms):
        C, Minv = terms.C, terms.Minv
        rigid = np.asarray(state.rigid, bool)
        lam = jnp.where(rigid, 0.0, state.k * terms.phi + state.d * terms.velocity_error)
        F = terms.F - C.T @ lam
        if rigid.any():
            Cr = C[rigid]
            # The rank is given, so the eigenvalue tolerance only guards exact zeros.
            lam_r = min_norm_solve(Cr @ Minv @ Cr.T, Cr @ (Minv @ F) - terms.gamma[rigid], 0.0,
                                   state.rank)
            F = F - Cr.T @ lam_r
            lam = lam.at[np.flatnonzero(rigid)].set(lam_r)
        return Minv @ F, lam


def _fill(model: Model, values, what: str, compliant: dict) -> np.ndarray:
    """Per-row values; rigid elements need none (they get 0)."""
    if isinstance(values, Mapping):
        missing = [n for n in compliant if n not in values and not any(
            k.startswith(n + ".") for k in values)]
        values = dict(values) | {n: 0.0 for n in model.element_names if n not in compliant}
        if missing:
            raise ValueError(f"{what} gives no value for the elements {', '.join(missing)}; give "
                             "one for every compliant element, a single number, or list them in rigid=")
    return row_values(model, values, what)
