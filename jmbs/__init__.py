"""jmbs: rigid multibody systems with redundant constraints, in JAX.

Importing jmbs enables 64-bit floats in JAX (`jax_enable_x64`) and, unless
`JMBS_KEEP_XLA_FLAGS=1` is set or JAX's CPU backend is already running, adds
`--xla_cpu_multi_thread_eigen=false` to `XLA_FLAGS` (jmbs's small matrices
gain nothing from intra-op threads) and sets `PJRT_NPROC` to at least 16
(unless set): with JAX 0.10, batched LAPACK calls (vmapped SVD, QR, eigh)
can deadlock XLA's CPU thread pool when it has as few threads as a small
machine has cores.
"""

import os

_flags = os.environ.get("XLA_FLAGS", "")
if os.environ.get("JMBS_KEEP_XLA_FLAGS") != "1":
    if "xla_cpu_multi_thread_eigen" not in _flags:
        os.environ["XLA_FLAGS"] = (_flags + " --xla_cpu_multi_thread_eigen=false").strip()
    # XLA's CPU thread pool has PJRT_NPROC threads (default: the number of cores).
    # JAX 0.10's batched LAPACK kernels split a large batch into pieces for that pool
    # and wait for them; when every pool thread is such a waiter, nothing runs the
    # pieces and the program hangs (seen with 2 cores, and with more CPU devices than
    # cores). Spare threads that are idle otherwise prevent it.
    os.environ.setdefault("PJRT_NPROC", str(max(16, os.cpu_count() or 1)))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)  # noqa: E402

from . import examples as examples  # noqa: E402
from ._assembly import constraint_matrix as constraint_matrix  # noqa: E402
from ._assembly import constraint_terms as constraint_terms  # noqa: E402
from ._assembly import gamma as gamma  # noqa: E402
from ._assembly import generalized_forces as generalized_forces  # noqa: E402
from ._assembly import inverse_mass_matrix as inverse_mass_matrix  # noqa: E402
from ._assembly import kinematic_matrix as kinematic_matrix  # noqa: E402
from ._assembly import mass_matrix as mass_matrix  # noqa: E402
from ._assembly import phi as phi  # noqa: E402
from ._assembly import qdot as qdot  # noqa: E402
from ._assembly import velocity_residual as velocity_residual  # noqa: E402
from ._assembly import velocity_rhs as velocity_rhs  # noqa: E402
from ._batch import batch_map as batch_map  # noqa: E402
from ._expression import Expression as Expression  # noqa: E402
from ._formulations.augmented_lagrangian import AugmentedLagrangian as AugmentedLagrangian  # noqa: E402
from ._formulations.base import AbstractFormulation as AbstractFormulation  # noqa: E402
from ._formulations.base import DynamicsTerms as DynamicsTerms  # noqa: E402
from ._formulations.base import dynamics_terms as dynamics_terms  # noqa: E402
from ._formulations.elimination import Elimination as Elimination  # noqa: E402
from ._formulations.null_space import NullSpaceProjection as NullSpaceProjection  # noqa: E402
from ._formulations.penalty import Penalty as Penalty  # noqa: E402
from ._formulations.pseudoinverse import Pseudoinverse as Pseudoinverse  # noqa: E402
from ._kinematics import AssemblyResult as AssemblyResult  # noqa: E402
from ._kinematics import KinematicsSolution as KinematicsSolution  # noqa: E402
from ._kinematics import assemble as assemble  # noqa: E402
from ._kinematics import consistent_velocity as consistent_velocity  # noqa: E402
from ._kinematics import kinematics as kinematics  # noqa: E402
from ._kinematics import retract as retract  # noqa: E402
from ._kinematics import sample_configurations as sample_configurations  # noqa: E402
from ._kinetostatics import kinetostatic_matrix as kinetostatic_matrix  # noqa: E402
from ._model import Body as Body  # noqa: E402
from ._model import ElementInfo as ElementInfo  # noqa: E402
from ._model import Model as Model  # noqa: E402
from ._model import ModelBuilder as ModelBuilder  # noqa: E402
from ._reactions import Reactions as Reactions  # noqa: E402
from ._reactions import StateResult as StateResult  # noqa: E402
from ._reactions import reactions as reactions  # noqa: E402
from ._simulate import Solution as Solution  # noqa: E402
from ._simulate import energy as energy  # noqa: E402
from ._simulate import simulate as simulate  # noqa: E402
from ._solvability.base import AbstractSolvabilityMethod as AbstractSolvabilityMethod  # noqa: E402
from ._solvability.base import Decisions as Decisions  # noqa: E402
from ._solvability.equilibrate import equilibrate as equilibrate  # noqa: E402
from ._solvability.kinetostatic import Kinetostatic as Kinetostatic  # noqa: E402
from ._solvability.nullspace import NullSpace as NullSpace  # noqa: E402
from ._solvability.qr import QR as QR  # noqa: E402
from ._solvability.rank import RankComparison as RankComparison  # noqa: E402
from ._solvability.report import SolvabilityReport as SolvabilityReport  # noqa: E402
from ._solvability.report import solvability as solvability  # noqa: E402
from ._solvability.svd import SVD as SVD  # noqa: E402
from ._solvability.sweep import PathEvent as PathEvent  # noqa: E402
from ._solvability.sweep import SolvabilityPath as SolvabilityPath  # noqa: E402
from ._solvability.sweep import SolvabilitySweep as SolvabilitySweep  # noqa: E402
from ._solvability.sweep import solvability_path as solvability_path  # noqa: E402
from ._solvability.sweep import solvability_sweep as solvability_sweep  # noqa: E402
from ._stabilization import Baumgarte as Baumgarte  # noqa: E402
from ._stabilization import Projection as Projection  # noqa: E402
from .io import ModelFileError as ModelFileError  # noqa: E402
from .io import bundled_models as bundled_models  # noqa: E402
from .io import load as load  # noqa: E402
from .io import save as save  # noqa: E402

__all__ = [name for name in dir() if not name.startswith("_")]
