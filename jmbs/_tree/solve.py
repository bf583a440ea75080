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
height of the tree, consecutive heights of alike sizes scanned as one: `schedule.py`)
depends on `C` and `M` only; `apply` (matrix-vector products) on
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
from jaxtyping import Array, Float

from .._bodies import NV
from .._linalg import compress_factor, kept, pad_cols, small_svd
from .plan import Plan
from .schedule import Segment, leaf_bodies, schedule


def _write(buffer: Array, block: Array, at) -> Array:
    """`buffer` (1-D, or 2-D of the block's width) with a level's block (`(n, rows, ...)`)
    written whole from row `at`."""
    block = block.reshape(block.shape[0] * block.shape[1], *block.shape[2:])
    return jax.lax.dynamic_update_slice(buffer, block, (at,) + (0,) * (buffer.ndim - 1))


def _scan(f, init, xs, reverse: bool = False):
    """`jax.lax.scan` over a segment's levels; for one level, its body called directly
    (no loop for XLA to compile and run)."""
    if jax.tree.leaves(xs)[0].shape[0] == 1:
        carry, y = f(init, jax.tree.map(lambda x: x[0], xs))
        return carry, jax.tree.map(lambda x: x[None], y)
    return jax.lax.scan(f, init, xs, reverse=reverse)


class Step(eqx.Module):
    """One segment of the factorization (`schedule.py`), per level and node, from the SVD
    `F_J = U S V^T` of every node's connection factor: `P = S_r^-1 U_r^T` (zero rows for
    the values not kept) and `Q = F_K V_r`, so that `lam_J = P^T (P (beta_J - g_J) -
    Q^T lam_K)` and the handles' bias passed on is `beta_K - Q P (beta_J - g_J)`."""

    P: Array  # (L, n, k, J)
    Q: Array  # (L, n, B, k)


class Factor(eqx.Module):
    """The factorization of `[M C^T; C 0]` along the tree: per leaf `S` (`S S^T = M_b^-1`)
    and `F = C_b S` (every row acting on the body), and one `Step` for the leaves and
    one per segment above them."""

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


def _eliminate(seg: Segment, F: Array, rank, tol) -> tuple[Step, Array, Array]:
    """One level's nodes: their `Step` from their connection rows' SVD (the leading `rank`
    values, or those above `tol`), the number of values kept, and their handles' factor
    passed up (`W` columns)."""
    FJ, FK = F[:, :seg.J], F[:, seg.J:]
    n, k = F.shape[0], seg.k
    if not k:
        return (Step(jnp.zeros((n, 0, seg.J)), jnp.zeros((n, seg.B, 0))), jnp.zeros(n, int),
                compress_factor(FK, seg.W))
    U, s, Vh = small_svd(FJ)
    keep = (jnp.arange(k)[None, :] < rank[:, None]) if rank is not None else s > tol
    Vr = Vh.mT * keep[:, None, :]
    Q = FK @ Vr
    P = U.mT * jnp.where(keep, 1.0 / jnp.where(keep, s, 1.0), 0.0)[:, :, None]
    return Step(P, Q), jnp.sum(keep, axis=1), compress_factor(FK - Q @ Vr.mT, seg.W)


def _segment_ranks(seg: Segment, ranks) -> Array | None:
    """The kept values per level and node of `seg`, zero for padding nodes."""
    if ranks is None:
        return None
    return jnp.stack([jnp.pad(jnp.asarray(ranks[h]), (0, seg.n - len(ranks[h]))) for h in seg.levels])


@functools.partial(jax.jit, static_argnums=0)
def factor(plan: Plan, vals: Array, body_mass: Array, ranks=None, rtol=None) -> Factor:
    """Factorize along the tree. `vals`: `C`'s moving-body blocks in the plan's order
    (`(P, nv_b)`); `body_mass`: `(n_bodies, nv_b, nv_b)`. Kept singular values per
    connection: the leading `ranks[h][node]` (a tuple of integer arrays, one per level
    of the plan), or with `ranks=None` those above `rtol` times the largest row norm of
    `C M^-1/2`."""
    return _factorize(plan, vals, body_mass, ranks, rtol)[0]


def _factorize(plan: Plan, vals: Array, body_mass: Array, ranks, rtol) -> tuple[Factor, list]:
    """`factor`'s factorization, and per segment the values each node kept (`(L, n)`)."""
    sch = schedule(plan)
    S = _whitening(plan, body_mass)
    F0 = split_blocks(plan, vals)[plan.levels[0].entries] @ S
    tol = None if ranks is not None else rtol * reference(plan, F0)
    leaf = sch.leaf
    step, n_kept, H = _eliminate(leaf, F0, None if ranks is None else jnp.asarray(ranks[0]), tol)
    steps, counts = [jax.tree.map(lambda x: x[None], step)], [n_kept[None]]
    handles = [H.reshape(H.shape[0] * H.shape[1], H.shape[2])]  # per segment, its handle rows' factors

    for seg in sch.segments:
        wide = max(seg.widths)
        below = jnp.concatenate([pad_cols(handles[x], wide) for x in seg.ext]
                                + [jnp.zeros((1, wide))])

        def level(own, x, seg=seg, below=below):
            ext_rows, own_rows, at, rank = x
            F = jnp.concatenate([
                below[ext_rows[side]][:, :, :w]
                + (pad_cols(own[own_rows[side]], w) if seg.own[side] else 0.0)
                for side, w in enumerate(seg.widths)], axis=2)
            step, n_kept, H = _eliminate(seg, F, rank, tol)
            return _write(own, H, at), (step, n_kept)

        own, (step, n_kept) = _scan(level, jnp.zeros((seg.n_rows + 1, seg.W)),
                                   (seg.ext_rows, seg.own_rows, seg.at, _segment_ranks(seg, ranks)))
        handles.append(own[:-1])
        steps.append(step)
        counts.append(n_kept)
    return Factor(S, F0, tuple(steps)), counts


