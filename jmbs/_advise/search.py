"""`jmbs.advise`: releases that make an overconstrained mechanism statically determinate.

A set of rows of `C` can be removed without changing its rank exactly when the rows
of a basis of `null(C^T)` that belong to them form an invertible matrix; removing
them then leaves the motion and every unique reaction as they were and makes every
remaining reaction unique (p = 0). The advisor searches the catalogued element
substitutions (`catalog.py`) for sets of exactly `p` released components that keep
the rank at several assembled configurations along the motion (the configuration
given and configurations a small and a larger step away along the free motions,
drivers released), because a release that keeps the rank at one configuration only
is not a release. Each substitution is checked with the new element's own rows, and
each proposal, before it is returned, on the model `apply` builds.
"""


import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from .._assembly import constraint_matrix, gamma, generalized_forces, mass_matrix, phi, velocity_rhs
from .._bodies import GROUND_Q, NQ, NV
from .._display import html_table
from .._gc import compiles
from .._joints.base import DeriveContext, DriverSpec
from .._kinematics import nearby_configurations, velocity_units_jit
from .._linalg import numerical_rank
from .._misc import RunOnce, as_configuration, as_time
from .._model import Model
from .._model.model import reference_context
from .._solvability.report import solvability
from .catalog import Option, options
from .release import Release, joint_spec

# The configurations at which a release must keep the rank: (samples, step) pairs, the
# step a fraction of the bodies' characteristic lengths (radians in rotation).
SAMPLES = ((5, 0.15),)
# The search stops after this many rank checks (the number of combinations grows fast
# with p); the releases found by then are ranked.
MAX_CHECKS = 4000
# A proposal passes when the original's unique reactions and the new model's differ by
# less than this, relative to the largest reaction.
REACTION_RTOL = 1e-8
# The null-space criterion of uniqueness on the equilibrated C (entries at most 1, an
# orthonormal null-space basis) when no method is named.
UNIQUE_TOL = 1e-8


class Advice(list):
    """The list of `Release`s, best first, with `message` (what was decided: p, the
    configurations, or why the list is empty) and `generic` (the configuration given is
    singular, so the releases were decided at the mechanism's generic rank)."""

    def __init__(self, releases, message: str, redundancy: int, generic: bool = False):
        super().__init__(releases)
        self.message, self.redundancy, self.generic = message, redundancy, generic

    def _repr_html_(self) -> str:
        rows = [[k, "; ".join(r.sentences()), ", ".join(r.components), f"{r.cost:.2f}",
                 f"{r.checks.get('reaction_difference', float('nan')):.1e}"]
                for k, r in enumerate(self, 1)]
        return html_table(["", "what to change", "released", "cost", "reaction check"], rows,
                          caption=self.message)

    def __str__(self) -> str:
        lines = [self.message]
        for k, r in enumerate(self, 1):
            lines.append(f"{k}. " + "; ".join(r.sentences()) + f"  [cost {r.cost:.2f}]")
        return "\n".join(lines)


# The advisor's programs (`RunOnce`): each evaluates once per call, or once per candidate
# release (`_terms`, on a model of its own), so they run on the host (or compile without
# LLVM's optimizations).


@RunOnce
def _matrices(model: Model, qs, t):
    return jax.vmap(lambda q: constraint_matrix(model, q, t))(qs)


@RunOnce
def _terms(model: Model, qs, v, t):
    """`C` at every sample and `Gamma` at the first, with velocities `v`: one program per model."""
    return (jax.vmap(lambda q: constraint_matrix(model, q, t))(qs), gamma(model, qs[0], v, t),
            phi(model, qs[0], t))


@RunOnce
def _state(model: Model, q, t):
    """`(C, b, M)` at `q`."""
    return constraint_matrix(model, q, t), velocity_rhs(model, q, t), mass_matrix(model)


@RunOnce
def _loads(model: Model, q, v, t):
    """`(F, Gamma)` at `(q, v)`."""
    return generalized_forces(model, q, v, t), gamma(model, q, v, t)


@RunOnce
def _poses(dim, body_specs, element_specs, values):
    """The bodies' reference poses (ground last) from which elements derive their geometry."""
    ctx = reference_context(dim, body_specs, element_specs, values)[2]
    return ctx.r0, ctx.R0


@RunOnce
def _group_rows(group, qs, t):
    """Rows of `C` of a one-instance group at each `qs (S, 1, k, nq_b)`: `(S, m, k, nv_b)`."""
    def one(q):
        vs = jnp.zeros(q.shape[:-1] + (NV[3 if q.shape[-1] == 7 else 2],))
        return jax.jacfwd(lambda v: group.velocity_map(q, v, t))(vs)[0, :, 0]
    return jax.vmap(one)(qs)


