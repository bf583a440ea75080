"""`plot_release`: the mechanism with the components a release frees marked (host-side)."""

import numpy as np
from matplotlib.axes import Axes

from .._model import Model
from .base import Layout
from .mechanism import plot_mechanism


def plot_release(model: Model, release, q=None, *, ax: Axes | None = None, t: float = 0.0) -> Axes:
    """Draw the mechanism (as `plot_mechanism`, coloured by uniqueness) with every element
    that `release` (a `jmbs.Release`) substitutes circled in red and labelled with what
    it becomes and the components it releases.

    **Arguments:**
    - `model`: the original model; `release`: one of `jmbs.advise(model)`.
    - `q`: configuration (default `model.q0`); `ax`: axes to draw on; `t`: time.

    **Returns:** the `matplotlib.axes.Axes` drawn on.

    **Raises:** `ValueError` for a release of elements the model does not have.
    """
    missing = [n for n in release.substitutions if n not in model.element_names]
    if missing:
        raise ValueError(f"plot_release: the release substitutes {missing[0]!r}, which is not an "
                         "element of this model; pass the model jmbs.advise was given")
    q = np.asarray(model.q0 if q is None else q, dtype=float)
    ax = plot_mechanism(model, q, ax=ax, t=t,
                        title=f"release: {', '.join(release.components)} (cost {release.cost:.2f})")
    scene = Layout(model).scene(q)
    for name, sub in release.substitutions.items():
        p = scene.markers[name]
        text = f"{name}: {sub.old_kind} -> {sub.kind}\nreleases {', '.join(release.released(name))}"
        offset = 0.12 * scene.scale * np.ones(model.dim)
        ax.scatter(*p, s=400, facecolors="none", edgecolors="red", linewidths=2.0, zorder=10)
        ax.text(*(p + offset), text, color="red", fontsize=8, zorder=11)
    return ax
