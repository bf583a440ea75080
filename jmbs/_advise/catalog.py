"""Host-side catalogue of partial releases: which element of the element table an
element becomes when some of its reaction components are released.

A spatial frame joint keeps rows of a frame fixed in body i (`Fx, Fy, Fz` of the
separation, `Mx, My, Mz` of the orientation lock; docs/conventions.md); what it
keeps after a release, a set of position axes and of rotation axes of that frame,
names one element (`FRAME_KINDS`): a revolute without its two moments is a
spherical joint, without one a universal joint, without its axial force a
cylindrical joint, and so on. A planar revolute without the force along a line is
a pin in a slot along that line; a driver becomes a force actuator; an element
released whole is removed (a knife edge becomes a caster).
"""

import itertools
from dataclasses import dataclass, field

import numpy as np

from .._joints.base import DriverSpec, JointSpec
from .._joints.registry import ELEMENT_TYPES
from .._joints.spatial import AbstractFrameJoint
from .._model import Model

ROTATIONAL = ("Mx", "My", "Mz", "M")
# A general joint is the last resort (harder to build than a joint of the table): the
# search tries joints of the table first (`jmbs.advise`), and a release with a general
# joint costs this much more, more than touching one more joint and releasing a force
# there, so that it ranks after the releases made of table joints.
GENERAL_PREFERENCE = 15.0


@dataclass(frozen=True)
class Substitution:
    """What one element becomes: `kind` (a kind of `jmbs.ELEMENT_TYPES`, `"actuator"`
    for a driver made a force actuator, `"removed"`), its `geometry` (global, in the
    reference configuration, as the builder takes it), and `swap` (the element's
    bodies in the opposite order: a slot cut in body j); `components`, the rows a
    general joint keeps (empty for every other kind: its kind fixes them)."""

    element: str
    old_kind: str
    kind: str
    geometry: dict = field(default_factory=dict, compare=False, hash=False)
    swap: bool = False
    note: str = ""
    components: tuple[str, ...] = ()

    def sentence(self, released: tuple[str, ...]) -> str:
        """What to do, as a designer reads it."""
        what = ", ".join(f"{self.element}.{c}" for c in released)
        if self.kind == "removed" and self.old_kind == "knife_edge":
            return (f"replace {self.element} (knife edge) by a caster (no lateral constraint): "
                    f"releases {what}")
        if self.kind == "removed":
            return f"remove {self.element} ({self.old_kind}): releases {what}"
        if self.kind == "actuator":
            return (f"make driver {self.element} a force actuator on its joint (its force is the "
                    f"parameter '{self.element}.force'): releases {what}")
        new = _article(self.kind) + self.note
        return f"replace {self.element} ({self.old_kind}) by {new}: releases {what}"


def _article(kind: str) -> str:
    label = ELEMENT_TYPES[kind].label
    return f"{'an' if label[0] in 'aeio' else 'a'} {label} joint"


@dataclass(frozen=True)
class Option:
    """One way to release components `released` of one element."""

    released: tuple[str, ...]
    substitution: Substitution
    preference: float = 0.0  # tie-breaker between variants of the same release


def _axis_name(v: np.ndarray) -> str:
    """`x`, `-z`, ... for a global axis, else the rounded vector."""
    for k, name in enumerate("xyz"):
        for sign, prefix in ((1, ""), (-1, "-")):
            if np.allclose(v, sign * np.eye(3)[k], atol=1e-9):
                return prefix + name
    return "(" + ", ".join(f"{x:.3g}" for x in v) + ")"


def frame_of(kind: str, params: dict) -> np.ndarray | None:
    """The global reference frame (columns) whose axes name a spatial joint's components."""
    from .._rotations import frame_from_axis, frame_from_two_axes

    if kind in ("revolute", "prismatic", "cylindrical", "inline", "parallel_axes"):
        return np.asarray(frame_from_axis(params["axis"]))
    if kind in ("inplane", "planar"):
        return np.asarray(frame_from_axis(params["normal"]))
    if kind in ("spherical", "weld", "orientation"):
        return np.eye(3)
    if kind in ("universal", "perpendicular") or (kind == "general" and "axes" in params):
        a = np.asarray(params["axes"])
        return np.asarray(frame_from_two_axes(a[0], a[1]))
    if kind == "general":
        return np.eye(3)
    return None


