"""One rank rule (issue 30, item 2): at and near singular configurations the
formulation's rank, the reactions' rank, the statics' rank and the report's rank are
the same number, decided once on the equilibrated C. The expected ranks come from the
mechanisms' geometry, not from jmbs: regular configurations have the generic rank, and
a singular one (links collinear) loses exactly one."""

import math

import numpy as np
import pytest

import jmbs
from jmbs import examples


def parallelogram_at(phi: float) -> np.ndarray:
    """The parallelogram with a third crank with its cranks at angle `phi` from the x
    axis (closed form): crank k from (k, 0) to (k + cos phi, sin phi), the coupler on
    their tips. At phi = 0 every link lies on the x axis (flat, singular)."""
    c, s = math.cos(phi), math.sin(phi)
    return np.array([*(v for k in range(3) for v in (k + 0.5 * c, 0.5 * s, phi)), 1.0 + c, s, 0.0])


def slider_crank_at(theta: float) -> jmbs.Model:
    """Driven at the slider: dead centre (crank and rod collinear) at theta = 0."""
    return examples.slider_crank(theta=theta, slider_motion="-0.1 * t")


def _cases():
    par, a02 = examples.parallelogram(), examples.n_four_bar(3)
    for phi, rank in [(0.0, 10), (1e-4, 11), (0.3, 11)]:
        yield f"parallelogram phi={phi:g}", par, parallelogram_at(phi), rank
    for theta, rank in [(0.0, 17), (1e-4, 20), (0.4, 20)]:
        # A02 with N = 3: 7 bodies, 21 coordinates, one degree of freedom (rank 20); the
        # cranks' crossing of the horizontal (theta = 0) flattens each of its 3 loops.
        yield f"A02 theta={theta:g}", a02, examples.n_four_bar_configuration(3, theta), rank
    for theta, rank in [(0.0, 8), (1e-4, 9), (0.3, 9)]:
        model = slider_crank_at(theta)
        yield f"slider-crank theta={theta:g}", model, np.asarray(model.q0), rank
    bricard = examples.bricard()
    yield "bricard", bricard, np.asarray(bricard.q0), 29


CASES = list(_cases())


@pytest.mark.parametrize("name, model, q, rank", CASES, ids=[c[0] for c in CASES])
def test_formulation_reactions_statics_and_report_decide_the_same_rank(name, model, q, rank):
    report = jmbs.solvability(model, q)
    if rank is not None:
        assert report.rank == rank, name
    v = np.zeros(model.nv)
    ranks = {"report": report.rank,
             "statics": int(jmbs.statics(model, q).reactions.rank)}
    for f in (jmbs.NullSpaceProjection(), jmbs.Pseudoinverse(), jmbs.DivideAndConquer()):
        ranks[type(f).__name__] = f.init(model, q, 0.0).rank
        ranks[f"reactions/{type(f).__name__}"] = int(jmbs.reactions(model, q, v, 0.0, f).reactions.rank)
    for method in ("svd", "qr", "dca", "rank"):
        ranks[f"report/{method}"] = jmbs.solvability(model, q, method=method).rank
    assert len(set(ranks.values())) == 1, ranks


def test_the_a02_chain_loses_one_rank_per_loop_at_the_crossing():
    """Independent of the rank rule: at the crossing each of the 3 loops is flat and
    loses one rank (its cranks and coupler collinear), below the generic rank that the
    regular configurations share; the report calls it singular."""
    model = examples.n_four_bar(3)
    regular = jmbs.solvability(model, examples.n_four_bar_configuration(3, 0.4))
    crossing = jmbs.solvability(model, examples.n_four_bar_configuration(3, 0.0))
    assert crossing.rank == regular.rank - 3
    assert crossing.singular and not regular.singular
    assert crossing.generic_rank == regular.rank
