"""Registries the tests parametrize over, and shared utilities."""

import math

import jax
import jax.numpy as jnp
import numpy as np

import jmbs
from jmbs.examples import frame_x_along

# The relative degrees of freedom each two-body joint kind leaves (and the tests' one-row
# user constraint): expectations written here, not read from jmbs.ELEMENT_TYPES; a new
# joint kind in the table needs its entry.
JOINT_DOF = {2: {"revolute": 1, "prismatic": 1, "weld": 0, "distance": 2, "pin_in_slot": 2,
                 "holonomic": 2},
             3: {"spherical": 3, "revolute": 1, "prismatic": 1, "cylindrical": 2, "universal": 2,
                 "weld": 0, "distance": 5, "inline": 4, "inplane": 5, "orientation": 3,
                 "parallel_axes": 4, "perpendicular": 5, "planar": 3, "general": 2, "holonomic": 5}}
# The rows the tests' general joints keep (position and rotation rows, neither all of one).
GENERAL_COMPONENTS = ("Fy", "Fz", "Mx", "Mz")


def unit(x) -> np.ndarray:
    """`x` divided by its norm (a unit quaternion from four digits)."""
    x = np.asarray(x, dtype=float)
    return x / np.linalg.norm(x)


def _holonomic_cases(dim: int) -> dict[str, int]:
    """Every holonomic way to join two bodies in `dim` dimensions, read from the element
    table: each joint kind, each drivable coordinate of a joint (`"revolute+driver"`, or
    `"cylindrical+angle"` where there are several), and a user constraint; with the
    relative degrees of freedom left."""
    types = jmbs.ELEMENT_TYPES.values()
    joints = [t for t in types if t.family == "joint" and t.bodies == 2 and dim in t.classes]
    cases = {t.kind: JOINT_DOF[dim][t.kind] for t in joints}
    for t in joints:
        coordinates = tuple(t.drivable.get(dim, ()))
        for c in coordinates:
            cases[f"{t.kind}+{'driver' if len(coordinates) == 1 else c}"] = JOINT_DOF[dim][t.kind] - 1
    cases["holonomic"] = JOINT_DOF[dim]["holonomic"]
    return cases


# Element kinds that join two bodies, with the relative degrees of freedom they leave.
PLANAR_JOINTS = _holonomic_cases(2)
SPATIAL_JOINTS = _holonomic_cases(3)
# The nonholonomic kinds per dimension.
PFAFFIAN = {dim: tuple(k for k, t in jmbs.ELEMENT_TYPES.items()
                       if dim in t.classes and not t.classes[dim].holonomic) for dim in (2, 3)}
# The solvability methods by name (jmbs.solvability(method=...)).
SOLVABILITY_METHODS = tuple(jmbs.SOLVABILITY_METHODS)


def _planar_custom(qs, t, p):
    # x-coordinate of body 2 follows body 1 plus an offset that moves with time.
    return jnp.array([qs[1][0] - qs[0][0] - p["offset"] - 0.1 * jnp.sin(t)])


def _spatial_custom(qs, t):
    # The centres of mass stay at distance 1.5 (a holonomic user constraint).
    d = qs[1][:3] - qs[0][:3]
    return jnp.array([d @ d - 1.5**2])


def _pfaffian(qs):
    # Body 2's velocity along its own first axis equals body 1's x-velocity.
    q = qs[1]
    if q.shape[0] == 3:
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        return jnp.array([[-1.0, 0, 0, c, s, 0.3]])
    R = jmbs.rotations.quat_to_rot(q[3:])
    return jnp.concatenate([jnp.array([-1.0, 0, 0, 0, 0, 0]), R[:, 0], jnp.array([0.0, 0.2, 0])])[None]


def two_bodies(dim: int, kind: str, ground: bool = False) -> jmbs.Model:
    """Two bodies (or the ground and a body) joined by one element of `kind`."""
    g = (0.0, -9.81) if dim == 2 else (0.0, 0.0, -9.81)
    b = jmbs.ModelBuilder(dim=dim, gravity=g)
    add_pair(b, dim, kind, ground)
    return b.build(check=False)


