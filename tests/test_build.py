"""Building a model: the derived values are the ones given, body by body, and the program
that derives them does not grow with the model (issue 31, item 3: build O(n))."""

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs import examples


def _rot(axis, angle):
    """Rodrigues' formula, in NumPy (independent of jmbs's rotations)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _spatial_chain(n: int, *, springs: bool = True):
    """`n` bodies on spherical joints, orientations given three ways in turn (a rotation
    matrix, a quaternion, none), inertia as principal moments or a full tensor; springs
    with a linear law and with a function law alternate."""
    rng = np.random.default_rng(n)
    b = jmbs.ModelBuilder(dim=3, gravity=(0, 0, -9.81))
    given = []
    prev = b.ground
    for k in range(n):
        R = _rot(rng.normal(size=3), rng.uniform(0.1, 3.0))
        pos, omega, vel = np.array([k + 0.5, 0.0, 0.0]), rng.normal(size=3), rng.normal(size=3)
        A = rng.normal(size=(3, 3))
        inertia = np.diag(rng.uniform(1, 1.2, 3)) + 0.02 * (A + A.T) if k % 2 else rng.uniform(1, 1.2, 3)
        kind = ("rotation", "quaternion", None)[k % 3]
        if kind == "rotation":
            orient = {"rotation": R}
        elif kind == "quaternion":  # the same rotation as (w, x, y, z), w > 0
            w = np.sqrt(1 + np.trace(R)) / 2
            orient = {"quaternion": [w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w),
                                     (R[1, 0] - R[0, 1]) / (4 * w)]}
        else:
            R = np.eye(3)
            orient = {}
        body = b.add_body(f"B{k}", mass=1.0 + k, inertia=inertia, position=pos, velocity=vel,
                          angular_velocity=omega, **orient)
        b.add_spherical(f"S{k}", prev, body, point=(k, 0.0, 0.0))
        if springs:
            law = {"stiffness": 10.0 + k} if k % 2 else {"force": lambda L, rate: 3.0 * L}
            b.add_spring_damper(f"K{k}", b.ground, body, (k, 1.0, 0.0), pos, **law)
        given.append((R, pos, vel, omega, np.diag(inertia) if inertia.ndim == 1 else inertia, 1.0 + k))
        prev = body
    return b.build(), given


def test_the_derived_bodies_are_the_ones_given():
    """Positions, rotations (from a matrix, a quaternion or the identity), masses, inertia
    tensors (principal moments or full) and velocities (the angular one in the body frame)
    of every body, against the values given to the builder."""
    model, given = _spatial_chain(7)
    q0, v0 = np.asarray(model.q0).reshape(7, 7), np.asarray(model.v0).reshape(7, 6)
    for k, (R, pos, vel, omega, J, m) in enumerate(given):
        np.testing.assert_allclose(q0[k, :3], pos, atol=1e-15)
        np.testing.assert_allclose(np.asarray(jmbs.rotations.quat_to_rot(q0[k, 3:])), R, atol=1e-14)
        assert q0[k, 3] >= 0
        np.testing.assert_allclose(v0[k, :3], vel, atol=1e-15)
        np.testing.assert_allclose(v0[k, 3:], R.T @ omega, atol=1e-14)
        np.testing.assert_allclose(np.asarray(model.inertia[k]), J, atol=1e-15)
        assert float(model.mass[k]) == m
    params = model.params()
    assert float(params["K1.stiffness"]) == 11.0 and "K0.stiffness" not in params


def _derive_size(model) -> int:
    """Equations (nested programs included) of deriving `model` again from its parameters."""
    def count(jaxpr):
        n = len(jaxpr.eqns)
        for eqn in jaxpr.eqns:
            for p in eqn.params.values():
                for sub in p if isinstance(p, (list, tuple)) else [p]:
                    if isinstance(sub, jax.extend.core.ClosedJaxpr):
                        n += count(sub.jaxpr)
                    elif isinstance(sub, jax.extend.core.Jaxpr):
                        n += count(sub)
        return n

    g = model.params()["gravity"]
    return count(jax.make_jaxpr(lambda x: model.with_params({"gravity": x}).q0)(g).jaxpr)


@pytest.mark.parametrize("make", [
    examples.n_four_bar, lambda n: _spatial_chain(n)[0],
    lambda n: examples.random_mechanism(0, 2, n_bodies=4 * n, n_loops=n // 2, n_drivers=0)],
    ids=["planar chain", "spatial chain with springs", "random planar mechanism"])
def test_the_derivation_does_not_grow_with_the_model(make):
    """Deriving a model reads each field of all bodies or elements of a kind with one
    gather: 8 and 64 units give programs of the same size (the size followed the bodies
    before: a 501-body chain's took 7.4 s to build, 1,001 bodies now about 0.2-0.7 s)."""
    small, large = make(8), make(64)
    assert large.n_bodies > 6 * small.n_bodies
    assert {s.kind for s in large.element_specs} == {s.kind for s in small.element_specs}
    assert _derive_size(large) == _derive_size(small)


def test_a_given_distance_length_keeps_derivatives_finite_where_the_points_coincide():
    """The derivation measures the reference distance only where no length is given: with a
    length given, moving both points onto one place (distance 0) has a finite derivative,
    equal to central differences (the norm of a zero vector would make it NaN)."""
    b = jmbs.ModelBuilder(dim=2, gravity=(0, -9.81))
    b.add_body("a", mass=1.0, inertia=0.1, position=(1.0, 0.0))
    b.add_distance("rod", b.ground, "a", point_i=(0.0, 0.0), point_j=(1.0, 0.0), length=1.0)
    m = b.build()

    def f(x):
        moved = m.with_params({"rod.point_i": x, "rod.point_j": x + jnp.array([0.0, 0.3]) * x[1]})
        return jnp.sum(jmbs.phi(moved, m.q0, 0.0) ** 2)

    x, h = jnp.array([1.0, 0.0]), 1e-6
    g = np.asarray(jax.grad(f)(x))
    fd = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(2)])
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, fd, atol=1e-6)
