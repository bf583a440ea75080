"""The analysis's cost across mechanism shapes (issue 31, item 3): the default against the
dense null-space method, side by side in one process.

    .venv/bin/python benchmarks/bench_shapes.py [--sizes 51,161,501,1001] [--reps 3] [--json PATH]

Shapes, each at about the given numbers of bodies:
- `chain`: the IFToMM A02 chain (`jmbs.examples.n_four_bar`, 2 N + 1 bodies);
- `hub`: a coupler on n/2 cranks carrying a chain of n/2 links (`jmbs.examples.crank_ladder`);
- `grid`: a square lattice of pinned rods, every cell a loop (`jmbs.examples.bar_grid`);
- `random`: a random tree of n bodies with n/10 loops closed between random pairs
  (`jmbs.examples.random_mechanism`, planar, no driver): separators as large as the graph.

Per shape and size: `build()` time; `jmbs.solvability(model)` (the default: which method it
picked) first call, the median of `--reps` repeats right after it (where the report's
programs are still evaluated on the host: `host_repeat`) and of `--reps` repeats of the
compiled programs (`repeat`, `jmbs.internal.host_evaluation(False)`, after one call that
compiles them); the same with `method="nullspace"`;
the ranks and decisions of both are checked to be equal; one dynamics evaluation
(`jmbs.reactions(...).v_dot` at the reference state, jitted, the formulation prepared):
the default formulation's and `NullSpaceProjection`'s, first call and median repeat,
checked to agree. The growth exponent of each column is the slope of log time against
log bodies over the sizes.
"""

import argparse
import json
import statistics
import time

import jax
import numpy as np

import jmbs
from jmbs.internal import host_evaluation


def models(shape: str, n: int):
    if shape == "chain":
        return lambda: jmbs.examples.n_four_bar(max(1, (n - 1) // 2))
    if shape == "grid":
        side = max(1, round(np.sqrt(n / 2)))
        return lambda: jmbs.examples.bar_grid(side, side)
    if shape == "random":
        return lambda: jmbs.examples.random_mechanism(0, 2, n_bodies=n, n_loops=max(1, n // 10),
                                                      n_drivers=0)
    return lambda: jmbs.examples.crank_ladder(max(2, n // 2), max(0, n - 1 - n // 2))


def dynamics(model, formulation):
    """One jitted evaluation of the accelerations at the reference state."""
    prepared = formulation.prepare(model, model.q0, 0.0)
    f = jax.jit(lambda q, v: jmbs.reactions(model, q, v, 0.0, prepared).v_dot)
    return lambda: jax.block_until_ready(f(model.q0, model.v0))


def timed(f, reps: int) -> tuple[float, float, object]:
    t = time.perf_counter()
    out = f()
    first = time.perf_counter() - t
    again = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        again.append(time.perf_counter() - t)
    return first, statistics.median(again), out


def timed_analysis(f, reps: int) -> tuple[float, float, float, object]:
    """`f`'s first call, the median of `reps` repeats as they come (the host's tier while
    its budget lasts) and of `reps` repeats of the compiled programs."""
    first, host, out = timed(f, reps)
    with host_evaluation(False):
        _, compiled, _ = timed(f, reps)  # its first call compiles
    return first, host, compiled, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="51,161,501,1001")
    ap.add_argument("--shapes", default="chain,hub,grid,random")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    rows = []
    for shape in args.shapes.split(","):
        for n in sizes:
            t = time.perf_counter()
            model = models(shape, n)()
            build = time.perf_counter() - t
            f1, h1, r1, default = timed_analysis(lambda: jmbs.solvability(model), args.reps)
            f2, h2, r2, dense = timed_analysis(lambda: jmbs.solvability(model, method="nullspace"), args.reps)
            assert default.rank == dense.rank, (shape, n, default.rank, dense.rank)
            assert np.array_equal(default.decisions.unique, dense.decisions.unique), (shape, n)
            formulation = jmbs.default_formulation(model)
            f3, r3, a = timed(dynamics(model, formulation), args.reps)
            f4, r4, b = timed(dynamics(model, jmbs.NullSpaceProjection()), args.reps)
            scale = 1.0 + float(np.max(np.abs(np.asarray(b))))
            assert float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) < 1e-8 * scale, (shape, n)
            row = {"shape": shape, "bodies": model.n_bodies, "nv": model.nv, "build_s": build,
                   "default": default.method, "default_first_s": f1, "default_repeat_s": r1,
                   "default_host_repeat_s": h1, "dense_first_s": f2, "dense_repeat_s": r2,
                   "dense_host_repeat_s": h2, "rank_margin": float(default.rank_margin),
                   "dynamics": type(formulation).__name__, "dynamics_first_s": f3,
                   "dynamics_repeat_s": r3, "dense_dynamics_first_s": f4, "dense_dynamics_repeat_s": r4}
            rows.append(row)
            print(f"{shape:6s} {model.n_bodies:5d} bodies: build {build:6.2f} s | default ({default.method}) "
                  f"first {f1:6.2f} s, host {h1 * 1e3:8.2f} ms, repeat {r1 * 1e3:8.2f} ms | nullspace "
                  f"first {f2:6.2f} s, host {h2 * 1e3:8.2f} ms, repeat {r2 * 1e3:8.2f} ms | "
                  f"margin {row['rank_margin']:.1f} | dynamics "
                  f"({row['dynamics']}) first {f3:6.2f} s, repeat {r3 * 1e3:8.2f} ms | null-space "
                  f"projection first {f4:6.2f} s, repeat {r4 * 1e3:8.2f} ms", flush=True)
    for shape in args.shapes.split(","):
        rs = [r for r in rows if r["shape"] == shape]
        if len(rs) < 2:
            continue
        x = np.log([r["bodies"] for r in rs])
        slopes = {k: float(np.polyfit(x, np.log([r[k] for r in rs]), 1)[0])
                  for k in ("build_s", "default_repeat_s", "dense_repeat_s", "dynamics_repeat_s",
                            "dense_dynamics_repeat_s")}
        print(f"{shape}: growth exponents " + ", ".join(f"{k} {v:.2f}" for k, v in slopes.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
