"""Constraint stabilization: none, Baumgarte's feedback, or projection onto the manifold."""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ._assembly import constraint_matrix, inverse_mass_matrix, phi, qdot, velocity_rhs
from ._formulations.base import min_norm_solve
from ._kinematics import _tolerance, retract, velocity_increment
from ._model import Model


class Baumgarte(eqx.Module):
    """Baumgarte's stabilization: `C v_dot = Gamma - 2 alpha (C v + b) - beta^2 Phi`.

    The violation then obeys a damped oscillator (`alpha = beta` is critically
    damped). Gains are in 1/s; too large gains make the equations stiff.
    """

    alpha: float = 5.0
    beta: float = 5.0


class Projection(eqx.Module):
    """Project positions and velocities onto the constraint manifold after every
    step (González et al., paper 002, eqs. 2-3), with the mass-weighted
    pseudoinverse `W = M^-1 C^T (C M^-1 C^T)^+`:

    - positions: `q <- q - W Phi` (through the quaternion retraction, so
      quaternions stay unit), repeated until `max |Phi| <= tol`;
    - velocities: `v <- v - W (C v + b)`.

    Redundant rows are harmless (pseudoinverse). Pfaffian rows take part in the
    velocity projection only.

    **Arguments:**
    - `tol`: position tolerance, relative to the size of the mechanism.
    - `max_iterations`: iterations of the position projection per step; a step
      whose projection does not converge is rejected (adaptive steps) or ends
      the run with a result code.
    """

    tol: float = 1e-12
    max_iterations: int = 8

    def project(self, model: Model, q: Array, v: Array, t: Array) -> tuple[Array, Array, Array]:
        """`(q, v, converged)` projected onto the constraints at time `t`."""
        return project(model, q, v, t, self.tol, self.max_iterations)


def project(model: Model, q: Array, v: Array, t: Array, tol: float, max_iterations: int):
    """Mass-weighted projection of `q` onto `Phi(q, t) = 0` (Gauss-Newton with the
    pseudoinverse, through the quaternion retraction), then of `v` onto
    `C v + b = 0`. Returns `(q, v, converged)`.

    Differentiable: the position projection's derivative is the tangent
    projector at the result (`_project_positions_jvp`), never its iterations.
    """
    q, ok, C, b = _project_positions(model, q, t, tol, max_iterations)
    v = v + _correction(model, C, C @ v + b, jnp.ones(model.nc, bool))
    return q, v, ok


def _correction(model: Model, C: Array, err: Array, rows: Array) -> Array:
    """`-M^-1 C^T (C M^-1 C^T)^+ err` on `rows` (the others are left out)."""
    Minv = inverse_mass_matrix(model)
    Ch = jnp.where(rows[:, None], C, 0.0)
    return -Minv @ Ch.T @ min_norm_solve(Ch @ Minv @ Ch.T, jnp.where(rows, err, 0.0), 1e-10)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3, 4))
def _project_positions(model: Model, q: Array, t: Array, tol: float, max_iterations: int):
    """`(q, converged, C, b)`: the projected positions, with `C` and `b` from the
    last iteration.

    Each iteration evaluates `Phi`, `C` and `b` once; the loop stops after the
    iteration that finds `|Phi|` within the tolerance, so its `C` and `b` (at
    the final point, up to that last tiny correction) serve the velocities.
    """
    hol = jnp.asarray(model.holonomic_rows)
    limit = _tolerance(q, tol, model.dim)
    nc = model.nc

    def cond(state):
        _, res, k, _, _ = state
        return (res > limit) & (k < max_iterations)

    def body(state):
        q, _, k, _, _ = state
        r = jnp.where(hol, phi(model, q, t), 0.0)
        C = constraint_matrix(model, q, t)
        return (retract(model, q, _correction(model, C, r, hol)), jnp.max(jnp.abs(r), initial=0.0),
                k + 1, C, velocity_rhs(model, q, t))

    init = (q, jnp.asarray(jnp.inf), jnp.asarray(0), jnp.zeros((nc, model.nv)), jnp.zeros(nc))
    q, res, _, C, b = jax.lax.while_loop(cond, body, init)
    return q, res <= limit, C, b


@_project_positions.defjvp
def _project_positions_jvp(tol, max_iterations, primals, tangents):
    """To first order in the distance projected, the projection moves a change of
    the input along the constraint manifold's tangent space (mass metric), and a
    change of the model or time by the correction that keeps `Phi = 0`."""
    model, q, t = primals
    dmodel, dq, dt = tangents
    out = _project_positions(model, q, t, tol, max_iterations)
    qs = out[0]
    hol = jnp.asarray(model.holonomic_rows)
    _, dphi = jax.jvp(lambda m, tt: jnp.where(hol, phi(m, qs, tt), 0.0), (model, t), (dmodel, dt))
    (C, _), terms_jvp = jax.linearize(
        lambda m, qq, tt: (constraint_matrix(m, qq, tt), velocity_rhs(m, qq, tt)), model, qs, t)
    dv = velocity_increment(model, qs, dq)
    dv = dv + _correction(model, C, C @ dv + dphi, hol)
    dqs = qdot(model, qs, dv)
    dC, db = terms_jvp(dmodel, dqs, dt)
    return out, (dqs, np.zeros(out[1].shape, jax.dtypes.float0), dC, db)