def frame_kind(pos: frozenset, rot: frozenset, E: np.ndarray, point) -> list[tuple[str, dict, str, float]]:
    """`(kind, geometry, note, preference)` for each element that keeps the position axes
    `pos` and the rotation axes `rot` (indices into the columns of `E`)."""
    every, n = frozenset(range(3)), len(pos)
    normal = [c for c in range(3) if every - {c} == pos] if n == 2 else sorted(pos)
    tilt = [c for c in range(3) if every - {c} == rot]  # the one free rotation, if so
    pt = {"point": np.asarray(point)}

    def along(key: str, c: int, word: str, kind: str) -> list:
        return [(kind, {**pt, key: E[:, c]}, f" {word} {_axis_name(E[:, c])}", 0.0)]

    if n == 3 and not rot:
        return [("spherical", pt, "", 0.0)]
    if n == 3 and rot == every:
        return [("weld", pt, "", 0.0)]
    if n == 3 and tilt:
        return along("axis", tilt[0], "about", "revolute")
    if len(rot) == 1 and n in (0, 3):
        (w,) = rot
        u, v = E[:, (w + 1) % 3], E[:, (w + 2) % 3]  # u x v = the locked axis
        kind = "universal" if n == 3 else "perpendicular"
        return [(kind, {**pt, "axes": np.stack([a, b])},
                 f" with axes {_axis_name(a)} (in the first body) and {_axis_name(b)}", 0.1 * k)
                for k, (a, b) in enumerate(((u, v), (v, u)))]
    if n == 2:
        kind = {frozenset(): "inline", every - set(normal): "cylindrical", every: "prismatic"}.get(rot)
        return along("axis", normal[0], "along", kind) if kind else []
    if n == 1 and not rot:
        return along("normal", normal[0], "with normal", "inplane")
    if n == 1 and rot == every - pos:
        return along("normal", normal[0], "with normal", "planar")
    if n == 0 and rot == every:
        return [("orientation", pt, "", 0.0)]
    if n == 0 and tilt:
        return along("axis", tilt[0], "along", "parallel_axes")
    return []


def _spatial_options(spec: JointSpec, params: dict, point) -> list[Option]:
    E = frame_of(spec.kind, params)
    if E is None:
        return []
    comps = spec.components
    axes = {"Fx": ("F", 0), "Fy": ("F", 1), "Fz": ("F", 2), "Mx": ("M", 0), "My": ("M", 1), "Mz": ("M", 2)}
    out = []
    for k in range(1, len(comps)):
        for released in itertools.combinations(comps, k):
            kept = [axes[c] for c in comps if c not in released]
            pos = frozenset(i for f, i in kept if f == "F")
            rot = frozenset(i for f, i in kept if f == "M")
            fits = frame_kind(pos, rot, E, point)
            for kind, geometry, note, pref in fits:
                sub = Substitution(spec.name, spec.kind, kind, geometry, note=note)
                out.append(Option(released, sub, pref))
            if not fits and issubclass(ELEMENT_TYPES[spec.kind].classes[3], AbstractFrameJoint):
                out.append(_general(spec, comps, released, E, point))
    return out


def _general(spec: JointSpec, comps, released, E: np.ndarray, point) -> Option:
    """Where no joint of the table keeps exactly these rows of a frame joint: a general
    joint keeping them, in the joint's own frame (the same rows, by definition)."""
    kept = tuple(c for c in comps if c not in released)
    note = (f" keeping {', '.join(kept)} in the frame x = {_axis_name(E[:, 0])}, "
            f"y = {_axis_name(E[:, 1])}")
    sub = Substitution(spec.name, spec.kind, "general", {"point": np.asarray(point),
                       "axes": np.stack([E[:, 0], E[:, 1]])}, note=note, components=kept)
    return Option(released, sub, GENERAL_PREFERENCE)


