"""Closed-form mechanisms, the papers' redundancy counts, assembly and velocities."""

import logging
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import rank, wrap

import jmbs
from jmbs import examples


def sizes(model, q=None):
    q = model.q0 if q is None else q
    r = rank(jmbs.constraint_matrix(model, q, 0.0))
    return model.nc, r, model.nc - r, model.nv - r


@pytest.mark.parametrize("make", [examples.slider_crank, examples.four_bar])
def test_planar_single_loop_has_one_dof(make):
    model = make()
    nc, r, p, dof = sizes(model)
    assert (p, dof) == (0, 1)


def test_spatial_four_bar_with_parallel_axes():
    assert sizes(examples.spatial_four_bar())[2:] == (3, 1)


def test_bricard_counts():
    """A04: nc = 30, rank 29, p = 1, dof = 1 (Grübler would say 0)."""
    model = examples.bricard()
    assert sizes(model) == (30, 29, 1, 1)
    # Also in a moved configuration: rod1 turned by 0.4 rad about J1 (the y axis) and
    # held there (its spin about y fixed: the one dof), the other rods assembled.
    # (Holding rod1's other two rotations instead, which J1 already fixes, leaves the
    # assembly's Jacobian rank-deficient and near-singular: Gauss-Newton can stall at 1e-11.)
    guess = _rotate_first_rod(model, 0.4)
    q = jmbs.assemble(model, guess, fixed=[("rod1", "ry")])
    # Fixed to first order: the steps' small turns about x and z (which J1 undoes)
    # leave a second-order turn about y, ~1e-7 rad.
    np.testing.assert_allclose(q[3:7], guess[3:7], atol=1e-6)
    assert sizes(model, q)[2:] == (1, 1)


def _rotate_first_rod(model, angle):
    """Bricard guess: rod1 turned about the y axis of its ground joint."""
    q = np.asarray(model.q0).copy()
    c, s = math.cos(angle), math.sin(angle)
    Ry = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    q[0:3] = Ry @ q[0:3]
    p = jmbs.rotations.rot_to_quat(jnp.asarray(Ry @ np.eye(3)))
    q[3:7] = np.asarray(p)
    return jnp.asarray(q)


def test_parallelogram_with_third_crank_is_redundant():
    assert sizes(examples.parallelogram())[2:] == (1, 1)


def test_n_four_bar_sizes():
    model = examples.n_four_bar(40)
    assert (model.n_bodies, len(model.element_names)) == (81, 121)
    assert sizes(model)[2:] == (0, 1)


@pytest.mark.parametrize("theta", [0.3, 1.2, 2.5, 4.0])
def test_slider_crank_assemble_matches_closed_form(theta):
    model = examples.slider_crank()
    guess = np.asarray(model.q0).copy()
    guess[2] = theta  # crank angle, held fixed
    guess[[0, 1]] = 0.25 * np.array([math.cos(theta), math.sin(theta)])
    q = jmbs.assemble(model, jnp.asarray(guess) + 0.05, fixed=[("crank", "phi")])
    assert float(q[2]) == pytest.approx(theta + 0.05, abs=1e-14)
    xb, rod_angle = examples.slider_crank_position(theta + 0.05)
    assert float(q[6]) == pytest.approx(float(xb), abs=1e-10)
    assert wrap(float(q[5]) - float(rod_angle)) == pytest.approx(0.0, abs=1e-10)
    assert np.abs(np.asarray(jmbs.phi(model, q))).max() < 1e-10


@pytest.mark.parametrize("theta", [0.4, 1.0, 2.0])
def test_four_bar_assemble_matches_closed_form(theta):
    model = examples.four_bar()
    q = np.asarray(model.q0).copy()
    q[2] = theta
    q = jmbs.assemble(model, jnp.asarray(q), fixed=[("crank", "phi")])
    A, B = examples.four_bar_points(theta)
    np.testing.assert_allclose(model.point(q, "crank", (0.5, 0.0)), A, atol=1e-10)
    np.testing.assert_allclose(model.point(q, "rocker", (0.5 * 2.0, 0.0)), B, atol=1e-10)


