"""`jmbs.simulate`: defaults, host-side validation, the formulation's `init`, the run, `throw`."""


import diffrax
import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._assembly import check_terms, phi
from .._formulations.base import AbstractFormulation, Prepared, resolve
from .._formulations.registry import default_formulation
from .._gc import compiles
from .._kinematics import assemble, closure_error, conflict, generic_rank, rheonomic_conflict, warn_singular
from .._linalg import ON_CONSTRAINTS_TOL
from .._misc import as_float, check_finite, check_positive, fail_if, is_traced, staging, warn_user
from .._model import Model
from .._reactions import check_friction
from .._solvability.analysis import element_sets
from .._solvability.base import AbstractSolvabilityMethod
from .._solvability.registry import default_uniqueness, resolve_method
from .._solvability.report import decisions_at
from .._stabilization.base import AbstractStabilization, Unstabilized
from .._stabilization.projection import Projection
from .._stepper.regularized_euler import RegularizedEuler
from . import health, options
from .fixed_step import simulate_fixed_step
from .integrate import (
    compile_beside,
    compile_solution_ahead,
    integrate,
    jitted_integrate,
    save_times,
    solution,
    start_projection,
)
from .solution import RESULTS, Solution, failures

# The default stabilization, told apart from one given (a fixed-step solver refuses that).
_PROJECTION = Projection()


