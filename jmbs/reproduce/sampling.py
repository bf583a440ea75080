"""Random nonsingular configurations of the papers' mechanisms, on their own motion branch.

Random perturbations of the reference configuration followed by Gauss-Newton
(`jmbs.sample_configurations(..., method="perturb")`, its default until issue 32) do
not stay on a mechanism's motion branch when its configuration space has other
branches of a different rank (Bricard, the parallelograms): Gauss-Newton can land on
one of them. The default random walks stay on the branch but spread from the
reference by steps. The configurations here follow each mechanism's own motion over
its whole range, in closed form (each mechanism's motion has one), independently of
the sampler. Every candidate is then checked: it closes
the constraints and has the reference configuration's rank with a clear
singular-value gap; candidates near singular configurations are replaced.
"""

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import jmbs
from jmbs import Model
from jmbs.examples import (
    BRICARD_AXES,
    BRICARD_POINTS,
    bricard,
    gripper,
    gripper_slide,
    mobile_robot,
    mobile_robot_configurations,
    parallelogram,
    redundant_manipulator,
    spatial_parallelogram,
)
from jmbs.examples.mobile_robot import slider_displacement
from jmbs.examples.spatial_parallelogram import ROD_LENGTH
from jmbs.rotations import quat_exp, quat_multiply, quat_to_rot

from .._linalg import numerical_rank

# A configuration counts as nonsingular when its constraint matrix has the reference
# rank r with sigma_r / sigma_1 above MIN_GAP (five decades above the solvability
# methods' default rank tolerance 1e-8) and sigma_{r+1} / sigma_1 below RANK_RTOL.
MIN_GAP = 1e-3
RANK_RTOL = 1e-9

# Mobile robot: steering angles of the front wheel well inside the dead centres
# (+-90 degrees), hitch angles of the trolley, platform poses.
ROBOT_STEERING = math.radians(80.0)
ROBOT_HITCH = 1.2
ROBOT_POSITION = 5.0
# Gripper: the Cr angle from the reference (phi4 = -pi/6). Its reference branch folds
# at about -1.20 and +3.82 rad, where the Cr drive is singular.
GRIPPER_RANGE = (-1.0, 3.5)
# Bricard: on its motion the odd joints J1, J3, J5 turn by the same angle theta and
# the even ones by psi, with sin(theta) + sin(psi) + sin(theta) sin(psi) = 0: one
# closed loop, on which each angle runs over BRICARD_RANGE (twice), with no singular
# configuration (rank 29 all round).
BRICARD_RANGE = (-math.pi / 6, 7 * math.pi / 6)
# Manipulator: the joint angles follow a Lissajous curve (incommensurate frequencies),
# so random times spread them over a box around the paper's configuration: turret
# +-3 rad, boom +-0.4 rad, arm relative to the boom +-0.5 rad.
MANIPULATOR_AMPLITUDES = (3.0, 0.4, 0.5)
MANIPULATOR_PERIOD = 200.0
# Spatial parallelogram: platform positions theta on its circle, away from the
# singular theta = +-pi/2.
PARALLELOGRAM_THETA = math.pi / 2 - 0.15
# Planar parallelogram: crank angles from the vertical reference, away from the
# horizontal (singular) positions at +-pi/2.
CRANK_MARGIN = 0.15
# Candidates drawn per round.
CHUNK = 256


def _identity(t):
    """Driver motion `f(t) = t`: the time is the driven coordinate. Module level, so
    models built with it are structurally equal and share compiled code."""
    return t


# ----- rotations: jmbs.rotations' quaternion functions over leading batch axes (NumPy
# arrays in, for batches of samples; traced arrays in, for the manipulators' driver
# motions) -----

_quat_mul = jnp.vectorize(quat_multiply, signature="(4),(4)->(4)")
_rot = jnp.vectorize(quat_to_rot, signature="(4)->(3,3)")


def _axis_quat(axis, angle):
    """Quaternions `(..., 4)` of the rotations by `angle (...)` about the unit `axis (3,)`."""
    return jnp.vectorize(quat_exp, signature="(3)->(4)")(jnp.asarray(angle)[..., None]
                                                          * jnp.asarray(axis, dtype=float))


def _axis_rot(axis, angle):
    """Rotation matrices `(..., 3, 3)` about the unit `axis (3,)` by `angle (...)`."""
    return _rot(_axis_quat(axis, angle))


