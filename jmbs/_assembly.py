"""Constraint and dynamics terms: `Phi`, `C`, `b`, `Gamma`, `N`, `M`, `F`.

Every function is a pure, jittable function of the model and arrays. Each
element group is evaluated for all its instances at once; the rows are then
scattered into the element order with static indices.
"""

import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._bodies import GROUND_Q, NQ, NV, body_N, body_qdot, sum_terms
from ._config import RUN_ONCE, require_x64
from ._custom_types import Scalar
from ._forces.base import LoadInputs
from ._host_eval import host_or_compiled
from ._linalg import inverse3, structured
from ._misc import is_traced
from ._model import Model
from ._rotations import cross


def jitted(fn=None, *, compiler_options=None):
    """`jax.jit` that also takes lists for the array arguments after the model, and
    refuses to run in 32-bit mode (every jmbs computation passes through here).
    `compiler_options` go to `jax.jit` (`RUN_ONCE` for the host's checks). Concrete
    arguments are evaluated with NumPy first (`host_or_compiled`: no program compiled
    for a few calls).

    Python floats go to `jax.jit` as NumPy float64 scalars (traced: a new time does not
    retrace; typed as the `jnp.asarray(t, float)` other jmbs functions pass, so that both
    share one compiled program, not one each for the weakly typed Python float and the
    array); sequences become NumPy arrays.
    """
    if fn is None:
        return functools.partial(jitted, compiler_options=compiler_options)
    compiled = jax.jit(fn, compiler_options=compiler_options)
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        require_x64(f"jmbs.{fn.__name__}")
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        model, *rest = bound.arguments.values()
        rest = [np.float64(a) if isinstance(a, float) else
                a if isinstance(a, (jax.Array, int)) else np.asarray(a, dtype=float) for a in rest]
        for name, a in zip(list(bound.arguments)[1:], rest):
            _check_shape(fn.__name__, name, a, model)
        if not is_traced(model, rest):
            return host_or_compiled(fn, compiled, model, *rest)
        return compiled(model, *rest)

    return wrapper


def _check_shape(where: str, name: str, a, model: Model) -> None:
    """Shapes are static, so this host-side check holds for traced input as well."""
    n = {"q": model.nq, "v": model.nv}.get(name)
    if n is not None and np.shape(a) != (n,):
        what = "coordinates" if name == "q" else "velocities"
        raise ValueError(f"jmbs.{where}: {name} has shape {np.shape(a)}, but the model has n{name} = {n} "
                         f"{what}; pass one state of shape ({n},) (jax.vmap the call for a batch)")
    if name == "t" and np.ndim(a) != 0:
        raise ValueError(f"jmbs.{where}: t must be a scalar time, got shape {np.shape(a)}")


def _per_body(model: Model, x: Array, n: int, pad: Array) -> Array:
    """Split a stacked vector into bodies and append the ground: `(nb + 1, n)`."""
    return jnp.concatenate([x.reshape(model.n_bodies, n), pad[None]])


def group_inputs(model: Model, group, q: Array, v: Array | None):
    idx = np.asarray(group.bodies)
    qs = _per_body(model, q, NQ[model.dim], GROUND_Q[model.dim])[idx]
    if v is None:
        return qs, None
    nvb = NV[model.dim]
    return qs, _per_body(model, v, nvb, jnp.zeros(nvb))[idx]


def scatter_rows(model: Model, values: list[Array]) -> Array:
    """Stack per-group `(n, m, ...)` values and put their rows in element order."""
    if not values:  # a model without constraints (bodies held by force elements, or free)
        return jnp.zeros(0)
    out = jnp.concatenate([v.reshape((-1,) + v.shape[2:]) for v in values])
    return out if model.row_order is None else out[np.asarray(model.row_order)]


@jitted
def phi(model: Model, q: Float[Array, " nq"], t: Scalar = 0.0) -> Float[Array, " nc"]:
    """Holonomic constraint residual `Phi(q, t)`; Pfaffian rows are zero."""
    t = jnp.asarray(t, dtype=float)
    vals = []
    for g in model.groups:
        qs, _ = group_inputs(model, g, q, None)
        vals.append(g.phi(qs, t) if g.holonomic else jnp.zeros((qs.shape[0], g.n_rows)))
    return scatter_rows(model, vals)