def test_driven_slider_crank_kinematics_matches_closed_form():
    omega, theta0 = 2.0, math.pi / 6
    model = examples.slider_crank(theta=theta0, omega=omega)
    ts = jnp.linspace(0.0, 2 * math.pi / omega * 1.5, 301)  # one and a half turns
    sol = jmbs.kinematics(model, ts)
    theta = theta0 + omega * np.asarray(ts)
    xb, rod_angle = examples.slider_crank_position(jnp.asarray(theta))
    np.testing.assert_allclose(sol.q[:, 6], xb, atol=1e-10)
    np.testing.assert_allclose(wrap(np.asarray(sol.q[:, 5]) - np.asarray(rod_angle)), 0,
                               atol=1e-10)
    # Velocity and acceleration of the slider: derivatives of the closed form.
    import jax

    def x_of_t(t):
        return examples.slider_crank_position(theta0 + omega * t)[0]

    vx = jax.vmap(jax.grad(x_of_t))(ts)
    ax = jax.vmap(jax.grad(jax.grad(x_of_t)))(ts)
    np.testing.assert_allclose(sol.v[:, 6], vx, atol=1e-9)
    np.testing.assert_allclose(sol.v_dot[:, 6], ax, atol=1e-8)
    assert float(jnp.max(sol.residual)) < 1e-10


def test_assemble_redundant_bricard_keeps_quaternions_unit():
    model = examples.bricard()
    rng = np.random.default_rng(0)
    guess = np.asarray(model.q0) + 0.02 * rng.standard_normal(model.nq)
    res = jmbs.assemble(model, jnp.asarray(guess), full_output=True)
    assert bool(res.converged)
    assert float(res.residual) < 1e-10
    p = np.asarray(res.q).reshape(-1, 7)[:, 3:]
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-14)
    assert np.abs(np.asarray(jmbs.phi(model, res.q))).max() < 1e-10


def test_consistent_velocity_is_mass_weighted_projection():
    model = examples.bricard()
    rng = np.random.default_rng(1)
    v_guess = jnp.asarray(rng.standard_normal(model.nv))
    v = jmbs.consistent_velocity(model, model.q0, v_guess)
    C, b, _ = (np.asarray(x) for x in jmbs.constraint_terms(model, model.q0, v))
    assert np.abs(C @ np.asarray(v) + b).max() < 1e-12
    # Independent: minimise (v - vg)' M (v - vg) on the null space of C (C is rank deficient).
    M = np.asarray(jmbs.mass_matrix(model))
    _, s, Vt = np.linalg.svd(C)
    V = Vt[int(np.sum(s > 1e-9 * s[0])):].T  # basis of null(C)
    z = np.linalg.solve(V.T @ M @ V, V.T @ M @ np.asarray(v_guess))
    np.testing.assert_allclose(v, V @ z, atol=1e-12)


def test_consistent_velocity_with_fixed_coordinate():
    """Holding the crank's angular velocity fixed determines the rest of the four-bar."""
    model = examples.four_bar()
    v = jmbs.consistent_velocity(model, model.q0, jnp.zeros(model.nv).at[2].set(1.5),
                                 fixed=[("crank", "phi")])
    assert float(v[2]) == pytest.approx(1.5)
    C = np.asarray(jmbs.constraint_matrix(model, model.q0))
    assert np.abs(C @ np.asarray(v)).max() < 1e-12


def test_point_and_its_velocity():
    model = examples.four_bar()
    q = model.q0
    v = jmbs.consistent_velocity(model, q, jnp.zeros(model.nv).at[2].set(1.0),
                                 fixed=[("crank", "phi")])
    # The crank tip (0.5 from the centre along the rod) moves with |v| = a * omega = 1.
    tip = model.point(q, "crank", (0.5, 0.0))
    vel = model.point_velocity(q, v, "crank", (0.5, 0.0))
    np.testing.assert_allclose(jnp.linalg.norm(vel), 1.0, atol=1e-12)
    np.testing.assert_allclose(float(vel @ tip), 0.0, atol=1e-12)


def test_mass_matrix_and_gyroscopic_forces():
    model = examples.bricard()
    M = np.asarray(jmbs.mass_matrix(model))
    assert M.shape == (30, 30)
    np.testing.assert_allclose(M[3:6, 3:6], np.diag([1 / 600, 1.01 / 12, 1.01 / 12]))
    v = np.zeros(30)
    v[3:6] = (1.0, 2.0, 3.0)
    F = np.asarray(jmbs.generalized_forces(model, model.q0, jnp.asarray(v)))
    J = np.diag([1 / 600, 1.01 / 12, 1.01 / 12])
    np.testing.assert_allclose(F[3:6], -np.cross(v[3:6], J @ v[3:6]))
    np.testing.assert_allclose(F[0:3], (0.0, -9.81, 0.0))


