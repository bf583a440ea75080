"""Shared pieces of the plots: colours, marker styles and the drawable geometry of a model.

The geometry is computed on the host with NumPy from the model's parameters:
every element point is given in global coordinates at the reference
configuration (`model.params()`), so its body-frame coordinates are
`R0^T (p - r0)` of the body it sits on, and at any `q` it is `r + R s`.
"""

import dataclasses

import numpy as np

from .._bodies import reference_q
from .._joints.registry import ELEMENT_TYPES
from .._model import Model

# Dark2 (colour-blind safe): green for a unique reaction, orange for a non-unique one.
UNIQUE = "#1b9e77"
NONUNIQUE = "#d95f02"
BODY = "0.6"
INK = "0.15"

STATES = ("unique", "partial", "nonunique")
STATE_LABELS = {"unique": "unique reaction", "partial": "partly unique (some components)",
                "nonunique": "not unique"}


def check_arguments(where: str, model, solution=None) -> None:
    """A clear error for arguments in the wrong order or of the wrong kind (a plotting
    function would otherwise fail deep inside with an attribute error)."""
    if not isinstance(model, Model):
        hint = (" (the arguments may be swapped: the model comes first)"
                if hasattr(model, "ts") and isinstance(solution, Model) else "")
        raise ValueError(f"{where}: the first argument must be the jmbs.Model; got "
                         f"{type(model).__name__}{hint}")
    if solution is not None and not (hasattr(solution, "ts") and hasattr(solution, "q")):
        raise ValueError(f"{where}: the solution must be a jmbs.Solution or KinematicsSolution "
                         f"(with ts and q); got {type(solution).__name__}")


def units(components) -> str:
    """SI units of reaction components: `F*` in N, `M*` in N m (model files are in SI)."""
    found = dict.fromkeys("N" if c.startswith("F") else "N m" for c in components)
    return ", ".join(found)


def state(unique: bool, components) -> str:
    """`"unique"`, `"partial"` (the reaction is not unique but some of its components
    are) or `"nonunique"`."""
    if unique:
        return "unique"
    return "partial" if np.any(components) else "nonunique"


def marker_style(kind: str, state_: str) -> dict:
    """Keyword arguments of `Axes.plot` for one element marker: the shape says the
    kind, the fill the uniqueness (a partly unique reaction is half green, half orange)."""
    face = {"unique": UNIQUE, "partial": UNIQUE, "nonunique": NONUNIQUE}[state_]
    etype = ELEMENT_TYPES[kind]
    style = {"marker": etype.marker, "markersize": 7.0 if etype.family == "driver" else 9.0,
             "markerfacecolor": face, "markeredgecolor": INK, "markeredgewidth": 1.0,
             "linestyle": "none"}
    if state_ == "partial":
        style |= {"fillstyle": "left", "markerfacecoloralt": NONUNIQUE}
    return style


@dataclasses.dataclass(frozen=True)
class _Element:
    """Where one element sits, in body-frame coordinates (body index `n_bodies` is the ground)."""

    name: str
    kind: str
    anchors: tuple  # ((body, local), ...): the element is drawn at the mean of these points
    attached: tuple  # ((body, local), ...): points that belong to the bodies' outlines
    ground: tuple | None  # (global point, unit vector towards the ground) of a ground connection
    direction: tuple | None  # (body, local unit vector): joint axis or knife-edge direction
    rod: bool  # a distance element: drawn as a line between its two anchors


