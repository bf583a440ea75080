"""The dynamics terms at one state, what every formulation and stabilization reads:
`F`, `Gamma`, `Phi` and `C v + b`, with `C` and `M` in one of two forms behind one
interface: `DenseTerms` (the matrices) or `BlockTerms` (`C`'s nonzero blocks and the
bodies' mass matrices, for the assembly-tree solvers); and Baumgarte's feedback in
`Gamma`."""

import abc

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._assembly import (
    blocks_matvec,
    body_mass,
    constraint_terms,
    constraint_terms_blocks,
    forces_and_power,
    inverse_mass_matrix,
    mass_matrix,
    phi,
)
from ._bodies import NV
from ._model import Model


class DynamicsTerms(eqx.Module):
    """Everything a formulation needs at one state `(q, v, t)`: the interface of the
    two forms (`DenseTerms`, `BlockTerms`).

    `gamma` already contains the stabilization terms; `phi` is zero on the
    Pfaffian rows; `velocity_error` is `C v + b`; `power` is the force elements'
    non-conservative power (`element_power`, friction's left out).
    """

    F: Float[Array, " nv"]
    power: Float[Array, ""]
    gamma: Float[Array, " nc"]
    phi: Float[Array, " nc"]
    velocity_error: Float[Array, " nc"]

    @abc.abstractmethod
    def tree_blocks(self, plan) -> tuple[Float[Array, "P nvb"], Float[Array, "nb nvb nvb"]]:
        """`(C's blocks in the entry order of the assembly tree's plan (`_tree.plan.Plan`),
        the bodies' mass matrices)`."""

    @abc.abstractmethod
    def dense_matrix(self) -> Float[Array, "nc nv"] | None:
        """`C` where it is formed; `None` for `BlockTerms` (whoever needs the dense
        matrix evaluates it, or works from the blocks)."""


class DenseTerms(DynamicsTerms):
    """The terms with `M`, `M^-1` and `C` as dense matrices (the dense formulations)."""

    M: Float[Array, "nv nv"]
    Minv: Float[Array, "nv nv"]
    C: Float[Array, "nc nv"]

    def tree_blocks(self, plan):
        nvb = NV[plan.dim]
        idx = np.arange(plan.n_bodies)[:, None] * nvb + np.arange(nvb)
        return (gather_blocks(self.C, plan.entry_rows, plan.entry_bodies, nvb),
                self.M[idx[:, :, None], idx[:, None, :]])

    def dense_matrix(self):
        return self.C


class BlockTerms(DynamicsTerms):
    """The terms with no dense matrix: `C` as its nonzero blocks (`constraint_blocks`'
    layout) and `M` as the bodies' mass matrices (`jmbs.DivideAndConquer`)."""

    blocks: Float[Array, "P nvb"]
    body_mass: Float[Array, "nb nvb nvb"]

    def tree_blocks(self, plan):
        return self.blocks[plan.entry_pick], self.body_mass

    def dense_matrix(self):
        return None


def gather_blocks(C: Array, rows: np.ndarray, bodies: np.ndarray, nvb: int) -> Array:
    """`C`'s blocks of the `(row, body)` pairs, `(P, nvb)`, from the dense matrix."""
    return C[rows[:, None], bodies[:, None] * nvb + np.arange(nvb)]


def _is_zero(x) -> bool:
    """Whether `x` is a Python or NumPy zero (an array leaf may be traced: not known)."""
    return isinstance(x, (int, float, np.ndarray, np.number)) and not np.any(x)


def baumgarte_gamma[T: DynamicsTerms](terms: T, alpha, beta) -> T:
    """`terms` with Baumgarte's feedback in `Gamma`: `Gamma - 2 alpha (C v + b) - beta^2 Phi`."""
    gamma = terms.gamma - 2.0 * alpha * terms.velocity_error - beta**2 * terms.phi
    return eqx.tree_at(lambda x: x.gamma, terms, gamma)


def dynamics_terms(model: Model, q: Array, v: Array, t: Array, alpha: float = 0.0,
                   beta: float = 0.0, with_phi: bool = True, dense: bool = True) -> DynamicsTerms:
    """The terms at `(q, v, t)`; `alpha, beta` are Baumgarte's gains:
    `C v_dot = Gamma - 2 alpha (C v + b) - beta^2 Phi`. With `with_phi=False`
    (and `beta = 0`) `Phi` is not evaluated and left at zero (less to compile
    inside an integrator). `DenseTerms`, or with `dense=False` `BlockTerms` (no
    dense matrix is formed)."""
    hol = jnp.asarray(model.holonomic_rows)
    residual = (jnp.where(hol, phi(model, q, t), 0.0) if with_phi or not _is_zero(beta)
                else jnp.zeros(model.nc))
    F, power = forces_and_power(model, q, v, t)
    if dense:
        C, b, gamma = constraint_terms(model, q, v, t)
        terms = DenseTerms(F=F, power=power, gamma=gamma, phi=residual, velocity_error=C @ v + b,
                           M=mass_matrix(model), Minv=inverse_mass_matrix(model), C=C)
    else:
        blocks, b, gamma = constraint_terms_blocks(model, q, v, t)
        terms = BlockTerms(F=F, power=power, gamma=gamma, phi=residual,
                           velocity_error=blocks_matvec(model, blocks, v) + b, blocks=blocks,
                           body_mass=body_mass(model))
    if _is_zero(alpha) and _is_zero(beta):
        return terms
    return baumgarte_gamma(terms, alpha, beta)
