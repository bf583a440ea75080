"""Type aliases shared by jmbs's modules (as diffrax's and lineax's `_custom_types.py`)."""

from jaxtyping import Array, ArrayLike, Bool, Float

Scalar = Float[Array, ""] | float
RealScalarLike = Float[ArrayLike, ""] | float
BoolScalarLike = Bool[ArrayLike, ""] | bool
