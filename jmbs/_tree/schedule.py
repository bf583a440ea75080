"""Host-side schedule of the solve along the tree (`solve.py`): the plan's levels above
the leaves run in segments of consecutive levels padded to one shape, each segment one
scanned step, so that a program holds one copy of a segment's operations instead of
one per level. A compilation's time follows the number of kernels XLA emits, and a
tree's levels are alike (a chain's: two connection rows and four handle rows each, on
fewer nodes at every height). The price is paid at run time: the padded nodes' arithmetic
and the loop's bookkeeping (the A02 chain, N = 40: one dynamics evaluation 1.3-1.4
against 1.9-2.0 s to compile, 0.23-0.25 against 0.19-0.20 ms to run, 256 of them vmapped
4.4-4.6 against 2.2-2.4 ms; docs/benchmarks.md, "Tree heights in scanned segments").
`SEGMENT_SLACK` bounds the padding; a segment of one height runs as no loop at all.

Levels talk through buffers rather than through each other's arrays: each segment's
handle rows (their factors, of the segment's width, or their biases in `apply`) and
multipliers sit in buffers of its own, every level's in one block padded like its
segment; each level reads its children's (its parents') rows with index arrays from its
own buffers and from the other segments' stacked, and writes its block whole. A
buffer's last row is zero (the reads of padding) and never written.
"""

import dataclasses
import functools

import numpy as np

from .._linalg import closed_form_svd
from .plan import Plan, node_flops

# A segment's padded work (flops of its nodes' eliminations, as `plan_flops` counts them)
# may exceed its levels' own by at most this: only small levels, where a kernel's launch
# costs more than its arithmetic, run padded together (a chain's or a ladder's); large
# nodes (a grid's separators, where the factorization's time is) keep their own sizes.
SEGMENT_SLACK = 25_000


@dataclasses.dataclass(frozen=True, eq=False)
class Segment:
    """Consecutive levels run as one step, padded to `n` nodes of `J` connection and `B`
    handle rows, `widths` columns of `F` per child side, handle factors of `W` columns.
    Every segment keeps its nodes' handle rows (`n_rows` of them: factors, or biases in
    `apply`) and multipliers (`n_mults`) in buffers of its own, a zero row last; per
    level (`L` of them) `at` and `m_at` say where its block starts (node by node, padded
    like the segment). A level reads its children's handle rows from the segments `ext`
    (their buffers stacked in order, a zero row last) at `ext_rows` and from its own at
    `own_rows` (`(L, 2, n, J + B)` each: per side, every `F` row; the zero row where the
    other holds it; `own`: per side, whether any is its own), and its handles'
    multipliers from its parents, in the segments `above` at `above_rows` and in its own
    at `own_down` (`(L, n, B)` each; `own_m`: whether any). `g_rows` (`(L, n, J)`): the
    row of `C` of each connection row (`split.nc` for padding)."""

    levels: tuple[int, ...]
    n: int
    J: int
    B: int
    widths: tuple[int, int]
    W: int
    g_rows: np.ndarray
    at: np.ndarray
    n_rows: int
    ext: tuple[int, ...]
    ext_rows: np.ndarray
    own_rows: np.ndarray
    own: tuple[bool, bool]
    m_at: np.ndarray
    n_mults: int
    above: tuple[int, ...]
    above_rows: np.ndarray
    own_down: np.ndarray
    own_m: bool

    @property
    def cols(self) -> int:
        return sum(self.widths)

    @property
    def k(self) -> int:
        """The singular values per node."""
        return min(self.J, self.cols)


@dataclasses.dataclass(frozen=True, eq=False)
class Schedule:
    """The leaves (`leaf`: level 0, its `widths` `(nv_b, 0)`) and the segments above them;
    `rows`: per row of `C`, its multiplier's row in all segments' multipliers stacked;
    `leaf_of_body`: per body, its leaf."""

    leaf: Segment
    segments: tuple[Segment, ...]
    rows: np.ndarray
    leaf_of_body: np.ndarray


