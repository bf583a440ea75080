"""Gradients of unique reactions with respect to design parameters (issue 5).

Every derivative is checked against central finite differences of the same
function: kinetostatically (re-assembled configurations, over a trajectory)
and through simulations (recursive checkpointing and backsolve adjoints), on a
planar redundant linkage and spatial mechanisms, for masses, joint points
(link lengths), driver-motion parameters and inertias.
The gradients are taken under `jax.jit`, as docs/sensitivity.md advises (one program
instead of JAX's eager pieces, about a fifth less compilation here); the eager path
is taken by the test of a non-unique reaction's gradient.
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs.examples import mobile_robot, planar_rod

REL = 1e-5  # required agreement of gradients and finite differences


def central_differences(f, x, h):
    """Central differences of `f` (any output shape) along each coordinate of `x`."""
    x = np.asarray(x, float)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h[i]
        cols.append((np.asarray(f(jnp.asarray(x + e))) - np.asarray(f(jnp.asarray(x - e)))) / (2 * h[i]))
    return np.stack(cols, axis=-1)


def assert_matches(grad, fd, rel=REL):
    grad, fd = np.asarray(grad), np.asarray(fd)
    scale = np.max(np.abs(fd))
    assert scale > 0
    np.testing.assert_allclose(grad, fd, rtol=rel, atol=rel * scale)


def driven_parallelogram() -> jmbs.Model:
    """The parallelogram with three cranks (p = 1) and crank 0 driven:
    `theta(t) = amp sin(2 t)` from the upright cranks, `amp` a design parameter."""
    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -9.81))
    cranks = [planar_rod(b, f"crank{k}", (k, 0), (k, 1)) for k in range(3)]
    coupler = planar_rod(b, "coupler", (0, 1), (2, 1), mass=2.0)
    for k, c in enumerate(cranks):
        b.add_revolute(f"O{k}", b.ground, c, point=(k, 0.0))
        b.add_revolute(f"B{k}", c, coupler, point=(k, 1.0))
    b.add_driver("drive", "O0", lambda t, p: p["amp"] * jnp.sin(2.0 * t), params={"amp": 0.3})
    return b.build()


def parallelogram_design(model, x):
    """`x = (crank length L, coupler mass, driver amplitude)`: the coupler's joints
    move to height L together, so the cranks stay equal and the redundancy consistent."""
    L, mass, amp = x
    return model.with_params({**{f"B{k}.point": jnp.array([float(k), L]) for k in range(3)},
                              "coupler.mass": mass, "drive.amp": amp})


def test_kinetostatic_gradients_planar_redundant_linkage():
    """Driving torque of the parallelogram (unique; its joint forces are not) at a
    re-assembled configuration, with respect to a link length, a mass and a driver
    parameter; then its Jacobian over a driven trajectory (vmapped reactions)."""
    m0 = driven_parallelogram()
    t = 0.7
    q_t = jmbs.assemble(m0, m0.q0, t)
    x0 = jnp.array([1.1, 2.5, 0.35])
    h = np.array([1e-5, 1e-4, 1e-5])
    for formulation in (jmbs.NullSpaceProjection(), jmbs.Elimination()):
        f = formulation.prepare(m0, q_t, t)

        def torque(x, f=f):
            m = parallelogram_design(m0, x)
            q = jmbs.assemble(m, q_t, t)  # the new link length moves the configuration
            v = jmbs.consistent_velocity(m, q, jnp.zeros(m.nv), t)
            return jmbs.reactions(m, q, v, t, f).reactions.components("drive", "M")

        assert_matches(jax.jit(jax.grad(torque))(x0), central_differences(torque, x0, h))

    ts = jnp.linspace(0.1, 1.5, 6)
    f = jmbs.NullSpaceProjection().prepare(m0, q_t, t)

    def history(x):
        m = parallelogram_design(m0, x)
        k = jmbs.kinematics(m, ts)
        r = jax.vmap(lambda q, v, t: jmbs.reactions(m, q, v, t, f))(k.q, k.v, k.ts)
        return r.reactions.components("drive", "M")

    assert_matches(jax.jit(jax.jacrev(history))(x0), central_differences(history, x0, h))


def test_kinetostatic_gradients_spatial_mechanism():
    """Spatial four-bar (p = 3): the unique in-plane joint forces (components Fx, Fy
    of the joint frames) and the driving torque, with respect to a joint point
    (two link lengths, re-assembled), the crank's mass and the rocker's inertia."""
    m0 = jmbs.examples.spatial_four_bar(motion=lambda t: 0.4 * jnp.sin(2.0 * t))
    t = 0.6
    q_t = jmbs.assemble(m0, m0.q0, t)
    f = jmbs.NullSpaceProjection().prepare(m0, q_t, t)
    B0 = m0.params()["B.point"]
    J0 = m0.params()["rocker.inertia"]

    def unique_reactions(x):
        m = m0.with_params({"B.point": B0 + jnp.array([x[0], x[1], 0.0]), "crank.mass": x[2],
                            "rocker.inertia": J0 * jnp.array([1.0, 1.0, x[3]])})
        q = jmbs.assemble(m, q_t, t)
        v = jmbs.consistent_velocity(m, q, jnp.zeros(m.nv), t)
        r = jmbs.reactions(m, q, v, t, f).reactions
        return jnp.stack([r.components("O2", "Fx"), r.components("B", "Fy"),
                          r.components("O4", "Fx"), r.components("drive", "M")])

    x0 = jnp.array([0.05, -0.03, 1.3, 1.2])
    assert_matches(jax.jit(jax.jacrev(unique_reactions))(x0),
                   central_differences(unique_reactions, x0, np.array([1e-5, 1e-5, 1e-4, 1e-4])))


def test_gradient_of_a_nonunique_reaction_is_an_error():
    m0 = driven_parallelogram()
    t = 0.7
    q_t = jmbs.assemble(m0, m0.q0, t)
    f = jmbs.NullSpaceProjection().prepare(m0, q_t, t)
    assert not bool(jmbs.reactions(m0, q_t, jnp.zeros(m0.nv), t, f).reactions.is_unique("B1"))

    def force(mass, **kw):
        m = m0.with_params({"coupler.mass": mass})
        v = jmbs.consistent_velocity(m, q_t, jnp.zeros(m.nv), t)
        return jmbs.reactions(m, q_t, v, t, f).reactions.force("B1", **kw)[0]

    force(2.0)  # the value itself is available (it is flagged, not refused)
    # (under jax.jit rather than eqx.filter_jit the error reaches the caller as a
    # JaxRuntimeError carrying the same message)
    for transform in (jax.grad, jax.jacfwd, lambda g: jax.jit(jax.grad(g))):
        with pytest.raises((eqx.EquinoxRuntimeError, jax.errors.JaxRuntimeError),
                           match="'B1' .* not unique") as err:
            jax.block_until_ready(transform(force)(2.0))
        if transform in (jax.grad, jax.jacfwd):  # decided on the host: the message alone
            assert str(err.value).startswith("jmbs: the gradient of the reaction 'B1'")
            assert "EQX_ON_ERROR" not in str(err.value)
    # Opting in gives the derivative of this formulation's (minimum-norm) value.
    g = jax.grad(lambda m: force(m, allow_nonunique=True))(2.0)
    fd = (force(2.0 + 1e-4, allow_nonunique=True) - force(2.0 - 1e-4, allow_nonunique=True)) / 2e-4
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_simulation_gradients_planar_recursive_checkpointing():
    """Mobile robot (p = 2, knife edges) turning for 1 s: peak, RMS and final value of
    unique reactions, with respect to the trolley's mass and the hitch point
    (whose initial velocities are re-projected), through 100 Tsit5 steps with
    projection (recursive checkpointing)."""
    m0 = mobile_robot(d=0.02, hitch=0.3)
    f = jmbs.NullSpaceProjection().prepare(m0, m0.q0, 0.0)
    A0 = m0.params()["A.point"]

    def functionals(x):
        m = m0.with_params({"trolley.mass": x[0], "A.point": A0 + jnp.array([x[1], 0.0])})
        sol = jmbs.simulate(m, 1.0, formulation=f, dt0=0.01, saveat=jnp.linspace(0.0, 1.0, 11),
                            stepsize_controller=diffrax.ConstantStepSize(), max_steps=200)
        r = sol.reactions
        # One weighted sum (a single reverse pass compiles faster than a Jacobian's).
        return (jnp.sqrt(jnp.mean(r.components("drive", "F") ** 2))
                + 0.3 * jnp.max(jnp.linalg.norm(r.force("D"), axis=-1)) + 2.0 * r.force("A")[-1, 1])

    x0 = jnp.array([5.0, 0.0])
    with pytest.warns(UserWarning, match="projected"):  # the concrete runs re-project v0
        fd = central_differences(functionals, x0, np.array([1e-4, 1e-5]))
    assert_matches(jax.jit(jax.grad(functionals))(x0), fd)


def test_simulation_gradients_spatial_backsolve_adjoint():
    """Spatial four-bar swinging freely for 0.5 s (Baumgarte, adaptive Dopri5 at 1e-10):
    the RMS of a unique joint force with respect to a mass and a joint point, by
    the backsolve adjoint, against finite differences."""
    m0 = jmbs.examples.spatial_four_bar()
    f = jmbs.NullSpaceProjection().prepare(m0, m0.q0, 0.0)
    B0 = m0.params()["B.point"]

    def rms(x, adjoint=None):
        m = m0.with_params({"coupler.mass": x[0], "B.point": B0 + jnp.array([x[1], 0.0, 0.0])})
        sol = jmbs.simulate(m, 0.5, formulation=f, stabilization=jmbs.Baumgarte(10.0, 10.0),
                            solver=diffrax.Dopri5(), saveat=jnp.linspace(0.0, 0.5, 11),
                            stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-10),
                            adjoint=adjoint, max_steps=4096)
        return jnp.sqrt(jnp.mean(sol.reactions.components("O2", "Fx") ** 2))

    x0 = jnp.array([1.2, 0.05])
    g_back = jax.jit(jax.grad(lambda x: rms(x, diffrax.BacksolveAdjoint())))(x0)
    assert_matches(g_back, central_differences(rms, x0, np.array([1e-5, 1e-5])))
    with pytest.raises(ValueError, match="BacksolveAdjoint"):
        jmbs.simulate(m0, 0.1, formulation=f, adjoint=diffrax.BacksolveAdjoint())


def test_traced_model_needs_a_prepared_formulation():
    m0 = driven_parallelogram()
    with pytest.raises(ValueError, match="prepare it on a concrete model"):
        jax.grad(lambda mass: jmbs.reactions(m0.with_params({"coupler.mass": mass}), m0.q0,
                                             m0.v0, 0.0).v_dot[0])(2.0)
