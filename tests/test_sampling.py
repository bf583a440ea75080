"""`sample_configurations`: samples on the constraints, on the reference's branch, with
the singular ones counted, and the batch program against one walk at a time (issue 32,
item 4)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs import examples
from jmbs.internal import sample_walk as walk
from jmbs.internal import sample_walks as walks_jit


def _closure(model, qs, ts=None):
    """Largest `|Phi|` of the holonomic rows over the samples, by `jmbs.phi` one by one."""
    ts = np.zeros(len(qs)) if ts is None else ts
    hol = np.asarray(model.holonomic_rows)
    return max(float(np.abs(np.asarray(jmbs.phi(model, q, t)) * hol).max()) for q, t in zip(qs, ts))


def test_sarrus_samples_close_and_stay_above_the_fold():
    """The Sarrus linkage from its plate at 0.4 m: every sample closes the constraints and
    keeps the plate above the folded pose (z = 0, where the plate could pass through the
    ground) and below the stretched one (z = 0.5), however large the steps; none is
    singular, and they spread over most of the branch."""
    model = examples.sarrus()
    z = model.coordinate_names.index("plate.z")
    s = jmbs.sample_configurations(model, 160, key=1, scale=0.6)
    qs, ok = s
    assert bool(np.all(ok))
    assert _closure(model, np.asarray(qs)) < 1e-10
    height = np.asarray(qs)[:, z]
    assert np.all((height > 0.0) & (height < 0.5))
    assert height.min() < 0.25 and height.max() > 0.45
    assert s.generic_rank == 29 and s.n_singular == 0
    assert np.all(np.asarray(s.rank) == 29)
    assert np.mean(np.asarray(s.accepted)) > 0.8


def _assembly_mode(model, qs):
    """Sign of the cross product of the coupler (A -> B) and the rocker (O4 -> B) of
    `examples.four_bar`: which of its two assembly modes a configuration is in (it
    never vanishes on a crank-rocker: the transmission angle stays away from 0 and pi)."""
    q = np.asarray(qs).reshape(len(qs), -1, 3)
    O4 = np.asarray(model.params()["O4.point"])
    A, B = 2 * q[:, 0, :2], 2 * q[:, 2, :2] - O4
    u, v = B - A, B - O4
    return np.sign(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0])


def test_four_bar_walk_keeps_its_assembly_mode():
    """A crank-rocker four-bar (Grashof, crank shortest): with steps of a radian the crank
    goes all the way round, and every sample keeps the reference's assembly mode."""
    model = examples.four_bar()
    qs, ok = jmbs.sample_configurations(model, 120, key=3, scale=1.0)
    assert bool(np.all(ok))
    assert _closure(model, np.asarray(qs)) < 1e-10
    assert np.all(_assembly_mode(model, np.asarray(qs)) == _assembly_mode(model, model.q0[None]))
    crank = np.mod(np.asarray(qs)[:, 2], 2 * math.pi)
    assert np.ptp(crank) > 5.0


def _flat_parallelogram() -> jmbs.Model:
    """The parallelogram of `examples.parallelogram` built flat: three unit cranks pinned
    at x = 0, 1, 2 along the ground line, their tips joined by the coupler (rank 10 of a
    generic 11)."""
    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -9.81))
    cranks = [b.add_body(f"crank{k}", mass=1.0, inertia=1 / 12, position=(k + 0.5, 0.0))
              for k in range(3)]
    coupler = b.add_body("coupler", mass=1.0, inertia=1 / 6, position=(2.0, 0.0))
    for k, c in enumerate(cranks):
        b.add_revolute(f"O{k}", b.ground, c, point=(float(k), 0.0))
        b.add_revolute(f"B{k}", c, coupler, point=(k + 1.0, 0.0))
    return b.build()


