"""The general joint: any non-empty subset of a frame joint's rows.

Where no joint of the element table keeps exactly the rows a designer wants (a
revolute whose pin slides in a slot across its axis: `Fy` released, `Fx, Fz, Mx,
My` kept), the general joint keeps the components it is given of the joint-point
separation (`Fx, Fy, Fz`) and of the orientation lock (`Mx, My, Mz`) in a joint
frame fixed in body i, as the frame joints of `spatial.py` do (Exudyn's generic
joint with its constrained axes, Adams' general constraint). Its frame is
`(x, y, x × y)` from two perpendicular `axes` (default: the global axes).

The rotation rows are those of `rotation_lock`: `Mx` is `-z_j · y_i`, `My` is
`z_j · x_i` (the two keep the `z` axes aligned), `Mz` is `x_j · y_i`.
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from .._rotations import frame_from_two_axes
from .base import ElementSpec, local_frames, local_points
from .spatial import AbstractFrameJoint

FRAME_COMPONENTS = ("Fx", "Fy", "Fz", "Mx", "My", "Mz")


def rows_of(components: tuple[str, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """`(position_rows, rotation_rows)` of a general joint's components."""
    k = [FRAME_COMPONENTS.index(c) for c in components]
    return tuple(i for i in k if i < 3), tuple(i - 3 for i in k if i >= 3)


class SpatialGeneral(AbstractFrameJoint):
    """A frame joint keeping the rows its components name (one group per set)."""

    kind: ClassVar[str] = "general"
    components: tuple[str, ...] = eqx.field(static=True)
    position_rows: tuple[int, ...] = eqx.field(static=True)
    rotation_rows: tuple[int, ...] = eqx.field(static=True)

    @classmethod
    def group_key(cls, spec: ElementSpec):
        return cls, spec.components

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        if "axes" in specs[0].params:
            axes = ctx.stack(specs, "axes")
            E = jax.vmap(frame_from_two_axes)(axes[:, 0], axes[:, 1])
        else:
            E = jnp.broadcast_to(jnp.eye(3), (len(specs), 3, 3))
        comps = specs[0].components
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P),
                   local_frames(ctx, specs, 0, E), local_frames(ctx, specs, 1, E), comps,
                   *rows_of(comps))
