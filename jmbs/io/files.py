"""Reading and writing model files (YAML or TOML), and the bundled models (host-side only)."""

import difflib
import functools
import importlib
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._builder.builder import ModelBuilder, check_closed
from .._expression import Expression
from .._forces.registry import FORCE_TYPES
from .._joints.base import ConstraintSpec, DriverSpec
from .._joints.registry import ELEMENT_TYPES
from .._model import GROUND, Model

if TYPE_CHECKING:
    from .schema import ModelFile

BUNDLED = "jmbs.models"
# The formats of model files, by suffix.
FORMATS = {".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}


class ModelFileError(ValueError):
    """A model file that cannot be used: the message names the file, the line and field,
    and what is expected, one line per problem (all of a file's problems at once)."""


# ----------------------------------------------------------------------------------
# The bundled models
# ----------------------------------------------------------------------------------


def bundled_models() -> tuple[str, ...]:
    """Names of the mechanisms shipped with jmbs as model files (`jmbs.load(name)`)."""
    files = resources.files(BUNDLED).iterdir()
    return tuple(sorted(f.name[:-5] for f in files if f.name.endswith(".yaml")))


def _source(source) -> tuple[str, str]:
    """(text, label) of a bundled name or a path."""
    path = Path(source)
    if path.is_dir():
        raise ModelFileError(f"{source}: is a directory; pass a model file (.yaml, .toml) or a bundled "
                             "name")
    if path.is_file():
        return path.read_text(), str(path)
    name = str(source)
    if name in bundled_models():
        return resources.files(BUNDLED).joinpath(f"{name}.yaml").read_text(), f"{name}.yaml"
    if path.suffix.lower() in FORMATS or path.parent != Path("."):
        raise ModelFileError(f"{source}: no such file")
    raise ModelFileError(f"{name!r} is neither a model file nor a bundled model; bundled: "
                         f"{', '.join(bundled_models())}")


# ----------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------


# The file formats' libraries (PyYAML, pydantic's schema, tomli-w) are imported where a file
# is read or written: `import jmbs` does not pay for them (about 0.1 s).


@functools.cache
def _loader():
    """YAML 1.1 reads `1e-3` as text; this loader reads every number written as one as a
    float."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"""^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[0-9][0-9_]*[eE][-+]?[0-9]+
                       |\.[0-9_]+(?:[eE][-+]?[0-9]+)?|\.inf|\.Inf|\.INF|\.nan|\.NaN|\.NAN)$""",
                   re.X),
        list("-+0123456789."))
    return Loader


def load(source: "str | Path", *, trusted: bool = False) -> Model:
    """A `Model` from a model file or a bundled mechanism's name.

    **Arguments:**
    - `source`: a path to a model file (format: docs/model-files.md), YAML or,
      with the suffix `.toml`, TOML (the same fields), or the name of a bundled
      mechanism (`jmbs.bundled_models()`); a MuJoCo model (`.xml`) is read by
      `jmbs.from_mjcf`, a URDF robot (`.urdf`) by `jmbs.from_urdf`, with their defaults.
    - `trusted`: allow the file's `"package.module:function"` references (a
      motion, a user constraint's functions), which import a module (its top-level
      code runs) and call the function. Off by default: loading a file then runs
      no code at all, and a reference is an error naming the element. Only for
      files you trust as you trust a Python script.

    **Returns:** the built `Model` (its reference configuration checked to
    close the constraints, as `ModelBuilder.build` does).

    **Raises:** `ModelFileError` (a `ValueError`) with one line naming the
    file, the line and field, and what is expected: invalid YAML or TOML, a
    missing or unknown field, a wrong type, an unknown body or joint, a motion
    that does not parse, geometry that does not close, a function reference
    without `trusted=True`.
    """
    if Path(source).suffix.lower() in (".xml", ".urdf"):
        from .mjcf import from_mjcf
        return from_mjcf(source)  # a URDF file goes on to from_urdf
    text, label = _source(source)
    parse = _parse_toml if FORMATS.get(Path(label).suffix.lower()) == "toml" else _parse_yaml
    data, line = parse(text, label)
    import pydantic

    from .schema import ModelFile
    try:
        spec = ModelFile.model_validate(data)
    except pydantic.ValidationError as e:
        raise ModelFileError(_problems(e.errors(), data, line, label)) from None
    return _build(spec, line, label, trusted)


def _problems(errors: list[dict], data, line, label: str) -> str:
    """Every problem of a file, one per line (`file:line: field: what is wrong`), unknown
    fields first, each with the closest known name (a misspelt key also leaves its
    field missing: the user reads the cause before its consequence)."""
    located = [(err, _strip_tags(data, err["loc"])) for err in errors]
    missing: dict[tuple, list[str]] = {}
    for err, loc in located:
        if err["type"] == "missing" and loc:
            missing.setdefault(loc[:-1], []).append(str(loc[-1]))
    out, seen = [], set()
    for err, loc in sorted(located, key=lambda e: e[0]["type"] != "extra_forbidden"):
        if loc in seen:  # one problem per field: a union's members each report the same value
            continue
        seen.add(loc)
        field = ".".join(map(str, loc)) or "(top level)"
        if err["type"] == "extra_forbidden" and loc:
            close = difflib.get_close_matches(str(loc[-1]), missing.get(loc[:-1], [])
                                              or _fields_at(err["loc"][:-1]), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else "check the spelling"
            message = f"unknown field {str(loc[-1])!r}; {hint} (see docs/model-files.md)"
        else:
            message = _explain(err)
        out.append(f"{_at(label, line(loc))}: {field}: {message}")
    if len(out) == 1:
        return out[0]
    return (f"{out[0]} (and {len(out) - 1} more problem{'s' * (len(out) > 2)} below)\n"
            + "\n".join(f"  {t}" for t in out[1:]))


@functools.cache
def _schema() -> dict:
    from .schema import ModelFile
    return ModelFile.model_json_schema()


def _fields_at(loc: tuple) -> list[str]:
    """The field names the schema allows at pydantic's location `loc` (tags included:
    `("elements", "O0", "revolute")` is a revolute's entry); [] where unknown."""
    schema = _schema()
    node = schema
    for part in loc:
        while "$ref" in node:
            node = schema["$defs"][node["$ref"].rpartition("/")[2]]
        if "discriminator" in node:
            node = {"$ref": node["discriminator"]["mapping"].get(str(part), "#/$defs/?")}
        elif str(part) in node.get("properties", {}):
            node = node["properties"][str(part)]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return []
        while "$ref" in node:
            node = schema["$defs"].get(node["$ref"].rpartition("/")[2], {})
        node = next((n for n in node.get("anyOf", []) if "type" not in n or n["type"] != "null"), node)
    return sorted(node.get("properties", {}))


