"""Paper 002's fixed-step regularized semi-implicit Euler (its eq. 1), and its optional
projection (eqs. 2-3): `RegularizedEuler`, `StepState`, `step`.

One step from `(q, v, t)` to `t + h` solves the velocities and the multipliers
together (`M v_dot + C^T lambda = F`, jmbs's sign):

    M (v+ - v) + h C^T lambda = h F(q, v, t)
    c lambda = Phi(q, t) + (h + c d) (C v+ + b)      row by row

with `c` the row's compliance (1 / stiffness) and `d` its damping: a compliant row
is a spring-damper on `Phi` at the step's end (`Phi+ ~ Phi + h (C v+ + b)`), a rigid
one (`c = 0`) asks for `Phi+ = 0` to first order. Eliminating `v+`:

    (C M^-1 C^T + Sigma / h) lambda = (C v_free + b + Phi / (h + c d)) / h,
    Sigma = c / (h + c d),  v_free = v + h M^-1 F,

then `v+ = v_free - h M^-1 C^T lambda` and `q+ = retract(q, h v+)`. Compliance makes
the matrix positive definite (a Cholesky solve); with rigid rows it may be singular
where they are redundant, and its rank is decided at every step (`rtol`) unless
given (`rank`), as a generic solver does, which is what locks the Bricard (paper 002).
"""

from collections.abc import Mapping
from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._assembly import (
    blocks_matvec,
    blocks_rmatvec,
    body_products,
    constraint_blocks,
    constraint_matrix,
    constraint_terms,
    generalized_forces,
    gram_entries,
    gram_pattern,
    group_blocks,
    group_inputs,
    inverse_body_mass,
    inverse_mass_matrix,
    phi,
    reads_reactions,
    scatter_matrix,
    scatter_rows,
    weighted_gram,
)
from .._bodies import NV, mechanism_size, retract
from .._custom_types import RealScalarLike
from .._linalg import (
    PROJECTION_RTOL,
    SCALAR_BLOCK,
    band_plan,
    block_tridiagonal_solve,
    min_norm_solve,
    structured,
)
from .._misc import as_float, check_finite, is_traced
from .._model import Model

# Rank of the rigid rows' step matrix `C M^-1 C^T` (eigenvalues, the squares of the
# mass-weighted singular values, relative to the largest): 1e-12 counts a redundant
# row as independent once it separates from the others by a singular value of 1e-6
# relative (a constraint violation of that order), as a generic direct solver with a
# pivot tolerance does.
STEP_RTOL = 1e-12


def _values(x):
    """Compliance or damping as array leaves: None, a number, an `(nc,)` array, or a
    mapping keyed by element name or `"element.component"`."""
    if x is None:
        return None
    if isinstance(x, Mapping):
        return {str(k): as_float(v) for k, v in x.items()}
    return as_float(x)


def _zero_entries(x) -> tuple:
    """The concrete zeros of a compliance: `("all",)` for a zero number, the indices of
    an array's zeros, the keys of a mapping whose value is zero."""
    if x is None:
        return ()
    if isinstance(x, Mapping):
        return tuple(k for k, v in x.items() if not is_traced(v) and np.all(np.asarray(v) == 0))
    if is_traced(x):
        return ()
    a = np.asarray(x)
    return ("all",) if a.ndim == 0 and a == 0 else tuple(int(i) for i in np.flatnonzero(a == 0))


class StepState(eqx.Module):
    """The state a fixed step works on: `q (nq,)`, `v (nv,)`, `t ()`, and `lam (nc,)`,
    the multipliers of the step that produced it (zeros at the start), whose negatives
    are the reaction components (jmbs's sign, `M v_dot + C^T lambda = F`).

    `StepState.initial(model, q=None, v=None, t=0.0)` starts from the model's state."""

    q: Float[Array, " nq"]
    v: Float[Array, " nv"]
    t: Float[Array, ""]
    lam: Float[Array, " nc"]

    @classmethod
    def initial(cls, model: Model, q=None, v=None, t=0.0) -> "StepState":
        q = model.q0 if q is None else jnp.asarray(q, float)
        v = model.v0 if v is None else jnp.asarray(v, float)
        if q.shape != (model.nq,) or v.shape != (model.nv,):
            raise ValueError(f"jmbs.StepState: q and v must have shapes ({model.nq},) and "
                             f"({model.nv},); got {q.shape} and {v.shape}")
        return cls(q, v, jnp.asarray(t, float), jnp.zeros(model.nc))


