"""Random nonsingular configurations of the papers' mechanisms, on their own motion branch.

Random perturbations of the reference configuration followed by Gauss-Newton
(`jmbs.sample_configurations`) do not stay on a mechanism's motion branch when
its configuration space has several branches that meet (Bricard, the
parallelograms): they can land on another branch with a different rank. The
configurations here are generated along each mechanism's own motion instead,
in closed form where the mechanism has one, otherwise by continuation along a
driver (`jmbs.kinematics` on a grid, then a vmapped `jmbs.assemble` at each
random time from the nearest grid point), and every candidate is checked: it
closes the constraints and has the reference configuration's rank with a clear
singular-value gap. Candidates near singular configurations are rejected.
"""

import dataclasses
import functools
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._assembly import constraint_matrix, phi
from .._kinematics import assemble, kinematics, retract
from .._model import Model, ModelBuilder
from .._rotations import quat_exp, quat_multiply
from .basic import BRICARD_AXES, BRICARD_POINTS, G, _rod3, bricard, parallelogram
from .gripper import gripper
from .manipulator import redundant_manipulator
from .mobile_robot import mobile_robot, mobile_robot_configuration, slider_displacement
from .spatial_parallelogram import ROD_LENGTH, spatial_parallelogram

NAMES = ("mobile_robot", "gripper", "gripper_torque", "gripper_overactuated", "redundant_manipulator",
         "redundant_manipulator_overactuated", "spatial_parallelogram", "parallelogram", "bricard")

# A configuration counts as nonsingular when its constraint matrix has the reference
# rank r with sigma_r / sigma_1 above MIN_GAP (five decades above the solvability
# methods' default rank tolerance 1e-8) and sigma_{r+1} / sigma_1 below RANK_RTOL.
MIN_GAP = 1e-3
RANK_RTOL = 1e-9
# Largest change of any coordinate between a continuation guess and its assembled
# configuration: a larger one means that Gauss-Newton jumped to another branch.
MAX_CORRECTION = 0.05

# Mobile robot: steering angles of the front wheel well inside the dead centres
# (+-90 degrees), hitch angles of the trolley, platform poses.
ROBOT_STEERING = math.radians(80.0)
ROBOT_HITCH = 1.2
ROBOT_POSITION = 5.0
# Gripper: the Cr angle from the reference (phi4 = -pi/6). Its reference branch folds
# at about -1.20 and +3.82 rad, where the Cr drive is singular.
GRIPPER_RANGE = (-1.0, 3.5)
# Bricard: the angle of J1 from the reference runs over (-pi/6, 7pi/6) on the motion
# branch; both ends and J1 = pi/2 (the moving joint points' x = 0) are singular
# configurations (rank 28 instead of 29), kept SINGULAR_MARGIN away.
BRICARD_RANGE = (-math.pi / 6, 7 * math.pi / 6)
BRICARD_SINGULAR = (-math.pi / 6, math.pi / 2, 7 * math.pi / 6)
SINGULAR_MARGIN = 0.05
# Manipulator: the drives follow a Lissajous curve (incommensurate frequencies), so
# random times spread the three drive values over a box around the paper's
# configuration: turret angle +-AMPLITUDES[0] rad, cylinder slides +-0.15 m.
MANIPULATOR_AMPLITUDES = (3.0, 0.15, 0.15)
MANIPULATOR_PERIOD = 60.0
# Spatial parallelogram: platform positions theta on its circle, away from the
# singular theta = +-pi/2.
PARALLELOGRAM_THETA = math.pi / 2 - 0.15
# Planar parallelogram: crank angles from the vertical reference, away from the
# horizontal (singular) positions at +-pi/2.
CRANK_MARGIN = 0.15
CONTINUATION_STEP = 0.02


def _identity(t):
    """Driver motion `f(t) = t`: the time is the driven coordinate. Module level, so
    models built with it are structurally equal and share compiled code."""
    return t


def _turret(t):
    return MANIPULATOR_AMPLITUDES[0] * jnp.sin(t)


