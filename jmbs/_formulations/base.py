"""The dynamics formulations' family: `v_dot` and `lambda` from one state.

Every formulation solves `M v_dot + C^T lambda = F` together with the
constraints (`C v_dot = Gamma`, or a compliance law for `Penalty`). They
differ where the constraints are redundant: in how `v_dot` is found and
which of the infinitely many multiplier vectors they report.
"""

import abc
import functools
from collections.abc import Mapping
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float

from .._assembly import constraint_terms, generalized_forces, inverse_mass_matrix, mass_matrix, phi
from .._model import Model


class DynamicsTerms(eqx.Module):
    """Everything a formulation needs at one state `(q, v, t)`.

    `gamma` already contains the stabilization terms; `phi` is zero on the
    Pfaffian rows; `velocity_error` is `C v + b`.
    """

    M: Float[Array, "nv nv"]
    Minv: Float[Array, "nv nv"]
    F: Float[Array, " nv"]
    C: Float[Array, "nc nv"]
    gamma: Float[Array, " nc"]
    phi: Float[Array, " nc"]
    velocity_error: Float[Array, " nc"]


def dynamics_terms(model: Model, q: Array, v: Array, t: Array, alpha: float = 0.0,
                   beta: float = 0.0, with_phi: bool = True) -> DynamicsTerms:
    """The terms at `(q, v, t)`; `alpha, beta` are Baumgarte's gains:
    `C v_dot = Gamma - 2 alpha (C v + b) - beta^2 Phi`. With `with_phi=False`
    (and `beta = 0`) `Phi` is not evaluated and left at zero (less to compile
    inside an integrator)."""
    C, b, gamma = constraint_terms(model, q, v, t)
    hol = jnp.asarray(model.holonomic_rows)
    residual = (jnp.where(hol, phi(model, q, t), 0.0) if with_phi or beta
                else jnp.zeros(model.nc))
    velocity_error = C @ v + b
    if alpha or beta:
        gamma = gamma - 2.0 * alpha * velocity_error - beta**2 * residual
    return DynamicsTerms(mass_matrix(model), inverse_mass_matrix(model),
                         generalized_forces(model, q, v, t), C, gamma, residual, velocity_error)


def constraint_rank(model: Model, q, t, rtol: float, rows=None) -> int:
    """Host-side: the rank of `C` (or of its `rows`) at a configuration on the
    constraints, where redundant rows give singular values at rounding level."""
    from .._assembly import constraint_matrix

    C = np.asarray(constraint_matrix(model, q, t))
    C = C if rows is None else C[np.asarray(rows)]
    s = np.linalg.svd(C, compute_uv=False)
    return int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0


def top_mask(n: int, rank: int | None) -> np.ndarray:
    """`(n,)` mask of the `rank` leading positions (all when `rank` is None)."""
    return np.arange(n) < (n if rank is None else rank)


def _eig_pinv(A: Array, rtol: float, rank: int | None):
    """`(U, inverse eigenvalues, kept)` of the symmetric positive semidefinite `A`."""
    w, U = jnp.linalg.eigh(A)  # ascending
    if rank is None:
        keep = w > rtol * jnp.max(jnp.abs(w), initial=0.0)
    else:
        keep = jnp.asarray(top_mask(w.shape[0], rank)[::-1]) & (w > 0)
    return U, jnp.where(keep, 1.0 / jnp.where(keep, w, 1.0), 0.0), keep


@functools.partial(jax.custom_jvp, nondiff_argnums=(2, 3))
def min_norm_solve(A: Array, b: Array, rtol: float, rank: int | None = None) -> Array:
    """Minimum-norm least-squares solution of the symmetric positive semidefinite
    system `A x = b`: on its `rank` largest eigenvalues, or (`rank=None`) on those
    above `rtol * max`.

    Differentiable: the derivative is that of `A^+ b` at constant rank
    (Golub and Pereyra), so it never differentiates the eigenvectors, whose
    derivatives do not exist where eigenvalues repeat (e.g. several redundant
    constraints).
    """
    U, inv, _ = _eig_pinv(A, rtol, rank)
    return U @ (inv * (U.T @ b))


