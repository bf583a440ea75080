"""The planar mechanisms of the papers: sizes and ranks of their constraint matrices.

Mobile robot with trolley: Wojtyra & Frączek (papers/000), §4. Gripper: Pękal &
Frączek (papers/003), §4.1-4.3.
"""

import math

import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs.examples.gripper import gripper, gripper_slide
from jmbs.examples.mobile_robot import (
    mobile_robot,
    mobile_robot_configuration,
    mobile_robot_configurations,
    slider_displacement,
    steering_angle,
    steering_manoeuvre,
    steering_range,
)


def rank(A) -> int:
    s = np.linalg.svd(np.asarray(A), compute_uv=False)
    return int(np.sum(s > 1e-9 * s[0])) if s.size else 0


def without(C, rows):
    return np.delete(np.asarray(C), rows, axis=0)


# ----- mobile robot -----

# Steering angles of the front wheel over the open range (-90, 90) degrees, the
# straight-ahead position included (there the three normals are parallel).
DELTAS = np.radians([-80.0, -50.0, -20.0, 0.0, 10.0, 40.0, 70.0, 85.0])
HITCH = 0.3


@pytest.fixture(scope="module")
def robot():
    """The robot with the slide as the driver's time, `t = d`, so that one model (one
    compilation) serves every configuration of the sweep."""
    return mobile_robot(hitch=HITCH, motion=lambda t: t)


@pytest.fixture(scope="module")
def sweep():
    ds = np.asarray(slider_displacement(DELTAS))
    return ds, mobile_robot_configurations(ds, hitch=HITCH)


def test_robot_steering_closed_form():
    lo, hi = steering_range()
    ds = np.asarray(slider_displacement(DELTAS))
    assert np.all((lo < ds) & (ds < hi))
    np.testing.assert_allclose(np.asarray(steering_angle(ds)), DELTAS, atol=1e-12)
    # The dead centres bound the range: delta = -pi/2 at its top, +pi/2 at its bottom.
    np.testing.assert_allclose(np.asarray(slider_displacement(np.array([-1, 1]) * math.pi / 2)),
                               [hi, lo], atol=1e-12)


def test_robot_sizes_and_ranks(robot, sweep):
    # Paper §4.2: n = 21, m = 17 holonomic rows, h = 5 knife edges; rank(Phi_q) = 17,
    # rank(Psi) = 4, r = rank(C) = 20, p = 17 + 5 - 20 = 2, in every nonsingular
    # configuration; the one degree of freedom left is the rolling.
    assert (robot.nv, robot.nc) == (21, 22)
    hol = robot.holonomic_rows
    assert hol.sum() == 17 and (~hol).sum() == 5
    ds, qs = sweep
    default = mobile_robot(d=0.05, hitch=-0.4)
    cases = [(robot, d, q) for d, q in zip(ds, qs)] + [(default, 0.0, default.q0)]
    for model, t, q in cases:
        # The sweep's configurations close the constraints, the driver included.
        assert np.max(np.abs(np.asarray(jmbs.phi(model, q, t)))) < 1e-12
        C = np.asarray(jmbs.constraint_matrix(model, q, t))
        r = rank(C)
        assert (rank(C[hol]), rank(C[~hol]), r) == (17, 4, 20)
        assert (model.nc - r, model.nv - r) == (2, 1)


def test_robot_configurations_match_assembly(robot, sweep):
    # An independent computation: Gauss-Newton from a perturbed guess, with the
    # platform's pose and the hitch angle held, lands on the closed form.
    ds, qs = sweep
    fixed = [("platform", "x"), ("platform", "y"), ("platform", "phi"), ("trolley", "phi")]
    kick = 0.02 * np.sin(np.arange(21.0))
    kick[[0, 1, 2, 20]] = 0.0
    for k in (0, 3, 6):
        q = jmbs.assemble(robot, qs[k] + kick, ds[k], fixed=fixed)
        np.testing.assert_allclose(np.asarray(q), qs[k], atol=1e-9)


def test_robot_dependencies(robot, sweep):
    ds, qs = sweep
    for d, q in zip(ds, qs):
        (x1, y1, p1), (x2, y2, p2), (x3, y3, p3) = q[:9].reshape(3, 3)
        # (ii) The contact points of W1 and W2 are the wheel centres (pivots B and C);
        # their normals and the W3/W4 axle (the platform's y axis) meet at one point.
        lines = [(np.array([x, y]), np.array([-math.sin(p), math.cos(p)]))
                 for x, y, p in ((x1, y1, p1), (x2, y2, p2), (x3, y3, p3))]
        (o1, n1), (o2, n2), (o3, n3) = lines
        if abs(d) < 1e-12:
            cross = [n1[0] * n[1] - n1[1] * n[0] for n in (n2, n3)]
            np.testing.assert_allclose(cross, 0.0, atol=1e-12)  # parallel: meet at infinity
            continue
        s = np.linalg.solve(np.stack([n1, -n2], axis=1), o2 - o1)
        P = o1 + s[0] * n1
        assert abs(n3[0] * (P - o3)[1] - n3[1] * (P - o3)[0]) < 1e-9 * (1 + np.linalg.norm(P))
        # The wheels are steered mirror-symmetrically about the axle.
        assert abs(p2 - p1 + p3 - p1) < 1e-12
        # (i) W3 and W4 are coaxial: their rows of C coincide.
        C = np.asarray(jmbs.constraint_matrix(robot, q, d))
        np.testing.assert_allclose(C[robot.rows("W3")], C[robot.rows("W4")], atol=1e-12)


