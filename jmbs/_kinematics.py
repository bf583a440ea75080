"""Position assembly (Gauss-Newton), consistent velocities, driven kinematics."""

import functools
import warnings
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from ._assembly import (
    constraint_matrix,
    gamma,
    mass_matrix,
    phi,
    qdot,
    velocity_rhs,
)
from ._bodies import NV
from ._formulations.base import check_finite, check_positive, is_traced
from ._linalg import GAUSS_NEWTON_RTOL, VELOCITY_RTOL, mechanism_size, numerical_rank
from ._model import Model
from ._rotations import quat_exp, quat_multiply, quat_rate_matrix

_COORDS = {2: ("x", "y", "phi"), 3: ("x", "y", "z", "rx", "ry", "rz")}
# A configuration that violates a holonomic constraint by more than this (relative to
# the mechanism's size) is not assembled: analyses at it get a warning.
CLOSURE_WARNING = 1e-6


def closure_error(model: Model, q, t=0.0) -> tuple[float, str | None, float]:
    """Host-side, concrete `q`: `(largest |Phi| of a holonomic row, its element (None
    without holonomic rows), the mechanism's size)`."""
    res = np.abs(np.asarray(phi(model, q, t))) * np.asarray(model.holonomic_rows)
    size = float(mechanism_size(model, q))
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
        warnings.warn(f"{where}: q violates the constraints by {off:.2g} (worst: element {worst!r}); "
                      "the results are for a configuration the mechanism cannot take: assemble it "
                      "first (jmbs.assemble(model, q))", stacklevel=3)


def retract(model: Model, q: Array, dv: Array) -> Array:
    """Move `q` by the velocity-space increment `dv`, keeping quaternions unit.

    Planar: `q + dv`. Spatial: `r + dr`, `p ⊗ exp(dtheta')` (body-frame rotation vector).
    """
    if model.dim == 2:
        return q + dv
    qb, db = q.reshape(-1, 7), dv.reshape(-1, 6)

    def one(qi, di):
        p = quat_multiply(qi[3:], quat_exp(di[3:]))
        return jnp.concatenate([qi[:3] + di[:3], p / jnp.linalg.norm(p)])

    return jax.vmap(one)(qb, db).ravel()


def velocity_increment(model: Model, q: Array, dq: Array) -> Array:
    """The velocity-space increment of a coordinate increment `dq` at `q`, the
    inverse of `q_dot = N(q) v` on unit quaternions (a change of a quaternion's
    norm, which no rotation makes, is dropped)."""
    if model.dim == 2:
        return dq
    qb, db = q.reshape(-1, 7), dq.reshape(-1, 7)

    def one(qi, di):
        p = qi[3:] / jnp.linalg.norm(qi[3:])
        return jnp.concatenate([di[:3], 4.0 * quat_rate_matrix(p).T @ di[3:]])

    return jax.vmap(one)(qb, db).ravel()


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


class AssemblyResult(eqx.Module):
    """Outcome of `assemble`: `q`, the final `max |Phi|`, steps taken and success."""

    q: Float[Array, " nq"]
    residual: Float[Array, ""]
    steps: Int[Array, ""]
    converged: Array


def check_state(where: str, name: str, x, n: int, what: str) -> Array:
    """`x` as a float array, checked on the host: its shape (static, so traced input too)
    and, where concrete, that it is finite. The compiled program does not change."""
    x = jnp.asarray(x, dtype=float)
    if x.shape != (n,):
        raise ValueError(f"{where}: {name} must have shape ({n},), one value per {what}; got "
                         f"shape {x.shape}")
    check_finite(where, name, x, "pass finite values")
    return x


def _assemble(model: Model, q: Array, t: Array, free, tol: float,
              max_steps: int) -> AssemblyResult:
    """Gauss-Newton on `Phi(q, t) = 0`; differentiable through its solution."""
    free = tuple(bool(f) for f in np.asarray(free))
    return AssemblyResult(*_solve(model, q, jnp.asarray(t, dtype=float), free, tol, max_steps))


def _holonomic_residual(model: Model, q: Array, t: Array) -> Array:
    return jnp.where(jnp.asarray(model.holonomic_rows), phi(model, q, t), 0.0)


def _free_jacobian(model: Model, q: Array, t: Array, free: tuple[bool, ...]) -> Array:
    """Holonomic rows of `C` with the fixed coordinates' columns zeroed."""
    hol = jnp.asarray(model.holonomic_rows)
    return jnp.where(hol[:, None], constraint_matrix(model, q, t), 0.0) * jnp.asarray(free)[None, :]


