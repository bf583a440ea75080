"""Model files in TOML: the schema of the YAML files, exact round trips of every bundled
model, the same errors."""

import re
from pathlib import Path

import numpy as np
import pytest

import jmbs

DOCS = Path(__file__).resolve().parents[1] / "docs" / "model-files.md"


def assert_same(a: jmbs.Model, b: jmbs.Model) -> None:
    """Same elements, bit-equal parameters and initial state."""
    assert a.element_names == b.element_names
    pa, pb = a.params(), b.params()
    assert list(pa) == list(pb)
    for key in pa:
        assert np.array_equal(pa[key], pb[key]), key
    assert np.array_equal(a.q0, b.q0) and np.array_equal(a.v0, b.v0)


@pytest.mark.parametrize("name", jmbs.bundled_models())
def test_bundled_model_round_trips_through_toml(name, tmp_path):
    model = jmbs.load(name)
    path = jmbs.save(model, tmp_path / f"{name}.toml")
    assert path.read_text() == jmbs.io.dumps(model, format="toml")
    loaded = jmbs.load(path)
    assert_same(loaded, model)
    # YAML -> TOML -> YAML gives the same text.
    assert jmbs.io.dumps(loaded) == jmbs.io.dumps(model)


def test_toml_keeps_units_names_texts_and_the_initial_state(tmp_path):
    """Unit comments; names TOML must quote; a multi-line motion and description; no
    elements; an assembled model's initial state."""
    b = jmbs.ModelBuilder(dim=2)
    b.add_body("free body", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    empty = b.build()
    text = jmbs.io.dumps(empty, format="toml", description='a "model"\nof one body')
    assert "elements = {}" in text and '[bodies."free body"]' in text and "mass = 1.0  # kg" in text
    loaded = jmbs.load(jmbs.save(empty, tmp_path / "empty.toml", description='a "model"\nof one body'))
    assert_same(loaded, empty)

    b = jmbs.ModelBuilder(dim=2)
    c = b.add_body("crank 1", mass=1.0, inertia=0.1, position=(0.5, 0.0), velocity=(0.0, 0.3))
    r = b.add_body("rod", mass=1.0, inertia=0.1, position=(1.3, 0.0))
    b.add_revolute("O", b.ground, c, point=(0.0, 0.0))
    b.add_revolute("A", c, r, point=(1.0, 0.0))
    b.add_distance("L", r, b.ground, point_i=(1.6, 0.0), point_j=(1.0, 1.0), length=1.2)
    b.add_driver("motor", joint="O", motion="w = omega * t\nw + 0.1 * sin(w)", params={"omega": 1.0})
    model = b.build(assemble=True, check=False)
    text = jmbs.io.dumps(model, format="toml")
    assert "[initial]  # the initial state differs" in text and '[bodies."crank 1"]' in text
    assert 'motion = """\nw = omega * t\nw + 0.1 * sin(w)"""  # rad, t in s' in text
    assert "[elements.motor.params]\nomega = 1.0\n" in text
    loaded = jmbs.load(jmbs.save(model, tmp_path / "m.toml"))
    assert_same(loaded, model)
    assert jmbs.io.dumps(loaded, format="toml") == text
    assert jmbs.io.dumps(loaded) == jmbs.io.dumps(model)


PENDULUM = """\
dim = 2
gravity = [0.0, -9.81]

[bodies.mass]
mass = 1.0
inertia = 1.0
position = [1.0, 0.0]

[elements.rod]
type = "distance"
bodies = ["ground", "mass"]
point_i = [0.0, 0.0]
point_j = [1.0, 0.0]
"""


def test_documented_toml_is_what_dumps_writes():
    documented = DOCS.read_text().split("## TOML\n")[1].split("```toml\n")[1].split("```")[0]
    assert documented == jmbs.io.dumps(jmbs.load("pendulum"), format="toml")


def test_a_hand_written_toml_file_loads(tmp_path):
    path = tmp_path / "pendulum.toml"
    path.write_text(PENDULUM)
    assert_same(jmbs.load(path), jmbs.load("pendulum"))


@pytest.mark.parametrize("change, message", [
    (("inertia = 1.0", "inertia = 1.0\nmas = 2.0"), r"p\.toml:7: bodies\.mass\.mas: unknown field"),
    (("mass = 1.0", 'mass = "heavy"'), r"p\.toml:5: bodies\.mass\.mass: Input should be a valid number"),
    (('"ground", "mass"', '"ground", "mas"'), r"p\.toml:9: elements\.rod: .*unknown body 'mas'"),
    (("[1.0, 0.0]\n", "[1.0, 0.0\n"), r"p\.toml:9: invalid TOML: Unclosed array \(column 1\)"),
    (("inertia = 1.0", "inertia = 1.0\nmass = 2.0"), r"p\.toml:7: invalid TOML: Cannot overwrite"),
    (("[bodies.mass]\nmass = 1.0", '[bodies."the mass"]\nmas = 1.0'),
     r"p\.toml:4: bodies\.the mass\.mass: required field missing"),
])
def test_toml_errors_name_the_file_line_and_field(change, message, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PENDULUM.replace(*change, 1))
    with pytest.raises(jmbs.io.ModelFileError, match=message):
        jmbs.load(path)


def test_suffixes(tmp_path):
    model = jmbs.load("pendulum")
    with pytest.raises(ValueError, match=re.escape("(.yaml, .yml) or TOML (.toml); got the suffix '.json'")):
        jmbs.save(model, tmp_path / "p.json")
    with pytest.raises(ValueError, match="format must be 'yaml' or 'toml'"):
        jmbs.io.dumps(model, format="json")
    assert not (tmp_path / "p.json").exists()
    with pytest.raises(jmbs.io.ModelFileError, match="nothere.toml: no such file"):
        jmbs.load("nothere.toml")
    assert_same(jmbs.load(jmbs.save(model, tmp_path / "p.yml")), model)
