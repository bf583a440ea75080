"""Applied loads: a force at a body point, a torque on a body (constant, `f(t)` or `f(t, q, v)`)."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._bodies import body_qdot, point, rotate
from .._joints.base import local_points
from .base import AbstractForce, LoadInputs, constants, evaluate_laws, laws_of, names_and_bodies


def _body_frame(specs) -> tuple[bool, ...]:
    return tuple(s.frame == "body" for s in specs)


class PointForce(AbstractForce):
    """A force at a body point (body-frame coordinates `s`), given in the global frame
    or, where `in_body`, in the body frame (it turns with the body)."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    laws: tuple = eqx.field(static=True)
    law_inputs: tuple = eqx.field(static=True)
    in_body: tuple[bool, ...] = eqx.field(static=True)
    s: Array
    value: Array
    kind: ClassVar[str] = "force"

    @classmethod
    def derive(cls, specs, ctx):
        dim = ctx.r0.shape[1]
        P = ctx.stack(specs, "point")
        return cls(*names_and_bodies(specs), *laws_of(specs), _body_frame(specs),
                   local_points(ctx, specs, 0, P), constants(ctx, specs, "force", (dim,)))

    def rate(self, qs, vs):
        def one(q, v, s):  # the point's velocity
            return jax.jvp(lambda x: point(x, s), (q,), (body_qdot(q, v),))[1]

        return jax.vmap(one)(qs[:, 0], vs[:, 0], self.s)

    def load(self, qs, vs, x: LoadInputs):
        F = evaluate_laws(self.laws, self.law_inputs, self.value, x)
        if not any(self.in_body):
            return F
        turned = jax.vmap(rotate)(qs[:, 0], F)
        return jnp.where(np.asarray(self.in_body)[:, None], turned, F)


class Torque(AbstractForce):
    """A torque on a body: planar a scalar; spatial a vector in the global frame or,
    where `in_body`, in the body frame."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    laws: tuple = eqx.field(static=True)
    law_inputs: tuple = eqx.field(static=True)
    in_body: tuple[bool, ...] = eqx.field(static=True)
    value: Array
    kind: ClassVar[str] = "torque"

    @classmethod
    def derive(cls, specs, ctx):
        nrot = 1 if ctx.r0.shape[1] == 2 else 3
        return cls(*names_and_bodies(specs), *laws_of(specs), _body_frame(specs),
                   constants(ctx, specs, "torque", (nrot,)))

    def rate(self, qs, vs):
        if qs.shape[-1] == 3:
            return vs[:, 0, 2:]  # the angular velocity
        w = vs[:, 0, 3:]  # body frame
        if all(self.in_body):
            return w
        return jnp.where(np.asarray(self.in_body)[:, None], w, jax.vmap(rotate)(qs[:, 0], w))

    def load(self, qs, vs, x: LoadInputs):
        return evaluate_laws(self.laws, self.law_inputs, self.value, x)
