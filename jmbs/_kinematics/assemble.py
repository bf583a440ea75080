"""Position assembly: Gauss-Newton on the holonomic constraints (minimum-norm steps,
differentiable through its solution), and the closure of a configuration."""

import functools
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from .._assembly import (
    constraint_matrix,
    phi,
    qdot,
)
from .._bodies import NV, mechanism_size, retract
from .._gc import compiles
from .._linalg import (
    GAUSS_NEWTON_RTOL,
)
from .._misc import (
    RunOnce,
    check_finite,
    check_int,
    check_positive,
    check_state,
    fail_if,
    is_traced,
    warn_user,
)
from .._model import Model

_COORDS = {2: ("x", "y", "phi"), 3: ("x", "y", "z", "rx", "ry", "rz")}


# A configuration that violates a holonomic constraint by more than this (relative to
# the mechanism's size) is not assembled: analyses at it get a warning.
CLOSURE_WARNING = 1e-6


def closure_error(model: Model, q, t=0.0, residual=None) -> tuple[float, str | None, float]:
    """Host-side, concrete `q`: `(largest |Phi| of a holonomic row, its element (None
    without holonomic rows), the mechanism's size)`; `residual`: `Phi(q, t)` when the
    caller has it."""
    residual = phi(model, q, t) if residual is None else residual
    res = np.abs(np.asarray(residual)) * np.asarray(model.holonomic_rows)
    size = float(mechanism_size(model, np.asarray(q)))
    if not res.size:
        return 0.0, None, size
    worst = int(np.argmax(res))
    return float(res[worst]), model.element_of_row(worst), size


def warn_if_unassembled(model: Model, q, t, where: str) -> None:
    """Warn (concrete input only) when `q` is off the constraints: results there are
    those of a configuration the mechanism cannot take."""
    if is_traced(model, q, t):
        return
    off, worst, size = closure_error(model, q, t)
    if off > CLOSURE_WARNING * size:
        warn_user(f"{where}: q violates the constraints by {off:.2g} (worst: element {worst!r}); "
                  "the results are for a configuration the mechanism cannot take: assemble it "
                  "first (jmbs.assemble(model, q))")


def free_mask(model: Model, fixed: Sequence = ()) -> np.ndarray:
    """Boolean mask `(nv,)`, False at the velocity coordinates listed in `fixed`.

    `fixed` holds integers (velocity-coordinate indices) or `(body, coordinate)`
    pairs with coordinate `x, y, phi` (planar) or `x, y, z, rx, ry, rz`
    (spatial; `r*` are rotations about the body axes).
    """
    mask = np.ones(model.nv, bool)
    names, nvb = _COORDS[model.dim], NV[model.dim]
    for item in fixed:
        if isinstance(item, (int, np.integer)):
            if not 0 <= item < model.nv:
                raise ValueError(f"fixed coordinate index {item} is outside 0..{model.nv - 1}")
            mask[item] = False
            continue
        if isinstance(item, str) or not (isinstance(item, Sequence) and len(item) == 2):
            hint = f" such as {tuple(item.split('.', 1))!r}" if isinstance(item, str) and "." in item else ""
            raise ValueError(f"fixed takes velocity-coordinate indices or (body, coordinate) pairs"
                             f"{hint}; got {item!r}")
        body, coord = item
        if coord not in names:
            raise ValueError(f"fixed coordinate {coord!r} of body {body!r} must be one of {names}")
        mask[model.body_index(body) * nvb + names.index(coord)] = False
    return mask


def velocity_units(model: Model) -> Array:
    """Per velocity coordinate, its unit of size `(nv,)`: the body's characteristic
    length for a translation, one radian for a rotation."""
    nvb = NV[model.dim]
    L = model.characteristic_lengths()
    return jnp.concatenate([jnp.broadcast_to(L[:, None], (model.n_bodies, model.dim)),
                            jnp.ones((model.n_bodies, nvb - model.dim))], axis=1).ravel()


class AssemblyResult(eqx.Module):
    """Outcome of `assemble`: `q`, the final `max |Phi|`, steps taken and success."""

    q: Float[Array, " nq"]
    residual: Float[Array, ""]
    steps: Int[Array, ""]
    converged: Array


def assemble_positions(model: Model, q: Array, t: Array, free, tol: float,
              max_steps: int, rows=None) -> AssemblyResult:
    """Gauss-Newton on `Phi(q, t) = 0`; differentiable through its solution. `rows`
    (a mask, default the holonomic rows) chooses the constraints that are solved."""
    free = tuple(bool(f) for f in np.asarray(free))
    rows = tuple(bool(r) for r in np.asarray(model.holonomic_rows if rows is None else rows))
    return AssemblyResult(*_solve(model, q, jnp.asarray(t, dtype=float), free, tol, max_steps, rows))


def _holonomic_residual(model: Model, q: Array, t: Array, rows: tuple[bool, ...]) -> Array:
    return jnp.where(jnp.asarray(rows, bool), phi(model, q, t), 0.0)


def _free_jacobian(model: Model, q: Array, t: Array, free: tuple[bool, ...],
                   rows: tuple[bool, ...]) -> Array:
    """The solved rows of `C` with the fixed coordinates' columns zeroed."""
    hol = jnp.asarray(rows, bool)
    return jnp.where(hol[:, None], constraint_matrix(model, q, t), 0.0) * jnp.asarray(free)[None, :]


