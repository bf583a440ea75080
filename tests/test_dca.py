"""The divide-and-conquer method (paper 001): its own steps on the paper's example,
and agreement with the null-space method on every bundled mechanism and on random
ones, in metres and millimetres."""

import equinox as eqx
import jax
import numpy as np
import pytest

import jmbs
from jmbs import examples
from jmbs.examples import random_mechanism

# Paper 001 §4: the assembly joins one body at a time through one joint, the whole
# mechanism meeting the ground last through the six ground joints (its Fig. 7-8).
_chain = ("rod10", "rod9")
for _body in ("rod8", "platform", "rod1", "rod2", "rod3", "rod4", "rod5", "rod6"):
    _chain = (_chain, _body)
PAPER_TREE = ("ground", _chain)
PAPER_VERDICTS = dict.fromkeys("ABCDEFGH", "N") | dict.fromkeys("KLMNPQR", "U")


def _agree(model):
    a, b = jmbs.solvability(model).decisions, jmbs.solvability(model, method="dca").decisions
    assert int(b.rank) == int(a.rank)
    np.testing.assert_array_equal(np.asarray(b.unique), np.asarray(a.unique))
    np.testing.assert_array_equal(np.asarray(b.component_unique), np.asarray(a.component_unique))
    return a, b


def test_paper_001_ground_connection_and_verdicts():
    model = examples.spatial_parallelogram()
    steps = jmbs.dca_assembly(model, method=jmbs.DCA(tree=PAPER_TREE))
    root = steps[-1]
    # Step 2: the multijoint ground connection, G = T^T Phi_11 T of size 18 x 18, rank 17.
    assert root.connection == ("A", "C", "E", "G", "K", "M")
    assert root.G.shape == (18, 18) and root.rank == 17 and root.nullity == 1
    np.testing.assert_allclose(root.G, root.G.T, atol=1e-14)
    # Eq. (55): its null space is [N_1 (12 nonzero entries: A, C, E, G); 0 (K, M)].
    w, V = np.linalg.eigh(root.G)
    n = V[:, 0]
    assert w[0] < 1e-14 * w[-1] and w[1] > 1e-6 * w[-1]
    assert np.all(np.abs(n[:12]) > 1e-3) and np.all(np.abs(n[12:]) < 1e-12)
    # Table 1, by each of the paper's numerical tools (§3.1-3.4) applied to G: A, C, E,
    # G not unique, K and M unique with their components; the lower rods' resultant ACEG,
    # the upper rods' KM and all six together unique, KM alone with full rank (its
    # components unique: "f" in the table), ACEG (11 of 12) and ACEGKM (17 of 18) not.
    sets = np.zeros((9, 18), bool)
    for k in range(6):
        sets[k, 3 * k:3 * k + 3] = True
    sets[6, :12], sets[7, 12:], sets[8, :] = True, True, True
    decide = eqx.filter_jit(lambda tool, G, sets: tool.decide(G, sets))
    for tool in (jmbs.RankComparison(), jmbs.QR(), jmbs.SVD(), jmbs.NullSpace()):
        d = decide(tool, root.G, sets)
        assert int(d.rank) == 17
        np.testing.assert_array_equal(d.unique, [False] * 4 + [True] * 5)
        np.testing.assert_array_equal(d.component_unique, [False] * 12 + [True] * 6)
        if isinstance(tool, jmbs.RankComparison):
            np.testing.assert_array_equal(d.set_rank[6:], [11, 6, 17])
    # Every other connection is one joint with a nonsingular U (the paper's assumption).
    for s in steps[:-1]:
        assert len(s.connection) <= 1 and s.nullity == 0
    # The verdicts after the propagation steps (its Fig. 17), with the paper's tree and
    # with the automatic one.
    for method in (jmbs.DCA(tree=PAPER_TREE), "dca"):
        rep = jmbs.solvability(model, method=method)
        assert {e: rep.verdict(e) for e in PAPER_VERDICTS} == PAPER_VERDICTS
        # The same groups' resultants on the ground (on the moving bodies, each rod
        # takes its own joint's non-unique force).
        for group in ("ACEG", "KM", "ACEGKM"):
            assert rep.is_unique_resultant(list(group), "ground")
            assert rep.is_unique_group(list(group)) == (group == "KM")


@pytest.mark.parametrize("name", sorted(examples.ALL))
def test_agrees_with_nullspace_on_bundled(name):
    model = examples.ALL[name]()
    a, b = _agree(model)
    # Criteria of unique and non-unique sets are far apart in both methods.
    ok = np.asarray(a.margin) > 3
    assert np.all(np.asarray(b.margin)[ok] > 3)


@pytest.mark.parametrize("dim", [2, 3])
def test_agrees_with_nullspace_on_random_mechanisms_in_m_and_mm(dim):
    """Trees closed into loops by random joints (seeded), each in metres and in
    millimetres: the same decisions per element, component and group."""
    redundant, unique, not_unique = 0, 0, 0
    decide = eqx.filter_jit(lambda model, method, sets: jmbs.solvability_decisions(
        model, model.q0, 0.0, method, sets=sets))
    for seed in range(3 if dim == 2 else 2):  # spatial structures cost twice the compilation
        for scale in (1.0, 1000.0):
            model = random_mechanism(seed, dim=dim, n_bodies=6 + 2 * seed, n_loops=2 + seed,
                                     scale=scale)
            a, _ = _agree(model)
            redundant += model.nc - int(a.rank)
            unique += int(np.sum(a.component_unique))
            not_unique += int(np.sum(~np.asarray(a.component_unique)))
            if seed == 0:
                sets = jmbs.element_sets(model)
                pairs = sets[:-1] | sets[1:]  # groups: every two consecutive elements
                ga, gb = decide(model, "nullspace", pairs), decide(model, "dca", pairs)
                np.testing.assert_array_equal(np.asarray(gb.unique), np.asarray(ga.unique))
    assert redundant > 0 and unique > 0 and not_unique > 0  # the cases exercise both verdicts


