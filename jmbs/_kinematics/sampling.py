"""Random configurations on the constraint manifold, on the reference configuration's
branch: random walks in the tangent space of the constraints, each step projected back
onto `Phi = 0`, in one vmapped program; and the count of samples at singular ones."""

import math
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from .._assembly import constraint_matrix, phi
from .._bodies import mechanism_size, retract
from .._linalg import MARGINAL_DECADES, RANK_RTOL, TINY, rank_decision
from .._misc import check_finite, check_int, check_positive, warn_user
from .._model import Model
from .._rank import scaled
from .assemble import (
    assemble_jit,
    assemble_positions,
    closure_error,
    free_mask,
    velocity_units,
)
from .singular import generic_rank

METHODS = ("walk", "perturb")

# Samples per random walk (each walk starts at the reference): long walks spread
# further (about scale * sqrt(WALK_LENGTH) from the reference at the end), short ones
# cost more starts.
WALK_LENGTH = 16

# Corrector iterations per step: chord Newton on the pivoted QR of the equilibrated
# constraint matrix at the step's start (linear convergence, at a rate that falls with
# the step), then Newton on the candidate's own. A step whose candidate has not
# converged after them is rejected and the walk's step halved.
CHORD_ITERATIONS = 10
POLISH_ITERATIONS = 2

# A step is rejected (the walk stays where it is, and halves its next step) when the
# corrector's move exceeds this fraction of the predictor's: the tangent no longer
# describes the manifold over the step (large curvature, or a jump to another branch).
MAX_CORRECTION = 0.5

# ... or when it heads into (or through) a singular configuration: the determinant of
# the candidate's matrix on the start's independent rows and row space changes sign
# (where the smallest kept value, unsigned, would bounce back), or falls below this
# fraction of the start's while the candidate's own smallest kept value falls below
# twice it. So a step never crosses a singular configuration; approaching one, steps
# shrink.
MIN_SINGULAR_RATIO = 0.25

# A projected random direction shorter than this (relative to the draw) is rounding:
# the mechanism has no free motion there.
TANGENT_RTOL = 1e-8

# Walks per compiled program: fewer are padded to a multiple of WALKS_QUANTUM, more run
# in chunks of MAX_WALKS (one program for every n >= MAX_WALKS * walk_length). Larger
# chunks were slower per sample on the 2-core machine (256: 0.24 ms, 64: 0.16 ms per
# Sarrus sample): their factorizations no longer stay in the caches.
MAX_WALKS = 64
WALKS_QUANTUM = 8

# Gauss-Newton iterations that assemble the reference before the walks start from it.
START_STEPS = 50

# After a rejection the next step is this fraction of the previous; after an accepted
# step it grows back by GROW, up to `scale`.
SHRINK = 0.5
GROW = 1.5


class Samples(eqx.Module):
    """Configurations sampled by `sample_configurations`, with their rank decisions.

    Unpacks like the pair it replaces: `qs, converged = jmbs.sample_configurations(...)`.

    - `q (n, nq)`: the configurations; `converged (n,)`: those that satisfy
      `Phi(q, t) = 0` to the tolerance (use `q[converged]`); `t (n,)`: their times.
    - `rank (n,)`, `rank_margin (n,)`: the rank of `C` at each and its margin in
      decimal digits: the rank rule (`rank_decision`) on the equilibrated `C`, its
      values the `|R_ii|` of a pivoted QR for "walk" (as the "qr" solvability method:
      the walk factorizes `C` at every sample anyway) and the singular values for
      "perturb" (as `jmbs.solvability`'s default); they agree but within the rank
      margin of a singular configuration.
    - `generic_rank`: the mechanism's rank at almost every configuration near the
      reference (`generic_rank`'s rule: the largest rank at the reference and at the
      samples that moved from it and were decided clearly; where none did, at assembled
      configurations near the reference).
    - `singular (n,)`: converged samples whose rank is below `generic_rank` (singular
      configurations); `near_singular (n,)`: the other converged samples whose rank
      decision is marginal (margin below `MARGINAL_DECADES` = 2 digits): near a singular
      configuration, or on one where rounding leaves the decision unclear (a
      parallelogram assembled exactly flat can come out one rank *above* the generic
      rank, with a margin under one digit); `n_singular`, `n_near_singular`: their counts.
    - `accepted (n,)`: the sample is a new step of its walk (False: a rejected step,
      so the sample repeats its walk's previous one; always True for "perturb").
    """

    q: Float[Array, "n nq"]
    converged: Bool[Array, " n"]
    t: Float[Array, " n"]
    rank: Int[Array, " n"]
    rank_margin: Float[Array, " n"]
    accepted: Bool[Array, " n"]
    generic_rank: int = eqx.field(static=True)

    def __iter__(self):
        return iter((self.q, self.converged))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, k):
        return (self.q, self.converged)[k]

    @property
    def singular(self) -> np.ndarray:
        return np.asarray(self.converged) & (np.asarray(self.rank) < self.generic_rank)

    @property
    def near_singular(self) -> np.ndarray:
        return (np.asarray(self.converged) & (np.asarray(self.rank) >= self.generic_rank)
                & (np.asarray(self.rank_margin) < MARGINAL_DECADES))

    @property
    def n_singular(self) -> int:
        return int(self.singular.sum())

    @property
    def n_near_singular(self) -> int:
        return int(self.near_singular.sum())

    def __repr__(self) -> str:
        n = self.q.shape[0]
        return (f"Samples({n} configurations, {int(np.sum(self.converged))} converged, "
                f"{int(np.sum(self.accepted))} new steps; generic rank {self.generic_rank}: "
                f"{self.n_singular} singular, {self.n_near_singular} near-singular)")


