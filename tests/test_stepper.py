"""Paper 002's fixed-step regularized semi-implicit Euler (`jmbs.RegularizedEuler`,
`jmbs.step`): first order against a tight reference, a compliant joint's static sag
against the closed form, vmap against a loop, grad against the closed form and finite
differences, `jmbs.simulate(solver=...)` against the steps it reports, and the
structured step (C's blocks, the block tridiagonal solve) against dense algebra."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs import examples
from jmbs.internal import (
    band_plan,
    block_tridiagonal_solve,
    blocks_matvec,
    blocks_rmatvec,
    constraint_blocks,
    gram_pattern,
    inverse_body_mass,
    weighted_gram,
)

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


@pytest.mark.parametrize("w", [1, 5, 8])  # entry by entry up to SCALAR_BLOCK, LAPACK blocks above
def test_block_tridiagonal_solve_matches_a_dense_solve(w):
    k, rng = 6, np.random.default_rng(w)
    X = rng.standard_normal((k * w, k * w))
    block = np.arange(k * w) // w
    A = (X @ X.T + k * w * np.eye(k * w)) * (np.abs(block[:, None] - block[None, :]) <= 1)
    D = np.stack([A[i * w:(i + 1) * w, i * w:(i + 1) * w] for i in range(k)])
    S = np.stack([A[(i + 1) * w:(i + 2) * w, i * w:(i + 1) * w] for i in range(k - 1)])
    r = rng.standard_normal(k * w)
    x = block_tridiagonal_solve(jnp.asarray(D), jnp.asarray(S), jnp.asarray(r.reshape(k, w)))
    np.testing.assert_allclose(np.ravel(x), np.linalg.solve(A, r), rtol=1e-12, atol=1e-14)


def test_band_plan_recovers_a_shuffled_band():
    n, rng = 40, np.random.default_rng(0)
    band = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) <= 2
    shuffle = rng.permutation(n)
    perm, w = band_plan(band[np.ix_(shuffle, shuffle)])
    assert w == 2 and len(perm) == n and sorted(perm) == list(range(n))
    assert band_plan(np.ones((n, n), bool)) is None  # dense: one block


def test_band_plan_takes_blocks_smaller_than_the_bandwidth_where_they_align():
    """The Bricard's six joints of five rows each couple only their neighbours along
    the loop (the ground carries no mass): ordered, bandwidth 9, block tridiagonal in
    blocks of 5 (a block size the bandwidth would not find: 4 blocks of 9)."""
    pattern = gram_pattern(examples.bricard())
    perm, w = band_plan(pattern)
    assert w == 5 and sorted(perm) == list(range(30))
    i, j = np.nonzero(pattern[np.ix_(perm, perm)])
    assert np.max(np.abs(i - j)) == 9 and np.max(np.abs(i // w - j // w)) == 1


@pytest.mark.parametrize("name", ["bricard", "spatial_four_bar", "a02", "mobile_robot",
                                  "redundant_manipulator_overactuated"])  # rows reordered
def test_block_products_match_the_dense_matrix(name):
    model = examples.n_four_bar(17) if name == "a02" else examples.ALL[name]()
    rng = np.random.default_rng(1)
    q = model.q0 + 1e-2 * rng.standard_normal(model.nq)
    C = jmbs.constraint_matrix(model, q, 0.3)
    lam, v = rng.standard_normal(model.nc), rng.standard_normal(model.nv)

    @jax.jit  # the traced block code, as the step runs it (not operation by operation)
    def products(model, q, lam, v):
        blocks = constraint_blocks(model, q, 0.3)
        return (weighted_gram(model, blocks, inverse_body_mass(model)),
                blocks_rmatvec(model, blocks, lam), blocks_matvec(model, blocks, v))

    gram, rmatvec, matvec = products(model, q, lam, v)
    A = C @ jmbs.inverse_mass_matrix(model) @ C.T
    np.testing.assert_allclose(gram, A, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(A))))
    np.testing.assert_allclose(rmatvec, C.T @ lam, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(matvec, C @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gram_pattern(model) | (A == 0), True)  # no entry outside the pattern


@pytest.mark.parametrize("name", ["a02", "bricard"])
def test_the_banded_step_matches_the_dense_step(name):
    """A02 with N = 17 (105 velocities: the blocks and the block tridiagonal solve) and
    the Bricard (30 velocities, blocks of 5 along its loop) against the step's
    equations solved densely; and (A02: the same block code) its gradient by central
    differences."""
    model = examples.n_four_bar(17) if name == "a02" else examples.bricard()
    rng = np.random.default_rng(2)
    s = jmbs.StepState.initial(model)
    s = jmbs.StepState(s.q + 1e-3 * rng.standard_normal(model.nq),
                       s.v + 0.1 * rng.standard_normal(model.nv), s.t, s.lam)
    c, d, h = 10 ** rng.uniform(-7, -5, model.nc), rng.uniform(0, 10, model.nc), 1e-2
    new = jmbs.step(model, s, h, compliance=c, damping=d)
    C, Minv = jmbs.constraint_matrix(model, s.q, s.t), jmbs.inverse_mass_matrix(model)
    b = jmbs.velocity_rhs(model, s.q, s.t)
    v_free = s.v + h * Minv @ jmbs.generalized_forces(model, s.q, s.v, s.t)
    lam = np.linalg.solve(C @ Minv @ C.T + np.diag(c / ((h + c * d) * h)),
                          (C @ v_free + b + jmbs.phi(model, s.q, s.t) / (h + c * d)) / h)
    np.testing.assert_allclose(new.lam, lam, rtol=1e-9, atol=1e-12 * np.max(np.abs(lam)))
    np.testing.assert_allclose(new.v, v_free - h * Minv @ C.T @ lam, rtol=1e-9, atol=1e-12)
    if name != "a02":
        return

    def end(scale):
        return run(model, jmbs.RegularizedEuler(h, compliance=scale * c), 5).q[-3]

    eps = 1e-4
    fd = (end(1 + eps) - end(1 - eps)) / (2 * eps)
    assert float(jax.grad(end)(1.0)) == pytest.approx(float(fd), rel=1e-5)
