"""Force actuator: a generalized force along a joint's free coordinate (torque or force)."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array

from .base import (
    AbstractMeasuredForce,
    LoadInputs,
    constants,
    evaluate_laws,
    joint_coordinate,
    joint_group_key,
    laws_of,
    names_and_bodies,
)


class Actuator(AbstractMeasuredForce):
    """Along a revolute joint's angle a torque, along a prismatic joint's slide a force
    (a cylindrical joint's `coordinate` says which), on body j (opposite on body i)."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    laws: tuple = eqx.field(static=True)
    law_inputs: tuple = eqx.field(static=True)
    joint: eqx.Module  # measures the joint coordinate (a driver group with a zero motion)
    value: Array
    kind: ClassVar[str] = "actuator"

    group_key = classmethod(joint_group_key)

    @classmethod
    def derive(cls, specs, ctx):
        return cls(*names_and_bodies(specs), *laws_of(specs), joint_coordinate(specs, ctx),
                   constants(ctx, specs, "force", (1,)))

    def measure(self, qs: Array) -> Array:
        return self.joint.phi(qs, jnp.zeros(()))  # (n, 1): the joint coordinate

    def law(self, c, rate, x: LoadInputs):
        return evaluate_laws(self.laws, self.law_inputs, self.value, x)