@compiles
def simulate(model: Model, t1: float, *, formulation: AbstractFormulation | Prepared | None = None,
             stabilization: AbstractStabilization | None = _PROJECTION,
             solver: "diffrax.AbstractSolver | RegularizedEuler | None" = None, t0: float = 0.0,
             dt0: float | None = None,
             saveat=None, stepsize_controller: diffrax.AbstractStepSizeController | None = None,
             adjoint: diffrax.AbstractAdjoint | None = None, max_steps: int | None = 100_000,
             throw: bool = True, q0=None, v0=None, initial_tol: float = 1e-6,
             reactions: bool = True, backward: bool = False,
             uniqueness: AbstractSolvabilityMethod | None = None) -> Solution:
    """Simulate the model from `t0` to `t1`.

    One compiled program serves concrete and traced input (`jax.vmap` over
    parameter sets, `jax.grad` through the run); the host only validates
    concrete input in front of it and raises its result codes.

    **Arguments:**
    - `model`: the model.
    - `t1`, `t0`: end and start times.
    - `formulation`: how redundancy is handled (default
      `jmbs.NullSpaceProjection()`, or `jmbs.DivideAndConquer()` from
      `jmbs.internal.STRUCTURED_MIN_NV` velocity coordinates on); see `jmbs.Elimination`,
      `jmbs.Pseudoinverse`, `jmbs.AugmentedLagrangian`, `jmbs.Penalty`. Its
      `init` runs at the initial state; with a traced model pass one prepared
      beforehand (`formulation.prepare(model, model.q0, 0.0)`).
    - `stabilization`: `jmbs.Projection()` (default), `jmbs.Baumgarte(alpha,
      beta)`, any `jmbs.AbstractStabilization`, or `None`.
    - `solver`: any diffrax ODE solver (default `diffrax.Tsit5()`); implicit
      solvers (e.g. `diffrax.Kvaerno5()`) suit stiff `Penalty` models. Or
      `jmbs.RegularizedEuler(h, ...)`, paper 002's fixed-step stepper: then
      `formulation`, `stabilization`, `dt0`, `stepsize_controller`, `adjoint` and
      `backward` do not apply (a `ValueError` names them if given), the saved
      times are steps (every step by default; `saveat` times on the grid
      `t0 + k h`), and the reactions are the steps' multipliers.
    - `dt0`: initial (or constant) step; `None` lets an adaptive controller pick it.
    - `saveat`: times to save at (array), a `diffrax.SaveAt`, or `None` for
      101 equally spaced times. With `Projection`, saved states are projected
      too (interpolated points are otherwise off the manifold by the
      interpolation error). The end time alone (`saveat=[t1]`, concrete) saves
      the last step's end itself, already projected: no interpolation and no
      second projection, a smaller program (a final state's gradient).
    - `stepsize_controller`: default `diffrax.PIDController(rtol=1e-8,
      atol=1e-8)` (with `dt0` given and `diffrax.ConstantStepSize()`, constant steps).
    - `adjoint`: a diffrax adjoint for gradients (default recursive checkpointing,
      sized by `max_steps`); `diffrax.BacksolveAdjoint()` needs `Baumgarte` or no
      stabilization (see docs/sensitivity.md). With recursive checkpointing and
      a Runge-Kutta solver of diffrax's default stage loop, the gradient's
      forward pass stores each step's stages (`scan_kind="bounded"`) rather
      than recompute them (about 20 % less time per gradient; a forward run
      is unchanged); pass the solver's own `scan_kind` to choose otherwise.
    - `max_steps`: step limit.
    - `throw`: raise on failure; with `False`, `Solution.result` holds a
      `jmbs.RESULTS` code per run (per batch element under `jax.vmap`). A
      concrete run is also watched at its saved states (energy balance against
      the tolerance's bound, rank of the rigid rows, reactions against the
      loads; docs/dynamics.md, *Health watch*): a breach is a failure of its own
      (`RESULTS.energy_drift`, `rank_changed`, `reactions_unexplained`) with a
      cause naming the time and the element. A force law, driver motion or state
      that turns NaN stops the run at that step (`RESULTS.not_finite`, the
      element named).
    - `q0`, `v0`: initial state (default `model.q0`, `model.v0`). It is always
      projected onto the constraints (inside the compiled run); a state off
      them gets a warning saying by how much it moved, and beyond
      `initial_tol` (relative to the mechanism's size) it is rejected.
    - `reactions`: compute the reactions and their uniqueness at the saved
      times (a decomposition per saved state); `False` leaves
      `Solution.reactions` as `None` (accelerations, violations and energy
      are still computed). With them, a run that starts at or passes through a
      singular configuration (the rank of `C` below its largest along the
      motion, at a saved time or, judged from the saved times, between them) gets
      a warning with the times; `Solution.singular_configurations()` lists them.
    - `backward`: allow `t1 < t0`: integrate from the state at `t0` back in time
      to `t1`. Without it, `t1 < t0` is refused (usually a sign error).
    - `uniqueness`: the solvability method deciding which reactions are
      unique, with its tolerances (default `jmbs.NullSpace()`, `jmbs.DCA()` from
      `jmbs.internal.STRUCTURED_MIN_NV` velocity coordinates on; or a name such
      as `"qr"`), as in `jmbs.solvability(..., method=...)`.

    **Returns:** a `Solution`.

    **Raises:**
    - `ValueError` for bad options, each named, before anything is compiled: not
      a diffrax solver, controller or adjoint; a split or stochastic solver; an
      adaptive controller with a solver without error estimates;
      `ConstantStepSize` without `dt0`; `dt0` zero, not finite or pointing away
      from `t1`; `max_steps` not an int >= 1; controller tolerances negative, not
      finite or both zero, `dtmin > dtmax`; a `diffrax.SaveAt` with `fn`;
      `initial_tol` not positive; shapes (`saveat` not 1-D), and
      (concrete input) non-finite `t0`, `t1`, `saveat` or initial state, `t1 = t0`,
      `t1 < t0` without `backward=True`, save
      times outside `[t0, t1]` or out of order, or an initial configuration farther than `initial_tol`
      from the constraints;
    - `eqx.EquinoxRuntimeError` (a `RuntimeError`), with `throw=True`, when the
      run fails, for concrete and traced input alike (a traced initial state
      too far off the constraints fails this way, `RESULTS.initial_state_off`).
    """
    if isinstance(solver, RegularizedEuler):
        given = {k for k, x in (("formulation", formulation), ("dt0", dt0), ("adjoint", adjoint),
                                ("stepsize_controller", stepsize_controller), ("backward", backward),
                                ("stabilization", stabilization is not _PROJECTION))
                 if x is not None and x is not False}
        return simulate_fixed_step(model, t1, solver, t0=t0, saveat=saveat, q0=q0, v0=v0,
                                   throw=throw, initial_tol=initial_tol, reactions=reactions,
                                   uniqueness=uniqueness, max_steps=max_steps,
                                   **{k: True for k in given})
    # Set-up on the host: defaults and checks of static data, the formulation's init.
    stabilization = Unstabilized() if stabilization is None else stabilization
    if not isinstance(stabilization, AbstractStabilization):
        raise ValueError(f"stabilization must be None, jmbs.Baumgarte(...), jmbs.Projection() or "
                         f"another jmbs.AbstractStabilization; got {stabilization!r}")
    method = resolve_method(default_uniqueness(model) if uniqueness is None else uniqueness, model)
    solver, stepsize_controller, adjoint = _integration_options(solver, stepsize_controller, adjoint,
                                                                dt0, max_steps, stabilization)
    check_positive("jmbs.simulate", "initial_tol", initial_tol)
    q0 = model.q0 if q0 is None else jnp.asarray(q0, dtype=float)
    v0 = model.v0 if v0 is None else jnp.asarray(v0, dtype=float)
    if q0.shape != (model.nq,) or v0.shape != (model.nv,):
        raise ValueError(f"q0 and v0 must have shapes ({model.nq},) and ({model.nv},); got "
                         f"{q0.shape} and {v0.shape}")
    given, saveat = saveat, _times(t0, t1, dt0, saveat, backward)  # checked there
    final = _end_only(given, t1)
    t0, t1 = jnp.asarray(t0, float), jnp.asarray(t1, float)
    concrete = not is_traced(model, q0, v0, t0)
    off, q_off = _check_initial_state(model, q0, v0, t0, initial_tol, method) if concrete else (None, False)
    # The rank is decided on the constraints: at a start slightly off them, redundant
    # rows are only nearly dependent.
    q_on = assemble(model, q0, t0, throw=False) if q_off else q0
    formulation = default_formulation(model) if formulation is None else formulation
    prepared = resolve(formulation, model, q_on, t0, "jmbs.simulate")
    check_friction(model, prepared, q_on, t0, method, "jmbs.simulate")

    # The run: one program, whatever the values; a concrete start is projected here, and
    # the program leaves the projection out (unless it failed here: the program's result
    # code reports that). Concrete input: the program compiles in a thread while the saved
    # states' program is traced here (and compiled beside it where the host will not
    # evaluate it).
    q0p, v0p, ok = (q0, v0, True) if off is None else start_projection(model, q0, v0, t0)
    in_program = not concrete or not bool(ok)
    args = (model, prepared, stabilization, solver, stepsize_controller, adjoint, saveat, t0, t1,
            None if dt0 is None else jnp.asarray(dt0, float), q0 if in_program else q0p,
            v0 if in_program else v0p, jnp.asarray(initial_tol, float), max_steps)
    kwargs = dict(project_start=in_program, final=final)
    ahead = None
    if concrete:
        beside = compile_beside(jitted_integrate, *args, **kwargs)
        ahead = compile_solution_ahead(model, prepared, stabilization, method if reactions else None,
                                       saveat, final)
        beside.result()
    run = integrate if not concrete and staging() else jitted_integrate
    ts, qs, vs, work, result, stats, q0p, v0p, stopped = run(*args, **kwargs)
    if ahead is not None:
        ahead.result()
    sol = solution(model, prepared, stabilization, method if reactions else None, ts, qs, vs, work,
                   result, stats, final)

    # Finish on the host: the warning for a projected start, the run's health, failures.
    if off is not None:
        dq, dv = (float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in ((q0p, q0), (v0p, v0)))
        warn_user(f"jmbs.simulate: the initial state was off the constraints ({off}); "
                  f"projected onto them: q moved by {dq:.3g}, v by {dv:.3g}")
    if not concrete:
        return _raise_if_failed(sol, "", throw)
    return _diagnose(model, sol, prepared, method, stabilization, stepsize_controller, q_on, t0, t1,
                     stopped, reactions, throw)


