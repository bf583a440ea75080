"""Wheels rolling without slipping in 3-D (`ModelBuilder.add_wheel`): the rolling disc's
steady motions against closed forms (straight rolling; a steady circle at the precession
rate from Euler's equations), energy conservation, and the four-wheeled robot with rigid
axles (redundant nonholonomic rows: every uniqueness method, a driven run against the
closed-form acceleration)."""

import math

import jax.numpy as jnp
import numpy as np

import jmbs
from jmbs.examples.wheeled_robot import MASS, robot_forward_speed, rolling_inertia

G = 9.81
R, M = 0.3, 2.0
IA, ID = M * R**2 / 2, M * R**2 / 4  # thin disc: about its axle, about a diameter


def disc(tilt: float, centre_radius: float | None, speed: float = 1.0):
    """A disc leaning by `tilt` (axle elevation) into a steady circle of its centre of
    `centre_radius` about the z axis, at the precession rate of Euler's equations, or
    (`centre_radius=None`) upright, rolling along x at `speed`. Returns `(model, Omega)`.

    Steady circle: in the frame turning at Omega about z, with the axle
    a = (cos th, 0, sin th) and the contact offset d = (sin th, 0, -cos th), no slip
    gives the spin psi' = -Omega (b + r sin th) / r about a, and the moment balance
    about the centre, Omega z x L = r d x (m a_C + m g z), gives
    Omega^2 = m g r sin th / (cos th (I_a b / r + I_d sin th + m r b))."""
    b = jmbs.ModelBuilder(dim=3, gravity=(0.0, 0.0, -G))
    if centre_radius is None:
        w = b.add_body("disc", mass=M, inertia=(ID, IA, ID), position=(0.0, 0.0, R),
                       velocity=(speed, 0.0, 0.0), angular_velocity=(0.0, speed / R, 0.0))
        b.add_wheel("W", w, radius=R, axis=(0.0, 1.0, 0.0))
        return b.build(), 0.0
    th, c = tilt, centre_radius
    omega = math.sqrt(M * G * R * math.sin(th)
                      / (math.cos(th) * (IA * c / R + ID * math.sin(th) + M * R * c)))
    a = np.array([math.cos(th), 0.0, math.sin(th)])
    rot = np.column_stack([[0.0, 1.0, 0.0], a, [math.sin(th), 0.0, -math.cos(th)]])
    spin = -omega * (c + R * math.sin(th)) / R
    w = b.add_body("disc", mass=M, inertia=(ID, IA, ID), position=(c, 0.0, R * math.cos(th)),
                   rotation=rot, velocity=(0.0, omega * c, 0.0),
                   angular_velocity=tuple(omega * np.array([0.0, 0.0, 1.0]) + spin * a))
    b.add_wheel("W", w, radius=R, axis=a)
    return b.build(), omega


def test_rows_are_the_contact_points_velocity():
    """The wheel's three rows are n, t, s dotted with the contact point's material velocity."""
    model, _ = disc(0.3, 1.0)
    q = model.q0
    rng = np.random.default_rng(0)
    v = rng.normal(size=6)
    pos, rot = np.asarray(q[:3]), np.asarray(jmbs.rotations.quat_to_rot(q[3:]))
    a = rot @ np.array([0.0, 1.0, 0.0])
    n = np.array([0.0, 0.0, 1.0])
    d = -(n - (n @ a) * a) / np.linalg.norm(n - (n @ a) * a)
    t = np.cross(a, n) / np.linalg.norm(np.cross(a, n))
    vp = v[:3] + np.cross(rot @ v[3:], R * d)  # omega' in the body frame
    expected = [n @ vp, t @ vp, np.cross(n, t) @ vp]
    np.testing.assert_allclose(jmbs.constraint_matrix(model, q) @ v, expected, atol=1e-14)
    np.testing.assert_allclose(pos + R * d, [1.0 + R * math.sin(0.3), 0.0, 0.0], atol=1e-15)
    assert list(model.holonomic_rows) == [True, False, False]


