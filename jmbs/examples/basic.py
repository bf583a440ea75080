"""Textbook mechanisms and the IFToMM benchmark problems A01, A02, A04."""

import math

import jax.numpy as jnp
import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model

G = 9.81


def planar_rod(b: ModelBuilder, name: str, p, q, mass: float = 1.0):
    """Uniform planar rod from point `p` to `q` (slender: `J = m L^2 / 12`)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    d = q - p
    L = float(np.linalg.norm(d))
    return b.add_body(name, mass=mass, inertia=mass * L**2 / 12, position=(p + q) / 2,
                      angle=math.atan2(d[1], d[0]))


def frame_x_along(d) -> np.ndarray:
    """A rotation matrix whose first column is the unit vector along `d`."""
    x = np.asarray(d, float) / np.linalg.norm(d)
    e = np.eye(3)[np.argmin(np.abs(x))]
    y = e - (e @ x) * x
    y /= np.linalg.norm(y)
    return np.stack([x, y, np.cross(x, y)], axis=1)


def pendulum() -> Model:
    """IFToMM A01: 1 kg point mass on a massless 1 m rod, released from the horizontal.

    The rod is a distance constraint to the ground pivot, so the body's own
    rotation is free and uncoupled (its inertia plays no role).
    """
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    m = b.add_body("mass", mass=1.0, inertia=1.0, position=(1.0, 0.0))
    b.add_distance("rod", b.ground, m, point_i=(0.0, 0.0), point_j=(1.0, 0.0))
    return b.build()


def slider_crank(crank: float = 0.5, rod: float = 1.5, theta: float = math.pi / 6,
                 omega: float | None = None, slider_motion: str | None = None) -> Model:
    """Planar slider-crank: crank O-A pinned at the origin, rod A-B, slider B on the x-axis.

    With `omega`, the crank angle is driven: `theta(t) = theta + omega t`
    (driver `drive` in joint `O`). With `slider_motion` (text in `t`), the slider is
    driven instead (driver `drive` in joint `P`): at dead centre (`theta = 0`) its
    motion does not determine the crank's, a singular configuration.
    """
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    A = crank * np.array([math.cos(theta), math.sin(theta)])
    B = np.array([A[0] + math.sqrt(rod**2 - A[1] ** 2), 0.0])
    c = planar_rod(b, "crank", (0, 0), A)
    r = planar_rod(b, "rod", A, B)
    s = b.add_body("slider", mass=1.0, inertia=0.01, position=B)
    b.add_revolute("O", b.ground, c, point=(0.0, 0.0))
    b.add_revolute("A", c, r, point=A)
    b.add_revolute("B", r, s, point=B)
    b.add_prismatic("P", b.ground, s, point=B, axis=(1.0, 0.0))
    if omega is not None:
        b.add_driver("drive", joint="O", motion="omega * t", params={"omega": omega})
    elif slider_motion is not None:
        b.add_driver("drive", joint="P", motion=slider_motion)
    return b.build()


def slider_crank_position(theta, crank: float = 0.5, rod: float = 1.5):
    """Closed form: slider position `x_B(theta)` and rod angle of `slider_crank`."""
    ya = crank * jnp.sin(theta)
    xb = crank * jnp.cos(theta) + jnp.sqrt(rod**2 - ya**2)
    return xb, jnp.arctan2(-ya, xb - crank * jnp.cos(theta))


def four_bar_points(theta, a: float = 1.0, b: float = 2.5, c: float = 2.0, d: float = 3.0):
    """Closed form of `four_bar`: joints `A` (crank tip) and `B` (rocker tip), open branch."""
    A = np.array([a * math.cos(theta), a * math.sin(theta)])
    O4 = np.array([d, 0.0])
    e = O4 - A
    L = np.linalg.norm(e)
    # B lies on circles |B - A| = b and |B - O4| = c, above the line A-O4.
    x = (b**2 - c**2 + L**2) / (2 * L)
    h = math.sqrt(b**2 - x**2)
    u = e / L
    return A, A + x * u + h * np.array([-u[1], u[0]])


def four_bar(theta: float = math.pi / 3, a: float = 1.0, b: float = 2.5, c: float = 2.0,
             d: float = 3.0, omega: float | None = None) -> Model:
    """Planar four-bar: crank `a` pinned at O2 = (0, 0), coupler `b`, rocker `c` pinned
    at O4 = (d, 0); joints O2, A, B, O4. With `omega`, the crank is driven."""
    bld = ModelBuilder(dim=2, gravity=(0.0, -G))
    A, B = four_bar_points(theta, a, b, c, d)
    O4 = (d, 0.0)
    crank = planar_rod(bld, "crank", (0, 0), A)
    coupler = planar_rod(bld, "coupler", A, B)
    rocker = planar_rod(bld, "rocker", O4, B)
    bld.add_revolute("O2", bld.ground, crank, point=(0.0, 0.0))
    bld.add_revolute("A", crank, coupler, point=A)
    bld.add_revolute("B", coupler, rocker, point=B)
    bld.add_revolute("O4", bld.ground, rocker, point=O4)
    if omega is not None:
        bld.add_driver("drive", joint="O2", motion="omega * t", params={"omega": omega})
    return bld.build()


def n_four_bar(n: int = 40) -> Model:
    """IFToMM A02: N + 1 vertical 1 m cranks pinned at x = 0..N, joined at their tops
    by N horizontal couplers (1 m, 1 kg each). The top of the first crank starts
    with x-velocity 1 m/s."""
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    cranks = [b.add_body(f"crank{k}", mass=1.0, inertia=1 / 12, position=(k, 0.5),
                         angle=math.pi / 2, velocity=(0.5, 0.0), angular_velocity=-1.0)
              for k in range(n + 1)]
    couplers = [b.add_body(f"coupler{k}", mass=1.0, inertia=1 / 12, position=(k + 0.5, 1.0),
                           velocity=(1.0, 0.0)) for k in range(n)]
    for k, c in enumerate(cranks):
        b.add_revolute(f"O{k}", b.ground, c, point=(k, 0.0))
    for k, c in enumerate(couplers):
        b.add_revolute(f"B{k}L", cranks[k], c, point=(k, 1.0))
        b.add_revolute(f"B{k}R", c, cranks[k + 1], point=(k + 1, 1.0))
    return b.build()


def n_four_bar_configuration(n: int, theta) -> np.ndarray:
    """Coordinates of `n_four_bar(n)` with every crank at angle `theta` from the ground
    (closed form: the chain moves as one parallelogram): crank k's centre
    `(k + cos(theta)/2, sin(theta)/2)` at angle `theta`, coupler k's
    `(k + 1/2 + cos theta, sin theta)`. `theta` a number gives `(nq,)`, an array of
    shape `s` gives `s + (nq,)`. At `theta = 0` (or pi) the chain lies flat: the
    singular configuration."""
    th = np.asarray(theta, dtype=float)[..., None]
    c, s = np.cos(th), np.sin(th)
    k, j = np.arange(n + 1), np.arange(n)
    cranks = np.stack(np.broadcast_arrays(k + 0.5 * c, 0.5 * s, th), axis=-1)
    couplers = np.stack(np.broadcast_arrays(j + 0.5 + c, s, 0.0 * th), axis=-1)
    flat = th.shape[:-1] + (-1,)
    return np.concatenate([cranks.reshape(flat), couplers.reshape(flat)], axis=-1)


def parallelogram(motion=None, params=None) -> Model:
    """Planar parallelogram with a third crank (p = 1): three vertical 1 m cranks
    pinned at x = 0, 1, 2 and one 2 m coupler pinned to all three tops. With `motion`
    (and its `params`, as for `ModelBuilder.add_driver`), a driver `"drive"` turns
    crank 0 about its ground pin `O0`."""
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    cranks = [planar_rod(b, f"crank{k}", (k, 0), (k, 1)) for k in range(3)]
    coupler = planar_rod(b, "coupler", (0, 1), (2, 1), mass=2.0)
    for k, c in enumerate(cranks):
        b.add_revolute(f"O{k}", b.ground, c, point=(k, 0.0))
        b.add_revolute(f"B{k}", c, coupler, point=(k, 1.0))
    if motion is not None:
        b.add_driver("drive", joint="O0", motion=motion, params=params)
    return b.build()


def spatial_rod(b: ModelBuilder, name: str, p, q, mass: float = 1.0, width: float = 0.1):
    """Uniform spatial rod of square section `width` from `p` to `q` (x along the rod)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    L = float(np.linalg.norm(q - p))
    ixx = mass * width**2 / 6
    iyy = mass * (L**2 + width**2) / 12
    return b.add_body(name, mass=mass, inertia=(ixx, iyy, iyy), position=(p + q) / 2,
                      rotation=frame_x_along(q - p))


