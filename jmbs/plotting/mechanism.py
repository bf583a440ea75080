"""`plot_mechanism`: a drawing of the mechanism with its joints marked by the uniqueness of
their reactions (the papers' figures)."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon
from mpl_toolkits.mplot3d.art3d import Poly3DCollection

from .._forces.registry import FORCE_TYPES
from .._joints.registry import ELEMENT_TYPES
from .._misc import as_configuration
from .._model import Model
from .._solvability.report import SolvabilityReport, solvability
from .base import (
    BODY,
    INK,
    STATE_LABELS,
    STATES,
    Layout,
    Scene,
    check_arguments,
    marker_style,
    state,
)

# Half the length of a knife edge's wheel, relative to the size of the mechanism.
WHEEL = 0.06


def plot_mechanism(model: Model, q=None, *, report: SolvabilityReport | None = None, t: float = 0.0,
                   ax: Axes | None = None, labels: bool = True, title: str | None = None) -> Axes:
    """Draw the mechanism at one configuration, each element marked by whether its
    reaction is unique.

    Bodies are grey outlines through their element points, centres of mass small
    dots; every element (joint, driver, knife edge, distance, user constraint) is
    a marker whose shape gives its kind and whose fill gives the decision of
    `report`: green, unique; orange, not unique; half green, half orange, not
    unique as a whole but with some unique components. Ground connections get a
    hatched ground symbol, knife edges a short wheel along their direction,
    prismatic (and, in 3-D, all) joint axes a thin line. Elements that share a
    point (a driver and its joint) are fanned out around it so each is visible.

    **Arguments:**
    - `model`: the model; planar models are drawn on 2-D axes with equal
      aspect, spatial ones on 3-D axes with an equal box aspect.
    - `q`: configuration `(nq,)`; default `report.q`, or `model.q0`.
    - `report`: the `jmbs.solvability` report to colour by; default
      `jmbs.solvability(model, q, t)`.
    - `t`: time for the default report (drivers).
    - `ax`: axes to draw on (3-D axes, `projection="3d"`, for a spatial model);
      default a new figure.
    - `labels`: write the element names next to their markers.
    - `title`: axes title; default the rank, redundancy and degrees of freedom;
      `""` for none.

    **Returns:** the `matplotlib.axes.Axes` drawn on.

    **Raises:** `ValueError` for a `q` of the wrong size or with NaN, a report
    of another model or configuration, or 2-D axes for a spatial model.
    """
    check_arguments("plot_mechanism", model)
    if report is not None and report.model.element_names != model.element_names:
        raise ValueError("report belongs to another model (its elements are "
                         f"{', '.join(report.model.element_names)}); pass jmbs.solvability(model, q)")
    if q is None:
        q = model.q0 if report is None else report.q
    q = as_configuration(model, q)
    if q.ndim != 1:
        raise ValueError(f"q must be one configuration ({model.nq},), got shape {q.shape}; "
                         "use jmbs.plotting.animate for a trajectory")
    if report is None:
        report = solvability(model, q, t)
    elif not np.allclose(report.q, q):
        raise ValueError("report was computed at another configuration than q; pass "
                         "report=jmbs.solvability(model, q, t) or leave report out")
    layout = Layout(model)
    scene = layout.scene(q)
    extent = scene.extent()
    ax = axes_for(model.dim, ax, *extent)
    states = {name: state(report.is_unique(name), report.unique_components(name))
              for name in model.element_names}
    draw(ax, layout, scene, states, labels)
    set_limits(ax, layout, *extent)
    add_legend(ax, layout)
    if title is None:
        title = (f"rank {report.rank} of {report.n_constraints} constraints: "
                 f"p = {report.redundancy}, dof = {report.dof}" + (" (singular)" if report.singular else ""))
    if title:
        ax.set_title(title)
    return ax


def axes_for(dim: int, ax: Axes | None, lo: np.ndarray, hi: np.ndarray) -> Axes:
    """`ax` checked against the model's dimension, or new axes of the right kind in a
    figure shaped for a drawing that spans `[lo, hi]` (with the legend on the right)."""
    if ax is None:
        if dim == 3:
            fig = plt.figure(figsize=(7.5, 5.6), layout="constrained")
        else:
            width, height = hi - lo + 1e-9
            fig = plt.figure(figsize=(7.8, float(np.clip(5.5 * height / width, 2.2, 6.5)) + 0.9),
                             layout="constrained")
        return fig.add_subplot(projection="3d" if dim == 3 else None)
    if (ax.name == "3d") != (dim == 3):
        raise ValueError("a spatial model needs 3-D axes (fig.add_subplot(projection='3d'))"
                         if dim == 3 else "a planar model needs 2-D axes; pass ordinary axes")
    return ax


def draw(ax: Axes, layout: Layout, scene: Scene, states: dict[str, str], labels: bool = True) -> None:
    """Draw a scene: bodies, centres of mass, ground symbols, knife edges, axes, and one
    marker per element in the style of `states` (`"unique" | "partial" | "nonunique"`).

    Every element marker is a line with `gid="element:<name>"`, every body outline
    an artist with `gid="body:<name>"`."""
    s = layout.scale
    spatial = layout.dim == 3
    for name, P in scene.outlines.items():
        if len(P) >= 3:
            face, edge = (0.6, 0.6, 0.6, 0.3), BODY  # a see-through fill
            if spatial:
                poly = Poly3DCollection([P], facecolors=[face], edgecolors=[edge], linewidths=3)
                poly.set_gid(f"body:{name}")
                ax.add_collection3d(poly)
            else:
                ax.add_patch(Polygon(P, closed=True, fc=face, ec=edge, lw=3, joinstyle="round",
                                     gid=f"body:{name}", zorder=1))
        else:
            ax.plot(*P.T, color=BODY, lw=4, solid_capstyle="round", marker="s" if len(P) == 1 else "",
                    ms=14, gid=f"body:{name}", zorder=1)
    ax.plot(*scene.centres.T, ".", color=INK, ms=4, zorder=3)
    for P in scene.rods.values():
        ax.plot(*P.T, color=INK, lw=1.5, zorder=2)
    for name, u in scene.directions.items():
        p = scene.points[name]
        if name in layout.wheels:
            ends = np.stack([p - WHEEL * s * u, p + WHEEL * s * u])
            ax.plot(*ends.T, color=INK, lw=5, solid_capstyle="round", zorder=2)
        else:
            ends = np.stack([p - 0.09 * s * u, p + 0.09 * s * u])
            ax.plot(*ends.T, color=INK, lw=0.8, ls="-.", zorder=2)
    _draw_forces(ax, layout, scene)
    for name, (p, towards) in scene.grounds.items():
        for P in _ground_symbol(p, towards, layout):
            ax.plot(*P.T, color=INK, lw=1, zorder=2, gid=f"ground:{name}")
    for name, m in scene.markers.items():
        p = scene.points[name]
        if np.linalg.norm(m - p) > 0:
            ax.plot(*np.stack([p, m]).T, color=INK, lw=0.7, zorder=3)
        ax.plot(*m[:, None], **marker_style(layout.kinds[name], states[name]), zorder=4,
                gid=f"element:{name}")
        if labels:
            d = scene.label_directions[name]
            # a knife edge's label clears its wheel
            clear = WHEEL * s * abs(d @ scene.directions[name]) if name in layout.wheels else 0.0
            _label(ax, layout, m + clear * d, d, name)


# Force elements: one colour (Dark2's purple), a marker per kind where they act.
FORCE = "#7570b3"
FORCE_MARKERS = {"force": "o", "torque": r"$\circlearrowleft$", "bushing": "s",
                 "rotational_spring_damper": r"$\circlearrowleft$", "slide_spring_damper": "D",
                 "actuator": "P",
                 "joint_friction": "X"}


def _zigzag(a: np.ndarray, b: np.ndarray, across: np.ndarray, width: float, turns: int = 6) -> np.ndarray:
    """A spring's polyline from `a` to `b`: straight ends, `turns` zig-zags between."""
    k = np.arange(2 * turns + 1)
    u = np.concatenate([[0.0], 0.2 + 0.6 * k / (2 * turns), [1.0]])
    side = np.concatenate([[0.0], np.where(k % 2, 1.0, -1.0) * (k > 0) * (k < 2 * turns), [0.0]])
    return a + u[:, None] * (b - a) + side[:, None] * width * across