def test_straight_rolling():
    model, _ = disc(0.0, None, speed=1.5)
    sol = jmbs.simulate(model, 1.0, saveat=jnp.linspace(0.0, 1.0, 5))
    np.testing.assert_allclose(sol.q[-1, :3], [1.5, 0.0, R], atol=1e-9)
    np.testing.assert_allclose(sol.v[-1], sol.v[0], atol=1e-9)
    # The contact carries the weight, with no traction and no side force.
    np.testing.assert_allclose(sol.reactions.force("W")[-1], [0.0, 0.0, M * G], atol=1e-8)
    step = jmbs.simulate(model, 1.0, solver=jmbs.RegularizedEuler(1e-2), saveat=[0.0, 1.0],
                         reactions=False)
    np.testing.assert_allclose(step.q[-1, :3], [1.5, 0.0, R], atol=1e-12)


def test_steady_circle_at_the_precession_rate():
    model, omega = disc(0.3, 1.0)
    period = 2 * math.pi / omega
    sol = jmbs.simulate(model, period, saveat=jnp.linspace(0.0, period, 5), reactions=False)
    angle = np.unwrap(np.arctan2(np.asarray(sol.q[:, 1]), np.asarray(sol.q[:, 0])))
    np.testing.assert_allclose(angle, np.linspace(0.0, 2 * math.pi, 5), atol=1e-7)
    np.testing.assert_allclose(np.hypot(sol.q[:, 0], sol.q[:, 1]), 1.0, atol=1e-7)
    np.testing.assert_allclose(sol.q[:, 2], R * math.cos(0.3), atol=1e-9)
    # 10 % off the rate, the disc does not stay on the circle.
    wrong, _ = disc(0.3, 1.0)
    v0 = wrong.v0 * 1.1
    off = jmbs.simulate(wrong, period, v0=v0, saveat=jnp.linspace(0.0, period, 5), reactions=False)
    assert abs(float(jnp.hypot(off.q[-1, 0], off.q[-1, 1])) - 1.0) > 1e-2


def test_energy_is_conserved():
    """A disc leaning and turning off any steady motion: rolling does no work."""
    model, _ = disc(0.3, 1.0)
    v0 = jmbs.consistent_velocity(model, model.q0, model.v0 * jnp.array([1.0, 1.3, 1, 0.7, 1.2, 1]))
    sol = jmbs.simulate(model, 1.0, v0=v0, saveat=jnp.linspace(0.0, 1.0, 5), reactions=False)
    assert float(jnp.max(jnp.abs(sol.energy / sol.energy[0] - 1))) < 1e-7
    assert float(jnp.max(jnp.abs(sol.q[:, 0] - sol.q[0, 0]))) > 0.1  # it did move


def test_four_wheeled_robot_every_method_agrees():
    """46 rows, 42 velocities: rank 41 (one degree of freedom) and p = 5 (one holonomic:
    four contacts on a rigid frame; four nonholonomic: per axle, the two side rows and
    the two rolling rows say the same), counted by hand. No contact force is unique."""
    model = jmbs.examples.four_wheeled_robot()
    contacts = [e for e in model.element_names if e.endswith("_contact")]
    verdicts = set()
    for method in jmbs.SOLVABILITY_METHODS:
        rep = jmbs.solvability(model, method=method)
        assert (rep.rank, rep.redundancy, rep.dof) == (41, 5, 1), method
        verdicts.add(tuple(tuple(bool(x) for x in rep.unique_components(e)) for e in model.element_names))
        assert not any(rep.unique_components(e).any() for e in contacts), method
    assert len(verdicts) == 1


def test_four_wheeled_robot_driven():
    """Both motors at 3 N m: (m + J / r^2) a = 2 tau / r, with the fixed stepper and its
    projection (its velocities are exact for a constant acceleration)."""
    tau, r = 3.0, 0.2
    model = jmbs.examples.four_wheeled_robot(radius=r, torque=tau)
    accel = (2 * tau / r) / (MASS + rolling_inertia(model) / r**2)
    sol = jmbs.simulate(model, 0.5, solver=jmbs.RegularizedEuler(1e-2, projection=True),
                        saveat=[0.0, 0.5])
    np.testing.assert_allclose(robot_forward_speed(model, sol.v), [1.0, 1.0 + 0.5 * accel], rtol=1e-12)
    assert float(sol.violation[-1]) < 1e-14
    assert float(sol.velocity_violation[-1]) < 1e-13
    # The rigid rows' reactions are decided as everywhere: the contacts' are not unique.
    assert not bool(sol.reactions.is_unique("front_left_contact")[-1])