class _Rows:
    """The scaled rows of `C` at the sample configurations, per element, and of the
    substituted elements (computed once per option)."""

    def __init__(self, model: Model, qs: np.ndarray, t: float):
        self.model, self.qs, self.t = model, qs, t
        unit = np.asarray(velocity_units_jit(model))
        self.unit = unit
        C = np.asarray(_matrices(model, jnp.asarray(qs), t)) * unit
        self.base = {name: C[:, slice(*model.element_rows[k])] for k, name in enumerate(model.element_names)}
        values = model.params()
        r0, R0 = _poses(model.dim, model.body_specs, model.element_specs, values)
        self.ctx = DeriveContext(values, r0, R0, {s.name: s for s in model.element_specs})
        self.values, self.cache = values, {}

    def of(self, name: str, opt: Option | None) -> np.ndarray:
        if opt is None:
            return self.base[name]
        sub = opt.substitution
        if sub.kind in ("removed", "actuator"):
            return self.base[name][:, :0]
        key = (name, id(opt))
        if key not in self.cache:
            self.cache[key] = self._substituted(name, sub)
        return self.cache[key]

    def _substituted(self, name, sub) -> np.ndarray:
        from .._joints.registry import ELEMENT_TYPES

        model = self.model
        old = model.element_specs[model.element_names.index(name)]
        spec, vals = joint_spec(model, old, sub)
        ctx = DeriveContext({**self.values, **vals}, self.ctx.r0, self.ctx.R0, self.ctx.specs)
        group = ELEMENT_TYPES[spec.kind].classes[model.dim].derive([spec], ctx)
        # One compiled program per element class, not per element: the names are static.
        group = dataclasses.replace(group, names=("_",), bodies=((0, 1),))
        nb, nqb, nvb = model.n_bodies, NQ[model.dim], NV[model.dim]
        full = np.concatenate([self.qs.reshape(len(self.qs), nb, nqb),
                               np.broadcast_to(GROUND_Q[model.dim], (len(self.qs), 1, nqb))], axis=1)
        rows = np.asarray(_group_rows(group, jnp.asarray(full[:, list(spec.bodies)][:, None]), self.t))
        out = np.zeros((len(self.qs), rows.shape[1], model.nv))
        for k, b in enumerate(spec.bodies):
            if b < nb:
                out[:, :, b * nvb:(b + 1) * nvb] += rows[:, :, k]
        return out * self.unit


def _ranks(blocks: list[np.ndarray]) -> np.ndarray:
    """The rank at each sample of the stacked row blocks, rows normalised."""
    C = np.concatenate(blocks, axis=1)
    norm = np.abs(C).max(axis=2, keepdims=True)
    return np.array([numerical_rank(X) for X in C / np.where(norm > 0, norm, 1.0)])


def _rank(blocks: list[np.ndarray], regular: np.ndarray) -> int:
    """The smallest rank over the regular samples (those at the generic rank: a sample
    that happens to be singular says nothing about a release)."""
    return int(_ranks(blocks)[regular].min())


def _joint_points(model: Model) -> dict:
    """Reference joint point and bodies of every element that has one (a driver: its joint's)."""
    params = model.params()
    out = {}
    for spec in model.element_specs:
        key = f"{spec.name}.point" if f"{spec.name}.point" in params else f"{spec.name}.point_j"
        if key in params:
            out[spec.name] = (np.asarray(params[key]), spec.bodies)
    for spec in model.element_specs:
        if isinstance(spec, DriverSpec) and spec.joint in out:
            out[spec.name] = out[spec.joint]
    return out


def _cost(chosen: list[tuple[str, Option]], points: dict) -> tuple[float, dict]:
    """The documented cost of `Release` (lower is better) and its terms."""
    released = [c for _, o in chosen for c in o.released]
    drivers = sum(len(o.released) for _, o in chosen if o.substitution.kind == "actuator")
    moments = sum(c.startswith("M") for _, o in chosen for c in o.released
                  if o.substitution.kind != "actuator")
    P = np.array([p for p, _ in points.values()]) if points else np.zeros((1, 1))
    centre = P.mean(axis=0)
    size = max(float(np.max(np.linalg.norm(P - centre, axis=1))), 1e-12)
    sym = float(np.mean([np.linalg.norm(points[n][0] - centre) / size if n in points else 1.0
                         for n, _ in chosen]))
    actuators = sum(o.substitution.kind == "actuator" for _, o in chosen)
    terms = {"joints": 10.0 * (len(chosen) - actuators), "drivers": 5.0 * actuators,
             "moments": float(moments + drivers),
             "forces": 2.0 * (len(released) - moments - drivers),
             "removed": sum((3.0 if len(o.released) == 1 else 12.0) for _, o in chosen
                            if o.substitution.kind == "removed"),
             "symmetry": round(sym, 6), "variant": sum(o.preference for _, o in chosen)}
    return float(sum(terms.values())), terms


