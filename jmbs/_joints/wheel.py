"""A thin wheel (disc) rolling without slipping on a plane, in 3-D: one holonomic
contact row and two nonholonomic rolling rows.

The wheel is body j (its centre of mass at the disc's centre), the plane is fixed
to the ground (body i). With `a` the axle (global), `n` the plane's unit normal,
the contact point is the disc's point nearest the plane, `P = r + rho d` with
`d = -(n - (n.a) a) / |n - (n.a) a|`. The rows:

- `Fn` (holonomic): `Phi = n.(r - p0) - rho sqrt(1 - (n.a)^2)`, the rim touches the
  plane. Its velocity row is `n . v_P` of the material point at `P` (the rim is
  tangent to the plane there), so its reaction is a force along `n` at `P`;
- `Ft`, `Fs` (Pfaffian): no slip, `t . v_P = 0` along the rolling direction
  `t = a x n / |a x n|` and sideways `s = n x t`, with `v_P = r_dot + omega x rho d`.

Singular where the disc lies flat (`a` parallel to `n`).
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from .._bodies import body_qdot, position, rotation
from .._rotations import cross
from .base import AbstractElement, AbstractHolonomic, unit_wrenches


def _unit(x: Array) -> Array:
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


class Wheel(AbstractHolonomic):
    """Thin wheels of radius `rho` rolling without slipping on a plane (3-D)."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    radius: Array  # (n,)
    a_j: Array  # (n, 3) unit axle in the wheel's frame
    p0: Array  # (n, 3) a point of the plane (global)
    normal: Array  # (n, 3) the plane's unit normal (global)
    kind: ClassVar[str] = "wheel"
    components: ClassVar[tuple[str, ...]] = ("Fn", "Ft", "Fs")
    # Which rows are holonomic (`Model.holonomic_rows`); the others are Pfaffian.
    row_holonomic: ClassVar[tuple[bool, ...]] = (True, False, False)

    @classmethod
    def derive(cls, specs, ctx):
        _, Rj = ctx.pose(specs, 1)
        a = _unit(ctx.stack(specs, "axis"))
        # The plane is fixed to the ground (body i), whose reference pose is the identity.
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   ctx.stack(specs, "radius"), jnp.einsum("nji,nj->ni", Rj, a),
                   ctx.stack(specs, "plane_point"), _unit(ctx.stack(specs, "plane_normal")))

    def _frame(self, q: Array):
        """`(R, d, t, s, sin)` of one instance from its wheel's `q (7,)`: rotation, unit
        vector from the centre to the contact point, rolling and side directions, and
        `|n - (n.a) a|`."""
        R = rotation(q)
        a = R @ self.a_j
        w = self.normal - jnp.dot(self.normal, a) * a
        sin = jnp.linalg.norm(w)
        t = _unit(cross(a, self.normal))
        return R, -w / sin, t, cross(self.normal, t), sin

    def phi(self, qs, t):
        def one(el, q):
            sin = el._frame(q[1])[4]
            contact = jnp.dot(el.normal, position(q[1]) - el.p0) - el.radius * sin
            return jnp.stack([contact, 0.0 * contact, 0.0 * contact])

        return jax.vmap(one)(self, qs)

    def _rolling_rows(self, qs):
        """`(n, 2, 6)`: the wheel's velocity rows of `t . v_P` and `s . v_P`."""
        def one(el, q):
            R, d, tt, s, _ = el._frame(q[1])
            return jnp.stack([jnp.concatenate([e, el.radius * R.T @ cross(d, e)]) for e in (tt, s)])

        return jax.vmap(one)(self, qs)

    def velocity_map(self, qs, vs, t):
        contact = jax.jvp(lambda q: self.phi(q, t), (qs,), (body_qdot(qs, vs),))[1][:, :1]
        rolling = jnp.einsum("nrk,nk->nr", self._rolling_rows(qs), vs[:, 1])
        return jnp.concatenate([contact, rolling], axis=1)

    def velocity_bias(self, qs, t):
        return jnp.zeros(qs.shape[:1] + (3,))

    def velocity_residual(self, qs, vs, t):
        # The rolling rows are not rates of `phi` (zero there): `C v + b` from the rows.
        return AbstractElement.velocity_residual(self, qs, vs, t)

    def wrenches(self, qs, t):
        def one(el, q):
            _, d, tt, s, _ = el._frame(q[1])
            return position(q[1]) + el.radius * d, tt, s

        P, T, S = jax.vmap(one)(self, qs)
        normal = jnp.broadcast_to(self.normal, P.shape)
        return unit_wrenches(P, [(normal, None), (T, None), (S, None)])
