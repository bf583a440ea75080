"""Consistent velocities (dense, or along the assembly tree for large models) and the
consistency of prescribed motions at velocity and acceleration level."""

from collections.abc import Sequence

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._assembly import (
    blocks_matvec,
    body_mass,
    constraint_blocks,
    constraint_matrix,
    gamma,
    inverse_mass_matrix,
    velocity_rhs,
)
from .._joints.base import ConstraintSpec, DriverSpec
from .._linalg import (
    VELOCITY_RTOL,
    VELOCITY_SV_RTOL,
    structured,
)
from .._misc import RunOnce, check_finite, check_positive, check_state, fail_if
from .._model import Model
from .._tree.plan import make_plan
from .._tree.solve import solve as tree_solve
from .assemble import free_mask


def consistent_velocity(model: Model, q: Float[Array, " nq"], v_guess=None, t=0.0, *,
                        fixed: Sequence = (), tol: float = 1e-8) -> Float[Array, " nv"]:
    """The velocity closest to `v_guess` in the mass metric that satisfies `C v + b = 0`.

    `v = v_g - W C^T (C W C^T)^+ (C v_g + b)` with `W = M^-1` (zero at the
    `fixed` coordinates, which keep their guessed values). Redundant rows are
    handled by the pseudoinverse. From `jmbs.internal.STRUCTURED_MIN_NV` velocity coordinates
    on (and without `fixed`), solved along the assembly tree in O(n).

    **Raises:** `eqx.EquinoxRuntimeError` (a `RuntimeError`), concrete or traced,
    when no such velocity exists: `max |C v + b|` stays above `tol` (relative to
    `max(1, |b|, |C v_guess|)`) because the constraints' velocities conflict (two
    drivers of one joint with different rates, an inconsistent redundant driver, a
    `fixed` coordinate the constraints determine otherwise); for concrete input
    the message names the elements whose rows cannot hold.
    """
    where = "jmbs.consistent_velocity"
    q = check_state(where, "q", q, model.nq, "coordinate")
    v = model.v0 if v_guess is None else check_state(where, "v_guess", v_guess, model.nv,
                                                     "velocity coordinate")
    check_finite(where, "t", t, "pass a finite time")
    check_positive(where, "tol", tol)
    t = jnp.asarray(t, dtype=float)
    if structured(model) and not fixed:
        v, r, bad = _consistent_velocity_tree(model, q, v, t, tol)
    else:
        free = jnp.asarray(free_mask(model, fixed), dtype=float)
        v, r, bad = _consistent_velocity(model, q, v, t, free, tol)
    return fail_if(v, bad, f"{where}: no velocity satisfies the constraints (their velocities "
                   "conflict)", lambda: f"{where}: no velocity satisfies C v + b = 0 at this "
                   f"configuration: {conflict(model, np.asarray(r))}")


def conflict(model: Model, r: np.ndarray) -> str:
    """Host-side: the elements whose rows keep the residual `r (nc,)` of a
    least-squares solve, the largest first, and what to do."""
    worst = np.argsort(-np.abs(r))
    names = []
    for row in worst[np.abs(r[worst]) > 1e-3 * np.abs(r).max()]:
        name = model.element_of_row(int(row))
        if name not in names:
            names.append(name)
    listed = ", ".join(repr(n) for n in names[:6]) + (" ..." if len(names) > 6 else "")
    return (f"the rows of {listed} cannot all hold (residual up to {np.abs(r).max():.3g}): drivers "
            "(or fixed coordinates) that prescribe conflicting motions; check their motions, or "
            "remove the redundant one")


def rheonomic_conflict(model: Model, q, t, tol: float = 1e-8) -> str | None:
    """Host-side, at a configuration on the constraints: `None` when some velocity
    satisfies `C v + b = 0` and, with it, some acceleration `C a = Gamma`; otherwise
    which elements' rows cannot hold, and at which level (two drivers of one joint
    with different rates or accelerations, a redundant driver whose motion is
    inconsistent with the others)."""
    if not any(isinstance(spec, (DriverSpec, ConstraintSpec)) for spec in model.element_specs):
        return None  # scleronomic: b = 0, and Gamma is consistent on the constraints
    for level, (r, bad) in zip(("velocity", "acceleration"),
                               _rheonomic_residuals(model, jnp.asarray(q, float), jnp.zeros(model.nv),
                                                    jnp.asarray(t, float), tol)):
        if bool(bad):
            return f"at {level} level, {conflict(model, np.asarray(r))}"
    return None


@RunOnce  # the initial state's check: one configuration per call
def _rheonomic_residuals(model, q, v, t, tol):
    free = jnp.ones(model.nv)
    v, rv, bad_v = _consistent_velocity(model, q, v, t, free, tol)
    C, g = constraint_matrix(model, q, t), gamma(model, q, v, t)
    ra = C @ (jnp.linalg.pinv(C, rtol=VELOCITY_RTOL) @ g) - g
    bad_a = jnp.max(jnp.abs(ra), initial=0.0) > tol * jnp.maximum(1.0, jnp.max(jnp.abs(g), initial=0.0))
    return (rv, bad_v), (ra, bad_a)


@RunOnce
def _consistent_velocity(model, q, v, t, free, tol):
    """The mass-weighted least change of `v` (free coordinates only) onto `C v + b = 0`:
    `dv = -W C^T (C W C^T)^+ r = -B (C B)^+ r` with `W = B B^T` (the free part of
    `M^-1`). The pseudo-inverse of `C B` rather than of `C W C^T` keeps the condition
    number unsquared: redundant rows leave `C v + b` at rounding level."""
    C, b = constraint_matrix(model, q, t), velocity_rhs(model, q, t)
    B = jnp.linalg.cholesky(inverse_mass_matrix(model)) * free[:, None]
    out = v - B @ (jnp.linalg.pinv(C @ B, rtol=VELOCITY_SV_RTOL) @ (C @ v + b))
    return _velocity_check(out, C @ out + b, b, C @ v, tol)


@RunOnce
def _consistent_velocity_tree(model, q, v, t, tol):
    """`_consistent_velocity` without fixed coordinates, along the assembly tree:
    `M dv + C^T lam = 0`, `C dv = -(C v + b)`."""
    plan = make_plan(model)
    blocks, b = constraint_blocks(model, q, t), velocity_rhs(model, q, t)
    Cv = blocks_matvec(model, blocks, v)
    dv, _ = tree_solve(plan, blocks[plan.entry_pick], body_mass(model), jnp.zeros(model.nv),
                       -(Cv + b), None, VELOCITY_SV_RTOL)
    return _velocity_check(v + dv, blocks_matvec(model, blocks, v + dv) + b, b, Cv, tol)


def _velocity_check(v, r, b, Cv_guess, tol):
    """`(v, r, whether |r| stays above tol relative to max(1, |b|, |C v_guess|))`."""
    size = jnp.maximum(1.0, jnp.maximum(jnp.max(jnp.abs(b), initial=0.0),
                                        jnp.max(jnp.abs(Cv_guess), initial=0.0)))
    return v, r, jnp.max(jnp.abs(r), initial=0.0) > tol * size
