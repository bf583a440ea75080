"""jmbs's one process-wide setting: 64-bit floats in JAX.

Every rank decision in jmbs (solvability, formulations, projections) separates
singular values of order one from rounding-level ones, with relative
tolerances between 1e-8 and 1e-13. In float32 (rounding near 1e-7) those
decisions are meaningless: a redundant row would pass for an independent one.
So importing jmbs turns on `jax_enable_x64` (the only global jmbs changes; it
writes no environment variable), and `require_x64` refuses to compute if a
program turned it off again afterwards, instead of returning wrong ranks.
"""

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
