"""jmbs's process-wide settings: 64-bit floats in JAX, and (opt-in) compiled programs on disk.

Every rank decision in jmbs (solvability, formulations, projections) separates
singular values of order one from rounding-level ones, with relative
tolerances between 1e-8 and 1e-13. In float32 (rounding near 1e-7) those
decisions are meaningless: a redundant row would pass for an independent one.
So importing jmbs turns on `jax_enable_x64` (the only global jmbs changes; it
writes no environment variable), and `require_x64` refuses to compute if a
program turned it off again afterwards, instead of returning wrong ranks.
"""

import os
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)


def require_x64(where: str) -> None:
    """Raise if JAX computes in 32 bits (`jax_enable_x64` off): jmbs's tolerances need float64."""
    if not jax.config.read("jax_enable_x64"):
        raise RuntimeError(
            f"{where}: JAX is in 32-bit mode (jax_enable_x64 is off), but jmbs's rank decisions "
            "need 64-bit floats (their tolerances lie below float32's rounding). Importing jmbs "
            "turns float64 on; something turned it off afterwards. Turn it back on with "
            "jax.config.update('jax_enable_x64', True) before calling jmbs")


# Compiler options of the programs that run once per call, on one state or a few saved
# ones (the saved-state post-processing, the divide-and-conquer ranks at the initial
# state, `jmbs.solvability`'s decisions at one configuration): LLVM's optimizations cost
# them more compile time than they save at run time (A02 with N = 40: saved-state program
# 1.1 s, ranks 0.15 s shorter to compile).
RUN_ONCE = {"xla_backend_optimization_level": 0}


# Compiled programs on disk (opt-in): a process that runs what an earlier one ran loads
# the programs instead of compiling them again.
DEFAULT_CACHE = Path("~/.cache/jmbs/jax")
DEFAULT_CACHE_SIZE = 2 * 1024**3


def enable_compilation_cache(path: "str | os.PathLike | None" = None, *,
                             max_size: int = DEFAULT_CACHE_SIZE) -> Path:
    """Keep the compiled programs on disk, so that a later process (the next notebook
    kernel, command or script) loads them instead of compiling them again.

    Call it once, before the first jmbs computation. The `jmbs` command line does
    (`--no-cache` or `JMBS_NO_CACHE=1` to turn it off). It is JAX's persistent
    compilation cache, for every program the process compiles, with every entry kept
    however fast it compiled (jmbs's programs are many and small) and the directory
    bounded to `max_size` bytes (least recently used entries go first); reads and
    writes are locked, so processes can share it.

    **Arguments:**
    - `path`: the directory; default `$JMBS_CACHE_DIR`, else the one JAX was given
      (`JAX_COMPILATION_CACHE_DIR`), else `~/.cache/jmbs/jax`.
    - `max_size`: bytes the directory may hold (default 2 GiB; -1: no bound).

    **Returns:** the directory.
    """
    if path is None:  # a directory the user gave JAX already stays
        path = (os.environ.get("JMBS_CACHE_DIR") or jax.config.jax_compilation_cache_dir
                or DEFAULT_CACHE)
    path = Path(path).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_compilation_cache_max_size", int(max_size))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path
