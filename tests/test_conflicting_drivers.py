"""Drivers that cannot agree fail early, name the drivers, and say why (issue 18, item 2).

The crank below is driven twice about one pin: the two drivers agree when their motions
agree (a consistent redundant driver) and conflict otherwise. Least squares splits a
conflict evenly: for rates 1 and 2 rad/s the best velocity is 1.5 rad/s and each row
misses by 0.5."""

import warnings

import numpy as np
import pytest

import jmbs
from jmbs.examples.basic import four_bar, planar_rod


def twice_driven_crank(motion1: str, motion2: str) -> jmbs.Model:
    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -9.81))
    crank = planar_rod(b, "crank", (0.0, 0.0), (1.0, 0.0))
    b.add_revolute("O", b.ground, crank, point=(0.0, 0.0))
    b.add_driver("d1", joint="O", motion=motion1)
    b.add_driver("d2", joint="O", motion=motion2)
    return b.build()


NAMES = r"'d[12]', 'd[12]' cannot all hold"


def test_consistent_velocity_refuses_conflicting_rates_and_names_the_drivers():
    model = twice_driven_crank("t", "2 * t")
    with pytest.raises(RuntimeError, match=NAMES + r" \(residual up to 0.5\)"):
        jmbs.consistent_velocity(model, model.q0)


def test_a_consistent_redundant_driver_is_accepted():
    model = twice_driven_crank("t", "t")
    v = np.asarray(jmbs.consistent_velocity(model, model.q0))
    np.testing.assert_allclose(v, [0.0, 0.5, 1.0], atol=1e-12)  # the rod turns at 1 rad/s
    rep = jmbs.solvability(model)
    assert rep.conflict is None and "no motion satisfies" not in str(rep)


def test_a_fixed_coordinate_that_the_driver_contradicts_is_named():
    model = four_bar(omega=1.0)
    guess = np.zeros(model.nv)
    guess[2] = 1.5
    with pytest.raises(RuntimeError, match="'drive'"):
        jmbs.consistent_velocity(model, model.q0, guess, fixed=[("crank", "phi")])


@pytest.mark.parametrize("motions, level", [(("t", "2 * t"), "velocity"),
                                            (("t**2", "2 * t**2"), "acceleration")])
def test_analyses_refuse_or_flag_drivers_that_conflict_at_the_start(motions, level):
    """Both pairs agree in position at t = 0; the first differs in rate, the second only
    in acceleration."""
    model = twice_driven_crank(*motions)
    with pytest.raises(ValueError, match=f"at {level} level, .*{NAMES}"):
        jmbs.simulate(model, 1.0)
    with pytest.raises(ValueError, match=f"drivers conflict at the start .* at {level} level"):
        jmbs.kinematics(model, np.linspace(0.0, 1.0, 11))
    rep = jmbs.solvability(model)
    assert f"at {level} level" in rep.conflict
    assert "WARNING: no motion satisfies the constraints here" in str(rep)
    assert rep.to_dict()["conflict"] == rep.conflict


def test_a_run_that_fails_where_drivers_part_says_which():
    """`t` and `t + t^3` agree in position, rate and acceleration at t = 0 and part
    later: the run cannot start-check them, fails, and the error names both drivers
    instead of only suggesting more steps."""
    model = twice_driven_crank("t", "t + t**3")
    with pytest.raises(RuntimeError, match=r"Cause: the prescribed motions conflict by t = .*"
                       + NAMES), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the start's velocity is projected
        jmbs.simulate(model, 1.0, max_steps=2000)