@jitted
def velocity_residual(model: Model, q, v, t: Scalar = 0.0) -> Float[Array, " nc"]:
    """`C(q, t) v + b(q, t)`."""
    t = jnp.asarray(t, dtype=float)
    vals = []
    for g in model.groups:
        qs, vs = group_inputs(model, g, q, v)
        vals.append(g.velocity_residual(qs, vs, t))
    return scatter_rows(model, vals)


@jitted(compiler_options=RUN_ONCE)  # the host's checks: one evaluation per configuration
def check_terms(model: Model, q, v, t: Scalar = 0.0) -> tuple[Array, Array, Array | None, Array]:
    """`(Phi, C v + b, C, L)` from one program: what the host checks at a configuration
    (closure, velocity residual, the formulations' rank of `C` on the equilibrated
    matrix, the bodies' characteristic lengths `L` that equilibrate it and scale the
    health watch's energy) share one compiled evaluation (`Phi` is the primal of the
    velocity residual's JVP). `C` is dense, so from `STRUCTURED_MIN_NV` velocity
    coordinates on it is None."""
    C = None if structured(model) else constraint_matrix(model, q, t)
    return phi(model, q, t), velocity_residual(model, q, v, t), C, model.characteristic_lengths()


def group_blocks(g, qs: Array, t: Array) -> Array:
    """Per-instance blocks `(n, m, k, nv_b)` of `C` (the group's `blocks`)."""
    return g.blocks(qs, t)