def _apply(R, x):
    return (R @ x[..., None])[..., 0]


def _wrap(angle):
    return (angle + math.pi) % (2 * math.pi) - math.pi


# ----- candidates (possibly singular; filtered afterwards): (model, rng, m) -> (qs, ts) -----

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
    qs = mobile_robot_configurations(ds, hitch)
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


_X, _Z = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])


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
    turn = _axis_rot(_Z, theta - theta0)
    turn_quat = _axis_quat(_Z, theta - theta0)
    q0 = np.asarray(model.q0).reshape(-1, 7)
    qs = np.repeat(q0[None], m, axis=0)
    spin = rng.uniform(-math.pi, math.pi, (m, 6))
    for k, g in enumerate("ACEGKM"):
        gp = np.asarray(p[f"{g}.point"])
        qs[:, k, :3] = gp + _apply(turn, q0[k, :3] - gp)
        # Spin about the rod's own x axis (body frame), then turn about the vertical.
        qs[:, k, 3:] = _quat_mul(turn_quat, _quat_mul(q0[k, 3:], _axis_quat(_X, spin[:, k])))
    centre = np.asarray(_apply(turn, q0[6, :3]))
    qs[:, 6, :3] = centre
    start = centre + np.asarray(p["P.point"]) - q0[6, :3]
    for k in (7, 8, 9):
        quat = rng.standard_normal((m, 4))
        quat /= np.linalg.norm(quat, axis=1, keepdims=True)
        axis = np.asarray(_rot(quat)[..., 0])  # the rod's x axis
        qs[:, k, :3] = start + ROD_LENGTH / 2 * axis
        qs[:, k, 3:] = quat
        start = start + ROD_LENGTH * axis
    return qs.reshape(m, -1), np.zeros(m)


def _gripper_candidates(model: Model, rng: np.random.Generator, m: int):
    """Closed form (`gripper_slide`): the Cr angle `t` from the reference turns jaw 4
    to `phi4 = phi4_ref + t`; both sliders advance by the common slide `s`; jaw 3
    joins `B` to the jaw point `E`. The geometry comes from the model's joints."""
    p = model.params()
    B, C, E = (np.asarray(p[f"{k}.point"]) for k in ("Br", "Cr", "Er"))
    jaw4 = float(np.linalg.norm(E - C))
    phi4_ref = math.atan2(E[1] - C[1], E[0] - C[0])
    t = rng.uniform(*GRIPPER_RANGE, m)
    phi4 = phi4_ref + t
    s = np.asarray(gripper_slide(phi4, float(B[0]), float(C[1]), jaw4, phi4_ref))
    Bs = B + np.stack([s, 0 * s], -1)
    Cs = C + np.stack([0 * s, s], -1)
    Es = Cs + jaw4 * np.stack([np.cos(phi4), np.sin(phi4)], -1)
    q0 = np.asarray(model.q0).reshape(-1, 3)
    qs = np.repeat(q0[None], m, axis=0)
    qs[:, 0, :2], qs[:, 1, :2] = Bs, Cs
    d = Es - Bs
    qs[:, 2, :2] = (Bs + Es) / 2
    qs[:, 2, 2] = q0[2, 2] + _wrap(np.arctan2(d[:, 1], d[:, 0]) - q0[2, 2])
    qs[:, 3, :2] = (Cs + Es) / 2
    qs[:, 3, 2] = phi4
    has_drivers = any(sp.kind == "driver" for sp in model.element_specs)
    return qs.reshape(m, -1), (t if has_drivers else np.zeros(m))


def _bricard_candidates(model: Model, rng: np.random.Generator, m: int):
    """Closed form: a random angle in `BRICARD_RANGE` for the odd joints (or, as
    often, the even ones: the relation is symmetric), the other angle from
    `sin(theta) + sin(psi) + sin(theta) sin(psi) = 0` on either half of the loop,
    and the chain turned by them."""
    free = rng.uniform(*BRICARD_RANGE, m)
    s = -np.sin(free) / (1 + np.sin(free))
    other = np.arcsin(np.clip(s, -1.0, 1.0))
    other = np.where(rng.integers(0, 2, m) == 1, math.pi - other, other)
    swap = rng.integers(0, 2, m) == 1
    theta, psi = np.where(swap, other, free), np.where(swap, free, other)
    return _bricard_chain(model, np.stack([theta, psi] * 3, axis=-1)), np.zeros(m)


