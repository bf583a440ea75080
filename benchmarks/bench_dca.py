"""Scaling of the divide-and-conquer uniqueness analysis against the dense methods.

    .venv/bin/python benchmarks/bench_dca.py [--quick] [--repeats R] [--json PATH]
    .venv/bin/python benchmarks/bench_dca.py --agreement 50   # decisions on random mechanisms

Mechanisms (reference configurations, all cranks upright):

- `planar`: the IFToMM A02 N-four-bar, `jmbs.examples.n_four_bar(N)`: 2N + 1 bodies,
  C (6N + 2) x (6N + 3), not redundant.
- `spatial`: the same chain built in 3-D with revolute joints about z: 2N + 1 bodies,
  C (15N + 5) x (12N + 6); each of its N loops has 3 redundant rows (a planar loop of
  spatial revolutes), so 3N reaction patterns are indeterminate.

Per size: `dca` is one `jmbs.solvability_decisions(model, q0, 0, "dca")` under
`equinox.filter_jit` (compiled once per size; the median of `--repeats` calls after the
first), `nullspace` the same with the dense default method (pivoted QR of `C^T`, plus
its `nc x nc` criteria, built at full size whatever the redundancy), and `dense sized`,
the stronger dense baseline: the equilibrated `C`'s pivoted QR and, only when the
redundancy `p` (static, known from the dca run) is positive, the `nc x p` null-space
basis and the component criteria. Both dense ones run while `nullspace` takes under
`--dense-limit` seconds, with the same `--repeats` as dca. The first call of each
(`compile`) is reported apart. Decisions (rank, elements, components; the sized
baseline: rank and components) are checked equal wherever they run. The exponent is
the slope of log(time) against log(bodies) between consecutive sizes; after each
mechanism the least-squares slope over the sizes from 161 bodies up is printed.
"""

import argparse
import json
import math
import statistics
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import jmbs
from jmbs import examples

decide = eqx.filter_jit(lambda model, q, method: jmbs.solvability_decisions(model, q, 0.0, method))

CTOL, RTOL = 1e-6, 1e-8  # the defaults of jmbs.NullSpace / jmbs.QR


@eqx.filter_jit  # `p`, a Python int, is static
def dense_sized(model, q, p: int):
    """The dense baseline with its criteria sized by the redundancy `p` (known here, static):
    the equilibrated `C`, its pivoted QR, and only for `p > 0` the `nc x p` null-space
    basis `Q[:, r:]` of `C^T` and the component criteria (row norms). `(rank, component
    unique)`."""
    X = jmbs.equilibrate(model, jmbs.constraint_matrix(model, q, 0.0))
    nc = X.shape[0]
    if p == 0:
        R = jax.scipy.linalg.qr(X, mode="r", pivoting=True)[0]
    else:
        Q, R, _ = jax.scipy.linalg.qr(X, mode="full", pivoting=True)
    d = jnp.abs(jnp.diagonal(R))
    rank = jnp.sum(d > RTOL * d[0])
    if p == 0:
        return rank, jnp.ones(nc, bool)
    return rank, jnp.linalg.norm(Q[:, nc - p:], axis=1) <= CTOL


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


def timed(model, method, repeats: int):
    """`(result, compile seconds, median run seconds)`; `method` a name for
    `solvability_decisions` or a function `(model, q)`."""
    fn = method if callable(method) else (lambda m, q: decide(m, q, method))
    t0 = time.perf_counter()
    d = jax.block_until_ready(fn(model, model.q0))
    first = time.perf_counter() - t0
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(model, model.q0))
        runs.append(time.perf_counter() - t0)
    run = statistics.median(runs)
    return jax.device_get(d), first - run, run


