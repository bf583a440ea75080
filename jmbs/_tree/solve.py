"""Constrained solves along the assembly tree: `M a + C^T lam = f`, `C a = g` in O(n).

The same tree as the divide-and-conquer analysis (`plan.py`),
now with the bodies' real inverse inertia: a block elimination of the multipliers in
the tree's static order (nested dissection of `C M^-1 C^T`, Featherstone's
divide-and-conquer dynamics in absolute coordinates). Every node `K` is known to its
parent by its handle rows `h` only, through

    contribution of K's bodies to `C_h a`  =  beta_h - Psi_h lam_h,

`Psi_h = L L^T` (what the handles' multipliers do to each other, K's own joints in
place) and `beta_h` (what the loads and K's own constraints give). Joining `A` and `B`
by the connection rows `J` solves `G lam_J = beta_J - g_J - Psi_JK lam_K` with
`G = F_J F_J^T` by the SVD of the factor `F_J` (singular values of `C`'s scale, not
their squares), keeping its leading `rank` values (decided once, at a configuration on
the constraints, like the dense formulations' rank) or those above a tolerance (the
projection), and passes on `beta_K - F_K V_r S_r^-1 U_r^T (beta_J - g_J)` and
`F_K (I - V_r V_r^T)`. The way down solves each connection's multipliers from its
handles' and, at the leaves, `a_b = M_b^-1 (f_b - C_b^T lam)`.

The factorization (`factor`: SVDs, O(n) for chains and ladders, one batched step per
height of the tree) depends on `C` and `M` only; `apply` (matrix-vector products) on
the right-hand sides. Derivatives (`solve`'s JVP) reuse the factorization: the tangent
solves the same system with the tangent right-hand side (implicit differentiation;
exact for `a` and the unique multipliers).

Redundant rows are harmless: `lam` is a particular solution (nested pseudo-inverses,
not the global minimum-norm one), exact in every unique component; `a` is unique.
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._bodies import NV
from .._linalg import compress_factor, small_svd
from .plan import Level, Plan


@functools.lru_cache(maxsize=64)
def leaf_bodies(plan: Plan) -> np.ndarray:
    """The body of each leaf in the leaves' order, in the split (`plan.split`; its
    `n_bodies` for a ground leaf)."""
    leaves = sorted((n for n in plan.nodes if n.children is None), key=lambda n: n.index)
    return np.array([n.body for n in leaves], dtype=np.int64)


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
      arrays concatenated; `leaf_of_body`: per body, its leaf.
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
        # multiplier arrays of all heights), and each body's leaf.
        offsets = np.cumsum([0] + [lev.n * (lev.J + lev.B + 1) for lev in levels])
        self.rows = np.zeros(plan.nc, dtype=np.int64)
        for h, lev in enumerate(levels):
            width = lev.J + lev.B + 1
            for i in range(lev.n):
                for k in range(lev.J):
                    if lev.rows[i, k] < plan.nc:
                        self.rows[lev.rows[i, k]] = offsets[h] + i * width + k
        self.leaf_of_body = np.argsort(leaf_bodies(plan))[:plan.n_bodies]


@functools.lru_cache(maxsize=64)
def plan_routes(plan: Plan) -> _Routes:
    """The plan's `_Routes` (built once per plan)."""
    return _Routes(plan)


def pad_cols(X, width: int):
    """`X` (2-D) zero-padded to `width` columns."""
    return jnp.pad(X, ((0, 0), (0, width - X.shape[1])))


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


class Step(eqx.Module):
    """One height of the factorization, from the SVD `F_J = U S V^T` of every node's
    connection factor: `P = S_r^-1 U_r^T` (zero rows for the values not kept) and
    `Q = F_K V_r`, so that `lam_J = P^T (P (beta_J - g_J) - Q^T lam_K)` and the handles'
    bias passed on is `beta_K - Q P (beta_J - g_J)`."""

    P: Array
    Q: Array

    def ranks(self) -> Array:
        """The number of kept singular values per node."""
        return jnp.sum(jnp.any(self.P != 0, axis=2), axis=1)


class Factor(eqx.Module):
    """The factorization of `[M C^T; C 0]` along the tree: per leaf `S` (`S S^T = M_b^-1`)
    and `F = C_b S` (every row acting on the body), and one `Step` per height."""

    S: Array
    F: Array
    steps: tuple[Step, ...]


