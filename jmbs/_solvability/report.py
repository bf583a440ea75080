"""`jmbs.solvability`: the uniqueness report for one configuration (host-side)."""

import functools
import json
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._display import html_table
from .._gc import compiles
from .._kinematics import generic_rank, rheonomic_conflict
from .._misc import as_configuration, as_time
from .._model import Model
from .._tree.plan import AssemblyStep, assembly_steps
from .base import MARGINAL_DECADES, AbstractSolvabilityMethod, Decisions
from .dca import DCA
from .registry import default_uniqueness, resolve_method
from .resultant import resultant_decision


def group_set(model: Model, names) -> np.ndarray:
    """Row mask `(nc,)` of a group of elements, with the input checked."""
    if isinstance(names, str):
        names = [names]
    names = list(names)
    if not names:
        raise ValueError("is_unique_group needs at least one element name; got an empty group")
    mask = np.zeros(model.nc, bool)
    for name in names:
        mask[model.rows(name)] = True  # raises for an unknown name, listing the known ones
    return mask


def decisions_at(model: Model, method: AbstractSolvabilityMethod, q, t: float,
                 sets: np.ndarray | None = None) -> Decisions:
    """Host-side: the decisions at one configuration (for `sets`, default one per
    element), as NumPy arrays. `method` is bound to `model`."""
    return method.decisions_at(model, jnp.asarray(q, dtype=float), jnp.asarray(t, dtype=float), sets)


@compiles
def solvability(model: Model, q=None, t: float = 0.0, *,
                method: "str | AbstractSolvabilityMethod | None" = None) -> "SolvabilityReport":
    """Which reactions and driving forces are uniquely determined at one configuration.

    **Arguments:**
    - `model`: the model.
    - `q`: configuration `(nq,)`; default the reference configuration `model.q0`.
      It should satisfy the constraints (see `jmbs.assemble`): the decisions are
      about the mechanism at `q`.
    - `t`: time (drivers).
    - `method`: `"nullspace"`, `"qr"`, `"svd"`, `"rank"`,
      `"kinetostatic"`, `"dca"` (divide and conquer: cost that grows with the
      assembly tree, for large mechanisms), or a method instance (e.g.
      `jmbs.QR(rtol=1e-6)`, `jmbs.DCA(tree=...)`). All agree away from singular
      configurations. Default (`None`): `"nullspace"`, and `"dca"` from
      `jmbs.internal.STRUCTURED_MIN_NV` velocity coordinates on.

    **Returns:** a `SolvabilityReport` (prints as a table; its `repr` is one line).
    `jmbs.solvability_decisions` is the same analysis as a traceable function.

    **Raises:** `ValueError` for an unknown method, a `q` of the wrong shape (a
    batch included) or with NaN, or a `t` that is not one finite number.
    """
    if model.nc == 0:
        raise ValueError("the model has no constraints, so it has no reactions to analyse")
    q_given = q is not None
    q = as_configuration(model, model.q0 if q is None else q)
    if q.ndim != 1:
        raise ValueError(f"q has shape {q.shape}, but jmbs.solvability analyses one configuration "
                         f"of shape ({model.nq},); for a batch use jmbs.solvability_sweep")
    t = as_time(t)
    m = resolve_method(default_uniqueness(model) if method is None else method, model)
    dec = decisions_at(model, m, q, t)
    ref_rank = int(decisions_at(model, m, model.q0, 0.0).rank) if q_given else None
    return SolvabilityReport(model, m, q, t, dec, ref_rank)


def verdict(unique: bool) -> str:
    """`"U"` for a unique reaction (or component), `"N"` for one that is not."""
    return "U" if unique else "N"


