"""Host-side checks of integer options (step limits, counts, ranks), shared by the entry
points: a bool, a float or a value below the minimum is refused, naming the option."""

import numpy as np


def check_int(where: str, name: str, value, fix: str, minimum: int = 1) -> int:
    """`int(value)`, or `ValueError` unless `value` is an int of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{where}: {name} must be an int, got {value!r}; {fix}")
    if value < minimum:
        raise ValueError(f"{where}: {name} must be at least {minimum}, got {value}; {fix}")
    return int(value)