class RegularizedEuler(eqx.Module):
    """Paper 002's fixed-step regularized semi-implicit Euler (González, Kövecses,
    Teichmann, Courchesne, eq. 1; Lacoursière's stepper): velocities and multipliers
    solved together, constraint compliance and damping on the diagonal, positions by
    the new velocities; optionally positions and velocities projected onto the
    constraints after each step (eqs. 2-3, `jmbs.Projection`'s projection).

    Pass it as `jmbs.simulate(model, t1, solver=jmbs.RegularizedEuler(h, ...))` or step
    by hand with `jmbs.step` / `RegularizedEuler.step` (pure: `jax.jit`, `jax.vmap`,
    `jax.grad` go through).

    **Arguments:**
    - `h`: the constant step (s), positive.
    - `compliance`: `None` (every row rigid), a number for every row, an `(nc,)`
      array, or a mapping keyed by element name or `"element.component"` (a component
      entry overrides its element's; rows not listed are rigid). Units: the inverse
      of the row's stiffness (m/N for a force row, rad/(N m) for a moment row).
      Values are array leaves: design parameters for `jax.grad` and `jax.vmap`.
    - `damping`: the rows' viscous damping (N s/m, N m s/rad), same forms, default
      zero; it acts on compliant rows only (a rigid row reaches `Phi = 0` in one step).
    - `projection`: project positions and velocities onto the constraints after each
      step (paper 002, eqs. 2-3): the violation stays at rounding level.
    - `rtol`: relative eigenvalue tolerance deciding, at every step, the rank of the
      step's matrix where rigid rows make it singular (default `STEP_RTOL`, 1e-12).
    - `rank`: the rank of that matrix, if known: then it is not decided per step (the
      formulations' choice: the Bricard then keeps moving, with its violation
      growing unless projected).
    - `tol`, `max_iterations`: the projection's tolerance (relative to the
      mechanism's size; a step whose projection ends above it fails) and its fixed
      number of position iterations (default 3).

    With compliance on every row, every reaction is unique (set by the compliance);
    rigid rows' reactions are decided by the solvability analysis, as everywhere.
    """

    h: RealScalarLike
    compliance: object
    damping: object
    projection: bool = eqx.field(static=True)
    rtol: RealScalarLike
    rank: int | None = eqx.field(static=True)
    tol: RealScalarLike
    max_iterations: int = eqx.field(static=True)
    # Where a concrete compliance is zero (rigid rows), decided when it is given: under
    # jax.jit the values are traced, but the rows' treatment must stay static.
    zeros: tuple = eqx.field(static=True, repr=False)

    def __init__(self, h, compliance=None, damping=None, projection: bool = False,
                 rtol=STEP_RTOL, rank: int | None = None, tol=1e-12, max_iterations: int = 3):
        self.h = as_float(h)
        self.compliance = _values(compliance)
        self.damping = _values(damping)
        self.projection = bool(projection)
        self.rtol, self.tol = as_float(rtol), as_float(tol)
        self.rank, self.max_iterations = rank, int(max_iterations)
        self.zeros = _zero_entries(self.compliance)

    def __check_init__(self):
        if np.ndim(self.h) != 0:
            raise ValueError(f"jmbs.RegularizedEuler: h must be a scalar step, got shape "
                             f"{np.shape(self.h)}")
        if not is_traced(self.h) and not (np.isfinite(self.h) and float(self.h) > 0):
            raise ValueError(f"jmbs.RegularizedEuler: the step h must be positive and finite, got "
                             f"{float(self.h):g}; give a step such as h=1e-3")
        for what in ("compliance", "damping"):
            x = getattr(self, what)
            for key, value in (x.items() if isinstance(x, Mapping) else [(None, x)]):
                name = what if key is None else f"{what}[{key!r}]"
                if value is None or is_traced(value):
                    continue
                check_finite("jmbs.RegularizedEuler", name, value, "give finite numbers")
                if np.any(np.asarray(value) < 0):
                    raise ValueError(f"jmbs.RegularizedEuler: {name} must be non-negative (0 is a "
                                     f"rigid row), got {np.asarray(value)}")
        if self.rank is not None and self.rank < 0:
            raise ValueError(f"jmbs.RegularizedEuler: rank must be a non-negative integer, got "
                             f"{self.rank}")

    def rows(self, model: Model) -> tuple[Array, Array]:
        """`(compliance, damping)` per row, `(nc,)` each (traceable)."""
        return (row_array(model, self.compliance, "compliance"),
                row_array(model, self.damping, "damping"))

    def rigid_rows(self, model: Model) -> np.ndarray:
        """`(nc,)` mask of the rigid rows (host-side, static): rows given no compliance,
        or a concrete zero when the solver was made (a traced value counts as compliant)."""
        x = self.compliance
        if x is None or self.zeros == ("all",):
            return np.ones(model.nc, bool)
        if not isinstance(x, Mapping):
            row_array(model, jnp.zeros(np.shape(x)), "compliance")  # checks the shape
            rigid = np.zeros(model.nc, bool)
            rigid[list(self.zeros)] = True
            return rigid
        covered = row_array(model, {k: 0.0 if k in self.zeros else 1.0 for k in x},
                            "compliance", np)
        return covered == 0

    def step_matrix(self, model: Model, q: Array, t=0.0) -> Float[Array, "nc nc"]:
        """The matrix of a step's multipliers at `(q, t)`, `C M^-1 C^T + Sigma / h`
        (traceable): where rigid rows are redundant its rank, decided at every step with
        `rtol`, tells whether the step still sees them as dependent."""
        c, d = self.rows(model)
        h = jnp.asarray(self.h, float)
        blocks = constraint_blocks(model, q, jnp.asarray(t, float))
        A = _operators(model, blocks, inverse_body_mass(model))[0]()
        return A + jnp.diag(c / ((h + c * d) * h))

    def step(self, model: Model, state: StepState) -> tuple[StepState, Array]:
        """One step: `(next state, converged)`; `converged` is the projection's
        (always True without projection). Pure: jit, vmap and grad go through."""
        return _step(self, model, state)


