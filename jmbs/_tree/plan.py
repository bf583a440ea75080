"""Host-side plan of the divide-and-conquer analysis (`jmbs.DCA`): the binary assembly
tree, and for every node of it which rows of `C` it eliminates (its connection) and
which it passes on to its parent (its handles), as static index arrays grouped by
the node's height so that each height runs as one batched (vmapped) step (or a few, where
the nodes of a height differ much in size: `_groups`).

Terms (paper 001, §2): a node is a body (a leaf) or the subassembly of its two
children. An element is eliminated at the lowest node that holds all the moving
bodies it connects; the ground holds still (its inverse inertia is zero), so a joint
to the ground is eliminated with its moving body, unless the tree names `"ground"`
as a leaf (then with the lowest node that also holds the ground, as in the paper,
whose ground connection is the last assembly step). The rows that reach a node from
below without being eliminated there are its handles' constraint rows.

The tree is planned on the body graph with every hub (a body joined to many) split into
welded copies (`split_hubs`), so the nodes' bodies and rows are the split's (`Split`):
the model's, then the copies and the welds' rows.
"""

import dataclasses
import functools
from collections import deque

import numpy as np

from .._assembly import block_layout
from .._bodies import NV
from .._linalg import structured
from .._model import GROUND, Model
from .._terms import gather_blocks

TREE_HELP = ('pass tree as nested pairs of body names, e.g. (("crank", "coupler"), "rocker"); '
             'every moving body once, and "ground" at most once')


@dataclasses.dataclass(eq=False)
class Node:
    """One node of the assembly tree (host-side)."""

    bodies: frozenset  # moving body indices (the ground is n_bodies)
    children: tuple["Node", "Node"] | None = None
    body: int | None = None  # a leaf's body (n_bodies for the ground leaf)
    parent: "Node | None" = None
    height: int = 0
    depth: int = 0
    level: int = 0  # its group of nodes factored in one batched step (`Plan.levels`)
    index: int = 0  # position among the nodes of its level
    rows_J: list = dataclasses.field(default_factory=list)  # rows eliminated here
    rows_B: list = dataclasses.field(default_factory=list)  # rows passed to the parent
    pos: dict = dataclasses.field(default_factory=dict)  # row of C -> row of the padded F


@dataclasses.dataclass(frozen=True, eq=False)
class Level:
    """The nodes of one group (`_groups`), padded to common sizes: `J` connection rows, `B`
    handle rows, `cols` columns of `F` (`nv_b` for leaves), `W` columns of the
    handle factor passed up. Index arrays point one past the end for padding."""

    n: int
    J: int
    B: int
    cols: int
    W: int
    rows: np.ndarray  # (n, J + B) row of C per F row, nc for padding
    # leaves: (n, J + B) block row of each F row (P for padding)
    entries: np.ndarray | None
    # internal nodes: per child side (0, 1), per level of the children on that side:
    # (level, node selection, child index at that level, (n_sel, J + B) child handle
    # row per F row, (n_sel, B_child) F row per child handle row)
    sources: tuple = ()
    col_offset: int = 0  # columns of side 0 (side 1 starts there)


@dataclasses.dataclass(frozen=True, eq=False)
class Split:
    """The bodies and rows the tree works on: the model's, with every hub (`HUB_DEGREE`)
    split into copies, each holding the joints to a few of the hub's neighbours
    (`HUB_SHARE`), consecutive copies welded (`NV` rows each, after `C`'s rows). The
    welded copies move as the hub, so the split system has the model's reaction
    patterns (its `null(C^T)`, the welds' multipliers fixed by the rest) and `NV` more
    rows and columns of rank per weld; each copy carries its share of the hub's mass
    and load. The ground is `n_bodies` here."""

    n_bodies: int  # bodies, copies included
    nc: int  # rows: `C`'s, then the welds'
    body_of: np.ndarray  # (n_bodies,) the model's body of each body
    share: np.ndarray  # (n_bodies,) its share of that body's mass and load
    elements: tuple  # per element ((first row, end row), bodies), the model's then the welds'
    entry_bodies: np.ndarray  # (P,) the body of each of `C`'s moving-body blocks
    weld_rows: np.ndarray  # (Pw,) the welds' block rows: row, body, value
    weld_bodies: np.ndarray
    weld_vals: np.ndarray  # (Pw, nv_b)


