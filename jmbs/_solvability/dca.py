"""Divide-and-conquer (DCA) uniqueness analysis (paper 001), in a form that has no
restriction on where loops close.

The mechanism is assembled pairwise along a binary tree (`assembly_tree`). Every
node `K` (a body, or the subassembly of its children `A`, `B`) is known to its parent
only through its handles: the rows of `C` that connect it to the rest, and
`Psi_K = C_h P_K C_h^T`, the accelerations those rows' reactions give each other
(`P_K` the inverse inertia of `K` with its own joints in place: paper 001's
`T^T Phi T`). Joining `A` and `B` by the connection rows `J` (one joint, several,
or none) solves the connection's multipliers from `G = Psi_A,JJ + Psi_B,JJ`
(eq. (22), at every level rather than at the ground only), and passes on
`Psi_K = Psi_hh - Psi_hJ G^+ Psi_Jh` (eq. (7), with the pseudo-inverse: `U` may be
singular). Both are kept as factors `Psi = L L^T` and decided by SVD, so ranks are
decided on singular values of `C`'s scale, not on their squares.

`null(G)` at a node are the reaction patterns born there: multipliers of the
connection that accelerate nothing. Back-substitution (the DCA's last pass) carries
each down through the subassemblies, where it is balanced by their internal
reactions; together they span every indeterminate reaction pattern (`null(C^T)`).
A component is unique when no pattern reaches it; an element or group when the
patterns' wrench on every body vanishes, `C_X^T N_X = 0`, evaluated body by body at
the leaves. The paper's propagation rules (Steps 3-8: a body with one joint, a body
with two handles) are the special cases of this pass. Decisions are taken on the
equilibrated matrix with a unit inertia per equilibrated coordinate: the patterns do
not depend on the masses, and a massless body is no exception.

Costs follow the tree: each node works on its connection and handle rows only, so a
chain or a ladder costs O(n), and every height of the tree is one batched step.
"""

import functools
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._assembly import constraint_blocks
from .._bodies import NV
from .._linalg import (
    CRITERION_TOL,
    RANK_RTOL,
    TINY,
    compress_factor,
    decades,
    jacobi_svd,
    pad_cols,
    rank_decision,
    small_svd,
)
from .._misc import RunOnce, as_float
from .._model import Model
from .._rank import NOISE, RUIZ_ITERATIONS, positive_or_one
from .._tree.plan import Plan, as_tree, dense_blocks, make_plan
from .._tree.routes import children_factors, flat_handles, plan_routes
from .._tree.solve import split_blocks
from .base import AbstractSolvabilityMethod, Decisions


class DCA(AbstractSolvabilityMethod):
    """Divide-and-conquer method (paper 001): the reaction patterns that no load can
    fix are found subassembly by subassembly along a binary assembly tree, at a cost
    that grows with the tree (O(n) for chains and ladders) rather than with the
    whole matrix (O(n^3)).

    **Arguments:**
    - `rtol`: singular values of a connection below `rtol` times the largest row norm
      of the equilibrated `C` count as zero.
    - `ctol`: tolerance of the uniqueness criteria.
    - `tree`: the assembly tree as nested pairs of body names, e.g.
      `(("crank", "coupler"), "rocker")`; `"ground"` may appear once (then the ground
      joints are eliminated where the ground joins, as in the paper's last step).
      Default: balanced, by recursive bisection of the body graph.
    - `jacobi_svd`: decompose the connections of more than two rows by one-sided Jacobi
      (`jmbs.internal.jacobi_svd`, element-wise over a batch) rather than by LAPACK
      (cuSOLVER on a GPU). Default: on an accelerator, where it is the faster (the
      mobile robot's sweep on one H200: the batched 7 x 14 SVD was half of the time).
    """

    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    ctol: float = eqx.field(converter=as_float, default=CRITERION_TOL)
    tree: Any = eqx.field(static=True, default=None, converter=as_tree)
    plan: Plan | None = eqx.field(static=True, default=None, repr=False)
    jacobi_svd: bool | None = eqx.field(static=True, default=None)
    name: ClassVar[str] = "dca"

    def bind(self, model: Model) -> "DCA":
        return DCA(self.rtol, self.ctol, self.tree, make_plan(model, self.tree), self.jacobi_svd)

    def _plan(self, nc: int, nv: int) -> Plan:
        if self.plan is None:
            raise ValueError("jmbs.DCA needs the model's structure: pass it to jmbs.solvability, "
                             "jmbs.solvability_sweep or jmbs.solvability_decisions (they bind it), "
                             "or call DCA().bind(model) first")
        if (nc, nv) != (self.plan.nc, self.plan.nv):
            raise ValueError(f"jmbs.DCA was bound to a model with C of shape ({self.plan.nc}, "
                             f"{self.plan.nv}) but is given one of shape ({nc}, {nv}): it analyses "
                             "the whole constraint matrix of the model it was bound to (for the "
                             "reactions of a model with compliant elements use uniqueness='nullspace')")
        return self.plan

    def decide(self, C, sets):
        plan = self._plan(*C.shape)
        return dca_decisions(plan, dense_blocks(plan, C), self.rtol, self.ctol, sets,
                             self.jacobi_svd)[0]

    def evaluate(self, model: Model, q, t, sets=None, C=None):
        """Decisions at `(q, t)` from `C`'s blocks (no dense matrix, a given `C` is not
        read); `sets=None`: the elements."""
        return self.run(model, q, t, sets)[0]

    def decisions_at(self, model: Model, q, t, sets=None):
        return jax.device_get(_evaluate(self, model, q, t, sets))

    def decisions_batch(self, model: Model, qs, ts):
        return _evaluate_batch(self, model, qs, ts)

    def run(self, model: Model, q, t, sets=None):
        """`(decisions, per height (connection factors, relative singular values))` at `(q, t)`."""
        plan = self._plan(model.nc, model.nv)
        vals = scaled_blocks(plan, constraint_blocks(model, q, t)[plan.entry_pick],
                             model.characteristic_lengths())
        return dca_decisions(plan, vals, self.rtol, self.ctol, sets, self.jacobi_svd)


