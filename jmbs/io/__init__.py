"""Model files (host-side only): `jmbs.load`, `jmbs.save`, the bundled models.

PROVISIONAL STUB (being replaced by the real YAML reader/writer): `load(name)`
builds a bundled mechanism by name; paths are not read yet.
"""

from pathlib import Path


class ModelFileError(ValueError):
    """A model file that cannot be read: the message names the file, the line or
    field, and what is expected (one line)."""


def bundled_models() -> tuple[str, ...]:
    """Names of the mechanisms shipped with jmbs (`jmbs.load(name)`)."""
    from .. import examples

    return tuple(examples.ALL)


def load(source: "str | Path"):
    """A `Model` from a bundled mechanism's name or a model file's path."""
    from .. import examples

    if str(source) in examples.ALL:
        return examples.ALL[str(source)]()
    raise ModelFileError(f"{source}: reading model files is not implemented yet")


def save(model, path: "str | Path") -> Path:
    """Write `model` to a YAML model file."""
    raise NotImplementedError
