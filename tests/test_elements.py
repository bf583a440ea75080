"""Every element type: C = Phi_q N, Gamma against finite differences, relative dof.

`C = Phi_q N` here differentiates jmbs's own `Phi`, so it cannot catch a wrong `Phi`
(it does check the spatial frame joints' closed-form `C`, written apart from `Phi`);
tests/test_element_formulas.py checks `Phi`, `C` and `b` against textbook formulas
written independently of the element classes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import (
    GENERAL_COMPONENTS,
    PFAFFIAN,
    PLANAR_JOINTS,
    SPATIAL_JOINTS,
    random_state,
    rank,
    two_bodies,
)

import jmbs

CASES = [(2, k) for k in PLANAR_JOINTS] + [(3, k) for k in SPATIAL_JOINTS]
ALL_CASES = CASES + [(d, k) for d, ks in PFAFFIAN.items() for k in ks]
H = np.array([1e-5, -1e-5])  # central differences


@pytest.mark.parametrize("ground", [False, True])
@pytest.mark.parametrize("dim,kind", CASES)
def test_holonomic_rows_are_jacobian_times_N(dim, kind, ground):
    model = two_bodies(dim, kind, ground)

    @jax.jit  # one program for the four states
    def rows(model, q, t):
        J = jax.jacfwd(lambda q: jmbs.phi(model, q, t))(q)
        phit = jax.jacfwd(lambda t: jmbs.phi(model, q, t))(t)
        return (jmbs.constraint_matrix(model, q, t), J @ jmbs.kinematic_matrix(model, q),
                jmbs.velocity_rhs(model, q, t), phit)

    for seed in range(4):
        q, _, t = random_state(model, seed)
        if seed == 3 and dim == 3:  # off unit quaternions (between projections): still Phi_q N
            q = jnp.asarray(model.q0).reshape(-1, 7).at[:, 3:].multiply(1.1).ravel()
        C, JN, b, phit = rows(model, q, jnp.asarray(t))
        np.testing.assert_allclose(C, JN, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b, phit, atol=1e-12)  # b = Phi_t for holonomic rows


@pytest.mark.parametrize("dim,kind", ALL_CASES)
def test_gamma_matches_finite_difference(dim, kind):
    model = two_bodies(dim, kind)

    @jax.jit  # one program for the three states
    def terms(model, q, v, t):
        qd = jmbs.qdot(model, q, v)
        cvb = jax.vmap(lambda h: jmbs.velocity_residual(model, q + h * qd, v, t + h))(H)
        C, b, _ = jmbs.constraint_terms(model, q, v, t)
        return cvb, jmbs.gamma(model, q, v, t), C @ v + b, jmbs.velocity_residual(model, q, v, t)

    for seed in range(3):
        q, v, t = random_state(model, seed)
        (plus, minus), g, Cvb, residual = terms(model, q, v, jnp.asarray(t))
        fd = -(np.asarray(plus) - np.asarray(minus)) / (2 * H[0])
        assert np.linalg.norm(g - fd) <= 1e-6 * max(np.linalg.norm(g), 1e-8), (g, fd)
        np.testing.assert_allclose(Cvb, residual, atol=1e-12)  # velocity_residual is C v + b


@pytest.mark.parametrize("dim,kind", CASES)
def test_relative_degrees_of_freedom(dim, kind):
    """Between two free bodies, each element leaves exactly its relative dof."""
    model = two_bodies(dim, kind)
    expected = (PLANAR_JOINTS if dim == 2 else SPATIAL_JOINTS)[kind]
    nvb = model.nv // 2
    q = jmbs.assemble(model, model.q0, 0.0)
    C = jmbs.constraint_matrix(model, q, 0.0)
    assert rank(C) == model.nc == nvb - expected
    # Also at a second, assembled configuration away from the reference.
    q2 = jmbs.assemble(model, random_state(model, 7, 0.1)[0], 0.3)
    assert rank(jmbs.constraint_matrix(model, q2, 0.3)) == nvb - expected


def test_knife_edge_row_is_lateral_velocity_of_contact_point():
    model = two_bodies(2, "knife_edge")
    q, v, t = random_state(model, 3)
    C = jmbs.constraint_matrix(model, q, t)
    # Independent: the contact point's global velocity, projected on the rotated normal.
    qb = model.body_q(q, "b2")
    s = jnp.asarray(model.groups[0].s_j[0])
    vp = model.point_velocity(q, v, "b2", s)
    e = jnp.asarray(model.groups[0].e_j[0])
    c, sn = jnp.cos(qb[2]), jnp.sin(qb[2])
    n = jnp.array([[c, -sn], [sn, c]]) @ jnp.array([-e[1], e[0]])
    np.testing.assert_allclose((C @ v)[0], n @ vp, rtol=1e-12)


def test_driver_multiplier_row_is_unit_for_its_coordinate():
    """A revolute driver's row is d(angle)/dv: +1 on body j's rotation, -1 on body i's."""
    model = two_bodies(2, "revolute+driver")
    C = np.asarray(jmbs.constraint_matrix(model, model.q0, 0.0))
    np.testing.assert_allclose(C[model.rows("D")], [[0, 0, -1, 0, 0, 1]], atol=1e-15)


def test_spatial_angle_driver_tracks_many_turns():
    """The wrapped angle error lets a driven revolute turn continuously."""
    b = jmbs.ModelBuilder(dim=3)
    disk = b.add_body("disk", mass=1.0, inertia=(1.0, 1.0, 2.0), position=(0.0, 0.0, 0.0))
    b.add_revolute("R", b.ground, disk, point=(0, 0, 0), axis=(0, 0, 1))
    b.add_driver("D", joint="R", motion=lambda t: 2.0 * t)
    model = b.build()
    sol = jmbs.kinematics(model, jnp.linspace(0.0, 10.0, 201))  # 20 rad, > 3 turns
    p = sol.q[:, 3:]
    angle = 2 * np.unwrap(np.arctan2(np.asarray(p[:, 3]), np.asarray(p[:, 0])) * 2) / 2
    np.testing.assert_allclose(angle, 2.0 * np.asarray(sol.ts), atol=1e-9)
    np.testing.assert_allclose(sol.v[:, 5], 2.0, atol=1e-9)


def test_element_table_agrees_with_the_group_classes_and_the_models():
    """`jmbs.ELEMENT_TYPES` is what the builder, files and plots read: each kind's classes
    carry its name, drivers drive what the table says, and a built element reports the
    table's components and its class's holonomy."""
    for kind, t in jmbs.ELEMENT_TYPES.items():
        assert t.kind == kind and t.marker and t.label
        for cls in t.classes.values():
            assert cls.kind == kind
        for dim, drivers in t.drivable.items():
            assert dim in t.classes and all(cls.kind == "driver" for cls in drivers.values())
    for dim, kind in ALL_CASES:
        t = jmbs.ELEMENT_TYPES[kind.partition("+")[0]]
        model = two_bodies(dim, kind)
        info = model.element("J")
        assert info.kind == t.kind and info.holonomic == t.classes[dim].holonomic
        assert np.all(model.holonomic_rows[model.rows("J")] == info.holonomic)
        if t.choose:  # the general joint keeps the rows it was given
            assert info.components == GENERAL_COMPONENTS and set(info.components) <= set(t.choose)
        elif t.family == "joint":
            assert info.components == t.components(dim)
        if "+" in kind:
            driver = model.element("D")
            coordinate = model.element_specs[model.element_names.index("D")].coordinate
            assert driver.components == t.drivable[dim][coordinate].components
