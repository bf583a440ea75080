"""The immutable `Model` and its derivation from the builder's values (traceable)."""

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .. import _display
from .._bodies import NQ, NV, body_qdot, point, reference_q, rotation
from .._config import RUN_ONCE
from .._forces.base import ForceSpec
from .._forces.registry import bounded_parameters, force_class
from .._host_eval import host_or_compiled
from .._joints.base import AbstractElement, DeriveContext, DriverSpec, ElementSpec
from .._joints.registry import group_class
from .._misc import is_traced
from .._params import ParamVector
from .validate import check_motion, numbers, unknown

GROUND = "ground"
# Force-element parameters that cannot be negative (checked where values are concrete).


@dataclass(frozen=True)
class Body:
    """Handle of a body returned by `ModelBuilder.add_body` (`index` -1 is the ground)."""

    name: str
    index: int


@dataclass(frozen=True)
class BodySpec:
    name: str
    orientation: str  # the parameter that gives the reference orientation


@dataclass(frozen=True)
class ElementInfo:
    """Host-side description of one element of a built model."""

    name: str
    kind: str
    bodies: tuple[str, ...]
    components: tuple[str, ...]
    rows: tuple[int, int]
    holonomic: bool


class Model(eqx.Module):
    """An immutable multibody model (a pytree): topology static, values arrays.

    Built by `ModelBuilder.build()`. Coordinates follow docs/conventions.md:
    `q0`, `v0` are the reference configuration and initial velocities; the
    rows of every constraint vector and matrix are grouped by element in the
    order the elements were added.
    """

    dim: int = eqx.field(static=True)
    body_specs: tuple[BodySpec, ...] = eqx.field(static=True)
    element_specs: tuple[ElementSpec, ...] = eqx.field(static=True)
    element_rows: tuple[tuple[int, int], ...] = eqx.field(static=True)
    row_order: tuple[int, ...] | None = eqx.field(static=True)  # group order -> element order
    param_layout: tuple[tuple[str, tuple[int, ...]], ...] = eqx.field(static=True)
    # All design parameters in one flat vector: one pytree leaf instead of hundreds
    # keeps the cost of passing a model to a jitted function low.
    param_vector: Float[Array, " n_params"]
    groups: tuple[AbstractElement, ...]
    q0: Float[Array, " nq"]
    v0: Float[Array, " nv"]
    mass: Float[Array, " nb"]
    inertia: Array  # (nb,) planar, (nb, 3, 3) spatial, body frame
    gravity: Float[Array, " dim"]
    # Force elements (springs, applied loads, friction): no rows, they add to `F`. `None`
    # rather than an empty tuple when there are none (diffrax's backsolve adjoint cannot
    # take an empty tuple node in its `args`); read them through `force_groups`.
    force_specs: tuple[ForceSpec, ...] = eqx.field(static=True, default=())
    forces: tuple | None = None

    def __repr__(self) -> str:
        return _display.model_line(self)

    def __str__(self) -> str:
        return _display.model_text(self)

    def _repr_html_(self) -> str:
        return _display.model_html(self)

    # ----- sizes and names (host-side) -----
    @property
    def n_bodies(self) -> int:
        return len(self.body_specs)

    @property
    def nq(self) -> int:
        return self.n_bodies * NQ[self.dim]

    @property
    def nv(self) -> int:
        return self.n_bodies * NV[self.dim]

    @property
    def nc(self) -> int:
        return self.element_rows[-1][1] if self.element_rows else 0

    @property
    def body_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.body_specs)

    @property
    def element_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.element_specs)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """`"<body>.<coordinate>"` for each entry of `q`: `x, y, phi` (planar) or `x, y, z,
        p0, p1, p2, p3` (spatial: position and unit quaternion)."""
        coords = ("x", "y", "phi") if self.dim == 2 else ("x", "y", "z", "p0", "p1", "p2", "p3")
        return tuple(f"{b}.{c}" for b in self.body_names for c in coords)

    @property
    def velocity_names(self) -> tuple[str, ...]:
        """`"<body>.<coordinate>"` for each entry of `v`: `vx, vy, omega` (planar) or `vx,
        vy, vz, wx, wy, wz` (spatial: global velocity, angular velocity in the body frame)."""
        coords = ("vx", "vy", "omega") if self.dim == 2 else ("vx", "vy", "vz", "wx", "wy", "wz")
        return tuple(f"{b}.{c}" for b in self.body_names for c in coords)

    @property
    def force_groups(self) -> tuple:
        """The stacked force-element groups (empty without force elements)."""
        return self.forces or ()

    @property
    def force_names(self) -> tuple[str, ...]:
        """The force elements' names, in the order they were added."""
        return tuple(s.name for s in self.force_specs)

    def _holonomic(self) -> tuple[bool, ...]:
        """Per element, whether its group class is holonomic."""
        by_name = {s.name: s for s in self.element_specs}
        return tuple(group_class(self.dim, s, by_name).holonomic for s in self.element_specs)

    @property
    def holonomic_rows(self) -> np.ndarray:
        """Boolean mask `(nc,)` of the rows that come from holonomic elements."""
        mask = np.zeros(self.nc, bool)
        by_name = {s.name: s for s in self.element_specs}
        for spec, holonomic, (a, b) in zip(self.element_specs, self._holonomic(), self.element_rows):
            # An element with rows of both kinds (a wheel) lists them.
            mask[a:b] = getattr(group_class(self.dim, spec, by_name), "row_holonomic", holonomic)
        return mask

    def element(self, name: str) -> ElementInfo:
        """Kind, bodies, reaction components and rows of the element `name`."""
        k = self.element_index(name)
        spec = self.element_specs[k]
        names = self.body_names + (GROUND,)
        return ElementInfo(spec.name, spec.kind, tuple(names[i] for i in spec.bodies),
                           spec.components, self.element_rows[k], self._holonomic()[k])

    def element_of_row(self, row: int) -> str:
        """Name of the element that owns constraint row `row`."""
        return next(s.name for s, (a, b) in zip(self.element_specs, self.element_rows)
                    if a <= row < b)

    def rows(self, name: str) -> slice:
        """Rows of element `name` in `C`, `Phi`, `Gamma` and the multipliers."""
        a, b = self.element_rows[self.element_index(name)]
        return slice(a, b)

    def key_rows(self, key: str, what: str) -> slice:
        """Rows of `key`, an element name or `"element.component"`; a `ValueError` that
        starts with `what` names the known elements or components otherwise."""
        name, _, comp = key.partition(".")
        try:
            info = self.element(name)
        except ValueError as err:
            raise ValueError(f"{what}: {err}") from None
        a, b = info.rows
        if not comp:
            return slice(a, b)
        if comp not in info.components:
            raise ValueError(f"{what}: element {name!r} has no component {comp!r}; its "
                             f"components are {', '.join(info.components)}")
        a += info.components.index(comp)
        return slice(a, a + 1)

    def element_index(self, name: str) -> int:
        """Position of element `name` in `element_names` (a `ValueError` naming the known ones)."""
        names = self.element_names
        if name not in names:
            raise ValueError(unknown("element", name, names))
        return names.index(name)

    def body_index(self, body: "str | Body") -> int:
        """Index of a body (by name or handle); raises for unknown bodies."""
        name = body.name if isinstance(body, Body) else body
        if name == GROUND:
            raise ValueError("the ground has no coordinates; name a moving body")
        if name not in self.body_names:
            raise ValueError(unknown("body", name, self.body_names))
        return self.body_names.index(name)

    def body_q(self, q: Float[Array, " nq"], body: "str | Body") -> Array:
        """Coordinates of one body taken from the model's `q`."""
        k, n = self.body_index(body), NQ[self.dim]
        if np.shape(q) != (self.nq,):
            raise ValueError(f"q has shape {np.shape(q)}, but the model has nq = {self.nq} coordinates; "
                             "pass one configuration")
        return q[k * n:(k + 1) * n]

    # ----- points -----
    def point(self, q: Float[Array, " nq"], body: "str | Body", local_point) -> Array:
        """Global position of the point with body-frame coordinates `local_point`."""
        return point(self.body_q(q, body), self._local_point(local_point))

    def _local_point(self, local_point) -> Array:
        s = jnp.asarray(local_point, dtype=float)
        if s.shape != (self.dim,):
            raise ValueError(f"a body point must be {self.dim} numbers (body-frame coordinates), "
                             f"got shape {s.shape}")
        return s

    def point_velocity(self, q, v, body: "str | Body", local_point) -> Array:
        """Global velocity of a body point, `d/dt point` along `q_dot = N v`."""
        k = self.body_index(body)
        nvb = NV[self.dim]
        qb = self.body_q(q, body)
        qd = body_qdot(qb[None], v[k * nvb:(k + 1) * nvb][None])[0]
        s = self._local_point(local_point)
        return jax.jvp(lambda x: point(x, s), (qb,), (qd,))[1]

    # ----- design parameters -----
    def _params(self) -> ParamVector:
        """The parameters as `ParamVector` (one slice per key, one gather per field)."""
        return ParamVector(self.param_vector, self.param_layout)

    def characteristic_lengths(self) -> Float[Array, " nb"]:
        """Per body: the RMS distance from its centre of mass to the points of the
        elements attached to it (reference configuration).

        A body without such points (or with all of them at its centre) gets the
        RMS of the other bodies' lengths, then the RMS spread of the bodies'
        positions, then 1. Two gathers from the parameter vector (the index
        arrays are static), so it stays cheap to compile for large models.
        """
        nb, params = self.n_bodies, self._params()
        pts, owners = [], []
        for spec in self.element_specs:
            for key, which in (("point", (0, 1)), ("point_i", (0,)), ("point_j", (1,))):
                if key in spec.params:
                    for w in which:
                        if spec.bodies[w] < nb:
                            pts.append(f"{spec.name}.{key}")
                            owners.append(spec.bodies[w])
        r0 = params.stack([f"{b}.position" for b in self.body_names])
        sums, counts = jnp.zeros(nb), np.bincount(np.array(owners, int), minlength=nb)
        if pts:
            P = params.stack(pts)
            sums = jax.ops.segment_sum(jnp.sum((P - r0[np.array(owners)]) ** 2, axis=1),
                                       np.array(owners), num_segments=nb)
        L = jnp.sqrt(sums / np.maximum(counts, 1))
        has = L > 0
        model_length = jnp.sqrt(jnp.sum(jnp.where(has, L**2, 0.0)) / jnp.maximum(jnp.sum(has), 1))
        spread = jnp.sqrt(jnp.mean(jnp.sum((r0 - r0.mean(axis=0, keepdims=True)) ** 2, axis=1)))
        fallback = jnp.where(model_length > 0, model_length, jnp.where(spread > 0, spread, 1.0))
        return jnp.where(has, L, fallback)

    def params(self) -> dict[str, Array]:
        """Every value given to the builder, keyed `"<name>.<argument>"` (and `"gravity"`):
        NumPy arrays for a concrete model, traced arrays inside a transformation of it."""
        return dict(self._params().items())

    def with_params(self, new: dict[str, Any]) -> "Model":
        """A model with some parameters replaced and everything dependent re-derived.

        Traceable: `jax.grad` and `jax.vmap` over the new values work; the fields the
        new values do not reach (a spring's stiffness: not the joints' geometry or
        `q0`) keep this model's values and carry no derivative, so a gradient
        differentiates only where the design reaches. `q0` is re-derived from the
        bodies' reference poses; call `jmbs.assemble` if the reference configuration
        no longer closes.

        **Raises:** `ValueError` for an unknown key or a value of the wrong shape.
        """
        if not isinstance(new, Mapping):
            raise ValueError(f"with_params takes a dict {{'<name>.<argument>': value}}, got "
                             f"{type(new).__name__}")
        params = self._params()
        vector = params.vector  # NumPy for a concrete model: concrete values are set on the host
        traced = []  # the keys given traced values
        vector = vector.copy() if isinstance(vector, np.ndarray) else vector
        for key, value in new.items():
            if key not in params:
                raise ValueError(unknown("parameter", key, tuple(params)))
            if not isinstance(value, jax.Array):  # text and booleans are refused, not converted
                value = numbers(value, f"parameter {key!r}", "with_params",
                                "a number or an array of numbers")
            value = jnp.asarray(value, dtype=float) if is_traced(value) else np.asarray(value, dtype=float)
            start, shape = params.offsets[key]
            if value.shape != shape:
                raise ValueError(f"parameter {key!r} has shape {shape}, "
                                 f"got a value of shape {value.shape}")
            if not is_traced(value):  # values are checked where they are known
                if not np.all(np.isfinite(value)):
                    raise ValueError(f"parameter {key!r} contains NaN or infinity: {value}")
                arg = key.rpartition(".")[2]
                if arg == "mass" and not np.all(value > 0):
                    raise ValueError(f"parameter {key!r}: a mass must be positive, got {value}")
                bound = dict(bounded_parameters(self.force_specs)).get(key)
                if bound is not None and not bound.admits(value):
                    raise ValueError(f"parameter {key!r} must be {bound.bound.replace('_', '-')}, "
                                     f"got {value}")
            # One slice of the vector per new value (not one input per parameter).
            if isinstance(vector, np.ndarray) and isinstance(value, np.ndarray):
                vector[start:start + value.size] = value.ravel()
            else:
                vector = jnp.asarray(vector).at[start:start + value.size].set(value.ravel())
                traced.append(key)
        model = derive(self.dim, self.body_specs, self.element_specs,
                       ParamVector(vector, self.param_layout), self.force_specs)
        # Only on a concrete model: a traced one's other values carry derivatives of their own.
        if traced and isinstance(params.vector, np.ndarray):
            return _underived_where_unreached(model, self, traced)
        return model

    def with_motions(self, motions: dict[str, Callable]) -> "Model":
        """A model whose drivers follow new motions: `{driver name: f(t)}`.

        The new `f(t)` is measured from the reference configuration like the
        old one; the drivers' motion parameters (if any) stay in `params()`
        but the new functions do not take them. Host-side (the functions are
        static): e.g. `f = lambda t: t` makes the time the driven coordinate,
        for sweeps along a driver.

        **Raises:** `ValueError` for a name that is not a driver or a value
        that is not callable.
        """
        drivers = [s.name for s in self.element_specs if isinstance(s, DriverSpec)]
        for name, fn in motions.items():
            if name not in drivers:
                raise ValueError(unknown("driver", name, drivers))
            check_motion(fn, None, f"driver {name!r}")
        specs = tuple(dataclasses.replace(s, motion=motions[s.name], param_keys=())
                      if s.name in motions else s for s in self.element_specs)
        new = derive(self.dim, self.body_specs, specs, self._params(), self.force_specs)
        return eqx.tree_at(lambda m: (m.q0, m.v0), new, (self.q0, self.v0))


