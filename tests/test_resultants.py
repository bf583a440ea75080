"""Group resultants: the wrench a set of elements applies to a body or a set of bodies
(issue 16): unique where the mechanics fixes it although its elements are not, equal
between formulations and to the hand-computed support force, guarded like a reaction."""

import jax
import numpy as np
import pytest

import jmbs
from jmbs import ModelBuilder, examples
from jmbs.examples.basic import BRICARD_POINTS, spatial_rod

G = 9.81


def ground_elements(model) -> list[str]:
    """The elements that touch the ground (joints, drivers, Pfaffian contacts)."""
    return [n for n in model.element_names if "ground" in model.element(n).bodies
            and model.element(n).kind not in ("holonomic", "pfaffian")]


def held_bricard():
    """The Bricard (IFToMM A04) held at rest by a driver on J4 (between rods 3 and 4)."""
    b = ModelBuilder(dim=3, gravity=(0.0, -G, 0.0))
    for k in range(5):
        spatial_rod(b, f"rod{k + 1}", BRICARD_POINTS[k], BRICARD_POINTS[k + 1])
    model = examples.bricard()
    for spec in model.element_specs:
        info = model.element(spec.name)
        b.add_revolute(spec.name, *info.bodies, np.asarray(model.params()[f"{spec.name}.point"]),
                       axis=np.asarray(model.params()[f"{spec.name}.axis"]))
    b.add_driver("hold", "J4", "0 * t")
    return b.build()


def test_the_support_of_every_bundled_mechanism_is_unique():
    """The resultant of all ground elements on the ground balances the mechanism's
    weight and inertia: unique on every bundled mechanism, redundant or not."""
    for name in jmbs.bundled_models():
        model = jmbs.load(name)
        rep = jmbs.solvability(model)
        assert rep.is_unique_resultant(ground_elements(model), "ground"), name


def test_bricard_ground_joints_together_are_unique_each_alone_is_not():
    model = examples.bricard()
    rep = jmbs.solvability(model)
    assert not rep.is_unique("J1") and not rep.is_unique("J6")
    assert not rep.is_unique_resultant("J1", "ground")
    assert not rep.is_unique_resultant(["J6"], "ground")
    unique, criterion, margin = rep.resultant_margin(["J1", "J6"], "ground")
    assert unique and criterion < 1e-12 and margin > 5
    # the same wrench seen from the other side: on all five rods
    assert rep.is_unique_resultant(["J1", "J6"], [f"rod{k}" for k in range(1, 6)])


@pytest.mark.parametrize("make", [examples.parallelogram, examples.bricard, examples.spatial_parallelogram,
                                  examples.gripper])
def test_one_element_on_its_body_is_the_element_test(make):
    """The resultant of one element on its body j (or its body i) is the element's
    reaction (or its opposite): the same verdict as `is_unique`."""
    model = make()
    rep = jmbs.solvability(model)
    for name in model.element_names:
        info = model.element(name)
        if info.kind in ("holonomic", "pfaffian"):
            continue
        for body in info.bodies:
            if body != "ground":
                assert rep.is_unique_resultant(name, body) == rep.is_unique(name), (name, body)


