"""A run that went wrong never reports success: `jmbs.simulate` watches the energy balance
against the bound its tolerance implies, the rank of the rigid rows against the
mechanism's rank at the start, and reactions against the loads acting, and gives each
breach a result code of its own with the time and the element."""

import math

import diffrax
import numpy as np
import pytest

import jmbs
from jmbs import ModelBuilder, examples

G = 9.81


def test_friction_opt_in_at_the_flat_singular_pose_does_not_report_success():
    """Coulomb friction accepted on the redundant third crank of the parallelogram
    (allow_nonunique=True): as it falls through the flat singular pose the friction,
    fed by the formulation's split of the reactions, locks it; the reaction jumps to
    about 1e5 times the loads. Without the watch this run reported success."""
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    cranks = [examples.planar_rod(b, f"crank{k}", (k, 0), (k, 1)) for k in range(3)]
    coupler = examples.planar_rod(b, "coupler", (0, 1), (2, 1), mass=2.0)
    for k, c in enumerate(cranks):
        b.add_revolute(f"O{k}", b.ground, c, point=(k, 0.0))
        b.add_revolute(f"B{k}", c, coupler, point=(k, 1.0))
    b.add_joint_friction("f", "O2", coulomb=0.1, radius=0.01, allow_nonunique=True)
    model = b.build()
    v0 = jmbs.consistent_velocity(model, model.q0, model.v0.at[2].set(-1.0))
    kwargs = dict(v0=v0, saveat=np.linspace(0.0, 1.8, 61), max_steps=3000)
    with pytest.warns(UserWarning, match=r"Cause: at t = 1\.8 the reaction of '\w+' \(.*\) is .* times "
                                         r"the loads acting.*\(here: 'f'\)"):
        sol = jmbs.simulate(model, 1.8, throw=False, **kwargs)
    assert sol.result == jmbs.RESULTS.reactions_unexplained
    # The states before the lock are right: energy minus work is kept there.
    e = np.asarray(sol.energy - sol.work)[:-1]
    assert np.max(np.abs(e - e[0])) < 1e-5
    with pytest.raises(RuntimeError, match=r"grew far beyond the loads.*Cause: at t = 1\.8"):
        jmbs.simulate(model, 1.8, **kwargs)


def test_a_stiff_spring_with_too_loose_a_tolerance_breaks_the_energy_balance():
    """A 1 kg slider on a 1e4 N/m spring (50 J): at rtol = atol = 1e-2 Tsit5's steps pump
    energy in (about 100 times the start's by t = 2); at 1e-8 the balance holds."""
    b = ModelBuilder(dim=2, gravity=(0.0, 0.0))
    b.add_body("m", mass=1.0, inertia=0.1, position=(1.0, 0.0))
    b.add_prismatic("P", "ground", "m", point=(1.0, 0.0), axis=(1.0, 0.0))
    b.add_spring_damper("S", "ground", "m", (0.0, 0.0), (1.0, 0.0), stiffness=1e4, rest_length=0.9)
    model = b.build()
    loose = diffrax.PIDController(rtol=1e-2, atol=1e-2)
    with pytest.warns(UserWarning, match=r"Cause: at t = [\d.]+ energy minus work moved by .* J from "
                                         r"the start, above the .* J that the tolerance 0\.01 over "
                                         r"\d+ steps allows; the force elements in the balance: 'S'"):
        sol = jmbs.simulate(model, 2.0, throw=False, stepsize_controller=loose)
    assert sol.result == jmbs.RESULTS.energy_drift
    e = np.asarray(sol.energy)
    assert e.max() > 10 * e[0]  # the breach is real: the energy grew tenfold
    with pytest.raises(RuntimeError, match="energy balance broke"):
        jmbs.simulate(model, 2.0, stepsize_controller=loose)
    tight = jmbs.simulate(model, 2.0, stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-8))
    assert tight.result == jmbs.RESULTS.successful
    np.testing.assert_allclose(np.asarray(tight.energy), 50.0, rtol=1e-5)


