"""The table of force-element types: one `ForceType` per kind (as `jmbs.ELEMENT_TYPES`
is for joints). Adding a force element is one group class (a file in this folder,
`AbstractForce`), one entry here and one builder method."""

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from .actuator import Actuator
from .applied import PointForce, Torque
from .base import AbstractForce, ForceSpec
from .bushing import Bushing
from .friction import JointFriction
from .rotational import RotationalSpringDamper, SlideSpringDamper
from .spring_damper import SpringDamper


@dataclass(frozen=True)
class Argument:
    """One value argument of a force kind, as joints' `Geometry` records theirs: what the
    model-file schema, the units written into saved files, the builder's and
    `with_params`' host checks and the traced design-validity check all read.

    - `name`: the builder's keyword, the parameter key `"<element>.<name>"` and the
      model file's field.
    - `unit`: its unit; for a kind along a joint coordinate, the unit for a rotation
      (`unit_slide` the one for a slide).
    - `bound`: `"non_negative"`, `"positive"` or `None` (any finite value).
    - `shape`: `"scalar"`, `"vector"` (`dim` numbers), `"components"` (one number or
      one per component), or `"law"` (a value, a text expression of `t` or a function).
    - `description`: what it is, for the schema (units are added).
    """

    name: str
    unit: str
    bound: Literal["non_negative", "positive"] | None = None
    shape: Literal["scalar", "vector", "components", "law"] = "scalar"
    description: str = ""
    unit_slide: str | None = None

    def unit_for(self, coordinate: str | None) -> str:
        """The unit for a joint coordinate (`"angle"` or `"slide"`; None: not along one)."""
        return self.unit_slide if coordinate == "slide" and self.unit_slide else self.unit

    def admits(self, value) -> bool:
        """Host-side: whether a concrete value is within the bound."""
        import numpy as np

        v = np.asarray(value, dtype=float)
        return bool(self.bound is None or (np.all(v > 0) if self.bound == "positive" else np.all(v >= 0)))


@dataclass(frozen=True)
class ForceType:
    """Everything jmbs knows about one kind of force element.

    - `kind`: the name used by the builder, the model files and the figures.
    - `label`: the legend text of figures.
    - `classes`: the group class per dimension (a kind exists in the dimensions listed).
    - `on`: what it connects: `"body"` (one body), `"bodies"` (body i and body j)
      or `"joint"` (a joint's two bodies, along a free coordinate of the joint).
    - `arguments`: the builder's value arguments in order, as `Argument` records
      (also the parameter keys `"<name>.<argument>"` and the model file's fields).
    - `law`: the argument that may instead be a force law (a text expression of
      `t`, or a function), if any.
    """

    kind: str
    label: str
    classes: Mapping[int, type[AbstractForce]]
    on: Literal["body", "bodies", "joint"]
    arguments: tuple[Argument, ...] = ()
    law: str | None = None

    def argument(self, name: str) -> Argument:
        return next(a for a in self.arguments if a.name == name)


_POINT = "where it acts (default: the centre of mass)"
_STIFFNESS = Argument("stiffness", "N/m", "non_negative")
_DAMPING = Argument("damping", "N s/m", "non_negative", description="default 0")
_ROT_STIFFNESS = Argument("stiffness", "N m/rad", "non_negative")
_ROT_DAMPING = Argument("damping", "N m s/rad", "non_negative", description="default 0")

FORCE_TYPES: Mapping[str, ForceType] = MappingProxyType({t.kind: t for t in (
    ForceType("force", "applied force", {2: PointForce, 3: PointForce}, "body",
              (Argument("force", "N", shape="law"), Argument("point", "m", shape="vector",
                                                            description=_POINT)), law="force"),
    ForceType("torque", "applied torque", {2: Torque, 3: Torque}, "body",
              (Argument("torque", "N m", shape="law"),), law="torque"),
    ForceType("spring_damper", "spring-damper", {2: SpringDamper, 3: SpringDamper}, "bodies",
              (Argument("point_i", "m", shape="vector", description="on body i"),
               Argument("point_j", "m", shape="vector", description="on body j"),
               _STIFFNESS, _DAMPING,
               Argument("rest_length", "m", "non_negative", description="default: the reference "
                                                                         "distance")), law="force"),
    ForceType("rotational_spring_damper", "rotational spring-damper",
              {2: RotationalSpringDamper, 3: RotationalSpringDamper}, "joint",
              (_ROT_STIFFNESS, _ROT_DAMPING, Argument("rest_angle", "rad", description="default 0"))),
    ForceType("slide_spring_damper", "slide spring-damper",
              {2: SlideSpringDamper, 3: SlideSpringDamper}, "joint",
              (_STIFFNESS, _DAMPING, Argument("rest_slide", "m", description="default 0"))),
    ForceType("bushing", "bushing", {2: Bushing, 3: Bushing}, "bodies",
              (Argument("point", "m", shape="vector"),
               Argument("stiffness", "N/m, then N m/rad", "non_negative", "components",
                        "one or one per component"),
               Argument("damping", "N s/m, then N m s/rad", "non_negative", "components",
                        "default 0"))),
    ForceType("actuator", "actuator", {2: Actuator, 3: Actuator}, "joint",
              (Argument("force", "N m", shape="law", unit_slide="N"),), law="force"),
    ForceType("joint_friction", "joint friction", {2: JointFriction, 3: JointFriction}, "joint",
              (Argument("coulomb", "friction coefficient", "non_negative"),
               Argument("viscous", "N m s/rad", "non_negative", description="default 0",
                        unit_slide="N s/m"),
               Argument("radius", "m", "non_negative", description="pin radius (rotations)"),
               Argument("velocity_scale", "rad/s", "positive", description="of the regularised sign",
                        unit_slide="m/s"))),
)})


def bounded_parameters(force_specs) -> list[tuple[str, Argument]]:
    """`("<element>.<argument>", its Argument)` for every bounded value of the force
    elements `force_specs` (what the host and the traced design check test)."""
    return [(f"{s.name}.{a.name}", a) for s in force_specs for a in FORCE_TYPES[s.kind].arguments
            if a.bound is not None and a.name in s.params]


def force_class(dim: int, spec: ForceSpec) -> type[AbstractForce]:
    return FORCE_TYPES[spec.kind].classes[dim]
