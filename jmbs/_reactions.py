"""Multipliers -> physical reactions (wrenches on body j), with their uniqueness."""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from ._assembly import constraint_matrix, generalized_forces, group_inputs
from ._display import reactions_html, reactions_line, reactions_text
from ._formulations.base import AbstractFormulation, Prepared, resolve, solve_dynamics
from ._formulations.registry import default_formulation
from ._gc import compiles
from ._kinematics import warn_if_unassembled
from ._linalg import min_norm_solve
from ._misc import RunOnce, check_finite, check_int, check_positive, check_state, is_traced, warn_user
from ._model import Model
from ._rank import characteristic_lengths, constraint_rank, equilibrate
from ._solvability.analysis import element_sets
from ._solvability.base import AbstractSolvabilityMethod, Decisions
from ._solvability.registry import default_uniqueness, resolve_method
from ._solvability.resultant import resultant_criteria, resultant_set


def element_wrenches(model: Model, q: Array, t: Array, lam: Array):
    """`(point, force, torque)` of every element, `(ne, dim)`, `(ne, dim)`, `(ne, 1 | 3)`:
    the wrench the element applies to its body j (about `point`, global frame),
    from the component values `x = -lambda`. Zero for user constraints."""
    ne, dim = len(model.element_specs), model.dim
    nrot = 1 if dim == 2 else 3
    lam_g = lam if model.row_order is None else jnp.zeros_like(lam).at[np.asarray(model.row_order)].set(lam)
    point, force, torque = jnp.zeros((ne, dim)), jnp.zeros((ne, dim)), jnp.zeros((ne, nrot))
    start = 0
    for g in model.groups:
        qs, _ = group_inputs(model, g, q, None)
        n = len(g.names)
        m = len(g.components) if n else 0
        x = -lam_g[start:start + n * m].reshape(n, m)
        start += n * m
        w = g.wrenches(qs, t)
        if w is None:
            continue
        P, Fu, Mu = w
        idx = np.asarray([model.element_index(name) for name in g.names])
        point = point.at[idx].set(P)
        force = force.at[idx].set(jnp.einsum("nm,nmd->nd", x, Fu))
        torque = torque.at[idx].set(jnp.einsum("nm,nmd->nd", x, Mu))
    return point, force, torque


def uniqueness(model: Model, rigid: np.ndarray, method: AbstractSolvabilityMethod, q, t,
               C: Array | None = None) -> tuple[Array, Array, Array, Array]:
    """`(unique (ne,), component_unique (nc,), rank, rank_values (k,))` at one
    configuration `q, t` (`C`: the constraint matrix there where the caller has it).

    Rows that are not `rigid` (compliant) have reactions set by their
    compliance law, hence unique; the rigid rows are decided by `method` (with
    its tolerances) on their own rows of `C`, whose rank and relative
    rank-revealing values are returned too. With every row rigid this is
    `method.evaluate`, the decision of `jmbs.solvability` with the same method.
    """
    sets = element_sets(model)
    rigid = np.asarray(rigid, bool)
    if not rigid.any():
        return jnp.ones(len(sets), bool), jnp.ones(model.nc, bool), jnp.asarray(0), jnp.zeros(0)
    # Decisions have no derivative (with respect to the design parameters either).
    model, q, t, C = jax.tree.map(lambda x: jax.lax.stop_gradient(x) if eqx.is_inexact_array(x) else x,
                                  (model, q, jnp.asarray(t, dtype=float), C))
    if rigid.all():
        d: Decisions = method.evaluate(model, q, t, C=C)
        return d.unique, d.component_unique, d.rank, d.rank_values
    C = constraint_matrix(model, q, t) if C is None else C
    d = method.decide(equilibrate(model, C)[rigid], jnp.asarray(sets[:, rigid]))
    comp = jnp.ones(model.nc, bool).at[np.flatnonzero(rigid)].set(d.component_unique)
    return (jnp.where(sets[:, rigid].any(axis=1), d.unique, True), comp, d.rank,
            d.rank_values)


