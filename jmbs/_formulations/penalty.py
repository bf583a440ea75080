"""Penalty (compliant constraints): reactions from a spring-damper law."""

from collections.abc import Mapping, Sequence
from typing import ClassVar

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._model import Model
from .base import AbstractFormulation, DynamicsTerms, constraint_rank, min_norm_solve, row_values


class Penalty(AbstractFormulation):
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
    """

    needs_phi: ClassVar[bool] = True

    stiffness: float | Mapping[str, float] = 1e6
    damping: float | Mapping[str, float] = 0.0
    rigid: tuple[str, ...] = ()
    k: Array | None = None  # per row, resolved by `prepare` (arrays: a new value does not recompile)
    d: Array | None = None
    rigid_mask: tuple[bool, ...] | None = None
    rigid_rank: int | None = None

    def __init__(self, stiffness=1e6, damping=0.0, rigid: Sequence[str] = (), *, k=None, d=None,
                 rigid_mask=None, rigid_rank=None):
        self.stiffness, self.damping = stiffness, damping
        self.rigid = (rigid,) if isinstance(rigid, str) else tuple(rigid)
        self.k, self.d, self.rigid_mask, self.rigid_rank = k, d, rigid_mask, rigid_rank

    def prepare(self, model: Model, q, t) -> "Penalty":
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
        rank = constraint_rank(model, q, t, 1e-8, np.flatnonzero(mask)) if mask.any() else 0
        return Penalty(self.stiffness, self.damping, self.rigid, k=jnp.asarray(k), d=jnp.asarray(d),
                       rigid_mask=tuple(bool(x) for x in mask), rigid_rank=rank)

    @property
    def prepared(self) -> bool:
        return self.k is not None

    def rigid_rows(self, model: Model):
        return np.asarray(self.rigid_mask if self.rigid_mask is not None else np.zeros(model.nc, bool))

    def solve(self, terms: DynamicsTerms):
        if self.k is None:
            raise ValueError("Penalty.solve called before prepare(model, q, t)")
        C, Minv = terms.C, terms.Minv
        rigid = np.asarray(self.rigid_mask)
        lam = jnp.where(rigid, 0.0, self.k * terms.phi + self.d * terms.velocity_error)
        F = terms.F - C.T @ lam
        if rigid.any():
            Cr = C[rigid]
            lam_r = min_norm_solve(Cr @ Minv @ Cr.T, Cr @ (Minv @ F) - terms.gamma[rigid], 1e-16,
                                   self.rigid_rank)
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
