"""The structured (divide-and-conquer) dynamics: `jmbs.DivideAndConquer` against the
dense null-space formulation, the structured projection against its defining
properties, and the IFToMM A02 N-four-bar against its exact one-degree-of-freedom
reference."""

import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs import examples
from jmbs.examples import random_mechanism

G = 9.81


def _state(model, seed=0):
    """The reference configuration with a random consistent velocity."""
    rng = np.random.default_rng(seed)
    v = jmbs.consistent_velocity(model, model.q0, rng.normal(size=model.nv), 0.0)
    return model.q0, v


@pytest.mark.parametrize("model", [
    examples.bricard(),  # spatial, one redundant row
    examples.spatial_parallelogram(),  # spatial, redundant, overconstrained platform
    examples.parallelogram(motion="omega * t", params={"omega": 1.0}),  # planar, redundant, a driver
    random_mechanism(3, dim=2, n_bodies=9, n_loops=3, n_drivers=0),
    random_mechanism(5, dim=3, n_bodies=7, n_loops=2, n_drivers=1, scale=1000.0),
    examples.crank_ladder(10, 4),  # a planar hub: the coupler split into welded copies
    examples.plates_on_legs((9, 8), 2),  # two spatial hubs hinged together, both split
    examples.n_four_bar(10),  # a chain: its heights run as one padded segment
], ids=["bricard", "spatial_parallelogram", "parallelogram", "random_planar", "random_spatial_mm",
        "hub_planar", "hubs_spatial", "a02_chain"])
def test_accelerations_and_unique_reactions_equal_the_dense_formulation(model):
    """The tree's accelerations, decisions and unique multipliers are the dense
    formulation's (on hubs too, where each copy of a hub carries its share of the hub's
    mass and load)."""
    q, v = _state(model)
    dense = jmbs.reactions(model, q, v, 0.0, formulation=jmbs.NullSpaceProjection())
    tree = jmbs.reactions(model, q, v, 0.0, formulation=jmbs.DivideAndConquer(),
                          uniqueness="dca")
    scale = np.max(np.abs(dense.v_dot)) + 1.0
    np.testing.assert_allclose(tree.v_dot, dense.v_dot, atol=1e-9 * scale)
    # The same decisions, and equal multipliers wherever they are unique.
    unique = np.asarray(dense.reactions.component_unique)
    np.testing.assert_array_equal(tree.reactions.component_unique, unique)
    lam_d, lam_t = np.asarray(dense.reactions.multipliers), np.asarray(tree.reactions.multipliers)
    np.testing.assert_allclose(lam_t[unique], lam_d[unique], atol=1e-8 * (np.max(np.abs(lam_d)) + 1))
    # Where not unique, they still produce the same generalized forces C^T lambda.
    C = np.asarray(jmbs.constraint_matrix(model, q, 0.0))
    np.testing.assert_allclose(C.T @ lam_t, C.T @ lam_d, atol=1e-8 * (np.max(np.abs(C.T @ lam_d)) + 1))


@pytest.mark.parametrize("th", [1e-2, 1e-4, 1e-5])
def test_near_the_singular_configuration_the_tree_equals_the_dense_formulation(th):
    """Approaching the horizontal position (all rows of C nearly dependent pairwise),
    the connections' two-row SVDs (closed form) must stay as accurate as the dense
    SVD: the multipliers grow as 1/th and agree to rounding times that growth."""
    model = examples.n_four_bar(3)
    q = examples.n_four_bar_configuration(3, th)
    assert np.max(np.abs(jmbs.phi(model, q, 0.0))) < 1e-15
    v = jmbs.consistent_velocity(model, q, np.random.default_rng(0).normal(size=model.nv), 0.0)
    dense, tree = (jmbs.reactions(model, q, v, 0.0, formulation=f.prepare(model, model.q0, 0.0))
                   for f in (jmbs.NullSpaceProjection(), jmbs.DivideAndConquer()))
    lam = np.asarray(dense.reactions.multipliers)
    assert np.max(np.abs(lam)) > 0.3 / th  # the multipliers do grow
    np.testing.assert_allclose(tree.v_dot, dense.v_dot, atol=1e-9 * np.max(np.abs(dense.v_dot)))
    np.testing.assert_allclose(tree.reactions.multipliers, lam, atol=1e-8 * np.max(np.abs(lam)))