class SolvabilityReport:
    """The uniqueness decisions at one configuration (host-side).

    Attributes: `method`, `rank`, `redundancy` (`p`), `dof`, `n_constraints`,
    `rank_margin` (decimal digits of the singular-value gap around the rank
    tolerance), `reference_rank` (rank at `model.q0`, when `q` was given),
    `generic_rank` (the mechanism's rank at almost every configuration near `q`:
    the largest at a few assembled configurations a small step away, drivers
    released, and at the reference), `singular` (the rank is below the generic
    rank: a singular configuration, where the decisions describe the instant, not
    the mechanism), `near_singular` (the rank decision is within
    `MARGINAL_DECADES` of its tolerance), and per element and component the
    decisions, criteria and margins (`decisions`). `generic_rank` and `singular`
    are computed when first read (a small compiled program).
    """

    def __init__(self, model: Model, method: AbstractSolvabilityMethod, q: np.ndarray, t: float,
                 decisions: Decisions, reference_rank: int | None):
        self.model, self._method, self.q, self.t = model, method, q, t
        self.decisions = decisions
        self.method = method.name
        self.rank = int(decisions.rank)
        self.n_constraints = model.nc
        self.redundancy = model.nc - self.rank
        self.dof = model.nv - self.rank
        self.rank_margin = float(decisions.rank_margin)
        self.reference_rank = reference_rank
        self.near_singular = self.rank_margin < MARGINAL_DECADES

    @functools.cached_property
    def generic_rank(self) -> int:
        """The rank of the mechanism at almost every configuration near `q` (see the class)."""
        near = generic_rank(self.model, self.q, self.t, self.rank)
        return max(near, self.reference_rank or 0)

    @functools.cached_property
    def conflict(self) -> str | None:
        """`None`, or which elements' prescribed motions (drivers, user constraints)
        cannot hold together at `(q, t)`, at velocity or acceleration level."""
        return rheonomic_conflict(self.model, self.q, self.t)

    @property
    def singular(self) -> bool:
        """Whether `q` is a singular configuration: its rank is below the generic rank."""
        return self.rank < self.generic_rank

    # ----- queries -----
    def _index(self, name: str) -> int:
        self.model.element(name)  # raises for an unknown name, listing the known ones
        return self.model.element_names.index(name)

    def is_unique(self, name: str) -> bool:
        """Whether the reaction (wrench) of element `name` is unique."""
        return bool(self.decisions.unique[self._index(name)])

    def verdict(self, name: str) -> str:
        """`"U"` if the reaction of element `name` is unique, else `"N"` (the papers' notation)."""
        return verdict(self.is_unique(name))

    def component_verdicts(self, name: str) -> str:
        """The verdicts of element `name`'s reaction components, e.g. `"Fx:U Fy:N"`."""
        return " ".join(f"{c}:{verdict(u)}" for c, u in
                        zip(self.model.element(name).components, self.unique_components(name)))

    def unique_components(self, name: str) -> np.ndarray:
        """Whether each reaction component of element `name` is unique, `(m,)` bool."""
        return np.asarray(self.decisions.component_unique[self.model.rows(name)])

    def margin(self, name: str) -> float:
        """Decimal digits between element `name`'s criterion and its tolerance."""
        return float(self.decisions.margin[self._index(name)])

    def is_unique_group(self, names) -> bool:
        """Whether the resultant reaction of a group of elements is unique (e.g. all
        the joints connecting a platform to the ground)."""
        mask = group_set(self.model, names)
        return bool(decisions_at(self.model, self._method, self.q, self.t, mask[None]).unique[0])

    def is_unique_resultant(self, group, on) -> bool:
        """Whether the resultant wrench that the elements `group` (a name or names) apply
        to the body or bodies `on` (names or handles; `"ground"` for the support) is
        unique: it can be while each element's reaction is not (the ground joints of an
        overconstrained mechanism together carry its load). For one element on its own
        body it is `is_unique`. See `Reactions.resultant` for its value."""
        return self.resultant_margin(group, on)[0]

    def resultant_margin(self, group, on) -> tuple[bool, float, float]:
        """`(unique, criterion, margin)` of the resultant of `group` on `on` (criterion vs
        the method's `ctol`, margin in decimal digits)."""
        return resultant_decision(self.model, self.q, self.t, group, on, self.rank, self._method.ctol)

    def null_space(self) -> np.ndarray:
        """An orthonormal basis `(nc, p)` of the directions in which the unknowns
        (multipliers, or driving forces and reaction components) are not determined:
        `null(C^T)` (of `A` for `"kinetostatic"`) at the report's configuration,
        with the report's rank. Zero columns when the model is not redundant."""
        M = np.asarray(self._method.matrix(self.model, jnp.asarray(self.q), jnp.asarray(self.t)))
        return np.linalg.svd(M)[0][:, self.rank:]

    # ----- export -----
    def to_dict(self) -> dict[str, Any]:
        """Plain Python data (JSON-serialisable)."""
        d = self.decisions
        elements = []
        for k, spec in enumerate(self.model.element_specs):
            info = self.model.element(spec.name)
            rows = self.model.rows(spec.name)
            elements.append({
                "name": spec.name, "type": spec.kind, "bodies": list(info.bodies),
                "unique": bool(d.unique[k]), "criterion": float(d.criterion[k]),
                "margin": float(d.margin[k]),
                **({"rank": int(d.set_rank[k])} if int(d.set_rank[k]) >= 0 else {}),
                "components": {c: {"unique": bool(u), "criterion": float(v)} for c, u, v in
                               zip(spec.components, d.component_unique[rows],
                                   d.component_criterion[rows])},
            })
        return {"method": self.method, "rtol": float(self._method.rtol), "ctol": float(self._method.ctol),
                "t": self.t, "rank": self.rank, "redundancy": self.redundancy, "dof": self.dof,
                "n_constraints": self.n_constraints, "n_velocities": self.model.nv,
                "rank_margin": self.rank_margin, "reference_rank": self.reference_rank,
                "generic_rank": self.generic_rank, "singular": self.singular,
                "conflict": self.conflict, "near_singular": self.near_singular,
                "elements": elements}

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        d = self.decisions
        show_rank = bool((np.asarray(d.set_rank) >= 0).any())
        head = ["element", "type", "bodies", "components", "reaction", "criterion", "margin"]
        head += ["rank"] if show_rank else []
        rows = []
        for k, spec in enumerate(self.model.element_specs):
            info = self.model.element(spec.name)
            comps = self.component_verdicts(spec.name)
            marginal = "?" if d.margin[k] < MARGINAL_DECADES else ""
            row = [spec.name, spec.kind, "-".join(info.bodies), comps,
                   verdict(bool(d.unique[k])) + marginal, f"{d.criterion[k]:.1e}",
                   f"{min(float(d.margin[k]), 99):.1f}"]
            rows.append(row + ([f"{int(d.set_rank[k])}/{info.rows[1] - info.rows[0]}"]
                               if show_rank else []))
        widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
        fmt = "  ".join(f"{{:{w}}}" for w in widths)
        generic = ("generic rank = rank" if not self.singular
                   else f"generic rank = {self.generic_rank}: SINGULAR configuration")
        lines = [f"solvability ({self.method}): nc = {self.n_constraints}, nv = {self.model.nv}, "
                 f"rank = {self.rank}, redundancy p = {self.redundancy}, dof = {self.dof}, "
                 f"rank margin = {min(self.rank_margin, 99):.1f} digits; {generic}",
                 fmt.format(*head), fmt.format(*("-" * w for w in widths))]
        lines += [fmt.format(*r) for r in rows]
        crit = self._method.criterion()
        lines.append("U: unique, N: not unique (depends on how the redundancy is resolved); "
                     f"{crit}; margin in decimal digits, ? below {MARGINAL_DECADES:g}.")
        if self.conflict:
            lines.append(f"WARNING: no motion satisfies the constraints here: {self.conflict}.")
        if self.singular:
            lines.append(f"WARNING: rank {self.rank} is below the mechanism's generic rank "
                         f"{self.generic_rank} (its rank at the configurations around this one): "
                         "this is a singular configuration, not a redundant mechanism; the "
                         f"redundancy is {self.n_constraints - self.generic_rank} elsewhere, and "
                         "the decisions describe this instant only.")
        elif self.near_singular:
            lines.append("WARNING: the rank decision is marginal (singular-value gap "
                         f"{self.rank_margin:.1f} digits from the tolerance): q is close to a "
                         "singular configuration.")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        d = self.decisions
        rows = [[spec.name, spec.kind, "-".join(self.model.element(spec.name).bodies),
                 self.component_verdicts(spec.name), verdict(bool(d.unique[k])),
                 f"{min(float(d.margin[k]), 99):.1f}"]
                for k, spec in enumerate(self.model.element_specs)]
        return html_table(["element", "type", "bodies", "components", "reaction", "margin"], rows,
                          str(self).splitlines()[0])

    def __repr__(self) -> str:
        n_unique = int(np.sum(self.decisions.unique))
        flag = ", singular" if self.singular else ", near-singular" if self.near_singular else ""
        return (f"SolvabilityReport(method={self.method!r}, t={self.t:g}, rank={self.rank}, "
                f"redundancy={self.redundancy}, dof={self.dof}, unique={n_unique}/"
                f"{len(self.model.element_specs)} elements{flag})")


def dca_assembly(model: Model, q=None, t: float = 0.0, method: DCA | None = None) -> list[AssemblyStep]:
    """The binary assembly of paper 001 step by step: for every subassembly its
    connection matrix `G`, its rank and the reaction patterns born there
    (`jmbs.internal.AssemblyStep`, children before parents; the root last).

    **Arguments:**
    - `model`, `q` (default `model.q0`), `t`: the configuration.
    - `method`: a `jmbs.DCA` (its tree and tolerances); default `jmbs.DCA()`.
    """
    m = (method or DCA()).bind(model)
    q = as_configuration(model, model.q0 if q is None else q)
    _, per_level = jax.device_get(_run(m, model, jnp.asarray(q), jnp.asarray(as_time(t))))
    return assembly_steps(model, m.plan, per_level, m.rtol)


@eqx.filter_jit
def _run(method: DCA, model: Model, q, t):
    return method.run(model, q, t)
