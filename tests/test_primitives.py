"""Joint primitives: Phi against closed forms written here from the definitions
(rotation matrices from the quaternions by hand), independent of the element classes;
relative dof are checked for every kind in test_elements.py (JOINT_DOF)."""

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import random_state

import jmbs

P = np.array([0.6, 0.3, 0.05])
A = np.array([0.2, 1.0, 0.4]) / np.linalg.norm([0.2, 1.0, 0.4])
A2 = np.cross(A, [1.0, 0.0, 0.0]) / np.linalg.norm(np.cross(A, [1.0, 0.0, 0.0]))
RI, RJ = np.array([0.1, 0.2, 0.3]), np.array([1.1, 0.4, -0.2])


def quat_matrix(p):
    w, x, y, z = np.asarray(p) / np.linalg.norm(p)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def pair(kind: str, ground: bool, **geometry) -> jmbs.Model:
    """Two bodies in the identity orientation (or the ground and one) joined by `kind`."""
    b = jmbs.ModelBuilder(dim=3)
    bi = b.ground if ground else b.add_body("i", mass=1.0, inertia=(0.1, 0.2, 0.3), position=RI)
    b.add_body("j", mass=1.0, inertia=(0.2, 0.1, 0.15), position=RJ)
    b.add_joint(kind, "J", bi, "j", **geometry)
    return b.build(check=False)


def poses(q, ground):
    """`(r_i, R_i, r_j, R_j)` at `q`, by hand."""
    qb = np.asarray(q).reshape(-1, 7)
    rj, Rj = qb[-1, :3], quat_matrix(qb[-1, 3:])
    if ground:
        return np.zeros(3), np.eye(3), rj, Rj
    return qb[0, :3], quat_matrix(qb[0, 3:]), rj, Rj


def separation(q, ground):
    """Global vector from the joint point on body i to the one on body j."""
    ri, Ri, rj, Rj = poses(q, ground)
    ri0 = np.zeros(3) if ground else RI
    return rj + Rj @ (P - RJ) - ri - Ri @ (P - ri0), Ri, Rj


@pytest.mark.parametrize("ground", [False, True])
def test_primitive_residuals_are_the_closed_forms(ground):
    cases = {"inline": dict(point=P, axis=A), "inplane": dict(point=P, normal=A),
             "orientation": {}, "parallel_axes": dict(axis=A), "perpendicular": dict(axes=(A, A2)),
             "planar": dict(point=P, normal=A)}
    for kind, geometry in cases.items():
        model = pair(kind, ground, **geometry)
        np.testing.assert_allclose(jmbs.phi(model, model.q0, 0.0), 0.0, atol=1e-14)
        for seed in range(3):
            q = random_state(model, seed)[0]
            f = np.asarray(jmbs.phi(model, q, 0.0))
            d, Ri, Rj = separation(q, ground)
            ai, aj = Ri @ A, Rj @ A
            tilt = 1.0 - (ai @ aj) ** 2  # squared sine of the angle between the axes
            expected = {
                # |components of d normal to the line|^2 and the plane's distance
                "inline": lambda: np.sum(f**2) - (d @ d - (ai @ d) ** 2),
                "inplane": lambda: f[0] - ai @ d,
                # with identity frames: (-z_j.y_i, z_j.x_i, x_j.y_i)
                "orientation": lambda: f - np.array([-Rj[:, 2] @ Ri[:, 1], Rj[:, 2] @ Ri[:, 0],
                                                     Rj[:, 0] @ Ri[:, 1]]),
                "parallel_axes": lambda: np.sum(f**2) - tilt,
                "perpendicular": lambda: f[0] + (Ri @ A) @ (Rj @ A2),
                "planar": lambda: np.array([f[0] - ai @ d, np.sum(f[1:] ** 2) - tilt]),
            }[kind]()
            np.testing.assert_allclose(expected, 0.0, atol=1e-12, err_msg=kind)
            assert model.element("J").components == jmbs.ELEMENT_TYPES[kind].components(3)


def test_pin_in_slot_residual_is_the_distance_from_the_slot():
    b = jmbs.ModelBuilder(dim=2)
    crank = b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    slider = b.add_body("slider", mass=1.0, inertia=0.1, position=(1.2, 0.4), angle=0.3)
    u = np.array([0.6, 0.8])
    b.add_pin_in_slot("S", crank, slider, point=(1.0, 0.0), axis=u)
    model = b.build(check=False)
    assert model.element("S").components == ("Fn",)
    for seed in range(3):
        q = np.asarray(random_state(model, seed)[0])
        (xi, yi, ai), (xj, yj, aj) = q.reshape(2, 3)

        def rot(a):
            return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])

        pin = np.array([xj, yj]) + rot(aj) @ rot(-0.3) @ (np.array([1.0, 0.0]) - [1.2, 0.4])
        slot = np.array([xi, yi]) + rot(ai) @ np.array([0.5, 0.0])
        n = rot(ai) @ np.array([-u[1], u[0]])
        np.testing.assert_allclose(jmbs.phi(model, jnp.asarray(q), 0.0), [n @ (pin - slot)],
                                   atol=1e-13)


