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
    if t.choose:  # the general joint: the rows it keeps
        fields["components"] = (list[Literal[t.choose]], Field(
            description=f"the reaction components it keeps, from {', '.join(t.choose)}"))
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
# Generated from `FORCE_TYPES`' argument records (units, bounds, shapes), as the joint
# entries are from `ELEMENT_TYPES`; only what a record does not say is written here.
Law = Number | Vector | str
_LAW = ("as a number, or an expression of t (s) in a string; Python functions cannot be "
        "written into a file")
_FRAME = Literal["global", "body"] | None
_COORDINATE = Literal["angle", "slide"] | None
# The connection fields of each `ForceType.on`, and the fields a record does not describe.
_ON = {"body": {"body": (str, ...)}, "bodies": {"bodies": (Pair, Field(description=_BODIES))}}
_EXTRA = {"force": {"frame": (_FRAME, None)}, "torque": {"frame": (_FRAME, None)},
          "actuator": {"coordinate": (_COORDINATE, None)},
          "joint_friction": {"coordinate": (_COORDINATE, None), "allow_nonunique": (bool | None, None)}}
# Optional arguments (a default in the builder); the others are required.
_OPTIONAL = {"point", "damping", "rest_length", "rest_angle", "rest_slide", "viscous", "radius",
             "velocity_scale"}
_JOINT = {"rotational_spring_damper": "a revolute or cylindrical joint",
          "slide_spring_damper": "a prismatic or cylindrical joint"}


def _force_field(kind: str, arg) -> tuple:
    """The field of one argument record: its type by shape, its bound, its unit."""
    bound = {"non_negative": {"ge": 0}, "positive": {"gt": 0}}.get(arg.bound)
    num = Annotated[float, Strict(), Field(**bound)] if bound else Number  # the bound per number
    annotation = {"scalar": num, "vector": list[num], "components": num | list[num],
                  "law": (num | str) if kind == "actuator" else Law}[arg.shape]
    unit = arg.unit if arg.unit_slide is None else f"{arg.unit} (rotation) or {arg.unit_slide} (slide)"
    text = ", ".join(x for x in (unit, arg.description, _LAW if arg.shape == "law" else "") if x)
    if arg.name in _OPTIONAL:
        return annotation | None, Field(None, description=text)
    return annotation, Field(description=text)


def _force_entry(ftype) -> type[_Entry]:
    fields = {"type": (Literal[ftype.kind], ...)}
    if ftype.on == "joint":
        fields["joint"] = (str, Field(description=_JOINT[ftype.kind]) if ftype.kind in _JOINT else ...)
    else:
        fields.update(_ON[ftype.on])
    fields.update({a.name: _force_field(ftype.kind, a) for a in ftype.arguments})
    fields.update(_EXTRA.get(ftype.kind, {}))
    name = "".join(w.capitalize() for w in ftype.kind.split("_")) + "Entry"
    return create_model(name, __base__=_Entry, **fields)


FORCE_ENTRIES = {kind: _force_entry(t) for kind, t in FORCE_TYPES.items()}
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
