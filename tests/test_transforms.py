"""jit, vmap and grad through the assembly and the design parameters."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import random_state, tree_allclose

import jmbs
from jmbs import examples

MODELS = {"four_bar": examples.four_bar, "bricard": examples.bricard,
          "spatial_four_bar": examples.spatial_four_bar}


@pytest.mark.parametrize("name", list(MODELS))
def test_jit_and_vmap_equal_python_loop(name):
    model = MODELS[name]()
    states = [random_state(model, s, 0.05) for s in range(5)]
    qs = jnp.stack([s[0] for s in states])
    vs = jnp.stack([s[1] for s in states])
    ts = jnp.asarray([s[2] for s in states])
    batched = jax.jit(jax.vmap(lambda q, v, t: jmbs.constraint_terms(model, q, v, t)))(qs, vs, ts)
    jitted = jax.jit(jmbs.constraint_terms)
    for k, (q, v, t) in enumerate(states):
        loop = (jmbs.constraint_matrix(model, q, t), jmbs.velocity_rhs(model, q, t),
                jmbs.gamma(model, q, v, t))
        assert tree_allclose(tuple(x[k] for x in batched), loop)
        assert tree_allclose(jitted(model, q, v, t), loop)


def _fd(f, x, h=1e-6):
    x = np.asarray(x, float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(jnp.asarray(x + e)) - f(jnp.asarray(x - e))) / (2 * h)
    return g


def test_grad_of_C_wrt_joint_point_matches_finite_differences():
    model = examples.four_bar()
    q, v, t = random_state(model, 0, 0.05)
    W = jnp.asarray(np.random.default_rng(0).standard_normal((model.nc, model.nv)))

    def f(point):
        m = model.with_params({"B.point": point})
        C, _, G = jmbs.constraint_terms(m, q, v, t)
        return jnp.sum(W * C) + jnp.sum(G**2)

    f = jax.jit(f)
    P = model.params()["B.point"]
    np.testing.assert_allclose(jax.grad(f)(P), _fd(f, P), rtol=1e-7, atol=1e-9)


def test_grad_wrt_spatial_axis_and_body_pose():
    model = examples.bricard()
    q, v, t = random_state(model, 1, 0.05)

    def f(axis, pos):
        m = model.with_params({"J3.axis": axis, "rod2.position": pos})
        return jnp.sum(jmbs.constraint_matrix(m, q, t) ** 2) + jnp.sum(jmbs.gamma(m, q, v, t))

    f = jax.jit(f)
    a, p = model.params()["J3.axis"], model.params()["rod2.position"]
    ga, gp = jax.grad(f, argnums=(0, 1))(a, p)
    np.testing.assert_allclose(ga, _fd(lambda x: f(x, p), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gp, _fd(lambda x: f(a, x), p), rtol=1e-6, atol=1e-8)


def test_with_params_roundtrip_and_vmap_over_designs():
    model = examples.slider_crank(omega=1.0)
    same = model.with_params(model.params())
    assert tree_allclose(same, model, rtol=0, atol=0)
    masses = jnp.linspace(0.5, 2.0, 4)
    Ms = jax.vmap(lambda m: jmbs.mass_matrix(model.with_params({"crank.mass": m})))(masses)
    np.testing.assert_allclose(Ms[:, 0, 0], masses)
    # Changing a joint point moves the derived local points, not the given values.
    moved = model.with_params({"A.point": model.params()["A.point"] + 0.1})
    assert not np.allclose(moved.groups[0].s_i, model.groups[0].s_i)
    np.testing.assert_allclose(moved.params()["A.point"], model.params()["A.point"] + 0.1)


def _pendulum_on_a_spring():
    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -9.81))
    b.add_body("rod", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    b.add_revolute("O", b.ground, "rod", point=(0.0, 0.0))
    b.add_spring_damper("spring", b.ground, "rod", point_i=(1.0, 1.0), point_j=(1.0, 0.0),
                        stiffness=30.0, damping=0.5)
    return b.build()


@pytest.mark.parametrize("key", ["spring.stiffness", "rod.position"])
def test_with_params_differentiates_only_what_the_new_values_reach(key):
    """Inside `jax.grad`, `with_params` carries tangents only on the fields a new value
    reaches: every field that changes when the value changes (concretely) carries one,
    every other equals the model's. A spring's stiffness leaves the joints and `q0`
    underived; a body's position reaches them. The accelerations' derivative through it
    equals central differences."""
    model = _pendulum_on_a_spring()
    x0 = np.asarray(model.params()[key], float)
    q = jmbs.assemble(model, model.q0 + 0.05)
    v = jmbs.consistent_velocity(model, q, np.ones(model.nv))
    prepared = jmbs.NullSpaceProjection().prepare(model, q, 0.0)
    changed = [not np.allclose(a, b) for a, b in zip(
        jax.tree.leaves(model), jax.tree.leaves(model.with_params({key: 1.3 * x0 + 0.1})))]

    def leaves_traced(x):
        leaves = jax.tree.leaves(model.with_params({key: x}))
        out = [isinstance(leaf, jax.core.Tracer) for leaf in leaves]
        assert all(t for t, c in zip(out, changed) if c)
        for leaf, same, t in zip(leaves, jax.tree.leaves(model), out):
            if not t:
                np.testing.assert_array_equal(leaf, same)
        return out

    traced = []
    jax.grad(lambda x: traced.append(leaves_traced(x)) or jnp.sum(x))(jnp.asarray(x0))
    assert (sum(traced[0]) == 2) == (key == "spring.stiffness")  # the spring and the vector
    # Inside a caller's jit too, the fields not reached are the model's own values (no
    # program derives them again), but `q0` and `v0`, which `with_params` re-derives.
    jitted = []
    jax.jit(lambda x: jitted.append(leaves_traced(x)) or x)(jnp.asarray(x0))
    assert (sum(jitted[0]) == 4) == (key == "spring.stiffness")

    def v_dot(x):
        return jmbs.reactions(model.with_params({key: x}), q, v, 0.0, prepared).v_dot

    direction, h = np.ones_like(x0), 1e-6
    jvp = jax.jvp(v_dot, (jnp.asarray(x0),), (jnp.asarray(direction),))[1]
    # jitted: a moved body's joint point leaves `q` off its constraints by O(h), which
    # a concrete call would warn about
    fd = (jax.jit(v_dot)(x0 + h * direction) - jax.jit(v_dot)(x0 - h * direction)) / (2 * h)
    np.testing.assert_allclose(jvp, fd, atol=1e-6 * np.max(np.abs(fd)))


def test_driver_motion_parameters_are_differentiable():
    b = jmbs.ModelBuilder(dim=2)
    crank = b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    b.add_revolute("O", b.ground, crank, point=(0.0, 0.0))
    b.add_driver("D", joint="O", motion=lambda t, p: p["omega"] * t, params={"omega": 2.0})
    model = b.build()
    assert "D.omega" in model.params()

    def angle_at_1(omega):
        m = model.with_params({"D.omega": omega})
        return jmbs.assemble(m, m.q0, 1.0)[2]

    # Implicit differentiation through assemble's solution: d angle / d omega = t = 1.
    assert float(jax.grad(angle_at_1)(2.0)) == pytest.approx(1.0, rel=1e-10)
    assert float(jax.jacfwd(angle_at_1)(2.0)) == pytest.approx(1.0, rel=1e-10)


def test_grad_through_assemble_matches_finite_differences():
    """Four-bar with the crank held: the assembled rocker angle as a function of the
    ground pivot O4 and a body's reference pose, reverse mode against central differences."""
    model = examples.four_bar()

    @jax.jit
    def rocker_angle(o4, coupler_pos):
        m = model.with_params({"O4.point": o4, "coupler.position": coupler_pos})
        q = jmbs.assemble(m, m.q0, fixed=[("crank", "phi")])
        return q[8] + 0.3 * q[7]

    o4, cp = model.params()["O4.point"], model.params()["coupler.position"]
    g_o4, g_cp = jax.grad(rocker_angle, argnums=(0, 1))(o4, cp)
    np.testing.assert_allclose(g_o4, _fd(lambda x: rocker_angle(x, cp), o4), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g_cp, _fd(lambda x: rocker_angle(o4, x), cp), rtol=1e-6, atol=1e-9)


