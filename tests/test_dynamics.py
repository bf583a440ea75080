"""Dynamics: formulations, simulate, reactions, against exact solutions, papers and each other."""

import dataclasses
import gc
import math

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sp

import jmbs
from jmbs.examples import bricard, four_bar, mobile_robot, pendulum
from jmbs.internal import HOST_USES, host_evaluation

G = 9.81


def _states(model, n, seed=0):
    """Assembled configurations with consistent velocities near the reference."""
    qs, ok = jmbs.sample_configurations(model, n, key=seed, scale=0.2)
    rng = np.random.default_rng(seed)
    out = []
    for q in np.asarray(qs)[np.asarray(ok)]:
        v = jmbs.consistent_velocity(model, q, rng.normal(size=model.nv))
        out.append((q, np.asarray(v)))
    return out


# ---------------------------------------------------------------- four-bar of paper 004

def test_four_bar_local_complement_svd_and_direct_form_agree():
    """Blajer's orthogonal complement from local constraint frames (eqs. 17-18),
    the SVD null space and the direct form (eq. 38) give the same accelerations."""
    m = four_bar()
    M, Minv = np.asarray(jmbs.mass_matrix(m)), np.linalg.inv(np.asarray(jmbs.mass_matrix(m)))
    states = _states(m, 6)
    assert len(states) >= 4
    for q, v in states:
        C = np.asarray(jmbs.constraint_matrix(m, q))
        h = np.asarray(jmbs.generalized_forces(m, q, v))
        c0 = -np.asarray(jmbs.gamma(m, q, v))  # the paper's C q'' + c0 = 0
        direct = Minv @ (h - C.T @ np.linalg.solve(C @ Minv @ C.T, c0 + C @ Minv @ h))
        for f in (jmbs.NullSpaceProjection(basis="local"), jmbs.NullSpaceProjection(basis="svd"),
                  jmbs.NullSpaceProjection(basis="qr")):
            a = np.asarray(jmbs.reactions(m, q, v, formulation=f).v_dot)
            np.testing.assert_allclose(a, direct, rtol=0, atol=1e-12 * np.abs(direct).max())
        # Independent of the direct form: the accelerations satisfy the constraints at
        # acceleration level (C a + c0 = 0), and M a - h, the constraint forces, does no
        # work on any admissible velocity (it is orthogonal to the null space of C,
        # computed here with NumPy's SVD): d'Alembert's principle.
        np.testing.assert_allclose(C @ direct, -c0, rtol=0, atol=1e-10 * np.abs(c0).max())
        _, s, Vh = np.linalg.svd(C)
        Z = Vh[np.sum(s > 1e-10 * s[0]):].T
        assert Z.shape[1] == 1  # the four-bar has one degree of freedom
        resid = Z.T @ (M @ direct - h)
        assert np.abs(resid).max() <= 1e-10 * np.abs(h).max(), resid


def test_local_complement_rejects_redundant_models():
    with pytest.raises(ValueError, match="needs independent constraints.*basis='svd'"):
        jmbs.reactions(bricard(), bricard().q0, bricard().v0,
                       formulation=jmbs.NullSpaceProjection(basis="local"))


# ---------------------------------------------------------------- formulations agree

FORMULATIONS = {
    "nullspace-svd": jmbs.NullSpaceProjection(),
    "nullspace-qr": jmbs.NullSpaceProjection(basis="qr"),
    "pseudoinverse": jmbs.Pseudoinverse(),
    "augmented-lagrangian": jmbs.AugmentedLagrangian(),
    "elimination-auto": jmbs.Elimination(),
}


