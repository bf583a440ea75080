"""Spring-dampers along a joint's free coordinate: about a revolute (or cylindrical) joint's
axis, or along a prismatic (or cylindrical) joint's slide."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array

from .base import AbstractMeasuredForce, LoadInputs, joint_coordinate, joint_group_key, names_and_bodies


class AbstractJointSpringDamper(AbstractMeasuredForce):
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

    def measure(self, qs: Array) -> Array:
        return self.joint.phi(qs, jnp.zeros(()))  # (n, 1): the joint coordinate

    def law(self, c, rate, x: LoadInputs):
        return -(self.stiffness * (c[:, 0] - self.rest) + self.damping * rate[:, 0])[:, None]

    def potential_at(self, c):
        return 0.5 * self.stiffness * (c[:, 0] - self.rest) ** 2


class RotationalSpringDamper(AbstractJointSpringDamper):
    """A torque `-(stiffness (theta - rest_angle) + damping theta')` about the joint axis."""

    kind: ClassVar[str] = "rotational_spring_damper"
    rest_key: ClassVar[str] = "rest_angle"


class SlideSpringDamper(AbstractJointSpringDamper):
    """A force `-(stiffness (s - rest_slide) + damping s')` along the joint's slide."""

    kind: ClassVar[str] = "slide_spring_damper"
    rest_key: ClassVar[str] = "rest_slide"