def sample_configurations(model: Model, n: int, *, key: Array | int = 0, scale: float = 0.3,
                          t=0.0, fixed: Sequence = (), tol: float = 1e-12,
                          max_steps: int | None = None, method: str = "walk",
                          walk_length: int = WALK_LENGTH, ranks: bool = True,
                          warn: bool = True) -> Samples:
    """Random configurations on the constraint manifold, on the reference branch.

    `method="walk"` (default): random walks from `model.q0` (assembled first) along the constraint
    manifold, `walk_length` samples each (the walks run side by side in one vmapped,
    jitted program). Each step goes a length `scale` in a random direction of the
    tangent space (the null space of the equilibrated `C`; translations measured in
    the bodies' characteristic lengths, rotations in radians), then projects onto
    `Phi = 0` (chord Newton on the start's pivoted QR, then on the candidate's: a
    fixed number of iterations). A step is rejected, and the walk's next step halved,
    when the projection does not converge, moves more than half the step (the tangent
    no longer describes the manifold: another branch, or large curvature), or heads
    into a singular configuration (the determinant of the candidate's matrix on the
    start's independent rows and row space changes sign, or falls below a quarter of
    the start's while the candidate's smallest kept `|R_ii|` falls below half the
    start's): so a walk never crosses a singular configuration and stays on the
    reference's branch (assembly mode). A rejected
    step repeats the walk's previous sample (`Samples.accepted` is False there).

    `method="perturb"`: the former sampler: independent normal perturbations of
    `model.q0` (standard deviation `scale`, per coordinate), each assembled by
    Gauss-Newton. Samples may land on other branches, and often exactly on singular
    configurations where branches meet (Gauss-Newton's minimum-norm steps are drawn
    to them): a way to look for them, not a sample of the reference's branch; and
    slower (a pseudoinverse per iteration, up to `max_steps` iterations).

    Every sample's rank is decided (the rank rule on the equilibrated `C`, see
    `Samples.rank`) and compared with the generic rank (`generic_rank`):
    the result counts the samples at (`n_singular`) and near (`n_near_singular`)
    singular configurations, and a warning says so where there are any.

    For driven mechanisms pass times `t` (shape `(n,)`): a walk visits its samples
    in increasing time (the drivers' motion is predicted with `Phi_t`), starting from
    `model.q0` assembled at the earliest time.

    **Arguments:**
    - `n`: number of samples; `key`: a `jax.random` key or an integer seed.
    - `scale`: length of a walk's step ("walk"), or the perturbation's standard
      deviation ("perturb"); positive. Larger spreads further (and gets more steps
      rejected near singular configurations).
    - `t`: time, scalar or `(n,)`.
    - `fixed`, `tol`: as in `assemble`. `max_steps`: Gauss-Newton iterations of
      "perturb" (default 50); "walk" takes a fixed number per step.
    - `method`: `"walk"` or `"perturb"`.
    - `walk_length`: samples per walk ("walk").
    - `ranks`: decide each sample's rank (the singular counts); False leaves it out
      (`rank` -1, `generic_rank` -1, nothing counted singular) for callers that only
      want configurations: a program less to compile.
    - `warn`: warn when samples land on singular configurations.

    **Returns:** a `Samples`: unpacks as `(qs (n, nq), converged (n,))` (use
    `qs[converged]`), with the ranks, `generic_rank`, `singular`, `n_singular`,
    `near_singular`, `n_near_singular`.

    **Raises:** `ValueError` for `n < 1`, a `scale`, `tol` that is not positive, a
    `walk_length` or `max_steps` below 1, an unknown `method`, or `t` of the wrong shape.
    """
    where = "jmbs.sample_configurations"
    check_int(where, "n", n, "give the number of samples")
    check_positive(where, "scale", scale)
    check_positive(where, "tol", tol)
    if method not in METHODS:
        raise ValueError(f"{where}: method must be one of {METHODS}, got {method!r}; \"walk\" stays "
                         "on the reference's branch, \"perturb\" perturbs it and assembles")
    check_int(where, "walk_length", walk_length, "it is the number of samples per random walk")
    if max_steps is not None:
        check_int(where, "max_steps", max_steps, "it bounds the Gauss-Newton iterations")
    check_finite(where, "t", t, "pass finite times")
    if np.ndim(t) not in (0, 1) or (np.ndim(t) == 1 and np.shape(t)[0] != n):
        raise ValueError(f"{where}: t must be one time or n = {n} times, got shape {np.shape(t)}")
    key = jax.random.key(key) if isinstance(key, (int, np.integer)) else key
    free = tuple(bool(f) for f in free_mask(model, fixed))
    ts = np.broadcast_to(np.asarray(t, dtype=float), (n,))
    if method == "perturb":
        qs, ok = _perturb(model, key, n, scale, jnp.asarray(ts), free, tol,
                          50 if max_steps is None else max_steps)
        acc = np.ones(n, bool)
        q_ref, t_ref, r_ref = model.q0, float(ts[0]), None
    else:
        (q_ref, t_ref, r_ref), (qs, ok, acc, rank, margin) = _walks(
            model, key, ts, float(scale), free, tol, walk_length, ranks)
        qs = jnp.asarray(qs)
    if not ranks:
        rank, margin = np.full(n, -1), np.full(n, np.nan)
    elif method == "perturb":
        rank, margin = (np.asarray(x) for x in _ranks(model, qs, jnp.asarray(ts)))
    ok = np.asarray(ok)
    # The generic rank near the reference, the samples' clear decisions being the
    # configurations near it (a marginal decision next to a singular configuration may
    # come out one too high, as in `SolvabilitySweep`).
    # Samples that did not move from the reference (a mechanism locked by `fixed`, or
    # without motion) cannot tell: then the nearby configurations are assembled.
    clear = ok & (margin >= MARGINAL_DECADES)
    moved = np.abs(np.asarray(qs) - np.asarray(q_ref)[None, :]).max(axis=1) > math.sqrt(tol)
    nearby = rank[clear & moved] if np.any(clear & moved) else None
    generic = generic_rank(model, q_ref, t_ref, rank=r_ref, nearby=nearby) if ranks else -1
    out = Samples(qs, jnp.asarray(ok), jnp.asarray(ts), jnp.asarray(rank), jnp.asarray(margin),
                  jnp.asarray(acc), generic)
    if warn and out.n_singular + out.n_near_singular:
        warn_user(f"{where}: {out.n_singular} of {n} samples are at singular configurations "
                  f"(rank below the generic rank {generic}) and {out.n_near_singular} at or near "
                  "one (a marginal rank decision); `Samples.singular` and `.near_singular` "
                  "mark them"
                  + (": method='perturb' is drawn to them, method='walk' stays on the "
                     "reference's branch" if method == "perturb" else ""))
    return out