@dataclasses.dataclass(frozen=True)
class Scene:
    """The drawable geometry at one configuration (global coordinates, NumPy).

    - `centres`: body centres of mass, `(n_bodies, dim)`;
    - `outlines`: per body, the convex outline of its element points (and centre of
      mass), `(k, dim)`: a polygon (`k >= 3`), a segment (2) or a point (1);
    - `points`: per element, the point it acts at (a driver: its joint's point;
      a distance: the middle of the rod; a user constraint: the mean of its
      bodies' centres of mass);
    - `markers`: where each element's marker goes: its point, moved a little
      aside when several elements share one point (a driver and its joint);
    - `label_directions`: per element, the unit vector from its marker to its label;
    - `grounds`: per element connected to the ground, `(point, towards)`: the
      ground point and the unit vector pointing into the ground (down, or up
      when the body hangs below the point in the reference configuration);
    - `directions`: per joint axis or knife edge, its global unit vector;
    - `rods`: per distance element, its two end points `(2, dim)`;
    - `springs`: per spring-damper, its two end points `(2, dim)`;
    - `loads`: per other force element, `(point, direction)`: where it acts and,
      for a constant applied force, the unit vector of the force (else `None`).
    """

    centres: np.ndarray
    outlines: dict[str, np.ndarray]
    points: dict[str, np.ndarray]
    markers: dict[str, np.ndarray]
    label_directions: dict[str, np.ndarray]
    grounds: dict[str, tuple[np.ndarray, np.ndarray]]
    directions: dict[str, np.ndarray]
    rods: dict[str, np.ndarray]
    scale: float
    springs: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    loads: dict[str, tuple[np.ndarray, np.ndarray | None]] = dataclasses.field(default_factory=dict)

    def extent(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners of everything drawn, labels included (roughly)."""
        labels = [m + 0.12 * self.scale * self.label_directions[n] for n, m in self.markers.items()]
        grounds = [p + 0.08 * self.scale * towards for p, towards in self.grounds.values()]
        arrows = [p - 0.15 * self.scale * u for p, u in self.loads.values() if u is not None]
        pts = np.concatenate([self.centres, *self.outlines.values(), *self.springs.values(), np.reshape(
            [*self.markers.values(), *labels, *grounds, *(p for p, _ in self.loads.values()), *arrows],
            (-1, self.centres.shape[1]))])
        return pts.min(axis=0), pts.max(axis=0)


class Layout:
    """The geometry of a model, ready to be placed at any configuration.

    **Arguments:**
    - `model`: the model.

    Attributes: `dim`, `kinds` (element name -> kind), `wheels` (the names of
    the elements whose direction is a rolling direction), `body_names`, `scale`
    (the size of the mechanism at its reference configuration, for symbol
    sizes), `down`, `side`, `up` (unit vectors: gravity, or `-y` / `-z`
    without gravity, and two directions across it used to place symbols).
    """

    def __init__(self, model: Model):
        self.dim, self.body_names = model.dim, model.body_names
        self.kinds = {s.name: s.kind for s in model.element_specs}
        self.wheels: set[str] = set()
        params = {k: np.asarray(v, dtype=float) for k, v in model.params().items()}
        self._nb = nb = model.n_bodies
        self._r0, self._R0 = r0, R0 = _reference_poses(model, params)
        g = np.asarray(model.gravity, dtype=float)
        self.down = g / np.linalg.norm(g) if np.linalg.norm(g) > 0 else -np.eye(self.dim)[self.dim - 1]
        if self.dim == 2:
            self.side = np.array([-self.down[1], self.down[0]])
        else:
            e = np.eye(3)[np.argmin(np.abs(self.down))]
            e = e - (e @ self.down) * self.down
            self.side = e / np.linalg.norm(e)
        self.up = -self.down
        elements: dict[str, _Element] = {}
        for spec in model.element_specs:
            elements[spec.name] = self._element(spec, params, elements)
        self._elements = elements
        # Force elements: where they attach, and a constant force's direction (body frame
        # where it turns with the body).
        self.force_kinds = {f.name: f.kind for f in model.force_specs}
        self._forces = [self._force(f, params) for f in model.force_specs]
        pts = np.concatenate([r0[:nb], *(np.reshape([p for _, p in _globals(el.anchors, r0, R0)],
                                                    (-1, self.dim)) for el in elements.values())])
        size = float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0)))
        self.scale = size if size > 0 else 1.0

    def _local(self, body: int, p: np.ndarray) -> np.ndarray:
        """A global point of the reference configuration in `body`'s frame."""
        return self._R0[body].T @ (p - self._r0[body])

    def _grounded(self, p: np.ndarray, i: int, j: int) -> tuple | None:
        """(point, towards the ground): down, or up where the body hangs from the point
        in the reference configuration (kept for every q, so a symbol never flips)."""
        ground = self._nb
        if ground not in (i, j):
            return None
        body = j if i == ground else i
        r0 = self._r0
        return p, self.up if (r0[body] - p) @ self.up < -1e-9 * np.abs(r0).max() else self.down

    def _element(self, spec, params: dict, elements: dict) -> _Element:
        """Where an element is drawn: its anchors, the bodies it attaches to, its ground
        symbol, its direction (an axis, or a wheel's rolling direction) and whether it is a rod."""
        name, etype, (i, j) = spec.name, ELEMENT_TYPES[spec.kind], (spec.bodies[0], spec.bodies[-1])
        ground, local = self._nb, self._local
        body = {"i": i, "j": j}
        geometry = [g for g in etype.geometry if g.name in spec.params]
        points = [g for g in geometry if g.value == "point"]
        ground_point, direction, rod = None, None, False
        if etype.family == "driver":
            anchors, attached = elements[spec.joint].anchors, ()
        elif points and points[0].on == "both":  # a joint point, drawn on body j
            p = params[f"{name}.{points[0].name}"]
            anchors = ((j, local(j, p)),)
            attached = ((i, local(i, p)), (j, local(j, p)))
            ground_point = self._grounded(p, i, j)
        elif points:  # points on one body each; two of them: a rod
            at = [(body[g.on], params[f"{name}.{g.name}"]) for g in points]
            anchors = attached = tuple((b, local(b, p)) for b, p in at)
            on_ground = [p for b, p in at if b == ground]
            ground_point = self._grounded(on_ground[0], i, j) if on_ground else None
            rod = len(at) == 2
        else:  # no point (a user constraint): draw it between its bodies
            anchors = tuple((b, np.zeros(self.dim)) for b in spec.bodies if b != ground)
            attached = ()
        for g in geometry:
            if g.value in ("axis", "direction") and self.dim in g.dims:
                e = params[f"{name}.{g.name}"]
                direction = (body[g.on], self._R0[body[g.on]].T @ (e / np.linalg.norm(e)))
                if g.value == "direction":
                    self.wheels.add(name)
        return _Element(name, spec.kind, anchors, attached, ground_point, direction, rod)

    def _force(self, f, params: dict) -> tuple:
        """`(name, kind, anchors, direction)` of a force element."""
        keys = {k: params[f"{f.name}.{k}"] for k in f.params}
        local = self._local
        if f.kind == "spring_damper":
            at = ((f.bodies[0], local(f.bodies[0], keys["point_i"])),
                  (f.bodies[1], local(f.bodies[1], keys["point_j"])))
        elif f.joint is not None:
            at = self._elements[f.joint].anchors
        else:
            body = f.bodies[-1]
            at = ((body, local(body, keys["point"]) if "point" in keys else np.zeros(self.dim)),)
        direction = None
        if f.kind == "force" and "force" in keys and np.linalg.norm(keys["force"]) > 0:
            u = keys["force"] / np.linalg.norm(keys["force"])
            ground = self._nb
            direction = (f.bodies[0], u) if f.frame == "body" else (ground, self._R0[ground].T @ u)
        return f.name, f.kind, at, direction

    def scene(self, q) -> Scene:
        """The geometry at configuration `q` `(nq,)`."""
        r, R = _poses(self.dim, np.asarray(q, dtype=float), self._nb)
        points, grounds, directions, rods = {}, {}, {}, {}
        on_body: list[list[np.ndarray]] = [[] for _ in range(self._nb + 1)]
        for el in self._elements.values():
            anchors = [p for _, p in _globals(el.anchors, r, R)]
            points[el.name] = np.mean(anchors, axis=0)
            for b, p in _globals(el.attached, r, R):
                on_body[b].append(p)
            if el.ground is not None:
                grounds[el.name] = el.ground
            if el.direction is not None:
                b, u = el.direction
                directions[el.name] = R[b] @ u
            if el.rod:
                rods[el.name] = np.stack(anchors)
        tol = 1e-9 * self.scale
        outlines = {name: _outline(np.array(on_body[k]).reshape(-1, self.dim), r[k], tol)
                    for k, name in enumerate(self.body_names)}
        markers, preferred = self._spread(points, grounds)
        obstacles = np.concatenate([*(_sample(P) for P in outlines.values()), *rods.values(),
                                    *((p + 0.05 * self.scale * t)[None] for p, t in grounds.values())]
                                   ).reshape(-1, self.dim)
        labels = self._place_labels(markers, preferred, obstacles)
        springs, loads = {}, {}
        for name, kind, at, direction in self._forces:
            ends = np.stack([p for _, p in _globals(at, r, R)])
            if kind == "spring_damper":
                springs[name] = ends
            else:
                u = None if direction is None else R[direction[0]] @ direction[1]
                loads[name] = (ends.mean(axis=0), u)
        return Scene(r[:self._nb], outlines, points, markers, labels, grounds, directions, rods,
                     self.scale, springs, loads)

    def _spread(self, points: dict[str, np.ndarray], grounds: dict) -> tuple[dict, dict]:
        """Marker positions and preferred label directions.

        Labels should point away from the middle of the mechanism (and not into a
        ground symbol). Elements that share a point (a driver and its joint, a knife
        edge at a wheel's pivot) keep the first one, drivers last, at the point; the
        others are fanned out around the outward direction."""
        tol = 1e-6 * self.scale
        clusters: list[list[str]] = []
        for name in sorted(points, key=lambda n: ELEMENT_TYPES[self.kinds[n]].family == "driver"):
            home = next((c for c in clusters if np.linalg.norm(points[c[0]] - points[name]) < tol), None)
            if home is None:
                clusters.append([name])
            else:
                home.append(name)
        middle = np.mean(list(points.values()), axis=0)
        markers, preferred = {}, {}
        for members in clusters:
            p = points[members[0]]
            out = p - middle
            for n in members:
                if n in grounds:
                    out = out - max(out @ grounds[n][1], 0.0) * grounds[n][1]
            x, y = out @ self.side, out @ self.up
            angle = np.arctan2(y, x) if np.hypot(x, y) > tol else np.pi / 4
            fan = angle + np.radians(40.0) * (np.arange(len(members) - 1) - (len(members) - 2) / 2)
            for name, a in zip(members, [angle, *fan]):
                preferred[name] = np.cos(a) * self.side + np.sin(a) * self.up
                markers[name] = p if name == members[0] else p + 0.07 * self.scale * preferred[name]
        return {n: markers[n] for n in points}, preferred

    def _place_labels(self, markers: dict, preferred: dict, obstacles: np.ndarray) -> dict:
        """Per element, the one of eight directions (in the side-up plane) whose label
        spot is farthest from the other markers, the bodies and the labels placed
        before it; nearly equal spots go to the preferred direction."""
        angles = np.arange(8) * np.pi / 4
        candidates = np.cos(angles)[:, None] * self.side + np.sin(angles)[:, None] * self.up
        room, reach = 0.06 * self.scale, 0.05 * self.scale
        placed: list[np.ndarray] = []
        out = {}
        for name, m in markers.items():
            others = [p for n, p in markers.items() if n != name]
            near = np.reshape([*others, *placed, *obstacles], (-1, self.dim))
            spots = m + reach * candidates
            clearance = np.min(np.linalg.norm(spots[:, None] - near[None], axis=-1), axis=1,
                               initial=room)
            score = np.minimum(clearance, room) + 0.2 * room * (candidates @ preferred[name])
            best = int(np.argmax(score))
            out[name] = candidates[best]
            placed.append(spots[best])
        return out


def _sample(P: np.ndarray, n: int = 6) -> np.ndarray:
    """Points along the closed outline `P` (`n` per edge)."""
    if len(P) == 1:
        return P
    Q = np.roll(P, -1, axis=0) if len(P) > 2 else P[::-1]
    w = np.linspace(0.0, 1.0, n, endpoint=False)[:, None, None]
    return ((1 - w) * P + w * Q).reshape(-1, P.shape[1])


def _globals(attachments, r, R):
    return [(b, r[b] + R[b] @ s) for b, s in attachments]


def _rotation(dim: int, x: np.ndarray) -> np.ndarray:
    """Rotation matrices from planar angles `(n,)` or quaternions `(n, 4)` (normalised here)."""
    if dim == 2:
        c, s = np.cos(x), np.sin(x)
        return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
    w, a, b, c = (x / np.linalg.norm(x, axis=-1, keepdims=True)).T
    return np.stack([
        np.stack([w * w + a * a - b * b - c * c, 2 * (a * b - w * c), 2 * (a * c + w * b)], -1),
        np.stack([2 * (a * b + w * c), w * w - a * a + b * b - c * c, 2 * (b * c - w * a)], -1),
        np.stack([2 * (a * c - w * b), 2 * (b * c + w * a), w * w - a * a - b * b + c * c], -1),
    ], -2)


def _with_ground(dim: int, r: np.ndarray, R: np.ndarray):
    return np.concatenate([r, np.zeros((1, dim))]), np.concatenate([R, np.eye(dim)[None]])


def _poses(dim: int, q: np.ndarray, nb: int):
    """Positions `(nb + 1, dim)` and rotations `(nb + 1, dim, dim)` at `q`, ground last."""
    qb = q.reshape(nb, -1)
    return _with_ground(dim, qb[:, :dim], _rotation(dim, qb[:, 2] if dim == 2 else qb[:, 3:]))


def _reference_poses(model: Model, params: dict):
    """The bodies' poses in which the element points were given (their reference poses
    from the parameters, which `build(assemble=True)` leaves unchanged), ground last."""
    q = np.concatenate([np.asarray(reference_q(params[f"{b.name}.position"],
                                               params[f"{b.name}.{b.orientation}"], b.orientation))
                        for b in model.body_specs])
    return _poses(model.dim, q, model.n_bodies)


def _outline(points: np.ndarray, centre: np.ndarray, tol: float) -> np.ndarray:
    """The outline of a body: the convex hull of its element points and its centre of
    mass (in their best-fitting plane, in 3-D). A body with one joint away from its
    centre is drawn as a rod through the centre, symmetric about it (a pendulum)."""
    distinct = _unique(points, tol)
    if len(distinct) == 1 and np.linalg.norm(distinct[0] - centre) > tol:
        return np.stack([distinct[0], 2 * centre - distinct[0]])
    pts = _unique(np.concatenate([points, centre[None]]), tol)
    if len(pts) <= 2:
        return pts
    flat = pts - pts.mean(axis=0)
    if flat.shape[1] == 3:
        flat = flat @ np.linalg.svd(flat, full_matrices=False)[2][:2].T
    return pts[_hull(flat, tol)]


def _unique(points: np.ndarray, tol: float) -> np.ndarray:
    kept: list[np.ndarray] = []
    for p in points:
        if all(np.linalg.norm(p - k) > tol for k in kept):
            kept.append(p)
    return np.array(kept).reshape(-1, points.shape[1])


def _hull(P: np.ndarray, tol: float) -> list[int]:
    """Indices of the convex hull of planar points, counter-clockwise (monotone chain);
    collinear points give the two ends."""
    order = np.lexsort((P[:, 1], P[:, 0]))

    def chain(indices) -> list[int]:
        out: list[int] = []
        for k in indices:
            while len(out) >= 2:
                a, b = P[out[-2]], P[out[-1]]
                if (b[0] - a[0]) * (P[k][1] - a[1]) - (b[1] - a[1]) * (P[k][0] - a[0]) > tol**2:
                    break
                out.pop()
            out.append(int(k))
        return out

    lower, upper = chain(order), chain(order[::-1])
    return lower[:-1] + upper[:-1]
