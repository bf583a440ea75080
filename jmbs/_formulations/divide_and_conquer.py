"""Divide and conquer: the multipliers by block elimination along the assembly tree, O(n)."""

from typing import Any

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._assembly import constraint_blocks
from .._linalg import RANK_RTOL
from .._misc import RunOnce, as_float
from .._model import Model
from .._solvability.dca import scaled_blocks
from .._terms import DynamicsTerms, dynamics_terms
from .._tree.plan import Plan, as_tree, make_plan
from .._tree.solve import connection_ranks, solve
from .base import AbstractFormulation, AbstractFormulationState, all_rigid, require_values


class DivideAndConquerState(AbstractFormulationState):
    """`DivideAndConquer`'s decisions: the assembly tree's plan and the rank of each of
    its connections (integer arrays, one per height of the tree)."""

    rigid: tuple[bool, ...] = eqx.field(static=True)
    rank: int = eqx.field(static=True)
    plan: Plan = eqx.field(static=True, repr=False)
    node_ranks: tuple


class DivideAndConquer(AbstractFormulation[DivideAndConquerState]):
    """Solve `M v_dot + C^T lambda = F`, `C v_dot = Gamma` by eliminating the
    multipliers subassembly by subassembly along a binary assembly tree (paper 001's
    divide-and-conquer order, with the bodies' inertia): the cost grows with the tree,
    O(n) for chains, trees and ladders of loops, instead of O(n^3) for a dense
    decomposition of `C`, and no dense matrix is formed.

    Each connection of two subassemblies is solved through the SVD of its factor
    (`G = F_J F_J^T`, paper 001 eq. (22)), keeping the leading singular values: as many
    as `init` finds above `rtol` at the initial state (on the constraints) and keeps
    for the run, like `NullSpaceProjection`'s rank. Redundant rows are harmless.

    `v_dot` equals every other formulation's. The multipliers are a particular solution
    (the connections' pseudo-inverses, not the global minimum norm): their unique
    components equal every other formulation's, the others differ (as `Elimination`'s
    do). The dense formulations are faster on small models; `jmbs.simulate` and
    `jmbs.reactions` choose this one by default from `STRUCTURED_MIN_NV` velocity
    coordinates on (`jmbs.default_formulation`).

    **Arguments:**
    - `rtol`: a connection's singular values below `rtol` times the largest row norm
      of the equilibrated `C` count as zero (decided once by `init`, as `jmbs.DCA`
      decides them, so the rank is the uniqueness report's).
    - `tree`: the assembly tree as nested pairs of body names (as `jmbs.DCA`'s);
      default: balanced, by recursive bisection of the body graph.
    """

    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    tree: Any = eqx.field(static=True, default=None, converter=as_tree)


    def init(self, model: Model, q, t) -> DivideAndConquerState:
        require_values(self, model, q, t)
        # In NumPy: `body_mass` run op by op would compile three small programs.
        for name, m, J in zip(model.body_names, np.asarray(model.mass), np.asarray(model.inertia)):
            J = np.atleast_2d(J)
            if not (m > 0 and np.all(np.linalg.eigvalsh(J) > 0)):
                raise ValueError(
                    f"DivideAndConquer: body {name!r} has no positive definite mass matrix (mass "
                    f"and inertia {[float(m)] * model.dim + np.diag(J).tolist()}); the block "
                    "elimination needs every body's inverse inertia: give it a mass and inertia, "
                    "or use jmbs.NullSpaceProjection()")
        plan = make_plan(model, self.tree)
        rank, ranks = _connection_ranks(plan, self.rtol, model, q, t)
        return DivideAndConquerState(all_rigid(model), int(rank),
                                plan=plan, node_ranks=tuple(np.asarray(r) for r in ranks))

    def terms(self, model: Model, q, v, t, *, with_phi: bool = True) -> DynamicsTerms:
        """The structured terms: `C` as its blocks, `M` as the bodies' (no dense matrix)."""
        return dynamics_terms(model, q, v, t, with_phi=with_phi, dense=False)

    def solve(self, state: DivideAndConquerState, terms: DynamicsTerms):
        vals, mass = terms.tree_blocks(state.plan)  # either form of the terms
        return solve(state.plan, vals, mass, terms.F, terms.gamma, state.node_ranks, None)


@RunOnce  # values required: top level
def _connection_ranks(plan: Plan, rtol: float, model: Model, q, t):
    """The rank of every connection at `(q, t)`, by the rank rule on the equilibrated
    blocks of `C`, as `jmbs.DCA` decides it (its scaling, reference and tolerance), so the
    formulation's rank is the uniqueness report's; found by the solve's own factorization
    of those blocks (its heights in scanned segments: a smaller program than the
    analysis's). A connection's rank does not depend on how rows and bodies are scaled,
    so it holds for the mass-weighted blocks that the solve factorizes. Returns `(rank of
    C, per height the connections' ranks)` (the first without the welds of split hubs,
    as the report's)."""
    vals = scaled_blocks(plan, constraint_blocks(model, q, t)[plan.entry_pick],
                         model.characteristic_lengths())
    ranks = connection_ranks(plan, vals, rtol)
    return sum(jnp.sum(r) for r in ranks) - plan.weld_rank, ranks
