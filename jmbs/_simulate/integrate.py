"""The traced part of `jmbs.simulate`: vector field, integration, saved-state post-processing.

Nothing here looks at values on the host: the same programs run for concrete
and traced (`jax.vmap`, `jax.grad`) input, and they carry no host callback of
jmbs's own (failures are result codes, raised by the caller).
"""

import dataclasses
import functools
from concurrent.futures import Future, ThreadPoolExecutor

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._assembly import element_power, mass_matrix, phi, potential_energy, qdot
from .._bodies import mechanism_size
from .._forces.registry import bounded_parameters
from .._formulations.base import Prepared, solve_dynamics
from .._linalg import FACTORIZATION
from .._misc import RunOnce, cotangent_shapes, each_state, filled_cotangents, is_traced
from .._model import Model
from .._params import ParamVector
from .._reactions import build_reactions
from .._solvability.base import AbstractSolvabilityMethod
from .._stabilization.base import AbstractStabilization
from .._stabilization.projection import project_initial
from . import health
from .solution import RESULTS, Solution


class Args(eqx.Module):
    """The vector field's `args` (what `_ProjectedSolver` reads the model from)."""

    model: Model
    formulation: Prepared
    stabilization: AbstractStabilization


@eqx.filter_jit  # traced once, reused by the controller's and every step's trace
def vector_field(t, y, args: Args):
    """`(q_dot, v_dot)` at `(t, (q, v))`; with force elements the state carries their
    non-conservative work `w` too: `(q_dot, v_dot, w_dot)` at `(t, (q, v, w))`."""
    model, formulation, stabilization = args.model, args.formulation, args.stabilization
    q, v = y[0], y[1]
    terms = stabilization.terms(formulation, model, q, v, t)
    v_dot, lam = solve_dynamics(model, formulation, terms, q, v, t)
    if len(y) == 2:
        return qdot(model, q, v), v_dot
    return qdot(model, q, v), v_dot, element_power(model, q, v, t, lam, terms.power)


# The gradient's forward pass stores each step's stages (`_integrate_stored_stages`); within
# a stage, the vector field's intermediates are recomputed by the backward pass, all but
# its factorizations (`FACTORIZATION`): fewer stored values, fewer kernels to compile.
# Alternated fresh processes against storing them all (docs/benchmarks.md): the first
# gradient 7-15 % shorter (the spatial pendulum 32 -> 27 s), its repeat equal (the
# Bricard, A02, Andrews) or shorter (the spatial pendulum 0.58 -> 0.42-0.46 s).
vector_field_for_gradient = eqx.filter_checkpoint(
    vector_field, policy=jax.checkpoint_policies.save_only_these_names(FACTORIZATION))


def energy(model: Model, q: Array, v: Array) -> Array:
    """Kinetic plus potential energy (gravity and springs) at one state."""
    return 0.5 * v @ mass_matrix(model) @ v + potential_energy(model, q)


def post(model: Model, formulation: Prepared, method: AbstractSolvabilityMethod | None, q: Array,
         v: Array, t: Array):
    """Everything saved at one state, sharing one evaluation of the constraint terms:
    `(v_dot, reactions, position violation, velocity violation, energy)`; no
    reactions where `method` is None."""
    terms = formulation.terms(model, q, v, t)
    v_dot, lam = solve_dynamics(model, formulation, terms, q, v, t)
    reactions = (None if method is None else
                 build_reactions(model, q, t, lam, formulation.rigid_rows, terms.dense_matrix(),
                                 method))
    return (v_dot, reactions, jnp.max(jnp.abs(terms.phi), initial=0.0),
            jnp.max(jnp.abs(terms.velocity_error), initial=0.0), energy(model, q, v))


