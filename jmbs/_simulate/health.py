"""A run's health: a non-finite vector field stops the run where it appears (traced,
`FiniteSolver`), and the host names the element that caused it (`name_nonfinite`).

A step whose end state is NaN or infinite is rejected by an adaptive controller
(diffrax turns its error estimate into infinity) and retried smaller. Where the
field is non-finite whatever the step (a force law that returns NaN, a driver
motion that does), the steps shrink towards zero and the run used to end only at
`max_steps`, naming nothing. `FiniteSolver` stops it instead once a step of
`min_step` or less still ends off the finite numbers (and at once under constant
steps): the step is kept with the state it started from and
`diffrax.RESULTS.nonfinite`, which `jmbs.RESULTS` reports as `not_finite`; its
solver state keeps the time and the last finite state for the host's diagnosis.
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._assembly import check_terms, group_inputs, phi
from .._forces.base import LoadInputs
from .._misc import cotangent_shapes, filled_cotangents
from .._model import Model

# A step this short (relative to the run's span) that still ends on NaN or infinity
# means that no step size avoids it: the field itself is not finite there.
MIN_STEP = 1e-11


class FiniteSolver(diffrax.AbstractWrappedSolver):
    """Wraps a diffrax solver: a step that ends off the finite numbers, taken with a
    step of `min_step` or less, stops the run (`RESULTS.nonfinite`). The solver
    state is `(inner state, (t, q, v) where it stopped)` (`t` NaN while running).
    `custom_vjp` (static): the step is differentiated through its own VJP (the
    gradient's forward pass, `integrate._integrate_stored_stages`)."""

    solver: diffrax.AbstractSolver
    min_step: Array
    custom_vjp: bool = eqx.field(static=True, default=False)

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
        where = (jnp.asarray(jnp.nan), y0[0], y0[1])
        return self.solver.init(terms, t0, t1, y0, args), where

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        inputs = (self, terms, t0, t1, y0, args, solver_state, made_jump)
        return _vjp_step(inputs) if self.custom_vjp else _step(*inputs)

    def func(self, terms, t0, y0, args):
        return self.solver.func(terms, t0, y0, args)


# Jitted: diffrax traces a step three times (twice for the loop's static structure, once
# for the loop), and a jitted step is traced once (the Bricard's integration: 0.76 instead
# of 0.92 s of tracing and lowering).
@eqx.filter_jit
def _step(self: FiniteSolver, terms, t0, t1, y0, args, solver_state, made_jump):
    inner, where = solver_state
    y1, y_error, dense_info, inner, result = self.solver.step(
        terms, t0, t1, y0, args, inner, made_jump)
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(y1)]))
    stop = ~finite & (jnp.abs(t1 - t0) <= self.min_step)
    if y_error is not None:  # accept the stopping step, so that its result counts
        y_error = jax.tree.map(lambda e: jnp.where(stop, 0.0, e), y_error)
    y1 = jax.tree.map(lambda a, b: jnp.where(finite, a, b), y1, y0)
    dense_info = _constant(dense_info, finite)
    where = jax.tree.map(lambda new, old: jnp.where(finite, old, new),
                         (jnp.asarray(t1, float), y0[0], y0[1]), where)
    result = diffrax.RESULTS.where(finite, result, diffrax.RESULTS.nonfinite)
    return y1, y_error, dense_info, (inner, where), result


# Reverse mode through the run (`custom_vjp=True`): equinox's checkpointed loop asks for
# the step's linearization four times (two passes to a fixed point of the perturbed
# values, one for the symbolic-zero cotangents, one for the backward loop), each with other
# nonzero tangents, so JAX's cache of linearizations shares none of them. A custom VJP
# whose forward and backward are jitted is linearized once and transposed once (the
# spatial pendulum's first gradient: tracing 13.8 -> 10.6 s; docs/benchmarks.md).
@eqx.filter_custom_vjp
def _vjp_step(inputs):
    return _step(*inputs)


