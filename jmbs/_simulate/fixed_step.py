"""`jmbs.simulate(..., solver=jmbs.RegularizedEuler(h, ...))`: a fixed-step run and its
`Solution` (host-side checks, one traced program, the saved states' reactions)."""


import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._assembly import constraint_terms, element_power, mass_matrix, phi, potential_energy
from .._bodies import mechanism_size
from .._kinematics import closure_error
from .._misc import check_finite, each_state, fail_if, is_traced, warn_user
from .._model import Model
from .._reactions import build_reactions
from .._solvability.registry import default_uniqueness, resolve_method
from .._stabilization.projection import project_initial
from .._stepper.regularized_euler import RegularizedEuler, StepState
from .solution import RESULTS, Solution, failures

# A save time within this fraction of a step of the step grid is on it.
_GRID_TOL = 1e-6


def simulate_fixed_step(model: Model, t1, solver: RegularizedEuler, *, t0=0.0, saveat=None,
                        q0=None, v0=None, throw: bool = True, initial_tol: float = 1e-6,
                        reactions: bool = True, uniqueness=None, max_steps: int | None = 100_000,
                        **given) -> Solution:
    """The fixed-step run behind `jmbs.simulate(model, t1, solver=RegularizedEuler(...))`.

    `given`: the `simulate` options that do not apply to a fixed-step solver and were
    passed anyway (refused, named). Saved states are the steps' states (every step by
    default, or the `saveat` times, which must lie on the step grid `t0 + k h`); the
    reactions at a saved time are those of the step that starts there (`-lam`)."""
    where = "jmbs.simulate(solver=jmbs.RegularizedEuler(...))"
    if given:
        raise ValueError(f"{where}: {', '.join(sorted(given))} do not apply to the fixed-step "
                         "solver (its constraints are its compliance, its stabilization its "
                         "projection=, its step h); leave them out")
    h = solver.h
    for name, x in (("t0", t0), ("t1", t1), ("h", h)):
        if is_traced(x):
            raise ValueError(f"{where}: {name} is traced; the number of steps must be known on the "
                             "host: give concrete times and step (or scan jmbs.step yourself)")
        check_finite(where, name, x, "pass a finite value")
    t0, t1, h = float(t0), float(t1), float(h)
    if t1 <= t0:
        raise ValueError(f"{where}: t1 = {t1:g} must be after t0 = {t0:g}")
    n = int(round((t1 - t0) / h))
    if abs(n * h - (t1 - t0)) > _GRID_TOL * h or n < 1:
        raise ValueError(f"{where}: t1 - t0 = {t1 - t0:g} is not a whole number of steps h = {h:g}; "
                         "choose t1 = t0 + n h")
    if max_steps is not None and n > max_steps:
        raise ValueError(f"{where}: {n} steps of h = {h:g} exceed max_steps = {max_steps}; raise "
                         "max_steps")
    idx = _save_indices(saveat, t0, h, n, where)
    q0 = model.q0 if q0 is None else jnp.asarray(q0, dtype=float)
    v0 = model.v0 if v0 is None else jnp.asarray(v0, dtype=float)
    if q0.shape != (model.nq,) or v0.shape != (model.nv,):
        raise ValueError(f"{where}: q0 and v0 must have shapes ({model.nq},) and ({model.nv},); got "
                         f"{q0.shape} and {v0.shape}")
    if not is_traced(model, q0):
        check_finite(where, "q0", q0, "pass a finite initial state")
        check_finite(where, "v0", v0, "pass a finite initial state")
        off, worst, size = closure_error(model, q0, t0)
        if off > initial_tol * size:
            raise ValueError(f"{where}: the initial configuration violates the constraints by "
                             f"{off:.3g} (worst: element {worst!r}); assemble it first with "
                             "jmbs.assemble(model, q0) or raise initial_tol")
    solver.rigid_rows(model)  # names in the compliance and damping checked here, on the host
    method = resolve_method(default_uniqueness(model) if uniqueness is None else uniqueness, model)
    ts, qs, vs, lams, v_dot, work, result, q0p = _run(model, solver, q0, v0, jnp.asarray(t0), n,
                                                      jnp.asarray(idx), jnp.asarray(initial_tol))
    sol = _solution(model, solver, method if reactions else None, ts, qs, vs, lams, v_dot, work,
                    result, n)
    if not is_traced(q0p, q0):
        moved = float(jnp.max(jnp.abs(q0p - q0)))
        if moved > 1e-10 * float(mechanism_size(model, q0)):
            warn_user(f"{where}: the initial state was off the constraints; projected onto "
                      f"them: q moved by {moved:.3g}")
    if throw:
        sol = fail_if(sol, failures(sol.result),
                      "jmbs.simulate failed; run with throw=False and read Solution.message",
                      lambda: f"jmbs.simulate failed: {sol.message} (run with throw=False to "
                              "inspect the partial result)")
    return sol


