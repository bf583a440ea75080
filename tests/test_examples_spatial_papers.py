"""Sizes and ranks of the papers' spatial examples: the parallelogram with a triple
pendulum (DCA paper) and the redundant / overactuated manipulator (kinetostatics paper)."""

import math

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import rank

import jmbs
from jmbs.examples.manipulator import PAPER_Q, redundant_manipulator
from jmbs.examples.spatial_parallelogram import spatial_parallelogram
from jmbs.rotations import quat_to_rot


def counts(model, q=None):
    """`(nc, nv, rank C, p, dof)` at `q` (default: the reference configuration)."""
    q = model.q0 if q is None else q
    r = rank(jmbs.constraint_matrix(model, q, 0.0))
    return model.nc, model.nv, r, model.nc - r, model.nv - r


def rotations(model, q=None):
    q = np.asarray(model.q0 if q is None else q).reshape(model.n_bodies, 7)
    return [np.asarray(quat_to_rot(jnp.asarray(p))) for p in q[:, 3:]]


# ----- spatial parallelogram with a triple pendulum -----

@pytest.fixture(scope="module")
def parallelogram():
    return spatial_parallelogram()


def test_parallelogram_structure_and_counts(parallelogram):
    """Paper: 10 bodies, 15 spherical joints; one redundancy (its 18 x 18 ground
    matrix has rank 17). Absolute coordinates: 45 x 60, rank 44, p = 1, dof = 16."""
    m = parallelogram
    assert m.n_bodies == 10
    assert m.element_names == tuple("ABCDEFGHKLMNPQR")
    assert {m.element(n).kind for n in m.element_names} == {"spherical"}
    assert counts(m) == (45, 60, 44, 1, 16)
    # Grübler undercounts the mobility by the one redundant constraint.
    assert m.nv - m.nc == 15


def test_parallelogram_paper_orientations(parallelogram):
    """The paper's zxz angles: rods 1–4 along (-sin t, cos t, 1)/sqrt 2, rods 5–6 along
    (-sin t, cos t, -1)/sqrt 2; q_i.7 undoes q_0.i, so the platform is not rotated."""
    t = math.pi / 12
    R = rotations(parallelogram)
    lower = np.array([-math.sin(t), math.cos(t), 1.0]) / math.sqrt(2)
    upper = lower * np.array([1.0, 1.0, -1.0])
    for k in range(4):
        np.testing.assert_allclose(R[k][:, 0], lower, atol=1e-14)
    for k in (4, 5):
        np.testing.assert_allclose(R[k][:, 0], upper, atol=1e-14)
    np.testing.assert_allclose(R[6], np.eye(3), atol=1e-14)


@pytest.mark.parametrize("theta", [0.0, math.pi / 6, -math.pi / 4, 2.0])
def test_parallelogram_other_theta(parallelogram, theta):
    """Other platform positions are configurations of the same mechanism (the
    reference model's constraints hold there) with the same counts."""
    q = spatial_parallelogram(theta).q0
    assert np.max(np.abs(np.asarray(jmbs.phi(parallelogram, q, 0.0)))) < 1e-12
    assert counts(parallelogram, q) == (45, 60, 44, 1, 16)


def test_parallelogram_singular_theta(parallelogram):
    """At theta = pi/2 the line L N is parallel to the rods' horizontal direction:
    the upper rods lose their independence, rank 43."""
    q = spatial_parallelogram(math.pi / 2).q0
    assert counts(parallelogram, q) == (45, 60, 43, 2, 17)


def test_parallelogram_assembled_configuration(parallelogram):
    """Assembling from a perturbed guess lands on the one-dof path of the platform
    (a horizontal circle of radius 2 m, no rotation), with the pendulum moved too."""
    m = parallelogram
    guess = m.q0 + 0.02 * np.random.default_rng(2).standard_normal(m.nq)
    q = jmbs.assemble(m, guess)
    platform = np.asarray(q)[6 * 7:7 * 7]
    assert abs(platform[2]) < 1e-10 and abs(np.linalg.norm(platform[:2]) - 2.0) < 1e-10
    np.testing.assert_allclose(np.abs(platform[3]), 1.0, atol=1e-10)
    assert np.max(np.abs(np.asarray(q - m.q0))) > 1e-2
    assert counts(m, q) == (45, 60, 44, 1, 16)


# ----- redundant and overactuated manipulator -----

# (bodies, nc, nv, rank, p, dof) and the joint-only rank: the paper's A is nv x nc
# (42 x 46, rank 42; 54 x 61, rank 54), its null space has dimension p (46 x 4, 61 x 7).
MANIPULATOR = {False: ((7, 46, 42, 42, 4, 0), 39), True: ((9, 61, 54, 54, 7, 0), 51)}


@pytest.fixture(scope="module", params=[False, True], ids=["redundant", "overactuated"])
def manipulator(request):
    return request.param, redundant_manipulator(overactuated=request.param)