def _set(out: np.ndarray, rows: slice, value) -> np.ndarray:
    out[rows] = value
    return out


def row_array(model: Model, x, what: str, xp=jnp):
    """Per-row values `(nc,)` from None (zeros), a number, an `(nc,)` array, or a
    mapping keyed by element or `"element.component"` (components override their
    element; rows not listed are zero). Names are resolved on the host (static)."""
    if x is None:
        return xp.zeros(model.nc)
    if not isinstance(x, Mapping):
        x = xp.asarray(x, dtype=float)
        if x.shape not in ((), (model.nc,)):
            raise ValueError(f"jmbs.RegularizedEuler: {what} must be a number, an array of "
                             f"shape ({model.nc},) (one per row of C) or a mapping by element, "
                             f"got shape {x.shape}")
        return xp.broadcast_to(x, (model.nc,)) + xp.zeros(model.nc)
    out = xp.zeros(model.nc)
    for key in sorted(x, key=lambda k: "." in k):  # elements first, then components
        rows = model.key_rows(key, f"jmbs.RegularizedEuler({what}=...)")
        value = xp.broadcast_to(xp.asarray(x[key], dtype=float), (rows.stop - rows.start,))
        out = out.at[rows].set(value) if xp is jnp else _set(out, rows, value)
    return out