def _underived_where_unreached(model: Model, base: Model, keys: list[str]) -> Model:
    """`model`, derived from `base`'s parameters with traced values for `keys`, with
    every leaf that those values do not reach taken from `base`: the same value,
    concrete, so `jax.grad` over a design parameter carries tangents only where the
    design reaches (a spring's stiffness: the force elements, not the joints' geometry
    or the initial state, whose projection then needs no derivative), and the caller's
    program neither derives them again nor batches them under `jax.vmap` (the spatial
    pendulum of `bench_latency.py`: its first gradient's XLA 11.8-12.0 -> 11.2-11.6 s).
    `q0` and `v0` stay the derivation's own (a built model's may be assembled, and
    `with_params` re-derives them), cut from differentiation where unreached."""
    reached = _reached_leaves(base.dim, base.body_specs, base.element_specs, base.force_specs,
                              base.param_layout, tuple(keys))
    flat, tree = jax.tree.flatten(model)
    rederived = jax.tree.leaves(eqx.tree_at(lambda m: (m.q0, m.v0), jax.tree.map(lambda _: False, model),
                                            (True, True)))
    return jax.tree.unflatten(tree, [
        x if r else jax.lax.stop_gradient(x) if own else b
        for x, b, r, own in zip(flat, jax.tree.leaves(base), reached, rederived, strict=True)])


