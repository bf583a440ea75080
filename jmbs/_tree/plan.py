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
"""

import dataclasses
import functools
import math
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

    @property
    def root(self) -> Node:
        return self.nodes[-1]


def _graph(model: Model) -> list[set]:
    nb = model.n_bodies
    adj = [set() for _ in range(nb)]
    for spec in model.element_specs:
        moving = [b for b in spec.bodies if b < nb]
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


# A body joined to this many others of its subassembly is a hub (a coupler on many
# cranks, a platform on many legs): `_hub_tree` assembles it part by part.
HUB_DEGREE = 8


def _bisect(bodies: list[int], adj) -> Node:
    if len(bodies) == 1:
        return Node(frozenset(bodies), body=bodies[0])
    members = set(bodies)
    hub = max(bodies, key=lambda b: (len(adj[b] & members), -b))
    if len(adj[hub] & members) >= HUB_DEGREE:
        return _hub_tree(hub, members, adj)
    order = _level_order(bodies, adj)
    half = len(order) // 2
    return Node(frozenset(bodies), children=(_bisect(order[:half], adj), _bisect(order[half:], adj)))


def _hub_tree(hub: int, members: set, adj) -> Node:
    """The hub joined to the parts that remain without it, a batch of parts at a time
    (smallest first, about sqrt(n) bodies a batch): each join eliminates the batch's
    joints to the hub, so the subassembly that holds the hub keeps its own few degrees of
    freedom, and only the parts not joined yet wait as handles. Splitting the parts
    from the hub instead (`_level_order`'s halves) would pass the hub's hundreds of rows
    up the whole tree with the parts' degrees of freedom as columns."""
    rest, parts = members - {hub}, []
    while rest:
        part = _bfs(min(rest), rest, adj)
        parts.append(part)
        rest -= set(part)
    parts.sort(key=len)
    size = max(1, math.isqrt(len(members) - 1))
    node, batch = Node(frozenset([hub]), body=hub), []
    for k, part in enumerate(parts):
        batch += part
        if len(batch) >= size or k == len(parts) - 1:
            sub = _bisect(batch, adj)
            node = Node(node.bodies | sub.bodies, children=(node, sub))
            batch = []
    return node


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
# jmbs.solvability on the 2-core machine (repeat calls, seconds per estimated flop; the
# hub trees of `_hub_tree`): couplers on 50/100/300 cranks carrying chains of 30/60/200
# links, tree 6.0e-9/8.8e-9/5.0e-9 against dense 1.0e-9/4.1e-10/3.2e-10 (ratios 6, 21,
# 16); the A02 chain, dense 7.3e-10 (N = 40) and 3.1e-10 (N = 160). The larger ratios:
# picking the dense method where the tree would have been a little faster costs less
# than the reverse (the tree also compiles longer: 16.7 s against 2.5 s for the 501-body
# hub, whose repeat calls take 1.09 s on the tree and 1.14 s dense).
TREE_FLOP_COST = 20.0


def plan_flops(plan: Plan) -> float:
    """Estimated flops of one factorization along the tree: per level, the padded SVD of
    each node's connection rows, the update of its handle rows and their compression."""
    total = 0.0
    for lev in plan.levels:
        k = min(lev.J, lev.cols)
        total += lev.n * lev.cols * (lev.J * k + 2 * lev.B * k + lev.B * min(lev.B, lev.cols))
    return total


def tree_pays(model: Model) -> bool:
    """Whether the defaults use the tree for `model`: from `STRUCTURED_MIN_NV` velocity
    coordinates on, unless its plan costs more than a dense factorization of `C`
    (`nc nv min(nc, nv)` flops) at `TREE_FLOP_COST` dense flops per tree flop: a hub (one
    body joined to hundreds) keeps its hundreds of rows as handles until each part is
    joined to it, and the tree loses its O(n) (a coupler on 100 cranks carrying a 60-link
    chain: the tree 65 ms, the dense null space 50 ms)."""
    if not structured(model):
        return False
    dense = float(model.nc) * model.nv * min(model.nc, model.nv)
    return TREE_FLOP_COST * plan_flops(make_plan(model)) < dense


def _make_plan(model: Model, tree) -> Plan:
    nb = model.n_bodies
    root = _bisect(list(range(nb)), _graph(model)) if tree is None else _user_tree(model, tree)
    nodes, leaves = _annotate(root)
    _place_rows(model, leaves)
    groups = _groups(nodes)
    rows_all, bodies_all = block_layout(model)
    moving = bodies_all < nb
    entry_pick = np.flatnonzero(moving)
    entry_rows, entry_bodies = rows_all[moving], bodies_all[moving]
    levels = _levels(model, groups, entry_rows, entry_bodies)
    # Element criteria: the element's wrench on each of its moving bodies, read at that
    # body's leaf (whose F rows are every row touching the body).
    pairs = []
    for k, (spec, (a, b)) in enumerate(zip(model.element_specs, model.element_rows)):
        for x in sorted({x for x in spec.bodies if x < nb}):
            leaf = leaves[x]
            pairs.append((k, leaf.index, [leaf.pos[r] for r in range(a, b)]))
    m_max = max((len(p[2]) for p in pairs), default=1)
    fill = levels[0].J + levels[0].B
    return Plan(model.dim, model.nc, model.nv, nb, entry_rows, entry_bodies, entry_pick,
                tuple(levels), tuple(nodes),
                np.array([p[0] for p in pairs], dtype=np.int64),
                np.array([p[1] for p in pairs], dtype=np.int64),
                _pad([p[2] for p in pairs], m_max, fill), len(model.element_specs))


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


def _place_rows(model: Model, leaves: dict[int, Node]) -> None:
    """Each element is eliminated at the lowest node holding its moving bodies (and the
    ground, where the tree names it); below that, its rows are handle rows."""
    nb = model.n_bodies
    ground_leaf = leaves.get(nb)
    for spec, (a, b) in zip(model.element_specs, model.element_rows):
        at = [leaves[x] for x in sorted({x for x in spec.bodies if x < nb})]
        if ground_leaf is not None and nb in spec.bodies:
            at.append(ground_leaf)
        top = _lca(at)
        top.rows_J += range(a, b)
        for n in at:  # the paths below `top` are disjoint
            while n is not top:
                n.rows_B += range(a, b)
                n = n.parent


# Nodes of one height are factored together, padded to the largest, unless their sizes
# (rows) differ by more than this factor: a hub (one body joined to hundreds) keeps its
# hundreds of handle rows up to the root, and would pad every node of those heights.
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


def _levels(model: Model, groups: list[list[Node]], entry_rows, entry_bodies) -> list[Level]:
    """One `Level` per group: the nodes' rows (connection rows first, padded), and where
    each node's factor comes from (the blocks at the leaves, the children's handles above)."""
    nvb, P = NV[model.dim], len(entry_rows)
    entry_of = {(int(r), int(b)): k for k, (r, b) in enumerate(zip(entry_rows, entry_bodies))}
    levels, widths = [], {}
    for h, group in enumerate(groups):
        J = max(len(n.rows_J) for n in group)
        B = max(len(n.rows_B) for n in group)
        rows = _pad([n.rows_J + [model.nc] * (J - len(n.rows_J)) + n.rows_B for n in group],
                    J + B, model.nc)
        for i, n in enumerate(group):
            n.pos = {int(r): k for k, r in enumerate(rows[i]) if r < model.nc}
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
    names = [*model.body_names, GROUND]

    def label(node: Node) -> tuple[str, ...]:
        if node.children is None:
            return (names[node.body],)
        return tuple(names[b] for b in sorted(node.bodies)) + (
            (GROUND,) if any(c.body == model.n_bodies for c in _post_order(node)) else ())

    def elements(rows) -> tuple[str, ...]:
        return tuple(dict.fromkeys(model.element_of_row(r) for r in rows))

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
