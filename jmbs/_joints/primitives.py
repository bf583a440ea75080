"""Spatial joint primitives: single constraints that combine into the usual joints.

A primitive keeps a subset of the rows of the frame joints (`spatial.py`): the
components of the joint-point separation and of the orientation lock in a joint
frame fixed in body i. They are what a designer uses to release a joint
partially (`jmbs.advise`): a revolute without its two bending moments is a
spherical joint, a spherical joint without one force is an `inline` joint.

| kind | keeps | components | relative dof |
|---|---|---|---|
| `inline` | point of j on a line of i (the frame's `z`) | `Fx, Fy` | 4 |
| `inplane` | point of j in a plane of i (normal `z`) | `Fz` | 5 |
| `orientation` | the relative rotation | `Mx, My, Mz` | 3 |
| `parallel_axes` | axis `z` of j parallel to `z` of i | `Mx, My` | 4 |
| `perpendicular` | axis 1 (in i) perpendicular to axis 2 (in j) | `Mz` | 5 |
| `planar` | point of j in a plane of i, and no tilt out of it | `Fz, Mx, My` | 3 |
"""

from typing import ClassVar

import jax
import jax.numpy as jnp

from .._bodies import dot, matvec
from .._rotations import frame_from_axis
from .base import local_frames, local_points
from .spatial import (
    AbstractFrameJoint,
    SpatialUniversal,
    frame_components,
    rotation_lock,
    rotations,
    separation,
)


def primitive_frames(ctx, specs) -> jax.Array:
    """Global joint frames from the primitive's `axis` (the line, the common axis) or
    `normal` (the plane's), or the global axes for a primitive without either."""
    for key in ("axis", "normal"):
        if key in specs[0].params:
            return jax.vmap(frame_from_axis)(ctx.stack(specs, key))
    return jnp.broadcast_to(jnp.eye(3), (len(specs), 3, 3))


class AbstractPrimitive(AbstractFrameJoint):
    """A frame joint whose frame comes from `axis`, `normal` or the global axes, and
    which may keep no position row (`orientation`, `parallel_axes`)."""

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        E = primitive_frames(ctx, specs)
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P),
                   local_frames(ctx, specs, 0, E), local_frames(ctx, specs, 1, E))

    def phi(self, qs, t):
        pos, rot = self.position_rows, self.rotation_rows

        def one(el, q):
            R = rotations(q)
            Ei = matvec(R[0], el.E_i)
            parts = []
            if pos:
                parts.append(matvec(Ei.T, separation(q, R, el.s_i, el.s_j))[jnp.array(pos)])
            if rot:
                parts.append(rotation_lock(Ei, matvec(R[1], el.E_j))[jnp.array(rot)])
            return jnp.concatenate(parts)

        return jax.vmap(one)(self, qs)


class Inline(AbstractPrimitive):
    """Point on a line: the joint point of body j stays on the line through the joint
    point of body i along `axis` (fixed in body i)."""

    kind: ClassVar[str] = "inline"
    position_rows: ClassVar[tuple[int, ...]] = (0, 1)
    rotation_rows: ClassVar[tuple[int, ...]] = ()
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class Inplane(AbstractPrimitive):
    """Point in a plane: the joint point of body j stays in the plane through the joint
    point of body i with `normal` (fixed in body i)."""

    kind: ClassVar[str] = "inplane"
    position_rows: ClassVar[tuple[int, ...]] = (2,)
    rotation_rows: ClassVar[tuple[int, ...]] = ()
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class Orientation(AbstractPrimitive):
    """The relative orientation of the two bodies is fixed; translation is free."""

    kind: ClassVar[str] = "orientation"
    position_rows: ClassVar[tuple[int, ...]] = ()
    rotation_rows: ClassVar[tuple[int, ...]] = (0, 1, 2)
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class ParallelAxes(AbstractPrimitive):
    """`axis` of body j stays parallel to `axis` of body i (rotation about it and
    translation are free)."""

    kind: ClassVar[str] = "parallel_axes"
    position_rows: ClassVar[tuple[int, ...]] = ()
    rotation_rows: ClassVar[tuple[int, ...]] = (0, 1)
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class SpatialPlanar(AbstractPrimitive):
    """Planar joint: body j slides and turns in the plane through the joint point
    with `normal` (fixed in body i)."""

    kind: ClassVar[str] = "planar"
    position_rows: ClassVar[tuple[int, ...]] = (2,)
    rotation_rows: ClassVar[tuple[int, ...]] = (0, 1)
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class Perpendicular(SpatialUniversal):
    """The first of `axes` (fixed in body i) stays perpendicular to the second (fixed in
    body j): the universal joint's moment row alone. Its component `Mz` is the moment
    about the normal of the two axes."""

    kind: ClassVar[str] = "perpendicular"
    components: ClassVar[tuple[str, ...]] = ("Mz",)

    def phi(self, qs, t):
        def one(el, q):
            R = rotations(q)
            return -dot(matvec(R[0], el.E_i[:, 0]), matvec(R[1], el.y_j))[None]

        return jax.vmap(one)(self, qs)

    def wrenches(self, qs, t):
        P, F, M = super().wrenches(qs, t)
        return P, F[:, 3:], M[:, 3:]