def integrate(model, formulation, stabilization, solver, controller, adjoint, saveat, t0, t1, dt0,
              q0, v0, initial_tol, max_steps, project_start=True, final=False):
    """Project the initial state and integrate (`jitted_integrate` is this, jitted).

    `project_start=False` (static): the caller found the initial state on the constraints
    or projected it there (a concrete start, checked on the host, `start_projection`), and
    the program leaves out the start's projection and its checks (the Bricard: a sixth
    of the program; A02 N = 40, a third).
    `final=True` (static): `saveat` is the end time alone, and the state saved there is
    the run's last (diffrax's `SaveAt(t1=True)`: the last step's end, not an interpolated
    point), its time and values infinite, as an unreached save time's, where the run
    stopped before `t1`.

    Returns `(ts, qs, vs, work, result, stats, q0, v0, stopped)` with the projected
    initial state and the saved states as the integrator interpolated them, or with
    `final` the last step's end (`solution` reports them); `work` is that of the force elements'
    non-conservative part (zero without force elements); `stopped` the `(t, q, v)`
    where a non-finite field stopped the run (`t` NaN otherwise).
    """
    args = (model, formulation, stabilization, solver, controller, adjoint, saveat, t0, t1, dt0, q0,
            v0, initial_tol, max_steps, project_start, final)
    if (isinstance(solver, diffrax.AbstractRungeKutta) and solver.scan_kind is None
            and isinstance(adjoint, diffrax.RecursiveCheckpointAdjoint)):
        return _integrate_stored_stages(args)
    return _integrate(*args)


# Inside a caller's `jax.jit` trace the plain `integrate` is called: under a gradient, a
# jitted one is traced once for its own program and then again by the linearization, the
# plain one once (the spatial pendulum of `bench_latency.py`: its first gradient's
# tracing 5.87 -> 5.39 s, three alternated pairs).
jitted_integrate = eqx.filter_jit(integrate)


# A Runge-Kutta step loops over its stages in a while loop that diffrax checkpoints by
# default: reverse mode then recomputes every stage once more inside the recomputation of
# its step (forward + step + stage recomputation + transpose, 3.1x the forward for the
# Bricard). With `scan_kind="bounded"` the stages' residuals are stored instead (2.4x),
# but that loop is 15 % slower without differentiation. So the forward run keeps the
# default loop, and only the gradient's forward pass runs the bounded one, its steps
# differentiated through their own VJP (`health.FiniteSolver.custom_vjp`).
@eqx.filter_custom_vjp
def _integrate_stored_stages(args):
    return _integrate(*args)


@_integrate_stored_stages.def_fwd
def _integrate_stored_stages_fwd(perturbed, args):
    model, formulation, stabilization, solver, *rest = args
    bounded = (model, formulation, stabilization, dataclasses.replace(solver, scan_kind="bounded"), *rest)
    out, pull = eqx.filter_vjp(lambda a: _integrate(*a, custom_vjp_steps=True), bounded)
    return out, (pull, cotangent_shapes(out))


@_integrate_stored_stages.def_bwd
def _integrate_stored_stages_bwd(residuals, g, perturbed, args):
    pull, shapes = residuals
    return pull(filled_cotangents(g, shapes))[0]


def _integrate(model, formulation, stabilization, solver, controller, adjoint, saveat, t0, t1, dt0,
               q0, v0, initial_tol, max_steps, project_start, final, custom_vjp_steps=False):
    far, ok0 = jnp.asarray(False), jnp.asarray(True)
    if project_start:
        hol = jnp.asarray(model.holonomic_rows)
        off = jnp.max(jnp.abs(jnp.where(hol, phi(model, q0, t0), 0.0)), initial=0.0)
        far = off > initial_tol * mechanism_size(model, q0)
        q0, v0, ok0 = project_initial(model, q0, v0, t0)
    y0 = (q0, v0) + ((jnp.zeros(()),) if model.force_groups else ())
    backsolve = isinstance(adjoint, diffrax.BacksolveAdjoint)
    saveat = diffrax.SaveAt(t1=True) if final else saveat
    watched = health.wrap(stabilization.wrap_solver(solver), t0, t1, custom_vjp_steps)
    field = vector_field_for_gradient if custom_vjp_steps else vector_field
    out = diffrax.diffeqsolve(
        diffrax.ODETerm(field), watched, t0, t1, dt0, y0, Args(model, formulation, stabilization),
        saveat=saveat if backsolve else health.solver_state_saved(saveat),
        stepsize_controller=controller, adjoint=adjoint, max_steps=max_steps, throw=False)
    ts, (qs, vs) = out.ts, out.ys[:2]
    work = out.ys[2] if model.force_groups else jnp.zeros(ts.shape)
    if final:  # stopped before t1: inf, what diffrax gives a save time it did not reach
        reached = ts == t1
        ts, qs, vs, work = (jnp.where(reached.reshape((-1,) + (1,) * (x.ndim - 1)), x, jnp.inf)
                            for x in (ts, qs, vs, work))
    stopped = ((jnp.asarray(jnp.nan), q0, v0) if backsolve else
               jax.tree.map(jax.lax.stop_gradient, out.solver_state[1]))
    # A failed projection of a step comes out of diffrax as its nonlinear_divergence, a
    # non-finite field as nonfinite (`health.FiniteSolver`).
    result = RESULTS.promote(out.result)
    result = RESULTS.where(result == RESULTS.nonlinear_divergence, RESULTS.projection_failed, result)
    result = RESULTS.where(result == RESULTS.nonfinite, RESULTS.not_finite, result)
    result = RESULTS.where(ok0, result, RESULTS.initial_projection_failed)
    result = RESULTS.where(far, RESULTS.initial_state_off, result)
    result = RESULTS.where(valid_design(model), result, RESULTS.invalid_design)
    return ts, qs, vs, work, result, out.stats, q0, v0, stopped


