"""MuJoCo models (MJCF) in jmbs: the mapping element by element against MuJoCo's own
compiled model and kinematics, the motion against MuJoCo's simulation, and the forces of
redundant constraints against MuJoCo's regularisation."""

import json
import math
import warnings
from pathlib import Path

import diffrax
import numpy as np
import pytest
from typer.testing import CliRunner

import jmbs
from jmbs.cli import app

mujoco = pytest.importorskip("mujoco")
MJCF = Path(jmbs.__file__).parent / "models" / "mjcf"


def quiet(*args, **kwargs) -> jmbs.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jmbs.MJCFWarning)
        return jmbs.from_mjcf(*args, **kwargs)


def compiled(xml):
    if isinstance(xml, str) and xml.lstrip().startswith("<"):
        return mujoco.MjModel.from_xml_string(xml)
    return mujoco.MjModel.from_xml_path(str(xml))


# A tree with every joint jmbs maps (hinge, slide, ball, free, hinge + slide on one axis,
# two hinges through one point, a jointless body, a massless frame between bodies) and
# tilted frames, so that positions, rotations and axes are checked off the axes.
TREE = """
<mujoco>
  <option gravity="0.5 -1 -9.81"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <body name="base" pos="0.1 0.2 0.3" euler="10 20 30">
      <joint name="h" type="hinge" axis="0.3 0.4 1" pos="0.05 0 0"/>
      <geom type="box" size="0.1 0.05 0.02" pos="0.02 0.01 0" mass="2"/>
      <body name="slider" pos="0.2 0 0" euler="0 40 0">
        <joint name="s" type="slide" axis="1 0 0.2"/>
        <geom type="capsule" fromto="0 0 0 0.1 0.05 0" size="0.01" mass="0.3"/>
        <body name="ball" pos="0.1 0 0">
          <joint name="b" type="ball"/>
          <geom type="ellipsoid" size="0.03 0.02 0.01" pos="0.02 0 0" mass="0.2"/>
          <body name="fixed" pos="0 0.05 0"><geom type="sphere" size="0.01" mass="0.05"/></body>
        </body>
        <body name="mount" pos="0 0.1 0" euler="0 0 15">
          <body name="cross">
            <joint name="u1" type="hinge" axis="1 0 0"/>
            <joint name="u2" type="hinge" axis="0 1 0"/>
            <geom type="box" size="0.02 0.03 0.04" pos="0 0 0.05" mass="0.4"/>
          </body>
        </body>
      </body>
      <body name="screw" pos="-0.1 0 0">
        <joint name="sr" type="hinge" axis="0 0 1"/>
        <joint name="ss" type="slide" axis="0 0 1"/>
        <geom type="cylinder" size="0.02 0.05" mass="0.6"/>
      </body>
    </body>
    <body name="floater" pos="1 1 1"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
</mujoco>
"""


def test_bodies_joints_and_gravity_are_mujocos():
    """Every moving body's mass, principal inertia, centre of mass and rotation are
    MuJoCo's; the joints are the jmbs kinds of MuJoCo's joints (two hinges through one
    point one universal joint), the jointless body a weld, gravity MuJoCo's;
    the model is a tree (no redundancy) with MuJoCo's number of degrees of freedom."""
    model = quiet(TREE)
    mj = compiled(TREE)
    data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, data)
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, i) for i in range(mj.nbody)]
    assert model.body_names == ("base", "slider", "ball", "fixed", "cross", "screw", "floater")
    p = model.params()
    for body in model.body_names:
        i = names.index(body)
        assert float(p[f"{body}.mass"]) == pytest.approx(mj.body_mass[i], rel=1e-15)
        np.testing.assert_allclose(p[f"{body}.inertia"], mj.body_inertia[i], rtol=1e-15)
        np.testing.assert_allclose(p[f"{body}.position"], data.xipos[i], atol=1e-15)
        np.testing.assert_allclose(p[f"{body}.rotation"], data.ximat[i].reshape(3, 3), atol=1e-15)
    np.testing.assert_allclose(p["gravity"], [0.5, -1.0, -9.81])
    kinds = {s.name: s.kind for s in model.element_specs}
    assert kinds == {"h": "revolute", "s": "prismatic", "b": "spherical", "fixed_weld": "weld",
                     "u1_u2": "universal", "sr_ss": "cylindrical"}
    rep = jmbs.solvability(model)
    assert rep.redundancy == 0 and rep.dof == mj.nv