@functools.lru_cache(maxsize=64)
def _reached_leaves(dim: int, body_specs, element_specs, force_specs, layout, keys: tuple[str, ...]
                    ) -> tuple[bool, ...]:
    """Per leaf of the derived model, whether the parameters `keys` reach it: read from
    the derivation's program, traced with `keys` as inputs of their own (once per
    structure: the derivation cannot branch on values, it is traced in all of them)."""
    size = sum(int(np.prod(shape)) for _, shape in layout)
    shapes = dict(layout)

    def leaves(rest, *values):
        pieces = _Pieces(ParamVector(rest, layout), dict(zip(keys, values)))
        return jax.tree.leaves(_derive_model(dim, body_specs, element_specs, force_specs, layout,
                                             None, pieces))

    program = jax.make_jaxpr(leaves)(jax.ShapeDtypeStruct((size,), float),
                                     *[jax.ShapeDtypeStruct(shapes[key], float) for key in keys])
    return tuple(_reached(program.jaxpr, [False] + [True] * len(keys)))


class _Pieces(ParamVector):
    """Parameters with `own` values read as arrays of their own, the others from `plain`
    (`_reached_leaves`'s analysis: a slice of one vector would depend on every value
    in it)."""

    def __init__(self, plain: ParamVector, own: dict[str, Array]):
        self.plain, self.own, self.layout, self.offsets = plain, own, plain.layout, plain.offsets
        at = np.concatenate([plain.offsets[key][0] + np.arange(np.size(x)) for key, x in own.items()])
        self.vector = plain.vector.at[at].set(jnp.concatenate([jnp.ravel(x) for x in own.values()]))

    def __getitem__(self, key: str) -> Array:
        return self.own[key] if key in self.own else self.plain[key]

    def stack(self, keys: list[str], default: float | None = None, shape: tuple[int, ...] = ()) -> Array:
        if not any(key in self.own for key in keys):
            return self.plain.stack(keys, default, shape)
        shape = self.offsets[keys[0]][1] if default is None else shape
        return jnp.stack([jnp.broadcast_to(self[key], shape) if key in self.offsets
                          else jnp.full(shape, default, float) for key in keys])


