"""The formulations by the names the command line and model files use."""

from .._model import Model
from .._tree.plan import tree_pays
from .augmented_lagrangian import AugmentedLagrangian
from .base import AbstractFormulation
from .divide_and_conquer import DivideAndConquer
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
    "divide-and-conquer": DivideAndConquer,
}


def default_formulation(model: Model) -> AbstractFormulation:
    """The formulation of `jmbs.simulate` and `jmbs.reactions` when none is given:
    `NullSpaceProjection()`, or from `jmbs.internal.STRUCTURED_MIN_NV` velocity coordinates on
    `DivideAndConquer()` (O(n) instead of a dense SVD of `C`; the same accelerations
    and unique reactions) unless the assembly tree's estimated cost exceeds the dense
    factorization's (`tree_pays`: random loops, whose separators grow with the graph)."""
    return DivideAndConquer() if tree_pays(model) else NullSpaceProjection()