def test_formulations_agree_on_motion_and_unique_reactions():
    """Mobile robot (p = 2): every formulation gives the same accelerations and the
    same unique reactions; the minimum-norm ones also agree on all multipliers."""
    m = mobile_robot(d=0.02, hitch=0.3)  # turning, trolley at an angle
    q = m.q0
    v = jmbs.consistent_velocity(m, q, np.random.default_rng(1).normal(size=m.nv))
    out = {k: jmbs.reactions(m, q, v, 0.0, formulation=f) for k, f in FORMULATIONS.items()}
    ref = out["nullspace-svd"]
    unique = np.asarray(ref.reactions.unique)
    assert set(np.array(m.element_names)[~unique]) == {"B", "C", "W1", "W2", "W3", "W4"}
    scale = np.abs(np.asarray(ref.reactions.multipliers)).max()
    for k, r in out.items():
        np.testing.assert_allclose(r.v_dot, ref.v_dot, atol=1e-8 * np.abs(ref.v_dot).max(), err_msg=k)
        for name in np.array(m.element_names)[unique]:
            np.testing.assert_allclose(r.reactions.force(name), ref.reactions.force(name),
                                       atol=1e-7 * scale, err_msg=f"{k} {name}")
    for k in ("pseudoinverse", "nullspace-qr"):
        np.testing.assert_allclose(out[k].reactions.multipliers, ref.reactions.multipliers,
                                   atol=1e-7 * scale, err_msg=k)
    # Elimination puts the redundant load elsewhere: the non-unique reactions differ.
    diff = np.abs(np.asarray(out["elimination-auto"].reactions.multipliers - ref.reactions.multipliers))
    assert diff.max() > 1e-3 * scale


def test_reactions_obey_newton_on_each_body():
    """Independent check of the physical reactions: for a single pendulum, the rod
    force on the mass plus gravity equals mass times acceleration."""
    m = pendulum()
    for q, v in _states(m, 4):
        r = jmbs.reactions(m, q, v, formulation=jmbs.NullSpaceProjection())
        force = np.asarray(r.reactions.force("rod"))
        np.testing.assert_allclose(force + np.array([0.0, -G]), np.asarray(r.v_dot)[:2], atol=1e-10)
        # along the rod (unit length): tension = centripetal force + weight component
        x = np.asarray(q)[:2]
        np.testing.assert_allclose(-force @ x, v[:2] @ v[:2] - G * x[1], rtol=1e-10)


def test_reactions_vmap_over_a_trajectory_equals_loop():
    m = mobile_robot()
    sol = jmbs.simulate(m, 0.4, saveat=np.linspace(0, 0.4, 5), reactions=True)
    f = jmbs.NullSpaceProjection().prepare(m, m.q0, 0.0)
    batched = jax.vmap(lambda q, v, t: jmbs.reactions(m, q, v, t, formulation=f))(sol.q, sol.v, sol.ts)
    for i in range(len(sol.ts)):
        one = jmbs.reactions(m, sol.q[i], sol.v[i], sol.ts[i])
        np.testing.assert_allclose(batched.v_dot[i], one.v_dot, atol=1e-12)
        np.testing.assert_allclose(batched.reactions.forces[i], one.reactions.forces, atol=1e-9)
        np.testing.assert_allclose(sol.reactions.forces[i], one.reactions.forces, atol=1e-9)
        assert np.array_equal(batched.reactions.unique[i], one.reactions.unique)


@pytest.mark.parametrize("method", [jmbs.NullSpace(), jmbs.QR(), jmbs.SVD(), jmbs.RankComparison(),
                                    jmbs.QR(rtol=0.5), jmbs.NullSpace(ctol=1e3)],
                         ids=["nullspace", "qr", "svd", "rank", "qr-rtol", "nullspace-ctol"])
def test_reactions_uniqueness_follows_the_chosen_method(method):
    """The reactions' uniqueness is the solvability report's with the same method
    and tolerances (the last two: tolerances that change the verdicts)."""
    m = mobile_robot(d=0.02, hitch=0.3)
    q = m.q0
    v = jmbs.consistent_velocity(m, q, np.random.default_rng(1).normal(size=m.nv))
    r = jmbs.reactions(m, q, v, uniqueness=method).reactions
    rep = jmbs.solvability(m, q, method=method)
    expected = [rep.is_unique(n) for n in m.element_names]
    np.testing.assert_array_equal(r.unique, expected)
    np.testing.assert_array_equal(
        r.component_unique, np.concatenate([rep.unique_components(n) for n in m.element_names]))
    default = np.asarray(jmbs.reactions(m, q, v).reactions.unique)
    if method.rtol == 0.5:  # every rank drops: nothing is unique
        assert not any(expected) and default.any()
    if method.ctol == 1e3:  # every criterion passes: everything is unique
        assert all(expected) and not default.all()


