"""The bad-input catalogue: every mistake a user can make, with the error it gets.

Grouped by entry point: the model builder, model files, `Model` methods, `assemble`
and `kinematics`, `simulate`, `reactions`, `solvability`, the sweeps and `batch_map`,
and the `jmbs` command. Each case checks the exception type that jmbs documents
(`ValueError`, `jmbs.ModelFileError`, `RuntimeError` for a numerical failure), a
message that names the element or argument and says what to do, and, through
`named_error`, that jmbs's own check raised it: not an error from inside JAX, NumPy
or Python (a reshape `TypeError`, an `EquinoxRuntimeError` with a JIT stack), and no
silent NaN. Only the public API is used.
"""

import contextlib
import importlib.util
import math
import re
import sys
import warnings
from pathlib import Path

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs import examples
from jmbs.cli import main

JMBS_DIR = Path(jmbs.__file__).resolve().parent


@contextlib.contextmanager
def named_error(kind: type[Exception], match: str):
    """`pytest.raises(kind, match=match)`, where jmbs's own check raised the error: its
    innermost frame is in the jmbs package (not in JAX, NumPy, Equinox or the Python
    runtime) and its message is one line."""
    with pytest.raises(kind, match=match) as info:
        yield info
    tb = info.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    where = Path(tb.tb_frame.f_code.co_filename).resolve()
    assert where.is_relative_to(JMBS_DIR), f"raised in {where}, not by a jmbs check: {info.value!r}"
    assert "\n" not in str(info.value), str(info.value)


# ----------------------------------------------------------------------------------
# Models shared by the tests (built once)
# ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def four_bar():
    return examples.four_bar()


@pytest.fixture(scope="module")
def slider():
    """A slider-crank with its crank driven (driver `drive` on joint `O`)."""
    return examples.slider_crank(omega=1.0)


@pytest.fixture(scope="module")
def pendulum():
    return examples.pendulum()


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


def builder(dim: int) -> jmbs.ModelBuilder:
    """A builder with one body: `crank` (planar) or `rod` (spatial)."""
    b = jmbs.ModelBuilder(dim=dim)
    if dim == 2:
        b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    else:
        b.add_body("rod", mass=1.0, inertia=(0.1, 1.0, 1.0), position=(0.5, 0.0, 0.0))
    return b


def pinned(b: jmbs.ModelBuilder) -> jmbs.ModelBuilder:
    """`b` (planar) with its body pinned to the ground by revolute `O` at the origin."""
    b.add_revolute("O", b.ground, "crank", point=(0.0, 0.0))
    return b


NAN, INF = float("nan"), float("inf")


def body2(**kw):
    """add_body arguments of a planar body `b`, with `kw` replacing some."""
    return {"mass": 1.0, "inertia": 1.0, "position": (0.0, 0.0)} | kw


def body3(**kw):
    return {"mass": 1.0, "inertia": (1.0, 1.0, 1.0), "position": (0.0, 0.0, 0.0)} | kw


# ----------------------------------------------------------------------------------
# Model builder
# ----------------------------------------------------------------------------------

