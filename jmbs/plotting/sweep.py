"""`plot_sweep`: rank, redundancy and the uniqueness of every reaction along a sweep or a path."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.legend_handler import HandlerTuple
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from .._solvability.base import MARGINAL_DECADES
from .._solvability.sweep import PathEvent, SolvabilityPath, SolvabilitySweep
from .base import INK, NONUNIQUE, STATE_LABELS, UNIQUE

# Margins are shown up to this many decimal digits (a zero criterion has an infinite margin).
MAX_DIGITS = 16.0


def plot_sweep(result: SolvabilitySweep | SolvabilityPath, s=None, *, ax=None, xlabel: str = "s") -> Figure:
    """Plot a solvability sweep or path: rank, uniqueness map and decision margins.

    Three panels over the sweep parameter: the rank of `C` (left axis) and the
    redundancy `p = nc - rank` (right axis); a uniqueness map, one band per
    element, green where its reaction is unique, orange where not, half and
    half where only some of its components are; and the margins of the
    decisions in decimal digits (a log scale of the distance between each
    criterion and its tolerance): the rank decision's and the weakest element
    decision's, with the level below which a decision is marginal. The events
    of a path (singular configurations, changes of the decisions) are vertical
    lines with labels.

    **Arguments:**
    - `result`: a `jmbs.solvability_sweep` result (`SolvabilitySweep`) or a
      `jmbs.solvability_path` result (`SolvabilityPath`, which carries its `s`
      and its events).
    - `s`: the sweep parameter `(batch,)` for a `SolvabilitySweep`; default the
      configuration index.
    - `ax`: three axes to draw the panels on; default a new figure.
    - `xlabel`: label of the parameter axis.

    **Returns:** the `matplotlib.figure.Figure`.

    **Raises:** `ValueError` for another kind of `result`, an `s` of the wrong
    length (or any `s` with a path), or not three axes.
    """
    if isinstance(result, SolvabilityPath):
        if s is not None:
            raise ValueError("a SolvabilityPath carries its own s; leave s out")
        sweep, events, s = result.sweep, result.events, np.asarray(result.s, dtype=float)
    elif isinstance(result, SolvabilitySweep):
        sweep, events = result, []
        s = np.arange(len(result), dtype=float) if s is None else np.asarray(s, dtype=float)
    else:
        raise ValueError("plot_sweep takes the result of jmbs.solvability_sweep or "
                         f"jmbs.solvability_path; got {type(result).__name__}")
    if s.shape != (len(sweep),):
        raise ValueError(f"s has shape {s.shape}, but the sweep has {len(sweep)} configurations")
    names = sweep.element_names
    if ax is None:
        fig, axes = plt.subplots(3, 1, sharex=True, figsize=(7.5, 3.6 + 0.22 * len(names)),
                                 height_ratios=[1.0, max(1.5, 0.22 * len(names)), 1.0])
    else:
        axes = list(np.ravel(ax))
        if len(axes) != 3:
            raise ValueError(f"ax must be three axes (rank, uniqueness map, margins); got {len(axes)}")
        fig = axes[0].figure
    top, middle, bottom = axes

    nc = sweep.model.nc
    top.step(s, sweep.rank, where="mid", color=INK)
    top.set_ylabel("rank of C")
    right = top.secondary_yaxis("right", functions=(lambda r: nc - r, lambda p: nc - p))
    right.set_ylabel("redundancy p")
    right.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ranks = [*sweep.rank, *(e.rank_at for e in events)]
    top.set_ylim(min(ranks) - 0.5, max(ranks) + 0.5)
    top.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))

    _uniqueness_map(middle, s, sweep)

    bottom.plot(s, np.clip(sweep.rank_margin, 0, MAX_DIGITS), color=INK, label="rank")
    weakest = np.clip(sweep.margin.min(axis=1), 0, MAX_DIGITS)
    bottom.plot(s, weakest, color=NONUNIQUE, label="weakest element")
    bottom.axhline(MARGINAL_DECADES, color="0.5", ls=":", lw=1, label="marginal below")
    bottom.set_ylim(0, None)
    bottom.set_ylabel("margin\n(digits)")
    bottom.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  frameon=False)
    bottom.set_xlabel(xlabel)

    width = s[-1] - s[0]
    for k, e in enumerate(events):
        for a in axes:
            a.axvline(e.s, color="0.3", ls="--", lw=0.8)
        top.plot([e.s], [e.rank_at], "o", mfc="white", mec=INK, ms=5)
        if k and e.s - events[k - 1].s < 0.02 * width:
            continue  # events this close share the first one's label
        left = e.s > s[0] + 0.6 * width
        top.annotate(_describe(e), (e.s, e.rank_at), xytext=(-4 if left else 4, 3),
                     textcoords="offset points", ha="right" if left else "left", fontsize=7, color=INK)
    if ax is None:
        fig.tight_layout()
    return fig


def _describe(e: PathEvent) -> str:
    if e.kind == "singular":
        return f"singular (rank {e.rank_at})"
    if e.kind == "near_singular":
        return f"near-singular ({e.rank_margin:.1f} digits)"
    if e.rank_before != e.rank_after:
        return f"rank {e.rank_before} to {e.rank_after}"
    return f"{', '.join(e.elements) or 'components'} change"


def _uniqueness_map(ax: Axes, s: np.ndarray, sweep: SolvabilitySweep) -> None:
    """One band per element (first at the top), coloured by its decision along `s`."""
    names = sweep.element_names
    edges = np.concatenate([[s[0]], (s[1:] + s[:-1]) / 2, [s[-1]]])
    for k, name in enumerate(names):
        y = len(names) - 1 - k
        unique = sweep.unique[:, k]
        partial = ~unique & sweep.unique_components(name).any(axis=1)
        code = np.where(unique, 0, np.where(partial, 1, 2))
        change = np.flatnonzero(np.diff(code)) + 1
        for a, b in zip(np.r_[0, change], np.r_[change, len(code)]):
            span = [(edges[a], edges[b] - edges[a])]
            band = {"gid": f"band:{name}"}
            if code[a] == 1:  # half green, half orange, like the partly unique markers
                ax.broken_barh(span, (y, 0.4), facecolors=UNIQUE, **band)
                ax.broken_barh(span, (y - 0.4, 0.4), facecolors=NONUNIQUE, **band)
            else:
                ax.broken_barh(span, (y - 0.4, 0.8), facecolors=UNIQUE if code[a] == 0 else NONUNIQUE,
                               **band)
    ax.set_yticks(range(len(names)), names[::-1], fontsize=8)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlim(edges[0], edges[-1])
    handles = [Patch(color=UNIQUE), Patch(color=NONUNIQUE), (Patch(color=UNIQUE), Patch(color=NONUNIQUE))]
    labels = [STATE_LABELS["unique"], STATE_LABELS["nonunique"], "partly unique"]
    ax.legend(handles, labels, handler_map={tuple: HandlerTuple(ndivide=None, pad=0.0)}, fontsize=8,
              loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
