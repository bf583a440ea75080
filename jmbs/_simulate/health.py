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

from .._assembly import _group_inputs, phi
from .._forces.base import LoadInputs
from .._model import Model

# A step this short (relative to the run's span) that still ends on NaN or infinity
# means that no step size avoids it: the field itself is not finite there.
MIN_STEP = 1e-11


class FiniteSolver(diffrax.AbstractWrappedSolver):
    """Wraps a diffrax solver: a step that ends off the finite numbers, taken with a
    step of `min_step` or less, stops the run (`RESULTS.nonfinite`). The solver
    state is `(inner state, (t, q, v) where it stopped)` (`t` NaN while running)."""

    solver: diffrax.AbstractSolver
    min_step: Array

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

    def func(self, terms, t0, y0, args):
        return self.solver.func(terms, t0, y0, args)


def _constant(dense_info, finite):
    """The stopping step's interpolation data made to hold its start (its end is not
    finite): `y1 = y0`, the stages zero (Runge-Kutta interpolants add them to `y0`)."""
    if isinstance(dense_info, dict) and "y0" in dense_info and "y1" in dense_info:
        dense_info = dict(dense_info, y1=jax.tree.map(
            lambda a, b: jnp.where(finite, a, b), dense_info["y1"], dense_info["y0"]))
    return jax.tree.map(lambda x: jnp.where(finite | jnp.isfinite(x), x, 0.0), dense_info)


def wrap(solver: diffrax.AbstractSolver, t0, t1) -> FiniteSolver:
    return FiniteSolver(solver, MIN_STEP * jnp.abs(jnp.asarray(t1, float) - jnp.asarray(t0, float)))


def name_nonfinite(model: Model, t: float, q, v) -> str:
    """Host-side, after a run stopped on a non-finite field at time `t` (from the last
    finite state `(q, v)`): which force element's load, or which constraint element's
    residual (a driver's motion), is NaN or infinite there; else the state itself."""
    q, v = jnp.asarray(q, float), jnp.asarray(v, float)
    bad = []
    for g in model.force_groups:
        qs, vs = _group_inputs(model, g, q, v)
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
