"""Spatial parallelogram with a triple pendulum (Pękal et al., divide-and-conquer paper, Sect. 4)."""

import math

import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model

G = 9.81
ROD_LENGTH = 2 * math.sqrt(2)
ROD_INERTIA = (0.04, 4.0, 4.0)
PLATFORM_INERTIA = (3.0, 3.0, 6.0)

# Platform attachment points in the platform frame (the platform is a 2 m square in its
# x-y plane, centred on its centre of mass). The paper gives no figure data: the lower
# rods take the corners, the upper rods the midpoints of two opposite sides, the
# pendulum the centre.
PLATFORM_POINTS = {
    "B": (1.0, 1.0, 0.0), "D": (-1.0, 1.0, 0.0), "F": (-1.0, -1.0, 0.0), "H": (1.0, -1.0, 0.0),
    "L": (1.0, 0.0, 0.0), "N": (-1.0, 0.0, 0.0), "P": (0.0, 0.0, 0.0),
}
# Relative zxz Euler angles of the pendulum's spherical joints P, Q, R (paper).
PENDULUM_ANGLES = ((math.pi / 4, math.pi / 4, math.pi / 2), (math.pi / 6, math.pi / 3, math.pi / 6),
                   (math.pi / 3, math.pi / 3, math.pi / 4))


def euler_zxz(a: float, b: float, c: float) -> np.ndarray:
    """Rotation matrix `Rz(a) Rx(b) Rz(c)` (the paper's joint coordinates)."""
    ca, sa, cb, sb, cc, sc = (math.cos(a), math.sin(a), math.cos(b), math.sin(b), math.cos(c),
                              math.sin(c))
    Rz1 = np.array([[ca, -sa, 0], [sa, ca, 0], [0, 0, 1.0]])
    Rx = np.array([[1.0, 0, 0], [0, cb, -sb], [0, sb, cb]])
    Rz2 = np.array([[cc, -sc, 0], [sc, cc, 0], [0, 0, 1.0]])
    return Rz1 @ Rx @ Rz2


def spatial_parallelogram(theta: float = math.pi / 12) -> Model:
    """Spatial parallelogram mechanism with a triple pendulum: 10 bodies, 15 spherical joints.

    Rods 1–4 join the ground points `A, C, E, G` (2 m below the platform) to the
    platform corners `B, D, F, H`; rods 5–6 hang from the ground points `K, M`
    (2 m above) to the platform side midpoints `L, N`; the pendulum rods 8, 9, 10
    hang in a chain from the platform centre `P` through `Q` and `R` (its free end
    `S` is the paper's empty handle: no joint). All rods are `2 sqrt(2)` m long
    (5 kg, `I = (0.04, 4, 4)` kg m², x along the rod from its first to its second
    joint); the platform 7 is a 2 m square (10 kg, `I = (3, 3, 6)` kg m²).

    The rod orientations are the paper's zxz Euler angles, `q_0.i = (pi/2 + theta,
    pi/2, ±pi/4)`, i.e. rod directions `(-sin theta, cos theta, ±1) / sqrt(2)`;
    `q_i.7` undoes `q_0.i`, so the platform stays parallel to the ground, and the
    pendulum keeps the paper's relative angles. The ground points do not depend on
    `theta`: `theta` is the position of the platform on its one-degree-of-freedom
    path (a horizontal circle), so every `theta` is a configuration of one mechanism.

    Joints are added in the order `A, B, ..., R` (rows `3 k ... 3 k + 2` for the
    k-th joint). Gravity is `-z`.

    Counts in absolute coordinates: `nv = 6 * 10 = 60`, `nc = 3 * 15 = 45`,
    `rank(C) = 44`, so `p = 1` and `dof = 16` (Grübler: 15). Why: a rod with a ball
    at each end spins freely about its own axis and otherwise only imposes on the
    platform that its point moves perpendicular to the rod, a row `(d, r_k x d)` in
    the platform's velocity `(v, omega)`. For rods 1–4, `d` is common and the row is
    affine in the platform point `r_k`; the four corners are coplanar, so the fourth
    row is an affine combination of the other three: one dependent constraint, the
    paper's rank-17 `18 x 18` ground-connection matrix. Rods 5–6 add two independent
    rows, leaving the platform one dof (the circle); with 6 rod spins and 9 pendulum
    rotations that is 16. The configuration is singular (rank 43) at `theta = ±pi/2`,
    where the line `L N` is parallel to the rods' horizontal direction.
    """
    b = ModelBuilder(dim=3, gravity=(0.0, 0.0, -G))
    s, c = math.sin(theta), math.cos(theta)
    # The platform centre moves on a circle of radius 2 m about the origin.
    centre = 2.0 * np.array([-s, c, 0.0])
    pts = {k: centre + np.asarray(v) for k, v in PLATFORM_POINTS.items()}
    R_lower = euler_zxz(math.pi / 2 + theta, math.pi / 2, math.pi / 4)
    R_upper = euler_zxz(math.pi / 2 + theta, math.pi / 2, -math.pi / 4)

    def rod(name, start, R):
        x = np.asarray(start) + ROD_LENGTH / 2 * R[:, 0]
        b.add_body(name, mass=5.0, inertia=ROD_INERTIA, position=x, rotation=R)
        return np.asarray(start) + ROD_LENGTH * R[:, 0]

    # Legs: (ground joint, platform joint, rod orientation). Going back along the rod
    # from the platform point cancels the centre's dependence on theta: the ground
    # points are the platform points (platform frame) shifted by -2 m (lower) or +2 m
    # (upper) in z, the same for every theta.
    legs = [("A", "B", R_lower), ("C", "D", R_lower), ("E", "F", R_lower), ("G", "H", R_lower),
            ("K", "L", R_upper), ("M", "N", R_upper)]
    ground = {}
    for k, (g, p, R) in enumerate(legs):
        ground[g] = pts[p] - ROD_LENGTH * R[:, 0]
        rod(f"rod{k + 1}", ground[g], R)
    platform = b.add_body("platform", mass=10.0, inertia=PLATFORM_INERTIA, position=centre)
    R, start, tips = np.eye(3), pts["P"], []
    for k, angles in enumerate(PENDULUM_ANGLES):
        R = R @ euler_zxz(*angles)
        start = rod(f"rod{k + 8}", start, R)
        tips.append(start)

    for k, (g, p, _) in enumerate(legs):
        b.add_spherical(g, b.ground, f"rod{k + 1}", point=ground[g])
        b.add_spherical(p, f"rod{k + 1}", platform, point=pts[p])
    # The legs gave A, B, C, ..., N in alphabetical order; the pendulum follows.
    b.add_spherical("P", platform, "rod8", point=pts["P"])
    b.add_spherical("Q", "rod8", "rod9", point=tips[0])
    b.add_spherical("R", "rod9", "rod10", point=tips[1])
    return b.build()
