import os

# The suite compiles with XLA's CPU backend at optimization level 0: compilation, which
# dominates the suite, takes about a quarter less, and the programs' numbers are checked
# against tolerances, not bits (the one bit-for-bit check, tests/test_distributed.py,
# compares programs compiled alike). Users, benchmarks, `make demo` and the notebooks
# of `make docs` run JAX's default. The subprocesses the tests start inherit it.
_flags = os.environ.get("XLA_FLAGS", "")
if "xla_backend_optimization_level" not in _flags:
    os.environ["XLA_FLAGS"] = f"{_flags} --xla_backend_optimization_level=0".strip()

import jax  # noqa: E402  (after XLA_FLAGS)
import pytest  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")
# Compiled programs are cached across runs (a second `make test` skips most of the
# XLA compilation, which dominates the suite); JMBS_TEST_CACHE="" turns it off.
_cache = os.environ.get("JMBS_TEST_CACHE", os.path.expanduser("~/.cache/jmbs-tests/jax"))
if _cache:
    # One directory for both pytest-xdist workers and the commands they start, so that a
    # program one of them compiled is loaded by the others. A bounded cache is a locked
    # one (JAX takes a file lock around every read and write once it may evict), so no
    # process reads an entry another is writing (an unlocked shared cache crashed once on
    # a half-written executable); the subprocesses inherit the bound from the environment.
    os.environ["JAX_COMPILATION_CACHE_MAX_SIZE"] = str(16 * 1024**3)
    jax.config.update("jax_compilation_cache_dir", _cache)
    jax.config.update("jax_compilation_cache_max_size", 16 * 1024**3)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


# The command line keeps its compiled programs on disk (jmbs.enable_compilation_cache);
# in the tests it uses the tests' cache above (passed to its subprocesses as
# JAX_COMPILATION_CACHE_DIR), and in-process calls leave the tests' JAX settings alone.
os.environ.setdefault("JMBS_NO_CACHE", "1")

# Release the compiled programs when a worker holds this many memory mappings (the
# kernel's limit, vm.max_map_count, is 65530 here).
MAPPINGS_LIMIT = 40_000


def _mappings() -> int:
    try:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)
    except OSError:  # not Linux: release after every module
        return MAPPINGS_LIMIT


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Release the compiled programs after a test module when they hold too much.

    Every XLA:CPU executable keeps its own memory mappings while it is cached, and a
    worker that keeps every module's programs passes the kernel's limit on mappings
    per process (vm.max_map_count, 65530 here: about 32 000 after a third of the
    suite) and dies in XLA with a segmentation fault, in whichever compilation or
    cache read comes next. Below `MAPPINGS_LIMIT` the programs stay, so that later
    modules reuse them instead of tracing and compiling them again; above it they are
    released (they come back from the persistent cache above).
    """
    yield
    if _mappings() >= MAPPINGS_LIMIT:
        jax.clear_caches()