def spatial_four_bar(theta: float = math.pi / 3, motion=None) -> Model:
    """The planar four-bar of `four_bar` built with spatial revolute joints whose four
    axes are parallel (z): p = 3 redundant constraints, dof = 1. With `motion` (a
    traceable `f(t)`, the crank angle from this configuration), a driver `"drive"` on
    O2 takes the degree of freedom."""
    b = ModelBuilder(dim=3, gravity=(0.0, -G, 0.0))
    A, B = four_bar_points(theta)
    A3, B3, O4 = np.r_[A, 0.0], np.r_[B, 0.0], np.array([3.0, 0.0, 0.0])
    crank = spatial_rod(b, "crank", np.zeros(3), A3)
    coupler = spatial_rod(b, "coupler", A3, B3)
    rocker = spatial_rod(b, "rocker", O4, B3)
    z = (0.0, 0.0, 1.0)
    b.add_revolute("O2", b.ground, crank, point=(0.0, 0.0, 0.0), axis=z)
    b.add_revolute("A", crank, coupler, point=A3, axis=z)
    b.add_revolute("B", coupler, rocker, point=B3, axis=z)
    b.add_revolute("O4", b.ground, rocker, point=O4, axis=z)
    if motion is not None:
        b.add_driver("drive", "O2", motion)
    return b.build()