def _reached(jaxpr, inputs: list[bool]) -> list[bool]:
    """Per output of `jaxpr`, whether it depends on the inputs marked True (through
    nested `jit` calls; any other primitive's outputs depend on all its inputs)."""
    reached = {v: r for v, r in zip(jaxpr.invars, inputs)}

    def of(v):
        return not isinstance(v, jax.extend.core.Literal) and reached.get(v, False)

    for eqn in jaxpr.eqns:
        ins = [of(v) for v in eqn.invars]
        inner = eqn.params.get("jaxpr")
        if isinstance(inner, jax.extend.core.ClosedJaxpr) and len(inner.jaxpr.invars) == len(ins):
            outs = _reached(inner.jaxpr, ins)
        else:
            outs = [any(ins)] * len(eqn.outvars)
        reached.update(zip(eqn.outvars, outs))
    return [of(v) for v in jaxpr.outvars]


def derive(dim: int, body_specs: tuple[BodySpec, ...], element_specs: tuple[ElementSpec, ...],
           values: Mapping[str, Array], force_specs: tuple[ForceSpec, ...] = (),
           and_then: Callable[[Model], Any] | None = None) -> Model | tuple[Model, Any]:
    """The `Model` of these specs and parameter values (traceable in the values); with
    `and_then` (a function of the model, static), `(model, and_then(model))` from the
    same trace (the builder's closure check: one derivation, not two).

    Traced once per structure: the specs and the layout are static (hashable;
    motion, constraint and force-law functions hash by identity), the values go in as
    one vector. Concrete values are derived on the host (`_host_eval`: NumPy, no
    compilation), traced ones by the program inlined in the caller's. The derivation
    reads each field of every body and element of a kind with one gather, so its size
    follows the element groups, not the model's size.
    """
    params = ParamVector.of(values)
    static = (dim, tuple(body_specs), tuple(element_specs), tuple(force_specs), params.layout,
              and_then)
    if is_traced(params.vector):  # a design sweep's `with_params`: inlined in the caller's program
        return _derive(*static, params.vector)
    # Concrete values (`build()`): evaluated with NumPy on the host, no program compiled
    # (a derivation the host's evaluator lacks, or a design loop's many, compiles one
    # that runs once, without LLVM's optimizations).
    return host_or_compiled(_derive_model, _derive_once, *static, params.vector)