# (dim, what the user does on a builder with one body, the error message).
BUILDER_CASES = [
    # names
    pytest.param(2, lambda b: b.add_body("", **body2()), r"name '' must be a non-empty string",
                 id="empty-name"),
    pytest.param(2, lambda b: b.add_body("a.b", **body2()), r"name 'a\.b' must be .* without '\.'",
                 id="name-with-dot"),
    pytest.param(2, lambda b: b.add_body(3, **body2()), r"name 3 must be a non-empty string",
                 id="name-not-a-string"),
    # masses and inertias
    pytest.param(2, lambda b: b.add_body("b", **body2(mass=INF)), r"body 'b': mass must be finite",
                 id="mass-inf"),
    pytest.param(2, lambda b: b.add_body("b", **body2(mass="heavy")),
                 r"body 'b': mass must be a number, got 'heavy'", id="mass-string"),
    pytest.param(2, lambda b: b.add_body("b", **body2(mass=[1.0, 2.0])),
                 r"body 'b': mass must be a number", id="mass-vector"),
    # NumPy reads text and booleans as numbers; jmbs does not
    pytest.param(2, lambda b: b.add_body("b", **body2(mass="1.0")),
                 r"body 'b': mass must be a number, got '1\.0'", id="mass-numeric-string"),
    pytest.param(2, lambda b: b.add_body("b", **body2(mass=True)),
                 r"body 'b': mass must be a number, got True", id="mass-bool"),
    pytest.param(2, lambda b: b.add_body("b", **body2(position=("0", "1"))),
                 r"body 'b': position must be 2 numbers, got \('0', '1'\)", id="position-strings"),
    pytest.param(3, lambda b: b.add_body("b", **body3(inertia=("1", "1", "1"))),
                 r"body 'b': inertia must be 3 principal moments", id="inertia-strings"),
    pytest.param(2, lambda b: b.add_body("b", **body2(inertia=NAN)),
                 r"body 'b': inertia must be finite", id="planar-inertia-nan"),
    pytest.param(2, lambda b: b.add_body("b", **body2(inertia=(1.0, 1.0, 1.0))),
                 r"body 'b': inertia must be a number", id="planar-inertia-three-moments"),
    pytest.param(3, lambda b: b.add_body("b", **body3(inertia=(1.0, NAN, 1.0))),
                 r"body 'b': inertia must be 3 finite principal moments", id="spatial-inertia-nan"),
    pytest.param(3, lambda b: b.add_body("b", **body3(inertia=(1.0, 1.0, 3.0))),
                 r"body 'b': inertia .*triangle inequality", id="inertia-violates-triangle-inequality"),
    # positions, orientations, velocities
    pytest.param(2, lambda b: b.add_body("b", **body2(position=(0.0, 0.0, 0.0))),
                 r"body 'b': position must be 2 numbers, got shape \(3,\)", id="position-3-in-2d"),
    pytest.param(2, lambda b: b.add_body("b", **body2(position=(INF, 0.0))),
                 r"body 'b': position contains NaN or inf", id="position-inf"),
    pytest.param(2, lambda b: b.add_body("b", **body2(angle=NAN)), r"body 'b': angle must be finite",
                 id="angle-nan"),
    pytest.param(2, lambda b: b.add_body("b", **body2(velocity=(1.0, 2.0, 3.0))),
                 r"body 'b': velocity must be 2 numbers", id="velocity-shape"),
    pytest.param(2, lambda b: b.add_body("b", **body2(velocity=(1.0, NAN))),
                 r"body 'b': velocity contains NaN", id="velocity-nan"),
    pytest.param(2, lambda b: b.add_body("b", **body2(angular_velocity=(1.0, 2.0))),
                 r"body 'b': angular_velocity must be a number", id="planar-angular-velocity-vector"),
    pytest.param(3, lambda b: b.add_body("b", **body3(angular_velocity=(0.0, NAN, 0.0))),
                 r"body 'b': angular_velocity contains NaN", id="angular-velocity-nan"),
    pytest.param(3, lambda b: b.add_body("b", **body3(quaternion=(0.0, 0.0, 0.0, 0.0))),
                 r"body 'b': quaternion must be non-zero", id="quaternion-zero"),
    pytest.param(3, lambda b: b.add_body("b", **body3(quaternion=(1.0, 0.0, NAN, 0.0))),
                 r"body 'b': quaternion contains NaN", id="quaternion-nan"),
    pytest.param(3, lambda b: b.add_body("b", **body3(quaternion=(1.0, 0.0, 0.0))),
                 r"body 'b': quaternion must be 4 numbers", id="quaternion-3-numbers"),
    pytest.param(3, lambda b: b.add_body("b", **body3(quaternion=(1, 0, 0, 0), rotation=np.eye(3))),
                 r"body 'b': give either `rotation` or `quaternion`, not both", id="rotation-and-quaternion"),
    pytest.param(3, lambda b: b.add_body("b", **body3(rotation=np.eye(2))),
                 r"body 'b': rotation must be a finite 3x3 matrix", id="rotation-2x2"),
    pytest.param(3, lambda b: b.add_body("b", **body3(rotation=2.0 * np.eye(3))),
                 r"body 'b': rotation must be orthonormal", id="rotation-scaled"),
    pytest.param(2, lambda b: b.add_body("b", **body2(rotation=np.eye(2))),
                 r"body 'b': a planar body takes `angle`", id="planar-rotation"),
    pytest.param(2, lambda b: b.add_body("b", **body2(quaternion=(1.0, 0.0, 0.0, 0.0))),
                 r"body 'b': a planar body takes `angle`", id="planar-quaternion"),
    # joints
    pytest.param(2, lambda b: b.add_revolute("A", "grund", "crank", point=(0, 0)),
                 r"element 'A': unknown body 'grund'; did you mean 'ground'",
                 id="misspelt-ground"),
    pytest.param(2, lambda b: b.add_revolute("A", b.ground, jmbs.ModelBuilder(dim=2).add_body(
        "other", **body2()), point=(0, 0)), r"element 'A': unknown body 'other'; known: 'crank'",
                 id="body-of-another-builder"),
    pytest.param(2, lambda b: b.add_revolute("A", b.ground, "crank", point=(0, 0), axis=(0, 0, 1)),
                 r"revolute 'A': axis must be 2 numbers", id="planar-revolute-3d-axis"),
    pytest.param(2, lambda b: b.add_prismatic("P", b.ground, "crank", point=(0, 0), axis=(0, 0)),
                 r"prismatic 'P': axis must be a non-zero vector", id="prismatic-zero-axis"),
    pytest.param(3, lambda b: b.add_prismatic("P", b.ground, "rod", point=(0, 0, 0), axis=(0, NAN, 0)),
                 r"prismatic 'P': axis contains NaN", id="prismatic-nan-axis"),
    pytest.param(3, lambda b: b.add_cylindrical("C", b.ground, "rod", point=(0, 0, 0), axis=(0, 0, 0)),
                 r"cylindrical 'C': axis must be a non-zero vector", id="cylindrical-zero-axis"),
    pytest.param(3, lambda b: b.add_universal("U", b.ground, "rod", point=(0, 0, 0),
                                              axes=((0, 0, 0), (0, 1, 0))),
                 r"universal 'U': axes must be non-zero", id="universal-zero-axis"),
    pytest.param(3, lambda b: b.add_universal("U", b.ground, "rod", point=(0, 0, 0), axes=((1, 0, 0),)),
                 r"universal 'U': axes must be two finite 3-vectors", id="universal-one-axis"),
    pytest.param(3, lambda b: b.add_knife_edge("W", "rod", point=(0, 0, 0), direction=(1, 0, 0)),
                 r"knife_edge 'W': knife_edge joints exist only in planar", id="spatial-knife-edge"),
    pytest.param(2, lambda b: b.add_knife_edge("W", b.ground, point=(0, 0), direction=(1, 0)),
                 r"knife_edge 'W': joins the ground to itself", id="knife-edge-on-ground"),
    pytest.param(2, lambda b: b.add_distance("L", b.ground, "crank", point_i=(0, 0), point_j=(1, 0),
                                             length=-1.0),
                 r"distance 'L': length must be positive", id="distance-negative-length"),
    pytest.param(2, lambda b: b.add_distance("L", b.ground, "crank", point_i=(0, 0), point_j=(1, 0),
                                             length=NAN),
                 r"distance 'L': length must be finite", id="distance-nan-length"),
    pytest.param(2, lambda b: (b.add_distance("L", b.ground, "crank", point_i=(0, 0), point_j=(0, 0)),
                               b.build()),
                 r"distance 'L': .*point_i and point_j coincide", id="distance-of-zero-length"),
    # drivers
    pytest.param(2, lambda b: pinned(b).add_driver("D", joint="O", motion=lambda t: 1 / 0),
                 r"driver 'D': motion\(t\) failed at t = 0: division by zero", id="motion-raises"),
    pytest.param(2, lambda b: pinned(b).add_driver("D", joint="O", motion=lambda t: jnp.ones(2) * t),
                 r"driver 'D': motion\(t\) must return a scalar, got shape \(2,\)", id="motion-vector"),
    pytest.param(2, lambda b: pinned(b).add_driver("D", joint="O", motion=3),
                 r"driver 'D': motion must be a function, got int", id="motion-not-callable"),
    pytest.param(2, lambda b: pinned(b).add_driver("D", joint="O", motion="omga * t",
                                                    params={"omega": 1.0}),
                 r"driver 'D': motion: expression 'omga \* t', line 1: unknown name 'omga'; known: "
                 r".*omega", id="motion-text-unknown-name"),
    pytest.param(2, lambda b: pinned(b).add_driver("D", joint="O", motion=lambda t: jnp.log(t - 1.0)),
                 r"driver 'D': motion\(t\) .*(NaN|not finite)", id="motion-nan-at-t0"),
    pytest.param(2, lambda b: pinned(b).add_driver("D", joint="crank", motion=lambda t: t),
                 r"driver 'D': unknown joint 'crank'; known: 'O'", id="driver-of-a-body"),
    pytest.param(2, lambda b: (pinned(b).add_driver("D", joint="O", motion=lambda t: t),
                               b.add_driver("D2", joint="D", motion=lambda t: t)),
                 r"driver 'D2': joint 'D' \(driver\) has no free coordinate", id="driver-of-a-driver"),
    # user constraints
    pytest.param(2, lambda b: b.add_constraint("X", ["crank"], holonomic=lambda qs, t: jnp.ones((2, 2))),
                 r"constraint 'X': holonomic must return a vector \(m,\), got \(2, 2\)",
                 id="holonomic-matrix"),
    pytest.param(2, lambda b: b.add_constraint("X", ["crank"], holonomic=lambda qs, t: qs[0][0]),
                 r"constraint 'X': holonomic must return a vector \(m,\), got \(\)",
                 id="holonomic-scalar"),
    pytest.param(2, lambda b: b.add_constraint("X", ["crank"], holonomic=lambda qs: qs[0][:1]),
                 r"constraint 'X': the function failed on the reference configuration .*takes 1 "
                 r"positional argument", id="holonomic-without-t"),
    pytest.param(2, lambda b: b.add_constraint("X", ["crank"], holonomic=lambda qs, t: qs[0][:1],
                                               pfaffian=lambda qs: jnp.ones((1, 3))),
                 r"constraint 'X': give exactly one of holonomic= or pfaffian=", id="holonomic-and-pfaffian"),
    pytest.param(2, lambda b: b.add_constraint("X", ["crnk"], holonomic=lambda qs, t: qs[0][:1]),
                 r"element 'X': unknown body 'crnk'; did you mean 'crank'", id="constraint-unknown-body"),
    pytest.param(2, lambda b: b.add_constraint("X", [], holonomic=lambda qs, t: jnp.zeros(1)),
                 r"constraint 'X': list at least one body", id="constraint-without-bodies"),
    pytest.param(2, lambda b: b.add_constraint("X", ["crank"], holonomic=3),
                 r"constraint 'X': holonomic must be a function, got int", id="constraint-not-callable"),
    pytest.param(2, lambda b: b.add_constraint("X", ["crank"], holonomic=lambda qs, t: qs[0][:1] * jnp.nan),
                 r"constraint 'X': .*NaN", id="constraint-nan-at-reference"),
    # force elements
    pytest.param(2, lambda b: b.add_spring_damper("S", "ground", "crank", (0, 0), (1, 0), stiffness=-1.0),
                 r"spring_damper 'S': stiffness must be non-negative, got -1",
                 id="spring-negative-stiffness"),
    pytest.param(2, lambda b: b.add_spring_damper("S", "ground", "crank", (0, 0), (1, 0), stiffness=1.0,
                                                  damping=-2.0),
                 r"spring_damper 'S': damping must be non-negative, got -2", id="spring-negative-damping"),
    pytest.param(2, lambda b: b.add_spring_damper("S", "ground", "crank", (1, 0), (1, 0), stiffness=1.0,
                                                  rest_length=0.5),
                 r"spring_damper 'S': point_i and point_j coincide .*direction is undefined",
                 id="spring-coincident-points"),
    pytest.param(2, lambda b: b.add_spring_damper("S", "crank", "crank", (0, 0), (1, 0), stiffness=1.0),
                 r"spring_damper 'S': connects body 'crank' to itself", id="spring-body-to-itself"),
    pytest.param(2, lambda b: b.add_spring_damper("S", "ground", "crank", (0, 0), (1, 0)),
                 r"spring_damper 'S': give stiffness=", id="spring-without-stiffness"),
    pytest.param(2, lambda b: b.add_spring_damper("S", "ground", "crank", (0, 0), (1, 0),
                                                  force=lambda L: L),
                 r"spring_damper 'S': force takes 1 arguments; give f\(length, rate\)",
                 id="spring-law-arity"),
    pytest.param(2, lambda b: b.add_force("F", "crank", (NAN, 0.0)), r"force 'F': force contains NaN",
                 id="force-nan"),
    pytest.param(2, lambda b: b.add_force("F", "crank", (1.0, 0.0, 0.0)),
                 r"force 'F': force must be 2 numbers, got shape \(3,\)", id="force-shape"),
    pytest.param(2, lambda b: (b.add_force("F", "crank", lambda t: jnp.ones(3) * t), b.build(check=False)),
                 r"force 'F': the force law must return shape \(2,\), got shape \(3,\)",
                 id="force-law-shape"),
    pytest.param(2, lambda b: (b.add_force("F", "crank", lambda t: jnp.ones(2) * jnp.log(t)),
                               b.build(check=False)),
                 r"force 'F': the force law returned NaN or infinity at t = 0", id="force-law-inf"),
    pytest.param(2, lambda b: b.add_force("F", "crank", lambda t, q: q),
                 r"force 'F': force takes 2 arguments; give f\(t\) or f\(t, q, v\)", id="force-law-arity"),
    pytest.param(2, lambda b: b.add_torque("T", "crank", "fo * t"),
                 r"torque 'T': torque: expression 'fo \* t', line 1: unknown name 'fo'",
                 id="torque-text-unknown"),
    pytest.param(2, lambda b: b.add_force("F", "crank", "3 * t"),
                 r"force 'F': a text law gives one number, but force needs 2", id="force-text-vector"),
    pytest.param(2, lambda b: b.add_force("F", "crank", (1.0, 0.0), frame="local"),
                 r"force 'F': frame must be 'global' or 'body', got 'local'", id="force-frame"),
    pytest.param(2, lambda b: b.add_torque("T", "ground", 1.0),
                 r"torque 'T': the ground does not move", id="torque-on-ground"),
    pytest.param(3, lambda b: b.add_torque("T", "rod", 1.0),
                 r"torque 'T': torque must be 3 numbers, got shape \(\)", id="torque-scalar-in-3d"),
    pytest.param(2, lambda b: b.add_bushing("B", "ground", "crank", (0, 0), (1.0, 2.0)),
                 r"bushing 'B': stiffness must be one number or 3 \(one per component\)",
                 id="bushing-stiffness-count"),
    pytest.param(2, lambda b: b.add_bushing("B", "ground", "crank", (0, 0), 1e3, damping=-1.0),
                 r"bushing 'B': damping must be finite and non-negative", id="bushing-negative-damping"),
    pytest.param(2, lambda b: b.add_actuator("A", "Q", 1.0),
                 r"actuator 'A': unknown joint 'Q'", id="actuator-unknown-joint"),
    pytest.param(2, lambda b: (b.add_weld("W", "ground", "crank"), b.add_joint_friction("f", "W", 0.1)),
                 r"joint_friction 'f': joint 'W' \(weld\) has no free coordinate for friction to act on",
                 id="friction-on-weld"),
    pytest.param(2, lambda b: (pinned(b).add_driver("D", "O", lambda t: t),
                               b.add_joint_friction("f", "D", 0.1, radius=0.01)),
                 r"joint_friction 'f': joint 'D' \(driver\) has no free coordinate", id="friction-on-driver"),
    pytest.param(2, lambda b: pinned(b).add_joint_friction("f", "O", 0.1),
                 r"joint_friction 'f': Coulomb friction in the rotation of 'O' needs the pin radius=",
                 id="friction-without-radius"),
    pytest.param(2, lambda b: pinned(b).add_joint_friction("f", "O", -0.1, radius=0.01),
                 r"joint_friction 'f': coulomb must be non-negative", id="friction-negative"),
    pytest.param(2, lambda b: pinned(b).add_rotational_spring_damper("K", "O", stiffness=NAN),
                 r"rotational_spring_damper 'K': stiffness must be finite", id="rotational-spring-nan"),
    pytest.param(2, lambda b: (b.add_prismatic("P", "ground", "crank", (0, 0), (1, 0)),
                               b.add_rotational_spring_damper("K", "P", stiffness=1.0)),
                 r"rotational_spring_damper 'K': joint 'P' \(prismatic\) does not rotate",
                 id="rotational-spring-on-slide"),
    pytest.param(2, lambda b: (b.add_force("crank2", "crank", (1.0, 0.0)),
                               b.add_body("crank2", **body2())),
                 r"duplicate name 'crank2'", id="force-name-taken"),
    # the model as a whole
    pytest.param(2, lambda b: jmbs.ModelBuilder(dim=1), r"dim must be 2 \(planar\) or 3 \(spatial\), got 1",
                 id="dim-1"),
    pytest.param(2, lambda b: jmbs.ModelBuilder(dim="2"), r"dim must be 2 .* got '2'", id="dim-string"),
    pytest.param(2, lambda b: jmbs.ModelBuilder(dim=2, gravity=(0, 0, -9.81)),
                 r"gravity must be 2 numbers, got shape \(3,\)", id="gravity-shape"),
    pytest.param(2, lambda b: jmbs.ModelBuilder(dim=2, gravity=(0, NAN)), r"gravity contains NaN",
                 id="gravity-nan"),
    pytest.param(2, lambda b: jmbs.ModelBuilder(dim=2).build(),
                 r"the model has no bodies; add one with add_body", id="build-without-bodies"),
]


@pytest.mark.parametrize("dim, call, match", BUILDER_CASES)
def test_builder_rejects(dim, call, match):
    b = builder(dim)
    with named_error(ValueError, match):
        call(b)