def _integration_options(solver, controller, adjoint, dt0, max_steps, stabilization):
    """`(solver, step-size controller, adjoint)` with their defaults, checked on the host."""
    solver = diffrax.Tsit5() if solver is None else solver
    for name, x, kind, what in (
            ("solver", solver, diffrax.AbstractSolver, "solver (e.g. diffrax.Tsit5())"),
            ("stepsize_controller", controller, diffrax.AbstractStepSizeController,
             "step-size controller (e.g. diffrax.PIDController(rtol=1e-8, atol=1e-8))"),
            ("adjoint", adjoint, diffrax.AbstractAdjoint,
             "adjoint (e.g. diffrax.RecursiveCheckpointAdjoint())")):
        if x is not None and not isinstance(x, kind):
            raise ValueError(f"jmbs.simulate: {name} must be a diffrax {what}, got {x!r}")
    if controller is None:
        controller = (diffrax.PIDController(rtol=1e-8, atol=1e-8) if dt0 is None
                      else diffrax.ConstantStepSize())
    if isinstance(controller, diffrax.PIDController):
        # Tolerances as arrays: a new value then reuses the compiled program.
        controller = eqx.tree_at(lambda c: (c.rtol, c.atol), controller,
                                 (as_float(controller.rtol), as_float(controller.atol)))
    if isinstance(solver, diffrax.AbstractImplicitSolver) and isinstance(
            controller, diffrax.AbstractAdaptiveStepSizeController):
        solver = _resolve_tolerances(solver, controller)
    adjoint = diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint
    stabilization.check_adjoint(adjoint)
    options.check_solver(solver)
    options.check_controller(controller, solver, dt0)
    options.check_max_steps(max_steps, adjoint)
    return solver, controller, adjoint