def check_friction(model: Model, prepared: Prepared, q: Array, t, method: AbstractSolvabilityMethod,
                   where: str) -> None:
    """Host-side, where a run is prepared: refuse Coulomb joint friction on a joint whose reaction
    force is not unique under `prepared` (the motion would depend on the formulation),
    naming the joint, unless the element allows it (then warn). Traced input is not
    looked at (the check needs values)."""
    friction = [s for s in model.force_specs if s.kind == "joint_friction"]
    if not friction or is_traced(model, q, t):
        return
    # Only the Coulomb part reads the reaction: purely viscous friction is unique anyway.
    params = model.params()
    friction = [s for s in friction if np.any(np.asarray(params[f"{s.name}.coulomb"]) != 0)
                and np.any(np.asarray(params.get(f"{s.name}.radius", 1.0)) != 0)]
    if not friction:
        return
    comp = uniqueness(model, prepared.rigid_rows, method, q, t)[1]
    comp = np.asarray(comp)
    for s in friction:
        if np.all(comp[np.asarray(s.reaction_rows, int)]):
            continue
        msg = (f"{where}: joint friction {s.name!r} acts on joint {s.joint!r}, whose reaction "
               "force is not unique: the rigid model fixes only the sum of the redundant "
               "reactions, so the Coulomb friction force, and with it the motion, would depend on the "
               "formulation's choice. Replace the joint (or a redundant one of its loop) by a "
               "bushing (ModelBuilder.add_bushing), or use jmbs.Penalty")
        if not s.allow_nonunique:
            raise ValueError(msg + "; or pass allow_nonunique=True to add_joint_friction to "
                             "accept this formulation's split (viscous friction, coulomb=0, "
                             "needs no unique reaction)")
        warn_user(msg + " (allowed by allow_nonunique=True: the motion depends on the "
                  "formulation)")


_NON_UNIQUE = (
    "jmbs: the gradient of the reaction {name!r} was asked for, but this reaction is not "
    "unique: the rigid model fixes only the sum of the redundant reactions it shares with "
    "other joints, so its value, and its derivative, depend on the formulation that picked "
    "one solution (another formulation gives another number). Differentiate a unique "
    "reaction (see Reactions.is_unique and unique_components), a unique component "
    "(components(name, component)), or model the compliance (jmbs.Penalty); or pass "
    "allow_nonunique=True to differentiate this formulation's value knowingly.")


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _unique_only(x: Array, unique: Array, message: str) -> Array:
    """`x`, whose derivative is an error where `unique` is not all True."""
    return x


@_unique_only.defjvp
def _unique_only_jvp(message, primals, tangents):
    x, unique = primals
    if not is_traced(unique):
        # Concrete decisions (jax.grad outside jit): refuse on the host, with the message
        # alone rather than under the traceback advice of a runtime check.
        if not np.all(np.asarray(unique)):
            raise eqx.EquinoxRuntimeError(message)
        return x, tangents[0]
    # Traced: the check rides on a primal value the tangent uses, so it runs under
    # jax.grad and jit too (a check on the tangent alone can be optimised away).
    flag = eqx.error_if(jnp.ones((), x.dtype), ~jnp.all(unique), message)
    return x, tangents[0] * flag


