import os

import jax
import pytest

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


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Release the compiled programs after each test module.

    Every XLA:CPU executable keeps its own memory mappings while it is cached, and a
    worker that keeps every module's programs passes the kernel's limit on mappings
    per process (vm.max_map_count, 65530 here: about 32 000 after a third of the
    suite) and dies in XLA with a segmentation fault, in whichever compilation or
    cache read comes next. Programs a later module needs again come back from the
    persistent cache above.
    """
    yield
    jax.clear_caches()
