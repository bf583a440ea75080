"""The model (`model.py`) and the checks of its inputs (`validate.py`). The builder is
a front end above the analyses (`jmbs/_builder/`)."""

from .model import GROUND as GROUND
from .model import Body as Body
from .model import BodySpec as BodySpec
from .model import ElementInfo as ElementInfo
from .model import Model as Model

