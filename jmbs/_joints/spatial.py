"""Spatial joints in absolute coordinates `(r, p)`.

Every joint carries a joint frame fixed in body i (columns `x, y, z`; `z` is
the joint axis where there is one; spherical and weld frames are parallel to
the global axes in the reference configuration). Position rows are the
components of the joint-point separation in that frame (`Fx, Fy, Fz`); the
orientation rows lock relative rotation about the frame axes (`Mx, My, Mz`).
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._bodies import dot, matvec, point, position, rotate, rotation
from .._rotations import cross, frame_from_axis, frame_from_two_axes
from .base import AbstractHolonomic, DeriveContext, local_frames, local_points, unit_wrenches


def joint_frames(ctx: DeriveContext, specs) -> Array:
    """Global joint frames of frame joints: `z` along their `axis` (a joint's axis, a
    primitive's line or common axis) or `normal` (a primitive's plane), or the global
    axes for joints with neither (spherical, weld, orientation)."""
    for key in ("axis", "normal"):
        if key in specs[0].params:
            return jax.vmap(frame_from_axis)(ctx.stack(specs, key))
    return jnp.broadcast_to(jnp.eye(3), (len(specs), 3, 3))


def separation(q: Array, R: tuple[Array, Array], s_i: Array, s_j: Array) -> Array:
    """Global vector from the joint point on body i to the one on body j, given the
    bodies' rotation matrices `R = (R_i, R_j)`."""
    return position(q[1]) + matvec(R[1], s_j) - position(q[0]) - matvec(R[0], s_i)


def rotations(q: Array) -> tuple[Array, Array]:
    """The rotation matrices of the two bodies of a joint instance `q (2, 7)`."""
    return rotation(q[0]), rotation(q[1])


# `rotation_lock`'s rows as `sign * (column a of E_j) . (column b of E_i)`.
_LOCK = ((-1.0, 2, 1), (1.0, 2, 0), (1.0, 0, 1))
_LOCK_SIGN, _LOCK_A, _LOCK_B = (np.array(x) for x in zip(*_LOCK))


def lock_axis(Ei: Array, Ej: Array, k: int) -> Array:
    """The axis of rotation row `k`'s rate, `+-(a_j x b_i)` (`_LOCK`): the row's rate is
    `(omega_j - omega_i) . axis`, and a unit multiplier is a moment about it. It is axis `k`
    of the joint frame where the two bodies' frames coincide, not where a partial lock
    (a general joint keeping `Mz` alone) lets them part."""
    sign, a, b = _LOCK[k]
    return sign * cross(Ej[:, a], Ei[:, b])


def rotation_lock(Ei: Array, Ej: Array) -> Array:
    """Rows that vanish when the global frames `Ei`, `Ej` coincide.

    `(-z_j·y_i, z_j·x_i, x_j·y_i)`: the first two keep the axes `z` aligned
    whatever the rotation about them (revolute and cylindrical joints keep
    only these), and their derivatives with respect to body j's angular
    velocity are `+x`, `+y` of body i's frame on the constraint manifold; the
    third, `+z`, locks the rotation about `z`.
    """
    return _LOCK_SIGN * jnp.sum(Ej[:, _LOCK_A] * Ei[:, _LOCK_B], axis=0)


class AbstractFrameJoint(AbstractHolonomic):
    """Spherical, revolute, prismatic, cylindrical and weld joints.

    They differ only in which rows of the position and orientation lock they
    keep: each final class below declares them (`position_rows`,
    `rotation_rows`), and its reaction components follow from them.
    """

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    s_i: Array
    s_j: Array
    E_i: Array  # joint frame in body i, (n, 3, 3)
    E_j: Array  # the same frame in body j (equal to E_i in the reference configuration)
    # Class constants of the usual joints; per group for the general joint (`general.py`).
    position_rows: eqx.AbstractVar[tuple[int, ...]]
    rotation_rows: eqx.AbstractVar[tuple[int, ...]]

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        E = joint_frames(ctx, specs)
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P),
                   local_frames(ctx, specs, 0, E), local_frames(ctx, specs, 1, E))

    def phi(self, qs, t):
        pos, rot = self.position_rows, self.rotation_rows

        def one(el, q):
            R = rotations(q)
            Ei = matvec(R[0], el.E_i)
            rows = []  # a primitive may keep no position row, or no rotation row
            if pos:
                rows.append(matvec(Ei.T, separation(q, R, el.s_i, el.s_j))[jnp.array(pos)])
            if rot:
                rows.append(rotation_lock(Ei, matvec(R[1], el.E_j))[jnp.array(rot)])
            return jnp.concatenate(rows)

        return jax.vmap(one)(self, qs)

    def blocks(self, qs, t):
        """`C`'s blocks in closed form (what the JVP of `phi` gives, at the cost of one
        `phi`): with `d` the separation, `a = R s` the joint points' arms, `e` an axis of
        body i's joint frame and `omega` global, a position row's rate is
        `e . (r_j' - r_i') + omega_j . (a_j x e) - omega_i . ((a_i + d) x e)`, a rotation
        row `+-a_j . b_i`'s is `+-(omega_j - omega_i) . (a_j x b_i)`; the body-frame
        angular velocities take `R^T` of the global rows. All six rows at once, the
        joint's kept at the end: as whole-array operations the constraint terms'
        gradient program is smaller than row by row (the spatial pendulum of
        `bench_latency.py`: 1,738 -> 1,627 kernels, its XLA compilation ~1 s shorter)."""
        kept = np.array(self.position_rows + tuple(3 + k for k in self.rotation_rows))
        rows = slice(kept[0], kept[-1] + 1) if kept.size and np.all(np.diff(kept) == 1) else kept

        def one(el, q):
            R = rotations(q)
            Ei, Ej = matvec(R[0], el.E_i), matvec(R[1], el.E_j)
            ai, aj = matvec(R[0], el.s_i), matvec(R[1], el.s_j)
            d = position(q[1]) + aj - position(q[0]) - ai
            e = Ei.T  # the position rows' axes, one per row
            w = _LOCK_SIGN[:, None] * cross(Ej.T[_LOCK_A], Ei.T[_LOCK_B])  # `lock_axis` of each row
            f = jnp.concatenate([e, jnp.zeros((3, 3))])  # force on body j per unit multiplier
            m_i = -jnp.concatenate([cross(ai + d, e), w])
            m_j = jnp.concatenate([cross(aj, e), w])
            # R = |p|^2 R(p / |p|) (`quat_to_rot`), so omega = R^T omega' / |p|^2 off unit p too.
            Ti, Tj = (R[b].T / dot(q[b, 3:], q[b, 3:]) for b in (0, 1))
            return jnp.stack([jnp.concatenate([-f, matvec(Ti, m_i.T).T], axis=1),
                              jnp.concatenate([f, matvec(Tj, m_j.T).T], axis=1)], axis=1)[rows]

        return jax.vmap(one)(self, qs)

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        Ei = jax.vmap(rotate)(qs[:, 0], self.E_i)  # current joint frames, (n, 3, 3)
        Ej = jax.vmap(rotate)(qs[:, 1], self.E_j)
        return unit_wrenches(P, [(Ei[:, :, k], None) for k in self.position_rows]
                             + [(None, jax.vmap(lock_axis, (0, 0, None))(Ei, Ej, k))
                                for k in self.rotation_rows])


