"""Bodies, the model builder and the immutable `Model`."""

import dataclasses
import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._bodies import GROUND_Q, NQ, NV, body_qdot, point
from ._expression import Expression
from ._joints.base import AbstractElement, DeriveContext, ElementSpec
from ._joints.custom import CustomHolonomic, CustomPfaffian
from ._joints.distance import Distance
from ._joints.drivers import DRIVABLE, driver_class
from ._joints.planar import KnifeEdge, PlanarPrismatic, PlanarRevolute, PlanarWeld
from ._joints.spatial import SpatialFrameJoint, SpatialUniversal, frame_joint_components
from ._rotations import quat_to_rot, rot2, rot_to_quat

GROUND = "ground"
_RESERVED = (GROUND, "gravity")


@dataclass(frozen=True)
class Body:
    """Handle of a body returned by `ModelBuilder.add_body` (`index` -1 is the ground)."""

    name: str
    index: int


@dataclass(frozen=True)
class BodySpec:
    name: str
    orientation: str  # the parameter that gives the reference orientation


@dataclass(frozen=True)
class ElementInfo:
    """Host-side description of one element of a built model."""

    name: str
    kind: str
    bodies: tuple[str, ...]
    components: tuple[str, ...]
    rows: tuple[int, int]
    holonomic: bool


_CLASSES = {
    2: {"revolute": PlanarRevolute, "prismatic": PlanarPrismatic, "weld": PlanarWeld,
        "knife_edge": KnifeEdge, "distance": Distance},
    3: {k: SpatialFrameJoint for k in ("spherical", "revolute", "prismatic", "cylindrical", "weld")}
    | {"universal": SpatialUniversal, "distance": Distance},
}


def _element_class(dim: int, spec: ElementSpec) -> type[AbstractElement]:
    if spec.kind == "driver":
        return driver_class(dim, spec.option("coordinate"))
    if spec.kind == "holonomic":
        return CustomHolonomic
    if spec.kind == "pfaffian":
        return CustomPfaffian
    return _CLASSES[dim][spec.kind]