def connection_ranks(plan: Plan, vals: Array, rtol) -> tuple[Array, ...]:
    """Per height of the plan, the singular values each connection keeps above `rtol`
    times the largest row norm of `C`, given as its blocks `vals` (equilibrated: the
    values are decided on `C` itself, no inertia): `factor`'s own decisions with
    `ranks=None`, its segments' padding removed."""
    eye = jnp.broadcast_to(jnp.eye(vals.shape[1]), (plan.n_bodies, vals.shape[1], vals.shape[1]))
    counts = _factorize(plan, vals, eye, None, rtol)[1]
    segments = (schedule(plan).leaf, *schedule(plan).segments)
    at = {h: n_kept[t] for seg, n_kept in zip(segments, counts) for t, h in enumerate(seg.levels)}
    return tuple(at[h][:lev.n] for h, lev in enumerate(plan.levels))


def _stacked(parts: list, ids) -> Array:
    """The 1-D buffers `parts[i]` for `i` in `ids`, stacked, a zero last."""
    return jnp.concatenate([parts[i] for i in ids] + [jnp.zeros(1)])


def _up(seg: Segment, own, beta, P, Q, at, g_rows, g_ext):
    """One level on the way up: its connections' coefficients, and its handles' biases
    written to its segment's buffer `own`."""
    coef = jnp.einsum("nkj,nj->nk", P, beta[:, :seg.J] - g_ext[g_rows])
    beta_K = beta[:, seg.J:] - jnp.einsum("nbk,nk->nb", Q, coef)
    return _write(own, beta_K, at), coef


def _down(seg: Segment, own, above, P, Q, coef, above_rows, own_down, m_at):
    """One level on the way down: its nodes' multipliers (`(n, J + B)`, connections and
    handles) from their parents' (in `above`, the other segments', and `own`), written
    to its segment's buffer `own`."""
    lam_K = above[above_rows] + (own[own_down] if seg.own_m else 0.0)
    lam_J = jnp.einsum("nkj,nk->nj", P, coef - jnp.einsum("nbk,nb->nk", Q, lam_K))
    node = jnp.concatenate([lam_J, lam_K], axis=1)
    return _write(own, node, m_at), node


@functools.partial(jax.jit, static_argnums=0)
def apply(plan: Plan, fac: Factor, f: Array, g: Array) -> tuple[Array, Array]:
    """`(a, lam)` for the right-hand sides `f` (`(nv,)`, body order) and `g` (`(nc,)`)."""
    nvb, nb, sch, split = NV[plan.dim], plan.n_bodies, schedule(plan), plan.split
    f_split = f.reshape(nb, nvb)
    if plan.weld_rank:  # a split hub's load shared by its copies
        f_split = f_split[split.body_of] * split.share[:, None]
    f_leaf = jnp.concatenate([f_split, jnp.zeros((1, nvb))])[leaf_bodies(plan)]
    a0 = jnp.einsum("nij,ni->nj", fac.S, f_leaf)  # S^T f
    g_ext = jnp.concatenate([g, jnp.zeros(split.nc - plan.nc + 1)])  # the welds: no motion
    segments = (sch.leaf, *sch.segments)

    # Upward: the handles' biases; each connection's multipliers in terms of its handles'.
    leaf, st = sch.leaf, fac.steps[0]
    own, coef = _up(leaf, jnp.zeros(leaf.n_rows + 1), jnp.einsum("nrc,nc->nr", fac.F, a0),
                    st.P[0], st.Q[0], leaf.at[0], leaf.g_rows[0], g_ext)
    betas, coefs = [own[:-1]], [coef[None]]
    for seg, st in zip(sch.segments, fac.steps[1:]):
        def level_up(own, x, seg=seg, below=_stacked(betas, seg.ext)):
            ext_rows, own_rows, at, g_rows, P, Q = x
            beta = sum(below[ext_rows[side]] + (own[own_rows[side]] if seg.own[side] else 0.0)
                       for side in (0, 1))
            return _up(seg, own, beta, P, Q, at, g_rows, g_ext)

        own, coef = _scan(level_up, jnp.zeros(seg.n_rows + 1),
                          (seg.ext_rows, seg.own_rows, seg.at, seg.g_rows, st.P, st.Q))
        betas.append(own[:-1])
        coefs.append(coef)

    # Downward: the connections' multipliers from their handles', then the accelerations.
    lams = [None] * len(segments)
    for s in reversed(range(1, len(segments))):
        seg, st = segments[s], fac.steps[s]

        def level_down(own, x, seg=seg, above=_stacked(lams, seg.above)):
            return _down(seg, own, above, *x)[0], None

        own, _ = _scan(level_down, jnp.zeros(seg.n_mults + 1),
                       (st.P, st.Q, coefs[s], seg.above_rows, seg.own_down, seg.m_at), reverse=True)
        lams[s] = own[:-1]
    st = fac.steps[0]
    own, node = _down(leaf, jnp.zeros(leaf.n_mults + 1), _stacked(lams, leaf.above), st.P[0],
                      st.Q[0], coefs[0][0], leaf.above_rows[0], leaf.own_down[0], leaf.m_at[0])
    lams[0] = own[:-1]
    a_leaf = jnp.einsum("nij,nj->ni", fac.S, a0 - jnp.einsum("nrc,nr->nc", fac.F, node))
    return a_leaf[sch.leaf_of_body].ravel(), jnp.concatenate(lams)[sch.rows]


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
    fac = kept(jax.lax.stop_gradient(factor(plan, vals, body_mass, ranks, rtol)))
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
