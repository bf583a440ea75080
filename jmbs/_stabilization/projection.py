"""Projection onto the constraint manifold after every step, as a diffrax solver wrapper."""

import functools

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._assembly import (
    block_layout,
    blocks_matvec,
    body_mass,
    constraint_blocks,
    constraint_matrix,
    inverse_mass_matrix,
    phi,
    qdot,
    velocity_rhs,
)
from .._bodies import NV, mechanism_size, retract, velocity_increment
from .._custom_types import RealScalarLike
from .._linalg import (
    INITIAL_PROJECTION_ITERATIONS,
    INITIAL_PROJECTION_TOL,
    PROJECTION_RTOL,
    PROJECTION_SV_RTOL,
    min_norm_solve,
    structured,
)
from .._misc import as_float, each_state
from .._model import Model
from .._tree.plan import make_plan
from .._tree.solve import factor, solve_factored
from .base import AbstractStabilization


class Projection(AbstractStabilization):
    """Project positions and velocities onto the constraint manifold after every
    step (González et al., paper 002, eqs. 2-3), with the mass-weighted
    pseudoinverse `W = M^-1 C^T (C M^-1 C^T)^+`:

    - positions: `q <- q - W Phi` (through the quaternion retraction, so
      quaternions stay unit), repeated until `max |Phi| <= tol`;
    - velocities: `v <- v - W (C v + b)`.

    Redundant rows are harmless (pseudoinverse). Pfaffian rows take part in the
    velocity projection only. From `jmbs.internal.STRUCTURED_MIN_NV` velocity coordinates on
    the corrections are solved along the assembly tree (`jmbs.DivideAndConquer`'s
    block elimination, O(n)) instead of by a dense decomposition. The saved states are projected too
    (interpolated points are otherwise off the manifold by the interpolation
    error).

    **Arguments:**
    - `tol`: position tolerance, relative to the size of the mechanism
      (an array leaf: a new value reuses the compiled simulation).
    - `max_iterations`: iterations of the position projection per step; a step
      whose projection does not converge is rejected (adaptive steps) or ends
      the run with a result code.
    """

    tol: RealScalarLike = eqx.field(converter=as_float, default=1e-12)
    max_iterations: int = eqx.field(static=True, default=8)

    def project(self, model: Model, q: Array, v: Array, t: Array) -> tuple[Array, Array, Array]:
        """`(q, v, converged)` projected onto the constraints at time `t`."""
        return project(model, q, v, t, self.tol, self.max_iterations)

    def wrap_solver(self, solver):
        return _ProjectedSolver(solver, self)

    def project_saved(self, model, qs, vs, ts):
        qs, vs, _ = each_state(lambda q, v, t: self.project(model, q, v, t), qs, vs, ts)
        return qs, vs

    def project_final(self, model, qs, vs, ts):
        return qs, vs  # every step's end is projected (`_ProjectedSolver`)

    def check_adjoint(self, adjoint):
        if isinstance(adjoint, diffrax.BacksolveAdjoint):
            raise ValueError(
                "diffrax.BacksolveAdjoint solves the adjoint equations of the continuous motion "
                "backwards, which the projection after each step is not part of; use "
                "stabilization=jmbs.Baumgarte(...) or None with it, or keep Projection with the "
                "default adjoint (diffrax.RecursiveCheckpointAdjoint)")