def _bricard_chain(model: Model, angles: np.ndarray) -> np.ndarray:
    """The Bricard's coordinates `(m, nq)` with its joints turned by `angles (m, 6)`
    from the reference, along the chain ground, rod 1, ..., rod 5 (the loop closes
    only for angles on its motion)."""
    q0 = np.asarray(model.q0).reshape(-1, 7)
    m = len(angles)
    R, t = np.broadcast_to(np.eye(3), (m, 3, 3)), np.zeros((m, 3))
    quat = np.broadcast_to(np.array([1.0, 0.0, 0.0, 0.0]), (m, 4))
    out = []
    for k, body in enumerate(q0):
        axis, point = BRICARD_AXES[k], BRICARD_POINTS[k]
        qk = _axis_quat(axis, angles[:, k])
        Rk = np.asarray(_rot(qk))
        # Compose the joint's rotation about its reference axis line with the chain so far.
        t = _apply(R, point - _apply(Rk, point)) + t
        R = R @ Rk
        quat = np.asarray(_quat_mul(quat, qk))
        out.append(np.concatenate([_apply(R, body[:3]) + t, np.asarray(_quat_mul(quat, body[3:]))],
                                  axis=-1))
    return np.concatenate(out, axis=-1)


# ----- the manipulators: closed form in the joint angles -----

class _ManipulatorPose:
    """Closed-form configurations of `redundant_manipulator` from the changes of its
    joint angles `(a, b, c)` relative to the reference: the turret turned by `a`
    about the axis of A, the boom by `b` about the pin axis through C, the arm by
    `c` relative to the boom about the pin axis through E; each cylinder and its
    piston turn about the cylinder's pivot (B, or F on the moved boom) onto the
    line to the moved rod eye (D, or G), and the piston slides along it by the
    change of that distance (the cylinder's slide). The twin cylinder of the
    overactuated variant, on the same pin axes, moves with the first one. The
    geometry (joint points and axes) is read from the model's parameters. NumPy or
    traced angles of any leading shape."""

    def __init__(self, model: Model):
        p = {k: np.asarray(v) for k, v in model.params().items()}
        self.pt = {k: p[f"{k}.point"] for k in "ABCDEFG"}
        self.y = p["C.axis"] / np.linalg.norm(p["C.axis"])
        self.z = p["A.axis"] / np.linalg.norm(p["A.axis"])
        self.q0 = np.asarray(model.q0).reshape(-1, 7)
        self.names = model.body_names

    def parts(self, b, c):
        """Per moving body: `(R, t, angle about the pin axis)` of its motion in the arm
        plane, `x -> R x + t`; and the two cylinder slides."""
        P, y = self.pt, self.y
        Rb, Ra = _axis_rot(y, b), _axis_rot(y, b + c)
        tb = P["C"] - _apply(Rb, P["C"])
        ta = _apply(Rb, P["E"]) + tb - _apply(Ra, P["E"])
        D1, F1 = _apply(Rb, P["D"]) + tb, _apply(Rb, P["F"]) + tb
        G1 = _apply(Ra, P["G"]) + ta
        out = {"boom": (Rb, tb, b), "arm": (Ra, ta, b + c)}
        slides = []
        for (cyl, pis), pivot0, pivot1, eye0, eye1 in (
                (("boom_cylinder", "boom_piston"), P["B"], P["B"], P["D"], D1),
                (("arm_cylinder", "arm_piston"), P["F"], F1, P["G"], G1)):
            w0, w1 = eye0 - pivot0, eye1 - pivot1
            alpha = jnp.arctan2(jnp.sum(y * jnp.cross(w0, w1), axis=-1), jnp.sum(w0 * w1, axis=-1))
            R = _axis_rot(y, alpha)
            t = pivot1 - _apply(R, pivot0)
            length = jnp.sqrt(jnp.sum(w1**2, axis=-1))
            slide = length - np.linalg.norm(w0)
            out[cyl] = (R, t, alpha)
            out[pis] = (R, t + (slide / length)[..., None] * w1, alpha)
            slides.append(slide)
        out["boom_cylinder2"], out["boom_piston2"] = out["boom_cylinder"], out["boom_piston"]
        return out, slides

    def q(self, a, b, c):
        """Coordinates `(..., nq)` at the joint-angle changes `(a, b, c)`."""
        parts, _ = self.parts(b, c)
        Rz, qz = _axis_rot(self.z, a), _axis_quat(self.z, a)
        tz = self.pt["A"] - _apply(Rz, self.pt["A"])
        rows = []
        for name, q0 in zip(self.names, self.q0):
            R, t, angle = parts.get(name, (np.eye(3), np.zeros(3), 0.0 * jnp.asarray(a)))
            r = _apply(Rz, _apply(R, q0[:3]) + t) + tz
            quat = _quat_mul(qz, _quat_mul(_axis_quat(self.y, angle), q0[3:]))
            rows += [jnp.broadcast_to(r, quat.shape[:-1] + (3,)), quat]
        return jnp.concatenate(rows, axis=-1)