class Reactions(eqx.Module):
    """Reactions of every element at one state or along a trajectory (leading axes `...`).

    The values are those of the formulation that produced them; where
    `is_unique(name)` is False, they are one of infinitely many answers that
    give the same motion (another formulation gives another), not a fact
    about the mechanism. `rank (...)` and `rank_values (..., k)` are the rank of
    the rigid rows of `C` and the uniqueness method's relative rank-revealing
    values there (along a motion they show where it meets a singular
    configuration). `q (..., nq)` and `t (...)` are the states they belong to.
    """

    element_names: tuple[str, ...] = eqx.field(static=True)
    element_rows: tuple[tuple[int, int], ...] = eqx.field(static=True)
    component_names: tuple[tuple[str, ...], ...] = eqx.field(static=True)
    multipliers: Float[Array, "... nc"]
    points: Float[Array, "... ne dim"]
    forces: Float[Array, "... ne dim"]
    torques: Float[Array, "... ne nrot"]
    unique: Bool[Array, "... ne"]
    component_unique: Bool[Array, "... nc"]
    rank: Int[Array, "..."]
    rank_values: Float[Array, "... k"]
    q: Float[Array, "... nq"]
    t: Float[Array, "..."]
    rigid: tuple[bool, ...] = eqx.field(static=True)  # rows decided (others compliant)
    ctol: Float[Array, "..."]  # the uniqueness method's criterion tolerance (an array: no retrace)

    def __repr__(self) -> str:
        return reactions_line(self)

    def __str__(self) -> str:
        return reactions_text(self)

    def _repr_html_(self) -> str:
        return reactions_html(self)

    def _index(self, name: str) -> int:
        try:
            return self.element_names.index(name)
        except ValueError:
            raise ValueError(f"unknown element {name!r}; the elements are "
                             f"{', '.join(self.element_names)}") from None

    def force(self, name: str, *, allow_nonunique: bool = False) -> Array:
        """Force on body j, global frame, `(..., dim)`.

        Differentiating it (`jax.grad`, `jax.jvp`, ...) raises an error where
        the reaction is not unique, unless `allow_nonunique=True`.
        """
        i = self._index(name)
        return self._guard(self.forces[..., i, :], self.unique[..., i], name, allow_nonunique)

    def torque(self, name: str, *, allow_nonunique: bool = False) -> Array:
        """Torque on body j about the element's point: `(...,)` planar, `(..., 3)` spatial.
        Guarded against differentiation where not unique, as `force`."""
        i = self._index(name)
        t = self._guard(self.torques[..., i, :], self.unique[..., i], name, allow_nonunique)
        return t[..., 0] if t.shape[-1] == 1 else t

    def point(self, name: str) -> Array:
        """The point the torque is taken about (joint or contact point), `(..., dim)`."""
        return self.points[..., self._index(name), :]

    def components(self, name: str, component: str | None = None, *,
                   allow_nonunique: bool = False) -> Array:
        """The element's reaction components (`-lambda`: force or torque on body j
        along each constraint direction, e.g. a driver's driving force), `(..., m)`,
        or `(...)` for the one named `component`. Guarded against
        differentiation where not unique, as `force` (component by component:
        a unique component of a non-unique joint can be differentiated alone)."""
        a, b = self.element_rows[self._index(name)]
        if component is not None:
            comps = self.component_names[self._index(name)]
            if component not in comps:
                raise ValueError(f"element {name!r} has no component {component!r}; its "
                                 f"components are {', '.join(comps)}")
            a = a + comps.index(component)
            b = a + 1
            name = f"{name}.{component}"
        x = self._guard(-self.multipliers[..., a:b], self.component_unique[..., a:b], name,
                        allow_nonunique)
        return x[..., 0] if component is not None else x

    @staticmethod
    def _guard(x: Array, unique: Array, name: str, allow: bool) -> Array:
        return x if allow else _unique_only(x, unique, _NON_UNIQUE.format(name=name))

    def resultant(self, model: Model, group, on, about=None, *,
                  allow_nonunique: bool = False) -> tuple[Array, Array]:
        """The resultant wrench that the elements `group` (a name or names) apply to the
        body or bodies `on` (names or handles; `"ground"`: the support): `(force (..., dim),
        moment (...) | (..., 3))`, the moment about the point `about` (default the origin),
        global frame. Elements between two bodies of `on` cancel.

        A resultant can be unique while its elements are not (the ground joints of an
        overconstrained mechanism together carry its load): `is_unique_resultant` decides
        it at each state (`SolvabilityReport.is_unique_resultant` at one configuration),
        and, like a single reaction, a non-unique resultant refuses to be differentiated
        unless `allow_nonunique=True`. `model` is the model the reactions belong to."""
        _, sides, _ = resultant_set(model, group, on)
        dim = model.dim
        P = jnp.zeros(dim) if about is None else jnp.asarray(about, dtype=float)
        force = jnp.zeros(self.forces.shape[:-2] + (dim,))
        moment = jnp.zeros(self.torques.shape[:-2] + (() if dim == 2 else (3,)))
        for e, sign in sides.items():
            if sign == 0:
                continue  # internal to `on`
            F, M, p = self.forces[..., e, :], self.torques[..., e, :], self.points[..., e, :]
            arm = p - jnp.broadcast_to(P, p.shape)
            if dim == 2:
                M = M[..., 0] + arm[..., 0] * F[..., 1] - arm[..., 1] * F[..., 0]
            else:
                M = M + jnp.cross(arm, F)
            force, moment = force + sign * F, moment + sign * M
        if allow_nonunique:
            return force, moment
        unique = self.is_unique_resultant(model, group, on)
        message = _NON_UNIQUE.format(name=f"resultant of {group!r} on {on!r}")
        return _unique_only(force, unique, message), _unique_only(moment, unique, message)

    def is_unique_resultant(self, model: Model, group, on) -> Array:
        """Whether the resultant of `group` on `on` is unique at each state, `(...)`."""
        rows, _, bodies = resultant_set(model, group, on)
        batch = self.t.shape
        q, t, rank = (x.reshape((-1,) + x.shape[len(batch):]) for x in (self.q, self.t, self.rank))
        C = jax.vmap(constraint_matrix, in_axes=(None, 0, 0))(model, q, t)
        crit = resultant_criteria(C, q, characteristic_lengths(model), model.dim, jnp.asarray(rows),
                                  jnp.asarray(bodies), self.rigid, rank)
        return jax.lax.stop_gradient(crit.reshape(batch) <= self.ctol)

    def is_unique(self, name: str) -> Array:
        """Whether the element's reaction is uniquely determined, `(...)`."""
        return self.unique[..., self._index(name)]

    def unique_components(self, name: str) -> Array:
        """Uniqueness of each component, `(..., m)`."""
        a, b = self.element_rows[self._index(name)]
        return self.component_unique[..., a:b]