# A concrete start off the constraints is projected before the run, once, on the host
# first (`RunOnce`): the integration's program then leaves the start's projection out
# (the spatial pendulum of `bench_latency.py`: 78 of its 477 kernels).
start_projection = RunOnce(project_initial)


def valid_design(model: Model) -> Array:
    """Traced: whether the model's values can describe a physical design (finite
    parameters and force-element values, positive masses, positive definite
    inertias, force-element values within their records' bounds). Concrete values are
    checked on the host by `with_params`; this is the check that a traced batch member
    gets, as its own result code."""
    leaves = [model.param_vector, *jax.tree.leaves(model.forces)]
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves
                                if eqx.is_inexact_array(x)]))
    J = model.inertia
    if model.dim == 2:
        inertia = J > 0
    else:  # positive definite: Sylvester's leading minors (3 x 3, no decomposition needed)
        minor2 = J[:, 0, 0] * J[:, 1, 1] - J[:, 0, 1] * J[:, 1, 0]
        det = (J[:, 0, 0] * (J[:, 1, 1] * J[:, 2, 2] - J[:, 1, 2] * J[:, 2, 1])
               - J[:, 0, 1] * (J[:, 1, 0] * J[:, 2, 2] - J[:, 1, 2] * J[:, 2, 0])
               + J[:, 0, 2] * (J[:, 1, 0] * J[:, 2, 1] - J[:, 1, 1] * J[:, 2, 0]))
        inertia = (J[:, 0, 0] > 0) & (minor2 > 0) & (det > 0)
    params = ParamVector(model.param_vector, model.param_layout)  # only the bounded keys read
    bounds = [params[key] > 0 if arg.bound == "positive" else params[key] >= 0
              for key, arg in bounded_parameters(model.force_specs)]
    forces = jnp.all(jnp.stack([jnp.all(b) for b in bounds])) if bounds else True
    return finite & jnp.all(model.mass > 0) & jnp.all(inertia) & forces


def solution(model, formulation, stabilization, method, ts, qs, vs, work, result, stats,
             final: bool = False) -> Solution:
    """The saved states as reported (projected, with `Projection`), and their
    accelerations, reactions, violations and energy (compiled apart from the
    integration, so a new solver or time span reuses it). `final`: the saved state is
    the run's last (`integrate(..., final=True)`), reported as the stabilization
    reports a step's end (`project_final`)."""
    args = (model, formulation, stabilization, method, ts, qs, vs, work, result, final)
    if not is_traced(args):
        return dataclasses.replace(_solution_program(*args), stats=stats)
    # Traced: the saved states' dynamics where the caller reads them (`Solution.deferred`).
    qs, vs = _saved_states(model, stabilization, ts, qs, vs, final)
    evaluate = functools.partial(_post_program, model, formulation, method, qs, vs, ts)
    return Solution.deferred(evaluate, ts, qs, vs, work, _finite(result, qs, vs), stats,
                             model.coordinate_names, model.velocity_names)


