"""The divide-and-conquer analysis against the dense method on mechanisms of other shapes
than chains, and the defaults' choice between them (issue 31)."""

import numpy as np
import pytest

import jmbs
from jmbs import examples
from jmbs.internal import STRUCTURED_MIN_NV


@pytest.mark.parametrize("cranks,links", [(4, 3), (30, 20), (80, 40)])
def test_dca_decides_as_the_dense_method_on_a_hub_carrying_a_chain(cranks, links):
    """A coupler on `cranks` parallel cranks (a hub) carrying a hanging chain: rank
    3 cranks + 2 links + 2 (the parallelogram's one dof and one per link), the redundant
    cranks' reactions not unique, the chain's unique. The DCA and the dense null-space
    method make the same decisions, both with a clear margin."""
    model = examples.crank_ladder(cranks, links)
    dca, dense = (jmbs.solvability(model, method="dca"), jmbs.solvability(model, method="nullspace"))
    assert dca.rank == dense.rank == 3 * cranks + 2 * links + 2
    assert dca.redundancy == cranks - 2
    np.testing.assert_array_equal(dca.decisions.unique, dense.decisions.unique)
    np.testing.assert_array_equal(dca.decisions.component_unique, dense.decisions.component_unique)
    assert min(dca.rank_margin, dense.rank_margin) > 4.0
    names = model.element_names
    unique = dict(zip(names, np.asarray(dca.decisions.unique)))
    assert all(unique[f"L{j}"] for j in range(links))
    assert not any(unique[f"O{k}"] or unique[f"B{k}"] for k in range(cranks))


@pytest.mark.parametrize("make", [
    lambda: examples.bar_grid(3, 4), lambda: examples.bar_grid(6, 6),
    lambda: examples.random_mechanism(3, 2, n_bodies=40, n_loops=6, n_drivers=0)],
                         ids=["grid 3x4", "grid 6x6", "random 40 bodies, 6 loops"])
def test_dca_decides_as_the_dense_method_on_grids_and_random_loops(make):
    """Shapes with many loops: a lattice of pinned rods (every cell a loop; rank = its
    `6 rows cols + 2 rows` rows, `rows` degrees of freedom, by Gruebler's count with
    independent rows) and a random tree closed by random loops. The DCA and the dense
    null-space method make the same decisions with a clear margin."""
    model = make()
    dca, dense = (jmbs.solvability(model, method="dca"), jmbs.solvability(model, method="nullspace"))
    assert dca.rank == dense.rank
    if model.element_names[0] == "O0":  # the grid
        rows = sum(name.startswith("v0_") for name in model.body_names)
        assert dca.rank == model.nc and model.nv - dca.rank == rows
    np.testing.assert_array_equal(dca.decisions.unique, dense.decisions.unique)
    np.testing.assert_array_equal(dca.decisions.component_unique, dense.decisions.component_unique)
    assert min(dca.rank_margin, dense.rank_margin) > 4.0


def test_the_defaults_leave_the_tree_where_a_hub_makes_it_dearer_than_the_dense_method():
    """From STRUCTURED_MIN_NV coordinates on the defaults use the tree, unless its plan's
    estimated cost exceeds a dense factorization's: a coupler on 100 cranks carrying a
    60-link chain keeps up to 200 rows as handles in the tree (the tree 65 ms, the dense
    method 50 ms on the 2-core machine); the A02 chain stays on the tree (N = 40: 2.6 ms
    against 10.4 ms)."""
    hub, chain = examples.crank_ladder(100, 60), examples.n_four_bar(40)
    assert min(hub.nv, chain.nv) >= STRUCTURED_MIN_NV
    assert jmbs.solvability(hub).method == "nullspace"
    assert type(jmbs.default_formulation(hub)) is jmbs.NullSpaceProjection
    assert jmbs.solvability(chain).method == "dca"
    assert type(jmbs.default_formulation(chain)) is jmbs.DivideAndConquer


def test_a_hub_is_assembled_part_by_part():
    """The plan joins the parts that hang on a hub (here 50 cranks and a chain) to it a
    batch at a time (8 bodies for 81), so that only the subassemblies holding the coupler
    wait on more than a batch's joints; the steps' nullities add up to the redundancy."""
    model = examples.crank_ladder(50, 30)
    steps = jmbs.dca_assembly(model)
    assert len(steps[-1].bodies) == model.n_bodies
    for step in steps:
        if "coupler" not in step.bodies:
            assert len(step.handles) <= 8, (step.bodies, step.handles)
    joins = [s for s in steps if s.parts and "coupler" in s.bodies]
    assert len(joins) >= 50 // 8  # batch by batch, not split from the cranks
    assert sum(s.nullity for s in steps) == model.nc - jmbs.solvability(model, method="nullspace").rank