BRICARD_POINTS = np.array([[0, 0, 0], [1, 0, 0], [1, -1, 0], [1, -1, 1], [0, -1, 1], [0, 0, 1]],
                          dtype=float)
BRICARD_AXES = np.eye(3)[[1, 2, 0, 1, 2, 0]]


def bricard() -> Model:
    """IFToMM A04 Bricard mechanism: five 1 m, 1 kg rods (square section 0.1 m) and six
    revolute joints; the first and last joints connect to the ground. Gravity -y."""
    b = ModelBuilder(dim=3, gravity=(0.0, -G, 0.0))
    P = BRICARD_POINTS
    rods = [spatial_rod(b, f"rod{k + 1}", P[k], P[k + 1]) for k in range(5)]
    bodies = [b.ground, *rods, b.ground]
    for k in range(6):
        b.add_revolute(f"J{k + 1}", bodies[k], bodies[k + 1], point=P[k], axis=BRICARD_AXES[k])
    return b.build()


def sarrus(height: float = 0.4, link: float = 0.25, base: float = 0.2) -> Model:
    """Sarrus linkage: a plate held above the ground by two hinged legs, each two rods of
    length `link` joined by revolutes with parallel axes (leg "a" in the x-z plane, axes
    along y; leg "b" in the y-z plane, axes along x), so that the plate can only
    translate along z: six revolutes, 30 rows, rank 29, dof 1. The plate is at
    `height` (0 < height < 2 link); the knees point outwards (away from the z axis),
    `base` from it at the hinges. The plate's height is its z coordinate
    (`plate.z`). Singular configurations: folded flat (height 0: below it the plate
    passes through the ground) and stretched (height 2 link)."""
    if not 0.0 < height < 2.0 * link:
        raise ValueError(f"sarrus: height must lie in (0, 2 link) = (0, {2 * link}), got {height}")
    b = ModelBuilder(dim=3, gravity=(0.0, 0.0, -G))
    reach = math.sqrt(link**2 - (height / 2) ** 2)
    plate = b.add_body("plate", mass=1.0, inertia=(0.01, 0.01, 0.02), position=(0.0, 0.0, height))
    for leg, e, axis in (("a", np.array([1.0, 0.0, 0.0]), (0.0, 1.0, 0.0)),
                         ("b", np.array([0.0, 1.0, 0.0]), (1.0, 0.0, 0.0))):
        foot, knee = base * e, (base + reach) * e + np.array([0.0, 0.0, height / 2])
        top = base * e + np.array([0.0, 0.0, height])
        lower = spatial_rod(b, f"{leg}_lower", foot, knee, width=0.02)
        upper = spatial_rod(b, f"{leg}_upper", knee, top, width=0.02)
        b.add_revolute(f"{leg}_foot", b.ground, lower, point=foot, axis=axis)
        b.add_revolute(f"{leg}_knee", lower, upper, point=knee, axis=axis)
        b.add_revolute(f"{leg}_top", upper, plate, point=top, axis=axis)
    return b.build()
