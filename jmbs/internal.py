"""Building blocks that jmbs's analyses are made of, exposed so that they can be tested
and reused directly. Not the modelling API: their signatures follow the internal code
that calls them.

- `small_svd`: the batched SVD of small matrices (closed-form for one or two rows)
  used by the divide-and-conquer passes.
"""

from ._linalg import small_svd as small_svd

__all__ = ["small_svd"]
