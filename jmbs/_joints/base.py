"""Elements (joints, drivers, Pfaffian constraints) stored as stacked groups of one type.

A group holds every instance of one element type as a struct of arrays: each
array field has a leading axis over the instances, and the topology (names,
body indices) is static. The group evaluates all its instances with one
`jax.vmap`, so traced code never loops over joint instances.
"""

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._bodies import body_qdot
from .._params import ParamVector


@dataclass(frozen=True)
class ElementSpec:
    """What the builder recorded for one element (host-side, static, hashable).

    `kind` names its row in `jmbs.ELEMENT_TYPES`. `bodies` are indices into
    the model's bodies, with `n_bodies` standing for the ground. `params` lists
    the element's design-parameter names (the keys of `Model.params()` are
    `f"{name}.{param}"`). `components` names the reaction components (rows).
    Each family adds its own typed fields in a subclass below.
    """

    kind: str
    name: str
    bodies: tuple[int, ...]
    params: tuple[str, ...]
    components: tuple[str, ...]


@dataclass(frozen=True)
class JointSpec(ElementSpec):
    """A joint: its `params` are the geometry arguments given to the builder."""


@dataclass(frozen=True)
class DriverSpec(ElementSpec):
    """A driver: `coordinate(joint) = motion(t[, params])`.

    `motion` hashes by identity (a function) or by its text (`Expression`), so
    equal specs share compiled code. `param_keys` are the motion's own
    parameters (`()` after `Model.with_motions`, whose functions take none).
    """

    joint: str
    coordinate: str
    motion: Callable
    param_keys: tuple[str, ...]


@dataclass(frozen=True)
class ConstraintSpec(ElementSpec):
    """A user constraint: `fn` is `Phi(q_bodies, t[, params])` or `Psi(q_bodies[, params])`."""

    fn: Callable
    param_keys: tuple[str, ...]


@dataclass(frozen=True)
class DeriveContext:
    """Inputs from which a group re-derives its local quantities (traceable).

    `r0` and `R0` are the reference poses of the bodies, ground last:
    `(nb + 1, dim)` and `(nb + 1, dim, dim)`. `params` is the model's full
    parameters (`ParamVector`, read like a dictionary); `specs` maps every element name to its spec.
    """

    params: ParamVector
    r0: Array
    R0: Array
    specs: dict[str, ElementSpec]

    def __post_init__(self):
        object.__setattr__(self, "params", ParamVector.of(self.params))  # a dict is taken too

    def stack(self, specs, key: str) -> Array:
        return self.params.stack([f"{s.name}.{key}" for s in specs])

    def pose(self, specs, which: int) -> tuple[Array, Array]:
        idx = np.array([s.bodies[which] for s in specs])
        return self.r0[idx], self.R0[idx]


def local_points(ctx: DeriveContext, specs, which: int, P: Array) -> Array:
    """Local coordinates on body `which` (0: i, 1: j) of global reference points `P (n, dim)`."""
    r, R = ctx.pose(specs, which)
    return jnp.einsum("nji,nj->ni", R, P - r)


def local_frames(ctx: DeriveContext, specs, which: int, E: Array) -> Array:
    """Global reference frames `E (n, dim, dim)` expressed in body `which`."""
    _, R = ctx.pose(specs, which)
    return jnp.einsum("nji,njk->nik", R, E)


def unit_wrenches(P: Array, rows: list) -> tuple[Array, Array, Array]:
    """Stack per-component `(force (n, dim) | None, moment (n, 1 | 3) | None)` into
    the `(P, F, M)` of `AbstractElement.wrenches`; `None` is zero."""
    n, dim = P.shape
    nrot = 1 if dim == 2 else 3
    F = jnp.stack([jnp.zeros((n, dim)) if f is None else f for f, _ in rows], axis=1)
    M = jnp.stack([jnp.zeros((n, nrot)) if m is None else m for _, m in rows], axis=1)
    return P, F, M