def _search(rows: _Rows, cands: dict[str, list[Option]], r: int, p: int, limit: int) -> list:
    """Depth-first over the elements: sets of options releasing exactly `p` components that
    keep the rank `r` at every sample (a rank lost on the way is never regained, so a
    branch is cut as soon as it loses rank)."""
    names = [n for n in rows.model.element_names if cands.get(n)]
    found, checks = [], [0]

    def blocks(chosen):
        picked = dict(chosen)
        return [rows.of(n, picked.get(n)) for n in rows.model.element_names]

    def go(start, left, chosen):
        for i in range(start, len(names)):
            for opt in cands[names[i]]:
                if len(opt.released) > left or checks[0] >= MAX_CHECKS or len(found) >= limit:
                    continue
                trial = chosen + [(names[i], opt)]
                checks[0] += 1
                if _rank(blocks(trial), rows.regular) < r:
                    continue
                if left == len(opt.released):
                    found.append(trial)
                else:
                    go(i + 1, left - len(opt.released), trial)

    go(0, p, [])
    return found


def _decisions_at(model: Model, rows: "_Rows", q, t, method) -> tuple[int, dict]:
    """`(rank, {element: unique})` at `q`: by `method` through `jmbs.solvability` when one
    is named, else from the equilibrated `C` already computed (the null-space criterion
    `C_X^T N_X = 0` on the scaled matrix, whose left null space is the scaled one's)."""
    if method is not None:
        rep = solvability(model, q, t, method=method)
        return rep.rank, {name: rep.is_unique(name) for name in model.element_names}
    C = np.concatenate([rows.base[k][0] for k in model.element_names], axis=0)
    norm = np.abs(C).max(axis=1, keepdims=True)
    C = C / np.where(norm > 0, norm, 1.0)
    r = numerical_rank(C)
    N = np.linalg.svd(C)[0][:, r:]
    unique = {name: bool(np.abs(C[model.rows(name)].T @ N[model.rows(name)]).max(initial=0.0)
                         < UNIQUE_TOL) for name in model.element_names}
    return r, unique


def _samples(model: Model, q: np.ndarray, t: float) -> np.ndarray:
    out = [q]
    for seed, (n, step) in enumerate(SAMPLES):
        out += nearby_configurations(model, q, t, samples=n, step=step, seed=seed)
    return np.stack(out)


def _reference(model: Model, q, t) -> dict:
    """The original's state for the reaction check: at `q`, at rest but for the drivers'
    velocities (least squares), `C`, `M`, `F`, `Gamma` and the minimum-norm multipliers;
    every unique reaction is the same for any solution of the equations."""
    C, b, M = (np.asarray(x) for x in _state(model, q, t))
    v = np.linalg.lstsq(C, -b, rcond=None)[0]
    F, g = (np.asarray(x) for x in _loads(model, q, jnp.asarray(v), t))
    return {"v": v, "M": M, "F": F, "C": C, "lam": _multipliers(M, F, C, g)}


def _multipliers(M, F, C, g) -> np.ndarray:
    nv, nc = M.shape[0], C.shape[0]
    K = np.block([[M, C.T], [C, np.zeros((nc, nc))]])
    return np.linalg.lstsq(K, np.concatenate([F, g]), rcond=None)[0][nv:]


def _verify(model: Model, release: Release, rows: _Rows, r: int, unique: dict, ref) -> dict | None:
    """The checks of `Release.checks` on `release.apply(model)`, or None if one fails."""
    new = release.apply(model)
    C, g, residual = _terms(new, jnp.asarray(rows.qs), jnp.asarray(ref["v"]), rows.t)
    C = np.asarray(C)
    Cu = C * rows.unit  # the same bodies: the original's units
    norm = np.abs(Cu).max(axis=2, keepdims=True)
    ranks = np.array([numerical_rank(X) for X in Cu / np.where(norm > 0, norm, 1.0)])[rows.regular]
    closed = float(np.abs(np.asarray(residual)).max(initial=0.0))
    if new.nc != r or min(ranks) != r or new.nv - r != model.nv - r or closed > 1e-8:
        return None
    # Same bodies and loads (an actuator made of a driver carries 0 by default): M and F
    # are the original's.
    C0, lam0, C1 = ref["C"], ref["lam"], C[0]
    lam1 = _multipliers(ref["M"], ref["F"], C1, np.asarray(g))
    scale = max(float(np.abs(C0.T @ lam0).max(initial=0.0)), 1e-12)
    worst = 0.0
    for name, is_unique in unique.items():
        if not is_unique or name not in new.element_names:
            continue
        a, b = model.rows(name), new.rows(name)
        diff = C0[a].T @ lam0[a] - C1[b].T @ lam1[b]
        worst = max(worst, float(np.abs(diff).max(initial=0.0)) / scale)
    if worst > REACTION_RTOL:
        return None
    return {"redundancy": 0, "dof": model.nv - r, "rank_samples": int(rows.regular.sum()),
            "reaction_difference": worst}


