"""The result of `jmbs.simulate` and its result codes."""

import html

import diffrax
import equinox as eqx
import jax
import numpy as np
from jax.extend.core import get_opaque_trace_state
from jaxtyping import Array, Bool, Float

from .._display import reactions_html, solution_line, solution_text
from .._kinematics import singular_points
from .._misc import is_traced
from .._outputs import joint_coordinates
from .._reactions import Reactions


class RESULTS(diffrax.RESULTS):  # pyright: ignore[reportGeneralTypeIssues]
    """diffrax's result codes (an `eqx.Enumeration`, extended as diffrax extends
    optimistix's) and jmbs's own."""

    projection_failed = (
        "A step's nonlinear solve did not converge: the projection onto the constraints "
        "(singular configuration or too large steps), or an implicit solver's root find; "
        "reduce the step size or the tolerances."
    )
    not_finite = (
        "The state or its rate became NaN or infinite, whatever the step: a force element, "
        "force law or driver motion returned NaN or infinity (the warning or exception names "
        "it and the time), or the leading matrix is singular (check the eliminated rows, or a "
        "singular configuration)."
    )
    initial_state_off = (
        "The initial configuration violates the constraints by more than initial_tol x the "
        "mechanism's size; assemble it first with jmbs.assemble(model, q0) or raise initial_tol."
    )
    initial_projection_failed = (
        "The initial state could not be projected onto the constraints; assemble it first "
        "with jmbs.assemble(model, q0)."
    )
    energy_drift = (
        "The run's energy balance broke: energy minus the work of the non-conservative forces "
        "moved more than the step-size controller's tolerance allows over the steps taken (the "
        "warning or exception says when, by how much); tighten the tolerances, or look for a "
        "force that feeds energy in."
    )
    rank_changed = (
        "The rank of the rigid rows of C rose above the mechanism's rank at the start: the motion "
        "left the mechanism's branch (locked into another assembly); see the warning or "
        "exception for the time and the joint."
    )
    reactions_unexplained = (
        "A reaction grew far beyond the loads acting (gravity, inertia, the start's reactions): a "
        "locked or singular configuration holds it, or a force that reads the reactions feeds "
        "it; see the warning or exception for the time and the joint."
    )
    invalid_design = (
        "The model's values are not a physical design: a mass or inertia that is not "
        "positive, or a NaN or infinite parameter (under jax.vmap: this batch member's "
        "parameters); with concrete values, Model.with_params names the parameter."
    )


class _Evaluation:
    """`evaluate()` once per trace: the deferred fields of a solution share one evaluation
    (flattening reads all five; under an un-jitted `jax.vmap` each evaluation runs).
    A read inside another trace (a `jax.lax.cond` branch, a nested `jax.vmap`) evaluates
    there, so no value leaves the trace it belongs to."""

    __slots__ = ("evaluate", "trace", "values")

    def __init__(self, evaluate):
        self.evaluate, self.trace, self.values = evaluate, None, None

    def __call__(self):
        trace = get_opaque_trace_state(None)
        if self.values is None or self.trace != trace:
            self.values, self.trace = self.evaluate(), trace
        return self.values


class _Deferred:
    """A saved-state value of a traced `Solution` (`Solution.deferred`): element `index`
    of what `evaluate()` returns, evaluated where it is read. As a pytree node it is
    evaluated where the solution is flattened (returned from `jax.jit` or `jax.vmap`,
    passed to `jax.tree.map`), and unflattens to the value itself."""

    __slots__ = ("evaluate", "index")

    def __init__(self, evaluate, index: int):
        self.evaluate, self.index = evaluate, index

    def value(self):
        return self.evaluate()[self.index]


jax.tree_util.register_pytree_node(_Deferred, lambda d: ((d.value(),), None),
                                   lambda _, children: children[0])

# The fields a traced run evaluates where they are read.
_DEFERRED = ("v_dot", "reactions", "violation", "velocity_violation", "energy")