@functools.lru_cache(maxsize=64)
def leaf_bodies(plan: Plan) -> np.ndarray:
    """The body of each leaf in the leaves' order, in the split (`plan.split`; its
    `n_bodies` for a ground leaf)."""
    leaves = sorted((n for n in plan.nodes if n.children is None), key=lambda n: n.index)
    return np.array([n.body for n in leaves], dtype=np.int64)


def _shape(levels, hs: list[int], W_of: dict[int, int]) -> tuple:
    """The padded shape `(n, J, B, widths, W)` of levels `hs` run as one segment; `W_of`:
    the handle width of every level below them (its segment's)."""
    if hs == [0]:
        return levels[0].n, levels[0].J, levels[0].B, (levels[0].cols, 0), levels[0].W
    lv = [levels[h] for h in hs]
    n, J, B = max(x.n for x in lv), max(x.J for x in lv), max(x.B for x in lv)
    # A child in the segment itself passes up at most `B` columns.
    widths = tuple(max([W_of[s] if s not in hs else B
                        for x in lv for s, *_ in x.sources[side]], default=0) for side in (0, 1))
    return n, J, B, widths, min(sum(widths), B)


def _admissible(levels, hs: list[int], W_of: dict[int, int]) -> bool:
    """Whether levels `hs` may run as one segment: padded, their work at most
    `SEGMENT_SLACK` more than their own (the closed-form SVD of one or two rows and
    LAPACK's do not mix)."""
    n, J, B, widths, _ = _shape(levels, hs, W_of)
    own = sum(levels[h].n * node_flops(levels[h].J, levels[h].B, levels[h].cols) for h in hs)
    padded = len(hs) * n * node_flops(J, B, sum(widths))
    same_svd = ({closed_form_svd(levels[h].J, levels[h].cols) for h in hs}
                == {closed_form_svd(J, sum(widths))})
    return same_svd and padded - own <= SEGMENT_SLACK


def _groups(levels) -> tuple[list[list[int]], list[tuple]]:
    """The levels in segments (the leaves alone, then consecutive levels greedily) and
    each segment's padded shape."""
    groups, W_of = [[0]], {0: levels[0].W}
    for h in range(1, len(levels)):
        if len(groups) > 1 and _admissible(levels, groups[-1] + [h], W_of):
            groups[-1].append(h)
        else:
            groups.append([h])
        W = _shape(levels, groups[-1], W_of)[4]
        W_of.update({x: W for x in groups[-1]})
    return groups, [_shape(levels, hs, W_of) for hs in groups]


class _Layout:
    """Where every level's rows sit in the buffers, each level's block padded to its
    segment's shape, node by node."""

    def __init__(self, levels, groups, shapes):
        self.levels = levels
        self.shape = {h: shape for hs, shape in zip(groups, shapes) for h in hs}
        n = {h: self.shape[h][0] for h in self.shape}
        self.h_at = np.cumsum([0] + [n[h] * self.shape[h][2] for h in range(len(levels))])
        self.m_at = np.cumsum([0] + [n[h] * sum(self.shape[h][1:3]) for h in range(len(levels))])
        # Per handle row and per multiplier (the zero row last: -1), its segment; a
        # segment's rows are one range: its first and its number of rows.
        self.space = {}
        for name, at in (("h", self.h_at), ("m", self.m_at)):
            of = np.concatenate([np.full(at[h + 1] - at[h], s)
                                 for s, hs in enumerate(groups) for h in hs] + [[-1]])
            self.space[name] = (of, [int(at[hs[0]]) for hs in groups],
                                [int(at[hs[-1] + 1] - at[hs[0]]) for hs in groups])

    def padded(self, h: int) -> np.ndarray:
        """Each of level `h`'s own `F` rows in its segment's: connections, then handles."""
        lev = self.levels[h]
        return np.concatenate([np.arange(lev.J), self.shape[h][1] + np.arange(lev.B)])

    def handle(self, h: int, i, b):
        return self.h_at[h] + i * self.shape[h][2] + b

    def mult(self, h: int, i, k):
        return self.m_at[h] + i * sum(self.shape[h][1:3]) + self.padded(h)[k]