def split_blocks(plan: Plan, vals: Array) -> Array:
    """`C`'s blocks (`(P, nv_b)`, the plan's order) followed by the hubs' welds' and a zero
    block (padding): the blocks that the leaves' index arrays read."""
    return jnp.concatenate([vals, jnp.asarray(plan.split.weld_vals, vals.dtype),
                            jnp.zeros((1, vals.shape[1]), vals.dtype)])


def _whitening(plan: Plan, body_mass: Array) -> Array:
    """`S_b = L_b^-T` per leaf (`M_b = L_b L_b^T`, a hub's copies each their share), zero
    for a ground leaf."""
    nvb = body_mass.shape[-1]
    split = plan.split
    if plan.weld_rank:  # hubs split: no gather otherwise (every evaluation passes here)
        body_mass = body_mass[split.body_of] * split.share[:, None, None]
    L = jnp.linalg.cholesky(body_mass)
    S = jax.scipy.linalg.solve_triangular(L, jnp.broadcast_to(jnp.eye(nvb), L.shape), lower=True).mT
    return jnp.concatenate([S, jnp.zeros((1, nvb, nvb))])[leaf_bodies(plan)]


def reference(plan: Plan, F0: Array) -> Array:
    """The largest row norm of `C M^-1/2` (the scale of the singular values)."""
    rows0 = plan.levels[0].rows
    per_row = jax.ops.segment_sum(jnp.sum(F0**2, axis=2).ravel(), rows0.ravel(),
                                  num_segments=plan.split.nc + 1)[:plan.nc]
    return jnp.sqrt(jnp.max(per_row, initial=0.0))


@functools.partial(jax.jit, static_argnums=0)
def factor(plan: Plan, vals: Array, body_mass: Array, ranks=None, rtol=None) -> Factor:
    """Factorize along the tree. `vals`: `C`'s moving-body blocks in the plan's order
    (`(P, nv_b)`); `body_mass`: `(n_bodies, nv_b, nv_b)`. Kept singular values per
    connection: the leading `ranks[h][node]` (a tuple of integer arrays, one per height),
    or with `ranks=None` those above `rtol` times the largest row norm of `C M^-1/2`."""
    S = _whitening(plan, body_mass)
    vals_ext = split_blocks(plan, vals)
    handles, steps, tol = {}, [], None
    for h, lev in enumerate(plan.levels):
        if h == 0:
            F = vals_ext[lev.entries] @ S
            if ranks is None:
                tol = rtol * reference(plan, F)
        else:
            F = children_factors(plan, h, handles)
        FJ, FK = F[:, :lev.J], F[:, lev.J:]
        k = min(lev.J, lev.cols)
        if k:
            U, s, Vh = small_svd(FJ)
            keep = (jnp.arange(k)[None, :] < ranks[h][:, None]) if ranks is not None else s > tol
            Vr = Vh.mT * keep[:, None, :]
            Q = FK @ Vr
            FK = FK - Q @ Vr.mT
            P = U.mT * jnp.where(keep, 1.0 / jnp.where(keep, s, 1.0), 0.0)[:, :, None]
        else:
            P, Q = jnp.zeros((lev.n, 0, lev.J)), jnp.zeros((lev.n, lev.B, 0))
        handles[h] = flat_handles(compress_factor(FK, lev.W), lev)
        steps.append(Step(P, Q))
        if h == 0:
            F0 = F
    return Factor(S, F0, tuple(steps))