def _draw_forces(ax: Axes, layout: Layout, scene) -> None:
    """Springs as zig-zags between their points, applied forces as arrows (constant ones:
    along the force), the other force elements as a marker where they act; each artist
    has `gid="force:<name>"`."""
    s = layout.scale
    for name, P in scene.springs.items():
        d = P[1] - P[0]
        length = np.linalg.norm(d)
        across = layout.side if length == 0 else (
            np.array([-d[1], d[0]]) / length if layout.dim == 2 else
            np.cross(d / length, layout.up if abs(d @ layout.up) < 0.99 * length else layout.side))
        across = across / max(np.linalg.norm(across), 1e-300)
        ax.plot(*_zigzag(P[0], P[1], across, 0.02 * s).T, color=FORCE, lw=1.3, zorder=3,
                gid=f"force:{name}")
    for name, (p, u) in scene.loads.items():
        kind = layout.force_kinds[name]
        if u is not None:
            tail = p - 0.15 * s * u
            if layout.dim == 2:
                ax.annotate("", xy=p, xytext=tail, zorder=4, gid=f"force:{name}",
                            arrowprops={"arrowstyle": "-|>", "color": FORCE, "lw": 1.8})
            else:
                ax.quiver(*tail, *(0.15 * s * u), color=FORCE, lw=1.8, gid=f"force:{name}")
            continue
        ax.plot(*p[:, None], marker=FORCE_MARKERS[kind], ls="none", ms=11, mfc="none", mec=FORCE,
                mew=1.5, zorder=4, gid=f"force:{name}")