def build_reactions(model: Model, q: Array, t: Array, lam: Array, rigid: np.ndarray,
                    C: Array | None, method: AbstractSolvabilityMethod) -> Reactions:
    """The `Reactions` of one state (vmap for a trajectory), given `C` there; their
    uniqueness decided by `method`."""
    point, force, torque = element_wrenches(model, q, t, lam)
    unique, comp, rank, values = uniqueness(model, rigid, method, q, t, C)
    components = tuple(spec.components for spec in model.element_specs)
    return Reactions(model.element_names, model.element_rows, components, lam, point, force, torque,
                     unique, comp, rank, values, q, jnp.asarray(t, dtype=float),
                     tuple(bool(x) for x in np.asarray(rigid)), jnp.asarray(method.ctol, float))


class StateResult(eqx.Module):
    """`jmbs.reactions` at one state: accelerations, multipliers and reactions."""

    v_dot: Float[Array, " nv"]
    reactions: Reactions


@compiles
def reactions(model: Model, q, v, t=0.0, formulation: AbstractFormulation | Prepared | None = None,
              *, uniqueness: AbstractSolvabilityMethod | None = None) -> StateResult:
    """Accelerations and reactions at one state `(q, v, t)`.

    A pure function of arrays once the formulation is prepared: `jax.vmap`
    over `q, v, t` (a trajectory or a batch) and `jax.grad` through it work.
    The same program runs for concrete and traced input.

    **Arguments:**
    - `model`: the model.
    - `q`, `v`: state `(nq,)`, `(nv,)`; they should satisfy the constraints
      (see `jmbs.assemble`, `jmbs.consistent_velocity`): a concrete `q` off them
      gets a warning naming the worst element.
    - `t`: time.
    - `formulation`: default `jmbs.NullSpaceProjection()` (`jmbs.DivideAndConquer()`
      from `jmbs.internal.STRUCTURED_MIN_NV` velocity coordinates on). It is initialised
      (`init`: the rank of `C`) at `(q, t)`; under `jax.vmap`, `jax.grad` or
      `jax.jit` over the model or the state, where values cannot be looked at,
      pass one prepared beforehand, e.g.
      `jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)`, or state its
      rank (`jmbs.NullSpaceProjection(rank=...)`).
    - `uniqueness`: the solvability method that decides which reactions are
      unique, with its tolerances (default `jmbs.NullSpace()`, `jmbs.DCA()` from
      `jmbs.internal.STRUCTURED_MIN_NV` velocity coordinates on; a name such as
      `"qr"` gives that method with its default tolerances), as in
      `jmbs.solvability(..., method=...)`.

    **Returns:** a `StateResult` with `v_dot` and `reactions`.

    **Raises:** `ValueError` for `q`, `v` of the wrong shape or (concrete input)
    not finite, a formulation that does not fit the model, or
    an unprepared one whose rank cannot be decided from traced values.
    """
    formulation = default_formulation(model) if formulation is None else formulation
    method = resolve_method(default_uniqueness(model) if uniqueness is None else uniqueness, model)
    q = check_state("jmbs.reactions", "q", q, model.nq, "coordinate")
    v = check_state("jmbs.reactions", "v", v, model.nv, "velocity coordinate")
    check_finite("jmbs.reactions", "t", t, "pass a finite time")
    t = jnp.asarray(t, dtype=float)
    warn_if_unassembled(model, q, t, "jmbs.reactions")
    prepared = resolve(formulation, model, q, t, "jmbs.reactions")
    check_friction(model, prepared, q, t, method, "jmbs.reactions")
    return _reactions(model, prepared, method, q, v, t)