def _save_indices(saveat, t0: float, h: float, n: int, where: str) -> np.ndarray:
    """The step indices of the save times (every step where `saveat` is None)."""
    if saveat is None:
        return np.arange(n + 1)
    if is_traced(saveat):
        raise ValueError(f"{where}: saveat must be concrete times on the step grid t0 + k h")
    s = np.asarray(saveat, dtype=float)
    if s.ndim != 1:
        raise ValueError(f"{where}: saveat must be a 1-D array of times, got shape {s.shape}")
    k = np.rint((s - t0) / h)
    off = np.abs(k - (s - t0) / h) > _GRID_TOL
    if np.any(off) or np.any(k < 0) or np.any(k > n):
        bad = s[off | (k < 0) | (k > n)][0]
        raise ValueError(f"{where}: save time {bad:g} is not a step time t0 + k h within [t0, t1] "
                         f"(h = {h:g}); save at multiples of the step")
    return k.astype(int)


@eqx.filter_jit
def _run(model, solver, q0, v0, t0, n: int, idx, initial_tol):
    """Project the start, take `n + 1` steps (the last only for the final state's
    multipliers), keep the states at `idx`."""
    hol = jnp.asarray(model.holonomic_rows)
    off = jnp.max(jnp.abs(jnp.where(hol, phi(model, q0, t0), 0.0)), initial=0.0)
    far = off > initial_tol * mechanism_size(model, q0)
    q0, v0, ok0 = project_initial(model, q0, v0, t0)
    h = jnp.asarray(solver.h, float)
    forces = bool(model.force_groups)

    def body(carry, _):
        state, work, ok = carry
        new, ok_step = solver.step(model, state)
        power = element_power(model, state.q, new.v, state.t, new.lam) if forces else 0.0
        out = (state.q, state.v, new.lam, (new.v - state.v) / h, work)
        return (new, work + h * power, ok & ok_step), out

    carry = (StepState.initial(model, q0, v0, t0), jnp.zeros(()), jnp.asarray(True))
    (_, _, ok), (qs, vs, lams, v_dot, work) = jax.lax.scan(body, carry, None, length=n + 1)
    ts = t0 + h * idx
    pick = (qs[idx], vs[idx], lams[idx], v_dot[idx], work[idx])
    finite = jnp.all(jnp.isfinite(qs[:n + 1])) & jnp.all(jnp.isfinite(vs))
    result = RESULTS.where(ok, RESULTS.successful, RESULTS.projection_failed)
    result = RESULTS.where(finite | ~ok, result, RESULTS.not_finite)
    result = RESULTS.where(ok0, result, RESULTS.initial_projection_failed)
    result = RESULTS.where(far, RESULTS.initial_state_off, result)
    return (ts, *pick, result, q0)


@eqx.filter_jit
def _solution(model, solver, method, ts, qs, vs, lams, v_dot, work, result, n):
    """The `Solution`: violations, energy and (with a `method`) the reactions from the
    steps' multipliers, their uniqueness decided on the rigid rows."""
    rigid = solver.rigid_rows(model)
    M = mass_matrix(model)

    def post(q, v, lam, t):
        C, b, _ = constraint_terms(model, q, v, t)
        r = jnp.where(jnp.asarray(model.holonomic_rows), phi(model, q, t), 0.0)
        reactions = None if method is None else build_reactions(model, q, t, lam, rigid, C, method)
        return (reactions, jnp.max(jnp.abs(r), initial=0.0),
                jnp.max(jnp.abs(C @ v + b), initial=0.0),
                0.5 * v @ M @ v + potential_energy(model, q))

    reactions, viol, vviol, energy = each_state(post, qs, vs, lams, ts)
    stats = {"num_steps": n, "num_accepted_steps": n, "num_rejected_steps": 0}
    return Solution(ts, qs, vs, v_dot, reactions, viol, vviol, energy, work, result, stats,
                    model.coordinate_names, model.velocity_names)
