"""Routes between the heights of the assembly tree for the divide-and-conquer
uniqueness analysis (`jmbs._solvability.dca`), which runs one batched step per height:
each height reads its children's handles and its parents' patterns from their own
arrays. (The solve, `solve.py`, runs heights in scanned segments instead:
`schedule.py`.)

The analysis's pass down carries the patterns in each node's own basis (what a node
reads from its parents is re-factored to its width, `compress_factor`); a set's wrenches
on a split hub's copies are summed through the maps between those bases, so its result
does not depend on where that happens (`dca._hub_wrenches`).
"""

import functools

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._linalg import pad_cols
from .plan import Level, Plan


class _Routes:
    """Flat gather indices between heights (host-side, per plan), so that every
    height reads its children's handles, and its children their multipliers, with
    one gather instead of a scatter per source:

    - `up[h][side]`: `(heights, idx)`: the heights of the children on that side, and
      per node and `F` row the position in their handle arrays `(n, B + 1)`
      concatenated and flattened (the extra row is zero: padding);
    - `down[h]`: `(heights, idx)`: the heights of the parents of height `h`'s nodes,
      and per node and handle row the position in their `(n, J + B + 1)` multiplier
      arrays concatenated and flattened;
    - `rows`: per row of `C`, its multiplier's position in all heights' multiplier
      arrays concatenated.
    """

    def __init__(self, plan: Plan):
        levels = plan.levels
        self.up = {}
        parents: dict[int, list] = {h: [] for h in range(len(levels))}
        for h, lev in enumerate(levels):
            sides = []
            for sources in lev.sources:
                heights = [src for src, *_ in sources]
                offsets = np.cumsum([0] + [levels[x].n * (levels[x].B + 1) for x in heights])
                idx = np.zeros((lev.n, lev.J + lev.B), dtype=np.int64)
                for (src, sel, child, up, down), off in zip(sources, offsets):
                    idx[sel] = off + child[:, None] * (levels[src].B + 1) + up
                    parents[src].append((h, sel, child, down))
                sides.append((tuple(heights), idx))
            self.up[h] = tuple(sides)
        self.down = {}
        for src, items in parents.items():
            heights = sorted({h for h, *_ in items})
            offsets = dict(zip(heights, np.cumsum(
                [0] + [levels[h].n * (levels[h].J + levels[h].B + 1) for h in heights])))
            idx = np.zeros((levels[src].n, levels[src].B), dtype=np.int64)
            for h, sel, child, down in items:
                idx[child] = offsets[h] + sel[:, None] * (levels[h].J + levels[h].B + 1) + down
            self.down[src] = (tuple(heights), idx)
        # Where each row's multiplier is (the node eliminating it, in the flattened
        # multiplier arrays of all heights).
        offsets = np.cumsum([0] + [lev.n * (lev.J + lev.B + 1) for lev in levels])
        self.rows = np.zeros(plan.nc, dtype=np.int64)
        for h, lev in enumerate(levels):
            width = lev.J + lev.B + 1
            for i in range(lev.n):
                for k in range(lev.J):
                    if lev.rows[i, k] < plan.nc:
                        self.rows[lev.rows[i, k]] = offsets[h] + i * width + k


@functools.lru_cache(maxsize=64)
def plan_routes(plan: Plan) -> _Routes:
    """The plan's `_Routes` (built once per plan)."""
    return _Routes(plan)


def flat_handles(L: Array, lev: Level) -> Array:
    """A height's handle factors `(n, B, W)` as its children's parents read them:
    `(n (B + 1), W)`, each node's rows followed by a zero row (padding)."""
    return jnp.concatenate([L, jnp.zeros((lev.n, 1, lev.W))], axis=1).reshape(lev.n * (lev.B + 1), lev.W)


def children_factors(plan: Plan, h: int, handles: dict) -> Array:
    """`F` of the nodes of height `h > 0`: their children's handle factors (from
    `flat_handles`, by height), side 0's in the first `col_offset` columns."""
    lev = plan.levels[h]
    widths = (lev.col_offset, lev.cols - lev.col_offset)
    return jnp.concatenate([
        jnp.concatenate([pad_cols(handles[x], w) for x in heights])[idx]
        for (heights, idx), w in zip(plan_routes(plan).up[h], widths)], axis=2)
