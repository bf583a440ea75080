"""What users need rarely: the building blocks under the public functions, for those who
write their own formulation, solvability method or analysis (as lineax's
`lineax.internal`). Stable enough to use, but not part of `jmbs`'s own namespace.

- `DynamicsTerms`, `dynamics_terms`: everything a formulation reads at one state, in one
  of two forms behind one interface: `DenseTerms` (the matrices) or `BlockTerms` (`C`'s
  nonzero blocks and the bodies' mass matrices, for the assembly-tree solvers).
- `AbstractFormulationState` (old name `FormulationState`) and each formulation's own
  state type (`RankState`, `EliminationState`, `PseudoinverseState`, `PenaltyState`,
  `DivideAndConquerState`): what its `init` decided (`rigid`, `rank`, and its own).
- `STRUCTURED_MIN_NV`: from this many velocity coordinates on, the structured
  (O(n) tree) methods are the default.
- `AssemblyStep`: one step of the divide-and-conquer assembly (`jmbs.dca_assembly`);
  `HUB_DEGREE`, `HUB_SHARE`: a body joined to `HUB_DEGREE` others or more is split by the
  assembly tree's plan into welded copies, each joined to `HUB_SHARE` of them.
- `equilibrate`: the unit-free scaling of `C` every rank decision starts from.
- `small_svd`: the batched SVD of small matrices (closed form for one or two rows);
  `jacobi_svd`: by one-sided Jacobi, element-wise over the batch (the DCA's on an accelerator)
  used by the divide-and-conquer passes.
- `sweep_defaults`: the method and batch size `jmbs.solvability_sweep` picks on a backend.
- `sample_walk`, `sample_walks`: one random walk of `jmbs.sample_configurations`, and
  the vmapped, jitted batch of them.
- `constraint_blocks`, `inverse_body_mass`, `weighted_gram`, `blocks_matvec`,
  `blocks_rmatvec`, `gram_pattern`: `C` as its nonzero blocks and the products a
  fixed-step solver needs from them (`C W C^T`, `C v`, `C^T lambda`) without a dense
  `C`; `band_plan`, `block_tridiagonal_solve`: a bandwidth-reducing order of a sparse
  symmetric matrix and the block Cholesky solve in it (`jmbs.RegularizedEuler`'s solve
  for long chains).
- `host_or_compiled`, `HOST_USES`: a function of concrete arrays that runs once,
  evaluated from its jaxpr with NumPy instead of compiled (how `build()` derives a model
  and `simulate` checks its initial state and reports its saved states); compiled where
  the evaluator lacks an operation, where compiling is estimated cheaper than one
  evaluation, and once a structure's evaluations have cost what its compilation would
  (or `HOST_USES` calls). `with host_evaluation(False):` compiles them all (timings of
  the compiled programs, a check against XLA).
- `constraint_rank`, `rank_decision`, `RankDecision`, `numerical_rank`, `RANK_RTOL`,
  `CRITERION_TOL`, `MARGINAL_DECADES`: the one rank rule (see `docs/architecture.md`).
"""

from ._assembly import blocks_matvec as blocks_matvec
from ._assembly import blocks_rmatvec as blocks_rmatvec
from ._assembly import constraint_blocks as constraint_blocks
from ._assembly import gram_pattern as gram_pattern
from ._assembly import inverse_body_mass as inverse_body_mass
from ._assembly import weighted_gram as weighted_gram
from ._formulations.base import AbstractFormulationState as AbstractFormulationState
from ._formulations.base import FormulationState as FormulationState
from ._formulations.base import RankState as RankState
from ._formulations.divide_and_conquer import DivideAndConquerState as DivideAndConquerState
from ._formulations.elimination import EliminationState as EliminationState
from ._formulations.penalty import PenaltyState as PenaltyState
from ._formulations.pseudoinverse import PseudoinverseState as PseudoinverseState
from ._host_eval import HOST_USES as HOST_USES
from ._host_eval import host_evaluation as host_evaluation
from ._host_eval import host_or_compiled as host_or_compiled
from ._kinematics.sampling import walk as sample_walk
from ._kinematics.sampling import walks_jit as sample_walks
from ._linalg import CRITERION_TOL as CRITERION_TOL
from ._linalg import MARGINAL_DECADES as MARGINAL_DECADES
from ._linalg import RANK_RTOL as RANK_RTOL
from ._linalg import STRUCTURED_MIN_NV as STRUCTURED_MIN_NV
from ._linalg import RankDecision as RankDecision
from ._linalg import band_plan as band_plan
from ._linalg import block_tridiagonal_solve as block_tridiagonal_solve
from ._linalg import jacobi_svd as jacobi_svd
from ._linalg import numerical_rank as numerical_rank
from ._linalg import rank_decision as rank_decision
from ._linalg import small_svd as small_svd
from ._rank import constraint_rank as constraint_rank
from ._rank import equilibrate as equilibrate
from ._solvability.sweep import sweep_defaults as sweep_defaults
from ._terms import BlockTerms as BlockTerms
from ._terms import DenseTerms as DenseTerms
from ._terms import DynamicsTerms as DynamicsTerms
from ._terms import dynamics_terms as dynamics_terms
from ._tree.plan import HUB_DEGREE as HUB_DEGREE
from ._tree.plan import HUB_SHARE as HUB_SHARE
from ._tree.plan import AssemblyStep as AssemblyStep

__all__ = ["AbstractFormulationState", "AssemblyStep", "band_plan", "block_tridiagonal_solve",
           "blocks_matvec", "blocks_rmatvec", "BlockTerms", "constraint_blocks", "constraint_rank",
           "CRITERION_TOL", "gram_pattern", "inverse_body_mass", "weighted_gram",
           "DenseTerms", "DivideAndConquerState", "dynamics_terms", "DynamicsTerms", "EliminationState",
           "equilibrate", "FormulationState", "HOST_USES", "host_evaluation", "host_or_compiled",
           "HUB_DEGREE", "HUB_SHARE", "MARGINAL_DECADES", "numerical_rank", "PenaltyState",
           "PseudoinverseState", "rank_decision", "RANK_RTOL", "RankDecision", "RankState", "sample_walk",
           "sample_walks", "small_svd", "jacobi_svd", "STRUCTURED_MIN_NV", "sweep_defaults"]