def test_state_and_joint_coordinates_follow_mujocos_kinematics():
    """At random joint positions and velocities of the tree, `mjcf_state` gives a jmbs
    state on jmbs's constraints, the jmbs joint coordinates are MuJoCo's qpos (from the
    pose), and the velocities satisfy the velocity constraints."""
    model = quiet(TREE)
    mj = compiled(TREE)
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(0)
    ball = mj.jnt_qposadr[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, "b")]
    for _ in range(3):
        data.qpos[:] = mj.qpos0 + rng.uniform(-0.5, 0.5, mj.nq)
        quat = rng.normal(size=4)
        data.qpos[ball:ball + 4] = quat / np.linalg.norm(quat)
        data.qpos[-4:] /= np.linalg.norm(data.qpos[-4:])
        data.qvel[:] = rng.uniform(-1, 1, mj.nv)
        q, v = jmbs.mjcf_state(model, mj, data)
        assert np.max(np.abs(np.asarray(jmbs.phi(model, q)))) < 1e-12
        C = np.asarray(jmbs.constraint_matrix(model, q))
        assert np.max(np.abs(C @ v)) < 1e-12
        coords = jmbs.joint_coordinates(model, q)
        for joint in ("h", "s", "sr", "ss"):
            adr = mj.jnt_qposadr[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, joint)]
            name = {"h": "h.angle", "s": "s.slide", "sr": "sr_ss.angle", "ss": "sr_ss.slide"}[joint]
            assert coords[name] == pytest.approx(data.qpos[adr] - mj.qpos0[adr], abs=1e-12)


def test_a_keyframe_is_the_reference_configuration():
    """`keyframe=` makes the keyframe's pose the reference configuration (joint coordinates
    zero there), its velocities the initial ones, its controls the actuators' values."""
    mj = compiled(TREE)
    qpos = np.array(mj.qpos0) + 0.1
    for a in (mj.jnt_qposadr[2], mj.nq - 4):  # the ball's and the free joint's quaternions
        qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    qvel = np.linspace(-0.5, 0.5, mj.nv)
    numbers = [" ".join(f"{x:.17g}" for x in values) for values in (qpos, qvel)]
    xml = TREE.replace("</mujoco>", f'<keyframe><key name="home" qpos="{numbers[0]}" '
                       f'qvel="{numbers[1]}"/></keyframe></mujoco>')
    model = quiet(xml, keyframe="home")
    data = mujoco.MjData(compiled(xml))
    data.qpos[:], data.qvel[:] = qpos, qvel
    q, v = jmbs.mjcf_state(model, compiled(xml), data)
    np.testing.assert_allclose(np.asarray(model.q0), q, atol=1e-14)
    np.testing.assert_allclose(np.asarray(model.v0), v, atol=1e-12)
    assert all(abs(x) < 1e-12 for x in jmbs.joint_coordinates(model, model.q0).values())
    with pytest.raises(ValueError, match="no keyframe 'away'"):
        quiet(xml, keyframe="away")


