"""Redundant-constraint elimination: keep `r` independent rows, drop the rest."""

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jaxtyping import Array

from .._assembly import constraint_matrix
from .._model import Model
from .base import AbstractFormulation, DynamicsTerms, constraint_rank


def _normalized(C: Array) -> Array:
    """Rows scaled to unit length, so that the choice of rows does not depend on units."""
    n = jnp.linalg.norm(C, axis=1, keepdims=True)
    return C / jnp.where(n > 0, n, 1.0)


class Elimination(AbstractFormulation):
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

    The reactions of the unique elements are the same for every choice; the
    others are an artefact of the choice (the solution marks them).
    """

    eliminate: tuple[tuple[str, str], ...] | None = None
    rtol: float = 1e-8
    keep_rows: tuple[int, ...] | None = None  # resolved by `prepare`
    rank: int | None = None

    def __init__(self, eliminate: Sequence[tuple[str, str]] | None = None, rtol: float = 1e-8, *,
                 keep_rows=None, rank=None):
        if eliminate is not None:
            eliminate = tuple((str(e), str(c)) for e, c in eliminate)
        self.eliminate, self.rtol, self.keep_rows, self.rank = eliminate, rtol, keep_rows, rank

    def prepare(self, model: Model, q, t) -> "Elimination":
        r = constraint_rank(model, q, t, self.rtol)
        if self.eliminate is None:
            return Elimination(None, self.rtol, rank=r)
        drop = set()
        for name, comp in self.eliminate:
            info = model.element(name)
            if comp not in info.components:
                raise ValueError(f"Elimination: element {name!r} has no component {comp!r}; its "
                                 f"components are {', '.join(info.components)}")
            drop.add(info.rows[0] + info.components.index(comp))
        keep = [i for i in range(model.nc) if i not in drop]
        rk = constraint_rank(model, q, t, self.rtol, keep)
        if rk < r:
            raise ValueError(
                f"Elimination: dropping {self.eliminate} removes independent constraints (rank "
                f"{r} -> {rk}); the mechanism would gain freedom it does not have. Drop rows whose "
                "reactions are not unique (see jmbs.solvability), e.g. fewer or other components")
        if rk < len(keep):
            C = np.asarray(constraint_matrix(model, q, t))
            dependent = _dependent_elements(model, C, keep, self.rtol)
            raise ValueError(
                f"Elimination: the kept rows are still dependent ({len(keep)} rows of rank {rk}), "
                f"so the leading matrix is singular; the dependency involves the elements "
                f"{', '.join(dependent)}: eliminate {len(keep) - rk} more component(s) among them")
        return Elimination(self.eliminate, self.rtol, keep_rows=tuple(keep), rank=r)

    @property
    def prepared(self) -> bool:
        return self.rank is not None

    def solve(self, terms: DynamicsTerms):
        C, gamma, Minv, F = terms.C, terms.gamma, terms.Minv, terms.F
        if self.keep_rows is not None:
            rows = np.asarray(self.keep_rows)
        else:
            if self.rank is None:
                raise ValueError("Elimination.solve called before prepare(model, q, t)")
            _, P = jsl.qr(jax.lax.stop_gradient(_normalized(C)).T, pivoting=True, mode="r")
            rows = P[: self.rank]
        Ck = C[rows]
        # Schur complement of the regular leading matrix [M Ck^T; Ck 0].
        S = Ck @ Minv @ Ck.T
        lam_k = jsl.cho_solve(jsl.cho_factor(S), Ck @ (Minv @ F) - gamma[rows])
        v_dot = Minv @ (F - Ck.T @ lam_k)
        return v_dot, jnp.zeros(C.shape[0]).at[rows].set(lam_k)


def _dependent_elements(model: Model, C: np.ndarray, keep: list[int], rtol: float) -> list[str]:
    """Elements whose kept rows take part in a dependency (nonzero in `null(C_keep^T)`)."""
    U, s, _ = np.linalg.svd(C[keep])
    null = U[:, int(np.sum(s > rtol * s[0])):]
    rows = [keep[i] for i in np.flatnonzero(np.abs(null).max(axis=1) > 1e-8)]
    return sorted({model.element_of_row(i) for i in rows}, key=model.element_names.index)
