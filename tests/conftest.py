import os

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")
# Compiled programs are cached across runs (a second `make test` skips most of the
# XLA compilation, which dominates the suite); JMBS_TEST_CACHE="" turns it off.
_cache = os.environ.get("JMBS_TEST_CACHE", os.path.expanduser("~/.cache/jmbs-tests/jax"))
if _cache:
    # One directory per pytest-xdist worker: two processes never write and read the same
    # entry at once (a reader of a half-written executable crashed once in JAX's cache).
    _cache = os.path.join(_cache, os.environ.get("PYTEST_XDIST_WORKER", "main"))
    jax.config.update("jax_compilation_cache_dir", _cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
