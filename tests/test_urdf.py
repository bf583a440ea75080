"""URDF robots in jmbs (`jmbs.from_urdf`, through MuJoCo's compiler): the bundled arm's
mapping against MuJoCo's compiled model, and its fall under gravity against MuJoCo's
simulation of the same file. The bad URDF inputs are in tests/test_bad_input.py."""

import json
import warnings
from pathlib import Path

import diffrax
import numpy as np
import pytest

import jmbs

mujoco = pytest.importorskip("mujoco")
ARM = Path(jmbs.__file__).parent / "models" / "urdf" / "arm3.urdf"
JOINTS = ("pan", "shoulder", "elbow")
POSE = {"shoulder": -0.4, "elbow": 0.8}  # bent: the forearm's weight turns every joint


def quiet(*args, **kwargs) -> jmbs.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jmbs.MJCFWarning)
        return jmbs.from_urdf(*args, **kwargs)


def test_the_arm_is_mujocos_compiled_model():
    """Links on moving joints are bodies with MuJoCo's masses (the tool, on a fixed joint,
    is part of the forearm), URDF joints are revolute joints of the same names, damping is
    a damper; the warning lists what is left out in URDF words."""
    with pytest.warns(jmbs.MJCFWarning) as caught:
        model = jmbs.from_urdf(ARM, positions=POSE)
    text = str(caught[0].message)
    for note in ("contacts: 4 <collision> geometries", "joint 'shoulder': its <limit> [-2.5, 2.5] rad",
                 "link 'tool' (fixed joint 'flange') is part of body 'forearm'"):
        assert note in text, text
    mj = mujoco.MjModel.from_xml_path(str(ARM))
    assert [b.name for b in model.body_specs] == ["turret", "upper_arm", "forearm"]
    params = model.params()
    for k, name in enumerate(("turret", "upper_arm", "forearm"), start=1):
        assert float(params[f"{name}.mass"]) == pytest.approx(mj.body_mass[k], abs=1e-12)
    assert float(params["forearm.mass"]) == pytest.approx(0.8 + 0.3)
    assert model.element_names == JOINTS
    assert model.force_names == tuple(f"{j}_damper" for j in JOINTS)
    # The reference configuration is MuJoCo's pose at `positions`.
    data = mujoco.MjData(mj)
    data.qpos[1:] = POSE["shoulder"], POSE["elbow"]
    q, _ = jmbs.mjcf_state(model, mj, data)
    np.testing.assert_allclose(np.asarray(model.q0), q, atol=1e-14)
    # The same file through from_mjcf and jmbs.load: the same model.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jmbs.MJCFWarning)
        for other in (jmbs.from_mjcf(ARM), jmbs.load(ARM)):
            np.testing.assert_array_equal(np.asarray(other.q0), np.asarray(quiet(ARM).q0))
    rep = jmbs.solvability(model)
    assert (rep.dof, rep.redundancy) == (3, 0)


def test_the_arm_falls_as_in_mujoco():
    """The bent arm released at rest for 0.2 s (gravity and joint damping): jmbs's joint
    angles against MuJoCo's, contacts off (jmbs has none). A tree's joints are MuJoCo's
    coordinates, exact, so the only difference is the integrators': MuJoCo's RK4 at 1e-4
    s (and at 1e-3 s, ~1e-10 rad apart: its own error is below that) and jmbs's Dopri5 at
    1e-10. Measured: 1.0e-10 rad; the arm turns by 0.15 to 0.67 rad."""
    model = quiet(ARM, positions=POSE)
    ts = np.linspace(0.0, 0.2, 5)
    sol = jmbs.simulate(model, 0.2, saveat=ts,
                        stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-10))
    coords = jmbs.joint_coordinates(model, sol.q)
    ours = np.stack([coords[f"{j}.angle"] for j in JOINTS], axis=1) + [0.0, POSE["shoulder"], POSE["elbow"]]
    mj = mujoco.MjModel.from_xml_path(str(ARM))
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    mj.opt.integrator, mj.opt.timestep = mujoco.mjtIntegrator.mjINT_RK4, 1e-4
    data = mujoco.MjData(mj)
    data.qpos[1:] = POSE["shoulder"], POSE["elbow"]
    theirs = []
    for k in range(2001):
        if k % 500 == 0:
            theirs.append(data.qpos.copy())
        mujoco.mj_step(mj, data)
    assert np.all(np.abs(ours[-1] - ours[0]) > 0.1)  # every joint moved
    np.testing.assert_allclose(ours, np.array(theirs), atol=1e-8)


MIMIC = """<robot name="pair">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0.2 0 0"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="1" velocity="1"/>
    <mimic joint="j1" multiplier="0.05"/></joint>
</robot>"""


def test_a_mimic_joint_is_a_constraint_named_after_it():
    model = quiet(MIMIC)
    assert model.element_names == ("j1", "j2", "j2_mimic")
    assert jmbs.solvability(model).dof == 1


def test_the_command_line_reads_urdf():
    from typer.testing import CliRunner

    from jmbs.cli import app

    result = CliRunner().invoke(app, ["analyze", str(ARM), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["dof"], doc["redundancy"], doc["model"]["bodies"]) == (3, 0, 3)
