"""The papers' uniqueness results (docs/papers/): the decisions at each mechanism's
reference configuration with every method, and the agreement of the five methods
(and the constancy of the rank and of the papers' pattern) on 1000 random
nonsingular configurations of each mechanism on its own motion branch.

Mobile robot: Wojtyra & Frączek (papers/000), §4. Spatial parallelogram: Pękal et
al. (papers/001), §4. Gripper and manipulator: Pękal & Frączek (papers/003),
Tables 2, 4, 6, 8, 10. Planar parallelogram with a third crank and Bricard: one
redundancy, no unique joint reaction.
"""

import jax
import numpy as np
import pytest
from helpers import SOLVABILITY_METHODS as METHODS

import jmbs
from jmbs.reproduce import random_configurations
from jmbs.reproduce.sampling import NAMES

N = 1000


def _pattern(unique: str, not_unique: str) -> dict[str, str]:
    return {**{k: "U" for k in unique.split()}, **{k: "N" for k in not_unique.split()}}


# Per mechanism: rank of C (the paper's r, or nv minus its degrees of freedom) and
# the paper's verdict for every element.
PAPERS = {
    # Heaviest first: they start early on the two workers.
    "redundant_manipulator_overactuated": (54, _pattern("A dA dIc", "B C D E F G J K Hc Ic Lc dHc dLc")),
    "spatial_parallelogram": (44, _pattern("K L M N P Q R", "A B C D E F G H")),
    "redundant_manipulator": (42, _pattern("A dA dHc dIc", "B C D E F G Hc Ic")),
    "bricard": (29, _pattern("", "J1 J2 J3 J4 J5 J6")),
    "mobile_robot": (20, _pattern("A D E F G H drive W5", "B C W1 W2 W3 W4")),
    "gripper": (11, _pattern("Br Cr Er", "Bt Ct Dt")),
    "gripper_torque": (12, _pattern("Br Cr Er drive_Cr", "Bt Ct Dt")),
    "gripper_overactuated": (12, _pattern("", "Bt Ct Dt Br Cr Er drive_Cr drive_Bt")),
    "parallelogram": (11, _pattern("", "O0 B0 O1 B1 O2 B2")),
}
# The paper's kinetostatic matrix A (balance equations x unknowns) and its rank.
A_SHAPES = {"gripper": ((12, 12), 11), "gripper_torque": ((12, 13), 12),
            "gripper_overactuated": ((12, 14), 12), "redundant_manipulator": ((42, 46), 42),
            "redundant_manipulator_overactuated": ((54, 61), 54)}
SWEEP_BATCH = 256  # the experiments use the same chunk size, so compiled sweeps can be shared


def sweeps(model, qs, ts) -> dict[str, jmbs.SolvabilitySweep]:
    """Every method; row 0 is the reference configuration (the paper's), then the
    random ones."""
    Q = np.vstack([np.asarray(model.q0)[None], qs])
    T = np.concatenate([[0.0], ts])
    return {m: jmbs.solvability_sweep(model, Q, T, method=m, batch_size=SWEEP_BATCH, progress=False)
            for m in METHODS}


def constraint_matrices(model, qs, ts) -> np.ndarray:
    """`C` at the reference (row 0) and at the random configurations."""
    Q = np.vstack([np.asarray(model.q0)[None], qs])
    T = np.concatenate([[0.0], ts])
    return np.asarray(jax.jit(jax.vmap(lambda q, t: jmbs.constraint_matrix(model, q, t)))(Q, T))


def _rank(A: np.ndarray) -> np.ndarray:
    s = np.linalg.svd(A, compute_uv=False)
    return np.sum(s > 1e-9 * s[..., :1], axis=-1)


# ----- checks of single papers' numbers, run by the mechanism's test below -----

def kinetostatic_table(name, model, qs, ts, sw):
    """Tables 2-10 of the kinetostatic paper: the size and rank of A, and every
    studied element's A_S of full rank."""
    (shape, rank), (_, expected) = A_SHAPES[name], PAPERS[name]
    assert np.asarray(jmbs.kinetostatic_matrix(model, model.q0, 0.0)).shape == shape
    rep = jmbs.solvability(model, method="kinetostatic")
    assert rep.rank == rank
    for el in expected:
        k = model.element_names.index(el)
        assert int(rep.decisions.set_rank[k]) == len(model.element(el).components), el
        assert rep.is_unique(el) == (expected[el] == "U"), el


def mobile_robot_ranks(name, model, qs, ts, sw):
    """Paper 000: rank(Phi_q) = 17, rank(Psi) = 4, r = 20, p = 2 in every nonsingular
    configuration (here over the steering range, any hitch angle and pose)."""
    C = constraint_matrices(model, qs, ts)
    hol = model.holonomic_rows
    assert hol.sum() == 17
    np.testing.assert_array_equal(_rank(C[:, hol]), 17)
    np.testing.assert_array_equal(_rank(C[:, ~hol]), 4)
    np.testing.assert_array_equal(_rank(C), 20)