@dataclasses.dataclass(frozen=True, eq=False)
class Plan:
    """Everything static that the analysis needs (hashed by identity, cached per structure)."""

    dim: int
    nc: int
    nv: int
    n_bodies: int
    entry_rows: np.ndarray  # (P,) rows of the moving-body block rows of C
    entry_bodies: np.ndarray  # (P,) their bodies
    entry_pick: np.ndarray  # (P,) positions in `constraint_blocks`' output
    levels: tuple[Level, ...]  # groups of nodes, leaves first, children before parents
    nodes: tuple[Node, ...]  # all nodes, post-order (root last)
    # element criteria: one term per (element, body) pair
    pair_element: np.ndarray  # (T,)
    pair_leaf: np.ndarray  # (T,) leaf index (height 0)
    pair_slots: np.ndarray  # (T, m_max) F rows of the leaf, padding = J0 + B0
    n_elements: int
    split: Split  # the bodies and rows of the nodes (hubs split)

    @property
    def root(self) -> Node:
        return self.nodes[-1]

    @property
    def weld_rank(self) -> int:
        """The rank the hubs' welds add to every connection's (their rows are independent)."""
        return self.split.nc - self.nc


def _graph(nb: int, bodies_per_element) -> list[set]:
    adj = [set() for _ in range(nb)]
    for bodies in bodies_per_element:
        moving = [b for b in bodies if b < nb]
        for a in moving:
            adj[a].update(x for x in moving if x != a)
    return adj


def _bfs(start: int, members: set, adj) -> list[int]:
    order, seen, queue = [], {start}, deque([start])
    while queue:
        x = queue.popleft()
        order.append(x)
        for y in sorted(adj[x] & members):
            if y not in seen:
                seen.add(y)
                queue.append(y)
    return order


def _level_order(bodies: list[int], adj) -> list[int]:
    """The bodies in breadth-first order from a pseudo-peripheral body of each connected
    part: consecutive halves of it are subassemblies with few handles (a chain splits
    into two chains, a ladder into two ladders)."""
    members, order = set(bodies), []
    left = set(bodies)
    while left:
        far = _bfs(min(left), members & left, adj)[-1]
        part = _bfs(far, members & left, adj)
        order += part
        left -= set(part)
    return order


# A body joined to this many others is a hub (a coupler on many cranks, a platform on many
# legs): `split_hubs` splits it into welded copies, each joined to `HUB_SHARE` of them, so
# that the graph the tree bisects is a comb with small separators (the welds), not a star.
HUB_DEGREE = 8
HUB_SHARE = 4


# `_bisect` cuts the breadth-first order in half, then moves bodies across the cut
# while that separates fewer joined pairs and leaves each side within `CUT_SLACK` of half
# the bodies (a Kernighan-Lin refinement: smaller separators, the tree as balanced).
CUT_SLACK = 0.05


