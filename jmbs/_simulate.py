"""`jmbs.simulate`: the equations of motion on diffrax, with stabilization and reactions."""

import warnings

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from ._assembly import constraint_matrix, mass_matrix, phi, qdot, velocity_rhs
from ._formulations.base import AbstractFormulation, dynamics_terms, require_prepared
from ._formulations.null_space import NullSpaceProjection
from ._model import Model
from ._reactions import Reactions, build_reactions
from ._stabilization import Baumgarte, Projection, project

# Result codes of a run (`Solution.result`), one per batch element under vmap.
SUCCESS, INTEGRATOR_FAILED, PROJECTION_FAILED, NOT_FINITE = 0, 1, 2, 3
MESSAGES = {
    SUCCESS: "success",
    INTEGRATOR_FAILED: "the integrator stopped early (max_steps reached, step size too small, or a "
                       "failed implicit solve); try a tighter controller, more max_steps, or an "
                       "implicit solver for stiff models",
    PROJECTION_FAILED: "the projection onto the constraints did not converge (singular "
                       "configuration or too large steps); reduce the step size or the tolerances",
    NOT_FINITE: "the state became NaN or infinite; the leading matrix may be singular (check "
                "the eliminated rows, or a singular configuration) or the steps too large",
}


class Solution(eqx.Module):
    """The result of `jmbs.simulate` at the saved times.

    - `ts (T,)`, `q (T, nq)`, `v (T, nv)`, `v_dot (T, nv)`;
    - `reactions`: a `Reactions` (forces, torques, components, uniqueness per
      saved time);
    - `violation (T,)`: `max |Phi|` over the holonomic rows, and
      `velocity_violation (T,)`: `max |C v + b|`;
    - `energy (T,)`: kinetic plus gravitational potential energy;
    - `result`: 0 on success, otherwise a code (`message` explains it);
    - `stats`: diffrax's statistics (steps taken, rejected, ...).
    """

    ts: Float[Array, " T"]
    q: Float[Array, "T nq"]
    v: Float[Array, "T nv"]
    v_dot: Float[Array, "T nv"]
    reactions: Reactions | None
    violation: Float[Array, " T"]
    velocity_violation: Float[Array, " T"]
    energy: Float[Array, " T"]
    result: Int[Array, ""]
    stats: dict

    @property
    def message(self) -> str:
        codes = np.unique(np.asarray(self.result))
        return "; ".join(MESSAGES[int(c)] for c in codes)

    @property
    def ok(self) -> Bool[Array, ""]:
        return self.result == SUCCESS


class _ProjectedSolver(diffrax.AbstractWrappedSolver):
    """Wraps a diffrax solver: every accepted or proposed step end is projected."""

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
        # Every step starts as after a jump: a first-same-as-last stage carried over
        # from the previous step belongs to its unprojected end point.
        y1, y_error, dense_info, solver_state, result = self.solver.step(
            terms, t0, t1, y0, args, solver_state, True)
        q, v, ok = self.projection.project(args[0], y1[0], y1[1], t1)
        if y_error is not None:  # reject steps whose projection failed (adaptive steps)
            y_error = jax.tree.map(lambda e: jnp.where(ok, e, jnp.inf), y_error)
        result = diffrax.RESULTS.where(ok, result, diffrax.RESULTS.nonlinear_divergence)
        return (q, v), y_error, dense_info, solver_state, result

    def func(self, terms, t0, y0, args):
        return self.solver.func(terms, t0, y0, args)


def _vector_field(t, y, args):
    model, formulation, alpha, beta = args
    q, v = y
    v_dot, _ = formulation.solve(dynamics_terms(model, q, v, t, alpha, beta, formulation.needs_phi))
    return qdot(model, q, v), v_dot


def energy(model: Model, q: Array, v: Array) -> Array:
    """Kinetic plus gravitational potential energy at one state."""
    r = q.reshape(model.n_bodies, -1)[:, :model.dim]
    return 0.5 * v @ mass_matrix(model) @ v - jnp.sum(model.mass * (r @ model.gravity))


