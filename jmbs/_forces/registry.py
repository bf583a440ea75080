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
class ForceType:
    """Everything jmbs knows about one kind of force element.

    - `kind`: the name used by the builder, the model files and the figures.
    - `label`: the legend text of figures.
    - `classes`: the group class per dimension (a kind exists in the dimensions listed).
    - `on`: what it connects: `"body"` (one body), `"bodies"` (body i and body j)
      or `"joint"` (a joint's two bodies, along a free coordinate of the joint).
    - `arguments`: the builder's value arguments in order (also the parameter keys
      `"<name>.<argument>"` and the model file's fields).
    - `law`: the argument that may instead be a force law (a text expression of
      `t`, or a function), if any.
    """

    kind: str
    label: str
    classes: Mapping[int, type[AbstractForce]]
    on: Literal["body", "bodies", "joint"]
    arguments: tuple[str, ...] = ()
    law: str | None = None


FORCE_TYPES: Mapping[str, ForceType] = MappingProxyType({t.kind: t for t in (
    ForceType("force", "applied force", {2: PointForce, 3: PointForce}, "body",
              ("force", "point"), law="force"),
    ForceType("torque", "applied torque", {2: Torque, 3: Torque}, "body", ("torque",), law="torque"),
    ForceType("spring_damper", "spring-damper", {2: SpringDamper, 3: SpringDamper}, "bodies",
              ("point_i", "point_j", "stiffness", "damping", "rest_length"), law="force"),
    ForceType("rotational_spring_damper", "rotational spring-damper",
              {2: RotationalSpringDamper, 3: RotationalSpringDamper}, "joint",
              ("stiffness", "damping", "rest_angle")),
    ForceType("slide_spring_damper", "slide spring-damper",
              {2: SlideSpringDamper, 3: SlideSpringDamper}, "joint",
              ("stiffness", "damping", "rest_slide")),
    ForceType("bushing", "bushing", {2: Bushing, 3: Bushing}, "bodies",
              ("point", "stiffness", "damping")),
    ForceType("actuator", "actuator", {2: Actuator, 3: Actuator}, "joint", ("force",), law="force"),
    ForceType("joint_friction", "joint friction", {2: JointFriction, 3: JointFriction}, "joint",
              ("coulomb", "viscous", "radius", "velocity_scale")),
)})


def force_class(dim: int, spec: ForceSpec) -> type[AbstractForce]:
    return FORCE_TYPES[spec.kind].classes[dim]