def test_what_is_not_mapped_is_listed_and_names_stay_unique():
    """Contacts, tendons, limits, armature, friction loss, sensors, unsupported actuators
    and inactive equalities each get a line of the one MJCFWarning; a joint named like a
    body gets `_joint`; unnamed elements are `<kind><index>`."""
    xml = """
    <mujoco>
      <worldbody>
        <site name="anchor" pos="0 0 1"/>
        <body name="arm" pos="0 0 1">
          <joint name="arm" type="hinge" axis="0 1 0" range="-1 1" armature="0.1" frictionloss="0.2"/>
          <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1"/>
          <site name="tip" pos="0.5 0 0"/>
          <body pos="0.5 0 0"><joint type="hinge" axis="0 1 0"/>
            <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1"/></body>
        </body>
      </worldbody>
      <tendon><spatial name="cable"><site site="anchor"/><site site="tip"/></spatial></tendon>
      <equality><joint joint1="arm" active="false"/></equality>
      <actuator><motor tendon="cable"/><general joint="arm" dyntype="integrator"/></actuator>
      <sensor><jointpos joint="arm"/></sensor>
    </mujoco>"""
    with pytest.warns(jmbs.MJCFWarning) as record:
        model = jmbs.from_mjcf(xml)
    text = str(record[0].message)
    for needle in ("contacts: 2 geoms", "tendons: ['cable']",
                   "range [-0.0174533, 0.0174533] rad is not enforced",
                   "armature", "frictionloss", "sensors: 1", "actuator 'actuator0'",
                   "equality 'equality0' is inactive", "activation dynamics",
                   "joint 'arm' is 'arm_joint'"):
        assert needle in text, needle
    assert model.body_names == ("arm", "body2")
    assert [s.name for s in model.element_specs] == ["arm_joint", "joint1"]


def test_equalities_and_couplings():
    """A weld equality holds two bodies rigidly (one body's worth of freedom left); the
    joint coupling `q1 = 2 q2` is a constraint whose residual, at MuJoCo states, is
    `q1 - 2 q2`; a connect between sites that miss each other is assembled (and said so)."""
    xml = """
    <mujoco>
      <option gravity="0 0 -9.81"/>
      <default><geom contype="0" conaffinity="0"/><joint type="hinge" axis="0 1 0"/></default>
      <worldbody>
        <body name="a" pos="0 0 1"><joint name="ja"/>
          <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="1"/>
          <site name="sa" pos="0.4 0 0"/></body>
        <body name="b" pos="0 0 0.5"><joint name="jb"/>
          <geom type="capsule" fromto="0 0 0 0.4 0 0.1" size="0.02" mass="1"/></body>
        <body name="c" pos="1 0 1"><freejoint/><geom type="sphere" size="0.05" mass="1"/>
          <site name="sc"/></body>
      </worldbody>
      <equality>
        <joint name="gear" joint1="ja" joint2="jb" polycoef="0 2 0 0 0"/>
        <weld name="glue" body1="a" body2="c"/>
      </equality>
    </mujoco>"""
    model = quiet(xml)
    kinds = {s.name: s.kind for s in model.element_specs}
    assert kinds == {"ja": "revolute", "jb": "revolute", "gear": "holonomic", "glue": "weld"}
    assert jmbs.solvability(model).dof == 1
    mj = compiled(xml)
    data = mujoco.MjData(mj)
    row = model.element_names.index("gear")
    gear = sum(len(model.element(n).components) for n in model.element_names[:row])
    for qa, qb in ((0.4, 0.2), (-0.3, 0.5)):
        data.qpos[:2] = qa, qb
        mujoco.mj_kinematics(mj, data)
        mujoco.mj_comPos(mj, data)
        q, _ = jmbs.mjcf_state(model, mj, data)
        residual = np.asarray(jmbs.phi(model, q))
        assert residual[gear] == pytest.approx(qa - 2 * qb, abs=1e-12)

    missing = xml.replace('<weld name="glue" body1="a" body2="c"/>',
                          '<connect name="pin" site1="sa" site2="sc"/>')
    with pytest.warns(jmbs.MJCFWarning, match="'pin': its anchors are 0.6 m apart"):
        model = jmbs.from_mjcf(missing)
    assert np.max(np.abs(np.asarray(jmbs.phi(model, model.q0)))) < 1e-10