def _times(t0, t1, dt0, saveat, backward: bool) -> diffrax.SaveAt:
    """The save times as a `diffrax.SaveAt` (default 101 from `t0` to `t1`), with `t0`,
    `t1`, `dt0` and the save times checked on the host."""
    for name, t in (("t0", t0), ("t1", t1)):
        if np.ndim(t) != 0:
            raise ValueError(f"jmbs.simulate: {name} must be a scalar time, got shape {np.shape(t)}")
        check_finite("jmbs.simulate", name, t, "pass a finite time")
    if not is_traced(t0, t1):
        if float(t1) == float(t0):
            raise ValueError(f"jmbs.simulate: t1 = t0 = {float(t0):g}; give an end time t1 after t0")
        if float(t1) < float(t0) and not backward:
            raise ValueError(f"jmbs.simulate: t1 = {float(t1):g} is before t0 = {float(t0):g}; to "
                             "integrate backward in time pass backward=True, else check the sign")
    options.check_dt0(dt0, t0, t1)
    if saveat is None:  # NumPy where concrete: no device program for it
        saveat = (jnp if is_traced(t0, t1) else np).linspace(t0, t1, 101)
    if not isinstance(saveat, diffrax.SaveAt):
        return diffrax.SaveAt(ts=_check_saveat(jnp.asarray(saveat, dtype=float), t0, t1))
    options.check_saveat(saveat)
    if saveat.subs.ts is not None:
        _check_saveat(jnp.asarray(saveat.subs.ts), t0, t1)
    return saveat