@eqx.filter_jit
def _step_and_pullback(inputs):
    return eqx.filter_vjp(lambda i: _step(*i), inputs)


@eqx.filter_jit
def _pull(pull, g):
    return pull(g)[0]


@_vjp_step.def_fwd
def _vjp_step_fwd(perturbed, inputs):
    out, pull = _step_and_pullback(inputs)
    return out, (pull, cotangent_shapes(out))


@_vjp_step.def_bwd
def _vjp_step_bwd(residuals, g, perturbed, inputs):
    pull, shapes = residuals
    return _pull(pull, filled_cotangents(g, shapes))


def _constant(dense_info, finite):
    """The stopping step's interpolation data made to hold its start (its end is not
    finite): `y1 = y0`, the stages zero (Runge-Kutta interpolants add them to `y0`)."""
    if isinstance(dense_info, dict) and "y0" in dense_info and "y1" in dense_info:
        dense_info = dict(dense_info, y1=jax.tree.map(
            lambda a, b: jnp.where(finite, a, b), dense_info["y1"], dense_info["y0"]))
    return jax.tree.map(lambda x: jnp.where(finite | jnp.isfinite(x), x, 0.0), dense_info)


def wrap(solver: diffrax.AbstractSolver, t0, t1, custom_vjp: bool = False) -> FiniteSolver:
    return FiniteSolver(solver, MIN_STEP * jnp.abs(jnp.asarray(t1, float) - jnp.asarray(t0, float)),
                        custom_vjp)


def name_nonfinite(model: Model, t: float, q, v) -> str:
    """Host-side, after a run stopped on a non-finite field at time `t` (from the last
    finite state `(q, v)`): which force element's load, or which constraint element's
    residual (a driver's motion), is NaN or infinite there; else the state itself."""
    q, v = jnp.asarray(q, float), jnp.asarray(v, float)
    bad = []
    for g in model.force_groups:
        qs, vs = group_inputs(model, g, q, v)
        lam = jnp.zeros(model.nc) if g.reads_reactions else None
        try:
            load = np.asarray(g.load(qs, vs, LoadInputs(q, v, jnp.asarray(t, float), lam)))
        except Exception:  # noqa: BLE001  (a law that fails outside the run: not this one)
            continue
        load = load.reshape(load.shape[0], -1)
        bad += [f"force element {n!r}" for n, row in zip(g.names, load)
                if not np.all(np.isfinite(row))]
    if model.nc:
        r = np.asarray(phi(model, q, t))
        bad += [f"element {name!r} (its constraint, e.g. a driver's motion)"
                for name, (a, b) in zip(model.element_names, model.element_rows)
                if not np.all(np.isfinite(r[a:b]))]
    if bad:
        return f"at t = {t:.6g}: {', '.join(bad)} returned NaN or infinity"
    return (f"at t = {t:.6g}: the accelerations became NaN or infinite (no force element or "
            "constraint did: the leading matrix may be singular there, a singular configuration "
            "or wrongly eliminated rows)")


def stopped_at(where) -> tuple[float, np.ndarray, np.ndarray] | None:
    """The `(t, q, v)` where a concrete run stopped on a non-finite field, or None."""
    t = np.asarray(where[0])
    if t.ndim != 0 or not np.isfinite(t):
        return None
    return float(t), np.asarray(where[1]), np.asarray(where[2])


def solver_state_saved(saveat: diffrax.SaveAt) -> diffrax.SaveAt:
    """`saveat` that also returns the final solver state (where a run stopped)."""
    return eqx.tree_at(lambda s: s.solver_state, saveat, True)


# ----- the watch over a finished run (host-side, concrete runs) -----

# Reactions this many times the loads that act at a saved state (gravity, the inertial
# forces M v_dot, the reactions at the start) are not explained by them.
REACTION_GROWTH = 1e4
# The energy balance may drift by this many times (tolerance x accepted steps x energy
# scale): each step's local error, relative to the state, is within the tolerance,
# and the energy is quadratic in the state.
ENERGY_SAFETY = 2.0