def _at(label: str, line: int | None) -> str:
    """`file:line`, or the file where the line is not known."""
    return f"{label}:{line}" if line else label


def _parse_yaml(text: str, label: str):
    """The data of a YAML text, and a function giving the line of a field's location."""
    import yaml
    try:
        root = yaml.compose(text, Loader=_loader())
        data = yaml.load(text, Loader=_loader())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark else label
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ModelFileError(f"{where}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise ModelFileError(f"{label}: a model file is a mapping with dim, bodies and elements")
    _check_duplicates(root, label)
    return data, lambda loc: _line(root, loc)


def _parse_toml(text: str, label: str):
    """The data of a TOML text, and a function giving the line of a field's location
    (tomllib rejects duplicate keys itself)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        # The message ends with "(at line L, column C)" or "(at end of document)".
        m = re.fullmatch(r"(.*) \(at (?:line (\d+), column (\d+)|end of document)\)", str(e), re.S)
        if m is None:
            raise ModelFileError(f"{label}: invalid TOML: {e}") from None
        line, where = (m[2], f"column {m[3]}") if m[2] else (len(text.splitlines()), "at the end")
        raise ModelFileError(f"{label}:{line}: invalid TOML: {m[1]} ({where})") from None
    return data, lambda loc: _toml_line(text, loc)


def _explain(err: dict) -> str:
    if err["type"] == "missing":
        return "required field missing"
    if err["type"] == "extra_forbidden":
        return "unknown field (check the spelling; see docs/model-files.md)"
    if err["type"] == "union_tag_invalid":
        kind = err["input"].get("type")
        close = difflib.get_close_matches(str(kind), [t.strip(" '") for t in
                                                      err["ctx"]["expected_tags"].split(",")], n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown element type {kind!r}; {hint}expected one of {err['ctx']['expected_tags']}"
    if err["type"] == "union_tag_not_found":
        return "every element needs a `type` (revolute, prismatic, driver, ...)"
    return f"{err['msg']}, got {err['input']!r}"


def _strip_tags(data, loc: tuple) -> tuple:
    """Drop the discriminator tags pydantic inserts into the location of a union member."""
    out, node = [], data
    for part in loc:
        if isinstance(node, dict) and node.get("type") == part and part not in node:
            continue  # the tag of a union member, e.g. 'revolute'
        if not isinstance(node, dict | list):
            break  # past the value: the rest names a member of a type union ('float', ...)
        out.append(part)
        node = node[part] if isinstance(node, dict | list) and _has(node, part) else None
    return tuple(out)


def _has(node, part) -> bool:
    return part in node if isinstance(node, dict) else isinstance(part, int) and part < len(node)


def _line(root, loc) -> int:
    """1-based line of the deepest node of `loc` present in the YAML tree."""
    import yaml

    node, line = root, root.start_mark.line + 1
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if k.value == str(part)), None)
            key = next((k for k, v in node.value if k.value == str(part)), None)
            if key is not None:
                line = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line


# A line that opens a table, `[elements.motor]` (not a row of a multi-line array: no commas).
_TOML_HEADER = re.compile(r"\s*\[\[?[^\[\],]*\]\]?\s*(#.*)?$")


def _toml_line(text: str, loc: tuple) -> int | None:
    """1-based line of `loc` in a TOML text, found cheaply: the header of the deepest table
    of `loc` (`[elements.motor]`), then the next key of `loc` in that table (`motion =`);
    None where neither is found."""
    lines = text.splitlines()
    headers = [i for i, s in enumerate(lines) if _TOML_HEADER.match(s)]

    def key(part) -> str:
        p = re.escape(str(part))
        return f"(?:{p}|\"{p}\"|'{p}')"

    found, depth = None, 0
    for depth in range(len(loc), 0, -1):
        header = re.compile(r"\s*\[\[?\s*" + r"\s*\.\s*".join(map(key, loc[:depth])) + r"\s*\]")
        found = next((i for i in headers if header.match(lines[i])), None)
        if found is not None:
            break
    else:
        depth = 0
    start = 0 if found is None else found + 1
    end = next((i for i in headers if i >= start), len(lines))
    if depth < len(loc):
        pattern = re.compile(rf"\s*{key(loc[depth])}\s*[=.]")
        hit = next((i for i in range(start, end) if pattern.match(lines[i])), None)
        if hit is not None:
            return hit + 1
    return None if found is None else found + 1


def _check_duplicates(node, label: str) -> None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        seen = set()
        for k, v in node.value:
            if k.value in seen:
                raise ModelFileError(f"{label}:{k.start_mark.line + 1}: duplicate key "
                                     f"{k.value!r}; names must be unique")
            seen.add(k.value)
            _check_duplicates(v, label)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _check_duplicates(v, label)


def _build(spec: "ModelFile", line, label: str, trusted: bool) -> Model:
    """The model of a validated file; `line(loc)` is the line of a field (or None)."""
    def fail(loc: tuple, message: str):
        raise ModelFileError(f"{_at(label, line(loc))}: {'.'.join(loc)}: {message}") from None

    def function(key: str, reference: str):
        if not trusted:
            raise ValueError(
                f"{key} {reference!r} names a Python function: loading it would import a module "
                "and run its code. For a file you trust, load it with jmbs.load(path, trusted=True) "
                "(command line: --trusted); otherwise write the motion as text (e.g. 'omega * t')")
        return _import(reference)

    try:
        b = ModelBuilder(dim=spec.dim, gravity=spec.gravity)
    except ValueError as e:
        fail(("gravity",), str(e))
    for name, body in spec.bodies.items():
        try:
            b.add_body(name, **body.model_dump(exclude_none=True))
        except ValueError as e:
            fail(("bodies", name), str(e))
    for name, el in spec.elements.items():
        kw = el.model_dump(exclude_none=True, exclude={"type"})
        try:
            family = _FAMILIES[el.type]
            if family == "driver":
                motion = kw.pop("motion")
                motion = function("motion", motion) if _is_reference(motion) else motion
                b.add_driver(name, motion=motion, params=kw.pop("params") or None, **kw)
            elif family == "constraint":
                for key in ("holonomic", "pfaffian"):
                    if key in kw:
                        kw[key] = function(key, kw[key])
                b.add_constraint(name, params=kw.pop("params") or None, **kw)
            else:
                bodies = (GROUND, kw.pop("body")) if "body" in kw else kw.pop("bodies")
                b.add_joint(el.type, name, *bodies, **kw)
        except ValueError as e:
            fail(("elements", name), str(e))
    for name, force in spec.forces.items():
        kw = force.model_dump(exclude_none=True, exclude={"type"})
        if "bodies" in kw:
            kw["body_i"], kw["body_j"] = kw.pop("bodies")
        try:  # text laws become `Expression`s: arithmetic only, no code runs
            getattr(b, f"add_{force.type}")(name, **kw)
        except ValueError as e:
            fail(("forces", name), str(e))
    initial = spec.initial
    try:
        model = b.build(check=initial is None or initial.q is None)
    except ValueError as e:
        # A reference configuration that does not close names its worst element: point at it.
        worst = re.search(r"violates element '([^']+)'", str(e))
        if worst and worst.group(1) in spec.elements:
            fail(("elements", worst.group(1)), str(e))
        raise ModelFileError(f"{label}: {e}") from None
    if initial is not None:
        for key, n in (("q", model.nq), ("v", model.nv)):
            value = getattr(initial, key)
            if value is not None and len(value) != n:
                fail(("initial", key), f"expected {n} numbers for this model, got {len(value)}")
            if value is not None:
                model = eqx.tree_at(lambda m, k=key: getattr(m, f"{k}0"), model,
                                    jnp.asarray(value, dtype=float))
        if initial.q is not None:
            try:
                check_closed(model, model.q0)
            except ValueError as e:
                fail(("initial", "q"), str(e))
    return model


# The family of each `type:` of the files (several kinds may share one, e.g. `constraint`).
_FAMILIES = {t.file_type: t.family for t in ELEMENT_TYPES.values()}


def _is_reference(text: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*", text.strip()) is not None


def _import(reference: str):
    module, _, attr = reference.strip().partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot import {reference!r}: {e}") from None
    if not callable(obj):
        raise ValueError(f"{reference!r} is not a function")
    return obj


# ----------------------------------------------------------------------------------
# Saving
# ----------------------------------------------------------------------------------

# Units of the bodies' values and gravity (a joint's geometry has its unit in the element table).
_UNITS = {"mass": "kg", "inertia": "kg m^2", "position": "m", "angle": "rad",
          "rotation": "body -> global", "quaternion": "w, x, y, z", "velocity": "m/s",
          "angular_velocity": "rad/s", "gravity": "m/s^2"}

_HEADER = ("# jmbs model file. Units: m, kg, s, rad (inertia kg m^2); geometry in global\n"
           "# coordinates in the reference configuration. Format: docs/model-files.md\n")


def save(model: Model, path: "str | Path", *, description: str | None = None) -> Path:
    """Write `model` to a model file that `jmbs.load` reads back exactly.

    Every value given to the builder is written with full precision (the
    round trip is exact), with units as comments; `initial` holds `q0`/`v0`
    when they differ from the bodies' reference poses (an assembled model).

    **Arguments:**
    - `model`: the model.
    - `path`: the file to write: YAML for `.yaml` or `.yml`, TOML for `.toml`
      (the same fields).
    - `description`: a line written into the file.

    **Returns:** the path.

    **Raises:** `ValueError` for another suffix, and naming the element whose
    function cannot be written: a driver motion or a user constraint that is a
    lambda or a closure (give motions as text, e.g. `motion="omega * t"`, or use
    module-level functions).
    """
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{path}: a model file is written as YAML (.yaml, .yml) or TOML (.toml); "
                         f"got the suffix {path.suffix or '(none)'!r}")
    path.write_text(dumps(model, description=description, format=FORMATS[path.suffix.lower()]))
    return path


def dumps(model: Model, *, description: str | None = None, format: str = "yaml") -> str:
    """The model file of `model` as text (see `save`): `format` is "yaml" or "toml"."""
    renderers = {"yaml": _yaml, "toml": _toml}
    if format not in renderers:
        raise ValueError(f"format must be 'yaml' or 'toml', got {format!r}")
    return _HEADER + "\n".join(renderers[format](_document(model, description))) + "\n"


class _Table(list):
    """A mapping of the file, rendered as YAML or TOML: its entries `(key, value, comment)` in
    order; a value is a `_Table`, text, a bool, an int or floats (their unit the comment)."""


def _numbers(key: str, value, unit: str | None = None) -> tuple:
    """The entry of a parameter: floats with full precision, the unit as comment."""
    return key, np.asarray(value, dtype=float).tolist(), unit


def _document(model: Model, description: str | None) -> _Table:
    """Everything the file holds, in the order it is written."""
    p = {k: np.asarray(v) for k, v in model.params().items()}
    doc = _Table([("jmbs", 1, None)])
    if description:
        doc.append(("description", description, None))
    doc += [("dim", int(model.dim), None), _numbers("gravity", p["gravity"], _UNITS["gravity"])]
    bodies = _Table()
    for body in model.body_specs:
        keys = ("mass", "inertia", "position", body.orientation, "velocity", "angular_velocity")
        bodies.append((body.name, _Table(
            _numbers(key, p[f"{body.name}.{key}"], _UNITS[key]) for key in keys
            if key not in ("velocity", "angular_velocity") or np.any(p[f"{body.name}.{key}"])), None))
    names = model.body_names + (GROUND,)
    doc += [("bodies", bodies, None),
            ("elements", _Table(_element(spec, p, names) for spec in model.element_specs), None)]
    if model.force_specs:
        doc.append(("forces", _Table(_force(spec, p, names) for spec in model.force_specs), None))
    reference = model.with_params({})
    initial = _Table(_numbers(key, x) for key, x, x_ref in (
        ("q", model.q0, reference.q0), ("v", model.v0, reference.v0))
        if not np.array_equal(np.asarray(x), np.asarray(x_ref)))
    if initial:
        doc.append(("initial", initial, "the initial state differs from the reference poses"))
    return doc


def _element(spec, p: dict, names: tuple[str, ...]) -> tuple:
    """The entry of an element (a joint, driver or user constraint)."""
    etype = ELEMENT_TYPES[spec.kind]
    entry = _Table([("type", etype.file_type, None)])
    bodies = [names[i] for i in spec.bodies]
    if isinstance(spec, DriverSpec):
        unit = "rad" if spec.coordinate == "angle" else "m"
        entry += [("joint", spec.joint, None), ("coordinate", spec.coordinate, None),
                  ("motion", _function("motion", spec.motion, spec.name), f"{unit}, t in s")]
    elif isinstance(spec, ConstraintSpec):
        entry += [("bodies", bodies, None), (spec.kind, _function(spec.kind, spec.fn, spec.name), None),
                  ("components", list(spec.components), None)]
    else:  # a joint: its bodies and geometry
        entry.append(("body", bodies[1], None) if etype.bodies == 1 else ("bodies", bodies, None))
        units = {g.name: g.unit for g in etype.geometry}
        entry += [_numbers(key, p[f"{spec.name}.{key}"], units[key]) for key in spec.params]
        if etype.choose:
            entry.append(("components", list(spec.components), None))
    own = spec.param_keys if isinstance(spec, DriverSpec | ConstraintSpec) else ()
    if own:
        entry.append(("params", _Table(_numbers(key, p[f"{spec.name}.{key}"]) for key in own), None))
    return spec.name, entry, None


def _force_unit(spec, key: str) -> str | None:
    """The unit of a force element's value, for the saved file's comments (its record's)."""
    arg = next((a for a in FORCE_TYPES[spec.kind].arguments if a.name == key), None)
    return None if arg is None else arg.unit_for(spec.coordinate)


def _force(spec, p: dict, names: tuple[str, ...]) -> tuple:
    """The entry of a force element (in `forces`)."""
    entry = _Table([("type", spec.kind, None)])
    on = FORCE_TYPES[spec.kind].on
    if on == "body":
        entry.append(("body", names[spec.bodies[0]], None))
    elif on == "bodies":
        entry.append(("bodies", [names[i] for i in spec.bodies], None))
    else:
        entry.append(("joint", spec.joint, None))
        if spec.kind in ("actuator", "joint_friction"):
            entry.append(("coordinate", spec.coordinate, None))
    law = FORCE_TYPES[spec.kind].law
    if spec.law is not None:
        if not isinstance(spec.law, Expression):
            raise ValueError(
                f"force element {spec.name!r}: its {law} law is a Python function, which a "
                "file cannot hold; give a constant or an expression of t as text (e.g. "
                "\"0.5 * sin(2 * t)\"), or keep this model in Python")
        entry.append((law, spec.law.source, f"{_force_unit(spec, law)}, t in s"))
    entry += [_numbers(key, p[f"{spec.name}.{key}"], _force_unit(spec, key)) for key in spec.params]
    if spec.frame != "global":
        entry.append(("frame", spec.frame, None))
    if spec.allow_nonunique:
        entry.append(("allow_nonunique", True, None))
    return spec.name, entry, None


def _function(key: str, fn, element: str) -> str:
    """A motion's (or a user constraint's) text: the expression, or a module-level
    function's reference 'module:name'."""
    if isinstance(fn, Expression):
        return fn.source
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "<")
    reference = f"{module}:{qualname}"
    if module is None or "<" in qualname or _safe_import(reference) is not fn:
        raise ValueError(
            f"element {element!r}: its {key} is a Python function that a file cannot hold (a "
            "lambda, a closure or a method); give a motion as text (e.g. motion=\"omega * t\" "
            "with params={'omega': 2.0}) or use a module-level function")
    return reference


def _safe_import(reference: str):
    try:
        return _import(reference)
    except ValueError:
        return None


# ----- the two renderers of a `_Table` -----


def _yaml(table: _Table, indent: int = 0) -> list[str]:
    """YAML lines: a table as a block mapping, a text with line breaks as a literal block,
    other values in flow style."""
    out = []
    for key, value, comment in table:
        head, note = f"{' ' * indent}{_flow(key)}:", f"  # {comment}" if comment else ""
        if isinstance(value, _Table):
            out += [head + note, *_yaml(value, indent + 2)] if value else [f"{head} {{}}{note}"]
        elif isinstance(value, str) and "\n" in value:
            out += [f"{head} |{note}", *(f"{' ' * (indent + 2)}{line}" for line in value.splitlines())]
        else:
            out.append(f"{head} {_flow(value)}{note}")
    return out


def _flow(value) -> str:
    """One YAML value on one line (lists in flow style, floats with full precision)."""
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, width=10**9, sort_keys=False)
    return text.removesuffix("\n...\n").strip()


def _toml(table: _Table, path: tuple[str, ...] = ()) -> list[str]:
    """TOML lines: a table's values first, then its tables, each under its header
    (`[elements.motor]`; none for a table of tables only); an empty table is `{}`."""
    out, tables = [], []
    for key, value, comment in table:
        note = f"  # {comment}" if comment else ""
        if isinstance(value, _Table) and value:
            tables.append(((*path, _toml_key(key)), value, note))
        else:
            out.append(f"{_toml_key(key)} = {'{}' if isinstance(value, _Table) else _toml_value(value)}"
                       f"{note}")
    for name, value, note in tables:
        if note or any(not isinstance(v, _Table) or not v for _, v, _ in value):
            out += ["", f"[{'.'.join(name)}]{note}"]
        out += _toml(value, name)
    return out


def _toml_value(value, multiline: bool = True) -> str:
    """One TOML value: arrays on one line, floats with full precision, a text with line
    breaks (if `multiline`) as a multi-line string."""
    if isinstance(value, list):
        return f"[{', '.join(map(_toml_value, value))}]"
    import tomli_w

    return tomli_w.dumps({"v": value}, multiline_strings=multiline).removeprefix("v = ")[:-1]


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_value(key, multiline=False)
