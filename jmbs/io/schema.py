"""The schema of jmbs model files (pydantic): every field, its type and unit.

Units are SI throughout: lengths in m, masses in kg, moments of inertia in
kg m^2, angles in rad, times in s (so velocities in m/s and rad/s, gravity in
m/s^2). Geometry is given in global coordinates in the reference
configuration, exactly as to `jmbs.ModelBuilder`. `ModelFile.model_json_schema()`
gives the JSON Schema (for editors that validate YAML).
"""

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, Strict, create_model

from .._forces.registry import FORCE_TYPES
from .._joints.registry import ELEMENT_TYPES, ElementType

# Numbers must be numbers in the file: "1.0" in quotes is an error, not a float.
Number = Annotated[float, Strict()]
Vector = list[Number]
Matrix = list[list[Number]]
Param = Number | Vector | Matrix


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BodyEntry(_Entry):
    """A rigid body; its frame is at the centre of mass."""

    mass: Number = Field(gt=0, description="kg")
    inertia: Number | Vector | Matrix = Field(
        description="kg m^2: planar, about the centre of mass; spatial, principal moments "
                    "(3) or a 3x3 tensor in the body frame")
    position: Vector = Field(description="m, centre of mass in the reference configuration")
    angle: Number | None = Field(None, description="rad, planar orientation (default 0)")
    rotation: Matrix | None = Field(None, description="spatial orientation, 3x3 body -> global")
    quaternion: Vector | None = Field(None, description="spatial orientation (w, x, y, z)")
    velocity: Vector | None = Field(None, description="m/s, initial, global frame (default 0)")
    angular_velocity: Number | Vector | None = Field(
        None, description="rad/s, initial, global frame (default 0)")


Pair = tuple[str, str]
_BODIES = "the two bodies joined (names, or ground), body i first"


class Driver(_Entry):
    type: Literal["driver"]
    joint: str = Field(description="the driven joint (revolute, prismatic, cylindrical)")
    motion: str = Field(description="the joint coordinate from its reference value, rad or "
                                    "m, as an expression of t (s) and `params`, or an "
                                    "importable function 'module:name'")
    coordinate: Literal["angle", "slide"] | None = None
    params: dict[str, Param] = Field(default_factory=dict,
                                     description="design parameters of the motion")


class Constraint(_Entry):
    type: Literal["constraint"]
    bodies: list[str]
    holonomic: str | None = Field(None, description="importable 'module:name', "
                                                    "Phi(q_bodies, t[, params]) -> (m,)")
    pfaffian: str | None = Field(None, description="importable 'module:name', "
                                                   "Psi(q_bodies[, params]) -> (m, k nv)")
    components: list[str] | None = None
    params: dict[str, Param] = Field(default_factory=dict)


def _joint_entry(t: ElementType) -> type[_Entry]:
    """The entry of a joint kind, from its geometry in the element table."""
    fields: dict = {"type": (Literal[t.kind], ...)}
    if t.bodies == 1:
        fields["body"] = (str, ...)
    else:
        fields["bodies"] = (Pair, Field(description=_BODIES))
    for g in t.geometry:
        annotation = {"length": Number, "axes": Matrix}.get(g.value, Vector)
        # Required only where every dimension of the kind needs it.
        required = not g.optional and set(t.classes) <= set(g.dims)
        extra = {"gt": 0} if g.value == "length" else {}
        fields[g.name] = ((annotation, Field(description=g.description, **extra)) if required
                          else (annotation | None, Field(None, description=g.description, **extra)))
    name = "".join(part.capitalize() for part in t.kind.split("_"))
    return create_model(name, __base__=_Entry, __module__=__name__, **fields)


def _entries() -> dict[str, type[_Entry]]:
    """One entry per `type:`, in the order of the element table: the joints' made from
    their geometry, the other families' written above."""
    families = {"driver": Driver, "constraint": Constraint}
    out: dict[str, type[_Entry]] = {}
    for t in ELEMENT_TYPES.values():
        if t.file_type not in out:
            out[t.file_type] = _joint_entry(t) if t.family == "joint" else families[t.family]
    return out


ENTRIES = _entries()
Element = Annotated[Union[tuple(ENTRIES.values())], Field(discriminator="type")]  # noqa: UP007


# ----- force elements (`forces:`; the builder's add_<type> arguments) -----
Law = Number | Vector | str
_LAW = ("N (a vector), N m (a torque), as a number, or an expression of t (s) in a string; "
        "Python functions cannot be written into a file")