def test_grad_through_spatial_assemble_matches_finite_differences():
    """Bricard (redundant, quaternions): assembled position of rod 3 w.r.t. a joint point."""
    model = examples.bricard()
    guess = jmbs.assemble(model, model.q0)

    @jax.jit
    def f(point):
        m = model.with_params({"J4.point": point})
        q = jmbs.assemble(m, guess, fixed=[("rod1", "rx"), ("rod1", "rz"), ("rod1", "ry")])
        return jnp.sum(q[14:17] * jnp.array([1.0, -0.5, 2.0]))

    P = model.params()["J4.point"] + jnp.array([0.0, 0.0, 0.01])
    np.testing.assert_allclose(jax.grad(f)(P), _fd(f, P), rtol=1e-6, atol=1e-9)


def test_quaternion_rotation_and_rate_against_independent_formulas():
    """`quat_to_rot` (one product with a constant matrix) against Rodrigues' formula for
    unit quaternions and its degree-two homogeneity off them; `qdot`'s quaternion rate
    against `p_dot = 1/2 p ⊗ (0, omega')` with the Hamilton product."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        n = rng.standard_normal(3)
        n /= np.linalg.norm(n)
        th = rng.uniform(-np.pi, np.pi)
        p = np.concatenate([[np.cos(th / 2)], np.sin(th / 2) * n])
        K = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
        rodrigues = np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K
        np.testing.assert_allclose(jmbs.rotations.quat_to_rot(jnp.asarray(p)), rodrigues, atol=1e-15)
        np.testing.assert_allclose(jmbs.rotations.quat_to_rot(jnp.asarray(1.7 * p)), 1.7**2 * rodrigues,
                                   atol=1e-14)
    model = examples.bricard()
    q = model.q0 + 0.1 * jnp.asarray(rng.standard_normal(model.nq))
    v = jnp.asarray(rng.standard_normal(model.nv))
    qd = np.asarray(jmbs.qdot(model, q, v)).reshape(-1, 7)
    for b, (qb, vb) in enumerate(zip(np.asarray(q).reshape(-1, 7), np.asarray(v).reshape(-1, 6))):
        np.testing.assert_allclose(qd[b, :3], vb[:3], atol=1e-15)
        omega = jnp.asarray(np.concatenate([[0.0], vb[3:]]))
        expected = 0.5 * np.asarray(jmbs.rotations.quat_multiply(jnp.asarray(qb[3:]), omega))
        np.testing.assert_allclose(qd[b, 3:], expected, atol=1e-15)


def test_prepare_inside_a_callers_jit_decides_from_the_concrete_values():
    """`prepare` called on concrete values inside a `jax.jit` trace evaluates its
    decision on them (it finds that it is being staged and evaluates anyway), so the
    rank is a number there, the same as outside."""
    model = examples.four_bar()
    outside = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0).state.rank

    def inside(x):
        rank = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0).state.rank
        assert not isinstance(rank, jax.core.Tracer)
        return x + rank
    assert float(jax.jit(inside)(0.0)) == outside == 8