def test_unknown_body(b2):
    with named_error(ValueError, r"element 'A': unknown body 'crnak'; did you mean 'crank'"):
        b2.add_revolute("A", b2.ground, "crnak", point=(0, 0))


def test_duplicate_name(b2):
    b2.add_revolute("A", b2.ground, "crank", point=(0, 0))
    with named_error(ValueError, "duplicate name 'A'"):
        b2.add_revolute("A", b2.ground, "crank", point=(0, 0))
    with named_error(ValueError, "duplicate name 'crank'"):
        b2.add_body("crank", mass=1.0, inertia=1.0, position=(0, 0))
    with named_error(ValueError, "reserved"):
        b2.add_body("ground", mass=1.0, inertia=1.0, position=(0, 0))


def test_body_joined_to_itself(b2):
    with named_error(ValueError, "revolute 'A': joins body 'crank' to itself"):
        b2.add_revolute("A", "crank", "crank", point=(0, 0))
    with named_error(ValueError, "joins the ground to itself"):
        b2.add_revolute("B", b2.ground, "ground", point=(0, 0))


@pytest.mark.parametrize("mass", [0.0, -1.0, float("nan")])
def test_non_positive_mass(b2, mass):
    with named_error(ValueError, "body 'b': mass must be"):
        b2.add_body("b", mass=mass, inertia=1.0, position=(0, 0))


@pytest.mark.parametrize("inertia", [0.0, -0.1])
def test_planar_inertia_not_positive(b2, inertia):
    with named_error(ValueError, "body 'b': inertia must be positive"):
        b2.add_body("b", mass=1.0, inertia=inertia, position=(0, 0))


@pytest.mark.parametrize("inertia,msg", [
    ((1.0, -1.0, 1.0), "positive definite"),
    (np.diag([1.0, 1.0, 0.0]), "positive definite"),
    (np.array([[1.0, 0.5, 0], [0.0, 1, 0], [0, 0, 1]]), "symmetric"),
    ((1.0, 2.0), "3 finite principal moments"),
])
def test_spatial_inertia_not_positive_definite(b3, inertia, msg):
    with named_error(ValueError, f"body 'b': inertia.*{msg}"):
        b3.add_body("b", mass=1.0, inertia=inertia, position=(0, 0, 0))


@pytest.mark.parametrize("axis", [(0.0, 0.0, 0.0), (float("inf"), 0, 0)])
def test_zero_or_non_finite_axis(b3, axis):
    with named_error(ValueError, "revolute 'A': axis"):
        b3.add_revolute("A", b3.ground, "rod", point=(0, 0, 0), axis=axis)


def test_zero_direction_of_knife_edge(b2):
    with named_error(ValueError, "knife_edge 'W': direction must be a non-zero"):
        b2.add_knife_edge("W", "crank", point=(0.5, 0), direction=(0, 0))


def test_spatial_joint_without_axis(b3):
    with named_error(ValueError, "revolute 'A': a spatial revolute joint needs axis"):
        b3.add_revolute("A", b3.ground, "rod", point=(0, 0, 0))


def test_nan_in_geometry(b2, b3):
    with named_error(ValueError, "revolute 'A': point contains NaN"):
        b2.add_revolute("A", b2.ground, "crank", point=(float("nan"), 0))
    with named_error(ValueError, "body 'b': position contains NaN"):
        b3.add_body("b", mass=1.0, inertia=(1, 1, 1), position=(0, float("nan"), 0))
    with named_error(ValueError, "spherical 'S': point must be 3 numbers"):
        b3.add_spherical("S", b3.ground, "rod", point=(0, 0))


def test_driver_on_joint_without_free_coordinate(b2, b3):
    b2.add_weld("W", b2.ground, "crank", point=(0, 0))
    with named_error(ValueError, "driver 'D': joint 'W' \\(weld\\) has no free coordinate"):
        b2.add_driver("D", joint="W", motion=lambda t: t)
    b3.add_spherical("S", b3.ground, "rod", point=(0, 0, 0))
    with named_error(ValueError, "joint 'S' \\(spherical\\) has no free coordinate"):
        b3.add_driver("D", joint="S", motion=lambda t: t)


def test_driver_coordinate_choice(b3):
    b3.add_cylindrical("C", b3.ground, "rod", point=(0, 0, 0), axis=(1, 0, 0))
    with named_error(ValueError, "choose one with coordinate="):
        b3.add_driver("D", joint="C", motion=lambda t: t)
    b3.add_revolute("R", b3.ground, "rod", point=(1, 0, 0), axis=(1, 0, 0))
    with named_error(ValueError, "joint 'R' \\(revolute\\) has no 'slide' coordinate"):
        b3.add_driver("D2", joint="R", motion=lambda t: t, coordinate="slide")
    with named_error(ValueError, "unknown joint 'X'"):
        b3.add_driver("D3", joint="X", motion=lambda t: t)
    with named_error(ValueError, "motion\\(t\\) must return a scalar"):
        b3.add_driver("D4", joint="C", motion=lambda t: jnp.ones(2), coordinate="angle")


def test_joint_type_of_the_other_dimension(b2):
    with named_error(ValueError, "spherical 'S': spherical joints exist only in spatial"):
        b2.add_spherical("S", b2.ground, "crank", point=(0, 0))


def test_reference_configuration_violated():
    b = jmbs.ModelBuilder(dim=2)
    c = b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    r = b.add_body("rod", mass=1.0, inertia=0.1, position=(1.5, 0.0))
    b.add_revolute("O", b.ground, c, point=(0.0, 0.0))
    b.add_revolute("A", c, r, point=(1.0, 0.0))
    b.add_constraint("X", [r], holonomic=lambda qs, t: jnp.array([qs[0][1] - 0.3]))
    with named_error(ValueError, r"violates element 'X' by 0\.3.*assemble"):
        b.build()
    # build(assemble=True) closes it instead.
    model = b.build(assemble=True)
    assert abs(float(model.q0[4]) - 0.3) < 1e-12


def test_custom_constraint_errors(b2):
    with named_error(ValueError, "give exactly one of holonomic= or pfaffian="):
        b2.add_constraint("X", ["crank"])
    with named_error(ValueError, r"pfaffian must return \(m, 3\)"):
        b2.add_constraint("X", ["crank"], pfaffian=lambda qs: jnp.ones((1, 2)))
    with named_error(ValueError, "the function failed on the reference"):
        b2.add_constraint("X", ["crank"], holonomic=lambda qs, t: qs[3])
    with named_error(ValueError, "2 component names for 1 rows"):
        b2.add_constraint("X", ["crank"], holonomic=lambda qs, t: qs[0][:1],
                          components=["a", "b"])


def test_universal_axes_must_be_perpendicular(b3):
    with named_error(ValueError, "universal 'U': the two axes .* perpendicular"):
        b3.add_universal("U", b3.ground, "rod", point=(0, 0, 0), axes=((1, 0, 0), (1, 1, 0)))


def test_joint_primitives_bad_geometry(b2, b3):
    with named_error(ValueError, "perpendicular 'P': the two axes of a perpendicular joint must be "
                                 "perpendicular"):
        b3.add_perpendicular("P", b3.ground, "rod", axes=((1, 0, 0), (1, 1, 0)))
    with named_error(ValueError, "inplane 'N': normal must be a non-zero vector"):
        b3.add_inplane("N", b3.ground, "rod", point=(0, 0, 0), normal=(0, 0, 0))
    with named_error(ValueError, "pin_in_slot 'S': pin_in_slot joints exist only in planar"):
        b3.add_pin_in_slot("S", b3.ground, "rod", point=(0, 0, 0), axis=(1, 0, 0))
    with named_error(ValueError, "inline 'L': inline joints exist only in spatial"):
        b2.add_inline("L", b2.ground, "crank", point=(0, 0), axis=(1, 0))


def test_bad_dim_and_rotation():
    with named_error(ValueError, "dim must be 2"):
        jmbs.ModelBuilder(dim=4)
    b = jmbs.ModelBuilder(dim=3)
    with named_error(ValueError, "rotation must be orthonormal"):
        b.add_body("b", mass=1.0, inertia=(1, 1, 1), position=(0, 0, 0),
                   rotation=np.diag([1.0, 1.0, -1.0]))
    with named_error(ValueError, "takes `rotation` or `quaternion`, not `angle`"):
        b.add_body("c", mass=1.0, inertia=(1, 1, 1), position=(0, 0, 0), angle=math.pi)


# ----------------------------------------------------------------------------------
# Model files (those not in tests/test_model_files.py)
# ----------------------------------------------------------------------------------

ONE_BODY = "dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0.5, 0]}\n"
ONE_BODY_3D = "dim: 3\nbodies:\n  a: {mass: 1.0, inertia: [1, 1, 1], position: [0.5, 0, 0]}\n"
PIN = "elements:\n  J: {type: revolute, bodies: [ground, a], point: [0, 0]}\n"


def body_line(fields: str, dim: int = 2) -> str:
    """A model file whose one body `a` has these fields (on line 3)."""
    return f"dim: {dim}\nbodies:\n  a: {{{fields}}}\n"