def test_actuators_are_mujocos_laws():
    """A position servo on a slide is MuJoCo's force `kp (ctrl - q) - kv q'`: a slide
    spring-damper, so the slider is in equilibrium at `ctrl - m g / kp` and nowhere else;
    as a driver it holds the target and its reaction is the servo's force `m g`; a motor
    is `gear x ctrl`."""
    xml = """
    <mujoco>
      <option gravity="0 0 -9.81"/>
      <worldbody><body name="s" pos="0 0 1"><joint name="z" type="slide" axis="0 0 1"/>
        <geom type="box" size="0.1 0.1 0.1" mass="2" contype="0" conaffinity="0"/></body>
        <body name="r" pos="1 0 1"><joint name="spin" type="hinge" axis="0 0 1"/>
        <geom type="box" size="0.1 0.1 0.1" mass="2" contype="0" conaffinity="0"/></body></worldbody>
      <actuator><position name="servo" joint="z" kp="400" kv="40"/>
        <motor name="motor" joint="spin" gear="3"/></actuator>
    </mujoco>"""
    model = jmbs.from_mjcf(xml, controls={"servo": 0.05, "motor": 0.0})
    p = model.params()
    assert float(p["servo.stiffness"]) == 400 and float(p["servo.damping"]) == 40
    assert float(p["servo.rest_slide"]) == pytest.approx(0.05)
    assert float(jmbs.from_mjcf(xml, controls={"motor": 0.5}).params()["motor.force"]) == 1.5
    rest = 0.05 - 2 * 9.81 / 400
    for z, balanced in ((rest, True), (rest + 1e-3, False)):
        q = np.asarray(model.q0).copy()
        q[2] += z
        assert bool(jmbs.statics(model, q).in_equilibrium) == balanced
    held = jmbs.from_mjcf(xml, servos="driver")
    reactions = jmbs.statics(held, held.q0).reactions
    assert float(reactions.components("servo", "F")) == pytest.approx(2 * 9.81, rel=1e-12)
    with pytest.raises(ValueError, match="its target at t = 0 .* must be the joint's position"):
        jmbs.from_mjcf(xml, controls={"servo": 0.1}, servos="driver")


def test_errors_name_the_element():
    with pytest.raises(ValueError, match="no such file"):
        jmbs.from_mjcf("missing.xml")
    with pytest.raises(ValueError, match="MuJoCo cannot compile"):
        jmbs.from_mjcf("<mujoco><worldbody><body><joint type='nope'/></body></worldbody></mujoco>")
    xml = """<mujoco><worldbody><body name="odd"><joint name="x1" type="slide" axis="1 0 0"/>
      <joint name="x2" type="hinge" axis="0 0 1"/><geom size="0.1" mass="1"/></body></worldbody></mujoco>"""
    with pytest.raises(ValueError, match=r"body 'odd': its joints \['x1', 'x2'\] .* no joint jmbs has"):
        quiet(xml)
    with pytest.raises(ValueError, match="no actuator 'nope'"):
        quiet(MJCF / "four_bar.xml", controls={"nope": 1.0})


def test_four_bar_moves_as_in_mujoco_to_within_its_softness():
    """The four-bar closed by a connect, driven by a 2 N m motor for 1 s: MuJoCo's joint
    angles approach jmbs's as its constraints stiffen (solref time constant 2e-3 -> 4e-4
    s: the difference falls ~50x, to below 1e-5 rad, with MuJoCo's violation)."""
    path = MJCF / "four_bar.xml"
    model = quiet(path, controls={"motor": 2.0})
    ts = np.linspace(0.0, 1.0, 11)
    sol = jmbs.simulate(model, 1.0, saveat=ts,
                        stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-10))
    ours = np.stack([jmbs.joint_coordinates(model, sol.q)[f"{j}.angle"] for j in "ABD"], axis=1)
    mj = compiled(path)
    errors = []
    for tc in (2e-3, 4e-4):
        mj.eq_solref[:] = (tc, 1.0)
        data = mujoco.MjData(mj)
        data.ctrl[0] = 2.0
        theirs = []
        for k in range(10001):
            if k % 1000 == 0:
                theirs.append(data.qpos.copy())
            mujoco.mj_step(mj, data)
        errors.append(np.max(np.abs(np.array(theirs) - ours)))
    assert abs(ours[-1, 0]) > 0.5  # it moved
    assert errors[1] < 1e-5 and errors[0] / errors[1] > 20, errors


