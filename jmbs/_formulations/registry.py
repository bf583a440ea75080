"""The formulations by the names the command line and model files use."""

from .augmented_lagrangian import AugmentedLagrangian
from .base import AbstractFormulation
from .elimination import Elimination
from .null_space import NullSpaceProjection
from .penalty import Penalty
from .pseudoinverse import Pseudoinverse

FORMULATIONS: dict[str, type[AbstractFormulation]] = {
    "nullspace": NullSpaceProjection,
    "elimination": Elimination,
    "pseudoinverse": Pseudoinverse,
    "augmented-lagrangian": AugmentedLagrangian,
    "penalty": Penalty,
}
