"""Planar joints and the knife edge, in absolute coordinates `(x, y, phi)`.

Reaction components: the revolute and weld position rows are global `Fx, Fy`;
the prismatic joint's rows are the force normal to its axis `Fn` and the
moment `M`; the knife edge's row is the lateral force `Fn` at the contact
point.
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from .._bodies import dot, point, position, rotate
from .._rotations import perp2
from .base import AbstractHolonomic, AbstractPfaffian, DeriveContext, local_points, unit_wrenches


def ref_angle(ctx: DeriveContext, specs) -> Array:
    """Relative angle `phi_j - phi_i` in the reference configuration."""
    _, Ri = ctx.pose(specs, 0)
    _, Rj = ctx.pose(specs, 1)
    return jnp.arctan2(Rj[:, 1, 0], Rj[:, 0, 0]) - jnp.arctan2(Ri[:, 1, 0], Ri[:, 0, 0])


def _point_rows(qs: Array, s_i: Array, s_j: Array) -> Array:
    """`C`'s blocks of `point_j - point_i` in closed form, `(n, 2, 2, 3)`: with `a = R s`
    the arm, a point's rate is `r' + omega perp(a)`. Written out rather than taken as
    the JVP of `phi` over the six unit velocities: under `vmap` XLA recomputed the
    arms' sines and cosines for every one of them (A02's batched step)."""

    def one(q, si, sj):
        ai, aj = perp2(rotate(q[0], si)), perp2(rotate(q[1], sj))
        eye = jnp.eye(2)
        return jnp.stack([jnp.concatenate([-eye, -ai[:, None]], axis=1),
                          jnp.concatenate([eye, aj[:, None]], axis=1)], axis=1)

    return jax.vmap(one)(qs, s_i, s_j)


def _angle_row(n: int) -> Array:
    """`C`'s blocks of `phi_j - phi_i`, `(n, 1, 2, 3)`."""
    return jnp.broadcast_to(jnp.array([[[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]]]), (n, 1, 2, 3))


class PlanarRevolute(AbstractHolonomic):
    """Pin joint: the joint point of both bodies coincides."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    s_i: Array
    s_j: Array
    kind: ClassVar[str] = "revolute"
    components: ClassVar[tuple[str, ...]] = ("Fx", "Fy")

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P))

    def phi(self, qs, t):
        return jax.vmap(lambda el, q: point(q[1], el.s_j) - point(q[0], el.s_i))(self, qs)

    def blocks(self, qs, t):
        return _point_rows(qs, self.s_i, self.s_j)

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        ex, ey = (jnp.broadcast_to(e, P.shape) for e in jnp.eye(2))
        return unit_wrenches(P, [(ex, None), (ey, None)])


class PlanarPrismatic(AbstractHolonomic):
    """Translational joint: body j slides along the axis fixed in body i, no rotation."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    s_i: Array
    s_j: Array
    u_i: Array  # unit axis in body i
    theta0: Array
    kind: ClassVar[str] = "prismatic"
    components: ClassVar[tuple[str, ...]] = ("Fn", "M")

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        a = ctx.stack(specs, "axis")
        a = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
        _, Ri = ctx.pose(specs, 0)
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P),
                   jnp.einsum("nji,nj->ni", Ri, a), ref_angle(ctx, specs))

    def phi(self, qs, t):
        def one(el, q):
            d = point(q[1], el.s_j) - point(q[0], el.s_i)
            n = perp2(rotate(q[0], el.u_i))
            return jnp.stack([dot(n, d), q[1, 2] - q[0, 2] - el.theta0])

        return jax.vmap(one)(self, qs)

    def blocks(self, qs, t):
        """Closed form (see `_point_rows`): `n . d` with `n = perp(R_i u_i)` turning with
        body i (`n' = omega_i perp(n)`) and `d` the points' separation."""

        def one(el, q):
            ri, rj = rotate(q[0], el.s_i), rotate(q[1], el.s_j)
            d = position(q[1]) + rj - position(q[0]) - ri
            n = perp2(rotate(q[0], el.u_i))
            return jnp.stack([jnp.concatenate([-n, (dot(perp2(n), d) - dot(n, perp2(ri)))[None]]),
                              jnp.concatenate([n, dot(n, perp2(rj))[None]])])[None]

        return jnp.concatenate([jax.vmap(one)(self, qs), _angle_row(len(qs))], axis=1)

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        n = jax.vmap(lambda q, u: perp2(rotate(q, u)))(qs[:, 0], self.u_i)
        return unit_wrenches(P, [(n, None), (None, jnp.ones((P.shape[0], 1)))])


class PlanarWeld(AbstractHolonomic):
    """Rigid connection: relative position and angle fixed."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    s_i: Array
    s_j: Array
    theta0: Array
    kind: ClassVar[str] = "weld"
    components: ClassVar[tuple[str, ...]] = ("Fx", "Fy", "M")

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P), ref_angle(ctx, specs))

    def phi(self, qs, t):
        def one(el, q):
            d = point(q[1], el.s_j) - point(q[0], el.s_i)
            return jnp.concatenate([d, (q[1, 2] - q[0, 2] - el.theta0)[None]])

        return jax.vmap(one)(self, qs)

    def blocks(self, qs, t):
        return jnp.concatenate([_point_rows(qs, self.s_i, self.s_j), _angle_row(len(qs))], axis=1)

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        ex, ey = (jnp.broadcast_to(e, P.shape) for e in jnp.eye(2))
        return unit_wrenches(P, [(ex, None), (ey, None), (None, jnp.ones((P.shape[0], 1)))])


class KnifeEdge(AbstractPfaffian):
    """Knife edge (or wheel without side slip) on body j: the contact point
    has no velocity across the edge direction."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    s_j: Array
    e_j: Array  # unit edge direction in body j
    kind: ClassVar[str] = "knife_edge"
    components: ClassVar[tuple[str, ...]] = ("Fn",)

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        e = ctx.stack(specs, "direction")
        e = e / jnp.linalg.norm(e, axis=-1, keepdims=True)
        _, Rj = ctx.pose(specs, 1)
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 1, P), jnp.einsum("nji,nj->ni", Rj, e))

    def psi(self, qs):
        def one(el, q):
            n = perp2(rotate(q[1], el.e_j))
            # v_P = r_dot + phi_dot * perp(R s); the ground column stays zero.
            row_j = jnp.concatenate([n, dot(n, perp2(rotate(q[1], el.s_j)))[None]])
            return jnp.stack([jnp.zeros(3), row_j])[None]

        return jax.vmap(one)(self, qs)

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        n = jax.vmap(lambda q, e: perp2(rotate(q, e)))(qs[:, 1], self.e_j)
        return unit_wrenches(P, [(n, None)])