def _solve(model: Model, blocks: Array, Minv: Array, gram, sigma: Array, rhs: Array,
           solver: "RegularizedEuler") -> Array:
    """`(C M^-1 C^T + diag(sigma)) lambda = rhs`. Every row compliant (positive definite):
    a Cholesky solve, block tridiagonal in the bandwidth-reducing order where the
    constraint graph allows (A02: 242 rows in blocks of 4; the Bricard: 30 in blocks of
    5 along its loop), on the blocks' entries where they are small (`SCALAR_BLOCK`:
    under `jax.vmap` on the CPU LAPACK factors and substitutes one small matrix per
    call; the Bricard's step, 64 instances on one device, 9.7 -> 6.4-7.1 us per
    instance), else dense. With rigid rows: the minimum-norm solution on the rank
    decided by `rtol` (or given)."""
    rigid = solver.rigid_rows(model)
    plan = None if rigid.any() else band_plan(gram_pattern(model))
    if plan is not None and (structured(model) or plan[1] <= SCALAR_BLOCK):
        perm, w = plan
        k = len(perm) // w
        pos = perm.reshape(k, w)
        products = body_products(model, blocks, Minv)
        D = gram_entries(model, products, pos[:, :, None], pos[:, None, :])
        S = gram_entries(model, products, pos[1:, :, None], pos[:-1, None, :])
        diag = jnp.concatenate([sigma, jnp.ones(1)])[pos]  # padding (-1): identity rows
        r = jnp.concatenate([rhs, jnp.zeros(1)])[pos]
        x = block_tridiagonal_solve(D + jax.vmap(jnp.diag)(diag), S, r).ravel()
        rows = np.where(perm < 0, model.nc, perm)  # padding past the end: dropped
        return jnp.zeros(model.nc).at[rows].set(x, mode="drop", unique_indices=True)
    A = gram() + jnp.diag(sigma)
    if not rigid.any():
        return jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(A, lower=True), rhs)
    return min_norm_solve(A, rhs, solver.rtol, solver.rank)


def _terms(model: Model, q: Array, t: Array) -> tuple[Array, Array, Array]:
    """`(blocks of C, b, Phi)` at `(q, t)` from one pass over the groups (the step needs
    no `Gamma`, whose second derivatives `constraint_terms` would compute); `C` as its
    nonzero blocks (`constraint_blocks`' layout), never dense."""
    blocks, bs, rs = [], [], []
    for g in model.groups:
        qs, _ = group_inputs(model, g, q, None)
        blocks.append(group_blocks(g, qs, t).reshape(-1, NV[model.dim]))
        bs.append(g.velocity_bias(qs, t))
        rs.append(g.phi(qs, t) if g.holonomic else jnp.zeros((qs.shape[0], g.n_rows)))
    if structured(model):
        # Computed once: XLA's fusion otherwise recomputes the elements' terms (their sines
        # and cosines) inside each of the products that read them (A02 at 4,096 instances:
        # 12 % more steps per second with this barrier; the Bricard's few terms gain nothing).
        blocks, bs, rs = jax.lax.optimization_barrier((blocks, bs, rs))
    hol = jnp.asarray(model.holonomic_rows)
    blocks = jnp.concatenate(blocks) if blocks else jnp.zeros((0, NV[model.dim]))
    return blocks, scatter_rows(model, bs), jnp.where(hol, scatter_rows(model, rs), 0.0)


def _operators(model: Model, blocks: Array, Minv: Array):
    """`(gram, v -> C v, lam -> C^T lam)` from `C`'s blocks, `gram()` giving the dense
    `C M^-1 C^T` where a solve needs it (rigid rows, or no narrow band): through the
    dense `C` for small models (on the CPU XLA's dense products beat its gathers at
    the Bricard's 30 x 30, 4.2 against 6.6 us per instance), from the blocks from
    `STRUCTURED_MIN_NV` velocities on (A02's 242 x 243: 0.9 ms dense against 0.15 ms).
    The products with `C` come from the blocks at every size: the Bricard's dense `C`,
    built for them, cost a fifth of its batched step."""
    if structured(model):
        gram = partial(weighted_gram, model, blocks, Minv)
    else:
        def gram():
            C = scatter_matrix(model, [blocks])
            return C @ jax.scipy.linalg.block_diag(*Minv) @ C.T
    return gram, partial(blocks_matvec, model, blocks), partial(blocks_rmatvec, model, blocks)