class _ProjectedSolver(diffrax.AbstractWrappedSolver):
    """A diffrax solver whose every step end is projected onto the constraints.

    A step whose projection fails is rejected (infinite error estimate) by an
    adaptive controller and reported as `RESULTS.nonlinear_divergence` (jmbs's
    `RESULTS` names it `projection_failed` in its message) otherwise.

    First-same-as-last: every step is taken as after a jump (`made_jump=True`),
    so a FSAL solver (Tsit5, Dopri5, ...) re-evaluates the vector field at the
    step's start instead of reusing the last stage of the previous step. That
    stage belongs to the previous step's *unprojected* end point; reusing it
    would integrate from the projected state with the derivative of another.
    It costs one evaluation of the vector field per step.
    """

    solver: diffrax.AbstractSolver
    projection: Projection

    @property
    def term_structure(self):
        return self.solver.term_structure

    @property
    def interpolation_cls(self):
        return self.solver.interpolation_cls

    @property
    def root_finder(self):
        return self.solver.root_finder

    def order(self, terms):
        return self.solver.order(terms)

    def strong_order(self, terms):
        return self.solver.strong_order(terms)

    def error_order(self, terms):
        return self.solver.error_order(terms)

    def init(self, terms, t0, t1, y0, args):
        return self.solver.init(terms, t0, t1, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, y_error, dense_info, solver_state, result = self.solver.step(
            terms, t0, t1, y0, args, solver_state, True)
        q, v, ok = self.projection.project(args.model, y1[0], y1[1], t1)
        if y_error is not None:  # reject steps whose projection failed (adaptive steps)
            y_error = jax.tree.map(lambda e: jnp.where(ok, e, jnp.inf), y_error)
        result = diffrax.RESULTS.where(ok, result, diffrax.RESULTS.nonlinear_divergence)
        return (q, v) + tuple(y1[2:]), y_error, dense_info, solver_state, result

    def func(self, terms, t0, y0, args):
        return self.solver.func(terms, t0, y0, args)


@eqx.filter_jit  # traced once, reused by every trace of a step (a first call's latency)
def project(model: Model, q: Array, v: Array, t: Array, tol, max_iterations: int):
    """Mass-weighted projection of `q` onto `Phi(q, t) = 0` (Gauss-Newton with the
    pseudoinverse, through the quaternion retraction), then of `v` onto
    `C v + b = 0`. Returns `(q, v, converged)`.

    Differentiable: the position projection's derivative is the tangent
    projector at the result (`_project_positions_jvp`), never its iterations.
    """
    tol = jax.lax.stop_gradient(jnp.asarray(tol, float))
    if np.all(model.holonomic_rows):  # the velocities' rows are the positions': see the loop
        q, ok, C, b, fac, dv = _project_positions(model, q, t, tol, max_iterations, v)
        return q, _velocity_step(model, C, b, fac, v, dv), ok
    q, ok, C, b, fac, _ = _project_positions(model, q, t, tol, max_iterations, None)
    return q, v + _velocity_correction(model, C, b, fac, v), ok


def project_initial(model: Model, q: Array, v: Array, t: Array):
    """`project` with the start's tolerance and iterations (tighter than a step's: a run
    begins on the constraints to rounding): `(q, v, converged)`."""
    return project(model, q, v, t, INITIAL_PROJECTION_TOL, INITIAL_PROJECTION_ITERATIONS)


def _velocity_correction(model: Model, C: Array, b: Array, fac, v: Array) -> Array:
    return _correction(model, C, _matvec(model, C, v) + b, jnp.ones(model.nc, bool), fac)


@jax.custom_jvp
def _velocity_step(model: Model, C: Array, b: Array, fac, v: Array, dv: Array) -> Array:
    """`v + dv`, `dv` the velocity correction the position loop computed at its last
    iterate's `C` and `b`; its derivative is that of `v + _velocity_correction(...)`
    there (the same as computed after the loop)."""
    return v + dv


@_velocity_step.defjvp
def _velocity_step_jvp(primals, tangents):
    model, C, b, fac, v, dv = primals
    dmodel, dC, db, _, dvv, _ = tangents
    _, ddv = jax.jvp(lambda m, CC, bb, vv: _velocity_correction(m, CC, bb, fac, vv),
                     (model, C, b, v), (dmodel, dC, db, dvv))
    return v + dv, dvv + ddv




def _jacobian(model: Model, q: Array, t: Array) -> Array:
    """`C` in the form `_correction` takes: its blocks for the structured solve, else dense."""
    return constraint_blocks(model, q, t) if structured(model) else constraint_matrix(model, q, t)


def _matvec(model: Model, C: Array, v: Array) -> Array:
    return blocks_matvec(model, C, v) if structured(model) else C @ v


def _masked(model: Model, C: Array, rows: Array):
    """`(plan, C's blocks on rows)` for the structured solve."""
    plan = make_plan(model)
    return plan, C[plan.entry_pick] * rows[plan.entry_rows][:, None]


def _factor(model: Model, C: Array, rows: Array):
    """The structured factorization of `C` on `rows` (no derivative), or None (dense)."""
    if not structured(model):
        return None
    plan, vals = _masked(model, C, rows)
    return jax.lax.stop_gradient(factor(plan, vals, body_mass(model), None, PROJECTION_SV_RTOL))


def _correction(model: Model, C: Array, err: Array, rows: Array, fac=None) -> Array:
    """`-M^-1 C^T (C M^-1 C^T)^+ err` on `rows` (the others are left out); `C` from
    `_jacobian`, `fac` from `_factor` with the same `C` and rows (computed if None)."""
    if structured(model):
        plan, vals = _masked(model, C, rows)
        fac = _factor(model, C, rows) if fac is None else fac
        return solve_factored(plan, fac, vals, body_mass(model), jnp.zeros(model.nv),
                              -jnp.where(rows, err, 0.0))[0]
    Minv = inverse_mass_matrix(model)
    Ch = jnp.where(rows[:, None], C, 0.0)
    return -Minv @ Ch.T @ min_norm_solve(Ch @ Minv @ Ch.T, jnp.where(rows, err, 0.0),
                                         PROJECTION_RTOL)


@functools.partial(jax.custom_jvp, nondiff_argnums=(4,))
def _project_positions(model: Model, q: Array, t: Array, tol: Array, max_iterations: int,
                       v: Array | None):
    """`(q, converged, C, b, factor, dv)`: the projected positions, with `C` and `b` from
    the last iteration, where every row is holonomic the structured factorization of
    that `C` (else None), and with velocities `v` (all rows holonomic) their correction
    `dv` at that `C` and `b` (else None).

    Each iteration evaluates `Phi`, `C` and `b` once; the loop stops after the
    iteration that finds `|Phi|` within the tolerance, so its `C` and `b` (at
    the final point, up to that last tiny correction) serve the velocities. Where the
    velocities' rows are the positions', each iteration solves for both corrections
    on one factorization (one solve with two right-hand sides: the program holds the
    solve once, not a second time after the loop); `dv` gets no derivative here
    (`_velocity_step` gives it).
    """
    hol = jnp.asarray(model.holonomic_rows)
    limit = tol * mechanism_size(model, q)
    nc = model.nc
    reuse = structured(model) and bool(np.all(model.holonomic_rows))

    def cond(state):
        _, res, k = state[:3]
        return (res > limit) & (k < max_iterations)

    def body(state):
        q, _, k = state[:3]
        r = jnp.where(hol, phi(model, q, t), 0.0)
        C = _jacobian(model, q, t)
        fac = _factor(model, C, hol)
        b = velocity_rhs(model, q, t)
        if v is None:
            dq, dv = _correction(model, C, r, hol, fac), None
        else:
            dq, dv = jax.vmap(lambda err: _correction(model, C, err, hol, fac))(
                jnp.stack([r, _matvec(model, C, v) + b]))
        return (retract(model, q, dq), jnp.max(jnp.abs(r), initial=0.0), k + 1, C, b,
                fac if reuse else None, dv)

    C0 = jnp.zeros((len(block_layout(model)[0]), NV[model.dim]) if structured(model)
                   else (nc, model.nv))
    fac0 = (jax.tree.map(jnp.zeros_like, jax.eval_shape(lambda c: _factor(model, c, hol), C0))
            if reuse else None)
    q, res, _, C, b, fac, dv = jax.lax.while_loop(
        cond, body, (q, jnp.asarray(jnp.inf), jnp.asarray(0), C0, jnp.zeros(nc), fac0,
                     None if v is None else jnp.zeros_like(v)))
    return q, res <= limit, C, b, fac, dv


@_project_positions.defjvp
def _project_positions_jvp(max_iterations, primals, tangents):
    """To first order in the distance projected, the projection moves a change of
    the input along the constraint manifold's tangent space (mass metric), and a
    change of the model or time by the correction that keeps `Phi = 0`. The
    tolerance gets no derivative."""
    model, q, t, tol, v = primals
    dmodel, dq, dt = tangents[:3]
    out = _project_positions(model, q, t, tol, max_iterations, v)
    qs = out[0]
    hol = jnp.asarray(model.holonomic_rows)
    _, dphi = jax.jvp(lambda m, tt: jnp.where(hol, phi(m, qs, tt), 0.0), (model, t), (dmodel, dt))
    (C, _), terms_jvp = jax.linearize(
        lambda m, qq, tt: (_jacobian(m, qq, tt), velocity_rhs(m, qq, tt)), model, qs, t)
    dv = velocity_increment(model, qs, dq)
    dv = dv + _correction(model, C, _matvec(model, C, dv) + dphi, hol)
    dqs = qdot(model, qs, dv)
    dC, db = terms_jvp(dmodel, dqs, dt)
    return out, (dqs, np.zeros(out[1].shape, jax.dtypes.float0), dC, db,
                 jax.tree.map(jnp.zeros_like, out[4]), jax.tree.map(jnp.zeros_like, out[5]))
