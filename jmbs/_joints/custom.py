"""User-defined holonomic `Phi(q_bodies, t)` and Pfaffian `Psi(q_bodies)` constraints.

`q_bodies` is a tuple with the coordinates of each listed body, in order. A
function may take a third (holonomic) or second (Pfaffian) argument: a dict
of design parameters, given to the builder as `params={...}`. Each user
constraint is its own group (its function is its own code).
"""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array

from .base import AbstractHolonomic, AbstractPfaffian, ConstraintSpec


def _params(spec: ConstraintSpec, ctx) -> dict:
    return {k: jnp.asarray(ctx.params[f"{spec.name}.{k}"]) for k in spec.param_keys}


class CustomHolonomic(AbstractHolonomic):
    """`fn(q_bodies, t[, params]) -> (m,)`."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    components: tuple[str, ...] = eqx.field(static=True)
    fn: object = eqx.field(static=True)
    params: dict
    kind: ClassVar[str] = "holonomic"

    @classmethod
    def group_key(cls, spec):
        return (cls, spec.name)

    @classmethod
    def derive(cls, specs, ctx):
        (s,) = specs
        return cls((s.name,), (s.bodies,), s.components, s.fn, _params(s, ctx))

    def phi(self, qs: Array, t):
        q = tuple(qs[0, k] for k in range(qs.shape[1]))
        out = self.fn(q, t, self.params) if self.params else self.fn(q, t)
        return jnp.reshape(out, (1, -1))


class CustomPfaffian(AbstractPfaffian):
    """`fn(q_bodies[, params]) -> (m, k * nv_b)`, acting on the bodies' velocities."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    components: tuple[str, ...] = eqx.field(static=True)
    fn: object = eqx.field(static=True)
    params: dict
    kind: ClassVar[str] = "pfaffian"

    @classmethod
    def group_key(cls, spec):
        return (cls, spec.name)

    @classmethod
    def derive(cls, specs, ctx):
        (s,) = specs
        return cls((s.name,), (s.bodies,), s.components, s.fn, _params(s, ctx))

    def psi(self, qs):
        k, nv_b = qs.shape[1], 3 if qs.shape[-1] == 3 else 6
        q = tuple(qs[0, i] for i in range(k))
        out = self.fn(q, self.params) if self.params else self.fn(q)
        return jnp.reshape(out, (1, -1, k, nv_b))