def test_a_build_compiles_nothing_and_a_second_traces_nothing(caplog):
    """A concrete model's derivation is traced once per structure (bodies, elements,
    functions) and evaluated on the host: no program is compiled for it; other values
    reuse the trace."""

    def build(x, dim=2):
        b = jmbs.ModelBuilder(dim=dim)
        b.add_body("arm", mass=1.0, inertia=0.1 if dim == 2 else (0.1, 0.1, 0.1),
                   position=(x, 0.0) if dim == 2 else (x, 0.0, 0.0))
        b.add_revolute("O", "ground", "arm", point=(0.0,) * dim,
                       **({} if dim == 2 else {"axis": (0.0, 0.0, 1.0)}))
        return b.build(check=False)

    build(0.5)
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        model = build(0.7)
    assert not [r for r in caplog.records
                if "ompil" in r.getMessage() or "tracing" in r.getMessage()], caplog.text
    np.testing.assert_array_equal(model.q0, [0.7, 0.0, 0.0])
    caplog.clear()
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        build(0.9, dim=3)  # a new structure
    messages = [r.getMessage() for r in caplog.records]
    assert any("tracing _derive_model" in m for m in messages), messages
    assert not [m for m in messages if "ompil" in m], messages


@pytest.mark.parametrize("name", sorted(jmbs.examples.ALL))
def test_the_host_derivation_equals_the_compiled_one(name):
    """A concrete build is derived on the host (NumPy), a traced `with_params` by the
    compiled program: every leaf of the model agrees to rounding."""
    model = jmbs.examples.ALL[name]()
    traced = jax.jit(lambda values: model.with_params(values))(model.params())
    assert jax.tree.structure(traced) == jax.tree.structure(model)
    for a, b in zip(jax.tree.leaves(model), jax.tree.leaves(traced)):
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-14,
                                   atol=1e-14)


def test_a_structure_derived_many_times_is_compiled(caplog):
    """A design loop's concrete `with_params` is evaluated on the host at first, then
    (within a hundred calls of one structure) by a compiled program: ~10x faster a
    call. Every model of the loop equals the traced derivation. A structure no other
    test derives (the host's count is the process's: a four-bar derived by the tests
    before this one would have spent it)."""
    model = jmbs.examples.n_four_bar(5)
    derive = jax.jit(lambda values: model.with_params(values))
    compiled = []
    for k in range(100):
        values = {"crank0.mass": 1.0 + 1e-3 * k}
        with jax.log_compiles(), caplog.at_level(logging.WARNING):
            new = model.with_params(values)
        compiled.append(any("compilation of jit(_derive_model)" in r.getMessage()
                            for r in caplog.records))
        caplog.clear()
        if k in (0, 99) or compiled[-1]:
            for x, y in zip(jax.tree.leaves(new), jax.tree.leaves(derive(values))):
                np.testing.assert_allclose(np.asarray(x, float), np.asarray(y, float),
                                           rtol=1e-14, atol=1e-14)
    assert not compiled[0] and compiled.count(True) == 1, compiled


def test_a_derivation_the_host_does_not_evaluate_is_compiled(caplog):
    """The build's closure check evaluates a user's constraint function in the
    derivation; one with an operation the host's evaluator lacks (`jnp.sinh` here) makes
    the build compile the derivation instead, with the same model."""
    b = jmbs.ModelBuilder(dim=2)
    b.add_body("a", mass=1.0, inertia=0.1, position=(1.0, 0.0))
    b.add_revolute("O", "ground", "a", point=(0.0, 0.0))
    b.add_constraint("c", ["a"], holonomic=lambda qs, t: jnp.sinh(qs[0][2])[None])
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        model = b.build()
    assert any("Compiling" in r.getMessage() and "_derive_model" in r.getMessage()
               for r in caplog.records), caplog.text
    traced = jax.jit(lambda values: model.with_params(values))(model.params())
    for x, y in zip(jax.tree.leaves(model), jax.tree.leaves(traced)):
        np.testing.assert_allclose(np.asarray(x, float), np.asarray(y, float), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(jmbs.phi(model, model.q0, 0.0), 0.0, atol=1e-12)