def _lissajous(t):
    """Joint-angle changes `(a, b, c)` of the manipulators at time `t`."""
    A = MANIPULATOR_AMPLITUDES
    return A[0] * jnp.sin(t), A[1] * jnp.sin(math.sqrt(2.0) * t), A[2] * jnp.sin(math.sqrt(3.0) * t)


def _manipulator(overactuated: bool) -> Model:
    """The paper's manipulator whose drives move along the Lissajous curve of joint
    angles `_lissajous(t)`: the turret angle and the two cylinder slides."""
    model = redundant_manipulator(overactuated=overactuated)
    pose = _ManipulatorPose(model)

    def turret(t):
        return _lissajous(t)[0]

    def boom_slide(t):
        return pose.parts(*_lissajous(t)[1:])[1][0]

    def arm_slide(t):
        return pose.parts(*_lissajous(t)[1:])[1][1]

    motions = {"dA": turret, "dHc": boom_slide, "dIc": arm_slide}
    if overactuated:
        motions["dLc"] = boom_slide  # the twin cylinder's slide equals that of Hc
    return model.with_motions(motions)


def _manipulator_candidates(model: Model, rng: np.random.Generator, m: int):
    ts = rng.uniform(0.0, MANIPULATOR_PERIOD, m)
    return np.asarray(_ManipulatorPose(model).q(*_lissajous(ts))), ts


class _Mechanism(NamedTuple):
    build: Callable[[], Model]  # the model the configurations belong to
    candidates: Callable  # (model, rng, m) -> (qs (m, nq), ts (m,))


# Keyed like `jmbs.examples.ALL`.
MECHANISMS: dict[str, _Mechanism] = {
    "mobile_robot": _Mechanism(lambda: mobile_robot(motion=_identity), _robot_candidates),
    "gripper": _Mechanism(lambda: gripper("none"), _gripper_candidates),
    "gripper_torque": _Mechanism(lambda: gripper("torque", motion=_identity), _gripper_candidates),
    "gripper_overactuated": _Mechanism(lambda: gripper("overactuated", motion=_identity),
                                       _gripper_candidates),
    "redundant_manipulator": _Mechanism(lambda: _manipulator(False), _manipulator_candidates),
    "redundant_manipulator_overactuated": _Mechanism(lambda: _manipulator(True),
                                                     _manipulator_candidates),
    "spatial_parallelogram": _Mechanism(spatial_parallelogram, _spatial_parallelogram_candidates),
    "parallelogram": _Mechanism(parallelogram, _parallelogram_candidates),
    "bricard": _Mechanism(bricard, _bricard_candidates),
}
NAMES = tuple(MECHANISMS)


@functools.cache
def _model(name: str) -> Model:
    """The model of mechanism `name`, built once per process so that repeated calls
    reuse compiled code."""
    if name not in MECHANISMS:
        raise ValueError(f"unknown mechanism {name!r}; choose one of {', '.join(NAMES)}")
    return MECHANISMS[name].build()


# ----- the rank check -----

@eqx.filter_jit
def _check(model: Model, qs, ts):
    """Per configuration: the singular values of `C` and `max |Phi|` (one compilation)."""
    hol = jnp.asarray(model.holonomic_rows)

    def one(q, t):
        s = jnp.linalg.svd(jmbs.constraint_matrix(model, q, t), compute_uv=False)
        return s, jnp.max(jnp.abs(jnp.where(hol, jmbs.phi(model, q, t), 0.0)), initial=0.0)

    return jax.vmap(one)(qs, ts)


