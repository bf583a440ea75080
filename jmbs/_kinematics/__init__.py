"""Kinematics, split by job: position assembly (`assemble.py`), consistent velocities and
the consistency of prescribed motions (`velocity.py`), driven kinematics (`driven.py`),
sampled configurations (`sampling.py`) and singular configurations (`singular.py`)."""

from .assemble import CLOSURE_WARNING as CLOSURE_WARNING
from .assemble import AssemblyResult as AssemblyResult
from .assemble import assemble as assemble
from .assemble import assemble_jit as assemble_jit
from .assemble import closure_error as closure_error
from .assemble import free_mask as free_mask
from .assemble import velocity_units as velocity_units
from .assemble import velocity_units_jit as velocity_units_jit
from .assemble import warn_if_unassembled as warn_if_unassembled
from .driven import KinematicsSolution as KinematicsSolution
from .driven import kinematics as kinematics
from .sampling import Samples as Samples
from .sampling import sample_configurations as sample_configurations
from .singular import generic_rank as generic_rank
from .singular import nearby_configurations as nearby_configurations
from .singular import released_rows as released_rows
from .singular import singular_points as singular_points
from .singular import warn_singular as warn_singular
from .velocity import conflict as conflict
from .velocity import consistent_velocity as consistent_velocity
from .velocity import rheonomic_conflict as rheonomic_conflict