def save_times(saveat: diffrax.SaveAt):
    """The save times of a `SaveAt` that asks for those alone (no start, end or steps),
    else None."""
    subs = saveat.subs
    if not isinstance(subs, diffrax.SubSaveAt) or subs.t0 or subs.t1 or subs.steps:
        return None
    return subs.ts


def compile_solution_ahead(model, formulation, stabilization, method, saveat,
                           final: bool = False) -> Future | None:
    """Compile the saved-state program in a thread while the integration compiles and
    runs (the two programs are independent until the run ends), where the call will
    not evaluate it on the host. Concrete input with save times only; `None` where the
    shapes are not known before the run or the host will evaluate it. A failure here
    is left to the call itself, which compiles again and raises it where it belongs."""
    ts = save_times(saveat)
    if ts is None:
        return None
    n = ts.shape[0]
    shaped = (np.zeros(n), np.zeros((n, model.nq)), np.zeros((n, model.nv)), np.zeros(n),
              RESULTS.successful, final)
    if _solution_program.on_host(model, formulation, stabilization, method, *shaped):
        return None
    return _compile_in_thread(
        lambda: _solution_program.top.lower(model, formulation, stabilization, method, *shaped))


def compile_beside(jitted, *args, **kwargs) -> Future:
    """Trace and lower the jitted function `jitted` at `args` here, and compile it in a
    thread: the caller's Python work meanwhile (the saved states' program traced for the
    host) runs on a core that XLA leaves idle through its HLO passes and its code
    emission, which are single-threaded (the spatial pendulum of `bench_latency.py`: 1.5
    of its integration's 3.3 s of XLA). A call of `jitted` with the same arguments after
    the future finds the program compiled (JAX keeps the lowering and its executable).
    A failure of the compilation is left to that call, which compiles again and raises
    it where it belongs."""
    lowered = jitted.lower(*args, **kwargs)
    return _compile_in_thread(lambda: lowered)


def _compile_in_thread(lowered) -> Future:
    """Compile what `lowered()` gives in a thread of `_AHEAD`; a failure (of the
    lowering there too) is left to the call that follows, which raises it."""
    def compile_():
        try:
            lowered().compile()
        except Exception:  # noqa: BLE001 - reported by the call that follows
            pass

    return _AHEAD.submit(compile_)


# The integration's and the saved states' compilations, side by side.
_AHEAD = ThreadPoolExecutor(max_workers=2, thread_name_prefix="jmbs-compile")


def _solution(model, formulation, stabilization, method, ts, qs, vs, work, result, final):
    qs, vs = _saved_states(model, stabilization, ts, qs, vs, final)
    v_dot, reactions, viol, vviol, en = _post(model, formulation, method, qs, vs, ts)
    return Solution(ts, qs, vs, v_dot, reactions, viol, vviol, en, work, _finite(result, qs, vs, v_dot),
                    {}, model.coordinate_names, model.velocity_names)


def _saved_states(model, stabilization, ts, qs, vs, final):
    """The saved states as reported: as the stabilization reports them."""
    return (stabilization.project_final if final else stabilization.project_saved)(model, qs, vs, ts)


def _post(model, formulation, method, qs, vs, ts):
    """`post` at every saved state: `(v_dot, reactions, violation, velocity violation, energy)`."""
    return each_state(lambda q, v, t: post(model, formulation, method, q, v, t), qs, vs, ts)


def _finite(result, *values):
    """`result`, or `RESULTS.not_finite` where a run that succeeded left NaN or infinity in
    `values`."""
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in values]))
    return RESULTS.where(finite | (result != RESULTS.successful), result, RESULTS.not_finite)


# Traced runs: the saved states' dynamics in the caller's program, traced where they are read.
_post_program = eqx.filter_jit(_post)


# The saved-state program runs once per call: on the host for a structure's first calls
# (A02's 101 saved states: 0.55 s against 2.5 s of XLA), then compiled (`RUN_ONCE`);
# inside a traced caller (`jax.jit`, `jax.vmap`, `jax.grad` over `simulate`) it is part
# of the caller's program.
_solution_program = RunOnce(_solution)
