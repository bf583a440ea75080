"""Constraint stabilization: none, Baumgarte's feedback, or projection onto the manifold."""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from ._assembly import constraint_matrix, inverse_mass_matrix, phi, velocity_rhs
from ._formulations.base import min_norm_solve
from ._kinematics import _tolerance, retract
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

    Each iteration evaluates `Phi`, `C` and `b` once; the loop stops after the
    iteration that finds `|Phi|` within the tolerance, so its `C` and `b` (at
    the final point, up to that last tiny correction) serve the velocities.
    """
    Minv = inverse_mass_matrix(model)
    hol = jnp.asarray(model.holonomic_rows)
    limit = _tolerance(q, tol, model.dim)
    nc = model.nc

    def correction(C, err, rows):
        Ch = jnp.where(rows[:, None], C, 0.0)
        return -Minv @ Ch.T @ min_norm_solve(Ch @ Minv @ Ch.T, jnp.where(rows, err, 0.0), 1e-10)

    def cond(state):
        _, res, k, _, _ = state
        return (res > limit) & (k < max_iterations)

    def body(state):
        q, _, k, _, _ = state
        r = jnp.where(hol, phi(model, q, t), 0.0)
        C = constraint_matrix(model, q, t)
        return (retract(model, q, correction(C, r, hol)), jnp.max(jnp.abs(r), initial=0.0), k + 1,
                C, velocity_rhs(model, q, t))

    init = (q, jnp.asarray(jnp.inf), jnp.asarray(0), jnp.zeros((nc, model.nv)), jnp.zeros(nc))
    q, res, _, C, b = jax.lax.while_loop(cond, body, init)
    v = v + correction(C, C @ v + b, jnp.ones(nc, bool))
    return q, v, res <= limit
