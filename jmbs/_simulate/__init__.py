"""`jmbs.simulate`: entry point (`simulate.py`), traced integration (`integrate.py`),
result type and codes (`solution.py`)."""

from .integrate import energy as energy
from .simulate import simulate as simulate
from .solution import RESULTS as RESULTS
from .solution import Solution as Solution