@min_norm_solve.defjvp
def _min_norm_solve_jvp(rtol, rank, primals, tangents):
    A, b = primals
    dA, db = tangents
    U, inv, keep = _eig_pinv(A, rtol, rank)

    def pinv(y):
        return U @ (inv * (U.T @ y))

    x = pinv(b)
    # d(A^+) b for symmetric A and dA: -A^+ dA A^+ b + A^+ A^+ dA (I - A A^+) b
    # + (I - A^+ A) dA A^+ A^+ b.
    u = dA @ pinv(x)
    dx = pinv(db - dA @ x) + pinv(pinv(dA @ (b - A @ x))) + u - U @ (keep * (U.T @ u))
    return x, dx


def row_values(model: Model, values, what: str, default: float | None = None) -> np.ndarray:
    """Per-row values `(nc,)` from a scalar or a mapping keyed by element name or
    `"element.component"` (a component entry overrides its element's)."""
    if not isinstance(values, Mapping):
        return np.full(model.nc, float(values))
    out = np.full(model.nc, np.nan if default is None else default)
    for key in sorted(values, key=lambda k: "." in k):  # elements first, then components
        name, _, comp = key.partition(".")
        try:
            info = model.element(name)
        except ValueError as err:
            raise ValueError(f"{what}: {err}") from None
        a, _ = info.rows
        if comp:
            if comp not in info.components:
                raise ValueError(f"{what}: element {name!r} has no component {comp!r}; its "
                                 f"components are {', '.join(info.components)}")
            out[a + info.components.index(comp)] = float(values[key])
        else:
            out[model.rows(name)] = float(values[key])
    missing = sorted({model.element_of_row(i) for i in np.flatnonzero(np.isnan(out))})
    if missing:
        raise ValueError(f"{what} gives no value for the elements {', '.join(missing)}; give one "
                         "for every element (or a single number for all of them)")
    return out


def require_prepared(formulation: "AbstractFormulation", where: str) -> None:
    """Refuse an unprepared formulation where the model or state is traced."""
    if not formulation.prepared:
        raise ValueError(
            f"{where}: the model or the state is traced (jax.grad, jax.vmap or jax.jit over "
            f"it), so {type(formulation).__name__} cannot decide the rank of C from values "
            "here; prepare it on a concrete model first and pass that, e.g. "
            f"formulation = jmbs.{type(formulation).__name__}().prepare(model, model.q0, 0.0)")


class AbstractFormulation(eqx.Module):
    """A way of solving the equations of motion of a (possibly redundantly)
    constrained system at one state."""

    # Whether `solve` reads `DynamicsTerms.phi` (compliance laws do).
    needs_phi: ClassVar[bool] = False

    def prepare(self, model: Model, q: Array, t: float) -> "AbstractFormulation":
        """Host-side, once per run: resolve element names into rows and check the
        choice against the model at `(q, t)`. Returns the formulation to trace."""
        return self

    @property
    def prepared(self) -> bool:
        """Whether `prepare` has made its value-dependent choices (rank, rows), so
        that `solve` can be traced with a traced model (`jax.grad`, `jax.vmap`)."""
        return True

    @abc.abstractmethod
    def solve(self, terms: DynamicsTerms) -> tuple[Float[Array, " nv"], Float[Array, " nc"]]:
        """`(v_dot, lambda)` at one state."""

    def rigid_rows(self, model: Model) -> Bool[Array, " nc"] | np.ndarray:
        """Rows treated as rigid constraints (their reactions' uniqueness is decided
        by the solvability analysis); the others' reactions are set by a compliance
        law and are unique."""
        return np.ones(model.nc, bool)
