"""A bare diffrax solve of the Bricard's size in a fresh process (import included): the
reference that jmbs's first-call latency is a ratio to (65 states, Tsit5, PID 1e-8, 101
save times, 5 s), then the same solve again (the repeat call). Run it in a new process:
`python benchmarks/bare_diffrax_latency.py`."""

import time

START = time.perf_counter()

import diffrax  # noqa: E402 (the import is part of what is timed)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)
N = 65
A = -0.1 * jnp.eye(N) + jnp.diag(jnp.ones(N - 1), 1) - jnp.diag(jnp.ones(N - 1), -1)
TERM = diffrax.ODETerm(lambda t, y, args: A @ y)  # one function: the repeat reuses the program


def solve():
    return diffrax.diffeqsolve(
        TERM, diffrax.Tsit5(), 0.0, 5.0, None, jnp.ones(N),
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 5.0, 101)),
        stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-8)).ys.block_until_ready()


solve()
print(f"bare diffrax, {N} states, fresh process: {time.perf_counter() - START:.2f} s")
repeats = []
for _ in range(5):
    t = time.perf_counter()
    solve()
    repeats.append(time.perf_counter() - t)
print(f"repeat call (median of 5): {1e3 * sorted(repeats)[2]:.1f} ms")
