"""The result of `jmbs.simulate` and its result codes."""

import diffrax
import equinox as eqx
import numpy as np
from jaxtyping import Array, Bool, Float

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
        "The state became NaN or infinite; the leading matrix may be singular (check the "
        "eliminated rows, or a singular configuration) or the steps too large."
    )
    initial_state_off = (
        "The initial configuration violates the constraints by more than initial_tol x the "
        "mechanism's size; assemble it first with jmbs.assemble(model, q0) or raise initial_tol."
    )
    initial_projection_failed = (
        "The initial state could not be projected onto the constraints; assemble it first "
        "with jmbs.assemble(model, q0)."
    )


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
    - `result`: a `jmbs.RESULTS` item, `RESULTS.successful` on success
      (one per batch element under `jax.vmap`; `message` explains it);
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
    work: Float[Array, " T"]
    result: RESULTS
    stats: dict

    @property
    def message(self) -> str:
        """`"success"`, or what went wrong (every distinct failure of a batch)."""
        codes = np.unique(np.asarray(self.result._value))
        out = [_MESSAGES[int(c)] for c in codes if int(c) != _SUCCESS]
        return "; ".join(out) if out else "success"

    @property
    def ok(self) -> Bool[Array, "..."]:
        """Whether the run (each batch element's) succeeded."""
        return self.result == RESULTS.successful


# Code -> message, for batches (`RESULTS[item]` formats a whole batch as one string).
# equinox keeps the table in `_name_to_item`; there is no public iteration.
_MESSAGES = {int(item._value): RESULTS[item] for item in RESULTS._name_to_item.values()}
_SUCCESS = int(RESULTS.successful._value)