# One configuration's report (`jmbs.solvability`): evaluated on the host for a structure's
# first calls, then compiled as run-once (first call 0.2-0.9 s at every shape up to 1,001
# bodies; the batched sweeps keep XLA's optimizations).
@RunOnce
def _evaluate(method: DCA, model: Model, q, t, sets):
    return method.evaluate(model, q, t, sets)


@eqx.filter_jit
def _evaluate_batch(method: DCA, model: Model, qs, ts) -> Decisions:
    return jax.vmap(lambda q, t: method.evaluate(model, q, t))(qs, ts)


def scaled_blocks(plan: Plan, vals, L):
    """`equilibrate.scaled` on `C`'s moving-body blocks (the same scaling, entry by entry)."""
    nvb, d, nb = NV[plan.dim], plan.dim, plan.n_bodies
    rows, bodies = plan.entry_rows, plan.entry_bodies
    col = jnp.concatenate([jnp.ones((nb, d)), jnp.broadcast_to(1.0 / L[:, None], (nb, nvb - d))],
                          axis=1)

    def row_max(X):
        return jax.ops.segment_max(jnp.max(jnp.abs(X), axis=1), rows, num_segments=plan.nc)

    X = vals * col[bodies]
    X = X * (1.0 / positive_or_one(row_max(X)))[rows][:, None]
    X = jnp.where(jnp.abs(X) < NOISE, 0.0, X)
    for _ in range(RUIZ_ITERATIONS):
        cmax = jax.ops.segment_max(jnp.abs(X), bodies, num_segments=nb)
        X = X * (1.0 / jnp.sqrt(positive_or_one(cmax)))[bodies]
        X = X * (1.0 / jnp.sqrt(positive_or_one(row_max(X))))[rows][:, None]
    return X


def dca_decisions(plan: Plan, vals, rtol: float, ctol: float, sets=None, jacobi: bool | None = None):
    """The decisions from the equilibrated blocks `vals` (`(P, nv_b)`, the plan's
    block rows) and, for the assembly record, per height the connections' factors
    (`G = F_J F_J^T`) and singular values relative to the reference. `jacobi`: as
    `DCA.jacobi_svd` (None: on an accelerator)."""
    nc = plan.nc
    ref = jnp.sqrt(jnp.max(jax.ops.segment_sum(jnp.sum(vals**2, axis=1), plan.entry_rows,
                                               num_segments=nc), initial=0.0))
    ref = jnp.maximum(ref, TINY)
    if jacobi is None:
        jacobi = jax.default_backend() != "cpu"
    passes = _upward(plan, vals, rtol * ref, jacobi)
    comp, leaf_F, leaf_Y, maps = _downward(plan, passes, sets is not None and _hub_sums(plan) is not None)
    crit = _criteria(plan, leaf_F, leaf_Y, sets, maps)
    s_all = jnp.concatenate([(s / ref).ravel() for _, _, s, _, _ in passes])
    # The connections' kept values (`s > rtol * ref`) are exactly the rule's on all of
    # them; the hubs' welds add `weld_rank` values (the largest dropped from the record).
    weld = plan.weld_rank
    kmin = min(nc, plan.nv) + weld
    rd = rank_decision(jnp.sort(jnp.concatenate([s_all, jnp.zeros(kmin)]))[::-1][:kmin], rtol, 1.0)
    dec = Decisions(rd.rank - weld, rd.rel[weld:], rd.margin, crit <= ctol, crit, decades(crit, ctol),
                    jnp.full(crit.shape, -1), comp <= ctol, comp, decades(comp, ctol))
    return dec, [(F[:, :lev.J], s / ref) for lev, (F, _, s, _, _) in zip(plan.levels, passes)]


