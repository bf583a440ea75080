"""Reading and writing model files (YAML), and the bundled models (host-side only)."""

import importlib
import re
from importlib import resources
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pydantic
import yaml

from .._expression import Expression
from .._forces.registry import FORCE_TYPES
from .._joints.base import ConstraintSpec, DriverSpec
from .._joints.registry import ELEMENT_TYPES
from .._model import GROUND, Model
from .._model.builder import ModelBuilder, check_closed
from .schema import ModelFile

BUNDLED = "jmbs.models"


class ModelFileError(ValueError):
    """A model file that cannot be used: the message (one line) names the file, the
    line and field, and what is expected."""


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
        raise ModelFileError(f"{source}: is a directory; pass a model file (.yaml) or a bundled name")
    if path.is_file():
        return path.read_text(), str(path)
    name = str(source)
    if name in bundled_models():
        return resources.files(BUNDLED).joinpath(f"{name}.yaml").read_text(), f"{name}.yaml"
    if path.suffix in (".yaml", ".yml") or path.parent != Path("."):
        raise ModelFileError(f"{source}: no such file")
    raise ModelFileError(f"{name!r} is neither a model file nor a bundled model; bundled: "
                         f"{', '.join(bundled_models())}")


# ----------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """YAML 1.1 reads `1e-3` as text; here every number written as one is a float."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[0-9][0-9_]*[eE][-+]?[0-9]+
                   |\.[0-9_]+(?:[eE][-+]?[0-9]+)?|\.inf|\.Inf|\.INF|\.nan|\.NaN|\.NAN)$""",
               re.X),
    list("-+0123456789."))


def load(source: "str | Path", *, trusted: bool = False) -> Model:
    """A `Model` from a model file or a bundled mechanism's name.

    **Arguments:**
    - `source`: a path to a YAML model file (format: docs/model-files.md), or
      the name of a bundled mechanism (`jmbs.bundled_models()`).
    - `trusted`: allow the file's `"package.module:function"` references (a
      motion, a user constraint's functions), which import a module (its top-level
      code runs) and call the function. Off by default: loading a file then runs
      no code at all, and a reference is an error naming the element. Only for
      files you trust as you trust a Python script.

    **Returns:** the built `Model` (its reference configuration checked to
    close the constraints, as `ModelBuilder.build` does).

    **Raises:** `ModelFileError` (a `ValueError`) with one line naming the
    file, the line and field, and what is expected: invalid YAML, a missing or
    unknown field, a wrong type, an unknown body or joint, a motion that does
    not parse, geometry that does not close, a function reference without
    `trusted=True`.
    """
    text, label = _source(source)
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark else label
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ModelFileError(f"{where}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise ModelFileError(f"{label}: a model file is a mapping with dim, bodies and elements")
    _check_duplicates(root, label)
    try:
        spec = ModelFile.model_validate(data)
    except pydantic.ValidationError as e:
        err = e.errors()[0]
        loc = _strip_tags(data, err["loc"])
        line = _line(root, loc)
        field = ".".join(map(str, loc)) or "(top level)"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise ModelFileError(f"{label}:{line}: {field}: {_explain(err)}{more}") from None
    return _build(spec, root, label, trusted)


def _explain(err: dict) -> str:
    if err["type"] == "missing":
        return "required field missing"
    if err["type"] == "extra_forbidden":
        return "unknown field (check the spelling; see docs/model-files.md)"
    if err["type"] == "union_tag_invalid":
        return (f"unknown element type {err['input'].get('type')!r}; expected one of "
                f"{err['ctx']['expected_tags']}")
    if err["type"] == "union_tag_not_found":
        return "every element needs a `type` (revolute, prismatic, driver, ...)"
    return f"{err['msg']}, got {err['input']!r}"


def _strip_tags(data, loc: tuple) -> tuple:
    """Drop the discriminator tags pydantic inserts into the location of a union member."""
    out, node = [], data
    for part in loc:
        if isinstance(node, dict) and node.get("type") == part and part not in node:
            continue  # the tag of a union member, e.g. 'revolute'
        out.append(part)
        node = node[part] if isinstance(node, dict | list) and _has(node, part) else None
    return tuple(out)


def _has(node, part) -> bool:
    return part in node if isinstance(node, dict) else isinstance(part, int) and part < len(node)


def _line(root, loc) -> int:
    """1-based line of the deepest node of `loc` present in the YAML tree."""
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


def _check_duplicates(node, label: str) -> None:
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


def _build(spec: ModelFile, root, label: str, trusted: bool) -> Model:
    def fail(loc: tuple, message: str):
        raise ModelFileError(f"{label}:{_line(root, loc)}: {'.'.join(loc)}: {message}") from None

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


def save(model: Model, path: "str | Path", *, description: str | None = None) -> Path:
    """Write `model` to a YAML model file that `jmbs.load` reads back exactly.

    Every value given to the builder is written with full precision (the
    round trip is exact), with units as comments; `initial` holds `q0`/`v0`
    when they differ from the bodies' reference poses (an assembled model).

    **Arguments:**
    - `model`: the model.
    - `path`: the file to write (`.yaml`).
    - `description`: a line written into the file.

    **Returns:** the path.

    **Raises:** `ValueError` naming the element whose function cannot be
    written: a driver motion or a user constraint that is a lambda or a
    closure (give motions as text, e.g. `motion="omega * t"`, or use
    module-level functions).
    """
    path = Path(path)
    path.write_text(dumps(model, description=description))
    return path


def dumps(model: Model, *, description: str | None = None) -> str:
    """The model file of `model` as text (see `save`)."""
    p = {k: np.asarray(v) for k, v in model.params().items()}
    out = ["# jmbs model file. Units: m, kg, s, rad (inertia kg m^2); geometry in global",
           "# coordinates in the reference configuration. Format: docs/model-files.md", "jmbs: 1"]
    if description:
        out.append(f"description: {_flow(description)}")
    out += [f"dim: {model.dim}", _field("gravity", p["gravity"], 0, _UNITS["gravity"]), "bodies:"]
    for body in model.body_specs:
        out.append(f"  {_flow(body.name)}:")
        for key in ("mass", "inertia", "position", body.orientation, "velocity",
                    "angular_velocity"):
            value = p[f"{body.name}.{key}"]
            if key in ("velocity", "angular_velocity") and not np.any(value):
                continue
            out.append(_field(key, value, 4, _UNITS[key]))
    names = model.body_names + (GROUND,)
    out.append("elements:" if model.element_specs else "elements: {}")
    for spec in model.element_specs:
        etype = ELEMENT_TYPES[spec.kind]
        out.append(f"  {_flow(spec.name)}:")
        out.append(f"    type: {etype.file_type}")
        bodies = [names[i] for i in spec.bodies]
        if isinstance(spec, DriverSpec):
            unit = "rad" if spec.coordinate == "angle" else "m"
            out.append(f"    joint: {_flow(spec.joint)}")
            out.append(f"    coordinate: {spec.coordinate}")
            out += _function("motion", spec.motion, spec.name, f"{unit}, t in s")
        elif isinstance(spec, ConstraintSpec):
            out.append(f"    bodies: {_flow(bodies)}")
            out += _function(spec.kind, spec.fn, spec.name, None)
            out.append(f"    components: {_flow(list(spec.components))}")
        else:  # a joint: its bodies and geometry
            out.append(f"    body: {_flow(bodies[1])}" if etype.bodies == 1 else
                       f"    bodies: {_flow(bodies)}")
            units = {g.name: g.unit for g in etype.geometry}
            out += [_field(k, p[f"{spec.name}.{k}"], 4, unit=units[k]) for k in spec.params]
        own = spec.param_keys if isinstance(spec, DriverSpec | ConstraintSpec) else ()
        if own:
            out.append("    params:")
            out += [_field(k, p[f"{spec.name}.{k}"], 6) for k in own]
    out += _forces(model, p, names)
    q_ref, v_ref = (np.asarray(x) for x in (model.with_params({}).q0, model.with_params({}).v0))
    q0, v0 = np.asarray(model.q0), np.asarray(model.v0)
    if not (np.array_equal(q0, q_ref) and np.array_equal(v0, v_ref)):
        out.append("initial:  # the initial state differs from the reference poses")
        if not np.array_equal(q0, q_ref):
            out.append(_field("q", q0, 2))
        if not np.array_equal(v0, v_ref):
            out.append(_field("v", v0, 2))
    return "\n".join(out) + "\n"


def _force_unit(spec, key: str) -> str | None:
    """The unit of a force element's value, for the saved file's comments."""
    rot = spec.coordinate == "angle"
    by_key = {"point": "m", "point_i": "m", "point_j": "m", "rest_length": "m", "rest_angle": "rad",
              "rest_slide": "m",
              "radius": "m", "coulomb": "friction coefficient", "torque": "N m",
              "viscous": "N m s/rad" if rot else "N s/m", "velocity_scale": "rad/s" if rot else "m/s",
              "force": ("N m" if rot else "N") if spec.kind == "actuator" else "N"}
    by_kind = {"spring_damper": {"stiffness": "N/m", "damping": "N s/m"},
               "rotational_spring_damper": {"stiffness": "N m/rad", "damping": "N m s/rad"},
               "slide_spring_damper": {"stiffness": "N/m", "damping": "N s/m"},
               "bushing": {"stiffness": "N/m, then N m/rad", "damping": "N s/m, then N m s/rad"}}
    return by_kind.get(spec.kind, {}).get(key, by_key.get(key))


def _forces(model: Model, p: dict, names: tuple[str, ...]) -> list[str]:
    """The `forces:` section (nothing without force elements)."""
    if not model.force_specs:
        return []
    out = ["forces:"]
    for spec in model.force_specs:
        out += [f"  {_flow(spec.name)}:", f"    type: {spec.kind}"]
        on = FORCE_TYPES[spec.kind].on
        if on == "body":
            out.append(f"    body: {_flow(names[spec.bodies[0]])}")
        elif on == "bodies":
            out.append(f"    bodies: {_flow([names[i] for i in spec.bodies])}")
        else:
            out.append(f"    joint: {_flow(spec.joint)}")
            if spec.kind in ("actuator", "joint_friction"):
                out.append(f"    coordinate: {spec.coordinate}")
        law = FORCE_TYPES[spec.kind].law
        if spec.law is not None:
            if not isinstance(spec.law, Expression):
                raise ValueError(
                    f"force element {spec.name!r}: its {law} law is a Python function, which a "
                    "file cannot hold; give a constant or an expression of t as text (e.g. "
                    "\"0.5 * sin(2 * t)\"), or keep this model in Python")
            out.append(f"    {law}: {_flow(spec.law.source)}  # {_force_unit(spec, law)}, t in s")
        out += [_field(key, p[f"{spec.name}.{key}"], 4, _force_unit(spec, key)) for key in spec.params]
        if spec.frame != "global":
            out.append(f"    frame: {spec.frame}")
        if spec.allow_nonunique:
            out.append("    allow_nonunique: true")
    return out


def _flow(value) -> str:
    """One YAML value on one line (lists in flow style, floats with full precision)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10**9, sort_keys=False)
    return text.removesuffix("\n...\n").strip()


def _field(key: str, value, indent: int, unit: str | None = None) -> str:
    """`key: value`, with the unit (if any) as a comment."""
    value = np.asarray(value, dtype=float).tolist()
    comment = f"  # {unit}" if unit else ""
    return f"{' ' * indent}{key}: {_flow(value)}{comment}"


def _function(key: str, fn, element: str, unit: str | None) -> list[str]:
    comment = f"  # {unit}" if unit else ""
    if isinstance(fn, Expression):
        if "\n" in fn.source:
            body = "\n".join(f"      {line}" for line in fn.source.splitlines())
            return [f"    {key}: |{comment}", body]
        return [f"    {key}: {_flow(fn.source)}{comment}"]
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "<")
    reference = f"{module}:{qualname}"
    if module is None or "<" in qualname or _safe_import(reference) is not fn:
        raise ValueError(
            f"element {element!r}: its {key} is a Python function that a file cannot hold (a "
            "lambda, a closure or a method); give a motion as text (e.g. motion=\"omega * t\" "
            "with params={'omega': 2.0}) or use a module-level function")
    return [f"    {key}: {_flow(reference)}{comment}"]


def _safe_import(reference: str):
    try:
        return _import(reference)
    except ValueError:
        return None
