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


def test_the_defaults_leave_the_tree_where_a_hub_makes_it_dearer_than_the_dense_method():
    """From STRUCTURED_MIN_NV coordinates on the defaults use the tree, unless its plan's
    estimated cost exceeds a dense factorization's: a coupler on 50 cranks pads a whole
    height of the tree to its 100 rows (the tree 17.8 ms, the dense method 15.4 ms on
    the 2-core machine); the A02 chain of the same size stays on the tree (3.0 ms against
    10.4 ms)."""
    hub, chain = examples.crank_ladder(50, 30), examples.n_four_bar(40)
    assert hub.nv == chain.nv == 243 >= STRUCTURED_MIN_NV
    assert jmbs.solvability(hub).method == "nullspace"
    assert type(jmbs.default_formulation(hub)) is jmbs.NullSpaceProjection
    assert jmbs.solvability(chain).method == "dca"
    assert type(jmbs.default_formulation(chain)) is jmbs.DivideAndConquer
