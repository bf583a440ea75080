"""Drivers: rheonomic constraints that prescribe a joint's free relative coordinate.

A driver `coordinate(q) - f(t) = 0` acts on a revolute joint (angle), a
prismatic joint (slide) or a cylindrical joint (either); which group class
drives which coordinate of which joint is the joints' `drivable` entry in
`registry.py`. Coordinates are
measured from the reference configuration, so `f(0) = 0` keeps the reference
configuration consistent. The driver's multiplier is the driving torque or
force. Drivers of one kind are stacked; their motion functions (static) are
evaluated outside the `vmap` over the instances.
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from .._bodies import dot, matvec, point, position, rotate
from .base import (
    AbstractHolonomic,
    DeriveContext,
    DriverSpec,
    ElementSpec,
    local_frames,
    local_points,
    unit_wrenches,
)
from .planar import ref_angle
from .spatial import joint_frames, rotations, separation


def _joint_specs(specs: list[DriverSpec], ctx: DeriveContext) -> list[ElementSpec]:
    return [ctx.specs[s.joint] for s in specs]


def _motion_values(motions, param_keys, params, t) -> Array:
    """Evaluate every driver's `f(t)` (or `f(t, params)`) and stack them."""
    out = []
    for f, keys, p in zip(motions, param_keys, params):
        out.append(jnp.asarray(f(t, p) if keys else f(t), dtype=float).reshape(()))
    return jnp.stack(out)


class AbstractDriver(AbstractHolonomic):
    """Common fields of the driver groups: the motions and their parameters."""

    motions: eqx.AbstractVar[tuple]
    param_keys: eqx.AbstractVar[tuple[tuple[str, ...], ...]]
    motion_params: eqx.AbstractVar[tuple[dict, ...]]

    @staticmethod
    def _motion_fields(specs: list[DriverSpec], ctx):
        keys = tuple(s.param_keys for s in specs)
        params = tuple({k: jnp.asarray(ctx.params[f"{s.name}.{k}"]) for k in ks}
                       for s, ks in zip(specs, keys))
        return tuple(s.motion for s in specs), keys, params

    def targets(self, t) -> Array:
        return _motion_values(self.motions, self.param_keys, self.motion_params, t)


def _common(specs):
    return tuple(s.name for s in specs), tuple(s.bodies for s in specs)


class PlanarAngleDriver(AbstractDriver):
    """Prescribes `phi_j - phi_i` (from its reference value) of a planar revolute joint."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    motions: tuple = eqx.field(static=True)
    param_keys: tuple[tuple[str, ...], ...] = eqx.field(static=True)
    motion_params: tuple[dict, ...]
    theta0: Array
    kind: ClassVar[str] = "driver"
    components: ClassVar[tuple[str, ...]] = ("M",)

    @classmethod
    def derive(cls, specs, ctx):
        return cls(*_common(specs), *cls._motion_fields(specs, ctx), ref_angle(ctx, specs))

    def phi(self, qs, t):
        angle = qs[:, 1, 2] - qs[:, 0, 2] - self.theta0
        return (angle - self.targets(t))[:, None]

    def wrenches(self, qs, t):
        P = jax.vmap(position)(qs[:, 1])
        return unit_wrenches(P, [(None, jnp.ones((P.shape[0], 1)))])


class PlanarSlideDriver(AbstractDriver):
    """Prescribes the displacement along the axis of a planar prismatic joint."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    motions: tuple = eqx.field(static=True)
    param_keys: tuple[tuple[str, ...], ...] = eqx.field(static=True)
    motion_params: tuple[dict, ...]
    s_i: Array
    s_j: Array
    u_i: Array
    kind: ClassVar[str] = "driver"
    components: ClassVar[tuple[str, ...]] = ("F",)

    @classmethod
    def derive(cls, specs, ctx):
        joints = _joint_specs(specs, ctx)
        P = ctx.stack(joints, "point")
        a = ctx.stack(joints, "axis")
        a = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
        _, Ri = ctx.pose(specs, 0)
        return cls(*_common(specs), *cls._motion_fields(specs, ctx),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P),
                   jnp.einsum("nji,nj->ni", Ri, a))

    def phi(self, qs, t):
        # Motion parameters have no instance axis, so vmap over the geometry only.
        def one(s_i, s_j, u_i, q):
            R = rotations(q)
            return dot(matvec(R[0], u_i), separation(q, R, s_i, s_j))

        slide = jax.vmap(one)(self.s_i, self.s_j, self.u_i, qs)
        return (slide - self.targets(t))[:, None]

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        return unit_wrenches(P, [(jax.vmap(rotate)(qs[:, 0], self.u_i), None)])


class SpatialAngleDriver(AbstractDriver):
    """Prescribes the rotation angle about the axis of a spatial revolute or
    cylindrical joint. The angle error is wrapped to (-pi, pi], so continuous
    rotation through any number of turns is fine."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    motions: tuple = eqx.field(static=True)
    param_keys: tuple[tuple[str, ...], ...] = eqx.field(static=True)
    motion_params: tuple[dict, ...]
    E_i: Array
    x_j: Array
    kind: ClassVar[str] = "driver"
    components: ClassVar[tuple[str, ...]] = ("M",)

    @classmethod
    def derive(cls, specs, ctx):
        E = joint_frames(ctx, _joint_specs(specs, ctx))
        return cls(*_common(specs), *cls._motion_fields(specs, ctx),
                   local_frames(ctx, specs, 0, E), local_frames(ctx, specs, 1, E)[:, :, 0])

    def phi(self, qs, t):
        f = self.targets(t)

        def one(E_i, x_j, q, f):
            Ei = rotate(q[0], E_i)
            xj = rotate(q[1], x_j)
            c, s = dot(xj, Ei[:, 0]), dot(xj, Ei[:, 1])  # cos and sin of the joint angle
            cf, sf = jnp.cos(f), jnp.sin(f)
            return jnp.arctan2(s * cf - c * sf, c * cf + s * sf)

        return jax.vmap(one)(self.E_i, self.x_j, qs, f)[:, None]

    def wrenches(self, qs, t):
        P = jax.vmap(position)(qs[:, 1])
        return unit_wrenches(P, [(None, jax.vmap(rotate)(qs[:, 0], self.E_i[:, :, 2]))])


class SpatialSlideDriver(AbstractDriver):
    """Prescribes the displacement along the axis of a spatial prismatic or
    cylindrical joint."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    motions: tuple = eqx.field(static=True)
    param_keys: tuple[tuple[str, ...], ...] = eqx.field(static=True)
    motion_params: tuple[dict, ...]
    s_i: Array
    s_j: Array
    z_i: Array
    kind: ClassVar[str] = "driver"
    components: ClassVar[tuple[str, ...]] = ("F",)

    @classmethod
    def derive(cls, specs, ctx):
        joints = _joint_specs(specs, ctx)
        P = ctx.stack(joints, "point")
        E = joint_frames(ctx, joints)
        return cls(*_common(specs), *cls._motion_fields(specs, ctx),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P),
                   local_frames(ctx, specs, 0, E)[:, :, 2])

    def phi(self, qs, t):
        def one(s_i, s_j, z_i, q):
            R = rotations(q)
            return dot(matvec(R[0], z_i), separation(q, R, s_i, s_j))

        slide = jax.vmap(one)(self.s_i, self.s_j, self.z_i, qs)
        return (slide - self.targets(t))[:, None]

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        return unit_wrenches(P, [(jax.vmap(rotate)(qs[:, 0], self.z_i), None)])