@pytest.mark.parametrize("model, direction", [
    (examples.bricard(), "mass"),  # redundant: derivatives along the constraints
    (examples.n_four_bar(3), "configuration"),  # independent rows: any direction
    (examples.plates_on_legs((9, 8), 2), "mass"),  # split hubs, redundant
])
def test_derivatives_equal_the_dense_formulations(model, direction):
    """Forward derivatives of the accelerations with respect to a design parameter
    (the bodies' masses, scaled by `s`) or the configuration: the tree's implicit JVP
    against the dense formulation's and against central differences. (Off the
    constraints a redundant row's `Gamma` is inconsistent, and the two formulations
    settle it differently, least squares against the connections' pseudo-inverses:
    with redundancy only derivatives along the constraints are compared.)"""
    q, v = _state(model, 1)
    preps = [f.prepare(model, q, 0.0) for f in (jmbs.NullSpaceProjection(), jmbs.DivideAndConquer())]
    dq = np.random.default_rng(2).normal(size=model.nq) if direction == "configuration" else 0.0
    ds = 1.0 if direction == "mass" else 0.0

    @jax.jit
    def derivatives(h):
        def v_dot(prep, e):
            m = eqx.tree_at(lambda x: x.mass, model, model.mass * (1.0 + ds * e))
            terms = prep.terms(m, q + e * dq, v, 0.0)
            return prep.solve(terms)[0]

        jvps = [jax.jvp(lambda e, p=p: v_dot(p, e), (0.0,), (1.0,))[1] for p in preps]
        return jvps, (v_dot(preps[1], h) - v_dot(preps[1], -h)) / (2 * h)

    # h = 1e-4: the central difference's truncation error (~h^2) and its rounding error
    # (~1e-12 / h, the solves' rounding) both stay near 1e-8.
    (dense, tree), fd = derivatives(1e-4)
    np.testing.assert_allclose(tree, dense, atol=1e-8 * np.max(np.abs(dense)))
    np.testing.assert_allclose(tree, fd, atol=1e-5 * np.max(np.abs(fd)))


@pytest.mark.parametrize("model", [examples.n_four_bar(17), examples.crank_ladder(40, 12)],
                         ids=["chain", "hub"])
def test_structured_projection_is_the_mass_weighted_one(model):
    """From `jmbs.STRUCTURED_MIN_NV` coordinates on `Projection` solves along the tree:
    the result is on the constraints, and the velocity correction lies in
    `range(M^-1 C^T)` (the mass-weighted least change)."""
    assert model.nv >= jmbs.STRUCTURED_MIN_NV
    rng = np.random.default_rng(0)
    q = model.q0 + 1e-4 * rng.normal(size=model.nq)
    v = model.v0 + 1e-2 * rng.normal(size=model.nv)
    qp, vp, ok = jax.jit(lambda q, v: jmbs.Projection().project(model, q, v, 0.0))(q, v)
    assert bool(ok)
    assert np.max(np.abs(jmbs.phi(model, qp))) < 1e-12
    assert np.max(np.abs(jmbs.velocity_residual(model, qp, vp))) < 1e-10
    C = np.asarray(jmbs.constraint_matrix(model, qp))
    M = np.asarray(jmbs.mass_matrix(model))
    dv = np.asarray(vp - v)
    mu = np.linalg.lstsq(C.T, M @ dv, rcond=None)[0]
    np.testing.assert_allclose(C.T @ mu, M @ dv, atol=1e-9 * np.max(np.abs(M @ dv)))


def test_structured_projection_has_the_derivative_of_its_result():
    """The tree's projection differentiated (as `jax.grad` through `simulate` does at a
    traced start) against central differences of the projected state along a random
    direction of `(q, v)`, from positions on the constraints (off them, the derivative
    is the projection's onto the manifold, the Newton iterates' differs by about the
    distance) and velocities off them."""
    model = examples.n_four_bar(17)
    rng = np.random.default_rng(1)
    q = model.q0
    v = model.v0 + 1e-2 * rng.normal(size=model.nv)
    dq, dv = rng.normal(size=model.nq), rng.normal(size=model.nv)

    @jax.jit
    def derivatives(h):
        def projected(e):
            return jnp.concatenate(jmbs.Projection().project(model, q + e * dq, v + e * dv, 0.0)[:2])

        return jax.jvp(projected, (0.0,), (1.0,))[1], (projected(h) - projected(-h)) / (2 * h)

    jvp, fd = derivatives(1e-6)
    np.testing.assert_allclose(jvp, fd, atol=1e-5 * np.max(np.abs(fd)))


def _a02_reference(n: int, ts: np.ndarray) -> np.ndarray:
    """B0 = (sin th, cos th) with k th'' = c g sin th, th(0) = 0, th'(0) = 1
    (REFERENCES.md: the chain stays a chain of parallelograms), by RK4 at 1e-4 s."""
    k, c = (n + 1) / 3 + n, (n + 1) / 2 + n
    y, t, h, out = np.array([0.0, 1.0]), 0.0, 1e-4, []

    def f(y):
        return np.array([y[1], c * G * np.sin(y[0]) / k])

    for target in ts:
        while t < target - 1e-12:
            step = min(h, target - t)
            k1 = f(y)
            k2 = f(y + step / 2 * k1)
            k3 = f(y + step / 2 * k2)
            k4 = f(y + step * k3)
            y, t = y + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4), t + step
        out.append([np.sin(y[0]), np.cos(y[0])])
    return np.array(out)


