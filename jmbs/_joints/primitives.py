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

from .._bodies import dot, matvec
from .spatial import (
    AbstractFrameJoint,
    SpatialUniversal,
    frame_components,
    rotations,
)


class AbstractPrimitive(AbstractFrameJoint):
    """A frame joint whose frame comes from `axis`, `normal` or the global axes
    (`joint_frames`), and which may keep no position row (`orientation`,
    `parallel_axes`) or no rotation row (`inline`, `inplane`)."""


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

