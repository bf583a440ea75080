"""Mechanisms of a given shape, for the divide-and-conquer analysis's cost and margins."""

import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model
from .basic import G, planar_rod, spatial_rod


def crank_ladder(cranks: int = 300, links: int = 200) -> Model:
    """A hub and a chain: one coupler (`cranks - 1` m, 2 kg) pinned to the tops of
    `cranks` parallel vertical 1 m cranks pinned to the ground 1 m apart (a parallelogram
    with `cranks - 2` redundant cranks: p = cranks - 2), carrying a chain of `links`
    0.5 m links hanging from its right end. Rank `3 cranks + 2 links + 2`, dof `1 + links`;
    the coupler is a body joined to `cranks + 1` others."""
    if cranks < 2 or links < 0:
        raise ValueError(f"crank_ladder needs cranks >= 2 and links >= 0; got {cranks}, {links}")
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    arms = [planar_rod(b, f"crank{k}", (k, 0), (k, 1)) for k in range(cranks)]
    coupler = planar_rod(b, "coupler", (0, 1), (cranks - 1, 1), mass=2.0)
    for k, arm in enumerate(arms):
        b.add_revolute(f"O{k}", b.ground, arm, point=(k, 0.0))
        b.add_revolute(f"B{k}", arm, coupler, point=(k, 1.0))
    prev, top = coupler, np.array([cranks - 1.0, 1.0])
    for j in range(links):
        link = planar_rod(b, f"link{j}", top, top + (0.0, -0.5))
        b.add_revolute(f"L{j}", prev, link, point=top)
        prev, top = link, top + (0.0, -0.5)
    return b.build()


def plates_on_legs(legs: tuple[int, ...] = (12, 10), links: int = 3) -> Model:
    """Spatial hubs joined to each other: plates (5 kg) on `legs[j]` parallel vertical 1 m
    legs each (a revolute about z at the ground, a spherical joint at the plate; plate
    `j` at z = 2 j), consecutive plates hinged about z, a chain of `links` 0.5 m rods
    hanging from the first plate by spherical joints. The legs' and hinges' reactions are
    not unique (every plate is overconstrained), the chain's are; each plate is a body
    joined to `legs[j] + 1` or more others."""
    if not legs or min(legs) < 1 or links < 0:
        raise ValueError(f"plates_on_legs needs at least one plate with legs >= 1 and links >= 0; "
                         f"got legs={legs}, links={links}")
    b = ModelBuilder(dim=3, gravity=(0.0, -G, 0.0))
    z = (0.0, 0.0, 1.0)
    plates = [b.add_body(f"plate{j}", mass=5.0, inertia=(1.0, 2.0, 1.5),
                         position=((k - 1) / 2, 1.0, 2.0 * j)) for j, k in enumerate(legs)]
    for j, (plate, k) in enumerate(zip(plates, legs)):
        for i in range(k):
            leg = spatial_rod(b, f"leg{j}_{i}", (i, 0.0, 2.0 * j), (i, 1.0, 2.0 * j))
            b.add_revolute(f"O{j}_{i}", b.ground, leg, point=(i, 0.0, 2.0 * j), axis=z)
            b.add_spherical(f"T{j}_{i}", leg, plate, point=(i, 1.0, 2.0 * j))
        if j:
            b.add_revolute(f"P{j}", plates[j - 1], plate, point=(0.0, 1.0, 2.0 * j - 1.0), axis=z)
    prev, top = plates[0], np.array([legs[0] - 1.0, 1.0, -0.5])
    for j in range(links):
        rod = spatial_rod(b, f"link{j}", top, top + (0.0, -0.5, 0.0))
        b.add_spherical(f"L{j}", prev, rod, point=top)
        prev, top = rod, top + (0.0, -0.5, 0.0)
    return b.build()


def bar_grid(rows: int = 10, cols: int = 10, jitter: float = 0.1, seed: int = 0) -> Model:
    """A grid of loops: the nodes of a `rows` x `cols` lattice of cells (1 m apart, each
    moved by up to `jitter` m at random so that no bars are parallel), one rod along each
    edge above the ground row, the rods meeting at a node pinned to the first of them, the
    bottom row's vertical rods pinned to the ground. `2 rows cols + rows` bodies and
    `3 rows cols + rows` revolutes; every cell is a four-bar loop (a graph with many loops
    and separators of about `sqrt(bodies)`); p = 0 and `rows` degrees of freedom (each row
    of cells shears)."""
    if rows < 1 or cols < 1:
        raise ValueError(f"bar_grid needs rows >= 1 and cols >= 1; got {rows}, {cols}")
    rng = np.random.default_rng(seed)
    node = {(i, j): np.array([i, j], float) + (rng.uniform(-jitter, jitter, 2) if j else 0.0)
            for i in range(cols + 1) for j in range(rows + 1)}
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    at: dict[tuple[int, int], list[str]] = {n: [] for n in node}
    for j in range(rows + 1):
        for i in range(cols + 1):
            if j < rows:
                rod = planar_rod(b, f"v{i}_{j}", node[i, j], node[i, j + 1]).name
                at[i, j].append(rod)
                at[i, j + 1].append(rod)
            if j > 0 and i < cols:
                rod = planar_rod(b, f"h{i}_{j}", node[i, j], node[i + 1, j]).name
                at[i, j].append(rod)
                at[i + 1, j].append(rod)
    for (i, j), rods in at.items():
        first = rods[0]
        if j == 0:
            b.add_revolute(f"O{i}", b.ground, first, point=node[i, j])
        for k, rod in enumerate(rods[1:]):
            b.add_revolute(f"N{i}_{j}_{k}", first, rod, point=node[i, j])
    return b.build()
