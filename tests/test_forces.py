"""Force elements against closed forms: a damped oscillator, a pendulum on a torsion
spring, energy conservation and the work balance, friction decelerations, a
force-driven slider-crank against the driven one, statics with loads, gradients
against finite differences, and the refusal of friction on a non-unique reaction."""

import math

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs import ModelBuilder, examples

G = 9.81
TIGHT = diffrax.PIDController(rtol=1e-10, atol=1e-10)


def oscillator(k=50.0, c=1.0, m=2.0, x0=0.2, rest=0.8) -> jmbs.Model:
    """A block on a horizontal prismatic joint, held by a spring-damper to the origin."""
    b = ModelBuilder(dim=2)
    b.add_body("block", m, 0.1, (rest + x0, 0.0))
    b.add_prismatic("P", "ground", "block", (rest + x0, 0.0), (1.0, 0.0))
    b.add_spring_damper("S", "ground", "block", (0.0, 0.0), (rest + x0, 0.0), stiffness=k,
                        damping=c, rest_length=rest)
    return b.build()


def test_damped_oscillator_matches_the_analytic_solution():
    k, c, m, x0 = 50.0, 1.0, 2.0, 0.2
    sol = jmbs.simulate(oscillator(k, c, m, x0), 3.0, saveat=np.linspace(0, 3, 31),
                        stepsize_controller=TIGHT)
    wn, z = math.sqrt(k / m), c / (2 * math.sqrt(k * m))
    wd = wn * math.sqrt(1 - z * z)
    t = np.asarray(sol.ts)
    x = np.exp(-z * wn * t) * (x0 * np.cos(wd * t) + z * wn * x0 / wd * np.sin(wd * t))
    np.testing.assert_allclose(np.asarray(sol.q[:, 0]) - 0.8, x, atol=1e-8)
    # The damper's work is what the energy lost: energy - work stays at its start.
    balance = np.asarray(sol.energy - sol.work)
    np.testing.assert_allclose(balance, balance[0], atol=1e-8 * 0.5 * k * x0**2)
    xT, tT = x[-1], t[-1]
    vT = -np.exp(-z * wn * tT) * x0 * wn**2 / wd * np.sin(wd * tT)
    lost = 0.5 * k * xT**2 + 0.5 * m * vT**2 - 0.5 * k * x0**2
    np.testing.assert_allclose(float(sol.work[-1]), lost, rtol=1e-7)


