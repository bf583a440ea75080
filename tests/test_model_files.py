"""Model files: exact round trips, the bundled models, the documented example, errors."""

import re
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import unit

import jmbs
from jmbs.models.generate import texts

DOCS = Path(__file__).resolve().parents[1] / "docs" / "model-files.md"


def same_model(a: jmbs.Model, b: jmbs.Model) -> bool:
    """Equal structure and bit-equal values."""
    return (a.dim == b.dim and a.body_specs == b.body_specs and a.element_specs == b.element_specs
            and a.param_layout == b.param_layout
            and all(np.array_equal(x, y) for x, y in
                    ((a.param_vector, b.param_vector), (a.q0, b.q0), (a.v0, b.v0))))


@pytest.mark.parametrize("name", list(jmbs.examples.ALL))
def test_bundled_model_is_the_python_one_and_round_trips(name, tmp_path):
    built = jmbs.examples.ALL[name]()
    loaded = jmbs.load(name)
    assert same_model(loaded, built)
    again = jmbs.load(jmbs.save(loaded, tmp_path / f"{name}.yaml"))
    assert same_model(again, built)


def test_bundled_files_are_up_to_date():
    """The committed files are what `python -m jmbs.models.generate` writes."""
    folder = Path(jmbs.models.__file__).parent
    assert set(jmbs.bundled_models()) == set(jmbs.examples.ALL)
    for name, text in texts().items():
        assert (folder / f"{name}.yaml").read_text() == text, f"regenerate {name}.yaml"


def test_assembled_model_keeps_its_initial_state(tmp_path):
    b = jmbs.ModelBuilder(dim=2)
    c = b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0), velocity=(0.0, 0.3))
    r = b.add_body("rod", mass=1.0, inertia=0.1, position=(1.3, 0.0))
    b.add_revolute("O", b.ground, c, point=(0.0, 0.0))
    b.add_revolute("A", c, r, point=(1.0, 0.0))
    b.add_distance("L", r, b.ground, point_i=(1.6, 0.0), point_j=(1.0, 1.0), length=1.2)
    model = b.build(assemble=True)
    text = jmbs.io.dumps(model)
    assert "initial:" in text and "length: 1.2" in text
    loaded = jmbs.load(jmbs.save(model, tmp_path / "m.yaml"))
    assert same_model(loaded, model)
    assert np.max(np.abs(jmbs.phi(loaded, loaded.q0, 0.0))) < 1e-10


