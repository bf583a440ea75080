"""Model files (host-side only): `jmbs.load`, `jmbs.save`, the bundled models.

The format (YAML, or TOML for `.toml` files: the same fields; SI units) is defined by
`jmbs.io.schema` and described in docs/model-files.md.
"""

from .files import ModelFileError as ModelFileError
from .files import bundled_models as bundled_models
from .files import dumps as dumps
from .files import load as load
from .files import save as save
