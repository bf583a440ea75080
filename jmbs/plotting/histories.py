"""`plot_reactions`: time histories of reactions, with the non-unique ones marked as such."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .base import NONUNIQUE, units

KINDS = ("force", "torque", "components")
TITLES = {"force": "Reaction forces on each element's body j (global frame); dashed: not unique",
          "torque": "Reaction torques on body j about each element's point; dashed: not unique",
          "components": "Reaction components (-lambda), driving forces and torques included; "
                        "dashed: not unique"}


def plot_reactions(solution, names=None, *, kind: str = "force", ax: Axes | None = None) -> Figure:
    """Plot reaction histories of a simulation, never presenting a non-unique one as a fact.

    A reaction that is not unique (its value is the formulation's choice, see
    `Reactions.is_unique`) is drawn dashed and lighter, and its legend label
    ends in "(not unique)". Where the uniqueness changes along the run, the
    times where it is not unique are shaded, and the line is dashed there.

    **Arguments:**
    - `solution`: a `jmbs.Solution` (one run) simulated with `reactions=True`.
    - `names`: element names; default every element whose reaction has a
      component of this kind (a force `F...`, a torque `M...`; all for
      `"components"`).
    - `kind`: `"force"` (global force components on body j), `"torque"`
      (about the element's point), or `"components"` (the element's own
      reaction components, each with its own uniqueness, e.g. a driver's
      driving torque).
    - `ax`: draw every curve on these axes; default a new figure with one
      axes per element.

    **Returns:** the `matplotlib.figure.Figure`.

    **Raises:** `ValueError` for a solution without reactions, a batch of runs,
    an unknown element or kind.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS))}; got {kind!r}")
    reactions = getattr(solution, "reactions", None)
    if reactions is None:
        raise ValueError("the solution has no reactions; simulate with jmbs.simulate(..., "
                         "reactions=True) (the default) to plot them")
    ts = np.asarray(solution.ts)
    if ts.ndim != 1:
        raise ValueError(f"the solution holds a batch of runs (ts has shape {ts.shape}); plot one, "
                         "e.g. jax.tree.map(lambda x: x[0], solution)")
    known = reactions.element_names
    if names is None:
        prefix = {"force": "F", "torque": "M", "components": ""}[kind]
        names = [n for n, comps in zip(known, reactions.component_names)
                 if any(c.startswith(prefix) for c in comps)]
    elif isinstance(names, str):
        names = [names]
    for name in names:
        if name not in known:
            raise ValueError(f"unknown element {name!r}; the elements are {', '.join(known)}")
    if not names:
        raise ValueError(f"no element has a {kind} reaction; choose another kind")

    if ax is None:
        fig, grid = plt.subplots(len(names), 1, sharex=True, squeeze=False,
                                 figsize=(7.0, 0.6 + 1.8 * len(names)))
        axes = list(grid[:, 0])
    else:
        fig, axes = ax.figure, [ax] * len(names)
    for name, a in zip(names, axes):
        values, labels, unique = _series(reactions, name, kind, ts.shape[0])
        prefix = f"{name} " if ax is not None else ""
        for k in range(values.shape[1]):
            _history(a, ts, values[:, k], unique[:, k], prefix + labels[k], f"C{k % 10}")
        changes = ~(unique.all(axis=0) | ~unique.any(axis=0))
        _shade(a, ts, (~unique[:, changes]).any(axis=1))
        if ax is None:
            a.set_title(name, fontsize=10, loc="left")
        a.set_ylabel(f"{kind if kind != 'components' else 'component'} [{units(labels)}]")
        entries = dict(zip(*a.get_legend_handles_labels()[::-1]))  # one "not unique" entry
        a.legend(entries.values(), entries.keys(), fontsize=8, loc="upper left",
                 bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
        a.grid(alpha=0.3)
    axes[-1].set_xlabel("t [s]")
    if ax is None:
        fig.suptitle(TITLES[kind], fontsize=10)
        fig.tight_layout()
    return fig


def _series(reactions, name: str, kind: str, T: int):
    """Values `(T, m)`, labels `(m,)` and uniqueness `(T, m)` of one element."""
    if kind == "components":
        labels = reactions.component_names[reactions.element_names.index(name)]
        values = np.asarray(reactions.components(name, allow_nonunique=True))
        unique = np.asarray(reactions.unique_components(name))
    else:
        if kind == "force":
            values = np.asarray(reactions.force(name, allow_nonunique=True))
            labels = ("Fx", "Fy", "Fz")[:values.shape[1]]
        else:
            values = np.asarray(reactions.torque(name, allow_nonunique=True)).reshape(T, -1)
            labels = ("M",) if values.shape[1] == 1 else ("Mx", "My", "Mz")
        unique = np.repeat(np.asarray(reactions.is_unique(name))[:, None], values.shape[1], axis=1)
    return values, labels, unique


def _history(ax: Axes, ts, y, unique, label: str, color: str) -> None:
    """One curve: solid where unique, dashed and lighter where not."""
    if unique.all():
        ax.plot(ts, y, color=color, label=label)
    elif not unique.any():
        ax.plot(ts, y, color=color, ls="--", alpha=0.6, label=f"{label} (not unique)")
    else:
        # The dashed part includes the samples next to it, so the two parts join.
        dashed = ~unique | np.convolve(~unique, np.ones(3), mode="same").astype(bool)
        # dots keep isolated unique samples visible
        ax.plot(ts, np.where(unique, y, np.nan), color=color, marker=".", ms=4,
                label=f"{label} (not unique where shaded)")
        ax.plot(ts, np.where(dashed, y, np.nan), color=color, ls="--", alpha=0.6)


def _shade(ax: Axes, ts, mask) -> None:
    """Shade the runs of `mask` (half a sample step beyond each end)."""
    if not mask.any():
        return
    edges = np.concatenate([[ts[0]], (ts[1:] + ts[:-1]) / 2, [ts[-1]]])
    padded = np.concatenate([[False], mask, [False]]).astype(int)
    starts, ends = np.flatnonzero(np.diff(padded) == 1), np.flatnonzero(np.diff(padded) == -1)
    for k, (a, b) in enumerate(zip(starts, ends)):
        ax.axvspan(edges[a], edges[b], color=NONUNIQUE, alpha=0.12, lw=0,
                   label="not unique" if k == 0 else None)