def test_redundant_forces_depend_on_mujocos_regularisation_unique_ones_do_not():
    """The gripper tilted by 0.2 rad, held at rest in its pose: MuJoCo's axial link
    forces move by more than 0.2 N between impedances 0.5 and 0.999 of the third links'
    connects; its transverse forces and servo torque equal jmbs's unique values (rigid
    statics with the servos as drivers) to 1e-6 N, and jmbs says which is which."""
    path = MJCF / "parallel_gripper.xml"
    tilt = 0.2
    gravity = 9.81 * np.array([math.sin(tilt), 0.0, -math.cos(tilt)])
    held = quiet(path, servos="driver").with_params({"gravity": gravity})
    report = jmbs.solvability(held)
    assert report.component_verdicts("left_C2") == "Fx:N Fy:N Fz:U"
    assert report.is_unique("left_servo")
    reactions = jmbs.statics(held, held.q0).reactions
    torque = float(reactions.components("left_servo", "M"))
    c2z = float(reactions.components("left_C2", "Fz"))
    mj = compiled(path)
    mj.opt.gravity[:] = gravity
    mj.eq_solref[:] = (4e-4, 1.0)
    eqs = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_EQUALITY, e) for e in range(mj.neq)]
    axial = []
    for d in (0.5, 0.999):
        mj.eq_solimp[:] = (0.9, 0.9, 0.001, 0.5, 2.0)
        mj.eq_solimp[[eqs.index("left_C3"), eqs.index("right_C3")], :2] = d
        data = mujoco.MjData(mj)
        data.ctrl[:] = [torque / 5.0, -torque / 5.0]  # kp = 5: rest in the pose
        for _ in range(10000):
            mujoco.mj_step(mj, data)
        mujoco.mj_forward(mj, data)
        force = jmbs.mjcf_equality_force(mj, data, "left_C2")
        assert force[2] == pytest.approx(c2z, abs=1e-6)
        assert data.actuator_force[0] == pytest.approx(torque, abs=1e-6)
        axial.append(force[0])
    assert abs(axial[0] - axial[1]) > 0.2, axial


def test_analyze_reads_mjcf_from_the_command_line():
    result = CliRunner().invoke(app, ["analyze", str(MJCF / "four_bar.xml"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["rank"] == 17 and doc["redundancy"] == 1 and doc["model"]["bodies"] == 3


PENDULUM_KEYS = """
<mujoco>
  <worldbody>
    <body name="bob" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <keyframe><key name="level"/><key name="tilted" qpos="0.3" qvel="0.5"/></keyframe>
</mujoco>
"""


def test_analyze_and_simulate_take_a_keyframe(tmp_path, monkeypatch):
    """`--keyframe NAME|INDEX`: the keyframe's pose is the reference configuration of
    `analyze`, and the initial state of `simulate` (its pose and velocity), as
    `jmbs.from_mjcf(path, keyframe=...)` reads it."""
    path = tmp_path / "pendulum.xml"
    path.write_text(PENDULUM_KEYS)
    tilted = quiet(path, keyframe="tilted")
    assert abs(jmbs.joint_coordinates(quiet(path), tilted.q0)["hinge.angle"] - 0.3) < 1e-12
    runner = CliRunner()
    for key in ("tilted", "1"):
        result = runner.invoke(app, ["analyze", str(path), "--keyframe", key, "--json"])
        assert result.exit_code == 0, result.output
        np.testing.assert_allclose(json.loads(result.stdout)["q"], np.asarray(tilted.q0), atol=1e-15)

    class Started(Exception):
        pass

    def started(model, t1, **kwargs):  # what the run would start from (no compilation)
        raise Started(np.asarray(model.q0), np.asarray(kwargs["v0"]))

    monkeypatch.setattr(jmbs, "simulate", started)
    result = runner.invoke(app, ["simulate", str(path), "--keyframe", "tilted", "--t1", "0.1",
                                 "--out", str(tmp_path / "run")])
    assert isinstance(result.exception, Started), result.output
    q0, v0 = result.exception.args
    np.testing.assert_allclose(q0, np.asarray(tilted.q0), atol=1e-15)
    np.testing.assert_allclose(v0, np.asarray(tilted.v0), atol=1e-12)
    assert np.abs(v0).max() > 0.1  # the keyframe's qvel