def watch(model: Model, prepared, method, sol, controller, stabilization, q0, t0,
          num_steps: int) -> "tuple[str, str] | None":
    """Host-side, after a concrete run: `(code name, one-line cause)` for the first
    breach of its health at the saved states, or None. Checks, in this order: the
    rank of the rigid rows above the mechanism's rank at the start, reactions that
    grow far beyond the loads acting, and (rigid, projected runs without drivers,
    adaptive steps) the energy balance against the tolerance's bound."""
    ts = np.asarray(sol.ts)
    ok = np.isfinite(ts) & np.all(np.isfinite(np.asarray(sol.q)), axis=1)
    if ok.sum() < 2:
        return None
    return (_rank_rise(model, prepared, method, sol, ok, q0, t0)
            or _reaction_growth(model, sol, ok)
            or _energy_balance(model, prepared, sol, ok, controller, stabilization, num_steps))


def _rank_rise(model, prepared, method, sol, ok, q0, t0):
    rank0 = prepared.state.rank
    if sol.reactions is None or rank0 is None:
        return None
    ranks = np.asarray(sol.reactions.rank)[ok]
    if not np.any(ranks > rank0):
        return None
    from .._kinematics import generic_rank  # host-only, on this rare path
    generic = generic_rank(model, q0, float(t0), rank0)
    above = np.flatnonzero(ranks > generic)
    if above.size == 0:  # a start at a singular configuration: warned about separately
        return None
    k = above[0]
    t = float(np.asarray(sol.ts)[ok][k])
    return ("rank_changed", f"at t = {t:.6g} the rank of the rigid rows of C rose to {ranks[k]}, "
            f"above the mechanism's rank {generic} at the start: the motion left the mechanism's "
            f"branch (it locked into another assembly, largest reaction at {_largest(sol, ok, k)}); "
            "check the forces that drove it there (friction on a non-unique reaction, a "
            "singular configuration) or tighten the tolerances")


def _largest(sol, ok, k) -> str:
    r = sol.reactions
    lam = np.abs(np.asarray(r.multipliers)[ok][k])
    row = int(np.argmax(lam))
    name = next(n for n, (a, b) in zip(r.element_names, r.element_rows) if a <= row < b)
    return f"{name!r} ({lam[row]:.3g})"


def _mass_times(model: Model, x: np.ndarray) -> np.ndarray:
    """`M x` per row of `x (T, nv)` in NumPy (block-diagonal `M`: no device program)."""
    m = np.asarray(model.mass)
    x = x.reshape(x.shape[0], model.n_bodies, -1)
    if model.dim == 2:
        out = x * np.stack([m, m, np.asarray(model.inertia)], axis=1)
    else:
        out = np.concatenate([m[:, None] * x[..., :3],
                              np.einsum("bij,tbj->tbi", np.asarray(model.inertia), x[..., 3:])], axis=2)
    return out.reshape(out.shape[0], -1)


def _loads(model: Model, sol, ok) -> np.ndarray:
    """Per saved state, the scale of the loads: gravity, `M v_dot`, the start's reactions."""
    inertial = np.max(np.abs(_mass_times(model, np.asarray(sol.v_dot)[ok])), axis=1, initial=0.0)
    weight = float(np.sum(np.asarray(model.mass)) * np.linalg.norm(np.asarray(model.gravity)))
    lam0 = float(np.max(np.abs(np.asarray(sol.reactions.multipliers)[ok][0]), initial=0.0))
    return inertial + weight + lam0


def _applied(model: Model, sol, ok, k: int) -> float:
    """The largest generalized force at saved state `k` (gravity, springs, applied loads;
    not friction, which reads the reactions): evaluated on the rare path only."""
    from .._assembly import generalized_forces
    q, v, t = (np.asarray(x)[ok][k] for x in (sol.q, sol.v, sol.ts))
    return float(np.max(np.abs(np.asarray(generalized_forces(model, q, v, t))), initial=0.0))