def test_a_driver_that_locks_the_mechanism_fails_naming_the_time_and_the_joints():
    """The rocker of a Grashof crank-rocker driven at 1 rad/s past its range: the
    mechanism locks (about t = 0.98); the run fails, with the time and the joints."""
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    A, B = examples.four_bar_points(math.pi / 3)
    crank = examples.planar_rod(b, "crank", (0, 0), A)
    coupler = examples.planar_rod(b, "coupler", A, B)
    rocker = examples.planar_rod(b, "rocker", (3.0, 0), B)
    b.add_revolute("O2", b.ground, crank, point=(0.0, 0.0))
    b.add_revolute("A", crank, coupler, point=A)
    b.add_revolute("B", coupler, rocker, point=B)
    b.add_revolute("O4", b.ground, rocker, point=(3.0, 0))
    b.add_driver("drive", joint="O4", motion="1.0 * t")
    model = b.build()
    with pytest.raises(RuntimeError, match=r"Cause: the prescribed motions conflict by t = [\d.]+, at "
                                           r"position level, the rows of ('\w+', ){2}'\w+' cannot all"):
        jmbs.simulate(model, 2.0, saveat=np.linspace(0.0, 2.0, 21), max_steps=2000)


def test_a_run_that_drifts_off_the_parallelograms_branch_reports_rank_changed():
    """The parallelogram with a third crank (p = 1) swinging under gravity, integrated
    without stabilization at rtol = atol = 1e-3: the drift turns the third crank out of
    parallel with the others (by ~1e-4 rad at t = 7.5), which makes the rows of the
    three cranks independent: the mechanism left its branch (rank 11 -> 12). The run
    fails with `rank_changed`; the dense SVD confirms the rank at the states past that
    time, and the default projected run of the same motion keeps rank 11."""
    model = examples.parallelogram()
    v0 = jmbs.consistent_velocity(model, model.q0, model.v0.at[2].set(-1.0))
    kwargs = dict(v0=v0, saveat=np.linspace(0.0, 8.0, 61))
    loose = diffrax.PIDController(rtol=1e-3, atol=1e-3)
    with pytest.warns(UserWarning, match=r"Cause: at t = ([\d.]+) the rank of the rigid rows of C rose "
                                         r"to 12, above the mechanism's rank 11 at the start"):
        sol = jmbs.simulate(model, 8.0, stabilization=None, stepsize_controller=loose, throw=False,
                            **kwargs)
    assert sol.result == jmbs.RESULTS.rank_changed
    q, ranks = np.asarray(sol.q), np.asarray(sol.reactions.rank)
    after = np.flatnonzero(ranks == 12)
    assert after.size and np.all(ranks[: after[0]] == 11)
    crank0, crank2 = q[:, 2], q[:, 8]
    # The cranks are no longer parallel: by more than the rank rule resolves (a few 1e-6 rad
    # here: the first states past the rise, decided at the tolerance, are 4e-6 to 3e-5 out
    # of parallel, depending on the run's rounding), ten thousand times the projected
    # run's 1e-10 below, and past 1e-5 once the decision has a margin.
    dev = np.abs(crank0 - crank2)
    assert np.all(dev[after] > 1e-6) and dev[after[-1]] > 1e-5
    # The dense SVD agrees wherever it decides with a margin of a decade or more (the first
    # states past the rise sit at the tolerance: their margins are below one decade).
    svd = [jmbs.solvability(model, q[k], method="svd") for k in after]
    assert all(r.rank == 12 for r in svd if r.rank_margin >= 1.0)
    assert svd[-1].rank == 12 and svd[-1].rank_margin >= 1.0
    with pytest.raises(RuntimeError, match="rank of the rigid rows of C rose"):
        jmbs.simulate(model, 8.0, stabilization=None, stepsize_controller=loose, **kwargs)
    kept = jmbs.simulate(model, 8.0, **kwargs)
    assert kept.result == jmbs.RESULTS.successful
    assert np.all(np.asarray(kept.reactions.rank) == 11)
    assert np.abs(np.asarray(kept.q)[:, 2] - np.asarray(kept.q)[:, 8]).max() < 1e-10
