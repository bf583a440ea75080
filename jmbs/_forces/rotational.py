"""Rotational spring-damper about a revolute joint's axis."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from .._bodies import body_qdot
from .base import AbstractForce, LoadInputs, joint_coordinate, joint_group_key, names_and_bodies


class RotationalSpringDamper(AbstractForce):
    """A torque `-(stiffness (theta - rest_angle) + damping theta')` on body j about the
    joint axis (its opposite on body i), `theta` the joint's angle from the reference
    configuration (spatial joints: in (-pi, pi])."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    angle: eqx.Module  # measures the joint angle (a driver group with a zero motion)
    stiffness: Array
    damping: Array
    rest_angle: Array
    kind: ClassVar[str] = "rotational_spring_damper"

    group_key = classmethod(joint_group_key)

    @classmethod
    def derive(cls, specs, ctx):
        return cls(*names_and_bodies(specs), joint_coordinate(specs, ctx),
                   ctx.stack(specs, "stiffness"), ctx.stack(specs, "damping"),
                   ctx.stack(specs, "rest_angle"))

    def coordinate(self, qs: Array) -> Array:
        return self.angle.phi(qs, jnp.zeros(()))[:, 0]

    def rate(self, qs, vs):
        return jax.jvp(self.coordinate, (qs,), (body_qdot(qs, vs),))[1][:, None]

    def load(self, qs, vs, x: LoadInputs):
        theta, rate = self.coordinate(qs), self.rate(qs, vs)[:, 0]
        return -(self.stiffness * (theta - self.rest_angle) + self.damping * rate)[:, None]

    def potential(self, qs):
        return 0.5 * self.stiffness * (self.coordinate(qs) - self.rest_angle) ** 2