FILE_CASES = [
    # (file content, line of the error (None: the file as a whole), what the message says)
    pytest.param("", None, "a model file is a mapping with dim, bodies and elements", id="empty"),
    pytest.param("bodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0, 0]}\n", 1,
                 "dim: required field missing", id="no-dim"),
    pytest.param("dim: '2'\nbodies: {}\n", 1, "dim: Input should be 2 or 3, got '2'", id="quoted-dim"),
    pytest.param("jmbs: 2\n" + ONE_BODY, 1, "jmbs: Input should be 1, got 2", id="format-version"),
    pytest.param("dim: 2\ngravty: [0, -9.81]\nbodies: {}\n", 2, "gravty: unknown field",
                 id="misspelt-top-level-field"),
    pytest.param("dim: 2\ngravity: [0, 0, -9.81]\nbodies: {}\n", 2, "gravity",
                 id="gravity-shape"),
    pytest.param("dim: 2\nbodies: [a, b]\n", 2, "bodies: Input should be a valid dictionary",
                 id="bodies-as-list"),
    pytest.param(ONE_BODY + "elements:\n  - {type: revolute}\n", 4,
                 "elements: Input should be a valid dictionary", id="elements-as-list"),
    pytest.param("dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0, 0]}\n   b: 1\n", 4,
                 "invalid YAML", id="bad-indentation"),
    pytest.param("dim: 2\nbodies:\n\ta: {mass: 1.0}\n", 3, "invalid YAML: found character '\\t'",
                 id="tab"),
    # bodies
    pytest.param(body_line("mass: .nan, inertia: 1.0, position: [0, 0]"), 3,
                 "bodies.a.mass: Input should be greater than 0, got nan", id="nan-mass"),
    pytest.param(body_line("mass: true, inertia: 1.0, position: [0, 0]"), 3,
                 "bodies.a.mass: Input should be a valid number, got True", id="boolean-mass"),
    pytest.param(body_line("mass: 1.0, inertia: 1.0, position: [.inf, 0]"), 3,
                 "bodies.a: body 'a': position contains NaN or inf", id="inf-position"),
    pytest.param(body_line("mass: 1.0, inertia: 1.0, position: 0.5"), 3,
                 "bodies.a.position: Input should be a valid list", id="scalar-position"),
    pytest.param(body_line("mass: 1.0, inertia: 1.0, position: [0, 0, 0]"), 3,
                 "bodies.a: body 'a': position must be 2 numbers", id="position-3-in-2d"),
    pytest.param(body_line("mass: 1.0, inertia: [1, -1, 1], position: [0, 0, 0]", 3), 3,
                 "bodies.a: body 'a': inertia must be positive definite", id="inertia-not-positive-definite"),
    pytest.param(body_line("mass: 1.0, inertia: [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], "
                           "position: [0, 0, 0]", 3), 3,
                 "bodies.a: body 'a': inertia tensor must be symmetric", id="inertia-asymmetric"),
    pytest.param(body_line("mass: 1.0, inertia: [1, 1, 1], position: [0, 0, 0], "
                           "quaternion: [0, 0, 0, 0]", 3), 3,
                 "bodies.a: body 'a': quaternion must be non-zero", id="zero-quaternion"),
    pytest.param(body_line("mass: 1.0, inertia: [1, 1, 1], position: [0, 0, 0], "
                           "rotation: [[1, 0, 0], [0, 1, 0], [0, 0, -1]]", 3), 3,
                 "bodies.a: body 'a': rotation must be orthonormal", id="reflection"),
    pytest.param("dim: 2\nbodies:\n  ground: {mass: 1.0, inertia: 1.0, position: [0, 0]}\n", 3,
                 "bodies.ground: name 'ground' is reserved", id="body-named-ground"),
    pytest.param("dim: 2\nbodies:\n  a.b: {mass: 1.0, inertia: 1.0, position: [0, 0]}\n", 3,
                 "bodies.a.b: name 'a.b' must be a non-empty string without '.'", id="dotted-name"),
    pytest.param(ONE_BODY + "initial:\n  v: [0, 0]\n", 5, "initial.v: expected 3 numbers",
                 id="initial-velocity-length"),
    # elements
    pytest.param(ONE_BODY + "elements:\n  J: {bodies: [ground, a], point: [0, 0]}\n", 5,
                 "elements.J: every element needs a `type`", id="element-without-type"),
    pytest.param(ONE_BODY + "elements:\n  J: {type: revolute, bodies: [a, a], point: [0, 0]}\n", 5,
                 "elements.J: revolute 'J': joins body 'a' to itself", id="body-joined-to-itself"),
    pytest.param(ONE_BODY + "elements:\n  J: {type: revolute, bodies: [a], point: [0, 0]}\n", 5,
                 "elements.J.bodies.1: required field missing", id="one-body"),
    pytest.param(ONE_BODY + "elements:\n  J: {type: revolute, bodies: [ground, a, a], point: [0, 0]}\n",
                 5, "elements.J.bodies: Tuple should have at most 2 items", id="three-bodies"),
    pytest.param(ONE_BODY + "elements:\n  a: {type: revolute, bodies: [ground, a], point: [0, 0]}\n", 5,
                 "elements.a: duplicate name 'a'", id="element-named-like-a-body"),
    pytest.param(ONE_BODY + "elements:\n  J: {type: spherical, bodies: [ground, a], point: [0, 0]}\n", 5,
                 "elements.J: spherical 'J': spherical joints exist only in spatial", id="planar-spherical"),
    pytest.param(ONE_BODY_3D + "elements:\n  J: {type: revolute, bodies: [ground, a], point: [0, 0, 0], "
                 "axis: [0, 0, 0]}\n", 5, "elements.J: revolute 'J': axis must be a non-zero vector",
                 id="zero-axis"),
    pytest.param(ONE_BODY_3D + "elements:\n  U: {type: universal, bodies: [ground, a], point: [0, 0, 0], "
                 "axes: [[1, 0, 0], [1, 1, 0]]}\n", 5,
                 "elements.U: universal 'U': the two axes of a universal joint must be perpendicular",
                 id="universal-not-perpendicular"),
    pytest.param(ONE_BODY + "elements:\n  W: {type: weld, bodies: [ground, a], point: [0, 0]}\n"
                 "  d: {type: driver, joint: W, motion: t}\n", 6,
                 "elements.d: driver 'd': joint 'W' (weld) has no free coordinate", id="driven-weld"),
    pytest.param(ONE_BODY + PIN + "  d: {type: driver, joint: J, motion: t, coordinate: slide}\n", 6,
                 "elements.d: driver 'd': joint 'J' (revolute) has no 'slide' coordinate",
                 id="driver-coordinate"),
    pytest.param(ONE_BODY + PIN + "  d: {type: driver, joint: J, motion: w * t, params: {w: fast}}\n", 6,
                 "elements.d.params.w", id="motion-parameter-not-a-number"),
    pytest.param(ONE_BODY + PIN + "  d: {type: driver, joint: J, motion: 't *'}\n", 6,
                 "elements.d: driver 'd': motion: expression 't *': syntax error", id="motion-syntax"),
    pytest.param(ONE_BODY + PIN + "  d: {type: driver, joint: J, motion: 3}\n", 6,
                 "elements.d.motion: Input should be a valid string", id="motion-number"),
    pytest.param(ONE_BODY + "elements:\n  L: {type: distance, bodies: [ground, a], point_i: [0, 0], "
                 "point_j: [0.5, 0], length: 2.0}\n", 5, "violates element 'L'",
                 id="reference-configuration-open"),
]


@pytest.mark.parametrize("content, line, needle", FILE_CASES)
def test_model_file_rejects(tmp_path, content, line, needle):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with named_error(jmbs.ModelFileError, re.escape(needle)) as err:
        jmbs.load(path)
    assert str(err.value).startswith(f"{path}:{line}:" if line else f"{path}:"), str(err.value)


def test_model_file_that_is_a_directory(tmp_path):
    with named_error(jmbs.ModelFileError, "is a directory"):
        jmbs.load(tmp_path)


def test_saving_a_python_constraint_says_why(b2, tmp_path):
    pinned(b2).add_constraint("X", ["crank"], holonomic=lambda qs, t: qs[0][1:2])
    with named_error(ValueError, "element 'X': its holonomic is a Python function that a file "
                                 "cannot hold"):
        jmbs.save(b2.build(check=False), tmp_path / "x.yaml")


# ----------------------------------------------------------------------------------
# URDF robots (jmbs.from_urdf; MuJoCo compiles the file)
# ----------------------------------------------------------------------------------

INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" '
            'izz="0.1"/></inertial>')


def urdf(*parts: str) -> str:
    """A URDF robot `r` of these links and joints (`link(...)`, `joint(...)`)."""
    return '<robot name="r">' + "".join(parts) + "</robot>"


def link(name: str, body: str = INERTIAL) -> str:
    return f'<link name="{name}">{body}</link>'


def joint(name: str, kind: str, parent: str, child: str, extra: str = "") -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<axis xyz="0 0 1"/>{extra}</joint>')


ARM2 = (link("base"), link("a"), joint("j", "continuous", "base", "a"))

URDF_CASES = [
    # (file content, from_urdf keyword arguments, what the message says)
    pytest.param(urdf(link("base")), {}, "robot 'r': no link can move: it has 1 link(s) (base) and no "
                 "joint, and the root link 'base' is fixed to the world; add a revolute, continuous or "
                 "prismatic <joint>", id="one-link-no-joint"),
    pytest.param(urdf(link("base"), link("a"), joint("f", "fixed", "base", "a")), {},
                 "no link can move: it has 2 link(s) (base, a) and only fixed joints (f)", id="only-fixed"),
    pytest.param(urdf(), {}, "robot 'r' has no <link>", id="no-link"),
    pytest.param(urdf(*ARM2, link("c")), {}, "robot 'r' has 2 root links (base, c); a URDF robot is a "
                 "tree with one root", id="two-roots"),
    pytest.param(urdf(link("base"), link("arm"), joint("j", "continuous", "base", "amr")), {},
                 "URDF joint 'j': its child link 'amr' is no <link> of the robot; did you mean 'arm'?",
                 id="unknown-child-link"),
    pytest.param(urdf(link("base"), link("a", ""), joint("j", "continuous", "base", "a")), {},
                 "URDF link 'a' moves (URDF joint 'j') but has no mass: give it an <inertial>",
                 id="moving-link-without-inertial"),
    pytest.param(urdf(link("base"), link("a", INERTIAL.replace('iyy="0.1"', 'iyy="0.01"').replace(
        'izz="0.1"', 'izz="0.01"')), joint("j", "continuous", "base", "a")), {},
                 "URDF link 'a': its <inertia> is no rigid body's: the principal moments A, B, C must "
                 "satisfy A + B >= C", id="inertia-not-physical"),
    pytest.param(urdf(*ARM2, link("b"), joint("f", "floating", "a", "b")), {},
                 "URDF joint 'f' is floating, but its parent link 'a' is not the root", id="floating-below"),
    pytest.param(urdf(link("base"), link("a"), joint("j", "planar", "base", "a")), {},
                 "URDF joint 'j' (base -> a) is planar: jmbs has no planar joint", id="planar-joint"),
    pytest.param(urdf(link("base"), link("a"), joint("j", "hinge", "base", "a")), {},
                 "URDF joint 'j' has the unknown type 'hinge'", id="unknown-joint-type"),
    pytest.param(urdf(link("base"), link("a", INERTIAL + '<collision><geometry><mesh filename='
                                         '"package://arm/meshes/a.stl"/></geometry></collision>'),
                      joint("j", "continuous", "base", "a")), {},
                 "mesh file 'package:/arm/meshes/a.stl' not found: MuJoCo reads mesh filenames "
                 "relative to the URDF file's folder and does not resolve 'package://'",
                 id="missing-mesh"),
    pytest.param('<robot name="r"><link name="base">', {}, "not a well-formed URDF (XML) file",
                 id="not-xml"),
    pytest.param("<mujoco><worldbody/></mujoco>", {}, "the root element is <mujoco>, not <robot>: not a "
                 "URDF file (MJCF: read it with jmbs.from_mjcf)", id="mjcf-file"),
    pytest.param(urdf(*ARM2), {"positions": {"k": 0.1}}, "positions: 'k' is no revolute, continuous or "
                 "prismatic joint of the URDF robot; joints: j", id="positions-unknown-joint"),
    pytest.param(urdf(*ARM2), {"positions": {"j": float("nan")}}, "positions: joint 'j': nan is not "
                 "finite", id="positions-nan"),
]


@pytest.mark.parametrize("content, kwargs, needle", URDF_CASES)
def test_urdf_rejects(tmp_path, content, kwargs, needle):
    pytest.importorskip("mujoco")
    path = tmp_path / "robot.urdf"
    path.write_text(content)
    with named_error(ValueError, re.escape(needle)) as err:
        jmbs.from_urdf(path, **kwargs)
    assert str(err.value).startswith(f"{path}: "), str(err.value)


