"""Distance constraint (massless rod), planar or spatial."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._bodies import dot, point
from .base import AbstractHolonomic, local_points, unit_wrenches
from .spatial import rotations, separation


class Distance(AbstractHolonomic):
    """Massless rod between two body points (planar or spatial): their distance stays `length`.

    The row `(|d|^2 - L^2) / (2 L)` has the rod direction as its gradient, so
    the multiplier is the rod force.
    """

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    s_i: Array
    s_j: Array
    length: Array
    kind: ClassVar[str] = "distance"
    components: ClassVar[tuple[str, ...]] = ("F",)

    @classmethod
    def derive(cls, specs, ctx):
        Pi = ctx.stack(specs, "point_i")
        Pj = ctx.stack(specs, "point_j")
        # The given length, else the points' reference distance (one gather, one norm; the
        # norm's argument is 1 where a length is given, so coincident points there give no
        # NaN derivative).
        given = np.array(["length" in s.params for s in specs])
        d2 = jnp.sum((Pj - Pi) ** 2, axis=1)
        L = jnp.sqrt(jnp.where(given, 1.0, d2))
        if given.any():
            L = jnp.where(given, ctx.params.stack([f"{s.name}.length" for s in specs], default=0.0), L)
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 0, Pi), local_points(ctx, specs, 1, Pj), L)

    def phi(self, qs, t):
        def one(el, q):
            d = separation(q, rotations(q), el.s_i, el.s_j)
            return ((dot(d, d) - el.length**2) / (2 * el.length))[None]

        return jax.vmap(one)(self, qs)

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        d = jax.vmap(lambda q, s_i, s_j: separation(q, rotations(q), s_i, s_j))(qs, self.s_i, self.s_j)
        return unit_wrenches(P, [(d / jnp.linalg.norm(d, axis=-1, keepdims=True), None)])
