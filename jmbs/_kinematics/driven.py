"""Driven kinematics: positions, velocities and accelerations of a fully driven
mechanism along given times, with the rank of `C` at each."""


import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from .._assembly import (
    constraint_matrix,
    gamma,
    velocity_rhs,
)
from .._bodies import retract
from .._gc import compiles
from .._linalg import (
    rank_decision,
)
from .._misc import check_finite, check_int, check_positive, check_state, fail_if, is_traced
from .._model import Model
from .._rank import constraint_rank, equilibrate
from .assemble import assemble_positions
from .singular import generic_rank, singular_points, warn_singular
from .velocity import rheonomic_conflict


class KinematicsSolution(eqx.Module):
    """Positions, velocities and accelerations of a fully driven mechanism over time;
    `residual (T,)` is `max |Phi|` after assembly, `rank (T,)` the rank of `C` and
    `rank_values (T, k)` its singular values relative to the largest (a rank below
    `nv` is a singular configuration, where the drivers do not determine the motion)."""

    ts: Float[Array, " T"]
    q: Float[Array, "T nq"]
    v: Float[Array, "T nv"]
    v_dot: Float[Array, "T nv"]
    residual: Float[Array, " T"]
    rank: Int[Array, " T"]
    rank_values: Float[Array, "T k"]

    def __repr__(self) -> str:
        if is_traced(self.ts):
            return f"KinematicsSolution(traced: ts {tuple(self.ts.shape)})"
        ts = np.asarray(self.ts)
        return (f"KinematicsSolution({ts.size} times, t = {ts[0]:g} .. {ts[-1]:g}, max |Phi| = "
                f"{float(np.max(self.residual)):.1e}, rank {int(np.min(self.rank))}.."
                f"{int(np.max(self.rank))})")


@compiles
def kinematics(model: Model, ts, q_guess=None, *, tol: float = 1e-12,
               max_steps: int = 50) -> KinematicsSolution:
    """Position, velocity and acceleration analysis of a fully driven mechanism.

    At each time: `Phi(q, t) = 0` by `assemble` (warm-started from the previous
    time, extrapolated with its velocity), `C v = -b`, `C v_dot = Gamma`.

    Differentiable with respect to the model's parameters (`jax.grad` over
    `model.with_params(...)`): each position is differentiated implicitly
    through `assemble`, not through its iterations.

    A concrete run that meets a singular configuration (the rank of `C` below `nv`
    at a time of `ts`, or, judged from `ts`, between two of them) gets a warning
    with the times: there the drivers do not determine the motion.

    **Raises:** `ValueError` for `ts` that is not a non-empty 1-D array of
    finite times, a `q_guess` of the wrong shape, a model with degrees of
    freedom left (add drivers), or a start at a singular configuration (values
    are checked where the input is concrete); `eqx.EquinoxRuntimeError`
    (a `RuntimeError`) if assembly fails at some time, concrete or traced.
    """
    ts = jnp.asarray(ts, dtype=float)
    if ts.ndim != 1 or ts.size == 0:
        raise ValueError(f"jmbs.kinematics: ts must be a 1-D array of times with at least one time, "
                         f"got shape {ts.shape}")
    check_finite("jmbs.kinematics", "ts", ts, "pass finite times")
    check_positive("jmbs.kinematics", "tol", tol)
    check_int("jmbs.kinematics", "max_steps", max_steps, "it bounds the Gauss-Newton iterations")
    q = model.q0 if q_guess is None else check_state("jmbs.kinematics", "q_guess", q_guess, model.nq,
                                                     "coordinate")
    concrete = not is_traced(model, q, ts)
    if concrete:  # host-side validation; it does not change the program
        _check_fully_driven(model, q, ts[0])
    out, ok = _kinematics(model, ts, q, tol, max_steps)

    def detail():
        k = int(np.argmax(~np.asarray(ok)))
        return (f"jmbs.kinematics: position analysis failed at t = {float(ts[k]):.6g} (max |Phi| = "
                f"{float(out.residual[k]):.3g}); the mechanism may pass a singular or unreachable "
                "configuration")

    out = fail_if(out, ~jnp.all(ok), "jmbs.kinematics: position analysis failed at some time "
                  "(singular or unreachable configuration)", detail)
    if concrete:
        warn_singular("jmbs.kinematics", *singular_points(ts, out.rank, out.rank_values))
    return out


def _check_fully_driven(model: Model, q: Array, t) -> None:
    """Host-side: refuse a model with free motions, and a start at a singular
    configuration (where `C` loses rank although the drivers fix the motion nearby)."""
    rank = constraint_rank(model, q, t)
    if rank == model.nv:
        clash = rheonomic_conflict(model, q, t)
        if clash:
            raise ValueError(f"jmbs.kinematics: the drivers conflict at the start (t = {float(t):g}) "
                             f"{clash}")
        return
    if generic_rank(model, q, t, rank) < model.nv:
        raise ValueError(f"the model has {model.nv - rank} degree(s) of freedom left; "
                         "kinematic analysis needs every one driven (add drivers)")
    raise ValueError(f"jmbs.kinematics: the start (t = {float(t):g}) is a singular configuration: "
                     f"the rank of C is {rank} there but {model.nv} at the configurations around "
                     "it, so the drivers do not determine the motion; start at a time (or from a "
                     "q_guess) away from it")


@eqx.filter_jit
def _kinematics(model, ts, q, tol, max_steps):
    free = np.ones(model.nv, bool)

    def step(carry, t):
        q_prev, v_prev, t_prev = carry
        guess = retract(model, q_prev, v_prev * (t - t_prev))
        res = assemble_positions(model, guess, t, free, tol, max_steps)
        C = constraint_matrix(model, res.q, t)
        # pinv, once for both solves: differentiable where C is rank-deficient (lstsq is
        # not). On the constraints (just assembled) redundant rows are dependent to
        # rounding, and JAX's default (10 max(nc, nv) eps) keeps independent rows up to very
        # close to a singular configuration, where driven kinematics is ill-posed anyway.
        P = jnp.linalg.pinv(C)
        v = P @ -velocity_rhs(model, res.q, t)
        a = P @ gamma(model, res.q, v, t)
        rd = rank_decision(jnp.linalg.svd(equilibrate(model, jax.lax.stop_gradient(C)),
                                          compute_uv=False))
        return (res.q, v, t), (res.q, v, a, res.residual, res.converged, rd.rank, rd.rel)

    init = (q, jnp.zeros(model.nv), ts[0])
    _, (qs, vs, accs, r, ok, rank, rel) = jax.lax.scan(step, init, ts)
    return KinematicsSolution(ts, qs, vs, accs, r, rank, rel), ok