def revolute_of_primitives():
    """A body on the ground by a point on a line, a point in a plane normal to it and
    parallel axes: a revolute joint made of primitives."""
    b = jmbs.ModelBuilder(dim=3)
    b.add_body("j", mass=1.0, inertia=(0.2, 0.1, 0.15), position=RJ)
    b.add_inline("L", b.ground, "j", point=P, axis=A)
    b.add_parallel_axes("Z", b.ground, "j", axis=A)
    b.add_inplane("N", b.ground, "j", point=P, normal=A)
    return b.build()


def test_primitives_compose_the_usual_joints():
    """A point on a line, in a plane normal to it, with the axes kept parallel, is a
    revolute joint: the rows span the revolute's at an assembled configuration."""
    both = revolute_of_primitives()
    r = jmbs.ModelBuilder(dim=3)
    r.add_body("j", mass=1.0, inertia=(0.2, 0.1, 0.15), position=RJ)
    r.add_revolute("R", r.ground, "j", point=P, axis=A)
    rev = r.build()
    q = jmbs.assemble(both, random_state(both, 4, 0.05)[0], 0.0)
    C1, C2 = np.asarray(jmbs.constraint_matrix(both, q, 0.0)), np.asarray(
        jmbs.constraint_matrix(rev, q, 0.0))
    np.testing.assert_allclose(jmbs.phi(rev, q, 0.0), 0.0, atol=1e-10)
    assert np.linalg.matrix_rank(C1) == np.linalg.matrix_rank(C2) == 5
    assert np.linalg.matrix_rank(np.vstack([C1, C2])) == 5


def test_primitives_round_trip_through_model_files(tmp_path):
    """Every primitive is a model-file type (the file format reads ELEMENT_TYPES)."""
    b = jmbs.ModelBuilder(dim=3)
    for k, (kind, geometry) in enumerate({
            "inline": dict(point=P, axis=A), "inplane": dict(point=P, normal=A),
            "orientation": dict(point=P), "parallel_axes": dict(axis=A),
            "perpendicular": dict(axes=(A, A2)), "planar": dict(point=P, normal=A),
            "general": dict(point=P, axes=(A, A2), components=("Fx", "Fz", "Mx", "My"))}.items()):
        b.add_body(f"b{k}", mass=1.0, inertia=(0.1, 0.2, 0.3), position=RJ)
        b.add_joint(kind, kind, b.ground, f"b{k}", **geometry)
    model = b.build()
    for suffix in ("yaml", "toml"):
        again = jmbs.load(jmbs.save(model, tmp_path / f"primitives.{suffix}"))
        assert again.element_specs == model.element_specs
        np.testing.assert_array_equal(again.param_vector, model.param_vector)
    b2 = jmbs.ModelBuilder(dim=2)
    b2.add_body("s", mass=1.0, inertia=0.1, position=(1.0, 0.0))
    b2.add_pin_in_slot("S", b2.ground, "s", point=(1.0, 0.0), axis=(1.0, 1.0))
    planar = b2.build()
    again = jmbs.load(jmbs.save(planar, tmp_path / "slot.yaml"))
    assert again.element_specs == planar.element_specs


def test_primitives_are_drawn(tmp_path):
    """The figures read the kinds' markers and geometry from ELEMENT_TYPES."""
    import matplotlib

    matplotlib.use("Agg")
    import jmbs.plotting
    model = revolute_of_primitives()
    ax = jmbs.plotting.plot_mechanism(model, model.q0, report=jmbs.solvability(model))
    ax.figure.savefig(tmp_path / "primitives.png")
    assert (tmp_path / "primitives.png").stat().st_size > 5_000


def test_general_joint_components_are_checked_by_name():
    b = jmbs.ModelBuilder(dim=3)
    b.add_body("j", mass=1.0, inertia=(0.2, 0.1, 0.15), position=RJ)
    for bad in ((), ("Fx", "Fq"), ("Fx", "Fx"), None):
        with pytest.raises(ValueError, match="general 'G': components must name each kept row once"):
            b.add_general_joint("G", b.ground, "j", point=P, components=bad)
    with pytest.raises(ValueError, match="revolute 'R'.*components are fixed by its kind"):
        b.add_joint("revolute", "R", b.ground, "j", components=("Fx",), point=P, axis=A)
    b.add_general_joint("G", b.ground, "j", point=P, components=("Mz", "Fx"))  # any order
    assert b.build(check=False).element("G").components == ("Fx", "Mz")