def _driver_rows(m):
    return np.concatenate([np.arange(m.nc)[m.rows(n)] for n in m.element_names
                           if m.element(n).kind == "driver"])


def test_manipulator_counts(manipulator):
    """Rows: 5 per revolute, 4 per cylindrical, 1 per driver = the paper's unknowns."""
    over, m = manipulator
    (nb, nc, nv, r, p, dof), r_joints = MANIPULATOR[over]
    names = ("A", "B", "C", "D", "E", "F", "G", "Hc", "Ic", "dA", "dHc", "dIc")
    assert m.element_names == names + (("J", "K", "Lc", "dLc") if over else ())
    assert m.n_bodies == nb
    assert counts(m) == (nc, nv, r, p, dof)
    # Without the drivers the manipulator has its three degrees of freedom.
    C = np.asarray(jmbs.constraint_matrix(m, m.q0, 0.0))
    joints = np.setdiff1d(np.arange(m.nc), _driver_rows(m))
    assert rank(C[joints]) == r_joints == nv - 3


def _skew(r):
    return np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])


def _equilibrium_matrix(m):
    """The paper's `A`: each body's column of `C^T` is a generalized force (force
    global, moment about the centre of mass in the body frame); turn it into the
    force and the moment about the global origin, both global."""
    C = np.asarray(jmbs.constraint_matrix(m, m.q0, 0.0))
    q = np.asarray(m.q0).reshape(m.n_bodies, 7)
    A = np.zeros((m.nv, m.nc))
    for i, R in enumerate(rotations(m)):
        f, n = C[:, 6 * i:6 * i + 3].T, C[:, 6 * i + 3:6 * i + 6].T
        A[6 * i:6 * i + 3] = f
        A[6 * i + 3:6 * i + 6] = _skew(q[i, :3]) @ f + R @ n
    return A


def test_manipulator_equilibrium_matrix(manipulator):
    """`A` has the paper's size and rank, and the turret's rows the paper's pattern
    (eqs. 20–21): for each joint k on it, forces `±R_k` (`I` for A, whose frame is
    global) with moments `r_k x` them, two reaction moments `±R_k (u v)`, the driving
    torque of A along its axis; zero in every other column."""
    over, m = manipulator
    (_, nc, nv, r, _, _), _ = MANIPULATOR[over]
    A = _equilibrium_matrix(m)
    assert A.shape == (nv, nc) and rank(A) == r
    F, M = A[0:3], A[3:6]
    np.testing.assert_allclose(F[:, 0:3], np.eye(3), atol=1e-14)
    params, seen = m.params(), [m.rows("dA").start]
    for k in ("A", "B", "C") + (("J",) if over else ()):
        rows = m.rows(k)
        f, mom = slice(rows.start, rows.start + 3), slice(rows.start + 3, rows.stop)
        np.testing.assert_allclose(F[:, f] @ F[:, f].T, np.eye(3), atol=1e-14)
        np.testing.assert_allclose(M[:, f], _skew(np.asarray(params[f"{k}.point"])) @ F[:, f],
                                   atol=1e-14)
        np.testing.assert_allclose(F[:, mom], 0.0, atol=1e-14)
        np.testing.assert_allclose(M[:, mom].T @ M[:, mom], np.eye(2), atol=1e-14)
        seen += list(range(rows.start, rows.stop))
    np.testing.assert_allclose(np.abs(M[:, m.rows("dA").start]), [0, 0, 1], atol=1e-14)
    np.testing.assert_allclose(np.delete(A[0:6], seen, axis=1), 0.0, atol=1e-14)


@pytest.mark.parametrize("q", [(0.7, 2.0, 2.2), (-1.2, 2.6, 1.9)])
def test_manipulator_other_configurations(manipulator, q):
    """Models built at other `q` are configurations of the same mechanism: the
    reference model's joints hold there and only its drivers (held at the paper's
    values) are violated. The counts do not change."""
    over, m = manipulator
    moved = redundant_manipulator(overactuated=over, q=q)
    res = np.abs(np.asarray(jmbs.phi(m, moved.q0, 0.0)))
    drivers = _driver_rows(m)
    assert np.max(np.delete(res, drivers)) < 1e-12
    assert np.min(res[drivers[:1]]) > 0.1  # the turret turned by q[0]
    assert counts(m, moved.q0) == MANIPULATOR[over][0][1:]
    assert counts(moved) == MANIPULATOR[over][0][1:]


def test_manipulator_paper_configuration():
    """q = (phi01, phi12, phi23): boom 45 degrees, arm 15 degrees above the horizontal."""
    m = redundant_manipulator()
    assert PAPER_Q == (0.0, 3 * math.pi / 4, 5 * math.pi / 6)
    R = rotations(m)
    np.testing.assert_allclose(R[0], np.eye(3), atol=1e-14)
    for body, elevation in ((1, math.pi / 4), (2, math.pi / 12)):
        np.testing.assert_allclose(R[body][:, 0], [math.cos(elevation), 0, math.sin(elevation)],
                                   atol=1e-14)