def spatial_parallelogram_ground(name, model, qs, ts, sw):
    """Paper 001: the ground-connection matrix is 18 x 18 of rank 17. Its
    absolute-coordinate counterpart `G = C_G V_I V_I^T C_G^T` (`C_G` the rows of
    the six ground joints, `V_I` an orthonormal basis of the null space of the
    other joints' rows) has rank `rank C - rank C_I = 44 - 27` in every
    configuration; the resultant wrench of the ground joints on the ground is
    unique, while the group's generalized force (on six different rods) is not."""
    ground = list("ACEGKM")
    rows = np.concatenate([np.arange(model.nc)[model.rows(k)] for k in ground])
    mask = np.isin(np.arange(model.nc), rows)
    Cs = constraint_matrices(model, qs, ts)
    for C in Cs[::10]:
        CG, CI = C[mask], C[~mask]
        rI = int(_rank(CI))
        VI = np.linalg.svd(CI)[2][rI:].T
        G = CG @ VI @ VI.T @ CG.T
        assert G.shape == (18, 18) and np.abs(G - G.T).max() < 1e-12
        assert (int(_rank(G)), int(_rank(C)), rI) == (17, 44, 27)
    N = np.linalg.svd(Cs[0])[0][:, 44:]
    W = np.zeros((6, model.nc))
    for k in ground:
        p = np.asarray(model.params()[f"{k}.point"])
        r = np.arange(model.nc)[model.rows(k)]
        W[:3, r] = np.eye(3)
        W[3:, r] = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    assert np.abs(W @ N).max() < 1e-12
    rep = jmbs.solvability(model)
    assert not rep.is_unique_group(ground)
    assert rep.is_unique_group(["K", "M"]) and rep.is_unique_group(["P", "Q", "R"])


def parallelogram_self_stress(name, model, qs, ts, sw):
    """The null space of `C^T` is the analytic self-stress: axial crank forces
    `t = (1, -2, 1)` along the cranks' direction `u` at both joints of each crank;
    a component is unique exactly where it vanishes (Fx with vertical cranks)."""
    Cs = constraint_matrices(model, qs, ts)
    t = np.array([1.0, -2.0, 1.0])
    for k, (C, q) in enumerate(zip(Cs, np.vstack([np.asarray(model.q0)[None], qs]))):
        u = np.array([np.cos(q[2]), np.sin(q[2])])
        lam = np.concatenate([t[j] * u for j in (0, 0, 1, 1, 2, 2)])  # O0, B0, O1, B1, O2, B2
        lam /= np.linalg.norm(lam)
        np.testing.assert_allclose(C.T @ lam, 0.0, atol=1e-13)
        assert abs(abs(np.linalg.svd(C)[0][:, -1] @ lam) - 1.0) < 1e-12
        for m in METHODS:
            np.testing.assert_array_equal(sw[m].component_unique[k], np.abs(lam) <= 1e-6)
    # The reference: vertical cranks, Fx unique, Fy not, in every joint.
    for el in model.element_names:
        np.testing.assert_array_equal(sw["nullspace"].unique_components(el)[0], [True, False])


EXTRA = {**{name: kinetostatic_table for name in A_SHAPES}, "mobile_robot": mobile_robot_ranks,
         "spatial_parallelogram": spatial_parallelogram_ground, "parallelogram": parallelogram_self_stress}


def test_every_mechanism_is_covered():
    assert set(PAPERS) == set(NAMES)


@pytest.mark.parametrize("name", list(PAPERS))
def test_paper_results_and_method_agreement(name):
    """Everything about one mechanism in one test, so that its samples and
    compiled code serve every check (and the two workers split the mechanisms)."""
    rank, expected = PAPERS[name]
    model, qs, ts = random_configurations(name, N)
    # The samples are N distinct configurations of the mechanism.
    assert qs.shape == (N, model.nq) and ts.shape == (N,)
    assert len(np.unique(np.round(qs, 9), axis=0)) == N
    for k in (0, N // 2, N - 1):
        res = np.abs(np.asarray(jmbs.phi(model, qs[k], ts[k])))
        assert res.max() < 1e-10 * max(1.0, np.abs(qs[k]).max()), (k, res.max())
    assert set(expected) == set(model.element_names)
    cols = [model.element_names.index(el) for el in expected]
    want = np.array([v == "U" for v in expected.values()])
    sw = sweeps(model, qs, ts)
    for method, s in sw.items():
        # The paper's decisions at its configuration.
        got = {el: "U" if u else "N" for el, u in zip(expected, s.unique[0, cols])}
        assert (int(s.rank[0]), got) == (rank, expected), method
        # The rank and the paper's pattern hold in every random configuration.
        wrong_rank = np.flatnonzero(s.rank != rank)
        assert wrong_rank.size == 0, (method, wrong_rank[:5], s.rank[wrong_rank[:5]])
        wrong = np.flatnonzero((s.unique[:, cols] != want).any(axis=1))
        assert wrong.size == 0, (method, wrong[:5])
    # The five methods take the same decisions (rank, every element, every
    # component) in every configuration; the margins say how clearly.
    base = sw["nullspace"].signature()
    for method, s in sw.items():
        differ = np.flatnonzero((s.signature() != base).any(axis=1))
        assert differ.size == 0, (method, differ[:5], s.margin[differ[:5]].min(axis=1),
                                  sw["nullspace"].margin[differ[:5]].min(axis=1))
    if name in EXTRA:
        EXTRA[name](name, model, qs, ts, sw)


def test_random_configurations_reproducible_and_errors():
    model, qs, ts = random_configurations("gripper_torque", 5, seed=3)
    model2, qs2, ts2 = random_configurations("gripper_torque", 5, seed=3)
    assert model2 is model
    np.testing.assert_array_equal(qs, qs2)
    np.testing.assert_array_equal(ts, ts2)
    assert not np.array_equal(random_configurations("gripper_torque", 5, seed=4)[1], qs)
    with pytest.raises(ValueError, match="unknown mechanism"):
        random_configurations("four_bar", 3)
    with pytest.raises(ValueError, match="non-negative"):
        random_configurations("gripper_torque", -1)
