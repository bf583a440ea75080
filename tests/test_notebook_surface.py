"""What a notebook user sees: short summaries instead of dumps, names for every column,
joint coordinates and point sensors, a table of a run (issue 18, item 5)."""

import math
import re
import tomllib
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import jmbs
from jmbs import examples

ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def test_version_is_the_installed_one():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert jmbs.__version__ == metadata.version("jmbs") == pyproject["project"]["version"]


@pytest.mark.parametrize("name", ["slider_crank", "bricard", "mobile_robot", "andrews_squeezer"])
def test_a_model_prints_as_a_short_summary(name):
    model = jmbs.load(name)
    line, text, page = repr(model), str(model), model._repr_html_()
    assert "\n" not in line and f"nq={model.nq}" in line and f"nc={model.nc}" in line
    assert len(text.splitlines()) <= 3 + 1 + 13  # head, table head, 12 rows and "... more"
    assert model.element_names[0] in text and not ADDRESS.search(text)
    assert page.startswith("<table>") and model.element_names[0] in page


def test_names_of_the_coordinates():
    planar, spatial = examples.four_bar(), examples.bricard()
    assert len(planar.coordinate_names) == planar.nq and len(planar.velocity_names) == planar.nv
    assert planar.coordinate_names[:3] == ("crank.x", "crank.y", "crank.phi")
    assert spatial.coordinate_names[3:7] == ("rod1.p0", "rod1.p1", "rod1.p2", "rod1.p3")
    assert spatial.velocity_names[:6] == tuple(f"rod1.{c}" for c in ("vx", "vy", "vz", "wx", "wy",
                                                                       "wz"))


@pytest.fixture(scope="module")
def driven_run():
    model = examples.four_bar(omega=2.0)  # the crank turns at 2 rad/s from pi/3
    v0 = jmbs.consistent_velocity(model, model.q0)
    return model, jmbs.simulate(model, 1.0, v0=v0, saveat=np.linspace(0.0, 1.0, 21))


def test_results_print_as_summaries(driven_run):
    model, sol = driven_run
    assert repr(sol) == str(sol).splitlines()[0]
    assert re.fullmatch(r"Solution\(21 saved times, t = 0 \.\. 1, success, max \|Phi\| = .*\)", repr(sol))
    assert repr(sol.reactions) == "Reactions(21 states, 5 elements: 5 unique, 0 not unique)"
    assert "<table>" in sol._repr_html_() and "drive" in sol._repr_html_()
    sweep = jmbs.solvability_sweep(model, np.asarray(sol.q))
    assert repr(sweep).startswith("SolvabilitySweep(nullspace, 21 configurations, rank 9..9, "
                                  "generic rank 9, 0 singular")
    kin = jmbs.kinematics(model, np.asarray(sol.ts))
    assert repr(kin).startswith("KinematicsSolution(21 times, t = 0 .. 1")
    for thing in (model, sol, sol.reactions, sweep, kin, jmbs.solvability(model)):
        assert not ADDRESS.search(repr(thing)) and len(repr(thing)) < 200


def test_a_run_as_a_table_and_a_dataframe(driven_run):
    model, sol = driven_run
    table = sol.table(model)
    assert list(table)[:1 + model.nq] == ["t", *model.coordinate_names]
    np.testing.assert_array_equal(np.column_stack([table[n] for n in model.velocity_names]), sol.v)
    # The driven joint's angle is the driver's law, measured independently of the solver.
    np.testing.assert_allclose(table["O2.angle"], 2.0 * np.asarray(sol.ts), atol=1e-9)
    np.testing.assert_array_equal(table["drive.M"], -np.asarray(sol.reactions.multipliers)[:, -1])
    assert {"energy", "work", "violation", "O4.angle", "A.Fx"} <= set(table)
    frame = sol.to_dataframe(model)
    assert frame.shape == (21, len(table)) and list(frame.columns) == list(table)


def test_point_sensor_on_the_crank(driven_run):
    """The crank tip (0.5 m from the crank's centre) moves on a circle of radius 1 at
    a * omega = 2 m/s."""
    model, sol = driven_run
    pos, vel = jmbs.point_trajectory(model, sol.q, "crank", (0.5, 0.0), sol.v)
    np.testing.assert_allclose(np.linalg.norm(pos, axis=1), 1.0, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(vel, axis=1), 2.0, atol=1e-8)
    angle = np.unwrap(np.arctan2(pos[:, 1], pos[:, 0]))
    np.testing.assert_allclose(angle, math.pi / 3 + 2.0 * np.asarray(sol.ts), atol=1e-9)


def test_spatial_joint_angles_are_continuous_through_turns():
    """A spatial four-bar whose crank is driven through 1.3 turns (8 rad): the joint
    coordinate follows the driver's law past +-pi, unwrapped along the trajectory."""
    model = examples.spatial_four_bar(motion=lambda t: 2.0 * t)
    ts = np.linspace(0.0, 4.0, 81)
    kin = jmbs.kinematics(model, ts)
    angles = jmbs.joint_coordinates(model, kin.q)
    np.testing.assert_allclose(angles["O2.angle"], 2.0 * ts, atol=1e-9)
    one = jmbs.joint_coordinates(model, kin.q[-1])["O2.angle"]  # alone: wrapped
    assert -math.pi < one <= math.pi and abs(one - (8.0 - 2 * math.pi * 1)) < 1e-9
    assert jmbs.joint_coordinate_names(model) == ("O2.angle", "A.angle", "B.angle", "O4.angle")