def test_urdf_through_from_mjcf_and_load_speaks_urdf(tmp_path):
    """The degenerate URDF of issue 32 (one link, no joint) through `from_mjcf` and
    `jmbs.load` gets the URDF message, not "the model has no bodies"; a URDF has no
    keyframes; an MJCF model where nothing moves says so in MJCF words."""
    pytest.importorskip("mujoco")
    path = tmp_path / "one_link.urdf"
    path.write_text(urdf(link("base")))
    for read in (jmbs.from_mjcf, jmbs.load, jmbs.from_urdf):
        with named_error(ValueError, "no link can move"):
            read(path)
    with named_error(ValueError, "a URDF file has no keyframes and no actuators; read it with "
                                 "jmbs.from_urdf"):
        jmbs.from_mjcf(path, keyframe=0)
    with named_error(ValueError, "missing.urdf: no such file"):
        jmbs.from_urdf(tmp_path / "missing.urdf")
    with named_error(ValueError, "no body moves: every body is fixed to the world"):
        jmbs.from_mjcf("<mujoco><worldbody><body><geom size='0.1'/></body></worldbody></mujoco>")


# ----------------------------------------------------------------------------------
# Model methods: with_params, with_motions, lookups, the model functions
# ----------------------------------------------------------------------------------


def test_bad_parameter_keys_and_shapes():
    model = examples.four_bar()
    with named_error(ValueError, "unknown parameter 'B.pont'; did you mean 'B.point'"):
        model.with_params({"B.pont": jnp.zeros(2)})
    with named_error(ValueError, r"'B.point' has shape \(2,\)"):
        model.with_params({"B.point": jnp.zeros(3)})


@pytest.mark.parametrize("params, match", [
    pytest.param([("crank.mass", 2.0)], r"with_params .*(dict|mapping)", id="not-a-dict"),
    pytest.param({"crank.mass": "heavy"}, r"'crank.mass'.*number", id="string-value"),
    pytest.param({"crank.mass": "2.0"}, r"with_params: parameter 'crank.mass' must be a number .*got '2\.0'",
                 id="numeric-string-value"),
    pytest.param({"crank.mass": True}, r"'crank.mass' must be a number", id="bool-value"),
    pytest.param({"crank.mass": NAN}, r"'crank.mass'.*NaN", id="nan-value"),
    pytest.param({"crank.mass": -1.0}, r"'crank.mass'.*positive", id="negative-mass"),
])
def test_with_params_rejects(four_bar, params, match):
    with named_error(ValueError, match):
        four_bar.with_params(params)


@pytest.mark.parametrize("motions, match", [
    pytest.param({"drve": lambda t: t}, r"unknown driver 'drve'; did you mean 'drive'", id="misspelt"),
    pytest.param({"O": lambda t: t}, r"unknown driver 'O'; known: 'drive'", id="not-a-driver"),
    pytest.param({"drive": 3}, r"driver 'drive': motion must be a function, got int", id="not-callable"),
    pytest.param({"drive": lambda t: jnp.ones(2) * t}, r"driver 'drive': motion\(t\) must return a scalar",
                 id="vector"),
    pytest.param({"drive": lambda t: 1 / 0}, r"driver 'drive': motion\(t\) failed at t = 0",
                 id="raises"),
])
def test_with_motions_rejects(slider, motions, match):
    with named_error(ValueError, match):
        slider.with_motions(motions)


def test_model_lookups():
    model = examples.four_bar()
    with named_error(ValueError, "unknown element 'Q'"):
        model.rows("Q")
    with named_error(ValueError, "unknown body 'crnk'"):
        model.point(model.q0, "crnk", (0, 0))
    with named_error(ValueError, "q_guess must have shape"):
        jmbs.assemble(model, jnp.zeros(3))
    with named_error(ValueError, "degree\\(s\\) of freedom left"):
        jmbs.kinematics(model, jnp.linspace(0, 1, 3))
    with named_error(ValueError, "unknown element 'Bx'; did you mean 'B'"):
        model.element("Bx")
    info = model.element("B")
    assert (info.kind, info.bodies, info.components) == ("revolute", ("coupler", "rocker"),
                                                         ("Fx", "Fy"))
    assert model.rows("B") == slice(4, 6)


BAD_SHAPE = "(must have shape|has shape|expected shape).*9"


@pytest.mark.parametrize("call, match", [
    pytest.param(lambda m: m.point(jnp.zeros(3), "crank", (0, 0)), r"q .*" + BAD_SHAPE, id="point-q"),
    pytest.param(lambda m: m.point(m.q0, "crank", (0, 0, 0)), r"point .*2 numbers", id="point-local"),
    pytest.param(lambda m: jmbs.phi(m, jnp.zeros(3), 0.0), r"q .*" + BAD_SHAPE, id="phi-q"),
    pytest.param(lambda m: jmbs.constraint_matrix(m, jnp.zeros(3), 0.0), r"q .*" + BAD_SHAPE,
                 id="constraint-matrix-q"),
    pytest.param(lambda m: jmbs.consistent_velocity(m, m.q0, jnp.zeros(2)), r"v_guess .*" + BAD_SHAPE,
                 id="consistent-velocity-v"),
])
def test_model_functions_check_shapes(four_bar, call, match):
    with named_error(ValueError, match):
        call(four_bar)


# ----------------------------------------------------------------------------------
# assemble, kinematics
# ----------------------------------------------------------------------------------


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


@pytest.mark.parametrize("kwargs, match", [
    pytest.param({"fixed": [42]}, r"fixed coordinate index 42 is outside 0\.\.8", id="fixed-index"),
    pytest.param({"fixed": [("crank", "z")]}, r"fixed coordinate 'z' of body 'crank' must be one of",
                 id="fixed-coordinate"),
    pytest.param({"fixed": [("crnk", "x")]}, r"unknown body 'crnk'; did you mean 'crank'",
                 id="fixed-body"),
    pytest.param({"fixed": ["crank.x"]}, r"fixed .*\(body, coordinate\) pairs.*'crank\.x'",
                 id="fixed-dotted-name"),
    pytest.param({"t": NAN}, r"t .*(NaN|finite)", id="nan-time"),
    pytest.param({"q_guess": "nan"}, r"q_guess contains NaN", id="nan-guess"),
    pytest.param({"tol": -1.0}, r"tol must be positive", id="negative-tol"),
])
def test_assemble_rejects(four_bar, kwargs, match):
    if kwargs.get("q_guess") == "nan":
        kwargs = kwargs | {"q_guess": four_bar.q0.at[0].set(jnp.nan)}
    with named_error(ValueError, match):
        jmbs.assemble(four_bar, **({"q_guess": four_bar.q0} | kwargs))


@pytest.mark.parametrize("args, match", [
    pytest.param((jnp.zeros((2, 2)),), r"ts must be a 1-D array of times", id="2d-times"),
    pytest.param((jnp.zeros(0),), r"ts .*at least one time", id="no-times"),
    pytest.param((jnp.array([0.0, 0.1]), jnp.zeros(3)), r"q_guess .*" + BAD_SHAPE, id="q-guess-shape"),
])
def test_kinematics_rejects(slider, args, match):
    with named_error(ValueError, match):
        jmbs.kinematics(slider, *args)


@pytest.mark.parametrize("call, match", [
    pytest.param(lambda m: jmbs.kinematics(m, jnp.array([0.0]), max_steps=0),
                 r"jmbs\.kinematics: max_steps must be at least 1, got 0", id="kinematics-max-steps"),
    pytest.param(lambda m: jmbs.assemble(m, max_steps=2.0), r"jmbs\.assemble: max_steps must be an int",
                 id="assemble-max-steps"),
    pytest.param(lambda m: jmbs.statics(m, m.q0, rtol=-1.0), r"jmbs\.statics: rtol must be positive",
                 id="statics-rtol"),
    pytest.param(lambda m: jmbs.statics(m, m.q0, rank=-1), r"jmbs\.statics: rank must be at least 0",
                 id="statics-negative-rank"),
    pytest.param(lambda m: jmbs.statics(m, m.q0, rank=99), r"jmbs\.statics: rank = 99 exceeds",
                 id="statics-rank-too-large"),
    pytest.param(lambda m: jmbs.sample_configurations(m, 0), r"sample_configurations: n must be at "
                 r"least 1", id="samples-zero"),
    pytest.param(lambda m: jmbs.sample_configurations(m, 4, scale=-0.1),
                 r"sample_configurations: scale must be positive", id="samples-scale"),
    pytest.param(lambda m: jmbs.sample_configurations(m, 4, t=np.zeros(3)),
                 r"sample_configurations: t must be one time or n = 4 times", id="samples-times"),
    pytest.param(lambda m: jmbs.sample_configurations(m, -3), r"sample_configurations: n must be at "
                 r"least 1, got -3; give the number of samples", id="samples-negative"),
    pytest.param(lambda m: jmbs.sample_configurations(m, 2.5), r"sample_configurations: n must be an "
                 r"int, got 2\.5", id="samples-float-n"),
    pytest.param(lambda m: jmbs.sample_configurations(m, 4, scale=0.0),
                 r"sample_configurations: scale must be positive, got 0", id="samples-scale-zero"),
    pytest.param(lambda m: jmbs.sample_configurations(m, 4, scale=float("nan")),
                 r"sample_configurations: scale must be a finite positive number, got nan",
                 id="samples-scale-nan"),
    pytest.param(lambda m: jmbs.sample_configurations(m, 4, walk_length=0),
                 r"sample_configurations: walk_length must be at least 1, got 0; it is the number "
                 r"of samples per random walk", id="samples-walk-length"),
    pytest.param(lambda m: jmbs.sample_configurations(m, 4, method="random"),
                 r"sample_configurations: method must be one of \('walk', 'perturb'\), got "
                 r"'random'", id="samples-method"),
])
def test_analysis_options_are_checked_before_tracing(slider, call, match):
    with named_error(ValueError, match):
        call(slider)


