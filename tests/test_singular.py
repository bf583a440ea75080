"""Singular is not redundant: the generic rank beside the rank at a configuration, and
the singular configurations a motion meets (issue 18, item 1)."""

import math
import warnings

import numpy as np
import pytest

import jmbs
from jmbs import examples
from jmbs.examples.basic import four_bar


def slider_driven_crank(theta: float) -> jmbs.Model:
    """A slider-crank built at crank angle `theta`, driven at the slider: at dead centre
    (theta = 0) the slider's motion does not determine the crank's."""
    return examples.slider_crank(theta=theta, slider_motion="-0.1 * t")


def test_dead_centre_is_reported_singular_not_redundant():
    """9 velocity coordinates, 9 constraint rows: away from dead centre C is square and
    regular (no redundancy); at dead centre (crank and rod collinear) it loses one rank
    and would pass for p = 1, dof = 1 by its rank alone."""
    dead = jmbs.solvability(slider_driven_crank(0.0))
    assert (dead.rank, dead.redundancy, dead.dof) == (8, 1, 1)
    assert dead.rank_margin > 5  # a clean rank drop: the margin cannot tell
    assert dead.generic_rank == 9 and dead.singular
    assert "SINGULAR" in str(dead) and "not a redundant mechanism" in str(dead)
    assert ", singular" in repr(dead)
    info = dead.to_dict()
    assert info["generic_rank"] == 9 and info["singular"] is True
    regular = jmbs.solvability(slider_driven_crank(0.3))
    assert regular.rank == regular.generic_rank == 9 and not regular.singular
    assert "generic rank = rank" in str(regular)


@pytest.mark.parametrize("make", [examples.parallelogram, examples.bricard])
def test_a_redundant_mechanism_is_not_singular(make):
    """Redundancy that holds at every configuration is generic: the parallelogram's
    p = 1 and the Bricard's p = 1 are not flagged."""
    rep = jmbs.solvability(make())
    assert rep.redundancy == 1
    assert rep.generic_rank == rep.rank and not rep.singular


def test_sweep_reports_the_generic_rank_and_its_singular_configurations():
    model = slider_driven_crank(0.3)
    q_dead = np.asarray(slider_driven_crank(0.0).q0)
    sw = jmbs.solvability_sweep(model, np.stack([np.asarray(model.q0), q_dead]))
    assert sw.generic_rank == 9
    np.testing.assert_array_equal(sw.singular, [False, True])


def test_marginal_decisions_do_not_set_the_generic_rank():
    """Random configurations of the parallelogram land on its flat singular
    configurations, where a marginal decision may come out one rank too high (12 where
    the mechanism has 11): the generic rank counts only clear decisions, so the regular
    samples are not called singular."""
    model = examples.parallelogram()
    qs, ok = jmbs.sample_configurations(model, 195, key=0, method="perturb", warn=False)
    sw = jmbs.solvability_sweep(model, np.asarray(qs)[np.asarray(ok)])
    high = sw.rank > 11
    assert high.any() and np.all(sw.rank_margin[high] < 2)  # the case this guards
    assert sw.generic_rank == 11
    assert not sw.singular[sw.rank == 11].any()


def _crossings(ts, x):
    """Times where `x` changes sign, by linear interpolation between samples."""
    k = np.flatnonzero(np.diff(np.sign(x)) != 0)
    return ts[k] - x[k] * (ts[k + 1] - ts[k]) / (x[k + 1] - x[k])


def test_simulate_warns_where_the_motion_passes_a_singular_configuration():
    """IFToMM A02 with N = 1: the cranks swing through horizontal (all links collinear
    with the ground: the rank of C drops from 8 to 7) and through vertical (regular).
    The warning names the horizontal passages, found independently as the sign changes
    of the crank angle's sine, to within one save interval, and no others."""
    model = examples.n_four_bar(1)
    ts = np.linspace(0.0, 3.0, 151)
    with pytest.warns(UserWarning, match="passes a singular configuration") as record:
        sol = jmbs.simulate(model, 3.0, saveat=ts)
    assert len([w for w in record if "singular" in str(w.message)]) == 1
    generic, events = sol.singular_configurations()
    angle = np.asarray(sol.q)[:, 2]  # crank0
    horizontal = _crossings(ts, np.sin(angle))
    assert generic == 8 and len(horizontal) == 3 and len(_crossings(ts, np.cos(angle))) == 3
    assert [kind for _, kind in events] == ["through"] * 3
    np.testing.assert_allclose([t for t, _ in events], horizontal, atol=ts[1] - ts[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # before the first passage: no warning
        jmbs.simulate(model, 0.6, saveat=ts[ts <= 0.6])


def test_simulate_from_a_singular_start():
    """Driven at the slider from dead centre, the crank's motion is not determined (it
    may turn either way). Moving the slider at once needs an infinite crank speed:
    refused before the run, saying why instead of failing late. Starting at rest
    (slider motion -0.1 t^3) the run goes, with a warning that it starts singular and
    that the formulation's rank was decided there."""
    with pytest.raises(ValueError, match="the start is a singular configuration: the rank of C is "
                       "8 there but 9 .*at velocity level"):
        jmbs.simulate(slider_driven_crank(0.0), 0.5)
    with pytest.warns(UserWarning, match=r"at t = 0 \(at\).* The run starts at one: the "
                      "formulation's rank was decided there, below the rank 9"):
        jmbs.simulate(slider_driven_crank(0.0).with_motions({"drive": lambda t: -0.1 * t**3}), 0.5)


def test_kinematics_warns_at_the_parallelogram_bifurcation_and_refuses_a_singular_start():
    """A parallelogram four-bar (a = c = 1, b = d = 3) driven from theta = pi/3 at
    -1 rad/s is flat (singular: it may branch to the antiparallelogram) at t = pi/3."""
    ts = np.linspace(0.0, 1.6, 81)
    with pytest.warns(UserWarning, match="passes a singular configuration") as record:
        out = jmbs.kinematics(four_bar(math.pi / 3, a=1.0, b=3.0, c=1.0, d=3.0, omega=-1.0), ts)
    (event,) = [w for w in record if "singular" in str(w.message)]
    t_warned = float(str(event.message).split("at t = ")[1].split(" ")[0])
    assert abs(t_warned - math.pi / 3) < 1e-3
    assert np.all(np.asarray(out.rank) == 9)  # no saved time lands on it
    with pytest.raises(ValueError, match="start .* is a singular configuration"):
        jmbs.kinematics(four_bar(0.0, a=1.0, b=3.0, c=1.0, d=3.0, omega=-1.0), ts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a Grashof four-bar that stays regular
        jmbs.kinematics(four_bar(math.pi / 3, omega=-1.0), np.linspace(0.0, 1.0, 21))