@RunOnce  # one state per call; a sweep vmaps the call
def _reactions(model, prepared: Prepared, method, q, v, t):
    terms = prepared.terms(model, q, v, t)
    v_dot, lam = solve_dynamics(model, prepared, terms, q, v, t)
    return StateResult(v_dot, build_reactions(model, q, t, lam, prepared.rigid_rows, terms.dense_matrix(),
                                              method))


class StaticResult(eqx.Module):
    """`jmbs.statics` at one configuration.

    - `reactions`: the reactions and driving forces that hold the bodies at rest
      against gravity and the force elements (the minimum-norm set where they
      are not unique; `Reactions.is_unique` says which are);
    - `unbalanced (nv,)`: the generalized force that no reaction can balance
      (zero in equilibrium: the part of the load along the free motions);
    - `in_equilibrium`: whether it is zero (relative to the load, to `rtol`).
    """

    reactions: Reactions
    unbalanced: Float[Array, " nv"]
    in_equilibrium: Bool[Array, ""]


@compiles
def statics(model: Model, q, t=0.0, *, rank: int | None = None, rtol: float = 1e-8,
            uniqueness: AbstractSolvabilityMethod | None = None) -> StaticResult:
    """Kinetostatics with applied loads: the reactions and driving forces that hold the
    model at rest in configuration `q` at time `t` (`C^T lambda = F(q, 0, t)`).

    A mechanism whose drivers lock every degree of freedom is in equilibrium
    under any load, and the drivers' reactions are the static driving forces;
    otherwise the load along the free motions is `unbalanced`.

    **Arguments:**
    - `q`: configuration `(nq,)` on the constraints (a concrete `q` off them gets a
      warning); `t`: time.
    - `rank`: the rank of `C` (default: decided from values, as the formulations
      do; state it under `jax.vmap` / `jax.grad` over the model or `q`).
    - `rtol`: equilibrium tolerance, relative to the largest generalized force.
    - `uniqueness`: the solvability method deciding which reactions are unique.

    **Raises:** `ValueError` for `q` of the wrong shape or not finite, or a traced
    `q` or model without `rank`.
    """
    method = resolve_method(default_uniqueness(model) if uniqueness is None else uniqueness, model)
    q = check_state("jmbs.statics", "q", q, model.nq, "coordinate")
    check_finite("jmbs.statics", "t", t, "pass a finite time")
    check_positive("jmbs.statics", "rtol", rtol)
    if rank is not None:
        check_int("jmbs.statics", "rank", rank, f"the rank of C lies in 0..{min(model.nc, model.nv)}",
                  minimum=0)
        if rank > min(model.nc, model.nv):
            raise ValueError(f"jmbs.statics: rank = {rank} exceeds what C ({model.nc} x {model.nv}) "
                             f"can have, {min(model.nc, model.nv)}; pass the rank of C (e.g. "
                             "jmbs.solvability(model).rank)")
    t = jnp.asarray(t, dtype=float)
    warn_if_unassembled(model, q, t, "jmbs.statics")
    if rank is None:
        if is_traced(model, q, t):
            raise ValueError("jmbs.statics: the model or q is traced, so the rank of C cannot be "
                             "decided from values; pass rank= (e.g. from a concrete call's "
                             "jmbs.solvability(model).rank)")
        rank = constraint_rank(model, q, t)
    return _statics(model, method, q, t, int(rank), jnp.asarray(rtol, float))


@RunOnce
def _statics(model, method, q, t, rank, rtol):
    C = constraint_matrix(model, q, t)
    F = generalized_forces(model, q, jnp.zeros(model.nv), t)
    lam = min_norm_solve(C @ C.T, C @ F, 0.0, rank)
    unbalanced = F - C.T @ lam
    scale = jnp.maximum(jnp.max(jnp.abs(F), initial=0.0), jnp.finfo(float).tiny)
    ok = jnp.max(jnp.abs(unbalanced), initial=0.0) <= rtol * scale
    reactions = build_reactions(model, q, t, lam, np.ones(model.nc, bool), C, method)
    return StaticResult(reactions, unbalanced, ok)
