"""A bare diffrax solve of the Bricard's size in a fresh process (import included): the
reference that jmbs's first-call latency is a ratio to (65 states, Tsit5, PID 1e-8, 101
save times, 5 s). Run it in a new process: `python benchmarks/bare_diffrax_latency.py`."""

import time

START = time.perf_counter()

import diffrax  # noqa: E402 (the import is part of what is timed)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)
N = 65
A = -0.1 * jnp.eye(N) + jnp.diag(jnp.ones(N - 1), 1) - jnp.diag(jnp.ones(N - 1), -1)
sol = diffrax.diffeqsolve(
    diffrax.ODETerm(lambda t, y, args: A @ y), diffrax.Tsit5(), 0.0, 5.0, None, jnp.ones(N),
    saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 5.0, 101)),
    stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-8))
sol.ys.block_until_ready()
print(f"bare diffrax, {N} states, fresh process: {time.perf_counter() - START:.2f} s")