def _label(ax: Axes, layout: Layout, at: np.ndarray, direction: np.ndarray, text: str) -> None:
    """Write `text` next to `at`, on the side of the unit vector `direction`."""
    x, y = direction @ layout.side, direction @ layout.up
    pos = at + 0.035 * layout.scale * direction
    ha = "left" if x > 0.35 else "right" if x < -0.35 else "center"
    va = "bottom" if y > 0.35 else "top" if y < -0.35 else "center"
    ax.text(*pos, text, ha=ha, va=va, fontsize=9, color=INK, zorder=5,
            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})


def _ground_symbol(p: np.ndarray, down: np.ndarray, layout: Layout) -> list[np.ndarray]:
    """Polylines of a ground symbol at `p`: a triangle on a hatched base, towards `down`."""
    h, w = 0.05 * layout.scale, 0.035 * layout.scale
    side = layout.side
    base = p + h * down
    lines = [np.stack([p, base + w * side, base - w * side, p]),
             np.stack([base - 1.6 * w * side, base + 1.6 * w * side])]
    for k in np.linspace(-1.2, 1.6, 5):
        a = base + k * w * side
        lines.append(np.stack([a, a - 0.5 * w * side + 0.6 * w * down]))
    return lines


def set_limits(ax: Axes, layout: Layout, lo: np.ndarray, hi: np.ndarray) -> None:
    """Axis limits around `[lo, hi]` with room for symbols and labels, equal scales."""
    pad = 0.05 * layout.scale
    lo, hi = lo - pad, hi + pad
    if layout.dim == 2:
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_aspect("equal")
        return
    mid, width = (lo + hi) / 2, np.maximum(hi - lo, 0.25 * np.max(hi - lo))
    for setter, a, b in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), mid - width / 2, mid + width / 2):
        setter(a, b)
    ax.set_box_aspect(width)
    k = int(np.argmax(np.abs(layout.up)))
    if layout.up[k] > 0.99:  # show the gravity axis vertical
        ax.view_init(elev=20, azim=-60, vertical_axis="xyz"[k])
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")


def add_legend(ax: Axes, layout: Layout) -> None:
    """A legend of the uniqueness styles (all three, as a key to the half-filled
    markers) and of the marker shapes of the model's kinds."""
    handles = [Line2D([], [], **marker_style("revolute", st), label=STATE_LABELS[st]) for st in STATES]
    shapes: dict[str, list[str]] = {}  # marker -> the kinds drawn with it
    for kind in layout.kinds.values():
        etype = ELEMENT_TYPES[kind]
        names = shapes.setdefault(etype.marker, [])
        if etype.label not in names:
            names.append(etype.label)
    if len(shapes) > 1:
        handles += [Line2D([], [], marker=m, ls="none", mfc="white", mec=INK, ms=8, label=", ".join(names))
                    for m, names in shapes.items()]
    kinds = dict.fromkeys(layout.force_kinds.values())
    handles += [Line2D([], [], color=FORCE, lw=1.3, label=FORCE_TYPES[k].label) if k == "spring_damper"
                else Line2D([], [], color=FORCE, marker=">" if k == "force" else FORCE_MARKERS[k],
                            ls="-" if k == "force" else "none", mfc="none", mec=FORCE, ms=8,
                            label=FORCE_TYPES[k].label) for k in kinds]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0.0, frameon=False)
