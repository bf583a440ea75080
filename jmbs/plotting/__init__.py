"""Plots of jmbs results (host-side only, matplotlib; nothing here is traced).

`import jmbs.plotting` (importing `jmbs` alone does not load matplotlib):

- `plot_mechanism(model, q)`: the mechanism with each joint marked by whether its
  reaction is unique (green), not unique (orange) or partly unique (half and half);
- `plot_release(model, release)`: the same, with the components a `jmbs.advise`
  release frees circled and labelled;
- `plot_reactions(solution)`: reaction histories, non-unique ones dashed and labelled;
- `plot_sweep(result)`: rank, redundancy and a uniqueness map along a sweep or path;
- `animate(model, solution, "motion.gif")`: the motion with per-frame uniqueness
  (`check_animation_file(path)` checks the file's format before a run).

Nothing here calls `plt.show()`; use a non-interactive backend (e.g.
`MPLBACKEND=Agg`) on machines without a display.
"""

from .animation import animate as animate
from .animation import check_animation_file as check_animation_file
from .histories import plot_reactions as plot_reactions
from .mechanism import plot_mechanism as plot_mechanism
from .release import plot_release as plot_release
from .sweep import plot_sweep as plot_sweep

__all__ = ["animate", "check_animation_file", "plot_mechanism", "plot_reactions", "plot_release",
           "plot_sweep"]
