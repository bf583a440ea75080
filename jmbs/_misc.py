"""Small host-side helpers every layer uses: whether input is traced, the checks of
arguments (one-line `ValueError`s that name what is wrong), converters of
hyper-parameters, and the one error path of the entry points (`fail_if`)."""

import functools
import os
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ._config import RUN_ONCE
from ._host_eval import host_or_compiled, will_evaluate

# A warning names the user's line: the frames in jmbs's own files are skipped, however
# deep inside jmbs the call that warns (an entry point's wrapper, a helper many share).
_PACKAGE_FILES = (os.path.dirname(os.path.abspath(__file__)) + os.sep,)


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn` at the first frame outside jmbs (the user's call)."""
    warnings.warn(message, category, skip_file_prefixes=_PACKAGE_FILES)


def is_traced(*trees) -> bool:
    """Whether any leaf of `trees` is traced (`jax.grad`, `jax.vmap`, `jax.jit` over it)."""
    return any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(trees))


class RunOnce:
    """`fn` jitted twice: called on concrete input, a program of its own compiled with
    `RUN_ONCE` (it evaluates one state once per call: LLVM's optimizations cost more
    compile time than they save); on traced input (`jax.grad`, `jax.vmap`, `jax.jit`
    over the call, where JAX takes no compiler options) the plain one, inlined into the
    caller's program. `top` and `nested` are the two `eqx.filter_jit` wrappers.
    Concrete input is evaluated with NumPy instead of compiling `top` (`host_or_compiled`:
    Python's cost per operation is less than a compilation, up to a budget per
    structure; `on_host` says whether a call would go there)."""

    def __init__(self, fn):
        self.fn = fn
        self.top = eqx.filter_jit(fn, compiler_options=RUN_ONCE)
        self.nested = eqx.filter_jit(fn)
        functools.update_wrapper(self, fn)

    def __call__(self, *args):
        if is_traced(args):
            return self.nested(*args)
        return host_or_compiled(self.fn, self.top, *args)

    def on_host(self, *args) -> bool:
        """Whether a call with arguments shaped as `args` would be evaluated on the host
        (the saved states' program is compiled ahead otherwise)."""
        return not is_traced(args) and will_evaluate(self.fn, *args)


def each_state(fn, *states):
    """`jax.vmap(fn)(*states)` over the states' leading axis (saved states); a single
    state (a final state's gradient) is passed to `fn` as it is and its outputs get the
    axis back. Unbatched, `fn`'s jitted constraint and dynamics terms are the vector
    field's own jaxprs (JAX traces them once), not batched copies, and XLA compiles no
    batched decompositions (docs/benchmarks.md: a gradient of the spatial pendulum's
    final reactions traces and compiles in 4 s less than through `jax.vmap`)."""
    if states[0].shape[0] != 1:
        return jax.vmap(fn)(*states)
    out = fn(*(x[0] for x in states))
    return jax.tree.map(lambda x: x[None] if eqx.is_array(x) else x, out)


def cotangent_shapes(out):
    """The shapes of `out`'s differentiable leaves (None elsewhere): what a custom VJP's
    forward keeps for `filled_cotangents`."""
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype),
                        eqx.filter(out, eqx.is_inexact_array))


def filled_cotangents(g, shapes):
    """A custom VJP's output cotangents `g` with the `None`s (outputs that nothing
    differentiates) replaced by zeros of `shapes` (`cotangent_shapes`): a pullback takes
    arrays."""
    return jax.tree.map(lambda gi, s: gi if gi is not None or s is None else jnp.zeros(s.shape, s.dtype),
                        g, shapes, is_leaf=lambda x: x is None)


def staging() -> bool:
    """Whether the caller runs inside a `jax.jit` trace, where even operations on
    concrete values are staged into the program instead of run. (A constant is enough:
    outside a trace it is made without compiling anything, where an operation on it
    would compile a program of its own.)"""
    return isinstance(jax.numpy.zeros(()), jax.core.Tracer)


def check_finite(where: str, name: str, x, fix: str) -> None:
    """Host-side: `ValueError` where concrete `x` holds NaN or inf (traced values are
    not looked at, so the compiled program is the same)."""
    if not is_traced(x) and not np.all(np.isfinite(np.asarray(x, dtype=float))):
        raise ValueError(f"{where}: {name} contains NaN or inf; {fix}")


def check_positive(where: str, name: str, x, *, zero: bool = False) -> None:
    """Host-side: `ValueError` unless concrete `x` is finite and positive (non-negative
    with `zero=True`); traced values are not looked at."""
    if is_traced(x):
        return
    a = np.asarray(x, dtype=float)
    sign = "non-negative" if zero else "positive"
    got = f"{float(a):g}" if a.ndim == 0 else np.array2string(a)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where}: {name} must be a finite {sign} number, got {got}")
    if np.any(a < 0) or (not zero and np.any(a == 0)):
        raise ValueError(f"{where}: {name} must be {sign}, got {got}")


def as_float(x) -> Array:
    """Converter for hyper-parameters that do not change shapes: an array leaf (NumPy
    for a concrete value, a JAX array or tracer as given), so that `eqx.filter_jit`
    traces it and a new value reuses the compiled program."""
    return jnp.asarray(x, dtype=float) if isinstance(x, jax.Array) else np.asarray(x, dtype=float)


def check_state(where: str, name: str, x, n: int, what: str) -> Array:
    """`x` as a float array, checked on the host: its shape (static, so traced input too)
    and, where concrete, that it is finite. The compiled program does not change."""
    x = jnp.asarray(x, dtype=float)
    if x.shape != (n,):
        raise ValueError(f"{where}: {name} must have shape ({n},), one value per {what}; got "
                         f"shape {x.shape}")
    check_finite(where, name, x, "pass finite values")
    return x


def fail_if(x, failed: Array, message: str, detail=None):
    """The one error path of jmbs's entry points, alike for concrete and traced input:
    `eqx.EquinoxRuntimeError` (a `RuntimeError`) where `failed` holds.

    Concrete `failed` is decided on the host (raising `detail()`'s fuller text when
    given), so the compiled program itself carries no host callback and can be
    stored in JAX's persistent cache; traced `failed` goes through `eqx.error_if`.
    Returns `x`.
    """
    if is_traced(failed):
        return eqx.error_if(x, failed, message)
    if np.any(np.asarray(failed)):
        raise eqx.EquinoxRuntimeError(detail() if detail is not None else message)
    return x


def as_configuration(model, q, what: str = "q") -> np.ndarray:
    """`q` (one configuration or a batch) as a float array of the model's size, finite;
    otherwise a `ValueError` that names `what`.

    Only the array's shape and values: whether `q` satisfies the constraints is
    `check_closed`'s question, not this one's.
    """
    q = np.asarray(q, dtype=float)
    if q.shape[-1:] != (model.nq,):
        raise ValueError(f"{what} has shape {q.shape}, but the model has nq = {model.nq} "
                         f"coordinates; pass configurations of shape (..., {model.nq})")
    bad = ~np.isfinite(q)
    if bad.any():
        idx = np.argwhere(bad)[0]
        raise ValueError(f"{what} contains NaN or inf (first at index {tuple(int(i) for i in idx)}); "
                         "pass finite configurations, e.g. from jmbs.assemble")
    return q


def as_time(t, what: str = "t") -> float:
    """`t` as a finite float; otherwise a `ValueError` that names `what`."""
    t = np.asarray(t, dtype=float)
    if t.shape != ():
        raise ValueError(f"{what} must be one time (a number); got shape {t.shape}")
    if not np.isfinite(t):
        raise ValueError(f"{what} must be finite; got {float(t)}")
    return float(t)


def check_int(where: str, name: str, value, fix: str, minimum: int = 1) -> int:
    """`int(value)`, or `ValueError` unless `value` is an int of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{where}: {name} must be an int, got {value!r}; {fix}")
    if value < minimum:
        raise ValueError(f"{where}: {name} must be at least {minimum}, got {value}; {fix}")
    return int(value)