def frame_components(position_rows, rotation_rows) -> tuple[str, ...]:
    return (tuple(("Fx", "Fy", "Fz")[k] for k in position_rows)
            + tuple(("Mx", "My", "Mz")[k] for k in rotation_rows))


class SpatialSpherical(AbstractFrameJoint):
    kind: ClassVar[str] = "spherical"
    position_rows: ClassVar[tuple[int, ...]] = (0, 1, 2)
    rotation_rows: ClassVar[tuple[int, ...]] = ()
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class SpatialRevolute(AbstractFrameJoint):
    kind: ClassVar[str] = "revolute"
    position_rows: ClassVar[tuple[int, ...]] = (0, 1, 2)
    rotation_rows: ClassVar[tuple[int, ...]] = (0, 1)
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class SpatialPrismatic(AbstractFrameJoint):
    kind: ClassVar[str] = "prismatic"
    position_rows: ClassVar[tuple[int, ...]] = (0, 1)
    rotation_rows: ClassVar[tuple[int, ...]] = (0, 1, 2)
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class SpatialCylindrical(AbstractFrameJoint):
    kind: ClassVar[str] = "cylindrical"
    position_rows: ClassVar[tuple[int, ...]] = (0, 1)
    rotation_rows: ClassVar[tuple[int, ...]] = (0, 1)
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class SpatialWeld(AbstractFrameJoint):
    kind: ClassVar[str] = "weld"
    position_rows: ClassVar[tuple[int, ...]] = (0, 1, 2)
    rotation_rows: ClassVar[tuple[int, ...]] = (0, 1, 2)
    components: ClassVar[tuple[str, ...]] = frame_components(position_rows, rotation_rows)


class SpatialUniversal(AbstractHolonomic):
    """Universal (Hooke) joint: the first axis is fixed in body i, the second
    in body j, and they stay perpendicular."""

    names: tuple[str, ...] = eqx.field(static=True)
    bodies: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    s_i: Array
    s_j: Array
    E_i: Array  # frame (axis 1, axis 2, axis 1 x axis 2) in body i
    y_j: Array  # axis 2 in body j
    kind: ClassVar[str] = "universal"
    components: ClassVar[tuple[str, ...]] = ("Fx", "Fy", "Fz", "Mz")

    @classmethod
    def derive(cls, specs, ctx):
        P = ctx.stack(specs, "point")
        axes = ctx.stack(specs, "axes")
        E = jax.vmap(frame_from_two_axes)(axes[:, 0], axes[:, 1])
        return cls(tuple(s.name for s in specs), tuple(s.bodies for s in specs),
                   local_points(ctx, specs, 0, P), local_points(ctx, specs, 1, P),
                   local_frames(ctx, specs, 0, E), local_frames(ctx, specs, 1, E)[:, :, 1])

    def phi(self, qs, t):
        def one(el, q):
            R = rotations(q)
            Ei = matvec(R[0], el.E_i)
            yj = matvec(R[1], el.y_j)
            # d/dt(x_i·y_j) w.r.t. omega_j is -z, hence the sign.
            return jnp.concatenate([matvec(Ei.T, separation(q, R, el.s_i, el.s_j)),
                                    -dot(Ei[:, 0], yj)[None]])

        return jax.vmap(one)(self, qs)

    def wrenches(self, qs, t):
        P = jax.vmap(point)(qs[:, 1], self.s_j)
        E = jax.vmap(rotate)(qs[:, 0], self.E_i)
        # The moment acts about the normal of the cross: axis 1 × the current axis 2.
        normal = cross(E[:, :, 0], jax.vmap(rotate)(qs[:, 1], self.y_j))
        return unit_wrenches(P, [(E[:, :, k], None) for k in range(3)] + [(None, normal)])