def add_pair(b: jmbs.ModelBuilder, dim: int, kind: str, ground: bool = False, prefix: str = "",
             offset=0.0) -> None:
    """Add two bodies (or one, on the ground) joined by one element `prefix + "J"` of
    `kind` (and a driver `prefix + "D"`), everything shifted by `offset` along x."""
    shift = np.zeros(dim)
    shift[0] = offset

    def at(p):
        return tuple(np.add(p, shift))

    if dim == 2:
        b1 = b.ground if ground else b.add_body(prefix + "b1", mass=1.2, inertia=0.1,
                                                position=at((0.1, 0.2)), angle=0.3)
        b2 = b.add_body(prefix + "b2", mass=0.8, inertia=0.05, position=at((1.1, 0.4)), angle=-0.4)
        P, axis, axes = at((0.6, 0.3)), (1.0, 0.5), None
    else:
        b1 = b.ground if ground else b.add_body(
            prefix + "b1", mass=1.2, inertia=(0.1, 0.2, 0.3), position=at((0.1, 0.2, 0.3)),
            rotation=frame_x_along((1.0, 0.3, -0.2)))
        b2 = b.add_body(prefix + "b2", mass=0.8, inertia=np.array([[0.2, 0.01, 0], [0.01, 0.1, 0],
                                                                   [0, 0, 0.15]]),
                        position=at((1.1, 0.4, -0.2)), quaternion=unit((0.9, 0.1, -0.3, 0.2)))
        P, axis = at((0.6, 0.3, 0.05)), (0.2, 1.0, 0.4)
        axes = (axis, np.cross(axis, (1.0, 0.0, 0.0)))
    name = prefix + "J"
    base, _, extra = kind.partition("+")
    etype = jmbs.ELEMENT_TYPES.get(base)
    if etype is not None and etype.family == "joint":
        # Every geometry argument the kind uses in `dim` (a length is left to its default).
        sample = {"point": P, "axis": axis, "normal": axis, "direction": (0.6, 0.8), "axes": axes,
                  "point_i": P, "point_j": np.add(P, 0.5)}
        bodies = (b1, b2)
        if etype.bodies == 1:  # on body 2 against the ground, at its own contact point
            bodies, sample["point"] = (b.ground, b2), at((1.3, 0.5))
        chosen = {"components": GENERAL_COMPONENTS} if etype.choose else {}
        b.add_joint(base, name, *bodies, **chosen, **{g.name: sample[g.name] for g in etype.geometry
                                                      if dim in g.dims and g.name in sample})
    elif base == "holonomic":
        if dim == 2:
            b.add_constraint(name, [b1, b2], holonomic=_planar_custom, params={"offset": 1.0})
        else:
            b.add_constraint(name, [b1, b2], holonomic=_spatial_custom)
    elif base == "pfaffian":
        b.add_constraint(name, [b1, b2], pfaffian=_pfaffian, components=["F"])
    else:
        raise KeyError(kind)
    if extra:
        coord = {"driver": None, "slide": "slide", "angle": "angle"}[extra]
        b.add_driver(prefix + "D", joint=name, motion=lambda t: 0.3 * jnp.sin(2 * t),
                     coordinate=coord)


def random_state(model: jmbs.Model, seed: int, spread: float = 0.3):
    """A random configuration near the reference (unit quaternions) and random velocities."""
    rng = np.random.default_rng(seed)
    q = np.asarray(model.q0).copy()
    if model.dim == 2:
        q = q + spread * rng.standard_normal(q.shape)
    else:
        qb = q.reshape(-1, 7)
        qb[:, :3] += spread * rng.standard_normal((len(qb), 3))
        p = qb[:, 3:] + spread * rng.standard_normal((len(qb), 4))
        qb[:, 3:] = p / np.linalg.norm(p, axis=1, keepdims=True)
        q = qb.ravel()
    v = rng.standard_normal(model.nv)
    return jnp.asarray(q), jnp.asarray(v), float(rng.uniform(0, 2))


def rank(A, rtol: float = 1e-9) -> int:
    s = np.linalg.svd(np.asarray(A), compute_uv=False)
    return int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0


def tree_allclose(a, b, rtol=1e-12, atol=1e-12) -> bool:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(
        np.allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol) for x, y in zip(la, lb))


def wrap(angle):
    return (angle + math.pi) % (2 * math.pi) - math.pi
