"""The builder's force-element methods (`ModelBuilder` inherits them): host-side checks,
then a `ForceSpec` and its design parameters."""

import dataclasses

import jax
import numpy as np

from .._expression import Expression
from .._forces.base import ForceSpec, LawInputs, law_inputs
from .._forces.registry import FORCE_TYPES
from .._joints.registry import ELEMENT_TYPES
from .._model import validate

# Default regularisation of Coulomb friction: the coordinate rate (rad/s or m/s) at
# which tanh(rate / scale) reaches 0.76 of the full friction force.
FRICTION_VELOCITY_SCALE = 1e-2


class ForceElements:
    """Force elements: applied loads, springs, dampers, bushings, actuators, friction.

    Geometry is given as for joints: global coordinates in the reference
    configuration. A *force law* is a constant (a design parameter
    `"<name>.<argument>"`), a text expression of `t` (as for driver motions), a
    traceable `f(t)`, or a traceable `f(t, q, v)` of the model's whole state (a
    controller).
    """

    # ----- applied loads -----
    def add_force(self, name: str, body, force, point=None, frame: str = "global") -> str:
        """A force at a point of `body` (default its centre of mass).

        **Arguments:**
        - `force`: a force law giving the `dim`-vector force (N).
        - `point`: the point of application (global, reference configuration).
        - `frame`: `"global"`, or `"body"`: the force is given in the body frame and
          turns with the body (a thruster).
        """
        where = f"force {name!r}"
        self._check_new_name(name)
        j = self._moving_body(body, name, where)
        frame = self._frame(frame, where)
        values = {"point": self._values[f"{self._bodies[j].name}.position"] if point is None
                  else validate.vector(point, self.dim, "point", where)}
        law, how = self._law(force, (self.dim,), "force", where, values)
        return self._add_force(ForceSpec("force", name, (j,), tuple(values), law, how, frame), values)

    def add_torque(self, name: str, body, torque, frame: str = "global") -> str:
        """A torque on `body` (N m): a scalar in 2-D, a vector in 3-D (`frame="body"`:
        given in the body frame). `torque` is a force law."""
        where = f"torque {name!r}"
        self._check_new_name(name)
        j = self._moving_body(body, name, where)
        frame = self._frame(frame, where)
        values: dict = {}
        law, how = self._law(torque, () if self.dim == 2 else (3,), "torque", where, values)
        return self._add_force(ForceSpec("torque", name, (j,), tuple(values), law, how, frame), values)

    # ----- springs and dampers -----
    def add_spring_damper(self, name: str, body_i, body_j, point_i, point_j, stiffness=None,
                          damping=0.0, rest_length=None, force=None) -> str:
        """A point-to-point spring-damper between `point_i` on body i and `point_j` on
        body j (global, reference configuration; either body may be the ground).

        The tension (positive pulls the points together) is
        `stiffness (L - rest_length) + damping L'`, `L` the distance of the points;
        `rest_length` defaults to their reference distance. `force=f(length, rate)`
        gives the tension instead of the linear law (then `stiffness` and `damping`
        are left out). Potential energy `stiffness (L - rest_length)^2 / 2` (linear law).
        """
        where = f"spring_damper {name!r}"
        self._check_new_name(name)
        i, j = self._two_bodies(body_i, body_j, name, where)
        values = {"point_i": validate.vector(point_i, self.dim, "point_i", where),
                  "point_j": validate.vector(point_j, self.dim, "point_j", where)}
        law, how = None, None
        if force is not None:
            if stiffness is not None or damping:
                raise ValueError(f"{where}: give either force=f(length, rate) or stiffness and "
                                 "damping, not both")
            if isinstance(force, str):
                raise ValueError(f"{where}: force must be a function f(length, rate); text laws "
                                 "are expressions of t")
            how = law_inputs(force, ("length_rate",), where, "force")
            law = force
        else:
            if stiffness is None:
                raise ValueError(f"{where}: give stiffness= (N/m), or a law force=f(length, rate)")
            values["stiffness"] = self._bounded("spring_damper", "stiffness", stiffness, where)
            values["damping"] = self._bounded("spring_damper", "damping", damping, where)
        distance = float(np.linalg.norm(values["point_j"] - values["point_i"]))
        values["rest_length"] = (distance if rest_length is None
                                 else self._bounded("spring_damper", "rest_length", rest_length, where))
        if distance < 1e-12 and (law is not None or values["rest_length"] > 0
                                 or values.get("damping", 0.0) > 0):
            raise ValueError(f"{where}: point_i and point_j coincide in the reference configuration, "
                             "so the spring's direction is undefined there; give two distinct "
                             "points (or a zero rest length and no damping)")
        return self._add_force(ForceSpec("spring_damper", name, (i, j), tuple(values), law, how),
                               values)

    def add_rotational_spring_damper(self, name: str, joint: str, stiffness, damping=0.0,
                                     rest_angle=0.0) -> str:
        """A torsion spring-damper about the axis of the revolute (or cylindrical) joint
        `joint`: torque `-(stiffness (theta - rest_angle) + damping theta')` on the
        joint's body j, its opposite on body i; `theta` is the joint's rotation from
        the reference configuration (spatial joints: in (-pi, pi])."""
        return self._joint_spring("rotational_spring_damper", name, joint, "angle", stiffness,
                                  damping, rest_angle)

    def add_slide_spring_damper(self, name: str, joint: str, stiffness, damping=0.0,
                                rest_slide=0.0) -> str:
        """A linear spring-damper along the slide of the prismatic (or cylindrical) joint
        `joint`: force `-(stiffness (s - rest_slide) + damping s')` on the joint's body j
        along the axis, its opposite on body i; `s` is the slide from the reference
        configuration (m)."""
        return self._joint_spring("slide_spring_damper", name, joint, "slide", stiffness,
                                  damping, rest_slide)

    def _joint_spring(self, kind: str, name: str, joint: str, coordinate: str, stiffness,
                      damping, rest) -> str:
        where = f"{kind} {name!r}"
        self._check_new_name(name)
        target, found = self._joint_coordinate(
            joint, coordinate if self._has(joint, coordinate) else None, where,
            "to turn about" if coordinate == "angle" else "to slide along")
        if found != coordinate:
            raise ValueError(
                f"{where}: joint {joint!r} ({target.kind}) does not " +
                ("rotate; use a revolute or cylindrical joint (or a slide_spring_damper on a slide)"
                 if coordinate == "angle" else
                 "slide; use a prismatic or cylindrical joint (or a rotational_spring_damper)"))
        rest_key = "rest_angle" if coordinate == "angle" else "rest_slide"
        values = {"stiffness": self._bounded(kind, "stiffness", stiffness, where),
                  "damping": self._bounded(kind, "damping", damping, where),
                  rest_key: validate.scalar(rest, rest_key, where)}
        return self._add_force(ForceSpec(kind, name, target.bodies, tuple(values), joint=joint,
                                         joint_kind=target.kind, coordinate=coordinate), values)

    def add_bushing(self, name: str, body_i, body_j, point, stiffness, damping=0.0) -> str:
        """A linear spring-damper per component between the frames of body i and body j
        at `point`: translations along, then rotations about, the global axes of the
        reference configuration carried by body i (3 components in 2-D, 6 in 3-D).

        `stiffness` (N/m, then N m/rad) and `damping` are one number for every
        component or one per component. The compliant replacement of a joint: the
        reactions of a stiff bushing are set by the stiffnesses.
        """
        where = f"bushing {name!r}"
        self._check_new_name(name)
        i, j = self._two_bodies(body_i, body_j, name, where)
        n = 3 if self.dim == 2 else 6
        values = {"point": validate.vector(point, self.dim, "point", where),
                  "stiffness": self._components(stiffness, n, "stiffness", where),
                  "damping": self._components(damping, n, "damping", where)}
        return self._add_force(ForceSpec("bushing", name, (i, j), tuple(values)), values)

    # ----- actuators and friction -----
    def add_actuator(self, name: str, joint: str, force, coordinate: str | None = None) -> str:
        """A generalized force along the free coordinate of `joint`: a torque (N m) on a
        revolute joint, a force (N) on a prismatic one, either on a cylindrical one
        (`coordinate="angle"` or `"slide"`), on body j and its opposite on body i.
        `force` is a force law (scalar). Redundant actuation by forces is allowed."""
        where = f"actuator {name!r}"
        self._check_new_name(name)
        target, coordinate = self._joint_coordinate(joint, coordinate, where, "to actuate")
        values: dict = {}
        law, how = self._law(force, (), "force", where, values)
        return self._add_force(ForceSpec("actuator", name, target.bodies, tuple(values), law, how,
                                         joint=joint, joint_kind=target.kind,
                                         coordinate=coordinate), values)

    def add_joint_friction(self, name: str, joint: str, coulomb, viscous=0.0, radius=None,
                           velocity_scale=FRICTION_VELOCITY_SCALE, coordinate: str | None = None,
                           allow_nonunique: bool = False) -> str:
        """Friction along the free coordinate of `joint`:
        `-(viscous c' + coulomb |R| radius tanh(c' / velocity_scale))`, `|R|` the
        magnitude of the joint's reaction force and `radius` the pin radius (m) of a
        rotation (none on a slide). Purely viscous friction (`coulomb=0`) needs no
        radius (left out, it is 0: the Coulomb part stays zero even if
        `"<name>.coulomb"` is raised later by `Model.with_params`; give a radius to
        vary it).

        Coulomb friction on a joint whose reaction is not unique leaves the motion
        itself undetermined by the rigid model (its value depends on how the
        formulation splits the redundant reactions): `jmbs.simulate` and
        `jmbs.reactions` refuse it, naming the joint, unless `allow_nonunique=True`
        (then with a warning). Model the compliance instead (a bushing, or
        `jmbs.Penalty`). Viscous friction does not depend on the reaction: it is
        accepted on any joint.
        """
        where = f"joint_friction {name!r}"
        self._check_new_name(name)
        target, coordinate = self._joint_coordinate(joint, coordinate, where, "for friction to act on")
        values = {"coulomb": self._bounded("joint_friction", "coulomb", coulomb, where),
                  "viscous": self._bounded("joint_friction", "viscous", viscous, where)}
        if coordinate == "angle":
            if radius is None and values["coulomb"] > 0:
                raise ValueError(f"{where}: Coulomb friction in the rotation of {joint!r} needs "
                                 "the pin radius= (m) that turns the reaction force into a "
                                 "torque (purely viscous friction, coulomb=0, needs none)")
            # Purely viscous without a radius: the Coulomb part stays zero (radius 0).
            values["radius"] = (0.0 if radius is None
                                else self._bounded("joint_friction", "radius", radius, where))
        elif radius is not None:
            raise ValueError(f"{where}: a slide has no pin radius; leave radius out")
        values["velocity_scale"] = self._bounded("joint_friction", "velocity_scale", velocity_scale, where)
        return self._add_force(ForceSpec("joint_friction", name, target.bodies, tuple(values),
                                         joint=joint, joint_kind=target.kind,
                                         coordinate=coordinate,
                                         allow_nonunique=bool(allow_nonunique)), values)

    # ----- helpers -----
    def _add_force(self, spec: ForceSpec, values: dict) -> str:
        for key, value in values.items():
            self._values[f"{spec.name}.{key}"] = np.asarray(value, dtype=float)
        self._forces.append(spec)
        return spec.name

    def _moving_body(self, body, name: str, where: str) -> int:
        j = self._body(body, name)
        if j < 0:
            raise ValueError(f"{where}: the ground does not move; apply it to a moving body")
        return j

    def _two_bodies(self, body_i, body_j, name: str, where: str) -> tuple[int, int]:
        i, j = self._body(body_i, name), self._body(body_j, name)
        if i == j:
            who = "the ground" if i < 0 else f"body {self._bodies[i].name!r}"
            raise ValueError(f"{where}: connects {who} to itself; connect two different bodies")
        return i, j

    def _has(self, joint: str, coordinate: str) -> bool:
        """Whether `joint` exists and has the free coordinate `coordinate`."""
        spec = next((s for s in self._elements if s.name == joint), None)
        return spec is not None and coordinate in ELEMENT_TYPES[spec.kind].drivable.get(self.dim, {})

    @staticmethod
    def _frame(frame: str, where: str) -> str:
        if frame not in ("global", "body"):
            raise ValueError(f"{where}: frame must be 'global' or 'body', got {frame!r}")
        return frame

    @staticmethod
    def _bounded(kind: str, what: str, value, where: str) -> float:
        """A scalar argument of a force kind, checked against its record's bound."""
        x = validate.scalar(value, what, where)
        arg = FORCE_TYPES[kind].argument(what)
        if not arg.admits(x):
            sign = "positive" if arg.bound == "positive" else "non-negative"
            raise ValueError(f"{where}: {what} must be {sign}, got {x:g}")
        return x

    @staticmethod
    def _components(value, n: int, what: str, where: str) -> np.ndarray:
        arr = validate.numbers(value, what, where, f"one number or {n} (one per component)")
        if arr.shape not in ((), (n,)):
            raise ValueError(f"{where}: {what} must be one number or {n} (one per component), "
                             f"got {value!r}")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"{where}: {what} must be finite and non-negative, got {value!r}")
        return np.broadcast_to(arr, (n,)).copy()

    def _law(self, value, shape: tuple[int, ...], key: str, where: str,
             values: dict) -> tuple[object, LawInputs | None]:
        """A force law: a constant goes into `values[key]` (a design parameter); a text
        becomes an `Expression` of `t`; a function is kept (checked at `build`)."""
        if isinstance(value, str):
            if shape != ():
                raise ValueError(f"{where}: a text law gives one number, but {key} needs {shape[0]}; "
                                 "give a function f(t) returning them, or constant numbers")
            try:
                return Expression(value), "t"
            except ValueError as e:
                raise ValueError(f"{where}: {key}: {e}") from None
        if callable(value):
            return value, law_inputs(value, ("t", "tqv"), where, key)
        arr = validate.numbers(value, key, where, "a number, a text expression of t or a function")
        if arr.shape != shape:
            want = "a number" if shape == () else f"{shape[0]} numbers"
            raise ValueError(f"{where}: {key} must be {want}, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{where}: {key} contains NaN or infinity: {value!r}")
        values[key] = arr
        return None, None

    def _force_specs(self, nb: int) -> tuple[ForceSpec, ...]:
        """The force specs for `build`: the ground's index, friction's reaction rows."""
        rows, offset = {}, 0
        for e in self._elements:
            rows[e.name] = (offset, e.components)
            offset += len(e.components)
        out = []
        for s in self._forces:
            s = dataclasses.replace(s, bodies=tuple(nb if i < 0 else i for i in s.bodies))
            if s.kind == "joint_friction":
                a, comps = rows[s.joint]
                force = tuple(a + k for k, c in enumerate(comps) if c.startswith("F"))
                s = dataclasses.replace(s, reaction_rows=force)
            out.append(s)
        return tuple(out)

    def _check_laws(self, specs: tuple[ForceSpec, ...], q0, v0) -> None:
        """Every function law evaluated once at `(0, q0, v0)`: its shape and finiteness."""
        for spec in specs:
            if spec.law is not None and spec.law_inputs in ("t", "tqv"):
                self._check_law(spec, f"{spec.kind} {spec.name!r}", q0, v0)

    def _check_law(self, spec: ForceSpec, where: str, q0, v0) -> None:
        arg = FORCE_TYPES[spec.kind].law
        shape = {"force": (self.dim,), "torque": () if self.dim == 2 else (3,),
                 "actuator": ()}[spec.kind]
        args = (0.0,) if spec.law_inputs == "t" else (0.0, q0, v0)
        form = "f(t)" if spec.law_inputs == "t" else f"f(t, q ({q0.shape[0]},), v ({v0.shape[0]},))"
        try:
            out = np.asarray(jax.jit(spec.law)(*args), dtype=float)
        except Exception as e:  # noqa: BLE001
            raise ValueError(f"{where}: the {arg} law {form} failed at t = 0 on the reference "
                             f"state: {e}") from e
        if out.shape != shape and not (shape == () and out.shape == (1,)):
            want = "a scalar" if shape == () else f"shape {shape}"
            raise ValueError(f"{where}: the {arg} law must return {want}, got shape {out.shape}")
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{where}: the {arg} law returned NaN or infinity at t = 0 on the "
                             "reference state")
