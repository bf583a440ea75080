"""The model (`model.py`), its builder (`builder.py`) and the builder's input checks
(`validate.py`).

Importing this package loads the model layer only: `_assembly` and the
analyses import `Model` from here, and the builder imports them in turn, so
the builder is imported from `jmbs._model.builder`.
"""

from .model import GROUND as GROUND
from .model import Body as Body
from .model import BodySpec as BodySpec
from .model import ElementInfo as ElementInfo
from .model import Model as Model