def _diagnose(model, sol, prepared, method, stabilization, controller, q_on, t0, t1, stopped,
              reactions: bool, throw: bool):
    """After a run on concrete input: its health (a breach becomes the result), the
    singular configurations it passed, and the cause of a failure in words."""
    where = health.stopped_at(stopped)
    breach = (health.watch(model, prepared, method, sol, controller, stabilization, q_on, t0,
                           int(sol.stats["num_accepted_steps"]))
              if where is None and not is_traced(sol.ts) else None)
    if breach is not None and not np.any(failures(sol.result)):
        sol = eqx.tree_at(lambda s: s.result, sol, getattr(RESULTS, breach[0]))
    if reactions and not is_traced(sol.ts) and breach is None:
        generic, events = sol.singular_configurations()
        at_start = any(kind == "at" and t == float(sol.ts[0]) for t, kind in events)
        warn_singular("jmbs.simulate", generic, events, note=(
            f". The run starts at one: the formulation's rank was decided there, below the "
            f"rank {generic} of the motion; prepare it away from the start (formulation"
            f".prepare(model, q, t)) or state rank={generic}" if at_start else ""))
    hint = ""
    if where is not None:
        hint = f"Cause: {health.name_nonfinite(model, *where)}."
    elif breach is not None:
        hint = f"Cause: {breach[1]}."
    elif np.any(failures(sol.result)):
        hint = _singular_start(model, method, q_on, t0)
        hint = f"Cause: {hint}." if hint else _conflict_on_the_way(model, sol, t1)
    if hint and not throw:
        warn_user(f"jmbs.simulate failed: {hint}")
    return _raise_if_failed(sol, hint, throw)


def _raise_if_failed(sol: Solution, hint: str, throw: bool) -> Solution:
    """The one error path: with `throw`, a failed run raises its message and cause."""
    if not throw:
        return sol
    failed = failures(sol.result)

    def check(x, failed=failed):
        return fail_if(x, failed, "jmbs.simulate failed; run with throw=False and read Solution.message",
                       lambda: f"jmbs.simulate failed: {sol.message}{' ' + hint if hint else ''} "
                               "(run with throw=False to inspect the partial result)")

    # A traced run's saved-state dynamics, where read, fail as well on NaN accelerations
    # (`Solution.deferred`: its result code cannot wait for them).
    return sol.checked(check, lambda values: check(values, failed | ~jnp.all(jnp.isfinite(values[0]))))


def _conflict_on_the_way(model: Model, sol: Solution, t1) -> str:
    """Host-side, after a failed run: whether the prescribed motions conflict after the
    last saved state reached (drivers that agree at the start only). At a few times
    from there to `t1` the configuration is assembled from that state; where it
    cannot be, the rows left violated name the elements, else the velocity and
    acceleration levels are checked."""
    ts, qs = np.asarray(sol.ts), np.asarray(sol.q)
    done = np.isfinite(ts) & np.all(np.isfinite(qs), axis=1)
    if not done.any() or done.all():
        return ""
    k = int(np.flatnonzero(done)[-1])
    for t in ts[k] + (float(t1) - ts[k]) * np.array([1 / 64, 1 / 16, 1 / 4, 1.0]):
        res = assemble(model, qs[k], float(t), throw=False, full_output=True)
        if not bool(res.converged):
            r = np.asarray(phi(model, res.q, t)) * model.holonomic_rows
            clash = f"at position level, {conflict(model, r)}"
        else:
            clash = rheonomic_conflict(model, res.q, t)
        if clash:
            return f"Cause: the prescribed motions conflict by t = {t:.6g}, {clash}."
    return ""


def _singular_start(model: Model, method: AbstractSolvabilityMethod, q, t) -> str:
    """Host-side, after a failed run: why, when the start is a singular configuration
    (the formulation's rank was decided there, below the rank the motion needs)."""
    if model.nc == 0:
        return ""
    rank = int(decisions_at(model, method, q, float(t), element_sets(model)).rank)
    generic = generic_rank(model, q, float(t), rank)
    if generic == rank:
        return ""
    return (f"the start is a singular configuration: the rank of C is {rank} there but {generic} "
            "at the configurations around it (the formulation's rank is decided there, and the "
            "drivers may not determine the motion from it); start away from it")


def _end_only(saveat, t1) -> bool:
    """Host-side: whether the only save time asked for is the end time itself (concrete
    values, as given: under `jax.jit` the converted ones are traced). The state saved
    there is then the last step's end, which `Projection` has put on the constraints,
    rather than an interpolated point projected again (a final state's gradient through
    the Bricard: a fifth less XLA compilation)."""
    if isinstance(saveat, diffrax.SaveAt):
        saveat = save_times(saveat)
    return bool(saveat is not None and np.shape(saveat) == (1,) and not is_traced(saveat, t1)
                and float(np.asarray(saveat)[0]) == float(t1))


