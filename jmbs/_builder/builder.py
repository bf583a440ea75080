"""`ModelBuilder`: collects and validates what a user gives (host-side), then derives the `Model`."""

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._assembly import phi
from .._bodies import GROUND_Q, NQ, NV, reference_q
from .._config import require_x64
from .._expression import Expression
from .._gc import compiles
from .._joints.base import ConstraintSpec, DriverSpec, ElementSpec, JointSpec
from .._joints.registry import ELEMENT_TYPES
from .._kinematics import assemble as _assemble
from .._misc import warn_user
from .._model import validate
from .._model.model import GROUND, Body, BodySpec, Model, derive
from .forces import ForceElements
from .primitives import JointPrimitives

_RESERVED = (GROUND, "gravity")
# A quaternion whose norm differs from 1 by more than this is normalised with a warning
# (smaller differences are rounding in the given digits).
QUATERNION_NORM_TOL = 1e-6


class ModelBuilder(ForceElements, JointPrimitives):
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
        self._forces: list = []  # ForceSpec, see `ForceElements`
        self._taken: dict[str, int | None] = {}  # see `_names`
        self._named = [0, 0, 0]
        self._values: dict[str, np.ndarray] = {}
        self._values["gravity"] = validate.vector(
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
        m = validate.scalar(mass, "mass", where)
        if m <= 0:
            raise ValueError(f"{where}: mass must be positive, got {m}")
        values = {"mass": m, "inertia": validate.inertia(inertia, dim, where),
                  "position": validate.vector(position, dim, "position", where)}
        if dim == 2:
            if rotation is not None or quaternion is not None:
                raise ValueError(f"{where}: a planar body takes `angle`, not rotation/quaternion")
            orientation = "angle"
            values["angle"] = validate.scalar(0.0 if angle is None else angle, "angle", where)
            values["angular_velocity"] = validate.scalar(
                0.0 if angular_velocity is None else angular_velocity, "angular_velocity", where)
        else:
            if angle is not None:
                raise ValueError(f"{where}: a spatial body takes `rotation` or `quaternion`, "
                                 "not `angle`")
            if rotation is not None and quaternion is not None:
                raise ValueError(f"{where}: give either `rotation` or `quaternion`, not both")
            if rotation is not None:
                orientation = "rotation"
                values["rotation"] = validate.rotation_matrix(rotation, where)
            else:
                orientation = "quaternion"
                p = validate.vector((1.0, 0, 0, 0) if quaternion is None else quaternion, 4,
                            "quaternion", where)
                norm = np.linalg.norm(p)
                if norm < 1e-12:
                    raise ValueError(f"{where}: quaternion must be non-zero (w, x, y, z)")
                if abs(norm - 1.0) > QUATERNION_NORM_TOL:
                    warn_user(f"{where}: quaternion {tuple(p.tolist())} has norm {norm:.6g}, not 1; "
                              f"jmbs uses it divided by its norm, {tuple((p / norm).round(12).tolist())} "
                              "(give a unit quaternion to silence this)")
                values["quaternion"] = p / norm
            values["angular_velocity"] = validate.vector(
                np.zeros(3) if angular_velocity is None else angular_velocity, 3,
                "angular_velocity", where)
        values["velocity"] = validate.vector(np.zeros(dim) if velocity is None else velocity, dim,
                                     "velocity", where)
        for key, value in values.items():
            self._values[f"{name}.{key}"] = np.asarray(value, dtype=float)
        self._bodies.append(BodySpec(name, orientation))
        return Body(name, len(self._bodies) - 1)

    # ----- planar and spatial joints -----
    def add_joint(self, kind: str, name: str, body_i, body_j, components=None, **geometry) -> str:
        """A joint of any kind in `jmbs.ELEMENT_TYPES` (family `"joint"`) between
        `body_i` and `body_j`; `add_revolute(...)` is `add_joint("revolute", ...)`.

        **Arguments:**
        - `kind`: the element type, e.g. `"revolute"`.
        - `name`: a new name.
        - `body_i`, `body_j`: handles or names (`"ground"` for the ground).
        - `components`: only for a kind whose rows are chosen per element (the
          general joint): the reaction components it keeps, e.g. `("Fx", "Fz", "Mx")`.
        - `geometry`: the kind's geometry arguments (`ElementType.geometry`), in
          global coordinates in the reference configuration; `None` for an
          optional one means its default.

        **Returns:** `name`.

        **Raises:** `ValueError` naming the element and what is expected.
        """
        where = f"{kind} {name!r}"
        self._check_new_name(name)
        joints = [k for k, t in ELEMENT_TYPES.items() if t.family == "joint"]
        if kind not in joints:
            raise ValueError(validate.unknown("joint type", kind, joints))
        etype = ELEMENT_TYPES[kind]
        if self.dim not in etype.classes:
            other = "spatial (dim=3)" if self.dim == 2 else "planar (dim=2)"
            raise ValueError(f"{where}: {kind} joints exist only in {other} models")
        i, j = self._body(body_i, name), self._body(body_j, name)
        if i == j:
            who = "the ground" if i < 0 else f"body {self._bodies[i].name!r}"
            raise ValueError(f"{where}: joins {who} to itself; connect two different bodies")
        known = [g.name for g in etype.geometry]
        for key in geometry:
            if key not in known:
                raise ValueError(f"{where}: " + validate.unknown("argument", key, known))
        values = {}
        for g in etype.geometry:
            value = geometry.get(g.name)
            if value is None and g.default == "centre_j":
                value = self._values[f"{self._bodies[j].name}.position"] if j >= 0 else \
                    np.zeros(self.dim)
            if value is None:
                if not g.optional and self.dim in g.dims:
                    space = "spatial" if self.dim == 3 else "planar"
                    xyz = "(x, y, z)" if self.dim == 3 else "(x, y)"
                    raise ValueError(f"{where}: a {space} {kind} joint needs {g.name}={xyz}")
                continue
            values[g.name] = self._geometry(g.name, g.value, value, where)
        ends = [g.name for g in etype.geometry if g.value == "point" and g.on in ("i", "j")]
        if any(g.value == "length" and g.name not in values for g in etype.geometry) and len(ends) == 2 \
                and np.linalg.norm(values[ends[0]] - values[ends[1]]) < 1e-12:
            raise ValueError(f"{where}: {ends[0]} and {ends[1]} coincide, so the length they give is 0; "
                             "give two distinct points")
        comps = _chosen(etype, components, where, self.dim)
        for key, value in values.items():
            self._values[f"{name}.{key}"] = value
        self._elements.append(JointSpec(kind, name, (i, j), tuple(values), comps))
        return name

    def _geometry(self, key: str, what: str, value, where: str):
        """One geometry value checked as `what` (`Geometry.value`)."""
        if what == "length":
            x = validate.scalar(value, key, where)
            if x <= 0:
                raise ValueError(f"{where}: {key} must be positive, got {value}")
            return x
        if what == "axes":
            arr = validate.numbers(value, key, where, "two 3-vectors")
            if arr.shape != (2, 3) or not np.all(np.isfinite(arr)):
                raise ValueError(f"{where}: {key} must be two finite 3-vectors, got {value!r}")
            n = np.linalg.norm(arr, axis=1)
            if np.any(n < 1e-12):
                raise ValueError(f"{where}: {key} must be non-zero vectors")
            if abs(arr[0] @ arr[1]) > 1e-9 * n[0] * n[1]:
                raise ValueError(f"{where}: the two axes of a {where.partition(' ')[0]} joint must be "
                                 "perpendicular in the reference configuration")
            return arr
        arr = validate.vector(value, self.dim, key, where)
        if what in ("axis", "direction") and np.linalg.norm(arr) < 1e-12:
            raise ValueError(f"{where}: {key} must be a non-zero vector, got {value!r}")
        return arr

    def add_revolute(self, name: str, body_i, body_j, point, axis=None) -> str:
        """Revolute (pin) joint at `point`; spatial joints also need the `axis`.

        Components: planar `Fx, Fy` (global); spatial `Fx, Fy, Fz, Mx, My` in
        the joint frame (z along the axis).
        """
        return self.add_joint("revolute", name, body_i, body_j, point=point, axis=axis)

    def add_prismatic(self, name: str, body_i, body_j, point, axis) -> str:
        """Prismatic (translational) joint: body j slides along `axis` fixed in body i.

        Components: planar `Fn, M`; spatial `Fx, Fy, Mx, My, Mz` (joint frame).
        """
        return self.add_joint("prismatic", name, body_i, body_j, point=point, axis=axis)

    def add_weld(self, name: str, body_i, body_j, point=None) -> str:
        """Rigid connection; `point` (default: body j's centre of mass) is where the
        reaction is reported. Components: planar `Fx, Fy, M`; spatial `Fx..Mz`."""
        return self.add_joint("weld", name, body_i, body_j, point=point)

    def add_knife_edge(self, name: str, body, point, direction) -> str:
        """Planar knife edge (a wheel without side slip) on `body`: the contact
        point at `point` has no velocity across `direction`. Pfaffian; component `Fn`."""
        return self.add_joint("knife_edge", name, self.ground, body, point=point,
                              direction=direction)

    def add_wheel(self, name: str, body, radius, axis, plane_point=(0.0, 0.0, 0.0),
                  plane_normal=(0.0, 0.0, 1.0)) -> str:
        """Thin wheel (disc) of `radius` rolling without slipping on a plane (3-D): `body`'s
        centre of mass is the disc's centre, `axis` its axle in the reference
        configuration; the plane through `plane_point` with normal `plane_normal` is
        fixed to the ground. Components `Fn` (holonomic: the rim touches the plane),
        `Ft`, `Fs` (Pfaffian: no slip along the rolling direction `axis x normal` and
        sideways), forces at the contact point."""
        return self.add_joint("wheel", name, self.ground, body, radius=radius, axis=axis,
                              plane_point=plane_point, plane_normal=plane_normal)

    def add_spherical(self, name: str, body_i, body_j, point) -> str:
        """Spherical (ball) joint. Components `Fx, Fy, Fz` (global axes in the reference)."""
        return self.add_joint("spherical", name, body_i, body_j, point=point)

    def add_cylindrical(self, name: str, body_i, body_j, point, axis) -> str:
        """Cylindrical joint: slide along and rotate about `axis`. Components `Fx, Fy, Mx, My`."""
        return self.add_joint("cylindrical", name, body_i, body_j, point=point, axis=axis)

    def add_universal(self, name: str, body_i, body_j, point, axes) -> str:
        """Universal joint: `axes[0]` fixed in body i, `axes[1]` in body j,
        perpendicular. Components `Fx, Fy, Fz, Mz` (frame: axis 1, axis 2, their cross)."""
        return self.add_joint("universal", name, body_i, body_j, point=point, axes=axes)

    def add_distance(self, name: str, body_i, body_j, point_i, point_j,
                     length: float | None = None) -> str:
        """Massless rod between `point_i` on body i and `point_j` on body j.

        `length` defaults to the reference distance of the points. Component `F`.
        """
        return self.add_joint("distance", name, body_i, body_j, point_i=point_i, point_j=point_j,
                              length=length)

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
        target, coordinate = self._joint_coordinate(joint, coordinate, where, "a driver can prescribe")
        keys = self._user_params(name, params, where)
        if isinstance(motion, str):
            try:
                motion = Expression(motion, keys)
            except ValueError as e:
                raise ValueError(f"{where}: motion: {e}") from None
        validate.check_motion(motion, params, where)
        cls = ELEMENT_TYPES[target.kind].drivable[self.dim][coordinate]
        self._elements.append(DriverSpec("driver", name, target.bodies, keys, cls.components,
                                         joint, coordinate, motion, keys))
        return name

    def _joint_coordinate(self, joint: str, coordinate: str | None, where: str,
                          purpose: str) -> tuple[ElementSpec, str]:
        """The joint named `joint` and which of its free coordinates (`coordinate`, or
        its only one); `ValueError` naming `where` otherwise."""
        kinds = {s.name: s for s in self._elements}
        if joint not in kinds:
            raise ValueError(f"{where}: " + validate.unknown("joint", joint, tuple(kinds)) +
                             " (add the joint first)")
        target = kinds[joint]
        drivable = tuple(ELEMENT_TYPES[target.kind].drivable.get(self.dim, ()))
        if not drivable:
            raise ValueError(
                f"{where}: joint {joint!r} ({target.kind}) has no free coordinate {purpose}; "
                "use a revolute (angle), prismatic (slide) or cylindrical joint")
        if coordinate is None:
            if len(drivable) > 1:
                raise ValueError(f"{where}: joint {joint!r} ({target.kind}) has the coordinates "
                                 f"{drivable}; choose one with coordinate=")
            coordinate = drivable[0]
        if coordinate not in drivable:
            raise ValueError(f"{where}: joint {joint!r} ({target.kind}) has no {coordinate!r} "
                             f"coordinate; it has {drivable}")
        return target, coordinate

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
        validate.check_callable(fn, "holonomic" if holonomic is not None else "pfaffian", where)
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
        if not np.all(np.isfinite(np.asarray(out, dtype=float))):
            raise ValueError(f"{where}: the function returned NaN or infinity on the reference "
                             "configuration; it must be finite there")
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
        self._elements.append(ConstraintSpec(kind, name, idx, keys, comps, fn, keys))
        return name

    # ----- build -----
    @compiles
    def build(self, check: bool = True, assemble: bool = False, tol: float = 1e-8) -> Model:
        """Derive the immutable `Model`.

        **Arguments:**
        - `check`: verify that the reference configuration satisfies every
          holonomic constraint at `t = 0` to `tol` (relative to the model's size).
        - `assemble`: first move the bodies onto the constraints
          (`jmbs.assemble` from the reference poses); the joint geometry stays
          as given.

        **Raises:** `ValueError` naming the worst element and its residual;
        `RuntimeError` if JAX computes in float32.
        """
        require_x64("jmbs.ModelBuilder.build")
        if not self._bodies:
            raise ValueError("the model has no bodies; add one with add_body")
        nb = len(self._bodies)
        specs = tuple(dataclasses.replace(
            s, bodies=tuple(nb if i < 0 else i for i in s.bodies)) for s in self._elements)
        # Canonical order (gravity, bodies, elements), however the calls were interleaved,
        # so that equal models have equal parameter layouts (model files, compiled code).
        owner = {n: k for k, n in enumerate(
            ["gravity"] + [b.name for b in self._bodies] + [e.name for e in self._elements]
            + [f.name for f in self._forces])}
        keys = sorted(self._values, key=lambda key: owner[key.split(".")[0]])
        values = {k: np.asarray(self._values[k], dtype=float) for k in keys}
        forces = self._force_specs(nb)
        args = (self.dim, tuple(self._bodies), specs, values, forces)
        if check and not assemble:  # the closure check's Phi(q0, 0) from the build's program
            model, residual = derive(*args, and_then=_reference_residual)
        else:
            model, residual = derive(*args), None
        self._check_laws(forces, model.q0, model.v0)
        if assemble:
            model = eqx.tree_at(lambda m: m.q0, model, _assemble(model, model.q0, 0.0))
        if check:
            check_closed(model, model.q0, tol, residual)
        return model

    # ----- helpers -----
    def _check_new_name(self, name: str) -> None:
        if not isinstance(name, str) or not name or "." in name:
            raise ValueError(f"name {name!r} must be a non-empty string without '.'")
        if name in _RESERVED:
            raise ValueError(f"name {name!r} is reserved; choose another")
        if name in self._names():
            raise ValueError(f"duplicate name {name!r}: bodies and elements need unique names")

    def _body(self, body, element: str) -> int:
        name = body.name if isinstance(body, Body) else body
        if name == GROUND:
            return -1
        index = self._names().get(name)
        if index is None:
            names = [b.name for b in self._bodies]
            raise ValueError(f"element {element!r}: " + validate.unknown("body", name, names + [GROUND]) +
                             " (add bodies before the elements that use them)")
        return index

    def _names(self) -> dict[str, int | None]:
        """Every name taken so far -> its body's index (`None` for elements and force
        elements). The lists only grow: the map takes in their new entries (a builder
        of thousands of elements checks each name in constant time)."""
        for k, items in enumerate((self._bodies, self._elements, self._forces)):
            for index in range(self._named[k], len(items)):
                self._taken[items[index].name] = index if k == 0 else None
            self._named[k] = len(items)
        return self._taken

    def _reference_q(self, index: int) -> jnp.ndarray:
        if index < 0:
            return GROUND_Q[self.dim]
        b = self._bodies[index]
        return reference_q(self._values[f"{b.name}.position"],
                           self._values[f"{b.name}.{b.orientation}"], b.orientation)

    def _user_params(self, name: str, params, where: str) -> tuple[str, ...]:
        if not params:
            return ()
        for key, value in params.items():
            arr = validate.numbers(value, f"parameter {key!r}", where)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{where}: parameter {key!r} is not finite: {value!r}")
            self._values[f"{name}.{key}"] = arr
        return tuple(params)


def _chosen(etype, components, where: str, dim: int) -> tuple[str, ...]:
    """A joint's components: its kind's, or for the general joint the ones given (a
    non-empty subset of `etype.choose`, in its order)."""
    if not etype.choose:
        if components is not None:
            raise ValueError(f"{where}: a {etype.kind} joint's components are fixed by its kind; "
                             "leave components out (the general joint takes them)")
        return etype.components(dim)
    given = (components,) if isinstance(components, str) else tuple(components or ())
    bad = [c for c in given if c not in etype.choose]
    if not given or bad or len(set(given)) != len(given):
        raise ValueError(f"{where}: components must name each kept row once, from "
                         f"{', '.join(etype.choose)} (at least one); got {components!r}")
    return tuple(c for c in etype.choose if c in given)


def _reference_residual(model: Model) -> Array:
    return phi(model, model.q0, 0.0)


def check_closed(model: Model, q, tol: float = 1e-8, residual=None) -> None:
    """Raise `ValueError` naming the worst element if `q` violates a holonomic
    constraint at `t = 0` by more than `tol` (relative to the model's size);
    `residual`, given, is `Phi(q, 0)` already evaluated."""
    if not model.nc:
        return
    res = np.abs(np.asarray(phi(model, q, 0.0) if residual is None else residual))
    scale = max(1.0, float(np.max(np.abs(np.asarray(q)))))
    worst = int(np.argmax(res))
    if res[worst] > tol * scale:
        name = model.element_of_row(worst)
        raise ValueError(
            f"the reference configuration violates element {name!r} by "
            f"{res[worst]:.3g} (tolerance {tol * scale:.3g}); correct the geometry, or "
            "build(assemble=True) / jmbs.assemble(model, q) to close the constraints")
