"""jmbs: rigid multibody systems with redundant constraints, in JAX.

Importing jmbs turns on 64-bit floats in JAX (`jax_enable_x64`; see
`jmbs/_config.py` for why); it sets no environment variable and no other
JAX option.
"""

from importlib import metadata as _metadata

from . import _gc

_gc.defer()  # restored below, once imported (jmbs/_gc.py: import jmbs about 6 % shorter)

from . import _config as _config
from . import internal as internal
from . import rotations as rotations
from ._advise.catalog import Substitution as Substitution
from ._advise.release import Release as Release
from ._advise.search import Advice as Advice
from ._advise.search import advise as advise
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
from ._bodies import retract as retract
from ._builder.builder import ModelBuilder as ModelBuilder
from ._config import enable_compilation_cache as enable_compilation_cache
from ._expression import Expression as Expression
from ._forces.registry import FORCE_TYPES as FORCE_TYPES
from ._forces.registry import ForceType as ForceType
from ._formulations.augmented_lagrangian import AugmentedLagrangian as AugmentedLagrangian
from ._formulations.base import AbstractFormulation as AbstractFormulation
from ._formulations.base import Prepared as Prepared
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
from ._kinematics import Samples as Samples
from ._kinematics import assemble as assemble
from ._kinematics import consistent_velocity as consistent_velocity
from ._kinematics import kinematics as kinematics
from ._kinematics import sample_configurations as sample_configurations
from ._kinetostatics import kinetostatic_matrix as kinetostatic_matrix
from ._model import Body as Body
from ._model import ElementInfo as ElementInfo
from ._model import Model as Model
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
from ._solvability.base import AbstractSolvabilityMethod as AbstractSolvabilityMethod
from ._solvability.base import Decisions as Decisions
from ._solvability.dca import DCA as DCA
from ._solvability.kinetostatic import Kinetostatic as Kinetostatic
from ._solvability.nullspace import NullSpace as NullSpace
from ._solvability.qr import QR as QR
from ._solvability.rank import RankComparison as RankComparison
from ._solvability.registry import METHODS as SOLVABILITY_METHODS
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
from ._stepper.regularized_euler import RegularizedEuler as RegularizedEuler
from ._stepper.regularized_euler import StepState as StepState
from ._stepper.regularized_euler import step as step
from ._threads import fair_share as fair_share
from .io import ModelFileError as ModelFileError
from .io import bundled_models as bundled_models
from .io import load as load
from .io import save as save
from .io.mjcf import MJCFWarning as MJCFWarning
from .io.mjcf import from_mjcf as from_mjcf
from .io.mjcf import from_urdf as from_urdf
from .io.mjcf import mjcf_equality_force as mjcf_equality_force
from .io.mjcf import mjcf_state as mjcf_state

try:
    __version__ = _metadata.version("jmbs")
except _metadata.PackageNotFoundError:  # a source tree that is not installed
    __version__ = "unknown"
_gc.restore()

# Names that moved to `jmbs.internal` (issue 30) keep working here; `jmbs.examples` is
# loaded on first use (it builds nothing at import, but it is 1,000 lines to read).
_MOVED = ("AssemblyStep", "DynamicsTerms", "FormulationState", "STRUCTURED_MIN_NV", "dynamics_terms",
          "equilibrate")


def __getattr__(name: str):
    if name in _MOVED:
        return getattr(internal, name)
    if name == "examples":
        import importlib

        return importlib.import_module(".examples", __name__)
    raise AttributeError(f"module 'jmbs' has no attribute {name!r}")


__all__ = [
    "AbstractFormulation", "AbstractSolvabilityMethod", "AbstractStabilization", "Advice",
    "AssemblyResult", "AugmentedLagrangian", "Baumgarte", "Body", "DCA", "Decisions",
    "DivideAndConquer", "DriverPath", "ELEMENT_TYPES", "ElementInfo", "ElementType", "Elimination",
    "Expression", "FORCE_TYPES", "FORMULATIONS", "ForceType", "KinematicsSolution", "Kinetostatic",
    "MJCFWarning", "Model", "ModelBuilder", "ModelFileError", "NullSpace", "NullSpaceProjection",
    "PathEvent", "Penalty", "Prepared", "Projection", "Pseudoinverse", "QR", "RESULTS",
    "RankComparison", "Reactions", "RegularizedEuler", "Release", "SOLVABILITY_METHODS",
    "STABILIZATIONS", "SVD", "Samples", "Solution", "SolvabilityPath", "SolvabilityReport",
    "SolvabilitySweep",
    "StateResult", "StaticResult", "StepState", "Substitution", "advise", "assemble", "batch_map",
    "bundled_models", "component_names", "consistent_velocity", "constraint_matrix",
    "constraint_terms", "dca_assembly", "default_formulation", "driver_path", "element_sets",
    "enable_compilation_cache", "energy", "examples", "fair_share", "from_mjcf", "from_urdf",
    "gamma",
    "generalized_forces", "internal", "inverse_mass_matrix", "joint_coordinate_names",
    "joint_coordinates", "kinematic_matrix", "kinematics", "kinetostatic_matrix", "load",
    "mass_matrix", "mjcf_equality_force", "mjcf_state", "phi", "point_trajectory",
    "potential_energy", "qdot", "reactions", "redundant_drivers", "retract", "rotations",
    "sample_configurations", "save", "simulate", "solvability", "solvability_decisions",
    "solvability_path", "solvability_sweep", "statics", "step", "time_path", "velocity_residual",
    "velocity_rhs",
]
