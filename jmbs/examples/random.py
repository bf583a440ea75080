"""Random mechanisms: trees of bodies closed by extra joints into loops, planar or
spatial, reproducible from a seed (tests of the solvability methods against each
other, benchmarks)."""

import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model
from .._rotations import quat_to_rot

PLANAR_KINDS = ("revolute", "revolute", "prismatic", "distance", "weld")
SPATIAL_KINDS = ("spherical", "revolute", "universal", "cylindrical", "prismatic", "distance")


def _unit(rng, dim: int) -> np.ndarray:
    v = rng.normal(size=dim)
    return v / np.linalg.norm(v)


def random_mechanism(seed: int = 0, dim: int = 2, n_bodies: int = 6, n_loops: int = 2,
                     n_drivers: int = 1, scale: float = 1.0) -> Model:
    """A random mechanism in its reference configuration (assembled by construction).

    Body `k` joins the ground or an earlier body (a random tree); `n_loops` more
    joints between random pairs close loops. Joint kinds, points and axes are random
    (planar: revolute, prismatic, distance, weld; spatial: spherical, revolute,
    universal, cylindrical, prismatic, distance); `n_drivers` revolute or prismatic
    joints of the tree get a driver. `scale` is the length unit (1000: the same
    mechanism in millimetres, inertias in kg mm^2).
    """
    rng = np.random.default_rng(seed)
    b = ModelBuilder(dim=dim)
    pos = rng.uniform(-1.0, 1.0, size=(n_bodies, dim)) * scale
    names = []
    for k in range(n_bodies):
        inertia = (rng.uniform(0.05, 0.2) if dim == 2 else rng.uniform(0.1, 0.2, 3)) * scale**2
        pose = ({"angle": float(rng.uniform(-np.pi, np.pi))} if dim == 2
                else {"rotation": np.asarray(quat_to_rot(_unit(rng, 4)))})
        b.add_body(f"b{k}", mass=float(rng.uniform(0.5, 2.0)), inertia=inertia, position=pos[k], **pose)
        names.append(f"b{k}")
    kinds = PLANAR_KINDS if dim == 2 else SPATIAL_KINDS
    where = {k: pos[k] for k in range(n_bodies)}
    where[-1] = np.zeros(dim)

    def joint(name: str, i: int, j: int) -> str:
        kind = kinds[rng.integers(len(kinds))]
        bi, bj = ("ground" if i < 0 else names[i]), names[j]
        point = (where[i] + where[j]) / 2 + rng.normal(scale=0.2, size=dim) * scale
        axis = _unit(rng, dim)
        if kind == "distance":
            b.add_distance(name, bi, bj, where[i] + rng.normal(scale=0.3, size=dim) * scale,
                           where[j] + rng.normal(scale=0.3, size=dim) * scale)
            return kind
        if kind == "universal":
            other = _unit(rng, 3)
            other -= other @ axis * axis
            b.add_universal(name, bi, bj, point, (axis, other / np.linalg.norm(other)))
            return kind
        geometry = {"point": point}
        if kind in ("prismatic", "cylindrical") or (kind == "revolute" and dim == 3):
            geometry["axis"] = axis
        b.add_joint(kind, name, bi, bj, **geometry)
        return kind

    drivable = []
    for k in range(n_bodies):
        kind = joint(f"J{k}", int(rng.integers(-1, k)), k)
        if kind in ("revolute", "prismatic"):
            drivable.append(f"J{k}")
    for k in range(n_loops):
        i, j = sorted(rng.choice(np.arange(-1, n_bodies), size=2, replace=False))
        joint(f"L{k}", int(i), int(j))
    for name in drivable[:n_drivers]:
        b.add_driver(f"drive_{name}", name, "0.1 * t")
    return b.build()
