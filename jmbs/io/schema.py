"""The schema of jmbs model files (pydantic): every field, its type and unit.

Units are SI throughout: lengths in m, masses in kg, moments of inertia in
kg m^2, angles in rad, times in s (so velocities in m/s and rad/s, gravity in
m/s^2). Geometry is given in global coordinates in the reference
configuration, exactly as to `jmbs.ModelBuilder`. `ModelFile.model_json_schema()`
gives the JSON Schema (for editors that validate YAML).
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict

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


class Revolute(_Entry):
    type: Literal["revolute"]
    bodies: Pair = Field(description=_BODIES)
    point: Vector = Field(description="m")
    axis: Vector | None = Field(None, description="spatial only: the joint axis")


class Prismatic(_Entry):
    type: Literal["prismatic"]
    bodies: Pair = Field(description=_BODIES)
    point: Vector = Field(description="m")
    axis: Vector = Field(description="sliding direction, fixed in body i")


class Weld(_Entry):
    type: Literal["weld"]
    bodies: Pair = Field(description=_BODIES)
    point: Vector | None = Field(None, description="m, where the reaction is reported "
                                                   "(default body j's centre of mass)")


class KnifeEdge(_Entry):
    type: Literal["knife_edge"]
    body: str
    point: Vector = Field(description="m, the contact point")
    direction: Vector = Field(description="the rolling direction (no velocity across it)")


class Spherical(_Entry):
    type: Literal["spherical"]
    bodies: Pair = Field(description=_BODIES)
    point: Vector = Field(description="m")


class Cylindrical(_Entry):
    type: Literal["cylindrical"]
    bodies: Pair = Field(description=_BODIES)
    point: Vector = Field(description="m")
    axis: Vector


class Universal(_Entry):
    type: Literal["universal"]
    bodies: Pair = Field(description=_BODIES)
    point: Vector = Field(description="m")
    axes: Matrix = Field(description="two perpendicular axes: the first fixed in body i, "
                                     "the second in body j")


class Distance(_Entry):
    type: Literal["distance"]
    bodies: Pair = Field(description=_BODIES)
    point_i: Vector = Field(description="m, on body i")
    point_j: Vector = Field(description="m, on body j")
    length: Number | None = Field(None, gt=0, description="m (default: the reference distance)")


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


Element = Annotated[Revolute | Prismatic | Weld | KnifeEdge | Spherical | Cylindrical | Universal
                    | Distance | Driver | Constraint, Field(discriminator="type")]


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
    initial: Initial | None = None