def _boom_slide(t):
    return MANIPULATOR_AMPLITUDES[1] * jnp.sin(math.sqrt(2.0) * t)


def _arm_slide(t):
    return MANIPULATOR_AMPLITUDES[2] * jnp.sin(math.sqrt(3.0) * t)


def _with_motions(model: Model, motions: dict) -> Model:
    """A copy of `model` with the motions of some drivers replaced (re-derived)."""
    specs = tuple(
        dataclasses.replace(s, options=tuple((k, motions[s.name] if k == "motion" else v)
                                             for k, v in s.options))
        if s.name in motions else s for s in model.element_specs)
    return dataclasses.replace(model, element_specs=specs).with_params({})


def _driven_bricard() -> Model:
    """`examples.bricard()` with a driver `drive` on J1 (`f(t) = t`)."""
    b = ModelBuilder(dim=3, gravity=(0.0, -G, 0.0))
    P = BRICARD_POINTS
    rods = [_rod3(b, f"rod{k + 1}", P[k], P[k + 1]) for k in range(5)]
    bodies = [b.ground, *rods, b.ground]
    for k in range(6):
        b.add_revolute(f"J{k + 1}", bodies[k], bodies[k + 1], point=P[k], axis=BRICARD_AXES[k])
    b.add_driver("drive", joint="J1", motion=_identity)
    return b.build()


@functools.cache
def _models(name: str) -> tuple[Model, Model | None]:
    """`(model returned, driven model for the continuation or None)`, built once per
    process so that repeated calls reuse compiled code."""
    if name == "mobile_robot":
        return mobile_robot(motion=_identity), None
    if name.startswith("gripper"):
        driven = gripper("torque", motion=_identity)
        model = {"gripper": gripper("none"), "gripper_torque": driven,
                 "gripper_overactuated": gripper("overactuated", motion=_identity)}[name]
        return model, driven
    if name.startswith("redundant_manipulator"):
        over = name.endswith("overactuated")
        motions = {"dA": _turret, "dHc": _boom_slide, "dIc": _arm_slide}
        if over:
            motions["dLc"] = _boom_slide  # the twin cylinder's slide equals that of Hc
        model = _with_motions(redundant_manipulator(overactuated=over), motions)
        return model, model
    if name == "spatial_parallelogram":
        return spatial_parallelogram(), None
    if name == "parallelogram":
        return parallelogram(), None
    if name == "bricard":
        return bricard(), _driven_bricard()
    raise ValueError(f"unknown mechanism {name!r}; choose one of {', '.join(NAMES)}")


# ----- candidates (possibly singular; filtered afterwards) -----

def _rigid_planar(qs: np.ndarray, x, y, angle) -> np.ndarray:
    """Move whole planar configurations `(m, nb * 3)` rigidly."""
    q = qs.reshape(len(qs), -1, 3).copy()
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    px, py = q[..., 0].copy(), q[..., 1].copy()
    q[..., 0] = x[:, None] + c * px - s * py
    q[..., 1] = y[:, None] + s * px + c * py
    q[..., 2] += angle[:, None]
    return q.reshape(len(qs), -1)


def _robot_candidates(model: Model, rng: np.random.Generator, m: int):
    delta = rng.uniform(-ROBOT_STEERING, ROBOT_STEERING, m)
    ds = np.asarray(slider_displacement(delta))
    hitch = rng.uniform(-ROBOT_HITCH, ROBOT_HITCH, m)
    qs = np.stack([mobile_robot_configuration(float(d), float(h)) for d, h in zip(ds, hitch)])
    qs = _rigid_planar(qs, *rng.uniform(-ROBOT_POSITION, ROBOT_POSITION, (2, m)),
                       rng.uniform(-math.pi, math.pi, m))
    return qs, ds  # the driver's f(t) = t is the slide from the reference d = 0


