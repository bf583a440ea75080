"""The divide-and-conquer analysis against the dense method on mechanisms of other shapes
than chains, and the defaults' choice between them (issue 31)."""

import numpy as np
import pytest

import jmbs
from jmbs import examples
from jmbs.internal import HUB_SHARE, STRUCTURED_MIN_NV


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


def test_dca_decides_as_the_dense_method_on_two_spatial_hubs_joined_to_each_other():
    """Both plates are hubs (13 and 11 neighbours, each split into welded copies; the
    hinge between them joins a copy of each): the DCA's rank, redundancy and every
    decision are the dense method's; the hanging chain's reactions are unique, the legs'
    and the plates' hinge's not."""
    model = examples.plates_on_legs()
    dca, dense = (jmbs.solvability(model, method="dca"), jmbs.solvability(model, method="nullspace"))
    assert dca.rank == dense.rank and dca.redundancy == dense.redundancy > 0
    np.testing.assert_array_equal(dca.decisions.unique, dense.decisions.unique)
    np.testing.assert_array_equal(dca.decisions.component_unique, dense.decisions.component_unique)
    assert min(dca.rank_margin, dense.rank_margin) > 4.0
    unique = dict(zip(model.element_names, np.asarray(dca.decisions.unique)))
    assert all(unique[f"L{j}"] for j in range(3))
    assert not any(unique[name] for name in model.element_names if name[0] in "OTP")
    welded = {e for step in jmbs.dca_assembly(model) for e in step.connection if e.endswith("(weld)")}
    assert welded == {"plate0 (weld)", "plate1 (weld)"}  # both hubs split


def test_a_set_of_joints_on_several_copies_of_a_hub_is_decided_on_the_hub():
    """A set's wrench on a split hub is its copies' summed: the joints of all 12 cranks
    (every `O_k` and `B_k`, acting on every copy of the coupler) have a unique resultant
    on every body, though no single one of them is unique; two cranks' joints are not;
    the DCA decides each set as the dense method does."""
    model = examples.crank_ladder(12, 3)
    S = jmbs.element_sets(model)
    names = model.element_names
    crank_joints = np.array([n[0] in "OB" for n in names])
    sets = np.stack([S[crank_joints].any(axis=0), S[:4].any(axis=0), S.any(axis=0)])
    dca, dense = (jmbs.solvability_decisions(model, model.q0, method=m, sets=sets)
                  for m in ("dca", "nullspace"))
    np.testing.assert_array_equal(np.asarray(dca.unique), [True, False, True])
    np.testing.assert_array_equal(np.asarray(dca.unique), np.asarray(dense.unique))
    assert not np.any(np.asarray(jmbs.solvability(model).decisions.unique)[crank_joints])


@pytest.mark.parametrize("make", [lambda: examples.crank_ladder(30, 5), examples.plates_on_legs],
                         ids=["30 cranks", "two plates"])
def test_sets_across_a_split_hub_are_decided_as_the_dense_method_decides_them(make):
    """Random unions of unique elements (the chain's joints) and their complements (the
    rest of the mechanism: every copy of the hubs, and the patterns born in their
    subtrees reach several copies) are unique, by the dense null-space method; the DCA
    sums a set's wrenches on a hub's copies in common bases and agrees (it had 10 of
    these 20 not unique, criteria 6.5 and 9.2, summing copies' wrenches leaf by leaf in
    bases that differ between subtrees); sets of crank or leg joints alone are not."""
    model = make()
    rng = np.random.default_rng(0)
    S = np.asarray(jmbs.element_sets(model))
    unique = np.asarray(jmbs.solvability(model, method="nullspace").decisions.unique)
    picks = [(rng.random(len(S)) < p) & unique for p in (0.2, 0.5, 0.8) * 3] + [unique]
    legs = np.array([name[0] in "OBTP" for name in model.element_names])
    sets = np.stack([S[pick].any(axis=0) for pick in picks]
                    + [S[~pick].any(axis=0) for pick in picks] + [S[legs][:3].any(axis=0)])
    dca, dense = (jmbs.solvability_decisions(model, model.q0, method=m, sets=sets)
                  for m in ("dca", "nullspace"))
    np.testing.assert_array_equal(np.asarray(dense.unique), [True] * 20 + [False])
    np.testing.assert_array_equal(np.asarray(dca.unique), np.asarray(dense.unique))


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


