"""Force elements: springs, dampers, bushings, applied loads, actuators, joint friction.

A force element adds to the generalized forces `F` of `M v_dot + C^T lambda = F`;
it has no constraint rows. Every member describes its action the same way:

- `rate(qs, vs)`: `m` velocities linear in the bodies' velocities (a point's
  velocity, a joint's relative angular rate, a spring's rate of extension);
- `load(...)`: the `m` forces that act along them (power `load . rate`).

The generalized force on the bodies is then `J^T load` with `J = d rate / d v`,
computed by one `jax.vjp` of the linear map: no hand-written Jacobian per
element, in 2-D and 3-D alike. Where `rate` is the time derivative of a
coordinate `c(q)` and the load is `-dV/dc`, the element is exactly conservative
with the potential `V(c)` (`potential`); such elements (`AbstractMeasuredForce`)
give the measure `c(q)`, the law and the potential as a function of `c`
(`potential_at`), and get `J^T load` from one linearization of `c` and its
transpose. Only they have a potential. The same evaluation gives each element's
non-conservative power `load . rate + dV/dt` (the work a simulation integrates),
from `c`, its rate and the load at hand: the potential is not differentiated
through the measure again (that second pass made the spatial pendulum's first
gradient 18.3 s instead of 16.7 s).

Elements of one kind are stacked into a group (a struct of arrays with the
instances on the leading axis, topology static) like the joints. A force law
given as a function stays static; a constant is a design parameter
(`"<name>.<argument>"`).
"""

import abc
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._bodies import body_qdot
from .._expression import Expression
from .._joints.base import DeriveContext
from .._joints.registry import measuring_group

# How a law is called: "t": f(t); "tqv": f(t, q, v) with the model's whole state;
# "length_rate": a spring's f(length, rate).
LawInputs = Literal["t", "tqv", "length_rate"]


@dataclass(frozen=True)
class ForceSpec:
    """What the builder recorded for one force element (host-side, static, hashable).

    - `kind`: its row in `jmbs.FORCE_TYPES`; `name`: its name.
    - `bodies`: indices into the model's bodies (`n_bodies` is the ground).
    - `params`: its design-parameter names (keys `"<name>.<param>"`).
    - `law`, `law_inputs`: a force law given as a function (static; hashes by
      identity, an `Expression` by its text) and how it is called; `None`
      where the law is the constant parameter or the linear law.
    - `frame`: `"global"` or `"body"` (applied forces and torques).
    - `joint`, `joint_kind`, `coordinate`: the joint an element acts on, its kind,
      and which of its free coordinates (`"angle"`, `"slide"`).
    - `reaction_rows`: rows of `C` holding the joint's reaction forces (friction).
    - `allow_nonunique`: friction on a joint whose reaction is not unique, accepted.
    """

    kind: str
    name: str
    bodies: tuple[int, ...]
    params: tuple[str, ...]
    law: Callable | None = None
    law_inputs: LawInputs | None = None
    frame: str = "global"
    joint: str | None = None
    joint_kind: str | None = None
    coordinate: str | None = None
    reaction_rows: tuple[int, ...] = ()
    allow_nonunique: bool = False


class LoadInputs(eqx.Module):
    """The whole state a load may depend on: `q`, `v`, `t`, and the multipliers
    `lam` (element order) for elements that read reactions (friction)."""

    q: Float[Array, " nq"]
    v: Float[Array, " nv"]
    t: Float[Array, ""]
    lam: Float[Array, " nc"] | None = None


def law_inputs(fn: Callable, allowed: tuple[LawInputs, ...], where: str, what: str) -> LawInputs:
    """How the user's law `fn` is called, from the number of its positional parameters
    (host-side). **Raises:** `ValueError` naming the element for anything else."""
    if isinstance(fn, Expression):
        return "t"
    if not callable(fn):
        raise ValueError(f"{where}: {what} must be a number, an array, a text expression of t or "
                         f"a function, got {type(fn).__name__}")
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
        n = len(params)
    except (TypeError, ValueError):  # builtins without a signature: take them as f(t)
        n = 1
    by_arity = {1: "t", 2: "length_rate", 3: "tqv"}
    kind = by_arity.get(n)
    if kind not in allowed:
        forms = {"t": "f(t)", "tqv": "f(t, q, v)", "length_rate": "f(length, rate)"}
        raise ValueError(f"{where}: {what} takes {n} arguments; give "
                         f"{' or '.join(forms[a] for a in allowed)}")
    return kind


def evaluate_laws(laws: tuple, inputs: tuple, constants: Array, x: LoadInputs) -> Array:
    """Per instance, the law's value at the state `x` (`(n, ...)` like `constants`),
    or the constant where the law is `None`. The functions are static: a Python loop."""
    if all(f is None for f in laws):
        return constants
    out = []
    for k, (f, how) in enumerate(zip(laws, inputs)):
        if f is None:
            out.append(constants[k])
        else:
            value = f(x.t) if how == "t" else f(x.t, x.q, x.v)
            out.append(jnp.broadcast_to(jnp.asarray(value, dtype=float), constants.shape[1:]))
    return jnp.stack(out)