@pytest.fixture(scope="module")
def nan_torque_pendulum():
    """A pendulum whose torque law returns NaN from t = 0.05 on."""
    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -9.81))
    b.add_body("rod", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    b.add_revolute("O", "ground", "rod", point=(0.0, 0.0))
    b.add_torque("T", "rod", lambda t: jnp.where(t > 0.05, jnp.nan, 0.0))
    return b.build()


def test_a_law_that_returns_nan_mid_run_stops_the_run_there_naming_it(nan_torque_pendulum):
    """Not after max_steps: at the step where the NaN appears, as RESULTS.not_finite, with the
    element and the time (adaptive and constant steps)."""
    m = nan_torque_pendulum
    with pytest.warns(UserWarning, match=r"Cause: at t = 0\.05: force element 'T' returned NaN"):
        sol = jmbs.simulate(m, 0.1, throw=False, reactions=False)
    assert sol.result == jmbs.RESULTS.not_finite
    assert int(sol.stats["num_steps"]) < 500
    done = np.isfinite(np.asarray(sol.ts))
    assert np.all(np.isfinite(np.asarray(sol.q)[done]))
    with pytest.raises(RuntimeError, match=r"became NaN or infinite.*Cause: at t = 0\.05: force "
                                           r"element 'T' returned NaN or infinity"):
        jmbs.simulate(m, 0.1, reactions=False)
    with pytest.warns(UserWarning, match=r"at t = 0\.06: force element 'T'"):
        sol = jmbs.simulate(m, 0.1, dt0=0.01, throw=False, reactions=False)
    assert sol.result == jmbs.RESULTS.not_finite and int(sol.stats["num_steps"]) == 6


# ----------------------------------------------------------------------------------
# simulate, reactions
# ----------------------------------------------------------------------------------

TS = jnp.linspace(0.0, 0.01, 3)


@pytest.mark.parametrize("kwargs, match", [
    pytest.param({"q0": jnp.zeros(2)}, r"q0 and v0 must have shapes \(3,\) and \(3,\); got \(2,\)",
                 id="q0-shape"),
    pytest.param({"v0": jnp.zeros(5)}, r"q0 and v0 must have shapes .*got \(3,\) and \(5,\)", id="v0-shape"),
    pytest.param({"q0": "nan"}, r"q0 contains NaN or inf; pass a finite initial state", id="nan-q0"),
    pytest.param({"v0": "inf"}, r"v0 contains NaN or inf", id="inf-v0"),
    pytest.param({"q0": "far"}, r"the initial configuration violates the constraints by 4 \(worst: "
                 r"element 'rod'\).*assemble it first with jmbs\.assemble", id="q0-far-off"),
    pytest.param({"stabilization": "projection"}, r"stabilization must be None, jmbs\.Baumgarte",
                 id="stabilization-string"),
    pytest.param({"formulation": "nullspace"}, r"formulation must be a jmbs formulation .*got 'nullspace'",
                 id="formulation-string"),
    pytest.param({"formulation": jmbs.QR()}, r"formulation must be a jmbs formulation",
                 id="method-as-formulation"),
    pytest.param({"formulation": jmbs.Penalty(stiffness=-1.0)}, r"Penalty: stiffness must be non-negative",
                 id="negative-penalty"),
    pytest.param({"formulation": jmbs.Elimination(eliminate=[("rod", "Fz")])},
                 r"Elimination: element 'rod' has no component 'Fz'; its components are F",
                 id="eliminate-unknown-component"),
    pytest.param({"formulation": jmbs.Elimination(eliminate=[("rdo", "F")])},
                 r"unknown element 'rdo'; did you mean 'rod'", id="eliminate-unknown-element"),
    pytest.param({"adjoint": diffrax.BacksolveAdjoint()},
                 r"BacksolveAdjoint .* use stabilization=jmbs\.Baumgarte", id="backsolve-with-projection"),
    pytest.param({"solver": "tsit5"}, r"solver must be a diffrax solver", id="solver-string"),
    pytest.param({"initial_tol": -1.0}, r"initial_tol must be positive", id="negative-initial-tol"),
    # Bad times: checked on the host before compiling.
    pytest.param({"t1": NAN}, r"t1 .*finite", id="nan-t1"),
    pytest.param({"t1": -0.01, "saveat": -TS}, r"t1 = -0.01 is before t0 = 0; .*backward=True",
                 id="t1-before-t0"),
    pytest.param({"t1": 0.0, "saveat": None}, r"t1 = t0 = 0; give an end time t1 after t0",
                 id="t1-equals-t0"),
    pytest.param({"saveat": jnp.array([0.0, 0.005, 0.5])}, r"saveat .*\[t0, t1\]", id="saveat-beyond-t1"),
    pytest.param({"saveat": jnp.array([0.01, 0.005, 0.0])}, r"saveat .*increasing", id="saveat-decreasing"),
    pytest.param({"saveat": jnp.array([0.0, jnp.nan, 0.01])}, r"saveat .*NaN", id="saveat-nan"),
    pytest.param({"saveat": jnp.zeros((2, 2))}, r"saveat .*1-D", id="saveat-2d"),
    # Integration options: named on the host, not from inside the compiled run.
    pytest.param({"dt0": -0.1}, r"dt0 = -0.1 points away from t1; it must be positive", id="dt0-negative"),
    pytest.param({"dt0": 0.0}, r"dt0 must be a finite non-zero step, got 0", id="dt0-zero"),
    pytest.param({"dt0": NAN}, r"dt0 must be a finite non-zero step, got nan", id="dt0-nan"),
    pytest.param({"dt0": jnp.ones(2)}, r"dt0 must be a scalar step, got shape \(2,\)", id="dt0-shape"),
    pytest.param({"t1": -0.01, "saveat": -TS, "backward": True, "dt0": 1e-3},
                 r"dt0 = 0.001 points away from t1; it must be negative \(a backward run", id="dt0-backward"),
    pytest.param({"max_steps": 0}, r"max_steps must be at least 1, got 0", id="max-steps-zero"),
    pytest.param({"max_steps": 10.5}, r"max_steps must be an int, got 10.5", id="max-steps-float"),
    pytest.param({"max_steps": None}, r"max_steps=None needs an adjoint other than", id="max-steps-none"),
    pytest.param({"stepsize_controller": diffrax.PIDController(rtol=-1e-6, atol=1e-8)},
                 r"stepsize_controller\.rtol must be non-negative, got -1e-06", id="rtol-negative"),
    pytest.param({"stepsize_controller": diffrax.PIDController(rtol=1e-6, atol=NAN)},
                 r"stepsize_controller\.atol must be a finite non-negative number", id="atol-nan"),
    pytest.param({"stepsize_controller": diffrax.PIDController(rtol=0.0, atol=0.0)},
                 r"rtol = atol = 0, a tolerance no step can meet", id="tolerances-zero"),
    pytest.param({"stepsize_controller": diffrax.PIDController(rtol=1e-6, atol=1e-6, dtmin=1.0,
                                                                dtmax=0.1)},
                 r"dtmin = 1 is above dtmax = 0.1", id="dtmin-above-dtmax"),
    pytest.param({"stepsize_controller": diffrax.ConstantStepSize()},
                 r"ConstantStepSize\(\) needs the step dt0=", id="constant-steps-without-dt0"),
    pytest.param({"solver": diffrax.Euler()}, r"solver Euler gives no error estimate, so the adaptive "
                 r"stepsize_controller PIDController cannot choose steps", id="euler-adaptive"),
    pytest.param({"solver": diffrax.SemiImplicitEuler(), "dt0": 1e-3},
                 r"solver SemiImplicitEuler integrates split or stochastic terms", id="split-solver"),
    pytest.param({"saveat": diffrax.SaveAt(ts=TS, fn=lambda t, y, args: y[0])},
                 r"saveat must save the states themselves", id="saveat-fn"),
    pytest.param({"saveat": diffrax.SaveAt(ts=jnp.array([0.0, 0.5]))}, r"saveat .*\[t0, t1\]",
                 id="saveat-object-beyond-t1"),
])
def test_simulate_rejects(pendulum, kwargs, match):
    special = {"nan": lambda x: x.at[0].set(jnp.nan), "inf": lambda x: x.at[0].set(jnp.inf),
               "far": lambda x: x.at[0].set(3.0)}
    kwargs = {k: special[v](getattr(pendulum, k)) if isinstance(v, str) and k in ("q0", "v0") else v
              for k, v in kwargs.items()}
    kwargs = {"t1": 0.01, "saveat": TS, "reactions": False} | kwargs
    with named_error(ValueError, match):
        jmbs.simulate(pendulum, kwargs.pop("t1"), **kwargs)


@pytest.mark.parametrize("make, match", [
    pytest.param(lambda: jmbs.Baumgarte(NAN, 1.0), r"Baumgarte: alpha .*finite", id="baumgarte-nan"),
    pytest.param(lambda: jmbs.Baumgarte(-1.0, 1.0), r"Baumgarte: alpha .*non-negative",
                 id="baumgarte-negative"),
    pytest.param(lambda: jmbs.Penalty(stiffness=NAN), r"Penalty: stiffness .*finite", id="penalty-nan"),
    pytest.param(lambda: jmbs.QR(rtol=-1.0), r"QR: rtol .*positive", id="negative-rank-tolerance"),
    pytest.param(lambda: jmbs.SVD(rtol=NAN), r"SVD: rtol .*positive", id="nan-rank-tolerance"),
])
def test_settings_objects_check_their_values(make, match):
    with named_error(ValueError, match):
        make()


@pytest.fixture(scope="module")
def pendulum_reactions(pendulum):
    return jmbs.reactions(pendulum, pendulum.q0, pendulum.v0, 0.0).reactions


@pytest.mark.parametrize("accessor", ["force", "torque", "is_unique"])
def test_reactions_accessors_name_the_elements(pendulum_reactions, accessor):
    with named_error(ValueError, r"unknown element 'rdo'; .*rod"):
        getattr(pendulum_reactions, accessor)("rdo")


@pytest.mark.parametrize("args, kwargs, match", [
    pytest.param(("q", "v"), {"formulation": "nullspace"}, r"jmbs\.reactions: formulation must be a jmbs "
                 r"formulation", id="formulation-string"),
    pytest.param((jnp.zeros(2), "v"), {}, r"q .*(must have shape|has shape).*3", id="q-shape"),
    pytest.param(("q", jnp.zeros(2)), {}, r"v .*(must have shape|has shape).*3", id="v-shape"),
    pytest.param(("nan", "v"), {}, r"q contains NaN", id="nan-q"),
])
def test_reactions_rejects(pendulum, args, kwargs, match):
    state = {"q": pendulum.q0, "v": pendulum.v0, "nan": pendulum.q0 * jnp.nan}
    args = [state[a] if isinstance(a, str) else a for a in args]
    with named_error(ValueError, match):
        jmbs.reactions(pendulum, *args, 0.0, **kwargs)


def test_non_unit_quaternion_is_normalised_with_a_warning(b3):
    with pytest.warns(UserWarning, match=r"body 'b': quaternion \(2.0, 0.0, 0.0, 0.0\) has norm 2, not 1; "
                      r"jmbs uses it divided by its norm, \(1.0, 0.0, 0.0, 0.0\)"):
        b3.add_body("b", **body3(quaternion=(2.0, 0.0, 0.0, 0.0)))
    np.testing.assert_array_equal(b3.build().params()["b.quaternion"], [1.0, 0.0, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # rounding in the given digits is not worth a word
        b3.add_body("c", **body3(quaternion=(1.0 + 1e-9, 0.0, 0.0, 0.0)))


@pytest.mark.parametrize("analysis", ["reactions", "statics"])
def test_analyses_at_an_unassembled_configuration_warn(four_bar, analysis):
    q = four_bar.q0.at[0].add(1e-3)  # the crank's centre moved off its pin
    args = (q, four_bar.v0, 0.0) if analysis == "reactions" else (q, 0.0)
    with pytest.warns(UserWarning, match=rf"jmbs\.{analysis}: q violates the constraints by 0\.001 "
                      r"\(worst: element '\w+'\).*jmbs\.assemble"):
        getattr(jmbs, analysis)(four_bar, *args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(jmbs, analysis)(four_bar, four_bar.q0, *args[1:])


def test_backward_run_retraces_the_forward_one(pendulum):
    """`backward=True` integrates back in time: from the end of a forward run back to
    t0 the pendulum returns to its start (a second method: the forward run itself)."""
    fwd = jmbs.simulate(pendulum, 0.5, saveat=jnp.array([0.0, 0.5]), reactions=False,
                        stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-10))
    back = jmbs.simulate(pendulum, 0.0, t0=0.5, q0=fwd.q[-1], v0=fwd.v[-1], backward=True,
                         saveat=jnp.array([0.5, 0.0]), reactions=False,
                         stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-10))
    np.testing.assert_allclose(back.q[-1], pendulum.q0, atol=1e-8)
    np.testing.assert_allclose(back.v[-1], pendulum.v0, atol=1e-8)
    assert float(jnp.max(jnp.abs(fwd.q[-1] - pendulum.q0))) > 0.1  # it did move


# ----------------------------------------------------------------------------------
# solvability
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("args, kwargs, match", [
    pytest.param((), {"method": "nulspace"}, r"unknown solvability method 'nulspace'; choose one of "
                 r".*nullspace", id="misspelt-method"),
    pytest.param((), {"method": 3}, r"unknown solvability method 3; choose one of", id="method-number"),
    pytest.param((jnp.zeros(3),), {}, r"q has shape \(3,\), but the model has nq = 9 coordinates",
                 id="q-shape"),
    pytest.param(("nan",), {}, r"q contains NaN or inf \(first at index \(0,\)\)", id="nan-q"),
    pytest.param(("batch",), {}, r"one configuration.*jmbs\.solvability_sweep", id="batch-of-q"),
    pytest.param(("q0", NAN), {}, r"t .*(NaN|finite)", id="nan-time"),
])
def test_solvability_rejects(four_bar, args, kwargs, match):
    named = {"nan": four_bar.q0.at[0].set(jnp.nan), "batch": jnp.stack([four_bar.q0] * 2),
             "q0": four_bar.q0}
    args = [named[a] if isinstance(a, str) else a for a in args]
    with named_error(ValueError, match):
        jmbs.solvability(four_bar, *args, **kwargs)


def test_solvability_of_a_model_without_constraints(b2):
    with named_error(ValueError, "the model has no constraints, so it has no reactions to analyse"):
        jmbs.solvability(b2.build())


@pytest.fixture(scope="module")
def four_bar_report(four_bar):
    return jmbs.solvability(four_bar)


@pytest.mark.parametrize("ask", [
    pytest.param(lambda r: r.is_unique("Bx"), id="is_unique"),
    pytest.param(lambda r: r.unique_components("Bx"), id="unique_components"),
    pytest.param(lambda r: r.is_unique_group(["A", "Bx"]), id="is_unique_group"),
    pytest.param(lambda r: r.margin("Bx"), id="margin"),
])
def test_report_names_unknown_elements(four_bar_report, ask):
    with named_error(ValueError, r"unknown element 'Bx'; did you mean 'B'"):
        ask(four_bar_report)


def test_report_empty_group(four_bar_report):
    with named_error(ValueError, r"is_unique_group needs at least one element name"):
        four_bar_report.is_unique_group([])


# ----------------------------------------------------------------------------------
# Sweeps, paths, batch_map
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("qs, kwargs, match", [
    pytest.param("q0", {}, r"qs must have shape \(batch, 9\); got \(9,\)", id="one-configuration"),
    pytest.param(np.zeros((3, 4)), {}, r"qs has shape \(3, 4\), but the model has nq = 9", id="wrong-nq"),
    pytest.param(np.zeros((2, 2, 9)), {}, r"qs must have shape \(batch, 9\); got \(2, 2, 9\)", id="3d"),
    pytest.param("nan", {}, r"qs contains NaN or inf \(first at index \(1, 0\)\)", id="nan"),
    pytest.param("two", {"method": "svdd"}, r"unknown solvability method 'svdd'", id="misspelt-method"),
    pytest.param("two", {"ts": np.array([0.0, np.nan])}, r"ts contains NaN or inf", id="nan-times"),
    pytest.param("two", {"ts": np.zeros(3)}, r"ts .*\(3,\).*2 configurations", id="times-shape"),
    pytest.param("two", {"batch_size": 0}, r"batch_size must be a positive int", id="zero-batch-size"),
    pytest.param(np.zeros((0, 9)), {}, r"qs .*empty", id="no-configurations"),
])
def test_solvability_sweep_rejects(four_bar, qs, kwargs, match):
    named = {"q0": four_bar.q0, "two": jnp.stack([four_bar.q0] * 2),
             "nan": jnp.stack([four_bar.q0, four_bar.q0 * jnp.nan])}
    with named_error(ValueError, match):
        jmbs.solvability_sweep(four_bar, named[qs] if isinstance(qs, str) else qs, **kwargs)


def test_paths_name_the_driver_and_the_grid(slider):
    with named_error(ValueError, r"unknown driver 'drve'; the model's drivers are drive"):
        jmbs.driver_path(slider, "drve", np.linspace(0.0, 0.1, 3))
    with named_error(ValueError, r"s must be an increasing 1-D grid with at least two points"):
        jmbs.solvability_path(slider, lambda x: (slider.q0, x), np.zeros((2, 2)))


@pytest.mark.parametrize("fn, batch, kwargs, match", [
    pytest.param(None, {}, {}, r"the batch has no arrays", id="empty-tree"),
    pytest.param(None, {"a": 1.0}, {}, r"batch leaf \['a'\] is a scalar .*np\.full", id="scalar-leaf"),
    pytest.param(None, {"a": np.zeros(3), "b": np.zeros(4)}, {},
                 r"different leading \(batch\) sizes \[3, 4\].*\['a'\]: \(3,\), \['b'\]: \(4,\)",
                 id="different-sizes"),
    pytest.param(None, {"a": np.zeros(0)}, {}, r"the batch is empty", id="zero-length"),
    pytest.param(None, {"a": np.zeros(3)}, {"chunk_size": 0}, r"chunk_size must be a positive int; got 0",
                 id="zero-chunk"),
    pytest.param(3, {"a": np.zeros(3)}, {}, r"fn must be a function of one batch element; got 3",
                 id="fn-not-callable"),
    pytest.param(None, {"a": np.zeros(3)}, {"devices": 10_000}, r"devices=10000: there are \d+ devices",
                 id="too-many-devices"),
])
def test_batch_map_rejects(fn, batch, kwargs, match):
    with named_error(ValueError, match):
        jmbs.batch_map((lambda p: p) if fn is None else fn, batch, **kwargs)


def test_batch_map_passes_on_the_functions_own_error(four_bar):
    with named_error(ValueError, r"unknown parameter 'crank.mas'; did you mean 'crank.mass'"):
        jmbs.batch_map(lambda p: four_bar.with_params({"crank.mas": p}), np.ones(3))


# ----------------------------------------------------------------------------------
# The `jmbs` command (the cases of tests/test_cli.py not repeated)
# ----------------------------------------------------------------------------------


FOUR_BAR_XML = str(JMBS_DIR / "models" / "mjcf" / "four_bar.xml")
NEEDS_MUJOCO = pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs mujoco")


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    b = pinned(builder(2))
    b.add_driver("spin", joint="O", motion="t")
    jmbs.save(b.build(), folder / "driven.yaml")
    (folder / "free.yaml").write_text(ONE_BODY)
    (folder / "gravity.yaml").write_text("dim: 2\ngravity: [0, 0, -9.81]\n" + ONE_BODY[7:])
    (folder / "nan.txt").write_text("0.5, nan, 0\n")
    (folder / "words.txt").write_text("one two three\n")
    (folder / "q.txt").write_text("0.5 0 0\n")
    return folder


def jmbs_command(args, folder, capsys, monkeypatch):
    """Exit code and stderr of `jmbs ARGS` run in `folder`."""
    monkeypatch.chdir(folder)
    capsys.readouterr()
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("args, expected", [
    pytest.param(["analyze"], "Missing argument 'MODEL'", id="no-model"),
    pytest.param(["frobnicate"], "No such command 'frobnicate'", id="unknown-command"),
    pytest.param(["analyze", "driven.yaml", "--bogus"], "No such option: --bogus", id="unknown-option"),
    pytest.param(["analyze", "driven.yaml", "--method", "nulspace"], "'nulspace' is not one of 'nullspace'",
                 id="unknown-method"),
    pytest.param(["analyze", "driven.yaml", "--rank-tol", "abc"], "Invalid value for '--rank-tol'",
                 id="rank-tol-not-a-number"),
    pytest.param(["analyze", "driven.yaml", "--at", "1", "--q", "q.txt"], "give --at or --q, not both",
                 id="at-and-q"),
    pytest.param(["simulate", "driven.yaml"], "Missing option '--t1'", id="no-t1"),
    pytest.param(["simulate", "driven.yaml", "--t1", "0"], "Invalid value for --t1: must be positive",
                 id="zero-t1"),
    pytest.param(["simulate", "driven.yaml", "--t1", "1", "--formulation", "lagrange"],
                 "'lagrange' is not one of 'nullspace'", id="unknown-formulation"),
    pytest.param(["simulate", "driven.yaml", "--t1", "1", "--stabilization", "magic"],
                 "'magic' is not one of 'projection'", id="unknown-stabilization"),
    pytest.param(["simulate", "driven.yaml", "--t1", "1", "--n-saves", "1"],
                 "Invalid value for '--n-saves'", id="one-save"),
    pytest.param(["sweep", "driven.yaml", "--driver", "spin", "--range", "1", "0", "--n", "5"],
                 "Invalid value for --range: needs A < B, got 1 0", id="reversed-range"),
    pytest.param(["sweep", "driven.yaml", "--driver", "spin", "--range", "0", "nan", "--n", "5"],
                 "Invalid value for --range", id="nan-range"),
    pytest.param(["sweep", "driven.yaml", "--driver", "spin", "--range", "0", "1", "--n", "1"],
                 "Invalid value for '--n'", id="one-point"),
    pytest.param(["models", "extra"], "unexpected extra argument", id="extra-argument"),
    # Values that must be refused before any computation (jmbs.solvability and
    # jmbs.simulate are replaced by a failure here).
    pytest.param(["analyze", "driven.yaml", "--rank-tol", "-1"], "--rank-tol", id="negative-rank-tol"),
    pytest.param(["analyze", "driven.yaml", "--rank-tol", "nan"], "--rank-tol", id="nan-rank-tol"),
    pytest.param(["analyze", "driven.yaml", "--at", "nan"], "--at", id="nan-at"),
    pytest.param(["simulate", "driven.yaml", "--t1", "inf"], "--t1", id="infinite-t1"),
    pytest.param(["simulate", "driven.yaml", "--t1", "1", "--rtol", "-1"], "--rtol", id="negative-rtol"),
    # Outputs and options read before the run (issue 32): nothing is computed first.
    pytest.param(["simulate", "driven.yaml", "--t1", "1", "--animate", "run.avi"],
                 "Invalid value for --animate: unsupported animation file 'run.avi'; use a .gif or .mp4",
                 id="animation-format"),
    pytest.param(["simulate", "driven.yaml", "--t1", "1", "--out", "run.npz"],
                 "Invalid value for --out: give the path without a suffix (it writes PATH.npz and "
                 "PATH.csv); got 'run.npz', try --out run", id="out-with-suffix"),
    pytest.param(["simulate", "driven.yaml", "--t1", "1", "--out", "q.txt/run"],
                 "Invalid value for --out: cannot make the folder 'q.txt'", id="out-below-a-file"),
    pytest.param(["sweep", "driven.yaml", "--driver", "spin", "--range", "0", "1", "--n", "3", "--out",
                  "s.png"], "give the path without a suffix (it writes PREFIX.csv and PREFIX.png)",
                 id="sweep-out-with-suffix"),
    pytest.param(["analyze", "driven.yaml", "--keyframe", "home"],
                 "Invalid value for --keyframe: applies to MuJoCo models (.xml) only; 'driven.yaml' is "
                 "not one", id="keyframe-of-a-model-file"),
    pytest.param(["simulate", "arm.urdf", "--t1", "1", "--keyframe", "0"],
                 "a URDF robot has no keyframes", id="keyframe-of-a-urdf"),
    pytest.param(["analyze", "driven.yaml", "--resultant", "O"],
                 "Invalid value for --resultant: 'O': expected GROUP@ON", id="resultant-without-on"),
])
def test_command_usage_errors(cli_files, capsys, monkeypatch, args, expected):
    """Exit code 2, the problem named, no traceback (typer prints the usage box)."""
    def refused(*a, **k):
        raise AssertionError("bad input reached the computation")

    monkeypatch.setattr(jmbs, "solvability", refused)
    monkeypatch.setattr(jmbs, "simulate", refused)
    code, err = jmbs_command(args, cli_files, capsys, monkeypatch)
    assert code == 2, err
    assert "Traceback" not in err
    assert expected in " ".join(re.sub(r"[│╭╮╰╯─]", " ", err).split()), err


@pytest.mark.parametrize("args, expected", [
    pytest.param(["analyze", "driven.yaml", "--q", "nan.txt"], "q contains NaN or inf", id="nan-in-q-file"),
    pytest.param(["analyze", "driven.yaml", "--q", "words.txt"],
                 "words.txt: expected numbers separated by spaces or commas", id="words-in-q-file"),
    pytest.param(["analyze", "driven.yaml", "--q", "missing.txt"], "missing.txt: No such file",
                 id="missing-q-file"),
    pytest.param(["analyze", "free.yaml"], "the model has no constraints", id="nothing-to-analyse"),
    pytest.param(["sweep", "free.yaml", "--driver", "spin", "--range", "0", "1", "--n", "3"],
                 "free.yaml has no drivers", id="sweep-without-drivers"),
    pytest.param(["sweep", "driven.yaml", "--driver", "spn", "--range", "0", "1", "--n", "3"],
                 r"unknown driver 'spn'; (did you mean 'spin'|the model's drivers are spin)",
                 id="misspelt-driver"),
    pytest.param(["sweep", "driven.yaml", "--driver", "O", "--range", "0", "1", "--n", "3"],
                 r"unknown driver 'O'; (known: 'spin'|the model's drivers are spin)", id="joint-as-driver"),
    pytest.param(["analyze", "gravity.yaml"], "gravity.yaml:2: gravity", id="bad-gravity-in-file"),
    pytest.param(["analyze", FOUR_BAR_XML, "--keyframe", "home"],
                 r"four_bar.xml: no keyframe 'home'; it has no <keyframe>", id="unknown-keyframe",
                 marks=NEEDS_MUJOCO),
    pytest.param(["analyze", FOUR_BAR_XML, "--keyframe", "2"], r"four_bar.xml: no keyframe 2",
                 id="keyframe-index", marks=NEEDS_MUJOCO),
])
def test_command_input_errors(cli_files, capsys, monkeypatch, args, expected):
    """Exit code 3 and one line `error: ...` naming the problem, no traceback."""
    code, err = jmbs_command(args, cli_files, capsys, monkeypatch)
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and re.search(expected, lines[0]), err


def test_command_checks_the_writer_and_the_reader_before_the_run(cli_files, capsys, monkeypatch):
    """An .mp4 without ffmpeg, a MuJoCo or URDF model without the mujoco package: usage
    errors (exit 2) before anything is computed, not a failure after the run (exit 4)."""
    from matplotlib import animation

    def refused(*a, **k):
        raise AssertionError("bad input reached the computation")

    monkeypatch.setattr(jmbs, "simulate", refused)
    monkeypatch.setattr(jmbs, "solvability", refused)
    monkeypatch.setattr(animation.writers, "is_available", lambda name: False)
    code, err = jmbs_command(["simulate", "driven.yaml", "--t1", "1", "--animate", "run.mp4"], cli_files,
                             capsys, monkeypatch)
    assert code == 2 and "writing .mp4 needs ffmpeg, which was not found" in err, err
    monkeypatch.setitem(sys.modules, "mujoco", None)  # `import mujoco` fails
    for model, kind in ((FOUR_BAR_XML, "MuJoCo"), ("arm.urdf", "URDF")):
        code, err = jmbs_command(["analyze", model], cli_files, capsys, monkeypatch)
        flat = " ".join(re.sub(r"[│╭╮╰╯─]", " ", err).split())
        assert code == 2 and f"reading a {kind} model needs the mujoco package" in flat, err


def test_command_exit_codes_of_failures(cli_files, capsys, monkeypatch):
    """4: a numerical failure (a driver that the mechanism cannot follow: the assembly
    along --at, the simulation's initial velocities); 1: an error that is a bug in jmbs."""
    (cli_files / "locked.yaml").write_text(
        "dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 0.1, position: [0.5, 0.0]}\nelements:\n"
        "  O: {type: revolute, bodies: [ground, a], point: [0.0, 0.0]}\n"
        "  L: {type: distance, bodies: [ground, a], point_i: [1.0, 1.0], point_j: [1.0, 0.0]}\n"
        "  spin: {type: driver, joint: O, motion: t}\n")
    for args, expected in ((["analyze", "locked.yaml", "--at", "1"], "error: assembly did not converge"),
                           (["simulate", "locked.yaml", "--t1", "0.1", "--n-saves", "3"],
                            "error: jmbs.consistent_velocity: no velocity satisfies")):
        code, err = jmbs_command(args, cli_files, capsys, monkeypatch)
        assert code == 4 and err.strip().splitlines()[-1].startswith(expected), err

    def bug(*a, **k):
        raise TypeError("unsupported operand")

    monkeypatch.setattr(jmbs, "solvability", bug)
    code, err = jmbs_command(["analyze", "driven.yaml"], cli_files, capsys, monkeypatch)
    assert code == 1 and err.strip() == ("error: internal error (TypeError: unsupported operand); re-run "
                                         "with --debug for the traceback and report it"), err


# ----------------------------------------------------------------------------------
# The fixed-step stepper (jmbs.RegularizedEuler, jmbs.step)
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make, match", [
    pytest.param(lambda: jmbs.RegularizedEuler(0.0), r"the step h must be positive", id="zero-step"),
    pytest.param(lambda: jmbs.RegularizedEuler(-1e-3), r"the step h must be positive", id="negative-step"),
    pytest.param(lambda: jmbs.RegularizedEuler(NAN), r"the step h must be positive and finite",
                 id="nan-step"),
    pytest.param(lambda: jmbs.RegularizedEuler(1e-3, compliance=-1e-6),
                 r"compliance must be non-negative \(0 is a rigid row\)", id="negative-compliance"),
    pytest.param(lambda: jmbs.RegularizedEuler(1e-3, compliance={"rod": -1.0}),
                 r"compliance\['rod'\] must be non-negative", id="negative-element-compliance"),
    pytest.param(lambda: jmbs.RegularizedEuler(1e-3, damping={"rod": NAN}),
                 r"damping\['rod'\] contains NaN", id="nan-damping"),
    pytest.param(lambda: jmbs.RegularizedEuler(1e-3, rank=-1), r"rank must be a non-negative",
                 id="negative-rank"),
])
def test_stepper_settings_are_checked(make, match):
    with named_error(ValueError, match):
        make()