class Model(eqx.Module):
    """An immutable multibody model (a pytree): topology static, values arrays.

    Built by `ModelBuilder.build()`. Coordinates follow DESIGN §1: `q0`,
    `v0` are the reference configuration and initial velocities; the rows of
    every constraint vector and matrix are grouped by element in the order the
    elements were added.
    """

    dim: int = eqx.field(static=True)
    body_specs: tuple[BodySpec, ...] = eqx.field(static=True)
    element_specs: tuple[ElementSpec, ...] = eqx.field(static=True)
    element_rows: tuple[tuple[int, int], ...] = eqx.field(static=True)
    row_order: tuple[int, ...] | None = eqx.field(static=True)  # group order -> element order
    param_layout: tuple[tuple[str, tuple[int, ...]], ...] = eqx.field(static=True)
    # All design parameters in one flat vector: one pytree leaf instead of hundreds
    # keeps the cost of passing a model to a jitted function low.
    param_vector: Float[Array, " n_params"]
    groups: tuple[AbstractElement, ...]
    q0: Float[Array, " nq"]
    v0: Float[Array, " nv"]
    mass: Float[Array, " nb"]
    inertia: Array  # (nb,) planar, (nb, 3, 3) spatial, body frame
    gravity: Float[Array, " dim"]

    # ----- sizes and names (host-side) -----
    @property
    def n_bodies(self) -> int:
        return len(self.body_specs)

    @property
    def nq(self) -> int:
        return self.n_bodies * NQ[self.dim]

    @property
    def nv(self) -> int:
        return self.n_bodies * NV[self.dim]

    @property
    def nc(self) -> int:
        return self.element_rows[-1][1] if self.element_rows else 0

    @property
    def body_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.body_specs)

    @property
    def element_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.element_specs)

    @property
    def holonomic_rows(self) -> np.ndarray:
        """Boolean mask `(nc,)` of the rows that come from holonomic elements."""
        mask = np.zeros(self.nc, bool)
        for spec, (a, b) in zip(self.element_specs, self.element_rows):
            mask[a:b] = spec.kind != "knife_edge" and spec.kind != "pfaffian"
        return mask

    def element(self, name: str) -> ElementInfo:
        """Kind, bodies, reaction components and rows of the element `name`."""
        k = self._element_index(name)
        spec = self.element_specs[k]
        names = self.body_names + (GROUND,)
        return ElementInfo(spec.name, spec.kind, tuple(names[i] for i in spec.bodies),
                           spec.components, self.element_rows[k],
                           spec.kind not in ("knife_edge", "pfaffian"))

    def element_of_row(self, row: int) -> str:
        """Name of the element that owns constraint row `row`."""
        return next(s.name for s, (a, b) in zip(self.element_specs, self.element_rows)
                    if a <= row < b)

    def rows(self, name: str) -> slice:
        """Rows of element `name` in `C`, `Phi`, `Gamma` and the multipliers."""
        a, b = self.element_rows[self._element_index(name)]
        return slice(a, b)

    def _element_index(self, name: str) -> int:
        names = self.element_names
        if name not in names:
            raise ValueError(_unknown("element", name, names))
        return names.index(name)

    def body_index(self, body: "str | Body") -> int:
        """Index of a body (by name or handle); raises for unknown bodies."""
        name = body.name if isinstance(body, Body) else body
        if name == GROUND:
            raise ValueError("the ground has no coordinates; name a moving body")
        if name not in self.body_names:
            raise ValueError(_unknown("body", name, self.body_names))
        return self.body_names.index(name)

    def body_q(self, q: Float[Array, " nq"], body: "str | Body") -> Array:
        """Coordinates of one body taken from the model's `q`."""
        k, n = self.body_index(body), NQ[self.dim]
        return q[k * n:(k + 1) * n]

    # ----- points -----
    def point(self, q: Float[Array, " nq"], body: "str | Body", local_point) -> Array:
        """Global position of the point with body-frame coordinates `local_point`."""
        return point(self.body_q(q, body), jnp.asarray(local_point, dtype=float))

    def point_velocity(self, q, v, body: "str | Body", local_point) -> Array:
        """Global velocity of a body point, `d/dt point` along `q_dot = N v`."""
        k = self.body_index(body)
        nvb = NV[self.dim]
        qb = self.body_q(q, body)
        qd = body_qdot(qb[None], v[k * nvb:(k + 1) * nvb][None])[0]
        s = jnp.asarray(local_point, dtype=float)
        return jax.jvp(lambda x: point(x, s), (qb,), (qd,))[1]

    # ----- design parameters -----
    def characteristic_lengths(self) -> Float[Array, " nb"]:
        """Per body: the RMS distance from its centre of mass to the points of the
        elements attached to it (reference configuration).

        A body without such points (or with all of them at its centre) gets the
        RMS of the other bodies' lengths, then the RMS spread of the bodies'
        positions, then 1. Two gathers from the parameter vector (the index
        arrays are static), so it stays cheap to compile for large models.
        """
        nb, d = self.n_bodies, self.dim
        offsets, k = {}, 0
        for key, shape in self.param_layout:
            offsets[key] = k
            k += int(np.prod(shape))
        pts, owners = [], []
        for spec in self.element_specs:
            for key, which in (("point", (0, 1)), ("point_i", (0,)), ("point_j", (1,))):
                if key in spec.params:
                    for w in which:
                        if spec.bodies[w] < nb:
                            pts.append(offsets[f"{spec.name}.{key}"])
                            owners.append(spec.bodies[w])
        body = np.array([offsets[f"{b}.position"] for b in self.body_names])
        r0 = self.param_vector[body[:, None] + np.arange(d)]
        sums, counts = jnp.zeros(nb), np.bincount(np.array(owners, int), minlength=nb)
        if pts:
            P = self.param_vector[np.array(pts)[:, None] + np.arange(d)]
            sums = jax.ops.segment_sum(jnp.sum((P - r0[np.array(owners)]) ** 2, axis=1),
                                       np.array(owners), num_segments=nb)
        L = jnp.sqrt(sums / np.maximum(counts, 1))
        has = L > 0
        model_length = jnp.sqrt(jnp.sum(jnp.where(has, L**2, 0.0)) / jnp.maximum(jnp.sum(has), 1))
        spread = jnp.sqrt(jnp.mean(jnp.sum((r0 - r0.mean(axis=0, keepdims=True)) ** 2, axis=1)))
        fallback = jnp.where(model_length > 0, model_length, jnp.where(spread > 0, spread, 1.0))
        return jnp.where(has, L, fallback)

    def params(self) -> dict[str, Array]:
        """Every value given to the builder, keyed `"<name>.<argument>"` (and `"gravity"`)."""
        out, k = {}, 0
        for key, shape in self.param_layout:
            n = int(np.prod(shape))
            out[key] = self.param_vector[k:k + n].reshape(shape)
            k += n
        return out

    def with_params(self, new: dict[str, Any]) -> "Model":
        """A model with some parameters replaced and everything dependent re-derived.

        Traceable: `jax.grad` and `jax.vmap` over the new values work. `q0`
        is re-derived from the bodies' reference poses; call `jmbs.assemble` if
        the reference configuration no longer closes.

        **Raises:** `ValueError` for an unknown key or a value of the wrong shape.
        """
        values = self.params()
        for key, value in new.items():
            if key not in values:
                raise ValueError(_unknown("parameter", key, tuple(values)))
            value = jnp.asarray(value, dtype=float)
            if value.shape != values[key].shape:
                raise ValueError(f"parameter {key!r} has shape {values[key].shape}, "
                                 f"got a value of shape {value.shape}")
            values[key] = value
        return _derive(self.dim, self.body_specs, self.element_specs, values)


    def with_motions(self, motions: dict[str, Callable]) -> "Model":
        """A model whose drivers follow new motions: `{driver name: f(t)}`.

        The new `f(t)` is measured from the reference configuration like the
        old one; the drivers' motion parameters (if any) stay in `params()`
        but the new functions do not take them. Host-side (the functions are
        static): e.g. `f = lambda t: t` makes the time the driven coordinate,
        for sweeps along a driver.

        **Raises:** `ValueError` for a name that is not a driver or a value
        that is not callable.
        """
        drivers = [s.name for s in self.element_specs if s.kind == "driver"]
        for name, fn in motions.items():
            if name not in drivers:
                raise ValueError(_unknown("driver", name, drivers))
            _check_callable(fn, "motion", f"driver {name!r}")

        def replaced(s: ElementSpec) -> ElementSpec:
            if s.name not in motions:
                return s
            opts = dict(s.options) | {"motion": motions[s.name], "param_keys": ()}
            return dataclasses.replace(s, options=tuple(opts.items()))

        specs = tuple(replaced(s) for s in self.element_specs)
        new = _derive(self.dim, self.body_specs, specs, self.params())
        return eqx.tree_at(lambda m: (m.q0, m.v0), new, (self.q0, self.v0))