def test_a02_default_simulation_is_structured_and_matches_the_exact_reference():
    """IFToMM A02 with N = 17 (105 coordinates: the default is the tree), through the
    horizontal singular configuration (t ~ 1.3 s), against the exact reference."""
    n = 17
    model = examples.n_four_bar(n)
    ts = np.linspace(0.0, 3.0, 31)
    sol = jmbs.simulate(model, 3.0, saveat=ts)
    crank = np.asarray(sol.q)[:, :3]
    b0 = crank[:, :2] + 0.5 * np.stack([np.cos(crank[:, 2]), np.sin(crank[:, 2])], axis=1)
    ref = _a02_reference(n, ts)
    assert np.min(ref[:, 1]) < 0  # the run passes the horizontal position
    np.testing.assert_allclose(b0, ref, atol=1e-5)
    # Every joint of the chain is determined (not redundant), and the energy is kept.
    assert bool(np.all(sol.reactions.unique))
    assert np.ptp(np.asarray(sol.energy)) < 1e-6 * np.max(np.abs(np.asarray(sol.energy)))


def test_dense_terms_give_the_same_solve():
    """`DivideAndConquer` also takes the dense terms (`dynamics_terms(dense=True)`,
    gathering the blocks from `C` and `M`)."""
    model = examples.spatial_parallelogram()
    q, v = _state(model, 3)
    prep = jmbs.DivideAndConquer().prepare(model, q, 0.0)
    a_dense, a_blocks = jax.jit(lambda q, v: [
        prep.solve(jmbs.dynamics_terms(model, q, v, 0.0, dense=d))[0] for d in (True, False)])(q, v)
    np.testing.assert_allclose(a_dense, a_blocks, atol=1e-11 * np.max(np.abs(a_blocks)))


@pytest.mark.parametrize("model", [examples.n_four_bar(17), examples.crank_ladder(40, 12)],
                         ids=["chain", "hub"])
def test_structured_consistent_velocity_equals_the_dense_formula(model):
    """From `jmbs.STRUCTURED_MIN_NV` coordinates on, `consistent_velocity` solves along the
    tree; NumPy's `v_g - M^-1 C^T (C M^-1 C^T)^+ (C v_g + b)` gives the same velocity."""
    v_guess = np.random.default_rng(4).normal(size=model.nv)
    v = np.asarray(jmbs.consistent_velocity(model, model.q0, v_guess))
    C = np.asarray(jmbs.constraint_matrix(model, model.q0))
    b = np.asarray(jmbs.velocity_rhs(model, model.q0))
    W = np.linalg.inv(np.asarray(jmbs.mass_matrix(model)))
    # (the hub's C M^-1 C^T is singular, redundant rows: its pseudo-inverse drops the
    # values at rounding level)
    G = C @ W @ C.T
    expected = v_guess - W @ C.T @ np.linalg.pinv(G, rcond=1e-10, hermitian=True) @ (C @ v_guess + b)
    np.testing.assert_allclose(v, expected, atol=1e-10 * np.max(np.abs(expected)))
    assert np.max(np.abs(C @ v + b)) < 1e-12 * np.max(np.abs(C @ v_guess + b))


@pytest.mark.parametrize("build, field, body", [
    (lambda: examples.n_four_bar(2), "mass", 1),
    (examples.bricard, "inertia", 1),
], ids=["planar mass", "spatial inertia"])
def test_the_tree_formulation_refuses_a_body_without_positive_definite_mass(build, field, body):
    """A model changed past the builder's checks (a zero mass; a singular inertia): the
    block elimination needs every body's inverse mass, and `init` says which body lacks
    one, with its mass matrix's diagonal."""
    model = build()
    values = np.array(getattr(model, field))
    values[body] = 0.0 if field == "mass" else np.diag([0.0, 1.0, 1.0])
    bad = eqx.tree_at(lambda m: getattr(m, field), model, values)
    diagonal = ([0.0, 0.0, float(model.inertia[body])] if field == "mass" else
                [float(model.mass[body])] * 3 + [0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=re.escape(
            f"body {model.body_names[body]!r} has no positive definite mass matrix (mass and "
            f"inertia {diagonal})")):
        jmbs.DivideAndConquer().prepare(bad, bad.q0, 0.0)