@pytest.mark.parametrize("dim", [2, 3])
def test_pendulum_on_a_torsion_spring_oscillates_at_its_small_amplitude_frequency(dim):
    """A rod hanging from a revolute joint with a rotational spring: small oscillations
    at `omega^2 = (k + m g l) / (J + m l^2)`, started from the bottom with `w0`."""
    m, J, l, k, w0 = 1.5, 0.02, 0.4, 3.0, 1e-3
    g = (0.0, -G) if dim == 2 else (0.0, -G, 0.0)
    b = ModelBuilder(dim=dim, gravity=g)
    if dim == 2:
        b.add_body("rod", m, J, (0.0, -l), velocity=(w0 * l, 0.0), angular_velocity=w0)
        b.add_revolute("R", "ground", "rod", (0.0, 0.0))
    else:
        b.add_body("rod", m, (J, J, J), (0.0, -l, 0.0), velocity=(w0 * l, 0.0, 0.0),
                   angular_velocity=(0.0, 0.0, w0))
        b.add_revolute("R", "ground", "rod", (0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    b.add_rotational_spring_damper("K", "R", stiffness=k)
    model = b.build()
    omega = math.sqrt((k + m * G * l) / (J + m * l * l))
    ts = np.linspace(0.0, 2.0, 21)
    sol = jmbs.simulate(model, 2.0, saveat=ts, stepsize_controller=TIGHT)
    if dim == 2:
        theta = np.asarray(sol.q[:, 2])
    else:  # rotation about z of a quaternion (w, 0, 0, z)
        theta = 2 * np.arctan2(np.asarray(sol.q[:, 6]), np.asarray(sol.q[:, 3]))
    np.testing.assert_allclose(theta, w0 / omega * np.sin(omega * ts), atol=1e-4 * w0 / omega)


def test_slide_spring_damper_is_a_damped_oscillator(dim=2):
    """A block on an inclined prismatic joint with a slide spring-damper: the slide follows
    the damped oscillator's closed form about its static offset `m g sin(a) / k`. (In 3-D
    the slide springs of MuJoCo servos are checked in test_mjcf.py.)"""
    m, k, c, rest, a = 2.0, 50.0, 1.5, 0.1, 0.3
    axis = (math.cos(a), math.sin(a)) + ((0.0,) if dim == 3 else ())
    g = (0.0, -G) + ((0.0,) if dim == 3 else ())
    b = ModelBuilder(dim=dim, gravity=g)
    b.add_body("block", m, 0.1 if dim == 2 else (0.1, 0.1, 0.1), (0.0,) * dim)
    b.add_prismatic("P", "ground", "block", (0.0,) * dim, axis)
    b.add_slide_spring_damper("K", "P", stiffness=k, damping=c, rest_slide=rest)
    model = b.build()
    ts = np.linspace(0.0, 2.0, 21)
    sol = jmbs.simulate(model, 2.0, saveat=ts, stepsize_controller=TIGHT)
    s = np.asarray(sol.q[:, :dim]) @ np.asarray(axis)
    s_eq = rest - m * G * math.sin(a) / k
    zeta, w0 = c / (2 * math.sqrt(k * m)), math.sqrt(k / m)
    wd = w0 * math.sqrt(1 - zeta ** 2)
    closed = s_eq - s_eq * np.exp(-zeta * w0 * ts) * (np.cos(wd * ts) + zeta * w0 / wd * np.sin(wd * ts))
    np.testing.assert_allclose(s, closed, atol=1e-7)


def test_undamped_springs_conserve_energy():
    """A planar double pendulum with a spring to the ground, a torsion spring and a bushing
    to a third body: 10 s, the energy stays within 1e-9 of its start (relative)."""
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    b.add_body("a", 1.0, 0.1, (0.5, 0.0))
    b.add_body("c", 0.7, 0.05, (1.5, 0.0))
    b.add_body("d", 0.3, 0.01, (2.0, 0.0))
    b.add_revolute("O", "ground", "a", (0.0, 0.0))
    b.add_revolute("A", "a", "c", (1.0, 0.0))
    b.add_spring_damper("S", "ground", "c", (1.0, 1.0), (2.0, 0.0), stiffness=40.0, rest_length=0.9)
    b.add_rotational_spring_damper("K", "A", stiffness=5.0, rest_angle=0.3)
    b.add_bushing("B", "c", "d", (2.0, 0.0), stiffness=(2e3, 3e3, 50.0))
    model = b.build()
    sol = jmbs.simulate(model, 10.0, stepsize_controller=diffrax.PIDController(rtol=1e-12, atol=1e-12),
                        reactions=False)
    e = np.asarray(sol.energy)
    scale = np.max(np.abs(e - np.asarray(jmbs.potential_energy(model, sol.q[0]))))  # kinetic scale
    assert np.max(np.abs(e - e[0])) <= 1e-9 * max(scale, abs(e[0])), np.max(np.abs(e - e[0]))
    np.testing.assert_allclose(np.asarray(sol.work), 0.0, atol=1e-12 * abs(e[0]))  # all conservative
    assert float(np.max(np.abs(sol.q[:, 2]))) > 0.5  # it really swung


def test_coulomb_friction_decelerates_a_block_and_a_disk_as_the_closed_forms_say():
    """A block sliding on a horizontal prismatic joint under gravity: `v = v0 - mu g t`; a
    disk spinning on a revolute pin (centre of mass on the axis) under gravity:
    `omega = omega0 - mu m g r t / J`. The normal loads come from the reactions."""
    mu, m, J, r = 0.2, 2.0, 0.05, 0.01
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    b.add_body("block", m, 0.1, (0.0, 0.0), velocity=(1.0, 0.0))
    b.add_prismatic("P", "ground", "block", (0.0, 0.0), (1.0, 0.0))
    b.add_joint_friction("fP", "P", coulomb=mu, velocity_scale=1e-4)
    b.add_body("disk", m, J, (0.0, 1.0), angular_velocity=10.0)
    b.add_revolute("R", "ground", "disk", (0.0, 1.0))
    b.add_joint_friction("fR", "R", coulomb=mu, radius=r, velocity_scale=1e-4)
    model = b.build()
    ts = np.linspace(0.0, 0.4, 5)
    sol = jmbs.simulate(model, 0.4, saveat=ts, stepsize_controller=TIGHT)
    np.testing.assert_allclose(np.asarray(sol.v[:, 0]), 1.0 - mu * G * ts, atol=1e-7)
    np.testing.assert_allclose(np.asarray(sol.v[:, 5]), 10.0 - mu * m * G * r * ts / J, atol=1e-7)
    # The dissipated work: friction force times distance (block) plus torque times angle (disk).
    x, phi = np.asarray(sol.q[-1, 0]), np.asarray(sol.q[-1, 5])
    np.testing.assert_allclose(float(sol.work[-1]), -(mu * m * G * x + mu * m * G * r * phi),
                               rtol=1e-6)


def test_force_driven_slider_crank_reproduces_the_driven_motion():
    """Drive the crank at constant speed, read the driving torque along the motion, apply
    it as an actuator torque `f(t)` (interpolated) to the undriven mechanism: the
    motion is the driven one."""
    omega, T = 2.0, 1.0
    driven = examples.slider_crank(omega=omega)
    ts = np.linspace(0.0, T, 2001)
    ref = jmbs.simulate(driven, T, saveat=ts, stepsize_controller=TIGHT,
                        v0=jmbs.consistent_velocity(driven, driven.q0))
    torque = np.asarray(ref.reactions.components("drive", "M"))

    def law(t):  # piecewise-linear in the dense, smooth samples
        return jnp.interp(t, jnp.asarray(ts), jnp.asarray(torque))

    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    crank, rod = 0.5, 1.5
    theta = math.pi / 6
    A = crank * np.array([math.cos(theta), math.sin(theta)])
    B = np.array([A[0] + math.sqrt(rod**2 - A[1] ** 2), 0.0])
    c = examples.planar_rod(b, "crank", (0, 0), A)
    r = examples.planar_rod(b, "rod", A, B)
    s = b.add_body("slider", mass=1.0, inertia=0.01, position=B)
    b.add_revolute("O", b.ground, c, point=(0.0, 0.0))
    b.add_revolute("A", c, r, point=A)
    b.add_revolute("B", r, s, point=B)
    b.add_prismatic("P", b.ground, s, point=B, axis=(1.0, 0.0))
    b.add_actuator("motor", "O", law)
    free = b.build()
    sol = jmbs.simulate(free, T, v0=ref.v[0], saveat=ts[::200], stepsize_controller=TIGHT)
    np.testing.assert_allclose(np.asarray(sol.q[:, 2]), theta + omega * ts[::200], atol=1e-6)
    np.testing.assert_allclose(np.asarray(sol.q), np.asarray(ref.q[::200]), atol=1e-6)


def test_statics_with_applied_loads_gives_the_hand_computed_driving_torque():
    """A crank held by a driver at angle theta against a tip force, a spring and gravity:
    the driver's reaction is the static torque; without the driver the load is
    unbalanced."""
    L, m, P, k, theta = 1.2, 2.0, 5.0, 30.0, 0.4
    tip = L * np.array([math.cos(theta), math.sin(theta)])
    anchor = np.array([0.0, 2.0])

    def crank(driven):
        b = ModelBuilder(dim=2, gravity=(0.0, -G))
        examples.planar_rod(b, "crank", (0, 0), tip, mass=m)
        b.add_revolute("O", "ground", "crank", (0.0, 0.0))
        b.add_force("F", "crank", (0.0, -P), point=tip)
        b.add_spring_damper("S", "ground", "crank", anchor, tip, stiffness=k, rest_length=1.0)
        if driven:
            b.add_driver("drive", "O", lambda t: 0.0 * t)
        return b.build()

    d = anchor - tip
    length = np.linalg.norm(d)
    spring = k * (length - 1.0) * d / length  # on the crank's tip, towards the anchor

    def cross(a, f):
        return a[0] * f[1] - a[1] * f[0]

    load = cross(tip, [0.0, -P]) + cross(tip, spring) + cross(tip / 2, [0.0, -m * G])  # about O
    st = jmbs.statics(crank(True), crank(True).q0)
    assert bool(st.in_equilibrium)
    np.testing.assert_allclose(float(st.reactions.components("drive", "M")), -load, rtol=1e-10)
    # The pin carries the rest of the load: force balance of the crank.
    total = np.array([0.0, -P]) + spring + np.array([0.0, -m * G])
    np.testing.assert_allclose(np.asarray(st.reactions.force("O")), -total, rtol=1e-10)
    free = jmbs.statics(crank(False), crank(False).q0)
    assert not bool(free.in_equilibrium)
    # Along the free motion (a unit rotation about O), the unbalanced load does the virtual
    # work of the loads' moment about O.
    rotation = np.array([-tip[1] / 2, tip[0] / 2, 1.0])
    np.testing.assert_allclose(float(rotation @ np.asarray(free.unbalanced)), load, rtol=1e-10)


def test_gradient_of_the_motion_with_respect_to_a_stiffness_matches_finite_differences():
    model = oscillator()

    def x_end(k):
        m = model.with_params({"S.stiffness": k})
        sol = jmbs.simulate(m, 0.5, saveat=jnp.array([0.5]), reactions=False,
                            formulation=jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0),
                            stepsize_controller=TIGHT)
        return sol.q[-1, 0]

    # One program, as docs/sensitivity.md advises; the formulation is prepared inside it, on
    # the concrete model (`prepare` decides on values even under `jax.jit`).
    g = jax.jit(jax.grad(x_end))(50.0)
    h = 1e-4
    fd = (x_end(50.0 + h) - x_end(50.0 - h)) / (2 * h)
    np.testing.assert_allclose(float(g), float(fd), rtol=1e-5)


def spring_parallelogram(**kwargs) -> jmbs.Model:
    """The parallelogram with a third crank, its coupler pulled by a spring, the third
    crank's ground pin with friction."""
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    cranks = [examples.planar_rod(b, f"crank{k}", (k, 0), (k, 1)) for k in range(3)]
    coupler = examples.planar_rod(b, "coupler", (0, 1), (2, 1), mass=2.0)
    for k, c in enumerate(cranks):
        b.add_revolute(f"O{k}", b.ground, c, point=(k, 0.0))
        b.add_revolute(f"B{k}", c, coupler, point=(k, 1.0))
    b.add_spring_damper("S", "ground", "coupler", (-1.0, 1.0), (1.0, 1.0), stiffness=20.0,
                        damping=0.5, rest_length=1.5)
    b.add_joint_friction("f", "O2", coulomb=0.1, radius=0.01, **kwargs)
    return b.build()


def test_friction_on_a_joint_whose_reaction_is_not_unique_is_refused():
    model = spring_parallelogram()
    with pytest.raises(ValueError, match=r"joint friction 'f' acts on joint 'O2', whose reaction "
                                         r"force is not unique.*bushing.*Penalty"):
        jmbs.simulate(model, 0.1)
    with pytest.raises(ValueError, match=r"'O2'.*not unique"):
        jmbs.reactions(model, model.q0, model.v0)
    # A compliant model of the redundancy makes the reaction unique, so friction is fine.
    res = jmbs.reactions(model, model.q0, model.v0, formulation=jmbs.Penalty(stiffness=1e6))
    assert bool(res.reactions.is_unique("O2"))
    allowed = spring_parallelogram(allow_nonunique=True)
    with pytest.warns(UserWarning, match="depends on the formulation"):
        jmbs.reactions(allowed, allowed.q0, allowed.v0)


def test_viscous_friction_needs_neither_a_unique_reaction_nor_a_radius():
    """Purely viscous friction (coulomb=0) on the joint whose reaction is not unique runs
    without a radius and moves the mechanism as a rotational damper of the same
    coefficient on that joint does (an element that never reads the reaction)."""
    def model(damping_element):
        b = ModelBuilder(dim=2, gravity=(0.0, -G))
        cranks = [examples.planar_rod(b, f"crank{k}", (k, 0), (k, 1)) for k in range(3)]
        coupler = examples.planar_rod(b, "coupler", (0, 1), (2, 1), mass=2.0)
        for k, c in enumerate(cranks):
            b.add_revolute(f"O{k}", b.ground, c, point=(k, 0.0))
            b.add_revolute(f"B{k}", c, coupler, point=(k, 1.0))
        b.add_spring_damper("S", "ground", "coupler", (-1.0, 1.0), (1.0, 1.0), stiffness=20.0,
                            rest_length=1.5)
        damping_element(b)
        return b.build()

    friction = model(lambda b: b.add_joint_friction("f", "O2", coulomb=0.0, viscous=0.8))
    damper = model(lambda b: b.add_rotational_spring_damper("d", "O2", stiffness=0.0,
                                                            damping=0.8))
    ts = np.linspace(0.0, 1.0, 6)
    sol = jmbs.simulate(friction, 1.0, saveat=ts, stepsize_controller=TIGHT)
    ref = jmbs.simulate(damper, 1.0, saveat=ts, stepsize_controller=TIGHT)
    np.testing.assert_allclose(np.asarray(sol.q), np.asarray(ref.q), atol=1e-8)
    np.testing.assert_allclose(np.asarray(sol.work), np.asarray(ref.work), atol=1e-8)
    assert float(sol.work[-1]) < -1e-3  # the friction did dissipate
    assert not bool(np.any(sol.reactions.is_unique("O2")))


@pytest.mark.parametrize("formulation", [jmbs.Elimination(), jmbs.Pseudoinverse(),
                                         jmbs.AugmentedLagrangian()])
def test_formulations_agree_on_a_spring_loaded_redundant_mechanism(formulation):
    """The motion of the spring-loaded parallelogram (no friction) is unique although its
    reactions are not: every formulation gives the null-space projection's."""
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    cranks = [examples.planar_rod(b, f"crank{k}", (k, 0), (k, 1)) for k in range(3)]
    coupler = examples.planar_rod(b, "coupler", (0, 1), (2, 1), mass=2.0)
    for k, c in enumerate(cranks):
        b.add_revolute(f"O{k}", b.ground, c, point=(k, 0.0))
        b.add_revolute(f"B{k}", c, coupler, point=(k, 1.0))
    b.add_spring_damper("S", "ground", "coupler", (-1.0, 1.0), (1.0, 1.0), stiffness=20.0,
                        damping=0.5, rest_length=1.5)
    b.add_torque("T", "crank0", "0.5 * sin(3 * t)")
    model = b.build()
    ts = np.linspace(0.0, 1.0, 5)
    ref = jmbs.simulate(model, 1.0, saveat=ts, stepsize_controller=TIGHT)
    sol = jmbs.simulate(model, 1.0, saveat=ts, stepsize_controller=TIGHT, formulation=formulation)
    np.testing.assert_allclose(np.asarray(sol.q), np.asarray(ref.q), atol=1e-7)
    assert not bool(np.any(sol.reactions.is_unique("O0")))


def test_a_batch_of_stiffnesses_under_vmap_matches_the_closed_form():
    model = oscillator()
    prepared = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)
    ks = jnp.array([20.0, 50.0, 120.0])

    def x_end(k):
        m = model.with_params({"S.stiffness": k})
        return jmbs.simulate(m, 1.0, saveat=jnp.array([1.0]), formulation=prepared,
                             reactions=False, stepsize_controller=TIGHT).q[-1, 0]

    x = np.asarray(jax.vmap(x_end)(ks)) - 0.8
    for k, xk in zip(np.asarray(ks), x):
        wn, z = math.sqrt(k / 2.0), 1.0 / (2 * math.sqrt(2.0 * k))
        wd = wn * math.sqrt(1 - z * z)
        expected = math.exp(-z * wn) * (0.2 * math.cos(wd) + z * wn * 0.2 / wd * math.sin(wd))
        np.testing.assert_allclose(xk, expected, atol=1e-8)


