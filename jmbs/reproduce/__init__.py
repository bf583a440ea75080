"""Reproductions of the papers' results (host-side; `import jmbs` does not load this).

- `papers`: the papers' published verdicts, ranks and tables, and
  `kinetostatic_comparison`;
- `sampling`: `random_configurations`, random nonsingular configurations of the
  papers' mechanisms on their own motion branch;
- `demo`: `jmbs demo`, the report that reproduces the papers' central results
  (`import jmbs.reproduce.demo`; it loads matplotlib when it runs).

The experiments under `experiments/` and the paper tests import from here.
"""

from . import papers as papers
from . import sampling as sampling
from .sampling import random_configurations as random_configurations