@compiles
def advise(model: Model, q=None, *, method=None, n: int = 5, t: float = 0.0) -> Advice:
    """Releases that make an overconstrained mechanism statically determinate, best first.

    A release is a set of exactly `p` reaction components (of joints, drivers or
    Pfaffian constraints) whose removal keeps the rank of `C` at several assembled
    configurations along the motion, given as element substitutions from the element
    table (a revolute without its two bending moments becomes a spherical joint;
    without one, a universal joint; without its axial force, a cylindrical joint; a
    planar revolute without the force along a line, a pin in a slot along it; a driver
    of an overactuated mechanism, a force actuator; a knife edge released whole, a
    caster; where no joint of the table keeps the rows left, a general joint keeping
    them). The motion is the same, every remaining reaction is unique, and the
    reactions that were unique keep their values: the advisor checks each of them on
    the model `Release.apply` builds before returning it (`Release.checks`).

    **Arguments:**
    - `model`: the model.
    - `q`: the configuration (default `model.q0`); if it is singular the releases are
      decided at the mechanism's generic rank (`Advice.generic`, and said in
      `Advice.message`).
    - `method`: the solvability method of the decisions at `q` (as in
      `jmbs.solvability`); default: the null-space criterion on the equilibrated
      `C` that the advisor already computed.
    - `n`: how many releases at most.
    - `t`: time (drivers).

    **Returns:** an `Advice`, a list of `jmbs.Release` (empty, with a `message`
    saying so, when the mechanism is already statically determinate).

    **Raises:** `ValueError` for a model without constraints, a bad `q` or `n`.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"jmbs.advise: n must be a positive integer (how many releases), got {n!r}")
    q = as_configuration(model, model.q0 if q is None else q)
    if q.ndim != 1 or model.nc == 0:
        raise ValueError("jmbs.advise takes one configuration (nq,) of a model with constraints")
    t = as_time(t)
    rows = _Rows(model, _samples(model, q, t), t)
    rank_q, unique = _decisions_at(model, rows, q, t, method)
    base = _ranks([rows.base[k] for k in model.element_names])
    r = max(rank_q, int(base.max()))
    rows.regular = base == r
    p, generic = model.nc - r, rank_q < r
    at = (f"q is a singular configuration (rank {rank_q} there, generic rank {r}): the "
          "releases were decided at the generic rank. " if generic else "")
    if p == 0:
        return Advice([], at + f"p = 0: the mechanism is statically determinate (rank {r} = "
                      f"{model.nc} constraints); every reaction is unique, nothing to release.", 0, generic)
    points = _joint_points(model)
    driven = {s.joint for s in model.element_specs if isinstance(s, DriverSpec)}
    forced = {f.joint for f in model.force_specs if f.joint is not None}
    cands = {}
    for name in model.element_names:
        opts = options(model, name, points, driven, forced)
        cands[name] = sorted(opts, key=lambda o: (-len(o.released), _cost([(name, o)], points)[0]))
    # Joints of the table first; general joints only to fill up where those are too few.
    limit = max(4 * n, 24)
    table = {k: [o for o in v if o.substitution.kind != "general"] for k, v in cands.items()}
    found = _search(rows, table, r, p, limit)
    if len(found) < limit:
        found += [ch for ch in _search(rows, cands, r, p, limit)
                  if any(o.substitution.kind == "general" for _, o in ch)][:limit - len(found)]
    ranked = sorted(found, key=lambda ch: _cost(ch, points)[0])
    ref = _reference(model, jnp.asarray(q), t)
    out = []
    for chosen in ranked:
        cost, terms = _cost(chosen, points)
        comps = tuple(f"{name}.{c}" for name, o in chosen for c in o.released)
        release = Release(comps, {name: o.substitution for name, o in chosen}, cost, terms,
                          generic=generic)
        checks = _verify(model, release, rows, r, unique, ref)
        if checks is not None:
            release.checks = checks
            out.append(release)
        if len(out) == n:
            break
    said = (f"p = {p}: {len(out)} release(s) of exactly {p} component(s), each keeping the rank "
            f"{r} at {int(rows.regular.sum())} configurations along the motion and checked on the "
            "applied model.")
    if not out:
        said = (f"p = {p}: no substitution from the element table (nor a general joint) releases "
                f"exactly {p} components without changing the motion; release them by hand (a user "
                "constraint, jmbs.ModelBuilder.add_constraint, keeps the rows you choose).")
    return Advice(out, at + said, p, generic)