class Solution(eqx.Module):
    """The result of `jmbs.simulate` at the saved times.

    - `ts (T,)`, `q (T, nq)`, `v (T, nv)`, `v_dot (T, nv)`;
    - `reactions`: a `Reactions` (forces, torques, components, uniqueness per
      saved time);
    - `violation (T,)`: `max |Phi|` over the holonomic rows, and
      `velocity_violation (T,)`: `max |C v + b|`;
    - `energy (T,)`: kinetic plus potential energy (gravity and the springs);
    - `work (T,)`: the work done since `t0` by the force elements' non-conservative
      part (dampers, applied loads, actuators, friction), so that without
      drivers `energy - work` stays constant (drivers' work is not included);
    - `singular_configurations()`: where the motion meets a singular configuration;
    - `table(model)`, `to_dataframe(model)`: the run as named columns;
    - `result`: a `jmbs.RESULTS` item, `RESULTS.successful` on success
      (one per batch element under `jax.vmap`; `message` explains it);
    - `stats`: diffrax's statistics (steps taken, rejected, ...).

    Under a trace (`jax.jit`, `jax.grad`, `jax.vmap` over `simulate`) `v_dot`,
    `reactions`, `violation`, `velocity_violation` and `energy` are traced where they
    are read or the solution is flattened (`Solution.deferred`), and `result` reports
    NaN or infinity in the states, not in the accelerations.
    """

    ts: Float[Array, " T"]
    q: Float[Array, "T nq"]
    v: Float[Array, "T nv"]
    v_dot: Float[Array, "T nv"]
    reactions: Reactions | None
    violation: Float[Array, " T"]
    velocity_violation: Float[Array, " T"]
    energy: Float[Array, " T"]
    work: Float[Array, " T"]
    result: RESULTS
    stats: dict
    coordinate_names: tuple[str, ...] = eqx.field(static=True, default=())
    velocity_names: tuple[str, ...] = eqx.field(static=True, default=())

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        return value.value() if type(value) is _Deferred else value

    @classmethod
    def deferred(cls, evaluate, ts, q, v, work, result, stats, coordinate_names=(),
                 velocity_names=()) -> "Solution":
        """A solution whose `v_dot`, `reactions`, `violation`, `velocity_violation` and
        `energy` are `evaluate()`'s five values, traced only where one of them is read
        (or the solution is flattened): a traced run (under `jax.jit`, `jax.grad`,
        `jax.vmap`) whose caller reads the states alone, a final state's gradient
        above all, neither traces nor differentiates the saved states' dynamics
        (`evaluate` runs once per trace, whatever the fields read)."""
        sol = cls(ts, q, v, None, None, None, None, None, work, result, stats, coordinate_names,
                  velocity_names)
        evaluation = _Evaluation(evaluate)
        for k, name in enumerate(_DEFERRED):  # past eqx's __init__, which flattens its arguments
            object.__setattr__(sol, name, _Deferred(evaluation, k))
        return sol

    def checked(self, check, check_deferred) -> "Solution":
        """This solution with `check` (a function of a pytree that returns it, e.g.
        `fail_if`'s) applied to its values; deferred ones go through `check_deferred`
        where they are read (`evaluate()`'s five values)."""
        first = object.__getattribute__(self, _DEFERRED[0])
        if type(first) is not _Deferred:
            return check(self)
        ts, q, v, work = check((self.ts, self.q, self.v, self.work))
        return Solution.deferred(lambda: check_deferred(first.evaluate()), ts, q, v, work,
                                 self.result, self.stats, self.coordinate_names, self.velocity_names)

    def __repr__(self) -> str:
        return solution_line(self)

    def __str__(self) -> str:
        return solution_text(self)

    def _repr_html_(self) -> str:
        reactions = "" if self.reactions is None else reactions_html(self.reactions)
        return f"<p>{html.escape(solution_line(self))}</p>{reactions}"

    def table(self, model=None) -> dict[str, np.ndarray]:
        """The run as named columns `(T,)` (one run, concrete): `t`, the coordinates
        (`model.coordinate_names`), the velocities (`model.velocity_names`),
        `energy`, `work`, `violation`, `velocity_violation`, the reaction
        components (`"<element>.<component>"`, `-lambda`) and, given the `model`, the
        joints' coordinates (`"<joint>.angle"`, `"<joint>.slide"`)."""
        if is_traced(self.ts) or np.ndim(self.ts) != 1:
            raise ValueError("Solution.table needs one concrete run (not traced, not a batch: "
                             "index the batch first, e.g. jax.tree.map(lambda x: x[0], sol))")
        cols = {"t": np.asarray(self.ts)}
        for names, values in ((self.coordinate_names, self.q), (self.velocity_names, self.v)):
            cols |= {n: np.asarray(values[:, k]) for k, n in enumerate(names)}
        if model is not None:
            cols |= joint_coordinates(model, self.q)
        cols |= {n: np.asarray(getattr(self, n)) for n in ("energy", "work", "violation",
                                                             "velocity_violation")}
        if self.reactions is not None:
            r = self.reactions
            for name, comps, (a, _) in zip(r.element_names, r.component_names, r.element_rows):
                cols |= {f"{name}.{c}": -np.asarray(r.multipliers[:, a + k])
                         for k, c in enumerate(comps)}
        return cols

    def to_dataframe(self, model=None):
        """`Solution.table(model)` as a pandas `DataFrame` indexed by nothing (a column
        `t`). Needs pandas: `pip install "jmbs[pandas]"`."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Solution.to_dataframe needs pandas: pip install \"jmbs[pandas]\" "
                              "(or use Solution.table(), a dict of NumPy columns)") from None
        return pd.DataFrame(self.table(model))

    @property
    def message(self) -> str:
        """`"success"`, or what went wrong (every distinct failure of a batch)."""
        codes = np.unique(np.asarray(self.result._value))
        out = [_MESSAGES[int(c)] for c in codes if int(c) != _SUCCESS]
        return "; ".join(out) if out else "success"

    def singular_configurations(self) -> tuple[int, list[tuple[float, str]]]:
        """`(generic rank, events)`: where the motion is at a singular configuration
        (`(t, "at")`, a saved time whose rank is below the largest rank along the
        motion) or passes one between saved times (`(t, "through")`). Needs the
        reactions (`reactions=True`) and one run (not a batch)."""
        if self.reactions is None or np.ndim(self.ts) != 1:
            raise ValueError("singular_configurations needs one run simulated with reactions=True")
        ts = np.asarray(self.ts)
        done = np.isfinite(ts)
        return singular_points(ts[done], np.asarray(self.reactions.rank)[done],
                               np.asarray(self.reactions.rank_values)[done])

    @property
    def ok(self) -> Bool[Array, "..."]:
        """Whether the run (each batch element's) succeeded."""
        return self.result == RESULTS.successful


def failures(result: RESULTS) -> "np.ndarray | Bool[Array, '...']":
    """Where runs failed (`result` not successful): NumPy for a concrete result (no
    device program on the host's side of a call), traced otherwise."""
    if is_traced(result._value):
        return result != RESULTS.successful
    return np.asarray(result._value) != _SUCCESS


# Code -> message, for batches (`RESULTS[item]` formats a whole batch as one string).
# equinox keeps the table in `_name_to_item`; there is no public iteration.
_MESSAGES = {int(item._value): RESULTS[item] for item in RESULTS._name_to_item.values()}
_SUCCESS = int(RESULTS.successful._value)