def _post(model: Model, formulation: AbstractFormulation, q: Array, v: Array, t: Array,
          with_reactions: bool = True):
    """Everything saved at one state, sharing one evaluation of the constraint terms:
    `(v_dot, reactions, position violation, velocity violation, energy)`."""
    terms = dynamics_terms(model, q, v, t)
    v_dot, lam = formulation.solve(terms)
    reactions = (build_reactions(model, q, t, lam, formulation.rigid_rows(model), terms.C)
                 if with_reactions else None)
    return (v_dot, reactions, jnp.max(jnp.abs(terms.phi), initial=0.0),
            jnp.max(jnp.abs(terms.velocity_error), initial=0.0), energy(model, q, v))


def simulate(model: Model, t1: float, *, formulation: AbstractFormulation | None = None,
             stabilization: Baumgarte | Projection | None = Projection(),
             solver: diffrax.AbstractSolver | None = None, t0: float = 0.0, dt0: float | None = None,
             saveat=None, stepsize_controller: diffrax.AbstractStepSizeController | None = None,
             adjoint: diffrax.AbstractAdjoint | None = None, max_steps: int | None = 100_000,
             throw: bool = True, q0=None, v0=None, initial_tol: float = 1e-6,
             reactions: bool = True) -> Solution:
    """Simulate the model from `t0` to `t1`.

    **Arguments:**
    - `model`: the model (a traced model works: `jax.vmap` over parameter
      sets, `jax.grad` through the run).
    - `t1`, `t0`: end and start times.
    - `formulation`: how redundancy is handled (default
      `jmbs.NullSpaceProjection()`); see `jmbs.Elimination`,
      `jmbs.Pseudoinverse`, `jmbs.AugmentedLagrangian`, `jmbs.Penalty`.
    - `stabilization`: `jmbs.Projection()` (default), `jmbs.Baumgarte(alpha,
      beta)` or `None`.
    - `solver`: any diffrax ODE solver (default `diffrax.Tsit5()`); implicit
      solvers (e.g. `diffrax.Kvaerno5()`) suit stiff `Penalty` models.
    - `dt0`: initial (or constant) step; `None` lets an adaptive controller pick it.
    - `saveat`: times to save at (array), a `diffrax.SaveAt`, or `None` for
      101 equally spaced times. With `Projection`, saved states are projected
      too (interpolated points are otherwise off the manifold by the
      interpolation error).
    - `stepsize_controller`: default `diffrax.PIDController(rtol=1e-8,
      atol=1e-8)` (with `dt0` given and `diffrax.ConstantStepSize()`, constant steps).
    - `adjoint`: a diffrax adjoint for gradients (default recursive checkpointing,
      sized by `max_steps`); `diffrax.BacksolveAdjoint()` needs `Baumgarte` or no
      stabilization (see docs/sensitivity.md).
    - `max_steps`: step limit.
    - `throw`: raise on failure; with `False`, `Solution.result` holds a code
      per run (per batch element under `jax.vmap`).
    - `q0`, `v0`: initial state (default `model.q0`, `model.v0`). A state off
      the constraints is projected onto them, with a warning saying by how
      much; beyond `initial_tol` (relative to the mechanism's size) it is
      rejected.
    - `reactions`: compute the reactions and their uniqueness at the saved
      times (a decomposition per saved state); `False` leaves
      `Solution.reactions` as `None` (accelerations, violations and energy
      are still computed).

    **Returns:** a `Solution`.

    **Raises:** `ValueError` for an initial state far from the constraints or
    NaN input; `eqx.EquinoxRuntimeError` (with `throw=True`) when the run fails.
    """
    formulation = NullSpaceProjection() if formulation is None else formulation
    solver = diffrax.Tsit5() if solver is None else solver
    if stepsize_controller is None:
        stepsize_controller = (diffrax.PIDController(rtol=1e-8, atol=1e-8) if dt0 is None
                               else diffrax.ConstantStepSize())
    if isinstance(stepsize_controller, diffrax.PIDController):
        # Tolerances as arrays: a new value then reuses the compiled program.
        stepsize_controller = eqx.tree_at(lambda c: (c.rtol, c.atol), stepsize_controller,
                                          (jnp.asarray(stepsize_controller.rtol, float),
                                           jnp.asarray(stepsize_controller.atol, float)))
    adjoint = diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint
    if stabilization is not None and not isinstance(stabilization, (Baumgarte, Projection)):
        raise ValueError(f"stabilization must be None, jmbs.Baumgarte(...) or jmbs.Projection(); "
                         f"got {stabilization!r}")
    q0 = model.q0 if q0 is None else jnp.asarray(q0, dtype=float)
    v0 = model.v0 if v0 is None else jnp.asarray(v0, dtype=float)
    if q0.shape != (model.nq,) or v0.shape != (model.nv,):
        raise ValueError(f"q0 and v0 must have shapes ({model.nq},) and ({model.nv},); got "
                         f"{q0.shape} and {v0.shape}")
    if saveat is None:
        saveat = jnp.linspace(t0, t1, 101)
    if not isinstance(saveat, diffrax.SaveAt):
        saveat = diffrax.SaveAt(ts=jnp.asarray(saveat, dtype=float))
    concrete = not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves((model, q0, v0)))
    if concrete:
        q0, v0 = _initial_state(model, q0, v0, t0, initial_tol)
        formulation = formulation.prepare(model, q0, t0)
    else:
        require_prepared(formulation, "jmbs.simulate")
    if isinstance(adjoint, diffrax.BacksolveAdjoint) and isinstance(stabilization, Projection):
        raise ValueError(
            "diffrax.BacksolveAdjoint solves the adjoint equations of the continuous motion "
            "backwards, which the projection after each step is not part of; use "
            "stabilization=jmbs.Baumgarte(...) or None with it, or keep Projection with the "
            "default adjoint (diffrax.RecursiveCheckpointAdjoint)")
    if isinstance(solver, diffrax.AbstractImplicitSolver) and isinstance(
            stepsize_controller, diffrax.AbstractAdaptiveStepSizeController):
        solver = _resolve_tolerances(solver, stepsize_controller)
    ts, qs, vs, result, stats = _integrate(
        model, formulation, stabilization, solver, stepsize_controller, adjoint, saveat,
        jnp.asarray(t0, float), jnp.asarray(t1, float), None if dt0 is None else jnp.asarray(dt0, float),
        q0, v0, max_steps, not concrete)
    sol = _solution(model, formulation, ts, qs, vs, result, stats, reactions)
    if throw:
        if concrete:
            if int(np.max(np.asarray(sol.result))) != SUCCESS:
                raise RuntimeError(f"jmbs.simulate failed: {sol.message} (run with throw=False to "
                                   "inspect the partial result)")
        else:
            sol = eqx.error_if(sol, sol.result != SUCCESS, "jmbs.simulate failed; run with "
                               "throw=False and read Solution.message")
    return sol


