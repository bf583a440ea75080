"""Paper 002's fixed-step regularized semi-implicit Euler (`jmbs.RegularizedEuler`,
`jmbs.step`): first order against a tight reference, a compliant joint's static sag
against the closed form, vmap against a loop, grad against the closed form and finite
differences, and `jmbs.simulate(solver=...)` against the steps it reports."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs import examples

G = 9.81
MASS = 2.0


@functools.partial(jax.jit, static_argnums=(2,))
def run(model, solver, n):
    """The state after `n` steps from the model's state."""
    def body(s, _):
        return jmbs.step(model, s, solver=solver), None
    return jax.lax.scan(body, jmbs.StepState.initial(model), None, length=n)[0]


@pytest.fixture(scope="module")
def hanging():
    """A body of 2 kg hanging at rest 1 m below a planar revolute (joint at the origin)."""
    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -G))
    body = b.add_body("bob", mass=MASS, inertia=0.1, position=(0.0, -1.0))
    b.add_revolute("O", b.ground, body, point=(0.0, 0.0))
    return b.build()


def sag_solver(c, h=1e-3, every_row=False):
    """Compliance `c` on the joint's vertical row, critically damped; the horizontal row
    rigid (a minimum-norm solve), or (`every_row`) compliant too (a Cholesky solve)."""
    if every_row:
        return jmbs.RegularizedEuler(h, compliance=c, damping=2 * jnp.sqrt(MASS / c))
    return jmbs.RegularizedEuler(h, compliance={"O.Fy": c}, damping={"O.Fy": 2 * jnp.sqrt(MASS / c)})


def test_first_order_against_a_tight_reference():
    model = examples.pendulum()
    ref = jmbs.simulate(model, 0.5, saveat=jnp.array([0.0, 0.5]), reactions=False)
    errors = [float(jnp.max(jnp.abs(run(model, jmbs.RegularizedEuler(0.5 / n), n).q - ref.q[-1])))
              for n in (250, 500, 1000)]
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((ratios > 1.8) & (ratios < 2.2)), (errors, ratios)
    assert errors[-1] < 5e-3


def test_compliant_joint_sags_by_c_m_g(hanging):
    c = 1e-4
    s = run(hanging, sag_solver(c), 1000)  # 1 s: about 11 periods of the 11 Hz bounce
    assert float(s.q[1]) == pytest.approx(-1.0 - c * MASS * G, rel=1e-9)
    assert float(s.q[0]) == pytest.approx(0.0, abs=1e-12)  # the rigid row holds exactly
    # The step's multiplier is the joint's reaction: the body's weight (jmbs's sign: -lambda).
    assert float(-s.lam[1]) == pytest.approx(MASS * G, rel=1e-9)


def test_vmap_over_compliance_matches_a_loop(hanging):
    cs = jnp.array([1e-5, 1e-4, 1e-3])
    batch = jax.vmap(lambda c: run(hanging, sag_solver(c), 1000).q)(cs)
    loop = jnp.stack([run(hanging, sag_solver(c), 1000).q for c in cs])
    np.testing.assert_allclose(batch, loop, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(batch[:, 1], -1.0 - cs * MASS * G, rtol=1e-8)


@pytest.mark.parametrize("every_row", [False, True])
def test_gradient_through_the_steps(hanging, every_row):
    def sag(c):
        return -1.0 - run(hanging, sag_solver(c, every_row=every_row), 1000).q[1]
    c = 1e-4
    g = float(jax.grad(sag)(c))
    assert g == pytest.approx(MASS * G, rel=1e-6)  # d(c m g)/dc
    eps = 1e-8
    assert g == pytest.approx(float(sag(c + eps) - sag(c - eps)) / (2 * eps), rel=1e-5)


def test_simulate_reports_the_steps(hanging):
    solver = sag_solver(1e-4)
    sol = jmbs.simulate(hanging, 0.05, solver=solver)
    assert sol.ts.shape == (51,) and float(sol.ts[-1]) == pytest.approx(0.05)
    s = run(hanging, solver, 20)
    np.testing.assert_allclose(sol.q[20], s.q, rtol=0, atol=1e-15)
    # Reactions at a saved time: the step that starts there.
    after = run(hanging, solver, 21)
    np.testing.assert_allclose(sol.reactions.multipliers[20], after.lam, rtol=1e-12)
    np.testing.assert_allclose(sol.v_dot[20], (after.v - s.v) / 1e-3, rtol=1e-9)
    # The vertical row is compliant, the horizontal one rigid and independent: both unique.
    assert bool(jnp.all(sol.reactions.component_unique))
    assert sol.reactions.rigid == (True, False)
    saved = jmbs.simulate(hanging, 0.05, solver=solver, saveat=[0.0, 0.02, 0.05])
    np.testing.assert_allclose(saved.q[1], s.q, rtol=0, atol=1e-15)


def test_projection_keeps_the_constraints():
    model = examples.pendulum()
    s = run(model, jmbs.RegularizedEuler(1e-2, projection=True), 50)
    assert float(jnp.max(jnp.abs(jmbs.phi(model, s.q, s.t)))) < 1e-14
    assert float(jnp.max(jnp.abs(jmbs.velocity_residual(model, s.q, s.v, s.t)))) < 1e-12


def test_bricard_paper_002():
    """Paper 002 with the library's stepper, over the first swing (2.6 s; the full 10 s in
    `jmbs demo`): rigid joints lock once the violation makes the redundant row look
    independent, angular compliance and projection reach x = -1."""
    from jmbs.reproduce import paper002

    runs = paper002.run(2.6)
    rigid, compliant, projected = (runs[k] for k in ("rigid joints", "angular compliance",
                                                     "rigid + projection"))
    assert rigid["step_rank"][0] == 29  # one redundant row, dependent at the start
    lock = rigid["lock"]
    assert 0.5 < lock["t"] < 1.5 and 1e-5 < lock["violation"] < 1e-3, lock
    assert rigid["x_min"] > -0.5  # stops short of x = -1
    k = np.searchsorted(rigid["ts"], lock["t"])  # the step there takes the kinetic energy out
    assert rigid["energy"][k + 1] < rigid["energy"][k - 1] - 1.0  # J, of 29.4 J at the start
    assert compliant["x_min"] < -0.99 and compliant["max_violation"] < 1e-3
    assert projected["x_min"] < -0.98 and projected["max_violation"] < 1e-14
    assert set(projected["step_rank"]) == {29}
    # Compliance makes every reaction unique; the rigid, projected run has none unique.
    assert compliant["unique"].all() and not projected["unique"].any()


def test_simulate_with_the_stepper_vmaps_and_differentiates(hanging):
    """`jmbs.simulate(solver=RegularizedEuler(...))` under `jax.vmap` over compliances
    (against the closed-form sag) and `jax.grad` (against its derivative m g)."""
    def sag(c):
        sol = jmbs.simulate(hanging, 1.0, solver=sag_solver(c), saveat=[0.0, 1.0])
        return -1.0 - sol.q[-1, 1], sol.reactions.force("O")[-1, 1]

    cs = jnp.array([1e-5, 1e-4])
    sags, weights = jax.vmap(sag)(cs)
    np.testing.assert_allclose(sags, cs * MASS * G, rtol=1e-8)
    np.testing.assert_allclose(weights, MASS * G, rtol=1e-9)
    assert float(jax.grad(lambda c: sag(c)[0])(1e-4)) == pytest.approx(MASS * G, rel=1e-6)
