"""Batched analyses and dynamics on an accelerator (or the CPU), against 2 CPU cores.

    python benchmarks/bench_gpu.py [--robot 1000000] [--robot-methods default,qr,nullspace,svd]
                                   [--robot-batch B] [--sizes 40,160,640] [--batch 4096]
                                   [--simulate 40] [--cpu-cores 0,1] [--json PATH]
    python benchmarks/bench_gpu.py --trace DIR [--robot N] [--robot-batch B]

0. The uniqueness sweep of Wojtyra & Fraczek's mobile robot (`jmbs.examples.mobile_robot()`,
   C 22 x 21) over `--robot` random configurations (slide uniform in the steering range
   without its outer 5 %, hitch angle uniform in (-1, 1); `mobile_robot_configurations`
   makes them on the host): `jmbs.solvability_sweep(model, qs, method=...)` from the host's
   NumPy array to the host's NumPy decisions, transfers included; first call and the median
   of 3 repeats, per method (`default` = no method given). Every configuration's rank is
   checked to be 20 and the methods' decisions to agree with one another.

1. Per evaluation (one state): `dynamics_terms` + the solve, `NullSpaceProjection()`
   (dense SVD) against `DivideAndConquer()` (the tree), median of 5 rounds.
2. Batched: `jax.vmap` of the tree solve over `--batch` states (perturbed velocities),
   time per state; and `jmbs.solvability_sweep(method="dca")` over `--batch`
   configurations of the chain (cranks at random angles).
3. `jmbs.simulate(n_four_bar(N), 20)` with default settings: first and repeated call.
Prints the device, and checks the tree's accelerations against the dense ones.

With `--cpu-cores` (default `0,1` when JAX's backend is not the CPU), parts 0 and 2 are
run again in a child process on the CPU alone (`JAX_PLATFORMS=cpu`), pinned to those cores
with `taskset`, on `--cpu-robot` configurations (default 100 000) and the first size; the
script then prints the accelerator's speed-up per configuration and per state.

`--trace DIR` runs one sweep of part 0 (default method) under JAX's profiler instead and
prints its costliest operations (device kernels and host work), the Perfetto trace
copied to `DIR/perfetto_trace.json.gz` (open it in ui.perfetto.dev).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from _trace import trace  # the scripts run from benchmarks/

import jmbs
from jmbs.internal import MARGINAL_DECADES


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


def robot_sweeps(n: int, methods: list[str], batches: list[int | None]) -> dict:
    """Part 0: the mobile robot's sweep over `n` configurations; seconds per method and
    batch size (`None`: the sweep's default), keyed `method` or `method@batch`."""
    m = jmbs.examples.mobile_robot()
    lo, hi = jmbs.examples.steering_range()
    margin = 0.05 * (hi - lo)
    rng = np.random.default_rng(1)
    qs = jmbs.examples.mobile_robot_configurations(rng.uniform(lo + margin, hi - margin, n),
                                                   rng.uniform(-1.0, 1.0, n))
    out, first_sweep = {}, None
    for name, batch in [(x, b) for b in batches for x in methods]:
        method = None if name == "default" else name

        def sweep():
            return jmbs.solvability_sweep(m, qs, method=method, batch_size=batch, progress=False)

        t0 = time.perf_counter()
        sw = sweep()
        first = time.perf_counter() - t0
        again = []
        for _ in range(3 if first < 20 else 1):  # one repeat of a method that is that slow
            t0 = time.perf_counter()
            sweep()
            again.append(time.perf_counter() - t0)
        if not np.all(sw.rank == m.nc - 2):
            raise AssertionError(f"{name}: rank {np.unique(sw.rank)} where 20 was expected")
        if first_sweep is None:
            first_sweep = sw
        marginal = disagreements(sw, first_sweep)
        key = name if batch is None else f"{name}@{batch}"
        r = out[key] = {"first_s": first, "repeat_s": statistics.median(again), "n": n,
                        "method": sw.method}
        print(f"mobile robot sweep, {n} configurations, {key} ({sw.method}): "
              f"{r['repeat_s']:.3f} s ({r['repeat_s'] / n * 1e6:.2f} us/config), "
              f"first call {first:.1f} s" + (f"; {marginal} marginal decisions differ from "
                                             f"{methods[0]}'s" if marginal else ""), flush=True)
    return out


def trace_sweep(n: int, batch: int | None, out_dir: str) -> None:
    """One repeat of the mobile robot's default sweep under JAX's profiler (`_trace.py`)."""
    m = jmbs.examples.mobile_robot()
    lo, hi = jmbs.examples.steering_range()
    rng = np.random.default_rng(2)
    qs = jmbs.examples.mobile_robot_configurations(rng.uniform(lo, hi, n), rng.uniform(-1.0, 1.0, n))
    jmbs.solvability_sweep(m, qs, batch_size=batch, progress=False)
    trace(lambda: jmbs.solvability_sweep(m, qs, batch_size=batch, progress=False).rank, out_dir,
          f"the robot's sweep, {n} configurations")


def disagreements(a, b) -> int:
    """Configurations whose decisions differ between sweeps `a` and `b`; an AssertionError
    where a decision that differs is clear (a margin of `MARGINAL_DECADES` or more in both
    sweeps): methods may differ only where a criterion sits at its tolerance."""
    ue = a.unique != b.unique
    uc = a.component_unique != b.component_unique
    clear_e = ue & (np.minimum(a.margin, b.margin) >= MARGINAL_DECADES)
    clear_c = uc & (np.minimum(a.component_margin, b.component_margin) >= MARGINAL_DECADES)
    if clear_e.any() or clear_c.any():
        k = int(np.flatnonzero(clear_e.any(1) | clear_c.any(1))[0])
        raise AssertionError(f"{a.method} and {b.method} differ clearly at configuration {k}")
    return int(np.count_nonzero(ue.any(1) | uc.any(1)))


def tree_rows(sizes: list[int], dense_max: int, batch: int, with_sweep: bool = True) -> dict:
    """Part 1 and 2: the A02 chain's tree solve, one state and `batch` states."""
    rng = np.random.default_rng(0)
    out = {}
    for n in sizes:
        m = jmbs.examples.n_four_bar(n)
        tree = jmbs.DivideAndConquer().prepare(m, m.q0, 0.0)
        f_tree = jax.jit(lambda q, v: tree.solve(jmbs.dynamics_terms(m, q, v, 0.0, with_phi=False,
                                                                        dense=False))[0])
        res = {"tree_one_s": timed(f_tree, m.q0, m.v0)}
        row = f"N = {n} (nv {m.nv}): tree {res['tree_one_s'] * 1e3:.3f} ms"
        if n <= dense_max:
            dense = jmbs.NullSpaceProjection().prepare(m, m.q0, 0.0)
            f_dense = jax.jit(lambda q, v: dense.solve(jmbs.dynamics_terms(m, q, v, 0.0,
                                                                            with_phi=False))[0])
            a, b = np.asarray(f_tree(m.q0, m.v0)), np.asarray(f_dense(m.q0, m.v0))
            assert np.allclose(a, b, atol=1e-8 * (1 + np.abs(b).max())), np.abs(a - b).max()
            res["dense_one_s"] = timed(f_dense, m.q0, m.v0)
            row += f", dense {res['dense_one_s'] * 1e3:.3f} ms"
        qs = chain_q(n, rng.uniform(0.2, 1.3, batch))
        vs = jnp.asarray(m.v0 + 0.1 * rng.normal(size=(batch, m.nv)))
        f_batch = jax.jit(jax.vmap(f_tree))
        t = res["tree_batch_s"] = timed(f_batch, jnp.asarray(qs), vs, rounds=3)
        row += f"; vmap over {batch} states {t * 1e3:.1f} ms ({t / batch * 1e6:.2f} us/state)"
        if with_sweep:
            t0 = time.perf_counter()
            sw = jmbs.solvability_sweep(m, qs, method="dca", progress=False)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            sw = jmbs.solvability_sweep(m, qs, method="dca", progress=False)
            again = res["dca_sweep_s"] = time.perf_counter() - t0
            assert np.all(np.asarray(sw.rank) == m.nc)
            row += (f"; dca sweep of {batch} configurations {again:.2f} s "
                    f"({again / batch * 1e6:.0f} us/config, first {first:.1f} s)")
        print(row, flush=True)
        out[n] = res
    return out


def simulate_rows(sizes: list[int]) -> None:
    """Part 3: one default simulation of the A02 chain, first and repeated call."""
    for n in sizes:
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


def cpu_child(args, methods: list[str], sizes: list[int]) -> dict:
    """Parts 0 and 2 in a CPU-only process pinned to `--cpu-cores`; its results."""
    cmd = ["taskset", "-c", args.cpu_cores, sys.executable, os.path.abspath(__file__), "--child",
           "--robot", str(args.cpu_robot), "--robot-methods", ",".join(methods),
           "--sizes", ",".join(map(str, sizes)), "--batch", str(args.batch), "--simulate", ""]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    print(f"CPU child: {' '.join(cmd)}", flush=True)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    for line in done.stdout.splitlines():
        if line.startswith("CHILD "):
            return json.loads(line[len("CHILD "):])
        print("  cpu |", line, flush=True)
    raise RuntimeError(f"the CPU child printed no results:\n{done.stderr[-3000:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--robot", type=int, default=1_000_000)
    ap.add_argument("--robot-methods", default="default,qr,nullspace,svd")
    ap.add_argument("--robot-batch", default="", help="batch sizes, e.g. 2048,262144 "
                    "(default: the sweep's own); the CPU child uses the sweep's own")
    ap.add_argument("--sizes", default="40,160,640")
    ap.add_argument("--dense-max", type=int, default=160)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--simulate", default="40")
    ap.add_argument("--cpu-cores", default=None)
    ap.add_argument("--cpu-robot", type=int, default=100_000)
    ap.add_argument("--json", default=None)
    ap.add_argument("--trace", default=None, help="folder: trace one sweep of the robot "
                    "(--robot configurations, the first --robot-batch) and print its costliest "
                    "operations; nothing else is run")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    backend = jax.default_backend()
    print("device:", jax.devices()[0].device_kind, backend, "jax", jax.__version__, flush=True)
    methods = [x for x in args.robot_methods.split(",") if x]
    batches = [int(b) if b != "default" else None for b in args.robot_batch.split(",") if b] or [None]
    if args.trace:
        trace_sweep(args.robot, batches[0], args.trace)
        return
    sizes = [int(x) for x in args.sizes.split(",") if x]
    results = {"device": jax.devices()[0].device_kind, "backend": backend, "jax": jax.__version__,
               "robot": robot_sweeps(args.robot, methods, batches) if args.robot else {},
               "tree": tree_rows(sizes, args.dense_max, args.batch, with_sweep=not args.child)}
    if args.child:
        print("CHILD " + json.dumps(results), flush=True)
        return
    simulate_rows([int(x) for x in args.simulate.split(",") if x])
    cores = args.cpu_cores or ("0,1" if backend != "cpu" else "")
    if cores:
        args.cpu_cores = cores
        cpu_methods = list(dict.fromkeys(["default"] + methods))
        cpu = results["cpu"] = cpu_child(args, cpu_methods if args.robot else [], sizes[:1])
        for name, r in results["robot"].items():
            c = cpu["robot"][name.split("@")[0]]
            print(f"mobile robot, {name}: {r['repeat_s'] / r['n'] * 1e6:.2f} us/config here against "
                  f"{c['repeat_s'] / c['n'] * 1e6:.2f} on {cores} (CPU, {c['n']} configurations): "
                  f"{c['repeat_s'] / c['n'] / (r['repeat_s'] / r['n']):.1f}x; first call "
                  f"{r['first_s']:.1f} s against {c['first_s']:.1f} s", flush=True)
        if results["robot"]:
            def best(rs):
                k = min(rs, key=lambda k: rs[k]["repeat_s"] / rs[k]["n"])
                return k, rs[k]["repeat_s"] / rs[k]["n"]
            (kg, g), (kc, c) = best(results["robot"]), best(cpu["robot"])
            print(f"mobile robot, fastest here ({kg}) against fastest on {cores} ({kc}): "
                  f"{g * 1e6:.2f} against {c * 1e6:.2f} us/config, {c / g:.1f}x; "
                  f"{args.robot} configurations in {g * args.robot:.2f} s here", flush=True)
        if sizes:
            r, c = results["tree"][sizes[0]], cpu["tree"][str(sizes[0])]
            print(f"A02 N = {sizes[0]}, {args.batch} batched dynamics evaluations: "
                  f"{r['tree_batch_s'] * 1e3:.1f} ms here against {c['tree_batch_s'] * 1e3:.1f} ms "
                  f"on {cores}: {c['tree_batch_s'] / r['tree_batch_s']:.1f}x", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