@functools.partial(jax.custom_jvp, nondiff_argnums=(3, 4, 5))
def _solve(model: Model, q: Array, t: Array, free: tuple[bool, ...], tol: float, max_steps: int):
    """Minimum-norm Gauss-Newton steps (safe for rank-deficient `C`) with backtracking."""

    def step(q):
        r = _holonomic_residual(model, q, t)
        dv = -jnp.linalg.pinv(_free_jacobian(model, q, t, free), rtol=GAUSS_NEWTON_RTOL) @ r
        # Backtracking: accept the largest of 1, 1/2, 1/4, ... that reduces |Phi|.
        norm0 = jnp.linalg.norm(r)

        def try_alpha(alpha):
            qn = retract(model, q, alpha * dv)
            return qn, jnp.linalg.norm(_holonomic_residual(model, qn, t))

        qs, norms = jax.vmap(try_alpha)(0.5 ** jnp.arange(6.0))
        ok = norms < norm0
        return qs[jnp.where(jnp.any(ok), jnp.argmax(ok), 0)]

    def cond(state):
        q, k = state
        res = jnp.max(jnp.abs(_holonomic_residual(model, q, t)))
        return (res > tol * mechanism_size(model, q)) & (k < max_steps)

    q, k = jax.lax.while_loop(cond, lambda s: (step(s[0]), s[1] + 1), (q, jnp.asarray(0)))
    res = jnp.max(jnp.abs(_holonomic_residual(model, q, t)), initial=0.0)
    return q, res, k, res <= tol * mechanism_size(model, q)


@_solve.defjvp
def _solve_jvp(free, tol, max_steps, primals, tangents):
    """Implicit differentiation: at the solution `Phi(q*, t) = 0`, so a change of the
    model or the time moves `q*` by `N dv` with `C_free dv = -dPhi` (minimum norm,
    as the solver's own steps). The iterations are never differentiated."""
    model, q0, t = primals
    dmodel, _, dt = tangents
    out = _solve(model, q0, t, free, tol, max_steps)
    q = out[0]
    _, dphi = jax.jvp(lambda m, tt: _holonomic_residual(m, q, tt), (model, t), (dmodel, dt))
    dv = -jnp.linalg.pinv(_free_jacobian(model, q, t, free), rtol=GAUSS_NEWTON_RTOL) @ dphi
    no_tangent = np.zeros((), dtype=jax.dtypes.float0)
    return out, (qdot(model, q, dv), jnp.zeros_like(out[1]), no_tangent, no_tangent)


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
    free = tuple(bool(f) for f in free_mask(model, fixed))  # static: it shapes the solve
    res = _assemble_jit(model, q, jnp.asarray(t, dtype=float), free, tol, max_steps)
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


def fail_if(x, failed: Array, message: str, detail=None):
    """The one error path of jmbs's entry points, alike for concrete and traced input:
    `eqx.EquinoxRuntimeError` (a `RuntimeError`) where `failed` holds.

    Concrete `failed` is decided on the host (raising `detail()`'s fuller text when
    given), so the compiled program itself carries no host callback and can be
    stored in JAX's persistent cache; traced `failed` goes through `eqx.error_if`.
    Returns `x`.
    """
    if is_traced(failed):
        return eqx.error_if(x, failed, message)
    if np.any(np.asarray(failed)):
        raise eqx.EquinoxRuntimeError(detail() if detail is not None else message)
    return x


_assemble_jit = eqx.filter_jit(_assemble)


def consistent_velocity(model: Model, q: Float[Array, " nq"], v_guess=None, t=0.0, *,
                        fixed: Sequence = ()) -> Float[Array, " nv"]:
    """The velocity closest to `v_guess` in the mass metric that satisfies `C v + b = 0`.

    `v = v_g - W C^T (C W C^T)^+ (C v_g + b)` with `W = M^-1` (zero at the
    `fixed` coordinates, which keep their guessed values). Redundant rows are
    handled by the pseudoinverse.
    """
    where = "jmbs.consistent_velocity"
    q = check_state(where, "q", q, model.nq, "coordinate")
    v = model.v0 if v_guess is None else check_state(where, "v_guess", v_guess, model.nv,
                                                     "velocity coordinate")
    check_finite(where, "t", t, "pass a finite time")
    free = jnp.asarray(free_mask(model, fixed), dtype=float)
    return _consistent_velocity(model, q, v, jnp.asarray(t, dtype=float), free)


@eqx.filter_jit
def _consistent_velocity(model, q, v, t, free):
    C, b = constraint_matrix(model, q, t), velocity_rhs(model, q, t)
    W = jnp.linalg.inv(mass_matrix(model)) * free[:, None] * free[None, :]
    S = C @ W @ C.T
    return v - W @ C.T @ (jnp.linalg.pinv(S, rtol=VELOCITY_RTOL, hermitian=True) @ (C @ v + b))


class KinematicsSolution(eqx.Module):
    """Positions, velocities and accelerations of a fully driven mechanism over time."""

    ts: Float[Array, " T"]
    q: Float[Array, "T nq"]
    v: Float[Array, "T nv"]
    v_dot: Float[Array, "T nv"]
    residual: Float[Array, " T"]