def _reaction_growth(model, sol, ok):
    if sol.reactions is None or model.nc == 0:
        return None
    lam = np.max(np.abs(np.asarray(sol.reactions.multipliers)[ok]), axis=1)
    loads = _loads(model, sol, ok)
    grown = np.flatnonzero(lam > REACTION_GROWTH * np.maximum(loads, 1e-300))
    for k in grown:  # the applied loads there, before calling it unexplained
        loads[k] += _applied(model, sol, ok, k)
        if lam[k] > REACTION_GROWTH * loads[k]:
            break
    else:
        return None
    t = float(np.asarray(sol.ts)[ok][k])
    return ("reactions_unexplained",
            f"at t = {t:.6g} the reaction of {_largest(sol, ok, k)} is {lam[k] / loads[k]:.3g} times "
            f"the loads acting ({loads[k]:.3g}: gravity, inertia, applied forces, the start's "
            "reactions); a "
            "singular configuration or a locked mechanism holds it, or a force that reads the "
            "reactions (friction on a non-unique reaction) feeds it" + _readers(model))


def _readers(model: Model) -> str:
    names = [s.name for s in model.force_specs if s.kind == "joint_friction"]
    return f" (here: {', '.join(repr(n) for n in names)})" if names else ""


def _energy_scale(model: Model, sol, ok) -> float:
    """The energy the run can exchange: kinetic and spring energy at the start, the
    bodies' weight over their characteristic lengths, the non-conservative work."""
    q0, v0 = np.asarray(sol.q)[ok][0], np.asarray(sol.v)[ok][0]
    kinetic = 0.5 * float(v0 @ _mass_times(model, v0[None])[0])
    r0 = q0.reshape(model.n_bodies, -1)[:, :model.dim]
    m, g = np.asarray(model.mass), np.asarray(model.gravity)
    springs = float(np.asarray(sol.energy)[ok][0]) - kinetic + float(np.sum(m * (r0 @ g)))
    # The lengths from the program of the host's checks, which the run's start compiled.
    L = check_terms(model, q0, v0, np.asarray(sol.ts)[ok][0])[3]
    weight = float(np.sum(m * np.asarray(L))) * float(np.linalg.norm(g))
    work = float(np.max(np.abs(np.asarray(sol.work)[ok]), initial=0.0))
    return kinetic + abs(springs) + weight + work


def _energy_balance(model, prepared, sol, ok, controller, stabilization, num_steps):
    import diffrax

    from .._joints.base import DriverSpec
    from .._stabilization.projection import Projection
    if (not isinstance(controller, diffrax.PIDController) or not isinstance(stabilization, Projection)
            or not np.all(prepared.rigid_rows)
            or any(isinstance(s, DriverSpec) or s.kind in ("holonomic", "pfaffian")
                   for s in model.element_specs)):
        return None  # drivers, compliance or Baumgarte exchange energy the balance does not count
    tol = max(float(np.max(controller.rtol)), float(np.max(controller.atol)))
    balance = (np.asarray(sol.energy) - np.asarray(sol.work))[ok]
    drift = np.abs(balance - balance[0])
    scale = _energy_scale(model, sol, ok)
    bound = ENERGY_SAFETY * tol * max(num_steps, 1) * scale + 1e-12 * scale
    over = np.flatnonzero(drift > bound)
    if over.size == 0:
        return None
    k = over[0]
    t = float(np.asarray(sol.ts)[ok][k])
    forces = ", ".join(repr(n) for n in model.force_names)
    where = f"; the force elements in the balance: {forces}" if forces else ""
    return ("energy_drift",
            f"at t = {t:.6g} energy minus work moved by {drift[k]:.3g} J from the start, above the "
            f"{bound:.3g} J that the tolerance {tol:g} over {num_steps} steps allows{where}; "
            "tighten the tolerances (rtol, atol), or look for a force that feeds energy in")
