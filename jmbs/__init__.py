"""jmbs: rigid multibody systems with redundant constraints, in JAX.

Importing jmbs turns on 64-bit floats in JAX (`jax_enable_x64`; see
`jmbs/_config.py` for why); it sets no environment variable and no other
JAX option.
"""

from importlib import metadata as _metadata

from . import _config as _config
from . import examples as examples
from . import rotations as rotations
from ._assembly import constraint_matrix as constraint_matrix
from ._assembly import constraint_terms as constraint_terms
from ._assembly import gamma as gamma
from ._assembly import generalized_forces as generalized_forces
from ._assembly import inverse_mass_matrix as inverse_mass_matrix
from ._assembly import kinematic_matrix as kinematic_matrix
from ._assembly import mass_matrix as mass_matrix
from ._assembly import phi as phi
from ._assembly import potential_energy as potential_energy
from ._assembly import qdot as qdot
from ._assembly import velocity_residual as velocity_residual
from ._assembly import velocity_rhs as velocity_rhs
from ._batch import batch_map as batch_map
from ._config import enable_compilation_cache as enable_compilation_cache
from ._expression import Expression as Expression
from ._forces.registry import FORCE_TYPES as FORCE_TYPES
from ._forces.registry import ForceType as ForceType
from ._formulations.augmented_lagrangian import AugmentedLagrangian as AugmentedLagrangian
from ._formulations.base import AbstractFormulation as AbstractFormulation
from ._formulations.base import DynamicsTerms as DynamicsTerms
from ._formulations.base import FormulationState as FormulationState
from ._formulations.base import Prepared as Prepared
from ._formulations.base import dynamics_terms as dynamics_terms
from ._formulations.divide_and_conquer import DivideAndConquer as DivideAndConquer
from ._formulations.elimination import Elimination as Elimination
from ._formulations.null_space import NullSpaceProjection as NullSpaceProjection
from ._formulations.penalty import Penalty as Penalty
from ._formulations.pseudoinverse import Pseudoinverse as Pseudoinverse
from ._formulations.registry import FORMULATIONS as FORMULATIONS
from ._formulations.registry import default_formulation as default_formulation
from ._joints.registry import ELEMENT_TYPES as ELEMENT_TYPES
from ._joints.registry import ElementType as ElementType
from ._kinematics import AssemblyResult as AssemblyResult
from ._kinematics import KinematicsSolution as KinematicsSolution
from ._kinematics import assemble as assemble
from ._kinematics import consistent_velocity as consistent_velocity
from ._kinematics import kinematics as kinematics
from ._kinematics import retract as retract
from ._kinematics import sample_configurations as sample_configurations
from ._kinetostatics import kinetostatic_matrix as kinetostatic_matrix
from ._linalg import STRUCTURED_MIN_NV as STRUCTURED_MIN_NV
from ._model import Body as Body
from ._model import ElementInfo as ElementInfo
from ._model import Model as Model
from ._model.builder import ModelBuilder as ModelBuilder
from ._outputs import joint_coordinate_names as joint_coordinate_names
from ._outputs import joint_coordinates as joint_coordinates
from ._outputs import point_trajectory as point_trajectory
from ._reactions import Reactions as Reactions
from ._reactions import StateResult as StateResult
from ._reactions import StaticResult as StaticResult
from ._reactions import reactions as reactions
from ._reactions import statics as statics
from ._simulate import RESULTS as RESULTS
from ._simulate import Solution as Solution
from ._simulate import energy as energy
from ._simulate import simulate as simulate
from ._solvability.analysis import component_names as component_names
from ._solvability.analysis import element_sets as element_sets
from ._solvability.analysis import solvability_decisions as solvability_decisions
from ._solvability.assembly_tree import AssemblyStep as AssemblyStep
from ._solvability.base import AbstractSolvabilityMethod as AbstractSolvabilityMethod
from ._solvability.base import Decisions as Decisions
from ._solvability.dca import DCA as DCA
from ._solvability.equilibrate import equilibrate as equilibrate
from ._solvability.kinetostatic import Kinetostatic as Kinetostatic
from ._solvability.nullspace import NullSpace as NullSpace
from ._solvability.qr import QR as QR
from ._solvability.rank import RankComparison as RankComparison
from ._solvability.registry import METHODS as SOLVABILITY_METHODS  # noqa: F401 (public name)
from ._solvability.report import SolvabilityReport as SolvabilityReport
from ._solvability.report import dca_assembly as dca_assembly
from ._solvability.report import solvability as solvability
from ._solvability.svd import SVD as SVD
from ._solvability.sweep import DriverPath as DriverPath
from ._solvability.sweep import PathEvent as PathEvent
from ._solvability.sweep import SolvabilityPath as SolvabilityPath
from ._solvability.sweep import SolvabilitySweep as SolvabilitySweep
from ._solvability.sweep import driver_path as driver_path
from ._solvability.sweep import redundant_drivers as redundant_drivers
from ._solvability.sweep import solvability_path as solvability_path
from ._solvability.sweep import solvability_sweep as solvability_sweep
from ._solvability.sweep import time_path as time_path
from ._stabilization.base import AbstractStabilization as AbstractStabilization
from ._stabilization.baumgarte import Baumgarte as Baumgarte
from ._stabilization.projection import Projection as Projection
from ._stabilization.registry import STABILIZATIONS as STABILIZATIONS
from ._threads import fair_share as fair_share
from .io import ModelFileError as ModelFileError
from .io import bundled_models as bundled_models
from .io import load as load
from .io import save as save
from .io.mjcf import MJCFWarning as MJCFWarning
from .io.mjcf import from_mjcf as from_mjcf
from .io.mjcf import mjcf_equality_force as mjcf_equality_force
from .io.mjcf import mjcf_state as mjcf_state

try:
    __version__ = _metadata.version("jmbs")
except _metadata.PackageNotFoundError:  # a source tree that is not installed
    __version__ = "unknown"

__all__ = [name for name in dir() if not name.startswith("_")]