class AbstractElement(eqx.Module):
    """A stacked group of elements of one type.

    Final groups set the class constants `kind` (their row in
    `jmbs.ELEMENT_TYPES`) and `components`, and implement `derive` (local
    quantities from the builder's global geometry) and either `phi`
    (`AbstractHolonomic`) or `psi` (`AbstractPfaffian`), which set `holonomic`.
    """

    names: eqx.AbstractVar[tuple[str, ...]]
    bodies: eqx.AbstractVar[tuple[tuple[int, ...], ...]]
    kind: eqx.AbstractClassVar[str]
    holonomic: eqx.AbstractClassVar[bool]
    # A variable, not a class constant: a user constraint names its own rows.
    components: eqx.AbstractVar[tuple[str, ...]]

    @classmethod
    @abc.abstractmethod
    def derive(cls, specs: list[ElementSpec], ctx: DeriveContext) -> "AbstractElement":
        """Build the stacked group from the builder's specs and parameters."""

    @property
    def n_rows(self) -> int:
        return len(self.components)

    @classmethod
    def group_key(cls, spec: ElementSpec) -> Any:
        """Elements with equal keys are stacked into one group."""
        return cls

    @abc.abstractmethod
    def velocity_map(self, qs: Array, vs: Array, t: Float[Array, ""]) -> Array:
        """`C v` of every instance (linear in `vs`): `(n, m)` from `qs (n, k, nq_b)`,
        `vs (n, k, nv_b)`."""

    @abc.abstractmethod
    def velocity_bias(self, qs: Array, t: Float[Array, ""]) -> Array:
        """`b` of every instance, `(n, m)`, so that the velocity constraints read `C v + b = 0`."""

    def velocity_residual(self, qs: Array, vs: Array, t: Float[Array, ""]) -> Array:
        """`C v + b` of every instance."""
        return self.velocity_map(qs, vs, t) + self.velocity_bias(qs, t)

    def blocks(self, qs: Array, t: Float[Array, ""]) -> Array:
        """Per-instance blocks `(n, m, k, nv_b)` of `C`. By default from `velocity_map`:
        `C v` is linear in `v` and instances are independent, so evaluating it at one
        unit velocity per body coordinate, broadcast over all instances, gives every
        instance's block at once. Elements with a closed form override it."""
        n, k = qs.shape[:2]
        nvb = 3 if qs.shape[-1] == 3 else 6
        basis = jnp.broadcast_to(jnp.eye(k * nvb).reshape(k * nvb, 1, k, nvb), (k * nvb, n, k, nvb))
        cols = jax.vmap(lambda vs: self.velocity_map(qs, vs, t))(basis)  # (k * nvb, n, m)
        return jnp.moveaxis(cols, 0, -1).reshape(n, -1, k, nvb)

    def wrenches(self, qs: Array, t: Float[Array, ""]) -> "tuple[Array, Array, Array] | None":
        """The physical meaning of the reaction components (free-body diagram).

        Returns `(P, F, M)`: for a unit value of each component, the force
        `F (n, m, dim)` and the moment `M (n, m, 1 | 3)` about the point
        `P (n, dim)` (global) that the element applies to body j; body i gets
        the opposite wrench. `None` for elements without a physical reaction
        basis (user constraints): their columns of the kinetostatic matrix
        are their generalized rows of `C`.
        """
        return None


class AbstractHolonomic(AbstractElement):
    """Holonomic elements: `Phi(q, t) = 0`; rows of `C` are `Phi_q N`."""

    holonomic: ClassVar[bool] = True

    @abc.abstractmethod
    def phi(self, qs: Array, t: Float[Array, ""]) -> Array:
        """Residual `(n, m)` of every instance from `qs (n, k, nq_b)`."""

    def velocity_map(self, qs, vs, t):
        return jax.jvp(lambda q: self.phi(q, t), (qs,), (body_qdot(qs, vs),))[1]

    def velocity_bias(self, qs, t):
        return jax.jvp(lambda tt: self.phi(qs, tt), (t,), (jnp.ones_like(t),))[1]

    def velocity_residual(self, qs, vs, t):
        """`C v + b = Phi_q N v + Phi_t`: the rate of `Phi` along `(q_dot, t_dot) = (N v, 1)`,
        one JVP where `velocity_map` plus `velocity_bias` take two (`gamma` differentiates
        it once more, so the saving doubles there)."""
        return jax.jvp(lambda q, tt: self.phi(q, tt), (qs, t), (body_qdot(qs, vs), jnp.ones_like(t)))[1]


class AbstractPfaffian(AbstractElement):
    """Pfaffian (nonholonomic) elements: `Psi(q) v = 0`."""

    holonomic: ClassVar[bool] = False

    @abc.abstractmethod
    def psi(self, qs: Array) -> Array:
        """Constraint rows `(n, m, k, nv_b)` of every instance."""

    def velocity_map(self, qs, vs, t):
        return jnp.sum(self.psi(qs) * vs[:, None], axis=(2, 3))

    def velocity_bias(self, qs, t):
        return jnp.zeros(qs.shape[:1] + (self.n_rows,))