@pytest.mark.parametrize("make", [
    lambda: examples.plates_on_legs((5, 7, 3), 2), lambda: examples.bar_grid(3, 4),
    lambda: examples.random_mechanism(3, 2, n_bodies=40, n_loops=6, n_drivers=0)],
                         ids=["three hubs, welded copies", "grid 3x4", "random 40 bodies, 6 loops"])
def test_the_tree_formulation_keeps_the_ranks_the_dca_decides(make):
    """`DivideAndConquer` decides its connections' ranks once, on its own factorization
    of the equilibrated `C` (heights in scanned segments); the DCA analysis decides them
    in its pass up (one step per height). The same connections keep the same number of
    values (hubs' welds included), and the rank of `C` is the report's."""
    model = make()
    state = jmbs.DivideAndConquer().prepare(model, model.q0, 0.0).state
    steps = jmbs.dca_assembly(model)
    kept = sorted(int(r) for ranks in state.node_ranks for r in np.asarray(ranks) if r)
    assert kept == sorted(s.rank for s in steps if s.rank)
    assert state.rank == jmbs.solvability(model, method="dca").rank == sum(kept) - state.plan.weld_rank


def test_the_defaults_take_the_tree_on_a_hub_and_leave_it_on_dense_random_loops():
    """From STRUCTURED_MIN_NV coordinates on the defaults use the tree, unless its plan's
    estimated cost exceeds a dense factorization's (`TREE_FLOP_COST` dense flops per tree
    flop: the tree also compiles longer). A coupler on 100 cranks carrying a 60-link
    chain, its hub split: the tree (repeat calls 5.1 ms against the dense method's 32 ms on
    the 2-core machine); the A02 chain (N = 40: 2.6 ms against 10.4 ms); a random tree of
    60 bodies closed by 30 random loops, whose separators are most of the graph, stays on
    the dense method (the tree 9.7 ms, the dense method 5.2 ms)."""
    hub, chain = examples.crank_ladder(100, 60), examples.n_four_bar(40)
    loops = examples.random_mechanism(0, 2, n_bodies=60, n_loops=30, n_drivers=0)
    assert min(hub.nv, chain.nv, loops.nv) >= STRUCTURED_MIN_NV
    for model in (hub, chain):
        assert jmbs.solvability(model).method == "dca"
        assert type(jmbs.default_formulation(model)) is jmbs.DivideAndConquer
    assert jmbs.solvability(loops).method == "nullspace"
    assert type(jmbs.default_formulation(loops)) is jmbs.NullSpaceProjection


def test_a_hub_is_split_into_welded_copies():
    """The plan splits the coupler of 50 cranks (51 neighbours) into copies, each joined to
    `HUB_SHARE` of its neighbours, consecutive copies welded: the tree bisects a comb, and
    no step waits on more than a few joints (before the split, the subassemblies holding
    the coupler kept every crank not joined yet as handles). The welds are connections
    of their own, of full rank: the steps' nullities add up to the redundancy."""
    model = examples.crank_ladder(50, 30)
    steps = jmbs.dca_assembly(model)
    assert len(steps[-1].bodies) == model.n_bodies
    assert max(len(step.handles) for step in steps) <= 2 * HUB_SHARE
    welds = [s for s in steps if "coupler (weld)" in s.connection]
    assert len(welds) == -(-51 // HUB_SHARE) - 1
    assert sum(s.nullity for s in steps) == model.nc - jmbs.solvability(model, method="nullspace").rank