def test_spatial_elements_round_trip(tmp_path):
    """Every spatial element type, rotations and quaternions, motion parameters."""
    b = jmbs.ModelBuilder(dim=3, gravity=(0.0, 0.0, -9.81))
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    a = b.add_body("a", mass=1.0, inertia=(0.1, 0.2, 0.3), position=(0.0, 0.0, 1.0), rotation=R)
    c = b.add_body("c", mass=2.0, inertia=np.diag([0.2, 0.2, 0.1]), position=(1.0, 0.0, 1.0),
                   quaternion=unit((0.9, 0.1, 0.2, 0.3)), angular_velocity=(0.0, 0.0, 0.5))
    d = b.add_body("d", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(2.0, 0.0, 1.0))
    b.add_cylindrical("J1", b.ground, a, point=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    b.add_universal("J2", a, c, point=(0.5, 0.0, 1.0), axes=((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)))
    b.add_spherical("J3", c, d, point=(1.5, 0.0, 1.0))
    b.add_prismatic("J4", b.ground, d, point=(2.0, 0.0, 1.0), axis=(1.0, 0.0, 0.0))
    b.add_weld("J5", a, b.ground, point=(0.0, 0.0, 0.5))
    b.add_distance("J6", c, d, point_i=(1.0, 0.0, 1.0), point_j=(2.0, 0.0, 1.0))
    b.add_driver("lift", joint="J1", motion="h * smoothstep(t / T)", coordinate="slide",
                 params={"h": 0.2, "T": 2.0})
    model = b.build(check=False)
    assert same_model(jmbs.load(jmbs.save(model, tmp_path / "s.yaml")), model)


def test_documented_element_table_is_the_element_types_table():
    rows = {}
    for line in DOCS.read_text().split("| `type` | fields | components |")[1].splitlines()[2:]:
        if not line.startswith("|"):
            break
        kind, fields, components = (c.strip() for c in line.strip("|").split("|"))
        rows[kind.strip("`")] = (fields, components)
    types = jmbs.ELEMENT_TYPES.values()
    assert list(rows) == list(dict.fromkeys(t.file_type for t in types))
    for t in types:
        if t.family != "joint":
            continue
        fields, components = rows[t.kind]
        assert ("`body`" if t.bodies == 1 else "`bodies") in fields, t.kind
        for g in t.geometry:
            assert re.search(rf"`{g.name}[`:]", fields), (t.kind, g.name)
        for dim in t.classes:
            assert f"`{', '.join(t.components(dim))}`" in components, (t.kind, dim)


def test_documented_example_loads_and_analyses_as_documented(tmp_path):
    text = DOCS.read_text()
    source = text.split("```yaml\n")[1].split("```")[0]
    printed = text.split("print(jmbs.solvability(model))\n```\n\n```\n")[1].split("```")[0]
    path = tmp_path / "three_cranks.yaml"
    path.write_text(source)
    model = jmbs.load(path)
    rep = jmbs.solvability(model)
    table = {line.split()[0]: line.split() for line in printed.splitlines()[3:]}
    assert f"rank = {rep.rank}, redundancy p = {rep.redundancy}, dof = {rep.dof}" in printed
    for name in model.element_names:
        comps = rep.unique_components(name)
        assert table[name][3:3 + len(comps)] == [
            f"{c}:{'U' if u else 'N'}" for c, u in zip(model.element(name).components, comps)]
        assert table[name][3 + len(comps)] == ("U" if rep.is_unique(name) else "N")
    # An independent check: the bundled parallelogram (built in Python, its bodies turned
    # by 90 degrees) has the same verdicts joint by joint.
    ref = jmbs.solvability(jmbs.examples.parallelogram())
    for k in range(3):
        for joint in (f"O{k}", f"B{k}"):
            assert rep.is_unique(joint) == ref.is_unique(joint)
            np.testing.assert_array_equal(rep.unique_components(joint), ref.unique_components(joint))


def test_documented_errors_are_what_load_says(tmp_path):
    """Each error line in the docs, produced from the documented file by the edit it implies."""
    text = DOCS.read_text()
    source = text.split("```yaml\n")[1].split("```")[0]
    documented = text.split("## Errors")[1].split("```\n")[1].splitlines()
    edits = [("mass: 1.0, inertia: 0.0833, position: [0.0, 0.5]",
              "mass: heavy, inertia: 0.0833, position: [0.0, 0.5]"),
             ("mass: 1.0, inertia: 0.0833, position: [0.0, 0.5]",
              "inertia: 0.0833, position: [0.0, 0.5]"),
             ("[ground, crank0]", "[ground, crnk0]"),
             ("{type: revolute, bodies: [ground, crank0]", "{type: revolut, bodies: [ground, crank0]"),
             ("omega * t   ", "omga * t   "),
             ("position: [0.0, 0.5]}", "position: [0.0, 0.5}")]
    for (old, new), expected in zip(edits, documented, strict=True):
        path = tmp_path / "three_cranks.yaml"
        path.write_text(source.replace(old, new, 1))
        with pytest.raises(jmbs.ModelFileError) as err:
            jmbs.load(path)
        message = str(err.value)
        assert "\n" not in message
        assert message.startswith(str(tmp_path) + "/")
        head = expected.split(", ...")[0]
        assert message.removeprefix(str(tmp_path) + "/").startswith(head), (message, expected)


def test_a_misspelt_key_is_named_with_the_closest_field_before_what_it_leaves_missing(tmp_path):
    """Every problem of the file at once, as the docs show them: the unknown key first,
    with the known field it is closest to, then the field it leaves missing."""
    text = DOCS.read_text()
    source = text.split("```yaml\n")[1].split("```")[0]
    documented = text.split("A file with several problems")[1].split("```\n")[1].rstrip("\n")
    path = tmp_path / "three_cranks.yaml"
    path.write_text(source.replace("mass: 1.0, inertia: 0.0833", "mass: 1.0, inertai: 0.0833", 1))
    with pytest.raises(jmbs.ModelFileError) as err:
        jmbs.load(path)
    assert str(err.value).replace(str(tmp_path) + "/", "") == documented
    path.write_text(source.replace("{type: revolute, bodies: [ground, crank0]",
                                   "{type: revolute, bodies: [ground, crank0], colour: red", 1)
                    .replace("mass: 1.0, inertia: 0.0833", "mass: 1.0, inertai: 0.0833", 1))
    with pytest.raises(jmbs.ModelFileError) as err:
        jmbs.load(path)
    lines = str(err.value).splitlines()
    assert len(lines) == 3 and "colour" in lines[1] and "check the spelling" in lines[1]
    assert "required field missing" in lines[2]


@pytest.mark.parametrize("content, line, needle", [
    ("dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0}\n", 3, "bodies.a.position: required"),
    ("dim: 2\nbodies:\n  a: {mass: -1.0, inertia: 1.0, position: [0, 0]}\n", 3,
     "bodies.a.mass: Input should be greater than 0"),
    ("dim: 2\nbodies:\n  a: {mass: '1.0', inertia: 1.0, position: [0, 0]}\n", 3,
     "bodies.a.mass: Input should be a valid number"),
    ("dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0, 0], colour: red}\n", 3,
     "bodies.a.colour: unknown field"),
    ("dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0, 0]}\n"
     "  a: {mass: 1.0, inertia: 1.0, position: [1, 0]}\n", 4, "duplicate key 'a'"),
    ("dim: 4\nbodies: {}\n", 1, "dim: Input should be 2 or 3"),
    ("dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0, 0]}\nelements:\n"
     "  J: {type: revolute, bodies: [ground, a]}\n", 5, "elements.J.point: required"),
    ("dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0, 0]}\nelements:\n"
     "  J: {type: revolute, bodies: [ground, a], point: [0, 0]}\n"
     "  d: {type: driver, joint: K, motion: t}\n", 6, "unknown joint 'K'; known: 'J'"),
    ("dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0, 0]}\nelements:\n"
     "  J: {type: revolute, bodies: [ground, a], point: [0, 0]}\n"
     "  d: {type: driver, joint: J, motion: os.system(1)}\n", 6, "unknown function 'os.system'"),
    ("dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0, 0]}\nelements:\n"
     "  J: {type: revolute, bodies: [ground, a], point: [0, 0]}\n"
     "  d: {type: driver, joint: J, motion: 'nosuchmodule:f'}\n", 6, "trusted=True"),
    ("dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0, 0]}\ninitial:\n"
     "  q: [0, 0]\n", 5, "initial.q: expected 3 numbers"),
    ("- just\n- a list\n", None, "a model file is a mapping"),
])
def test_bad_files_give_one_line_naming_the_place(tmp_path, content, line, needle):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(jmbs.ModelFileError) as err:
        jmbs.load(path)
    message = str(err.value)
    assert "\n" not in message and needle in message, message
    assert message.startswith(f"{path}:{line}:" if line else f"{path}:")


# A module whose import leaves a trace: its top-level code writes a file.
EVIL_MODULE = """
from pathlib import Path
Path({marker!r}).write_text("imported")

def motion(t):
    return 0.5 * t

def holonomic(qs, t):
    return qs[0][1:2]
"""
PENDULUM = ("dim: 2\nbodies:\n  a: {{mass: 1.0, inertia: 1.0, position: [0, 0]}}\nelements:\n"
            "  J: {{type: revolute, bodies: [ground, a], point: [0, 0]}}\n  {entry}\n")


@pytest.mark.parametrize("entry, line, key", [
    ("d: {{type: driver, joint: J, motion: '{module}:motion'}}", 6, "motion"),
    ("d: {{type: driver, joint: J, motion: 'os:getcwd'}}", 6, "motion"),
    ("c: {{type: constraint, bodies: [a], holonomic: '{module}:holonomic'}}", 6, "holonomic"),
])
def test_untrusted_model_file_imports_and_calls_nothing(tmp_path, monkeypatch, entry, line, key):
    """A `module:function` reference is refused unless the caller trusts the file: the
    module's top-level code does not run, nothing is imported or called."""
    module = f"jmbs_evil_{abs(hash((entry, str(tmp_path)))) % 10**8}"
    marker = tmp_path / "imported.txt"
    (tmp_path / f"{module}.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "model.yaml"
    path.write_text(PENDULUM.format(entry=entry.format(module=module)))
    with pytest.raises(jmbs.ModelFileError) as err:
        jmbs.load(path)
    message = str(err.value)
    assert message.startswith(f"{path}:{line}:") and "\n" not in message, message
    assert f"{key} '" in message and "trusted=True" in message and "--trusted" in message
    assert not marker.exists() and module not in sys.modules
    if "os:" in entry:
        return
    model = jmbs.load(path, trusted=True)  # the caller trusts the file: the module is imported
    assert marker.read_text() == "imported"
    if key == "motion":
        np.testing.assert_allclose(jmbs.phi(model, model.q0, 2.0)[-1], -1.0)  # angle 0 - 0.5 t


@pytest.mark.parametrize("content", [
    "dim: !!python/object/apply:os.system ['echo pwned > {marker}']\n",
    "dim: 2\nbodies: !!python/object/new:pathlib.Path ['{marker}']\n",
    "dim: 2\nbodies: {{}}\nelements: !!python/name:os.getcwd\n",
])
def test_yaml_tags_that_build_objects_are_refused(tmp_path, content):
    marker = tmp_path / "pwned.txt"
    path = tmp_path / "model.yaml"
    path.write_text(content.format(marker=marker))
    with pytest.raises(jmbs.ModelFileError, match="invalid YAML.*could not determine a constructor"):
        jmbs.load(path, trusted=True)  # not even a trusted file builds Python objects
    assert not marker.exists()


def test_text_laws_cannot_reach_python(tmp_path):
    marker = tmp_path / "pwned.txt"
    for entry in (f"d: {{type: driver, joint: J, motion: '__import__(\"os\").system(\"touch {marker}\")'}}",
                  "d: {type: driver, joint: J, motion: 't.__class__'}",
                  "d: {type: driver, joint: J, motion: 'open(\"x\")'}"):
        path = tmp_path / "model.yaml"
        path.write_text(PENDULUM.format(entry=entry))
        with pytest.raises(jmbs.ModelFileError, match="elements.d: "):
            jmbs.load(path, trusted=True)
    assert not marker.exists()


def test_module_level_functions_round_trip_for_trusted_files(tmp_path):
    b = jmbs.ModelBuilder(dim=2)
    b.add_body("a", mass=1.0, inertia=1.0, position=(0.0, 0.0))
    b.add_revolute("J", b.ground, "a", point=(0.0, 0.0))
    b.add_driver("d", joint="J", motion=_quarter_turns)
    path = jmbs.save(b.build(), tmp_path / "m.yaml")
    assert "test_model_files:_quarter_turns" in path.read_text()
    with pytest.raises(jmbs.ModelFileError, match="trusted=True"):
        jmbs.load(path)
    model = jmbs.load(path, trusted=True)
    np.testing.assert_allclose(jmbs.phi(model, model.q0, 2.0)[-1], -np.pi)


def _quarter_turns(t):
    return 0.5 * jnp.pi * t


def test_unknown_names_and_missing_files():
    with pytest.raises(jmbs.ModelFileError, match="neither a model file nor a bundled model"):
        jmbs.load("bricardd")
    with pytest.raises(jmbs.ModelFileError, match="no such file"):
        jmbs.load("missing/model.yaml")


def test_lambda_motions_cannot_be_saved_and_say_so(tmp_path):
    b = jmbs.ModelBuilder(dim=2)
    c = b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    b.add_revolute("O", b.ground, c, point=(0.0, 0.0))
    b.add_driver("spin", joint="O", motion=lambda t: 2.0 * t)
    with pytest.raises(ValueError, match="element 'spin': its motion is a Python function"):
        jmbs.save(b.build(), tmp_path / "x.yaml")


def test_text_motions_evaluate_and_differentiate_like_python():
    e = jmbs.Expression("s = a * smoothstep(t / 2)\nsqrt(1 + s**2) * cos(w * t) if t > 0.5 "
                        "else atan2(s, 1.0) - e**(-t)", ("a", "w"))
    def ref(t, a, w):
        x = np.clip(t / 2, 0, 1)
        s = a * x**3 * (10 - 15 * x + 6 * x**2)
        return np.sqrt(1 + s**2) * np.cos(w * t) if t > 0.5 else np.arctan2(s, 1) - np.exp(-t)

    for t in (0.1, 0.7, 1.5, 3.0):
        assert abs(float(e(t, {"a": 0.3, "w": 2.0})) - ref(t, 0.3, 2.0)) < 1e-14
        g = jax.grad(lambda a: e(t, {"a": a, "w": 2.0}))(0.3)
        fd = (ref(t, 0.3 + 1e-6, 2.0) - ref(t, 0.3 - 1e-6, 2.0)) / 2e-6
        assert abs(float(g) - fd) < 1e-8
    assert e == jmbs.Expression(e.source, ("a", "w")) and hash(e) == hash(
        jmbs.Expression(e.source, ("a", "w")))
    for bad in ("__import__('os')", "t.real", "[t]", "lambda: t", "f(t)", "x = 1"):
        with pytest.raises(ValueError, match="expression"):
            jmbs.Expression(bad)


def test_motion_parameters_are_design_parameters():
    """A text motion's parameter reaches jax.grad: d(driven angle)/d(omega) = t."""
    b = jmbs.ModelBuilder(dim=2)
    c = b.add_body("crank", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    b.add_revolute("O", b.ground, c, point=(0.0, 0.0))
    b.add_driver("spin", joint="O", motion="omega * t", params={"omega": 2.0})
    m = b.build()
    assert "spin.omega" in m.params()

    def angle(omega):
        mm = m.with_params({"spin.omega": omega})
        return jmbs.kinematics(mm, jnp.array([0.0, 0.5])).q[-1, 2]

    assert abs(float(angle(2.0)) - 1.0) < 1e-12
    assert abs(float(jax.grad(angle)(2.0)) - 0.5) < 1e-10
    assert re.search(r"motion: omega \* t", jmbs.io.dumps(m))


def _force_specs(model):
    return [(s.kind, s.name, s.bodies, s.params, s.frame, s.joint, s.coordinate, s.allow_nonunique,
             getattr(s.law, "source", s.law)) for s in model.force_specs]


@pytest.mark.parametrize("dim", [2, 3])
def test_every_force_element_round_trips(dim, tmp_path):
    """Every force kind, constants and text laws, body frames, per-component bushings:
    saved, loaded, saved again gives the same model and the same text; the loaded model
    moves like the built one."""
    b = jmbs.ModelBuilder(dim=dim, gravity=(0.0, -9.81) if dim == 2 else (0.0, -9.81, 0.0))
    z = () if dim == 2 else (0.0,)
    b.add_body("a", 1.0, 0.1 if dim == 2 else (0.1, 0.1, 0.05), (0.5, 0.0, *z))
    b.add_body("c", 1.0, 0.1 if dim == 2 else (0.1, 0.1, 0.05), (1.5, 0.0, *z))
    axis = {} if dim == 2 else {"axis": (0.0, 0.0, 1.0)}
    b.add_revolute("R", "ground", "a", (0.0, 0.0, *z), **axis)
    b.add_prismatic("P", "a", "c", (1.0, 0.0, *z), (1.0, 0.0, *z))
    b.add_rotational_spring_damper("K", "R", 20.0, 0.1, rest_angle=0.2)
    b.add_torque("T", "a", "0.1 * sin(t)" if dim == 2 else (0.0, 0.0, 0.1), frame="body")
    b.add_force("F", "a", (0.0, 1.0, *z), point=(1.0, 0.0, *z), frame="body")
    b.add_force("G", "c", (1.0, 0.0, *z))
    b.add_actuator("A", "P", "2 * cos(t)")
    b.add_joint_friction("Fr", "R", 0.1, radius=0.01, viscous=0.2)
    b.add_bushing("B", "a", "c", (1.0, 0.0, *z), 1e4 if dim == 3 else (1e4, 2e4, 30.0), 10.0)
    b.add_spring_damper("S", "ground", "c", (2.0, 1.0, *z), (1.5, 0.0, *z), 30.0, damping=0.5)
    model = b.build()
    text = jmbs.io.dumps(model)
    loaded = jmbs.load(jmbs.save(model, tmp_path / "m.yaml"))
    assert same_model(loaded, model) and _force_specs(loaded) == _force_specs(model)
    assert jmbs.io.dumps(loaded) == text
    state = (model.q0, model.v0 + 0.1, 0.3)
    np.testing.assert_array_equal(jmbs.generalized_forces(loaded, *state),
                                  jmbs.generalized_forces(model, *state))


def test_force_laws_given_as_functions_cannot_be_saved(tmp_path):
    b = jmbs.ModelBuilder(dim=2)
    b.add_body("a", 1.0, 0.1, (0.5, 0.0))
    b.add_force("push", "a", lambda t: jnp.array([t, 0.0]))
    with pytest.raises(ValueError, match=r"force element 'push': its force law is a Python "
                                         r"function, which a file cannot hold"):
        jmbs.save(b.build(), tmp_path / "m.yaml")


FORCE_FILE = """\
jmbs: 1
dim: 2
bodies:
  a: {mass: 1.0, inertia: 0.1, position: [0.5, 0.0]}
elements:
  R: {type: revolute, bodies: [ground, a], point: [0.0, 0.0]}
forces:
"""


@pytest.mark.parametrize("entry, line, needle", [
    ("  S: {type: sprng, bodies: [ground, a], point_i: [0, 1.0], point_j: [0.5, 0.0]}", 8,
     r"forces\.S: unknown element type 'sprng'; expected one of .*'spring_damper'"),
    ("  S: {type: spring_damper, bodies: [ground, a], point_i: [0, 1.0], point_j: [0.5, 0.0], "
     "stiffness: -3.0}", 8, r"forces\.S\.stiffness: Input should be greater than or equal to 0"),
    ("  S: {type: spring_damper, bodies: [ground, b], point_i: [0, 1.0], point_j: [0.5, 0.0], "
     "stiffness: 3.0}", 8, r"forces\.S: element 'S': unknown body 'b'"),
    ("  K: {type: rotational_spring_damper, joint: Q, stiffness: 1.0}", 8,
     r"forces\.K: rotational_spring_damper 'K': unknown joint 'Q'"),
    ("  T: {type: torque, body: a, torque: '__import__(\"os\").getcwd()'}", 8,
     r"forces\.T: torque 'T': torque: expression .* unknown function"),
    ("  F: {type: force, body: a, force: '3 * t'}", 8,
     r"forces\.F: force 'F': a text law gives one number, but force needs 2"),
])
def test_bad_force_entries_name_the_line_and_the_element(tmp_path, entry, line, needle):
    path = tmp_path / "m.yaml"
    path.write_text(FORCE_FILE + entry + "\n")
    with pytest.raises(jmbs.ModelFileError, match=rf"m\.yaml:{line}: {needle}"):
        jmbs.load(path)
