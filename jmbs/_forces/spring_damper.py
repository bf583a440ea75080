"""Point-to-point spring-damper: a tension `k (L - L0) + c L'` (or a user law) along the line."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from .._bodies import point
from .._joints.base import local_points
from .base import AbstractMeasuredForce, LoadInputs, names_and_bodies


def _length(s_i, s_j, q):
    d = point(q[1], s_j) - point(q[0], s_i)
    dd = jnp.sum(d * d)
    safe = jnp.where(dd > 0, dd, 1.0)  # no NaN derivative where the points meet
    return jnp.where(dd > 0, jnp.sqrt(safe), 0.0)


class SpringDamper(AbstractMeasuredForce):
    """Between the points `s_i` on body i and `s_j` on body j (body frames). The law
    gives the tension (positive pulls the points together): the linear
    `stiffness (L - rest_length) + damping L'`, or `law(L, L')`."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    laws: tuple = eqx.field(static=True)
    s_i: Array
    s_j: Array
    stiffness: Array
    damping: Array
    rest_length: Array
    kind: ClassVar[str] = "spring_damper"

    @classmethod
    def derive(cls, specs, ctx):
        def get(key):  # a user law has no linear coefficients
            return ctx.params.stack([f"{s.name}.{key}" for s in specs], default=0.0)

        names, bodies = names_and_bodies(specs)
        return cls(names, bodies, tuple(s.law for s in specs),
                   local_points(ctx, specs, 0, ctx.stack(specs, "point_i")),
                   local_points(ctx, specs, 1, ctx.stack(specs, "point_j")),
                   get("stiffness"), get("damping"), get("rest_length"))

    def measure(self, qs: Array) -> Array:
        """`(n, 1)` the distance between the two points."""
        return jax.vmap(_length)(self.s_i, self.s_j, qs)[:, None]

    def law(self, c, rate, x: LoadInputs):
        L, rate = c[:, 0], rate[:, 0]
        tension = self.stiffness * (L - self.rest_length) + self.damping * rate
        if any(f is not None for f in self.laws):
            tension = jnp.stack([tension[k] if f is None else jnp.asarray(f(L[k], rate[k]), float)
                                 .reshape(()) for k, f in enumerate(self.laws)])
        return -tension[:, None]

    def potential_at(self, c):
        linear = jnp.asarray([f is None for f in self.laws])
        return jnp.where(linear, 0.5 * self.stiffness * (c[:, 0] - self.rest_length) ** 2, 0.0)
