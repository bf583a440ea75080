"""The stabilizations by the names the command line uses (`"none"`: no stabilization)."""

from .base import AbstractStabilization
from .baumgarte import Baumgarte
from .projection import Projection

STABILIZATIONS: dict[str, type[AbstractStabilization] | None] = {
    "projection": Projection,
    "baumgarte": Baumgarte,
    "none": None,
}
