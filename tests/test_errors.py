"""Every structural mistake gets a clear ValueError naming the element."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs import examples


@pytest.fixture
def b2():
    b = jmbs.ModelBuilder(dim=2)
    b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    return b


@pytest.fixture
def b3():
    b = jmbs.ModelBuilder(dim=3)
    b.add_body("rod", mass=1.0, inertia=(0.1, 1.0, 1.0), position=(0.5, 0.0, 0.0))
    return b


def test_unknown_body(b2):
    with pytest.raises(ValueError, match=r"element 'A': unknown body 'crnak'; did you mean 'crank'"):
        b2.add_revolute("A", b2.ground, "crnak", point=(0, 0))


def test_duplicate_name(b2):
    b2.add_revolute("A", b2.ground, "crank", point=(0, 0))
    with pytest.raises(ValueError, match="duplicate name 'A'"):
        b2.add_revolute("A", b2.ground, "crank", point=(0, 0))
    with pytest.raises(ValueError, match="duplicate name 'crank'"):
        b2.add_body("crank", mass=1.0, inertia=1.0, position=(0, 0))
    with pytest.raises(ValueError, match="reserved"):
        b2.add_body("ground", mass=1.0, inertia=1.0, position=(0, 0))


def test_body_joined_to_itself(b2):
    with pytest.raises(ValueError, match="revolute 'A': joins body 'crank' to itself"):
        b2.add_revolute("A", "crank", "crank", point=(0, 0))
    with pytest.raises(ValueError, match="joins the ground to itself"):
        b2.add_revolute("B", b2.ground, "ground", point=(0, 0))


@pytest.mark.parametrize("mass", [0.0, -1.0, float("nan")])
def test_non_positive_mass(b2, mass):
    with pytest.raises(ValueError, match="body 'b': mass must be"):
        b2.add_body("b", mass=mass, inertia=1.0, position=(0, 0))


@pytest.mark.parametrize("inertia", [0.0, -0.1])
def test_planar_inertia_not_positive(b2, inertia):
    with pytest.raises(ValueError, match="body 'b': inertia must be positive"):
        b2.add_body("b", mass=1.0, inertia=inertia, position=(0, 0))


@pytest.mark.parametrize("inertia,msg", [
    ((1.0, -1.0, 1.0), "positive definite"),
    (np.diag([1.0, 1.0, 0.0]), "positive definite"),
    (np.array([[1.0, 0.5, 0], [0.0, 1, 0], [0, 0, 1]]), "symmetric"),
    ((1.0, 2.0), "3 finite principal moments"),
])
def test_spatial_inertia_not_positive_definite(b3, inertia, msg):
    with pytest.raises(ValueError, match=f"body 'b': inertia.*{msg}"):
        b3.add_body("b", mass=1.0, inertia=inertia, position=(0, 0, 0))


@pytest.mark.parametrize("axis", [(0.0, 0.0, 0.0), (float("inf"), 0, 0)])
def test_zero_or_non_finite_axis(b3, axis):
    with pytest.raises(ValueError, match="revolute 'A': axis"):
        b3.add_revolute("A", b3.ground, "rod", point=(0, 0, 0), axis=axis)


def test_zero_direction_of_knife_edge(b2):
    with pytest.raises(ValueError, match="knife_edge 'W': direction must be a non-zero"):
        b2.add_knife_edge("W", "crank", point=(0.5, 0), direction=(0, 0))


def test_spatial_joint_without_axis(b3):
    with pytest.raises(ValueError, match="revolute 'A': a spatial revolute joint needs axis"):
        b3.add_revolute("A", b3.ground, "rod", point=(0, 0, 0))


def test_nan_in_geometry(b2, b3):
    with pytest.raises(ValueError, match="revolute 'A': point contains NaN"):
        b2.add_revolute("A", b2.ground, "crank", point=(float("nan"), 0))
    with pytest.raises(ValueError, match="body 'b': position contains NaN"):
        b3.add_body("b", mass=1.0, inertia=(1, 1, 1), position=(0, float("nan"), 0))
    with pytest.raises(ValueError, match="spherical 'S': point must be 3 numbers"):
        b3.add_spherical("S", b3.ground, "rod", point=(0, 0))


def test_driver_on_joint_without_free_coordinate(b2, b3):
    b2.add_weld("W", b2.ground, "crank", point=(0, 0))
    with pytest.raises(ValueError, match="driver 'D': joint 'W' \\(weld\\) has no free coordinate"):
        b2.add_driver("D", joint="W", motion=lambda t: t)
    b3.add_spherical("S", b3.ground, "rod", point=(0, 0, 0))
    with pytest.raises(ValueError, match="joint 'S' \\(spherical\\) has no free coordinate"):
        b3.add_driver("D", joint="S", motion=lambda t: t)


def test_driver_coordinate_choice(b3):
    b3.add_cylindrical("C", b3.ground, "rod", point=(0, 0, 0), axis=(1, 0, 0))
    with pytest.raises(ValueError, match="choose one with coordinate="):
        b3.add_driver("D", joint="C", motion=lambda t: t)
    b3.add_revolute("R", b3.ground, "rod", point=(1, 0, 0), axis=(1, 0, 0))
    with pytest.raises(ValueError, match="joint 'R' \\(revolute\\) has no 'slide' coordinate"):
        b3.add_driver("D2", joint="R", motion=lambda t: t, coordinate="slide")
    with pytest.raises(ValueError, match="unknown joint 'X'"):
        b3.add_driver("D3", joint="X", motion=lambda t: t)
    with pytest.raises(ValueError, match="motion\\(t\\) must return a scalar"):
        b3.add_driver("D4", joint="C", motion=lambda t: jnp.ones(2), coordinate="angle")


def test_joint_type_of_the_other_dimension(b2):
    with pytest.raises(ValueError, match="spherical 'S': spherical joints exist only in spatial"):
        b2.add_spherical("S", b2.ground, "crank", point=(0, 0))


def test_reference_configuration_violated():
    b = jmbs.ModelBuilder(dim=2)
    c = b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    r = b.add_body("rod", mass=1.0, inertia=0.1, position=(1.5, 0.0))
    b.add_revolute("O", b.ground, c, point=(0.0, 0.0))
    b.add_revolute("A", c, r, point=(1.0, 0.0))
    b.add_constraint("X", [r], holonomic=lambda qs, t: jnp.array([qs[0][1] - 0.3]))
    with pytest.raises(ValueError, match=r"violates element 'X' by 0\.3.*assemble"):
        b.build()
    # build(assemble=True) closes it instead.
    model = b.build(assemble=True)
    assert abs(float(model.q0[4]) - 0.3) < 1e-12


def _unreachable():
    """A pinned crank whose tip is asked to reach x = 5: no solution."""
    b = jmbs.ModelBuilder(dim=2)
    c = b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    b.add_revolute("O", b.ground, c, point=(0.0, 0.0))
    b.add_constraint("reach", [c], holonomic=lambda qs, t: jnp.array(
        [qs[0][0] + 0.5 * jnp.cos(qs[0][2]) - 5.0]))
    return b.build(check=False)


def test_assemble_does_not_converge_names_residual():
    model = _unreachable()
    with pytest.raises(RuntimeError, match=r"did not converge .* max \|Phi\| = .* at element '(O|reach)'"):
        jmbs.assemble(model, model.q0)
    res = jmbs.assemble(model, model.q0, throw=False, full_output=True)
    assert not bool(res.converged) and float(res.residual) > 1.0


def test_assemble_inside_jit_raises_through_error_if():
    model = _unreachable()

    @jax.jit
    def f(q):
        return jmbs.assemble(model, q)

    with pytest.raises(Exception, match="did not converge"):
        jax.block_until_ready(f(model.q0))


def test_bad_parameter_keys_and_shapes():
    model = examples.four_bar()
    with pytest.raises(ValueError, match="unknown parameter 'B.pont'; did you mean 'B.point'"):
        model.with_params({"B.pont": jnp.zeros(2)})
    with pytest.raises(ValueError, match=r"'B.point' has shape \(2,\)"):
        model.with_params({"B.point": jnp.zeros(3)})


def test_model_lookups():
    model = examples.four_bar()
    with pytest.raises(ValueError, match="unknown element 'Q'"):
        model.rows("Q")
    with pytest.raises(ValueError, match="unknown body 'crnk'"):
        model.point(model.q0, "crnk", (0, 0))
    with pytest.raises(ValueError, match="q_guess must have shape"):
        jmbs.assemble(model, jnp.zeros(3))
    with pytest.raises(ValueError, match="degree\\(s\\) of freedom left"):
        jmbs.kinematics(model, jnp.linspace(0, 1, 3))
    info = model.element("B")
    assert (info.kind, info.bodies, info.components) == ("revolute", ("coupler", "rocker"),
                                                         ("Fx", "Fy"))
    assert model.rows("B") == slice(4, 6)


def test_custom_constraint_errors(b2):
    with pytest.raises(ValueError, match="give exactly one of holonomic= or pfaffian="):
        b2.add_constraint("X", ["crank"])
    with pytest.raises(ValueError, match=r"pfaffian must return \(m, 3\)"):
        b2.add_constraint("X", ["crank"], pfaffian=lambda qs: jnp.ones((1, 2)))
    with pytest.raises(ValueError, match="the function failed on the reference"):
        b2.add_constraint("X", ["crank"], holonomic=lambda qs, t: qs[3])
    with pytest.raises(ValueError, match="2 component names for 1 rows"):
        b2.add_constraint("X", ["crank"], holonomic=lambda qs, t: qs[0][:1],
                          components=["a", "b"])


def test_universal_axes_must_be_perpendicular(b3):
    with pytest.raises(ValueError, match="universal 'U': the two axes .* perpendicular"):
        b3.add_universal("U", b3.ground, "rod", point=(0, 0, 0), axes=((1, 0, 0), (1, 1, 0)))


def test_bad_dim_and_rotation():
    with pytest.raises(ValueError, match="dim must be 2"):
        jmbs.ModelBuilder(dim=4)
    b = jmbs.ModelBuilder(dim=3)
    with pytest.raises(ValueError, match="rotation must be orthonormal"):
        b.add_body("b", mass=1.0, inertia=(1, 1, 1), position=(0, 0, 0),
                   rotation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="takes `rotation` or `quaternion`, not `angle`"):
        b.add_body("c", mass=1.0, inertia=(1, 1, 1), position=(0, 0, 0), angle=math.pi)