def _derive_model(dim: int, body_specs, element_specs, force_specs, layout, and_then, vector):
    params = vector if isinstance(vector, ParamVector) else ParamVector(vector, layout)
    vector = params.vector
    q0, R0, ctx = reference_context(dim, body_specs, element_specs, params)
    names = [b.name for b in body_specs]
    vel = params.stack([f"{n}.velocity" for n in names])
    omega = params.stack([f"{n}.angular_velocity" for n in names])
    if dim == 2:
        v0 = jnp.concatenate([vel, omega[:, None]], axis=1)
        inertia = params.stack([f"{n}.inertia" for n in names])
    else:
        # The builder takes angular velocities in the global frame; v uses the body frame.
        v0 = jnp.concatenate([vel, jnp.einsum("nji,nj->ni", R0, omega)], axis=1)
        inertia = _by_kind([params.offsets[f"{n}.inertia"][1] for n in names], lambda shape, idx: (
            _inertia3(params.stack([f"{names[k]}.inertia" for k in idx]))))
    mass = params.stack([f"{n}.mass" for n in names])

    by_name = ctx.specs
    # Group the elements by type, in the order the types first appear.
    grouped: dict[Any, list[int]] = {}
    classes = [group_class(dim, spec, by_name) for spec in element_specs]
    for k, (spec, cls) in enumerate(zip(element_specs, classes)):
        grouped.setdefault(cls.group_key(spec), []).append(k)
    rows, offset = [], 0
    for spec in element_specs:
        rows.append((offset, offset + len(spec.components)))
        offset += len(spec.components)
    groups, order = [], []
    for members in grouped.values():
        groups.append(classes[members[0]].derive([element_specs[k] for k in members], ctx))
        order += [r for k in members for r in range(*rows[k])]
    forces: dict[Any, list[ForceSpec]] = {}
    for spec in force_specs:
        cls = force_class(dim, spec)
        forces.setdefault(cls.group_key(spec), []).append(spec)
    force_groups = tuple(force_class(dim, specs[0]).derive(specs, ctx) for specs in forces.values())
    # order[i] is the element-order row of stacked row i; invert it for a gather.
    row_order = tuple(int(i) for i in np.argsort(order)) if order != sorted(order) else None
    model = Model(dim, body_specs, element_specs, tuple(rows), row_order, layout,
                  vector, tuple(groups), q0.ravel(), v0.ravel(), mass, inertia, params["gravity"],
                  force_specs, force_groups or None)
    return model if and_then is None else (model, and_then(model))


