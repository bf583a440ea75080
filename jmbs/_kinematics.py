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
    blocks_matvec,
    body_mass,
    constraint_blocks,
    constraint_matrix,
    gamma,
    inverse_mass_matrix,
    phi,
    qdot,
    velocity_rhs,
)
from ._bodies import NV, mechanism_size, retract
from ._joints.base import ConstraintSpec, DriverSpec
from ._linalg import (
    GAUSS_NEWTON_RTOL,
    TINY,
    VELOCITY_RTOL,
    VELOCITY_SV_RTOL,
    rank_decision,
    structured,
)
from ._misc import check_finite, check_int, check_positive, check_state, fail_if, is_traced
from ._model import Model
from ._rank import constraint_rank, equilibrate
from ._tree.plan import make_plan
from ._tree.solve import solve as tree_solve

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
        warnings.warn(f"{where}: q violates the constraints by {off:.2g} (worst: element {worst!r}); "
                      "the results are for a configuration the mechanism cannot take: assemble it "
                      "first (jmbs.assemble(model, q))", stacklevel=3)


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


def _assemble(model: Model, q: Array, t: Array, free, tol: float,
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


assemble_jit = eqx.filter_jit(_assemble)


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


@eqx.filter_jit
def _rheonomic_residuals(model, q, v, t, tol):
    free = jnp.ones(model.nv)
    v, rv, bad_v = _consistent_velocity(model, q, v, t, free, tol)
    C, g = constraint_matrix(model, q, t), gamma(model, q, v, t)
    ra = C @ (jnp.linalg.pinv(C, rtol=VELOCITY_RTOL) @ g) - g
    bad_a = jnp.max(jnp.abs(ra), initial=0.0) > tol * jnp.maximum(1.0, jnp.max(jnp.abs(g), initial=0.0))
    return (rv, bad_v), (ra, bad_a)




@eqx.filter_jit
def _consistent_velocity(model, q, v, t, free, tol):
    """The mass-weighted least change of `v` (free coordinates only) onto `C v + b = 0`:
    `dv = -W C^T (C W C^T)^+ r = -B (C B)^+ r` with `W = B B^T` (the free part of
    `M^-1`). The pseudo-inverse of `C B` rather than of `C W C^T` keeps the condition
    number unsquared: redundant rows leave `C v + b` at rounding level."""
    C, b = constraint_matrix(model, q, t), velocity_rhs(model, q, t)
    B = jnp.linalg.cholesky(inverse_mass_matrix(model)) * free[:, None]
    out = v - B @ (jnp.linalg.pinv(C @ B, rtol=VELOCITY_SV_RTOL) @ (C @ v + b))
    return _velocity_check(out, C @ out + b, b, C @ v, tol)


@eqx.filter_jit
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
        res = _assemble(model, guess, t, free, tol, max_steps)
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
    where = "jmbs.sample_configurations"
    check_int(where, "n", n, "give the number of samples")
    check_positive(where, "scale", scale)
    check_positive(where, "tol", tol)
    check_int(where, "max_steps", max_steps, "it bounds the Gauss-Newton iterations")
    check_finite(where, "t", t, "pass finite times")
    if np.ndim(t) not in (0, 1) or (np.ndim(t) == 1 and np.shape(t)[0] != n):
        raise ValueError(f"{where}: t must be one time or n = {n} times, got shape {np.shape(t)}")
    key = jax.random.key(key) if isinstance(key, int) else key
    free = tuple(bool(f) for f in free_mask(model, fixed))
    ts = jnp.broadcast_to(jnp.asarray(t, dtype=float), (n,))
    return _sample(model, key, n, scale, ts, free, tol, max_steps)


def velocity_units(model: Model) -> Array:
    """Per velocity coordinate, its unit of size `(nv,)`: the body's characteristic
    length for a translation, one radian for a rotation."""
    nvb = NV[model.dim]
    L = model.characteristic_lengths()
    return jnp.concatenate([jnp.broadcast_to(L[:, None], (model.n_bodies, model.dim)),
                            jnp.ones((model.n_bodies, nvb - model.dim))], axis=1).ravel()


@eqx.filter_jit
def _sample(model, key, n, scale, ts, free, tol, max_steps):
    unit = velocity_units(model)
    dvs = scale * unit[None, :] * jax.random.normal(key, (n, model.nv))
    guesses = jax.vmap(lambda dv: retract(model, model.q0, dv * jnp.asarray(free)))(dvs)
    res = jax.vmap(lambda q, t: _assemble(model, q, t, free, tol, max_steps))(guesses, ts)
    return res.q, res.converged


# ----- Singular configurations -----
# The papers' verdicts hold "in every nonsingular configuration". At a singular one (a
# slider-crank at dead centre driven at the slider, a parallelogram with its links
# collinear) the rank of C drops below the rank it has at almost every nearby
# configuration, and a rank decision there describes the instant, not the mechanism.
# The generic rank is measured at one configuration from nearby assembled ones
# (`nearby_configurations`, used by `jmbs.solvability`'s report and by `kinematics`),
# and along a motion as the largest rank met (`singular_points`).
# Nearby configurations sampled for the generic rank, and the step to them (a fraction
# of the bodies' characteristic lengths in translation; radians in rotation).
GENERIC_SAMPLES = 4
GENERIC_STEP = 1e-2
# A local minimum of the rank-revealing value along a motion whose flanks, extended,
# meet below this fraction of it is sharper than the samples resolve: a singular
# configuration is passed (or one closer than the samples can tell).
V_FRACTION = 0.25


def released_rows(model: Model) -> np.ndarray:
    """Mask `(nc,)` of the rows held while the mechanism moves freely: the holonomic
    rows of every element but the drivers."""
    mask = np.array(model.holonomic_rows)
    for spec, (a, b) in zip(model.element_specs, model.element_rows):
        if isinstance(spec, DriverSpec):
            mask[a:b] = False
    return mask


def nearby_configurations(model: Model, q, t, samples: int = GENERIC_SAMPLES,
                          step: float = GENERIC_STEP, seed: int = 0) -> list[np.ndarray]:
    """Host-side: up to `samples` configurations a `step` away from `q` along the free
    motions of the mechanism with its drivers released (random directions, fixed by
    `seed`, in the null space of the held rows of `C` with translations measured in
    the bodies' characteristic lengths), each assembled on the held rows; those whose
    assembly did not converge are left out. None when the mechanism cannot move.

    Built from the programs `assemble` already uses (the null space on the host, the
    assemblies one by one), so it adds no new compiled program of its own."""
    hold = released_rows(model)
    unit = np.asarray(velocity_units(model))
    C = np.asarray(constraint_matrix(model, q, t))[hold] * unit[None, :]
    s, Vt = (np.linalg.svd(C)[1:] if C.shape[0] else (np.zeros(0), np.eye(model.nv)))
    rank = int(np.sum(s > GAUSS_NEWTON_RTOL * s[0])) if s.size else 0
    N = Vt[rank:].T
    if N.shape[1] == 0:
        return []
    every, rows = (True,) * model.nv, tuple(bool(h) for h in hold)
    out = []
    for z in np.random.default_rng(seed).standard_normal((samples, N.shape[1])):
        d = N @ z
        d = step * d / max(float(np.linalg.norm(d)), TINY)
        guess = retract(model, jnp.asarray(q, float), jnp.asarray(d * unit))
        res = assemble_jit(model, guess, jnp.asarray(t, float), every, 1e-12, 50, rows)
        if bool(res.converged):
            out.append(np.asarray(res.q))
    return out


def generic_rank(model: Model, q, t, rank: int | None = None) -> int:
    """Host-side: the mechanism's generic rank near `q`, the rank of its constraints at
    almost every configuration around it: the largest `constraint_rank` at `q` (or the
    given `rank` there) and at the `nearby_configurations` (a driver only prescribes
    where the mechanism is: its rows are there at the nearby configurations too). Equal
    to the rank at `q` for a rigid structure (no motion). Along a motion or over a batch
    of configurations, the generic rank is likewise the largest rank met
    (`singular_points`, `SolvabilitySweep`).

    The rank margin cannot tell a singular configuration from a redundant mechanism
    (a configuration can be exactly singular with a large margin); this can."""
    rank = constraint_rank(model, q, t) if rank is None else int(rank)
    return max([rank, *(constraint_rank(model, x, t) for x in nearby_configurations(model, q, t))])


def singular_points(ts, ranks, values) -> tuple[int, list[tuple[float, str]]]:
    """Host-side, along a motion: `(generic rank, events)` from the times `ts (T,)`, the
    ranks `(T,)` and the relative rank-revealing values `(T, k)` there. Each event is
    `(t, "at")` for a saved time whose rank is below the generic rank (the largest
    met), or `(t, "through")` for a dip of the generic rank's value between saved
    times whose flanks, extended, meet near zero far below the sampled minimum (a
    crossing dips like `|t - t*|`; a smooth minimum that the samples resolve does not)."""
    ts, ranks, values = np.asarray(ts, float), np.asarray(ranks), np.asarray(values, float)
    if ranks.size == 0:
        return 0, []
    generic = int(ranks.max())
    events = [(float(t), "at") for t in ts[ranks < generic]]
    if generic == 0 or values.shape[-1] < generic or ts.size < 5:
        return generic, events
    x, v = np.abs(ts - ts[0]), values[:, generic - 1]
    full = ranks == generic
    for k in range(2, ts.size - 2):
        if not (full[k - 2:k + 3].all() and v[k] <= v[k - 1] and v[k] <= v[k + 1]):
            continue
        dx_l, dx_r = x[k - 1] - x[k - 2], x[k + 2] - x[k + 1]
        if dx_l <= 0 or dx_r <= 0:
            continue
        sl, sr = (v[k - 1] - v[k - 2]) / dx_l, (v[k + 2] - v[k + 1]) / dx_r
        if sl >= 0 or sr <= 0:
            continue
        xc = (v[k + 1] - v[k - 1] + sl * x[k - 1] - sr * x[k + 1]) / (sl - sr)
        if v[k - 1] + sl * (xc - x[k - 1]) < V_FRACTION * v[k]:
            events.append((float(np.interp(xc, x, ts)), "through"))
    return generic, sorted(events, key=lambda e: abs(e[0] - ts[0]))


def warn_singular(where: str, generic: int, events: list[tuple[float, str]], note: str = "") -> None:
    """One warning listing where a motion is at or passes a singular configuration
    (`note` appended)."""
    if not events:
        return
    shown = ", ".join(f"t = {t:.6g} ({'at' if kind == 'at' else 'passes'})" for t, kind in events[:5])
    more = f" and {len(events) - 5} more" if len(events) > 5 else ""
    warnings.warn(f"{where}: the motion is at or passes a singular configuration (the rank of C "
                  f"drops below its generic rank {generic}) at {shown}{more}; there the drivers "
                  "may not determine the motion, the motion may branch, and the reactions' "
                  f"uniqueness follows the lower rank{note}", stacklevel=3)