def _resolve_tolerances(solver, controller):
    """Give an implicit solver's root finder the controller's tolerances (diffrax
    does this itself, but cannot reach through the projection wrapper)."""
    rf = solver.root_finder
    for attr in ("rtol", "atol"):
        if not isinstance(getattr(rf, attr), (int, float)):  # diffrax's "use the controller's" marker
            rf = eqx.tree_at(lambda r, a=attr: getattr(r, a), rf, getattr(controller, attr))
    return eqx.tree_at(lambda s: s.root_finder, solver, rf)


def _initial_state(model: Model, q0: Array, v0: Array, t0: float, tol: float):
    """Host-side check of the initial state: project it, warn or refuse."""
    for what, x in (("q0", q0), ("v0", v0)):
        if not np.all(np.isfinite(np.asarray(x))):
            raise ValueError(f"{what} contains NaN or inf; pass a finite initial state")
    res = np.asarray(phi(model, q0, t0)) * np.asarray(model.holonomic_rows)
    size = max(1.0, float(np.max(np.abs(np.asarray(q0).reshape(model.n_bodies, -1)[:, :model.dim]))))
    worst = int(np.argmax(np.abs(res))) if res.size else 0
    off = float(np.abs(res[worst])) if res.size else 0.0
    if off > tol * size:
        raise ValueError(
            f"the initial configuration violates the constraints by {off:.3g} (worst: element "
            f"{model.element_of_row(worst)!r}), more than initial_tol = {tol:g} x size; assemble it "
            "first with jmbs.assemble(model, q0) or raise initial_tol")
    verr = float(np.max(np.abs(np.asarray(constraint_matrix(model, q0, t0) @ v0
                                          + velocity_rhs(model, q0, t0))), initial=0.0))
    vsize = max(1.0, float(jnp.max(jnp.abs(v0))))
    if off <= 1e-10 * size and verr <= 1e-10 * vsize:
        return q0, v0
    q, v, ok = _project_initial(model, q0, v0, jnp.asarray(t0, float))
    if not bool(ok):
        raise ValueError("the initial configuration could not be projected onto the constraints; "
                         "assemble it first with jmbs.assemble(model, q0)")
    dq, dv = float(jnp.max(jnp.abs(q - q0))), float(jnp.max(jnp.abs(v - v0)))
    warnings.warn(f"jmbs.simulate: the initial state was off the constraints (|Phi| = {off:.3g} at "
                  f"element {model.element_of_row(worst)!r}, |C v + b| = {verr:.3g}); projected onto "
                  f"them: q moved by {dq:.3g}, v by {dv:.3g}", stacklevel=3)
    return q, v