def _sources(lay: _Layout, space: str, s: int, idx: np.ndarray):
    """Where segment `s` reads the rows `idx` (global rows of the handles, `space="h"`, or
    the multipliers, `"m"`): `(segments, their rows, own rows, whether any is own)`, the
    other segments' stacked in order with a zero row last, the segment's own with its
    zero row last (see `Segment`)."""
    segment_of, first, sizes = lay.space[space]
    of = segment_of[idx]
    ext = tuple(sorted({int(x) for x in np.unique(of) if x >= 0 and x != s}))
    start = dict(zip(ext, np.cumsum([0] + [sizes[x] for x in ext])))
    base = np.array([start.get(x, 0) - first[x] for x in range(len(sizes))] + [0])
    ext_rows = np.where((of >= 0) & (of != s), base[of] + idx, sum(sizes[x] for x in ext))
    return ext, ext_rows, np.where(of == s, idx - first[s], sizes[s]), of == s


def _segment(plan: Plan, lay: _Layout, s: int, hs: list[int], shape: tuple, parent: dict) -> Segment:
    n, J, B, widths, W = shape
    levels, L = plan.levels, len(hs)
    zero_h, zero_m = lay.h_at[-1], lay.m_at[-1]
    up = np.full((L, 2, n, J + B), zero_h, dtype=np.int64)
    down = np.full((L, n, B), zero_m, dtype=np.int64)
    g_rows = np.full((L, n, J), plan.split.nc, dtype=np.int64)
    for t, h in enumerate(hs):
        lev = levels[h]
        g_rows[t, :lev.n, :lev.J] = lev.rows[:, :lev.J]
        for i in range(lev.n):
            if (h, i) in parent:
                hp, ip, rows = parent[h, i]
                live = np.flatnonzero(rows[:lev.B] < levels[hp].J + levels[hp].B)
                down[t, i, live] = lay.mult(hp, ip, rows[live])
        at = lay.padded(h)
        for side, sources in enumerate(lev.sources):
            for src, sel, child, rows, _ in sources:
                Bs = levels[src].B
                read = np.where(rows < Bs, lay.handle(src, child[:, None], np.minimum(rows, Bs - 1)),
                                zero_h)
                up[t, side, sel[:, None], at[None, :]] = read
    ext, ext_rows, own_rows, own = _sources(lay, "h", s, up)
    above, above_rows, own_down, own_m = _sources(lay, "m", s, down)
    (_, h_first, h_sizes), (_, m_first, m_sizes) = lay.space["h"], lay.space["m"]
    return Segment(tuple(hs), n, J, B, widths, W, g_rows, lay.h_at[hs] - h_first[s], h_sizes[s],
                   ext, ext_rows, own_rows, tuple(bool(own[:, side].any()) for side in (0, 1)),
                   lay.m_at[hs] - m_first[s], m_sizes[s], above, above_rows, own_down,
                   bool(own_m.any()))


@functools.lru_cache(maxsize=64)
def schedule(plan: Plan) -> Schedule:
    """The plan's `Schedule` (built once per plan)."""
    levels = plan.levels
    groups, shapes = _groups(levels)
    lay = _Layout(levels, groups, shapes)
    # Each node's parent: (level, node, the parent's F row of each of its handles).
    parent = {(src, int(child[j])): (h, int(sel[j]), down[j])
              for h, lev in enumerate(levels) for sources in lev.sources
              for src, sel, child, _, down in sources for j in range(len(sel))}
    segments = tuple(_segment(plan, lay, s, hs, shape, parent)
                     for s, (hs, shape) in enumerate(zip(groups, shapes)))
    rows = np.zeros(plan.nc, dtype=np.int64)
    for h, lev in enumerate(levels):
        for i in range(lev.n):
            for k in range(lev.J):
                if lev.rows[i, k] < plan.nc:
                    rows[lev.rows[i, k]] = lay.mult(h, i, k)
    return Schedule(segments[0], segments[1:], rows,
                    np.argsort(leaf_bodies(plan))[:plan.n_bodies])