def kinematics(model: Model, ts, q_guess=None, *, tol: float = 1e-12,
               max_steps: int = 50) -> KinematicsSolution:
    """Position, velocity and acceleration analysis of a fully driven mechanism.

    At each time: `Phi(q, t) = 0` by `assemble` (warm-started from the previous
    time, extrapolated with its velocity), `C v = -b`, `C v_dot = Gamma`.

    Differentiable with respect to the model's parameters (`jax.grad` over
    `model.with_params(...)`): each position is differentiated implicitly
    through `assemble`, not through its iterations.

    **Raises:** `ValueError` for `ts` that is not a non-empty 1-D array of
    finite times, a `q_guess` of the wrong shape, or a model with degrees of
    freedom left (add drivers; values are checked where the input is concrete); `eqx.EquinoxRuntimeError`
    (a `RuntimeError`) if assembly fails at some time, concrete or traced.
    """
    ts = jnp.asarray(ts, dtype=float)
    if ts.ndim != 1 or ts.size == 0:
        raise ValueError(f"jmbs.kinematics: ts must be a 1-D array of times with at least one time, "
                         f"got shape {ts.shape}")
    check_finite("jmbs.kinematics", "ts", ts, "pass finite times")
    check_positive("jmbs.kinematics", "tol", tol)
    q = model.q0 if q_guess is None else check_state("jmbs.kinematics", "q_guess", q_guess, model.nq,
                                                     "coordinate")
    if not is_traced(model, q, ts):  # host-side validation; it does not change the program
        rank = numerical_rank(constraint_matrix(model, q, ts[0]))
        if rank < model.nv:
            raise ValueError(f"the model has {model.nv - rank} degree(s) of freedom left; "
                             "kinematic analysis needs every one driven (add drivers)")
    out, ok = _kinematics(model, ts, q, tol, max_steps)

    def detail():
        k = int(np.argmax(~np.asarray(ok)))
        return (f"jmbs.kinematics: position analysis failed at t = {float(ts[k]):.6g} (max |Phi| = "
                f"{float(out.residual[k]):.3g}); the mechanism may pass a singular or unreachable "
                "configuration")

    return fail_if(out, ~jnp.all(ok), "jmbs.kinematics: position analysis failed at some time "
                   "(singular or unreachable configuration)", detail)


@eqx.filter_jit
def _kinematics(model, ts, q, tol, max_steps):
    free = np.ones(model.nv, bool)

    def solve(C, rhs):  # pinv: differentiable where C is rank-deficient (lstsq is not)
        # On the constraints (just assembled): redundant rows are dependent to rounding,
        # and JAX's default (10 max(nc, nv) eps) keeps independent rows up to very
        # close to a singular configuration, where driven kinematics is ill-posed anyway.
        return jnp.linalg.pinv(C) @ rhs

    def step(carry, t):
        q_prev, v_prev, t_prev = carry
        guess = retract(model, q_prev, v_prev * (t - t_prev))
        res = _assemble(model, guess, t, free, tol, max_steps)
        C = constraint_matrix(model, res.q, t)
        v = solve(C, -velocity_rhs(model, res.q, t))
        a = solve(C, gamma(model, res.q, v, t))
        return (res.q, v, t), (res.q, v, a, res.residual, res.converged)

    init = (q, jnp.zeros(model.nv), ts[0])
    _, (qs, vs, accs, r, ok) = jax.lax.scan(step, init, ts)
    return KinematicsSolution(ts, qs, vs, accs, r), ok


def sample_configurations(model: Model, n: int, *, key: Array | int = 0, scale: float = 0.3,
                          t=0.0, fixed: Sequence = (), tol: float = 1e-12,
                          max_steps: int = 50) -> tuple[Array, Array]:
    """Random configurations on the constraint manifold near the reference.

    Each sample perturbs `model.q0` by a normal random velocity-coordinate
    step (`scale` times the body's characteristic length in translation,
    `scale` radians in rotation), then `assemble`s it (vmapped). For driven
    mechanisms pass random times `t` (shape `(n,)`) to move the drivers.

    **Arguments:**
    - `n`: number of samples; `key`: a `jax.random` key or an integer seed.
    - `scale`: size of the perturbation.
    - `t`: time, scalar or `(n,)`.
    - `fixed`, `tol`, `max_steps`: as in `assemble`.

    **Returns:** `(qs (n, nq), converged (n,))`; use `qs[converged]`.
    """
    key = jax.random.key(key) if isinstance(key, int) else key
    free = tuple(bool(f) for f in free_mask(model, fixed))
    ts = jnp.broadcast_to(jnp.asarray(t, dtype=float), (n,))
    return _sample(model, key, n, scale, ts, free, tol, max_steps)


@eqx.filter_jit
def _sample(model, key, n, scale, ts, free, tol, max_steps):
    nvb = NV[model.dim]
    L = model.characteristic_lengths()
    unit = jnp.concatenate([jnp.broadcast_to(L[:, None], (model.n_bodies, model.dim)),
                            jnp.ones((model.n_bodies, nvb - model.dim))], axis=1).ravel()
    dvs = scale * unit[None, :] * jax.random.normal(key, (n, model.nv))
    guesses = jax.vmap(lambda dv: retract(model, model.q0, dv * jnp.asarray(free)))(dvs)
    res = jax.vmap(lambda q, t: _assemble(model, q, t, free, tol, max_steps))(guesses, ts)
    return res.q, res.converged
