"""Divide and conquer: the multipliers by block elimination along the assembly tree, O(n)."""

import functools
from typing import Any, ClassVar

import equinox as eqx
import numpy as np

from .._assembly import body_mass, constraint_blocks
from .._bodies import NV
from .._config import RUN_ONCE
from .._linalg import RANK_RTOL
from .._model import Model
from .._solvability.assembly_tree import make_plan
from .._solvability.dca import _as_tree
from .._tree_solve import factor, solve
from .base import (
    AbstractFormulation,
    DynamicsTerms,
    FormulationState,
    all_rigid,
    as_float,
    require_values,
)


class DivideAndConquer(AbstractFormulation):
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
      of `C M^-1/2` count as zero (decided once by `init`).
    - `tree`: the assembly tree as nested pairs of body names (as `jmbs.DCA`'s);
      default: balanced, by recursive bisection of the body graph.
    """

    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    tree: Any = eqx.field(static=True, default=None, converter=_as_tree)

    dense: ClassVar[bool] = False

    def init(self, model: Model, q, t) -> FormulationState:
        require_values(self, model, q, t)
        mass = np.asarray(body_mass(model))
        for name, Mb in zip(model.body_names, mass):
            if not np.all(np.linalg.eigvalsh(Mb) > 0):
                raise ValueError(
                    f"DivideAndConquer: body {name!r} has no positive definite mass matrix (mass "
                    f"and inertia {np.diag(Mb).tolist()}); the block elimination needs every body's "
                    "inverse inertia: give it a mass and inertia, or use jmbs.NullSpaceProjection()")
        plan = make_plan(model, self.tree)
        ranks = tuple(np.asarray(r) for r in _connection_ranks(model, plan, q, t, self.rtol))
        return FormulationState(all_rigid(model), int(sum(int(r.sum()) for r in ranks)),
                                plan=plan, node_ranks=ranks)

    def solve(self, state: FormulationState, terms: DynamicsTerms):
        plan, nvb = state.plan, NV[state.plan.dim]
        if terms.blocks is None:  # dense terms (`dynamics_terms(dense=True)`): gather the blocks
            cols = np.arange(nvb)
            vals = terms.C[plan.entry_rows[:, None], plan.entry_bodies[:, None] * nvb + cols]
            idx = np.arange(plan.n_bodies)[:, None] * nvb + cols
            mass = terms.M[idx[:, :, None], idx[:, None, :]]
        else:
            vals, mass = terms.blocks[plan.entry_pick], terms.body_mass
        return solve(plan, vals, mass, terms.F, terms.gamma, state.node_ranks, None)


@functools.partial(eqx.filter_jit, compiler_options=RUN_ONCE)  # values required: top level
def _connection_ranks(model: Model, plan, q, t, rtol):
    """The kept singular values of every connection at `(q, t)` (one compiled call)."""
    vals = constraint_blocks(model, q, t)[plan.entry_pick]
    return tuple(st.ranks() for st in factor(plan, vals, body_mass(model), None, rtol).steps)