def reference_rank(model: Model) -> int:
    """Rank of the constraint matrix at the reference configuration (`t = 0`)."""
    return numerical_rank(jmbs.constraint_matrix(model, model.q0, 0.0), RANK_RTOL)


def _nonsingular(model: Model, qs: np.ndarray, ts: np.ndarray, rank: int) -> np.ndarray:
    """Which configurations close the constraints and have rank `rank` with a clear gap."""
    s, res = (np.asarray(x) for x in _check(model, jnp.asarray(qs), jnp.asarray(ts)))
    rel = s / s[:, :1]
    ok = (rel[:, rank - 1] > MIN_GAP) if rank > 0 else np.ones(len(qs), bool)
    if rank < s.shape[1]:
        ok &= rel[:, rank] < RANK_RTOL
    return ok & (res < 1e-10 * np.maximum(1.0, np.abs(qs).max(axis=1)))


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
    MIN_GAP` in its constraint matrix; the others are replaced by new draws):

    - `mobile_robot`: closed form (`mobile_robot_configurations`) at random
      steering angles within +-80 degrees (the dead centres are at +-90), random
      hitch angles and random platform poses. The model's driver is `f(t) = t`,
      so `t` is the slide `d` of the steering slider.
    - grippers: closed form (`gripper_slide`) at a random angle `t` of Cr from the
      reference, within `GRIPPER_RANGE` (inside the folds of the branch). The
      driven variants drive Cr with `f(t) = t` (and Bt consistently).
    - manipulators: closed form in the joint angles, which follow a Lissajous
      curve in time (turret `3 sin t`, boom `0.4 sin(sqrt 2 t)`, arm `0.5
      sin(sqrt 3 t)` rad from the paper's configuration), at random times in
      `(0, 200)`; the drivers follow the turret angle and the two cylinder slides.
    - `spatial_parallelogram`: closed form: the platform at a random `theta` in
      `(-pi/2 + 0.15, pi/2 - 0.15)` on its circle, the rods spun about their
      axes, the pendulum in random orientations.
    - `parallelogram`: closed form: the cranks at random angles, at least 0.15 rad
      from the horizontal (singular) positions.
    - `bricard`: closed form on its motion loop: the odd joints turn by `theta`,
      the even ones by `psi`, `sin(theta) + sin(psi) + sin(theta) sin(psi) = 0`,
      each over `(-pi/6, 7 pi/6)` (twice round the loop).

    **Returns:** `(model, qs (n, nq), ts (n,))`: the model to analyse them with and
    the configurations and times, `jmbs.phi(model, qs[k], ts[k]) = 0`. The model is
    the bundled one in its reference configuration (the paper's), except that the
    drivers of the driven grippers, the mobile robot and the manipulators move
    with `t` as described (their rows of the constraint matrix do not depend on
    the motion). Models are cached: repeated calls return the same model, so
    compiled code is reused. Mechanisms without drivers get `ts = 0`.

    **Raises:** `ValueError` for an unknown name; `RuntimeError` if too few
    nonsingular configurations are found.
    """
    model = _model(name)
    candidates = MECHANISMS[name].candidates
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    rng = np.random.default_rng(seed)
    rank = reference_rank(model)
    kept_q, kept_t, count = [], [], 0
    # Candidates come in chunks of one size, so the compiled check serves every n; a
    # chunk is mostly accepted.
    for _ in range(2 * math.ceil(n / CHUNK) + 4):
        if count >= n:
            break
        # The closed forms broadcast the axes `(3,)` of jmbs.rotations' functions over the
        # batch `(m, 3)`, whatever the caller's jax_numpy_rank_promotion.
        with jax.numpy_rank_promotion("allow"):
            qs, ts = candidates(model, rng, CHUNK)
        ok = _nonsingular(model, qs, ts, rank)
        kept_q.append(qs[ok])
        kept_t.append(ts[ok])
        count += int(ok.sum())
    if count < n:
        raise RuntimeError(f"found only {count} nonsingular configurations of {name!r} "
                           f"out of {n} requested")
    return model, np.concatenate(kept_q)[:n], np.concatenate(kept_t)[:n]
