"""`Release`: a set of reaction components whose removal makes a mechanism statically
determinate, as element substitutions, and the model they give (host-side)."""

import dataclasses
from dataclasses import dataclass, field

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._forces.base import ForceSpec
from .._joints.base import DriverSpec, JointSpec
from .._joints.registry import ELEMENT_TYPES
from .._model import Model
from .._model.model import derive
from .catalog import Substitution


@dataclass
class Release:
    """One proposal of `jmbs.advise`: release `components` (exactly the mechanism's
    redundancy `p` of them, `"element.component"`), by the element substitutions in
    `substitutions` (element name -> `Substitution`: the new kind and its geometry).

    - `cost`: the ranking (lower is better), the sum of `cost_terms`: 10 per joint
      touched, 5 per driver made a force actuator (a change of control, not of
      hardware), 1 per released moment or driver, 2 per released force, 3 more for a
      one-row element removed whole (a knife edge made a caster), 12 more for a larger
      one (a change of topology), and `symmetry` (0 to 1): the mean distance of the touched
      elements from the centre of the mechanism's joints over the mechanism's size,
      so that of equivalent releases the one that keeps a symmetric mechanism
      symmetric (the middle crank, the joint on the axis) comes first.
    - `checks`: what the advisor verified on `apply(model)` before returning it:
      `redundancy` (0), `dof` (the original's), `rank_samples` (the configurations at
      which the rank was checked), `reaction_difference` (largest difference of the
      original's unique reactions, relative to the largest reaction).
    - `generic`: True when the release was decided at the generic rank because the
      configuration given to `advise` is singular.
    """

    components: tuple[str, ...]
    substitutions: dict[str, Substitution]
    cost: float
    cost_terms: dict[str, float] = field(default_factory=dict)
    checks: dict = field(default_factory=dict)
    generic: bool = False

    def released(self, element: str) -> tuple[str, ...]:
        """The released components of `element`."""
        return tuple(c.partition(".")[2] for c in self.components if c.partition(".")[0] == element)

    def sentences(self) -> list[str]:
        """What to change, one sentence per element, as a designer reads it."""
        return [s.sentence(self.released(name)) for name, s in self.substitutions.items()]

    def __str__(self) -> str:
        return "; ".join(self.sentences()) + f" (cost {self.cost:.2f})"

    def __repr__(self) -> str:
        return f"Release({', '.join(self.components)}; cost {self.cost:.2f})"

    def _repr_html_(self) -> str:
        from .._display import html_table

        rows = [[name, s.old_kind, s.kind, ", ".join(self.released(name)), s.sentence(self.released(name))]
                for name, s in self.substitutions.items()]
        return html_table(["element", "was", "becomes", "released", "what to change"], rows,
                          caption=f"release of {len(self.components)} component(s), cost {self.cost:.2f}")

    def to_dict(self) -> dict:
        """A JSON-ready description (the command line's `--json`)."""
        subs = {name: {"from": s.old_kind, "to": s.kind, "swap_bodies": s.swap,
                       "geometry": {k: np.asarray(v).tolist() for k, v in s.geometry.items()}}
                for name, s in self.substitutions.items()}
        return {"components": list(self.components), "substitutions": subs, "cost": self.cost,
                "cost_terms": self.cost_terms, "sentences": self.sentences(),
                "checks": self.checks, "generic": self.generic}

    def apply(self, model: Model) -> Model:
        """The model with the substitutions made: same bodies, same element names (a
        replaced element keeps its name; a driver made an actuator becomes the force
        element of that name, its force the parameter `"<name>.force"`, 0 by default),
        the same initial state."""
        return apply_substitutions(model, list(self.substitutions.values()))


def joint_spec(model: Model, old, sub: Substitution) -> tuple[JointSpec, dict]:
    etype = ELEMENT_TYPES[sub.kind]
    keys = tuple(g.name for g in etype.geometry if model.dim in g.dims and g.name in sub.geometry)
    bodies = old.bodies[::-1] if sub.swap else old.bodies
    spec = JointSpec(sub.kind, old.name, bodies, keys, sub.components or etype.components(model.dim))
    return spec, {f"{old.name}.{k}": jnp.asarray(sub.geometry[k], dtype=float) for k in keys}


def apply_substitutions(model: Model, subs: list[Substitution]) -> Model:
    """Host-side: `model` with each element of `subs` replaced (see `Release.apply`)."""
    by_name = {s.element: s for s in subs}
    specs, forces = [], list(model.force_specs)
    values: dict = {}
    old_values = model.params()
    owner = {}
    for spec in model.element_specs:
        sub = by_name.get(spec.name)
        own = {k: v for k, v in old_values.items() if k.partition(".")[0] == spec.name}
        if sub is None:
            specs.append(spec)
        elif sub.kind == "actuator":
            joint = next(s for s in model.element_specs if s.name == spec.joint)
            forces.append(ForceSpec("actuator", spec.name, spec.bodies, ("force",), joint=spec.joint,
                                    joint_kind=joint.kind, coordinate=spec.coordinate))
            own = {}
        elif sub.kind == "removed":
            own = {}
        else:
            new, own = joint_spec(model, spec, sub)
            specs.append(new)
        owner[spec.name] = own
    for key, value in old_values.items():
        name = key.partition(".")[0]
        if name in owner:
            values.update(owner.pop(name))
        elif name not in by_name:
            values[key] = value
    for sub in subs:
        if sub.kind == "actuator":
            values[f"{sub.element}.force"] = jnp.asarray(0.0)
    driven = {s.joint for s in specs if isinstance(s, DriverSpec)}
    gone = [s.element for s in subs if s.kind == "removed" and s.element in driven]
    if gone:
        raise ValueError(f"cannot remove {gone[0]!r}: a driver acts on it")
    forces = _friction_rows(specs, forces)
    new = derive(model.dim, model.body_specs, tuple(specs), values, tuple(forces))
    return eqx.tree_at(lambda m: (m.q0, m.v0), new, (model.q0, model.v0))


def _friction_rows(specs, forces):
    """Friction reads its joint's reaction rows: their indices after the substitution."""
    rows, offset = {}, 0
    for e in specs:
        rows[e.name] = (offset, e.components)
        offset += len(e.components)
    out = []
    for s in forces:
        if s.kind == "joint_friction":
            a, comps = rows[s.joint]
            s = dataclasses.replace(s, reaction_rows=tuple(a + k for k, c in enumerate(comps)
                                                           if c.startswith("F")))
        out.append(s)
    return out