def _upward(plan: Plan, vals, tol, jacobi: bool):
    """The main pass: per height `(F, U, s, keep, V_r)`, the factor of each node's handle
    matrix and its connection's SVD, the values above `tol` kept."""
    vals_ext = split_blocks(plan, vals)
    handles, passes = {}, []
    for h, lev in enumerate(plan.levels):
        F = vals_ext[lev.entries] if h == 0 else children_factors(plan, h, handles)
        FJ, FK = F[:, :lev.J], F[:, lev.J:]
        if lev.J and lev.cols:
            if jacobi and 2 < lev.J <= lev.cols:
                U, s, Vh = jacobi_svd(FJ)
            else:
                U, s, Vh = small_svd(FJ, full_matrices=True)
            keep = s > tol
            Vr = Vh[:, :s.shape[1]].mT * keep[:, None, :]
            FK = FK - (FK @ Vr) @ Vr.mT
        else:
            U = jnp.broadcast_to(jnp.eye(lev.J), (lev.n, lev.J, lev.J))
            s, keep = jnp.zeros((lev.n, 0)), jnp.zeros((lev.n, 0), bool)
            Vr = jnp.zeros((lev.n, lev.cols, 0))
        handles[h] = flat_handles(compress_factor(FK, lev.W), lev)
        passes.append((F, U, s, keep, Vr))
    return passes


def _downward(plan: Plan, passes, with_maps: bool = False):
    """Back-substitution: the patterns reaching each node's handles, as a factor `X`
    (only `X X^T` matters), gathered from the parents' `Y`; at each connection those
    inherited, solved through `G^+`, and those born there (`null(G)`). Returns the
    components' criteria `(nc,)`, the leaves' `F` and `Y`, and (`with_maps`) per height
    the maps `Q` from each node's basis to its parent's (`compress_factor`'s; else None)."""
    routes = plan_routes(plan)
    ys, norms, maps = {}, {}, {}
    for h in reversed(range(len(plan.levels))):
        lev = plan.levels[h]
        F, U, s, keep, Vr = passes[h]
        heights, idx = routes.down[h]
        if heights:
            w = max(ys[x].shape[1] for x in heights)
            X = jnp.concatenate([pad_cols(ys[x], w) for x in heights])[idx]
            X, maps[h] = compress_factor(X, lev.B, True) if with_maps else (compress_factor(X, lev.B), None)
        else:
            X = jnp.zeros((lev.n, lev.B, lev.B))
        k = s.shape[1]
        null = jnp.concatenate([~keep, jnp.ones((lev.n, lev.J - k), bool)], axis=1)
        born = U * null[:, None, :]
        coef = (Vr.mT @ F[:, lev.J:].mT @ X) * jnp.where(keep, 1.0 / jnp.where(keep, s, 1.0),
                                                              0.0)[:, :, None]
        inherited = -U[:, :, :k] @ coef
        Y = jnp.concatenate([jnp.concatenate([inherited, born], axis=2),
                             jnp.concatenate([X, jnp.zeros((lev.n, lev.B, lev.J))], axis=2)], axis=1)
        # per row (J + B + 1 per node, as `routes.rows` reads them): the connection rows' norms
        norms[h] = jnp.pad(jnp.linalg.norm(Y[:, :lev.J], axis=2), ((0, 0), (0, lev.B + 1))).ravel()
        ys[h] = jnp.concatenate([Y, jnp.zeros((lev.n, 1, Y.shape[2]))], axis=1).reshape(
            lev.n * (lev.J + lev.B + 1), Y.shape[2])
        if h == 0:
            leaf_F, leaf_Y = F, Y
    comp = jnp.concatenate([norms[h] for h in range(len(plan.levels))])[routes.rows]
    return comp, leaf_F, leaf_Y, maps if with_maps else None


