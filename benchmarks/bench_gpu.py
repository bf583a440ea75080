"""The structured solves on an accelerator (or the CPU): IFToMM A02 N-four-bar.

    python benchmarks/bench_gpu.py [--sizes 40,160,640] [--batch 4096] [--simulate 40]

1. Per evaluation (one state): `dynamics_terms` + the solve, `NullSpaceProjection()`
   (dense SVD) against `DivideAndConquer()` (the tree), median of 5 rounds.
2. Batched: `jax.vmap` of the tree solve over `--batch` states (perturbed velocities),
   time per state; and `jmbs.solvability_sweep(method="dca")` over `--batch`
   configurations of the chain (cranks at random angles).
3. `jmbs.simulate(n_four_bar(N), 20)` with default settings: first and repeated call.
Prints the device, and checks the tree's accelerations against the dense ones.
"""

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import jmbs


def timed(f, *args, rounds=5):
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def chain_q(n: int, th: np.ndarray) -> np.ndarray:
    """Configurations of the chain with every crank at angle `th` from the vertical."""
    qs = []
    for a in th:
        cr = [[k + 0.5 * np.sin(a), 0.5 * np.cos(a), np.pi / 2 - a] for k in range(n + 1)]
        co = [[k + 0.5 + np.sin(a), np.cos(a), 0.0] for k in range(n)]
        qs.append(np.concatenate([np.ravel(cr), np.ravel(co)]))
    return np.array(qs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="40,160,640")
    ap.add_argument("--dense-max", type=int, default=160)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--simulate", default="40")
    args = ap.parse_args()
    print("device:", jax.devices()[0].device_kind, jax.default_backend(), "jax", jax.__version__, flush=True)
    rng = np.random.default_rng(0)
    for n in [int(x) for x in args.sizes.split(",")]:
        m = jmbs.examples.n_four_bar(n)
        tree = jmbs.DivideAndConquer().prepare(m, m.q0, 0.0)
        f_tree = jax.jit(lambda q, v: tree.solve(jmbs.dynamics_terms(m, q, v, 0.0, with_phi=False,
                                                                        dense=False))[0])
        row = f"N = {n} (nv {m.nv}): tree {timed(f_tree, m.q0, m.v0) * 1e3:.3f} ms"
        if n <= args.dense_max:
            dense = jmbs.NullSpaceProjection().prepare(m, m.q0, 0.0)
            f_dense = jax.jit(lambda q, v: dense.solve(jmbs.dynamics_terms(m, q, v, 0.0,
                                                                            with_phi=False))[0])
            a, b = np.asarray(f_tree(m.q0, m.v0)), np.asarray(f_dense(m.q0, m.v0))
            assert np.allclose(a, b, atol=1e-8 * (1 + np.abs(b).max())), np.abs(a - b).max()
            row += f", dense {timed(f_dense, m.q0, m.v0) * 1e3:.3f} ms"
        qs = chain_q(n, rng.uniform(0.2, 1.3, args.batch))
        vs = jnp.asarray(m.v0 + 0.1 * rng.normal(size=(args.batch, m.nv)))
        f_batch = jax.jit(jax.vmap(f_tree))
        t = timed(f_batch, jnp.asarray(qs), vs, rounds=3)
        row += f"; vmap over {args.batch} states {t * 1e3:.1f} ms ({t / args.batch * 1e6:.2f} us/state)"
        t0 = time.perf_counter()
        sw = jmbs.solvability_sweep(m, qs, method="dca", progress=False)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        sw = jmbs.solvability_sweep(m, qs, method="dca", progress=False)
        again = time.perf_counter() - t0
        assert np.all(np.asarray(sw.rank) == m.nc)
        row += (f"; dca sweep of {args.batch} configurations {again:.2f} s "
                f"({again / args.batch * 1e6:.0f} us/config, first {first:.1f} s)")
        print(row, flush=True)
    for n in [int(x) for x in args.simulate.split(",") if x]:
        m = jmbs.examples.n_four_bar(n)
        t0 = time.perf_counter()
        sol = jmbs.simulate(m, 20.0)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        sol = jmbs.simulate(m, 20.0)
        again = time.perf_counter() - t0
        q = np.asarray(sol.q)[-1]
        b0 = q[:2] + 0.5 * np.array([np.cos(q[2]), np.sin(q[2])])
        print(f"simulate N = {n}, 20 s: first {first:.1f} s, repeated {again:.2f} s, "
              f"{int(sol.stats['num_steps'])} steps, B0(20) = {b0}", flush=True)


if __name__ == "__main__":
    main()