def _project(model: Model, q: Array, v: Array, t: Array, tol, iterations: int):
    """Paper 002's eqs. 2-3: `q <- q - W Phi` (through the quaternion retraction) a fixed
    number of times, `W = M^-1 C^T (C M^-1 C^T)^+` (the mass-weighted pseudoinverse:
    redundant rows are harmless), then `v <- v - W (C v + b)`; `(q, v, converged)`.
    A fixed count (Newton's convergence is quadratic: 1e-4 -> 1e-8 -> 1e-16), so that
    reverse mode goes through; the rank is decided with `jmbs.Projection`'s tolerance."""
    hol = jnp.asarray(model.holonomic_rows)
    Minv = inverse_mass_matrix(model)

    def correction(C, err):
        return -Minv @ C.T @ min_norm_solve(C @ Minv @ C.T, err, PROJECTION_RTOL)

    def body(_, q):
        C = jnp.where(hol[:, None], constraint_matrix(model, q, t), 0.0)
        return retract(model, q, correction(C, jnp.where(hol, phi(model, q, t), 0.0)))

    q = jax.lax.fori_loop(0, iterations, body, q)
    C, b, _ = constraint_terms(model, q, v, t)
    v = v + correction(C, C @ v + b)
    res = jnp.max(jnp.abs(jnp.where(hol, phi(model, q, t), 0.0)), initial=0.0)
    return q, v, res <= jax.lax.stop_gradient(tol * mechanism_size(model, q))


def _step(solver: RegularizedEuler, model: Model, state: StepState) -> tuple[StepState, Array]:
    if reads_reactions(model):
        raise ValueError("jmbs.RegularizedEuler: joint friction (a force that reads the "
                         "reactions) is not supported by the fixed stepper; use jmbs.simulate "
                         "with a formulation")
    q, v, t, h = state.q, state.v, state.t, jnp.asarray(solver.h, float)
    c, d = solver.rows(model)
    Minv = inverse_body_mass(model)

    def minv(f):  # M^-1 f body by body
        return jnp.einsum("bij,bj->bi", Minv, f.reshape(len(Minv), -1)).ravel()

    blocks, b, r = _terms(model, q, t)
    gram, matvec, rmatvec = _operators(model, blocks, Minv)
    v_free = v + h * minv(generalized_forces(model, q, v, t))
    den = h + c * d
    rhs = (matvec(v_free) + b + r / den) / h
    lam = _solve(model, blocks, Minv, gram, c / (den * h), rhs, solver)  # step_matrix's
    v_new = v_free - h * minv(rmatvec(lam))
    q_new = retract(model, q, h * v_new)
    ok = jnp.asarray(True)
    if solver.projection:
        q_new, v_new, ok = _project(model, q_new, v_new, t + h, solver.tol, solver.max_iterations)
    return StepState(q_new, v_new, t + h, lam), ok


def step(model: Model, state: StepState, h=None, *, compliance=None, damping=None,
         projection: bool = False, solver: RegularizedEuler | None = None, **options) -> StepState:
    """One step of paper 002's regularized semi-implicit Euler from `state` (a
    `jmbs.StepState`, e.g. `jmbs.StepState.initial(model)`).

    **Arguments:**
    - `model`, `state`: the model and the state at the step's start.
    - `h`, `compliance`, `damping`, `projection`, `**options` (`rtol`, `rank`, `tol`,
      `max_iterations`): as `jmbs.RegularizedEuler`; or a ready `solver=`.

    **Returns:** the `StepState` at `state.t + h`, with the step's multipliers `lam`
    (the reaction components are `-lam`). A projection that did not converge leaves
    the state NaN (so that a failed step is never silent).

    Pure: `jax.jit`, `jax.vmap` (over states, models or compliances) and `jax.grad`
    go through; `jax.lax.scan` it for a run.
    """
    if solver is None:
        if h is None:
            raise ValueError("jmbs.step: give the step h (or solver=jmbs.RegularizedEuler(h, ...))")
        solver = RegularizedEuler(h, compliance, damping, projection, **options)
    elif h is not None or compliance is not None or damping is not None or projection or options:
        raise ValueError("jmbs.step: give either solver=... or h and its options, not both")
    new, ok = solver.step(model, state)
    return jax.tree.map(lambda x: jnp.where(ok, x, jnp.nan), new)