def test_a_model_without_constraints_falls_and_hangs_on_its_bushing():
    """No joints at all: a free body falls as `-g t^2 / 2`; a body held only by an
    undamped bushing oscillates about its static deflection `-m g / k` at `sqrt(k / m)`."""
    m, k = 2.0, 800.0
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    b.add_body("free", 1.0, 0.1, (0.0, 0.0))
    b.add_body("held", m, 0.1, (1.0, 0.0))
    b.add_bushing("B", "ground", "held", (1.0, 0.0), (k, k, 10.0))
    model = b.build()
    assert model.nc == 0
    ts = np.linspace(0.0, 1.0, 11)
    sol = jmbs.simulate(model, 1.0, saveat=ts, stepsize_controller=TIGHT)
    np.testing.assert_allclose(np.asarray(sol.q[:, 1]), -G * ts**2 / 2, atol=1e-9)
    y = -m * G / k * (1 - np.cos(math.sqrt(k / m) * ts))
    np.testing.assert_allclose(np.asarray(sol.q[:, 4]), y, atol=1e-9)


def test_a_spatial_bushing_holds_a_load_with_its_stiffnesses():
    """A body held only by a 6-component bushing at its centre of mass, under a force and
    a torque: at the closed-form equilibrium (translation F / k per axis, rotation about
    z by M / k_rz: its coordinates are the rotation vector) the generalized forces
    vanish, and the bushing's potential energy is sum(k x^2) / 2 of those deflections."""
    k = np.array([1e3, 2e3, 3e3, 50.0, 60.0, 70.0])
    F, M = np.array([10.0, -4.0, 6.0]), 7.0
    b = ModelBuilder(dim=3)
    b.add_body("a", 2.0, (0.1, 0.2, 0.3), (0.0, 0.0, 0.0))
    b.add_bushing("B", "ground", "a", (0.0, 0.0, 0.0), k, damping=1.0)
    b.add_force("F", "a", F)
    b.add_torque("T", "a", (0.0, 0.0, M))
    model = b.build()
    angle = M / k[5]
    q = np.concatenate([F / k[:3], [math.cos(angle / 2), 0.0, 0.0, math.sin(angle / 2)]])
    np.testing.assert_allclose(np.asarray(jmbs.generalized_forces(model, q, np.zeros(6))), 0.0,
                               atol=1e-12)
    x = np.concatenate([F / k[:3], [0.0, 0.0, M / k[5]]])
    expected = 0.5 * np.sum(k * x**2)
    np.testing.assert_allclose(float(jmbs.potential_energy(model, q)), expected, rtol=1e-12)