def _check_saveat(ts, t0, t1):
    """Host-side checks of the save times (the shape always, values where concrete):
    diffrax would fail on them only inside the compiled run."""
    if ts.ndim != 1:
        raise ValueError(f"jmbs.simulate: saveat must be a 1-D array of times, got shape {ts.shape}")
    check_finite("jmbs.simulate", "saveat", ts, "pass finite times")
    if is_traced(ts, t0, t1) or ts.size == 0:
        return ts
    s, a, b = np.asarray(ts), float(t0), float(t1)
    lo, hi = min(a, b), max(a, b)
    if np.any((s < lo) | (s > hi)):
        raise ValueError(f"jmbs.simulate: saveat has times outside [t0, t1] = [{a:g}, {b:g}] (first: "
                         f"{s[(s < lo) | (s > hi)][0]:g}); save only within the run, or change t1")
    order = "increasing" if b >= a else "decreasing (t1 < t0: a backward run)"
    if np.any(np.diff(s) * (1.0 if b >= a else -1.0) < 0):
        raise ValueError(f"jmbs.simulate: saveat must be {order} from t0 to t1; sort the times")
    return ts


# diffrax's marker for a root finder's "the step-size controller's rtol, atol or norm"
# (one object, not exported by name).
_CONTROLLER_TOL = diffrax.with_stepsize_controller_tols(diffrax.VeryChord)().rtol


def _resolve_tolerances(solver, controller):
    """Give an implicit solver's root finder the controller's tolerances and norm
    (diffrax does this itself, but cannot reach through the solver wrappers of
    `Projection` and the health watch)."""
    rf = solver.root_finder
    for attr in ("rtol", "atol", "norm"):
        if getattr(rf, attr) is _CONTROLLER_TOL:
            rf = eqx.tree_at(lambda r, a=attr: getattr(r, a), rf, getattr(controller, attr))
    return eqx.tree_at(lambda s: s.root_finder, solver, rf)


def _check_initial_state(model: Model, q0, v0, t0, tol: float,
                          method: AbstractSolvabilityMethod) -> tuple[str | None, bool]:
    """Host-side validation of a concrete initial state: refuse NaN and a
    configuration far off the constraints; return a description of a small violation
    (the run projects it) or None (on the constraints: the run's program leaves the
    start's projection out), and whether the positions are off (not only the
    velocities)."""
    for what, x in (("q0", q0), ("v0", v0)):
        if not np.all(np.isfinite(np.asarray(x))):
            raise ValueError(f"{what} contains NaN or inf; pass a finite initial state")
    residual, velocity_error, _, _ = check_terms(model, q0, v0, t0)
    off, worst, size = closure_error(model, q0, t0, residual)
    if off > tol * size:
        raise ValueError(
            f"the initial configuration violates the constraints by {off:.3g} (worst: element "
            f"{worst!r}), more than initial_tol = {tol:g} x size; assemble it "
            "first with jmbs.assemble(model, q0) or raise initial_tol")
    clash = rheonomic_conflict(model, q0, t0)
    if clash:
        singular = _singular_start(model, method, q0, t0)
        raise ValueError(f"jmbs.simulate: no motion satisfies the constraints from the start "
                         f"(t0 = {float(t0):g}): " + (f"{singular} ({clash})" if singular else clash))
    verr = float(np.max(np.abs(np.asarray(velocity_error)), initial=0.0))
    vsize = max(1.0, float(np.max(np.abs(np.asarray(v0)), initial=0.0)))
    q_off = off > ON_CONSTRAINTS_TOL * size
    if not q_off and verr <= ON_CONSTRAINTS_TOL * vsize:
        return None, False
    return f"|Phi| = {off:.3g} at element {worst!r}, |C v + b| = {verr:.3g}", q_off