# `RunOnce`'s split, on `jax.jit` with static arguments: `eqx.filter_jit`'s dispatch would
# make a concrete `with_params` 2.5x slower on repeat (0.11 -> 0.28 ms, the Bricard).
_derive = jax.jit(_derive_model, static_argnums=(0, 1, 2, 3, 4, 5))
_derive_once = jax.jit(_derive_model, static_argnums=(0, 1, 2, 3, 4, 5), compiler_options=RUN_ONCE)


def _by_kind(kinds: list, fn: Callable[[Any, list[int]], Array]) -> Array:
    """`fn(kind, indices)` for the bodies of each kind, stacked back in body order."""
    groups: dict[Any, list[int]] = {}
    for k, kind in enumerate(kinds):
        groups.setdefault(kind, []).append(k)
    if len(groups) == 1:
        ((kind, idx),) = groups.items()
        return fn(kind, idx)
    parts = [fn(kind, idx) for kind, idx in groups.items()]
    order = np.concatenate([idx for idx in groups.values()])
    return jnp.concatenate(parts)[np.argsort(order)]


def reference_context(dim: int, body_specs, element_specs, values: Mapping[str, Array]
                      ) -> tuple[Array, Array, DeriveContext]:
    """`(q0 (nb, nq_b), R0 (nb, dim, dim), the DeriveContext)` of the reference
    configuration given by the bodies' parameters (traceable)."""
    params = ParamVector.of(values)
    names = [b.name for b in body_specs]
    position = params.stack([f"{n}.position" for n in names])

    def orientation(kind: str, idx: list[int]) -> Array:
        o = params.stack([f"{names[k]}.{kind}" for k in idx])
        return jax.vmap(lambda p, x: reference_q(p, x, kind))(position[np.array(idx)], o)

    q0 = _by_kind([b.orientation for b in body_specs], orientation)
    R0 = jax.vmap(rotation)(q0)
    ctx = DeriveContext(params, jnp.concatenate([q0[:, :dim], jnp.zeros((1, dim))]),
                        jnp.concatenate([R0, jnp.eye(dim)[None]]), {s.name: s for s in element_specs})
    return q0, R0, ctx


def _inertia3(J: Array) -> Array:
    """Inertia tensors `(k, 3, 3)` from principal moments `(k, 3)` or tensors."""
    return jax.vmap(jnp.diag)(J) if J.shape[1:] == (3,) else J