@functools.partial(jax.jit, static_argnums=0)
def apply(plan: Plan, fac: Factor, f: Array, g: Array) -> tuple[Array, Array]:
    """`(a, lam)` for the right-hand sides `f` (`(nv,)`, body order) and `g` (`(nc,)`)."""
    nvb, nb, routes, split = NV[plan.dim], plan.n_bodies, plan_routes(plan), plan.split
    f_split = f.reshape(nb, nvb)
    if plan.weld_rank:  # a split hub's load shared by its copies
        f_split = f_split[split.body_of] * split.share[:, None]
    f_leaf = jnp.concatenate([f_split, jnp.zeros((1, nvb))])[leaf_bodies(plan)]
    a0 = jnp.einsum("nij,ni->nj", fac.S, f_leaf)  # S^T f
    g_ext = jnp.concatenate([g, jnp.zeros(split.nc - plan.nc + 1)])  # the welds: no motion

    # Upward: the handles' biases; each connection's multipliers in terms of its handles'.
    betas, coefs = {}, []
    for h, (lev, st) in enumerate(zip(plan.levels, fac.steps)):
        if h == 0:
            beta = jnp.einsum("nrc,nc->nr", fac.F, a0)
        else:
            beta = sum(jnp.concatenate([betas[x] for x in heights])[idx]
                       for heights, idx in routes.up[h])
        coef = jnp.einsum("nkj,nj->nk", st.P, beta[:, :lev.J] - g_ext[lev.rows[:, :lev.J]])
        beta_K = beta[:, lev.J:] - jnp.einsum("nbk,nk->nb", st.Q, coef)
        betas[h] = jnp.concatenate([beta_K, jnp.zeros((lev.n, 1))], axis=1).ravel()
        coefs.append(coef)

    # Downward: the connections' multipliers from their handles', then the accelerations.
    nodes = {}
    for h in reversed(range(len(plan.levels))):
        lev, st = plan.levels[h], fac.steps[h]
        heights, idx = routes.down[h]
        lam_K = (jnp.concatenate([nodes[x] for x in heights])[idx] if heights
                 else jnp.zeros((lev.n, lev.B)))
        lam_J = jnp.einsum("nkj,nk->nj", st.P, coefs[h] - jnp.einsum("nbk,nb->nk", st.Q, lam_K))
        node = jnp.concatenate([lam_J, lam_K], axis=1)
        nodes[h] = jnp.concatenate([node, jnp.zeros((lev.n, 1))], axis=1).ravel()
    a_leaf = jnp.einsum("nij,nj->ni", fac.S, a0 - jnp.einsum("nrc,nr->nc", fac.F, node))
    lam = jnp.concatenate([nodes[h] for h in range(len(plan.levels))])[routes.rows]
    return a_leaf[routes.leaf_of_body].ravel(), lam


def _blocks_products(plan: Plan, dvals: Array, a: Array, lam: Array):
    """`(dC a, dC^T lam)` from blocks `dvals` in the plan's order."""
    nvb, nb = NV[plan.dim], plan.n_bodies
    a_ext = jnp.concatenate([a.reshape(nb, nvb), jnp.zeros((1, nvb))])
    dCa = jax.ops.segment_sum(jnp.sum(dvals * a_ext[plan.entry_bodies], axis=1), plan.entry_rows,
                              num_segments=plan.nc)
    dCtl = jax.ops.segment_sum(dvals * lam[plan.entry_rows][:, None], plan.entry_bodies,
                               num_segments=nb)
    return dCa, dCtl.ravel()


def solve(plan: Plan, vals: Float[Array, "P nvb"], body_mass: Array, f: Array, g: Array, ranks,
          rtol) -> tuple[Array, Array]:
    """`(a, lam)` with `M a + C^T lam = f`, `C a = g` (see `factor` for `ranks`, `rtol`)."""
    fac = jax.lax.stop_gradient(factor(plan, vals, body_mass, ranks, rtol))
    return solve_factored(plan, fac, vals, body_mass, f, g)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def solve_factored(plan: Plan, fac: Factor, vals: Float[Array, "P nvb"], body_mass: Array,
                   f: Array, g: Array) -> tuple[Array, Array]:
    """`solve` with `fac = factor(plan, vals, body_mass, ...)` given (and reused: it gets
    no derivative; the derivatives come from `vals`' and `body_mass`')."""
    return apply(plan, fac, f, g)


@solve_factored.defjvp
def _solve_jvp(plan, primals, tangents):
    """Implicit differentiation on the same factorization: `M da + C^T dlam = df - dM a -
    dC^T lam`, `C da = dg - dC a` (at constant ranks)."""
    fac, vals, body_mass, f, g = primals
    dvals, dmass, df, dg = tangents[1:]
    a, lam = apply(plan, fac, f, g)
    nvb = NV[plan.dim]
    dCa, dCtl = _blocks_products(plan, dvals, a, lam)
    dMa = jnp.einsum("nij,nj->ni", dmass, a.reshape(-1, nvb)).ravel()
    return (a, lam), apply(plan, fac, df - dMa - dCtl, dg - dCa)
