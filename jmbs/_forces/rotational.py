"""Spring-dampers along a joint's free coordinate: about a revolute (or cylindrical) joint's
axis, or along a prismatic (or cylindrical) joint's slide."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from .._bodies import body_qdot
from .base import AbstractForce, LoadInputs, joint_coordinate, joint_group_key, names_and_bodies


class AbstractJointSpringDamper(AbstractForce):
    """A generalized force `-(stiffness (c - rest) + damping c')` on body j along the
    joint coordinate `c` (its opposite on body i), `c` measured from the reference
    configuration (spatial angles: in (-pi, pi]). A member names its `kind` and the
    builder argument of its `rest` value (`rest_key`)."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    joint: eqx.Module  # measures the coordinate (a driver group with a zero motion)
    stiffness: Array
    damping: Array
    rest: Array
    rest_key: ClassVar[str]

    group_key = classmethod(joint_group_key)

    @classmethod
    def derive(cls, specs, ctx):
        return cls(*names_and_bodies(specs), joint_coordinate(specs, ctx),
                   ctx.stack(specs, "stiffness"), ctx.stack(specs, "damping"),
                   ctx.stack(specs, cls.rest_key))

    def coordinate(self, qs: Array) -> Array:
        return self.joint.phi(qs, jnp.zeros(()))[:, 0]

    def rate(self, qs, vs):
        return jax.jvp(self.coordinate, (qs,), (body_qdot(qs, vs),))[1][:, None]

    def load(self, qs, vs, x: LoadInputs):
        c, rate = self.coordinate(qs), self.rate(qs, vs)[:, 0]
        return -(self.stiffness * (c - self.rest) + self.damping * rate)[:, None]

    def potential(self, qs):
        return 0.5 * self.stiffness * (self.coordinate(qs) - self.rest) ** 2


class RotationalSpringDamper(AbstractJointSpringDamper):
    """A torque `-(stiffness (theta - rest_angle) + damping theta')` about the joint axis."""

    kind: ClassVar[str] = "rotational_spring_damper"
    rest_key: ClassVar[str] = "rest_angle"


class SlideSpringDamper(AbstractJointSpringDamper):
    """A force `-(stiffness (s - rest_slide) + damping s')` along the joint's slide."""

    kind: ClassVar[str] = "slide_spring_damper"
    rest_key: ClassVar[str] = "rest_slide"