def test_samples_held_on_a_singular_configuration_are_all_counted():
    """The flat parallelogram with a crank held (`fixed`): the walks cannot leave the
    singular configuration, so every sample is singular: rank 10 below the generic rank,
    found at assembled configurations near it since no sample moved (11 on the
    parallelogram's branch, 12 on the branches that meet it there, where the cranks are
    not parallel and no constraint is redundant)."""
    model = _flat_parallelogram()
    with pytest.warns(UserWarning, match=r"sample_configurations: 20 of 20 samples are at singular"):
        s = jmbs.sample_configurations(model, 20, key=0, fixed=[("crank0", "phi")])
    assert bool(np.all(s.converged)) and s.generic_rank in (11, 12)
    assert np.all(np.asarray(s.rank) == 10) and s.n_singular == 20
    np.testing.assert_allclose(np.asarray(s.q), np.broadcast_to(model.q0, (20, model.nq)), atol=1e-12)


def test_perturbed_samples_at_singular_configurations_are_counted():
    """The former sampler (`method="perturb"`) lands the parallelogram on its flat
    configurations (cranks along the ground, where the rank drops, or rounding leaves the
    decision marginal, even one rank too high): the samples counted at or near singular
    configurations are flat (crank angles a multiple of pi, found independently), and a
    warning says how many."""
    model = examples.parallelogram()
    assert model.body_names[:3] == ("crank0", "crank1", "crank2")
    with pytest.warns(UserWarning, match=r"sample_configurations: \d+ of 100 samples are at "
                                         r"singular configurations .* and \d+ at or near one"):
        s = jmbs.sample_configurations(model, 100, key=0, method="perturb")
    ok = np.asarray(s.converged)
    # Gauss-Newton ends within about sqrt(eps) of a singular configuration.
    off = np.abs(np.sin(np.asarray(s.q).reshape(len(ok), -1, 3)[:, :3, 2])).max(axis=1)
    flagged = s.singular | s.near_singular
    assert s.generic_rank == 11 and flagged.sum() >= 5
    assert np.all(off[flagged] < 1e-5) and np.all(off[ok & ~flagged] > 1e-7)
    assert s.n_singular + s.n_near_singular == flagged.sum()
    assert f"{s.n_singular} singular, {s.n_near_singular} near-singular" in repr(s)


def test_batch_equals_one_walk_at_a_time():
    """The vmapped, jitted walks equal the same walks run one by one (the same draws)."""
    model = examples.four_bar()
    free = (True,) * model.nv
    times = jnp.zeros((3, 5))
    key = jax.random.key(5)
    batch = walks_jit(model, key, model.q0, jnp.asarray(0.0), times, jnp.asarray(0.5), free, 1e-12,
                      False)
    z = jax.random.normal(key, times.shape + (model.nv,))
    one = jax.jit(lambda zz, tt: walk(model, model.q0, 0.0, zz, tt, 0.5, free, 1e-12, False))
    for c in range(times.shape[0]):
        single = one(z[c], times[c])
        for b, x in zip(batch, single):
            np.testing.assert_allclose(np.asarray(b[c]), np.asarray(x), atol=1e-12)


def test_driven_samples_follow_the_driver():
    """A driven slider-crank at random times: each sample closes the constraints at its
    own time (the walks visit their times in order, predicting the driver's motion)."""
    model = examples.four_bar(omega=1.0)
    ts = np.random.default_rng(0).uniform(0.0, 3.0, 40)
    qs, ok = jmbs.sample_configurations(model, 40, key=2, t=ts)
    assert bool(np.all(ok))
    assert _closure(model, np.asarray(qs), ts) < 1e-10
    crank0 = float(model.q0[2])
    np.testing.assert_allclose(np.asarray(qs)[:, 2], crank0 + ts, atol=1e-9)


def test_redundant_rows_are_decided_on_the_constraints():
    """The Bricard (one redundant constraint, rank 29 all along its motion): every sample's
    rank is 29 with a clear margin. Decided off the constraints (before the candidate's
    Newton iterations converge), the redundant row is not quite dependent and the rank
    comes out 30 with a marginal decision (a quarter of 1,000 samples at this scale did,
    with 6 chord iterations instead of 10)."""
    model = examples.bricard()
    s = jmbs.sample_configurations(model, 48, key=2, scale=0.5)
    assert bool(np.all(s.converged))
    assert np.all(np.asarray(s.rank) == 29) and s.n_near_singular == 0 and s.n_singular == 0