def _unknown(what: str, name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(name), list(known), n=3)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else (
        f"; known: {', '.join(map(repr, known[:20]))}" if known else "")
    return f"unknown {what} {name!r}{hint}"


def _derive(dim: int, body_specs, element_specs, values: dict[str, Array]) -> Model:
    """Everything that depends on the parameters, as traceable `jnp` code."""
    nb = len(body_specs)
    r0 = jnp.stack([values[f"{b.name}.position"] for b in body_specs]).reshape(nb, dim)
    vel = jnp.stack([values[f"{b.name}.velocity"] for b in body_specs]).reshape(nb, dim)
    omega = jnp.stack([values[f"{b.name}.angular_velocity"] for b in body_specs])
    if dim == 2:
        angle = jnp.stack([values[f"{b.name}.angle"] for b in body_specs])
        R0 = jax.vmap(rot2)(angle)
        q0 = jnp.concatenate([r0, angle[:, None]], axis=1).ravel()
        v0 = jnp.concatenate([vel, omega[:, None]], axis=1).ravel()
        inertia = jnp.stack([values[f"{b.name}.inertia"] for b in body_specs])
    else:
        quats = []
        for b in body_specs:
            o = values[f"{b.name}.{b.orientation}"]
            quats.append(rot_to_quat(o) if b.orientation == "rotation" else o / jnp.linalg.norm(o))
        p = jnp.stack(quats)
        R0 = jax.vmap(quat_to_rot)(p)
        q0 = jnp.concatenate([r0, p], axis=1).ravel()
        # The builder takes angular velocities in the global frame; v uses the body frame.
        v0 = jnp.concatenate([vel, jnp.einsum("nji,nj->ni", R0, omega)], axis=1).ravel()
        inertia = jnp.stack([_inertia3(values[f"{b.name}.inertia"]) for b in body_specs])
    mass = jnp.stack([values[f"{b.name}.mass"] for b in body_specs])

    ctx = DeriveContext(
        values,
        jnp.concatenate([r0, jnp.zeros((1, dim))]),
        jnp.concatenate([R0, jnp.eye(dim)[None]]),
        {s.name: s for s in element_specs},
    )
    # Group the elements by type, in the order the types first appear.
    grouped: dict[Any, list[int]] = {}
    for k, spec in enumerate(element_specs):
        cls = _element_class(dim, spec)
        grouped.setdefault(cls.group_key(spec), []).append(k)
    rows, offset = [], 0
    for spec in element_specs:
        rows.append((offset, offset + len(spec.components)))
        offset += len(spec.components)
    groups, order = [], []
    for members in grouped.values():
        specs = [element_specs[k] for k in members]
        groups.append(_element_class(dim, specs[0]).derive(specs, ctx))
        order += [r for k in members for r in range(*rows[k])]
    # order[i] is the element-order row of stacked row i; invert it for a gather.
    row_order = tuple(int(i) for i in np.argsort(order)) if order != sorted(order) else None
    layout = tuple((key, tuple(jnp.shape(v))) for key, v in values.items())
    vector = jnp.concatenate([jnp.ravel(jnp.asarray(v, dtype=float)) for v in values.values()])
    return Model(dim, tuple(body_specs), tuple(element_specs), tuple(rows), row_order, layout,
                 vector, tuple(groups), q0, v0, mass, inertia, values["gravity"])


