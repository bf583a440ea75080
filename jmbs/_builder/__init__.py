"""`ModelBuilder` (`builder.py`) and its force-element methods (`forces.py`): host-side
construction of a `Model`. A front end, like the model files: `build()` derives the
model, then checks the reference configuration (`Phi`) or assembles it (`jmbs.assemble`),
so the builder sits above the analyses, and the model layer below never imports it."""

from .builder import ModelBuilder as ModelBuilder
from .builder import check_closed as check_closed
