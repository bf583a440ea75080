"""Structured (divide-and-conquer) dynamics against the dense null-space formulation on
the IFToMM A02 N-four-bar chain (2N + 1 bodies, nc = 6N + 2, nv = 6N + 3).

    .venv/bin/python benchmarks/bench_structured.py [--sizes 10,20,40,...] [--dense-max N]
                                                    [--runs K] [--simulate 40,160] [--t1 20]

1. **Per evaluation** (one process): `jax.jit` of `dynamics_terms` + the formulation's
   solve at `q0, v0` (what the integrator calls at every stage), `NullSpaceProjection()`
   (dense SVD of `C`) against `DivideAndConquer()` (block elimination along the assembly
   tree), median of `--runs` rounds after compiling; and the compile time (first call
   minus a repeated one).
2. **Whole run** (`--simulate`): `jmbs.simulate(jmbs.examples.n_four_bar(N), t1)` with
   default settings, each in a fresh process without the persistent cache: import +
   build, first call (compilation included), repeated call; B0 against the exact
   reference of REFERENCES.md at t = 5, 10, 15, 20 s.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import jax
import numpy as np

import jmbs

RUN = r"""
import sys, time, json
t0 = time.perf_counter()
import numpy as np, jmbs
N, t1, dense = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "dense"
m = jmbs.examples.n_four_bar(N)
kw = dict(formulation=jmbs.NullSpaceProjection(), uniqueness="nullspace") if dense else {}
tb = time.perf_counter()
sol = jmbs.simulate(m, t1, **kw)
ta = time.perf_counter()
sol2 = jmbs.simulate(m, t1, **kw)
tc = time.perf_counter()
q = np.asarray(sol.q); ts = np.asarray(sol.ts)
b0 = {str(t): (q[k, :2] + 0.5 * np.array([np.cos(q[k, 2]), np.sin(q[k, 2])])).tolist()
      for t in (5, 10, 15, 20) if t <= t1 for k in [int(np.argmin(abs(ts - t)))]}
print(json.dumps(dict(build=tb - t0, first=ta - tb, repeat=tc - ta, b0=b0,
                      steps=int(sol.stats["num_steps"]))))
"""

# REFERENCES.md, IFToMM A02, N = 40 (DOP853 at 1e-13 on the one-dof equation).
REFERENCE_40 = {"5": (-0.5401900507, -0.8415430525), "10": (0.1805122267, 0.9835727406),
                "15": (-0.9998781771, -0.0156086790), "20": (0.4109011537, 0.9116799010)}


def per_evaluation(n: int, formulation, runs: int):
    m = jmbs.examples.n_four_bar(n)
    p = formulation.prepare(m, m.q0, 0.0)
    f = jax.jit(lambda q, v: p.solve(p.terms(m, q, v, 0.0, with_phi=False))[0])
    t = time.perf_counter()
    jax.block_until_ready(f(m.q0, m.v0))
    first = time.perf_counter() - t
    reps = max(3, int(0.2 / max(first / 50, 1e-5)))
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(reps):
            out = f(m.q0, m.v0)
        jax.block_until_ready(out)
        times.append((time.perf_counter() - t) / reps)
    each = statistics.median(times)
    return each, first - each, np.asarray(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,20,40,80,160,320,640")
    ap.add_argument("--dense-max", type=int, default=160)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--simulate", default="40,160")
    ap.add_argument("--simulate-dense", default="", help="sizes to also simulate densely (slow)")
    ap.add_argument("--t1", type=float, default=20.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out = {"per_evaluation": [], "simulate": []}

    print("| N | bodies | nv | dense ms | tree ms | dense / tree | dense compile s | tree compile s |")
    print("|---|---|---|---|---|---|---|---|")
    for n in [int(x) for x in args.sizes.split(",")]:
        tree, tree_c, a_t = per_evaluation(n, jmbs.DivideAndConquer(), args.runs)
        row = {"N": n, "tree_ms": tree * 1e3, "tree_compile_s": tree_c}
        if n <= args.dense_max:
            dense, dense_c, a_d = per_evaluation(n, jmbs.NullSpaceProjection(), args.runs)
            assert np.allclose(a_t, a_d, atol=1e-8 * (1 + np.max(np.abs(a_d))))
            row.update(dense_ms=dense * 1e3, dense_compile_s=dense_c)
        out["per_evaluation"].append(row)
        d = row.get("dense_ms")
        print(f"| {n} | {2 * n + 1} | {6 * n + 3} | {'' if d is None else f'{d:.3f}'} | {tree * 1e3:.3f} | "
              f"{'' if d is None else f'{d / (tree * 1e3):.1f}'} | "
              f"{'' if d is None else f'{row['dense_compile_s']:.2f}'} | {tree_c:.2f} |", flush=True)
    rows = out["per_evaluation"]
    big = [r for r in rows if r["N"] >= 40]
    if len(big) >= 2:
        slope = np.polyfit(np.log([6 * r["N"] + 3 for r in big]), np.log([r["tree_ms"] for r in big]), 1)[0]
        print(f"\ntree: time per evaluation ~ nv^{slope:.2f} from N = 40 on")

    env = dict(os.environ, JMBS_NO_CACHE="1")
    jobs = [(int(x), False) for x in args.simulate.split(",") if x]
    jobs += [(int(x), True) for x in args.simulate_dense.split(",") if x]
    if jobs:
        print("\n| N | formulation | import + build s | first call s | repeated s | steps | max |B0 - ref| |")
        print("|---|---|---|---|---|---|---|")
    for n, dense in jobs:
        res = json.loads(subprocess.run(
            [sys.executable, "-c", RUN, str(n), str(args.t1), "dense" if dense else "default"],
            env=env, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        err = (max(float(np.max(np.abs(np.subtract(res["b0"][t], REFERENCE_40[t]))))
                   for t in res["b0"]) if n == 40 else None)  # REFERENCES.md: N = 40 only
        res.update(N=n, dense=dense, b0_error=err)
        out["simulate"].append(res)
        print(f"| {n} | {'NullSpaceProjection' if dense else 'default'} | {res['build']:.2f} | "
              f"{res['first']:.2f} | {res['repeat']:.2f} | {res['steps']} | "
              f"{'-' if err is None else f'{err:.2g}'} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
