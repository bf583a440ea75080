"""The table of element types: one `ElementType` per kind.

The builder, the model files (`jmbs.io`), the plots and the tests read
everything they need to know about a kind from here: its group class per
dimension, its reaction components, whether it is holonomic, which
coordinates a driver can prescribe on it, its geometry arguments, and how it
is labelled and marked in figures. Adding a joint type is one new group class
(a file in this folder) plus one entry in `ELEMENT_TYPES`.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import jax.numpy as jnp

from .base import AbstractElement, DeriveContext, DriverSpec, ElementSpec
from .custom import CustomHolonomic, CustomPfaffian
from .distance import Distance
from .drivers import (
    AbstractDriver,
    PlanarAngleDriver,
    PlanarSlideDriver,
    SpatialAngleDriver,
    SpatialSlideDriver,
)
from .general import FRAME_COMPONENTS, SpatialGeneral
from .pin_in_slot import PinInSlot
from .planar import KnifeEdge, PlanarPrismatic, PlanarRevolute, PlanarWeld
from .primitives import Inline, Inplane, Orientation, ParallelAxes, Perpendicular, SpatialPlanar
from .spatial import (
    SpatialCylindrical,
    SpatialPrismatic,
    SpatialRevolute,
    SpatialSpherical,
    SpatialUniversal,
    SpatialWeld,
)
from .wheel import Wheel

# "joint": geometry given in global coordinates, checked and stored by `ModelBuilder.add_joint`;
# "driver": `add_driver`; "constraint": `add_constraint`. Force elements (springs, dampers)
# will be a family of their own that adds to the generalized forces instead of to the rows.
Family = Literal["joint", "driver", "constraint"]


@dataclass(frozen=True)
class Geometry:
    """One geometry argument of a joint: the builder's keyword and the model file's field.

    - `name`: the keyword (`point`, `axis`, ...), also the parameter key `"<element>.<name>"`.
    - `value`: what it is, which fixes how the builder checks it and how figures
      draw it: `"point"` (a position), `"axis"` (a direction fixed in a body: a
      joint axis), `"direction"` (a rolling direction: drawn as a wheel),
      `"axes"` (two perpendicular directions, `(2, 3)`), `"length"` (a positive
      number).
    - `on`: the body it belongs to: `"both"` (a joint point, on bodies i and j),
      `"i"` or `"j"`.
    - `dims`: the dimensions in which the joint uses it.
    - `optional`: whether it may be left out where it is used (`default` then
      says what the builder takes, e.g. `"centre_j"`: body j's centre of mass).
    - `description`, `unit`: for the model-file schema and the saved files.
    """

    name: str
    value: Literal["point", "axis", "direction", "axes", "length"]
    on: Literal["both", "i", "j"] = "both"
    dims: tuple[int, ...] = (2, 3)
    optional: bool = False
    default: Literal["centre_j"] | None = None
    description: str | None = None
    unit: str | None = None


@dataclass(frozen=True)
class ElementType:
    """Everything jmbs knows about one kind of element.

    - `kind`: the name used by `ElementInfo.kind`, the builder and the figures.
    - `family`: `"joint"`, `"driver"` or `"constraint"` (see `Family`).
    - `classes`: the group class per dimension (a kind exists in the dimensions
      listed); its `components` are the reaction components and its `holonomic`
      says whether the rows are holonomic. Empty for the driver, whose class
      comes from the joint it drives (`drivable`).
    - `geometry`: the joint's geometry arguments, in the builder's order.
    - `bodies`: 2, or 1 for an element on one body against the ground (the
      ground is its body i; model files write `body:`).
    - `drivable`: per dimension, the coordinates a driver can prescribe on this
      joint (the first is the default) and the driver group class of each.
    - `file_type`: its `type:` in model files (default `kind`).
    - `choose`: for a kind whose rows are chosen per element (the general joint), the
      components one chooses from (`add_joint(..., components=...)`); empty where the
      class fixes them.
    - `label`, `marker`: the legend text and the Matplotlib marker of figures.
    """

    kind: str
    family: Family
    label: str
    marker: str
    classes: Mapping[int, type[AbstractElement]] = field(default_factory=dict)
    geometry: tuple[Geometry, ...] = ()
    bodies: int = 2
    drivable: Mapping[int, Mapping[str, type[AbstractDriver]]] = field(default_factory=dict)
    file_type: str = ""
    choose: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.file_type:
            object.__setattr__(self, "file_type", self.kind)

    def components(self, dim: int) -> tuple[str, ...]:
        """The reaction components of a joint of this kind in `dim` dimensions (those
        one chooses from, for the general joint)."""
        return self.choose or self.classes[dim].components


_POINT = Geometry("point", "point", description="m", unit="m")
# Where a primitive that acts on orientations only reports its reaction (the moments do
# not depend on it).
_REPORT_POINT = Geometry("point", "point", optional=True, default="centre_j", unit="m",
                         description="m, where the reaction is reported (default body j's centre "
                                     "of mass)")
_NORMAL = Geometry("normal", "axis", "i", description="the plane's normal, fixed in body i")

ELEMENT_TYPES: Mapping[str, ElementType] = MappingProxyType({t.kind: t for t in (
    ElementType(
        "revolute", "joint", "revolute", "o", {2: PlanarRevolute, 3: SpatialRevolute},
        (_POINT, Geometry("axis", "axis", "i", dims=(3,), description="spatial only: the joint axis")),
        drivable={2: {"angle": PlanarAngleDriver}, 3: {"angle": SpatialAngleDriver}}),
    ElementType(
        "prismatic", "joint", "prismatic", "s", {2: PlanarPrismatic, 3: SpatialPrismatic},
        (_POINT, Geometry("axis", "axis", "i", description="sliding direction, fixed in body i")),
        drivable={2: {"slide": PlanarSlideDriver}, 3: {"slide": SpatialSlideDriver}}),
    ElementType(
        "weld", "joint", "weld", "X", {2: PlanarWeld, 3: SpatialWeld},
        (Geometry("point", "point", optional=True, default="centre_j", unit="m",
                  description="m, where the reaction is reported (default body j's centre of mass)"),)),
    ElementType(
        "knife_edge", "joint", "knife edge", "p", {2: KnifeEdge},
        (Geometry("point", "point", "j", description="m, the contact point", unit="m"),
         Geometry("direction", "direction", "j",
                  description="the rolling direction (no velocity across it)")),
        bodies=1),
    ElementType(
        "wheel", "joint", "wheel", "8", {3: Wheel},
        (Geometry("radius", "length", description="m, the wheel's radius", unit="m"),
         Geometry("axis", "axis", "j", description="the axle through the wheel's centre of mass"),
         Geometry("plane_point", "point", "i", description="m, a point of the ground plane", unit="m"),
         Geometry("plane_normal", "axis", "i", description="the ground plane's normal")),
        bodies=1),
    ElementType("spherical", "joint", "spherical", "o", {3: SpatialSpherical}, (_POINT,)),
    ElementType(
        "cylindrical", "joint", "cylindrical", "s", {3: SpatialCylindrical},
        (_POINT, Geometry("axis", "axis", "i")),
        drivable={3: {"slide": SpatialSlideDriver, "angle": SpatialAngleDriver}}),
    ElementType(
        "universal", "joint", "universal", "o", {3: SpatialUniversal},
        (_POINT, Geometry("axes", "axes", description="two perpendicular axes: the first fixed in "
                                                      "body i, the second in body j"))),
    ElementType(
        "distance", "joint", "distance", "o", {2: Distance, 3: Distance},
        (Geometry("point_i", "point", "i", description="m, on body i", unit="m"),
         Geometry("point_j", "point", "j", description="m, on body j", unit="m"),
         Geometry("length", "length", optional=True, unit="m",
                  description="m (default: the reference distance)"))),
    # Joint primitives (`primitives.py`, `pin_in_slot.py`): what a joint becomes when some of
    # its reaction components are released (`jmbs.advise`).
    ElementType("inline", "joint", "inline", "|", {3: Inline},
                (_POINT, Geometry("axis", "axis", "i", description="the line, fixed in body i"))),
    ElementType("inplane", "joint", "in-plane", "_", {3: Inplane}, (_POINT, _NORMAL)),
    ElementType("orientation", "joint", "orientation", "8", {3: Orientation}, (_REPORT_POINT,)),
    ElementType("parallel_axes", "joint", "parallel axes", "H", {3: ParallelAxes},
                (Geometry("axis", "axis", "i", description="the common axis, fixed in both bodies"),
                 _REPORT_POINT)),
    ElementType("perpendicular", "joint", "perpendicular", "+", {3: Perpendicular},
                (Geometry("axes", "axes", description="two perpendicular axes: the first fixed in "
                                                      "body i, the second in body j"),
                 _REPORT_POINT)),
    ElementType("planar", "joint", "planar", "d", {3: SpatialPlanar}, (_POINT, _NORMAL)),
    ElementType("pin_in_slot", "joint", "pin in slot", "^", {2: PinInSlot},
                (_POINT, Geometry("axis", "axis", "i", description="the slot, fixed in body i"))),
    # Any subset of a frame joint's rows (`general.py`): what `jmbs.advise` proposes where
    # no joint above keeps exactly the rows a release leaves.
    ElementType("general", "joint", "general", "*", {3: SpatialGeneral},
                (_POINT, Geometry("axes", "axes", optional=True,
                                  description="the joint frame's x and y axes, fixed in body i "
                                              "(default: the global axes)")),
                choose=FRAME_COMPONENTS),
    ElementType("driver", "driver", "driver", "D"),
    ElementType("holonomic", "constraint", "user constraint", "*",
                {2: CustomHolonomic, 3: CustomHolonomic}, file_type="constraint"),
    ElementType("pfaffian", "constraint", "user constraint", "*",
                {2: CustomPfaffian, 3: CustomPfaffian}, file_type="constraint"),
)})


def group_class(dim: int, spec: ElementSpec, specs: Mapping[str, ElementSpec]) -> type[AbstractElement]:
    """The group class of the element `spec` in a `dim`-dimensional model whose
    elements are `specs` (by name): a driver's is given by the joint it drives."""
    if isinstance(spec, DriverSpec):
        return ELEMENT_TYPES[specs[spec.joint].kind].drivable[dim][spec.coordinate]
    return ELEMENT_TYPES[spec.kind].classes[dim]


def _no_motion(t):
    return jnp.zeros_like(t)


def measuring_group(dim: int, items: list[tuple[str, ElementSpec, str]], ctx: DeriveContext):
    """A driver group with a zero motion that measures, for each `(name, joint spec,
    coordinate)`, the joint's coordinate from the reference configuration: its
    `phi(qs, 0)` is the coordinate. All items must be of one driver class."""
    classes = {ELEMENT_TYPES[joint.kind].drivable[dim][c] for _, joint, c in items}
    (cls,) = classes
    specs = [DriverSpec("driver", name, joint.bodies, (), cls.components, joint.name, c,
                        _no_motion, ()) for name, joint, c in items]
    return cls.derive(specs, ctx)
