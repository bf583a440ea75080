"""A model's parameters as one flat vector with a static layout (traceable).

The builder's values (`"<name>.<argument>"` -> array) become one vector: the model's
derivation and every element group read it through `ParamVector`, whose `stack` is one
gather for any number of elements. A program that derives a model therefore has a size
that follows the element groups, not the number of bodies and elements (a 1,001-body
chain's derivation: a handful of gathers instead of thousands of inputs and stacks).
"""

import math
from collections.abc import Iterator, Mapping

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

Layout = tuple[tuple[str, tuple[int, ...]], ...]


def layout_of(values: Mapping[str, object]) -> Layout:
    """`((key, shape), ...)` in the mapping's order."""
    return tuple((key, tuple(np.shape(v))) for key, v in values.items())


def flatten(values: Mapping[str, object]) -> Array:
    """The values as one float vector, in the mapping's order: NumPy when every value is
    concrete (no device round trip per value), `jnp` when some are traced."""
    if all(isinstance(v, (np.ndarray, float, int, np.generic)) for v in values.values()):
        return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in values.values()])
    return jnp.concatenate([jnp.ravel(jnp.asarray(v, dtype=float)) for v in values.values()])


class ParamVector(Mapping):
    """`[key]` is one slice of `vector`; `stack(keys)` one gather of equal-shaped values."""

    def __init__(self, vector: Array, layout: Layout):
        # Concrete values are read on the host in NumPy (op by op in JAX, every slice and
        # gather of a new shape would compile a program of its own); traced ones in JAX.
        traced = isinstance(vector, jax.core.Tracer)
        self.vector, self._xp = (vector, jnp) if traced else (np.asarray(vector), np)
        self.layout = layout
        self.offsets: dict[str, tuple[int, tuple[int, ...]]] = {}
        k = 0
        for key, shape in layout:
            self.offsets[key] = (k, shape)
            k += math.prod(shape)

    @classmethod
    def of(cls, values: Mapping[str, object]) -> "ParamVector":
        return values if isinstance(values, ParamVector) else cls(flatten(values), layout_of(values))

    def __getitem__(self, key: str) -> Array:
        k, shape = self.offsets[key]
        return self._xp.reshape(self.vector[k:k + math.prod(shape)], shape)

    def __iter__(self) -> Iterator[str]:
        return iter(self.offsets)

    def __len__(self) -> int:
        return len(self.offsets)

    def __contains__(self, key: object) -> bool:
        return key in self.offsets

    def stack(self, keys: list[str], default: float | None = None, shape: tuple[int, ...] = ()
              ) -> Array:
        """`(len(keys), *shape)`: the values of `keys`, which share one shape; with a
        `default`, keys not in the layout take it (and the values `shape`, broadcast)."""
        xp = self._xp
        present = [key for key in keys if key in self.offsets]
        if default is None:
            shape = self.offsets[keys[0]][1]
        if len(present) < len(keys) and default is None:
            raise KeyError(next(key for key in keys if key not in self.offsets))
        if any(self.offsets[key][1] != shape for key in present):
            return xp.stack([xp.broadcast_to(xp.asarray(self[key], dtype=float), shape)
                             if key in self.offsets else xp.full(shape, default) for key in keys])
        if not present:
            return xp.full((len(keys), *shape), default, dtype=float)
        size = math.prod(shape)
        starts = np.array([self.offsets[key][0] if key in self.offsets else 0 for key in keys])
        out = xp.reshape(self.vector[starts[:, None] + np.arange(size)], (len(keys), *shape))
        if len(present) == len(keys):
            return out
        missing = np.array([key not in self.offsets for key in keys]).reshape((-1,) + (1,) * len(shape))
        return xp.where(missing, default, out)