def _criteria(plan: Plan, leaf_F, leaf_Y, sets, maps):
    """The wrench of the patterns on each body, at the body's leaf (whose F rows are all
    the rows acting on it): `||C_X,b^T N_X||` summed over bodies, per element
    (`sets=None`: an element acts on one copy of a hub, its wrench there is basis-free)
    or per given set, whose rows may act on several copies of a split hub: their
    wrenches are summed in common bases (`_hub_wrenches`), not leaf by leaf."""
    if sets is None:
        F0 = jnp.concatenate([leaf_F, jnp.zeros((leaf_F.shape[0], 1, leaf_F.shape[2]))], axis=1)
        Y0 = jnp.concatenate([leaf_Y, jnp.zeros((leaf_Y.shape[0], 1, leaf_Y.shape[2]))], axis=1)
        Fp = F0[plan.pair_leaf[:, None], plan.pair_slots]
        Yp = Y0[plan.pair_leaf[:, None], plan.pair_slots]
        per_pair = jnp.sum(jnp.einsum("prc,prw->pcw", Fp, Yp) ** 2, axis=(1, 2))
        return jnp.sqrt(jax.ops.segment_sum(per_pair, plan.pair_element,
                                            num_segments=plan.n_elements))
    sets = jnp.asarray(sets)  # rows of C; the welds' and the padding's belong to none
    ext = jnp.pad(sets, ((0, 0), (0, plan.split.nc - plan.nc + 1)))
    rows0 = plan.levels[0].rows
    hubs = _hub_sums(plan)
    alone = np.ones(plan.levels[0].n, bool)
    if hubs:
        alone[hubs[0][0]] = False

    def crit2_of(mask):
        wrench = jnp.einsum("br,brc,brw->bcw", mask[rows0].astype(leaf_F.dtype), leaf_F, leaf_Y)
        crit2 = jnp.sum(wrench[alone] ** 2)
        return crit2 + (_hub_wrenches(plan, hubs, maps, wrench) if hubs else 0.0)

    return jnp.sqrt(jax.lax.map(crit2_of, ext))


@functools.lru_cache(maxsize=64)
def _hub_sums(plan: Plan):
    """Where the split hubs' wrenches are summed (host-side, per plan): per height, the
    `(node, hub)` pairs on the paths from a hub's copies (leaves) to the root, as
    `(nodes, is_root, inputs)`, `inputs` per lower height `(child pairs, pair here)`
    positions. None without split hubs."""
    levels = plan.levels
    leaves = sorted((n for n in plan.nodes if n.children is None), key=lambda n: n.index)
    body_of = np.append(plan.split.body_of, plan.n_bodies)
    copies: dict[int, list] = {}
    for leaf in leaves:
        copies.setdefault(int(body_of[leaf.body]), []).append(leaf)
    pairs = [dict() for _ in levels]  # per height: (node index, hub) -> position
    inputs = [dict() for _ in levels]  # per height: lower height -> [(child pos, pos)]

    def pos(node, hub):
        return pairs[node.level].setdefault((node.index, hub), len(pairs[node.level]))

    for hub, leaves_of in copies.items():
        if len(leaves_of) < 2:
            continue
        for node in leaves_of:
            pos(node, hub)
            while node.parent is not None:
                parent, known = node.parent, (node.parent.index, hub) in pairs[node.parent.level]
                inputs[parent.level].setdefault(node.level, []).append((pos(node, hub), pos(parent, hub)))
                if known:
                    break
                node = parent
    if not pairs[0]:
        return None
    parent_of = {(n.level, n.index): n.parent for n in plan.nodes}
    return tuple((np.array([i for i, _ in p], dtype=np.int64),
                  np.array([parent_of[h, i] is None for i, _ in p]),
                  tuple((x, *map(np.array, zip(*io))) for x, io in sorted(inputs[h].items())))
                 for h, p in enumerate(pairs))


def _hub_wrenches(plan: Plan, hubs, maps, wrench) -> Array:
    """The split hubs' squared wrenches: per height, each `(node, hub)` pair's sum of its
    children's, taken to the node's basis (`Q^T`, `compress_factor`'s); the patterns born at a
    node reach only its subtree, so their columns are complete there and counted; a
    root's remaining columns too."""
    total, acc = 0.0, {}
    for h, (nodes, is_root, inputs) in enumerate(hubs):
        lev = plan.levels[h]
        if h == 0:
            a = wrench[nodes]
        else:
            a = jnp.zeros((len(nodes), wrench.shape[1], lev.B + lev.J))
            for x, child, here in inputs:
                up = jnp.einsum("tcb,twb->tcw", acc[x][child][:, :, :plan.levels[x].B],
                                maps[x][hubs[x][0][child]])
                a = a.at[here].add(up[:, :, :lev.B + lev.J])
        acc[h] = a
        if len(nodes):
            total = total + jnp.sum(a[:, :, lev.B:] ** 2) + jnp.sum(a[is_root, :, :lev.B] ** 2)
    return total