# ----- the random walks -----

def _walks(model: Model, key, ts: np.ndarray, scale: float, free, tol, length: int, decide: bool):
    """Host side of the walks: assemble the reference (unless it is), deal the sorted
    times to `ceil(n / length)` walks, run them, and put the samples back in the
    caller's order. Returns `((reference, its time, its rank), [qs, converged, accepted,
    rank, rank margin])`."""
    n = ts.shape[0]
    m = math.ceil(n / length)
    order = np.argsort(ts, kind="stable")
    padded = np.concatenate([ts[order], np.full(m * length - n, ts[order][-1])])
    # Walk c visits the sorted times c, c + m, c + 2m, ...: increasing, and spread.
    times = padded.reshape(length, m).T
    t0 = float(padded[0])
    q0 = model.q0
    off, _, size = closure_error(model, q0, t0)
    if off > tol * size:
        # The same program as `jmbs.assemble`'s, shared with it.
        res = assemble_jit(model, q0, jnp.asarray(t0), free, tol, START_STEPS)
        if not bool(res.converged):
            raise ValueError(f"jmbs.sample_configurations: the reference model.q0 does not close the "
                             f"constraints at t = {t0:g} (max |Phi| = {off:.3g}) and could not be "
                             "assembled; assemble it first (jmbs.assemble) or pass another model")
        q0 = res.q
    # Walks run in chunks of at most MAX_WALKS (fewer padded to a multiple of
    # WALKS_QUANTUM), so that every `n` reuses a few compiled programs.
    chunk = min(MAX_WALKS, -(-m // WALKS_QUANTUM) * WALKS_QUANTUM)
    chunks = -(-m // chunk)
    times = np.concatenate([times, np.repeat(times[-1:], chunks * chunk - m, axis=0)])
    driven = bool(np.any(padded != t0))
    parts = [walks_jit(model, jax.random.fold_in(key, c), q0, jnp.asarray(t0),
                       jnp.asarray(times[c * chunk:(c + 1) * chunk]), jnp.asarray(scale, dtype=float),
                       free, tol, driven, decide) for c in range(chunks)]
    *res, start_rank = (np.concatenate([np.asarray(p[k]) for p in parts])[:m] for k in range(6))
    out = []
    for x in res:
        x = np.asarray(x).swapaxes(0, 1).reshape(m * length, *x.shape[2:])[:n]
        o = np.empty_like(x)
        o[order] = x
        out.append(o)
    return (q0, t0, int(start_rank[0])), out


class _Frame(eqx.Module):
    """A walk's state and what a step from it needs: the equilibrated constraint matrix of
    the walk (the holonomic rows, the free coordinates) there, `X = row C col`, and its
    pivoted QR `X[piv]^T = Q R` (a third of an SVD's cost, and `|R_ii|` are rank-revealing
    values for the rank rule, as in the "qr" solvability method); the sign and log of
    `det R_11` over the walk's rank; and the rank decision of the whole `C` there."""

    q: Array
    t: Array
    X: Array
    Q: Array
    R: Array
    piv: Array
    row: Array
    col: Array
    rank: Array
    sign: Array
    logdet: Array
    decision: Array
    margin: Array


def _qr(X):
    Q, R, piv = jax.scipy.linalg.qr(X.T, pivoting=True)
    return Q, R, piv


def _frame(model: Model, q, t, free, r0, whole: bool) -> _Frame:
    """`_Frame` at `(q, t)`; `rank` at least `r0`; `whole`: the rank decision of `C`
    needs a factorization of its own (Pfaffian rows, fixed coordinates)."""
    L = model.characteristic_lengths()
    C = constraint_matrix(model, q, t)
    hol = jnp.asarray(model.holonomic_rows)
    X, row, col = scaled(jnp.where(hol[:, None], C, 0.0) * jnp.asarray(free)[None, :], L, model.dim)
    Q, R, piv = _qr(X)
    diag = jnp.diagonal(R)
    d = rank_decision(jnp.abs(diag), RANK_RTOL)
    if whole:
        R_whole = jax.scipy.linalg.qr(scaled(C, L, model.dim)[0].T, mode="r", pivoting=True)[0]
        full = rank_decision(jnp.abs(jnp.diagonal(R_whole)), RANK_RTOL)
    else:
        full = d
    # Never fewer row-space directions than at the reference: at a configuration of lower
    # rank the lost direction is one to another branch, not a motion of this one.
    rank = jnp.maximum(d.rank, r0)
    keep = jnp.arange(diag.shape[0]) < rank
    sign = jnp.prod(jnp.where(keep, jnp.sign(diag), 1.0))
    logdet = jnp.sum(jnp.where(keep, jnp.log(jnp.maximum(jnp.abs(diag), TINY)), 0.0))
    return _Frame(q, t, X, Q, R, piv, row, col, rank, sign, logdet, full.rank, full.margin)


def _solve(f: _Frame, r) -> Array:
    """Minimum-norm `dv` with `C dv = r` on the frame's `rank` independent rows
    (`X[piv[:rank]] = R_11^T Q_1^T`; the other rows are dependent on them)."""
    k = min(f.R.shape)
    keep = jnp.arange(k) < f.rank
    A = jnp.where(keep[:, None] & keep[None, :], f.R[:k, :k], jnp.eye(k))
    y = jnp.where(keep, (f.row * r)[f.piv[:k]], 0.0)
    u = jax.scipy.linalg.solve_triangular(A.T, y, lower=True)
    return f.col * (f.Q[:, :k] @ jnp.where(keep, u, 0.0))


def _crossing(f: _Frame, g: _Frame):
    """`(sign, log)` of `det` of the candidate's matrix (in the state's scaling) on the
    state's independent rows and row space, `X_g[piv[:r]] Q_1`; at the state itself it is
    `R_11^T`. Its sign changes where a singular configuration lies between the two."""
    k = min(f.R.shape)
    keep = jnp.arange(k) < f.rank
    Xg = g.X * (f.row / g.row)[:, None] * (f.col / g.col)[None, :]
    M = jnp.where(keep[:, None] & keep[None, :], Xg[f.piv[:k]] @ f.Q[:, :k], jnp.eye(k))
    return jnp.linalg.slogdet(M)


def _residual(model: Model, q, t):
    return jnp.where(jnp.asarray(model.holonomic_rows), phi(model, q, t), 0.0)


def walk(model: Model, q_start, t_start, z, times, scale, free, tol, driven: bool = True,
         decide: bool = True):
    """One walk from `q_start` (assembled at `t_start`): `z (K, nv)` standard normal
    draws, `times (K,)` its samples' times (non-decreasing); `driven`: whether the
    times differ (else the drivers' prediction is left out of the program); `decide`:
    decide the rank of the whole `C` where it differs from the walk's matrix.

    Returns `(qs (K, nq), converged (K,), accepted (K,), rank (K,), rank margin (K,),
    rank at the start)`, the ranks those of `C`."""
    unit = velocity_units(model)
    nv = model.nv
    free = tuple(free)
    whole = decide and not (all(free) and all(model.holonomic_rows))
    norm = lambda dv: jnp.linalg.norm(dv / unit)  # noqa: E731

    def corrector(f: _Frame, q, t, iterations):
        return jax.lax.fori_loop(0, iterations,
                                 lambda _, q: retract(model, q, -_solve(f, _residual(model, q, t))), q)

    def step(carry, inputs):
        # The candidate's frame (one constraint matrix and QR per step) polishes it (two
        # Newton iterations), decides its rank, tests it against the walk's state `f`,
        # and, when accepted, serves the next step. It is taken after the chord
        # iterations: off the constraints redundant rows are not quite dependent, and the
        # rank would come out too high with a small margin.
        f, cand, t_c, moved, r0, factor, ok_f, first = carry
        zk, t_next = inputs
        g = _frame(model, cand, t_c, free, r0, whole)
        q = corrector(g, cand, t_c, POLISH_ITERATIONS)
        converged = (jnp.max(jnp.abs(_residual(model, q, t_c)), initial=0.0)
                     <= tol * mechanism_size(model, q))
        corrected = jnp.abs(_distance(model, f.q, q, unit) - moved)
        # Through a singular configuration (the determinant on the state's independent
        # rows and row space changed sign), or towards one too fast (it fell below a
        # quarter while the candidate's own last kept |R_ii| fell below half the state's).
        sign, logdet = _crossing(f, g)
        k = jnp.maximum(f.rank - 1, 0)
        dk = lambda x: jnp.abs(jnp.diagonal(x.R))[k]  # noqa: E731
        heads_in = (f.rank > 0) & ((sign != f.sign) | ((logdet - f.logdet < math.log(MIN_SINGULAR_RATIO))
                                                       & (dk(g) < 2 * MIN_SINGULAR_RATIO * dk(f))))
        accept = first | (converged & (corrected <= MAX_CORRECTION * moved + tol) & ~heads_in)
        new = jax.tree.map(lambda a, b: jnp.where(accept, a, b), eqx.tree_at(lambda x: x.q, g, q), f)
        ok = jnp.where(accept, converged, ok_f & (t_c == f.t))
        r0 = jnp.where(first, g.rank, r0)
        factor = jnp.where(accept, jnp.minimum(1.0, factor * GROW), factor * SHRINK)
        # Predictor: a random tangent direction of length scale * factor, plus the
        # drivers' motion to the next time (-C^+ dPhi); corrector: chord Newton.
        zk = zk * jnp.asarray(free)
        Q1 = jnp.where((jnp.arange(nv) < new.rank)[None, :], new.Q, 0.0)
        w = zk - Q1 @ (Q1.T @ zk)
        # No tangent space (a structure, or every motion driven): rounding, not a direction.
        moves = jnp.linalg.norm(w) > TANGENT_RTOL * jnp.linalg.norm(zk)
        d = new.col * w
        d = jnp.where(moves, d * (scale * factor / jnp.maximum(norm(d), TINY)), 0.0)
        if driven:
            d = d - _solve(new, _residual(model, new.q, t_next))
        cand = corrector(new, retract(model, new.q, d), t_next, CHORD_ITERATIONS)
        carry = (new, cand, t_next, norm(d), r0, factor, ok, jnp.asarray(False))
        return carry, (new.q, ok, accept, new.decision, new.margin)

    # The first step takes the start as its candidate (and accepts it); its output is
    # the start, left out; its prediction is the first sample's.
    shapes = jax.eval_shape(lambda: _frame(model, q_start, t_start, free, jnp.asarray(0), whole))
    blank = jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), shapes)
    carry = (blank, q_start, jnp.asarray(t_start, dtype=float), jnp.asarray(0.0), jnp.asarray(0),
             jnp.asarray(1.0), jnp.asarray(True), jnp.asarray(True))
    zs = jnp.concatenate([z, z[-1:]])
    ts = jnp.concatenate([times, times[-1:]])
    out = jax.lax.scan(step, carry, (zs, ts))[1]
    return tuple(x[1:] for x in out) + (out[3][0],)


def _distance(model: Model, qa, qb, unit) -> Array:
    """Length of the velocity-space increment from `qa` to `qb` in the units `unit`
    (translations exactly, rotations by the angle of the relative rotation)."""
    if model.dim == 2:
        return jnp.linalg.norm((qb - qa) / unit)
    a, b = qa.reshape(-1, 7), qb.reshape(-1, 7)
    angle = 2.0 * jnp.arccos(jnp.clip(jnp.abs(jnp.sum(a[:, 3:] * b[:, 3:], axis=1)), 0.0, 1.0))
    u = unit.reshape(-1, 6)
    return jnp.sqrt(jnp.sum(((b[:, :3] - a[:, :3]) / u[:, :3]) ** 2) + jnp.sum(angle**2))


@eqx.filter_jit
def walks_jit(model: Model, key, q_start, t_start, times, scale, free, tol, driven: bool,
              decide: bool = True):
    """The walks of `sample_configurations`, one per row of `times (m, K)`, vmapped
    (`walk`'s results, each `(m, K, ...)`)."""
    z = jax.random.normal(key, times.shape + (model.nv,))
    return jax.vmap(lambda zz, tt: walk(model, q_start, t_start, zz, tt, scale, free, tol,
                                        driven, decide))(z, times)


# ----- the rank of every sample -----

@eqx.filter_jit
def _ranks(model: Model, qs, ts):
    """Rank and rank margin of `C` at each sample, by the rank rule on the equilibrated
    `C` (as `constraint_rank`)."""
    L = model.characteristic_lengths()

    def one(q, t):
        X = scaled(constraint_matrix(model, q, t), L, model.dim)[0]
        d = rank_decision(jnp.linalg.svd(X, compute_uv=False), RANK_RTOL)
        return d.rank, d.margin

    return jax.vmap(one)(qs, ts)


# ----- the former sampler -----

@eqx.filter_jit
def _perturb(model, key, n, scale, ts, free, tol, max_steps):
    unit = velocity_units(model)
    dvs = scale * unit[None, :] * jax.random.normal(key, (n, model.nv))
    guesses = jax.vmap(lambda dv: retract(model, model.q0, dv * jnp.asarray(free)))(dvs)
    res = jax.vmap(lambda q, t: assemble_positions(model, q, t, free, tol, max_steps))(guesses, ts)
    return res.q, res.converged