@pytest.mark.parametrize("solver, kwargs, match", [
    pytest.param(jmbs.RegularizedEuler(1e-3, compliance={"rdo": 1e-6}), {},
                 r"RegularizedEuler\(compliance=...\): unknown element 'rdo'", id="unknown-element"),
    pytest.param(jmbs.RegularizedEuler(1e-3, compliance={"rod.Fz": 1e-6}), {},
                 r"element 'rod' has no component 'Fz'; its components are F", id="unknown-component"),
    pytest.param(jmbs.RegularizedEuler(1e-3, compliance=np.ones(4)), {},
                 r"compliance must be a number, an array of shape \(1,\)", id="compliance-shape"),
    pytest.param(jmbs.RegularizedEuler(1e-3), {"stabilization": None},
                 r"stabilization do not apply to the fixed-step solver", id="stabilization-given"),
    pytest.param(jmbs.RegularizedEuler(1e-3), {"formulation": jmbs.Pseudoinverse(), "dt0": 1e-3},
                 r"dt0, formulation do not apply", id="formulation-given"),
    pytest.param(jmbs.RegularizedEuler(3e-3), {}, r"not a whole number of steps h = 0.003",
                 id="t1-off-grid"),
    pytest.param(jmbs.RegularizedEuler(1e-3), {"saveat": [0.0, 0.0055]},
                 r"save time 0.0055 is not a step time", id="saveat-off-grid"),
    pytest.param(jmbs.RegularizedEuler(1e-3), {"max_steps": 5}, r"10 steps .* exceed max_steps = 5",
                 id="too-many-steps"),
])
def test_fixed_step_simulate_rejects(pendulum, solver, kwargs, match):
    with named_error(ValueError, match):
        jmbs.simulate(pendulum, 0.01, solver=solver, reactions=False, **kwargs)


