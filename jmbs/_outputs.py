"""Outputs besides the coordinates: the joints' relative coordinates (angles, slides)
and body-point sensors, at one configuration or along a trajectory."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ._assembly import group_inputs
from ._joints.registry import ELEMENT_TYPES, measuring_group
from ._model import Model
from ._model.model import reference_context


def _joint_items(model: Model) -> list[tuple[str, object, str]]:
    """`(name "<joint>.<coordinate>", joint spec, coordinate)` for every free relative
    coordinate of every joint (revolute: angle; prismatic: slide; cylindrical: both)."""
    items = []
    for spec in model.element_specs:
        kind = ELEMENT_TYPES.get(spec.kind)
        for coordinate in (kind.drivable.get(model.dim, {}) if kind else {}):
            items.append((f"{spec.name}.{coordinate}", spec, coordinate))
    return items


def joint_coordinate_names(model: Model) -> tuple[str, ...]:
    """`"<joint>.angle"` / `"<joint>.slide"` for every joint coordinate, in element order."""
    return tuple(name for name, _, _ in _joint_items(model))


def joint_coordinates(model: Model, q) -> dict[str, np.ndarray]:
    """The joints' free relative coordinates at `q (nq,)` or along `q (T, nq)`: angles
    [rad] and slides [length], measured from the reference configuration as drivers
    measure them. Spatial angles are unwrapped along a trajectory (continuous through
    any number of turns); at one configuration they lie in (-pi, pi].

    **Returns:** `{"<joint>.<coordinate>": value (...,)}`, empty for a model without
    revolute, prismatic or cylindrical joints.
    """
    q = jnp.asarray(q, dtype=float)
    if q.shape[-1:] != (model.nq,) or q.ndim > 2:
        raise ValueError(f"joint_coordinates: q must have shape ({model.nq},) or (T, {model.nq}); "
                         f"got {q.shape}")
    items = _joint_items(model)
    if not items:
        return {}
    values = np.asarray(_measure(model, q.reshape(-1, model.nq)))
    out = {}
    for k, (name, _, coordinate) in enumerate(items):
        x = values[:, k]
        if coordinate == "angle" and model.dim == 3 and q.ndim == 2:
            x = np.unwrap(x)
        out[name] = x if q.ndim == 2 else x[0]
    return out


@eqx.filter_jit
def _measure(model: Model, qs: Array) -> Array:
    """`(T, n_coordinates)` in `_joint_items` order."""
    _, _, ctx = reference_context(model.dim, model.body_specs, model.element_specs, model.params())
    items = _joint_items(model)
    by_class: dict = {}
    for k, (name, joint, coordinate) in enumerate(items):
        cls = ELEMENT_TYPES[joint.kind].drivable[model.dim][coordinate]
        by_class.setdefault(cls, []).append(k)
    groups = [(ks, measuring_group(model.dim, [items[k] for k in ks], ctx)) for ks in by_class.values()]
    order = np.argsort(np.concatenate([np.asarray(ks) for ks, _ in groups]))

    def one(q):
        vals = [g.phi(group_inputs(model, g, q, None)[0], jnp.zeros(()))[:, 0] for _, g in groups]
        return jnp.concatenate(vals)[order]

    return jax.vmap(one)(qs)


def point_trajectory(model: Model, q, body, local_point, v=None) -> np.ndarray | tuple:
    """A body point's global position at `q (nq,)` or along `q (T, nq)` (a sensor);
    with `v`, also its velocity: `(position, velocity)`."""
    q = jnp.asarray(q, dtype=float)
    qs = q.reshape(-1, model.nq)
    pos = np.asarray(jax.vmap(lambda x: model.point(x, body, local_point))(qs))
    shape = q.shape[:-1] + (model.dim,)
    if v is None:
        return pos.reshape(shape)
    vs = jnp.asarray(v, dtype=float).reshape(-1, model.nv)
    vel = np.asarray(jax.vmap(lambda x, w: model.point_velocity(x, w, body, local_point))(qs, vs))
    return pos.reshape(shape), vel.reshape(shape)
