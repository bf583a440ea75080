"""Mechanisms of a given shape, for the divide-and-conquer analysis's cost and margins."""

import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model
from .basic import G, planar_rod


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