def block_layout(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Host-side: the row of `C` and the body (`n_bodies` for the ground) of every
    block row that `constraint_blocks` returns, `(P,)` each, in its order."""
    rows = np.arange(model.nc)
    if model.row_order is not None:
        rows = np.argsort(np.asarray(model.row_order))  # stacked row -> element row
    out_rows, out_bodies, start = [np.zeros(0, int)], [np.zeros(0, int)], 0
    for _, n, m, k, bodies in _group_block_slices(model):
        r = rows[start:start + n * m].reshape(n, m)
        out_rows.append(np.broadcast_to(r[:, :, None], (n, m, k)).ravel())
        out_bodies.append(np.broadcast_to(bodies[:, None, :], (n, m, k)).ravel())
        start += n * m
    return np.concatenate(out_rows), np.concatenate(out_bodies)


def constraint_blocks(model: Model, q: Array, t) -> Array:
    """`C` as its nonzero blocks: `(P, nv_b)`, block row `p` being row `block_layout[0][p]`
    of `C` restricted to the columns of body `block_layout[1][p]` (the ground's are
    included, and ignored by `C`). Traced code: no dense matrix is formed."""
    t = jnp.asarray(t, dtype=float)
    nvb = NV[model.dim]
    blocks = [group_blocks(g, group_inputs(model, g, q, None)[0], t).reshape(-1, nvb)
              for g in model.groups]
    return jnp.concatenate(blocks) if blocks else jnp.zeros((0, nvb))


def scatter_matrix(model: Model, blocks: list[Array]) -> Array:
    """Assemble `C` from per-instance blocks `(n, m, k, nv_b)` with one static scatter.
    The ground's columns point past the last body and are dropped."""
    nvb = NV[model.dim]
    rows, bodies = block_layout(model)
    vals = jnp.concatenate([b.reshape(-1, nvb) for b in blocks]) if blocks else jnp.zeros((0, nvb))
    cols = bodies[:, None] * nvb + np.arange(nvb)
    return jnp.zeros((model.nc, model.nv)).at[rows[:, None], cols].set(
        vals, unique_indices=True, mode="drop")


@jitted
def constraint_matrix(model: Model, q: Float[Array, " nq"], t: Scalar = 0.0) -> Float[Array, "nc nv"]:
    """The constraint matrix `C` (`nc x nv`): `Phi_q N` for holonomic rows, `Psi` for Pfaffian."""
    t = jnp.asarray(t, dtype=float)
    blocks = [group_blocks(g, group_inputs(model, g, q, None)[0], t) for g in model.groups]
    return scatter_matrix(model, blocks)


@jitted
def velocity_rhs(model: Model, q: Float[Array, " nq"], t: Scalar = 0.0) -> Float[Array, " nc"]:
    """`b(q, t) = [Phi_t; 0]`, so that the velocity constraints read `C v + b = 0`."""
    t = jnp.asarray(t, dtype=float)
    return scatter_rows(model, [g.velocity_bias(group_inputs(model, g, q, None)[0], t)
                                 for g in model.groups])


@jitted
def gamma(model: Model, q, v, t: Scalar = 0.0) -> Float[Array, " nc"]:
    """`Gamma = -d/dt (C v + b)` along `q_dot = N v` with `v` held fixed (exact, by JVP);
    the acceleration constraints read `C v_dot = Gamma`."""
    t = jnp.asarray(t, dtype=float)
    return scatter_rows(model, [_group_gamma(g, *group_inputs(model, g, q, v), t)
                                 for g in model.groups])


def _group_gamma(g, qs: Array, vs: Array, t: Array) -> Array:
    _, dcv = jax.jvp(lambda qq, tt: g.velocity_residual(qq, vs, tt), (qs, t),
                     (body_qdot(qs, vs), jnp.ones_like(t)))
    return -dcv


def _terms(model: Model, q, v, t) -> tuple[list, Array, Array]:
    """Per-group blocks of `C`, and `b`, `Gamma` (shares the per-group work)."""
    t = jnp.asarray(t, dtype=float)
    blocks, bs, gs = [], [], []
    for g in model.groups:
        qs, vs = group_inputs(model, g, q, v)
        blocks.append(group_blocks(g, qs, t))
        bs.append(g.velocity_bias(qs, t))
        gs.append(_group_gamma(g, qs, vs, t))
    return blocks, scatter_rows(model, bs), scatter_rows(model, gs)


@jitted
def constraint_terms(model: Model, q, v, t: Scalar = 0.0) -> tuple[Array, Array, Array]:
    """`(C, b, Gamma)` in one pass (shares the per-group work)."""
    blocks, b, g = _terms(model, q, v, t)
    return scatter_matrix(model, blocks), b, g


def constraint_terms_blocks(model: Model, q, v, t) -> tuple[Array, Array, Array]:
    """`(blocks, b, Gamma)` with `C` as its nonzero blocks (`constraint_blocks`' layout):
    no dense matrix, for the structured solvers (traced code)."""
    blocks, b, g = _terms(model, q, v, t)
    nvb = NV[model.dim]
    return (jnp.concatenate([x.reshape(-1, nvb) for x in blocks]) if blocks
            else jnp.zeros((0, nvb))), b, g


def _grouped(keys: np.ndarray, n: int) -> np.ndarray:
    """Host-side: for each key `0..n-1`, the positions in `keys` holding it, ascending,
    padded with `len(keys)` (keys `>= n` are left out), `(n, most positions per key)`."""
    order = np.argsort(keys, kind="stable")
    order = order[keys[order] < n]
    counts = np.bincount(keys[order], minlength=n)
    slot = np.arange(len(order)) - np.repeat(np.cumsum(counts) - counts, counts)
    pick = np.full((n, counts.max(initial=0)), len(keys))
    pick[keys[order], slot] = order
    return pick


def _body_block_rows(model: Model) -> np.ndarray:
    """Host-side: every body's block rows (`constraint_blocks`' layout), padded with the
    number of block rows (a zero row appended by the callers), `(n_bodies, k)`."""
    return _grouped(block_layout(model)[1], model.n_bodies)


def _gram_sources(model: Model):
    """Host-side plan of `C W C^T` from `C`'s blocks (`weighted_gram`): for every body,
    its block rows padded with `P` (a zero row), `(n_bodies, k)`; and for every pair of
    block rows on one body, the entry of `C W C^T` it adds to (`row nc + col`), its
    product in the bodies' `(n_bodies, k, k)` products (flattened) and its slot (the
    n-th contribution to an entry goes to slot n), sorted by entry. The ground's block
    rows are left out (its columns are not in `C`)."""
    rows = block_layout(model)[0]
    P = len(rows)
    pick = _body_block_rows(model)
    k = pick.shape[1]
    b, i, j = np.nonzero((pick < P)[:, :, None] & (pick < P)[:, None, :])
    entry = rows[pick[b, i]] * model.nc + rows[pick[b, j]]
    order = np.argsort(entry, kind="stable")
    entry, source = entry[order], ((b * k + i) * k + j)[order]
    return pick, entry, source, np.arange(len(entry)) - np.searchsorted(entry, entry)


def gram_pattern(model: Model) -> np.ndarray:
    """Host-side: `(nc, nc)` mask of the entries of `C M^-1 C^T` that can be nonzero
    (rows whose elements share a body)."""
    out = np.zeros(model.nc * model.nc, bool)
    out[_gram_sources(model)[1]] = True
    return out.reshape(model.nc, model.nc)


def gram_gather(model: Model, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Host-side: where `weighted_gram` takes the entries `(rows, cols)` of `C W C^T`
    from (static index arrays of one shape; -1 for a padding entry, which is zero):
    `(pick, gather)`, `gather` `(s, *shape)` with `s` the most bodies two rows share."""
    pick, entry, source, slot = _gram_sources(model)
    zero = pick.size * pick.shape[-1] if pick.size else 0
    target = np.where((rows >= 0) & (cols >= 0), rows * model.nc + cols, -1)
    gather = np.full((slot.max(initial=-1) + 1,) + target.shape, zero)
    for n, out in enumerate(gather):
        e, src = entry[slot == n], source[slot == n]
        at = np.minimum(np.searchsorted(e, target), len(e) - 1)
        found = e[at] == target
        out[found] = src[at[found]]
    return pick, gather


def body_products(model: Model, blocks: Array, W: Array) -> Array:
    """The bodies' products `B_b W_b B_b^T` of `C`'s blocks (`constraint_blocks`' layout)
    on each body, flattened, with a zero appended: what `gram_entries` gathers from."""
    pick = _body_block_rows(model)
    nvb = NV[model.dim]
    Vb = jnp.concatenate([blocks, jnp.zeros((1, nvb))])[pick]  # (nb, k, nvb)
    return jnp.concatenate([jnp.einsum("bin,bnm,bjm->bij", Vb, W, Vb).ravel(), jnp.zeros(1)])


def gram_entries(model: Model, products: Array, rows: np.ndarray, cols: np.ndarray) -> Array:
    """The entries of `C W C^T` at static `(rows, cols)` (any shape, -1 for zero padding:
    a banded storage) from `body_products`: a static gather, no dense `C`."""
    return jnp.sum(products[gram_gather(model, *np.broadcast_arrays(rows, cols))[1]], axis=0)


def weighted_gram(model: Model, blocks: Array, W: Array) -> Float[Array, "nc nc"]:
    """`C W C^T` from `C`'s blocks (`constraint_blocks`' layout) and per-body weights
    `W` (`(n_bodies, nv_b, nv_b)`, e.g. `inverse_body_mass`): one small product per body
    and a static gather, no dense `C`."""
    rows = np.arange(model.nc)
    return gram_entries(model, body_products(model, blocks, W), rows[:, None], rows[None, :])


def _group_block_slices(model: Model) -> list[tuple[slice, int, int, int, np.ndarray]]:
    """Host-side: per group, its block rows in `constraint_blocks`' layout (a slice),
    its instances `n`, rows `m` and bodies per instance `k`, and the bodies `(n, k)`
    (`n_bodies` for the ground)."""
    out, start = [], 0
    for g in model.groups:
        bodies = np.asarray(g.bodies)
        n, k = bodies.shape
        out.append((slice(start, start + n * g.n_rows * k), n, g.n_rows, k, bodies))
        start += n * g.n_rows * k
    return out


def blocks_rmatvec(model: Model, blocks: Array, lam: Array) -> Array:
    """`C^T lambda` from `C`'s blocks (traced code, O(nonzeros)): per group, each
    instance's blocks weighted by its multipliers, then every body's contributions
    gathered (static indices) and summed; no scatter. Sums run term by term
    (`sum_terms`): on the CPU the Bricard's batched step took 20 % less than with
    flattened block-row gathers (`jmbs.step`, 4,096 instances)."""
    nvb = NV[model.dim]
    if model.row_order is not None:  # element order -> the groups' stacked order
        lam = lam[np.argsort(np.asarray(model.row_order))]
    parts, owners, start = [], [], 0
    for rows, n, m, k, bodies in _group_block_slices(model):
        B = blocks[rows].reshape(n, m, k, nvb)
        lg = lam[start:start + n * m].reshape(n, m)
        start += n * m
        parts.append(sum_terms(B * lg[:, :, None, None], 1).reshape(n * k, nvb))
        owners.append(bodies.ravel())
    each = jnp.concatenate(parts + [jnp.zeros((1, nvb))])
    owners = np.concatenate(owners) if owners else np.zeros(0, int)
    return sum_terms(each[_grouped(owners, model.n_bodies)], 1).ravel()


def blocks_matvec(model: Model, blocks: Array, v: Array) -> Array:
    """`C v` from `C`'s blocks (traced code, O(nonzeros)): per group, each instance's
    blocks times its bodies' velocities (a static gather of the bodies' rows), summed
    term by term; no scatter."""
    nvb = NV[model.dim]
    vb = jnp.concatenate([v.reshape(model.n_bodies, nvb), jnp.zeros((1, nvb))])
    parts = []
    for rows, n, m, k, bodies in _group_block_slices(model):
        B = blocks[rows].reshape(n, m, k * nvb)
        parts.append(sum_terms(B * vb[bodies].reshape(n, 1, k * nvb), 2).ravel())
    out = jnp.concatenate(parts) if parts else jnp.zeros(0)
    return out if model.row_order is None else out[np.asarray(model.row_order)]


@jitted
def kinematic_matrix(model: Model, q: Float[Array, " nq"]) -> Float[Array, "nq nv"]:
    """`N(q)` with `q_dot = N v` (identity in 2-D; quaternion rates in 3-D)."""
    if model.dim == 2:
        return jnp.eye(model.nq)
    blocks = jax.vmap(body_N)(q.reshape(model.n_bodies, 7))
    return jax.scipy.linalg.block_diag(*blocks)


@jitted
def qdot(model: Model, q: Float[Array, " nq"], v: Float[Array, " nv"]) -> Float[Array, " nq"]:
    """`q_dot = N(q) v` without forming `N`."""
    nq, nv = NQ[model.dim], NV[model.dim]
    return body_qdot(q.reshape(-1, nq), v.reshape(-1, nv)).ravel()


@jitted
def mass_matrix(model: Model) -> Float[Array, "nv nv"]:
    """Block-diagonal mass matrix: `diag(m, m, J)` planar, `diag(m I3, J')` spatial."""
    if model.dim == 2:
        return jnp.diag(jnp.stack([model.mass, model.mass, model.inertia], axis=1).ravel())
    return jax.scipy.linalg.block_diag(*body_mass(model))


def body_mass(model: Model) -> Float[Array, "nb nvb nvb"]:
    """The bodies' mass matrices, `M`'s diagonal blocks (traced code)."""
    if model.dim == 2:
        return jax.vmap(jnp.diag)(jnp.stack([model.mass, model.mass, model.inertia], axis=1))

    def block(m, J):
        return jnp.block([[m * jnp.eye(3), jnp.zeros((3, 3))], [jnp.zeros((3, 3)), J]])

    return jax.vmap(block)(model.mass, model.inertia)


@jitted
def inverse_mass_matrix(model: Model) -> Float[Array, "nv nv"]:
    """`M^-1`, block by block (no dense inverse of the whole matrix)."""
    if model.dim == 2:
        return jnp.diag(1.0 / jnp.stack([model.mass, model.mass, model.inertia], axis=1).ravel())
    return jax.scipy.linalg.block_diag(*inverse_body_mass(model))


def inverse_body_mass(model: Model) -> Float[Array, "nb nvb nvb"]:
    """The bodies' inverse mass matrices, `M^-1`'s diagonal blocks (traced code)."""
    if model.dim == 2:
        return jax.vmap(jnp.diag)(1.0 / jnp.stack([model.mass, model.mass, model.inertia], axis=1))

    def block(m, J):
        return jnp.block([[jnp.eye(3) / m, jnp.zeros((3, 3))], [jnp.zeros((3, 3)), inverse3(J)]])

    return jax.vmap(block)(model.mass, model.inertia)


@jitted
def generalized_forces(model: Model, q, v, t: Scalar = 0.0) -> Float[Array, " nv"]:
    """`F`: gravity, in 3-D the gyroscopic moments `-omega' x J' omega'`, and the
    force elements (springs, dampers, bushings, applied loads, actuators); joint
    friction, which depends on the reactions, is added where the multipliers are
    solved for (`jmbs.dynamics` and the simulation)."""
    return _inertial_forces(model, v) + element_forces(model, q, v, t)


@jitted
def forces_and_power(model: Model, q, v, t: Scalar = 0.0) -> tuple[Array, Array]:
    """`(F, the force elements' non-conservative power)` at `(q, v, t)`: `generalized_forces`
    and, from the same evaluation of the elements, what `element_power` integrates
    (friction, which reads the multipliers, in neither)."""
    F, power = _elements(model, q, v, t)
    return _inertial_forces(model, v) + F, power


def _inertial_forces(model: Model, v: Array) -> Array:
    nb, d = model.n_bodies, model.dim
    f = model.mass[:, None] * model.gravity[None, :]
    if d == 2:
        return jnp.concatenate([f, jnp.zeros((nb, 1))], axis=1).ravel()
    w = v.reshape(nb, 6)[:, 3:]
    gyro = -cross(w, jnp.einsum("nij,nj->ni", model.inertia, w))
    return jnp.concatenate([f, gyro], axis=1).ravel()


def element_forces(model: Model, q: Array, v: Array, t, lam: Array | None = None) -> Array:
    """`(nv,)` the generalized forces of the force elements: without `lam` those that
    do not read the reactions, with `lam` (multipliers, element order) only those
    that do (friction). Traced code, not jitted on its own."""
    return _elements(model, q, v, t, lam)[0]


def _elements(model: Model, q: Array, v: Array, t, lam: Array | None = None) -> tuple[Array, Array]:
    """`(element_forces, their non-conservative power)` (`AbstractForce.generalized`)."""
    groups = [g for g in model.force_groups if g.reads_reactions == (lam is not None)]
    nvb = NV[model.dim]
    out, power = jnp.zeros((model.n_bodies + 1, nvb)), jnp.zeros(())
    x = LoadInputs(q, v, jnp.asarray(t, dtype=float), lam)
    for g in groups:
        qs, vs = group_inputs(model, g, q, v)
        forces, p = g.generalized(qs, vs, x)
        out, power = out.at[np.asarray(g.bodies)].add(forces), power + jnp.sum(p)
    return out[:-1].ravel(), power  # the ground's row is dropped


def reads_reactions(model: Model) -> bool:
    """Whether a force element depends on the reactions (then the dynamics iterate)."""
    return any(g.reads_reactions for g in model.force_groups)


@jitted
def potential_energy(model: Model, q: Float[Array, " nq"]) -> Float[Array, ""]:
    """Gravitational potential energy plus that of the springs (linear spring-dampers,
    rotational springs, bushings)."""
    r = q.reshape(model.n_bodies, -1)[:, :model.dim]
    return _spring_energy(model, q) - jnp.sum(model.mass * (r @ model.gravity))


def _spring_energy(model: Model, q: Array) -> Array:
    return sum((jnp.sum(g.potential(group_inputs(model, g, q, None)[0])) for g in model.force_groups),
               jnp.zeros(()))


def element_power(model: Model, q: Array, v: Array, t, lam: Array, power: Array | None = None) -> Array:
    """The power of the force elements' non-conservative part: their total power
    `F_e . v` plus the rate of their potential energy (traced code). `power`: that of
    the elements that do not read the multipliers, where the caller has it
    (`forces_and_power`, `DynamicsTerms.power`: the elements are then not evaluated
    again); friction's, which reads `lam`, is added."""
    power = _elements(model, q, v, t)[1] if power is None else power
    return power + (_elements(model, q, v, t, lam)[1] if reads_reactions(model) else 0.0)