def test_robot_eliminations(robot, sweep):
    # The paper's numbering (1-based): 6 is C_y, 18 W1, 19 W2, 21 W4.
    cy, w1, w2 = robot.rows("C").start + 1, robot.rows("W1").start, robot.rows("W2").start
    w3, w4, ax = robot.rows("W3").start, robot.rows("W4").start, robot.rows("A").start
    assert (cy, w1, w2, w4) == (5, 17, 18, 20)
    ds, qs = sweep
    for d, q in zip(ds, qs):
        C = np.asarray(jmbs.constraint_matrix(robot, q, d))
        # Its three variants {C_y, W4}, {W1, W4}, {W2, W4} (and {W3, W4}) remove both
        # dependencies: 20 independent rows remain.
        for rows in ((cy, w4), (w1, w4), (w2, w4), (w3, w4)):
            assert rank(without(C, rows)) == 20, rows
        # Rows outside a dependency cannot be eliminated: A is unique, and W1, W2
        # together leave the coaxial pair untouched.
        for rows in ((ax, w4), (w1, w2)):
            assert rank(without(C, rows)) == 19, rows


@pytest.mark.parametrize("d, hitch", [(0.0, 0.0), (-0.05, 0.4)])
def test_robot_initial_velocity_and_drive(d, hitch):
    model = mobile_robot(d=d, hitch=hitch, speed=1.5)
    v0 = np.asarray(model.v0)
    assert abs(v0[0] - 1.5) < 1e-15 and np.linalg.norm(v0) > 1.5
    # Rolling without side slip, consistent with the drive (C v + b = 0).
    res = np.asarray(jmbs.velocity_residual(model, model.q0, model.v0, 0.0))
    assert np.max(np.abs(res)) < 1e-12
    drive = model.element_specs[model.element_names.index("drive")]
    params = {k: model.params()[f"drive.{k}"] for k in drive.param_keys}
    assert float(drive.motion(0.0, params)) == 0


def test_robot_manoeuvre():
    # Fig. 2 of the paper: turn right, straight, turn left, straight.
    a = 0.35
    got = [float(steering_manoeuvre(t, a)) for t in (0.0, 0.5, 3.0, 5.5, 8.0, 10.5)]
    np.testing.assert_allclose(got, [0, 0, -a, 0, a, 0], atol=1e-15)
    lo, hi = steering_range()
    ds = np.asarray(slider_displacement(steering_manoeuvre(jnp.linspace(0, 11, 111), a)))
    assert ds.max() > 0 > ds.min() and lo < ds.min() and ds.max() < hi  # d > 0 steers right


def test_robot_errors():
    with pytest.raises(ValueError, match="steering range"):
        mobile_robot_configuration(0.5)
    with pytest.raises(ValueError, match="unknown geometry"):
        mobile_robot(wheelbase=1.0)


# ----- gripper -----

# Paper §4.1-4.3: the kinetostatic matrix A (bodies' equilibrium x reactions and
# drives) is C^T: 12 x 12 of rank 11, 12 x 13 of rank 12, 12 x 14 of rank 12.
# One degree of freedom, not driven (§4.1) or driven in Cr (§4.2); a second drive
# in Bt makes it overactuated (§4.3).
GRIPPER = {"none": (12, 11, 1, 1), "torque": (13, 12, 1, 0), "overactuated": (14, 12, 2, 0)}


@pytest.mark.parametrize("actuation", list(GRIPPER))
def test_gripper_sizes_and_ranks(actuation):
    nc, r, p, dof = GRIPPER[actuation]
    model = gripper(actuation)
    C = np.asarray(jmbs.constraint_matrix(model, model.q0, 0.0))
    assert C.T.shape == (12, nc)
    assert (rank(C), model.nc - rank(C), model.nv - rank(C)) == (r, p, dof)
    # The redundancy of the translational triangle is in the locked rotations: with
    # Dt's moment row (and, overactuated, the Bt drive) removed the rows are independent.
    dt_m = model.rows("Dt").start + 1
    rows = (dt_m, model.rows("drive_Bt").start) if actuation == "overactuated" else (dt_m,)
    assert rank(without(C, rows)) == r == model.nc - len(rows)


def test_gripper_geometry():
    model = gripper()
    q = np.asarray(model.q0).reshape(4, 3)
    assert abs(q[3, 2] + math.pi / 6) < 1e-15  # phi4 = -pi/6
    C = np.asarray(jmbs.constraint_matrix(model, model.q0, 0.0))

    def direction(row, body):
        f = C[row, 3 * body:3 * body + 2]
        return f / np.linalg.norm(f)

    # The reaction directions of the paper's FBD: Bt along y, Ct along x, Dt along (1, 1).
    for joint, body, expected in (("Bt", 0, (0, 1)), ("Ct", 1, (1, 0)), ("Dt", 0, (1, 1))):
        e = np.asarray(expected, float) / np.linalg.norm(expected)
        assert abs(abs(direction(model.rows(joint).start, body) @ e) - 1) < 1e-12


def test_gripper_overactuated_drives_agree():
    # The Bt drive follows the Cr drive through the closed form, so the fully driven
    # (redundantly actuated) gripper moves: both sliders advance by the same slide.
    f = 0.3
    model = gripper("overactuated", motion=lambda t: f * jnp.sin(t))
    ts = np.linspace(0.0, 3.0, 7)
    q = np.asarray(jmbs.kinematics(model, ts).q).reshape(len(ts), 4, 3)
    phi4 = -math.pi / 6 + f * np.sin(ts)
    s = np.asarray(gripper_slide(phi4))
    np.testing.assert_allclose(q[:, 3, 2], phi4, atol=1e-10)
    np.testing.assert_allclose(q[:, 0, 0] - 0.7, s, atol=1e-10)
    np.testing.assert_allclose(q[:, 1, 1] - 0.5, s, atol=1e-10)


def test_gripper_errors():
    with pytest.raises(ValueError, match="actuation must be one of"):
        gripper("force")
