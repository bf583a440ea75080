"""Python's full garbage collections deferred while jmbs traces and compiles.

Tracing a program creates hundreds of thousands of objects (jaxprs, tracers, MLIR
operations), many of them alive until the program is compiled, on top of the 150,000
that the collector tracks after `import jmbs`. CPython meanwhile runs full collections
(generation 2) that walk every one of them, again and again as the heap grows: two in
`import jmbs`, three more in a first `jmbs.simulate` of the A02 chain (N = 40).
`compiles` raises the third threshold while an entry point runs
(generations 0 and 1 still collect, and refcounting frees non-cyclic garbage at once);
the deferred full collection comes at the first generation-1 collection after. Measured
in alternated fresh processes (docs/benchmarks.md, "Python's full collections deferred"):
`import jmbs` 1.06-1.13 -> 1.00-1.03 s, import + build + first simulate of the A02 chain
median 9.42 -> 9.22 s.

Nothing here imports JAX: `jmbs/__init__.py` uses it around its own imports.
"""

import functools
import gc
import threading

# The third threshold while deferred: full collections wait for this many generation-1
# collections instead of CPython's 10.
_DEFERRED = 10_000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] = ()


def defer() -> None:
    """Defer full collections until the matching `restore` (calls nest, across threads)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(_saved[0], _saved[1], max(_saved[2], _DEFERRED))
        _depth += 1


def restore() -> None:
    """End the outermost `defer`: the thresholds go back to what they were."""
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0:
            gc.set_threshold(*_saved)


def compiles(fn):
    """`fn` (an entry point that traces and compiles) run with full collections deferred.
    A wrapper in this file, not a `contextlib` decorator: `warn_user` skips jmbs's frames
    only, and a frame in contextlib.py would be named as the user's line."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        defer()
        try:
            return fn(*args, **kwargs)
        finally:
            restore()
    return wrapper