def test_simulate_uniqueness_follows_the_chosen_method():
    m = mobile_robot()
    kw = dict(saveat=np.linspace(0, 0.4, 5))
    assert not np.asarray(jmbs.simulate(m, 0.4, **kw).reactions.unique).all()
    sol = jmbs.simulate(m, 0.4, uniqueness=jmbs.NullSpace(ctol=1e3), **kw)
    assert np.asarray(sol.reactions.unique).all()


def test_a_stated_rank_needs_no_values():
    """`init` with the rank given works on traced states; without it, one clear error."""
    m = mobile_robot()
    f = jmbs.NullSpaceProjection().prepare(m, m.q0, 0.0)
    assert f.state.rank == m.nc - 2  # p = 2
    qs = jnp.stack([m.q0, m.q0])
    stated = jax.vmap(lambda q: jmbs.reactions(
        m, q, m.v0, 0.0, jmbs.NullSpaceProjection(rank=f.state.rank)).v_dot)(qs)
    np.testing.assert_allclose(stated[0], jmbs.reactions(m, m.q0, m.v0, 0.0, f).v_dot, atol=1e-12)
    with pytest.raises(ValueError, match="prepare it on a concrete model"):
        jax.vmap(lambda q: jmbs.reactions(m, q, m.v0, 0.0).v_dot)(qs)


# ---------------------------------------------------------------- Bricard A04

def test_bricard_a04_motion_violation_and_energy():
    m = bricard()
    ts = np.linspace(0.0, 10.0, 4001)
    sol = jmbs.simulate(m, 10.0, formulation=jmbs.NullSpaceProjection(), stabilization=jmbs.Projection(),
                        saveat=ts, reactions=False)
    x = np.asarray(jax.vmap(lambda q: m.point(q, "rod3", jnp.array([-0.5, 0.0, 0.0])))(sol.q))[:, 0]
    np.testing.assert_allclose(x[0], 1.0, atol=1e-12)
    first = np.flatnonzero(ts < 3.75)
    i = first[np.argmin(x[first])]
    assert abs(ts[i] - 2.50) <= 0.02 and abs(x[i] + 1.0) < 1e-4, (ts[i], x[i])
    later = np.flatnonzero((ts > 3.75) & (ts < 6.25))
    j = later[np.argmax(x[later])]
    assert abs(ts[j] - 5.0) <= 0.05 and abs(x[j] - 1.0) < 1e-4, (ts[j], x[j])
    assert float(np.max(sol.violation)) < 1e-10
    energy = np.asarray(sol.energy)
    assert np.max(np.abs(energy - energy[0])) / abs(energy[0]) < 1e-6


# ---------------------------------------------------------------- A01 pendulum, exact solution

def _pendulum_exact(t, length=1.0, theta0=math.pi / 2):
    """Released from rest at angle theta0 from the downward vertical:
    sin(theta/2) = k sn(K - w t, k), k = sin(theta0/2) (Jacobi elliptic functions)."""
    k = math.sin(theta0 / 2)
    K = sp.ellipk(k**2)
    sn, _, _, _ = sp.ellipj(K - math.sqrt(G / length) * np.asarray(t), k**2)
    theta = 2 * np.arcsin(k * sn)
    return np.stack([np.sin(theta) * length, -np.cos(theta) * length], axis=-1)


