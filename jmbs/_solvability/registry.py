"""The solvability methods by name: the one list that `jmbs.solvability`, the sweeps
and the command line read."""

from .._model import Model
from .._tree.plan import tree_pays
from .base import AbstractSolvabilityMethod
from .dca import DCA
from .kinetostatic import Kinetostatic
from .nullspace import NullSpace
from .qr import QR
from .rank import RankComparison
from .svd import SVD

METHODS: dict[str, type[AbstractSolvabilityMethod]] = {
    m.name: m for m in (NullSpace, QR, SVD, RankComparison, Kinetostatic, DCA)}
DEFAULT_METHOD = "nullspace"


def default_uniqueness(model: Model) -> str:
    """The uniqueness method of the dynamics (`jmbs.simulate`, `jmbs.reactions`,
    `jmbs.statics`) when none is given: `DEFAULT_METHOD`, or the divide-and-conquer
    analysis (`"dca"`, O(n), the same decisions) from `jmbs.internal.STRUCTURED_MIN_NV`
    velocity coordinates on unless the tree costs more than the dense method
    (`tree_pays`), as the default formulation."""
    return "dca" if tree_pays(model) else DEFAULT_METHOD


def resolve_method(method: "str | AbstractSolvabilityMethod", model: Model | None = None
                   ) -> AbstractSolvabilityMethod:
    """A method instance from a name in `METHODS` or an instance, bound to `model` when
    given (`AbstractSolvabilityMethod.bind`).

    **Raises:** `ValueError` for an unknown name, listing the known ones.
    """
    if isinstance(method, AbstractSolvabilityMethod):
        return method if model is None else method.bind(model)
    if method not in METHODS:
        raise ValueError(f"unknown solvability method {method!r}; choose one of "
                         f"{', '.join(METHODS)} or pass a method instance such as jmbs.QR(rtol=1e-6)")
    return METHODS[method]() if model is None else METHODS[method]().bind(model)