def test_user_tree_with_the_ground_and_bad_trees():
    model = examples.four_bar()
    names = model.body_names
    tree = ("ground", ((names[0], names[1]), names[2]))
    rep = jmbs.solvability(model, method=jmbs.DCA(tree=tree))
    ref = jmbs.solvability(model)
    np.testing.assert_array_equal(rep.decisions.component_unique, ref.decisions.component_unique)
    with pytest.raises(ValueError, match="misses"):
        jmbs.solvability(model, method=jmbs.DCA(tree=(names[0], names[1])))
    with pytest.raises(ValueError, match="more than once"):
        jmbs.solvability(model, method=jmbs.DCA(tree=((names[0], names[0]), (names[1], names[2]))))
    with pytest.raises(ValueError, match="unknown body 'nope'"):
        jmbs.solvability(model, method=jmbs.DCA(tree=(("nope", names[1]), names[2])))
    with pytest.raises(ValueError, match="neither a body name nor a pair"):
        jmbs.solvability(model, method=jmbs.DCA(tree=(names[0], names[1], names[2])))
    with pytest.raises(ValueError, match="needs the model's structure"):
        jmbs.DCA().decide(np.zeros((model.nc, model.nv)), jmbs.element_sets(model))


def test_sweep_jit_and_vmap_agree_with_nullspace():
    model = examples.mobile_robot()
    lo, hi = examples.steering_range()
    qs = examples.mobile_robot_configurations(np.linspace(lo, hi, 9)[1:-1], hitch=0.4)
    a = jmbs.solvability_sweep(model, qs, method="nullspace")
    b = jmbs.solvability_sweep(model, qs, method="dca", batch_size=4)  # chunks and padding
    np.testing.assert_array_equal(b.rank, a.rank)
    np.testing.assert_array_equal(b.unique, a.unique)
    np.testing.assert_array_equal(b.component_unique, a.component_unique)
    f = jax.jit(jax.vmap(lambda q: jmbs.solvability_decisions(model, q, 0.0, "dca").unique))
    np.testing.assert_array_equal(np.asarray(f(qs)), a.unique)
    # The accelerator's path (connections of more than two rows by one-sided Jacobi: here
    # the ground's 7 x 14) on the CPU: the same decisions.
    c = jmbs.solvability_sweep(model, qs, method=jmbs.DCA(jacobi_svd=True), batch_size=4)
    np.testing.assert_array_equal(c.rank, a.rank)
    np.testing.assert_array_equal(c.unique, a.unique)
    np.testing.assert_array_equal(c.component_unique, a.component_unique)
    np.testing.assert_allclose(c.rank_values[:, :-2], b.rank_values[:, :-2], rtol=1e-12)


def test_a_body_without_joints_and_a_loop_closed_at_a_leaf():
    """A free body (no rows at all) and a pair welded to each other and pinned twice
    to the ground: its redundancy is born where the ground joints meet the bodies."""
    b = jmbs.ModelBuilder(dim=2)
    a = b.add_body("a", 1.0, 0.1, (0.0, 0.0))
    b.add_body("free", 1.0, 0.1, (5.0, 5.0))
    c = b.add_body("c", 1.0, 0.1, (1.0, 0.0))
    b.add_revolute("O", b.ground, a, (0.0, 0.0))
    b.add_weld("W", a, c)
    b.add_revolute("X", b.ground, c, (1.0, 0.0))
    a_, b_ = _agree(b.build())
    assert int(a_.rank) == 6
    np.testing.assert_array_equal(b_.component_unique, [False, True, False, True, True, False, True])


def test_block_path_equals_the_dense_path():
    """`DCA.evaluate` scales C's blocks itself (no dense matrix); given the dense
    equilibrated C (`decide`, the entry point the other methods share) it decides the
    same, with the same criteria: the two equilibrations agree entry by entry."""
    model = examples.bricard()
    method = jmbs.DCA().bind(model)
    dense = eqx.filter_jit(lambda m, C, sets: m.decide(jmbs.equilibrate(model, C), sets))(
        method, jmbs.constraint_matrix(model, model.q0), jmbs.element_sets(model))
    blocks = jmbs.solvability(model, method=method).decisions
    np.testing.assert_array_equal(dense.component_unique, blocks.component_unique)
    np.testing.assert_allclose(dense.criterion, blocks.criterion, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(dense.component_criterion, blocks.component_criterion,
                               rtol=1e-10, atol=1e-14)


def test_jacobi_connections_agree_on_a_spatial_loop():
    """The Bricard's connections (five rows per revolute) by one-sided Jacobi, as on an
    accelerator: the null-space method's decisions, rank values to rounding."""
    model = examples.bricard()
    a = jmbs.solvability(model, method=jmbs.DCA()).decisions
    b = jmbs.solvability(model, method=jmbs.DCA(jacobi_svd=True)).decisions
    ref = jmbs.solvability(model).decisions
    assert int(b.rank) == int(ref.rank) == model.nc - 1
    np.testing.assert_array_equal(np.asarray(b.unique), np.asarray(ref.unique))
    np.testing.assert_array_equal(np.asarray(b.component_unique), np.asarray(ref.component_unique))
    np.testing.assert_allclose(np.asarray(b.rank_values)[:-1], np.asarray(a.rank_values)[:-1], rtol=1e-12)
