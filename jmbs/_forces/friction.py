"""Joint friction: viscous plus smoothly regularised Coulomb friction whose Coulomb part
scales with the magnitude of the joint's reaction force."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._bodies import body_qdot
from .base import AbstractForce, LoadInputs, joint_coordinate, joint_group_key, names_and_bodies


def _norm(x: Array) -> Array:
    xx = jnp.sum(x * x, axis=-1)
    return jnp.where(xx > 0, jnp.sqrt(jnp.where(xx > 0, xx, 1.0)), 0.0)


class JointFriction(AbstractForce):
    """Along the joint's free coordinate `c`, the force (torque) on body j is
    `-(viscous c' + coulomb |R| radius tanh(c' / velocity_scale))`, `|R|` the
    magnitude of the joint's reaction force (its force components) and `radius`
    1 on a slide. The reaction comes from the multipliers, so the dynamics solve
    for both together (`solve_dynamics`)."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    reaction_rows: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    joint: eqx.Module  # measures the joint coordinate (a driver group with a zero motion)
    coulomb: Array
    viscous: Array
    radius: Array
    velocity_scale: Array
    kind: ClassVar[str] = "joint_friction"
    reads_reactions: ClassVar[bool] = True

    group_key = classmethod(joint_group_key)

    @classmethod
    def derive(cls, specs, ctx):
        def get(key, default):
            return ctx.params.stack([f"{s.name}.{key}" for s in specs], default=default)

        return cls(*names_and_bodies(specs), tuple(s.reaction_rows for s in specs),
                   joint_coordinate(specs, ctx), get("coulomb", 0.0), get("viscous", 0.0),
                   get("radius", 1.0), get("velocity_scale", 1.0))

    def rate(self, qs, vs):
        return jax.jvp(lambda q: self.joint.phi(q, jnp.zeros(())), (qs,), (body_qdot(qs, vs),))[1]

    def normal_force(self, lam: Array) -> Array:
        """`(n,)` the magnitude of each joint's reaction force (`-lambda` on its rows)."""
        return _norm(lam[np.asarray(self.reaction_rows)])

    def load(self, qs, vs, x: LoadInputs):
        rate = self.rate(qs, vs)[:, 0]
        normal = jnp.zeros(rate.shape) if x.lam is None else self.normal_force(x.lam)
        coulomb = self.coulomb * normal * self.radius * jnp.tanh(rate / self.velocity_scale)
        return -(self.viscous * rate + coulomb)[:, None]