@eqx.filter_jit
def _project_initial(model, q, v, t):
    return project(model, q, v, t, 1e-13, 50)


@eqx.filter_jit
def _integrate(model, formulation, stabilization, solver, controller, adjoint, saveat, t0, t1, dt0,
               q0, v0, max_steps, project_initial):
    ok0 = jnp.asarray(True)
    if project_initial:  # under tracing (vmap over models) the host-side check could not run
        q0, v0, ok0 = _project_initial(model, q0, v0, t0)
    alpha, beta = (stabilization.alpha, stabilization.beta) if isinstance(stabilization, Baumgarte) \
        else (0.0, 0.0)
    if isinstance(stabilization, Projection):
        solver = _ProjectedSolver(solver, stabilization)
    out = diffrax.diffeqsolve(
        diffrax.ODETerm(_vector_field), solver, t0, t1, dt0, (q0, v0),
        (model, formulation, alpha, beta), saveat=saveat, stepsize_controller=controller,
        adjoint=adjoint, max_steps=max_steps, throw=False)
    ts, (qs, vs) = out.ts, out.ys
    if isinstance(stabilization, Projection):
        qs, vs, _ = jax.vmap(lambda q, v, t: stabilization.project(model, q, v, t))(qs, vs, ts)
    finite = jnp.all(jnp.isfinite(qs)) & jnp.all(jnp.isfinite(vs))
    result = jnp.where(finite, SUCCESS, NOT_FINITE)
    result = jnp.where(out.result == diffrax.RESULTS.successful, result, INTEGRATOR_FAILED)
    result = jnp.where(out.result == diffrax.RESULTS.nonlinear_divergence, PROJECTION_FAILED, result)
    result = jnp.where(ok0, result, PROJECTION_FAILED)
    return ts, qs, vs, result, out.stats


@eqx.filter_jit
def _solution(model, formulation, ts, qs, vs, result, stats, with_reactions) -> Solution:
    """Accelerations, reactions, violations and energy at the saved states (compiled
    apart from the integration, so a new solver or time span reuses it)."""
    # A loop, not vmap: batched LAPACK calls that XLA runs concurrently can deadlock
    # its CPU thread pool (JAX 0.10); on CPU vmap runs them one by one anyway.
    v_dot, reactions, viol, vviol, en = jax.lax.map(
        lambda x: _post(model, formulation, *x, with_reactions), (qs, vs, ts))
    result = jnp.where(jnp.all(jnp.isfinite(v_dot)) | (result != SUCCESS), result, NOT_FINITE)
    return Solution(ts, qs, vs, v_dot, reactions, viol, vviol, en, result, stats)