def test_pendulum_a01_long_run_against_exact_solution():
    m = pendulum()
    ts = np.linspace(0.0, 2000.0, 401)
    sol = jmbs.simulate(m, 2000.0, solver=diffrax.Dopri8(), saveat=ts, reactions=False,
                        stepsize_controller=diffrax.PIDController(rtol=1e-11, atol=1e-11),
                        max_steps=400_000)
    err = np.abs(np.asarray(sol.q)[:, :2] - _pendulum_exact(ts)).max()
    assert err < 1e-5, err
    assert float(np.max(sol.violation)) < 1e-12
    np.testing.assert_allclose(sol.energy, sol.energy[0], atol=1e-8 * G)  # relative to m g L


@pytest.mark.parametrize("solver, order", [(diffrax.Heun(), 2), (diffrax.Bosh3(), 3)])
def test_convergence_order_of_explicit_solvers(solver, order):
    """Constant steps without stabilization: the error at t = 1 s against the exact
    solution falls as h^order (slope of a least-squares fit over four step sizes)."""
    m = pendulum()
    hs = np.array([0.02, 0.01, 0.005, 0.0025])
    errs = []
    for h in hs:
        sol = jmbs.simulate(m, 1.0, solver=solver, dt0=h, stabilization=None, saveat=[1.0],
                            reactions=False, max_steps=1000)
        errs.append(np.abs(np.asarray(sol.q)[-1, :2] - _pendulum_exact(1.0)).max())
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert abs(slope - order) < 0.2, (slope, errs)


# ---------------------------------------------------------------- mobile robot of paper 000
# The elimination variants of §4.3-4.4 (same motion to 1e-8, unique reactions the same
# to 1e-6 relative, the others different) run in tests/test_experiments.py through
# experiments/dynamics_mobile_robot.py.


# ---------------------------------------------------------------- Penalty

def _hung_bar():
    """A bar hung from the ground by two revolutes A, B (redundant: their x
    components share one unknown) and a pendulum hanging from it by C."""
    b = jmbs.ModelBuilder(dim=2, gravity=(2.0, -G))
    bar = b.add_body("bar", mass=2.0, inertia=2.0 / 12, position=(0.0, 0.0))
    bob = b.add_body("bob", mass=1.0, inertia=0.01, position=(0.3, -0.4), angle=0.6)
    b.add_revolute("A", b.ground, bar, point=(-0.5, 0.0))
    b.add_revolute("B", b.ground, bar, point=(0.5, 0.0))
    b.add_revolute("C", bar, bob, point=(0.0, 0.0))
    return b.build()


def test_penalty_converges_to_rigid_unique_reactions_and_splits_the_rest_by_stiffness():
    m = _hung_bar()
    rep = jmbs.solvability(m)
    assert rep.is_unique("C") and not rep.is_unique("A") and not rep.is_unique("B")
    assert list(rep.unique_components("A")) == [False, True]
    t1, ts = 0.5, [0.5]
    rigid = jmbs.simulate(m, t1, saveat=ts)
    # Explicit steps suffice for these stiffnesses; the dampers scale with the springs
    # (one time constant), so spring and damper forces split alike.
    kw = dict(saveat=ts, stabilization=None, stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-8))
    errors, ratios = [], []
    for k in (1e4, 1e5, 1e6):
        tau = 2 / math.sqrt(k)  # about critical damping for the unit masses
        for kb in (k, 4 * k):
            stiffness = {"A": k, "B": kb, "C": k}
            sol = jmbs.simulate(m, t1, formulation=jmbs.Penalty(
                stiffness, {n: tau * s for n, s in stiffness.items()}), **kw)
            assert bool(np.asarray(sol.reactions.unique).all())  # compliance sets every reaction
            if kb == k:
                errors.append(max(
                    np.abs(np.asarray(sol.reactions.force("C") - rigid.reactions.force("C"))).max(),
                    abs(float(sol.reactions.force("A")[-1, 1] - rigid.reactions.force("A")[-1, 1]))))
            ratios.append(float(sol.reactions.force("A")[-1, 0] / sol.reactions.force("B")[-1, 0]))
    # Unique reactions (C, and A's y component) converge like 1/k ...
    assert errors[2] < 1e-3 and errors[0] / errors[1] > 5 and errors[1] / errors[2] > 5, errors
    # ... while the redundant x components split as the stiffnesses do: A/B = kA/kB.
    np.testing.assert_allclose(ratios[0::2], 1.0, rtol=1e-2)
    np.testing.assert_allclose(ratios[1::2], 0.25, rtol=1e-2)