def _inertia3(J: Array) -> Array:
    return jnp.diag(J) if J.shape == (3,) else J


# --------------------------------------------------------------------------------------
# The builder (host-side: validates everything a user gives, then derives the model)
# --------------------------------------------------------------------------------------


class ModelBuilder:
    """Collects bodies and elements, validates them, and builds a `Model`.

    **Arguments:**
    - `dim`: 2 (planar, coordinates `(x, y, phi)` per body) or 3 (spatial,
      `(r, p)` with a unit quaternion `p = (w, x, y, z)`).
    - `gravity`: gravitational acceleration vector (default zero).

    Geometry (joint points, axes, edge directions) is given in global
    coordinates in the reference configuration, i.e. with every body at the
    pose given to `add_body`; local quantities are derived from it.
    """

    def __init__(self, dim: int = 2, gravity: Sequence[float] | None = None):
        if dim not in (2, 3):
            raise ValueError(f"dim must be 2 (planar) or 3 (spatial), got {dim!r}")
        self.dim = dim
        self.ground = Body(GROUND, -1)
        self._bodies: list[BodySpec] = []
        self._elements: list[ElementSpec] = []
        self._values: dict[str, np.ndarray] = {}
        self._values["gravity"] = _vector(
            np.zeros(dim) if gravity is None else gravity, dim, "gravity", "model")

    # ----- bodies -----
    def add_body(self, name: str, mass: float, inertia, position, angle: float | None = None,
                 rotation=None, quaternion=None, velocity=None, angular_velocity=None) -> Body:
        """Add a rigid body; its frame is at the centre of mass.

        **Arguments:**
        - `mass`: positive mass.
        - `inertia`: planar: the moment of inertia about the centre of mass;
          spatial: principal moments `(3,)` or a `(3, 3)` tensor in the body frame.
        - `position`: centre of mass in the reference configuration.
        - `angle` (planar), or `rotation` (3x3, body -> global) or `quaternion`
          `(w, x, y, z)` (spatial): reference orientation (default identity).
        - `velocity`, `angular_velocity`: initial velocity of the centre of mass
          and angular velocity, both in the global frame (default zero).

        **Returns:** a `Body` handle; bodies may also be referred to by name.
        """
        dim, where = self.dim, f"body {name!r}"
        self._check_new_name(name)
        m = _scalar(mass, "mass", where)
        if m <= 0:
            raise ValueError(f"{where}: mass must be positive, got {m}")
        values = {"mass": m, "inertia": _inertia(inertia, dim, where),
                  "position": _vector(position, dim, "position", where)}
        if dim == 2:
            if rotation is not None or quaternion is not None:
                raise ValueError(f"{where}: a planar body takes `angle`, not rotation/quaternion")
            orientation = "angle"
            values["angle"] = _scalar(0.0 if angle is None else angle, "angle", where)
            values["angular_velocity"] = _scalar(
                0.0 if angular_velocity is None else angular_velocity, "angular_velocity", where)
        else:
            if angle is not None:
                raise ValueError(f"{where}: a spatial body takes `rotation` or `quaternion`, "
                                 "not `angle`")
            if rotation is not None and quaternion is not None:
                raise ValueError(f"{where}: give either `rotation` or `quaternion`, not both")
            if rotation is not None:
                orientation = "rotation"
                values["rotation"] = _rotation_matrix(rotation, where)
            else:
                orientation = "quaternion"
                p = _vector((1.0, 0, 0, 0) if quaternion is None else quaternion, 4,
                            "quaternion", where)
                if np.linalg.norm(p) < 1e-12:
                    raise ValueError(f"{where}: quaternion must be non-zero (w, x, y, z)")
                values["quaternion"] = p
            values["angular_velocity"] = _vector(
                np.zeros(3) if angular_velocity is None else angular_velocity, 3,
                "angular_velocity", where)
        values["velocity"] = _vector(np.zeros(dim) if velocity is None else velocity, dim,
                                     "velocity", where)
        for key, value in values.items():
            self._values[f"{name}.{key}"] = np.asarray(value, dtype=float)
        self._bodies.append(BodySpec(name, orientation))
        return Body(name, len(self._bodies) - 1)

    # ----- planar and spatial joints -----
    def add_revolute(self, name: str, body_i, body_j, point, axis=None) -> str:
        """Revolute (pin) joint at `point`; spatial joints also need the `axis`.

        Components: planar `Fx, Fy` (global); spatial `Fx, Fy, Fz, Mx, My` in
        the joint frame (z along the axis).
        """
        return self._joint("revolute", name, body_i, body_j, point=point, axis=axis)

    def add_prismatic(self, name: str, body_i, body_j, point, axis) -> str:
        """Prismatic (translational) joint: body j slides along `axis` fixed in body i.

        Components: planar `Fn, M`; spatial `Fx, Fy, Mx, My, Mz` (joint frame).
        """
        return self._joint("prismatic", name, body_i, body_j, point=point, axis=axis)

    def add_weld(self, name: str, body_i, body_j, point=None) -> str:
        """Rigid connection; `point` (default: body j's centre of mass) is where the
        reaction is reported. Components: planar `Fx, Fy, M`; spatial `Fx..Mz`."""
        if point is None:
            idx = self._body(body_j, name)
            point = self._values[f"{self._bodies[idx].name}.position"] if idx >= 0 else \
                np.zeros(self.dim)
        return self._joint("weld", name, body_i, body_j, point=point)

    def add_knife_edge(self, name: str, body, point, direction) -> str:
        """Planar knife edge (a wheel without side slip) on `body`: the contact
        point at `point` has no velocity across `direction`. Pfaffian; component `Fn`."""
        return self._joint("knife_edge", name, self.ground, body, point=point,
                           direction=direction)

    def add_spherical(self, name: str, body_i, body_j, point) -> str:
        """Spherical (ball) joint. Components `Fx, Fy, Fz` (global axes in the reference)."""
        return self._joint("spherical", name, body_i, body_j, point=point)

    def add_cylindrical(self, name: str, body_i, body_j, point, axis) -> str:
        """Cylindrical joint: slide along and rotate about `axis`. Components `Fx, Fy, Mx, My`."""
        return self._joint("cylindrical", name, body_i, body_j, point=point, axis=axis)

    def add_universal(self, name: str, body_i, body_j, point, axes) -> str:
        """Universal joint: `axes[0]` fixed in body i, `axes[1]` in body j,
        perpendicular. Components `Fx, Fy, Fz, Mz` (frame: axis 1, axis 2, their cross)."""
        return self._joint("universal", name, body_i, body_j, point=point, axes=axes)

    def add_distance(self, name: str, body_i, body_j, point_i, point_j,
                     length: float | None = None) -> str:
        """Massless rod between `point_i` on body i and `point_j` on body j.

        `length` defaults to the reference distance of the points. Component `F`.
        """
        kw = {"point_i": point_i, "point_j": point_j}
        if length is not None:
            kw["length"] = length
        return self._joint("distance", name, body_i, body_j, **kw)

    # ----- drivers and user constraints -----
    def add_driver(self, name: str, joint: str, motion: "Callable | str",
                   coordinate: str | None = None, params: dict[str, Any] | None = None) -> str:
        """Prescribe a joint's free relative coordinate: `coordinate(q) = motion(t)`.

        **Arguments:**
        - `joint`: name of a revolute (angle), prismatic (slide) or, in 3-D,
          cylindrical joint (then `coordinate="slide"` or `"angle"`).
        - `motion`: traceable `f(t)`, or `f(t, params)` when `params` is given,
          or the same as text, e.g. `"omega * t"` (see `jmbs.Expression`; text
          motions can be saved in model files); the coordinate is measured from
          the reference configuration.
        - `params`: design parameters of the motion (`"<name>.<key>"`).

        The driver's reaction is the driving torque (`M`) or force (`F`).
        """
        where = f"driver {name!r}"
        self._check_new_name(name)
        kinds = {s.name: s for s in self._elements}
        if joint not in kinds:
            raise ValueError(f"{where}: " + _unknown("joint", joint, tuple(kinds)) +
                             " (add the joint before its driver)")
        target = kinds[joint]
        drivable = DRIVABLE[self.dim].get(target.kind, ())
        if not drivable:
            raise ValueError(
                f"{where}: joint {joint!r} ({target.kind}) has no free coordinate a driver can "
                "prescribe; drive a revolute (angle), prismatic (slide) or cylindrical joint")
        if coordinate is None:
            if len(drivable) > 1:
                raise ValueError(f"{where}: joint {joint!r} ({target.kind}) has the coordinates "
                                 f"{drivable}; choose one with coordinate=")
            coordinate = drivable[0]
        if coordinate not in drivable:
            raise ValueError(f"{where}: joint {joint!r} ({target.kind}) has no {coordinate!r} "
                             f"coordinate; it has {drivable}")
        keys = self._user_params(name, params, where)
        if isinstance(motion, str):
            try:
                motion = Expression(motion, keys)
            except ValueError as e:
                raise ValueError(f"{where}: motion: {e}") from None
        _check_callable(motion, "motion", where)
        try:
            out = motion(0.0, {k: jnp.asarray(v) for k, v in (params or {}).items()}) if params \
                else motion(0.0)
        except Exception as e:  # noqa: BLE001 - report any failure of user code
            raise ValueError(f"{where}: motion(t) failed at t = 0: {e}") from e
        if np.shape(out) not in ((), (1,)):
            raise ValueError(f"{where}: motion(t) must return a scalar, got shape {np.shape(out)}")
        comp = ("M",) if coordinate == "angle" else ("F",)
        self._elements.append(ElementSpec(
            "driver", name, target.bodies, keys, comp,
            (("joint", joint), ("coordinate", coordinate), ("motion", motion),
             ("param_keys", keys))))
        return name

    def add_constraint(self, name: str, bodies: Sequence, holonomic: Callable | None = None,
                       pfaffian: Callable | None = None, components: Sequence[str] | None = None,
                       params: dict[str, Any] | None = None) -> str:
        """A user-defined constraint on `bodies` (handles or names, may include the ground).

        **Arguments:**
        - `holonomic`: `Phi(q_bodies, t[, params]) -> (m,)`, or
        - `pfaffian`: `Psi(q_bodies[, params]) -> (m, k * nv_b)` with `Psi v = 0`
          on the listed bodies' velocities;
          `q_bodies` is a tuple of each body's coordinates.
        - `components`: names of the `m` rows (default `c0, c1, ...`).
        - `params`: design parameters passed as the dict argument.
        """
        where = f"constraint {name!r}"
        self._check_new_name(name)
        if (holonomic is None) == (pfaffian is None):
            raise ValueError(f"{where}: give exactly one of holonomic= or pfaffian=")
        fn = holonomic if holonomic is not None else pfaffian
        _check_callable(fn, "holonomic" if holonomic is not None else "pfaffian", where)
        idx = tuple(self._body(b, name) for b in bodies)
        if not idx:
            raise ValueError(f"{where}: list at least one body")
        if len(set(idx)) != len(idx):
            raise ValueError(f"{where}: a body is listed twice; list each body once")
        keys = self._user_params(name, params, where)
        nq, nv = NQ[self.dim], NV[self.dim]
        qs = tuple(self._reference_q(i) for i in idx)
        p = {k: jnp.asarray(v, dtype=float) for k, v in (params or {}).items()}
        try:
            if holonomic is not None:
                out = holonomic(qs, 0.0, p) if params else holonomic(qs, 0.0)
            else:
                out = pfaffian(qs, p) if params else pfaffian(qs)
        except Exception as e:  # noqa: BLE001
            raise ValueError(f"{where}: the function failed on the reference configuration "
                             f"(q_bodies: tuple of {len(idx)} arrays of {nq}): {e}") from e
        shape = np.shape(out)
        if holonomic is not None:
            if len(shape) != 1:
                raise ValueError(f"{where}: holonomic must return a vector (m,), got {shape}")
            m = shape[0]
        else:
            if len(shape) != 2 or shape[1] != len(idx) * nv:
                raise ValueError(f"{where}: pfaffian must return (m, {len(idx) * nv}) for "
                                 f"{len(idx)} bodies, got {shape}")
            m = shape[0]
        comps = tuple(components) if components is not None else tuple(f"c{k}" for k in range(m))
        if len(comps) != m:
            raise ValueError(f"{where}: {len(comps)} component names for {m} rows")
        kind = "holonomic" if holonomic is not None else "pfaffian"
        self._elements.append(ElementSpec(kind, name, idx, keys, comps,
                                          (("fn", fn), ("param_keys", keys))))
        return name

    # ----- build -----
    def build(self, check: bool = True, assemble: bool = False, tol: float = 1e-8) -> Model:
        """Derive the immutable `Model`.

        **Arguments:**
        - `check`: verify that the reference configuration satisfies every
          holonomic constraint at `t = 0` to `tol` (relative to the model's size).
        - `assemble`: first move the bodies onto the constraints
          (`jmbs.assemble` from the reference poses); the joint geometry stays
          as given.

        **Raises:** `ValueError` naming the worst element and its residual.
        """
        if not self._bodies:
            raise ValueError("the model has no bodies; add one with add_body")
        nb = len(self._bodies)
        specs = tuple(dataclasses.replace(
            s, bodies=tuple(nb if i < 0 else i for i in s.bodies)) for s in self._elements)
        # Canonical order (gravity, bodies, elements), however the calls were interleaved,
        # so that equal models have equal parameter layouts (model files, compiled code).
        owner = {n: k for k, n in enumerate(
            ["gravity"] + [b.name for b in self._bodies] + [e.name for e in self._elements])}
        keys = sorted(self._values, key=lambda key: owner[key.split(".")[0]])
        values = {k: jnp.asarray(self._values[k], dtype=float) for k in keys}
        model = _derive(self.dim, self._bodies, specs, values)
        if assemble:
            from ._kinematics import assemble as _assemble

            model = eqx.tree_at(lambda m: m.q0, model, _assemble(model, model.q0, 0.0))
        if check:
            check_closed(model, model.q0, tol)
        return model

    # ----- helpers -----
    def _check_new_name(self, name: str) -> None:
        if not isinstance(name, str) or not name or "." in name:
            raise ValueError(f"name {name!r} must be a non-empty string without '.'")
        if name in _RESERVED:
            raise ValueError(f"name {name!r} is reserved; choose another")
        taken = {b.name for b in self._bodies} | {e.name for e in self._elements}
        if name in taken:
            raise ValueError(f"duplicate name {name!r}: bodies and elements need unique names")

    def _body(self, body, element: str) -> int:
        name = body.name if isinstance(body, Body) else body
        if name == GROUND:
            return -1
        names = [b.name for b in self._bodies]
        if name not in names:
            raise ValueError(f"element {element!r}: " + _unknown("body", name, names) +
                             " (add bodies before the elements that use them)")
        return names.index(name)

    def _reference_q(self, index: int) -> jnp.ndarray:
        if index < 0:
            return GROUND_Q[self.dim]
        b = self._bodies[index]
        v = self._values
        if self.dim == 2:
            return jnp.array([*v[f"{b.name}.position"], v[f"{b.name}.angle"]])
        o = jnp.asarray(v[f"{b.name}.{b.orientation}"])
        p = rot_to_quat(o) if b.orientation == "rotation" else o / jnp.linalg.norm(o)
        return jnp.concatenate([jnp.asarray(v[f"{b.name}.position"]), p])

    def _user_params(self, name: str, params, where: str) -> tuple[str, ...]:
        if not params:
            return ()
        for key, value in params.items():
            arr = np.asarray(value, dtype=float)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{where}: parameter {key!r} is not finite: {value!r}")
            self._values[f"{name}.{key}"] = arr
        return tuple(params)

    def _joint(self, kind: str, name: str, body_i, body_j, **geometry) -> str:
        where = f"{kind} {name!r}"
        self._check_new_name(name)
        if kind not in _CLASSES[self.dim]:
            other = "spatial (dim=3)" if self.dim == 2 else "planar (dim=2)"
            raise ValueError(f"{where}: {kind} joints exist only in {other} models")
        i, j = self._body(body_i, name), self._body(body_j, name)
        if i == j:
            who = "the ground" if i < 0 else f"body {self._bodies[i].name!r}"
            raise ValueError(f"{where}: joins {who} to itself; connect two different bodies")
        values = {}
        for key, value in geometry.items():
            if value is None:
                if key == "axis" and self.dim == 3:
                    raise ValueError(f"{where}: a spatial {kind} joint needs axis=(x, y, z)")
                continue
            if key == "length":
                values[key] = _scalar(value, key, where)
                if values[key] <= 0:
                    raise ValueError(f"{where}: length must be positive, got {value}")
            elif key == "axes":
                arr = np.asarray(value, dtype=float)
                if arr.shape != (2, 3) or not np.all(np.isfinite(arr)):
                    raise ValueError(f"{where}: axes must be two finite 3-vectors, got {value!r}")
                n = np.linalg.norm(arr, axis=1)
                if np.any(n < 1e-12):
                    raise ValueError(f"{where}: axes must be non-zero vectors")
                if abs(arr[0] @ arr[1]) > 1e-9 * n[0] * n[1]:
                    raise ValueError(f"{where}: the two axes of a universal joint must be "
                                     "perpendicular in the reference configuration")
                values[key] = arr
            else:
                values[key] = _vector(value, self.dim, key, where)
                if key in ("axis", "direction") and np.linalg.norm(values[key]) < 1e-12:
                    raise ValueError(f"{where}: {key} must be a non-zero vector, got {value!r}")
        comps = _components(self.dim, kind)
        for key, value in values.items():
            self._values[f"{name}.{key}"] = value
        self._elements.append(ElementSpec(kind, name, (i, j), tuple(values), comps))
        return name