def _parallelogram_candidates(model: Model, rng: np.random.Generator, m: int):
    """Cranks turned by `a` about their pivots (the reference is vertical), the
    coupler translated with their tops; both halves of the circle."""
    p = model.params()
    a = rng.uniform(-math.pi / 2 + CRANK_MARGIN, math.pi / 2 - CRANK_MARGIN, m)
    a = a + math.pi * rng.integers(0, 2, m)
    c, s = np.cos(a), np.sin(a)
    rot = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (m, 2, 2)
    q0 = np.asarray(model.q0).reshape(-1, 3)
    qs = np.repeat(q0[None], m, axis=0)
    for k in range(3):
        O = np.asarray(p[f"O{k}.point"])
        qs[:, k, :2] = O + np.einsum("mij,j->mi", rot, q0[k, :2] - O)
        qs[:, k, 2] += a
    arm = np.asarray(p["B0.point"]) - np.asarray(p["O0.point"])
    qs[:, 3, :2] += np.einsum("mij,j->mi", rot, arm) - arm
    return qs.reshape(m, -1), np.zeros(m)


def _quat_z(angle: np.ndarray) -> np.ndarray:
    return np.stack([np.cos(angle / 2), 0 * angle, 0 * angle, np.sin(angle / 2)], -1)


def _rotate_z(v: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """The vector `v (3,)` turned about the z axis by each of `angle (m,)`: `(m, 3)`."""
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([c * v[0] - s * v[1], s * v[0] + c * v[1], np.full_like(angle, v[2])], -1)


def _spatial_parallelogram_candidates(model: Model, rng: np.random.Generator, m: int):
    """Closed form: moving the platform on its circle from the reference
    `theta0 = pi/12` to `theta` turns every leg rod about the vertical through its
    ground joint by `theta - theta0` (their directions are `(-sin theta, cos theta,
    +-1)/sqrt 2`) and translates the platform; the rods spin about their own axes by
    random angles, and the pendulum rods take random orientations, hanging in a
    chain from the platform centre `P`."""
    p = model.params()
    theta0 = math.pi / 12
    theta = rng.uniform(-PARALLELOGRAM_THETA, PARALLELOGRAM_THETA, m)
    turn = theta - theta0
    q0 = np.asarray(model.q0).reshape(-1, 7)
    qs = np.repeat(q0[None], m, axis=0)
    spin = rng.uniform(-math.pi, math.pi, (m, 6))
    for k, g in enumerate("ACEGKM"):
        gp = np.asarray(p[f"{g}.point"])
        qs[:, k, :3] = gp + _rotate_z(q0[k, :3] - gp, turn)
        spun = jax.vmap(lambda w: quat_multiply(jnp.asarray(q0[k, 3:]), quat_exp(w)))(
            jnp.asarray(np.stack([spin[:, k], 0 * spin[:, k], 0 * spin[:, k]], -1)))
        qs[:, k, 3:] = np.asarray(jax.vmap(quat_multiply)(jnp.asarray(_quat_z(turn)), spun))
    centre = _rotate_z(q0[6, :3], turn)
    qs[:, 6, :3] = centre
    start = centre + np.asarray(p["P.point"]) - q0[6, :3]
    for k in (7, 8, 9):
        quat = rng.standard_normal((m, 4))
        quat /= np.linalg.norm(quat, axis=1, keepdims=True)
        w, x, y, z = quat.T
        axis = np.stack([1 - 2 * (y**2 + z**2), 2 * (x * y + w * z), 2 * (x * z - w * y)], -1)
        qs[:, k, :3] = start + ROD_LENGTH / 2 * axis
        qs[:, k, 3:] = quat
        start = start + ROD_LENGTH * axis
    return qs.reshape(m, -1), np.zeros(m)


def _along_driver(driven: Model, ts: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Configurations of a fully driven model at the times `ts` in `[lo, hi]` on the
    branch through its reference configuration (`t = 0`, `lo <= 0 <= hi`):
    `jmbs.kinematics` from `t = 0` up to `hi` and down to `lo` on a grid of step
    `CONTINUATION_STEP`, then from the nearest grid point (moved to `t` with its
    velocity) a vmapped `jmbs.assemble`. Returns `(qs, ok)`."""
    Ts, Qs, Vs = [], [], []
    for end in (lo, hi):
        if end == 0.0:
            continue
        grid = np.linspace(0.0, end, int(math.ceil(abs(end) / CONTINUATION_STEP)) + 1)
        sol = kinematics(driven, grid)
        Ts.append(grid)
        Qs.append(np.asarray(sol.q))
        Vs.append(np.asarray(sol.v))
    T, Q, V = np.concatenate(Ts), np.concatenate(Qs), np.concatenate(Vs)
    k = np.argmin(np.abs(ts[:, None] - T[None, :]), axis=1)
    q, ok = _assemble_from(driven, jnp.asarray(Q[k]), jnp.asarray(V[k]), jnp.asarray(ts - T[k]),
                           jnp.asarray(ts))
    return np.array(q), np.array(ok)


@eqx.filter_jit
def _assemble_from(model, q, v, dt, t):
    def one(q, v, dt, t):
        guess = retract(model, q, v * dt)
        res = assemble(model, guess, t, throw=False, full_output=True)
        close = jnp.max(jnp.abs(res.q - guess)) < MAX_CORRECTION
        return res.q, res.converged & close

    return jax.vmap(one)(q, v, dt, t)


def _driven_candidates(name: str, model: Model, driven: Model, rng: np.random.Generator, m: int):
    if name.startswith("gripper"):
        ts = rng.uniform(*GRIPPER_RANGE, m)
        qs, ok = _along_driver(driven, ts, *GRIPPER_RANGE)
    elif name == "bricard":
        lo, hi = BRICARD_RANGE[0] + SINGULAR_MARGIN, BRICARD_RANGE[1] - SINGULAR_MARGIN
        ts = rng.uniform(lo, hi, m)
        ok = np.min(np.abs(ts[:, None] - np.asarray(BRICARD_SINGULAR)[None]), axis=1) > SINGULAR_MARGIN
        qs, closed = _along_driver(driven, ts, lo, hi)
        ok &= closed
    else:  # manipulators
        ts = rng.uniform(0.0, MANIPULATOR_PERIOD, m)
        qs, ok = _along_driver(driven, ts, 0.0, MANIPULATOR_PERIOD)
    # Only models with drivers need the time; the others are analysed at t = 0.
    has_drivers = any(s.kind == "driver" for s in model.element_specs)
    return qs, (ts if has_drivers else np.zeros(m)), ok


# ----- the rank check -----

@eqx.filter_jit
def _singular_values(model, qs, ts):
    return jax.vmap(lambda q, t: jnp.linalg.svd(constraint_matrix(model, q, t), compute_uv=False))(qs, ts)


@eqx.filter_jit
def _residuals(model, qs, ts):
    hol = jnp.asarray(model.holonomic_rows)
    return jax.vmap(lambda q, t: jnp.max(jnp.abs(jnp.where(hol, phi(model, q, t), 0.0)),
                                         initial=0.0))(qs, ts)


def _rank_and_gap(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rel = s / s[..., :1]
    rank = np.sum(rel > RANK_RTOL, axis=-1)
    return rank, rel


def reference_rank(model: Model) -> int:
    """Rank of the constraint matrix at the reference configuration (`t = 0`)."""
    s = np.asarray(_singular_values(model, model.q0[None], jnp.zeros(1)))
    return int(_rank_and_gap(s)[0][0])


def _nonsingular(model: Model, qs: np.ndarray, ts: np.ndarray, rank: int) -> np.ndarray:
    """Which configurations close the constraints and have rank `rank` with a clear gap."""
    s = np.asarray(_singular_values(model, jnp.asarray(qs), jnp.asarray(ts)))
    rel = s / s[:, :1]
    ok = (rel[:, rank - 1] > MIN_GAP) if rank > 0 else np.ones(len(qs), bool)
    if rank < s.shape[1]:
        ok &= rel[:, rank] < RANK_RTOL
    res = np.asarray(_residuals(model, jnp.asarray(qs), jnp.asarray(ts)))
    scale = np.maximum(1.0, np.abs(qs).max(axis=1))
    return ok & (res < 1e-10 * scale)


def random_configurations(name: str, n: int, seed: int = 0) -> tuple[Model, np.ndarray, np.ndarray]:
    """Random nonsingular configurations of a paper's mechanism on its own motion branch.

    **Arguments:**
    - `name`: one of `"mobile_robot"`, `"gripper"`, `"gripper_torque"`,
      `"gripper_overactuated"`, `"redundant_manipulator"`,
      `"redundant_manipulator_overactuated"`, `"spatial_parallelogram"`,
      `"parallelogram"`, `"bricard"`.
    - `n`: number of configurations.
    - `seed`: seed of the NumPy random generator.

    How they are drawn (each candidate is then checked to close the constraints
    and to have the reference configuration's rank with a gap `sigma_r / sigma_1 >
    MIN_GAP`; the others are replaced by new draws):

    - mobile robot: closed form (`mobile_robot_configuration`) at random steering
      angles within +-80 degrees (the dead centres are at +-90), random hitch angles
      and random platform poses. The model's driver is `f(t) = t`, so `t` is the
      slide `d`.
    - grippers: the Cr angle from the reference, `t`, uniform in `GRIPPER_RANGE`
      (inside the folds of the reference branch), by continuation. The driven
      variants drive Cr with `f(t) = t` (and Bt consistently).
    - manipulators: the paper's manipulator with its drives following a
      Lissajous curve in time (`dA`: `3 sin t` rad, `dHc`, `dLc`: `0.15 sin(sqrt 2 t)`
      m, `dIc`: `0.15 sin(sqrt 3 t)` m), at random times in `(0, 60)`, by continuation.
    - spatial parallelogram: the platform at a random `theta` in
      `(-pi/2 + 0.15, pi/2 - 0.15)` on its circle (closed form), the rods spun
      about their axes and the pendulum in random orientations.
    - planar parallelogram: the cranks at random angles (closed form), away from
      the horizontal singular positions.
    - Bricard: the angle of J1 from the reference, by continuation with J1
      driven, over its range `(-pi/6, 7 pi/6)` on the branch, away from the
      singular configurations at both ends and at `pi/2`.

    **Returns:** `(model, qs (n, nq), ts (n,))`: the model to analyse them with (for
    the manipulators and the driven grippers, a copy of the bundled model whose
    drivers move with `t`; its reference configuration is the paper's) and the
    configurations and times, with `jmbs.phi(model, qs[k], ts[k]) = 0`.

    **Raises:** `ValueError` for an unknown name; `RuntimeError` if too few
    nonsingular configurations are found.
    """
    model, driven = _models(name)
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    rng = np.random.default_rng(seed)
    rank = reference_rank(model)
    m = max(16, n + n // 4)  # candidates per round (one shape: compiled once per n)
    kept_q, kept_t, count = [], [], 0
    for _ in range(8):
        if count >= n:
            break
        if name == "mobile_robot":
            qs, ts = _robot_candidates(model, rng, m)
            ok = np.ones(m, bool)
        elif name == "parallelogram":
            qs, ts = _parallelogram_candidates(model, rng, m)
            ok = np.ones(m, bool)
        elif name == "spatial_parallelogram":
            qs, ts = _spatial_parallelogram_candidates(model, rng, m)
            ok = np.ones(m, bool)
        else:
            qs, ts, ok = _driven_candidates(name, model, driven, rng, m)
        ok &= _nonsingular(model, qs, ts, rank)
        kept_q.append(qs[ok])
        kept_t.append(ts[ok])
        count += int(ok.sum())
    if count < n:
        raise RuntimeError(f"found only {count} nonsingular configurations of {name!r} "
                           f"out of {n} requested")
    return model, np.concatenate(kept_q)[:n], np.concatenate(kept_t)[:n]