class ForceEntry(_Entry):
    type: Literal["force"]
    body: str
    force: Law = Field(description=_LAW)
    point: Vector | None = Field(None, description="m, where it acts (default: the centre of mass)")
    frame: Literal["global", "body"] | None = None


class TorqueEntry(_Entry):
    type: Literal["torque"]
    body: str
    torque: Law = Field(description=_LAW)
    frame: Literal["global", "body"] | None = None


class SpringDamperEntry(_Entry):
    type: Literal["spring_damper"]
    bodies: Pair = Field(description=_BODIES)
    point_i: Vector = Field(description="m, on body i")
    point_j: Vector = Field(description="m, on body j")
    stiffness: Number = Field(ge=0, description="N/m")
    damping: Number | None = Field(None, ge=0, description="N s/m (default 0)")
    rest_length: Number | None = Field(None, ge=0, description="m (default: the reference distance)")


class RotationalSpringDamperEntry(_Entry):
    type: Literal["rotational_spring_damper"]
    joint: str = Field(description="a revolute or cylindrical joint")
    stiffness: Number = Field(ge=0, description="N m/rad")
    damping: Number | None = Field(None, ge=0, description="N m s/rad (default 0)")
    rest_angle: Number | None = Field(None, description="rad (default 0)")


class SlideSpringDamperEntry(_Entry):
    type: Literal["slide_spring_damper"]
    joint: str = Field(description="a prismatic or cylindrical joint")
    stiffness: Number = Field(ge=0, description="N/m")
    damping: Number | None = Field(None, ge=0, description="N s/m (default 0)")
    rest_slide: Number | None = Field(None, description="m (default 0)")


class BushingEntry(_Entry):
    type: Literal["bushing"]
    bodies: Pair = Field(description=_BODIES)
    point: Vector = Field(description="m")
    stiffness: Number | Vector = Field(description="N/m, then N m/rad; one or one per component")
    damping: Number | Vector | None = Field(None, description="N s/m, then N m s/rad (default 0)")


class ActuatorEntry(_Entry):
    type: Literal["actuator"]
    joint: str
    force: Number | str = Field(description="N m (rotation) or N (slide), a number or an "
                                            "expression of t (s)")
    coordinate: Literal["angle", "slide"] | None = None


class JointFrictionEntry(_Entry):
    type: Literal["joint_friction"]
    joint: str
    coulomb: Number = Field(ge=0, description="friction coefficient")
    viscous: Number | None = Field(None, ge=0, description="N m s/rad or N s/m (default 0)")
    radius: Number | None = Field(None, ge=0, description="m, pin radius (rotations)")
    velocity_scale: Number | None = Field(None, gt=0, description="rad/s or m/s, of the "
                                                                  "regularised sign")
    coordinate: Literal["angle", "slide"] | None = None
    allow_nonunique: bool | None = None


FORCE_ENTRIES = {e.model_fields["type"].annotation.__args__[0]: e for e in (
    ForceEntry, TorqueEntry, SpringDamperEntry, RotationalSpringDamperEntry, SlideSpringDamperEntry,
    BushingEntry, ActuatorEntry, JointFrictionEntry)}
assert set(FORCE_ENTRIES) == set(FORCE_TYPES), "every force kind needs its entry here"
Force = Annotated[Union[tuple(FORCE_ENTRIES.values())], Field(discriminator="type")]  # noqa: UP007


class Initial(_Entry):
    """Initial state when it is not the bodies' reference poses (e.g. assembled)."""

    q: Vector | None = Field(None, description="coordinates (nq): planar x, y, phi per body; "
                                               "spatial x, y, z, quaternion w, x, y, z")
    v: Vector | None = Field(None, description="velocities (nv): planar vx, vy, omega; "
                                               "spatial v (global), omega (body frame)")


class ModelFile(_Entry):
    """A jmbs model file (YAML)."""

    jmbs: Literal[1] = Field(1, description="format version")
    description: str | None = None
    dim: Literal[2, 3] = Field(description="2 planar, 3 spatial")
    gravity: Vector | None = Field(None, description="m/s^2 (default 0)")
    bodies: dict[str, BodyEntry]
    elements: dict[str, Element] = Field(default_factory=dict,
                                         description="rows of C follow this order")
    forces: dict[str, Force] = Field(default_factory=dict,
                                     description="force elements: springs, dampers, bushings, "
                                                 "loads, actuators, friction")
    initial: Initial | None = None