def check_closed(model: Model, q, tol: float = 1e-8) -> None:
    """Raise `ValueError` naming the worst element if `q` violates a holonomic
    constraint at `t = 0` by more than `tol` (relative to the model's size)."""
    if not model.nc:
        return
    from ._assembly import phi

    res = np.abs(np.asarray(phi(model, q, 0.0)))
    scale = max(1.0, float(np.max(np.abs(np.asarray(q)))))
    worst = int(np.argmax(res))
    if res[worst] > tol * scale:
        name = model.element_of_row(worst)
        raise ValueError(
            f"the reference configuration violates element {name!r} by "
            f"{res[worst]:.3g} (tolerance {tol * scale:.3g}); correct the geometry, or "
            "build(assemble=True) / jmbs.assemble(model, q) to close the constraints")


def _components(dim: int, kind: str) -> tuple[str, ...]:
    cls = _CLASSES[dim][kind]
    return frame_joint_components(kind) if cls is SpatialFrameJoint else cls.components


def _check_callable(fn, what: str, where: str) -> None:
    if not callable(fn):
        raise ValueError(f"{where}: {what} must be a function, got {type(fn).__name__}")


def _scalar(value, what: str, where: str) -> float:
    try:
        x = float(np.asarray(value, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {what} must be a number, got {value!r}") from None
    if not np.isfinite(x):
        raise ValueError(f"{where}: {what} must be finite, got {value!r}")
    return x


def _vector(value, n: int, what: str, where: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {what} must be {n} numbers, got {value!r}") from None
    if arr.shape != (n,):
        raise ValueError(f"{where}: {what} must be {n} numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{where}: {what} contains NaN or infinity: {value!r}")
    return arr


def _inertia(value, dim: int, where: str) -> np.ndarray:
    if dim == 2:
        J = _scalar(value, "inertia", where)
        if J <= 0:
            raise ValueError(f"{where}: inertia must be positive, got {J}")
        return np.asarray(J)
    arr = np.asarray(value, dtype=float)
    if arr.shape not in ((3,), (3, 3)) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{where}: inertia must be 3 finite principal moments or a finite "
                         f"3x3 tensor, got {value!r}")
    J = np.diag(arr) if arr.shape == (3,) else arr
    if not np.allclose(J, J.T, rtol=1e-10, atol=1e-12 * np.abs(J).max()):
        raise ValueError(f"{where}: inertia tensor must be symmetric")
    if np.linalg.eigvalsh(J).min() <= 0:
        raise ValueError(f"{where}: inertia must be positive definite, eigenvalues "
                         f"{np.linalg.eigvalsh(J)}")
    return arr


def _rotation_matrix(value, where: str) -> np.ndarray:
    R = np.asarray(value, dtype=float)
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ValueError(f"{where}: rotation must be a finite 3x3 matrix")
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ValueError(f"{where}: rotation must be orthonormal with determinant +1")
    return R
