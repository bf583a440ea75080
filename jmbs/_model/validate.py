"""Host-side checks of the values a user gives the builder; each raises a `ValueError`
that names the element (`where`) and says what is expected."""

import difflib
from collections.abc import Sequence

import jax.numpy as jnp
import numpy as np


def unknown(what: str, name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(name), list(known), n=3)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else (
        f"; known: {', '.join(map(repr, known[:20]))}" if known else "")
    return f"unknown {what} {name!r}{hint}"



def check_callable(fn, what: str, where: str) -> None:
    if not callable(fn):
        raise ValueError(f"{where}: {what} must be a function, got {type(fn).__name__}")


def numbers(value, what: str, where: str, expected: str = "numbers") -> np.ndarray:
    """`value` as a float array. Text and booleans are refused, not converted: NumPy
    reads `"1.0"` as a number and `True` as 1, and either is a mistake worth naming."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.dtype.kind not in "iuf":
        raise ValueError(f"{where}: {what} must be {expected}, got {value!r}")
    return arr.astype(float)


def scalar(value, what: str, where: str) -> float:
    arr = numbers(value, what, where, "a number")
    if arr.shape not in ((), (1,)):
        raise ValueError(f"{where}: {what} must be a number, got {value!r}")
    x = float(arr.reshape(()))
    if not np.isfinite(x):
        raise ValueError(f"{where}: {what} must be finite, got {value!r}")
    return x


def vector(value, n: int, what: str, where: str) -> np.ndarray:
    arr = numbers(value, what, where, f"{n} numbers")
    if arr.shape != (n,):
        raise ValueError(f"{where}: {what} must be {n} numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{where}: {what} contains NaN or infinity: {value!r}")
    return arr


def inertia(value, dim: int, where: str) -> np.ndarray:
    if dim == 2:
        J = scalar(value, "inertia", where)
        if J <= 0:
            raise ValueError(f"{where}: inertia must be positive, got {J}")
        return np.asarray(J)
    arr = numbers(value, "inertia", where, "3 principal moments or a 3x3 tensor")
    if arr.shape not in ((3,), (3, 3)) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{where}: inertia must be 3 finite principal moments or a finite "
                         f"3x3 tensor, got {value!r}")
    J = np.diag(arr) if arr.shape == (3,) else arr
    if not np.allclose(J, J.T, rtol=1e-10, atol=1e-12 * np.abs(J).max()):
        raise ValueError(f"{where}: inertia tensor must be symmetric")
    moments = np.linalg.eigvalsh(J)
    if moments.min() <= 0:
        raise ValueError(f"{where}: inertia must be positive definite, eigenvalues {moments}")
    if np.any(moments > moments.sum() - moments + 1e-9 * moments.max()):
        raise ValueError(f"{where}: inertia with principal moments {moments} violates the triangle "
                         "inequality (no rigid body has a moment larger than the sum of the other two); "
                         "check the values and their order")
    return arr


def rotation_matrix(value, where: str) -> np.ndarray:
    R = numbers(value, "rotation", where, "a 3x3 matrix")
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ValueError(f"{where}: rotation must be a finite 3x3 matrix")
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ValueError(f"{where}: rotation must be orthonormal with determinant +1")
    return R


def check_motion(motion, params: dict | None, where: str) -> None:
    """A driver's motion must be a function returning one finite number at `t = 0`."""
    check_callable(motion, "motion", where)
    try:
        out = motion(0.0, {k: jnp.asarray(v) for k, v in params.items()}) if params \
            else motion(0.0)
    except Exception as e:  # noqa: BLE001 - report any failure of user code
        raise ValueError(f"{where}: motion(t) failed at t = 0: {e}") from e
    if np.shape(out) not in ((), (1,)):
        raise ValueError(f"{where}: motion(t) must return a scalar, got shape {np.shape(out)}")
    if not np.all(np.isfinite(np.asarray(out, dtype=float))):
        raise ValueError(f"{where}: motion(t) is not finite at t = 0 (got {float(np.ravel(out)[0])}); "
                         "give a motion defined at t = 0")