def agreement(structures: int) -> dict:
    """`structures` random mechanisms (`jmbs.examples.random_mechanism`, seeds 0.., planar
    and spatial alternating, sizes as in tests/test_dca.py but growing with the seed), each
    in metres and in millimetres: do dca and the dense null-space method make the same
    rank, element and component decisions?"""
    from jmbs.examples import random_mechanism

    out = {"mechanisms": 0, "agree": 0, "redundant": 0, "disagree": []}
    for seed in range(structures):
        dim = 2 if seed % 2 == 0 else 3
        for scale in (1.0, 1000.0):
            model = random_mechanism(seed, dim=dim, n_bodies=6 + seed % 5, n_loops=2 + seed % 3,
                                     scale=scale)
            a = jmbs.solvability(model).decisions
            b = jmbs.solvability(model, method="dca").decisions
            same = (int(a.rank) == int(b.rank) and np.array_equal(a.unique, b.unique)
                    and np.array_equal(a.component_unique, b.component_unique))
            out["mechanisms"] += 1
            out["agree"] += int(same)
            out["redundant"] += int(model.nc > int(a.rank))
            if not same:
                out["disagree"].append((seed, dim, scale))
        print(f"  seed {seed}: {out['agree']} of {out['mechanisms']} agree", flush=True)
    print(f"random mechanisms: {out['agree']} of {out['mechanisms']} ({structures} structures, "
          f"m and mm; {out['redundant']} redundant) agree; disagreements: {out['disagree']}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="sizes up to N = 80")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dense-limit", type=float, default=20.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--agreement", type=int, default=0, metavar="S",
                    help="only compare dca's and nullspace's decisions on S random structures")
    args = ap.parse_args()
    if args.agreement:
        res = agreement(args.agreement)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
        return
    sizes = [10, 20, 40, 80] if args.quick else [10, 20, 40, 80, 160, 320, 640]
    results = []
    for name, build in MODELS.items():
        dense_on, prev = True, None
        print(f"\n{name}: bodies, nc x nv, redundancy, dca compile / run [s], exponent, "
              "nullspace compile / run [s], same decisions, dense sized by p compile / run [s], "
              "same components, run ratios nullspace/dca and sized/dca")
        for n in sizes:
            model = build(n)
            d, c_dca, t_dca = timed(model, "dca", args.repeats)
            row = {"model": name, "N": n, "bodies": model.n_bodies, "nc": model.nc, "nv": model.nv,
                   "redundancy": model.nc - int(d.rank), "dca_compile": c_dca, "dca": t_dca}
            if prev is not None:
                row["exponent"] = math.log(t_dca / prev[1]) / math.log(model.n_bodies / prev[0])
            prev = (model.n_bodies, t_dca)
            if dense_on:  # the same repetitions as dca
                a, c_ns, t_ns = timed(model, "nullspace", args.repeats)
                p = row["redundancy"]
                (rk, cu), c_ds, t_ds = timed(model, lambda m, q: dense_sized(m, q, p), args.repeats)
                row |= {"nullspace_compile": c_ns, "nullspace": t_ns,
                        "dense_sized_compile": c_ds, "dense_sized": t_ds,
                        "same": bool(int(a.rank) == int(d.rank)
                                     and np.array_equal(a.unique, d.unique)
                                     and np.array_equal(a.component_unique, d.component_unique)),
                        "same_sized": bool(int(rk) == int(d.rank)
                                           and np.array_equal(cu, d.component_unique))}
                dense_on = c_ns + t_ns < args.dense_limit
            results.append(row)
            print(f"  {row['bodies']:5d}  {model.nc:5d} x {model.nv:5d}  p={row['redundancy']:4d}  "
                  f"{c_dca:6.2f} / {t_dca:8.4f}  {row.get('exponent', float('nan')):5.2f}  "
                  + (f"{row['nullspace_compile']:6.2f} / {row['nullspace']:8.4f}  {row['same']}  "
                     f"{row['dense_sized_compile']:6.2f} / {row['dense_sized']:8.4f}  "
                     f"{row['same_sized']}  {row['nullspace'] / t_dca:7.1f}  "
                     f"{row['dense_sized'] / t_dca:7.1f}" if "nullspace" in row else "-"), flush=True)
        for key in ("dca", "dense_sized"):
            big = [r for r in results if r["model"] == name and r["bodies"] >= 161 and key in r]
            if len(big) > 1:
                slope = np.polyfit(np.log([r["bodies"] for r in big]),
                                   np.log([r[key] for r in big]), 1)[0]
                print(f"  {key} run ~ bodies^{slope:.2f} (least squares over "
                      f"{big[0]['bodies']}-{big[-1]['bodies']} bodies)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