def _planar_options(model: Model, spec: JointSpec, params: dict, points: dict) -> list[Option]:
    """A planar revolute without the force along a line: a pin in a slot along it, the slot
    cut in body i (or in body j); a weld without its moment: a revolute; a prismatic joint
    without its moment: a pin in a slot along its axis."""
    out = []
    if spec.kind == "revolute":
        P = np.asarray(params["point"])
        for side, body in enumerate(spec.bodies):
            for d, what in _slot_directions(model, spec, body, P, points):
                # The kept row is the force normal to the slot; released: the force along it.
                released = (f"F{what}",) if what in ("x", "y") else (f"F_along{what}",)
                out.append(Option(released, Substitution(
                    spec.name, "revolute", "pin_in_slot", {"point": P, "axis": d}, swap=side == 1,
                    note=_slot_note(what, model, body)), 0.05 * side))
    elif spec.kind == "weld":
        out.append(Option(("M",), Substitution(spec.name, "weld", "revolute", {"point": params["point"]})))
    elif spec.kind == "prismatic":
        out.append(Option(("M",), Substitution(spec.name, "prismatic", "pin_in_slot",
                                               {"point": params["point"], "axis": params["axis"]},
                                               note=" along the same axis")))
    return out


def _slot_directions(model: Model, spec, body: int, P: np.ndarray, points: dict):
    """Candidate slot directions (unit, global, reference): the global axes and the lines
    from `P` to the other joint points of `body`."""
    seen = []
    cands = [(np.array([1.0, 0.0]), "x"), (np.array([0.0, 1.0]), "y")]
    if body < model.n_bodies:
        for other, (pt, bodies) in points.items():
            if other != spec.name and body in bodies and np.linalg.norm(pt - P) > 1e-9:
                d = (pt - P) / np.linalg.norm(pt - P)
                cands.append((d, f"_{other}"))
    for d, what in cands:
        if all(abs(d[0] * e[1] - d[1] * e[0]) > 1e-9 for e in seen):
            seen.append(d)
            yield d, what


def _slot_note(what: str, model: Model, body: int) -> str:
    where = "ground" if body >= model.n_bodies else model.body_names[body]
    line = f"along the line to {what[1:]}" if what.startswith("_") else f"along {what}"
    return f" (slot in {where}, {line})"


def options(model: Model, name: str, points: dict, driven: set[str], forced: set[str]) -> list[Option]:
    """Every catalogued release of element `name`. `points`: joint points by element
    (reference, global) with their bodies; `driven`/`forced`: joints a driver or a force
    element acts on (they keep their kind, so that the driver or force still applies)."""
    spec = model.element_specs[model.element_names.index(name)]
    params = {k.partition(".")[2]: np.asarray(v) for k, v in model.params().items()
              if k.partition(".")[0] == name}
    if isinstance(spec, DriverSpec):
        return [Option(spec.components, Substitution(name, "driver", "actuator"))]
    if not isinstance(spec, JointSpec) or name in forced:
        return []
    out = []
    if name not in driven:
        if model.dim == 3:
            point = params.get("point", points.get(name, (np.zeros(3),))[0])
            out += _spatial_options(spec, params, point)
        else:
            out += _planar_options(model, spec, params, points)
        out.append(Option(spec.components, Substitution(name, spec.kind, "removed"), 0.0))
    elif spec.kind == "revolute" and model.dim == 3:
        # The driven angle stays: a cylindrical joint keeps it.
        out.append(Option(("Fz",), Substitution(name, "revolute", "cylindrical",
                                                {"point": params["point"], "axis": params["axis"]},
                                                note=" along the same axis")))
    return out