def test_step_needs_a_step_size(pendulum):
    with named_error(ValueError, r"jmbs.step: give the step h"):
        jmbs.step(pendulum, jmbs.StepState.initial(pendulum))


@pytest.mark.parametrize("kwargs, match", [
    pytest.param({"radius": 0.0}, r"wheel 'W': radius must be positive, got 0", id="zero-radius"),
    pytest.param({"radius": -0.2}, r"wheel 'W': radius must be positive", id="negative-radius"),
    pytest.param({"axis": (0, 0, 0)}, r"wheel 'W': axis must be a non-zero", id="zero-axle"),
    pytest.param({"plane_normal": (0, 0, 0)}, r"wheel 'W': plane_normal must be a non-zero",
                 id="zero-plane-normal"),
])
def test_wheel_geometry_is_checked(kwargs, match):
    b = jmbs.ModelBuilder(dim=3)
    disc = b.add_body("disc", mass=1.0, inertia=(0.01, 0.02, 0.01), position=(0.0, 0.0, 0.2))
    with named_error(ValueError, match):
        b.add_wheel("W", disc, **({"radius": 0.2, "axis": (0, 1, 0)} | kwargs))


def test_wheel_is_spatial_only():
    b = jmbs.ModelBuilder(dim=2)
    disc = b.add_body("disc", mass=1.0, inertia=0.01, position=(0.0, 0.2))
    with named_error(ValueError, r"wheel 'W': wheel joints exist only in spatial"):
        b.add_joint("wheel", "W", b.ground, disc, radius=0.2, axis=(0, 1))
