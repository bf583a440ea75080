"""Planar pin in a slot: a point of body j on a line fixed in body i (one row)."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from .._bodies import dot, point, rotate
from .._rotations import perp2
from .base import AbstractHolonomic, local_points, unit_wrenches


class PinInSlot(AbstractHolonomic):
    """The pin (the joint point of body j) slides in a slot through the joint point of
    body i along `axis` (fixed in body i); relative rotation is free. Component `Fn`:
    the force normal to the slot (the slot cannot carry a force along itself)."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    s_i: Array
    s_j: Array
    u_i: Array  # unit slot direction in body i
    kind: ClassVar[str] = "pin_in_slot"
    components: ClassVar[tuple[str, ...]] = ("Fn",)

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        a = ctx.stack(specs, "axis")
        a = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
        _, Ri = ctx.pose(specs, 0)
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P),
                   jnp.einsum("nji,nj->ni", Ri, a))

    def phi(self, qs, t):
        def one(el, q):
            d = point(q[1], el.s_j) - point(q[0], el.s_i)
            return dot(perp2(rotate(q[0], el.u_i)), d)[None]

        return jax.vmap(one)(self, qs)

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        n = jax.vmap(lambda q, u: perp2(rotate(q, u)))(qs[:, 0], self.u_i)
        return unit_wrenches(P, [(n, None)])