class AbstractForce(eqx.Module):
    """A stacked group of force elements of one kind (see the module docstring).

    Final groups set `kind` (their row in `jmbs.FORCE_TYPES`) and implement
    `derive`, `rate` and `load`; conservative parts give `potential`.
    """

    names: eqx.AbstractVar[tuple[str, ...]]
    bodies: eqx.AbstractVar[tuple[tuple[int, ...], ...]]
    kind: eqx.AbstractClassVar[str]
    # Whether `load` reads the multipliers (then the dynamics iterate, see `solve_dynamics`).
    reads_reactions: ClassVar[bool] = False

    @classmethod
    @abc.abstractmethod
    def derive(cls, specs: list[ForceSpec], ctx: DeriveContext) -> "AbstractForce":
        """Build the stacked group from the builder's specs and parameters."""

    @classmethod
    def group_key(cls, spec: ForceSpec) -> Any:
        """Elements with equal keys are stacked into one group."""
        return cls

    @abc.abstractmethod
    def rate(self, qs: Array, vs: Array) -> Array:
        """`(n, m)` velocities along which the loads act, linear in `vs (n, k, nv_b)`."""

    @abc.abstractmethod
    def load(self, qs: Array, vs: Array, x: LoadInputs) -> Array:
        """`(n, m)` forces along `rate` (power `load . rate`)."""

    def potential(self, qs: Array) -> Array:
        """`(n,)` potential energy of the conservative part (zero: only measured
        elements have one, `AbstractMeasuredForce.potential_at`)."""
        return jnp.zeros(qs.shape[0])

    def generalized(self, qs: Array, vs: Array, x: LoadInputs) -> tuple[Array, Array]:
        """`((n, k, nv_b) generalized forces on the instances' bodies: J^T load, (n,) their
        non-conservative power)`; here all of `load . rate`."""
        rate, pullback = jax.vjp(lambda w: self.rate(qs, w), vs)
        load = self.load(qs, vs, x)
        return pullback(load)[0], jnp.sum(load * rate, axis=1)


class AbstractMeasuredForce(AbstractForce):
    """Elements whose loads act along a measure of the configuration `c(q)` (a
    bushing's deflection, a spring's length, a joint coordinate): `rate` is `c'`,
    `load` is `law(c, c', x)`, and the generalized forces `J^T load` come from one
    linearization of the measure and its transpose (`jax.linearize`,
    `jax.linear_transpose`), a program about half the size of a `jax.vjp` through
    `rate` and `load` (each a derivative of the measure again): what the first
    call compiles, and reverse mode differentiates, in every vector field."""

    @abc.abstractmethod
    def measure(self, qs: Array) -> Array:
        """`(n, m)` the coordinates the loads act along."""

    @abc.abstractmethod
    def law(self, c: Array, rate: Array, x: LoadInputs) -> Array:
        """`(n, m)` the loads at the measure `c` and its rate."""

    def potential_at(self, c: Array) -> Array:
        """`(n,)` the potential energy at the measure `c` (zero by default)."""
        return jnp.zeros(c.shape[0])

    def potential(self, qs):
        return self.potential_at(self.measure(qs))

    def rate(self, qs, vs):
        return jax.jvp(self.measure, (qs,), (body_qdot(qs, vs),))[1]

    def load(self, qs, vs, x: LoadInputs):
        return self.law(self.measure(qs), self.rate(qs, vs), x)

    def generalized(self, qs, vs, x: LoadInputs):
        c, tangent = jax.linearize(self.measure, qs)

        def rate(w):
            return tangent(body_qdot(qs, w))

        c_dot = rate(vs)
        load = self.law(c, c_dot, x)
        _, potential_rate = jax.jvp(self.potential_at, (c,), (c_dot,))
        return (jax.linear_transpose(rate, vs)(load)[0],
                jnp.sum(load * c_dot, axis=1) + potential_rate)


def names_and_bodies(specs) -> tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]:
    return tuple(s.name for s in specs), tuple(s.bodies for s in specs)


def laws_of(specs) -> tuple[tuple, tuple]:
    return tuple(s.law for s in specs), tuple(s.law_inputs for s in specs)


def constants(ctx: DeriveContext, specs, key: str, shape: tuple[int, ...]) -> Array:
    """`(n, *shape)` the parameter `key` of every instance (zeros where it has none,
    i.e. where a function gives the law)."""
    return ctx.params.stack([f"{s.name}.{key}" for s in specs], default=0.0, shape=shape)


def joint_coordinate(specs: list[ForceSpec], ctx: DeriveContext):
    """The driver group that measures each spec's joint coordinate (from the reference
    configuration) with a zero motion: its `phi(qs, 0)` is the coordinate."""
    dim = ctx.r0.shape[1]
    return measuring_group(dim, [(s.name, ctx.specs[s.joint], s.coordinate) for s in specs], ctx)


def joint_group_key(cls, spec: ForceSpec) -> Any:
    """`group_key` of elements on a joint coordinate: one group per coordinate class."""
    return cls, spec.joint_kind, spec.coordinate
