"""Redundant-constraint elimination: keep `r` independent rows, drop the rest."""


import equinox as eqx
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jaxtyping import Array

from .._linalg import DEPENDENCY_TOL, RANK_RTOL, kept, numerical_rank
from .._misc import as_float
from .._model import Model
from .._rank import constraint_rank, equilibrated_matrix
from .._terms import DenseTerms
from .base import AbstractFormulation, AbstractFormulationState, all_rigid, require_values


def _pairs(eliminate) -> tuple[tuple[str, str], ...] | None:
    return None if eliminate is None else tuple((str(e), str(c)) for e, c in eliminate)


def _normalized(C: Array) -> Array:
    """Rows scaled to unit length, so that the choice of rows does not depend on units."""
    n = jnp.linalg.norm(C, axis=1, keepdims=True)
    return C / jnp.where(n > 0, n, 1.0)


class EliminationState(AbstractFormulationState):
    """`Elimination`'s decisions: the rank and the kept rows (`None`: chosen at every
    evaluation by a pivoted QR)."""

    rigid: tuple[bool, ...] = eqx.field(static=True)
    rank: int | None = eqx.field(static=True)
    rows: tuple[int, ...] | None = eqx.field(static=True, default=None)


class Elimination(AbstractFormulation[EliminationState]):
    """Drop redundant rows of `C` so that the leading matrix is regular, as in
    Wojtyra & Frączek's experiment (paper 000, §3.1 and §4.4): the eliminated
    multipliers are zero, and the kept ones carry the whole constraint force.

    **Arguments:**
    - `eliminate`: `None` (default) to choose the kept rows automatically,
      by a pivoted QR of `C^T` at every evaluation: the best-conditioned
      independent rows, so the choice changes as soon as the kept rows would
      become ill-conditioned. Or a list of `(element, component)` pairs to
      drop, e.g. `[("C", "Fy"), ("W4", "Fn")]`; these are checked at the
      initial state (the kept rows must be independent and keep the rank).
      A fixed choice can become singular later in the motion (the mobile
      robot's (C.Fy, W4) does at t = 8.05 s of its manoeuvre): the run then
      stops with a result code; the automatic choice does not.
    - `rtol`: relative tolerance of the rank decisions.
    - `rank`: the rank of `C`, if known: `init` then neither looks at values nor
      checks the eliminated rows (so it works under `jax.vmap` or `jax.grad`
      over models).

    The reactions of the unique elements are the same for every choice; the
    others are an artefact of the choice (the solution marks them).
    """

    eliminate: tuple[tuple[str, str], ...] | None = eqx.field(static=True, converter=_pairs,
                                                              default=None)
    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    rank: int | None = eqx.field(static=True, default=None)

    def init(self, model: Model, q, t) -> EliminationState:
        if self.eliminate is None:
            r = self.rank
            if r is None:
                require_values(self, model, q, t)
                r = constraint_rank(model, q, t, rtol=self.rtol)
            return EliminationState(all_rigid(model), r)
        drop = set()
        for name, comp in self.eliminate:
            info = model.element(name)
            if comp not in info.components:
                raise ValueError(f"Elimination: element {name!r} has no component {comp!r}; its "
                                 f"components are {', '.join(info.components)}")
            drop.add(info.rows[0] + info.components.index(comp))
        keep = [i for i in range(model.nc) if i not in drop]
        if self.rank is not None:  # stated: the kept rows are the user's responsibility
            return EliminationState(all_rigid(model), self.rank, tuple(keep))
        require_values(self, model, q, t)
        C = equilibrated_matrix(model, q, t)
        r = numerical_rank(C, float(self.rtol))
        rk = numerical_rank(C[keep], float(self.rtol))
        if rk < r:
            raise ValueError(
                f"Elimination: dropping {self.eliminate} removes independent constraints (rank "
                f"{r} -> {rk}); the mechanism would gain freedom it does not have. Drop rows whose "
                "reactions are not unique (see jmbs.solvability), e.g. fewer or other components")
        if rk < len(keep):
            dependent = _dependent_elements(model, C, keep, rk)
            raise ValueError(
                f"Elimination: the kept rows are still dependent ({len(keep)} rows of rank {rk}), "
                f"so the leading matrix is singular; the dependency involves the elements "
                f"{', '.join(dependent)}: eliminate {len(keep) - rk} more component(s) among them")
        return EliminationState(all_rigid(model), r, tuple(keep))

    def solve(self, state: EliminationState, terms: DenseTerms):
        C, gamma, Minv, F = terms.C, terms.gamma, terms.Minv, terms.F
        if state.rows is not None:
            rows = np.asarray(state.rows)
        else:
            _, P = jsl.qr(jax.lax.stop_gradient(_normalized(C)).T, pivoting=True, mode="r")
            rows = P[: state.rank]
        Ck = C[rows]
        # Schur complement of the regular leading matrix [M Ck^T; Ck 0].
        S = Ck @ Minv @ Ck.T
        c, lower = jsl.cho_factor(S)
        lam_k = jsl.cho_solve((kept(c), lower), Ck @ (Minv @ F) - gamma[rows])
        v_dot = Minv @ (F - Ck.T @ lam_k)
        return v_dot, jnp.zeros(C.shape[0]).at[rows].set(lam_k)


def _dependent_elements(model: Model, C: np.ndarray, keep: list[int], rank: int) -> list[str]:
    """Elements whose kept rows take part in a dependency (nonzero in `null(C_keep^T)`,
    the left singular vectors past the kept rows' `rank`)."""
    U, _, _ = np.linalg.svd(C[keep])
    rows = [keep[i] for i in np.flatnonzero(np.abs(U[:, rank:]).max(axis=1) > DEPENDENCY_TOL)]
    return sorted({model.element_of_row(i) for i in rows}, key=model.element_names.index)
