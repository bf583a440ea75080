"""Scaling of the divide-and-conquer uniqueness analysis against the dense methods.

    .venv/bin/python benchmarks/bench_dca.py [--quick] [--repeats R] [--json PATH]

Mechanisms (reference configurations, all cranks upright):

- `planar`: the IFToMM A02 N-four-bar, `jmbs.examples.n_four_bar(N)`: 2N + 1 bodies,
  C (6N + 2) x (6N + 3), not redundant.
- `spatial`: the same chain built in 3-D with revolute joints about z: 2N + 1 bodies,
  C (15N + 5) x (12N + 6); each of its N loops has 3 redundant rows (a planar loop of
  spatial revolutes), so 3N reaction patterns are indeterminate.

Per size: `dca` is one `jmbs.solvability_decisions(model, q0, 0, "dca")` under
`equinox.filter_jit` (compiled once per size; the median of `--repeats` calls after the
first), `nullspace` the same with the dense default method (pivoted QR of `C^T`, plus
its `nc x nc` criteria), run while it takes under `--dense-limit` seconds. The first
call of each (`compile`) is reported apart. Decisions (rank, elements, components) are
checked equal wherever both run. The exponent is the slope of log(time) against
log(bodies) between consecutive sizes.
"""

import argparse
import json
import math
import statistics
import time

import equinox as eqx
import jax
import numpy as np

import jmbs
from jmbs import examples

decide = eqx.filter_jit(lambda model, q, method: jmbs.solvability_decisions(model, q, 0.0, method))


def spatial_n_four_bar(n: int):
    b = jmbs.ModelBuilder(dim=3, gravity=(0.0, -9.81, 0.0))
    z = (0.0, 0.0, 1.0)
    inertia = (1e-3, 1 / 12, 1 / 12)
    cranks = [b.add_body(f"crank{k}", 1.0, inertia, (k, 0.5, 0.0)) for k in range(n + 1)]
    couplers = [b.add_body(f"coupler{k}", 1.0, inertia, (k + 0.5, 1.0, 0.0)) for k in range(n)]
    for k, c in enumerate(cranks):
        b.add_revolute(f"O{k}", b.ground, c, point=(k, 0.0, 0.0), axis=z)
    for k, c in enumerate(couplers):
        b.add_revolute(f"B{k}L", cranks[k], c, point=(k, 1.0, 0.0), axis=z)
        b.add_revolute(f"B{k}R", c, cranks[k + 1], point=(k + 1, 1.0, 0.0), axis=z)
    return b.build()


MODELS = {"planar": examples.n_four_bar, "spatial": spatial_n_four_bar}


def timed(model, method: str, repeats: int):
    t0 = time.perf_counter()
    d = jax.block_until_ready(decide(model, model.q0, method))
    first = time.perf_counter() - t0
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(decide(model, model.q0, method))
        runs.append(time.perf_counter() - t0)
    run = statistics.median(runs)
    return jax.device_get(d), first - run, run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="sizes up to N = 80")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dense-limit", type=float, default=20.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    sizes = [10, 20, 40, 80] if args.quick else [10, 20, 40, 80, 160, 320, 640]
    results = []
    for name, build in MODELS.items():
        dense_on, prev = True, None
        print(f"\n{name}: bodies, nc x nv, redundancy, dca compile / run [s], exponent, "
              "nullspace compile / run [s], same decisions")
        for n in sizes:
            model = build(n)
            d, c_dca, t_dca = timed(model, "dca", args.repeats)
            row = {"model": name, "N": n, "bodies": model.n_bodies, "nc": model.nc, "nv": model.nv,
                   "redundancy": model.nc - int(d.rank), "dca_compile": c_dca, "dca": t_dca}
            if prev is not None:
                row["exponent"] = math.log(t_dca / prev[1]) / math.log(model.n_bodies / prev[0])
            prev = (model.n_bodies, t_dca)
            if dense_on:
                a, c_ns, t_ns = timed(model, "nullspace", max(1, args.repeats // 2))
                row |= {"nullspace_compile": c_ns, "nullspace": t_ns,
                        "same": bool(int(a.rank) == int(d.rank)
                                     and np.array_equal(a.unique, d.unique)
                                     and np.array_equal(a.component_unique, d.component_unique))}
                dense_on = c_ns + t_ns < args.dense_limit
            results.append(row)
            print(f"  {row['bodies']:5d}  {model.nc:5d} x {model.nv:5d}  p={row['redundancy']:4d}  "
                  f"{c_dca:6.2f} / {t_dca:8.4f}  {row.get('exponent', float('nan')):5.2f}  "
                  + (f"{row['nullspace_compile']:6.2f} / {row['nullspace']:8.4f}  {row['same']}"
                     if "nullspace" in row else "-"), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
