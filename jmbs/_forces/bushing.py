"""Bushing: a linear spring-damper per component between two bodies' frames at a point."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from .._bodies import position, rotation
from .._joints.base import local_frames, local_points
from .base import AbstractMeasuredForce, LoadInputs, names_and_bodies


def _deflection(s_i, s_j, E_i, E_j, q):
    """The bushing's coordinates: the displacement of body j's point from body i's in the
    bushing frame (global axes at the reference, fixed in body i), then the relative
    rotation: planar the angle, spatial `vee(R - R^T) / 2` of the relative rotation
    `R` (`sin(angle) axis`: the rotation vector for small rotations)."""
    Ri, Rj = rotation(q[0]), rotation(q[1])
    Fi, Fj = Ri @ E_i, Rj @ E_j
    d = Fi.T @ (position(q[1]) + Rj @ s_j - position(q[0]) - Ri @ s_i)
    if q.shape[-1] == 3:
        angle = jnp.arctan2(Fi[:, 0] @ Fj[:, 1], Fi[:, 0] @ Fj[:, 0])
        return jnp.concatenate([d, angle[None]])
    R = Fi.T @ Fj
    w = 0.5 * jnp.stack([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])  # sin(angle) axis
    c = 0.5 * (jnp.trace(R) - 1.0)  # cos(angle)
    ww = jnp.sum(w * w)
    s = jnp.sqrt(jnp.where(ww > 0, ww, 1.0))
    # angle / sin(angle), smooth through zero (where it is 1 / cos(angle) to second order)
    factor = jnp.where(ww > 0, jnp.arctan2(s, c) / s, 1.0 / c)
    return jnp.concatenate([d, factor * w])


class Bushing(AbstractMeasuredForce):
    """Loads `-(stiffness * c + damping * c')` along the bushing's coordinates `c`
    (translations `x, y[, z]`, then rotations); conservative with the potential
    `stiffness . c^2 / 2`. The compliant replacement of a joint."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    s_i: Array
    s_j: Array
    E_i: Array
    E_j: Array
    stiffness: Array
    damping: Array
    kind: ClassVar[str] = "bushing"

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        n, dim = P.shape
        E = jnp.broadcast_to(jnp.eye(dim), (n, dim, dim))
        return cls(*names_and_bodies(specs), local_points(ctx, specs, 0, P),
                   local_points(ctx, specs, 1, P), local_frames(ctx, specs, 0, E),
                   local_frames(ctx, specs, 1, E), ctx.stack(specs, "stiffness"),
                   ctx.stack(specs, "damping"))

    def measure(self, qs: Array) -> Array:
        """`(n, 3 | 6)` the bushing's coordinates (zero in the reference configuration)."""
        return jax.vmap(_deflection)(self.s_i, self.s_j, self.E_i, self.E_j, qs)

    def law(self, c, rate, x: LoadInputs):
        return -(self.stiffness * c + self.damping * rate)

    def potential_at(self, c):
        return 0.5 * jnp.sum(self.stiffness * c ** 2, axis=1)