def test_resultant_values_agree_between_formulations_and_with_the_support_force():
    """In motion, the resultant of the Bricard's J1 + J6 on the ground is the same under two
    formulations that split J1 and J6 differently, and unique at every state of a batch;
    at rest (held by a driver) it is the rods' weight, its moment their weight's moment."""
    model = examples.bricard()
    q = np.asarray(model.q0)
    v = np.asarray(jmbs.consistent_velocity(model, q, np.linspace(-1.0, 1.0, model.nv)))
    at = [jmbs.reactions(model, q, v, 0.0, f).reactions
          for f in (jmbs.NullSpaceProjection(), jmbs.Elimination())]
    (F1, M1), (F2, M2) = (r.resultant(model, ["J1", "J6"], "ground") for r in at)
    np.testing.assert_allclose(F1, F2, atol=1e-9)
    np.testing.assert_allclose(M1, M2, atol=1e-9)
    J1 = [np.asarray(r.force("J1", allow_nonunique=True)) for r in at]
    assert np.max(np.abs(J1[0] - J1[1])) > 1e-2  # the split differs
    batch = jax.tree.map(lambda a, b: np.stack([a, b]), *at)  # two states' reactions, stacked
    np.testing.assert_array_equal(batch.is_unique_resultant(model, ["J1", "J6"], "ground"), [True, True])
    np.testing.assert_array_equal(batch.is_unique_resultant(model, "J1", "ground"), [False, False])
    np.testing.assert_allclose(batch.resultant(model, ["J1", "J6"], "ground")[0][1], F2, atol=1e-9)

    held = held_bricard()
    reactions = jmbs.statics(held, held.q0).reactions
    F, M = reactions.resultant(held, ["J1", "J6"], "ground")
    weight = np.array([0.0, -5 * G, 0.0])  # five 1 kg rods
    centres = np.asarray(held.q0).reshape(5, 7)[:, :3]
    np.testing.assert_allclose(F, weight, atol=1e-9)
    np.testing.assert_allclose(M, np.cross(centres, weight / 5).sum(axis=0), atol=1e-9)
    about = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(reactions.resultant(held, ["J1", "J6"], "ground", about=about)[1],
                               np.cross(centres - about, weight / 5).sum(axis=0), atol=1e-9)


def test_a_unique_resultant_can_be_differentiated_a_non_unique_one_cannot():
    """d/dm of the held Bricard's support force is the weight's derivative (the
    resultant of J1 + J6 is unique); the resultant of J1 alone refuses, unless asked."""
    held = held_bricard()
    rank = jmbs.solvability(held).rank

    def support(m, group, allow=False):
        model = held.with_params({"rod2.mass": m})
        r = jmbs.statics(model, model.q0, rank=rank).reactions
        return r.resultant(model, group, "ground", allow_nonunique=allow)[0][1]

    assert float(jax.grad(support)(1.0, ["J1", "J6"])) == pytest.approx(-G, rel=1e-9)
    with pytest.raises(Exception, match="not unique"):
        jax.grad(support)(1.0, ["J1"])
    assert np.isfinite(float(jax.grad(support)(1.0, ["J1"], True)))


def test_bad_groups_are_named():
    model = examples.bricard()
    rep = jmbs.solvability(model)
    with pytest.raises(ValueError, match="empty group"):
        rep.is_unique_resultant([], "ground")
    with pytest.raises(ValueError, match="'J3' connects rod2 and rod3, none of which"):
        rep.is_unique_resultant(["J1", "J3"], "ground")
    with pytest.raises(ValueError, match="unknown body 'rod9'"):
        rep.is_unique_resultant(["J1"], "rod9")
    with pytest.raises(ValueError, match="unknown element 'J9'"):
        rep.is_unique_resultant(["J9"], "ground")


def test_resultant_decisions_do_not_depend_on_units():
    """Metres to millimetres: the same verdicts and criteria for the spatial
    parallelogram's ground connection and its parts."""
    from tests.test_solvability import _rescale_q, _rescaled

    model = examples.spatial_parallelogram()
    mm = _rescaled(model, 1000.0, 1000.0)
    a, b = jmbs.solvability(model), jmbs.solvability(mm, _rescale_q(model, model.q0, 1000.0))
    ground = ground_elements(model)
    for group in (ground, ground[:2], ground[:4], [ground[0]]):
        ua, ca, _ = a.resultant_margin(group, "ground")
        ub, cb, _ = b.resultant_margin(group, "ground")
        assert ua == ub
        assert cb == pytest.approx(ca, rel=1e-6, abs=1e-12)
    assert a.is_unique_resultant(ground, "ground")


def test_analyze_decides_resultants_from_the_command_line():
    import json

    from typer.testing import CliRunner

    from jmbs.cli import app

    result = CliRunner().invoke(app, ["analyze", "bricard", "--json", "--resultant", "J1,J6@ground",
                                      "--resultant", "J1@ground"])
    assert result.exit_code == 0, result.output
    both, one = json.loads(result.stdout)["resultants"]
    assert both["group"] == ["J1", "J6"] and both["on"] == ["ground"] and both["unique"]
    assert not one["unique"]
    result = CliRunner().invoke(app, ["analyze", "bricard", "--resultant", "J1,J6"])
    assert result.exit_code != 0 and "GROUP@ON" in result.output