def test_the_work_balances_the_energy_in_3d():
    """A spatial double pendulum (revolute, then spherical) with a damped torsion spring, a
    damped point spring, a damped bushing, a spring with a nonlinear law (no potential: all
    of its force does work), an actuator torque f(t) and an applied torque: along the run
    energy - work stays at its start (the work integrates every element's non-conservative
    power, `load . rate + dV/dt`), the dampers and the laws having done work."""
    b = ModelBuilder(dim=3, gravity=(0.0, -G, 0.0))
    upper = b.add_body("upper", 1.0, (0.01, 0.08, 0.08), (0.5, 0.0, 0.0))
    lower = b.add_body("lower", 1.0, (0.01, 0.08, 0.08), (1.5, 0.0, 0.0), velocity=(0.0, 0.25, -0.5),
                       angular_velocity=(0.0, 1.0, 0.5))
    b.add_revolute("O", b.ground, upper, (0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    b.add_spherical("A", upper, lower, (1.0, 0.0, 0.0))
    b.add_rotational_spring_damper("torsion", "O", stiffness=20.0, damping=0.5, rest_angle=0.2)
    b.add_spring_damper("spring", b.ground, lower, (2.0, 1.0, 0.0), (2.0, 0.0, 0.0), stiffness=50.0,
                        damping=1.0)
    b.add_spring_damper("law", b.ground, lower, (1.5, 0.0, 1.0), (1.5, 0.0, 0.0),
                        force=lambda length, rate: 30.0 * (length - 0.9) ** 3 + 0.3 * rate)
    b.add_bushing("bushing", b.ground, lower, (2.0, 0.0, 0.0), stiffness=5.0, damping=0.1)
    b.add_actuator("drive", "O", lambda t: 0.5 * jnp.sin(3.0 * t))
    b.add_torque("twist", lower, lambda t: jnp.array([0.0, 0.2, 0.1]) * jnp.cos(t), frame="body")
    model = b.build()
    sol = jmbs.simulate(model, 2.0, stepsize_controller=TIGHT, reactions=False)
    balance = np.asarray(sol.energy - sol.work)
    scale = float(np.max(np.abs(np.asarray(sol.energy))))
    np.testing.assert_allclose(balance, balance[0], atol=1e-8 * scale)
    assert float(np.max(np.abs(np.asarray(sol.work)))) > 1e-2 * scale  # work was done