def _halves(order: list[int], adj) -> tuple[list[int], list[int]]:
    """The two halves of `order`, refined: greedy moves of single bodies with a positive
    gain (joined pairs no longer cut), in passes until none is left."""
    n = len(order)
    side = {b: int(i >= n // 2) for i, b in enumerate(order)}
    sizes = [n // 2, n - n // 2]
    slack = max(1, int(CUT_SLACK * n))
    for _ in range(8):
        moved = False
        for b in order:
            own = side[b]
            nbrs = [side[x] for x in adj[b] if x in side]
            gain = sum(s != own for s in nbrs) - sum(s == own for s in nbrs)
            if gain > 0 and abs((sizes[own] - 1) - (sizes[1 - own] + 1)) <= slack:
                side[b] = 1 - own
                sizes[own] -= 1
                sizes[1 - own] += 1
                moved = True
        if not moved:
            break
    return [b for b in order if side[b] == 0], [b for b in order if side[b] == 1]


def _bisect(bodies: list[int], adj) -> Node:
    if len(bodies) == 1:
        return Node(frozenset(bodies), body=bodies[0])
    left, right = _halves(_level_order(bodies, adj), adj)
    return Node(frozenset(bodies), children=(_bisect(left, adj), _bisect(right, adj)))


def split_hubs(model: Model, entry_rows, entry_bodies, split: bool = True) -> Split:
    """The model's bodies and rows with its hubs split (`Split`; `split=False`: as they are);
    `entry_*`: the rows and bodies of `C`'s moving-body blocks (`block_layout`'s).

    A hub's neighbours are taken part by part (the connected parts of the graph without
    the hub, breadth-first within each), `HUB_SHARE` to a copy; an element joining the
    hub to a neighbour goes to that neighbour's copy, one joining it to the ground only
    stays on the hub (the first copy). Why it is exact: with `C'` the split matrix, `C'^T
    (lam, mu) = 0` says on each copy `C_i^T lam_i + mu_(i-1) - mu_i = 0` (`mu` the welds'
    multipliers, none past the ends), so `mu` follows from `lam` and the copies' sum is
    the hub's own `C_hub^T lam = 0`: the same patterns, and the welds' rows add exactly
    their number to the rank."""
    nb, nvb, nc = model.n_bodies, NV[model.dim], model.nc
    specs = [tuple(spec.bodies) for spec in model.element_specs]
    adj = _graph(nb, specs)
    hubs = [h for h in range(nb) if split and len(adj[h]) >= HUB_DEGREE]
    body_of, copy_at = list(range(nb)), {}  # copy_at[(hub, neighbour)] = body index of the copy
    copies = {}
    for h in hubs:
        order, seen, rest = [], {h}, set(range(nb)) - {h}
        for x in sorted(adj[h]):
            if x not in seen:
                part = _bfs(x, rest, adj)
                seen.update(part)
                order += [y for y in part if y in adj[h]]
        copies[h] = [h]
        for k, x in enumerate(order):
            if k and k % HUB_SHARE == 0:
                copies[h].append(len(body_of))
                body_of.append(h)
            copy_at[h, x] = copies[h][-1]
    nb_ext = len(body_of)
    count = np.bincount(np.asarray(body_of, dtype=np.int64), minlength=nb)
    share = 1.0 / count[body_of]

    def place(bodies):
        moving = [b for b in bodies if b < nb]
        out = []
        for b in bodies:
            if b >= nb:
                out.append(nb_ext)  # the ground
            elif b in copies:
                others = [x for x in moving if x != b]
                out.append(copy_at[b, others[0]] if others else b)
            else:
                out.append(b)
        return tuple(out)

    elements = [((a, e), place(bodies)) for bodies, (a, e) in zip(specs, model.element_rows)]
    owner = np.zeros(nc, dtype=np.int64)
    for k, (a, e) in enumerate(model.element_rows):
        owner[a:e] = k
    entry_split = np.array([elements[owner[r]][1][specs[owner[r]].index(b)]
                            for r, b in zip(entry_rows, entry_bodies)], dtype=np.int64)
    w_rows, w_bodies, w_vals, row = [], [], [], nc
    for h in hubs:
        for c0, c1 in zip(copies[h], copies[h][1:]):
            elements.append(((row, row + nvb), (c0, c1)))
            for d in range(nvb):
                for c, sign in ((c0, 1.0), (c1, -1.0)):
                    w_rows.append(row + d)
                    w_bodies.append(c)
                    w_vals.append(sign * np.eye(nvb)[d])
            row += nvb
    return Split(nb_ext, row, np.asarray(body_of, dtype=np.int64), share, tuple(elements),
                 entry_split, np.asarray(w_rows, dtype=np.int64),
                 np.asarray(w_bodies, dtype=np.int64), np.asarray(w_vals).reshape(-1, nvb))


def _user_tree(model: Model, tree) -> Node:
    names = {n: k for k, n in enumerate(model.body_names)}
    names[GROUND] = model.n_bodies
    seen: list[int] = []

    def build(t) -> Node:
        if isinstance(t, str):
            if t not in names:
                raise ValueError(f"DCA tree: unknown body {t!r}; the model's bodies are "
                                 f"{', '.join(model.body_names)}; {TREE_HELP}")
            seen.append(names[t])
            b = names[t]
            return Node(frozenset() if b == model.n_bodies else frozenset([b]), body=b)
        if not isinstance(t, (tuple, list)) or len(t) != 2:
            raise ValueError(f"DCA tree: {t!r} is neither a body name nor a pair; {TREE_HELP}")
        a, b = build(t[0]), build(t[1])
        return Node(a.bodies | b.bodies, children=(a, b))

    root = build(tree)
    missing = sorted(set(range(model.n_bodies)) - set(seen))
    twice = sorted({b for b in seen if seen.count(b) > 1})
    if missing or twice:
        label = [*model.body_names, GROUND]
        what = (f"misses {', '.join(label[b] for b in missing)}" if missing
                else f"names {', '.join(label[b] for b in twice)} more than once")
        raise ValueError(f"DCA tree {what}; {TREE_HELP}")
    return root


def _post_order(root: Node) -> list[Node]:
    out, stack = [], [(root, False)]
    while stack:
        node, done = stack.pop()
        if done or node.children is None:
            out.append(node)
        else:
            stack += [(node, True), (node.children[1], False), (node.children[0], False)]
    return out


def _lca(nodes: list[Node]) -> Node:
    nodes = list(nodes)
    while len({id(n) for n in nodes}) > 1:
        deepest = max(n.depth for n in nodes)
        nodes = [n.parent if n.depth == deepest else n for n in nodes]
    return nodes[0]


def _pad(rows: list[list[int]], width: int, fill: int) -> np.ndarray:
    out = np.full((len(rows), width), fill, dtype=np.int64)
    for k, r in enumerate(rows):
        out[k, :len(r)] = r
    return out


@functools.lru_cache(maxsize=32)
def _cached_plan(key: "_Key") -> Plan:
    return _make_plan(key.model, key.tree)


class _Key:
    """The model's structure (what the plan depends on) as a hashable key."""

    def __init__(self, model: Model, tree):
        self.model, self.tree = model, tree
        self.value = (model.dim, model.n_bodies, model.body_names, model.row_order, tree,
                      tuple((s.name, s.bodies) for s in model.element_specs), model.element_rows,
                      tuple((type(g).__name__, np.asarray(g.bodies).tobytes()) for g in model.groups))

    def __hash__(self):
        return hash(self.value)

    def __eq__(self, other):
        return self.value == other.value


def make_plan(model: Model, tree=None) -> Plan:
    """The plan for `model` with the automatic tree (`tree=None`) or a given one (cached)."""
    return _cached_plan(_Key(model, tree))


# A flop of the tree's batched small factorizations (each group padded to its largest
# node) costs about this many flops of a dense LAPACK factorization of C. Measured with
# jmbs.solvability on the 2-core machine (repeat calls, seconds per estimated flop, tree
# over dense; hubs split, halves refined): random loops of 161 and 501 bodies 8.1 and 5.5
# (3.3e-9 and 1.2e-9 against 4.1e-10 and 2.2e-10), 60 bodies closed by 30 loops 6.2, a
# 171-body grid 6.8, the hub of 80 cranks and 80 links 20, the A02 chain (N = 80) 182:
# small plans cost the tree's fixed work per height. The larger ratio: picking the dense
# method where the tree would have been a little faster costs less than the reverse,
# because the tree compiles longer (first calls 4-9 s against 0.7-3 s up to 1,000 bodies).
TREE_FLOP_COST = 20.0


def node_flops(J: int, B: int, cols: int) -> int:
    """Estimated flops of one node's elimination, `J` connection and `B` handle rows of
    `cols` columns: the SVD of its connection rows, the update of its handle rows and
    their compression."""
    k = min(J, cols)
    return cols * (J * k + 2 * B * k + B * min(B, cols))


def plan_flops(plan: Plan) -> float:
    """Estimated flops of one factorization along the tree (every level's nodes padded
    to its largest)."""
    return float(sum(lev.n * node_flops(lev.J, lev.B, lev.cols) for lev in plan.levels))


def tree_pays(model: Model) -> bool:
    """Whether the defaults use the tree for `model`: from `STRUCTURED_MIN_NV` velocity
    coordinates on, unless its plan costs more than a dense factorization of `C`
    (`nc nv min(nc, nv)` flops) at `TREE_FLOP_COST` dense flops per tree flop: random
    loops, whose separators grow with the graph, and small models, where the tree's work
    per height dominates, stay dense."""
    if not structured(model):
        return False
    dense = float(model.nc) * model.nv * min(model.nc, model.nv)
    return TREE_FLOP_COST * plan_flops(make_plan(model)) < dense


def _make_plan(model: Model, tree) -> Plan:
    rows_all, bodies_all = block_layout(model)
    moving = bodies_all < model.n_bodies
    entry_pick = np.flatnonzero(moving)
    entry_rows, entry_bodies = rows_all[moving], bodies_all[moving]
    split = split_hubs(model, entry_rows, entry_bodies, tree is None)
    nb = split.n_bodies
    root = (_bisect(list(range(nb)), _graph(nb, [b for _, b in split.elements])) if tree is None
            else _user_tree(model, tree))
    nodes, leaves = _annotate(root)
    _place_rows(split, leaves)
    groups = _groups(nodes)
    levels = _levels(model.dim, split, groups, np.concatenate([entry_rows, split.weld_rows]),
                     np.concatenate([split.entry_bodies, split.weld_bodies]))
    # Element criteria: the element's wrench on each of its moving bodies, read at that
    # body's leaf (whose F rows are every row touching the body).
    pairs = []
    for k, ((a, b), bodies) in enumerate(split.elements[:len(model.element_specs)]):
        for x in sorted({x for x in bodies if x < nb}):
            leaf = leaves[x]
            pairs.append((k, leaf.index, [leaf.pos[r] for r in range(a, b)]))
    m_max = max((len(p[2]) for p in pairs), default=1)
    fill = levels[0].J + levels[0].B
    return Plan(model.dim, model.nc, model.nv, model.n_bodies, entry_rows, entry_bodies, entry_pick,
                tuple(levels), tuple(nodes),
                np.array([p[0] for p in pairs], dtype=np.int64),
                np.array([p[1] for p in pairs], dtype=np.int64),
                _pad([p[2] for p in pairs], m_max, fill), len(model.element_specs), split)


def _annotate(root: Node) -> tuple[list[Node], dict[int, Node]]:
    """The nodes in post-order with their depths and heights set, and the leaf of every body."""
    nodes = _post_order(root)
    leaves: dict[int, Node] = {}
    for node in reversed(nodes):  # parents before children: depths
        for c in node.children or ():
            c.parent, c.depth = node, node.depth + 1
    for node in nodes:  # children before parents: heights
        if node.children is None:
            leaves[node.body] = node
        else:
            node.height = 1 + max(c.height for c in node.children)
    return nodes, leaves


def _place_rows(split: Split, leaves: dict[int, Node]) -> None:
    """Each element is eliminated at the lowest node holding its moving bodies (and the
    ground, where the tree names it); below that, its rows are handle rows."""
    nb = split.n_bodies
    ground_leaf = leaves.get(nb)
    for (a, b), bodies in split.elements:
        at = [leaves[x] for x in sorted({x for x in bodies if x < nb})]
        if ground_leaf is not None and nb in bodies:
            at.append(ground_leaf)
        top = _lca(at)
        top.rows_J += range(a, b)
        for n in at:  # the paths below `top` are disjoint
            while n is not top:
                n.rows_B += range(a, b)
                n = n.parent


# Nodes of one height are factored together, padded to the largest, unless their sizes
# (rows) differ by more than this factor: a node whose handles are a large separator
# would pad every node of its height.
GROUP_SPREAD = 2.0


def _groups(nodes: list[Node]) -> list[list[Node]]:
    """The nodes in groups factored in one batched step each: all leaves first, then per
    height the nodes sorted by size and cut where a node's rows exceed `GROUP_SPREAD`
    times the smallest of its group (and 8). Sets each node's `level` and `index`."""
    by_height: dict[int, list[Node]] = {}
    for node in nodes:
        by_height.setdefault(node.height, []).append(node)
    def size(n: Node) -> int:
        return len(n.rows_J) + len(n.rows_B)

    groups = [by_height[0]]
    for h in sorted(by_height)[1:]:
        members = sorted(by_height[h], key=size)
        start = 0
        for k, n in enumerate(members):
            if size(n) > GROUP_SPREAD * max(8, size(members[start])):
                groups.append(members[start:k])
                start = k
        groups.append(members[start:])
    for g, group in enumerate(groups):
        for i, n in enumerate(group):
            n.level, n.index = g, i
    return groups


def _levels(dim: int, split: Split, groups: list[list[Node]], entry_rows, entry_bodies) -> list[Level]:
    """One `Level` per group: the nodes' rows (connection rows first, padded), and where
    each node's factor comes from (the blocks at the leaves, the children's handles
    above). `entry_*`: the blocks' rows and bodies in the split, `C`'s then the welds'."""
    nvb, P, nc = NV[dim], len(entry_rows), split.nc
    entry_of = {(int(r), int(b)): k for k, (r, b) in enumerate(zip(entry_rows, entry_bodies))}
    levels, widths = [], {}
    for h, group in enumerate(groups):
        J = max(len(n.rows_J) for n in group)
        B = max(len(n.rows_B) for n in group)
        rows = _pad([n.rows_J + [nc] * (J - len(n.rows_J)) + n.rows_B for n in group],
                    J + B, nc)
        for i, n in enumerate(group):
            n.pos = {int(r): k for k, r in enumerate(rows[i]) if r < nc}
        if h == 0:
            entries = np.full((len(group), J + B), P, dtype=np.int64)
            for i, n in enumerate(group):
                for k, r in enumerate(rows[i]):
                    entries[i, k] = entry_of.get((int(r), n.body), P)
            cols, sources, offset = nvb, (), 0
        else:
            entries = None
            sources = tuple(_sources(group, levels, rows, J + B, side) for side in (0, 1))
            offset = max(widths[src] for src, *_ in sources[0])
            cols = offset + max(widths[src] for src, *_ in sources[1])
        W = min(cols, B)
        widths[h] = W
        levels.append(Level(len(group), J, B, cols, W, rows, entries, sources, offset))
    return levels


def _sources(group: list[Node], levels: list[Level], rows, width: int, side: int) -> tuple:
    """Per source level, the nodes whose child on `side` sits there: `(level, node,
    child's index, up: where each of the node's rows is among the child's handles,
    down: where each handle is among the node's rows)`."""
    per_source = {}
    for i, n in enumerate(group):
        c = n.children[side]
        handle = {r: k for k, r in enumerate(c.rows_B)}
        up = [handle.get(int(r), levels[c.level].B) for r in rows[i]]
        down = [n.pos[r] for r in c.rows_B]
        down += [width] * (levels[c.level].B - len(down))
        per_source.setdefault(c.level, []).append((i, c.index, up, down))
    return tuple((src, *(np.array([x[k] for x in items], dtype=np.int64) for k in range(4)))
                 for src, items in sorted(per_source.items()))


@dataclasses.dataclass(frozen=True)
class AssemblyStep:
    """One step of the binary assembly (`jmbs.dca_assembly`).

    - `bodies`: the subassembly formed (one body for a leaf).
    - `parts`: the two subassemblies joined (`None` for a body).
    - `connection`: the elements eliminated here (joints between the parts, or a
      body's joints to the ground).
    - `G`: the connection matrix, paper 001's `T^T Phi_11 T` (eq. (22)) in the
      equilibrated coordinates with unit inertia (`m x m`, `m` the connection's rows).
    - `singular_values`: of `G`'s factor (`sqrt` of `G`'s eigenvalues), relative to the
      largest row norm of the equilibrated `C`; `rank`, `nullity`: decided with `rtol`.
      The nullity counts the reaction patterns that no load fixes, born at this step.
    - `handles`: the elements that still connect the subassembly to the rest.
    """

    height: int
    bodies: tuple[str, ...]
    parts: tuple[tuple[str, ...], tuple[str, ...]] | None
    connection: tuple[str, ...]
    G: np.ndarray
    singular_values: np.ndarray
    rank: int
    nullity: int
    handles: tuple[str, ...]


def assembly_steps(model: Model, plan: Plan, per_level, rtol: float) -> list[AssemblyStep]:
    """Host-side: the steps of `plan` from the connection factors of one analysis
    (`dca_decisions`' second output, NumPy), children before parents."""
    split = plan.split
    names = [model.body_names[b] for b in split.body_of] + [GROUND]

    def label(node: Node) -> tuple[str, ...]:
        if node.children is None:
            return (names[node.body],)
        bodies = tuple(dict.fromkeys(names[b] for b in sorted(node.bodies)))
        return bodies + ((GROUND,) if any(c.body == split.n_bodies for c in _post_order(node)) else ())

    def elements(rows) -> tuple[str, ...]:
        return tuple(dict.fromkeys(model.element_of_row(r) if r < model.nc
                                   else f"{names[split.weld_bodies[split.weld_rows == r][0]]} (weld)"
                                   for r in rows))

    steps = []
    for node in plan.nodes:
        FJ, s = per_level[node.level]
        m = len(node.rows_J)
        F = np.asarray(FJ[node.index, :m])
        sv = np.asarray(s[node.index, :min(m, F.shape[1])])
        rank = int(np.sum(sv > rtol))
        steps.append(AssemblyStep(node.height, label(node),
                                  None if node.children is None else tuple(label(c) for c in node.children),
                                  elements(node.rows_J), F @ F.T, sv, rank, m - rank,
                                  elements(node.rows_B)))
    return steps


def as_tree(tree):
    """Nested lists become tuples (the tree is a static, hashable field)."""
    if isinstance(tree, (list, tuple)):
        return tuple(as_tree(t) for t in tree)
    return tree


def dense_blocks(plan: Plan, C):
    """`C`'s moving-body blocks in the plan's entry order, gathered from the dense
    matrix (the layout `constraint_blocks(...)[plan.entry_pick]` gives directly)."""
    return gather_blocks(C, plan.entry_rows, plan.entry_bodies, NV[plan.dim])