# ---------------------------------------------------------------- bad input

def test_elimination_of_the_wrong_rows_names_the_elements():
    m = mobile_robot()
    with pytest.raises(ValueError, match=r"still dependent.*B, C, W1, W2|still dependent.*W3, W4"):
        jmbs.reactions(m, m.q0, m.v0, formulation=jmbs.Elimination([("W4", "Fn")]))
    with pytest.raises(ValueError, match="removes independent constraints"):
        jmbs.reactions(m, m.q0, m.v0, formulation=jmbs.Elimination([("A", "Fx"), ("W4", "Fn")]))
    with pytest.raises(ValueError, match="element 'C' has no component 'Fz'"):
        jmbs.reactions(m, m.q0, m.v0, formulation=jmbs.Elimination([("C", "Fz"), ("W4", "Fn")]))


def test_bad_initial_state_and_options():
    m = pendulum()
    thresholds = gc.get_threshold()
    with pytest.raises(ValueError, match="q0 contains NaN"):
        jmbs.simulate(m, 1.0, q0=np.array([np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match="violates the constraints by 0.625.*'rod'.*jmbs.assemble"):
        jmbs.simulate(m, 1.0, q0=np.array([1.5, 0.0, 0.0]))
    with pytest.warns(UserWarning, match="projected onto them") as record:
        sol = jmbs.simulate(m, 0.1, q0=np.array([1.0 + 1e-8, 0.0, 0.0]), saveat=[0.0])
    assert abs(float(np.linalg.norm(sol.q[0, :2])) - 1.0) < 1e-13
    # The warning names this line, not a frame inside jmbs; and simulate, raising or
    # not, leaves the garbage collector's thresholds as they were (it defers full
    # collections only while it runs).
    assert {w.filename for w in record if "projected" in str(w.message)} == {__file__}
    assert gc.get_threshold() == thresholds
    with pytest.raises(ValueError, match="stabilization must be"):
        jmbs.simulate(m, 1.0, stabilization="projection")
    with pytest.raises(ValueError, match="gives no value for the elements rod"):
        jmbs.simulate(m, 1.0, formulation=jmbs.Penalty({}, 1.0))


def test_a_start_off_the_constraints_is_projected_as_inside_the_program():
    """A concrete start off the constraints is projected before the run (on the host,
    the integration's program leaves the projection out); a traced one inside the
    program. The same state and motion either way, and the warning's figures are the
    projection's."""
    m = pendulum()
    q0 = np.array([1.0 + 1e-8, 0.0, 0.0])
    v0 = np.array([0.3, 1.0, 1.0])  # the radial component is off the constraints
    ts = np.linspace(0.0, 0.5, 6)
    with pytest.warns(UserWarning, match=r"q moved by 1e-08, v by 0\.3\b"):
        host = jmbs.simulate(m, 0.5, q0=q0, v0=v0, saveat=ts)
    f = jmbs.NullSpaceProjection().prepare(m, m.q0, 0.0)
    traced = jax.jit(lambda q, v: jmbs.simulate(m, 0.5, q0=q, v0=v, saveat=ts, formulation=f))(q0, v0)
    np.testing.assert_allclose(host.v[0], [0.0, 1.0, 1.0], atol=1e-12)
    for a, b in ((host.q, traced.q), (host.v, traced.v), (host.reactions.forces, traced.reactions.forces)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-10)


def test_failed_run_raises_or_returns_a_code():
    m = pendulum()
    with pytest.raises(eqx.EquinoxRuntimeError, match="maximum number of solver steps"):
        jmbs.simulate(m, 10.0, max_steps=3, saveat=[10.0], reactions=False)
    sol = jmbs.simulate(m, 10.0, max_steps=3, saveat=[10.0], reactions=False, throw=False)
    assert bool(sol.result == jmbs.RESULTS.max_steps_reached)
    assert "maximum number of solver steps" in sol.message


def test_the_end_time_alone_saves_the_last_step():
    """`saveat=[t1]` saves the last step's end (which `Projection` projects as every
    step's), not an interpolated point projected again: the same state, reactions and
    violation as the last of 101 saved states, a final-state gradient that matches
    central differences, and inf where the run stops before t1 (an unreached save
    time's value), forward and backward."""
    m = four_bar()
    end, every = jmbs.simulate(m, 1.0, saveat=[1.0]), jmbs.simulate(m, 1.0)
    assert float(end.ts[0]) == 1.0 and float(end.violation[0]) < 1e-13
    for got, want in ((end.q, every.q), (end.v, every.v), (end.v_dot, every.v_dot),
                      (end.reactions.multipliers, every.reactions.multipliers)):
        np.testing.assert_allclose(got[0], want[-1], rtol=0, atol=1e-11 * max(1.0, np.abs(want[-1]).max()))
    for t1, kw in ((10.0, {}), (-10.0, {"backward": True})):
        sol = jmbs.simulate(m, t1, max_steps=3, saveat=[t1], throw=False, **kw)
        assert bool(sol.result == jmbs.RESULTS.max_steps_reached)
        assert np.isposinf(np.asarray(sol.ts)).all() and np.isposinf(np.asarray(sol.q)).all()

    p = pendulum()
    f = jmbs.NullSpaceProjection().prepare(p, p.q0, 0.0)

    def final_x(g):
        return jmbs.simulate(p.with_params({"gravity": jnp.stack([0.0, -g])}), 0.5, formulation=f,
                             saveat=[0.5], reactions=False).q[-1, 0]

    fd = (final_x(9.81 + 1e-4) - final_x(9.81 - 1e-4)) / 2e-4
    np.testing.assert_allclose(jax.jit(jax.grad(final_x))(9.81), fd, rtol=1e-6)


def test_one_saved_time_is_reported_as_among_many():
    """A single saved state is evaluated unbatched (`each_state`), many through
    `jax.vmap`: the same projected state, accelerations, reactions, uniqueness,
    violations and energy at a time that both save, for the adaptive run and paper
    002's stepper; and the gradient of one saved reaction matches central differences."""
    m = bricard()
    for kw, t in (({}, 0.5), ({"solver": jmbs.RegularizedEuler(1e-2)}, 0.3)):
        one = jmbs.simulate(m, 1.0, saveat=[t], **kw)
        many = jmbs.simulate(m, 1.0, saveat=jnp.linspace(0.0, 1.0, 11), **kw)
        k = int(np.argmin(np.abs(np.asarray(many.ts) - t)))
        assert float(many.ts[k]) == pytest.approx(t, abs=1e-12)
        pairs = [(one.q, many.q), (one.v, many.v), (one.violation, many.violation),
                 (one.velocity_violation, many.velocity_violation), (one.energy, many.energy),
                 (one.reactions.multipliers, many.reactions.multipliers)]
        if not kw:  # the stepper's accelerations are its steps' differences, saved apart
            pairs.append((one.v_dot, many.v_dot))
        for got, want in pairs:
            assert got.shape[0] == 1
            np.testing.assert_allclose(got[0], want[k], rtol=0,
                                       atol=1e-11 * max(1.0, float(np.abs(want[k]).max())))
        for got, want in ((one.reactions.unique, many.reactions.unique),
                          (one.reactions.component_unique, many.reactions.component_unique)):
            np.testing.assert_array_equal(got[0], want[k])

    p = pendulum()
    f = jmbs.NullSpaceProjection().prepare(p, p.q0, 0.0)

    def tension(g):
        sol = jmbs.simulate(p.with_params({"gravity": jnp.stack([0.0, -g])}), 0.5, formulation=f,
                            saveat=[0.3])
        return sol.reactions.multipliers[0, 0]

    fd = (tension(9.81 + 1e-4) - tension(9.81 - 1e-4)) / 2e-4
    np.testing.assert_allclose(jax.jit(jax.grad(tension))(9.81), fd, rtol=1e-6)


def test_a_traced_run_evaluates_its_saved_dynamics_where_they_are_read():
    """Under `jax.jit` the saved states' accelerations, reactions, violations and energy
    are traced where they are read: a caller that reads the states alone has none of
    them in its program, one that returns the solution whole evaluates them once.
    Read, or with the solution returned whole, they equal the concrete run's; and a run
    that failed raises where they are read, as where the states are."""
    m = bricard()
    mass = float(m.params()["rod1.mass"])
    f = jmbs.default_formulation(m).prepare(m, m.q0, 0.0)

    def run(x, **kw):
        return jmbs.simulate(m.with_params({"rod1.mass": x}), 0.5, formulation=f, saveat=[0.2, 0.5],
                             **kw)

    states_only = str(jax.make_jaxpr(lambda x: run(x).q)(mass))
    reactions_read = str(jax.make_jaxpr(lambda x: run(x).reactions.multipliers)(mass))
    assert "_post" not in states_only and "_post" in reactions_read
    # Returned whole, the five deferred fields share one evaluation.
    whole_eqns = jax.make_jaxpr(run)(mass).jaxpr.eqns
    assert sum(e.params.get("name") == "_post" for e in whole_eqns) == 1

    concrete = run(mass)
    whole = jax.jit(run)(mass)
    read = jax.jit(lambda x: (run(x).reactions.multipliers, run(x).v_dot))(mass)
    for got, want in ((whole.q, concrete.q), (whole.v_dot, concrete.v_dot), (read[1], concrete.v_dot),
                      (whole.reactions.multipliers, concrete.reactions.multipliers),
                      (read[0], concrete.reactions.multipliers), (whole.energy, concrete.energy),
                      (whole.violation, concrete.violation),
                      (whole.velocity_violation, concrete.velocity_violation)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * max(1.0, float(np.abs(want).max())))
    np.testing.assert_array_equal(whole.reactions.unique, concrete.reactions.unique)

    for read_out in (lambda s: s.q, lambda s: s.reactions.multipliers, lambda s: s.energy):
        with pytest.raises(RuntimeError, match="jmbs.simulate failed"):
            jax.block_until_ready(jax.jit(lambda x: read_out(run(x, max_steps=2)))(mass))


def test_an_implicit_solver_runs_with_the_default_projection():
    """An implicit solver's root finder gets the controller's tolerances and norm through
    the solver wrappers (the projection's, the health watch's): Kvaerno5 follows Tsit5."""
    m = four_bar()
    implicit = jmbs.simulate(m, 0.5, solver=diffrax.Kvaerno5(), saveat=[0.5], reactions=False)
    explicit = jmbs.simulate(m, 0.5, saveat=[0.5], reactions=False)
    assert float(implicit.violation[0]) < 1e-12
    np.testing.assert_allclose(implicit.q, explicit.q, rtol=0, atol=1e-6)


def test_result_codes_per_batch_element_under_vmap():
    """A batch with one bad member (NaN mass) gives a code for that member only."""
    m = pendulum()
    f = jmbs.NullSpaceProjection().prepare(m, m.q0, 0.0)

    def run(mass):
        return jmbs.simulate(m.with_params({"mass.mass": mass}), 1.0, formulation=f, saveat=[1.0],
                             reactions=False, throw=False, max_steps=500)

    sol = jax.jit(jax.vmap(run))(jnp.array([1.0, jnp.nan, 2.0, -1.0]))
    ok = np.asarray(sol.ok)
    assert ok[0] and ok[2] and not ok[1] and not ok[3], sol.message
    # The bad designs get their own code, not the integrator's.
    bad = np.asarray(sol.result == jmbs.RESULTS.invalid_design)
    np.testing.assert_array_equal(bad, [False, True, False, True])
    assert "not a physical design" in sol.message
    np.testing.assert_allclose(sol.q[0], sol.q[2], atol=1e-12)  # the mass does not change the motion
    with pytest.raises(Exception, match="jmbs.simulate failed"):
        jax.block_until_ready(jax.jit(jax.vmap(lambda mass: jmbs.simulate(
            m.with_params({"mass.mass": mass}), 1.0, formulation=f, saveat=[1.0], reactions=False,
            max_steps=500).q))(jnp.array([1.0, jnp.nan])))


def test_new_gains_tolerances_and_penalties_reuse_the_compiled_programs():
    """Values users vary are array leaves (issue 14, item 4): a second run with other
    Baumgarte gains, step-size tolerances, formulation rtol, projection tolerance,
    penalty stiffness and damping or augmented-Lagrangian penalty traces nothing
    (JAX reports every trace through `jax.monitoring`)."""
    traces = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, _, **kw: traces.append(event) if event.endswith("jaxpr_trace_duration") else None)
    model = four_bar()
    runs = [
        lambda x: jmbs.simulate(model, 0.2, formulation=jmbs.NullSpaceProjection(rtol=1e-8 * x),
                                stabilization=jmbs.Baumgarte(5.0 * x, 7.0 * x),
                                stepsize_controller=diffrax.PIDController(rtol=1e-6 / x, atol=1e-7 / x),
                                reactions=False),
        lambda x: jmbs.simulate(model, 0.02, formulation=jmbs.Penalty(stiffness=1e5 * x, damping=10.0 * x),
                                stabilization=jmbs.Projection(tol=1e-12 * x), dt0=1e-4, reactions=False),
        lambda x: jmbs.simulate(model, 0.2, formulation=jmbs.AugmentedLagrangian(penalty=1e7 * x),
                                reactions=False),
    ]
    for run in runs:
        # The compiled programs throughout (as test_new_method_tolerances_reuse_the_
        # compiled_programs): the host's switch to a structure's compiled program depends
        # on the structure's earlier uses in this process, not on the values.
        with host_evaluation(False):
            first = run(1.0).q[-1]
            before = len(traces)
            second = run(2.0).q[-1]
        assert len(traces) == before
        assert np.all(np.isfinite(second)) and not np.array_equal(first, second)


def test_the_saved_states_program_runs_on_the_host_then_compiles_once_beside_the_run(caplog):
    """A structure's first `simulate`s evaluate the saved states' program (accelerations,
    reactions, uniqueness) with NumPy: nothing is compiled for it. Once the structure's
    host budget is spent, a call compiles it in a thread while the integration runs, and
    then calls that program: lowered once, not again by the call (a mismatch of its
    arguments with the integration's outputs would compile it twice), with the host's
    results to rounding. 37 save times: shapes of their own."""
    model = pendulum()

    def run():
        return jmbs.simulate(model, 0.1, saveat=np.linspace(0.0, 0.1, 37))

    def lowered():
        return [r for r in caplog.records if r.getMessage().startswith("Compiling jit(_solution)")]

    jax.config.update("jax_log_compiles", True)  # the process's setting: the thread reads it
    try:
        with caplog.at_level("WARNING"):
            first = run()
            assert not lowered()
            for _ in range(HOST_USES):
                last = run()
    finally:
        jax.config.update("jax_log_compiles", False)
    assert len(lowered()) == 1, [r.getMessage()[:80] for r in lowered()]
    host, compiled = (jax.tree.leaves(eqx.filter(dataclasses.replace(sol, stats={}), eqx.is_array))
                      for sol in (first, last))
    assert len(host) == len(compiled) > 10
    for h, c in zip(host, compiled):  # every output, the reactions' uniqueness included
        np.testing.assert_allclose(np.asarray(h), np.asarray(c), rtol=1e-10, atol=1e-10)
    assert np.all(np.isfinite(np.asarray(first.reactions.forces)))