@functools.partial(jax.custom_jvp, nondiff_argnums=(3, 4, 5, 6))
def _solve(model: Model, q: Array, t: Array, free: tuple[bool, ...], tol: float, max_steps: int,
           rows: tuple[bool, ...]):
    """Minimum-norm Gauss-Newton steps (safe for rank-deficient `C`) with backtracking."""

    def step(q):
        r = _holonomic_residual(model, q, t, rows)
        dv = -jnp.linalg.pinv(_free_jacobian(model, q, t, free, rows), rtol=GAUSS_NEWTON_RTOL) @ r
        # Backtracking: accept the largest of 1, 1/2, 1/4, ... that reduces |Phi|.
        norm0 = jnp.linalg.norm(r)

        def try_alpha(alpha):
            qn = retract(model, q, alpha * dv)
            return qn, jnp.linalg.norm(_holonomic_residual(model, qn, t, rows))

        qs, norms = jax.vmap(try_alpha)(0.5 ** jnp.arange(6.0))
        ok = norms < norm0
        return qs[jnp.where(jnp.any(ok), jnp.argmax(ok), 0)]

    def cond(state):
        q, k = state
        res = jnp.max(jnp.abs(_holonomic_residual(model, q, t, rows)))
        return (res > tol * mechanism_size(model, q)) & (k < max_steps)

    q, k = jax.lax.while_loop(cond, lambda s: (step(s[0]), s[1] + 1), (q, jnp.asarray(0)))
    res = jnp.max(jnp.abs(_holonomic_residual(model, q, t, rows)), initial=0.0)
    return q, res, k, res <= tol * mechanism_size(model, q)


@_solve.defjvp
def _solve_jvp(free, tol, max_steps, rows, primals, tangents):
    """Implicit differentiation: at the solution `Phi(q*, t) = 0`, so a change of the
    model or the time moves `q*` by `N dv` with `C_free dv = -dPhi` (minimum norm,
    as the solver's own steps). The iterations are never differentiated."""
    model, q0, t = primals
    dmodel, _, dt = tangents
    out = _solve(model, q0, t, free, tol, max_steps, rows)
    q = out[0]
    _, dphi = jax.jvp(lambda m, tt: _holonomic_residual(m, q, tt, rows), (model, t), (dmodel, dt))
    dv = -jnp.linalg.pinv(_free_jacobian(model, q, t, free, rows), rtol=GAUSS_NEWTON_RTOL) @ dphi
    no_tangent = np.zeros((), dtype=jax.dtypes.float0)
    return out, (qdot(model, q, dv), jnp.zeros_like(out[1]), no_tangent, no_tangent)


@compiles
def assemble(model: Model, q_guess: Float[Array, " nq"] | None = None, t=0.0, *,
             fixed: Sequence = (), tol: float = 1e-12, max_steps: int = 50,
             throw: bool = True, full_output: bool = False):
    """Solve the position constraints `Phi(q, t) = 0` starting from `q_guess`.

    Gauss-Newton with minimum-norm (pseudoinverse) steps and backtracking, so
    redundant constraints (rank-deficient `C`) are fine; the coordinates in
    `fixed` do not move and quaternions stay unit. Pfaffian constraints do
    not restrict positions.

    **Arguments:**
    - `q_guess`: starting point (default `model.q0`).
    - `t`: time (for drivers).
    - `fixed`: coordinates to keep, see `free_mask`.
    - `tol`: tolerance on `max |Phi|`, relative to `max(1, max |position|)`.
    - `throw`: raise if not converged (inside `jit`, through `eqx.error_if`).
    - `full_output`: return an `AssemblyResult` instead of `q`.

    **Raises:** `ValueError` for a `q_guess` of the wrong shape, a malformed
    `fixed`, a `tol` that is not positive, or (concrete input) NaN in `q_guess` or `t`;
    `eqx.EquinoxRuntimeError` (a `RuntimeError`) when it does not converge,
    with the residual and the worst element where the input is concrete.
    """
    q = model.q0 if q_guess is None else check_state("jmbs.assemble", "q_guess", q_guess, model.nq,
                                                     "coordinate")
    check_finite("jmbs.assemble", "t", t, "pass a finite time")
    check_positive("jmbs.assemble", "tol", tol)
    check_int("jmbs.assemble", "max_steps", max_steps, "it bounds the Gauss-Newton iterations")
    free = tuple(bool(f) for f in free_mask(model, fixed))  # static: it shapes the solve
    res = assemble_jit(model, q, jnp.asarray(t, dtype=float), free, tol, max_steps)
    if throw:
        res = eqx.tree_at(lambda r: r.q, res, fail_if(
            res.q, ~res.converged, "jmbs.assemble did not converge: the constraints cannot be "
            "closed from this guess (check the geometry or the guess)",
            lambda: _assembly_failure(model, res, t)))
    return res if full_output else res.q


def _assembly_failure(model: Model, res: AssemblyResult, t) -> str:
    r = np.abs(np.asarray(phi(model, res.q, t)) * model.holonomic_rows)
    name = model.element_of_row(int(np.argmax(r)))
    return (f"jmbs.assemble did not converge in {int(res.steps)} steps: max |Phi| = "
            f"{float(res.residual):.3g} at element {name!r}; the constraints may not close for "
            "this geometry, or the guess is too far (try a closer q_guess, or hold fewer "
            "coordinates fixed)")


assemble_jit = RunOnce(assemble_positions)  # one configuration per call
# The units as one compiled program per model structure, for host-side callers (computed
# op by op, each of their dozen operations would compile a program of its own).
velocity_units_jit = RunOnce(velocity_units)
